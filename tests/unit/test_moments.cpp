// SPDX-License-Identifier: Apache-2.0
// The moment representation (streaming = moments) against the population form of the same
// regularized operator: the same post-collision populations and fields to round-off over many
// steps, for every boundary type (faces that read their layer too: developed and characteristic
// pressure faces, outflow faces; inlet profiles), lattice and both operators, on boxes that do and
// do not fill whole tiles.
#include <kolibri/grid/Flags.hpp>
#include <kolibri/solver/Solver.hpp>
#include <kolibri/stepping/MomentStream.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "Helpers.hpp"

namespace {
using namespace kolibri;

SolverConfig scene_config(LatticeKind lat, int scene) {
  const bool two_d = lat == LatticeKind::D2Q9;
  switch (scene) {
    case 0: return test::closed_box(lat);  // walls, a moving lid, a sphere, a body force
    case 1:                                // velocity inlet, pressure outlet, walls, an obstacle
      return test::anti_bounce_back(test::channel(lat));
    case 2: {                              // periodic, Taylor-Green vortex and a force
      SolverConfig c = test::periodic_box(lat, 9, 7, two_d ? 1 : 5, 0.6);
      c.initial.kind = InitialCondition::Kind::TaylorGreen;
      c.initial.velocity = {0.05, 0, 0};
      c.force = {0, 1e-5, 0};
      return c;
    }
    case 4: {  // the developed outlet (its layer's populations rebuilt from their moments)
      SolverConfig c = test::channel(lat);
      c.faces[1].pressure_rule = PressureRule::Developed;
      return c;
    }
    case 5: {  // a developed pressure inlet and a characteristic outlet, walls all round
      SolverConfig c = test::channel(lat);
      c.faces[0].type = FaceType::PressureInlet;
      c.faces[0].density = 1.002;
      c.faces[0].pressure_rule = PressureRule::Developed;
      c.faces[1].pressure_rule = PressureRule::Characteristic;
      c.faces[1].relaxation = 0.02;
      if (!two_d) c.faces[4].type = c.faces[5].type = FaceType::Wall;
      c.initial.velocity = {0.03, 0, 0};
      return c;
    }
    case 6: {  // an outflow face, the obstacle reaching into its layer
      SolverConfig c = test::channel(lat);
      c.faces[1].type = FaceType::Outflow;
      Obstacle in_face;
      in_face.min = {double(c.nx - 2), 7, 0}, in_face.max = {double(c.nx), 8, 100};
      c.obstacles.push_back(in_face);
      c.initial.velocity = {0.04, 0, 0};
      return c;
    }
    case 7: {  // a parabolic inlet (its profile looked up before the step) ramped up in time
      SolverConfig c = test::channel(lat);
      c.faces[0].profile = InletProfile::Parabolic;
      c.faces[0].ramp_steps = 30;
      return c;
    }
    default: {  // several tiles across, walls on y, periodic x and z, a box obstacle
      SolverConfig c = test::periodic_box(lat, 150, two_d ? 23 : 19, two_d ? 1 : 6, 0.56);
      c.faces[2].type = c.faces[3].type = FaceType::Wall;
      c.faces[3].type = FaceType::MovingWall;
      c.faces[3].velocity = {0.06, 0, 0};
      Obstacle o;
      o.min = {40, 5, 0}, o.max = {44, 9, two_d ? 0.0 : 2.0};
      c.obstacles.push_back(o);
      c.initial.velocity = {0.02, 0.0, two_d ? 0.0 : 0.01};
      return c;
    }
  }
}

/// The flag byte and, with walls or obstacles, the wall-link mask (Level::bytes_per_cell).
double level_bytes(const SolverConfig& c) {
  const int dims = c.lattice == LatticeKind::D2Q9 ? 2 : 3;
  bool walls = !c.obstacles.empty();
  for (int f = 0; f < 2 * dims; ++f)
    walls = walls || c.faces[std::size_t(f)].type != FaceType::Periodic;
  return 1.0 + (walls ? 4.0 : 0.0);
}
/// The boundary cells' lists and wall sums (MomentWallCells, MomentWallSums): per boundary cell
/// its index (8 bytes), slot (4) and kMomentWallValues sums; per column segment its first slot (4),
/// and one more (the count: the last segment's end).
double wall_bytes(const SolverConfig& c, int value_bytes) {
  const int dims = c.lattice == LatticeKind::D2Q9 ? 2 : 3;
  const std::vector<Flag> flags = c.lattice == LatticeKind::D2Q9    ? build_flags<D2Q9>(c)
                                  : c.lattice == LatticeKind::D3Q19 ? build_flags<D3Q19>(c)
                                                                    : build_flags<D3Q27>(c);
  const auto boundary = double(std::count(flags.begin(), flags.end(), kBoundaryFluid));
  if (boundary == 0) return 0.0;
  const int layers = dims == 3 ? c.nz : c.ny;
  const int segment = moment_segment_for(dims, layers, c.moment_segment);
  const int segments = (layers + segment - 1) / segment;
  const double columns = dims == 3 ? double(c.nx) * c.ny : double(c.nx);
  return boundary * (kMomentWallCellBytes + kMomentWallValues * value_bytes) +
         (columns * segments + 1) * kMomentSegmentBytes;
}
/// Bytes a cell: a moment array of `places` places (two arrays: 2 cells), m values a place (3D:
/// in CSoA groups, moment_slots), the boundary cells' wall data and the level's bytes.
double moment_bytes(const SolverConfig& c, Index places, int m, int value_bytes) {
  const int dims = c.lattice == LatticeKind::D2Q9 ? 2 : 3;
  return (double(moment_slots(dims, places, m).size() * value_bytes) + wall_bytes(c, value_bytes)) /
             (double(c.nx) * c.ny * c.nz) +
         level_bytes(c);
}

class Moments : public ::testing::TestWithParam<std::tuple<LatticeKind, CollisionKind, int>> {};

TEST_P(Moments, MatchPopulationForm) {
  const auto [lat, col, scene] = GetParam();
  SolverConfig c = scene_config(lat, scene);
  c.collision = col;
  auto pop = make_solver(c);
  c.streaming = Streaming::Moments;
  c.moment_arrays = 1;                   // the general placement (two arrays: the same, below)
  if (scene != 3) c.moment_segment = 3;  // columns cut into segments of 3 layers (scene 3: whole)
  auto mr = make_solver(c);
  const int m = lat == LatticeKind::D2Q9 ? 6 : 10, q = lat == LatticeKind::D2Q9 ? 9 : lat == LatticeKind::D3Q19 ? 19 : 27;
  // one array and the shadow of the tile and segment edges (small boxes: mostly edges; the
  // smallest, all edges, need as many groups as two arrays)
  EXPECT_GT(mr->bytes_per_cell(), m * 8 + 1);
  EXPECT_LE(mr->bytes_per_cell(), moment_bytes(c, 2 * Index(c.nx) * c.ny * c.nz, m, 8));
  EXPECT_EQ(mr->bytes_per_update(), 2.0 * m * 8 + 1);
  EXPECT_EQ(mr->populations_per_cell(), m);
  EXPECT_EQ(pop->bytes_per_cell(), 2.0 * q * 8 + level_bytes(c));
  double worst = 0;
  for (int round = 0; round < 4; ++round) {
    pop->step(25);
    mr->step(25);
    const auto a = pop->populations(), b = mr->populations();
    ASSERT_EQ(a.size(), b.size());
    const auto flags = pop->macroscopic();  // solid cells hold nothing in the moment form
    const std::size_t cells = flags.rho.size();
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (flags.solid[i % cells]) continue;
      worst = std::max(worst, std::fabs(b[i] - a[i]));
      ASSERT_NEAR(b[i], a[i], 1e-13) << "population " << i / cells << " of cell " << i % cells << " after "
                                     << pop->steps_done() << " steps";
    }
    const auto fb = mr->macroscopic();
    for (std::size_t i = 0; i < cells; ++i) {
      ASSERT_NEAR(fb.rho[i], flags.rho[i], 1e-13) << "cell " << i;
      for (int d = 0; d < 3; ++d) ASSERT_NEAR(fb.u[i][d], flags.u[i][d], 1e-13) << "cell " << i;
    }
  }
  RecordProperty("max_population_difference", std::to_string(worst));
  const auto da = pop->diagnostics(), db = mr->diagnostics();
  EXPECT_NEAR(db.mass, da.mass, 1e-10);
  EXPECT_NEAR(db.max_speed, da.max_speed, 1e-13);
  EXPECT_GT(da.max_speed, 1e-3);  // something moved
}

