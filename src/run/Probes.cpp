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
  if (stencil.cells.size() == 1)  // a cell probe: its values, solid or not
    return {sampled.rho[first], sampled.u[first]};
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

}  // namespace kolibri
