// SPDX-License-Identifier: Apache-2.0
// FP32 against FP64 on the same case.
#include <gtest/gtest.h>

#include "Cavity.hpp"

namespace {
using namespace kolibri;

TEST(Precision, Fp32CavityAgreesWithFp64) {
  // Populations near w_q ~ 0.1 stored in FP32 carry ~1e-8 absolute rounding per step; the steady
  // state forgets old errors over the viscous time, so the velocity differs by O(1e-6) of U,
  // far below the 1e-2 discretisation error measured against Ghia. Bound: 1e-4 U.
  const auto c64 = test::cavity_config(64, 100.0, 0.1, CollisionKind::Bgk, Precision::FP64);
  const auto c32 = test::cavity_config(64, 100.0, 0.1, CollisionKind::Bgk, Precision::FP32);
  const auto a = test::cavity_vs_ghia(c64, 12000);
  const auto b = test::cavity_vs_ghia(c32, 12000);
  double dmax = 0;
  for (std::size_t i = 0; i < a.fields.u.size(); ++i)
    for (int d = 0; d < 2; ++d) dmax = std::max(dmax, std::fabs(a.fields.u[i][d] - b.fields.u[i][d]));
  RecordProperty("max_abs_diff_over_U", std::to_string(dmax / 0.1));
  EXPECT_LT(dmax / 0.1, 1e-4);
  EXPECT_NEAR(b.rms_dev, a.rms_dev, 1e-4);  // same agreement with Ghia
}
}  // namespace
