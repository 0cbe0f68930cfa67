// SPDX-License-Identifier: Apache-2.0
// The simple cubic array of spheres at the finest grid (validation-long): the dimensionless drag
// within 1% of Zick & Homsy (1982) at L = 64 (radius 15.9 to 23.8 cells), the target,
// for interpolated walls; and the staircase (halfway bounce-back) beside it, recorded.
#include <gtest/gtest.h>

#include <string>

#include "Permeability.hpp"

namespace {
using namespace kolibri;

TEST(SimpleCubicArrayLong, DragWithinOnePercentOfZickHomsyAtL64) {
  for (const auto& ref : test::kZickHomsy) {
    const double K = test::simple_cubic_drag(ref.c, 64, Obstacle::Wall::Interpolated);
    const double staircase = test::simple_cubic_drag(ref.c, 64, Obstacle::Wall::BounceBack);
    RecordProperty("K_c" + std::to_string(ref.c),
                   std::to_string(K) + " (bounce-back " + std::to_string(staircase) + ")");
    EXPECT_NEAR(K / ref.K, 1.0, 0.01) << "c " << ref.c << ": K " << K << ", published " << ref.K;
  }
}

}  // namespace
