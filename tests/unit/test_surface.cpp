// SPDX-License-Identifier: Apache-2.0
// Immersed-boundary geometry: primitive meshes, mesh files, placement, Poisson-disk samples, 2D
// curves and the block + Morton sample order.
#include <kolibri/geometry/Surface.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <numbers>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <sys/stat.h>
#include <unordered_map>
#include <utility>
#include <vector>

#include "TestFiles.hpp"

namespace {
using namespace kolibri;
using std::numbers::pi;

double distance(const Vec3& a, const Vec3& b) { return std::hypot(a[0] - b[0], a[1] - b[1], a[2] - b[2]); }
double norm(const Vec3& a) { return std::hypot(a[0], a[1], a[2]); }

double longest_edge(const TriangleMesh& m) {
  double longest = 0;
  for (const auto& t : m.triangles)
    for (int e = 0; e < 3; ++e) longest = std::max(longest, distance(m.vertices[t[e]], m.vertices[t[(e + 1) % 3]]));
  return longest;
}

/// Enclosed volume by the divergence theorem: positive for outward-facing triangles.
double signed_volume(const TriangleMesh& m) {
  double v = 0;
  for (const auto& t : m.triangles) {
    const Vec3 &a = m.vertices[t[0]], &b = m.vertices[t[1]], &c = m.vertices[t[2]];
    v += (a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0]) +
          a[2] * (b[0] * c[1] - b[1] * c[0])) / 6;
  }
  return v;
}

/// Every directed edge used once and its reverse once: closed and consistently oriented.
bool closed_and_oriented(const TriangleMesh& m) {
  std::map<std::pair<int, int>, int> directed;
  for (const auto& t : m.triangles)
    for (int e = 0; e < 3; ++e) ++directed[{t[e], t[(e + 1) % 3]}];
  for (const auto& [edge, count] : directed) {
    const auto reverse = directed.find({edge.second, edge.first});
    if (count != 1 || reverse == directed.end() || reverse->second != 1) return false;
  }
  return true;
}

/// Smallest distance between two points (grid of cells of `cell`; exact, all pairs closer than
/// `cell` are seen).
double min_pair_distance(const std::vector<Vec3>& p, double cell) {
  std::unordered_map<std::int64_t, std::vector<std::size_t>> grid;
  auto key = [&](std::int64_t x, std::int64_t y, std::int64_t z) { return (x * 73856093) ^ (y * 19349663) ^ (z * 83492791); };
  auto coord = [&](double x) { return static_cast<std::int64_t>(std::floor(x / cell)); };
  for (std::size_t i = 0; i < p.size(); ++i) grid[key(coord(p[i][0]), coord(p[i][1]), coord(p[i][2]))].push_back(i);
  double best = cell;
  for (std::size_t i = 0; i < p.size(); ++i)
    for (int dz = -1; dz <= 1; ++dz)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
          const auto it = grid.find(key(coord(p[i][0]) + dx, coord(p[i][1]) + dy, coord(p[i][2]) + dz));
          if (it == grid.end()) continue;
          for (std::size_t j : it->second)
            if (j != i) best = std::min(best, distance(p[i], p[j]));
        }
  return best;
}

/// Brute force: all pairs.
double min_pair_distance_brute(const std::vector<Vec3>& p) {
  double best = std::numeric_limits<double>::infinity();
  for (std::size_t i = 0; i < p.size(); ++i)
    for (std::size_t j = i + 1; j < p.size(); ++j) best = std::min(best, distance(p[i], p[j]));
  return best;
}

/// `count` uniform random points on the mesh (area-weighted), independent of the library's
/// sampler.
std::vector<Vec3> random_surface_points(const TriangleMesh& m, std::size_t count, unsigned seed) {
  std::vector<double> cumulative;
  double total = 0;
  for (const auto& t : m.triangles) {
    const Vec3 &a = m.vertices[t[0]], &b = m.vertices[t[1]], &c = m.vertices[t[2]];
    const Vec3 e{b[0] - a[0], b[1] - a[1], b[2] - a[2]}, f{c[0] - a[0], c[1] - a[1], c[2] - a[2]};
    total += 0.5 * norm({e[1] * f[2] - e[2] * f[1], e[2] * f[0] - e[0] * f[2], e[0] * f[1] - e[1] * f[0]});
    cumulative.push_back(total);
  }
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(0, 1);
  std::vector<Vec3> out;
  for (std::size_t k = 0; k < count; ++k) {
    const auto i = std::min<std::size_t>(cumulative.size() - 1,
                                         std::upper_bound(cumulative.begin(), cumulative.end(), u(rng) * total) - cumulative.begin());
    double s = u(rng), t = u(rng);
    if (s + t > 1) s = 1 - s, t = 1 - t;
    const auto& tri = m.triangles[i];
    const Vec3 &a = m.vertices[tri[0]], &b = m.vertices[tri[1]], &c = m.vertices[tri[2]];
    out.push_back({a[0] + s * (b[0] - a[0]) + t * (c[0] - a[0]), a[1] + s * (b[1] - a[1]) + t * (c[1] - a[1]),
                   a[2] + s * (b[2] - a[2]) + t * (c[2] - a[2])});
  }
  return out;
}

