// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief What the code around a refined solver (refine/RefinedSolver.hpp) asks of it beyond
/// Solver: its levels, their cells' fields, the conserved mass and the cells at a point. No
/// Kokkos here: the runner, output and tests include it.
#pragma once

#include <kolibri/refine/Octree.hpp>
#include <kolibri/solver/Solver.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kolibri {

/// \brief The density and velocity of every leaf cell of a level, with the cells' centres in
/// level-0 cells and their flags (kLevelFluid ...), in the level's cell order.
struct LevelFields {
  int level = 0;
  std::vector<std::array<double, 3>> centre;
  std::vector<double> rho;
  std::vector<std::array<double, 3>> u;
  std::vector<std::uint8_t> flag;
};

/// \brief What the code around a refined solver asks of it beyond Solver (tests, output).
class RefinedGrid {
 public:
  virtual ~RefinedGrid() = default;
  virtual const Octree& octree() const = 0;
  /// Level l's leaf cells, on rank 0 (collective; the other ranks get `level` only).
  virtual LevelFields level_fields(int l) const = 0;
  /// Solver::macroscopic() (each level-0 cell: the volume average of the fluid leaf cells in it)
  /// from every level's level_fields, so that one gather serves both (rank 0; empty elsewhere).
  virtual MacroFields deck_average(const std::vector<LevelFields>& levels) const = 0;
  /// Sum over every level of the fluid cells' mass, rho times the cell's volume in level-0
  /// cells, in double: the quantity the transfers between levels conserve (collective).
  virtual double total_mass() const = 0;
  /// Where the levels are cut among the ranks, one line (empty on one rank).
  virtual std::string ranks_report() const = 0;
  /// The finest level with a leaf cell (fluid or solid) holding the point x (level-0 cells; a
  /// point on the box's far face belongs to the last cell): where a probe between cells reads.
  virtual int level_at(const std::array<double, 3>& x) const = 0;
  /// The density and velocity of level l's cells `cells` (linear indices over the level's box
  /// RefinedLevel::n, x fastest), in a MacroFields of cells.size() x 1 x 1: `solid` where a cell
  /// is not a fluid leaf of level l (solid, outside, or on another level), with rho 0 and u 0.
  /// Collective.
  virtual MacroFields level_cells(int l, const std::vector<std::int64_t>& cells) const = 0;
  /// Why a body on a prescribed path would leave the finest level in steps [from, to) of level 0
  /// (prescribed_travel_leaves: the check the run makes before each), or none.
  virtual std::optional<std::string> travel_ahead(std::int64_t from, std::int64_t to) const = 0;
};

}  // namespace kolibri
