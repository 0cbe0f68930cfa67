// SPDX-License-Identifier: Apache-2.0
// FP32 against FP64 on the same case.
#include <gtest/gtest.h>

#include "Cavity.hpp"
#include "Flows.hpp"
#include "Helpers.hpp"

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

TEST(Precision, Fp16StorageCostOnValidationCases) {
  // FP32 arithmetic with FP16 storage of f_q - w_q (scaled by 2^14): half the bytes. Its cost,
  // measured against FP32 storage on three validation cases (numbers in docs/validation.md):
  // 1. the cavity keeps its agreement with Ghia (within 10% of the FP32 RMS deviation);
  auto c32 = test::cavity_config(64, 100.0, 0.1, CollisionKind::Bgk, Precision::FP32);
  auto c16 = c32;
  c16.storage = StorageKind::FP16;
  const auto a = test::cavity_vs_ghia(c32, 12000), b = test::cavity_vs_ghia(c16, 12000);
  RecordProperty("cavity_rms_fp32", std::to_string(a.rms_dev));
  RecordProperty("cavity_rms_fp16", std::to_string(b.rms_dev));
  EXPECT_LT(b.rms_dev, 1.1 * a.rms_dev);
  // 2. the Taylor-Green viscosity stays within 0.1%;
  SolverConfig t;
  t.nx = t.ny = 64;
  t.tau = 0.65;
  t.precision = Precision::FP32;
  t.storage = StorageKind::FP16;
  const double nu_err = std::fabs(test::tgv_viscosity(t) / t.viscosity() - 1);
  RecordProperty("tgv_nu_rel_error_fp16", std::to_string(nu_err));
  EXPECT_LT(nu_err, 1e-3);
  // 3. weak body forcing is where FP16 fails: per-step force increments (~1e-6) fall below the
  // FP16 resolution of f_q - w_q, and a force-driven Poiseuille profile at H = 32 is off by ~9%
  // (FP32: 5e-4). Asserted as a bound so a regression shows; documented as a limitation.
  auto p = test::plates(LatticeKind::D2Q9, 32, 0.9, CollisionKind::Bgk);
  p.precision = Precision::FP32;
  p.storage = StorageKind::FP16;
  const double err = test::plates_error(p, 0.02);
  RecordProperty("poiseuille_rel_l2_fp16", std::to_string(err));
  EXPECT_LT(err, 0.15);
}
}  // namespace