/// Largest distance from one of `points` to its nearest sample (grid of cells of `cell`: exact
/// when below `cell`, else reported as `cell`).
double largest_gap(const std::vector<Vec3>& points, const std::vector<Vec3>& samples, double cell) {
  std::unordered_map<std::int64_t, std::vector<std::size_t>> grid;
  auto key = [&](std::int64_t x, std::int64_t y, std::int64_t z) { return (x * 73856093) ^ (y * 19349663) ^ (z * 83492791); };
  auto coord = [&](double x) { return static_cast<std::int64_t>(std::floor(x / cell)); };
  for (std::size_t i = 0; i < samples.size(); ++i)
    grid[key(coord(samples[i][0]), coord(samples[i][1]), coord(samples[i][2]))].push_back(i);
  double worst = 0;
  for (const Vec3& p : points) {
    double nearest = cell;
    for (int dz = -1; dz <= 1; ++dz)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
          const auto it = grid.find(key(coord(p[0]) + dx, coord(p[1]) + dy, coord(p[2]) + dz));
          if (it == grid.end()) continue;
          for (std::size_t j : it->second) nearest = std::min(nearest, distance(p, samples[j]));
        }
    worst = std::max(worst, nearest);
  }
  return worst;
}

// --- primitives -----------------------------------------------------------------------------------

// Tolerances: the tessellations are inscribed polyhedra; with edges of r/10 their area and
// volume fall short of the smooth surface by a few tenths of a percent (measured: sphere -0.16 %,
// torus -0.02 %, cylinder -0.03 %), so 1 % (area) and 1.5 % (volume) leave room without hiding
// a wrong formula (a missing cap, a wrong radius are several percent off).
TEST(PrimitiveMesh, SphereAreaVolumeEdgesAndVertices) {
  const double r = 2, h = r / 10;
  const TriangleMesh m = sphere_mesh(r, h);
  EXPECT_NEAR(m.area(), 4 * pi * r * r, 0.01 * 4 * pi * r * r);
  EXPECT_LT(m.area(), 4 * pi * r * r);  // inscribed
  EXPECT_NEAR(signed_volume(m), 4.0 / 3 * pi * r * r * r, 0.015 * 4.0 / 3 * pi * r * r * r);
  EXPECT_LE(longest_edge(m), h);
  EXPECT_GT(longest_edge(m), 0.5 * h);  // not needlessly fine
  EXPECT_TRUE(closed_and_oriented(m));
  for (const auto& v : m.vertices) EXPECT_NEAR(norm(v), r, 1e-12 * r);
  const auto b = m.bounds();
  for (int d = 0; d < 3; ++d) {
    EXPECT_NEAR(b[0][d], -r, 0.01 * r);
    EXPECT_NEAR(b[1][d], r, 0.01 * r);
  }
  // Finer max_edge, closer area.
  const TriangleMesh fine = sphere_mesh(r, h / 4);
  EXPECT_LT(std::abs(fine.area() - 4 * pi * r * r), std::abs(m.area() - 4 * pi * r * r) / 8);
}

TEST(PrimitiveMesh, TorusAreaVolumeAxis) {
  const double big = 3, small = 1, h = small / 10;
  for (int axis = 0; axis < 3; ++axis) {
    const TriangleMesh m = torus_mesh(big, small, axis, h);
    EXPECT_NEAR(m.area(), 4 * pi * pi * big * small, 0.01 * 4 * pi * pi * big * small) << axis;
    EXPECT_NEAR(signed_volume(m), 2 * pi * pi * big * small * small, 0.015 * 2 * pi * pi * big * small * small);
    EXPECT_LE(longest_edge(m), h);
    EXPECT_TRUE(closed_and_oriented(m));
    for (const auto& v : m.vertices) {  // on the torus around `axis`
      const double a = v[axis], rho = std::hypot(v[(axis + 1) % 3], v[(axis + 2) % 3]);
      ASSERT_NEAR(std::hypot(rho - big, a), small, 1e-12);
    }
    const auto b = m.bounds();
    EXPECT_NEAR(b[1][axis], small, 0.01 * small);
    EXPECT_NEAR(b[1][(axis + 1) % 3], big + small, 1e-3);
  }
  EXPECT_THROW(torus_mesh(1, 2, 2, 0.1), std::invalid_argument);
}

TEST(PrimitiveMesh, BoxAreaVolumeBounds) {
  const Vec3 size{1, 2, 3};
  const TriangleMesh m = box_mesh(size, 0.3);
  EXPECT_NEAR(m.area(), 2 * (1 * 2 + 2 * 3 + 1 * 3), 1e-12);
  EXPECT_NEAR(signed_volume(m), 6, 1e-12);
  EXPECT_LE(longest_edge(m), 0.3);
  EXPECT_TRUE(closed_and_oriented(m));
  const auto b = m.bounds();
  for (int d = 0; d < 3; ++d) {
    EXPECT_DOUBLE_EQ(b[0][d], -size[d] / 2);
    EXPECT_DOUBLE_EQ(b[1][d], size[d] / 2);
  }
  // max_edge above every size: two triangles a face.
  EXPECT_EQ(box_mesh(size, 10).triangles.size(), 12u);
}

