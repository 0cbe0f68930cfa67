// SPDX-License-Identifier: Apache-2.0
// Whole-solver invariants: mass and momentum on periodic boxes, mass in closed boxes, uniform
// flow as a fixed point, the body force adding exactly F per step.
#include <kolibri/solver/Solver.hpp>

#include <gtest/gtest.h>

#include <random>

#include "Helpers.hpp"

namespace {
using namespace kolibri;

struct Totals {
  double mass = 0, mom[3] = {0, 0, 0};
};

Totals totals(const Solver& s) {
  const auto f = s.macroscopic();
  Totals t;
  const double* F = s.config().force.data();
  for (std::size_t i = 0; i < f.rho.size(); ++i) {
    if (f.solid[i]) continue;
    t.mass += f.rho[i];
    for (int d = 0; d < 3; ++d) t.mom[d] += f.rho[i] * f.u[i][d] + 0.5 * F[d];  // stored: rho u + F/2
  }
  return t;
}

void perturb(Solver& s, unsigned seed) {
  const auto& c = s.config();
  std::vector<double> rho(std::size_t(c.cells()));
  std::vector<std::array<double, 3>> u(rho.size());
  std::mt19937 g(seed);
  std::uniform_real_distribution<double> d(-0.03, 0.03);
  for (std::size_t i = 0; i < rho.size(); ++i) {
    rho[i] = 1.0 + d(g);
    u[i] = {d(g), d(g), c.lattice == LatticeKind::D2Q9 ? 0.0 : d(g)};
  }
  s.initialize(rho, u);
}

struct Combo {
  LatticeKind lat;
  CollisionKind col;
  Precision prec;
};
class SolverInvariants : public ::testing::TestWithParam<Combo> {};

TEST_P(SolverInvariants, PeriodicBoxConservesMassAndMomentum) {
  const auto p = GetParam();
  auto c = test::periodic_box(p.lat, 12, 10, p.lat == LatticeKind::D2Q9 ? 1 : 8, 0.7);
  c.collision = p.col;
  c.precision = p.prec;
  c.force = {1e-5, -2e-5, p.lat == LatticeKind::D2Q9 ? 0.0 : 1e-5};
  auto s = make_solver(c);
  perturb(*s, 5);
  const Totals a = totals(*s);
  const int steps = 50;
  s->step(steps);
  const Totals b = totals(*s);
  const double cells = double(c.cells());
  // Round-off class: a sum over N cells of O(1) values, each step adding ~Q eps per cell.
  const double eps = p.prec == Precision::FP32 ? 1.2e-7 : 2.2e-16;
  const double tol = 50.0 * eps * cells * std::sqrt(double(steps));
  EXPECT_NEAR(b.mass, a.mass, tol);
  for (int d = 0; d < 3; ++d) EXPECT_NEAR(b.mom[d], a.mom[d] + steps * cells * c.force[d], tol) << d;
}

TEST_P(SolverInvariants, ClosedBoxWithObstacleConservesMass) {
  const auto p = GetParam();
  const bool two_d = p.lat == LatticeKind::D2Q9;
  auto c = test::periodic_box(p.lat, 14, 12, two_d ? 1 : 10, 0.7);
  c.collision = p.col;
  c.precision = p.prec;
  for (int f = 0; f < (two_d ? 4 : 6); ++f) c.faces[f].type = FaceType::Wall;
  c.faces[3].type = FaceType::MovingWall;  // a lid: halfway bounce-back keeps mass exactly
  c.faces[3].velocity = {0.05, 0, 0};
  Obstacle o;
  o.shape = Obstacle::Shape::Sphere;
  o.center = {7, 6, two_d ? 0.5 : 5};
  o.radius = 2.5;
  c.obstacles.push_back(o);
  auto s = make_solver(c);
  perturb(*s, 9);
  const double m0 = totals(*s).mass;
  s->step(60);
  const double eps = p.prec == Precision::FP32 ? 1.2e-7 : 2.2e-16;
  EXPECT_NEAR(totals(*s).mass, m0, 50.0 * eps * double(c.cells()) * std::sqrt(60.0));
}

TEST_P(SolverInvariants, UniformFlowIsAFixedPoint) {
  const auto p = GetParam();
  auto c = test::periodic_box(p.lat, 6, 5, p.lat == LatticeKind::D2Q9 ? 1 : 4, 0.9);
  c.collision = p.col;
  c.precision = p.prec;
  c.initial.velocity = {0.04, -0.03, p.lat == LatticeKind::D2Q9 ? 0.0 : 0.02};
  auto s = make_solver(c);
  // The recursive operator's equilibrium carries the higher Hermite terms (rho uuu, ...) that the
  // initial second-order equilibrium lacks: its fixed point is the state after one step.
  // KBC's equilibrium is the product form, also with higher terms: after one step too.
  if (p.col == CollisionKind::RecursiveRegularized || p.col == CollisionKind::Kbc) s->step(1);
  const auto before = s->populations();
  s->step(20);
  const auto after = s->populations();
  const double eps = p.prec == Precision::FP32 ? 1.2e-7 : 2.2e-16;
  for (std::size_t i = 0; i < before.size(); ++i) ASSERT_NEAR(after[i], before[i], 40 * eps) << i;
}

std::string combo_name(const ::testing::TestParamInfo<Combo>& i) {
  return std::string(to_string(i.param.lat)) + "_" + to_string(i.param.col) + "_" + to_string(i.param.prec);
}

std::vector<Combo> all_combos() {
  std::vector<Combo> v;
  for (auto l : {LatticeKind::D2Q9, LatticeKind::D3Q19, LatticeKind::D3Q27})
    for (auto c : {CollisionKind::Bgk, CollisionKind::Trt, CollisionKind::Regularized, CollisionKind::RecursiveRegularized})
      for (auto p : {Precision::FP64, Precision::FP32}) v.push_back({l, c, p});
  for (auto l : {LatticeKind::D2Q9, LatticeKind::D3Q27})  // KBC: the tensor lattices only
    for (auto p : {Precision::FP64, Precision::FP32}) v.push_back({l, CollisionKind::Kbc, p});
  return v;
}
INSTANTIATE_TEST_SUITE_P(All, SolverInvariants, ::testing::ValuesIn(all_combos()), combo_name);

TEST(Streaming, UniformFlowAcrossPeriodicEdgesIsBitwiseUnchanged) {
  // tau = 1 BGK maps every node to its equilibrium: a uniform state streams onto itself across
  // the periodic edges, so the populations are unchanged bit for bit (exact class).
  auto c = test::periodic_box(LatticeKind::D3Q19, 5, 4, 3, 1.0);
  c.initial.velocity = {0.05, 0.0, 0.0};
  auto s = make_solver(c);
  const auto a = s->populations();
  s->step(7);
  const auto b = s->populations();
  for (std::size_t i = 0; i < a.size(); ++i) ASSERT_DOUBLE_EQ(a[i], b[i]);
}

}  // namespace
