// SPDX-License-Identifier: Apache-2.0
// Porous samples and sparse geometries: voxel images and random sphere arrays as solid cells
// (geometry/SolidImage.hpp), their tiles and tomczak2018's overhead model (grid/TileModel.hpp),
// the [geometry] deck section with its errors, and the solver's flags and momentum on them.
#include <kolibri/geometry/SolidImage.hpp>
#include <kolibri/grid/TileModel.hpp>
#include <kolibri/io/Deck.hpp>
#include <kolibri/lattice/Lattice.hpp>
#include <kolibri/parallel/Decomposition.hpp>
#include <kolibri/parallel/Halo.hpp>
#include <kolibri/solver/Solver.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <numeric>

#include "TestFiles.hpp"

namespace {
using namespace kolibri;

using Scratch = test::ScratchDir;

std::int64_t fluid_of(const std::vector<std::uint8_t>& solid) {
  return std::int64_t(std::count(solid.begin(), solid.end(), std::uint8_t(0)));
}

TEST(VoxelImage, PlacedAtItsOffsetWithItsSolidValues) {
  Scratch s;
  // 3 x 2 x 2 voxels, values 0..11 (x fastest)
  std::vector<std::uint8_t> image(12);
  std::iota(image.begin(), image.end(), std::uint8_t(0));
  SolidGeometry g;
  g.kind = SolidGeometry::Kind::Voxels;
  g.file = s.write("a.raw", image);
  g.size = {3, 2, 2};
  g.offset = {1, 0, 2};
  const std::array<int, 3> n{5, 3, 4};
  const auto any_nonzero = read_voxel_image(g, n);
  g.solid_values = {3, 7};
  const auto listed = read_voxel_image(g, n);
  for (int z = 0; z < n[2]; ++z)
    for (int y = 0; y < n[1]; ++y)
      for (int x = 0; x < n[0]; ++x) {
        const std::size_t c = std::size_t(x + n[0] * (y + n[1] * z));
        const int ix = x - 1, iy = y, iz = z - 2;
        const bool in = ix >= 0 && ix < 3 && iy >= 0 && iy < 2 && iz >= 0 && iz < 2;
        const int v = in ? ix + 3 * (iy + 2 * iz) : -1;
        EXPECT_EQ(any_nonzero[c], v > 0 ? 1 : 0) << x << " " << y << " " << z;
        EXPECT_EQ(listed[c], v == 3 || v == 7 ? 1 : 0) << x << " " << y << " " << z;
      }
}

TEST(VoxelImage, AFileOfTheWrongSizeIsRefusedWithBothSizes) {
  Scratch s;
  SolidGeometry g;
  g.kind = SolidGeometry::Kind::Voxels;
  g.file = s.write("short.raw", std::vector<std::uint8_t>(11, 0));
  g.size = {3, 2, 2};
  try {
    read_voxel_image(g, {3, 2, 2});
    FAIL() << "no error";
  } catch (const GeometryError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("short.raw holds 11 bytes"), std::string::npos) << m;
    EXPECT_NE(m.find("needs 12"), std::string::npos) << m;
  }
  g.file = (s.dir() / "missing.raw").string();
  EXPECT_THROW(read_voxel_image(g, {3, 2, 2}), GeometryError);
}

SolidGeometry spheres(double diameter, double porosity, std::uint64_t seed) {
  SolidGeometry g;
  g.kind = SolidGeometry::Kind::RandomSpheres;
  g.diameter = diameter, g.porosity = porosity, g.seed = seed;
  return g;
}

TEST(RandomSpheres, ReachTheirPorosityFromTheSeedAlone) {
  const std::array<int, 3> n{40, 32, 24};
  const std::int64_t cells = 40 * 32 * 24;
  for (double porosity : {0.9, 0.5, 0.1}) {
    std::int64_t count = 0, again = 0;
    const auto a = random_spheres(spheres(8, porosity, 7), n, {true, true, true}, 3, count);
    const auto b = random_spheres(spheres(8, porosity, 7), n, {true, true, true}, 3, again);
    EXPECT_EQ(a, b);
    EXPECT_EQ(count, again);
    // At most the target, and short of it by less than one sphere's cells (8^3 pi / 6 < 300).
    const std::int64_t fluid = fluid_of(a);
    EXPECT_LE(fluid, std::int64_t(porosity * double(cells)));
    EXPECT_GT(fluid, std::int64_t(porosity * double(cells)) - 300);
    std::int64_t other = 0;
    EXPECT_NE(random_spheres(spheres(8, porosity, 8), n, {true, true, true}, 3, other), a);
  }
}

