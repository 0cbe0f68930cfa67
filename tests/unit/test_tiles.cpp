// SPDX-License-Identifier: Apache-2.0
// The tiled grid (grid/TiledGrid.hpp): its tile map and index, and runs on tiles against the
// dense box: the same populations bit for bit, for every population operator and storage, with
// solids, walls, moving walls, inlets, outlets and curved walls, tiles of several edges and boxes
// that end in partial tiles; restarts across the two layouts.
#include <kolibri/geometry/SolidImage.hpp>
#include <kolibri/grid/TileModel.hpp>
#include <kolibri/grid/TiledGrid.hpp>
#include <kolibri/io/Deck.hpp>
#include <kolibri/solver/Solver.hpp>

#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "Helpers.hpp"
#include "TestFiles.hpp"

namespace {
using namespace kolibri;

TEST(TileMap, KeepsTilesWithACellThatIsNotSolidAndIndexesEachValueOnce) {
  // 10 x 9 x 6 cells in tiles of 4: 3 x 3 x 2 tiles, the last ones partial. Solid everywhere
  // but two cells (in tiles 0 and 17) and a ghost cell (tile 5).
  const GridCells g{{10, 9, 6}};
  std::vector<Flag> flags(std::size_t(g.cells()), kSolid);
  flags[std::size_t(g.cell(1, 2, 3))] = kFluid;          // tile (0, 0, 0)
  flags[std::size_t(g.cell(9, 8, 5))] = kBoundaryFluid;  // tile (2, 2, 1), partial
  flags[std::size_t(g.cell(9, 4, 0))] = kGhost;          // tile (2, 1, 0)
  const TileMap m = TileMap::of(g, 3, 4, flags, {});
  EXPECT_EQ(m.shape.box_tiles(), 18);
  ASSERT_EQ(m.kept, 3);
  EXPECT_EQ(m.tile_box, (std::vector<std::uint32_t>{0, 5, 17}));
  EXPECT_EQ(m.slot_of[5], 1);
  EXPECT_EQ(m.slot_of[1], 3);  // dropped: the spare slot
  // Flags in tile order; cells past the box's end solid; without masks a boundary cell is
  // listed.
  EXPECT_EQ(m.flags[std::size_t(m.shape.place_of(1, 2, 3))], kFluid);
  const auto last = std::size_t(2 * 64 + m.shape.place_of(9, 8, 5));
  EXPECT_EQ(m.flags[last], kBoundaryFluid);
  EXPECT_EQ(m.links[last], kListedCell);
  EXPECT_EQ(m.flags[std::size_t(2 * 64 + m.shape.place_of(11, 11, 7))], kSolid);
  // Every value of every cell of a kept tile has its own index below size().
  const TileIndex idx = m.index(19);
  std::set<Index> seen;
  for (int z = 0; z < 6; ++z)
    for (int y = 0; y < 9; ++y)
      for (int x = 0; x < 10; ++x) {
        const Index n = g.cell(x, y, z);
        if (m.slot_of[m.shape.tile_of(x, y, z)] == m.kept) continue;
        for (int q = 0; q < 19; ++q) {
          const Index i = idx(n, q);
          EXPECT_LT(i, m.size(19) - 19 * 64);  // below the spare tile
          EXPECT_TRUE(seen.insert(i).second);
        }
      }
  EXPECT_EQ(seen.size(), std::size_t((64 + 32 + 4) * 19));  // tile 5: 2 x 4 x 4; 17: 2 x 1 x 2
}

TEST(TileMap, PutsTheBorderTilesFirst) {
  // 8 x 8 x 12 cells in tiles of 4 (2 x 2 x 3 tiles): ghost layers z = 0 and 11, the border
  // launch's cells next to them at z = 1 and 10 where x or y >= 4 (the tiles of x, y < 4 hold
  // none); among them a boundary cell (5, 5, 1), and a listed boundary cell (1, 1, 1) outside.
  const GridCells g{{8, 8, 12}};
  std::vector<Flag> flags(std::size_t(g.cells()), kFluid);
  std::vector<std::uint32_t> links(std::size_t(g.cells()), 0u), border;
  for (int z : {0, 11})
    for (int y = 0; y < 8; ++y)
      for (int x = 0; x < 8; ++x) flags[std::size_t(g.cell(x, y, z))] = kGhost;
  for (int z : {1, 10})
    for (int y = 0; y < 8; ++y)
      for (int x = 0; x < 8; ++x)
        if (x >= 4 || y >= 4) {
          flags[std::size_t(g.cell(x, y, z))] = kFluidBorder;
          border.push_back(std::uint32_t(g.cell(x, y, z)));
        }
  for (const auto& [x, y] : {std::pair{5, 5}, std::pair{1, 1}}) {
    flags[std::size_t(g.cell(x, y, 1))] = kBoundaryFluid;
    links[std::size_t(g.cell(x, y, 1))] = kListedCell | (1u << 3);
  }
  const TileMap m = TileMap::of(g, 3, 4, flags, links, border);
  ASSERT_EQ(m.kept, 12);
  ASSERT_EQ(m.border, 6);  // 3 of the 4 tiles of the first and of the last tile layer
  // The border tiles, then the others, each in box order; slot_of inverts tile_box.
  EXPECT_EQ(m.tile_box, (std::vector<std::uint32_t>{1, 2, 3, 9, 10, 11, 0, 4, 5, 6, 7, 8}));
  for (std::size_t s = 0; s < m.tile_box.size(); ++s)
    EXPECT_EQ(m.slot_of[m.tile_box[s]], std::int32_t(s));
  // A tile's 27 neighbours follow the slots: tile 1's -x neighbour is tile 0, in slot 6.
  EXPECT_EQ(m.neighbours[std::size_t(0 * 27 + 13 - 1)], 6);
  EXPECT_EQ(m.flags[std::size_t(0 * 64 + m.shape.place_of(4, 0, 1))], kFluidBorder);
  // The border launch's boundary cell is the border tiles' kernel's (its wall links kept); the
  // other boundary cell stays listed.
  EXPECT_EQ(m.links[std::size_t(2 * 64 + m.shape.place_of(5, 5, 1))], 1u << 3);  // tile 3: slot 2
  EXPECT_EQ(m.links[std::size_t(6 * 64 + m.shape.place_of(1, 1, 1))], kListedCell | (1u << 3));
}

TEST(TileShape, RefusesAnEdgeThatIsNoPowerOfTwo) {
  EXPECT_THROW(TileShape::of(GridCells{{8, 8, 8}}, 3, 6), std::invalid_argument);
  EXPECT_THROW(TileShape::of(GridCells{{8, 8, 8}}, 3, 128), std::invalid_argument);
  const TileShape t = TileShape::of(GridCells{{40, 20, 1}}, 2, 16);
  EXPECT_EQ(t.volume(), 256);
  EXPECT_EQ(t.tiles[0], 3);
  EXPECT_EQ(t.tiles[2], 1);
}

/// Random spheres in a periodic box driven by a body force (the porous case).
SolverConfig porous(LatticeKind lat, int nx, int ny, int nz) {
  SolverConfig c = test::periodic_box(lat, nx, ny, nz, 0.7);
  c.geometry.kind = SolidGeometry::Kind::RandomSpheres;
  c.geometry.diameter = lat == LatticeKind::D2Q9 ? 5 : 4;
  c.geometry.porosity = 0.5;
  c.geometry.seed = 3;
  resolve_geometry(c.geometry, {c.nx, c.ny, c.nz}, c.periodic_axes(),
                   lat == LatticeKind::D2Q9 ? 2 : 3);
  c.force = {2e-5, -1e-5, lat == LatticeKind::D2Q9 ? 0.0 : 5e-6};
  c.initial.velocity = {0.01, 0.005, 0.0};
  return c;
}

enum Scene {
  Porous,
  ClosedBox,
  Channel,  // the outlet on the anti-bounce-back
  CurvedWalls,
  DevelopedOutlet,       // the channel's outlet on the rules that read the layer next to it
  CharacteristicOutlet,  // (GridCells::outflow_source), through the tiled index
  OutflowFace,
  kScenes
};
const char* scene_name(int s) {
  static const char* names[] = {"porous",       "closed_box",       "channel",
                                "curved_walls", "developed_outlet", "characteristic_outlet",
                                "outflow_face"};
  return names[s];
}
SolverConfig scene(LatticeKind lat, int s) {
  const bool two_d = lat == LatticeKind::D2Q9;
  switch (s) {
    case Porous:
      return porous(lat, 18, 12, two_d ? 1 : 10);  // partial tiles along x, y, z
    case ClosedBox:
      return test::closed_box(lat);
    case Channel:
      return test::anti_bounce_back(test::channel(lat));
    case CurvedWalls:
      return test::curved_walls(lat);
    default: {
      SolverConfig c = test::channel(lat);
      c.faces[1].pressure_rule =
          s == DevelopedOutlet ? PressureRule::Developed : PressureRule::Characteristic;
      if (s == OutflowFace) c.faces[1] = FaceBC{}, c.faces[1].type = FaceType::Outflow;
      return c;
    }
  }
}

/// The same run on the dense box and on tiles: equal populations in every cell that is not
/// solid (a dropped tile's solid cells hold no state), and equal loads on the obstacles.
void expect_same_runs(SolverConfig c, int edge) {
  auto dense = make_solver(c);
  c.tile_edge = edge;
  auto tiles = make_solver(c);
  EXPECT_EQ(tiles->fluid_cells(), dense->fluid_cells());
  for (const int steps : {1, 12}) {
    dense->step(steps);
    tiles->step(steps);
    const auto a = dense->populations(), b = tiles->populations();
    const auto solid = dense->macroscopic().solid;
    ASSERT_EQ(a.size(), b.size());
    const std::size_t n = solid.size();
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (solid[i % n]) continue;
      ASSERT_EQ(b[i], a[i]) << "value " << i / n << " of cell " << i % n;
    }
    const auto fa = dense->macroscopic(), fb = tiles->macroscopic();
    EXPECT_EQ(fa.rho, fb.rho);
    EXPECT_EQ(fa.u, fb.u);
    // the permeability's momentum (a porous sample's Darcy flow) to the last bit
    EXPECT_EQ(tiles->momentum(), dense->momentum());
    const auto la = dense->obstacle_loads(), lb = tiles->obstacle_loads();
    ASSERT_EQ(la.size(), lb.size());
    for (std::size_t k = 0; k < la.size(); ++k) EXPECT_EQ(la[k].force, lb[k].force);
    EXPECT_EQ(tiles->outlet_state(), dense->outlet_state());  // characteristic outlets' s
  }
}

