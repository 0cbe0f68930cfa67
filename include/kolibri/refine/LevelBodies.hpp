// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Immersed bodies on a refined grid, host side: they lie inside the finest level, whose
/// cells around them form a dense box (`LevelBodyBox`) where the immersed-boundary kernels of the
/// dense solver (ib/Immersed.hpp) run on the bodies measured in that level's cells
/// (`level_body_config`). docs/theory.md, "Immersed bodies on a refined grid", gives the units.
#pragma once

#include <kolibri/config/Case.hpp>
#include <kolibri/ib/Sampling.hpp>
#include <kolibri/refine/LevelRanks.hpp>
#include <kolibri/refine/Octree.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kolibri {

/// \brief The finest level's cells the bodies' kernels read and write: [lo, lo + n) in that
/// level's cells, whole blocks (clipped to the domain at a wall side), with the tables their
/// kernels read it through.
struct LevelBodyBox {
  int level = 0;
  int edge = 1;  ///< the block edge (cells)
  std::array<int, 3> lo{0, 0, 0}, n{1, 1, 1};
  std::array<int, 3> blocks{1, 1, 1};  ///< n over the block edge, rounded up (1 across a 2D box)
  /// The box's sides (x_min, x_max, ...) on a face of the domain that is a wall (resting, or
  /// moving at a constant velocity): the cells past them are the wall's, which the bodies'
  /// kernels take as the level's step does (level_body_config gives the box that face), so a
  /// body may come near it.
  std::array<bool, 6> wall{};
  std::vector<std::int32_t> slot;   ///< each block of the box (x fastest): its leaf slot, or -1
  std::vector<std::uint8_t> fluid;  ///< each cell of the box (x fastest): 1 for a fluid cell
  std::vector<std::uint8_t>
      whole;  ///< each block of the box (x fastest): 1 where all its cells are
  std::int64_t cells() const { return std::int64_t(n[0]) * n[1] * n[2]; }
};

/// \brief x / e rounded down (e > 0), negative x included: the block of cell x of a box, a cell
/// before the box too.
inline int floor_div(const int x, const int e) { return x >= 0 ? x / e : -((-x + e - 1) / e); }

/// \brief Whether body b travels through the grid: a steady translation (`velocity`) or free
/// motion. The bodies' box is then the finest level's whole extent, and the solver checks before
/// each step of level 0 that the body is still inside the level (level_box_holds).
bool travels(const Body& b);

/// \brief The cells around a travelling body's centre (b measured in the level's cells:
/// body_at_level) that must be fluid cells of the finest level: its bounding sphere, two cells a
/// direction beyond (the stencils and the cells they stream from) and one more (a free body moves
/// before its samples do).
double travel_reach(const Body& b, int dims, const ImmersedSettings& ib);

/// \brief The cells around a travelling body's centre that must be fluid cells of the level
/// through the coming step of level 0: `reach` (travel_reach) and the way it goes in the level's
/// 2^level steps at `velocity` (lattice units, the same on every level).
double travel_radius(double reach, const std::array<double, 3>& velocity, int level);

/// \brief Whether cell p (the box's cells) lies past the box only across wall sides (box.wall):
/// a wall's cell, not a missing one.
bool past_wall(const LevelBodyBox& box, int dims, const int (&p)[3]);

/// \brief The first cell of `box` (the box's cells: the level's minus box.lo) whose centre lies
/// within `radius` of `centre` (the box's cells too) and that is not a fluid cell of the level,
/// a cell past the box's edge included unless it lies past a wall side (past_wall); none where
/// all are.
std::optional<std::array<int, 3>> cell_outside_level(const LevelBodyBox& box, int dims,
                                                     const std::array<double, 3>& centre,
                                                     double radius);

