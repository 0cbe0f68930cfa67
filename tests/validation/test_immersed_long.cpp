// SPDX-License-Identifier: Apache-2.0
// Immersed-boundary validation (label validation-long): the DFG benchmark 2D-1 (Schaefer & Turek
// 1996) with an immersed cylinder against its published bands, and the sphere at Re 100 against
// the target (within 2% of the published value). Both are disabled: the DFG case misses
// (docs/validation.md gives the misses and their causes) and takes about four minutes on one core;
// the sphere holds with the retraction calibrated on Stokes flow but is a device-sized run.
#include <kolibri/io/Deck.hpp>
#include <kolibri/solver/Solver.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <numbers>

#include "Helpers.hpp"

namespace {
using namespace kolibri;

/// The band [lo, hi] widened by `a` (relative) on both sides.
void expect_in_band(const char* what, double value, double lo, double hi, double a) {
  ::testing::Test::RecordProperty(what, std::to_string(value));
  EXPECT_GT(value, lo * (1 - a)) << what << " below the band " << lo << "-" << hi << " less "
                                 << 100 * a << "%";
  EXPECT_LT(value, hi * (1 + a)) << what << " above the band " << lo << "-" << hi << " plus "
                                 << 100 * a << "%";
}

// DFG 2D-1 at D = 20 cells: inputs/dfg_2d1.toml with its bounce-back cylinder replaced by an
// immersed one (what `scripts/dfg.py run 2d1 20 OUT --immersed` runs), the deck's defaults for the
// forcing (retraction 0.3 cells, three passes). Measured on an H100 and on the host, 2026-11-25:
// C_D 5.5922 (0.04% above the band), C_L 0.01074 (inside), L_a 0.08264 m (1.9% below), dp
// 0.11583 Pa (1.2% below) (perf/results/ib_dfg_h100_20261125/). Disabled: it misses; the bands
// stay the target.
TEST(ImmersedLong, DISABLED_DfgCylinder2D1InPublishedBands) {
  Case c = load_deck(std::string(KOLIBRI_SOURCE_DIR) + "/inputs/dfg_2d1.toml");
  SolverConfig& sc = c.solver;
  const int D = 20;
  const double U = 0.04, cx = 40.0, cy = 40.0;  // mean inflow, centre (cells)
  ASSERT_EQ(sc.obstacles.size(), 1u);
  sc.obstacles.clear();
  Body b;
  b.name = "cylinder", b.shape = Body::Shape::Cylinder, b.radius = 0.5 * D, b.spacing = 0.3;
  b.position = {cx, cy, 0.5};
  sc.bodies.push_back(b);
  auto s = make_solver(sc);
  const std::int64_t steps = c.run.steps;
  auto coefficients = [&] {
    const auto l = s->body_loads()[0];
    return std::array<double, 2>{2 * l.force[0] / (U * U * D), 2 * l.force[1] / (U * U * D)};
  };
  s->step(steps - steps / 10);
  const double before = coefficients()[0];
  s->step(steps / 10);
  const auto [cd, cl] = coefficients();
  const auto f = s->macroscopic();
  // Pressure on the axis y = 40 (a cell face: the mean of rows 39 and 40) at cell column x,
  // extrapolated to the surface from 1.5 and 2.5 cells off it (outside the forcing layer).
  auto p = [&](int x) {
    return (0.5 * (f.rho[f.index(x, 39, 0)] + f.rho[f.index(x, 40, 0)]) - 1.0) / 3.0;
  };
  const int front = int(cx) - D / 2, back = int(cx) + D / 2;
  const double p_front = 2.5 * p(front - 2) - 1.5 * p(front - 3);  // centres at front - 1.5, - 2.5
  const double p_back = 2.5 * p(back + 1) - 1.5 * p(back + 2);     // back + 1.5, + 2.5
  const double dp = (p_front - p_back) * std::pow(0.2 / U, 2);     // Pa: rho 1 kg/m^3, U 0.2 m/s
  // Recirculation: where u_x on the axis behind the cylinder turns positive; metres (D = 0.1 m).
  double la = 0, prev_x = 0, prev_u = 0;
  for (int x = back; x < f.nx; ++x) {
    const double u = 0.5 * (f.u[f.index(x, 39, 0)][0] + f.u[f.index(x, 40, 0)][0]), xc = x + 0.5;
    if (xc > back + 0.5 && prev_u <= 0.0 && u > 0.0) {
      la = (prev_x - prev_u * (xc - prev_x) / (u - prev_u) - back) * 0.1 / D;
      break;
    }
    prev_x = xc, prev_u = u;
  }
  std::printf(
      "DFG 2D-1, immersed, D %d: C_D %.5f (change over the last tenth %.2e), C_L %.5f, L_a %.5f m, "
      "dp %.5f Pa\n",
      D, cd, cd - before, cl, la, dp);
  EXPECT_LT(std::fabs(cd - before), 1e-4) << "not steady";
  // Published bands (Schaefer & Turek 1996, Table 4).
  expect_in_band("cd", cd, 5.57, 5.59, 0.0);
  expect_in_band("cl", cl, 0.0104, 0.0110, 0.0);
  expect_in_band("la", la, 0.0842, 0.0852, 0.0);
  expect_in_band("dp", dp, 0.1172, 0.1176, 0.0);
}

// Sphere at Re 100, D = 24 cells, in a box of 24 x 12 x 12 diameters (47.8 M cells: a device
// run; `--gtest_also_run_disabled_tests` on a GPU build). Published C_D: 1.08 (Johnson & Patel
// 1999), 1.087 (Clift, Grace & Weber), 1.09 (Fornberg 1988); L/D 0.87-0.88. The target:
// C_D within 2% of the published value at D = 24. With the default retraction (0.3) it misses
// (C_D 1.1187, 2.6% above 1.09); with the retraction calibrated on Stokes flow through a sphere
// array, r = 0.332 + 2.73/D (docs/validation.md, "The retraction in 3D"), it holds: C_D 1.0994
// on an H100, 2026-12-05 (perf/results/ib_retraction_h100_20261205/wake_24x12x12/).
TEST(ImmersedLong, DISABLED_SphereRe100WithinTwoPercentOfPublished) {
  const int D = 24;
  const double U = 0.05;
  auto c =
      test::periodic_box(LatticeKind::D3Q27, 24 * D, 12 * D, 12 * D, 0.5 + 3.0 * U * D / 100.0);
  c.collision = CollisionKind::AdaptiveCentralMoment;
  c.faces[0].type = FaceType::VelocityInlet, c.faces[0].velocity = {U, 0, 0};
  c.faces[1].type = FaceType::PressureOutlet;
  for (std::size_t f = 2; f < 6; ++f)
    c.faces[f].type = FaceType::MovingWall, c.faces[f].velocity = {U, 0, 0};
  c.initial.velocity = {U, 0, 0};
  c.acm_velocity = U, c.acm_viscosity = 0.005;
  c.ib.retraction = 0.332 + 2.73 / D;
  Body b;
  b.shape = Body::Shape::Sphere, b.radius = 0.5 * D, b.spacing = 0.3;
  b.position = {7.2 * D, 6.0 * D, 6.0 * D};
  c.bodies.push_back(b);
  auto s = make_solver(c);
  s->step(std::int64_t(60 * D / U));
  const double cd = 2.0 * s->body_loads()[0].force[0] / (U * U * std::numbers::pi * D * D / 4);
  std::printf("sphere Re 100, D %d: C_D %.5f\n", D, cd);
  expect_in_band("cd", cd, 1.08, 1.09, 0.02);
}

}  // namespace