struct TileRun {
  LatticeKind lattice;
  CollisionKind collision;
  Precision precision;
  StorageKind storage;
  int scene;
  Streaming streaming;
};
std::string run_name(const ::testing::TestParamInfo<TileRun>& i) {
  const TileRun& r = i.param;
  return std::string(to_string(r.lattice)) + "_" + to_string(r.collision) + "_" +
         (r.storage == StorageKind::FP16 ? "fp16" : to_string(r.precision)) + "_" +
         scene_name(r.scene) + "_" + to_string(r.streaming);
}

/// Every population operator on every lattice it supports, in each storage, on the porous
/// sample and the closed box; the open and curved scenes (every outlet rule) with BGK and TRT;
/// two arrays and in place.
std::vector<TileRun> runs() {
  std::vector<TileRun> out;
  const LatticeKind lattices[] = {LatticeKind::D2Q9, LatticeKind::D3Q19, LatticeKind::D3Q27};
  const CollisionKind operators[] = {CollisionKind::Bgk,
                                     CollisionKind::Trt,
                                     CollisionKind::Regularized,
                                     CollisionKind::RecursiveRegularized,
                                     CollisionKind::Mrt,
                                     CollisionKind::CentralMoment,
                                     CollisionKind::AdaptiveCentralMoment,
                                     CollisionKind::Kbc};
  const std::pair<Precision, StorageKind> storages[] = {{Precision::FP64, StorageKind::Same},
                                                        {Precision::FP32, StorageKind::Same},
                                                        {Precision::FP32, StorageKind::FP16}};
  for (const auto lat : lattices)
    for (const auto col : operators) {
      if (!supports(lat, col)) continue;
      for (const auto& [prec, store] : storages)
        for (int s = Porous; s < kScenes; ++s)
          for (const Streaming streaming : {Streaming::TwoArray, Streaming::InPlace}) {
            const bool simple = col == CollisionKind::Bgk || col == CollisionKind::Trt;
            if (s >= Channel && !simple) continue;
            out.push_back({lat, col, prec, store, s, streaming});
          }
    }
  return out;
}

