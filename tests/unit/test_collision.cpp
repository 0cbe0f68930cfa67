// SPDX-License-Identifier: Apache-2.0
// Collision operators on single nodes: conservation, fixed point, forcing, equivalences.
#include <kolibri/collision/Collision.hpp>
#include <kolibri/collision/Mrt.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

namespace {
using namespace kolibri;

template <class L>
class CollisionTest : public ::testing::Test {};
using Lattices = ::testing::Types<D2Q9, D3Q19, D3Q27>;
TYPED_TEST_SUITE(CollisionTest, Lattices);

// Round-off class: sums of Q terms of size ~1, so a few times Q * eps.
constexpr double tol = 1e-13;

template <class L>
void random_state(double (&f)[L::Q], unsigned seed) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<double> d(-0.02, 0.02);
  double u[3] = {0.05, -0.03, L::D == 3 ? 0.04 : 0.0};
  const double usq = u[0] * u[0] + u[1] * u[1] + u[2] * u[2];
  for (int q = 0; q < L::Q; ++q) f[q] = equilibrium<L>(q, 1.02, u, usq) * (1.0 + d(g));
}

template <class L>
void moments(const double (&f)[L::Q], double& rho, double (&j)[3]) {
  rho = 0, j[0] = j[1] = j[2] = 0;
  for (int q = 0; q < L::Q; ++q) {
    rho += f[q];
    for (int d = 0; d < 3; ++d) j[d] += L::c(q, d) * f[q];
  }
}

template <class L, class Op>
void check_conservation(const Op& op) {
  const double F[3] = {1e-4, -2e-4, L::D == 3 ? 3e-4 : 0.0};
  for (unsigned seed = 1; seed < 5; ++seed) {
    double f[L::Q];
    random_state<L>(f, seed);
    double rho0, j0[3], rho1, j1[3];
    moments<L>(f, rho0, j0);
    op(f, F);
    moments<L>(f, rho1, j1);
    EXPECT_NEAR(rho1, rho0, tol);
    // Guo: the post-collision momentum is rho u + F/2 = sum c f + F.
    for (int d = 0; d < 3; ++d) EXPECT_NEAR(j1[d], j0[d] + F[d], tol) << "axis " << d;
  }
}

TYPED_TEST(CollisionTest, ConserveMassAndGainMomentumF) {
  using L = TypeParam;
  check_conservation<L>(Bgk<L, double>{1.3});
  check_conservation<L>(Trt<L, double>{1.3, 1.7});
  check_conservation<L>(RegularizedBgk<L, double>{1.3});
  check_conservation<L>(RecursiveRegularizedBgk<L, double>{1.3});
}

/// Sum over q of f_q H_pqr(c_q): the Hermite coefficient a_pqr of a population set.
template <class L>
double hermite_moment(const double (&f)[L::Q], int p, int q, int r) {
  double a = 0;
  for (int k = 0; k < L::Q; ++k) {
    const double c[3] = {double(L::c(k, 0)), double(L::c(k, 1)), double(L::c(k, 2))};
    a += f[k] * hermite3(p, q, r, c);
  }
  return a;
}

// The recursive operator adds only terms the lattice supports: its moments up to second order
// are the projective operator's (THEORY.md 4.5, "supported-set sanity").
TYPED_TEST(CollisionTest, RecursiveKeepsTheProjectiveSecondOrderMoments) {
  using L = TypeParam;
  const double F[3] = {1e-4, -2e-4, L::D == 3 ? 3e-4 : 0.0};
  for (unsigned seed = 1; seed < 5; ++seed) {
    double a[L::Q], b[L::Q];
    random_state<L>(a, seed);
    random_state<L>(b, seed);
    RegularizedBgk<L, double>{1.4}(a, F);
    RecursiveRegularizedBgk<L, double>{1.4}(b, F);
    for (int p = 0; p <= 2; ++p)
      for (int q = 0; p + q <= 2; ++q)
        for (int r = 0; p + q + r <= 2; ++r)
          EXPECT_NEAR(hermite_moment<L>(b, p, q, r), hermite_moment<L>(a, p, q, r), tol) << p << q << r;
  }
}

