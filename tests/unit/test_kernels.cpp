// SPDX-License-Identifier: Apache-2.0
// The two-array kernel options change speed, never results: the CSoA(alpha) layout, per-face
// boundary kernels and the collision split over two launches give the populations of the
// default (SoA, one boundary list, one launch) for every boundary type, operator and lattice.
#include <kolibri/grid/CellLists.hpp>
#include <kolibri/grid/Flags.hpp>
#include <kolibri/lattice/Lattice.hpp>
#include <kolibri/parallel/Decomposition.hpp>
#include <kolibri/parallel/Streams.hpp>
#include <kolibri/solver/Solver.hpp>
#include <kolibri/stepping/StreamCollide.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <set>
#include <thread>

#include "Helpers.hpp"

namespace {
using namespace kolibri;

TEST(Slots, CsoaIsAPermutationOfItsPaddedRangeAndSoaIsTheClassicIndex) {
  const Index cells = 101;  // not a multiple of any alpha: a padded last group
  const Slots soa = Slots::soa(cells, 27);
  for (Index n : {Index(0), Index(50), cells - 1})
    for (int q : {0, 13, 26}) EXPECT_EQ(soa(n, q), Index(q) * cells + n);
  EXPECT_EQ(soa.size(), cells * 27);
  for (int alpha : {2, 8, 32, 128}) {
    const Slots s = Slots::csoa(cells, 27, alpha);
    const CSoA<27> fast = s.as_csoa<27>();
    EXPECT_EQ(s.size(), (cells + alpha - 1) / alpha * alpha * 27);
    std::set<Index> seen;
    for (Index n = 0; n < cells; ++n)
      for (int q = 0; q < 27; ++q) {
        const Index k = s(n, q);
        ASSERT_EQ(k, fast(n, q));
        // chen2022 Eq. 9: beta alpha floor(k/alpha) + alpha i + k mod alpha
        ASSERT_EQ(k, 27 * alpha * (n / alpha) + Index(alpha) * q + n % alpha);
        ASSERT_LT(k, s.size());
        seen.insert(k);
      }
    EXPECT_EQ(seen.size(), std::size_t(cells * 27)) << "alpha " << alpha << ": two values in one slot";
  }
  EXPECT_THROW(Slots::csoa(cells, 27, 24), std::invalid_argument);
  EXPECT_THROW(Slots::csoa(cells, 27, 1), std::invalid_argument);
}

template <class L>
std::array<int, 6> face_counts(const SolverConfig& c) {
  const auto flags = build_flags<L>(c);
  std::array<int, 6> n{};
  for (int z = 0; z < c.nz; ++z)
    for (int y = 0; y < c.ny; ++y)
      for (int x = 0; x < c.nx; ++x) {
        const Flag f = flags[std::size_t(x + c.nx * (y + c.ny * z))];
        const int face = single_face<L>(DenseGrid::of(c), c.faces, flags, Coord{x, y, z});
        if (face >= 0) {
          EXPECT_EQ(f, kBoundaryFluid) << "only boundary cells go to a face kernel";
          ++n[std::size_t(face)];
        }
      }
  return n;
}

TEST(FaceKernels, TakeTheCellsOfOneFaceOnlyNotEdgesCornersOrSolidNeighbours) {
  // A closed box without obstacles: each face's layer minus its rim (edges belong to two faces).
  auto c = test::periodic_box(LatticeKind::D3Q27, 9, 7, 5);
  for (auto& f : c.faces) f.type = FaceType::Wall;
  EXPECT_EQ(face_counts<D3Q27>(c), (std::array<int, 6>{5 * 3, 5 * 3, 7 * 3, 7 * 3, 7 * 5, 7 * 5}));
  EXPECT_EQ(face_counts<D3Q19>(c), (std::array<int, 6>{5 * 3, 5 * 3, 7 * 3, 7 * 3, 7 * 5, 7 * 5}));
  // Periodic in z: the x and y faces run through; z has no face cells.
  c.faces[4].type = c.faces[5].type = FaceType::Periodic;
  EXPECT_EQ(face_counts<D3Q27>(c), (std::array<int, 6>{5 * 5, 5 * 5, 7 * 5, 7 * 5, 0, 0}));
  // A solid neighbour keeps a face cell in the general list.
  Obstacle o;
  o.shape = Obstacle::Shape::Box, o.min = {3, 0, 0}, o.max = {4, 1, 5};  // solid cells at x = 3, y = 0
  c.obstacles.push_back(o);
  const auto with = face_counts<D3Q27>(c);
  EXPECT_EQ(with[0], 25);
  EXPECT_LT(with[2], 35) << "the y_min cells next to the solid column leave the face list";
  EXPECT_GT(with[2], 0);
  // 2D: four faces.
  auto d = test::closed_box(LatticeKind::D2Q9);
  d.obstacles.clear();
  EXPECT_EQ(face_counts<D2Q9>(d), (std::array<int, 6>{10, 10, 12, 12, 0, 0}));
}

TEST(WallLinks, MarkWallsOutletsAndOneMovingFaceAndListOnlyWhatTheInteriorKernelCannotTake) {
  auto c = test::periodic_box(LatticeKind::D3Q19, 9, 7, 5);
  for (auto& f : c.faces) f.type = FaceType::Wall;
  c.faces[5].type = FaceType::MovingWall;  // the lid, z_max
  const DenseGrid grid = DenseGrid::of(c);
  const auto flags = build_flags<D3Q19>(c);
  const auto links = wall_links<D3Q19>(grid, flags, c.faces);
  const auto at = [&](int x, int y, int z) { return links[std::size_t(grid.cell(x, y, z))]; };
  const auto going = [](auto keep) {  // the directions with keep(c_q)
    std::uint32_t m = 0;
    for (int q = 1; q < D3Q19::Q; ++q)
      if (keep(D3Q19::c(q, 0), D3Q19::c(q, 1), D3Q19::c(q, 2))) m |= 1u << q;
    return m;
  };
  EXPECT_EQ(at(4, 3, 2), 0u) << "an interior cell";
  EXPECT_EQ(at(0, 3, 2), going([](int x, int, int) { return x < 0; }))
      << "a plain wall: no flag bit";
  const std::uint32_t lid = at(4, 3, 4);
  EXPECT_EQ(lid & ~(kMovingLink | kMovingFaceBits), going([](int, int, int z) { return z > 0; }));
  EXPECT_TRUE(lid & kMovingLink);
  EXPECT_EQ(moving_face(lid), 5);
  const std::uint32_t rim = at(0, 3, 4);  // the lid and the x_min wall: the wall wins at the edge
  EXPECT_TRUE(rim & kMovingLink);
  EXPECT_EQ(moving_face(rim), -1) << "two faces crossed: the list resolves it";

  // Two arrays: the interior kernel takes every boundary cell but the lid's rim (2 (9 + 7) - 4).
  const CellLists fused = build_cell_lists<D3Q19>(grid, flags, c.faces, false, true);
  EXPECT_EQ(fused.boundary.size(), std::size_t(28));
  for (const auto n : fused.boundary) EXPECT_TRUE(fused.links[n] & kListedCell);
  EXPECT_FALSE(fused.links[std::size_t(grid.cell(4, 3, 4))] & kListedCell);
  // In place: every boundary cell in the list.
  const CellLists listed = build_cell_lists<D3Q19>(grid, flags, c.faces, false, false);
  EXPECT_EQ(listed.boundary.size(),
            std::size_t(std::count(flags.begin(), flags.end(), kBoundaryFluid)));

  // A pressure outlet: its cells are listed (their rule needs the cell's velocity).
  auto ch = test::channel(LatticeKind::D3Q19);
  const DenseGrid g = DenseGrid::of(ch);
  const auto fl = build_flags<D3Q19>(ch);
  const CellLists open = build_cell_lists<D3Q19>(g, fl, ch.faces, false, true);
  const std::uint32_t out = open.links[std::size_t(g.cell(ch.nx - 1, 1, 2))];
  EXPECT_TRUE(out & kOutletLink);
  EXPECT_TRUE(out & kListedCell);
  const std::uint32_t in = open.links[std::size_t(g.cell(0, 4, 2))];  // inlet, periodic in z
  EXPECT_EQ(moving_face(in), 0);
  EXPECT_FALSE(in & kListedCell);
}

TEST(CellLists, TheBorderLaunchTakesTheBoundaryCellsTheirMasksResolve) {
  // A closed box with a lid, cut along z into two ranks: rank 0's top layer lies next to its
  // ghost layer. Its wall cells there are the border launch's with two arrays (their masks
  // resolve them; kListedCell keeps them from the interior launch); in place every boundary cell
  // next to the ghost layer stays in the boundary list.
  auto c = test::periodic_box(LatticeKind::D3Q19, 9, 7, 8);
  for (auto& f : c.faces) f.type = FaceType::Wall;
  c.faces[5].type = FaceType::MovingWall;
  const SolverConfig local = Decomposition::make(c, 2, 0, {1, 1, 2}).local_config(c);
  const DenseGrid grid = DenseGrid::of(local);
  const auto flags = build_flags<D3Q19>(local);
  ASSERT_EQ(grid.n[2], 5);  // layers 0-3 and the ghost layer 4
  const auto on_border_layer = [&](std::uint32_t n) { return grid.coords(Index(n)).z == 3; };
  const CellLists fused = build_cell_lists<D3Q19>(grid, flags, local.faces, false, true);
  EXPECT_EQ(fused.boundary_next_to_ghost, Index(0));
  EXPECT_EQ(fused.border.size(), std::size_t(9 * 7));  // the whole layer, walls included
  std::size_t walls = 0;
  for (const auto n : fused.border) {
    EXPECT_TRUE(on_border_layer(n));
    if (flags[n] != kBoundaryFluid) continue;
    ++walls;
    EXPECT_TRUE(fused.links[n] & kListedCell);
  }
  EXPECT_EQ(walls, std::size_t(2 * (9 + 7) - 4));
  const CellLists listed = build_cell_lists<D3Q19>(grid, flags, local.faces, false, false);
  EXPECT_EQ(listed.boundary_next_to_ghost, Index(walls));
  EXPECT_EQ(listed.border.size(), std::size_t(7 * 5));  // the fluid cells alone
}

double max_difference(const std::vector<double>& a, const std::vector<double>& b) {
  EXPECT_EQ(a.size(), b.size());
  double worst = a.size() == b.size() ? 0.0 : 1e300;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) worst = std::max(worst, std::fabs(a[i] - b[i]));
  return worst;
}

