// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Force and torque on the bounce-back obstacles by momentum exchange: over every link
/// between a fluid cell and a solid cell of an obstacle, the population that leaves the fluid cell
/// towards the wall comes back reversed (halfway bounce-back), so the wall takes 2 c_q f*_q a
/// step (Ladd 1994; for resting walls the same as the Galilean-invariant form of Wen et al. 2014,
/// whose wall-velocity terms vanish). In steady state the force equals the momentum that the
/// fluid loses to the obstacles each step, to round-off.
#pragma once

#include <kolibri/collision/Factory.hpp>
#include <kolibri/config/Case.hpp>
#include <kolibri/grid/DenseGrid.hpp>
#include <kolibri/grid/Flags.hpp>
#include <kolibri/grid/LinkRules.hpp>
#include <kolibri/ib/Immersed.hpp>
#include <kolibri/stepping/MomentStream.hpp>
#include <kolibri/stepping/Moments.hpp>
#include <kolibri/stepping/StreamCollide.hpp>

#include <array>
#include <cstdint>
#include <vector>

namespace kolibri {

/// \brief The links of each obstacle on this rank: fluid cells it updates whose neighbour along
/// c_q is a solid cell of the obstacle (a solid cell covered by several obstacles belongs to the
/// first in the deck), with the wall's distance along the link, its velocity (ObstacleLink) and
/// the moving-wall term of the population it sends back, the last two as the kernels round them
/// (floats), so the sums are those of what the kernels did. Obstacle k's links are start[k] ..
/// start[k + 1].
struct ObstacleLinks {
  std::vector<std::uint32_t> cell;
  std::vector<std::uint8_t> dir;
  std::vector<double> distance;       ///< 1/2 for halfway bounce-back
  std::vector<double> term;           ///< moving_wall_term of the reflected direction
  std::vector<double> wall_velocity;  ///< three a link
  std::vector<std::int64_t> start{0};
};

template <class L>
ObstacleLinks obstacle_links(const DenseGrid& grid, const FaceSet& faces,
                             const std::vector<Flag>& flags,
                             const std::vector<Obstacle>& obstacles) {
  std::vector<ObstacleLinks> per(obstacles.size());
  const FaceTypes types(faces);
  grid.for_each([&](const Coord& p, Index c) {
    if (flags[std::size_t(c)] != kBoundaryFluid) return;  // the only cells next to a solid
    for (int q = 1; q < L::Q; ++q) {
      int face;
      const Index m = grid.neighbour<L>(types.type, p, q, +1, face);
      if (m < 0 || flags[std::size_t(m)] != kSolid) continue;
      const ObstacleLink link = obstacle_link<L>(grid, types.type, flags, obstacles, p, m, q);
      if (link.obstacle < 0) continue;
      ObstacleLinks& o = per[std::size_t(link.obstacle)];
      o.cell.push_back(std::uint32_t(c));
      o.dir.push_back(std::uint8_t(q));
      o.distance.push_back(double(float(link.distance)));
      o.term.push_back(double(moving_wall_term<L>(L::opposite(q), link.wall_velocity)));
      o.wall_velocity.insert(o.wall_velocity.end(), link.wall_velocity.begin(),
                             link.wall_velocity.end());
    }
  });
  ObstacleLinks out;
  for (const ObstacleLinks& o : per) {
    out.cell.insert(out.cell.end(), o.cell.begin(), o.cell.end());
    out.dir.insert(out.dir.end(), o.dir.begin(), o.dir.end());
    out.distance.insert(out.distance.end(), o.distance.begin(), o.distance.end());
    out.term.insert(out.term.end(), o.term.begin(), o.term.end());
    out.wall_velocity.insert(out.wall_velocity.end(), o.wall_velocity.begin(),
                             o.wall_velocity.end());
    out.start.push_back(std::int64_t(out.cell.size()));
  }
  return out;
}

/// \brief The point torques are taken about: a sphere's or cylinder's centre, a box's middle, a
/// mesh's bounding-box centre (its `center`).
inline std::array<double, 3> obstacle_centre(const Obstacle& o) {
  if (o.shape != Obstacle::Shape::Box) return o.center;
  return {0.5 * (o.min[0] + o.max[0]), 0.5 * (o.min[1] + o.max[1]), 0.5 * (o.min[2] + o.max[2])};
}

/// \brief Six sums (force, then torque) with Neumaier's compensation: the links' terms, each
/// about 2 w_q, cancel to a far smaller load, so a plain sum would depend on the order of the
/// terms (a rank count, a thread count) in its last 12 digits; compensated, only in its last.
struct LinkSums {
  double v[6], c[6];
  KOKKOS_INLINE_FUNCTION LinkSums() : v{0, 0, 0, 0, 0, 0}, c{0, 0, 0, 0, 0, 0} {}
  KOKKOS_INLINE_FUNCTION void add(int k, double x) {
    const double t = v[k] + x;
    c[k] += math::fabs(v[k]) >= math::fabs(x) ? (v[k] - t) + x : (x - t) + v[k];
    v[k] = t;
  }
  KOKKOS_INLINE_FUNCTION void add(const LinkSums& b) {
    for (int k = 0; k < 6; ++k) add(k, b.v[k]), c[k] += b.c[k];
  }
  /// One link's momentum exchange in the Galilean-invariant form of Wen et al. (2014): the force
  /// (c_k - u_w) f*_k + (c_k + u_w) f_q, written c_k (f*_k + f_q) - u_w (f*_k - f_q), with
  /// `leaving` = f*_k, `back` = f_q, `ck` the link's direction into the wall and `u` the wall's
  /// velocity; and its torque r x F about the arm `r`.
  KOKKOS_INLINE_FUNCTION void add_link(const double (&ck)[3], const double (&u)[3], double leaving,
                                       double back, const double (&r)[3]) {
    double F[3];
    for (int a = 0; a < 3; ++a) F[a] = ck[a] * (leaving + back) - u[a] * (leaving - back);
    for (int a = 0; a < 3; ++a) add(a, F[a]);
    add(3, r[1] * F[2] - r[2] * F[1]);
    add(4, r[2] * F[0] - r[0] * F[2]);
    add(5, r[0] * F[1] - r[1] * F[0]);
  }
  double total(int k) const { return v[k] + c[k]; }
};

/// \brief The reduction of LinkSums, as a base of the functors that sum links (LinkMomentum,
/// the refined levels' LevelLinkMomentum).
struct LinkSumsReduction {
  using value_type = LinkSums;  ///< force, then torque
  KOKKOS_INLINE_FUNCTION void init(LinkSums& a) const { a = LinkSums(); }
  KOKKOS_INLINE_FUNCTION void join(LinkSums& a, const LinkSums& b) const { a.add(b); }
  KOKKOS_INLINE_FUNCTION void join(volatile LinkSums& a,
                                   const volatile LinkSums& b) const {  // Kokkos 3
    LinkSums x, y;
    for (int k = 0; k < 6; ++k) x.v[k] = a.v[k], x.c[k] = a.c[k], y.v[k] = b.v[k], y.c[k] = b.c[k];
    x.add(y);
    for (int k = 0; k < 6; ++k) {
      a.v[k] = x.v[k];
      a.c[k] = x.c[k];
    }
  }
};

/// \brief Sum over links of the momentum the wall takes, in the Galilean-invariant form of Wen et
/// al. (2014): (c_k - u_w) f*_k + (c_k + u_w) f_q with k the link's direction into the wall, q
/// = opposite(k), f*_k the population leaving the fluid cell and f_q the one the wall sends
/// back (interpolated_bounce_back; halfway bounce-back at rest: 2 c_k f*_k), and the torque
/// (x + d c_k - centre) x force about the centre (x the fluid cell's centre in the deck's
/// coordinates, d the wall's distance, not wrapped: an obstacle across a periodic face takes the
/// torque of its links on the far side about a centre a box length away): six sums. f* are the
/// post-collision populations of the last step, read where the scheme keeps them (StateLayout):
/// slot q with two arrays; slot opposite(q) in place (after a local step it holds f*_q, after a
/// streaming step the arriving population that bounced back, the same value at a halfway wall at
/// rest; a rule link's f*_k then comes from the scheme's link_leaving()); rebuilt from the stored
/// moments in the moment representation.
template <class L, class S, class C>
struct LinkMomentum : LinkSumsReduction {
  using R = typename S::real;
  using V = typename S::value_type;