TEST(PrimitiveMesh, CylinderWithAndWithoutCaps) {
  const double r = 1, length = 3, h = 0.1;
  for (int axis = 0; axis < 3; ++axis) {
    const TriangleMesh open = cylinder_mesh(r, length, axis, h, false);
    EXPECT_NEAR(open.area(), 2 * pi * r * length, 0.01 * 2 * pi * r * length) << axis;
    EXPECT_LE(longest_edge(open), h);
    EXPECT_FALSE(closed_and_oriented(open));
    for (const auto& v : open.vertices) {
      ASSERT_NEAR(std::hypot(v[(axis + 1) % 3], v[(axis + 2) % 3]), r, 1e-12);
      ASSERT_LE(std::abs(v[axis]), length / 2 + 1e-12);
    }
    const TriangleMesh closed = cylinder_mesh(r, length, axis, h, true);
    const double area = 2 * pi * r * length + 2 * pi * r * r;
    EXPECT_NEAR(closed.area(), area, 0.01 * area);
    // The caps add 2 pi r^2 (3.5 % here), so "with caps" is told apart from "without".
    EXPECT_NEAR(closed.area() - open.area(), 2 * pi * r * r, 0.01 * 2 * pi * r * r);
    EXPECT_NEAR(signed_volume(closed), pi * r * r * length, 0.015 * pi * r * r * length);
    EXPECT_LE(longest_edge(closed), h);
    EXPECT_TRUE(closed_and_oriented(closed));
  }
  // A coarse edge: still a valid, closed mesh.
  EXPECT_TRUE(closed_and_oriented(cylinder_mesh(1, 1, 2, 5, true)));
}

TEST(PrimitiveMesh, RejectsBadArguments) {
  EXPECT_THROW(sphere_mesh(-1, 0.1), std::invalid_argument);
  EXPECT_THROW(sphere_mesh(1, 0), std::invalid_argument);
  EXPECT_THROW(cylinder_mesh(1, 1, 3, 0.1, true), std::invalid_argument);
  EXPECT_THROW(box_mesh({1, 0, 1}, 0.1), std::invalid_argument);
  EXPECT_THROW(torus_mesh(2, 1, -1, 0.1), std::invalid_argument);
  EXPECT_THROW(sphere_mesh(1, 1e-6), std::invalid_argument);  // far too many triangles
}

// --- placement ------------------------------------------------------------------------------------

Vec3 apply(const std::array<double, 9>& r, const Vec3& v) {
  return {r[0] * v[0] + r[1] * v[1] + r[2] * v[2], r[3] * v[0] + r[4] * v[1] + r[5] * v[2],
          r[6] * v[0] + r[7] * v[1] + r[8] * v[2]};
}

TEST(Placement, RotationMatrix) {
  // Quarter turns are exact; counter-clockwise about the positive axis.
  EXPECT_EQ(apply(rotation_matrix({0, 0, 90}), {1, 0, 0}), (Vec3{0, 1, 0}));
  EXPECT_EQ(apply(rotation_matrix({90, 0, 0}), {0, 1, 0}), (Vec3{0, 0, 1}));
  EXPECT_EQ(apply(rotation_matrix({0, 90, 0}), {0, 0, 1}), (Vec3{1, 0, 0}));
  EXPECT_EQ(apply(rotation_matrix({0, 0, -270}), {1, 0, 0}), (Vec3{0, 1, 0}));
  // About x first, then y: x -> x -> -z; y -> z -> x.
  const auto r = rotation_matrix({90, 90, 0});
  EXPECT_EQ(apply(r, {1, 0, 0}), (Vec3{0, 0, -1}));
  EXPECT_EQ(apply(r, {0, 1, 0}), (Vec3{1, 0, 0}));
  // Any angles: orthonormal, determinant +1.
  const auto q = rotation_matrix({17, -43, 121});
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      double dot = 0;
      for (int k = 0; k < 3; ++k) dot += q[3 * i + k] * q[3 * j + k];
      EXPECT_NEAR(dot, i == j ? 1.0 : 0.0, 1e-15);
    }
  const double det = q[0] * (q[4] * q[8] - q[5] * q[7]) - q[1] * (q[3] * q[8] - q[5] * q[6]) + q[2] * (q[3] * q[7] - q[4] * q[6]);
  EXPECT_NEAR(det, 1, 1e-15);
}

TEST(Placement, ScaleRotateTranslate) {
  TriangleMesh m;
  m.vertices = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
  m.triangles = {{0, 1, 2}};
  const double area = m.area();
  place(m, Placement{2, {0, 0, 90}, {1, 2, 3}});
  EXPECT_EQ(m.vertices[0], (Vec3{1, 4, 3}));  // (1,0,0) -> (2,0,0) -> (0,2,0) -> + position
  EXPECT_EQ(m.vertices[1], (Vec3{-1, 2, 3}));
  EXPECT_EQ(m.vertices[2], (Vec3{1, 2, 5}));
  EXPECT_NEAR(m.area(), 4 * area, 1e-14);
  // A placed sphere: centred at the position, radius scaled.
  TriangleMesh s = sphere_mesh(1, 0.2);
  place(s, Placement{3, {10, 20, 30}, {-1, 5, 2}});
  for (const auto& v : s.vertices) ASSERT_NEAR(distance(v, {-1, 5, 2}), 3, 1e-12);
  EXPECT_THROW(place(s, Placement{0, {0, 0, 0}, {0, 0, 0}}), std::invalid_argument);
}