// The third- and fourth-order coefficients of the result are rho u..u + (1 - omega) a_neq with
// the recursive a_neq written out as in THEORY.md 4.3 (independent of recursive_neq).
TYPED_TEST(CollisionTest, RecursiveHigherCoefficientsFollowTheRecursion) {
  using L = TypeParam;
  const double F[3] = {0, 0, 0}, omega = 1.4;
  for (unsigned seed = 1; seed < 4; ++seed) {
    double f[L::Q];
    random_state<L>(f, seed);
    double rho = 0, j[3] = {0, 0, 0}, pi[3][3] = {};
    for (int k = 0; k < L::Q; ++k) {
      rho += f[k];
      for (int d = 0; d < 3; ++d) {
        j[d] += L::c(k, d) * f[k];
        for (int e = 0; e < 3; ++e) pi[d][e] += L::c(k, d) * L::c(k, e) * f[k];
      }
    }
    const double u[3] = {j[0] / rho, j[1] / rho, j[2] / rho};
    double n[3][3];  // Pi_neq
    for (int d = 0; d < 3; ++d)
      for (int e = 0; e < 3; ++e) n[d][e] = pi[d][e] - rho * u[d] * u[e] - (d == e && d < L::D ? rho / 3.0 : 0.0);
    auto star = [&](double eq, double neq) { return eq + (1 - omega) * neq; };
    // a_xxy = 2 u_x a_xy + u_y a_xx, a_xyy likewise, a_xyz, a_xxyy = u_y^2 a_xx + u_x^2 a_yy + 4 u_x u_y a_xy
    const double xxy = star(rho * u[0] * u[0] * u[1], 2 * u[0] * n[0][1] + u[1] * n[0][0]);
    const double xyy = star(rho * u[0] * u[1] * u[1], 2 * u[1] * n[0][1] + u[0] * n[1][1]);
    const double yzz = star(rho * u[1] * u[2] * u[2], 2 * u[2] * n[1][2] + u[1] * n[2][2]);
    const double xyz = star(rho * u[0] * u[1] * u[2], u[0] * n[1][2] + u[1] * n[0][2] + u[2] * n[0][1]);
    const double xxyy = star(rho * u[0] * u[0] * u[1] * u[1], u[1] * u[1] * n[0][0] + u[0] * u[0] * n[1][1] + 4 * u[0] * u[1] * n[0][1]);
    RecursiveRegularizedBgk<L, double>{omega}(f, F);
    if constexpr (L::Q == 9 || L::Q == 27) {
      EXPECT_NEAR(hermite_moment<L>(f, 2, 1, 0), xxy, tol);
      EXPECT_NEAR(hermite_moment<L>(f, 1, 2, 0), xyy, tol);
      EXPECT_NEAR(hermite_moment<L>(f, 2, 2, 0), xxyy, tol);
    }
    if constexpr (L::Q == 27) {
      EXPECT_NEAR(hermite_moment<L>(f, 0, 1, 2), yzz, tol);
      EXPECT_NEAR(hermite_moment<L>(f, 1, 1, 1), xyz, tol);
    }
    if constexpr (L::Q == 19) {  // only the pair sums and differences are resolved
      EXPECT_NEAR(hermite_moment<L>(f, 2, 1, 0) + hermite_moment<L>(f, 0, 1, 2), xxy + yzz, tol);
      EXPECT_NEAR(hermite_moment<L>(f, 2, 1, 0) - hermite_moment<L>(f, 0, 1, 2), xxy - yzz, tol);
    }
  }
}

// Regularizing a regularized state with omega = 0 changes nothing (THEORY.md 4.5).
TYPED_TEST(CollisionTest, RecursiveIsIdempotent) {
  using L = TypeParam;
  const double F[3] = {0, 0, 0};
  double f[L::Q], g[L::Q];
  random_state<L>(f, 7);
  RecursiveRegularizedBgk<L, double>{1.0}(f, F);  // any omega: now a regularized state
  for (int q = 0; q < L::Q; ++q) g[q] = f[q];
  RecursiveRegularizedBgk<L, double>{0.0}(g, F);
  for (int q = 0; q < L::Q; ++q) EXPECT_NEAR(g[q], f[q], tol) << q;
}