TEST(MomentsFp32, MatchPopulationFormToSinglePrecisionRoundOff) {
  for (const auto col : {CollisionKind::Regularized, CollisionKind::RecursiveRegularized}) {
    SolverConfig c = scene_config(LatticeKind::D3Q19, 3);
    c.precision = Precision::FP32;
    c.collision = col;
    auto pop = make_solver(c);
    c.streaming = Streaming::Moments;
    auto mr = make_solver(c);
    EXPECT_EQ(mr->bytes_per_cell(), moment_bytes(c, 2 * Index(c.nx) * c.ny * c.nz, 10, 4));  // two arrays: the default
    pop->step(100);
    mr->step(100);
    const auto fa = pop->macroscopic(), fb = mr->macroscopic();
    for (std::size_t i = 0; i < fa.rho.size(); ++i) {
      ASSERT_NEAR(fb.rho[i], fa.rho[i], 2e-6) << "cell " << i;
      for (int d = 0; d < 3; ++d) ASSERT_NEAR(fb.u[i][d], fa.u[i][d], 2e-6) << "cell " << i;
    }
  }
}

TEST(Moments, OneArrayAndTwoArraysAreIdentical) {
  // The same arithmetic in the same order, the values in other places: equal bit for bit, after
  // an odd number of steps too (the edge cells in the shadow, moved back for the fields).
  for (auto lat : {LatticeKind::D2Q9, LatticeKind::D3Q19})
    for (int scene : {1, 3, 5}) {
      SolverConfig c = scene_config(lat, scene);
      c.collision = CollisionKind::Regularized;
      c.streaming = Streaming::Moments;
      c.moment_segment = 4;
      c.moment_arrays = 1;
      auto one = make_solver(c);
      c.moment_arrays = 2;
      auto two = make_solver(c);
      const int m = lat == LatticeKind::D2Q9 ? 6 : 10;
      EXPECT_EQ(two->bytes_per_cell(), moment_bytes(c, 2 * Index(c.nx) * c.ny * c.nz, m, 8));
      EXPECT_LT(one->bytes_per_cell(), two->bytes_per_cell());
      for (int steps : {7, 6}) {
        one->step(steps), two->step(steps);
        EXPECT_EQ(one->populations(), two->populations()) << to_string(lat) << " scene " << scene << " after "
                                                          << one->steps_done() << " steps";
      }
    }
  SolverConfig bad = scene_config(LatticeKind::D3Q19, 2);
  bad.collision = CollisionKind::Regularized;
  bad.streaming = Streaming::Moments;
  bad.moment_arrays = 3;
  EXPECT_THROW(make_solver(bad), std::invalid_argument);
}

