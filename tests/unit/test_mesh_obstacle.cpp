// SPDX-License-Identifier: Apache-2.0
// Obstacles from triangle meshes (geometry/MeshShape.hpp): which points a closed mesh holds (the
// voxelizer's ray rule, at any point), where a link first crosses it (interpolated walls), the
// [[obstacle]] type = "mesh" deck keys with their errors, and a mesh sphere in the solver beside
// the analytic one.
#include <kolibri/geometry/MeshShape.hpp>
#include <kolibri/geometry/SolidImage.hpp>
#include <kolibri/io/Deck.hpp>
#include <kolibri/lattice/Lattice.hpp>
#include <kolibri/solver/Solver.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
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

/// A sphere of radius 5 at rest in a periodic box driven by a body force along x: the mesh
/// sphere (`mesh`) or the analytic one, interpolated walls; the force on the obstacle after
/// `steps` steps.
double drag(bool mesh, std::int64_t steps) {
  SolverConfig c = test::periodic_box(LatticeKind::D3Q19, 20, 20, 20, 0.8);
  c.force = {1e-6, 0, 0};
  Obstacle o;
  o.wall = Obstacle::Wall::Interpolated;
  o.center = {10.2, 9.9, 10.1};
  if (mesh) {
    o.shape = Obstacle::Shape::Mesh;
    TriangleMesh m = sphere_mesh(5.0, 0.3);
    Placement p;
    p.position = o.center;
    place(m, p);
    o.mesh = std::make_shared<const MeshShape>(std::move(m));
  } else {
    o.shape = Obstacle::Shape::Sphere;
    o.radius = 5.0;
  }
  c.obstacles = {o};
  auto s = make_solver(c);
  s->step(steps);
  return s->obstacle_loads()[0].force[0];
}

// The mesh's walls sit where the sphere's do, to the chord's depth (0.3^2 / 30 = 0.003 cells):
// the drag is the analytic sphere's within that depth's share of the radius, twice over (the
// drag of a sphere in a periodic array grows about as R^2 at this solid fraction).
TEST(MeshObstacle, ASphereMeshDragsAsTheSphere) {
  const double a = drag(false, 400), m = drag(true, 400);
  RecordProperty("drag", std::to_string(a) + " " + std::to_string(m));
  EXPECT_GT(a, 0.0);
  EXPECT_NEAR(m / a, 1.0, 2.0 * 0.003 / 5.0 * 2.0);
}

}  // namespace