// --- mesh files -----------------------------------------------------------------------------------

/// A fresh directory for the test's files, removed at the end.
class MeshFile : public ::testing::Test {
 protected:
  void SetUp() override { scratch_ = std::make_unique<test::ScratchDir>(); }
  void TearDown() override { scratch_.reset(); }

  std::string write(const std::string& name, const std::string& content) const {
    return scratch_->write(name, content);
  }
  /// The message of the std::runtime_error that read_mesh(path) throws.
  static std::string error_of(const std::string& path) {
    try {
      read_mesh(path);
    } catch (const std::runtime_error& e) {
      return e.what();
    }
    ADD_FAILURE() << "read_mesh(" << path << ") did not throw";
    return {};
  }

  std::unique_ptr<test::ScratchDir> scratch_;
};

/// A tetrahedron with corners at binary-exact coordinates: faces outward.
TriangleMesh tetrahedron() {
  TriangleMesh m;
  m.vertices = {{0, 0, 0}, {1.5, 0, 0}, {0, 2, 0}, {0, 0, 0.25}};
  m.triangles = {{0, 2, 1}, {0, 1, 3}, {0, 3, 2}, {1, 2, 3}};
  return m;
}

void append_u32(std::string& s, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) s.push_back(char((v >> (8 * i)) & 0xff));
}
void append_f32(std::string& s, float f) {
  std::uint32_t v;
  std::memcpy(&v, &f, 4);
  append_u32(s, v);
}

std::string binary_stl(const TriangleMesh& m) {
  std::string s(80, ' ');
  s.replace(0, 12, "solid binary");  // a header may start with "solid": the size decides
  append_u32(s, std::uint32_t(m.triangles.size()));
  for (const auto& t : m.triangles) {
    for (int i = 0; i < 3; ++i) append_f32(s, 0.0f);  // normal: ignored
    for (int v : t)
      for (double x : m.vertices[v]) append_f32(s, float(x));
    s.append(2, '\0');
  }
  return s;
}

/// Same triangles (as vertex positions), in order.
void expect_same_triangles(const TriangleMesh& got, const TriangleMesh& want) {
  ASSERT_EQ(got.triangles.size(), want.triangles.size());
  for (std::size_t t = 0; t < want.triangles.size(); ++t)
    for (int k = 0; k < 3; ++k)
      EXPECT_EQ(got.vertices[got.triangles[t][k]], want.vertices[want.triangles[t][k]]) << "triangle " << t;
}

// Issue 22: only regular files are read, and no more than their size: /dev/zero read until memory
// ran out, a FIFO blocked forever, a directory gave "basic_filebuf::underflow error".
TEST_F(MeshFile, OnlyRegularFilesAreRead) {
  const std::string d = (scratch_->dir() / "folder.stl").string();
  std::filesystem::create_directories(d);
  EXPECT_NE(error_of(d).find(d + ": is a directory, not a mesh file"), std::string::npos)
      << error_of(d);
  const std::string fifo = (scratch_->dir() / "pipe.stl").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_NE(error_of(fifo).find("is a FIFO (named pipe), not a mesh file"), std::string::npos)
      << error_of(fifo);
  const std::string zero = (scratch_->dir() / "zero.stl").string();
  std::filesystem::create_symlink("/dev/zero", zero);
  EXPECT_NE(error_of(zero).find("is a device, not a mesh file"), std::string::npos)
      << error_of(zero);
  EXPECT_NE(error_of((scratch_->dir() / "missing.stl").string()).find("cannot open the mesh file"),
            std::string::npos);
}

TEST_F(MeshFile, BinaryStlRoundTrip) {
  TriangleMesh with_degenerate = tetrahedron();
  with_degenerate.triangles.push_back({1, 1, 2});  // zero area: dropped
  const TriangleMesh m = read_mesh(write("tetra.stl", binary_stl(with_degenerate)));
  expect_same_triangles(m, tetrahedron());
  EXPECT_EQ(m.vertices.size(), 12u);  // STL: three vertices a triangle, not merged
  EXPECT_DOUBLE_EQ(m.area(), tetrahedron().area());
  EXPECT_DOUBLE_EQ(signed_volume(m), 1.5 * 2 * 0.25 / 6);
  // Upper-case extension.
  EXPECT_EQ(read_mesh(write("TETRA.STL", binary_stl(tetrahedron()))).triangles.size(), 4u);
}

