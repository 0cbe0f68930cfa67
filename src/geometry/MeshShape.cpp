// SPDX-License-Identifier: Apache-2.0
#include <kolibri/config/Checksum.hpp>
#include <kolibri/geometry/MeshMath.hpp>
#include <kolibri/geometry/MeshShape.hpp>
#include <kolibri/geometry/SolidImage.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>

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

/// True where triangle (a, b, c) reaches the unit cube about `centre` (the separating axis test
/// of Akenine-Moller 2001; the three axes of the box are the caller's bounding-box loop): no
/// separation along the triangle's normal nor along an edge crossed with an axis. Long thin
/// triangles (the usual in CAD exports) then fill only the cells they pass through.
bool reaches_cube(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& centre) {
  const Vec3 v[3] = {sub(a, centre), sub(b, centre), sub(c, centre)};
  const Vec3 normal = cross(sub(v[1], v[0]), sub(v[2], v[0]));
  constexpr double slack = 1.0 + 1e-9;  // a triangle on a cube's face reaches both cubes
  if (std::fabs(dot(normal, v[0])) >
      0.5 * slack * (std::fabs(normal[0]) + std::fabs(normal[1]) + std::fabs(normal[2])))
    return false;
  for (int e = 0; e < 3; ++e) {
    const Vec3 edge = sub(v[(e + 1) % 3], v[e]);
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

/// True where the triangle's projection on the y-z plane reaches the unit square about (cy, cz)
/// (the separating axis test in 2D: the square's axes are the caller's bounding-box loop).
bool reaches_square(const Vec3& a, const Vec3& b, const Vec3& c, double cy, double cz) {
  const double u[3] = {a[1] - cy, b[1] - cy, c[1] - cy}, v[3] = {a[2] - cz, b[2] - cz, c[2] - cz};
  constexpr double slack = 1.0 + 1e-9;
  for (int e = 0; e < 3; ++e) {
    const double au = -(v[(e + 1) % 3] - v[e]), av = u[(e + 1) % 3] - u[e];  // the edge's normal
    const double p0 = au * u[0] + av * v[0], p1 = au * u[1] + av * v[1], p2 = au * u[2] + av * v[2];
    const double r = 0.5 * slack * (std::fabs(au) + std::fabs(av));
    if (std::min({p0, p1, p2}) > r || std::max({p0, p1, p2}) < -r) return false;
  }
  return true;
}

bool finite(const Vec3& v) {
  return std::isfinite(v[0]) && std::isfinite(v[1]) && std::isfinite(v[2]);
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
  for (const Vec3& v : m_mesh.vertices)
    if (!finite(v)) throw GeometryError("scale", "the placed mesh has a vertex that is not finite");
  for (int d = 0; d < 3; ++d) {
    const double lo = m_bounds[0][std::size_t(d)], hi = m_bounds[1][std::size_t(d)];
    if (!(hi - lo <= 1e6) || !(std::fabs(lo) <= 1e9) || !(std::fabs(hi) <= 1e9)) {
      char buf[256];
      std::snprintf(buf, sizeof buf,
                    "the placed mesh spans %.6g x %.6g x %.6g cells, more than 1e6 along an axis "
                    "(scale is cells per unit of the file)",
                    m_bounds[1][0] - m_bounds[0][0], m_bounds[1][1] - m_bounds[0][1],
                    m_bounds[1][2] - m_bounds[0][2]);
      throw GeometryError("scale", buf);
    }
    m_origin[std::size_t(d)] = int(std::floor(lo));
    m_extent[std::size_t(d)] = int(std::floor(hi)) - m_origin[std::size_t(d)] + 1;
  }
  m_columns = bin(m_mesh, m_origin, {1, m_extent[1], m_extent[2]}, true);
  m_cells = bin(m_mesh, m_origin, m_extent, false);
  // The rows of cell centres: every column's crossings once, sorted, with running winding sums.
  m_row_start.assign(m_columns.keys.size() + 1, 0);
  std::vector<std::pair<double, int>> hits;
  for (std::size_t i = 0; i < m_columns.keys.size(); ++i) {
    const std::int64_t c = m_columns.keys[i];
    const double y = double(m_origin[1] + int(c % m_extent[1])) + 0.5;
    const double z = double(m_origin[2] + int(c / m_extent[1])) + 0.5;
    hits.clear();
    for (const int* t = m_columns.begin(std::int64_t(i)); t != m_columns.end(std::int64_t(i)); ++t)
      if (const auto hit = ray_crossing(m_mesh, m_mesh.triangles[std::size_t(*t)], y, z))
        hits.push_back(*hit);
    std::sort(hits.begin(), hits.end());
    int winding = 0;
    for (const auto& h : hits) m_rows.push_back({h.first, winding += h.second});
    m_row_start[i + 1] = std::int64_t(m_rows.size());
  }
}

std::int64_t MeshShape::Bins::find(std::int64_t key) const {
  const auto it = std::lower_bound(keys.begin(), keys.end(), key);
  return it != keys.end() && *it == key ? std::int64_t(it - keys.begin()) : -1;
}

int MeshShape::bin_of(double v, int d) const {
  const double i = std::floor(v) - m_origin[std::size_t(d)];
  return i >= 0 && i < m_extent[std::size_t(d)] ? int(i) : -1;
}

MeshShape::Bins MeshShape::bin(const TriangleMesh& mesh, const std::array<int, 3>& origin,
                               const std::array<int, 3>& extent, bool along_x) {
  // (bin, triangle) pairs, then sorted into keys and `start`. A triangle goes into the y-z
  // columns its projection reaches (reaches_square) and, for cells, into those of each such
  // column that its plane passes through and it reaches (reaches_cube): a long tilted triangle
  // visits about the cells it crosses, not its bounding box.
  std::vector<std::pair<std::int64_t, int>> pairs;
  for (std::size_t t = 0; t < mesh.triangles.size(); ++t) {
    const auto& tri = mesh.triangles[t];
    const Vec3 &a = mesh.vertices[std::size_t(tri[0])], &b = mesh.vertices[std::size_t(tri[1])],
               &c = mesh.vertices[std::size_t(tri[2])];
    int lo[3], hi[3];
    for (int d = 0; d < 3; ++d) {
      const std::size_t k = std::size_t(d);
      lo[d] = int(std::floor(std::min({a[k], b[k], c[k]}))) - origin[k];
      hi[d] = int(std::floor(std::max({a[k], b[k], c[k]}))) - origin[k];
    }
    const Vec3 normal = cross(sub(b, a), sub(c, a));
    const double size = std::fabs(normal[0]) + std::fabs(normal[1]) + std::fabs(normal[2]);
    for (int z = lo[2]; z <= hi[2]; ++z)
      for (int y = lo[1]; y <= hi[1]; ++y) {
        const double y0 = origin[1] + y, z0 = origin[2] + z;
        if (!reaches_square(a, b, c, y0 + 0.5, z0 + 0.5)) continue;
        if (along_x) {
          pairs.emplace_back(y + std::int64_t(extent[1]) * z, int(t));
          continue;
        }
        int x0 = lo[0], x1 = hi[0];  // the cells of the column its plane passes through
        if (std::fabs(normal[0]) > 1e-9 * size) {
          double xl = 1e300, xh = -1e300;
          for (const double yy : {y0, y0 + 1})
            for (const double zz : {z0, z0 + 1}) {
              const double x =
                  a[0] - (normal[1] * (yy - a[1]) + normal[2] * (zz - a[2])) / normal[0];
              xl = std::min(xl, x), xh = std::max(xh, x);
            }
          const double first = origin[0] + x0, last = origin[0] + x1;  // clamped before the casts
          x0 = int(std::floor(std::clamp(xl, first, last))) - origin[0] - 1;
          x1 = int(std::floor(std::clamp(xh, first, last))) - origin[0] + 1;
          x0 = std::max(x0, lo[0]), x1 = std::min(x1, hi[0]);
        }
        for (int x = x0; x <= x1; ++x) {
          const Vec3 centre{origin[0] + x + 0.5, y0 + 0.5, z0 + 0.5};
          if (reaches_cube(a, b, c, centre))
            pairs.emplace_back(x + std::int64_t(extent[0]) * (y + std::int64_t(extent[1]) * z),
                               int(t));
        }
      }
  }
  std::sort(pairs.begin(), pairs.end());
  Bins out;
  out.items.reserve(pairs.size());
  for (const auto& p : pairs) {
    if (out.keys.empty() || out.keys.back() != p.first) {
      out.keys.push_back(p.first);
      out.start.push_back(std::int64_t(out.items.size()));
    }
    out.items.push_back(p.second);
  }
  out.start.push_back(std::int64_t(out.items.size()));
  return out;
}

bool MeshShape::inside(const Vec3& p) const {
  const int y = bin_of(p[1], 1), z = bin_of(p[2], 2);
  if (y < 0 || z < 0 || !(p[0] >= m_bounds[0][0])) return false;
  const std::int64_t column = m_columns.find(y + std::int64_t(m_extent[1]) * z);
  if (column < 0) return false;
  if (p[1] == double(m_origin[1] + y) + 0.5 && p[2] == double(m_origin[2] + z) + 0.5) {
    // A row of cell centres: the winding sum of the crossings before p.x (strictly before, as
    // below and in voxelize).
    const Row* first = m_rows.data() + m_row_start[std::size_t(column)];
    const Row* last = m_rows.data() + m_row_start[std::size_t(column + 1)];
    const Row* after =
        std::lower_bound(first, last, p[0], [](const Row& r, double x) { return r.x < x; });
    return after != first && after[-1].winding != 0;
  }
  int winding = 0;  // the crossings before p: nonzero inside
  for (const int* t = m_columns.begin(column); t != m_columns.end(column); ++t)
    if (const auto hit = ray_crossing(m_mesh, m_mesh.triangles[std::size_t(*t)], p[1], p[2]))
      if (hit->first < p[0]) winding += hit->second;
  return winding != 0;
}

std::optional<double> MeshShape::first_crossing(const Vec3& a, const Vec3& b) const {
  // A fluid cell's centre may lie on a triangle (a face through cell centres, which the inside
  // rule leaves to the fluid where the ray enters): such a crossing counts, at a small positive
  // fraction (0 is the link rules' "halfway" mark).
  constexpr double kOnStart = 1e-9, kNearest = 1e-6;
  const Vec3 d = sub(b, a);
  int lo[3], hi[3];
  for (int k = 0; k < 3; ++k) {
    const std::size_t s = std::size_t(k);
    lo[k] = std::max(0, int(std::floor(std::min(a[s], b[s]))) - m_origin[s]);
    hi[k] = std::min(m_extent[s] - 1, int(std::floor(std::max(a[s], b[s]))) - m_origin[s]);
  }
  std::optional<double> first;
  for (int z = lo[2]; z <= hi[2]; ++z)
    for (int y = lo[1]; y <= hi[1]; ++y)
      for (int x = lo[0]; x <= hi[0]; ++x) {
        const std::int64_t cell =
            m_cells.find(x + std::int64_t(m_extent[0]) * (y + std::int64_t(m_extent[1]) * z));
        if (cell < 0) continue;
        for (const int* t = m_cells.begin(cell); t != m_cells.end(cell); ++t) {
          // Moller & Trumbore (1997): a + s d = v0 + u e1 + v e2.
          const auto& tri = m_mesh.triangles[std::size_t(*t)];
          const Vec3& v0 = m_mesh.vertices[std::size_t(tri[0])];
          const Vec3 e1 = sub(m_mesh.vertices[std::size_t(tri[1])], v0);
          const Vec3 e2 = sub(m_mesh.vertices[std::size_t(tri[2])], v0);
          const Vec3 pv = cross(d, e2);
          const double det = dot(e1, pv);
          if (det == 0.0) continue;  // the segment runs along the triangle's plane
          const Vec3 tv = sub(a, v0);
          const double u = dot(tv, pv) / det;
          if (u < 0.0 || u > 1.0) continue;
          const Vec3 qv = cross(tv, e1);
          const double v = dot(d, qv) / det;
          if (v < 0.0 || u + v > 1.0) continue;
          const double s = dot(e2, qv) / det;
          if (s < -kOnStart || s > 1.0) continue;
          const double at = std::max(s, kNearest);
          if (!first || at < *first) first = at;
        }
      }
  return first;
}

std::uint64_t MeshShape::checksum() const {
  return checksum64(m_mesh.vertices) ^ (checksum64(m_mesh.triangles) * 0x9e3779b97f4a7c15ull);
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
  centre_on_bounds(mesh);
  Placement where;
  where.scale = scale, where.rotation_deg = rotation_deg, where.position = centre;
  place(mesh, where);
  return MeshShape(std::move(mesh));
}

std::string describe_mesh_obstacle(const std::vector<Obstacle>& all, std::size_t k) {
  const Obstacle& o = all[k];
  if (o.shape != Obstacle::Shape::Mesh || !o.mesh) return "";
  const auto& b = o.mesh->bounds();
  char buf[512];
  std::snprintf(buf, sizeof buf,
                "obstacle '%s': mesh %s, %zu triangles, from (%.4g, %.4g, %.4g) to (%.4g, %.4g, "
                "%.4g) cells, %s walls, solid %s",
                obstacle_name(all, k).c_str(), o.file.c_str(), o.mesh->triangles(), b[0][0],
                b[0][1], b[0][2], b[1][0], b[1][1], b[1][2],
                o.wall == Obstacle::Wall::Interpolated ? "interpolated" : "halfway bounce-back",
                o.solid_outside ? "outside" : "inside");
  return buf;
}

}  // namespace kolibri