TEST(Moments, SavedStateMovesBetweenOneAndTwoArrays) {
  // A checkpoint holds the moments cell by cell: saved from one array after an odd step count
  // (the edge cells in the shadow) it continues with two arrays, and back, on the same values.
  for (int steps : {9, 10})
    for (int from : {1, 2}) {
      SolverConfig c = scene_config(LatticeKind::D3Q19, 3);
      c.collision = CollisionKind::Regularized;
      c.streaming = Streaming::Moments;
      c.moment_segment = 4;
      c.moment_arrays = from;
      auto a = make_solver(c);
      a->step(steps);
      int phase = -1;
      const StatePiece piece = a->state(phase);
      EXPECT_EQ(phase, 3);
      c.moment_arrays = 3 - from;
      auto b = make_solver(c);
      b->load_state(piece, phase);
      EXPECT_EQ(a->populations(), b->populations()) << steps << " steps from " << from;
      a->step(5), b->step(5);
      EXPECT_EQ(a->populations(), b->populations()) << steps << " steps from " << from << ", then 5";
    }
}

TEST(MomentsConfig, RefusesOperatorsWithoutAMomentState) {
  SolverConfig c = test::periodic_box(LatticeKind::D3Q19, 8, 8, 8);
  c.streaming = Streaming::Moments;
  c.collision = CollisionKind::Bgk;
  EXPECT_THROW(make_solver(c), std::invalid_argument);
  c.collision = CollisionKind::Regularized;
  c.precision = Precision::FP32;
  c.storage = StorageKind::FP16;
  EXPECT_THROW(make_solver(c), std::invalid_argument);
}

