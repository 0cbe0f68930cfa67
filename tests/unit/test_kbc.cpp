// SPDX-License-Identifier: Apache-2.0
// The KBC entropic operator on single nodes (THEORY.md 3.5): equilibrium is a fixed point, mass
// and momentum are conserved whatever the stabiliser is, the shear part carries the second
// moments it should, the stabiliser minimises the quadratic entropy, gamma = 2 is BGK, and the
// force adds exactly F.
#include <kolibri/collision/Kbc.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace {
using namespace kolibri;

template <class L>
class KbcTest : public ::testing::Test {};
using TensorLattices = ::testing::Types<D2Q9, D3Q27>;
TYPED_TEST_SUITE(KbcTest, TensorLattices);

constexpr double tol = 1e-13;  // sums of Q terms of size ~1: a few times Q eps

/// A non-equilibrium state: the product-form equilibrium at (1.02, u) with 2% noise.
template <class L>
void noisy_state(double (&f)[L::Q], unsigned seed, double noise = 0.02) {
  std::mt19937 g(seed);
  std::uniform_real_distribution<double> d(-noise, noise);
  const double u[3] = {0.05, -0.03, L::D == 3 ? 0.04 : 0.0};
  Kbc<L, double>::equilibria(1.02, u, f);
  for (int q = 0; q < L::Q; ++q) f[q] *= 1.0 + d(g);
}

template <class L>
void moments(const double (&f)[L::Q], double& rho, double (&j)[3], double (&P)[6]) {
  rho = 0;
  for (double& v : j) v = 0;
  for (double& v : P) v = 0;
  for (int q = 0; q < L::Q; ++q) {
    const int c[3] = {L::c(q, 0), L::c(q, 1), L::c(q, 2)};
    rho += f[q];
    for (int a = 0; a < 3; ++a) j[a] += c[a] * f[q];
    P[0] += c[0] * c[0] * f[q], P[1] += c[1] * c[1] * f[q], P[2] += c[2] * c[2] * f[q];
    P[3] += c[0] * c[1] * f[q], P[4] += c[0] * c[2] * f[q], P[5] += c[1] * c[2] * f[q];
  }
}

/// A state split as the operator splits it (unforced): f = f^eq + g, g's shear part ds, and the
/// entropic weights rho/f^eq.
template <class L>
struct Split {
  double feq[L::Q], weight[L::Q], g[L::Q], ds[L::Q];
  Split(const double (&f)[L::Q], bool with_trace) {
    double rho, j[3], P[6];
    moments<L>(f, rho, j, P);
    const double u[3] = {j[0] / rho, j[1] / rho, j[2] / rho};
    Kbc<L, double>::equilibria(rho, u, feq, &weight);
    for (int q = 0; q < L::Q; ++q) g[q] = f[q] - feq[q];
    Kbc<L, double>::shear_part(g, with_trace, ds);
  }
  /// f* of the KBC step with the stabiliser `gamma` imposed (the operator's formula).
  void relax_with(double omega, double gamma, double (&out)[L::Q]) const {
    for (int q = 0; q < L::Q; ++q)
      out[q] = feq[q] + g[q] - 0.5 * omega * (2 * ds[q] + gamma * (g[q] - ds[q]));
  }
};

TYPED_TEST(KbcTest, ProductFormEquilibriumHasTheMaxwellianMoments) {
  using L = TypeParam;
  const double rho = 1.03, u[3] = {0.07, -0.04, L::D == 3 ? 0.05 : 0.0};
  double feq[L::Q], inv[L::Q], r, j[3], P[6];
  Kbc<L, double>::equilibria(rho, u, feq, &inv);
  moments<L>(feq, r, j, P);
  EXPECT_NEAR(r, rho, tol);
  for (int a = 0; a < L::D; ++a) EXPECT_NEAR(j[a], rho * u[a], tol);
  const int ab[6][2] = {{0, 0}, {1, 1}, {2, 2}, {0, 1}, {0, 2}, {1, 2}};
  for (int k = 0; k < 6; ++k) {
    const int a = ab[k][0], b = ab[k][1];
    if (a >= L::D || b >= L::D) continue;
    EXPECT_NEAR(P[k], rho * (u[a] * u[b] + (a == b ? 1.0 / 3.0 : 0.0)), tol) << k;
  }
  for (int q = 0; q < L::Q; ++q) {
    EXPECT_GT(feq[q], 0.0);
    EXPECT_NEAR(inv[q] * feq[q], rho, tol) << q;  // the weights are rho/f^eq
  }
}

TYPED_TEST(KbcTest, EquilibriumIsAFixedPoint) {
  using L = TypeParam;
  const double u[3] = {0.08, 0.02, L::D == 3 ? -0.06 : 0.0};
  for (bool trace : {false, true}) {
    double f[L::Q], feq[L::Q];
    Kbc<L, double>::equilibria(0.97, u, feq);
    for (int q = 0; q < L::Q; ++q) f[q] = feq[q];
    const double F[3] = {0, 0, 0};
    Kbc<L, double>{1.7, trace}(f, F);
    for (int q = 0; q < L::Q; ++q) EXPECT_NEAR(f[q], feq[q], tol) << q << " trace " << trace;
  }
}