class TilesMatchDense : public ::testing::TestWithParam<TileRun> {};
TEST_P(TilesMatchDense, BitForBit) {
  const TileRun& r = GetParam();
  SolverConfig c = scene(r.lattice, r.scene);
  c.collision = r.collision;
  c.precision = r.precision;
  c.storage = r.storage;
  c.streaming = r.streaming;
  c.acm_velocity = 0.05;
  expect_same_runs(c, r.lattice == LatticeKind::D2Q9 ? 16 : 4);
}
INSTANTIATE_TEST_SUITE_P(Operators, TilesMatchDense, ::testing::ValuesIn(runs()), run_name);

/// Walls from a mesh (the curved walls' outer cylinder as triangles) on tiles, both lattice
/// dimensions: the link distances the dense box uses.
TEST(Tiles, MatchTheDenseBoxWithMeshWalls) {
  for (const auto lat : {LatticeKind::D2Q9, LatticeKind::D3Q19})
    for (const Streaming streaming : {Streaming::TwoArray, Streaming::InPlace}) {
      SolverConfig c = test::mesh_walls(lat);
      c.collision = CollisionKind::Trt;
      c.streaming = streaming;
      expect_same_runs(c, lat == LatticeKind::D2Q9 ? 16 : 4);
    }
}

/// Each compiled tile edge, on a porous box whose periodic extents are multiples of it (every
/// tile on the fast path, wrapping in tile space) and on one whose extents are not (the tiles at
/// the box's ends on the general path), two arrays and in place; and a closed box with per-face
/// launches.
class TileEdges : public ::testing::TestWithParam<std::tuple<LatticeKind, int>> {};
TEST_P(TileEdges, MatchTheDenseBox) {
  const auto [lat, edge] = GetParam();
  const bool two_d = lat == LatticeKind::D2Q9;
  for (const Streaming streaming : {Streaming::TwoArray, Streaming::InPlace})
    for (const bool aligned : {true, false}) {
      SolverConfig c = two_d ? porous(lat, aligned ? 64 : 40, aligned ? 32 : 36, 1)
                             : porous(lat, aligned ? 16 : 18, aligned ? 16 : 12, aligned ? 8 : 10);
      c.collision = CollisionKind::Trt;
      c.streaming = streaming;
      expect_same_runs(c, edge);
    }
  SolverConfig walls = test::closed_box(lat);
  walls.face_kernels = true;  // per-face launches take their cells through the tile index
  expect_same_runs(walls, edge);
}
INSTANTIATE_TEST_SUITE_P(Edges, TileEdges,
                         ::testing::Values(std::tuple{LatticeKind::D3Q19, 4},
                                           std::tuple{LatticeKind::D3Q19, 8},
                                           std::tuple{LatticeKind::D2Q9, 16},
                                           std::tuple{LatticeKind::D2Q9, 32}));