TEST_F(MeshFile, AsciiStlRoundTrip) {
  expect_same_triangles(read_mesh(write("tetra.stl", test::ascii_stl(tetrahedron()))),
                        tetrahedron());
  expect_same_triangles(read_mesh(write("crlf.stl", test::ascii_stl(tetrahedron(), "\r\n"))),
                        tetrahedron());
  // Two solids in one file; exponents and signs in numbers.
  const std::string two =
      test::ascii_stl(tetrahedron()) +
      "solid second\nfacet normal 0 0 1\nouter loop\nvertex 0 0 1e1\nvertex +2.5E0 0 10\n"
      "vertex 0 -2 10\nendloop\nendfacet\nendsolid second\n";
  const TriangleMesh m = read_mesh(write("two.stl", two));
  ASSERT_EQ(m.triangles.size(), 5u);
  EXPECT_EQ(m.vertices[m.triangles[4][1]], (Vec3{2.5, 0, 10}));
  EXPECT_EQ(m.vertices[m.triangles[4][2]], (Vec3{0, -2, 10}));
}

TEST_F(MeshFile, ObjRoundTripFaceFormsAndPolygons) {
  const std::string obj =
      "# a unit square (a quad: two triangles) and a triangle, in every face form\n"
      "o square\n"
      "v 0 0 0\n"
      "v 1 0 0\n"
      "v 1 1 0\n"
      "v 0 1 0\n"
      "vt 0 0\nvt 1 0\nvn 0 0 1\n"
      "v 9 9 9   # used by no face: dropped\n"
      "usemtl none\ns off\n"
      "f 1/1 2/2 3/1 4/2\n"
      "v 0 0 1\n"
      "f 1//1 2/1/1 -1\n"
      "f 5 5 1\n";  // zero area: dropped
  const TriangleMesh m = read_mesh(write("mesh.obj", obj));
  TriangleMesh want;
  want.vertices = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}, {0, 0, 1}};
  want.triangles = {{0, 1, 2}, {0, 2, 3}, {0, 1, 4}};
  expect_same_triangles(m, want);
  EXPECT_EQ(m.vertices.size(), 5u);
  EXPECT_DOUBLE_EQ(m.area(), 1.5);
  // Our own tetrahedron through OBJ.
  const TriangleMesh t = tetrahedron();
  std::string text;
  for (const auto& v : t.vertices) text += "v " + std::to_string(v[0]) + " " + std::to_string(v[1]) + " " + std::to_string(v[2]) + "\n";
  for (const auto& f : t.triangles) text += "f " + std::to_string(f[0] + 1) + " " + std::to_string(f[1] + 1) + " " + std::to_string(f[2] + 1) + "\n";
  const TriangleMesh back = read_mesh(write("tetra.obj", text));
  EXPECT_EQ(back.vertices, t.vertices);
  EXPECT_EQ(back.triangles, t.triangles);
}

TEST_F(MeshFile, ErrorsNameFileLineAndExpectation) {
  auto contains = [](const std::string& message, const std::string& part) {
    return message.find(part) != std::string::npos;
  };
  std::string e = error_of(write("mesh.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\n\nf 1 2 40\n"));
  EXPECT_TRUE(contains(e, "mesh.obj:5: face index 40 out of range (the file has 3 vertices)")) << e;
  e = error_of(write("rel.obj", "v 0 0 0\nv 1 0 0\nf 1 2 -3\n"));
  EXPECT_TRUE(contains(e, "rel.obj:3:") && contains(e, "-3")) << e;
  e = error_of(write("zero.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 0 1 2\n"));
  EXPECT_TRUE(contains(e, "zero.obj:4:") && contains(e, "start at 1")) << e;
  e = error_of(write("number.obj", "v 0 0 0\nv 1 x 0\n"));
  EXPECT_TRUE(contains(e, "number.obj:2:") && contains(e, "expected 3 finite numbers") && contains(e, "'x'")) << e;
  e = error_of(write("two.obj", "v 0 0 0\nv 1 0 0\nf 1 2\n"));
  EXPECT_TRUE(contains(e, "two.obj:3:") && contains(e, "at least 3")) << e;
  e = error_of(write("form.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3/a\n"));
  EXPECT_TRUE(contains(e, "form.obj:4:") && contains(e, "i/t/n")) << e;

  std::string stl = test::ascii_stl(tetrahedron());
  stl.replace(stl.find("vertex", stl.find("vertex") + 1), 6, "vortex");  // line 5
  e = error_of(write("bad.stl", stl));
  EXPECT_TRUE(contains(e, "bad.stl:5: expected 'vertex', found 'vortex'")) << e;
  e = error_of(write("short.stl", "solid x\nfacet normal 0 0 1\nouter loop\nvertex 0 0\n"));
  EXPECT_TRUE(contains(e, "short.stl:") && contains(e, "expected a number")) << e;
  e = error_of(write("truncated.stl", "solid x\nfacet normal 0 0 1\nouter loop\n"));
  EXPECT_TRUE(contains(e, "truncated.stl:") && contains(e, "end of file")) << e;
  std::string binary = binary_stl(tetrahedron());
  binary.replace(0, 5, "ABCDE");
  e = error_of(write("size.stl", binary.substr(0, binary.size() - 7)));  // neither binary nor ASCII
  EXPECT_TRUE(contains(e, "size.stl:") && contains(e, "not an STL file") && contains(e, "bytes")) << e;

  e = error_of(write("mesh.ply", "ply\n"));
  EXPECT_TRUE(contains(e, "mesh.ply") && contains(e, "supported") && contains(e, ".stl") && contains(e, ".obj")) << e;
  e = error_of(write("empty.obj", "# nothing\nv 0 0 0\n"));
  EXPECT_TRUE(contains(e, "empty.obj") && contains(e, "empty mesh")) << e;
  e = error_of(write("flat.stl", "solid flat\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 1 1\n"
                                 "vertex 2 2 2\nendloop\nendfacet\nendsolid\n"));
  EXPECT_TRUE(contains(e, "flat.stl") && contains(e, "zero area")) << e;
  e = error_of((scratch_->dir() / "missing.obj").string());
  EXPECT_TRUE(contains(e, "missing.obj") && contains(e, "cannot open")) << e;
}