TEST(RandomSpheres, WrapAcrossPeriodicAxesAndStopAtBoundedOnes) {
  // One sphere of diameter 30 in a box of 32 on every axis reaches past some face from any
  // centre: whole through the wrap, cut where the faces are bounded (the same centre: one seed).
  const std::array<int, 3> n{32, 32, 32};
  std::int64_t count = 0;
  const auto g = spheres(30, 0.999, 3);
  const auto wrapped = random_spheres(g, n, {true, true, true}, 3, count);
  ASSERT_EQ(count, 1);
  auto solid_cells = [](const std::vector<std::uint8_t>& s) {
    return std::int64_t(s.size()) - fluid_of(s);
  };
  const auto cut = random_spheres(g, n, {false, false, false}, 3, count);
  ASSERT_EQ(count, 1);
  // The whole sphere with the wrap (4/3 pi 15^3 cells, within the cells the surface cuts: a
  // fraction 3 sqrt(3) / (2 R) of the volume at most); a part without.
  EXPECT_NEAR(double(solid_cells(wrapped)) / (4.0 / 3.0 * M_PI * 15 * 15 * 15), 1.0,
              1.5 * std::sqrt(3.0) / 15);
  EXPECT_LT(solid_cells(cut), solid_cells(wrapped));
}

TEST(RandomSpheres, AreDiscsIn2D) {
  const std::array<int, 3> n{64, 48, 1};
  std::int64_t count = 0;
  const auto s = random_spheres(spheres(6, 0.6, 1), n, {true, true, true}, 2, count);
  EXPECT_LE(fluid_of(s), std::int64_t(0.6 * 64 * 48));
  EXPECT_GT(fluid_of(s), std::int64_t(0.6 * 64 * 48) - 40);  // a disc: 9 pi < 30 cells
}

/// Where a mesh of cell coordinates must put cells: inside (distance from the surface below
/// -margin: solid), outside (above 0: fluid); between them either.
template <class Distance>
void expect_voxels_match(const std::vector<std::uint8_t>& solid, const std::array<int, 3>& n,
                         double margin, Distance signed_distance) {
  std::int64_t wrong = 0;
  for (int z = 0; z < n[2]; ++z)
    for (int y = 0; y < n[1]; ++y)
      for (int x = 0; x < n[0]; ++x) {
        const double d = signed_distance(x + 0.5, y + 0.5, z + 0.5);
        const bool s = solid[std::size_t(x + n[0] * (y + n[1] * z))] != 0;
        if ((d < -margin && !s) || (d > 0 && s)) ++wrong;
      }
  EXPECT_EQ(wrong, 0) << "cells on the wrong side of the surface";
}

std::int64_t solid_count(const std::vector<std::uint8_t>& s) {
  return std::int64_t(s.size()) - fluid_of(s);
}