  Kokkos::View<const V*, MemSpace> f;
  Slots idx;
  StateLayout layout;
  C op;
  R force[3];
  Kokkos::View<const std::uint32_t*, MemSpace> cell;
  Kokkos::View<const std::uint8_t*, MemSpace> dir;
  Kokkos::View<const double*, MemSpace> distance;
  Kokkos::View<const double*, MemSpace> term;    ///< ObstacleLinks::term
  Kokkos::View<const double*, MemSpace> wall_u;  ///< three a link
  /// In place after a streaming step, a rule link's f*_k is only in the scheme's link_leaving()
  /// (at its row of link rules `slot`, -1: none) and its reflected value in the arriving slot.
  Kokkos::View<const std::int32_t*, MemSpace> slot;
  Kokkos::View<const R*, MemSpace> saved_leaving;
  GridCells grid;
  double origin[3];  ///< the deck coordinates of local cell (0, 0, 0)'s centre
  double centre[3];

  KOKKOS_INLINE_FUNCTION R departing(Index n, int q) const {
    if constexpr (kMomentScheme<S, C>) {
      if (layout.moments) {
        constexpr int M = MomentSlots<L>::M;
        R m[M], fs[L::Q];
        for (int k = 0; k < M; ++k) m[k] = R(f(idx(n, k)));
        MomentSlots<L>::departing(m, op, force, fs);
        return fs[q];
      }
    }
    const bool opposite = layout.opposite_slots || layout.arriving();
    return S::template load<L>(f(idx(n, opposite ? L::opposite(q) : q)), q);
  }

  KOKKOS_INLINE_FUNCTION void operator()(const Index i, LinkSums& sum) const {
    const Index n = Index(cell(i));
    const int k = dir(i), q = L::opposite(k);
    const double d = distance(i), u[3] = {wall_u(3 * i), wall_u(3 * i + 1), wall_u(3 * i + 2)};
    const double c[3] = {double(L::c(k, 0)), double(L::c(k, 1)), double(L::c(k, 2))};
    const Index at = slot.extent(0) > 0 ? Index(slot(i)) : Index(-1);
    double leaving, back;
    if (at >= 0 && saved_leaving.extent(0) > 0 && layout.arriving()) {
      leaving = double(saved_leaving(at * L::Q + q));
      back = double(departing(n, k));  // the arriving slot q
    } else {
      leaving = double(departing(n, k));
      back = interpolated_bounce_back(
          d, leaving, double(departing(n, q)),
          [&] { return double(departing(grid.rows(n).upwind<L>(k), k)); }, term(i));
    }
    const Coord x = grid.coords(n);
    const double r[3] = {origin[0] + x.x + d * c[0] - centre[0],
                         origin[1] + x.y + d * c[1] - centre[1],
                         origin[2] + x.z + d * c[2] - centre[2]};
    sum.add_link(c, u, leaving, back, r);
  }
};

}  // namespace kolibri
