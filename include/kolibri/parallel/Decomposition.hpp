// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Cartesian decomposition of the box over ranks: the process grid, each rank's cells, its
/// ghost layers and its neighbours in the 26 directions (faces, edges, corners).
#pragma once

#include <kolibri/config/Case.hpp>
#include <kolibri/parallel/Comm.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace kolibri {

/// Index of direction (dx, dy, dz), each in {-1, 0, 1}: 0 .. 26, 13 is (0, 0, 0).
constexpr int direction_index(int dx, int dy, int dz) { return (dx + 1) + 3 * (dy + 1) + 9 * (dz + 1); }
constexpr std::array<int, 3> direction(int k) { return {k % 3 - 1, k / 3 % 3 - 1, k / 9 - 1}; }

/// Where a process grid cuts each axis: cuts[d] holds the first cell of each of the grid's
/// slabs along d and then the axis' cell count (dims[d] + 1 increasing positions, 0 first).
using AxisCuts = std::array<std::vector<int>, 3>;

/// How the slabs share an axis: near-equal cells (`Volume`), or near-equal fluid cells of the
/// `[geometry]` (`Fluid`, for porous samples and vessels whose fluid is not spread evenly).
enum class Balance { Volume, Fluid };

/// \brief `parallel.balance` ("auto", "volume" or "fluid") for `cfg`: auto balances the fluid
/// where a `[geometry]` gives the solid cells, the volume otherwise.
Balance balance_for(const SolverConfig& cfg, const std::string& balance);

struct Decomposition {
  std::array<int, 3> dims{1, 1, 1};    ///< ranks per axis
  std::array<int, 3> coords{0, 0, 0};  ///< this rank's place in the grid
  int rank = 0, size = 1;
  Box global;  ///< the whole domain
  Box mine;    ///< this rank's cells (without ghosts)
  std::array<int, 6> ghost{};  ///< per side (x_min ... z_max): 1 where a ghost layer lies
  /// Rank to exchange with in each direction, -1 where there is none (a non-periodic edge of the
  /// domain, or an axis that is not split, whose periodic wrap stays on this rank).
  std::array<int, 27> neighbour{};
  AxisCuts cuts;  ///< where the process grid cuts each axis (the same on every rank)

  /// The decomposition of `cfg`'s box over `size` ranks, seen from `rank`. `grid` fixes the
  /// process grid (all three > 0, product = size) or, with zeros, lets choose_grid pick it.
  /// Throws std::invalid_argument (with the reason) when it cannot be done, also where a rank next
  /// to an outflow face would hold one cell layer along its axis (the face's rule reads two).
  /// `cuts` places the slabs (AxisCuts of the grid); none: even_cuts.
  static Decomposition make(const SolverConfig& cfg, int size, int rank,
                            std::array<int, 3> grid = {0, 0, 0}, const AxisCuts* cuts = nullptr);
  /// Near-equal slabs, the first ones one cell larger (slab_cells).
  static AxisCuts even_cuts(const SolverConfig& cfg, const std::array<int, 3>& grid);
  /// Slabs of near-equal fluid cells of `cfg.geometry` along each axis (its layers' fluid counts;
  /// obstacles and faces do not count), at least one layer a slab and kOutflowLayers next to an
  /// outflow face; even_cuts without a geometry. The same on the dense box and on tiles.
  static AxisCuts fluid_cuts(const SolverConfig& cfg, const std::array<int, 3>& grid);
  /// The cuts of `balance` (even_cuts or fluid_cuts).
  static AxisCuts cuts_for(const SolverConfig& cfg, const std::array<int, 3>& grid,
                           Balance balance);
  /// Every rank's decomposition (by rank) of `cfg`'s box over `size` ranks: the process grid
  /// `grid` (zeros: choose_grid) cut by `balance` (cuts_for). What a run lays out (distribute)
  /// and what `kolibri check --ranks` reports. Throws as make() does.
  static std::vector<Decomposition> every_rank(const SolverConfig& cfg, int size,
                                               std::array<int, 3> grid, Balance balance);
  /// The process grid with the least halo surface of an inner rank (ties: fewer split axes,
  /// then z before y before x), at most one rank per cell layer and at least two cell layers on a
  /// rank next to an outflow face; 2D boxes are not split in z.
  static std::array<int, 3> choose_grid(const SolverConfig& cfg, int size);

  /// Rank of grid coordinates (x fastest).
  int rank_of(const std::array<int, 3>& c) const { return c[0] + dims[0] * (c[1] + dims[1] * c[2]); }
  /// Extent of the local box with its ghost layers.
  std::array<int, 3> local_extent() const {
    return {mine.n[0] + ghost[0] + ghost[1], mine.n[1] + ghost[2] + ghost[3], mine.n[2] + ghost[4] + ghost[5]};
  }
  /// The solver configuration of this rank's box (ghost layers included).
  SolverConfig local_config(const SolverConfig& cfg) const;
};

/// \brief The fluid cells of `cfg.geometry` on each rank of a grid cut at `cuts`, by rank.
std::vector<std::int64_t> fluid_per_rank(const SolverConfig& cfg, const std::array<int, 3>& dims,
                                         const AxisCuts& cuts);

/// \brief One line on how `dc` cuts the box of a case with a `[geometry]`: where each split axis
/// is cut and the most fluid cells a rank holds over the mean, beside the even slabs' figure.
std::string slab_report(const SolverConfig& cfg, const Decomposition& dc);

/// \brief Parse "2x2x1" (or "auto") into a process grid; throws std::invalid_argument.
std::array<int, 3> parse_grid(const std::string& s);

}  // namespace kolibri