// A sphere and a torus, meshed finely and placed off the lattice's symmetry: every cell centre
// deeper inside than the mesh's chord error is solid, none outside is (no ray leaks through a
// seam), and the cell count's error stays within the layer of cells the surface cuts (a
// fraction that goes to zero as the radius grows).
TEST(Voxelize, SphereAndTorusMeshesFillTheirInsideAndConverge) {
  for (double R : {6.0, 12.0, 24.0}) {
    const int e = int(2 * R) + 6;
    const std::array<int, 3> n{e, e, e};
    const double h = 0.5;  // edge length: the chord error is below h^2 / (4 R)
    TriangleMesh m = sphere_mesh(R, h);
    Placement at;
    at.position = {0.5 * e + 0.123, 0.5 * e - 0.311, 0.5 * e + 0.077};
    place(m, at);
    const auto solid = voxelize(m, n);
    expect_voxels_match(solid, n, h * h / (4 * R), [&](double x, double y, double z) {
      return std::hypot(x - at.position[0], y - at.position[1], z - at.position[2]) - R;
    });
    // The count errs by at most the cells whose centres lie within half a cell diagonal of the
    // surface: a fraction 3 sqrt(3) / (2 R) of the volume, which goes to zero.
    const double error = std::fabs(double(solid_count(solid)) / (4.0 / 3.0 * M_PI * R * R * R) - 1);
    RecordProperty("sphere_R" + std::to_string(int(R)), std::to_string(error));
    EXPECT_LT(error, 1.5 * std::sqrt(3.0) / R) << "R " << R;
  }
  const double major = 16, minor = 6;
  TriangleMesh torus = torus_mesh(major, minor, 2, 0.5);
  Placement at;
  at.position = {24.37, 23.81, 12.29};
  place(torus, at);
  const std::array<int, 3> n{48, 48, 24};
  const auto solid = voxelize(torus, n);
  expect_voxels_match(
      solid, n, 0.25 * 0.25 / minor + 0.25 * 0.25 / major, [&](double x, double y, double z) {
        const double ring = std::hypot(x - at.position[0], y - at.position[1]) - major;
        return std::hypot(ring, z - at.position[2]) - minor;
      });
  // within the cut layer: 3 sqrt(3) / (2 minor) of the volume at most
  EXPECT_NEAR(double(solid_count(solid)) / (2 * M_PI * M_PI * major * minor * minor), 1.0,
              1.5 * std::sqrt(3.0) / minor);
}

// A box whose faces, edges and corners lie exactly on the rows of cell centres: the rays that
// graze an edge or pass through a vertex count one crossing per face they cross, so nothing
// outside the box turns solid (a leak fills the rest of its row).
TEST(Voxelize, RaysThroughEdgesAndVerticesDoNotLeak) {
  TriangleMesh box = box_mesh({5, 5, 5}, 5);  // two triangles a face
  Placement at;
  at.position = {5, 5, 5};  // the box spans 2.5 to 7.5: its faces pass through cell centres
  place(box, at);
  const std::array<int, 3> n{11, 10, 10};
  const auto solid = voxelize(box, n);
  for (int z = 0; z < 10; ++z)
    for (int y = 0; y < 10; ++y)
      for (int x = 0; x < 11; ++x) {
        const bool inner = x >= 3 && x <= 6 && y >= 3 && y <= 6 && z >= 3 && z <= 6;
        const bool outer = x < 2 || x > 7 || y < 2 || y > 7 || z < 2 || z > 7;
        const bool s = solid[std::size_t(x + 11 * (y + 10 * z))] != 0;
        if (inner) {
          EXPECT_TRUE(s) << x << " " << y << " " << z;
        }
        if (outer) {
          EXPECT_FALSE(s) << x << " " << y << " " << z;
        }
      }
}

// Two overlapping spheres in one mesh (a packed bed of touching particles): the winding number,
// not the parity, decides, so the lens where they overlap stays solid.
TEST(Voxelize, OverlappingShellsStaySolidWhereTheyOverlap) {
  TriangleMesh both = sphere_mesh(6, 0.5), second = sphere_mesh(6, 0.5);
  Placement a, b;
  a.position = {10.2, 10.1, 10.3};
  b.position = {17.7, 10.1, 10.3};  // centres 7.5 apart: a lens 4.5 cells thick
  place(both, a);
  place(second, b);
  const int offset = int(both.vertices.size());
  both.vertices.insert(both.vertices.end(), second.vertices.begin(), second.vertices.end());
  for (auto t : second.triangles)
    both.triangles.push_back({t[0] + offset, t[1] + offset, t[2] + offset});
  const std::array<int, 3> n{28, 21, 21};
  expect_voxels_match(voxelize(both, n), n, 0.5 * 0.5 / (4 * 6), [&](double x, double y, double z) {
    return std::min(std::hypot(x - a.position[0], y - a.position[1], z - a.position[2]),
                    std::hypot(x - b.position[0], y - b.position[1], z - b.position[2])) -
           6.0;
  });
}

/// The mesh as an ASCII STL file in the scratch directory.
std::string write_stl(const Scratch& s, const std::string& name, const TriangleMesh& m) {
  return s.write(name, test::ascii_stl(m));
}

