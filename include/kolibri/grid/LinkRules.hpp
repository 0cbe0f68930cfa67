// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The links between fluid cells and obstacles that need a rule of their own
/// (Obstacle::link_rules): interpolated walls (the wall where the shape crosses the link) and
/// rotating walls (the wall's velocity where it crosses). Found once on the host from the
/// obstacles' shapes; the kernels read one distance (and with moving walls one term) per link.
#pragma once

#include <kolibri/config/Case.hpp>
#include <kolibri/core/Kokkos.hpp>
#include <kolibri/grid/DenseGrid.hpp>
#include <kolibri/grid/Flags.hpp>
#include <kolibri/lattice/Lattice.hpp>

#include <array>
#include <cstdint>
#include <vector>

namespace kolibri {

/// \brief One link from fluid cell p along c_k into a solid cell of obstacle `obstacle`.
struct ObstacleLink {
  int obstacle = -1;  ///< the first obstacle in the deck covering the solid cell; -1: none
  /// Where the wall crosses the link, as a fraction of it (0 < distance <= 1). Halfway
  /// bounce-back: 1/2. 1/2 also where the wall is nearer than half a link and the cell behind
  /// p (p - c_k) is no fluid cell, so the interpolation lacks its second point.
  double distance = 0.5;
  std::array<double, 3> wall_velocity{0, 0, 0};  ///< at the crossing (rotating obstacles)
};

/// \brief The obstacle a solid cell belongs to: the first in the deck covering its global
/// position g; -1 for none.
inline int owning_obstacle(const std::vector<Obstacle>& obstacles, const Coord& g) {
  for (std::size_t o = 0; o < obstacles.size(); ++o)
    if (covers(obstacles[o], g.x, g.y, g.z)) return int(o);
  return -1;
}

/// \brief The wall of obstacle `ob` (number `obstacle` in the deck) on the link from a fluid
/// cell's centre `a` to a solid cell's centre a + `link` (deck coordinates, a link of any
/// level's length): its distance, the fraction of the link where the shape crosses it where the
/// wall is interpolated (else 1/2), and the wall's velocity there (rotating obstacles, also for
/// halfway bounce-back). The caller sets a distance under 1/2 to 1/2 where the cell behind the
/// fluid cell (a - link) is no fluid cell: the dense box (obstacle_link) and the refined levels.
inline ObstacleLink wall_on_link(const Obstacle& ob, int obstacle, const std::array<double, 3>& a,
                                 const std::array<double, 3>& link) {
  ObstacleLink out;
  out.obstacle = obstacle;
  const std::array<double, 3> b{a[0] + link[0], a[1] + link[1], a[2] + link[2]};
  const double wall = ob.link_rules() ? wall_crossing(ob, a, b) : 0.5;  // where the shape is
  if (ob.wall == Obstacle::Wall::Interpolated) out.distance = wall;
  if (ob.rotating())
    out.wall_velocity =
        wall_velocity(ob, {a[0] + wall * link[0], a[1] + wall * link[1], a[2] + wall * link[2]});
  return out;
}

/// \brief The link from local cell p along c_k, whose neighbour m there is solid: its obstacle,
/// the wall's distance and velocity. `type` are the faces' types (the grid's neighbour rule).
template <class L>
ObstacleLink obstacle_link(const DenseGrid& grid, const int (&type)[6],
                           const std::vector<Flag>& flags, const std::vector<Obstacle>& obstacles,
                           const Coord& p, Index m, int k) {
  const Coord gs = grid.global_coords(grid.coords(m));
  const int o = owning_obstacle(obstacles, gs);
  if (o < 0) return ObstacleLink{};
  // The fluid cell's centre one link from the solid's (across a periodic face the fluid cell is
  // taken on the solid's side).
  const std::array<double, 3> link{double(L::c(k, 0)), double(L::c(k, 1)), double(L::c(k, 2))};
  const std::array<double, 3> a{gs.x + 0.5 - link[0], gs.y + 0.5 - link[1], gs.z + 0.5 - link[2]};
  ObstacleLink out = wall_on_link(obstacles[std::size_t(o)], o, a, link);
  if (out.distance < 0.5) {
    int face;
    const Index behind = grid.neighbour<L>(type, p, k, -1, face);
    if (behind < 0 || flags[std::size_t(behind)] == kSolid) out.distance = 0.5;
  }
  return out;
}

/// \brief The moving-wall term 6 w_q rho_0 (c_q . u_w) (rho_0 = 1) of the population arriving in
/// direction q across a wall moving at u_w, in the float the kernels read (LinkRules::term).
template <class L>
float moving_wall_term(int q, const std::array<double, 3>& u) {
  const double cu = L::c(q, 0) * u[0] + L::c(q, 1) * u[1] + L::c(q, 2) * u[2];
  return float(6.0 * L::w(q) * cu);
}

/// \brief True for a kBoundaryFluid cell with a link into an obstacle that needs a rule of its
/// own: such cells are resolved by the boundary list.
template <class L>
bool has_link_rules(const DenseGrid& grid, const int (&type)[6], const std::vector<Flag>& flags,
                    const std::vector<Obstacle>& obstacles, const Coord& p) {
  for (int k = 1; k < L::Q; ++k) {
    int face;
    const Index m = grid.neighbour<L>(type, p, k, +1, face);
    if (m < 0 || flags[std::size_t(m)] != kSolid) continue;
    const int o = owning_obstacle(obstacles, grid.global_coords(grid.coords(m)));
    if (o >= 0 && obstacles[std::size_t(o)].link_rules()) return true;
  }
  return false;
}

/// \brief The link rules of the boundary list (CellLists::boundary): one row of Q values for each
/// listed cell with a rule link (`cells`: its list position; `row`: each list position's row, -1
/// for none), per arriving direction q (q's wall link is opposite(q)): the wall distance (0 where
/// the cell's mask rule applies) and, where an obstacle rotates, the moving-wall term 6 w_q rho_0
/// (c_q . u_w) with rho_0 = 1. All empty where no obstacle needs them. A listed cell reads one
/// index, and only a rule cell its Q distances.
struct LinkRules {
  std::vector<float> distance;
  std::vector<float> term;
  std::vector<std::uint32_t> cells;
  std::vector<std::int32_t> row;
};

template <class L>
LinkRules link_rules(const DenseGrid& grid, const FaceSet& faces, const std::vector<Flag>& flags,
                     const std::vector<Obstacle>& obstacles,
                     const std::vector<std::uint32_t>& boundary) {
  LinkRules out;
  if (!any_link_rules(obstacles)) return out;
  bool moving = false;
  for (const Obstacle& o : obstacles) moving = moving || o.rotating();
  const FaceTypes types(faces);
  out.row.assign(boundary.size(), -1);
  for (std::size_t i = 0; i < boundary.size(); ++i) {
    const Coord p = grid.coords(Index(boundary[i]));
    for (int k = 1; k < L::Q; ++k) {
      int face;
      const Index m = grid.neighbour<L>(types.type, p, k, +1, face);
      if (m < 0 || flags[std::size_t(m)] != kSolid) continue;
      const ObstacleLink link = obstacle_link<L>(grid, types.type, flags, obstacles, p, m, k);
      if (link.obstacle < 0 || !obstacles[std::size_t(link.obstacle)].link_rules()) continue;
      if (out.row[i] < 0) {  // the cell's row
        out.row[i] = std::int32_t(out.cells.size());
        out.cells.push_back(std::uint32_t(i));
        out.distance.resize(out.distance.size() + std::size_t(L::Q), 0.0f);
        if (moving) out.term.resize(out.distance.size(), 0.0f);
      }
      const int q = L::opposite(k);
      const std::size_t at = std::size_t(out.row[i]) * std::size_t(L::Q) + std::size_t(q);
      out.distance[at] = float(link.distance);
      if (moving) out.term[at] = moving_wall_term<L>(q, link.wall_velocity);
    }
  }
  return out;
}

/// \brief Interpolated bounce-back (Bouzidi, Firdaouss & Lallemand 2001, linear), the one
/// formula of the kernels and the momentum exchange: the population arriving at a fluid cell in
/// direction q across a wall at `distance` d along the link opposite(q) = k, from the cell's
/// post-collision populations k (`back`) and q (`same`), the post-collision population k of the
/// cell behind it (`behind`, at x - c_k: read only where d < 1/2), and the moving-wall term.
/// d = 1/2 is halfway bounce-back.
template <class R, class Behind>
KOKKOS_INLINE_FUNCTION R interpolated_bounce_back(R d, R back, R same, const Behind& behind,
                                                  R term) {
  if (d < R(0.5)) return R(2) * d * back + (R(1) - R(2) * d) * behind() + term;
  const R inv = R(1) / (R(2) * d);
  return inv * (back + term) + (R(1) - inv) * same;
}

}  // namespace kolibri