TEST(TileMap, NeighboursWrapAroundTheBoxAndMarkTheUnevenEnds) {
  // 8 x 12 x 4 cells in tiles of 4: 2 x 3 x 1 tiles, every one kept; x and z are multiples of
  // the edge, y too: no edge tile. 8 x 10 x 4: the first and last tiles along y are edge tiles.
  for (const int ny : {12, 10}) {
    const GridCells g{{8, ny, 4}};
    const TileMap m = TileMap::of(g, 3, 4, std::vector<Flag>(std::size_t(g.cells()), kFluid), {});
    ASSERT_EQ(m.kept, 6);
    // tile 0 at (0, 0, 0): its -x neighbour wraps to tile (1, 0, 0), its -y one to (0, 2, 0)
    EXPECT_EQ(m.neighbours[13 - 1], 1);
    EXPECT_EQ(m.neighbours[13 - 3], 4);
    EXPECT_EQ(m.neighbours[13 - 9], 0);  // one tile along z: itself
    EXPECT_EQ(m.neighbours[13], 0);
    for (std::size_t s = 0; s < 6; ++s) {
      const bool y_end = s / 2 == 0 || s / 2 == 2;
      EXPECT_EQ(m.edge[s], ny == 10 && y_end ? 1 : 0) << "tile " << s;
    }
  }
}