TEST(Voxelize, AMeshWithAHoleIsRefusedWithWhereTheHoleIs) {
  Scratch s;
  TriangleMesh box = box_mesh({4, 4, 4}, 4);
  const std::string closed = write_stl(s, "closed.stl", box);
  EXPECT_NO_THROW(check_closed(read_mesh(closed), closed));
  const std::size_t edges = box.triangles.size() * 3 / 2;
  box.triangles.pop_back();
  const std::string open = write_stl(s, "open.stl", box);
  try {
    check_closed(read_mesh(open), open);
    FAIL() << "no error";
  } catch (const GeometryError& e) {
    const std::string m = e.what();
    EXPECT_NE(
        m.find("open.stl: the mesh is not closed: 3 of its " + std::to_string(edges) + " edges"),
        std::string::npos)
        << m;
    EXPECT_NE(m.find("in the file's coordinates"), std::string::npos) << m;
  }
  // From a deck: the key and the file.
  try {
    parse_deck(
        "[model]\nlattice = \"D3Q19\"\n[domain]\nnx = 8\nny = 8\nnz = 8\n[physics]\ntau = "
        "0.8\n[geometry]\ntype = \"mesh\"\nfile = \"open.stl\"\n",
        (s.dir() / "vessel.toml").string());
    FAIL() << "no error";
  } catch (const DeckError& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("geometry.file"), std::string::npos) << m;
    EXPECT_NE(m.find("not closed"), std::string::npos) << m;
  }
}

// The bench's vessel: fluid in the legs, the bend and the bulge, solid around them; its tiles
// hold fluid more densely than the box does (a sparse geometry of wide channels).
TEST(VesselGeometry, BentTubeWithABulge) {
  const std::array<int, 3> n{96, 96, 96};
  const auto solid = vessel_geometry(n);
  auto at = [&](double x, double y, double z) {
    return solid[std::size_t(int(x) + 96 * (int(y) + 96 * int(z)))];
  };
  EXPECT_EQ(at(48 - 24, 1, 48), 0);        // a leg, at the y_min face
  EXPECT_EQ(at(48 + 24, 1, 48), 0);        // the other leg
  EXPECT_EQ(at(48, 48 + 24, 48), 0);       // the bend's apex
  EXPECT_EQ(at(48, 48 + 24 + 14, 48), 0);  // inside the bulge, beyond the tube (radius 12)
  EXPECT_EQ(at(48, 48, 48), 1);            // inside the bend, between the legs
  EXPECT_EQ(at(0, 0, 0), 1);
  const TileStatistics t = tile_statistics(solid, n, 3, 4, {true, true, true});
  EXPECT_LT(t.porosity, 0.2);
  EXPECT_GT(t.tile_porosity, 2 * t.porosity);
}

TEST(TileStatistics, CountTilesFluidAndGhostShare) {
  // 8 x 8 x 8 cells, 4^3 tiles: the tile at the origin is solid, one cell of its +x neighbour too.
  const std::array<int, 3> n{8, 8, 8};
  std::vector<std::uint8_t> solid(512, 0);
  for (int z = 0; z < 4; ++z)
    for (int y = 0; y < 4; ++y)
      for (int x = 0; x < 4; ++x) solid[std::size_t(x + 8 * (y + 8 * z))] = 1;
  solid[std::size_t(4)] = 1;
  const TileStatistics t = tile_statistics(solid, n, 3, 4, {true, true, true});
  EXPECT_EQ(t.tiles, 8);
  EXPECT_EQ(t.fluid_tiles, 7);
  EXPECT_EQ(t.fluid_cells, 512 - 65);
  EXPECT_DOUBLE_EQ(t.porosity, 447.0 / 512.0);
  EXPECT_DOUBLE_EQ(t.tile_porosity, 447.0 / (7.0 * 64.0));
  // Periodic, two tiles an axis: each kept tile's two neighbours along an axis are one tile,
  // removed for the three tiles next to the origin's (one axis each): 42 faces, 6 lost.
  EXPECT_DOUBLE_EQ(t.ghost_share, 36.0 / 42.0);
  // Bounded: half the faces lead out of the box.
  const TileStatistics b = tile_statistics(solid, n, 3, 4, {false, false, false});
  EXPECT_DOUBLE_EQ(b.ghost_share, 18.0 / 42.0);
  // A box whose extent is no multiple of the edge: the tiles' cells past its end count as solid.
  const TileStatistics odd =
      tile_statistics(std::vector<std::uint8_t>(6 * 5 * 1, 0), {6, 5, 1}, 2, 4, {true, true, true});
  EXPECT_EQ(odd.tiles, 4);
  EXPECT_DOUBLE_EQ(odd.tile_porosity, 30.0 / 64.0);
}

