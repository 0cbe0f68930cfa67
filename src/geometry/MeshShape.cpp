// SPDX-License-Identifier: Apache-2.0
#include <kolibri/geometry/MeshShape.hpp>
#include <kolibri/geometry/SolidImage.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace kolibri {

namespace {
/// A point of the y-z plane (the rays run along x).
struct Planar {
  double u, v;
};
bool before(const Planar& a, const Planar& b) { return a.u < b.u || (a.u == b.u && a.v < b.v); }
/// Twice the signed area of (p, q, r).
double orient(const Planar& p, const Planar& q, const Planar& r) {
  return (q.u - p.u) * (r.v - p.v) - (q.v - p.v) * (r.u - p.u);
}
/// orient(p, q, r) evaluated from the edge's smaller end point, whichever way the triangle runs
/// along it: the two triangles of a shared edge get exactly opposite values.
double edge_function(const Planar& p, const Planar& q, const Planar& r) {
  return before(p, q) ? orient(p, q, r) : -orient(q, p, r);
}
Vec3 minus(const Vec3& a, const Vec3& b) { return {a[0] - b[0], a[1] - b[1], a[2] - b[2]}; }
Vec3 cross(const Vec3& a, const Vec3& b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}
double dot(const Vec3& a, const Vec3& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

/// True where triangle (a, b, c) reaches the unit cube about `centre` (the separating axis test
/// of Akenine-Moller 2001; the three axes of the box are the caller's bounding-box loop): no
/// separation along the triangle's normal nor along an edge crossed with an axis. Long thin
/// triangles (the usual in CAD exports) then fill only the cells they pass through.
bool reaches_cube(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& centre) {
  const Vec3 v[3] = {minus(a, centre), minus(b, centre), minus(c, centre)};
  const Vec3 normal = cross(minus(v[1], v[0]), minus(v[2], v[0]));
  constexpr double slack = 1.0 + 1e-9;  // a triangle on a cube's face reaches both cubes
  if (std::fabs(dot(normal, v[0])) >
      0.5 * slack * (std::fabs(normal[0]) + std::fabs(normal[1]) + std::fabs(normal[2])))
    return false;
  for (int e = 0; e < 3; ++e) {
    const Vec3 edge = minus(v[(e + 1) % 3], v[e]);
    for (int k = 0; k < 3; ++k) {
      Vec3 unit{0, 0, 0};
      unit[std::size_t(k)] = 1.0;
      const Vec3 axis = cross(edge, unit);
      const double p0 = dot(axis, v[0]), p1 = dot(axis, v[1]), p2 = dot(axis, v[2]);
      const double r = 0.5 * slack * (std::fabs(axis[0]) + std::fabs(axis[1]) + std::fabs(axis[2]));
      if (std::min({p0, p1, p2}) > r || std::max({p0, p1, p2}) < -r) return false;
    }
  }
  return true;
}
}  // namespace

std::optional<std::pair<double, int>> ray_crossing(const TriangleMesh& mesh,
                                                   const std::array<int, 3>& t, double y,
                                                   double z) {
  const Vec3* v[3] = {&mesh.vertices[std::size_t(t[0])], &mesh.vertices[std::size_t(t[1])],
                      &mesh.vertices[std::size_t(t[2])]};
  const Planar p[3] = {
      {(*v[0])[1], (*v[0])[2]}, {(*v[1])[1], (*v[1])[2]}, {(*v[2])[1], (*v[2])[2]}};
  const double area = edge_function(p[0], p[1], p[2]);
  if (area == 0.0) return std::nullopt;  // seen edge-on along x: its neighbours hold the crossing
  const double sign = area > 0 ? 1.0 : -1.0;
  const Planar c{y, z};
  double w[3];  // w[k]: the edge opposite vertex k, positive inside
  for (int k = 0; k < 3; ++k) {
    const Planar &a = p[(k + 1) % 3], &b = p[(k + 2) % 3];
    w[k] = sign * edge_function(a, b, c);
    if (w[k] < 0) return std::nullopt;
    if (w[k] == 0) {  // on the edge: one of its two triangles takes the point
      const double du = sign * (b.u - a.u), dv = sign * (b.v - a.v);
      if (!(dv > 0 || (dv == 0 && du < 0))) return std::nullopt;
    }
  }
  const double sum = w[0] + w[1] + w[2];
  const double x = (w[0] * (*v[0])[0] + w[1] * (*v[1])[0] + w[2] * (*v[2])[0]) / sum;
  return std::make_pair(x, area > 0 ? 1 : -1);
}

MeshShape::MeshShape(TriangleMesh placed) : m_mesh(std::move(placed)), m_bounds(m_mesh.bounds()) {
  std::array<int, 3> extent{};
  for (int d = 0; d < 3; ++d) {
    const double lo = m_bounds[0][std::size_t(d)], hi = m_bounds[1][std::size_t(d)];
    if (!std::isfinite(lo) || !std::isfinite(hi) || hi - lo > 1e7 || std::fabs(lo) > 1e9)
      throw std::invalid_argument(
          "mesh shape: the placed mesh must be finite and at most 1e7 cells across");
    m_origin[std::size_t(d)] = int(std::floor(lo));
    extent[std::size_t(d)] = int(std::floor(hi)) - m_origin[std::size_t(d)] + 1;
  }
  m_columns = bin(m_mesh, m_origin, {1, extent[1], extent[2]}, true);
  m_cells = bin(m_mesh, m_origin, extent, false);
}

int MeshShape::bin_of(double v, int d) const {
  const double i = std::floor(v) - m_origin[std::size_t(d)];
  return i >= 0 && i < m_cells.extent[std::size_t(d)] ? int(i) : -1;
}

MeshShape::Bins MeshShape::bin(const TriangleMesh& mesh, const std::array<int, 3>& origin,
                               const std::array<int, 3>& extent, bool along_x) {
  // (bin, triangle) pairs, then counted into `start`. A triangle goes into the columns its
  // bounding box reaches, and into the unit cells it reaches (reaches_cube).
  std::vector<std::pair<std::int64_t, int>> pairs;
  for (std::size_t t = 0; t < mesh.triangles.size(); ++t) {
    const auto& tri = mesh.triangles[t];
    const Vec3 &a = mesh.vertices[std::size_t(tri[0])], &b = mesh.vertices[std::size_t(tri[1])],
               &c = mesh.vertices[std::size_t(tri[2])];
    int lo[3], hi[3];
    for (int d = 0; d < 3; ++d) {
      const std::size_t k = std::size_t(d);
      lo[d] = along_x && d == 0 ? 0 : int(std::floor(std::min({a[k], b[k], c[k]}))) - origin[k];
      hi[d] = along_x && d == 0 ? 0 : int(std::floor(std::max({a[k], b[k], c[k]}))) - origin[k];
    }
    for (int z = lo[2]; z <= hi[2]; ++z)
      for (int y = lo[1]; y <= hi[1]; ++y)
        for (int x = lo[0]; x <= hi[0]; ++x) {
          const Vec3 centre{origin[0] + x + 0.5, origin[1] + y + 0.5, origin[2] + z + 0.5};
          if (!along_x && !reaches_cube(a, b, c, centre)) continue;
          pairs.emplace_back(x + std::int64_t(extent[0]) * (y + std::int64_t(extent[1]) * z),
                             int(t));
        }
  }
  std::sort(pairs.begin(), pairs.end());
  Bins out;
  out.extent = extent;
  const std::int64_t bins = std::int64_t(extent[0]) * extent[1] * extent[2];
  out.start.assign(std::size_t(bins + 1), 0);
  for (const auto& p : pairs) ++out.start[std::size_t(p.first + 1)];
  for (std::int64_t i = 0; i < bins; ++i)
    out.start[std::size_t(i + 1)] += out.start[std::size_t(i)];
  out.items.reserve(pairs.size());
  for (const auto& p : pairs) out.items.push_back(p.second);
  return out;
}

bool MeshShape::inside(const Vec3& p) const {
  const int y = bin_of(p[1], 1), z = bin_of(p[2], 2);
  if (y < 0 || z < 0 || !(p[0] >= m_bounds[0][0])) return false;
  const std::int64_t column = y + std::int64_t(m_columns.extent[1]) * z;
  int winding = 0;  // the crossings before p: nonzero inside
  for (const int* t = m_columns.begin(column); t != m_columns.end(column); ++t)
    if (const auto hit = ray_crossing(m_mesh, m_mesh.triangles[std::size_t(*t)], p[1], p[2]))
      if (hit->first < p[0]) winding += hit->second;
  return winding != 0;
}

std::optional<double> MeshShape::first_crossing(const Vec3& a, const Vec3& b) const {
  const Vec3 d = minus(b, a);
  int lo[3], hi[3];
  for (int k = 0; k < 3; ++k) {
    const std::size_t s = std::size_t(k);
    lo[k] = std::max(0, int(std::floor(std::min(a[s], b[s]))) - m_origin[s]);
    hi[k] = std::min(m_cells.extent[s] - 1, int(std::floor(std::max(a[s], b[s]))) - m_origin[s]);
  }
  std::optional<double> first;
  for (int z = lo[2]; z <= hi[2]; ++z)
    for (int y = lo[1]; y <= hi[1]; ++y)
      for (int x = lo[0]; x <= hi[0]; ++x) {
        const std::int64_t cell =
            x + std::int64_t(m_cells.extent[0]) * (y + std::int64_t(m_cells.extent[1]) * z);
        for (const int* t = m_cells.begin(cell); t != m_cells.end(cell); ++t) {
          // Moller & Trumbore (1997): a + s d = v0 + u e1 + v e2.
          const auto& tri = m_mesh.triangles[std::size_t(*t)];
          const Vec3& v0 = m_mesh.vertices[std::size_t(tri[0])];
          const Vec3 e1 = minus(m_mesh.vertices[std::size_t(tri[1])], v0);
          const Vec3 e2 = minus(m_mesh.vertices[std::size_t(tri[2])], v0);
          const Vec3 pv = cross(d, e2);
          const double det = dot(e1, pv);
          if (det == 0.0) continue;  // the segment runs along the triangle's plane
          const Vec3 tv = minus(a, v0);
          const double u = dot(tv, pv) / det;
          if (u < 0.0 || u > 1.0) continue;
          const Vec3 qv = cross(tv, e1);
          const double v = dot(d, qv) / det;
          if (v < 0.0 || u + v > 1.0) continue;
          const double s = dot(e2, qv) / det;
          if (s > 0.0 && s <= 1.0 && (!first || s < *first)) first = s;
        }
      }
  return first;
}

MeshShape load_mesh_shape(const std::string& file, double scale, const Vec3& rotation_deg,
                          const Vec3& centre) {
  TriangleMesh mesh;
  try {
    mesh = read_mesh(file);
  } catch (const std::exception& e) {
    throw GeometryError("file", e.what());
  }
  check_closed(mesh, file);
  const auto box = mesh.bounds();
  for (auto& v : mesh.vertices)
    for (std::size_t d = 0; d < 3; ++d) v[d] -= 0.5 * (box[0][d] + box[1][d]);
  Placement where;
  where.scale = scale, where.rotation_deg = rotation_deg, where.position = centre;
  place(mesh, where);
  return MeshShape(std::move(mesh));
}

}  // namespace kolibri
