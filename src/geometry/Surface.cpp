// SPDX-License-Identifier: Apache-2.0
// Triangle meshes: area, bounds, placement and the primitive tessellations.
#include <kolibri/geometry/MeshMath.hpp>
#include <kolibri/geometry/Surface.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <numbers>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>

namespace kolibri {

namespace {

using std::numbers::pi;

double norm(const Vec3& a) { return std::sqrt(dot(a, a)); }

double longest_edge(const TriangleMesh& m) {
  double longest = 0;
  for (const auto& t : m.triangles)
    for (int e = 0; e < 3; ++e)
      longest = std::max(longest, norm(sub(m.vertices[t[e]], m.vertices[t[(e + 1) % 3]])));
  return longest;
}

void require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument(what);
}

void require_length(double v, const char* fn, const char* name) {
  require(std::isfinite(v) && v > 0,
          std::string(fn) + ": " + name + " must be positive and finite, got " + std::to_string(v));
}

void require_axis(int axis, const char* fn) {
  require(axis >= 0 && axis <= 2,
          std::string(fn) + ": axis must be 0, 1 or 2 (x, y, z), got " + std::to_string(axis));
}

/// Vertex counts must stay well inside int (the triangle index type) and memory.
void require_size(double triangles, const char* fn) {
  require(triangles < 2e8, std::string(fn) + ": max_edge is too small for the size (about " +
                               std::to_string(triangles) + " triangles)");
}

/// Built along z: the cyclic permutation that puts local z on `axis` (keeps orientation).
void orient_axis(TriangleMesh& m, int axis) {
  if (axis == 2) return;
  for (auto& v : m.vertices) {
    const Vec3 l = v;
    v = axis == 0 ? Vec3{l[2], l[0], l[1]} : Vec3{l[1], l[2], l[0]};
  }
}

/// sin and cos of an angle in degrees, exact at multiples of 90.
std::pair<double, double> sin_cos_deg(double deg) {
  const double r = std::fmod(deg, 360.0);
  const double q = r < 0 ? r + 360.0 : r;
  if (q == 0) return {0.0, 1.0};
  if (q == 90) return {1.0, 0.0};
  if (q == 180) return {0.0, -1.0};
  if (q == 270) return {-1.0, 0.0};
  const double rad = q * (pi / 180.0);
  return {std::sin(rad), std::cos(rad)};
}

/// Build with a refinement factor f = 1, 1.1, 1.21, ... until no edge exceeds max_edge.
TriangleMesh refine_until(double max_edge, const std::function<TriangleMesh(double)>& build) {
  for (double f = 1;; f *= 1.1) {
    TriangleMesh m = build(f);
    if (longest_edge(m) <= max_edge) return m;
  }
}

}  // namespace

double TriangleMesh::area() const {
  double a = 0;
  for (const auto& t : triangles)
    a += 0.5 * norm(cross(sub(vertices[t[1]], vertices[t[0]]), sub(vertices[t[2]], vertices[t[0]])));
  return a;
}

std::array<Vec3, 2> TriangleMesh::bounds() const {
  constexpr double inf = std::numeric_limits<double>::infinity();
  std::array<Vec3, 2> b{Vec3{inf, inf, inf}, Vec3{-inf, -inf, -inf}};
  for (const auto& v : vertices)
    for (int d = 0; d < 3; ++d) {
      b[0][d] = std::min(b[0][d], v[d]);
      b[1][d] = std::max(b[1][d], v[d]);
    }
  return b;
}

std::array<double, 9> rotation_matrix(const Vec3& rotation_deg) {
  for (double a : rotation_deg) require(std::isfinite(a), "rotation_matrix: angles must be finite");
  const auto [sa, ca] = sin_cos_deg(rotation_deg[0]);
  const auto [sb, cb] = sin_cos_deg(rotation_deg[1]);
  const auto [sc, cc] = sin_cos_deg(rotation_deg[2]);
  // Rz(c) * Ry(b) * Rx(a), written out.
  return {cc * cb, cc * sb * sa - sc * ca, cc * sb * ca + sc * sa,
          sc * cb, sc * sb * sa + cc * ca, sc * sb * ca - cc * sa,
          -sb,     cb * sa,                cb * ca};
}

void place(TriangleMesh& mesh, const Placement& p) {
  require(std::isfinite(p.scale) && p.scale > 0,
          "place: scale must be positive and finite, got " + std::to_string(p.scale));
  for (double x : p.position) require(std::isfinite(x), "place: the position must be finite");
  const auto r = rotation_matrix(p.rotation_deg);
  for (auto& v : mesh.vertices) {
    const Vec3 s{p.scale * v[0], p.scale * v[1], p.scale * v[2]};
    for (int i = 0; i < 3; ++i)
      v[i] = r[3 * i] * s[0] + r[3 * i + 1] * s[1] + r[3 * i + 2] * s[2] + p.position[i];
  }
}

