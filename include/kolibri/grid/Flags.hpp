// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Cell flags (one byte per cell) and their construction from the faces and obstacles.
#pragma once

#include <kolibri/config/Case.hpp>
#include <kolibri/core/Kokkos.hpp>

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

/// \brief Which face a population crossing several faces (edges, corners) takes its condition
/// from: walls first, so a lid or an inlet never leaks through a corner.
KOKKOS_INLINE_FUNCTION int face_priority(int type) {
  switch (static_cast<FaceType>(type)) {
    case FaceType::Wall: return 0;
    case FaceType::MovingWall: return 1;
    case FaceType::VelocityInlet: return 2;
    case FaceType::PressureOutlet: return 3;
    default: return 4;
  }
}

/// \brief The cell reached from (x, y, z) by sign * c_q in a box of `size` whose faces have the
/// types `type` (FaceType as int, x_min ... z_max): its linear index, with periodic wrap, or -1
/// when the move leaves the box through a non-periodic face, with `face` set to the face whose
/// condition applies. The one rule the flags (host) and the boundary kernels (device) share.
template <class L>
KOKKOS_INLINE_FUNCTION Index neighbour_cell(const int (&type)[6], const int (&size)[3], int x, int y,
                                            int z, int q, int sign, int& face) {
  int s[3] = {x + sign * L::c(q, 0), y + sign * L::c(q, 1), z + sign * L::c(q, 2)};
  face = -1;
  for (int d = 0; d < 3; ++d) {
    const int crossed = s[d] < 0 ? 2 * d : (s[d] >= size[d] ? 2 * d + 1 : -1);
    if (crossed < 0) continue;
    if (type[crossed] == static_cast<int>(FaceType::Periodic)) s[d] = crossed == 2 * d ? s[d] + size[d] : s[d] - size[d];
    else if (face < 0 || face_priority(type[crossed]) < face_priority(type[face])) face = crossed;
  }
  return face >= 0 ? Index(-1) : s[0] + Index(size[0]) * (s[1] + Index(size[1]) * s[2]);
}

/// \brief True for a cell of the box in the layer next to one of its ghost layers (cfg.part):
/// its values leave in the halo exchange.
inline bool next_to_ghost(const SolverConfig& cfg, int x, int y, int z) {
  const auto& g = cfg.part.ghost;
  return (g[0] && x == 1) || (g[1] && x == cfg.nx - 2) || (g[2] && y == 1) || (g[3] && y == cfg.ny - 2) ||
         (g[4] && z == 1) || (g[5] && z == cfg.nz - 2);
}

/// \brief The non-periodic face f whose rule alone completes boundary cell (x, y, z): its other
/// upwind neighbours are fluid, and the directions that cross f are exactly those entering
/// through it (c_q along f's axis pointing inwards). -1 otherwise (edges and corners with two
/// non-periodic faces, solid neighbours). Per-face kernels take these cells.
template <class L>
int single_face(const SolverConfig& cfg, const std::vector<Flag>& flags, int x, int y, int z) {
  const int n[3] = {cfg.nx, cfg.ny, cfg.nz};
  int type[6];
  for (std::size_t f = 0; f < 6; ++f) type[f] = static_cast<int>(cfg.faces[f].type);
  int the = -1;
  std::uint32_t crossing = 0;  // bit q: direction q comes across the face
  for (int q = 1; q < L::Q; ++q) {
    int face;
    const Index m = neighbour_cell<L>(type, n, x, y, z, q, -1, face);
    if (m >= 0) {
      if (flags[static_cast<std::size_t>(m)] == kSolid) return -1;
      continue;
    }
    if (the >= 0 && face != the) return -1;
    the = face;
    crossing |= std::uint32_t(1) << q;
  }
  if (the < 0) return -1;
  const int axis = the / 2, inward = the % 2 == 0 ? 1 : -1;
  for (int q = 0; q < L::Q; ++q)
    if (((crossing >> q) & 1u) != std::uint32_t(L::c(q, axis) == inward)) return -1;
  return the;
}

/// \brief Flags of every cell, x fastest: solids from the obstacles, then kBoundaryFluid for fluid
/// cells with an upwind neighbour that is solid or lies across a non-periodic face. Periodic
/// wrap-around is resolved by index arithmetic in the fast path, so it needs no flag. In a
/// rank's piece (cfg.part) obstacles are placed in global coordinates, the ghost layers get
/// kGhost (or kSolid) and fluid cells next to them kFluidBorder.
/// \tparam L lattice descriptor (its velocity set decides which neighbours matter)
template <class L>
std::vector<Flag> build_flags(const SolverConfig& cfg) {
  const int n[3] = {cfg.nx, cfg.ny, cfg.nz};
  std::vector<Flag> flags(static_cast<std::size_t>(cfg.cells()), kFluid);
  auto at = [&](int x, int y, int z) -> Flag& {
    return flags[static_cast<std::size_t>(x + std::int64_t(n[0]) * (y + std::int64_t(n[1]) * z))];
  };
  const auto& org = cfg.part.origin;
  const auto& g = cfg.part.ghost;
  const int gn[3] = {cfg.global_n(0), cfg.global_n(1), cfg.global_n(2)};
  auto in_ghost = [&](int x, int y, int z) {
    return (x < g[0]) || (x >= n[0] - g[1]) || (y < g[2]) || (y >= n[1] - g[3]) || (z < g[4]) || (z >= n[2] - g[5]);
  };
  for (int z = 0; z < n[2]; ++z)
    for (int y = 0; y < n[1]; ++y)
      for (int x = 0; x < n[0]; ++x) {
        // global position; a ghost layer across a periodic face is the other end's image
        const int gx = (x + org[0] + gn[0]) % gn[0], gy = (y + org[1] + gn[1]) % gn[1], gz = (z + org[2] + gn[2]) % gn[2];
        for (const auto& o : cfg.obstacles)
          if (covers(o, gx, gy, gz)) at(x, y, z) = kSolid;
        if (at(x, y, z) != kSolid && in_ghost(x, y, z)) at(x, y, z) = kGhost;
      }
  int type[6];
  bool open[6];
  for (int f = 0; f < 6; ++f) {
    type[f] = static_cast<int>(cfg.faces[std::size_t(f)].type);
    open[f] = cfg.faces[std::size_t(f)].type != FaceType::Periodic;
  }
  for (int z = 0; z < n[2]; ++z)
    for (int y = 0; y < n[1]; ++y)
      for (int x = 0; x < n[0]; ++x) {
        if (!is_updated(at(x, y, z))) continue;
        if (next_to_ghost(cfg, x, y, z)) at(x, y, z) = kFluidBorder;
        // Without obstacles only the layer next to a non-periodic face can be a boundary cell
        // (|c| <= 1): skip the neighbour scan elsewhere (large benchmark boxes build in seconds).
        const bool edge = (x == 0 && open[0]) || (x == n[0] - 1 && open[1]) || (y == 0 && open[2]) ||
                          (y == n[1] - 1 && open[3]) || (z == 0 && open[4]) || (z == n[2] - 1 && open[5]);
        if (cfg.obstacles.empty() && !edge) continue;
        for (int q = 1; q < L::Q; ++q) {
          int face;
          const Index m = neighbour_cell<L>(type, n, x, y, z, q, -1, face);
          if (m < 0 || flags[static_cast<std::size_t>(m)] == kSolid) {
            at(x, y, z) = kBoundaryFluid;
            break;
          }
        }
      }
  return flags;
}

}  // namespace kolibri