TEST(Tiles, HoldOnlyTheKeptTilesAndSaySo) {
  // The vessel-like geometry (a bent tube, 9% fluid) drops most tiles: the state per cell of the
  // box falls far below the dense box's two arrays; the runs agree bit for bit.
  SolverConfig c = test::periodic_box(LatticeKind::D3Q19, 32, 32, 32, 0.7);
  c.geometry.kind = SolidGeometry::Kind::Voxels;
  c.geometry.solid =
      std::make_shared<const std::vector<std::uint8_t>>(vessel_geometry({c.nx, c.ny, c.nz}));
  c.force = {0.0, 1e-5, 0.0};
  c.precision = Precision::FP32;
  auto dense = make_solver(c);
  SolverConfig t = c;
  t.tile_edge = 4;
  auto tiles = make_solver(t);
  EXPECT_LT(tiles->bytes_per_cell(), 0.5 * dense->bytes_per_cell());
  expect_same_runs(c, 4);
}

TEST(TilesAuto, TakesTheTilesWhereTheKeptTilesHoldFewCells) {
  // The vessel (kept tiles: about a tenth of the box) takes tiles under layout auto; a porous
  // sample at porosity 0.9 (kept tiles: almost the whole box) keeps the dense box; in place (one
  // copy) takes them as two arrays do; an explicit layout or a scheme the tiles do not run (the
  // moment representation) is left alone.
  SolverConfig vessel = test::periodic_box(LatticeKind::D3Q19, 32, 32, 32, 0.7);
  vessel.geometry.kind = SolidGeometry::Kind::Voxels;
  vessel.geometry.solid = std::make_shared<const std::vector<std::uint8_t>>(
      vessel_geometry({vessel.nx, vessel.ny, vessel.nz}));
  GeometryReport r = geometry_report(vessel);
  EXPECT_EQ(r.auto_tile_edge, 4);
  EXPECT_NE(r.text.find("tiles: layout auto: the kept tiles hold"), std::string::npos) << r.text;
  SolverConfig soa = vessel;
  soa.csoa_alpha = 0;
  EXPECT_EQ(geometry_report(soa).auto_tile_edge, 0);
  SolverConfig in_place = vessel;
  in_place.streaming = Streaming::InPlace;
  const GeometryReport one_copy = geometry_report(in_place);
  EXPECT_EQ(one_copy.auto_tile_edge, 4);
  EXPECT_NE(one_copy.text.find("this run steps on the tiled grid (one copy, in place)"),
            std::string::npos)
      << one_copy.text;
  SolverConfig moments = vessel;  // the moment representation does not run on tiles
  moments.streaming = Streaming::Moments;
  EXPECT_EQ(geometry_report(moments).auto_tile_edge, 0);
  SolverConfig refined = vessel;  // a refined grid steps on its own blocks
  refined.refinement.levels = 2;
  const GeometryReport on_levels = geometry_report(refined);
  EXPECT_EQ(on_levels.auto_tile_edge, 0);
  EXPECT_NE(on_levels.text.find("tiles: this run steps on the refined grid's blocks"),
            std::string::npos)
      << on_levels.text;
  // Pressure and outflow faces take the tiles, "auto" the developed rule there as on the dense
  // box, and so does the characteristic rule.
  SolverConfig driven = vessel;
  driven.faces[0].type = FaceType::PressureInlet, driven.faces[0].density = 1.001;
  driven.faces[1].type = FaceType::PressureOutlet;
  EXPECT_EQ(geometry_report(driven).auto_tile_edge, 4);
  driven.tile_edge = 4;
  resolve_pressure_rules(driven);
  EXPECT_EQ(driven.faces[1].pressure_rule, PressureRule::Developed);
  driven = vessel;
  driven.faces[1].type = FaceType::PressureOutlet;
  driven.faces[1].pressure_rule = PressureRule::Characteristic;
  EXPECT_EQ(geometry_report(driven).auto_tile_edge, 4);
  driven.faces[1] = FaceBC{};
  driven.faces[1].type = FaceType::Outflow;
  EXPECT_EQ(geometry_report(driven).auto_tile_edge, 4);
  SolverConfig open = porous(LatticeKind::D3Q19, 32, 32, 32);
  open.geometry.porosity = 0.95;
  open.geometry.diameter = 6;
  resolve_geometry(open.geometry, {open.nx, open.ny, open.nz}, open.periodic_axes(), 3);
  r = geometry_report(open);
  EXPECT_EQ(r.auto_tile_edge, 0);
  EXPECT_NE(r.text.find("this run steps on the dense box (the kept tiles hold"), std::string::npos)
      << r.text;
}

