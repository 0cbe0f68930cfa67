// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Immersed bodies on a refined grid, host side: they lie inside the finest level, whose
/// cells around them form a dense box (`LevelBodyBox`) where the immersed-boundary kernels of the
/// dense solver (ib/Immersed.hpp) run on the bodies measured in that level's cells
/// (`level_body_config`). docs/theory.md, "Immersed bodies on a refined grid", gives the units.
#pragma once

#include <kolibri/config/Case.hpp>
#include <kolibri/refine/Octree.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace kolibri {

/// \brief The finest level's cells the bodies' kernels read and write: [lo, lo + n) in that
/// level's cells, whole blocks, with the tables their kernels read it through.
struct LevelBodyBox {
  int level = 0;
  std::array<int, 3> lo{0, 0, 0}, n{1, 1, 1};
  std::array<int, 3> blocks{1, 1, 1};  ///< n over the block edge (1 across a 2D box)
  std::vector<std::int32_t> slot;      ///< each block of the box (x fastest): its leaf slot, or -1
  std::vector<std::uint8_t> fluid;     ///< each cell of the box (x fastest): 1 for a fluid cell
  std::int64_t cells() const { return std::int64_t(n[0]) * n[1] * n[2]; }
};

/// \brief Body b measured in the cells of `level` (lengths and the centre times 2^level, turning
/// and oscillation rates over 2^level: the same motion in physical time), its centre moved by
/// -lo (the box's origin in that level's cells). The sample spacing stays in that level's cells.
Body body_at_level(const Body& b, int level, const std::array<int, 3>& lo);

/// \brief The box of cfg's bodies on the finest level of `tree`: every cell within two cells of
/// a body's samples (the interpolation stencils and the cells they stream from; a turning body's
/// bounding sphere) must be a fluid cell of the finest level, or std::invalid_argument names the
/// [[body]] and the level-0 cell that is not. The box is those cells' bounding box widened to
/// whole blocks.
LevelBodyBox level_body_box(const Octree& tree, const SolverConfig& cfg);

/// \brief The device memory of the bodies' box in bytes (what RefinedSolver::set_bodies and the
/// immersed-boundary kernels allocate over it, as `kolibri check` reports it): a cell's force
/// field (3 values), node table (4 values) and reached-node mark and list entry (4 + 8 bytes),
/// the last three a quarter over (the kernels' growth margin), and its flag byte; a block's slot.
/// The samples' own arrays are not counted (nor are they on a uniform grid).
double level_body_bytes(const LevelBodyBox& box, const SolverConfig& cfg);

/// \brief The configuration the immersed-boundary kernels see: a periodic box of `box`'s cells
/// with cfg's bodies at the finest level (body_at_level), its uniform force per mass at that
/// level (over 2^level), no obstacles, one level.
SolverConfig level_body_config(const SolverConfig& cfg, const LevelBodyBox& box);

}  // namespace kolibri
