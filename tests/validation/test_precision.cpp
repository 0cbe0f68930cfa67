// SPDX-License-Identifier: Apache-2.0
// FP32 against FP64 on the same case.
#include <gtest/gtest.h>

#include "Cavity.hpp"

namespace {
using namespace kolibri;

TEST(Precision, Fp32CavityAgreesWithFp64) {
  // FP32 is fit for purpose when its round-off is small against the discretisation error. Here
  // the FP64 run deviates from Ghia by about 1e-2 U (grid error at N = 64); the FP32 run must
  // stay within a tenth of that of the FP64 run everywhere. (Measured: about 1.2e-4 U: the
  // populations ~ w_q carry ~6e-8 relative rounding, the velocity is a small difference of
  // them, and rounding accumulates over the viscous relaxation time.)
  const auto c64 = test::cavity_config(64, 100.0, 0.1, CollisionKind::Bgk, Precision::FP64);
  const auto c32 = test::cavity_config(64, 100.0, 0.1, CollisionKind::Bgk, Precision::FP32);
  const auto a = test::cavity_vs_ghia(c64, 12000);
  const auto b = test::cavity_vs_ghia(c32, 12000);
  double dmax = 0;
  for (std::size_t i = 0; i < a.fields.u.size(); ++i)
    for (int d = 0; d < 2; ++d) dmax = std::max(dmax, std::fabs(a.fields.u[i][d] - b.fields.u[i][d]));
  RecordProperty("max_abs_diff_over_U", std::to_string(dmax / 0.1));
  const double grid_error = std::max(a.max_dev_u, a.max_dev_v);
  RecordProperty("fp64_max_dev_vs_ghia", std::to_string(grid_error));
  EXPECT_LT(dmax / 0.1, 0.1 * grid_error);
  EXPECT_NEAR(b.rms_dev, a.rms_dev, 0.01 * a.rms_dev);  // same agreement with Ghia
}
}  // namespace
