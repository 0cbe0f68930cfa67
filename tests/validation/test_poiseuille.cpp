// SPDX-License-Identifier: Apache-2.0
// Force-driven Poiseuille flow: between plates (2D, and 3D lattices) and in a square duct (3D),
// against the analytic profiles, with the observed order of convergence.
#include <kolibri/solver/Solver.hpp>

#include <gtest/gtest.h>

#include <cmath>

#include "Flows.hpp"
#include "Helpers.hpp"

namespace {
using namespace kolibri;

double plates_error(LatticeKind lat, CollisionKind col, int H, double tau, double umax) {
  return test::plates_error(test::plates(lat, H, tau, col), umax);
}

class PlatesConvergence : public ::testing::TestWithParam<LatticeKind> {};
TEST_P(PlatesConvergence, BgkConvergesAtSecondOrder) {
  // BGK + halfway bounce-back: wall-slip error ~ (tau - 1/2)^2 / H^2 at fixed tau.
  const double e8 = plates_error(GetParam(), CollisionKind::Bgk, 8, 0.9, 0.02);
  const double e16 = plates_error(GetParam(), CollisionKind::Bgk, 16, 0.9, 0.02);
  const double e32 = plates_error(GetParam(), CollisionKind::Bgk, 32, 0.9, 0.02);
  RecordProperty("error_8", std::to_string(e8));
  RecordProperty("error_32", std::to_string(e32));
  EXPECT_LT(e32, 2e-3);
  EXPECT_NEAR(test::order(e8, e16, 8, 16), 2.0, 0.1);
  EXPECT_NEAR(test::order(e16, e32, 16, 32), 2.0, 0.1);
}
TEST_P(PlatesConvergence, TrtWithMagicThreeSixteenthsIsExact) {
  // Lambda = 3/16 puts the bounce-back wall exactly halfway: the parabola is reproduced to
  // round-off at any tau (Ginzburg). The tolerance covers the residual of the finite run.
  for (double tau : {0.6, 0.9, 1.5}) EXPECT_LT(plates_error(GetParam(), CollisionKind::Trt, 8, tau, 0.02), 1e-9) << tau;
}
INSTANTIATE_TEST_SUITE_P(Lattices, PlatesConvergence,
                         ::testing::Values(LatticeKind::D2Q9, LatticeKind::D3Q19, LatticeKind::D3Q27),
                         [](const auto& i) { return std::string(to_string(i.param)); });

/// Square duct of side H, walls on y and z, periodic in x: double sine series solution of
/// nu (u_yy + u_zz) = -F.
double duct_error(LatticeKind lat, int H, double tau, double umax_guess) {
  SolverConfig c = test::periodic_box(lat, 2, H, H, tau);
  for (int f = 2; f < 6; ++f) c.faces[f].type = FaceType::Wall;
  const double nu = c.viscosity();
  const double F = 14.2 * nu * umax_guess / (H * double(H));  // u_max ~ 0.0737 F H^2 / nu
  c.force = {F, 0, 0};
  auto s = make_solver(c);
  s->step(std::int64_t(std::ceil(2.0 * H * H / nu)));  // slowest mode rate 2 pi^2 nu / H^2
  const auto f = s->macroscopic();
  double num = 0, den = 0;
  for (int z = 0; z < H; ++z)
    for (int y = 0; y < H; ++y) {
      const double Y = (y + 0.5) / H, Z = (z + 0.5) / H;
      double exact = 0;
      for (int m = 1; m < 120; m += 2)
        for (int n = 1; n < 120; n += 2)
          exact += std::sin(m * M_PI * Y) * std::sin(n * M_PI * Z) / (m * n * double(m * m + n * n));
      exact *= 16.0 * F * H * H / (nu * std::pow(M_PI, 4));
      const double diff = f.u[f.index(1, y, z)][0] - exact;
      num += diff * diff, den += exact * exact;
    }
  return std::sqrt(num / den);
}

class DuctConvergence : public ::testing::TestWithParam<LatticeKind> {};
TEST_P(DuctConvergence, ConvergesAtSecondOrder) {
  const double e8 = duct_error(GetParam(), 8, 0.8, 0.02);
  const double e16 = duct_error(GetParam(), 16, 0.8, 0.02);
  const double e32 = duct_error(GetParam(), 32, 0.8, 0.02);
  RecordProperty("error_32", std::to_string(e32));
  EXPECT_LT(e32, 3e-3);
  EXPECT_NEAR(test::order(e8, e16, 8, 16), 2.0, 0.2);
  EXPECT_NEAR(test::order(e16, e32, 16, 32), 2.0, 0.15);
}
INSTANTIATE_TEST_SUITE_P(Lattices, DuctConvergence,
                         ::testing::Values(LatticeKind::D3Q19, LatticeKind::D3Q27),
                         [](const auto& i) { return std::string(to_string(i.param)); });
}  // namespace
