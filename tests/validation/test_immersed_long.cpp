// SPDX-License-Identifier: Apache-2.0
// Immersed-boundary validation (label validation-long): steady flow past a circular cylinder
// (Re 20, 40) and a sphere (Re 100): drag coefficient and recirculation length against
// published bands (docs/validation.md). Run on a GPU build: a few minutes; hours on one core.
#include <kolibri/solver/Solver.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <numbers>

#include "Helpers.hpp"

namespace {
using namespace kolibri;

struct Wake {
  double cd = 0, cd_change = 0, length = 0;  ///< drag coefficient, its relative change over the last stretch, L/D
};

/// Uniform stream U along x past a body of diameter D at the given Reynolds number: inflow on
/// x_min, the stream's velocity on the side faces, pressure outlet on x_max.
Wake run_wake(LatticeKind lat, CollisionKind col, double re, int D, std::array<int, 3> n, std::int64_t steps,
              double upstream = 0.3125) {
  const bool two_d = lat == LatticeKind::D2Q9;
  const double U = 0.05;
  auto c = test::periodic_box(lat, n[0], n[1], n[2], 0.5 + 3.0 * U * D / re);
  c.collision = col;
  c.faces[0].type = FaceType::VelocityInlet, c.faces[0].velocity = {U, 0, 0};
  c.faces[1].type = FaceType::PressureOutlet;
  for (std::size_t f = 2; f < (two_d ? 4u : 6u); ++f) c.faces[f].type = FaceType::MovingWall, c.faces[f].velocity = {U, 0, 0};
  c.initial.velocity = {U, 0, 0};
  c.acm_velocity = U, c.acm_viscosity = 0.005;  // acm: more high-order damping than 5e-4 near the outlet
  Body b;
  b.shape = two_d ? Body::Shape::Cylinder : Body::Shape::Sphere;
  b.radius = 0.5 * D, b.spacing = 0.3;
  b.position = {n[0] * upstream, 0.5 * n[1], two_d ? 0.5 : 0.5 * n[2]};
  c.bodies.push_back(b);
  auto s = make_solver(c);
  const double area = two_d ? D : std::numbers::pi * D * D / 4;
  auto cd = [&] { return 2.0 * s->body_loads()[0].force[0] / (U * U * area); };
  s->step(steps - steps / 10);
  const double before = cd();
  s->step(steps / 10);
  Wake w;
  w.cd = cd();
  w.cd_change = std::fabs(w.cd / before - 1.0);
  // Recirculation: from the rear of the body along the centre line to where u_x turns positive.
  const auto f = s->macroscopic();
  const int y = n[1] / 2, z = two_d ? 0 : n[2] / 2;  // the cell row through the centre (centre at n/2)
  const double rear = b.position[0] + b.radius;
  // Behind the rear the centre-line velocity is negative (backflow) up to the end of the
  // recirculation; inside the body it is near zero, so the search starts at the first backflow.
  double prev_x = 0, prev_u = 0;
  bool back = false;
  for (int x = int(rear); x < n[0]; ++x) {
    // Average the rows either side of the centre line (the centre lies on a cell face; in 3D
    // the four cells around the axis).
    double u = 0.5 * (f.u[f.index(x, y, z)][0] + f.u[f.index(x, y - 1, z)][0]);
    if (!two_d) u = 0.5 * u + 0.25 * (f.u[f.index(x, y, z - 1)][0] + f.u[f.index(x, y - 1, z - 1)][0]);
    const double xc = x + 0.5;
    if (xc > rear && u < 0) back = true;
    if (back && prev_u < 0 && u >= 0) {
      const double x0 = prev_x - prev_u * (xc - prev_x) / (u - prev_u);
      w.length = (x0 - rear) / D;
      break;
    }
    prev_x = xc, prev_u = u;
  }
  std::printf("Re %.0f D %d: Cd %.4f (change over the last %lld steps %.2e), L/D %.3f\n", re, D, w.cd, (long long)(steps / 10),
              w.cd_change, w.length);
  return w;
}

// Bands: the published range, widened above by what this set-up adds and the resolution study
// measures (docs/validation.md): the diffuse interface of explicit direct forcing makes a body of
// D = 20 cells act slightly larger (Cd falls with D at an observed order of 1.3: 2.303, 2.233,
// 2.204 at D = 10, 20, 40), and the far-field velocity imposed 10 diameters away raises the drag
// of slow flows (the extrapolated Cd, 2.18, is still at the top of the published range). Measured
// on an H100, 2026-11-22: Re 20 Cd 2.233, L/D 1.016; Re 40 Cd 1.666, L/D 2.456; sphere Re 100 Cd
// 1.192, L/D 0.946.

/// The drag converged, and Cd and L/D inside their bands; both recorded.
void expect_wake(const Wake& w, double max_change, double cd_lo, double cd_hi, double l_lo, double l_hi) {
  ::testing::Test::RecordProperty("cd", std::to_string(w.cd));
  ::testing::Test::RecordProperty("recirculation", std::to_string(w.length));
  EXPECT_LT(w.cd_change, max_change);
  EXPECT_GT(w.cd, cd_lo);
  EXPECT_LT(w.cd, cd_hi);
  EXPECT_GT(w.length, l_lo);
  EXPECT_LT(w.length, l_hi);
}

TEST(ImmersedLong, CylinderRe20DragAndWakeInPublishedBands) {
  // Published (unconfined): Cd 2.00 (Fornberg 1980) to 2.19 (Calhoun 2002); Dennis & Chang
  // (1970) 2.05, Taira & Colonius (2007) 2.06. L/D 0.91 (Calhoun) to 0.94 (Dennis & Chang,
  // Taira & Colonius). Allowance above: 5% (Cd), 12% (L/D).
  const auto w = run_wake(LatticeKind::D2Q9, CollisionKind::CentralMoment, 20, 20, {640, 400, 1}, 60000);
  expect_wake(w, 2e-3, 2.00, 2.19 * 1.05, 0.91, 0.94 * 1.12);
}

TEST(ImmersedLong, CylinderRe40DragAndWakeInPublishedBands) {
  // Published: Cd 1.50 (Fornberg) to 1.62 (Calhoun); Dennis & Chang 1.52, Taira & Colonius 1.54.
  // L/D 2.18 (Calhoun) to 2.35 (Dennis & Chang); Taira & Colonius 2.30. Allowance above: 5%.
  const auto w = run_wake(LatticeKind::D2Q9, CollisionKind::CentralMoment, 40, 20, {640, 400, 1}, 80000);
  expect_wake(w, 2e-3, 1.50, 1.62 * 1.05, 2.18, 2.35 * 1.05);
}

TEST(ImmersedLong, SphereRe100DragAndWakeInPublishedBands) {
  // Published: Cd 1.08 (Johnson & Patel 1999), 1.087 (Clift, Grace & Weber correlation), 1.09
  // (Fornberg 1988); L/D 0.87 to 0.88 (Johnson & Patel). ACM-MRT collision. The box is 8 x 4 x 4
  // diameters with the far field imposed 2 diameters from the sphere's surface: allowance above
  // 12% (Cd) and 10% (L/D).
  const auto w = run_wake(LatticeKind::D3Q27, CollisionKind::AdaptiveCentralMoment, 100, 20, {320, 160, 160}, 32000, 0.25);
  expect_wake(w, 5e-3, 1.08, 1.09 * 1.12, 0.87, 0.88 * 1.10);
}

TEST(ImmersedLong, CylinderRe20DragConvergesWithResolution) {
  // The diffuse interface of explicit direct forcing (a 2-cell kernel) makes the body act a
  // little larger: Cd falls towards the published values as D grows. Same box in diameters.
  double cd[3];
  const int Ds[3] = {10, 20, 40};
  for (int k = 0; k < 3; ++k) {
    const int D = Ds[k];
    cd[k] = run_wake(LatticeKind::D2Q9, CollisionKind::CentralMoment, 20, D, {32 * D, 20 * D, 1}, 3000 * D).cd;
  }
  const double order = std::log2((cd[0] - cd[1]) / (cd[1] - cd[2]));
  std::printf("Cd at D = 10, 20, 40: %.4f %.4f %.4f; observed order %.2f\n", cd[0], cd[1], cd[2], order);
  RecordProperty("cd_d40", std::to_string(cd[2]));
  RecordProperty("order", std::to_string(order));
  // Richardson extrapolation with the observed order: the drag of the infinitely fine body in
  // this box, which must lie in the published range (measured: order 1.27, Cd 2.184).
  const double extrapolated = cd[2] - (cd[1] - cd[2]) / (std::pow(2.0, order) - 1.0);
  RecordProperty("cd_extrapolated", std::to_string(extrapolated));
  EXPECT_GT(cd[0], cd[1]);
  EXPECT_GT(cd[1], cd[2]);
  EXPECT_GT(order, 0.8);
  EXPECT_GT(extrapolated, 2.00);
  EXPECT_LT(extrapolated, 2.19);
}

}  // namespace