// --- Poisson-disk samples -------------------------------------------------------------------------

// Density: random sequential adsorption of disks of diameter s on a plane jams at 0.547 of the
// area covered, 0.697 samples per s^2; measured here 0.693-0.699 on spheres (5 seeds), 0.686-0.690
// on a box (edges and corners lose a little). Bounds: +-0.04 around that, far tighter than the
// range a non-maximal (e.g. 30 candidates per s^2 without gap filling: 0.63) or overlapping
// sampling gives.
constexpr double kDensityLow = 0.65, kDensityHigh = 0.74;

TEST(PoissonDisk, SphereSpacingDensityMaximalAndOnSurface) {
  const double r = 1, h = 0.1, s = 0.05;
  const TriangleMesh m = sphere_mesh(r, h);
  const SurfaceSamples samples = poisson_disk_samples(m, s, 7);
  const std::size_t n = samples.position.size();
  EXPECT_DOUBLE_EQ(samples.area, m.area());
  EXPECT_DOUBLE_EQ(samples.weight(), m.area() / double(n));
  const double density = double(n) * s * s / samples.area;
  EXPECT_GT(density, kDensityLow);
  EXPECT_LT(density, kDensityHigh);
  // No two samples closer than the spacing (all pairs).
  EXPECT_GE(min_pair_distance_brute(samples.position), s);
  // Maximal: no point of the surface is as far as the spacing from every sample.
  EXPECT_LT(largest_gap(random_surface_points(m, 200000, 3), samples.position, 2 * s), s);
  // On the triangles: between the sphere and the plane of a triangle of edge <= h (whose
  // circumradius, for these near-equilateral triangles, is below h).
  for (const auto& p : samples.position) {
    ASSERT_LE(norm(p), r * (1 + 1e-12));
    ASSERT_GE(norm(p), std::sqrt(r * r - h * h));
  }
}

TEST(PoissonDisk, BoxSamplesLieOnTheFaces) {
  const Vec3 size{1, 2, 0.5};
  const TriangleMesh m = box_mesh(size, 0.7);
  const double s = 0.04;
  const SurfaceSamples samples = poisson_disk_samples(m, s, 11);
  for (const auto& p : samples.position) {
    double outside = 0;  // max over axes of |p_d| / (size_d / 2): 1 on the faces
    for (int d = 0; d < 3; ++d) outside = std::max(outside, std::abs(p[d]) / (size[d] / 2));
    ASSERT_NEAR(outside, 1, 1e-12);
  }
  const double density = double(samples.position.size()) * s * s / samples.area;
  EXPECT_GT(density, kDensityLow);
  EXPECT_LT(density, kDensityHigh);
  EXPECT_GE(min_pair_distance(samples.position, s), s);
  EXPECT_LT(largest_gap(random_surface_points(m, 200000, 5), samples.position, 2 * s), s);
}

TEST(PoissonDisk, DeterministicForASeed) {
  const TriangleMesh m = torus_mesh(2, 0.5, 1, 0.2);
  const SurfaceSamples a = poisson_disk_samples(m, 0.1, 42), b = poisson_disk_samples(m, 0.1, 42);
  EXPECT_EQ(a.position, b.position);
  const SurfaceSamples c = poisson_disk_samples(m, 0.1, 43);
  EXPECT_NE(a.position, c.position);
  // Another seed, another draw of the same process: counts within a few percent.
  EXPECT_NEAR(double(c.position.size()), double(a.position.size()), 0.05 * double(a.position.size()));
}

TEST(PoissonDisk, LargeSampleKeepsSpacingAndIsMaximal) {
  // About 37000 samples on a fine mesh (triangles smaller than the spacing) of a thin torus.
  TriangleMesh m = torus_mesh(4, 0.3, 2, 0.025);
  const double s = 0.03;
  const SurfaceSamples samples = poisson_disk_samples(m, s, 5);
  EXPECT_GT(samples.position.size(), 30000u);
  EXPECT_GE(min_pair_distance(samples.position, s), s);
  EXPECT_LT(largest_gap(random_surface_points(m, 200000, 9), samples.position, 2 * s), s);
}