TriangleMesh sphere_mesh(double radius, double max_edge) {
  require_length(radius, "sphere_mesh", "radius");
  require_length(max_edge, "sphere_mesh", "max_edge");
  // Icosahedron: the 12 cyclic permutations of (0, +-1, +-phi); its faces are the vertex triples
  // at mutual distance 2 (the edge length), turned to face outwards.
  const double phi = (1 + std::sqrt(5.0)) / 2;
  std::vector<Vec3> ico;
  for (int c = 0; c < 3; ++c)
    for (double s1 : {-1.0, 1.0})
      for (double s2 : {-1.0, 1.0}) {
        Vec3 v{};
        v[(c + 1) % 3] = s1;
        v[(c + 2) % 3] = s2 * phi;
        ico.push_back(v);
      }
  std::vector<std::array<int, 3>> faces;
  auto is_edge = [&](int a, int b) { return std::abs(norm(sub(ico[a], ico[b])) - 2) < 1e-9; };
  for (int a = 0; a < 12; ++a)
    for (int b = a + 1; b < 12; ++b)
      for (int c = b + 1; c < 12; ++c)
        if (is_edge(a, b) && is_edge(b, c) && is_edge(a, c)) {
          const Vec3 n = cross(sub(ico[b], ico[a]), sub(ico[c], ico[a]));
          faces.push_back(dot(n, ico[a]) > 0 ? std::array<int, 3>{a, b, c} : std::array<int, 3>{a, c, b});
        }
  const double ico_edge = 2 / norm(ico[0]);  // on the unit sphere

  // Each face split into n x n triangles on the flat face, the vertices then projected; vertices
  // on icosahedron edges are shared between the two faces.
  auto build = [&](int n) {
    TriangleMesh m;
    auto add = [&](const Vec3& flat) {
      const double s = radius / norm(flat);
      m.vertices.push_back({flat[0] * s, flat[1] * s, flat[2] * s});
      return static_cast<int>(m.vertices.size()) - 1;
    };
    for (const auto& v : ico) add(v);
    std::map<std::pair<int, int>, std::vector<int>> edge_vertices;  // from lower to higher corner
    auto lerp = [&](int a, int b, double t) {
      return Vec3{ico[a][0] + t * (ico[b][0] - ico[a][0]), ico[a][1] + t * (ico[b][1] - ico[a][1]),
                  ico[a][2] + t * (ico[b][2] - ico[a][2])};
    };
    auto edge_vertex = [&](int a, int b, int k) {  // k-th of n-1 interior points from a to b
      const bool flip = a > b;
      auto [it, fresh] = edge_vertices.try_emplace({std::min(a, b), std::max(a, b)});
      if (fresh)
        for (int i = 1; i < n; ++i) it->second.push_back(add(lerp(std::min(a, b), std::max(a, b), double(i) / n)));
      return it->second[flip ? n - 1 - k : k - 1];
    };
    for (const auto& f : faces) {
      // grid(i, j): the point A + i/n (B - A) + j/n (C - A), i + j <= n.
      std::vector<int> grid((n + 1) * (n + 1), -1);
      auto at = [&](int i, int j) -> int& { return grid[i * (n + 1) + j]; };
      at(0, 0) = f[0];
      at(n, 0) = f[1];
      at(0, n) = f[2];
      for (int k = 1; k < n; ++k) {
        at(k, 0) = edge_vertex(f[0], f[1], k);
        at(0, k) = edge_vertex(f[0], f[2], k);
        at(n - k, k) = edge_vertex(f[1], f[2], k);
      }
      for (int i = 1; i < n; ++i)
        for (int j = 1; i + j < n; ++j) {
          Vec3 p{};
          for (int d = 0; d < 3; ++d)
            p[d] = ico[f[0]][d] + (double(i) / n) * (ico[f[1]][d] - ico[f[0]][d]) +
                   (double(j) / n) * (ico[f[2]][d] - ico[f[0]][d]);
          at(i, j) = add(p);
        }
      for (int i = 0; i < n; ++i)
        for (int j = 0; i + j < n; ++j) {
          m.triangles.push_back({at(i, j), at(i + 1, j), at(i, j + 1)});
          if (i + j + 2 <= n) m.triangles.push_back({at(i + 1, j), at(i + 1, j + 1), at(i, j + 1)});
        }
    }
    return m;
  };
  // The projection stretches the triangles near a face's centre by up to about 1.26.
  int n = std::max(1, static_cast<int>(std::ceil(1.2 * ico_edge * radius / max_edge)));
  for (;;) {
    require_size(20.0 * n * n, "sphere_mesh");
    TriangleMesh m = build(n);
    const double longest = longest_edge(m);
    if (longest <= max_edge) return m;
    n = std::max(n + 1, static_cast<int>(std::ceil(n * longest / max_edge)));
  }
}

