// SPDX-License-Identifier: Apache-2.0
// What a run samples besides fields (issue 22): points between cells, line probes on their own
// cadence, flow statistics of the 3D Taylor-Green vortex, SI units in the output, and initial
// fields read from a field file.
#include <kolibri/io/Deck.hpp>
#include <kolibri/io/Output.hpp>
#include <kolibri/run/Probes.hpp>
#include <kolibri/run/Runner.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <numbers>
#include <sstream>

#include "Helpers.hpp"
#include "TestFiles.hpp"

namespace {
using namespace kolibri;
namespace fs = std::filesystem;

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> out;
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

std::vector<double> numbers_of(const std::string& row) {
  std::vector<double> v;
  std::stringstream ss(row);
  for (std::string cell; std::getline(ss, cell, ',');) v.push_back(std::stod(cell));
  return v;
}

TEST(PointStencil, WeightsBetweenCellCentres) {
  // x = 3.0 lies halfway between the centres of cells 2 and 3; y = 2.5 is cell 2's centre.
  PointStencil s = point_stencil({3.0, 2.5, 0.5}, {8, 8, 1}, {false, false, false});
  ASSERT_EQ(s.cells.size(), 2u);
  EXPECT_EQ(s.cells[0], 2 + 8 * 2);
  EXPECT_EQ(s.cells[1], 3 + 8 * 2);
  EXPECT_DOUBLE_EQ(s.weights[0], 0.5);
  EXPECT_DOUBLE_EQ(s.weights[1], 0.5);
  // Before the first centre: wrapped across a periodic face, the nearest cell at a bounded one.
  s = point_stencil({0.25, 4.5, 0.5}, {8, 8, 1}, {true, false, false});
  ASSERT_EQ(s.cells.size(), 2u);
  EXPECT_EQ(s.cells[0], 7 + 8 * 4);
  EXPECT_DOUBLE_EQ(s.weights[0], 0.25);
  EXPECT_EQ(s.cells[1], 0 + 8 * 4);
  EXPECT_DOUBLE_EQ(s.weights[1], 0.75);
  s = point_stencil({0.25, 4.5, 0.5}, {8, 8, 1}, {false, false, false});
  ASSERT_EQ(s.cells.size(), 1u);
  EXPECT_EQ(s.cells[0], 8 * 4);
}

TEST(PointStencil, InterpolationIsExactForLinearFieldsAndSkipsSolidCells) {
  const std::array<double, 3> at{2.3, 1.6, 3.9};
  const PointStencil s = point_stencil(at, {6, 5, 7}, {false, false, false});
  ASSERT_EQ(s.cells.size(), 8u);
  MacroFields m;
  for (std::int64_t c : s.cells) {
    const double x = double(c % 6) + 0.5, y = double(c / 6 % 5) + 0.5, z = double(c / 30) + 0.5;
    m.rho.push_back(1.0 + 0.1 * x - 0.2 * y + 0.3 * z);
    m.u.push_back({x, y, z});
    m.solid.push_back(0);
  }
  PointValue v = interpolate(s, m);
  EXPECT_NEAR(v.rho, 1.0 + 0.1 * at[0] - 0.2 * at[1] + 0.3 * at[2], 1e-14);
  for (std::size_t d = 0; d < 3; ++d) EXPECT_NEAR(v.u[d], at[d], 1e-14);
  for (auto& solid : m.solid) solid = 1;
  m.solid[3] = 0;  // one fluid cell left: its value
  v = interpolate(s, m);
  EXPECT_DOUBLE_EQ(v.rho, m.rho[3]);
  m.solid[3] = 1;
  EXPECT_TRUE(std::isnan(interpolate(s, m).rho));
}

// The 3D Taylor-Green field sampled at the cell centres: <|u|^2 / 2> = U^2 / 8 exactly, and with
// central differences (the derivative of sin(k x) becomes sin(k) cos(k x)) the enstrophy is
// 3 U^2 sin(k)^2 / 8 exactly, against 3 U^2 k^2 / 8 of the continuous field.
TEST(FlowStatistics, TaylorGreen3DHasItsAnalyticEnergyAndEnstrophy) {
  SolverConfig c = test::periodic_box(LatticeKind::D3Q19, 16, 16, 16);
  c.initial.kind = InitialCondition::Kind::TaylorGreen3D;
  c.initial.velocity = {0.02, 0, 0};
  MacroFields f;
  f.nx = f.ny = f.nz = 16;
  initial_fields(c, f.rho, f.u);
  f.rho.assign(f.rho.size(), 1.0);  // the energy per unit reference density
  f.solid.assign(f.rho.size(), 0);
  const double U = 0.02, k = 2 * std::numbers::pi / 16;
  const FlowStatistics s = flow_statistics(f, {true, true, true});
  EXPECT_NEAR(s.kinetic_energy, U * U / 8, 1e-16);
  EXPECT_NEAR(s.enstrophy, 3 * U * U * std::sin(k) * std::sin(k) / 8, 1e-16);
  // The field is divergence free and w = 0; its pressure wave is in the density.
  std::vector<double> rho;
  initial_fields(c, rho, f.u);
  EXPECT_NEAR(rho[f.index(0, 0, 0)] - 1.0, 3 * U * U / 16 * (2 * std::cos(k)) * (std::cos(k) + 2),
              1e-15);
}

// The solver reduces the statistics on the device; they agree with the host form over its
// gathered fields, with walls, a moving lid and an obstacle (one-sided differences, solid cells).
TEST(FlowStatistics, DeviceReductionMatchesTheHostForm) {
  for (LatticeKind lat : {LatticeKind::D2Q9, LatticeKind::D3Q19}) {
    const SolverConfig c = test::closed_box(lat);
    auto s = make_solver(c);
    s->step(40);
    const FlowStatistics device = s->flow_statistics();
    const FlowStatistics host = flow_statistics(s->macroscopic(), {false, false, false});
    EXPECT_GT(host.enstrophy, 0.0);
    EXPECT_NEAR(device.kinetic_energy, host.kinetic_energy, 1e-12 * host.kinetic_energy);
    EXPECT_NEAR(device.enstrophy, host.enstrophy, 1e-12 * host.enstrophy);
  }
}

// A field file's density and velocity start a run: the fields come back as written.
TEST(InitialFields, FromAFieldFile) {
  SolverConfig c = test::periodic_box(LatticeKind::D3Q19, 8, 6, 5);
  c.initial.kind = InitialCondition::Kind::TaylorGreen3D;
  c.nx = c.ny = c.nz = 8;
  c.initial.velocity = {0.03, 0, 0};
  auto a = make_solver(c);
  a->step(7);
  const MacroFields before = a->macroscopic();
  const test::ScratchDir scratch;
  const std::string file = (scratch.dir() / "start_fields.h5").string();
  write_fields_hdf5(file, before, 7);
  SolverConfig d = c;
  d.initial = {};
  d.initial.kind = InitialCondition::Kind::File;
  d.initial.file = file;
  const MacroFields after = make_solver(d)->macroscopic();
  for (std::size_t i = 0; i < before.rho.size(); ++i) {
    ASSERT_NEAR(after.rho[i], before.rho[i], 1e-13);
    for (std::size_t e = 0; e < 3; ++e) ASSERT_NEAR(after.u[i][e], before.u[i][e], 1e-13);
  }
  d.nx = 10;
  EXPECT_THROW(make_solver(d), std::invalid_argument);
}

// End to end from a deck: the 3D Taylor-Green vortex at low Reynolds number decays as
// exp(-6 nu k^2 t); statistics.csv, a point between cells, a line on its own cadence, SI units
// in the summary and the field files.
TEST(Run, TaylorGreen3DStatisticsProbesAndUnits) {
  const std::string dir = "run_tg3d";
  fs::remove_all(dir);
  const std::string deck = R"(
[model]
lattice = "D3Q19"
[domain]
nx = 24
ny = 24
nz = 24
[physics]
velocity = 0.01
length = 24
[units]
length = 0.24
velocity = 0.5
viscosity = 0.05
density = 1.2
[initial]
type = "taylor_green_3d"
amplitude = 0.01
[run]
steps = 50
output_every = 50
statistics_every = 10
progress = "none"
[[probe]]
name = "between"
at = [6.0, 12.5, 12.5]
every = 10
[[probe]]
name = "across"
type = "line"
start = [0, 6, 6]
every = 25
[[probe]]
name = "twin"
type = "line"
start = [0, 6, 6]
[[probe]]
name = "through"
type = "line"
at = [3.0, 6.5, 6.5]
every = 25
)";
  const Case c = parse_deck(deck, "tg3d.toml", {"run.output_dir=\"" + dir + "\""});
  // dx = 0.24 m / 24 = 0.01 m, dt = 0.01 dx / 0.5 m/s = 2e-4 s: nu = 0.05 dt / dx^2 = 0.1
  // (Re = 2.4: the decay is nearly linear).
  const double nu = c.solver.viscosity();
  EXPECT_NEAR(nu, 0.1, 1e-12);
  std::ostringstream log;
  const RunResult r = run_case(c, log);
  ASSERT_EQ(r.exit_code, 0) << r.message;