// The moment kernel's arithmetic shortcuts against the definitions they replace, on random
// states: the paired projection against w_q times second_order(q) for every direction, and a
// mirror pair summed as sum and difference against two single sums, for every crossing pair.
template <class L>
void check_pairs() {
  std::mt19937 gen(7);
  std::uniform_real_distribution<double> r(-0.2, 0.2);
  for (int trial = 0; trial < 20; ++trial) {
    const double F[3] = {r(gen) * 1e-3, r(gen) * 1e-3, L::D == 3 ? r(gen) * 1e-3 : 0.0};
    double f[L::Q];
    for (int q = 0; q < L::Q; ++q) f[q] = L::w(q) * (1 + r(gen));
    const RegularizedMoments<L, double> m(f, F, 1.3);
    double p[L::Q];
    RegularizedBgk<L, double>::project(m, p);
    for (int q = 0; q < L::Q; ++q) ASSERT_NEAR(p[q], L::w(q) * m.second_order(q), 1e-15) << L::name << " q " << q;
    for (int q = 1; q < L::Q; ++q)
      for (int axis = 0; axis < L::D; ++axis) {
        if (L::c(q, axis) <= 0) continue;
        const int qm = MomentKernel<L, double, RegularizedBgk<L, double>, 8, 8>::mirror(q, axis);
        ASSERT_GE(qm, 0);
        MomentSum<double> a, b;
        a.clear(), b.clear();
        a.template add<L>(q, f[q]), a.template add<L>(qm, f[qm]);
        b.template add_pair<L>(q, axis, f[q], f[qm]);
        EXPECT_NEAR(a.rho, b.rho, 1e-15);
        for (int d = 0; d < 3; ++d) EXPECT_NEAR(a.j[d], b.j[d], 1e-15) << L::name << " q " << q << " axis " << axis;
        for (int k = 0; k < 6; ++k) EXPECT_NEAR(a.pi[k], b.pi[k], 1e-15) << L::name << " q " << q << " axis " << axis;
      }
  }
}

TEST(MomentKernel, PairedProjectionAndMirrorSumsMatchTheirDefinitions) {
  check_pairs<D2Q9>();
  check_pairs<D3Q19>();
  check_pairs<D3Q27>();
}

TEST(MomentKernel, ArraysAreCsoaIn3dAndSoaIn2d) {
  // 3D: groups of 16 places, the slots 16 apart, a place's moments in one block; the places
  // rounded up to whole groups. 2D: SoA, the slots a whole array apart.
  const Slots s3 = moment_slots(3, 100, 10), s2 = moment_slots(2, 100, 6);
  EXPECT_EQ(s3.alpha, 16);
  EXPECT_EQ(s3(37, 0), 2 * 160 + 5);
  EXPECT_EQ(s3(37, 9), 2 * 160 + 9 * 16 + 5);
  EXPECT_EQ(s3.size(), 7 * 160);
  EXPECT_EQ(s2.alpha, 0);
  EXPECT_EQ(s2(37, 5), 5 * 100 + 37);
  EXPECT_EQ(s2.size(), 600);
  using K3 = MomentKernel<D3Q19, double, RegularizedBgk<D3Q19, double>, 8, 8>;
  EXPECT_EQ(K3::csoa(37) + 9 * K3::G, s3(37, 9));  // the kernel's own addressing agrees
}