TriangleMesh cylinder_mesh(double radius, double length, int axis, double max_edge, bool caps) {
  require_length(radius, "cylinder_mesh", "radius");
  require_length(length, "cylinder_mesh", "length");
  require_length(max_edge, "cylinder_mesh", "max_edge");
  require_axis(axis, "cylinder_mesh");
  // Side: rings of nt vertices (chord <= max_edge), every other ring turned by half a segment,
  // so the slanted edges are sqrt(half_chord^2 + dz^2) <= max_edge.
  int nt = std::max(3, static_cast<int>(std::ceil(pi / std::asin(std::min(1.0, max_edge / (2 * radius))))));
  while (2 * radius * std::sin(pi / nt) > max_edge) ++nt;  // rounding
  const double half_chord = 2 * radius * std::sin(pi / (2 * nt));
  int nz = std::max(1, static_cast<int>(std::ceil(length / std::sqrt(max_edge * max_edge - half_chord * half_chord))));
  while (std::hypot(half_chord, length / nz) > max_edge) ++nz;  // rounding
  require_size(2.0 * nt * nz + (caps ? 2.0 * nt * nt : 0.0), "cylinder_mesh");
  auto ring_angle = [&](int k, int j) { return 2 * pi * (j + 0.5 * (k % 2)) / nt; };

  TriangleMesh side;
  for (int k = 0; k <= nz; ++k)
    for (int j = 0; j < nt; ++j)
      side.vertices.push_back({radius * std::cos(ring_angle(k, j)), radius * std::sin(ring_angle(k, j)),
                               -0.5 * length + length * k / nz});
  auto vid = [&](int k, int j) { return k * nt + (j % nt); };
  for (int k = 0; k < nz; ++k)
    for (int j = 0; j < nt; ++j) {
      if (k % 2 == 0) {  // upper vertex j lies between lower j and j + 1
        side.triangles.push_back({vid(k, j), vid(k, j + 1), vid(k + 1, j)});
        side.triangles.push_back({vid(k + 1, j), vid(k, j + 1), vid(k + 1, j + 1)});
      } else {  // lower vertex j lies between upper j and j + 1
        side.triangles.push_back({vid(k, j), vid(k + 1, j + 1), vid(k + 1, j)});
        side.triangles.push_back({vid(k, j), vid(k, j + 1), vid(k + 1, j + 1)});
      }
    }
  if (!caps) {
    orient_axis(side, axis);
    return side;
  }

  // Caps: concentric rings i = 1 .. m-1 of radius r i/m (vertex spacing about h) between the
  // centre and the side's end ring, neighbouring rings zipped together by angle.
  auto build = [&](double f) {
    TriangleMesh m = side;
    const double h = 0.5 * max_edge / f;
    const int nr = std::max(1, static_cast<int>(std::ceil(radius / h)));
    for (int end = 0; end < 2; ++end) {
      const int k = end == 0 ? 0 : nz;
      const double z = end == 0 ? -0.5 * length : 0.5 * length;
      const double offset = ring_angle(k, 0);
      auto emit = [&](int a, int b, int c) {  // counter-clockwise seen from +z
        if (end == 0) m.triangles.push_back({a, c, b});
        else m.triangles.push_back({a, b, c});
      };
      std::vector<int> inner{static_cast<int>(m.vertices.size())};
      m.vertices.push_back({0, 0, z});
      for (int i = 1; i <= nr; ++i) {
        std::vector<int> outer;
        int count = nt;
        if (i < nr) {
          const double rho = radius * i / nr;
          count = std::max(3, static_cast<int>(std::ceil(2 * pi * rho / h)));
          for (int j = 0; j < count; ++j) {
            const double t = offset + 2 * pi * j / count;
            outer.push_back(static_cast<int>(m.vertices.size()));
            m.vertices.push_back({rho * std::cos(t), rho * std::sin(t), z});
          }
        } else {
          for (int j = 0; j < nt; ++j) outer.push_back(vid(k, j));
        }
        const int a = static_cast<int>(inner.size());
        if (a == 1) {
          for (int q = 0; q < count; ++q) emit(inner[0], outer[q], outer[(q + 1) % count]);
        } else {
          // Zip: advance on the ring whose next vertex comes first in angle.
          int p = 0, q = 0;
          while (p < a || q < count) {
            const bool advance_inner = q == count || (p < a && double(p + 1) / a < double(q + 1) / count);
            if (advance_inner) {
              emit(inner[p], outer[q % count], inner[(p + 1) % a]);
              ++p;
            } else {
              emit(inner[p % a], outer[q], outer[(q + 1) % count]);
              ++q;
            }
          }
        }
        inner = std::move(outer);
      }
    }
    return m;
  };
  TriangleMesh m = refine_until(max_edge, build);
  orient_axis(m, axis);
  return m;
}