struct Variant {
  const char* name;
  int alpha;
  bool faces;
  int kernels;
};
const Variant kVariants[] = {{"soa", 0, false, 1},     {"csoa2", 2, false, 1},   {"csoa8", 8, false, 1},  {"csoa64", 64, false, 1},
                             {"faces", 0, true, 1},    {"split", 0, false, 2},  {"csoa32_faces_split", 32, true, 2}};

class KernelOptions : public ::testing::TestWithParam<std::tuple<LatticeKind, CollisionKind, int>> {};

TEST_P(KernelOptions, GiveTheDefaultKernelsPopulations) {
  const auto [lat, col, scene] = GetParam();
  ASSERT_TRUE(supports(lat, col));
  SolverConfig c = scene == 0 ? test::closed_box(lat) : test::channel(lat);
  c.collision = col;
  c.acm_velocity = 0.05;
  auto ref = make_solver(c);  // the automatic layout: CSoA(32) for FP64 populations
  ref->step(15);
  const auto a = ref->populations();
  const auto fa = ref->macroscopic();
  for (const auto& v : kVariants) {
    SolverConfig o = c;
    o.csoa_alpha = v.alpha, o.face_kernels = v.faces, o.collision_kernels = v.kernels;
    auto s = make_solver(o);
    s->step(15);
    // Equal bit for bit on the host; a GPU compiler may contract multiply-adds differently in
    // the per-face and split kernels, hence a few ulps.
    EXPECT_LE(max_difference(a, s->populations()), 1e-15) << v.name;
    const auto fb = s->macroscopic();
    for (std::size_t i = 0; i < fa.rho.size(); ++i) ASSERT_NEAR(fb.rho[i], fa.rho[i], 1e-13) << v.name;
  }
  // The comparison is not trivial: the flow moved.
  double umax = 0;
  for (const auto& u : fa.u) umax = std::max(umax, std::fabs(u[0]));
  EXPECT_GT(umax, 1e-3);
}

