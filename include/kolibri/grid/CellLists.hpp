// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The lists of cells the kernels launch over, built from a grid and its flags: the
/// boundary cells (those next to a ghost layer first, so the halo exchange can start early), the
/// fluid cells next to a ghost layer, and optionally the cells next to one face only.
#pragma once

#include <kolibri/config/Case.hpp>
#include <kolibri/grid/DenseGrid.hpp>
#include <kolibri/grid/Flags.hpp>

#include <cstdint>
#include <vector>

namespace kolibri {

/// \brief Cell lists of one grid (32-bit cell indices: a rank holds fewer than 2^32 cells).
struct CellLists {
  /// kBoundaryFluid cells resolved per direction: those next to a ghost layer first, then the
  /// rest (a cell in a face list is in neither).
  std::vector<std::uint32_t> boundary;
  Index boundary_next_to_ghost = 0;     ///< how many of `boundary` come first
  std::vector<std::uint32_t> border;    ///< kFluidBorder cells (fast path, next to a ghost layer)
  std::vector<std::uint32_t> faces[6];  ///< with face kernels: cells completed by one face alone
  std::int64_t updated = 0;             ///< cells this rank updates (fluid, not ghost)
};

/// \brief The lists of `grid` with `flags` (build_flags) and the faces' types; `face_kernels`
/// puts the cells that one face alone completes into per-face lists (single_face).
template <class L>
CellLists build_cell_lists(const DenseGrid& grid, const std::vector<Flag>& flags,
                           const FaceSet& faces, bool face_kernels) {
  CellLists out;
  std::vector<std::uint32_t> inner;
  grid.for_each([&](const Coord& p, Index c) {
    const Flag f = flags[static_cast<std::size_t>(c)];
    out.updated += is_updated(f);
    if (f == kFluidBorder) out.border.push_back(std::uint32_t(c));
    if (f != kBoundaryFluid) return;
    if (grid.is_border(p))
      out.boundary.push_back(std::uint32_t(c));
    else if (const int face = face_kernels ? single_face<L>(grid, faces, flags, p) : -1; face >= 0)
      out.faces[face].push_back(std::uint32_t(c));
    else
      inner.push_back(std::uint32_t(c));
  });
  out.boundary_next_to_ghost = Index(out.boundary.size());
  out.boundary.insert(out.boundary.end(), inner.begin(), inner.end());
  return out;
}

/// \brief For every cell, the directions it sends into a wall: bit q is set where the neighbour
/// along +c_q is solid or lies across a non-periodic face (0 for all but kBoundaryFluid cells).
/// Found once here, so a kernel resolving a boundary cell reads one word instead of searching
/// its Q - 1 neighbours and their flags every step. Needs Q <= 32.
template <class L>
std::vector<std::uint32_t> wall_links(const DenseGrid& grid, const std::vector<Flag>& flags,
                                      const FaceSet& faces) {
  static_assert(L::Q <= 32, "wall_links: one bit per direction in 32 bits");
  std::vector<std::uint32_t> out(flags.size(), 0u);
  int type[6];
  for (int f = 0; f < 6; ++f) type[f] = static_cast<int>(faces[std::size_t(f)].type);
  grid.for_each([&](const Coord& p, Index c) {
    if (flags[static_cast<std::size_t>(c)] != kBoundaryFluid) return;
    std::uint32_t mask = 0;
    for (int q = 1; q < L::Q; ++q) {
      int face;
      const Index m = grid.neighbour<L>(type, p, q, +1, face);
      if (m < 0 || flags[static_cast<std::size_t>(m)] == kSolid) mask |= 1u << q;
    }
    out[static_cast<std::size_t>(c)] = mask;
  });
  return out;
}

}  // namespace kolibri
