// SPDX-License-Identifier: Apache-2.0
// The moment representation (streaming = moments) against the population form of the same
// regularized operator: the same post-collision populations and fields to round-off over many
// steps, for every boundary type, lattice and both operators, on boxes that do and do not fill
// whole tiles.
#include <kolibri/solver/Solver.hpp>
#include <kolibri/stepping/MomentStream.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "Helpers.hpp"

namespace {
using namespace kolibri;

SolverConfig scene_config(LatticeKind lat, int scene) {
  const bool two_d = lat == LatticeKind::D2Q9;
  switch (scene) {
    case 0: return test::closed_box(lat);  // walls, a moving lid, a sphere, a body force
    case 1: return test::channel(lat);     // velocity inlet, pressure outlet, walls, an obstacle
    case 2: {                              // periodic, Taylor-Green vortex and a force
      SolverConfig c = test::periodic_box(lat, 9, 7, two_d ? 1 : 5, 0.6);
      c.initial.kind = InitialCondition::Kind::TaylorGreen;
      c.initial.velocity = {0.05, 0, 0};
      c.force = {0, 1e-5, 0};
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

class Moments : public ::testing::TestWithParam<std::tuple<LatticeKind, CollisionKind, int>> {};

TEST_P(Moments, MatchPopulationForm) {
  const auto [lat, col, scene] = GetParam();
  SolverConfig c = scene_config(lat, scene);
  c.collision = col;
  auto pop = make_solver(c);
  c.streaming = Streaming::Moments;
  if (scene != 3) c.moment_segment = 3;  // columns cut into segments of 3 layers (scene 3: whole)
  auto mr = make_solver(c);
  const int m = lat == LatticeKind::D2Q9 ? 6 : 10, q = lat == LatticeKind::D2Q9 ? 9 : lat == LatticeKind::D3Q19 ? 19 : 27;
  EXPECT_EQ(mr->bytes_per_cell(), 2.0 * m * 8 + 1);
  EXPECT_EQ(mr->bytes_per_update(), 2.0 * m * 8 + 1);
  EXPECT_EQ(mr->populations_per_cell(), m);
  EXPECT_EQ(pop->bytes_per_cell(), 2.0 * q * 8 + 1);
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
    EXPECT_EQ(mr->bytes_per_cell(), 81.0);
    pop->step(100);
    mr->step(100);
    const auto fa = pop->macroscopic(), fb = mr->macroscopic();
    for (std::size_t i = 0; i < fa.rho.size(); ++i) {
      ASSERT_NEAR(fb.rho[i], fa.rho[i], 2e-6) << "cell " << i;
      for (int d = 0; d < 3; ++d) ASSERT_NEAR(fb.u[i][d], fa.u[i][d], 2e-6) << "cell " << i;
    }
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

TEST(MomentKernel, TilesAreCompiledAndListed) {
  // The host runs its one fixed tile whatever is asked; the GPU list names what --tile accepts.
  EXPECT_EQ((MomentTiles<3, false>::list()), "30x6, 14x6");
  EXPECT_EQ((MomentTiles<2, false>::list()), "254x1, 126x1");
  const MomentTile t = MomentStep<D3Q19, double, RegularizedBgk<D3Q19, double>>::fit(MomentTile{30, 6, 32, 2});
  EXPECT_EQ(t.segment, 32);
  EXPECT_GE(t.planes, 1);
}

std::string scene_name(const ::testing::TestParamInfo<Moments::ParamType>& i) {
  static const char* const scenes[] = {"closed_box_lid_sphere_force", "inlet_outlet_obstacle", "periodic_tgv_force",
                                       "several_tiles_lid_obstacle"};
  return std::string(to_string(std::get<0>(i.param))) + "_" + to_string(std::get<1>(i.param)) + "_" +
         scenes[std::get<2>(i.param)];
}

INSTANTIATE_TEST_SUITE_P(
    Scenes, Moments,
    ::testing::Combine(::testing::Values(LatticeKind::D2Q9, LatticeKind::D3Q19, LatticeKind::D3Q27),
                       ::testing::Values(CollisionKind::Regularized, CollisionKind::RecursiveRegularized),
                       ::testing::Values(0, 1, 2, 3)),
    scene_name);
}  // namespace