TEST(PoissonDisk, SmallAndDisconnectedPieces) {
  // A triangle much smaller than the spacing: exactly one sample. Two far-apart tiny triangles:
  // one each (the gap search finds pieces that no candidate hit).
  TriangleMesh m;
  m.vertices = {{0, 0, 0}, {0.01, 0, 0}, {0, 0.01, 0}, {5, 5, 5}, {5.001, 5, 5}, {5, 5.001, 5}};
  m.triangles = {{0, 1, 2}};
  EXPECT_EQ(poisson_disk_samples(m, 1.0).position.size(), 1u);
  m.triangles.push_back({3, 4, 5});
  EXPECT_EQ(poisson_disk_samples(m, 1.0).position.size(), 2u);
}

TEST(PoissonDisk, RejectsBadArguments) {
  const TriangleMesh m = sphere_mesh(1, 0.5);
  EXPECT_THROW(poisson_disk_samples(m, 0), std::invalid_argument);
  EXPECT_THROW(poisson_disk_samples(m, -1), std::invalid_argument);
  EXPECT_THROW(poisson_disk_samples(m, std::nan("")), std::invalid_argument);
  EXPECT_THROW(poisson_disk_samples(TriangleMesh{}, 0.1), std::invalid_argument);
  EXPECT_THROW(poisson_disk_samples(m, 1e-6), std::invalid_argument);  // ~1e13 samples
}

// --- 2D curves ------------------------------------------------------------------------------------

TEST(Curve, CircleSamples) {
  const double cx = 3, cy = -2, r = 10, s = 0.7;
  const SurfaceSamples c = circle_samples(cx, cy, r, s);
  const std::size_t n = c.position.size();
  EXPECT_EQ(n, std::size_t(std::ceil(2 * pi * r / s)));
  EXPECT_DOUBLE_EQ(c.area, 2 * pi * r);
  EXPECT_LE(c.weight(), s);  // arc length per sample
  const double chord = 2 * r * std::sin(pi / double(n));
  for (std::size_t k = 0; k < n; ++k) {
    const Vec3& p = c.position[k];
    EXPECT_NEAR(std::hypot(p[0] - cx, p[1] - cy), r, 1e-12 * r);
    EXPECT_EQ(p[2], 0);
    EXPECT_NEAR(distance(p, c.position[(k + 1) % n]), chord, 1e-12 * r);
  }
  EXPECT_NEAR(c.position[0][0], cx + r, 1e-12);  // first at angle 0, counter-clockwise
  EXPECT_GT(c.position[1][1], cy);
  EXPECT_EQ(circle_samples(0, 0, 1e-3, 1).position.size(), 3u);
  EXPECT_THROW(circle_samples(0, 0, 0, 1), std::invalid_argument);
  EXPECT_THROW(circle_samples(0, 0, 1, 0), std::invalid_argument);
}

TEST(Curve, RectangleSamples) {
  const double s = 0.3;
  const SurfaceSamples rect = rectangle_samples(2, 1, -1, 2.5, s);  // corners in any order
  // Sides 3 (10 segments) and 1.5 (5 segments).
  ASSERT_EQ(rect.position.size(), 2u * (10 + 5));
  EXPECT_DOUBLE_EQ(rect.area, 2 * (3 + 1.5));
  for (const Vec3& corner : {Vec3{-1, 1, 0}, Vec3{2, 1, 0}, Vec3{2, 2.5, 0}, Vec3{-1, 2.5, 0}})
    EXPECT_EQ(std::count(rect.position.begin(), rect.position.end(), corner), 1) << corner[0] << " " << corner[1];
  EXPECT_EQ(rect.position[0], (Vec3{-1, 1, 0}));
  const std::size_t n = rect.position.size();
  for (std::size_t k = 0; k < n; ++k) {
    const Vec3& p = rect.position[k];
    const bool on_x = std::abs(p[0] + 1) < 1e-12 || std::abs(p[0] - 2) < 1e-12;
    const bool on_y = std::abs(p[1] - 1) < 1e-12 || std::abs(p[1] - 2.5) < 1e-12;
    EXPECT_TRUE(on_x || on_y);
    const double step = distance(p, rect.position[(k + 1) % n]);
    EXPECT_LE(step, s + 1e-12);
    EXPECT_GT(step, 0.5 * s);
  }
  EXPECT_THROW(rectangle_samples(0, 0, 0, 1, 0.1), std::invalid_argument);
}

// --- block + Morton order -------------------------------------------------------------------------

TEST(BlockMortonOrder, HandCheckedExample) {
  // block 2 from (0, 0, 0): blocks (0,0) = 0, (1,0) = 1, (0,1) = 2 (x fastest). Inside block 0,
  // Z order of the quadrants: (lo x, lo y), (hi x, lo y), (lo x, hi y), (hi x, hi y).
  std::vector<Vec3> p = {{2.5, 0.5, 0}, {0.5, 2.5, 0}, {1.5, 1.5, 0}, {0.5, 0.5, 0},
                         {3.5, 1.5, 0}, {1.5, 0.5, 0}, {0.5, 1.5, 0}};
  const std::vector<std::size_t> want = {3, 5, 6, 2, 0, 4, 1};
  EXPECT_EQ(block_morton_order(p, 2), want);
  // Moved by whole cells (negative coordinates, floor): the same order.
  for (auto& q : p) q = {q[0] - 7, q[1] - 5, q[2] + 3};
  EXPECT_EQ(block_morton_order(p, 2), want);
  // Block 1: seven blocks of one point, x fastest then y.
  EXPECT_EQ(block_morton_order(p, 1), (std::vector<std::size_t>{3, 5, 0, 6, 2, 4, 1}));
  // Ties keep their order.
  EXPECT_EQ(block_morton_order({{1, 1, 1}, {0, 0, 0}, {1, 1, 1}, {0, 0, 0}}, 4), (std::vector<std::size_t>{1, 3, 0, 2}));
  EXPECT_TRUE(block_morton_order({}, 3).empty());
  EXPECT_THROW(block_morton_order(p, 0), std::invalid_argument);
}