std::string scene_name(const ::testing::TestParamInfo<std::tuple<LatticeKind, CollisionKind, int>>& i) {
  return std::string(to_string(std::get<0>(i.param))) + "_" + to_string(std::get<1>(i.param)) +
         (std::get<2>(i.param) == 0 ? "_closed_box" : "_channel");
}
INSTANTIATE_TEST_SUITE_P(TensorLattices, KernelOptions,
                         ::testing::Combine(::testing::Values(LatticeKind::D2Q9, LatticeKind::D3Q27),
                                            ::testing::Values(CollisionKind::Bgk, CollisionKind::Trt,
                                                              CollisionKind::AdaptiveCentralMoment),
                                            ::testing::Values(0, 1)),
                         scene_name);
INSTANTIATE_TEST_SUITE_P(D3Q19, KernelOptions,  // no central moments on D3Q19
                         ::testing::Combine(::testing::Values(LatticeKind::D3Q19),
                                            ::testing::Values(CollisionKind::Bgk, CollisionKind::Trt),
                                            ::testing::Values(0, 1)),
                         scene_name);

TEST(KernelOptions, Fp16StorageAndImmersedBodiesToo) {
  auto c = test::closed_box(LatticeKind::D3Q27);
  c.precision = Precision::FP32, c.storage = StorageKind::FP16;
  auto a = make_solver(c);
  c.csoa_alpha = 16, c.face_kernels = true, c.collision_kernels = 2;
  auto b = make_solver(c);
  a->step(12), b->step(12);
  // bit for bit on the host; on a GPU a multiply-add contracted differently can move a value by
  // one FP16 step (2^-14 of its deviation's scale, under 1e-5)
  EXPECT_LE(max_difference(a->populations(), b->populations()), 1e-5);

  auto d = test::periodic_box(LatticeKind::D3Q27, 24, 20, 16, 0.8);
  d.initial.velocity = {0.04, 0, 0};
  Body s;
  s.shape = Body::Shape::Sphere, s.radius = 4.0, s.spacing = 0.4, s.position = {10.3, 9.8, 8.1};
  d.bodies.push_back(s);
  d.csoa_alpha = 0;
  auto e = make_solver(d);
  d.csoa_alpha = 32;
  auto f = make_solver(d);
  e->step(10), f->step(10);
  // scatter spreading adds with atomics: on a GPU in any order, so equal to round-off there
  EXPECT_LE(max_difference(e->populations(), f->populations()), 1e-14);
  for (int k = 0; k < 3; ++k)
    EXPECT_NEAR(e->body_loads()[0].force[std::size_t(k)], f->body_loads()[0].force[std::size_t(k)], 1e-12);
  EXPECT_GT(std::fabs(e->body_loads()[0].force[0]), 1e-4);
}

