// SPDX-License-Identifier: Apache-2.0
// Measurements against analytic flows, shared by the validation tests: the force-driven channel
// between plates and the decaying Taylor-Green vortex. Each takes a configuration whose operator,
// lattice, precision and storage the caller has chosen.
#pragma once

#include <kolibri/solver/Solver.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace kolibri::test {

/// \brief Mid-channel of plates along x (2D, H cells high, nx long) driven by a pressure
/// difference: the pressure gradient G from the centre line's densities two cells apart, the peak
/// of u_x across the channel, the Poiseuille parabola's peak for G, umax = G H^2 / (8 nu), and its
/// value at the cell centre next to H/2, umax (1 - 1/H^2).
struct MidChannel {
  double gradient = 0.0, peak = 0.0, umax = 0.0, parabola = 0.0;
};
inline MidChannel mid_channel(const MacroFields& m, int nx, int H, double nu) {
  MidChannel c;
  c.gradient = (m.rho[m.index(nx / 2 - 1, H / 2, 0)] - m.rho[m.index(nx / 2 + 1, H / 2, 0)]) / 6.0;
  for (int y = 0; y < H; ++y) c.peak = std::max(c.peak, m.u[m.index(nx / 2, y, 0)][0]);
  c.umax = c.gradient * H * H / (8.0 * nu);
  c.parabola = c.umax * (1 - 1.0 / (H * H));
  return c;
}

/// Relative L2 error of force-driven Poiseuille flow between the y walls of `c` (periodic in x,
/// z), against u(y) = F/(2 nu) y (H - y) with the walls half a cell outside; F is set so that the
/// centre speed is `umax`, and the run lasts until the slowest mode has decayed by e^-34.
inline double plates_error(SolverConfig c, double umax) {
  const int H = c.ny;
  const double nu = c.viscosity();
  const double F = 8.0 * nu * umax / (H * double(H));
  c.force = {F, 0, 0};
  auto s = make_solver(c);
  s->step(std::int64_t(std::ceil(3.5 * H * H / nu)));
  const auto f = s->macroscopic();
  double num = 0, den = 0;
  for (int y = 0; y < H; ++y) {
    const double Y = y + 0.5, exact = F / (2 * nu) * Y * (H - Y);
    const double diff = f.u[f.index(0, y, 0)][0] - exact;
    num += diff * diff, den += exact * exact;
  }
  return std::sqrt(num / den);
}

/// Viscosity measured from the kinetic-energy decay of a Taylor-Green vortex (amplitude 0.01) on
/// the periodic box of `c`: E(t) = E0 exp(-2 nu k^2 t), fitted over one e-folding time after the
/// initial acoustic transient.
inline double tgv_viscosity(SolverConfig c) {
  c.initial.kind = InitialCondition::Kind::TaylorGreen;
  c.initial.velocity = {0.01, 0, 0};
  auto s = make_solver(c);
  auto energy = [&] {
    const auto f = s->macroscopic();
    double e = 0;
    for (const auto& u : f.u) e += u[0] * u[0] + u[1] * u[1];
    return e;
  };
  const double k2 = std::pow(2 * M_PI / c.nx, 2) + std::pow(2 * M_PI / c.ny, 2);
  const auto t_decay = std::int64_t(0.5 / (c.viscosity() * k2));  // E drops by e^-1 over t_decay
  s->step(t_decay / 4);
  const double e0 = energy();
  s->step(t_decay);
  return -std::log(energy() / e0) / (2.0 * k2 * double(t_decay));
}

}  // namespace kolibri::test
