// SPDX-License-Identifier: Apache-2.0
// Collision operators on single nodes: conservation, fixed point, forcing, equivalences.
#include <kolibri/collision/Collision.hpp>

#include <gtest/gtest.h>

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
}  // namespace
