// SPDX-License-Identifier: Apache-2.0
// Momentum exchange on bounce-back obstacles (stepping/ObstacleLoads.hpp): in a periodic box
// driven by a body force the fluid's momentum stops changing, so the force on the obstacles
// equals the body force on the fluid, to round-off, in every streaming scheme and at either
// phase of in-place streaming; each obstacle reports its own share.
#include <kolibri/lattice/Lattice.hpp>
#include <kolibri/solver/Solver.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "Helpers.hpp"

namespace {
using namespace kolibri;

struct Case {
  LatticeKind lattice;
  Streaming streaming;
  CollisionKind collision;
  Precision precision;
};

Obstacle ball(const std::string& name, double x, double y, double z, bool two_d) {
  Obstacle o;
  o.name = name;
  o.shape = two_d ? Obstacle::Shape::Cylinder : Obstacle::Shape::Sphere;
  o.center = {x, y, two_d ? 0.5 : z};
  o.radius = 2.6;
  return o;
}

SolverConfig driven_box(const Case& k) {
  const bool two_d = k.lattice == LatticeKind::D2Q9;
  SolverConfig c = test::periodic_box(k.lattice, 14, 12, two_d ? 1 : 10, 1.0);
  c.streaming = k.streaming;
  c.collision = k.collision;
  c.precision = k.precision;
  c.force = {2e-5, 5e-6, 0.0};
  c.obstacles.push_back(ball("upstream", 3.5, 6.0, 5.0, two_d));
  c.obstacles.push_back(ball("downstream", 10.5, 5.0, 5.0, two_d));
  return c;
}

class ObstacleLoads : public ::testing::TestWithParam<Case> {};

TEST_P(ObstacleLoads, BalanceTheBodyForceInSteadyState) {
  const SolverConfig c = driven_box(GetParam());
  auto s = make_solver(c);
  const double tol = c.precision == Precision::FP64 ? 1e-9 : 2e-4;
  for (const int steps : {4000, 1}) {  // in place: after a streaming step, then after a local one
    s->step(steps);
    const auto loads = s->obstacle_loads();
    ASSERT_EQ(loads.size(), 2u);
    EXPECT_EQ(loads[0].name, "upstream");
    EXPECT_EQ(loads[1].name, "downstream");
    const double cells = double(s->fluid_cells());
    for (std::size_t d = 0; d < 3; ++d) {
      const double want = cells * c.force[d];
      const double got = loads[0].force[d] + loads[1].force[d];
      EXPECT_NEAR(got, want, tol * cells * c.force[0]) << "axis " << d;
    }
    // two different obstacles in the same flow: each takes a share
    EXPECT_GT(loads[0].force[0], 0.1 * cells * c.force[0]);
    EXPECT_GT(loads[1].force[0], 0.1 * cells * c.force[0]);
  }
}

std::string name(const ::testing::TestParamInfo<Case>& i) {
  return std::string(to_string(i.param.lattice)) + "_" + to_string(i.param.streaming) + "_" +
         to_string(i.param.collision) + "_" + to_string(i.param.precision);
}

INSTANTIATE_TEST_SUITE_P(
    Schemes, ObstacleLoads,
    ::testing::Values(
        Case{LatticeKind::D3Q19, Streaming::TwoArray, CollisionKind::Bgk, Precision::FP64},
        Case{LatticeKind::D3Q19, Streaming::InPlace, CollisionKind::Bgk, Precision::FP64},
        Case{LatticeKind::D3Q19, Streaming::Moments, CollisionKind::Regularized, Precision::FP64},
        Case{LatticeKind::D2Q9, Streaming::TwoArray, CollisionKind::Trt, Precision::FP64},
        Case{LatticeKind::D2Q9, Streaming::Moments, CollisionKind::Regularized, Precision::FP64},
        Case{LatticeKind::D3Q27, Streaming::InPlace, CollisionKind::Bgk, Precision::FP32}),
    name);

// The torque is taken about the obstacle's centre: a sphere centred in the box, in a flow along x,
// takes none (every link has a mirror image across the centre); an unnamed obstacle is
// "obstacle<k>".
TEST(ObstacleLoads, TorqueIsAboutTheObstacleCentre) {
  SolverConfig c = test::periodic_box(LatticeKind::D3Q19, 12, 12, 12, 1.0);
  c.force = {1e-5, 0, 0};
  Obstacle o;
  o.shape = Obstacle::Shape::Sphere;
  o.center = {6, 6, 6};
  o.radius = 3;
  c.obstacles.push_back(o);
  auto s = make_solver(c);
  s->step(2000);
  const auto l = s->obstacle_loads();
  ASSERT_EQ(l.size(), 1u);
  EXPECT_EQ(l[0].name, "obstacle1");
  EXPECT_EQ(l[0].centre, (std::array<double, 3>{6, 6, 6}));
  for (std::size_t d = 0; d < 3; ++d) EXPECT_NEAR(l[0].torque[d], 0.0, 1e-12);
}

// Force and torque against a sum written out here from the post-collision populations (two
// arrays: what populations() returns): every link from a fluid cell to a solid cell of the
// obstacle carries 2 c_q f*_q, applied at the link's middle.
TEST(ObstacleLoads, MatchTheLinkSumFromThePopulations) {
  const SolverConfig c =
      driven_box({LatticeKind::D3Q19, Streaming::TwoArray, CollisionKind::Bgk, Precision::FP64});
  auto s = make_solver(c);
  s->step(300);  // not yet steady: the torques are not zero
  const auto loads = s->obstacle_loads();
  const std::vector<double> f = s->populations();
  const int n[3] = {c.nx, c.ny, c.nz};
  const std::size_t cells = std::size_t(c.cells());
  auto owner = [&](int x, int y, int z) {  // the first obstacle covering the cell, -1 for fluid
    for (std::size_t k = 0; k < c.obstacles.size(); ++k)
      if (covers(c.obstacles[k], x, y, z)) return int(k);
    return -1;
  };
  for (std::size_t k = 0; k < c.obstacles.size(); ++k) {
    double F[3] = {0, 0, 0}, T[3] = {0, 0, 0};
    const auto& o = c.obstacles[k];
    for (int z = 0; z < n[2]; ++z)
      for (int y = 0; y < n[1]; ++y)
        for (int x = 0; x < n[0]; ++x) {
          if (owner(x, y, z) >= 0) continue;
          const std::size_t cell = std::size_t(x + n[0] * (y + n[1] * z));
          for (int q = 1; q < D3Q19::Q; ++q) {
            const int cq[3] = {D3Q19::c(q, 0), D3Q19::c(q, 1), D3Q19::c(q, 2)};
            const int m[3] = {(x + cq[0] + n[0]) % n[0], (y + cq[1] + n[1]) % n[1],
                              (z + cq[2] + n[2]) % n[2]};
            if (owner(m[0], m[1], m[2]) != int(k)) continue;
            const double p = 2.0 * f[std::size_t(q) * cells + cell];
            const double r[3] = {x + 0.5 + 0.5 * cq[0] - o.center[0],
                                 y + 0.5 + 0.5 * cq[1] - o.center[1],
                                 z + 0.5 + 0.5 * cq[2] - o.center[2]};
            const double g[3] = {p * cq[0], p * cq[1], p * cq[2]};
            for (int d = 0; d < 3; ++d) F[d] += g[d];
            T[0] += r[1] * g[2] - r[2] * g[1], T[1] += r[2] * g[0] - r[0] * g[2],
                T[2] += r[0] * g[1] - r[1] * g[0];
          }
        }
    const double scale = std::fabs(F[0]);
    EXPECT_GT(std::fabs(T[2]), 1e-6 * scale) << "a torque to compare";
    for (std::size_t d = 0; d < 3; ++d) {
      EXPECT_NEAR(loads[k].force[d], F[d], 1e-12 * scale) << o.name << " force " << d;
      EXPECT_NEAR(loads[k].torque[d], T[d], 1e-11 * scale) << o.name << " torque " << d;
    }
  }
}

}  // namespace