TEST(MomentKernel, TilesAreCompiledAndListed) {
  // The host runs its one fixed tile whatever is asked; the GPU list names what --tile accepts.
  EXPECT_EQ((MomentTiles<3, false>::list()), "30x6, 14x6");
  EXPECT_EQ((MomentTiles<2, false>::list()), "254x1, 126x1");
  const MomentTile t = MomentStep<D3Q19, double, RegularizedBgk<D3Q19, double>>::fit(MomentTile{30, 6, 32, 2});
  EXPECT_EQ(t.segment, 32);
  EXPECT_GE(t.planes, 1);
}

// Every cell that a team other than its writer reads (the ring of a tile, the layer below and
// above a segment; wrapped on periodic axes) must have a second place, the places of one parity
// must be distinct and inside the array, and the cells only their writer reads stay in place.
// The access pattern is the kernel's, written out here independently of MomentPlace.
void check_placement(int dims, int nx, int ny, int nz, int tx, int ty, int segment) {
  const MomentPlacement placement(dims, nx, ny, nz, tx, ty, segment);
  const MomentPlace p = placement.host();
  const int na = nx, nb = dims == 3 ? ny : 1, nm = dims == 3 ? nz : ny;
  const int len = segment > 0 && segment < nm ? segment : nm;
  const Index cells = Index(nx) * ny * nz;
  auto cell = [&](int a, int b, int m) { return dims == 3 ? a + Index(nx) * (b + Index(ny) * m) : a + Index(nx) * m; };
  auto wrap = [](int v, int n) { return v < 0 ? v + n : v >= n ? v - n : v; };
  std::vector<int> writer(std::size_t(cells), -1);
  std::vector<char> foreign(std::size_t(cells), 0);
  const int tiles_a = (na + tx - 1) / tx, tiles_b = (nb + ty - 1) / ty, segs = (nm + len - 1) / len;
  for (int pass = 0; pass < 2; ++pass)  // writers first, then readers
    for (int sg = 0; sg < segs; ++sg)
      for (int tb = 0; tb < tiles_b; ++tb)
        for (int ta = 0; ta < tiles_a; ++ta) {
          const int team = (sg * tiles_b + tb) * tiles_a + ta, a0 = ta * tx, b0 = tb * ty, m0 = sg * len;
          const int m1 = std::min(m0 + len, nm), ring = dims == 3 ? 1 : 0;
          for (int m = m0 - 1; m <= m1; ++m)
            for (int b = b0 - ring; b < b0 + ty + ring; ++b)
              for (int a = a0 - 1; a <= a0 + tx; ++a) {
                if (a > na || b > nb) continue;  // read nothing (the kernel's positions past the box)
                const Index n = cell(wrap(a, na), wrap(b, nb), wrap(m, nm));
                const bool own = a >= a0 && a < std::min(a0 + tx, na) && b >= b0 && b < std::min(b0 + ty, nb) && m >= m0 && m < m1;
                if (pass == 0 && own) writer[std::size_t(n)] = team;
                if (pass == 1 && writer[std::size_t(n)] != team) foreign[std::size_t(n)] = 1;
              }
        }
  std::vector<char> used(std::size_t(placement.stride()), 0);
  Index moved = 0;
  for (Index n = 0; n < cells; ++n) {
    ASSERT_GE(writer[std::size_t(n)], 0) << "cell " << n << " written by no team";
    EXPECT_EQ(p.at(n, 0), n);
    const Index q = p.at(n, 1);
    if (foreign[std::size_t(n)]) {
      EXPECT_NE(q, n) << "cell " << n << " is read by another team but updated in place";
    }
    ASSERT_GE(q, 0);
    ASSERT_LT(q, placement.stride());
    EXPECT_FALSE(used[std::size_t(q)]) << "cell " << n << " shares its parity-1 place";
    used[std::size_t(q)] = 1;
    moved += q != n;
  }
  EXPECT_EQ(moved, placement.shared_cells()) << "the shadow holds the moved cells and nothing else";
}

