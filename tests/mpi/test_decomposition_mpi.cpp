// SPDX-License-Identifier: Apache-2.0
// Run under mpirun with 1, 2, 4 and 8 ranks: a decomposed run gives the same fields, bit for
// bit, as the single-rank run of the same case, for every boundary type, obstacles across rank
// borders, every storage scheme (two arrays, in place, moments), every lattice and storage, and
// several process grids.
#include <kolibri/core/Backend.hpp>
#include <kolibri/core/Kokkos.hpp>
#include <kolibri/geometry/SolidImage.hpp>
#include <kolibri/ib/Coupling.hpp>
#include <kolibri/io/Output.hpp>
#include <kolibri/parallel/Comm.hpp>
#include <kolibri/parallel/Decomposition.hpp>
#include <kolibri/parallel/Nccl.hpp>
#include <kolibri/refine/RefinedGrid.hpp>
#include <kolibri/run/Runner.hpp>
#include <kolibri/solver/Solver.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include "Helpers.hpp"

namespace {
using namespace kolibri;

const Comm& comm() { return Comm::world(); }

/// NCCL/RCCL between GPUs where built (compared like the MPI transport), else none.
const NcclComm* nccl() {
  static std::unique_ptr<NcclComm> n = [] {
    const bool gpu = !std::is_same_v<MemSpace, Kokkos::HostSpace>;
    const auto uids = comm().allgather(backend_info().device_uid);  // NCCL: one rank per GPU
    const bool distinct = std::set<std::string>(uids.begin(), uids.end()).size() == uids.size();
    return gpu && distinct && NcclComm::built() && comm().size() > 1 ? std::make_unique<NcclComm>(comm()) : nullptr;
  }();
  return n.get();
}

SolverConfig closed_box(LatticeKind lat) { return test::closed_box(lat); }
/// The open channel with a parabolic inlet that ramps up (profiles come from global positions,
/// the time factor from the step count: both the same on every rank count; the moment
/// representation takes the inlet uniform).
SolverConfig channel(LatticeKind lat) {
  SolverConfig c = test::channel(lat, 11);
  c.faces[0].profile = InletProfile::Parabolic;
  c.faces[0].ramp_steps = 7;
  return c;
}

/// The open channel with an inlet profile read from a file: a value a cell of the face that no
/// symmetry repeats, so a rank that took another rank's part of the plane would differ.
SolverConfig file_channel(LatticeKind lat) {
  SolverConfig c = test::channel(lat, 11);
  const std::size_t cells = std::size_t(c.ny) * std::size_t(c.nz);
  std::vector<double> values(cells);
  for (std::size_t k = 0; k < cells; ++k) values[k] = 0.5 + 0.1 * double(k % 7) + 0.01 * double(k);
  c.faces[0].profile = InletProfile::File;
  c.faces[0].profile_values = std::make_shared<const std::vector<double>>(values);
  return c;
}

/// Fully periodic Taylor-Green vortex (wrap-around across rank borders).
SolverConfig tgv(LatticeKind lat) {
  const bool two_d = lat == LatticeKind::D2Q9;
  auto c = test::periodic_box(lat, 16, 12, two_d ? 1 : 8, 0.6);
  c.initial.kind = InitialCondition::Kind::TaylorGreen;
  c.initial.velocity = {0.05, 0, 0};
  return c;
}

/// Run the case for `steps` steps on one rank (every rank, alone) and decomposed over all ranks
/// with the given grid; compare the fields on rank 0, bit for bit.
void expect_identical(const SolverConfig& cfg, std::array<int, 3> grid, int steps,
                      const std::string& what, Balance balance = Balance::Volume) {
  SCOPED_TRACE(what);
  if (grid[0] > cfg.nx || grid[1] > cfg.ny || grid[2] > cfg.nz) return;  // more ranks than cells along an axis
  auto ref = make_solver(cfg);
  ref->step(steps);
  const MacroFields a = ref->macroscopic();
  const Diagnostics da = ref->diagnostics();

  Distribution dist = distribute(cfg, comm(), grid, balance);
  auto par = make_solver(cfg, dist);
  EXPECT_EQ(par->fluid_cells(), ref->fluid_cells());
  par->step(steps);
  const MacroFields b = par->macroscopic();
  if (nccl()) {  // the same through NCCL
    dist.nccl = nccl();
    auto via_nccl = make_solver(cfg, dist);
    via_nccl->step(steps);
    const MacroFields c = via_nccl->macroscopic();
    if (comm().root()) {
      EXPECT_EQ(c.rho, b.rho) << "NCCL transport";
      EXPECT_EQ(c.u, b.u) << "NCCL transport";
    }
  }
  // Flow statistics: gathered on several ranks, reduced on the device on one (rank 0's values).
  const FlowStatistics fa = ref->flow_statistics(), fb = par->flow_statistics();
  if (comm().root()) {
    EXPECT_NEAR(fb.kinetic_energy, fa.kinetic_energy, 1e-12 * fa.kinetic_energy);
    EXPECT_NEAR(fb.enstrophy, fa.enstrophy, 1e-12 * fa.enstrophy + 1e-300);
  }
  const Diagnostics db = par->diagnostics();
  EXPECT_NEAR(db.mass, da.mass, 1e-9 * da.mass);  // summation order differs
  EXPECT_EQ(db.max_speed, da.max_speed);
  EXPECT_EQ(db.first_bad, -1);
  // Probes: global cell indices, answered on every rank.
  const std::vector<std::int64_t> cells = {0, cfg.cells() / 3, cfg.cells() - 1};
  const MacroFields sa = ref->sample(cells), sb = par->sample(cells);
  for (std::size_t i = 0; i < cells.size(); ++i) {
    EXPECT_EQ(sa.rho[i], sb.rho[i]);
    EXPECT_EQ(sa.u[i], sb.u[i]);
  }
  // Obstacle loads: each rank sums its links, the sum over ranks is the single-rank sum (to the
  // summation order).
  const std::vector<BodyLoad> la = ref->obstacle_loads(), lb = par->obstacle_loads();
  ASSERT_EQ(la.size(), lb.size());
  for (std::size_t k = 0; k < la.size(); ++k) {
    double scale = 1e-300;
    for (int d = 0; d < 3; ++d) scale = std::max(scale, std::fabs(la[k].force[std::size_t(d)]));
    EXPECT_GT(scale, 1e-12) << "obstacle " << la[k].name
                            << " takes a force (the comparison is not trivial)";
    for (std::size_t d = 0; d < 3; ++d) {
      EXPECT_NEAR(lb[k].force[d], la[k].force[d], 1e-12 * scale) << la[k].name;
      EXPECT_NEAR(lb[k].torque[d], la[k].torque[d], 1e-10 * scale) << la[k].name;
    }
  }
  if (!comm().root()) return;
  ASSERT_EQ(a.rho.size(), b.rho.size());
  std::size_t diff = 0, first = 0;
  for (std::size_t i = 0; i < a.rho.size(); ++i)
    if (a.rho[i] != b.rho[i] || a.u[i] != b.u[i] || a.solid[i] != b.solid[i]) {
      if (diff++ == 0) first = i;
    }
  EXPECT_EQ(diff, 0u) << "cells differing from the single-rank run; the first at (" << first % std::size_t(a.nx) << ", "
                      << first / std::size_t(a.nx) % std::size_t(a.ny) << ", " << first / std::size_t(a.nx * a.ny) << ")";
  double moved = 0.0;
  for (const auto& u : a.u) moved = std::max(moved, u[0] * u[0] + u[1] * u[1]);
  EXPECT_GT(moved, 0.0) << "the flow moved (the comparison is not trivial)";
}

/// Process grids for the current rank count: automatic and a few forced ones.
std::vector<std::array<int, 3>> grids(bool two_d) {
  const int n = comm().size();
  std::vector<std::array<int, 3>> g = {{0, 0, 0}, {n, 1, 1}, {1, n, 1}};
  if (!two_d) g.push_back({1, 1, n});
  if (n == 4) g.push_back({2, 2, 1});
  if (n == 8 && !two_d) g.push_back({2, 2, 2});
  if (n == 8) g.push_back({4, 2, 1});
  return g;
}

std::string name(const std::array<int, 3>& g) {
  return g[0] == 0 ? "auto" : std::to_string(g[0]) + "x" + std::to_string(g[1]) + "x" + std::to_string(g[2]);
}

struct Variant {
  Precision precision;
  StorageKind storage;
  Streaming streaming;
  CollisionKind collision;
};

TEST(Decomposition, BoxesTileTheDomainAndNeighboursAgree) {
  auto cfg = closed_box(LatticeKind::D3Q19);
  cfg.nx = 37, cfg.ny = 23, cfg.nz = 11;
  for (const auto& g : grids(false)) {
    std::int64_t cells = 0;
    for (int r = 0; r < comm().size(); ++r) {
      const auto d = Decomposition::make(cfg, comm().size(), r, g);
      cells += d.mine.cells();
      for (int k = 0; k < 27; ++k) {
        const int peer = d.neighbour[std::size_t(k)];
        if (peer < 0) continue;
        const auto e = Decomposition::make(cfg, comm().size(), peer, g);
        EXPECT_EQ(e.neighbour[std::size_t(26 - k)], r) << "neighbours must see each other";
      }
    }
    EXPECT_EQ(cells, cfg.cells()) << name(g);
  }
}

// Solver::step_timeline steps as step() does (bit for bit) and marks each scheme's points; on
// several ranks the exchange's too.
TEST(Decomposition, StepTimelineChangesNothingAndMarksTheExchange) {
  for (const Streaming streaming : {Streaming::TwoArray, Streaming::InPlace, Streaming::Moments}) {
    SolverConfig cfg = tgv(LatticeKind::D3Q19);
    cfg.streaming = streaming;
    if (streaming == Streaming::Moments) cfg.collision = CollisionKind::Regularized;
    SCOPED_TRACE(to_string(streaming));
    const Distribution dist = distribute(cfg, comm(), {0, 0, 0});
    auto a = make_solver(cfg, dist), b = make_solver(cfg, dist);
    a->step(6);
    const Timeline t = b->step_timeline(6);
    EXPECT_EQ(a->populations(), b->populations());
    EXPECT_EQ(b->steps_done(), 6);
    EXPECT_EQ(t.steps, 6);
    EXPECT_TRUE(t.marked(StepPoint::Interior));
    EXPECT_TRUE(t.marked(StepPoint::End));
    EXPECT_EQ(t.marked(StepPoint::LocalEnd), streaming == Streaming::InPlace);
    EXPECT_GE(t.exposed_ms, 0.0);
    const bool exchange = comm().size() > 1;
    for (StepPoint p :
         {StepPoint::Border, StepPoint::Packed, StepPoint::Transferred, StepPoint::Received})
      EXPECT_EQ(t.marked(p), exchange) << int(p);
    EXPECT_EQ(t.marked(StepPoint::ForwardReceived), exchange && streaming == Streaming::InPlace);
  }
}

TEST(Decomposition, AutomaticGridCutsTheSmallestPlanes) {
  auto cfg = test::periodic_box(LatticeKind::D3Q19, 64, 64, 256);
  EXPECT_EQ(Decomposition::choose_grid(cfg, 4), (std::array<int, 3>{1, 1, 4}));
  cfg = test::periodic_box(LatticeKind::D3Q19, 256, 64, 64);
  EXPECT_EQ(Decomposition::choose_grid(cfg, 4), (std::array<int, 3>{4, 1, 1}));
  cfg = test::periodic_box(LatticeKind::D2Q9, 100, 40, 1);
  EXPECT_EQ(Decomposition::choose_grid(cfg, 2), (std::array<int, 3>{2, 1, 1}));
  EXPECT_THROW(Decomposition::make(cfg, 2, 0, {1, 1, 2}), std::invalid_argument);
  EXPECT_THROW(Decomposition::make(cfg, 3, 0, {2, 1, 1}), std::invalid_argument);
}

TEST(Decomposition, IdenticalToOneRankTwoArrays) {
  for (auto lat : {LatticeKind::D2Q9, LatticeKind::D3Q19, LatticeKind::D3Q27})
    for (const auto& g : grids(lat == LatticeKind::D2Q9)) {
      const std::string l = to_string(lat);
      expect_identical(closed_box(lat), g, 12, l + " closed box " + name(g));
      expect_identical(channel(lat), g, 12, l + " channel " + name(g));
      expect_identical(file_channel(lat), g, 12, l + " channel, profile file " + name(g));
      expect_identical(tgv(lat), g, 12, l + " Taylor-Green " + name(g));
    }
}

// An outflow face (its rule reads the layer next to it and cells along the face, across rank
// borders; in place its writes into ghost cells go back with the reverse exchange), with solids
// where the rule falls back (next to the face and in its layer), in both population schemes
// and the moment representation (its sources' populations rebuilt from their moments, ghost
// cells' too); and a characteristic outlet there (one density a face, from the velocities summed
// over the ranks).
TEST(Decomposition, IdenticalToOneRankWithAnOutflowFace) {
  for (auto lat : {LatticeKind::D2Q9, LatticeKind::D3Q19, LatticeKind::D3Q27})
    for (const auto& g : grids(lat == LatticeKind::D2Q9))
      for (const Streaming streaming :
           {Streaming::TwoArray, Streaming::InPlace, Streaming::Moments})
        for (const bool characteristic : {false, true}) {
          SolverConfig c = test::channel(lat);
          c.nx = 32;  // at least two layers a rank next to the outflow face on 8 ranks along x
          c.streaming = streaming;
          if (streaming == Streaming::Moments) c.collision = CollisionKind::Regularized;
          c.faces[1].type = characteristic ? FaceType::PressureOutlet : FaceType::Outflow;
          if (characteristic) c.faces[1].pressure_rule = PressureRule::Characteristic;
          c.initial.velocity = {0.04, 0, 0};  // the flow reaches the face within the steps
          Obstacle inner, in_face;
          inner.min = {double(c.nx - 2), 2, 0},
          inner.max = {double(c.nx - 1), 4, 100};  // x = nx - 2, y = 2, 3
          in_face.min = {double(c.nx - 1), 7, 0},
          in_face.max = {double(c.nx), 8, 100};  // x = nx - 1, y = 7
          c.obstacles.push_back(inner);
          c.obstacles.push_back(in_face);
          expect_identical(c, g, 12,
                           std::string(to_string(lat)) +
                               (characteristic ? " characteristic outlet " : " outflow ") +
                               to_string(streaming) + " " + name(g));
        }
}

// Curved walls: the closed box's sphere with interpolated walls, rotating, and an interpolated
// cylinder whose solid is outside it (link rules across rank borders, the second fluid cell of
// a link in a ghost layer), in both population schemes (in place: the near-wall links completed
// after the reverse exchange); and the same cylinder as a closed triangle mesh (D2Q9, D3Q19),
// whose link distances every rank finds from the same triangles.
TEST(Decomposition, IdenticalToOneRankWithCurvedWalls) {
  for (auto lat : {LatticeKind::D2Q9, LatticeKind::D3Q19, LatticeKind::D3Q27})
    for (const bool mesh : {false, true}) {
      if (mesh && lat == LatticeKind::D3Q27) continue;
      for (const auto& g : grids(lat == LatticeKind::D2Q9))
        for (const Streaming streaming : {Streaming::TwoArray, Streaming::InPlace}) {
          SolverConfig c = mesh ? test::mesh_walls(lat) : test::curved_walls(lat);
          c.streaming = streaming;
          expect_identical(c, g, 12,
                           std::string(to_string(lat)) +
                               (mesh ? " mesh walls " : " curved walls ") + to_string(streaming) +
                               " " + name(g));
        }
    }
}

// Immersed bodies across rank borders (a body at rest on the box's middle planes, where the
// grids cut, and one that translates and turns): every rank holds every sample, a sample whose
// stencil crosses a border reads its nodes from the sum over ranks of the node table, so fields
// and loads are the single-rank ones bit for bit (three forcing passes, retraction 0.3: the
// defaults).
TEST(Decomposition, IdenticalToOneRankWithImmersedBodies) {
  for (auto lat : {LatticeKind::D2Q9, LatticeKind::D3Q27})
    for (auto streaming : {Streaming::TwoArray, Streaming::InPlace, Streaming::Moments})
      for (const auto& g : grids(lat == LatticeKind::D2Q9)) {
        const bool two_d = lat == LatticeKind::D2Q9;
        SolverConfig c = test::periodic_box(lat, 24, 16, two_d ? 1 : 12, 0.8);
        if (streaming == Streaming::Moments) c.collision = CollisionKind::Regularized;
        c.initial.velocity = {0.04, 0.01, 0};
        Body rest;
        rest.name = "rest";
        rest.shape = two_d ? Body::Shape::Cylinder : Body::Shape::Sphere;
        rest.radius = 4.0, rest.spacing = 0.35;
        rest.position = {12.0, 8.0, two_d ? 0.5 : 6.0};
        Body moving = rest;
        moving.name = "moving", moving.radius = 2.5;
        moving.position = {5.3, 7.6, two_d ? 0.5 : 6.2};
        moving.velocity = {0.01, 0.005, 0}, moving.angular_velocity = {0, 0, 0.01};
        Body falling = moving;  // free: its motion comes from the loads summed over the ranks
        falling.name = "falling", falling.velocity = {0, 0, 0},
        falling.angular_velocity = {0, 0, 0};
        falling.position = {19.4, 8.3, two_d ? 0.5 : 6.1};
        falling.free = true, falling.density = 1.4;
        c.ib.gravity = {0, -1e-4, 0};
        c.bodies = {rest, moving, falling};
        c.streaming = streaming;
        const std::string what = std::string(to_string(lat)) + " " + to_string(streaming) +
                                 " immersed bodies " + name(g);
        expect_identical(c, g, 12, what);
        if (g[0] > c.nx || g[1] > c.ny || g[2] > c.nz) continue;
        auto one = make_solver(c), all = make_solver(c, distribute(c, comm(), g));
        one->step(12), all->step(12);
        const auto la = one->body_loads(), lb = all->body_loads();
        EXPECT_EQ(all->body_loads()[0].force, lb[0].force)
            << what << ": asking twice changes nothing";
        ASSERT_EQ(la.size(), 3u);
        ASSERT_EQ(lb.size(), 3u);
        EXPECT_EQ(all->body_motion(), one->body_motion()) << what << ": the free body's motion";
        EXPECT_NE(la[2].centre, falling.position) << what << ": the free body moved";
        for (std::size_t k = 0; k < 3; ++k) {
          EXPECT_GT(std::fabs(la[k].force[0]), 1e-8) << what << ": the body takes a force";
          EXPECT_EQ(lb[k].force, la[k].force) << what << " " << la[k].name;
          EXPECT_EQ(lb[k].torque, la[k].torque) << what << " " << la[k].name;
          EXPECT_EQ(lb[k].centre, la[k].centre) << what << " " << la[k].name;
        }
        if (comm().size() > 1) {
          EXPECT_GT(all->ib_stats().shared_samples, 0) << what << ": the bodies cross rank borders";
          EXPECT_LT(all->ib_stats().shared_samples, all->ib_stats().samples) << what;
          c.ib.spreading = ImmersedSettings::Spreading::Gather;
          EXPECT_THROW(make_solver(c, distribute(c, comm(), g)), std::invalid_argument)
              << "gathering runs on one rank";
          c.ib.spreading = ImmersedSettings::Spreading::Scatter;
          c.ib.forcing = ImmersedSettings::Forcing::Implicit;
          EXPECT_THROW(make_solver(c, distribute(c, comm(), g)), std::invalid_argument)
              << "the implicit forcing runs on one rank";
        }
      }
}

// A porous sample ([geometry]: random spheres, wrapping across the periodic faces) driven by a
// body force: every rank reads its cells from the whole domain's solids; its momentum (the
// permeability's) is the single-rank one to the summation order.
TEST(Decomposition, IdenticalToOneRankOnAPorousSample) {
  for (auto lat : {LatticeKind::D2Q9, LatticeKind::D3Q19})
    for (const auto& g : grids(lat == LatticeKind::D2Q9))
      for (const Streaming streaming :
           {Streaming::TwoArray, Streaming::InPlace, Streaming::Moments}) {
        const bool two_d = lat == LatticeKind::D2Q9;
        SolverConfig c = test::periodic_box(lat, 16, 12, two_d ? 1 : 10, 0.8);
        c.collision =
            streaming == Streaming::Moments ? CollisionKind::Regularized : CollisionKind::Trt;
        c.streaming = streaming;
        c.force = {1e-5, 0, 0};
        c.geometry.kind = SolidGeometry::Kind::RandomSpheres;
        c.geometry.diameter = 4, c.geometry.porosity = 0.6;
        resolve_geometry(c.geometry, {c.nx, c.ny, c.nz}, c.periodic_axes(), two_d ? 2 : 3);
        const std::string what =
            std::string(to_string(lat)) + " porous " + to_string(streaming) + " " + name(g);
        expect_identical(c, g, 12, what);
        auto one = make_solver(c), all = make_solver(c, distribute(c, comm(), g));
        one->step(12), all->step(12);
        const auto ja = one->momentum(), jb = all->momentum();
        for (std::size_t d = 0; d < 3; ++d)
          EXPECT_NEAR(jb[d], ja[d], 1e-12 * std::fabs(ja[0])) << what;
      }
}

// Slabs of near-equal fluid cells (parallel.balance = "fluid"): a porous sample whose upper half
// is solid, cut where the fluid is shared evenly, not the volume; the fields are the single
// rank's, bit for bit, on the dense box and on tiles.
TEST(Decomposition, IdenticalToOneRankWithSlabsOfEqualFluid) {
  for (auto lat : {LatticeKind::D2Q9, LatticeKind::D3Q19})
    for (const auto& g : grids(lat == LatticeKind::D2Q9))
      for (const int tile_edge : {0, 4}) {
        const bool two_d = lat == LatticeKind::D2Q9;
        if (two_d && tile_edge > 0) continue;
        if (g[0] > 16 || g[1] > 12 || g[2] > (two_d ? 1 : 10)) continue;  // more ranks than layers
        SolverConfig c = test::periodic_box(lat, 16, 12, two_d ? 1 : 10, 0.8);
        c.collision = CollisionKind::Trt;
        c.force = {1e-5, 0, 0};
        c.tile_edge = tile_edge;
        c.geometry.kind = SolidGeometry::Kind::RandomSpheres;
        c.geometry.diameter = 4, c.geometry.porosity = 0.6;
        resolve_geometry(c.geometry, {c.nx, c.ny, c.nz}, c.periodic_axes(), two_d ? 2 : 3);
        auto solid = std::make_shared<std::vector<std::uint8_t>>(*c.geometry.solid);
        const int axis = two_d ? 1 : 2, n[3] = {c.nx, c.ny, c.nz};
        for (std::size_t i = 0; i < solid->size(); ++i) {
          const int at[3] = {int(i % std::size_t(c.nx)),
                             int(i / std::size_t(c.nx) % std::size_t(c.ny)),
                             int(i / std::size_t(c.nx * c.ny))};
          if (at[axis] >= n[axis] / 2) (*solid)[i] = 1;
        }
        c.geometry.solid = solid;
        const std::string what = std::string(to_string(lat)) + " slabs of equal fluid, tiles " +
                                 std::to_string(tile_edge) + " " + name(g);
        const Decomposition dc = distribute(c, comm(), g, Balance::Fluid).dc;
        if (dc.dims[std::size_t(axis)] > 1) {
          EXPECT_NE(dc.cuts, Decomposition::even_cuts(c, dc.dims)) << what;
        }
        expect_identical(c, g, 12, what, Balance::Fluid);
      }
}

// The tiled grid on every decomposition (each rank tiles its own box, ghost layers included, and
// the halo exchange packs tile-blocked values): the dense single-rank run's fields, bit for bit,
// on the porous sample and the open channel (inlet, outlet, walls, an obstacle) with the outlet
// on the anti-bounce-back, as an outflow face and as a characteristic outlet (rules that read the
// layer next to the face, across rank borders; the outlet's sums added over the ranks); two
// arrays and in place.
TEST(Decomposition, TilesIdenticalToTheDenseBoxOnOneRank) {
  enum { Porous, AntiBounceBack, Outflow, Characteristic };
  const char* names[] = {" porous ", " channel ", " outflow face ", " characteristic outlet "};
  for (auto lat : {LatticeKind::D2Q9, LatticeKind::D3Q19})
    for (const auto& g : grids(lat == LatticeKind::D2Q9))
      for (const int scene : {Porous, AntiBounceBack, Outflow, Characteristic})
        for (const Streaming streaming : {Streaming::TwoArray, Streaming::InPlace}) {
          const bool two_d = lat == LatticeKind::D2Q9, porous = scene == Porous;
          SolverConfig c = porous ? test::periodic_box(lat, 16, 12, two_d ? 1 : 10, 0.8)
                                  : test::anti_bounce_back(test::channel(lat));
          if (scene >= Outflow) {
            c.nx = 32;  // at least two layers a rank next to the face on 8 ranks along x
            c.initial.velocity = {0.04, 0, 0};  // the flow reaches the face within the steps
            c.faces[1].type = scene == Outflow ? FaceType::Outflow : FaceType::PressureOutlet;
            c.faces[1].pressure_rule =
                scene == Outflow ? PressureRule::Auto : PressureRule::Characteristic;
          }
          if (g[0] > c.nx || g[1] > c.ny || g[2] > c.nz) continue;
          c.collision = CollisionKind::Trt;
          c.streaming = streaming;
          if (porous) {
            c.force = {1e-5, 0, 0};
            c.geometry.kind = SolidGeometry::Kind::RandomSpheres;
            c.geometry.diameter = 4, c.geometry.porosity = 0.6;
            resolve_geometry(c.geometry, {c.nx, c.ny, c.nz}, c.periodic_axes(), two_d ? 2 : 3);
          }
          const std::string what =
              std::string(to_string(lat)) + names[scene] + to_string(streaming) + " " + name(g);
          auto one = make_solver(c);
          SolverConfig tiled = c;
          tiled.tile_edge = two_d ? 16 : 4;
          auto all = make_solver(tiled, distribute(tiled, comm(), g));
          EXPECT_EQ(all->fluid_cells(), one->fluid_cells()) << what;
          one->step(12), all->step(12);
          const MacroFields a = one->macroscopic(), b = all->macroscopic();
          if (comm().root()) {
            EXPECT_EQ(b.rho, a.rho) << what;
            EXPECT_EQ(b.u, a.u) << what;
          }
        }
}

// A restart on tiles over several ranks: the loads of interpolated walls, which read ghost cells
// through the dense copy, equal those of the run that saved the state: right after the load
// (two arrays; in place after a local step, where the ghost cells lag until fill_ghosts
// refreshes them), and in place saved after a streaming step, one step later (the f*_k that
// the momentum exchange reads after a streaming step, Scheme::link_leaving, are not in the
// checkpoint, on the dense box as on tiles: the next streaming step writes them again).
TEST(Decomposition, TilesRestartThenLoadsOnEveryDecomposition) {
  for (const auto& g : grids(false))
    for (const auto& [streaming, steps] :
         {std::pair{Streaming::TwoArray, 6}, {Streaming::InPlace, 6}, {Streaming::InPlace, 5}}) {
      SolverConfig c = test::curved_walls(LatticeKind::D3Q19);
      if (g[0] > c.nx || g[1] > c.ny || g[2] > c.nz) continue;
      c.tile_edge = 4;
      c.streaming = streaming;
      auto first = make_solver(c, distribute(c, comm(), g));
      first->step(steps);
      int phase = 0;
      const StatePiece piece = first->state(phase);
      auto second = make_solver(c, distribute(c, comm(), g));
      second->load_state(piece, phase);
      second->set_steps_done(steps);
      if (phase == 2) first->step(1), second->step(1);
      const auto la = first->obstacle_loads(), lb = second->obstacle_loads();
      ASSERT_EQ(la.size(), lb.size());
      for (std::size_t k = 0; k < la.size(); ++k)
        for (std::size_t d = 0; d < 3; ++d)
          EXPECT_NEAR(lb[k].force[d], la[k].force[d], 1e-14 + 1e-12 * std::fabs(la[k].force[d]))
              << to_string(streaming) << " after " << steps << " steps " << name(g);
    }
}

// The 3D Taylor-Green start and a start from a field file (each rank takes its box, ghost layers
// wrapped across the periodic faces) give the single-rank run on every decomposition.
TEST(Decomposition, IdenticalToOneRankFromTaylorGreen3DAndAFieldFile) {
  SolverConfig c = test::periodic_box(LatticeKind::D3Q19, 12, 12, 12, 0.6);
  c.initial.kind = InitialCondition::Kind::TaylorGreen3D;
  c.initial.velocity = {0.05, 0, 0};
  const std::string file = "decomposition_start_" + std::to_string(comm().size()) + ".h5";
  if (comm().root()) {
    auto s = make_solver(c);
    s->step(5);
    write_fields_hdf5(file, s->macroscopic(), 5);
  }
  comm().barrier();
  SolverConfig from_file = c;
  from_file.initial = {};
  from_file.initial.kind = InitialCondition::Kind::File;
  from_file.initial.file = file;
  for (const auto& g : grids(false)) {
    expect_identical(c, g, 6, "Taylor-Green 3D " + name(g));
    expect_identical(from_file, g, 6, "from a field file " + name(g));
  }
}

TEST(Decomposition, IdenticalToOneRankInPlace) {
  for (auto lat : {LatticeKind::D2Q9, LatticeKind::D3Q19, LatticeKind::D3Q27})
    for (const auto& g : grids(lat == LatticeKind::D2Q9))
      for (int steps : {11, 12}) {  // ending after a streaming step and after a local step
        const std::string what = std::string(to_string(lat)) + " in place " + name(g) + " " + std::to_string(steps);
        for (auto cfg : {closed_box(lat), channel(lat), tgv(lat)}) {
          cfg.streaming = Streaming::InPlace;
          expect_identical(cfg, g, steps, what);
        }
      }
}

TEST(Decomposition, IdenticalToOneRankMoments) {
  // The halo carries all moments of the border layer; columns and segments cut at rank borders;
  // the channels' inlets take a parabolic profile in time and a profile from a file.
  for (auto lat : {LatticeKind::D2Q9, LatticeKind::D3Q19, LatticeKind::D3Q27})
    for (const auto& g : grids(lat == LatticeKind::D2Q9)) {
      const std::string what = std::string(to_string(lat)) + " moments " + name(g);
      for (int segment : {0, 4}) {  // whole columns, and columns cut into segments
        int scene = 0;
        for (auto cfg : {closed_box(lat), channel(lat), file_channel(lat), tgv(lat)}) {
          cfg.streaming = Streaming::Moments;
          cfg.collision = CollisionKind::Regularized;
          cfg.moment_segment = segment;
          cfg.moment_arrays = segment == 0 ? 2 : 1;  // one array: a halo exchange for each parity
          expect_identical(cfg, g, 12, what + " segment " + std::to_string(segment) + " scene " + std::to_string(scene++));
        }
      }
    }
}

TEST(Decomposition, IdenticalToOneRankEveryOperatorAndStorage) {
  const Variant variants[] = {
      {Precision::FP32, StorageKind::Same, Streaming::TwoArray, CollisionKind::Trt},
      {Precision::FP32, StorageKind::FP16, Streaming::InPlace, CollisionKind::Bgk},
      {Precision::FP32, StorageKind::FP16, Streaming::TwoArray, CollisionKind::Regularized},
      {Precision::FP64, StorageKind::Same, Streaming::InPlace, CollisionKind::Regularized},
      {Precision::FP64, StorageKind::Same, Streaming::TwoArray,
       CollisionKind::RecursiveRegularized},
      {Precision::FP32, StorageKind::Same, Streaming::InPlace, CollisionKind::RecursiveRegularized},
      {Precision::FP32, StorageKind::Same, Streaming::Moments, CollisionKind::Regularized},
      {Precision::FP64, StorageKind::Same, Streaming::Moments, CollisionKind::RecursiveRegularized},
      {Precision::FP64, StorageKind::Same, Streaming::InPlace, CollisionKind::Kbc},
      {Precision::FP32, StorageKind::FP16, Streaming::TwoArray, CollisionKind::Kbc},
  };
  for (const auto& v : variants)
    for (auto cfg : {closed_box(LatticeKind::D3Q19), channel(LatticeKind::D3Q27),
                     closed_box(LatticeKind::D2Q9)}) {
      cfg.precision = v.precision, cfg.storage = v.storage, cfg.streaming = v.streaming, cfg.collision = v.collision;
      if (!supports(cfg.lattice, cfg.collision) ||
          (cfg.lattice == LatticeKind::D2Q9 && v.collision != CollisionKind::Kbc))
        continue;  // KBC: D2Q9 and D3Q27; the others as before
      expect_identical(cfg, {0, 0, 0}, 10,
                       std::string(to_string(v.collision)) + " " + to_string(v.storage) + " " + to_string(v.streaming));
    }
}

/// Each load of `got` is `one`'s bit for bit, and each of `one`'s is non-zero (the comparison is
/// not trivial); `what` names the kind (obstacle, body).
void expect_same_loads(const std::vector<BodyLoad>& one, const std::vector<BodyLoad>& got,
                       const char* what) {
  ASSERT_EQ(one.size(), got.size());
  for (std::size_t k = 0; k < one.size(); ++k) {
    EXPECT_EQ(one[k].force, got[k].force) << one[k].name;
    EXPECT_EQ(one[k].torque, got[k].torque) << one[k].name;
    EXPECT_GT(std::fabs(one[k].force[0]) + std::fabs(one[k].force[1]) + std::fabs(one[k].force[2]),
              1e-12)
        << what << " " << one[k].name << " takes a force (the comparison is not trivial)";
  }
}

/// A refined grid on every rank against one rank: each rank steps its range of every level's
/// leaves and exchanges blocks after each level step (refine/LevelRanks.hpp); every level's
/// populations, the fields, the probes and the obstacles' and immersed bodies' loads are those of
/// one rank, bit for bit, through MPI and through NCCL where built.
void expect_refined_identical(const SolverConfig& cfg, int steps, const std::string& what) {
  SCOPED_TRACE(what);
  auto ref = make_solver(cfg);
  ref->step(steps);
  Distribution dist;
  dist.comm = &comm();
  std::vector<std::unique_ptr<Solver>> runs;
  try {
    runs.push_back(make_solver(cfg, dist));
  } catch (const std::invalid_argument& e) {  // more ranks than layers of level-0 blocks
    EXPECT_NE(std::string(e.what()).find("a layer of level-0 blocks"), std::string::npos)
        << e.what();
    return;
  }
  if (nccl()) {
    dist.nccl = nccl();
    runs.push_back(make_solver(cfg, dist));
  }
  const auto& grid = dynamic_cast<const RefinedGrid&>(*runs[0]);
  EXPECT_EQ(grid.ranks_report().empty(), comm().size() == 1);
  if (comm().size() > 1) {  // a rank holds the leaves it steps and those they read (level_held)
    double held = 0.0, whole = 0.0;
    const std::string report = grid.ranks_report();
    const std::size_t at = report.find("holds ");
    ASSERT_NE(at, std::string::npos) << report;
    ASSERT_EQ(std::sscanf(report.c_str() + at, "holds %lf MiB of the levels (%lf MiB on one rank)",
                          &held, &whole),
              2)
        << report;
    EXPECT_LE(held, whole) << report;
    // (With bodies every rank also holds the bodies' box, which these small cases' levels are.)
    if (cfg.bodies.empty()) {
      EXPECT_LT(-comm().max(-held / whole), 1.0) << "no rank holds less than the whole levels";
    }
  }
  const std::vector<double> pa = ref->populations();
  const MacroFields a = ref->macroscopic();
  const Diagnostics da = ref->diagnostics();
  const CheckpointState whole = ref->checkpoint_state();
  const std::vector<BodyLoad> la = ref->obstacle_loads(), ba = ref->body_loads();
  EXPECT_EQ(ba.size(), cfg.bodies.size());
  const std::vector<std::int64_t> cells = {0, cfg.cells() / 3, cfg.cells() - 1};
  const MacroFields sa = ref->sample(cells);
  // The finest level's cells that probes between cells read (RefinedGrid::level_cells): every
  // 7th of its box, leaves or not.
  const auto& ref_grid = dynamic_cast<const RefinedGrid&>(*ref);
  const int finest = int(ref_grid.octree().levels.size()) - 1;
  const auto& box = ref_grid.octree().levels[std::size_t(finest)].n;
  std::vector<std::int64_t> fine_cells;
  for (std::int64_t t = 0; t < std::int64_t(box[0]) * box[1] * box[2]; t += 7)
    fine_cells.push_back(t);
  const MacroFields fa = ref_grid.level_cells(finest, fine_cells);
  EXPECT_LT(std::count(fa.solid.begin(), fa.solid.end(), 1), std::ptrdiff_t(fa.solid.size()));
  for (auto& par : runs) {
    EXPECT_EQ(par->fluid_cells(), ref->fluid_cells());
    par->step(steps);
    const std::vector<double> pb = par->populations();
    ASSERT_EQ(pa.size(), pb.size());
    std::size_t diff = 0;
    for (std::size_t i = 0; i < pa.size(); ++i)
      diff += pa[i] != pb[i] && !(pa[i] != pa[i] && pb[i] != pb[i]);
    EXPECT_EQ(diff, 0u) << "populations of some level differ from one rank's";
    const MacroFields b = par->macroscopic();
    if (comm().root()) {
      EXPECT_EQ(a.rho, b.rho);
      EXPECT_EQ(a.u, b.u);
    }
    const Diagnostics db = par->diagnostics();
    EXPECT_NEAR(db.mass, da.mass, 1e-12 * da.mass);  // summed rank by rank
    EXPECT_EQ(db.max_speed, da.max_speed);
    EXPECT_EQ(db.first_bad, -1);
    const MacroFields sb = par->sample(cells);
    EXPECT_EQ(sa.rho, sb.rho);
    EXPECT_EQ(sa.u, sb.u);
    const MacroFields fb = dynamic_cast<const RefinedGrid&>(*par).level_cells(finest, fine_cells);
    EXPECT_EQ(fa.rho, fb.rho);
    EXPECT_EQ(fa.u, fb.u);
    EXPECT_EQ(fa.solid, fb.solid);
    expect_same_loads(la, par->obstacle_loads(), "obstacle");
    expect_same_loads(ba, par->body_loads(), "body");
    if (!cfg.bodies.empty()) {  // what the run's log says of the bodies' kernels over the ranks
      EXPECT_EQ(par->ib_stats().whole_box_on_every_rank, comm().size() > 1);
    }
    // The checkpoint pieces: slabs that tile the deck's box.
    int phase = -1;
    const StatePiece piece = par->state(phase);
    EXPECT_EQ(piece.box.cells(), par->state_box().cells());
    EXPECT_EQ(comm().sum(std::int64_t(piece.box.cells())), cfg.cells());
    // A checkpoint over the ranks: rank 0 gathers every level as one rank holds it, each rank's
    // piece is its slab of one rank's, and each rank takes its part of one rank's levels back
    // (a restart on another rank count) to the same state.
    const CheckpointState ck = par->checkpoint_state();
    EXPECT_EQ(ck.levels.empty(), !comm().root());
    if (comm().root()) {
      EXPECT_TRUE(ck.levels == whole.levels) << "rank 0's levels differ from one rank's";
    }
    const LevelSlice slice = par->level_slice();
    ASSERT_GT(slice.total, 0);
    const std::size_t vb = whole.levels.size() / std::size_t(slice.total);
    EXPECT_EQ(std::size_t(slice.total) * vb, whole.levels.size());
    const std::size_t q = std::size_t(par->populations_per_cell()), n = std::size_t(cfg.cells());
    const Box& slab = ck.piece.box;
    const std::size_t first = std::size_t(slab.lo[0]) +
                              std::size_t(cfg.nx) * (std::size_t(slab.lo[1]) +
                                                     std::size_t(cfg.ny) * std::size_t(slab.lo[2]));
    const std::size_t m = std::size_t(slab.cells());
    ASSERT_EQ(ck.piece.data.size(), q * m * vb);
    for (std::size_t k = 0; k < q; ++k)
      EXPECT_EQ(std::memcmp(ck.piece.data.data() + k * m * vb,
                            whole.piece.data.data() + (k * n + first) * vb, m * vb),
                0)
          << "population " << k << " of rank " << comm().rank() << "'s piece";
    std::vector<std::byte> part;
    for (const auto& r : slice.ranges)
      part.insert(part.end(), whole.levels.begin() + std::ptrdiff_t(std::size_t(r[0]) * vb),
                  whole.levels.begin() + std::ptrdiff_t(std::size_t(r[1]) * vb));
    par->set_level_state(part);
    const std::vector<double> back = par->populations();  // bit for bit (unused slots hold NaN)
    ASSERT_EQ(back.size(), pb.size());
    EXPECT_EQ(std::memcmp(back.data(), pb.data(), pb.size() * sizeof(double)), 0)
        << "taking one rank's levels back changed the state";
    EXPECT_THROW(par->set_level_state(std::vector<std::byte>(part.size() + vb)),
                 std::invalid_argument);
  }
  double moved = 0.0;
  for (const auto& u : a.u) moved = std::max(moved, u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
  EXPECT_GT(moved, 0.0) << "the flow moved (the comparison is not trivial)";
}

RefinementRegion band_around(const char* what, int level, double width) {
  RefinementRegion r;
  r.kind = RefinementRegion::Kind::Band;
  r.around = what;
  r.level = level;
  r.width = width;
  return r;
}

TEST(Decomposition, RefinedLevelsIdenticalToOneRank) {
  {  // 2D: a lid-driven box 64 high (8 layers of blocks along y), three levels along the walls
     // and around a disc; the fused and the unfused level kernels
    auto c = test::periodic_box(LatticeKind::D2Q9, 32, 64, 1, 0.7);
    c.collision = CollisionKind::Trt;
    for (std::size_t f = 0; f < 4; ++f) c.faces[f].type = FaceType::Wall;
    c.faces[3].type = FaceType::MovingWall;
    c.faces[3].velocity = {0.05, 0, 0};
    Obstacle o;
    o.shape = Obstacle::Shape::Cylinder;
    o.center = {16, 29, 0.5};
    o.radius = 3.6;
    c.obstacles.push_back(o);
    c.force = {1e-5, -2e-5, 0};
    c.refinement.levels = 3;
    c.refinement.regions = {band_around("walls", 2, 3), band_around("obstacles", 2, 2)};
    expect_refined_identical(c, 12, "D2Q9 TRT lid-driven box, fused");
    c.refinement.kernels = LevelKernels::Unfused;
    expect_refined_identical(c, 6, "D2Q9 TRT lid-driven box, unfused");
  }
  {  // 3D, periodic (the cut wraps across z): nested levels, a sphere in the finest, the body
     // force across the cuts; KBC. The sphere's walls interpolated and turning (their rules
     // read the cell behind each link, across the cut where the sphere meets it)
    auto c = test::periodic_box(LatticeKind::D3Q27, 16, 12, 32, 0.6);
    c.collision = CollisionKind::Kbc;
    c.precision = Precision::FP64;
    Obstacle o;
    o.shape = Obstacle::Shape::Sphere;
    o.center = {8, 6, 15.9};
    o.radius = 2.5;
    o.wall = Obstacle::Wall::Interpolated;
    o.angular_velocity = {0.004, 0.0, -0.003};
    c.obstacles.push_back(o);
    c.force = {1e-5, 0, 3e-5};
    c.refinement.levels = 3;
    RefinementRegion wide;
    wide.level = 1, wide.min = {2, 2, 6}, wide.max = {14, 10, 26};
    c.refinement.regions = {wide, band_around("obstacles", 2, 2)};
    expect_refined_identical(c, 6, "D3Q27 KBC periodic, nested");
  }
  enum { Developed, OutflowFace, Characteristic };
  for (const int outlet : {Developed, OutflowFace, Characteristic}) {
    // 3D: an inlet and an outlet on the faces the cut separates, walls, a level around the
    // sphere (its outlet the developed pressure rule); `open`: a level along the walls too, which
    // meets the inlet, a parabola that ramps up, and the outlet, an outflow face (the rules that
    // read the layer next to the face, and the profile at each level's cells) or a
    // characteristic outlet (its density from the velocities summed over both levels' cells of
    // its layer on every rank, in integers)
    const bool open = outlet != Developed;
    auto c = test::periodic_box(LatticeKind::D3Q19, 12, 12, 32, 0.8);
    for (std::size_t f = 0; f < 4; ++f) c.faces[f].type = FaceType::Wall;
    c.faces[4].type = FaceType::VelocityInlet;
    c.faces[4].velocity = {0.0, 0.0, 0.04};
    c.faces[5].type = outlet == OutflowFace ? FaceType::Outflow : FaceType::PressureOutlet;
    if (outlet == Characteristic) c.faces[5].pressure_rule = PressureRule::Characteristic;
    c.faces[5].density = 1.0;
    c.initial.velocity = {0.0, 0.0, 0.04};  // the sphere takes a load from the first step
    Obstacle o;
    o.shape = Obstacle::Shape::Sphere;
    o.center = {6, 6, 16};
    o.radius = 2.0;
    c.obstacles.push_back(o);
    c.refinement.levels = 2;
    c.refinement.regions = {band_around("obstacles", 1, 3)};
    if (open) {
      c.faces[4].profile = InletProfile::Parabolic;
      c.faces[4].ramp_steps = 6;
      c.refinement.regions.push_back(band_around("walls", 1, 2));
    }
    expect_refined_identical(c, 8,
                             outlet == Developed ? "D3Q19 BGK channel along z"
                             : outlet == OutflowFace
                                 ? "D3Q19 BGK channel along z, profile, outflow face"
                                 : "D3Q19 BGK channel along z, profile, "
                                   "characteristic outlet");
  }
}

TEST(Decomposition, RefinedDivergenceIsFoundWhereOneRankFindsIt) {
  // A refined lid-driven box driven until it diverges (tau near 1/2, a fast lid and a strong
  // force): every rank reports the first non-finite cell that one rank reports, in the deck's
  // cells (each rank numbers its own leaves; the diagnostics compare the whole level's numbers).
  auto c = test::periodic_box(LatticeKind::D2Q9, 32, 64, 1, 0.5005);
  for (std::size_t f = 0; f < 4; ++f) c.faces[f].type = FaceType::Wall;
  c.faces[3].type = FaceType::MovingWall;
  c.faces[3].velocity = {0.4, 0, 0};
  c.force = {2e-3, -1e-3, 0};
  c.refinement.levels = 2;
  c.refinement.regions = {band_around("walls", 1, 3)};
  auto ref = make_solver(c);
  Distribution dist;
  dist.comm = &comm();
  auto par = make_solver(c, dist);
  int steps = 0;
  Diagnostics one;
  while (steps < 400) {
    ref->step(5);
    steps += 5;
    one = ref->diagnostics();
    if (one.first_bad >= 0) break;
  }
  ASSERT_GE(one.first_bad, 0) << "the case diverges within 400 steps";
  par->step(steps);
  const Diagnostics many = par->diagnostics();
  EXPECT_EQ(many.first_bad, one.first_bad) << "after " << steps << " steps";
  EXPECT_EQ(comm().min(many.first_bad), comm().max(many.first_bad)) << "the ranks agree";
}

TEST(Decomposition, RefinedLevelsWithImmersedBodiesIdenticalToOneRank) {
  // Immersed bodies inside the finest level, which the ranks' cuts cross: every rank runs the
  // bodies' kernels on the whole box (its blocks sent by their owners before each step of the
  // level) and applies their force to its own cells. A disc on the cut of two ranks (y = 32) and
  // a turning box in 2D, a sphere in 3D; direct forcing (scatter and gather spreading) and the
  // implicit forcing where Kokkos Kernels is built; the disc translating and the box free.
  {
    auto c = test::periodic_box(LatticeKind::D2Q9, 32, 64, 1, 0.7);
    c.force = {1e-5, -3e-6, 0};
    Body disc;
    disc.name = "disc";
    disc.shape = Body::Shape::Cylinder;
    disc.radius = 3.1, disc.spacing = 0.7;
    disc.position = {15.3, 31.6, 0.5};
    Body plate;
    plate.name = "plate";
    plate.shape = Body::Shape::Box;
    plate.size = {5.0, 2.0, 1.0};
    plate.spacing = 0.7;
    plate.position = {17.0, 47.4, 0.5};
    plate.angular_velocity = {0.0, 0.0, 2e-3};
    c.bodies = {disc, plate};
    c.refinement.levels = 2;
    c.refinement.regions = {band_around("disc", 1, 4), band_around("plate", 1, 5)};
    expect_refined_identical(c, 8, "D2Q9 BGK, bodies in level 1, scatter");
    c.ib.spreading = ImmersedSettings::Spreading::Gather;
    expect_refined_identical(c, 4, "D2Q9 BGK, bodies in level 1, gather");
    if (CouplingSystem::built()) {
      c.ib.spreading = ImmersedSettings::Spreading::Scatter;
      c.ib.forcing = ImmersedSettings::Forcing::Implicit;
      expect_refined_identical(c, 4, "D2Q9 BGK, bodies in level 1, implicit");
    }
    // Travelling: the disc translating (15 cells in 100 steps: the exchange around the bodies
    // is built again as it goes), the plate free under gravity, in a level-1 box over their
    // paths (a travelling body's bodies' box: the level's whole extent).
    c.ib = ImmersedSettings{};
    c.bodies[0].velocity = {0.0, -0.15, 0.0};
    c.bodies[1].angular_velocity = {0.0, 0.0, 0.0};
    c.bodies[1].free = true;
    c.bodies[1].density = 1.8;
    c.ib.gravity = {0.0, -5e-5, 0.0};
    RefinementRegion path;
    path.level = 1, path.min = {4.0, 8.0, 0.0}, path.max = {28.0, 60.0, 1.0};
    c.refinement.regions = {path};
    expect_refined_identical(c, 100, "D2Q9 BGK, a translating and a free body in level 1");
  }
  {
    auto c = test::periodic_box(LatticeKind::D3Q19, 16, 16, 32, 0.8);
    c.force = {0, 1e-5, 2e-5};
    Body ball;
    ball.name = "ball";
    ball.shape = Body::Shape::Sphere;
    ball.radius = 2.6, ball.spacing = 0.8;
    ball.position = {7.7, 8.3, 15.4};
    c.bodies = {ball};
    c.refinement.levels = 2;
    c.refinement.regions = {band_around("ball", 1, 3)};
    expect_refined_identical(c, 4, "D3Q19 BGK, a sphere in level 1");
  }
}

TEST(Decomposition, IdenticalToOneRankWithTheKernelOptions) {
  // CSoA: the halo lists address slots of the layout; per-face kernels skip cells next to ghosts;
  // the split collision runs beside the exchange.
  for (auto lat : {LatticeKind::D2Q9, LatticeKind::D3Q27})
    for (auto cfg : {closed_box(lat), channel(lat)}) {
      cfg.csoa_alpha = 8, cfg.face_kernels = true, cfg.collision_kernels = 2;
      for (const auto& g : grids(lat == LatticeKind::D2Q9))
        expect_identical(cfg, g, 10, std::string(to_string(lat)) + " csoa8 faces split " + name(g));
      cfg.face_kernels = false, cfg.collision_kernels = 1, cfg.streaming = Streaming::InPlace;
      for (const auto& g : grids(lat == LatticeKind::D2Q9))
        expect_identical(cfg, g, 10, std::string(to_string(lat)) + " in place csoa8 " + name(g));
    }
}

}  // namespace