template <class L, class Op>
void check_fixed_point(const Op& op) {
  const double u[3] = {0.07, -0.02, L::D == 3 ? 0.03 : 0.0}, F[3] = {0, 0, 0};
  const double usq = u[0] * u[0] + u[1] * u[1] + u[2] * u[2];
  double f[L::Q], feq[L::Q];
  for (int q = 0; q < L::Q; ++q) f[q] = feq[q] = equilibrium<L>(q, 0.97, u, usq);
  op(f, F);
  for (int q = 0; q < L::Q; ++q) EXPECT_NEAR(f[q], feq[q], 1e-15) << "q " << q;
}

TYPED_TEST(CollisionTest, EquilibriumIsAFixedPoint) {
  using L = TypeParam;
  check_fixed_point<L>(Bgk<L, double>{1.7});
  check_fixed_point<L>(Trt<L, double>{1.7, 0.9});
  check_fixed_point<L>(RegularizedBgk<L, double>{1.7});
}

TYPED_TEST(CollisionTest, TrtWithEqualRatesIsBgk) {
  using L = TypeParam;
  const double F[3] = {1e-4, 2e-4, 0};
  double a[L::Q], b[L::Q];
  random_state<L>(a, 7);
  random_state<L>(b, 7);
  Bgk<L, double>{1.4}(a, F);
  Trt<L, double>{1.4, 1.4}(b, F);
  for (int q = 0; q < L::Q; ++q) EXPECT_NEAR(a[q], b[q], tol);
}

TYPED_TEST(CollisionTest, RegularizedAtUnitRateIsBgk) {
  using L = TypeParam;  // omega = 1: both give feq + F_q / 2 (the Hermite form of Guo's term)
  const double F[3] = {1e-4, 2e-4, L::D == 3 ? -1e-4 : 0.0};
  double a[L::Q], b[L::Q];
  random_state<L>(a, 11);
  random_state<L>(b, 11);
  Bgk<L, double>{1.0}(a, F);
  RegularizedBgk<L, double>{1.0}(b, F);
  for (int q = 0; q < L::Q; ++q) EXPECT_NEAR(a[q], b[q], tol);
}

TYPED_TEST(CollisionTest, RegularizedKeepsSecondMomentsOfBgk) {
  using L = TypeParam;  // Pi* is the same for BGK and projective regularization
  const double F[3] = {1e-4, 2e-4, L::D == 3 ? -1e-4 : 0.0};
  double a[L::Q], b[L::Q];
  random_state<L>(a, 13);
  random_state<L>(b, 13);
  Bgk<L, double>{1.6}(a, F);
  RegularizedBgk<L, double>{1.6}(b, F);
  for (int x = 0; x < L::D; ++x)
    for (int y = 0; y < L::D; ++y) {
      double pa = 0, pb = 0;
      for (int q = 0; q < L::Q; ++q) {
        pa += L::c(q, x) * L::c(q, y) * a[q];
        pb += L::c(q, x) * L::c(q, y) * b[q];
      }
      EXPECT_NEAR(pa, pb, tol) << x << y;
    }
}

TYPED_TEST(CollisionTest, FloatAgreesWithDouble) {
  using L = TypeParam;  // same operator in FP32: agreement to float round-off (~1e-7 relative)
  double fd[L::Q];
  float ff[L::Q];
  random_state<L>(fd, 3);
  for (int q = 0; q < L::Q; ++q) ff[q] = float(fd[q]);
  const double Fd[3] = {1e-4, 0, 0};
  const float Ff[3] = {1e-4f, 0, 0};
  Bgk<L, double>{1.2}(fd, Fd);
  Bgk<L, float>{1.2f}(ff, Ff);
  for (int q = 0; q < L::Q; ++q) EXPECT_NEAR(ff[q], fd[q], 1e-6 * fd[0]);
}

// ---- Multiple-relaxation-time operators (include/kolibri/collision/Mrt.hpp) ----

/// The product-form equilibrium (EP, THEORY.md 0): rho prod_a psi(c_a, u_a).
template <class L>
double product_equilibrium(int q, double rho, const double (&u)[3]) {
  double f = rho;
  for (int d = 0; d < L::D; ++d) {
    const int c = L::c(q, d);
    f *= c == 0 ? 2.0 / 3.0 - u[d] * u[d] : (1.0 / 3.0 + u[d] * u[d] + c * u[d]) / 2.0;
  }
  return f;
}

