// SPDX-License-Identifier: Apache-2.0
// Curved walls (grid/LinkRules.hpp): circular Couette flow between a rotating inner cylinder and
// a resting outer one, against its analytic profile u_theta = A r + B / r. Interpolated
// bounce-back (Bouzidi-Firdaouss-Lallemand, linear) converges at second order; halfway
// bounce-back, whose staircase moves the wall by up to half a cell, at first order.
#include <kolibri/geometry/MeshShape.hpp>
#include <kolibri/solver/Solver.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>

#include "Annulus.hpp"
#include "Helpers.hpp"

namespace {
using namespace kolibri;

/// The inner wall's speed: low, so the compressibility error (O(Ma^2)) stays below the wall's at
/// the finest resolution (at 0.01 it floored the errors near 1e-4: measured).
constexpr double kWallSpeed = 0.002;

/// The steady annulus: the relative L2 error of the azimuthal velocity over its fluid cells, and
/// the torques on the inner and outer cylinders (momentum exchange) relative to the analytic one
/// on the inner cylinder, -4 pi mu B.
struct CouetteResult {
  double error, inner_torque, outer_torque;
};

/// A closed prism about the z axis through `centre`, from z = -1.5 to 2.5: a regular polygon of
/// the fewest sides no longer than `edge` with its vertices on the circle of `radius`, outward
/// triangles, the ends closed by fans (a cylinder's mesh whose sides are exact along z).
TriangleMesh polygon_prism(double radius, double edge, const std::array<double, 3>& centre) {
  const int sides = int(std::ceil(2 * M_PI * radius / edge));
  TriangleMesh m;
  for (const double z : {-1.5, 2.5})
    for (int i = 0; i < sides; ++i) {
      const double t = 2 * M_PI * i / sides;
      m.vertices.push_back({centre[0] + radius * std::cos(t), centre[1] + radius * std::sin(t), z});
    }
  const int bottom = 2 * sides, top = bottom + 1;
  m.vertices.push_back({centre[0], centre[1], -1.5});
  m.vertices.push_back({centre[0], centre[1], 2.5});
  for (int i = 0; i < sides; ++i) {
    const int j = (i + 1) % sides;
    m.triangles.push_back({i, j, sides + j});
    m.triangles.push_back({i, sides + j, sides + i});
    m.triangles.push_back({bottom, j, i});
    m.triangles.push_back({top, sides + i, sides + j});
  }
  return m;
}

/// The annulus with inner radius r1 (gap r1, outer radius 2 r1), the inner cylinder's wall at
/// kWallSpeed. With `mesh_outer` the outer cylinder is a closed triangle mesh (edges of at most
/// kMeshEdge cells, vertices on the circle) instead of the analytic shape.
constexpr double kMeshEdge = 0.25;
CouetteResult couette(LatticeKind lat, CollisionKind col, Obstacle::Wall wall, double r1,
                      bool mesh_outer = false) {
  const int n = int(std::ceil(4 * r1)) + 4;
  const std::array<double, 2> centre{0.5 * n + 0.13, 0.5 * n - 0.21};  // off the lattice's symmetry
  const double r2 = 2 * r1, omega = kWallSpeed / r1;
  SolverConfig c = test::periodic_box(lat, n, n, lat == LatticeKind::D2Q9 ? 1 : 2, 0.8);
  c.collision = col;
  c.obstacles = test::annulus_cylinders(r1, r2, omega, centre, wall);
  if (mesh_outer) {
    Obstacle& outer = c.obstacles[1];
    outer.shape = Obstacle::Shape::Mesh;
    outer.mesh = std::make_shared<const MeshShape>(polygon_prism(r2, kMeshEdge, outer.center));
  }
  auto s = make_solver(c);
  const double gap = r2 - r1;
  s->step(std::int64_t(2.5 * gap * gap / c.viscosity()));  // slowest mode decays by about e^-25
  const auto f = s->macroscopic();
  const test::CouetteProfile exact(r1, r2, omega);
  double err = 0.0, norm = 0.0;
  for (int y = 0; y < n; ++y)
    for (int x = 0; x < n; ++x) {
      const double dx = x + 0.5 - centre[0], dy = y + 0.5 - centre[1];
      const double r = std::hypot(dx, dy);
      if (r <= r1 || r > r2) continue;  // solid (covers: r <= r1 inner, r > r2 outer)
      const auto& u = f.u[f.index(x, y, 0)];
      const double ut = (-dy * u[0] + dx * u[1]) / r, want = exact.at(r);
      err += (ut - want) * (ut - want), norm += want * want;
    }
  const auto loads = s->obstacle_loads();
  const double torque = exact.torque(c.viscosity());  // per cell of length (nz = 1)
  return {std::sqrt(err / norm), loads[0].torque[2] / torque, -loads[1].torque[2] / torque};
}
double couette_error(LatticeKind lat, CollisionKind col, Obstacle::Wall wall, double r1,
                     bool mesh_outer = false) {
  return couette(lat, col, wall, r1, mesh_outer).error;
}

class CircularCouette : public ::testing::TestWithParam<CollisionKind> {};

TEST_P(CircularCouette, InterpolatedWallsConvergeAtSecondOrder) {
  const CollisionKind col = GetParam();
  const double e[3] = {couette_error(LatticeKind::D2Q9, col, Obstacle::Wall::Interpolated, 8),
                       couette_error(LatticeKind::D2Q9, col, Obstacle::Wall::Interpolated, 16),
                       couette_error(LatticeKind::D2Q9, col, Obstacle::Wall::Interpolated, 32)};
  const double o1 = test::order(e[0], e[1], 8, 16), o2 = test::order(e[1], e[2], 16, 32);
  RecordProperty("errors",
                 std::to_string(e[0]) + " " + std::to_string(e[1]) + " " + std::to_string(e[2]));
  RecordProperty("orders", std::to_string(o1) + " " + std::to_string(o2));
  // The published order is 2 (Bouzidi, Firdaouss & Lallemand 2001); 0.2 is the allowance for
  // the coarsest gap (8 cells). Errors that fall at second order go to zero, so no absolute
  // bound is asserted (docs/validation.md: the one first written was not a published figure).
  EXPECT_GT(o1, 1.8) << e[0] << " " << e[1];
  EXPECT_GT(o2, 1.8) << e[1] << " " << e[2];
}

// The Galilean-invariant momentum exchange on moving interpolated walls: the torque on each
// cylinder is the analytic one within 1% at a gap of 16 cells.
TEST_P(CircularCouette, TorquesMatchTheAnalyticOne) {
  const CouetteResult r = couette(LatticeKind::D2Q9, GetParam(), Obstacle::Wall::Interpolated, 16);
  RecordProperty("torques", std::to_string(r.inner_torque) + " " + std::to_string(r.outer_torque));
  EXPECT_NEAR(r.inner_torque, 1.0, 0.01);
  EXPECT_NEAR(r.outer_torque, 1.0, 0.01);
}

// The outer cylinder as a mesh (the wall distances from its triangles, geometry/MeshShape.hpp):
// second order as the analytic cylinder, and the same error within the chords' share. The
// chords lie up to kMeshEdge^2 / (8 r2) inside the circle (2.4e-4 cells at r2 = 32), which moves
// the flow, relative to itself, by at most about that depth over the gap.
TEST(CircularCouetteMesh, MeshWallsConvergeAtSecondOrderAsTheCylinder) {
  const auto error = [](double r1, bool mesh) {
    return couette_error(LatticeKind::D2Q9, CollisionKind::Trt, Obstacle::Wall::Interpolated, r1,
                         mesh);
  };
  const double e[3] = {error(8, true), error(16, true), error(32, true)};
  const double o1 = test::order(e[0], e[1], 8, 16), o2 = test::order(e[1], e[2], 16, 32);
  const double analytic = error(16, false);
  RecordProperty("errors", std::to_string(e[0]) + " " + std::to_string(e[1]) + " " +
                               std::to_string(e[2]) + " analytic " + std::to_string(analytic));
  EXPECT_GT(o1, 1.8) << e[0] << " " << e[1];
  EXPECT_GT(o2, 1.8) << e[1] << " " << e[2];
  const double depth = kMeshEdge * kMeshEdge / (8 * 32.0), gap = 16.0;
  EXPECT_NEAR(e[1], analytic, depth / gap) << e[1] << " " << analytic;
}

INSTANTIATE_TEST_SUITE_P(Operators, CircularCouette,
                         ::testing::Values(CollisionKind::Bgk, CollisionKind::Trt),
                         [](const auto& i) { return std::string(to_string(i.param)); });

TEST(CircularCouetteStaircase, HalfwayBounceBackConvergesAtFirstOrder) {
  const auto error = [](Obstacle::Wall wall, double r1) {
    return couette_error(LatticeKind::D2Q9, CollisionKind::Bgk, wall, r1);
  };
  const double e[3] = {error(Obstacle::Wall::BounceBack, 8), error(Obstacle::Wall::BounceBack, 16),
                       error(Obstacle::Wall::BounceBack, 32)};
  const double order = test::order(e[0], e[2], 8, 32);  // the staircase's error is irregular
  RecordProperty("errors",
                 std::to_string(e[0]) + " " + std::to_string(e[1]) + " " + std::to_string(e[2]));
  RecordProperty("order", std::to_string(order));
  // Published: first order for a staircase wall (its position moves by up to half a cell);
  // +-0.4 because that displacement changes irregularly with the radius.
  EXPECT_GT(order, 0.6) << e[0] << " " << e[2];
  EXPECT_LT(order, 1.4) << e[0] << " " << e[2];
  EXPECT_GT(e[2], 5 * error(Obstacle::Wall::Interpolated, 32));
}

}  // namespace