TEST(MomentPlacement, EveryCellReadByAnotherTeamHasTwoPlaces) {
  for (int segment : {0, 1, 3, 32}) {
    check_placement(3, 150, 19, 70, 30, 6, segment);  // tiles cut by the box, a short last segment
    check_placement(3, 64, 12, 65, 14, 6, segment);
    check_placement(3, 20, 17, 9, 8, 8, segment);     // the host tile
    check_placement(3, 5, 4, 3, 30, 6, segment);      // a box inside one tile: two arrays
    check_placement(2, 300, 40, 1, 254, 1, segment);
    check_placement(2, 130, 7, 1, 64, 1, segment);
  }
}

TEST(MomentPlacement, MemoryIsUnderHalfOfTwoPopulationArrays) {
  // 256^3 with the GPU tiles and 32-layer segments: the shadow holds the tile edges (about 38% of
  // the columns at 30 x 6) and two layers in 32. Two FP32 arrays of populations: 2 Q 4 + 1 bytes.
  for (auto [tx, ty] : {std::pair{30, 6}, std::pair{14, 6}}) {
    const MomentPlacement p(3, 256, 256, 256, tx, ty, 32);
    const double cells = 256.0 * 256.0 * 256.0;
    const double bytes = 4.0 * double(moment_slots(3, p.stride(), 10).size()) / cells + 1;
    RecordProperty("bytes_per_cell_" + std::to_string(tx) + "x" + std::to_string(ty), std::to_string(bytes));
    EXPECT_LT(bytes, 0.5 * (2 * 19 * 4 + 1)) << tx << "x" << ty;
    EXPECT_GT(bytes, 10.0 * 4 + 1);
  }
  const MomentPlacement p2(2, 4096, 4096, 1, 254, 1, 32);  // D2Q9: few edge columns
  EXPECT_LT(4.0 * double(moment_slots(2, p2.stride(), 6).size()) / (4096.0 * 4096.0) + 1, 0.5 * (2 * 9 * 4 + 1));
}

std::string scene_name(const ::testing::TestParamInfo<Moments::ParamType>& i) {
  static const char* const scenes[] = {"closed_box_lid_sphere_force",
                                       "inlet_outlet_obstacle",
                                       "periodic_tgv_force",
                                       "several_tiles_lid_obstacle",
                                       "developed_outlet",
                                       "characteristic_outlet",
                                       "outflow_face",
                                       "parabolic_inlet"};
  return std::string(to_string(std::get<0>(i.param))) + "_" + to_string(std::get<1>(i.param)) + "_" +
         scenes[std::get<2>(i.param)];
}

INSTANTIATE_TEST_SUITE_P(Scenes, Moments,
                         ::testing::Combine(::testing::Values(LatticeKind::D2Q9, LatticeKind::D3Q19,
                                                              LatticeKind::D3Q27),
                                            ::testing::Values(CollisionKind::Regularized,
                                                              CollisionKind::RecursiveRegularized),
                                            ::testing::Values(0, 1, 2, 3, 4, 5, 6, 7)),
                         scene_name);
}  // namespace