  const auto stats = lines_of(dir + "/statistics.csv");
  ASSERT_EQ(stats.size(), 7u);  // the header and steps 0, 10, ..., 50
  EXPECT_EQ(stats[0],
            "step,kinetic_energy,enstrophy,dissipation_from_energy,dissipation_from_enstrophy");
  const double k = 2 * std::numbers::pi / 24;
  const auto s1 = numbers_of(stats[2]), s4 = numbers_of(stats[5]);
  EXPECT_NEAR(std::log(s1[1] / s4[1]) / 30.0 / (6 * nu * k * k), 1.0, 0.02);
  EXPECT_NEAR(s4[3], -(s4[1] - numbers_of(stats[4])[1]) / 10.0, 1e-15);
  EXPECT_NEAR(s4[4] / (6 * nu * std::sin(k) * std::sin(k) * s4[1]), 1.0, 0.02);

  // The point halfway between the centres of cells 5 and 6 on x: their mean at step 0.
  const auto probe = lines_of(dir + "/probe_between.csv");
  ASSERT_EQ(probe.size(), 7u);
  const double U = 0.01;
  auto u0 = [&](double x) { return U * std::sin(k * x) * std::cos(k * 12.5) * std::cos(k * 12.5); };
  EXPECT_NEAR(numbers_of(probe[1])[2], 0.5 * (u0(5.5) + u0(6.5)), 1e-9);