TEST(KernelOptions, SavedStateIsLayoutFree) {
  // A checkpoint's state is packed in one order whatever the layout: a run saved with CSoA
  // continues with SoA (and back) on the same populations, after odd and even step counts.
  for (auto streaming : {Streaming::TwoArray, Streaming::InPlace})
    for (int steps : {9, 10}) {
      auto c = test::channel(LatticeKind::D3Q19);
      c.streaming = streaming;
      c.csoa_alpha = 16;
      auto a = make_solver(c);
      a->step(steps);
      int phase = -1;
      const StatePiece piece = a->state(phase);
      c.csoa_alpha = 0;
      auto b = make_solver(c);
      b->load_state(piece, phase);
      EXPECT_LE(max_difference(a->populations(), b->populations()), 0.0);
      a->step(6), b->step(6);
      EXPECT_LE(max_difference(a->populations(), b->populations()), 1e-15) << to_string(streaming) << " " << steps;
    }
}

TEST(KernelOptions, InPlaceStreamingTakesTheLayoutOnly) {
  for (auto lat : {LatticeKind::D2Q9, LatticeKind::D3Q19, LatticeKind::D3Q27})
    for (auto c : {test::closed_box(lat), test::channel(lat)}) {
      c.streaming = Streaming::InPlace;
      c.csoa_alpha = 0;
      auto a = make_solver(c);
      c.csoa_alpha = 8;
      auto b = make_solver(c);
      for (int steps : {7, 8}) {  // after a streaming step and after a local one
        a->step(steps), b->step(steps);
        EXPECT_LE(max_difference(a->populations(), b->populations()), 1e-15) << to_string(lat) << " " << steps;
      }
    }
  auto c = test::closed_box(LatticeKind::D3Q19);
  c.streaming = Streaming::InPlace;
  c.face_kernels = true;
  EXPECT_THROW(make_solver(c), std::invalid_argument);
  c.face_kernels = false, c.collision_kernels = 2;
  EXPECT_THROW(make_solver(c), std::invalid_argument);
  c.streaming = Streaming::Moments, c.collision = CollisionKind::Regularized, c.collision_kernels = 1, c.csoa_alpha = 32;
  EXPECT_THROW(make_solver(c), std::invalid_argument);
  c.streaming = Streaming::TwoArray, c.collision_kernels = 3, c.csoa_alpha = 0;
  EXPECT_THROW(make_solver(c), std::invalid_argument);
  c.collision_kernels = 1, c.csoa_alpha = 48;
  EXPECT_THROW(make_solver(c), std::invalid_argument);
}

