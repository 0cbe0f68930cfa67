// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Cell flags (one byte per cell) and their construction from the faces and obstacles.
#pragma once

#include <kolibri/config/Case.hpp>
#include <kolibri/core/Kokkos.hpp>
#include <kolibri/grid/DenseGrid.hpp>

#include <cstdint>
#include <vector>

namespace kolibri {

/// Fluid cell whose every upwind neighbour is an interior fluid cell: the fast path.
inline constexpr Flag kFluid = 0;
/// Solid cell (obstacle): never updated, never read by a fluid neighbour.
inline constexpr Flag kSolid = 1;
/// Fluid cell next to a solid or the box edge: the kernel resolves its boundaries per direction.
inline constexpr Flag kBoundaryFluid = 2;
/// Ghost cell (multi-rank): a copy of a neighbour rank's fluid cell, read by this rank's cells,
/// filled by the halo exchange, never updated here. (A neighbour's solid cell stays kSolid.)
inline constexpr Flag kGhost = 3;
/// Like kFluid, but next to a ghost layer: updated first, so the halo exchange can overlap the
/// update of the other cells.
inline constexpr Flag kFluidBorder = 4;

/// True for the cells this rank updates (fluid, not ghost).
KOKKOS_INLINE_FUNCTION bool is_updated(Flag f) { return f != kSolid && f != kGhost; }

/// \brief Tells the solid cells of a flag array, in the memory of the side that calls it (the
/// host's flags for the halo lists, the device's for the kernels): GridCells::outflow_source.
struct SolidCells {
  const Flag* flags = nullptr;
  KOKKOS_INLINE_FUNCTION bool operator()(Index c) const { return flags[c] == kSolid; }
};

/// \brief The non-periodic face f whose rule alone completes boundary cell p: its other
/// upwind neighbours are fluid, and the directions that cross f are exactly those entering
/// through it (c_q along f's axis pointing inwards). -1 otherwise (edges and corners with two
/// non-periodic faces, solid neighbours, outflow faces: their rule reads other cells). Per-face
/// kernels take these cells.
template <class L>
int single_face(const DenseGrid& grid, const FaceSet& faces, const std::vector<Flag>& flags,
                const Coord& p) {
  const FaceTypes types(faces);
  int the = -1;
  std::uint32_t crossing = 0;  // bit q: direction q comes across the face
  for (int q = 1; q < L::Q; ++q) {
    int face;
    const Index m = grid.neighbour<L>(types.type, p, q, -1, face);
    if (m >= 0) {
      if (flags[static_cast<std::size_t>(m)] == kSolid) return -1;
      continue;
    }
    if (the >= 0 && face != the) return -1;
    the = face;
    crossing |= std::uint32_t(1) << q;
  }
  if (the < 0 || faces[std::size_t(the)].from_layer()) return -1;
  const int axis = the / 2, inward = the % 2 == 0 ? 1 : -1;
  for (int q = 0; q < L::Q; ++q)
    if (((crossing >> q) & 1u) != std::uint32_t(L::c(q, axis) == inward)) return -1;
  return the;
}

/// \brief Marks kBoundaryFluid the cells of `flags` that are updated (is_updated) and have an
/// upwind neighbour that is solid or lies across a non-periodic face of `faces`. Without solid
/// cells (`solids` false) only the layer next to such a face can be one (|c| <= 1): the rest is
/// not scanned (large benchmark boxes build in seconds). build_flags' rule, which the refined
/// grid's bodies' box also takes.
template <class L>
void mark_boundary_cells(const DenseGrid& grid, const FaceSet& faces, const bool solids,
                         std::vector<Flag>& flags) {
  const FaceTypes types(faces);
  bool open[6];
  for (int f = 0; f < 6; ++f) open[f] = faces[std::size_t(f)].type != FaceType::Periodic;
  grid.for_each([&](const Coord& p, Index c) {
    Flag& f = flags[static_cast<std::size_t>(c)];
    if (!is_updated(f)) return;
    if (!solids && !grid.on_face(p, open)) return;
    for (int q = 1; q < L::Q; ++q) {
      int face;
      const Index m = grid.neighbour<L>(types.type, p, q, -1, face);
      if (m < 0 || flags[static_cast<std::size_t>(m)] == kSolid) {
        f = kBoundaryFluid;
        break;
      }
    }
  });
}

/// \brief Flags of every cell, x fastest: solids from the obstacles and [geometry], then
/// kBoundaryFluid for fluid cells with an upwind neighbour that is solid or lies across a
/// non-periodic face (mark_boundary_cells). Periodic wrap-around is resolved by index arithmetic
/// in the fast path, so it needs no flag. In a rank's piece (cfg.part) obstacles are placed in
/// global coordinates, the ghost layers get kGhost (or kSolid) and fluid cells next to them
/// kFluidBorder. \tparam L lattice descriptor (its velocity set decides which neighbours matter)
template <class L>
std::vector<Flag> build_flags(const SolverConfig& cfg) {
  const DenseGrid grid = DenseGrid::of(cfg);
  std::vector<Flag> flags(static_cast<std::size_t>(grid.cells()), kFluid);
  grid.for_each([&](const Coord& p, Index c) {
    Flag& f = flags[static_cast<std::size_t>(c)];
    // global position; a ghost layer across a periodic face is the other end's image
    const Coord g = grid.global_coords(p);
    if (solid_cell(cfg, g.x, g.y, g.z)) f = kSolid;
    if (f != kSolid && grid.is_ghost(p)) f = kGhost;
    if (is_updated(f) && grid.is_border(p)) f = kFluidBorder;
  });
  mark_boundary_cells<L>(grid, cfg.faces, !cfg.obstacles.empty() || cfg.geometry.given(), flags);
  return flags;
}

}  // namespace kolibri