TriangleMesh box_mesh(Vec3 size, double max_edge) {
  for (int d = 0; d < 3; ++d) require_length(size[d], "box_mesh", "size");
  require_length(max_edge, "box_mesh", "max_edge");
  // Each face a grid of rectangles of sides <= max_edge / sqrt(2), split along a diagonal.
  std::array<int, 3> n{};
  for (int d = 0; d < 3; ++d)
    n[d] = std::max(1, static_cast<int>(std::ceil(size[d] * std::numbers::sqrt2 / max_edge)));
  require_size(4.0 * (double(n[0]) * n[1] + double(n[1]) * n[2] + double(n[0]) * n[2]), "box_mesh");
  TriangleMesh m;
  std::unordered_map<std::int64_t, int> index;  // lattice point (i, j, k) -> vertex
  auto vertex = [&](std::array<int, 3> g) {
    const std::int64_t key = g[0] + (n[0] + 1LL) * (g[1] + (n[1] + 1LL) * g[2]);
    auto [it, fresh] = index.try_emplace(key, static_cast<int>(m.vertices.size()));
    if (fresh) {
      Vec3 p{};
      for (int d = 0; d < 3; ++d) p[d] = size[d] * (double(g[d]) / n[d] - 0.5);
      m.vertices.push_back(p);
    }
    return it->second;
  };
  for (int a = 0; a < 3; ++a) {
    const int b = (a + 1) % 3, c = (a + 2) % 3;  // (a, b, c) right-handed: b x c = a
    for (int s = 0; s < 2; ++s)
      for (int u = 0; u < n[b]; ++u)
        for (int v = 0; v < n[c]; ++v) {
          auto corner = [&](int du, int dv) {
            std::array<int, 3> g{};
            g[a] = s * n[a];
            g[b] = u + du;
            g[c] = v + dv;
            return vertex(g);
          };
          const int p00 = corner(0, 0), p10 = corner(1, 0), p11 = corner(1, 1), p01 = corner(0, 1);
          if (s == 1) {  // normal +a: counter-clockwise in (b, c)
            m.triangles.push_back({p00, p10, p11});
            m.triangles.push_back({p00, p11, p01});
          } else {
            m.triangles.push_back({p00, p11, p10});
            m.triangles.push_back({p00, p01, p11});
          }
        }
  }
  return m;
}

TriangleMesh torus_mesh(double major_radius, double minor_radius, int axis, double max_edge) {
  require_length(major_radius, "torus_mesh", "major_radius");
  require_length(minor_radius, "torus_mesh", "minor_radius");
  require_length(max_edge, "torus_mesh", "max_edge");
  require_axis(axis, "torus_mesh");
  require(minor_radius < major_radius, "torus_mesh: minor_radius must be smaller than major_radius");
  const double big = major_radius, small = minor_radius;
  // A (u, v) grid: u around the symmetry axis, v around the tube; quads split along a diagonal.
  auto build = [&](double f) {
    const double h = max_edge / (std::numbers::sqrt2 * f);
    const int nu = std::max(3, static_cast<int>(std::ceil(2 * pi * (big + small) / h)));
    const int nv = std::max(3, static_cast<int>(std::ceil(2 * pi * small / h)));
    require_size(2.0 * nu * nv, "torus_mesh");
    TriangleMesh m;
    for (int i = 0; i < nu; ++i)
      for (int j = 0; j < nv; ++j) {
        const double u = 2 * pi * i / nu, v = 2 * pi * j / nv;
        const double rho = big + small * std::cos(v);
        m.vertices.push_back({rho * std::cos(u), rho * std::sin(u), small * std::sin(v)});
      }
    auto vid = [&](int i, int j) { return (i % nu) * nv + (j % nv); };
    for (int i = 0; i < nu; ++i)
      for (int j = 0; j < nv; ++j) {
        m.triangles.push_back({vid(i, j), vid(i + 1, j), vid(i, j + 1)});
        m.triangles.push_back({vid(i + 1, j), vid(i + 1, j + 1), vid(i, j + 1)});
      }
    return m;
  };
  TriangleMesh m = refine_until(max_edge, build);
  orient_axis(m, axis);
  return m;
}

}  // namespace kolibri
