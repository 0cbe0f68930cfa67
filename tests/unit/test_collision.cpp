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