/// \brief The first cell of `box` that a travelling body in state `s` (the box's cells) must
/// find a fluid cell of the level through the coming step of level 0 and does not (the cells
/// within travel_radius(reach, s.velocity) of its centre: cell_outside_level); none where all are.
/// The one check of a travelling body, before each step of level 0 (RefinedSolver) and over a
/// prescribed path ahead (prescribed_travel_leaves).
std::optional<std::array<int, 3>> travel_outside(const LevelBodyBox& box, int dims,
                                                 const BodyState& s, double reach);

/// \brief Where a body of cfg on a prescribed path (a steady translation: travels() and not
/// free) would first fail travel_outside in steps [from, to) of level 0: the message
/// (left_finest_level) of the first such step, or none. A free body's path is not known before
/// it runs. Steps are skipped only where the body provably stays clear (a wider check, and its
/// fastest speed).
std::optional<std::string> prescribed_travel_leaves(const LevelBodyBox& box,
                                                    const SolverConfig& cfg, std::int64_t from,
                                                    std::int64_t to);

/// \brief Why travelling body i (the deck's `b`) cannot go on at `step` (of level 0): its centre
/// (`centre`, the finest level's cells) has `cell` (that level's cells) within `reach`, and that
/// cell is not a fluid cell of the level.
std::string left_finest_level(std::size_t i, const Body& b, int level, std::int64_t step,
                              const std::array<double, 3>& centre, const std::array<int, 3>& cell,
                              double reach, int dims);

/// \brief Body b measured in the cells of `level` (lengths and the centre times 2^level, turning
/// and oscillation rates over 2^level: the same motion in physical time), its centre moved by
/// -lo (the box's origin in that level's cells). The sample spacing stays in that level's cells.
Body body_at_level(const Body& b, int level, const std::array<int, 3>& lo);

/// \brief The box of cfg's bodies on the finest level of `tree`: every cell within two cells of
/// a body's samples (the interpolation stencils and the cells they stream from; a turning body's
/// bounding sphere; a travelling body's travel_reach at its start) must be a fluid cell of the
/// finest level or, of a body that stays in its place, a solid cell of it (an obstacle or a
/// [geometry] solid, where the level has no obstacles' link rules: the bodies' kernels bounce
/// back from it), or std::invalid_argument names the [[body]] and the level-0 cell that is not.
/// The box is those cells' bounding box widened to whole blocks; with a travelling body the
/// bounding box of the level's blocks.
LevelBodyBox level_body_box(const Octree& tree, const SolverConfig& cfg);

/// \brief The device memory of the bodies' box in bytes (what RefinedSolver::set_bodies and the
/// immersed-boundary kernels allocate over it, as `kolibri check` reports it): a cell's force
/// field (3 values), node table (4 values) and reached-node mark and list entry (4 + 8 bytes),
/// the last three a quarter over (the kernels' growth margin), and its flag byte; a block's slot.
/// The samples' own arrays are not counted (nor are they on a uniform grid).
double level_body_bytes(const LevelBodyBox& box, const SolverConfig& cfg);

/// \brief The leaves of every level rank `rank` of `cuts` holds: level_held's, and where `box`
/// is given (a run with bodies) the bodies' box's blocks on its level, which every rank's
/// bodies' kernels read. What RefinedSolver holds and `kolibri check --ranks` counts.
std::vector<std::vector<std::int32_t>> rank_held(const Octree& tree, const LevelRanks& cuts,
                                                 int rank, const LevelBodyBox* box);

/// \brief The configuration the immersed-boundary kernels see: a box of `box`'s cells, its wall
/// sides (box.wall) cfg's faces there and the others periodic (no body reaches them), with cfg's
/// bodies at the finest level (body_at_level), its uniform force per mass and the free bodies'
/// gravity at that level (over 2^level), no obstacles, one level. A free body's contact acts at
/// the wall sides, ib.contact_range in cells of that level.
SolverConfig level_body_config(const SolverConfig& cfg, const LevelBodyBox& box);

}  // namespace kolibri