// The overlapped multi-rank step runs first the teams that write a cell next to a ghost layer
// (whose new moments the halo exchange sends), then the others: each team once, and a team is
// in the first group exactly when its tile or segment holds such a cell.
TEST(MomentKernel, TeamsNextToGhostLayersComeFirst) {
  using K = MomentKernel<D3Q19, double, RegularizedBgk<D3Q19, double>, 8, 8>;
  DenseGrid g;
  g.n[0] = 20, g.n[1] = 14, g.n[2] = 70;  // tiles 3 x 2, segments of 32: 3 (0-31, 32-63, 64-69)
  g.ghost[4] = g.ghost[5] = 1;            // ghost layers z = 0 and 69: cells at z = 1 and 68
  int border = -1;
  std::vector<std::int32_t> teams = K::border_first(g, 32, border);
  ASSERT_EQ(teams.size(), 18u);
  EXPECT_EQ(border, 12);  // segments 0 and 2
  for (int i = 0; i < 18; ++i)
    EXPECT_EQ(teams[std::size_t(i)] / 6 == 1, i >= border) << "team " << teams[std::size_t(i)];
  std::vector<std::int32_t> sorted = teams;
  std::sort(sorted.begin(), sorted.end());
  for (int i = 0; i < 18; ++i) EXPECT_EQ(sorted[std::size_t(i)], i);

  g.ghost[4] = g.ghost[5] = 0;
  g.ghost[0] = 1;  // a ghost layer at x = 0 only: the tiles holding x = 1 (tile column 0)
  teams = K::border_first(g, 32, border);
  EXPECT_EQ(border, 6);
  for (int i = 0; i < border; ++i) EXPECT_EQ(teams[std::size_t(i)] % 3, 0);

  g.ghost[0] = 0;  // one rank: no team before the others
  teams = K::border_first(g, 32, border);
  EXPECT_EQ(border, 0);
}

// Columns are cut into segments of the deck's moment_segment, else of the default length, and a
// segment is at most the column: a rank's 256 layers between two ghost layers make 4 segments of
// 64 and a fifth of 2 (measured faster on several GPUs than 4 of 65: docs/performance.md).
TEST(MomentKernel, SegmentsHaveTheGivenOrTheDefaultLength) {
  EXPECT_EQ(moment_segment_for(3, 256, 0), 64);
  EXPECT_EQ(moment_segment_for(3, 258, 0), 64);
  EXPECT_EQ(moment_segment_for(2, 4098, 0), 32);
  EXPECT_EQ(moment_segment_for(3, 40, 0), 40);
  EXPECT_EQ(moment_segment_for(3, 258, 43), 43);
  EXPECT_EQ(moment_segment_for(3, 20, 64), 20);
}

// The moment kernel meets its boundary cells column by column, bottom to top, and a thread
// counts its way from its column segment's first one: the slots follow that order, the cells
// are listed in index order (MomentWallSums reads them coalesced), and each segment's start is
// the column's first boundary cell at or above the segment's first layer.
TEST(MomentWallCells, SlotsFollowTheColumnsAndSegmentsStartAtTheirFirstCell) {
  // 3 columns, 5 layers (cell = column + 3 layer), segments of 2 layers: 3 segments
  //   layer 4: B . B
  //   layer 3: . . .
  //   layer 2: B B .
  //   layer 1: . . B
  //   layer 0: B . .
  std::vector<Flag> flags(15, kFluid);
  for (Index n : {0, 5, 6, 7, 12, 14}) flags[std::size_t(n)] = kBoundaryFluid;
  const MomentWallCells walls(flags, 3, 5, 2);
  ASSERT_EQ(walls.count(), 6);
  // column 0: layers 0 2 4 -> slots 0 1 2; column 1: layer 2 -> 3; column 2: layers 1 4 -> 4 5
  const std::vector<Index> cells = {0, 5, 6, 7, 12, 14};
  const std::vector<std::int32_t> slots = {0, 4, 1, 3, 2, 5};
  // column-major, 3 segments each
  const std::vector<std::int32_t> start = {0, 1, 2, 3, 3, 4, 4, 5, 5};
  auto host = [](const auto* p, std::size_t n) {
    using T = std::remove_const_t<std::remove_pointer_t<decltype(p)>>;
    Kokkos::View<const T*, MemSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> d(p, n);
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, d);
    return std::vector<T>(h.data(), h.data() + n);
  };
  EXPECT_EQ(host(walls.cells(), 6), cells);
  EXPECT_EQ(host(walls.slots(), 6), slots);
  EXPECT_EQ(host(walls.start(), 9), start);
  EXPECT_EQ(MomentWallCells(std::vector<Flag>(15, kFluid), 3, 5, 2).start(), nullptr);
}