TEST(Tiles, RestartBitIdenticalFromEitherLayout) {
  // In place: saved after a local step (8 steps) and after a streaming one (7), the two phases.
  for (const Streaming streaming : {Streaming::TwoArray, Streaming::InPlace})
    for (const int saved_at : {8, 7}) {
      if (streaming == Streaming::TwoArray && saved_at == 7) continue;
      SolverConfig c = porous(LatticeKind::D3Q19, 16, 12, 8);
      c.streaming = streaming;
      c.tile_edge = 4;
      auto whole = make_solver(c);
      whole->step(20);
      for (const int saved_edge : {0, 4}) {  // a dense checkpoint, then a tiled one
        SolverConfig s = c;
        s.tile_edge = saved_edge;
        auto first = make_solver(s);
        first->step(saved_at);
        int phase = 0;
        const StatePiece piece = first->state(phase);
        auto second = make_solver(c);
        second->load_state(piece, phase);
        second->set_steps_done(saved_at);
        second->step(20 - saved_at);
        const auto a = whole->populations(), b = second->populations();
        const auto solid = whole->macroscopic().solid;
        for (std::size_t i = 0; i < a.size(); ++i) {
          if (solid[i % solid.size()]) continue;
          ASSERT_EQ(b[i], a[i]) << to_string(streaming) << " saved with tile edge " << saved_edge
                                << " at step " << saved_at;
        }
      }
    }
}

TEST(Tiles, RulesNameTheKey) {
  SolverConfig c = test::closed_box(LatticeKind::D3Q19);
  c.tile_edge = 4;
  c.streaming = Streaming::Moments;
  EXPECT_THROW(make_solver(c), std::invalid_argument);
  c.streaming = Streaming::TwoArray;
  c.tile_edge = 6;
  EXPECT_THROW(make_solver(c), std::invalid_argument);
}

TEST(TilesDeck, LayoutTilesWithItsEdge) {
  const std::string deck = R"([model]
lattice = "D3Q19"
layout = "tiles"
[domain]
nx = 16
ny = 16
nz = 16
[physics]
tau = 0.8
[run]
steps = 10
)";
  EXPECT_EQ(parse_deck(deck, "t.toml").solver.tile_edge, 4);
  EXPECT_EQ(parse_deck(deck, "t.toml", {"model.tile_edge=8"}).solver.tile_edge, 8);
  const std::string bad = test::deck_error(deck, "t.toml", {"model.tile_edge=16"});
  EXPECT_NE(bad.find("model.tile_edge"), std::string::npos) << bad;
  EXPECT_NE(bad.find("compiled for tiles of 4 or 8 cells a side in 3D, got 16"), std::string::npos)
      << bad;
  EXPECT_EQ(parse_deck(deck, "t.toml", {"model.streaming=\"in_place\""}).solver.streaming,
            Streaming::InPlace);
  const std::string moments = test::deck_error(deck, "t.toml", {"model.streaming=\"moments\""});
  EXPECT_NE(moments.find("\"two_array\" or \"in_place\""), std::string::npos) << moments;
  const std::string tuned = test::deck_error(deck + "[tune]\nenabled = true\n", "t.toml");
  EXPECT_NE(tuned.find("tune.enabled"), std::string::npos) << tuned;
  EXPECT_NE(tuned.find("no options to tune"), std::string::npos) << tuned;
  const std::string no_tiles =
      test::deck_error(deck, "t.toml", {"model.layout=\"soa\"", "model.tile_edge=4"});
  EXPECT_NE(no_tiles.find("only layout = \"tiles\""), std::string::npos) << no_tiles;
}

}  // namespace
