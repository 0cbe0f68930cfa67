// SPDX-License-Identifier: Apache-2.0
// Velocity sets: weights, isotropy up to the order LBM needs, opposites.
#include <kolibri/lattice/Lattice.hpp>

#include <gtest/gtest.h>

namespace {
using namespace kolibri;

template <class L>
class LatticeTest : public ::testing::Test {};
using Lattices = ::testing::Types<D2Q9, D3Q19, D3Q27>;
TYPED_TEST_SUITE(LatticeTest, Lattices);

// Tolerance: sums of at most 27 exact binary fractions of 1/36, 1/216: a few ulps.
constexpr double tol = 1e-15;

TYPED_TEST(LatticeTest, MomentsOfTheWeights) {
  using L = TypeParam;
  double s0 = 0, s1[3] = {0, 0, 0}, s2[3][3] = {}, s3[3][3][3] = {};
  for (int q = 0; q < L::Q; ++q) {
    s0 += L::w(q);
    for (int a = 0; a < 3; ++a) {
      s1[a] += L::w(q) * L::c(q, a);
      for (int b = 0; b < 3; ++b) {
        s2[a][b] += L::w(q) * L::c(q, a) * L::c(q, b);
        for (int g = 0; g < 3; ++g) s3[a][b][g] += L::w(q) * L::c(q, a) * L::c(q, b) * L::c(q, g);
      }
    }
  }
  EXPECT_NEAR(s0, 1.0, tol);
  for (int a = 0; a < 3; ++a) {
    EXPECT_NEAR(s1[a], 0.0, tol);
    for (int b = 0; b < 3; ++b) {
      const double want = (a == b && a < L::D) ? 1.0 / 3.0 : 0.0;
      EXPECT_NEAR(s2[a][b], want, tol) << a << b;
      for (int g = 0; g < 3; ++g) EXPECT_NEAR(s3[a][b][g], 0.0, tol);
    }
  }
}

TYPED_TEST(LatticeTest, FourthOrderIsotropy) {
  using L = TypeParam;  // sum w c_a c_b c_g c_d = cs^4 (d_ab d_gd + d_ag d_bd + d_ad d_bg)
  for (int a = 0; a < L::D; ++a)
    for (int b = 0; b < L::D; ++b)
      for (int g = 0; g < L::D; ++g)
        for (int d = 0; d < L::D; ++d) {
          double s = 0;
          for (int q = 0; q < L::Q; ++q) s += L::w(q) * L::c(q, a) * L::c(q, b) * L::c(q, g) * L::c(q, d);
          const double want = ((a == b) * (g == d) + (a == g) * (b == d) + (a == d) * (b == g)) / 9.0;
          EXPECT_NEAR(s, want, tol) << a << b << g << d;
        }
}

TYPED_TEST(LatticeTest, OppositesAndDistinctVelocities) {
  using L = TypeParam;
  for (int q = 0; q < L::Q; ++q) {
    const int o = L::opposite(q);
    EXPECT_EQ(L::opposite(o), q);
    EXPECT_EQ(L::w(o), L::w(q));
    for (int d = 0; d < 3; ++d) EXPECT_EQ(L::c(o, d), -L::c(q, d));
    for (int p = 0; p < q; ++p) {
      bool same = true;
      for (int d = 0; d < 3; ++d) same = same && L::c(p, d) == L::c(q, d);
      EXPECT_FALSE(same) << p << " " << q;
    }
  }
  if (L::D == 2) {
    for (int q = 0; q < L::Q; ++q) EXPECT_EQ(L::c(q, 2), 0);
  }
}
}  // namespace
