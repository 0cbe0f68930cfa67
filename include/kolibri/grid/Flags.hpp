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
/// cells with an upwind neighbour that is solid or lies across a non-periodic face. Periodic
/// wrap-around is resolved by index arithmetic in the fast path, so it needs no flag.
/// \tparam L lattice descriptor (its velocity set decides which neighbours matter)
template <class L>
std::vector<Flag> build_flags(const SolverConfig& cfg) {
  const int n[3] = {cfg.nx, cfg.ny, cfg.nz};
  std::vector<Flag> flags(static_cast<std::size_t>(cfg.cells()), kFluid);
  auto at = [&](int x, int y, int z) -> Flag& {
    return flags[static_cast<std::size_t>(x + std::int64_t(n[0]) * (y + std::int64_t(n[1]) * z))];
  };
  for (int z = 0; z < n[2]; ++z)
    for (int y = 0; y < n[1]; ++y)
      for (int x = 0; x < n[0]; ++x)
        for (const auto& o : cfg.obstacles)
          if (covers(o, x, y, z)) at(x, y, z) = kSolid;
  const bool open[6] = {cfg.faces[0].type != FaceType::Periodic, cfg.faces[1].type != FaceType::Periodic,
                         cfg.faces[2].type != FaceType::Periodic, cfg.faces[3].type != FaceType::Periodic,
                         cfg.faces[4].type != FaceType::Periodic, cfg.faces[5].type != FaceType::Periodic};
  for (int z = 0; z < n[2]; ++z)
    for (int y = 0; y < n[1]; ++y)
      for (int x = 0; x < n[0]; ++x) {
        if (at(x, y, z) == kSolid) continue;
        // Without obstacles only the layer next to a non-periodic face can be a boundary cell
        // (|c| <= 1): skip the neighbour scan elsewhere (large benchmark boxes build in seconds).
        const bool edge = (x == 0 && open[0]) || (x == n[0] - 1 && open[1]) || (y == 0 && open[2]) ||
                          (y == n[1] - 1 && open[3]) || (z == 0 && open[4]) || (z == n[2] - 1 && open[5]);
        if (cfg.obstacles.empty() && !edge) continue;
        for (int q = 1; q < L::Q; ++q) {
          int s[3] = {x - L::c(q, 0), y - L::c(q, 1), z - L::c(q, 2)};
          bool boundary = false;
          for (int d = 0; d < 3; ++d) {
            if (s[d] >= 0 && s[d] < n[d]) continue;
            if (cfg.faces[std::size_t(2 * d)].type != FaceType::Periodic) boundary = true;
            s[d] = (s[d] + n[d]) % n[d];
          }
          if (boundary || at(s[0], s[1], s[2]) == kSolid) {
            at(x, y, z) = kBoundaryFluid;
            break;
          }
        }
      }
  return flags;
}

}  // namespace kolibri