template <class L>
class TensorTest : public ::testing::Test {};
using TensorLattices = ::testing::Types<D2Q9, D3Q27>;
TYPED_TEST_SUITE(TensorTest, TensorLattices);

TYPED_TEST(TensorTest, ChimeraGivesTheCentralMomentsAndInvertsExactly) {
  using L = TypeParam;
  using X = Chimera<L>;
  double f[L::Q];
  random_state<L>(f, 7);
  const double u[3] = {0.07, -0.04, L::D == 3 ? 0.03 : 0.0};
  double k[X::N];
  for (int q = 0; q < L::Q; ++q) k[X::slot(q)] = f[q];
  X::forward(k, u);
  for (int p = 0; p < 3; ++p)
    for (int q = 0; q < 3; ++q)
      for (int r = 0; r < (L::D == 3 ? 3 : 1); ++r) {
        double want = 0;
        for (int i = 0; i < L::Q; ++i)
          want += f[i] * std::pow(L::c(i, 0) - u[0], p) * std::pow(L::c(i, 1) - u[1], q) * std::pow(L::c(i, 2) - u[2], r);
        EXPECT_NEAR(k[X::at(p, q, r)], want, tol) << p << q << r;
      }
  X::inverse(k, u);
  for (int q = 0; q < L::Q; ++q) EXPECT_NEAR(k[X::slot(q)], f[q], tol) << "q " << q;
}

template <class L>
CentralMomentMrt<L, double> cm(double omega, double omega_b, double omega_h, bool hermite = true) {
  CentralMomentMrt<L, double> op{omega, omega_b, omega_h};
  op.hermite = hermite;
  return op;
}

TYPED_TEST(TensorTest, CentralMomentConservesMassAndGainsMomentumF) {
  using L = TypeParam;
  for (bool hermite : {true, false}) {
    check_conservation<L>(cm<L>(1.3, 1.0, 1.0, hermite));
    check_conservation<L>(cm<L>(1.9, 0.7, 1.6, hermite));
    auto acm = cm<L>(1.7, 1.0, 1.0, hermite);
    acm.policy = HighOrderRate::Adaptive, acm.inv_u_ref = 10.0;
    check_conservation<L>(acm);
  }
}

TYPED_TEST(TensorTest, CentralMomentKeepsTheProductEquilibrium) {
  using L = TypeParam;
  const double u[3] = {0.08, -0.05, L::D == 3 ? 0.06 : 0.0}, F[3] = {0, 0, 0};
  double f[L::Q], f0[L::Q];
  for (bool hermite : {true, false}) {
    for (int q = 0; q < L::Q; ++q) f[q] = f0[q] = product_equilibrium<L>(q, 1.03, u);
    cm<L>(1.6, 0.8, 1.2, hermite)(f, F);
    for (int q = 0; q < L::Q; ++q) EXPECT_NEAR(f[q], f0[q], 1e-15) << "q " << q;
  }
}

TYPED_TEST(TensorTest, CentralMomentWithEqualRatesIsBgkWithTheProductEquilibrium) {
  using L = TypeParam;
  const double F[3] = {0, 0, 0}, w = 1.37;
  double f[L::Q], g[L::Q], rho, j[3];
  random_state<L>(f, 3);
  moments<L>(f, rho, j);
  const double u[3] = {j[0] / rho, j[1] / rho, j[2] / rho};
  for (int q = 0; q < L::Q; ++q) g[q] = f[q] + w * (product_equilibrium<L>(q, rho, u) - f[q]);
  for (bool hermite : {true, false}) {
    double h[L::Q];
    std::copy(f, f + L::Q, h);
    cm<L>(w, w, w, hermite)(h, F);
    for (int q = 0; q < L::Q; ++q) EXPECT_NEAR(h[q], g[q], tol) << "q " << q;
  }
}