// tomczak2018's overheads with its sizes (FP64 values, two-byte node types, four-byte indices)
// against the constants it prints: eqs. 25, 26 (memory, two copies), 31, 32 (memory, ghost
// buffers) and the bandwidth figures after eqs. 35 and 37, to their printed digits: half a unit
// of the last digit of each printed constant (memory: two constants, 1e-3; bandwidth: 5e-5).
/// The paper's printed overheads for one lattice and tile: memory T2C (a + b N_tiles/N_kept) /
/// phi_t - 1, TGB (c + d alpha_M) / phi_t - 1, bandwidth T2C e / phi_t and TGB f / phi_t.
struct PaperOverheads {
  LatticeKind lattice;
  int edge, dims;
  double a, b, c, d, e, f;
};
TEST(TileModel, GivesThePapersConstants) {
  const TileSizes paper{8.0, 2.0, 4.0, 4.0};
  const PaperOverheads printed[] = {
      {LatticeKind::D3Q19, 4, 3, 2.013, 0.00041, 1.043, 0.789, 0.0259, 0.0370},   // eqs. 26, 32
      {LatticeKind::D2Q9, 16, 2, 2.028, 0.00022, 1.034, 0.167, 0.0184, 0.0206}};  // eqs. 25, 31
  for (const PaperOverheads& p : printed)
    for (double phi_t : {0.6, 0.85, 1.0})
      for (double ratio : {2.3, 8.6})
        for (double alpha : {0.7, 1.0}) {
          TileStatistics t;
          t.tile_porosity = phi_t, t.fluid_tiles = 1000, t.tiles = std::int64_t(1000 * ratio),
          t.ghost_share = alpha;
          t.edge = p.edge, t.dims = p.dims;
          const TileOverheads o = tile_overheads(p.lattice, t, paper);
          EXPECT_NEAR(o.memory_two_copies, (p.a + p.b * ratio) / phi_t - 1, 1e-3 / phi_t);
          EXPECT_NEAR(o.memory_ghost_buffers, (p.c + p.d * alpha) / phi_t - 1, 1e-3 / phi_t);
          EXPECT_NEAR(o.bandwidth_two_copies, p.e / phi_t, 5e-5 / phi_t);
          EXPECT_NEAR(o.bandwidth_ghost_buffers, p.f / phi_t, 5e-5 / phi_t);
        }
}

const std::string deck3d = R"(
[model]
lattice = "D3Q19"
collision = "trt"
[domain]
nx = 24
ny = 16
nz = 16
[physics]
tau = 0.8
force = [1e-6, 0, 0]
[run]
steps = 10
)";

std::string deck_error(const std::string& text, const std::vector<std::string>& overrides) {
  return test::deck_error(text, "porous.toml", overrides);
}

TEST(GeometryDeck, RandomSpheresResolveIntoSolidCells) {
  const Case c = parse_deck(deck3d, "porous.toml",
                            {"geometry.type=random_spheres", "geometry.diameter=6",
                             "geometry.porosity=0.7", "geometry.seed=11"});
  const SolidGeometry& g = c.solver.geometry;
  ASSERT_TRUE(g.solid);
  EXPECT_EQ(g.kind, SolidGeometry::Kind::RandomSpheres);
  EXPECT_GT(g.spheres, 0);
  EXPECT_LE(fluid_of(*g.solid), std::int64_t(0.7 * 24 * 16 * 16));
  // A restart continues the same solids: another seed is another set-up.
  const Case other = parse_deck(deck3d, "porous.toml",
                                {"geometry.type=random_spheres", "geometry.diameter=6",
                                 "geometry.porosity=0.7", "geometry.seed=12"});
  EXPECT_NE(solver_signature(c.solver), solver_signature(other.solver));
}