std::uint64_t interleave(std::uint64_t x, std::uint64_t y, std::uint64_t z) {
  std::uint64_t m = 0;
  for (int b = 0; b < 10; ++b) m |= ((x >> b) & 1) << (3 * b) | ((y >> b) & 1) << (3 * b + 1) | ((z >> b) & 1) << (3 * b + 2);
  return m;
}

TEST(BlockMortonOrder, BlocksThenMortonCodes) {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(-3.7, 20.2);
  std::vector<Vec3> p(5000);
  for (auto& q : p) q = {u(rng), u(rng), u(rng)};
  const int block = 4;
  const auto order = block_morton_order(p, block);
  std::vector<std::size_t> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::size_t> identity(p.size());
  std::iota(identity.begin(), identity.end(), std::size_t(0));
  ASSERT_EQ(sorted, identity);  // a permutation
  // Reference keys, computed here: blocks from floor(min), x fastest; 10-bit Morton codes.
  Vec3 lo{1e300, 1e300, 1e300}, hi{-1e300, -1e300, -1e300};
  for (const auto& q : p)
    for (int d = 0; d < 3; ++d) {
      lo[d] = std::min(lo[d], q[d]);
      hi[d] = std::max(hi[d], q[d]);
    }
  std::uint64_t blocks[3];
  for (int d = 0; d < 3; ++d) blocks[d] = std::uint64_t(std::floor((hi[d] - std::floor(lo[d])) / block)) + 1;
  std::uint64_t previous_block = 0, previous_code = 0;
  for (std::size_t i = 0; i < order.size(); ++i) {
    const Vec3& q = p[order[i]];
    std::uint64_t b[3], c[3];
    for (int d = 0; d < 3; ++d) {
      const double x = (q[d] - std::floor(lo[d])) / block;
      b[d] = std::uint64_t(std::floor(x));
      c[d] = std::min<std::uint64_t>(1023, std::uint64_t((x - double(b[d])) * 1024));
    }
    const std::uint64_t id = b[0] + blocks[0] * (b[1] + blocks[1] * b[2]), code = interleave(c[0], c[1], c[2]);
    ASSERT_GE(id, previous_block) << i;
    if (i > 0 && id == previous_block) {
      ASSERT_GE(code, previous_code) << i;
    }
    previous_block = id;
    previous_code = code;
  }
  // apply_order puts the samples in that order.
  SurfaceSamples s;
  s.position = p;
  apply_order(s, order);
  for (std::size_t i = 0; i < p.size(); ++i) ASSERT_EQ(s.position[i], p[order[i]]);
}

TEST(BlockMortonOrder, ApplyOrderRejectsNonPermutations) {
  SurfaceSamples s;
  s.position = {{0, 0, 0}, {1, 0, 0}, {2, 0, 0}};
  EXPECT_THROW(apply_order(s, {0, 1}), std::invalid_argument);
  EXPECT_THROW(apply_order(s, {0, 1, 1}), std::invalid_argument);
  EXPECT_THROW(apply_order(s, {0, 1, 3}), std::invalid_argument);
  apply_order(s, {2, 0, 1});
  EXPECT_EQ(s.position, (std::vector<Vec3>{{2, 0, 0}, {0, 0, 0}, {1, 0, 0}}));
}

TEST(BlockMortonOrder, OrderedSamplesOfASphere) {
  // The use in a run: Poisson-disk samples in lattice units, ordered by blocks of 8 cells.
  TriangleMesh m = sphere_mesh(20, 2);
  place(m, Placement{1, {0, 0, 0}, {32.3, 31.7, 30.2}});
  SurfaceSamples s = poisson_disk_samples(m, 1.0, 2);
  auto mean_step = [](const std::vector<Vec3>& p) {
    double steps = 0;
    for (std::size_t i = 1; i < p.size(); ++i) steps += distance(p[i], p[i - 1]);
    return steps / double(p.size() - 1);
  };
  const double unordered = mean_step(s.position);
  const auto order = block_morton_order(s.position, 8);
  std::vector<Vec3> before = s.position;
  apply_order(s, order);
  std::sort(before.begin(), before.end());
  std::vector<Vec3> after = s.position;
  std::sort(after.begin(), after.end());
  EXPECT_EQ(before, after);
  // Consecutive samples are near each other: the mean step is about 2 spacings (measured 2.2),
  // against 8 in the sampler's order and 27 for a random order on this sphere.
  EXPECT_LT(mean_step(s.position), 3.0);
  EXPECT_LT(mean_step(s.position), 0.5 * unordered);
}

}  // namespace