TYPED_TEST(TensorTest, HermiteCentralMomentsRelaxByTheirRatesAndHaveNoEquilibriumAboveOrderZero) {
  // Post-collision central Hermite moments: H*_pqr = (1 - w) H_pqr for orders >= 2 (the deviator
  // with omega, the trace with omega_b, the rest with omega_h); the force enters order 1 only.
  using L = TypeParam;
  using X = Chimera<L>;
  const double F[3] = {3e-4, -2e-4, L::D == 3 ? 1e-4 : 0.0}, w = 1.4, wb = 0.9, wh = 1.7, cs2 = 1.0 / 3.0;
  double f[L::Q], rho, j[3];
  random_state<L>(f, 9);
  moments<L>(f, rho, j);
  const double u[3] = {(j[0] + F[0] / 2) / rho, (j[1] + F[1] / 2) / rho, (j[2] + F[2] / 2) / rho};
  double k0[X::N], k1[X::N];
  for (int q = 0; q < L::Q; ++q) k0[X::slot(q)] = f[q];
  X::forward(k0, u, cs2);
  cm<L>(w, wb, wh)(f, F);
  for (int q = 0; q < L::Q; ++q) k1[X::slot(q)] = f[q];
  X::forward(k1, u, cs2);  // the same velocity: the post-collision moments around u
  EXPECT_NEAR(k1[0], rho, tol);
  for (int d = 0; d < L::D; ++d) EXPECT_NEAR(k1[X::at(d == 0, d == 1, d == 2)], F[d] / 2, tol);
  double tr0 = 0, tr1 = 0;
  for (int d = 0; d < L::D; ++d) {
    tr0 += k0[X::at(2 * (d == 0), 2 * (d == 1), 2 * (d == 2))];
    tr1 += k1[X::at(2 * (d == 0), 2 * (d == 1), 2 * (d == 2))];
  }
  EXPECT_NEAR(tr1, (1 - wb) * tr0, tol);
  const int xx = X::at(2, 0, 0), yy = X::at(0, 2, 0);
  EXPECT_NEAR(k1[xx] - k1[yy], (1 - w) * (k0[xx] - k0[yy]), tol);
  EXPECT_NEAR(k1[X::at(1, 1, 0)], (1 - w) * k0[X::at(1, 1, 0)], tol);
  for (int p = 0; p < 3; ++p)
    for (int q = 0; q < 3; ++q)
      for (int r = 0; r < (L::D == 3 ? 3 : 1); ++r)
        if (p + q + r >= 3) {
          EXPECT_NEAR(k1[X::at(p, q, r)], (1 - wh) * k0[X::at(p, q, r)], tol) << p << q << r;
        }
}

TYPED_TEST(TensorTest, CentralMomentSecondOrderFollowsTheShearAndBulkRates) {
  // The post-collision central second moments: the deviator relaxes with omega, the trace
  // with omega_b, whatever omega_h is; changing omega_h moves only orders >= 3.
  using L = TypeParam;
  using X = Chimera<L>;
  const double F[3] = {0, 0, 0}, w = 1.4, wb = 0.9;
  double f[L::Q], g[L::Q], rho, j[3];
  random_state<L>(f, 5);
  std::copy(f, f + L::Q, g);
  moments<L>(f, rho, j);
  const double u[3] = {j[0] / rho, j[1] / rho, j[2] / rho};
  double k0[X::N], k1[X::N], k2[X::N];
  for (int q = 0; q < L::Q; ++q) k0[X::slot(q)] = f[q];
  X::forward(k0, u);
  cm<L>(w, wb, 1.0, false)(f, F);
  cm<L>(w, wb, 1.8, false)(g, F);
  for (int q = 0; q < L::Q; ++q) k1[X::slot(q)] = f[q], k2[X::slot(q)] = g[q];
  X::forward(k1, u);  // the velocity is unchanged without a force
  X::forward(k2, u);
  const double cs2 = 1.0 / 3.0, D = L::D;
  double tr0 = 0, tr1 = 0;
  for (int d = 0; d < L::D; ++d) {
    tr0 += k0[X::at(2 * (d == 0), 2 * (d == 1), 2 * (d == 2))];
    tr1 += k1[X::at(2 * (d == 0), 2 * (d == 1), 2 * (d == 2))];
  }
  EXPECT_NEAR(tr1 - D * rho * cs2, (1 - wb) * (tr0 - D * rho * cs2), tol);
  EXPECT_NEAR(k1[X::at(1, 1, 0)], (1 - w) * k0[X::at(1, 1, 0)], tol);
  const int xx = X::at(2, 0, 0), yy = X::at(0, 2, 0);
  EXPECT_NEAR(k1[xx] - k1[yy], (1 - w) * (k0[xx] - k0[yy]), tol);
  for (int p = 0; p < 3; ++p)
    for (int q = 0; q < 3; ++q)
      for (int r = 0; r < (L::D == 3 ? 3 : 1); ++r) {
        const int n = X::at(p, q, r);
        if (p + q + r < 3) {
          EXPECT_NEAR(k1[n], k2[n], tol) << p << q << r;
        } else {  // orders >= 3 relax to the Maxwellian's rho mu(p) mu(q) mu(r)
          auto mu = [&](int e) { return e == 0 ? 1.0 : e == 2 ? cs2 : 0.0; };
          const double eq = rho * mu(p) * mu(q) * mu(r);
          EXPECT_NEAR(k1[n], eq, tol) << p << q << r;  // omega_h = 1: exactly to equilibrium
          EXPECT_NEAR(k2[n] - eq, (1 - 1.8) * (k0[n] - eq), tol) << p << q << r;
        }
      }
}

