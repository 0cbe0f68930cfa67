// SPDX-License-Identifier: Apache-2.0
#include <kolibri/geometry/MeshShape.hpp>
#include <kolibri/geometry/SolidImage.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <utility>

namespace kolibri {

void check_closed(const TriangleMesh& mesh, const std::string& file) {
  struct Uses {
    int forward = 0, backward = 0;  // along the edge from its smaller end point, and back
  };
  std::map<std::pair<Vec3, Vec3>, Uses> edges;
  for (const auto& t : mesh.triangles)
    for (int k = 0; k < 3; ++k) {
      const Vec3& a = mesh.vertices[std::size_t(t[std::size_t(k)])];
      const Vec3& b = mesh.vertices[std::size_t(t[std::size_t((k + 1) % 3)])];
      if (a < b)
        ++edges[{a, b}].forward;
      else
        ++edges[{b, a}].backward;
    }
  std::size_t bad = 0;
  const std::pair<const std::pair<Vec3, Vec3>, Uses>* first = nullptr;
  for (const auto& e : edges)
    if (e.second.forward != 1 || e.second.backward != 1) {
      if (bad++ == 0) first = &e;
    }
  if (!first) return;
  const Vec3 &a = first->first.first, &b = first->first.second;
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "%s: the mesh is not closed: %zu of its %zu edges do not border exactly two "
                "triangles running along them in opposite directions; the first, from (%.9g, %.9g, "
                "%.9g) to (%.9g, %.9g, %.9g) in the file's coordinates, borders %d one way and %d "
                "the other (a hole, a seam whose vertices do not coincide, or a flipped triangle)",
                file.c_str(), bad, edges.size(), a[0], a[1], a[2], b[0], b[1], b[2],
                first->second.forward, first->second.backward);
  throw GeometryError("file", buf);
}

std::vector<std::uint8_t> voxelize(const TriangleMesh& mesh, const std::array<int, 3>& n) {
  // Per row of cell centres: where the ray crosses a triangle, and which way (+1 leaving, -1
  // entering, for outward-facing triangles).
  std::vector<std::vector<std::pair<double, int>>> crossings(std::size_t(n[1]) * std::size_t(n[2]));
  for (const auto& t : mesh.triangles) {
    double lo[2] = {1e300, 1e300}, hi[2] = {-1e300, -1e300};  // the projection's box
    bool finite = true;
    for (const int k : t) {
      const Vec3& v = mesh.vertices[std::size_t(k)];
      finite = finite && std::isfinite(v[0]) && std::isfinite(v[1]) && std::isfinite(v[2]);
      for (int d = 0; d < 2; ++d) {
        lo[d] = std::min(lo[d], v[std::size_t(d + 1)]);
        hi[d] = std::max(hi[d], v[std::size_t(d + 1)]);
      }
    }
    // The rows whose centres the triangle's box holds, clamped in floating point first (a vertex
    // far outside the box must not overflow an int; a triangle that is not finite crosses none).
    if (!finite) continue;
    auto first = [](double at, int size) {
      return int(std::clamp(std::ceil(at - 0.5), 0.0, double(size)));
    };
    auto last = [](double at, int size) {
      return int(std::clamp(std::floor(at - 0.5), -1.0, double(size) - 1));
    };
    const int y0 = first(lo[0], n[1]), y1 = last(hi[0], n[1]);
    const int z0 = first(lo[1], n[2]), z1 = last(hi[1], n[2]);
    for (int z = z0; z <= z1; ++z)
      for (int y = y0; y <= y1; ++y)
        if (const auto hit = ray_crossing(mesh, t, y + 0.5, z + 0.5))
          crossings[std::size_t(y) + std::size_t(n[1]) * std::size_t(z)].push_back(*hit);
  }
  const std::size_t cells = std::size_t(n[0]) * std::size_t(n[1]) * std::size_t(n[2]);
  std::vector<std::uint8_t> solid(cells, 0);
  for (std::size_t row = 0; row < crossings.size(); ++row) {
    auto& xs = crossings[row];
    std::sort(xs.begin(), xs.end());
    std::size_t passed = 0;  // crossings before the cell centre
    int winding = 0;         // their signed sum: nonzero inside (overlapping shells: 2, ...)
    for (int x = 0; x < n[0]; ++x) {
      while (passed < xs.size() && xs[passed].first < x + 0.5) winding += xs[passed++].second;
      solid[std::size_t(x) + std::size_t(n[0]) * row] = winding != 0 ? 1 : 0;
    }
  }
  return solid;
}

}  // namespace kolibri
