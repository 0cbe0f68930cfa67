// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The levels of a refined grid (mahmoud2024, after Rohde et al. 2006 and Schornbaum &
/// Ruede 2016), built on the host: level 0 is the deck's box cut into blocks of E^D cells (E = 4
/// in 3D, 8 in 2D); a block is either a leaf, whose cells are updated at its level, or refined
/// into 2^D blocks of the next level (cells of half the width, two steps for one of the parent).
/// Only leaves hold cells. The blocks are balanced (a refined block's 26 neighbours exist at its
/// level, so levels meet at most one apart). docs/theory.md, "Grid refinement", derives the
/// transfer rules that read these tables; docs/design.md, "Refinement", the layout.
#pragma once

#include <kolibri/config/Case.hpp>

#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

namespace kolibri {

/// A leaf cell that is updated.
inline constexpr std::uint8_t kLevelFluid = 0;
/// A leaf cell inside an obstacle: never updated; its fluid neighbours bounce back from it.
inline constexpr std::uint8_t kLevelSolid = 1;
/// A leaf cell past the box's end (a block that the box's extent cuts): never updated or read.
inline constexpr std::uint8_t kLevelOutside = 2;

/// A cell's links word, in the dense box's convention (grid/CellLists.hpp): bit k set where the
/// cell sends direction k into a resting wall or a solid neighbour (so arriving population
/// opposite(k) is its own f*_k, halfway bounce-back), and kLevelSlow where some direction needs
/// the general path (another level, a moving wall, an inlet or an outlet, an obstacle's link rule).
inline constexpr std::uint32_t kLevelSlow = 1u << 31;
/// Set in a cell's links word where some read of the coarser level (the explosion) takes a
/// coarse cell not half of whose children are read in each fine step (a concave edge or corner
/// of the level's region): LevelStep::halves_read decides there; elsewhere the answer is yes.
inline constexpr std::uint32_t kLevelUnevenRead = 1u << 30;

/// Codes in a leaf's neighbour table besides a leaf slot (>= 0): outside a non-periodic face, a
/// position at the coarser level (see RefinedLevel::coarse), or refined (-(kRefinedBase + r) for
/// refined block r of the level).
inline constexpr std::int32_t kOutsideBlock = -1;
inline constexpr std::int32_t kCoarserBlock = -2;
inline constexpr std::int32_t kRefinedBase = 3;

/// \brief tau at level `level` for tau0 at level 0: the same viscosity in physical units with
/// the acoustic scaling dt ~ dx, so tau_l - 1/2 = 2^l (tau_0 - 1/2) (mahmoud2024 eq. 9).
inline double level_tau(double tau0, int level) {
  return 0.5 + double(std::int64_t(1) << level) * (tau0 - 0.5);
}

/// \brief One level's leaves and the tables its kernel reads (slot-major, E^D cells a block,
/// place = x + E (y + E z) in the block).
struct RefinedLevel {
  int level = 0;
  std::array<int, 3> n{1, 1, 1};            ///< the level's box in its own cells
  std::array<int, 3> blocks{1, 1, 1};       ///< block positions along each axis
  std::vector<std::array<int, 3>> leaf;     ///< leaf slot -> block position
  std::vector<std::array<int, 3>> refined;  ///< refined index -> block position
  /// Leaf slot s, offset (dx, dy, dz) at 27 s + 13 + dx + 3 dy + 9 dz (wrapped across periodic
  /// faces): a leaf slot, kOutsideBlock, kCoarserBlock or -(kRefinedBase + r).
  std::vector<std::int32_t> neighbours;
  /// Same indexing: where neighbours says kCoarserBlock, the leaf slot of the level above that
  /// holds the position; else -1. Empty at level 0.
  std::vector<std::int32_t> coarse;
  /// Refined block r's children at the next level, octant o = ox + 2 oy + 4 oz at 2^D r + o: a
  /// leaf slot there, or -1 (refined further, or past the box's end).
  std::vector<std::int32_t> children;
  /// Re-entry links (a concave corner of the level's region: two cells upwind lies the level
  /// again, one cell upwind the coarser level): for leaf slot s, entries reentry_start[s] to
  /// reentry_start[s + 1], each its receiving place and direction (place << 5 | q) and its
  /// source cell (slot V + place), whose f*_q at the start of the coarser step the second step
  /// reads. Empty at level 0.
  std::vector<std::int32_t> reentry_start, reentry_key, reentry_source;
  /// Links from fluid cells into obstacles' solid cells of this level (halfway bounce-back), for
  /// the obstacles' loads: the fluid cell (slot V + place) and the direction into the solid,
  /// obstacle k's links at link_start[k] .. link_start[k + 1] (a solid cell covered by several
  /// obstacles belongs to the first in the deck).
  std::vector<std::int32_t> link_cell;
  std::vector<std::uint8_t> link_dir;
  std::vector<std::int64_t> link_start;
  /// Where some obstacle's links need a rule of their own (Obstacle::link_rules: interpolated or
  /// rotating walls; all empty where none does), each link's wall (ObstacleLink, the dense box's
  /// rule at this level's cells): its distance as a fraction of the link (1/2 for halfway
  /// bounce-back, and where the wall is nearer than half a link but the cell behind is no fluid
  /// leaf of this level), the wall's velocity at the crossing and the cell behind the fluid cell
  /// (slot V + place one link away from the wall, its f*_k read where the distance is under 1/2;
  /// -1: none); and each general rule's link (an index into these; -1: not a wall's rule).
  std::vector<double> link_distance;
  std::vector<std::array<double, 3>> link_wall_velocity;
  std::vector<std::int32_t> link_behind;
  std::vector<std::int32_t> rule_link;
  std::vector<std::uint8_t> flags;   ///< kLevelFluid, kLevelSolid, kLevelOutside per leaf cell
  std::vector<std::uint32_t> links;  ///< per leaf cell (kLevelSlow and bounce-back bits)
  /// The cells that take the general path (kLevelSlow in their links word), in slot order:
  /// cell number (slot V + place) and the directions that need the general rule (bit q: another
  /// level, a moving wall, an inlet or an outlet, an obstacle's link rule); the others read a leaf
  /// of this level or bounce back, as in the fast path.
  std::vector<std::int32_t> general_cell;
  std::vector<std::uint32_t> general_dirs;
  /// The general rules, one per general cell and direction its `general_dirs` marks, cell by
  /// cell in list order and by direction within a cell: entry i * 32 + q (i the cell's place in
  /// general_cell); cell i's at general_rule_start[i] .. general_rule_start[i + 1].
  std::vector<std::int32_t> general_rule;
  std::vector<std::int32_t> general_rule_start{0};
  std::int64_t fluid_cells = 0;
  std::int64_t slow_cells = 0;  ///< fluid cells that take the general path