  for (const char* f :
       {"line_across_0.csv", "line_across_25.csv", "line_across_50.csv", "line_across.csv"})
    EXPECT_TRUE(fs::exists(dir + "/" + f)) << f;
  const auto line = lines_of(dir + "/line_across_25.csv");
  ASSERT_EQ(line.size(), 25u);
  EXPECT_EQ(line[0], "x,y,z,s,rho,ux,uy,uz,p");
  // A line between cells (`at`) through the centres of the same row: the same values, its rows
  // giving the points and their level.
  const auto through = lines_of(dir + "/line_through_25.csv");
  ASSERT_EQ(through.size(), 25u);
  EXPECT_EQ(through[0], "x,y,z,s,rho,ux,uy,uz,p,level");
  EXPECT_EQ(through[1].substr(0, 12), "0.5,6.5,6.5,");
  for (std::size_t i = 1; i < line.size(); ++i) {
    const auto a = numbers_of(line[i]), b = numbers_of(through[i]);
    for (std::size_t j = 3; j < 9; ++j) EXPECT_EQ(a[j], b[j]) << i << " " << j;
  }
  // Sampled alone or from the gathered fields (its twin, written at the field output): the same.
  EXPECT_EQ(lines_of(dir + "/line_across_50.csv"), lines_of(dir + "/line_twin_50.csv"));
  EXPECT_EQ(lines_of(dir + "/line_across.csv"), lines_of(dir + "/line_twin.csv"));
  EXPECT_EQ(lines_of(dir + "/line_across_0.csv"), lines_of(dir + "/line_twin_0.csv"));

  std::ifstream summary(dir + "/summary.json");
  std::stringstream js;
  js << summary.rdbuf();
  EXPECT_NE(js.str().find("\"units_dx_m\": 0.01"), std::string::npos) << js.str();
  EXPECT_NE(js.str().find("\"velocity_scale_m_s\": 0.5"), std::string::npos) << js.str();
  std::ifstream xdmf(dir + "/tg3d.xdmf");
  std::stringstream xs;
  xs << xdmf.rdbuf();
  for (const char* name : {":/pressure<", ":/pressure_si<", ":/velocity_si<"})
    EXPECT_NE(xs.str().find(name), std::string::npos) << name;

  // A restart from step 30 continues statistics.csv and the probe as the run did, row for row.
  const auto probe_before = lines_of(dir + "/probe_between.csv");
  const Case twice =
      parse_deck(deck, "tg3d.toml", {"run.output_dir=\"" + dir + "\"", "run.checkpoint_every=30"});
  fs::remove_all(dir);
  ASSERT_EQ(run_case(twice, log).exit_code, 0);
  RunOptions again;
  again.restart = dir + "/tg3d_ckpt_00000030";
  const RunResult rr = run_case(twice, log, again);
  ASSERT_EQ(rr.exit_code, 0) << rr.message;
  EXPECT_EQ(lines_of(dir + "/statistics.csv"), stats);
  EXPECT_EQ(lines_of(dir + "/probe_between.csv"), probe_before);
}
}  // namespace
