// SPDX-License-Identifier: Apache-2.0
// Grid refinement, long (label validation-long): circular Couette flow between interpolated
// walls across a level interface converges at second order.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "Annulus.hpp"

namespace {
using namespace kolibri;

// The annulus with the square around its inner cylinder on level 1 (test::refined_annulus, the
// same shape at both resolutions): the velocity's error from a gap of 16 to 32 level-0 cells
// falls at the published order of the interpolated walls (Bouzidi, Firdaouss & Lallemand 2001:
// 2; the dense annulus's band, above 1.8), and each torque stays within the dense band of 1%.
// About a minute on the development machine.
TEST(RefinedFlowsLong, CouetteBetweenInterpolatedWallsOnTwoLevelsConvergesAtSecondOrder) {
  const test::RefinedAnnulus a = test::refined_annulus(16), b = test::refined_annulus(32);
  const double order = test::order(a.error, b.error, 16, 32);
  RecordProperty("errors", std::to_string(a.error) + " " + std::to_string(b.error));
  RecordProperty("order", std::to_string(order));
  std::printf("refined annulus: errors %.4e %.4e, order %.3f; torques at 32 %.5f %.5f\n", a.error,
              b.error, order, b.inner_torque, b.outer_torque);
  EXPECT_GT(order, 1.8) << a.error << " " << b.error;
  EXPECT_NEAR(b.inner_torque, 1.0, 0.01);
  EXPECT_NEAR(b.outer_torque, 1.0, 0.01);
}

}  // namespace
