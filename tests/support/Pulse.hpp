// SPDX-License-Identifier: Apache-2.0
// The sound pulse that measures what an open face sends back (test_outflow.cpp on the dense box,
// test_refine_flows.cpp on a refined grid), and the faces it leaves through.
#pragma once

#include <kolibri/solver/Solver.hpp>

#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

namespace kolibri::test {

/// A face of `type` on `rule` with `relaxation` (characteristic outlets; < 0: the default).
inline FaceBC face_of(FaceType type, PressureRule rule = PressureRule::Auto,
                      double relaxation = -1.0) {
  FaceBC f;
  f.type = type;
  f.pressure_rule = rule;
  f.relaxation = relaxation;
  return f;
}

/// A Gaussian density pulse (amplitude A = 1e-4, width 6 cells) across the middle of c's box
/// along x, at rest, set into s: it splits into two of A/2 that travel to the faces x_min and
/// x_max, and what they send back meets in the middle after twice the travel time, where a face
/// that reflects the amplitude R gives a peak of R A. s steps half the travel (`incident`:
/// peak() / A then, about 1/2) and on to twice the travel; returns peak() / A there. `peak()`
/// is the largest |rho - 1| over the cells, as the caller reads them.
template <class Peak>
double pulse_reflection(Solver& s, const SolverConfig& c, Peak peak, double& incident) {
  const double A = 1e-4, sigma = 6.0, x0 = 0.5 * c.nx;
  std::vector<double> rho(std::size_t(c.cells()));
  std::vector<std::array<double, 3>> u(rho.size(), {0.0, 0.0, 0.0});
  for (int z = 0; z < c.nz; ++z)
    for (int y = 0; y < c.ny; ++y)
      for (int x = 0; x < c.nx; ++x) {
        const double d = (x + 0.5 - x0) / sigma;
        rho[std::size_t(x + c.nx * (y + c.ny * z))] = 1.0 + A * std::exp(-0.5 * d * d);
      }
  s.initialize(rho, u);
  const double cs = 1.0 / std::sqrt(3.0);
  const auto travel = std::int64_t(std::lround(x0 / cs));  // from the middle to a face
  s.step(travel / 2);
  incident = peak() / A;
  s.step(2 * travel - travel / 2);
  return peak() / A;
}

}  // namespace kolibri::test