TEST(GeometryDeck, VoxelImagesAreReadRelativeToTheDeck) {
  Scratch s;
  std::vector<std::uint8_t> image(24 * 16 * 16, 0);
  image[5] = 255;
  s.write("rock.raw", image);
  const Case c =
      parse_deck(deck3d, (s.dir() / "porous.toml").string(),
                 {"geometry.type=voxels", "geometry.file=rock.raw", "geometry.size=[24,16,16]"});
  ASSERT_TRUE(c.solver.geometry.solid);
  EXPECT_EQ(fluid_of(*c.solver.geometry.solid), 24 * 16 * 16 - 1);
  EXPECT_EQ((*c.solver.geometry.solid)[5], 1);
}

struct BadGeometry {
  const char* what;
  std::vector<std::string> overrides;
  std::vector<std::string> expect;
};
void PrintTo(const BadGeometry& b, std::ostream* os) { *os << b.what; }
class BadGeometryDeck : public ::testing::TestWithParam<BadGeometry> {};
TEST_P(BadGeometryDeck, NamesTheKeyAndWhatWasExpected) {
  // Each case runs in its own scratch directory (ctest runs them at once); `{dir}` in an
  // override names it.
  Scratch s;
  s.write("small.raw", std::vector<std::uint8_t>(100, 0));
  s.write("solid.raw", std::vector<std::uint8_t>(24 * 16 * 16, 1));
  const auto& b = GetParam();
  std::vector<std::string> overrides = b.overrides;
  for (auto& o : overrides)
    if (const auto at = o.find("{dir}"); at != std::string::npos)
      o.replace(at, 5, s.dir().string());
  const std::string msg = deck_error(deck3d, overrides);
  for (const auto& e : b.expect)
    EXPECT_NE(msg.find(e), std::string::npos) << "want '" << e << "' in: " << msg;
}
const std::string tmp = "{dir}";
INSTANTIATE_TEST_SUITE_P(
    Cases, BadGeometryDeck,
    ::testing::Values(BadGeometry{"no type", {"geometry.seed=1"}, {"geometry.type", "missing"}},
                      BadGeometry{"unknown type",
                                  {"geometry.type=stl"},
                                  {"geometry.type", "voxels, mesh, random_spheres"}},
                      BadGeometry{"no file",
                                  {"geometry.type=voxels", "geometry.size=[24,16,16]"},
                                  {"geometry.file", "missing"}},
                      BadGeometry{"no size",
                                  {"geometry.type=voxels", "geometry.file=" + tmp + "/small.raw"},
                                  {"geometry.size", "missing"}},
                      BadGeometry{"wrong size",
                                  {"geometry.type=voxels", "geometry.file=" + tmp + "/small.raw",
                                   "geometry.size=[24,16,16]"},
                                  {"geometry.file", "small.raw holds 100 bytes", "needs 6144"}},
                      BadGeometry{"missing file",
                                  {"geometry.type=voxels", "geometry.file=" + tmp + "/none.raw",
                                   "geometry.size=[10,10,1]"},
                                  {"geometry.file", "none.raw: cannot open"}},
                      BadGeometry{
                          "does not fit",
                          {"geometry.type=voxels", "geometry.file=" + tmp + "/small.raw",
                           "geometry.size=[10,10,1]", "geometry.offset=[20,0,0]"},
                          {"geometry.offset", "does not fit in the domain of 24 x 16 x 16 cells"}},
                      BadGeometry{"no fluid",
                                  {"geometry.type=voxels", "geometry.file=" + tmp + "/solid.raw",
                                   "geometry.size=[24,16,16]"},
                                  {"geometry.file", "no fluid cell"}},
                      BadGeometry{"solid value out of range",
                                  {"geometry.type=voxels", "geometry.file=" + tmp + "/small.raw",
                                   "geometry.size=[10,10,1]", "geometry.solid_values=[1,256]"},
                                  {"geometry.solid_values", "[0, 255]"}},
                      BadGeometry{"porosity",
                                  {"geometry.type=random_spheres", "geometry.diameter=4",
                                   "geometry.porosity=1.2"},
                                  {"geometry.porosity", "0 < porosity < 1"}},
                      BadGeometry{"diameter",
                                  {"geometry.type=random_spheres", "geometry.diameter=0.5",
                                   "geometry.porosity=0.5"},
                                  {"geometry.diameter", "at least 1"}},
                      BadGeometry{"a key of the other type",
                                  {"geometry.type=random_spheres", "geometry.diameter=4",
                                   "geometry.porosity=0.5", "geometry.file=x.raw"},
                                  {"geometry.file", "unknown key"}}));

