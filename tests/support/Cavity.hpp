// SPDX-License-Identifier: Apache-2.0
// A 2D lid-driven cavity run and its comparison with Ghia et al. on both centrelines.
#pragma once

#include <kolibri/solver/Solver.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

#include "Ghia.hpp"

namespace kolibri::test {

struct CavityResult {
  MacroFields fields;
  std::vector<double> u_line, v_line;  ///< u(y) on x = 1/2, v(x) on y = 1/2 (per cell, / U)
  double max_dev_u = 0, max_dev_v = 0, rms_dev = 0;
};

/// Linear interpolation of a cell-centred profile (cell i at (i + 1/2)/N) with wall values.
inline double sample(const std::vector<double>& p, double s, double lo, double hi) {
  const int n = int(p.size());
  const double t = s * n - 0.5;
  if (t <= 0) return lo + (p.front() - lo) * (s * n / 0.5);
  if (t >= n - 1) return p.back() + (hi - p.back()) * ((t - (n - 1)) / 0.5);
  const int i = int(t);
  return p[std::size_t(i)] + (p[std::size_t(i) + 1] - p[std::size_t(i)]) * (t - i);
}

inline SolverConfig cavity_config(int N, double re, double U, CollisionKind col, Precision prec) {
  SolverConfig c;
  c.lattice = LatticeKind::D2Q9;
  c.collision = col;
  c.precision = prec;
  c.nx = c.ny = N;
  c.tau = 3.0 * U * N / re + 0.5;
  for (int f = 0; f < 4; ++f) c.faces[f].type = FaceType::Wall;
  c.faces[3].type = FaceType::MovingWall;
  c.faces[3].velocity = {U, 0, 0};
  return c;
}

/// Run the cavity and compare with Ghia at Re = 100 (re100 = true) or Re = 1000.
inline CavityResult cavity_vs_ghia(const SolverConfig& c, std::int64_t steps, bool re100 = true) {
  const int N = c.nx;
  const double U = c.faces[3].velocity[0];
  auto s = make_solver(c);
  s->step(steps);
  CavityResult r;
  r.fields = s->macroscopic();
  const auto& f = r.fields;
  // centrelines: N even, so average the two middle columns / rows
  for (int i = 0; i < N; ++i) {
    r.u_line.push_back(0.5 * (f.u[f.index(N / 2 - 1, i, 0)][0] + f.u[f.index(N / 2, i, 0)][0]) / U);
    r.v_line.push_back(0.5 * (f.u[f.index(i, N / 2 - 1, 0)][1] + f.u[f.index(i, N / 2, 0)][1]) / U);
  }
  const Ghia& g = Ghia::get();
  double ss = 0;
  for (std::size_t k = 1; k + 1 < g.y.size(); ++k) {  // interior points (walls are exact)
    const double du = sample(r.u_line, g.y[k], 0.0, 1.0) - (re100 ? g.u_re100[k] : g.u_re1000[k]);
    const double dv = sample(r.v_line, g.x[k], 0.0, 0.0) - (re100 ? g.v_re100[k] : g.v_re1000[k]);
    r.max_dev_u = std::max(r.max_dev_u, std::fabs(du));
    r.max_dev_v = std::max(r.max_dev_v, std::fabs(dv));
    ss += du * du + dv * dv;
  }
  r.rms_dev = std::sqrt(ss / (2.0 * double(g.y.size() - 2)));
  return r;
}

}  // namespace kolibri::test
