// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Cell flags (one byte per cell) and their construction from the faces and obstacles.
#pragma once

#include <kolibri/core/Kokkos.hpp>
#include <kolibri/solver/Case.hpp>

#include <vector>

namespace kolibri {

/// Fluid cell whose every upwind neighbour is an interior fluid cell: the fast path.
inline constexpr Flag kFluid = 0;
/// Solid cell (obstacle): never updated, never read by a fluid neighbour.
inline constexpr Flag kSolid = 1;
/// Fluid cell next to a solid or the box edge: the kernel resolves its boundaries per direction.
inline constexpr Flag kBoundaryFluid = 2;

/// \brief True where the obstacle covers the centre of cell (x, y, z).
bool covers(const Obstacle& o, int x, int y, int z);

/// \brief Flags of every cell, x fastest: solids from the obstacles, then kBoundaryFluid for fluid
/// cells with an upwind neighbour that is solid or outside the box (periodic wrap included).
/// \tparam L lattice descriptor (its velocity set decides which neighbours matter)
template <class L>
std::vector<Flag> build_flags(const SolverConfig& cfg) {
  const int nx = cfg.nx, ny = cfg.ny, nz = cfg.nz;
  std::vector<Flag> flags(static_cast<std::size_t>(cfg.cells()), kFluid);
  auto at = [&](int x, int y, int z) -> Flag& {
    return flags[static_cast<std::size_t>(x + std::int64_t(nx) * (y + std::int64_t(ny) * z))];
  };
  for (int z = 0; z < nz; ++z)
    for (int y = 0; y < ny; ++y)
      for (int x = 0; x < nx; ++x)
        for (const auto& o : cfg.obstacles)
          if (covers(o, x, y, z)) at(x, y, z) = kSolid;
  for (int z = 0; z < nz; ++z)
    for (int y = 0; y < ny; ++y)
      for (int x = 0; x < nx; ++x) {
        if (at(x, y, z) == kSolid) continue;
        for (int q = 1; q < L::Q; ++q) {
          const int sx = x - L::c(q, 0), sy = y - L::c(q, 1), sz = z - L::c(q, 2);
          if (sx < 0 || sx >= nx || sy < 0 || sy >= ny || sz < 0 || sz >= nz ||
              at(sx, sy, sz) == kSolid) {
            at(x, y, z) = kBoundaryFluid;
            break;
          }
        }
      }
  return flags;
}

}  // namespace kolibri
