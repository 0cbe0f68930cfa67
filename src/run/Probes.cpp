// SPDX-License-Identifier: Apache-2.0
#include <kolibri/run/Probes.hpp>

#include <cmath>
#include <limits>

namespace kolibri {

PointStencil point_stencil(const std::array<double, 3>& at, const std::array<int, 3>& n,
                           const std::array<bool, 3>& periodic) {
  // Per axis: the two cells whose centres enclose the point and the weight of the upper one.
  int lo[3], hi[3];
  double t[3];
  for (std::size_t d = 0; d < 3; ++d) {
    const double s = at[d] - 0.5;  // in cell-centre coordinates
    const int i = int(std::floor(s));
    t[d] = s - i;
    lo[d] = i, hi[d] = i + 1;
    if (n[d] == 1) {
      lo[d] = hi[d] = 0, t[d] = 0.0;
    } else if (periodic[d]) {
      lo[d] = (lo[d] % n[d] + n[d]) % n[d], hi[d] = (hi[d] % n[d] + n[d]) % n[d];
    } else if (lo[d] < 0) {  // between the face and the first centre: the nearest cell
      lo[d] = hi[d] = 0, t[d] = 0.0;
    } else if (hi[d] > n[d] - 1) {
      lo[d] = hi[d] = n[d] - 1, t[d] = 0.0;
    }
  }
  PointStencil st;
  for (int k = 0; k < 8; ++k) {
    const int b[3] = {k & 1, (k >> 1) & 1, (k >> 2) & 1};
    double w = 1.0;
    std::int64_t c[3];
    for (std::size_t d = 0; d < 3; ++d) {
      w *= b[d] ? t[d] : 1.0 - t[d];
      c[d] = b[d] ? hi[d] : lo[d];
    }
    if (w == 0.0) continue;
    st.cells.push_back(c[0] + std::int64_t(n[0]) * (c[1] + std::int64_t(n[1]) * c[2]));
    st.weights.push_back(w);
  }
  return st;
}

PointValue interpolate(const PointStencil& stencil, const MacroFields& sampled, std::size_t first) {
  PointValue v;
  double total = 0.0;
  for (std::size_t k = 0; k < stencil.cells.size(); ++k) {
    const std::size_t i = first + k;
    if (sampled.solid[i]) continue;
    const double w = stencil.weights[k];
    total += w;
    v.rho += w * sampled.rho[i];
    for (std::size_t d = 0; d < 3; ++d) v.u[d] += w * sampled.u[i][d];
  }
  if (total == 0.0) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    return {nan, {nan, nan, nan}};
  }
  v.rho /= total;
  for (double& u : v.u) u /= total;
  return v;
}

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