  std::int64_t cells() const { return std::int64_t(flags.size()); }
};

/// \brief True where some general rule of level l is an obstacle's link rule (RefinedLevel::
/// rule_link): the level's kernels then read a wall distance and term a rule.
inline bool has_wall_rules(const RefinedLevel& l) {
  for (const std::int32_t k : l.rule_link)
    if (k >= 0) return true;
  return false;
}

/// \brief The levels of a refined grid, coarsest first.
struct Octree {
  int dims = 3;
  int shift = 2;  ///< log2 of the block edge
  std::vector<RefinedLevel> levels;

  int edge() const { return 1 << shift; }
  int block_cells() const { return 1 << (shift * dims); }
  /// Fluid cell updates of one coarse step: sum over the levels of fluid cells x 2^level (the
  /// MLUPS count of mahmoud2024).
  std::int64_t updates_per_step() const {
    std::int64_t u = 0;
    for (const RefinedLevel& l : levels) u += l.fluid_cells << l.level;
    return u;
  }
  /// The fluid's volume in level-0 cells: each level's fluid leaf cells at 2^(-D level) (a
  /// porosity's numerator; Solver::fluid_cells() counts the updates of a step instead).
  double fluid_volume() const {
    double v = 0.0;
    for (const RefinedLevel& l : levels) v += std::ldexp(double(l.fluid_cells), -dims * l.level);
    return v;
  }
};

/// \brief The levels of cfg.refinement over cfg's box, for a lattice with `velocities` (c_q,
/// q = 0 .. Q-1). Throws std::invalid_argument, naming the deck key, where the case cannot be
/// refined as asked (an obstacle cut by a level interface: refine around it).
Octree build_octree(const SolverConfig& cfg, const std::vector<std::array<int, 3>>& velocities);
/// \brief The same for cfg.lattice's velocities.
Octree build_octree(const SolverConfig& cfg);

/// \brief Throws std::invalid_argument, naming the level and [[refinement.region]], where a
/// level has more cells than the device's 32-bit cell numbers (slot V + place) can name, or more
/// general cells than a general rule's entry (the cell's place in the list, above five bits of
/// direction: kMaxGeneralCells) can.
inline constexpr std::int64_t kMaxGeneralCells = std::int64_t(1) << 26;
void check_level_numbering(int level, std::int64_t cells, std::int64_t general_cells);

/// \brief One line per level: its cells, fluid cells, blocks, general-path cells and memory
/// (`bytes_per_cell` a cell of the level, Solver::bytes_per_cell, and 12 bytes a general cell and
/// a general rule, 20 a rule on a level with obstacles' link rules).
std::vector<std::string> octree_report(const Octree& tree, double bytes_per_cell);

/// \brief The device memory the levels take (as octree_report counts it), in bytes.
double octree_bytes(const Octree& tree, double bytes_per_cell);

/// \brief Throws std::invalid_argument, naming [[refinement.region]] and each level's share,
/// where the levels need more than `available` bytes (the device's free memory).
void check_levels_fit(const Octree& tree, double bytes_per_cell, double available);

}  // namespace kolibri
