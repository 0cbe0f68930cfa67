// SPDX-License-Identifier: Apache-2.0
// Surface samples of 2D curves; block + Morton ordering of samples.
#include <kolibri/geometry/Surface.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <numeric>
#include <stdexcept>
#include <string>
#include <utility>

namespace kolibri {

namespace {

using std::numbers::pi;

void require_spacing(double spacing, const char* fn) {
  if (!(std::isfinite(spacing) && spacing > 0))
    throw std::invalid_argument(std::string(fn) + ": spacing must be positive and finite, got " +
                                std::to_string(spacing));
}

}  // namespace

SurfaceSamples circle_samples(double cx, double cy, double radius, double spacing) {
  require_spacing(spacing, "circle_samples");
  if (!(std::isfinite(radius) && radius > 0))
    throw std::invalid_argument("circle_samples: radius must be positive and finite, got " + std::to_string(radius));
  const double length = 2 * pi * radius;
  const auto n = static_cast<std::size_t>(std::max(3.0, std::ceil(length / spacing)));
  SurfaceSamples s;
  s.area = length;
  s.position.reserve(n);
  for (std::size_t k = 0; k < n; ++k) {
    const double t = 2 * pi * double(k) / double(n);
    s.position.push_back({cx + radius * std::cos(t), cy + radius * std::sin(t), 0.0});
  }
  return s;
}

SurfaceSamples rectangle_samples(double x0, double y0, double x1, double y1, double spacing) {
  require_spacing(spacing, "rectangle_samples");
  const double xa = std::min(x0, x1), xb = std::max(x0, x1), ya = std::min(y0, y1), yb = std::max(y0, y1);
  if (!(std::isfinite(xa) && std::isfinite(xb) && std::isfinite(ya) && std::isfinite(yb)) || !(xb > xa) || !(yb > ya))
    throw std::invalid_argument("rectangle_samples: the rectangle needs finite corners and positive width and height");
  // Counter-clockwise from (xa, ya); each side from its first corner, without its last.
  const std::array<Vec3, 5> corner{Vec3{xa, ya, 0}, Vec3{xb, ya, 0}, Vec3{xb, yb, 0}, Vec3{xa, yb, 0}, Vec3{xa, ya, 0}};
  SurfaceSamples s;
  s.area = 2 * ((xb - xa) + (yb - ya));
  for (int side = 0; side < 4; ++side) {
    const Vec3 &a = corner[side], &b = corner[side + 1];
    const double length = std::abs(b[0] - a[0]) + std::abs(b[1] - a[1]);
    const auto n = static_cast<std::size_t>(std::ceil(length / spacing));
    for (std::size_t k = 0; k < n; ++k) {
      const double t = double(k) / double(n);
      s.position.push_back({a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1]), 0.0});
    }
  }
  return s;
}

std::vector<std::size_t> block_morton_order(const std::vector<Vec3>& points, int block) {
  if (block < 1) throw std::invalid_argument("block_morton_order: block must be >= 1, got " + std::to_string(block));
  std::vector<std::size_t> order(points.size());
  std::iota(order.begin(), order.end(), std::size_t(0));
  if (points.empty()) return order;
  Vec3 lo{}, hi{};
  for (int d = 0; d < 3; ++d) {
    lo[d] = std::numeric_limits<double>::infinity();
    hi[d] = -lo[d];
  }
  for (const auto& p : points)
    for (int d = 0; d < 3; ++d) {
      if (!std::isfinite(p[d])) throw std::invalid_argument("block_morton_order: a point has a non-finite coordinate");
      lo[d] = std::min(lo[d], p[d]);
      hi[d] = std::max(hi[d], p[d]);
    }
  const double edge = block;
  std::array<double, 3> origin{};
  std::array<std::uint64_t, 3> blocks{};
  for (int d = 0; d < 3; ++d) {
    origin[d] = std::floor(lo[d]);
    const double count = std::floor((hi[d] - origin[d]) / edge) + 1;
    if (count > double(1 << 20))
      throw std::invalid_argument("block_morton_order: more than 2^20 blocks along an axis; use a larger block");
    blocks[d] = static_cast<std::uint64_t>(count);
  }
  // Key: block index (x fastest) in the high bits, the 30-bit Morton code in the low bits.
  constexpr int bits = 10;
  constexpr std::uint64_t top = (1u << bits) - 1;
  std::vector<std::pair<std::uint64_t, std::uint32_t>> key(points.size());
  for (std::size_t i = 0; i < points.size(); ++i) {
    std::array<std::uint64_t, 3> b{};
    std::uint32_t morton = 0;
    std::array<std::uint64_t, 3> q{};
    for (int d = 0; d < 3; ++d) {
      const double x = (points[i][d] - origin[d]) / edge;
      b[d] = std::min(blocks[d] - 1, static_cast<std::uint64_t>(std::max(0.0, std::floor(x))));
      const double local = x - double(b[d]);  // in [0, 1)
      q[d] = std::min(top, static_cast<std::uint64_t>(std::max(0.0, local * double(top + 1))));
    }
    for (int k = 0; k < bits; ++k)
      for (int d = 0; d < 3; ++d) morton |= static_cast<std::uint32_t>(((q[d] >> k) & 1u) << (3 * k + d));
    key[i] = {b[0] + blocks[0] * (b[1] + blocks[1] * b[2]), morton};
  }
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return key[a] < key[b]; });
  return order;
}

void apply_order(SurfaceSamples& samples, const std::vector<std::size_t>& order) {
  const std::size_t n = samples.position.size();
  if (order.size() != n)
    throw std::invalid_argument("apply_order: the order has " + std::to_string(order.size()) + " entries for " +
                                std::to_string(n) + " samples");
  std::vector<char> seen(n, 0);
  std::vector<Vec3> reordered(n);
  for (std::size_t i = 0; i < n; ++i) {
    if (order[i] >= n || seen[order[i]])
      throw std::invalid_argument("apply_order: the order is not a permutation of the sample indices");
    seen[order[i]] = 1;
    reordered[i] = samples.position[order[i]];
  }
  samples.position = std::move(reordered);
}

}  // namespace kolibri
