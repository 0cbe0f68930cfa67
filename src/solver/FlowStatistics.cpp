// SPDX-License-Identifier: Apache-2.0
#include <kolibri/solver/FlowStatistics.hpp>
#include <kolibri/solver/Solver.hpp>

namespace kolibri {

FlowStatistics flow_statistics(const MacroFields& f, const std::array<bool, 3>& periodic) {
  const int n[3] = {f.nx, f.ny, f.nz};
  // The velocity of cell c moved by one along axis d (wrapping where periodic), or the cell
  // itself where the move leaves a bounded domain; `solid` cells are at rest.
  auto velocity = [&](int x, int y, int z) -> std::array<double, 3> {
    const std::size_t i = f.index(x, y, z);
    return f.solid[i] ? std::array<double, 3>{0.0, 0.0, 0.0} : f.u[i];
  };
  auto shifted = [&](const int(&c)[3], int d, int by, int& step) {
    int p[3] = {c[0], c[1], c[2]};
    p[d] += by;
    step = 1;
    if (p[d] < 0 || p[d] >= n[d]) {
      if (periodic[std::size_t(d)])
        p[d] = (p[d] + n[d]) % n[d];
      else
        p[d] = c[d], step = 0;  // one-sided difference at the face
    }
    return velocity(p[0], p[1], p[2]);
  };
  double energy = 0.0, enstrophy = 0.0;
  std::int64_t fluid = 0;
  for (int z = 0; z < n[2]; ++z)
    for (int y = 0; y < n[1]; ++y)
      for (int x = 0; x < n[0]; ++x) {
        const std::size_t i = f.index(x, y, z);
        if (f.solid[i]) continue;
        ++fluid;
        const auto& u = f.u[i];
        energy += 0.5 * f.rho[i] * (u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
        // grad[d][e] = d u_e / d x_d
        double grad[3][3] = {};
        const int c[3] = {x, y, z};
        for (int d = 0; d < 3; ++d) {
          if (n[d] == 1) continue;
          int up = 0, down = 0;
          const auto a = shifted(c, d, 1, up), b = shifted(c, d, -1, down);
          const int span = up + down;
          if (span == 0) continue;
          for (std::size_t e = 0; e < 3; ++e) grad[d][e] = (a[e] - b[e]) / span;
        }
        const double wx = grad[1][2] - grad[2][1], wy = grad[2][0] - grad[0][2],
                     wz = grad[0][1] - grad[1][0];
        enstrophy += 0.5 * (wx * wx + wy * wy + wz * wz);
      }
  if (fluid == 0) return {};
  return {energy / double(fluid), enstrophy / double(fluid)};
}

}  // namespace kolibri