TEST(GeometrySolver, SolidCellsFromTheGeometryAndDarcyFlow) {
  // Random spheres in a periodic box driven by a body force: the solver's fluid cells are the
  // geometry's; the momentum follows the force.
  Case c =
      parse_deck(deck3d, "porous.toml",
                 {"geometry.type=random_spheres", "geometry.diameter=6", "geometry.porosity=0.6"});
  auto s = make_solver(c.solver);
  EXPECT_EQ(s->fluid_cells(), fluid_of(*c.solver.geometry.solid));
  s->step(200);
  const auto j = s->momentum();
  EXPECT_GT(j[0],
            0.0);  // the force does work on the flow (a small random sample also flows across)
  // The report: the porosity the flags give, tiles of 4^3 over 6 x 4 x 4 tiles.
  const GeometryReport r = geometry_report(c.solver);
  EXPECT_EQ(r.tiles.fluid_cells, s->fluid_cells());
  EXPECT_EQ(r.tiles.tiles, 96);
  EXPECT_NE(r.text.find("geometry: "), std::string::npos);
  EXPECT_NE(r.text.find("tiles: 4^3 tiles"), std::string::npos);
}

// The halo of a porous sample split over two ranks: the lists carry no solid cell's values
// (nothing reads them), a message's send list holds exactly the fluid cells of the layer next to
// the cut, and each rank receives as many values as its neighbour sends, in every mode.
TEST(GeometryHalo, MessagesCarryTheFluidCellsOnly) {
  const Case c =
      parse_deck(deck3d, "porous.toml",
                 {"geometry.type=random_spheres", "geometry.diameter=6", "geometry.porosity=0.6"});
  for (const HaloMode mode :
       {HaloMode::Pull, HaloMode::AAForward, HaloMode::AAReverse, HaloMode::Moments}) {
    SCOPED_TRACE(int(mode));
    std::array<std::vector<HaloMessage>, 2> messages;
    for (int rank = 0; rank < 2; ++rank) {
      const Decomposition dc = Decomposition::make(c.solver, 2, rank, {1, 1, 2});
      const SolverConfig local = dc.local_config(c.solver);
      const std::vector<Flag> flags = build_flags<D3Q19>(local);
      const HaloLists lists =
          build_halo_lists<D3Q19>(dc, mode, sizeof(float), flags, local.faces, 10);
      const Index cells = Index(flags.size());
      for (const std::vector<Index>* list : {&lists.send, &lists.recv})
        for (const Index e : *list) ASSERT_NE(flags[std::size_t(e % cells)], kSolid);
      messages[std::size_t(rank)] = lists.messages;
      if (mode != HaloMode::Pull) continue;
      // Towards +z: the 5 populations with c_z = 1 of the fluid cells of the last real layer.
      const DenseGrid grid = grid_of(dc);
      const int z = dc.ghost[4] + dc.mine.n[2] - 1;
      std::int64_t fluid = 0;
      for (int y = 0; y < grid.n[1]; ++y)
        for (int x = 0; x < grid.n[0]; ++x)
          fluid += flags[std::size_t(grid.cell(x, y, z))] != kSolid;
      ASSERT_GT(fluid, 0);
      ASSERT_LT(fluid, std::int64_t(grid.n[0]) * grid.n[1]);
      const auto up = std::find_if(lists.messages.begin(), lists.messages.end(),
                                   [](const HaloMessage& m) { return m.send_tag == 22; });
      ASSERT_NE(up, lists.messages.end());
      EXPECT_EQ(up->send_bytes, 5 * fluid * std::int64_t(sizeof(float)));
    }
    for (const HaloMessage& m : messages[0]) {
      const auto other =
          std::find_if(messages[1].begin(), messages[1].end(),
                       [&](const HaloMessage& o) { return o.recv_tag == m.send_tag; });
      ASSERT_NE(other, messages[1].end()) << "send tag " << m.send_tag;
      EXPECT_EQ(other->recv_bytes, m.send_bytes) << "send tag " << m.send_tag;
    }
  }
}

