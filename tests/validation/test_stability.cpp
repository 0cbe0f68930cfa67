// SPDX-License-Identifier: Apache-2.0
// Stability at high Reynolds number: the double shear layer (Coreixas et al. 2017's test) on a
// coarse D2Q9 grid, where BGK blows up and the recursive regularized operator does not.
#include <kolibri/solver/Solver.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "Helpers.hpp"

namespace {
using namespace kolibri;

/// Steps until the first non-finite cell (checked every 100 steps), or `steps` if none.
std::int64_t steps_survived(CollisionKind op, int n, double re, std::int64_t steps) {
  auto c = test::periodic_box(LatticeKind::D2Q9, n, n, 1);
  const double U = 0.1, nu = U * n / re;
  c.tau = 0.5 + 3.0 * nu;
  c.collision = op;
  auto s = make_solver(c);
  std::vector<double> rho(std::size_t(n) * n, 1.0);
  std::vector<std::array<double, 3>> u(rho.size());
  const double kappa = 80.0, delta = 0.05, pi = std::numbers::pi;
  for (int y = 0; y < n; ++y)
    for (int x = 0; x < n; ++x) {
      const double X = (x + 0.5) / n, Y = (y + 0.5) / n;
      const double ux = Y <= 0.5 ? U * std::tanh(kappa * (Y - 0.25)) : U * std::tanh(kappa * (0.75 - Y));
      u[std::size_t(x + n * y)] = {ux, delta * U * std::sin(2 * pi * (X + 0.25)), 0.0};
    }
  s->initialize(rho, u);
  for (std::int64_t t = 0; t < steps; t += 100) {
    s->step(100);
    if (s->diagnostics().first_bad >= 0) return t + 100;
  }
  return steps;
}

TEST(Stability, DoubleShearLayerBlowsUpBgkNotRecursive) {
  const int n = 128;
  const double re = 30000;
  const std::int64_t steps = 4000;  // more than a convective time n / U = 1280 steps
  const auto bgk = steps_survived(CollisionKind::Bgk, n, re, steps);
  const auto rec = steps_survived(CollisionKind::RecursiveRegularized, n, re, steps);
  EXPECT_LT(bgk, steps) << "BGK should blow up at Re " << re << " on " << n << "^2";
  EXPECT_EQ(rec, steps) << "the recursive regularized operator should stay finite";
  RecordProperty("bgk_steps", int(bgk));
}

}  // namespace
