// SPDX-License-Identifier: Apache-2.0
// Permeability of a simple cubic array of spheres (one sphere of radius a in a periodic cube of L
// cells) in Stokes flow, against Zick & Homsy (1982, Table 2): the dimensionless drag
// K = F / (6 pi mu a U), F = G L^3 the force on one periodic cell, U the superficial velocity.
// A body force f on the fluid cells drives the same flow as a pressure gradient G = f, so
// K = f L^3 / (6 pi nu a U) with U = momentum / L^3 (docs/validation.md, "Permeability").
#include <kolibri/solver/Solver.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "Helpers.hpp"
#include "Permeability.hpp"

namespace {
using namespace kolibri;

// c = 0.064, 0.125, 0.216 (a/L = 0.248, 0.310, 0.372). At L = 32 the radius is 7.9 to 11.9
// cells, the narrowest gap 8 cells. The target, 1%, holds for the finest grid (the
// validation-long test, L = 64); at half that resolution the second-order walls' error is
// allowed four times that, 4% (set before the first run). Halving the cell size shrinks the
// error at second order (published order 2, asserted > 1.5 between L = 16 and 32 at c = 0.125:
// the error's size also moves with where the sphere cuts the links).
TEST(SimpleCubicArray, DragOfInterpolatedSpheresNearZickHomsy) {
  double error32[3];
  for (std::size_t i = 0; i < test::kZickHomsy.size(); ++i) {
    const auto& ref = test::kZickHomsy[i];
    const double K = test::simple_cubic_drag(ref.c, 32, Obstacle::Wall::Interpolated);
    error32[i] = std::fabs(K / ref.K - 1);
    RecordProperty("K_c" + std::to_string(ref.c), std::to_string(K));
    EXPECT_NEAR(K / ref.K, 1.0, 0.04) << "c " << ref.c << ": K " << K << ", published " << ref.K;
  }
  const auto& ref = test::kZickHomsy[1];
  const double error16 =
      std::fabs(test::simple_cubic_drag(ref.c, 16, Obstacle::Wall::Interpolated) / ref.K - 1);
  RecordProperty("relative_errors_L16_L32",
                 std::to_string(error16) + " " + std::to_string(error32[1]));
  EXPECT_GT(std::log2(error16 / error32[1]), 1.5) << error16 << " " << error32[1];
}

}  // namespace