// The step clock records the first `steps` steps it sees, averages each point over them and
// takes the exposed part as End - Interior.
TEST(StepClock, AveragesThePointsOfTheRecordedStepsOnly) {
  StepClock clock(2);
  const ExecSpace e;
  for (int s = 0; s < 3; ++s) {
    clock.start(e);
    clock.mark(e, StepPoint::Interior);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    clock.mark(e, StepPoint::End);
  }
  const Timeline t = clock.timeline();
  EXPECT_EQ(t.steps, 2);
  EXPECT_TRUE(t.marked(StepPoint::Interior));
  EXPECT_TRUE(t.marked(StepPoint::End));
  EXPECT_FALSE(t.marked(StepPoint::Border));
  EXPECT_GE(t.mean_ms[std::size_t(StepPoint::Interior)], 0.0);
  EXPECT_GE(t.max_ms[std::size_t(StepPoint::End)], t.mean_ms[std::size_t(StepPoint::End)]);
  EXPECT_GE(t.exposed_ms, 1.5);  // the 2 ms sleep between the two marks
  EXPECT_NEAR(t.exposed_ms,
              t.mean_ms[std::size_t(StepPoint::End)] - t.mean_ms[std::size_t(StepPoint::Interior)],
              1e-9);
  EXPECT_EQ(StepClock(0).timeline().exposed_ms, -1.0);
  // every point has one name, in the enum's order
  for (int k = 0; k < kStepPoints; ++k) EXPECT_EQ(int(kStepPointNames[std::size_t(k)].point), k);
}

// Kernels launched through async_launch's policies (free functions: nvcc takes no extended
// lambda inside a test body, a private member function in gtest before 1.15).
Kokkos::View<Index*, MemSpace> indices_in(
    const decltype(async_launch(Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<Index>>()))& range,
    Index n) {
  Kokkos::View<Index*, MemSpace> hits("hits", n);
  Kokkos::parallel_for(
      "test_async_range", range, KOKKOS_LAMBDA(const Index i) { hits(i) = i; });
  return hits;
}
Kokkos::View<int*, MemSpace> team_ranks(
    const decltype(async_launch(Kokkos::TeamPolicy<ExecSpace>()))& team) {
  Kokkos::View<int*, MemSpace> ranks("teams", team.league_size());
  using Member = Kokkos::TeamPolicy<ExecSpace>::member_type;
  Kokkos::parallel_for(
      "test_async_team", team,
      KOKKOS_LAMBDA(const Member& m) { ranks(m.league_rank()) = m.league_rank() + 1; });
  return ranks;
}

// async_launch asks for the functor as a kernel argument (never Kokkos' constant-memory buffer,
// whose reuse makes the host wait for the device) and keeps the rest of the policy: range,
// league, team size, scratch; the kernels it launches run as before.
TEST(AsyncLaunch, KeepsThePolicyAndAsksForAKernelArgument) {
  using Light = Kokkos::Experimental::WorkItemProperty::HintLightWeight_t;
  const auto range =
      async_launch(Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<Index>>(ExecSpace(), 3, 17));
  static_assert(std::is_same_v<std::decay_t<decltype(range)>::work_item_property, Light>);
  EXPECT_EQ(range.begin(), 3);
  EXPECT_EQ(range.end(), 17);
  auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, indices_in(range, 20));
  for (Index i = 0; i < 20; ++i) EXPECT_EQ(h(i), i >= 3 && i < 17 ? i : 0) << i;

  auto team = async_launch(Kokkos::TeamPolicy<ExecSpace>(ExecSpace(), 5, 1));
  static_assert(std::is_same_v<decltype(team)::work_item_property, Light>);
  team.set_scratch_size(0, Kokkos::PerTeam(64));
  EXPECT_EQ(team.league_size(), 5);
  EXPECT_EQ(team.team_size(), 1);
  EXPECT_EQ(team.scratch_size(0), 64);
  auto t = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, team_ranks(team));
  for (int i = 0; i < 5; ++i) EXPECT_EQ(t(i), i + 1);
}

}  // namespace