TYPED_TEST(KbcTest, ConservesMassAndMomentumAndTheForceAddsExactlyF) {
  using L = TypeParam;
  for (bool trace : {false, true})
    for (double omega : {0.6, 1.5, 1.99}) {
      double f[L::Q];
      noisy_state<L>(f, 7, 0.05);
      double r0, j0[3], P[6], r1, j1[3];
      moments<L>(f, r0, j0, P);
      const double F[3] = {1e-4, -2e-4, L::D == 3 ? 3e-4 : 0.0};
      Kbc<L, double>{omega, trace}(f, F);
      moments<L>(f, r1, j1, P);
      EXPECT_NEAR(r1, r0, tol);
      for (int a = 0; a < 3; ++a) EXPECT_NEAR(j1[a], j0[a] + F[a], tol) << a;
    }
}

TYPED_TEST(KbcTest, ShearPartCarriesTheSecondMomentsOnly) {
  using L = TypeParam;
  double g[L::Q];
  std::mt19937 gen(3);
  std::uniform_real_distribution<double> d(-1, 1);
  for (double& v : g) v = d(gen);
  for (bool trace : {false, true}) {
    double s[L::Q], rs, js[3], Ps[6], rg, jg[3], Pg[6];
    Kbc<L, double>::shear_part(g, trace, s);
    moments<L>(s, rs, js, Ps);
    moments<L>(g, rg, jg, Pg);
    EXPECT_NEAR(rs, 0.0, tol);
    for (double v : js) EXPECT_NEAR(v, 0.0, tol);
    const double mean = (Pg[0] + Pg[1] + (L::D == 3 ? Pg[2] : 0.0)) / L::D;
    for (int k = 0; k < 6; ++k) {
      const bool diagonal = k < 3;
      if (diagonal && k >= L::D) continue;
      // Deviatoric: the traceless part of P; with the trace: all of P.
      const double want = diagonal && !trace ? Pg[k] - mean : Pg[k];
      EXPECT_NEAR(Ps[k], want, tol) << k << " trace " << trace;
    }
  }
}

TYPED_TEST(KbcTest, StabiliserMinimisesTheQuadraticEntropy) {
  using L = TypeParam;
  const double omega = 1.9;
  for (bool trace : {false, true}) {
    double f0[L::Q], f[L::Q], out[L::Q];
    noisy_state<L>(f0, 11, 0.05);
    for (int q = 0; q < L::Q; ++q) f[q] = f0[q];
    Kbc<L, double>{omega, trace}(f, {0, 0, 0});
    const Split<L> p(f0, trace);
    auto entropy = [&](double gamma) {
      p.relax_with(omega, gamma, out);
      double H = 0;
      for (int q = 0; q < L::Q; ++q) H += (out[q] - p.feq[q]) * (out[q] - p.feq[q]) * p.weight[q];
      return H;
    };
    double sh = 0, hh = 0;
    for (int q = 0; q < L::Q; ++q) {
      const double dh = p.g[q] - p.ds[q];
      sh += p.ds[q] * dh * p.weight[q];
      hh += dh * dh * p.weight[q];
    }
    const double gamma = Kbc<L, double>::stabiliser(omega, sh, hh);
    EXPECT_GT(std::fabs(gamma - 2.0), 1e-3) << "the noise should move gamma away from BGK's 2";
    const double h = 1e-4, dH = (entropy(gamma + h) - entropy(gamma - h)) / (2 * h);
    EXPECT_LT(std::fabs(dH), 1e-10 * entropy(gamma)) << "trace " << trace;
    EXPECT_LT(entropy(gamma), entropy(2.0));
    // The operator applies this gamma.
    p.relax_with(omega, gamma, out);
    for (int q = 0; q < L::Q; ++q) EXPECT_NEAR(f[q], out[q], tol) << q;
  }
}

TYPED_TEST(KbcTest, GammaTwoIsBgkWithTheProductFormEquilibrium) {
  using L = TypeParam;
  double f[L::Q], out[L::Q];
  noisy_state<L>(f, 5);
  const double omega = 1.3;
  for (bool trace : {false, true}) {
    const Split<L> p(f, trace);
    p.relax_with(omega, 2.0, out);
    for (int q = 0; q < L::Q; ++q) EXPECT_NEAR(out[q], f[q] - omega * (f[q] - p.feq[q]), tol) << q;
  }
}

TEST(KbcStabiliser, FallsBackToBgkAtEquilibriumAndOnNonFiniteQuotients) {
  using K2 = Kbc<D2Q9, double>;
  using K3 = Kbc<D3Q27, double>;
  using K3f = Kbc<D3Q27, float>;
  EXPECT_EQ(K2::stabiliser(1.5, 0.0, 0.0), 2.0);
  EXPECT_EQ(K2::stabiliser(1.5, 1.0, 1e-300 * 1e-300), 2.0);
  EXPECT_EQ(K3f::stabiliser(1.5f, 1e30f, 1e-30f), 2.0f);
  // <ds|dh> = 0: h goes straight to equilibrium (beta gamma = 1).
  EXPECT_DOUBLE_EQ(K3::stabiliser(1.6, 0.0, 1.0), 2.0 / 1.6);
}

}  // namespace