// parallel.balance: slabs of near-equal fluid cells where a [geometry] leaves its fluid uneven
// (here all of it below half the height), at least one layer a slab, and two next to an outflow
// face; "auto" balances the fluid only with a [geometry]; the run's log line says where it cut.
TEST(GeometryRanks, SlabsShareTheFluidCells) {
  Case c =
      parse_deck(deck3d, "porous.toml",
                 {"geometry.type=random_spheres", "geometry.diameter=6", "geometry.porosity=0.6"});
  SolverConfig& s = c.solver;
  auto solid = std::make_shared<std::vector<std::uint8_t>>(std::size_t(s.cells()), std::uint8_t(0));
  for (std::size_t i = std::size_t(s.nx * s.ny * (s.nz / 2)); i < solid->size(); ++i)
    (*solid)[i] = 1;
  s.geometry.solid = solid;
  EXPECT_EQ(balance_for(s, "auto"), Balance::Fluid);
  EXPECT_EQ(balance_for(s, "volume"), Balance::Volume);
  const AxisCuts even = Decomposition::even_cuts(s, {1, 1, 2});
  EXPECT_EQ(even[2], (std::vector<int>{0, 8, 16}));
  const AxisCuts fluid = Decomposition::fluid_cuts(s, {1, 1, 2});
  EXPECT_EQ(fluid[0], (std::vector<int>{0, 24}));
  EXPECT_EQ(fluid[2], (std::vector<int>{0, 4, 16}));
  EXPECT_EQ(fluid_per_rank(s, {1, 1, 2}, fluid),
            (std::vector<std::int64_t>{4 * 24 * 16, 4 * 24 * 16}));
  const Decomposition upper = Decomposition::make(s, 2, 1, {1, 1, 2}, &fluid);
  EXPECT_EQ(upper.mine.lo[2], 4);
  EXPECT_EQ(upper.mine.n[2], 12);
  EXPECT_EQ(slab_report(s, upper),
            "slabs of near-equal fluid cells: z cut at 4; the most fluid cells a rank "
            "holds: 1.000 of the mean (even slabs: 2.000)");
  // All the fluid in the first layer: one layer a slab, two beside an outflow face.
  std::fill(solid->begin(), solid->end(), std::uint8_t(1));
  std::fill(solid->begin(), solid->begin() + s.nx * s.ny, std::uint8_t(0));
  EXPECT_EQ(Decomposition::fluid_cuts(s, {1, 1, 4})[2], (std::vector<int>{0, 1, 2, 3, 16}));
  s.faces[4].type = FaceType::Outflow;
  EXPECT_EQ(Decomposition::fluid_cuts(s, {1, 1, 4})[2], (std::vector<int>{0, 2, 3, 4, 16}));
  // A value it does not know: the key and the choices.
  EXPECT_NE(deck_error(deck3d, {"parallel.balance=\"tiles\""})
                .find("key 'parallel.balance': 'tiles' is not one of auto, volume, fluid"),
            std::string::npos)
      << deck_error(deck3d, {"parallel.balance=\"tiles\""});
  // Without a geometry the slabs share the volume.
  s.geometry = SolidGeometry{};
  EXPECT_EQ(balance_for(s, "auto"), Balance::Volume);
  EXPECT_EQ(Decomposition::fluid_cuts(s, {1, 1, 2}), Decomposition::even_cuts(s, {1, 1, 2}));
}

// A vessel: fluid inside a closed tube mesh (solid = "outside"), placed and scaled from the deck.
TEST(GeometryDeck, MeshesAreVoxelizedWithTheirSolidSide) {
  Scratch s;
  write_stl(s, "tube.stl", cylinder_mesh(1.0, 4.0, 0, 0.05, true));
  const Case c = parse_deck(deck3d, (s.dir() / "porous.toml").string(),
                            {"geometry.type=mesh", "geometry.file=tube.stl", "geometry.scale=6",
                             "geometry.position=[12,8,8]", "geometry.solid=outside"});
  const auto& solid = *c.solver.geometry.solid;
  // The tube, radius 6 and 24 long along x, fills the box's length: fluid where r < 6.
  expect_voxels_match(solid, {24, 16, 16}, 0.3, [](double, double y, double z) {
    return -(std::hypot(y - 8, z - 8) - 6.0);  // solid outside the tube
  });
  EXPECT_EQ(solid[std::size_t(12 + 24 * (8 + 16 * 8))], 0);
  EXPECT_EQ(solid[0], 1);
}

}  // namespace