TEST(CentralMoment, AdaptiveRateFollowsTheEmpiricalRuleInsideItsClamp) {
  CentralMomentMrt<D3Q27, double> op{1.5, 1.0, 1.0};
  op.policy = HighOrderRate::Adaptive;
  op.nu_a = 1e-3, op.inv_u_ref = 1.0 / 0.1;
  const double rest[3] = {0, 0, 0}, fast[3] = {0.06, 0.08, 0}, faster[3] = {0.3, 0, 0};
  EXPECT_NEAR(op.high_rate(rest), 1.0 / (3 * 5e-3 + 0.5), 1e-15);  // nu_h = 5 nu_a at rest
  EXPECT_NEAR(op.high_rate(fast), 1.0 / (3 * 1e-3 + 0.5), 1e-15);  // nu_h = nu_a at u_ref
  EXPECT_EQ(op.high_rate(faster), op.high_rate(fast));              // |u| > u_ref counts as u_ref
  op.nu_a = 1.0;
  EXPECT_EQ(op.high_rate(rest), 1.0);  // clamped to [1, 1.999]
  op.nu_a = 1e-9;
  EXPECT_EQ(op.high_rate(fast), 1.999);
}

TEST(RawMomentMrt, SugaBasisIsOrthogonalAndStartsWithTheConservedMoments) {
  using M = RawMomentMrt<D3Q27, double>;
  for (int k = 0; k < 27; ++k)
    for (int l = 0; l < 27; ++l) {
      double mi = 0;  // (M^-1 M)_kl
      for (int i = 0; i < 27; ++i) mi += M::inverse(k, i) * M::basis(i, l);
      EXPECT_NEAR(mi, k == l ? 1.0 : 0.0, 1e-13) << k << " " << l;
    }
  for (int i = 0; i < 27; ++i) {
    EXPECT_EQ(M::basis(0, i), 1.0);
    for (int d = 0; d < 3; ++d) EXPECT_EQ(M::basis(1 + d, i), D3Q27::c(i, d));
  }
}

TEST(RawMomentMrt, ConservesMassGainsMomentumFAndKeepsTheEquilibrium) {
  using L = D3Q27;
  check_conservation<L>(RawMomentMrt<L, double>::suga(1.3));
  check_conservation<L>(RawMomentMrt<L, double>::suga(1.95, 1.2));
  const double u[3] = {0.05, -0.03, 0.04}, F[3] = {0, 0, 0};
  const double usq = u[0] * u[0] + u[1] * u[1] + u[2] * u[2];
  double f[27], f0[27];
  for (int q = 0; q < 27; ++q) f[q] = f0[q] = equilibrium<L>(q, 0.98, u, usq);
  RawMomentMrt<L, double>::suga(1.6)(f, F);
  for (int q = 0; q < 27; ++q) EXPECT_NEAR(f[q], f0[q], tol) << "q " << q;
}

TEST(RawMomentMrt, AllRatesEqualIsBgkWithGuoForcing) {
  using L = D3Q27;
  const double F[3] = {2e-4, -1e-4, 3e-4}, w = 1.45;
  RawMomentMrt<L, double> op{};
  for (double& s : op.s) s = w;
  double f[27], g[27];
  random_state<L>(f, 11);
  std::copy(f, f + 27, g);
  op(f, F);
  Bgk<L, double>{w}(g, F);
  for (int q = 0; q < 27; ++q) EXPECT_NEAR(f[q], g[q], tol) << "q " << q;
}

}  // namespace
