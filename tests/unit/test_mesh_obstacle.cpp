// SPDX-License-Identifier: Apache-2.0
// Obstacles from triangle meshes (geometry/MeshShape.hpp): which points a closed mesh holds (the
// voxelizer's ray rule, at any point), where a link first crosses it (interpolated walls), the
// [[obstacle]] type = "mesh" deck keys with their errors, and the checkpoint signature. The
// solver's walls from a mesh: tests/validation/test_curved_walls.cpp (circular Couette flow).
#include <kolibri/geometry/MeshShape.hpp>
#include <kolibri/geometry/SolidImage.hpp>
#include <kolibri/io/Deck.hpp>
#include <kolibri/lattice/Lattice.hpp>
#include <kolibri/solver/Solver.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <optional>
#include <random>
#include <string>

#include "Helpers.hpp"
#include "TestFiles.hpp"

namespace {
using namespace kolibri;

constexpr double kRadius = 6.3;
const Vec3 kCentre{10.37, 9.81, 10.12};  // off the cells' symmetry

/// A sphere mesh of kRadius about kCentre, triangle edges at most `edge` cells.
TriangleMesh placed_sphere(double edge) {
  TriangleMesh m = sphere_mesh(kRadius, edge);
  Placement p;
  p.position = kCentre;
  place(m, p);
  return m;
}

/// How far a sphere mesh with edges of at most `edge` lies inside its sphere: a triangle's
/// circumradius is at most edge / sqrt(3), so its plane is at most edge^2 / (6 R) below the
/// sphere (to first order).
double chord_depth(double edge) { return edge * edge / (6.0 * kRadius); }

TEST(MeshShape, HoldsTheVoxelizersCellCentres) {
  for (const TriangleMesh& m : {placed_sphere(0.9), [] {
                                  TriangleMesh t = torus_mesh(6.0, 2.5, 1, 0.8);
                                  Placement p;
                                  p.rotation_deg = {20, 35, 0};
                                  p.position = kCentre;
                                  place(t, p);
                                  return t;
                                }()}) {
    const std::array<int, 3> n{21, 20, 22};
    const auto voxels = voxelize(m, n);
    const MeshShape shape(m);
    std::int64_t inside = 0;
    for (int z = 0; z < n[2]; ++z)
      for (int y = 0; y < n[1]; ++y)
        for (int x = 0; x < n[0]; ++x) {
          const bool want = voxels[std::size_t(x + n[0] * (y + n[1] * z))] != 0;
          ASSERT_EQ(shape.inside({x + 0.5, y + 0.5, z + 0.5}), want) << x << " " << y << " " << z;
          inside += want;
        }
    EXPECT_GT(inside, 100);
  }
}

TEST(MeshShape, HoldsThePointsOfItsSphereAwayFromTheSurface) {
  const double edge = 0.9;
  const MeshShape shape(placed_sphere(edge));
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> at(2.0, 19.0);
  int checked = 0;
  for (int i = 0; i < 20000; ++i) {
    const Vec3 p{at(rng), at(rng), at(rng)};
    const double r = std::hypot(p[0] - kCentre[0], p[1] - kCentre[1], p[2] - kCentre[2]);
    if (r > kRadius - chord_depth(edge) && r < kRadius) continue;  // between the chords and sphere
    ASSERT_EQ(shape.inside(p), r < kRadius) << p[0] << " " << p[1] << " " << p[2];
    ++checked;
  }
  EXPECT_GT(checked, 19000);
}

// Every link of D3Q27 from a cell outside the sphere to one inside the mesh crosses the mesh
// where it crosses the sphere, within the chord's depth along the link (links within 60 degrees of
// the surface normal: a grazing link stretches the depth without bound).
TEST(MeshShape, FirstCrossingIsTheSpheresWithinTheChordDepth) {
  const double edge = 0.5;
  const MeshShape shape(placed_sphere(edge));
  Obstacle sphere;
  sphere.shape = Obstacle::Shape::Sphere;
  sphere.center = kCentre, sphere.radius = kRadius;
  int links = 0;
  double worst = 0.0;
  for (int z = 0; z < 21; ++z)
    for (int y = 0; y < 21; ++y)
      for (int x = 0; x < 21; ++x) {
        const Vec3 b{x + 0.5, y + 0.5, z + 0.5};
        if (!shape.inside(b)) continue;
        for (int q = 1; q < D3Q27::Q; ++q) {
          const Vec3 a{b[0] - D3Q27::c(q, 0), b[1] - D3Q27::c(q, 1), b[2] - D3Q27::c(q, 2)};
          if (shape.inside(a) || covers_point(sphere, a)) continue;  // a fluid cell of both
          const auto t = shape.first_crossing(a, b);
          ASSERT_TRUE(t) << "no crossing from a fluid cell into a solid one";
          const double len =
              std::sqrt(double(D3Q27::c(q, 0) * D3Q27::c(q, 0) + D3Q27::c(q, 1) * D3Q27::c(q, 1) +
                               D3Q27::c(q, 2) * D3Q27::c(q, 2)));
          Vec3 mid;
          for (int k = 0; k < 3; ++k)
            mid[std::size_t(k)] = a[std::size_t(k)] + *t * (b[std::size_t(k)] - a[std::size_t(k)]);
          double cosine = 0.0;
          for (int k = 0; k < 3; ++k)
            cosine += (mid[std::size_t(k)] - kCentre[std::size_t(k)]) / kRadius *
                      (a[std::size_t(k)] - b[std::size_t(k)]) / len;
          if (cosine < 0.5) continue;
          const double error = std::fabs(*t - wall_crossing(sphere, a, b)) * len;
          worst = std::max(worst, error);
          EXPECT_LE(error, chord_depth(edge) / cosine) << x << " " << y << " " << z << " q " << q;
          ++links;
        }
      }
  RecordProperty("worst_cells", std::to_string(worst));
  EXPECT_GT(links, 1000);
}

TEST(MeshShape, ASegmentThatMissesHasNoCrossing) {
  const MeshShape shape(placed_sphere(0.9));
  EXPECT_FALSE(shape.first_crossing({0.5, 0.5, 0.5}, {1.5, 1.5, 1.5}));
  EXPECT_FALSE(shape.first_crossing(kCentre, {kCentre[0] + 1, kCentre[1], kCentre[2]}));
}

/// A deck with one mesh obstacle in a 24 x 20 x 20 box; `keys` are the obstacle's lines.
std::string mesh_deck(const std::string& keys) {
  return "[model]\nlattice = \"D3Q19\"\n[domain]\nnx = 24\nny = 20\nnz = 20\n[physics]\ntau = 0.8\n"
         "[[obstacle]]\nname = \"part\"\ntype = \"mesh\"\n" +
         keys;
}

/// The deck's error message ("" when it parses).
std::string deck_error(const test::ScratchDir& s, const std::string& text) {
  try {
    parse_deck(text, s.path("case.toml"));
  } catch (const DeckError& e) {
    return e.what();
  }
  return "";
}

TEST(MeshObstacle, PlacedByScaleRotationAndCentreFromTheDeck) {
  test::ScratchDir s;
  s.write("brick.stl", test::ascii_stl(box_mesh({2.0, 1.0, 1.0}, 1.0)));  // 2 x 1 x 1 units
  const auto c = parse_deck(mesh_deck("file = \"brick.stl\"\nscale = 4\nrotation = [0, 0, 90]\n"
                                      "center = [12, 10, 10]\n"),
                            s.path("case.toml"));
  ASSERT_EQ(c.solver.obstacles.size(), 1u);
  const Obstacle& o = c.solver.obstacles[0];
  ASSERT_TRUE(o.mesh);
  // Turned a quarter about z: 4 cells along x, 8 along y, 4 along z, about (12, 10, 10).
  const auto box = o.mesh->bounds();
  const Vec3 lo{10, 6, 8}, hi{14, 14, 12};
  for (int d = 0; d < 3; ++d) {
    EXPECT_NEAR(box[0][std::size_t(d)], lo[std::size_t(d)], 1e-9) << d;
    EXPECT_NEAR(box[1][std::size_t(d)], hi[std::size_t(d)], 1e-9) << d;
  }
  int solid = 0;
  for (int z = 0; z < 20; ++z)
    for (int y = 0; y < 20; ++y)
      for (int x = 0; x < 24; ++x) solid += covers(o, x, y, z);
  EXPECT_EQ(solid, 4 * 8 * 4);
  EXPECT_TRUE(covers(o, 10, 6, 8));
  EXPECT_FALSE(covers(o, 9, 6, 8));
}

TEST(MeshObstacle, BadInputNamesTheKeyAndTheFile) {
  test::ScratchDir s;
  TriangleMesh open = box_mesh({4.0, 4.0, 4.0}, 4.0);
  open.triangles.pop_back();
  s.write("open.stl", test::ascii_stl(open));
  s.write("box.stl", test::ascii_stl(box_mesh({4.0, 4.0, 4.0}, 4.0)));
  const std::string centre = "center = [12, 10, 10]\n";
  std::string m = deck_error(s, mesh_deck(centre));
  EXPECT_NE(m.find("'obstacle[0].file': missing"), std::string::npos) << m;
  m = deck_error(s, mesh_deck("file = \"nowhere.stl\"\n" + centre));
  EXPECT_NE(m.find("obstacle[0].file"), std::string::npos) << m;
  EXPECT_NE(m.find("nowhere.stl"), std::string::npos) << m;
  m = deck_error(s, mesh_deck("file = \"open.stl\"\n" + centre));
  EXPECT_NE(m.find("obstacle[0].file"), std::string::npos) << m;
  EXPECT_NE(m.find("open.stl: the mesh is not closed"), std::string::npos) << m;
  m = deck_error(s, mesh_deck("file = \"box.stl\"\n"));
  EXPECT_NE(m.find("'obstacle[0].center': missing"), std::string::npos) << m;
  m = deck_error(s, mesh_deck("file = \"box.stl\"\nscale = -1\n" + centre));
  EXPECT_NE(m.find("obstacle[0].scale"), std::string::npos) << m;
  m = deck_error(s, mesh_deck("file = \"box.stl\"\nradius = 3\n" + centre));
  EXPECT_NE(m.find("obstacle[0].radius"), std::string::npos) << m;
  m = deck_error(s, mesh_deck("file = \"box.stl\"\nangular_velocity = [0, 0, 0.01]\n" + centre));
  EXPECT_NE(m.find("a mesh cannot rotate in place"), std::string::npos) << m;
  EXPECT_EQ(deck_error(s, mesh_deck("file = \"box.stl\"\n" + centre)), "");
}

/// The first crossing of segment a-b with any of the mesh's triangles, tried one by one
/// (Moller & Trumbore, inclusive edges): what the binned search must find.
std::optional<double> brute_force_crossing(const TriangleMesh& m, const Vec3& a, const Vec3& b) {
  auto sub = [](const Vec3& p, const Vec3& q) {
    return Vec3{p[0] - q[0], p[1] - q[1], p[2] - q[2]};
  };
  auto crs = [](const Vec3& p, const Vec3& q) {
    return Vec3{p[1] * q[2] - p[2] * q[1], p[2] * q[0] - p[0] * q[2], p[0] * q[1] - p[1] * q[0]};
  };
  auto dt = [](const Vec3& p, const Vec3& q) { return p[0] * q[0] + p[1] * q[1] + p[2] * q[2]; };
  std::optional<double> first;
  const Vec3 d = sub(b, a);
  for (const auto& t : m.triangles) {
    const Vec3& v0 = m.vertices[std::size_t(t[0])];
    const Vec3 e1 = sub(m.vertices[std::size_t(t[1])], v0),
               e2 = sub(m.vertices[std::size_t(t[2])], v0);
    const Vec3 pv = crs(d, e2);
    const double det = dt(e1, pv);
    if (det == 0.0) continue;
    const Vec3 tv = sub(a, v0), qv = crs(tv, e1);
    const double u = dt(tv, pv) / det, v = dt(d, qv) / det, s = dt(e2, qv) / det;
    if (u < 0 || u > 1 || v < 0 || u + v > 1 || s <= 0 || s > 1) continue;
    if (!first || s < *first) first = s;
  }
  return first;
}

// A box of large triangles (two a face) turned about all three axes: each triangle spans many
// cells at a slant, which the cell bins must hold exactly where it passes (the separating axis
// tests). Random links around its surface find the crossing the brute-force search finds.
TEST(MeshShape, FirstCrossingOfLargeSlantedTrianglesMatchesTheBruteForceSearch) {
  TriangleMesh m = box_mesh({13.0, 7.0, 9.0}, 100.0);
  Placement p;
  p.rotation_deg = {31, 47, 59};
  p.position = kCentre;
  place(m, p);
  ASSERT_LE(m.triangles.size(), 12u);
  const MeshShape shape(m);
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> at(0.0, 21.0), step(-1.0, 1.0);
  int crossed = 0;
  for (int i = 0; i < 20000; ++i) {
    const Vec3 a{at(rng), at(rng), at(rng)};
    const Vec3 b{a[0] + step(rng), a[1] + step(rng), a[2] + step(rng)};
    const auto want = brute_force_crossing(m, a, b);
    const auto got = shape.first_crossing(a, b);
    ASSERT_EQ(bool(got), bool(want)) << a[0] << " " << a[1] << " " << a[2];
    if (!want) continue;
    EXPECT_NEAR(*got, std::max(*want, 1e-6), 1e-12);
    ++crossed;
  }
  EXPECT_GT(crossed, 500);
}

// A box whose faces lie on planes of cell centres (21 cells long about x = 32: faces at 21.5
// and 42.5). Which side a centre on a face falls on is the rounding of its crossing's x; either
// way the wall of every link across the face sits where the face is: a centre on it that is
// fluid has its links into the box start on the wall (d nearly 0, not 1), one that is solid is
// reached by its fluid neighbour's link at its far end (d = 1).
TEST(MeshShape, LinksAcrossAFaceThroughCellCentresFindTheFace) {
  TriangleMesh m = box_mesh({21.0, 9.0, 9.0}, 3.0);
  Placement p;
  p.position = {32.0, 10.3, 10.7};
  place(m, p);
  Obstacle o;
  o.shape = Obstacle::Shape::Mesh;
  o.wall = Obstacle::Wall::Interpolated;
  o.mesh = std::make_shared<const MeshShape>(std::move(m));
  int fluid_on_face = 0, solid_on_face = 0;
  for (int z = 7; z <= 14; ++z)
    for (int y = 6; y <= 14; ++y)
      for (const int face : {21, 42}) {       // centres at x = 21.5 and 42.5
        const int out = face == 21 ? -1 : 1;  // towards the fluid outside
        ASSERT_TRUE(covers(o, face - out, y, z)) << "one cell in from the face is solid";
        ASSERT_FALSE(covers(o, face + out, y, z)) << "one cell out from the face is fluid";
        const std::array<double, 3> on{face + 0.5, y + 0.5, z + 0.5};
        if (!covers(o, face, y, z)) {
          ++fluid_on_face;
          const double d = wall_crossing(o, on, {on[0] - out, on[1], on[2]});
          EXPECT_GT(d, 0.0);
          EXPECT_LE(d, 1e-6) << face << " " << y << " " << z;
        } else {
          ++solid_on_face;
          EXPECT_NEAR(wall_crossing(o, {on[0] + out, on[1], on[2]}, on), 1.0, 1e-9)
              << face << " " << y << " " << z;
        }
      }
  RecordProperty("fluid_and_solid_centres_on_faces",
                 std::to_string(fluid_on_face) + " " + std::to_string(solid_on_face));
  EXPECT_EQ(fluid_on_face + solid_on_face, 2 * 8 * 9);
}

TEST(MeshShape, AMeshTooLargeForItsScaleIsRefusedNamingTheScale) {
  try {
    MeshShape shape(sphere_mesh(2e6, 1e6));
    FAIL() << "no error";
  } catch (const GeometryError& e) {
    EXPECT_EQ(e.key, "scale");
    EXPECT_NE(std::string(e.what()).find("more than 1e6 along an axis"), std::string::npos)
        << e.what();
  }
}

// A checkpoint's signature holds the placed mesh: another mesh, scale or centre is another run.
TEST(MeshObstacle, TheSignatureHoldsThePlacedMesh) {
  SolverConfig c = test::periodic_box(LatticeKind::D3Q19, 20, 20, 20, 0.8);
  Obstacle o;
  o.shape = Obstacle::Shape::Mesh;
  o.center = kCentre;
  o.mesh = std::make_shared<const MeshShape>(placed_sphere(0.9));
  c.obstacles = {o};
  const std::string one = solver_signature(c);
  c.obstacles[0].mesh = std::make_shared<const MeshShape>(placed_sphere(0.8));
  EXPECT_NE(solver_signature(c), one);
  c.obstacles[0].mesh = std::make_shared<const MeshShape>(placed_sphere(0.9));
  EXPECT_EQ(solver_signature(c), one);
}

}  // namespace