namespace {
// Interpolated walls (grid/LinkRules.hpp): the Galilean-invariant momentum exchange still
// balances the body force in steady state, to the same round-off as halfway walls, the links now
// crossing the wall where the shape does (the sums use the distances as the kernels round them).
TEST(ObstacleLoads, InterpolatedWallsBalanceTheBodyForce) {
  for (const Case k :
       {Case{LatticeKind::D3Q19, Streaming::TwoArray, CollisionKind::Bgk, Precision::FP64},
        Case{LatticeKind::D2Q9, Streaming::TwoArray, CollisionKind::Trt, Precision::FP64}}) {
    SCOPED_TRACE(to_string(k.lattice));
    SolverConfig c = driven_box(k);
    for (Obstacle& o : c.obstacles) o.wall = Obstacle::Wall::Interpolated;
    auto s = make_solver(c);
    s->step(4000);
    const auto loads = s->obstacle_loads();
    const double cells = double(s->fluid_cells());
    for (std::size_t d = 0; d < 3; ++d)
      EXPECT_NEAR(loads[0].force[d] + loads[1].force[d], cells * c.force[d],
                  1e-9 * cells * c.force[0])
          << "axis " << d;
  }
}

// Where a segment from a fluid point to a solid one enters the solid: spheres, cylinders (their
// axis ignored), boxes (the last slab entered), and a solid outside a cylinder (where the
// segment leaves the shape); the wall velocity of a rotating obstacle.
TEST(WallCrossing, FractionOfTheLinkWhereTheSolidBegins) {
  Obstacle sphere;
  sphere.shape = Obstacle::Shape::Sphere;
  sphere.center = {0, 0, 0};
  sphere.radius = 1;
  EXPECT_NEAR(wall_crossing(sphere, {2, 0, 0}, {0.5, 0, 0}), 2.0 / 3.0, 1e-15);
  Obstacle cyl;
  cyl.shape = Obstacle::Shape::Cylinder;
  cyl.center = {0, 0, 0};
  cyl.radius = 1;
  cyl.axis = 2;
  EXPECT_NEAR(wall_crossing(cyl, {0, -2, 5}, {0, 0, 7}), 0.5, 1e-15);
  Obstacle box;
  box.min = {0, 0, 0};
  box.max = {1, 1, 1};
  EXPECT_NEAR(wall_crossing(box, {-0.5, 0.5, 0.5}, {0.5, 0.5, 0.5}), 0.5, 1e-15);
  EXPECT_NEAR(wall_crossing(box, {-0.25, -0.5, 0.5}, {0.75, 0.5, 0.5}), 0.5, 1e-15);
  Obstacle pipe = cyl;
  pipe.radius = 2;
  pipe.solid_outside = true;
  EXPECT_NEAR(wall_crossing(pipe, {0, 1, 0}, {0, 3, 0}), 0.5, 1e-15);
  EXPECT_EQ(wall_crossing(sphere, {2, 0, 0}, {1, 0, 0}), 1.0);  // the solid point on the surface
  Obstacle spin = sphere;
  spin.center = {1, 1, 0};
  spin.angular_velocity = {0, 0, 0.1};
  const auto u = wall_velocity(spin, {2, 1, 0});
  EXPECT_NEAR(u[0], 0.0, 1e-15);
  EXPECT_NEAR(u[1], 0.1, 1e-15);
  EXPECT_NEAR(u[2], 0.0, 1e-15);
}
}  // namespace
