// SPDX-License-Identifier: Apache-2.0
// Output files: HDF5 round trip, XDMF series, JSON, and the run loop end to end.
#include <kolibri/io/Deck.hpp>
#include <kolibri/io/Output.hpp>
#include <kolibri/run/Runner.hpp>

#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <sys/resource.h>

#include "TestFiles.hpp"

namespace {
using namespace kolibri;
namespace fs = std::filesystem;

using test::slurp;

TEST(Output, Hdf5RoundTrip) {
  MacroFields f;
  f.nx = 3, f.ny = 2, f.nz = 2;
  for (int i = 0; i < 12; ++i) {
    f.rho.push_back(1.0 + i);
    f.u.push_back({0.1 * i, -0.1 * i, 0.01 * i});
    f.solid.push_back(i % 2);
  }
  const std::string path = "roundtrip.h5";
  write_fields_hdf5(path, f, 7);
  EXPECT_FALSE(fs::exists(path + ".tmp"));
  const auto g = read_fields_hdf5(path);
  EXPECT_EQ(g.nx, 3);
  EXPECT_EQ(g.ny, 2);
  EXPECT_EQ(g.nz, 2);
  EXPECT_EQ(g.rho, f.rho);
  EXPECT_EQ(g.u, f.u);
}

// A rank reads only its box, the ghost layers past the domain's faces from across them.
TEST(Output, Hdf5BoxReadWrapsAcrossTheFaces) {
  MacroFields f;
  f.nx = 5, f.ny = 4, f.nz = 3;
  for (int i = 0; i < 60; ++i) {
    f.rho.push_back(1.0 + i);
    f.u.push_back({double(i), -double(i), 0.5 * i});
    f.solid.push_back(0);
  }
  write_fields_hdf5("box.h5", f, 0);
  const MacroFields b = read_fields_hdf5("box.h5", {-1, 2, -1}, {7, 3, 5});
  ASSERT_EQ(b.rho.size(), 7u * 3u * 5u);
  for (int z = 0; z < 5; ++z)
    for (int y = 0; y < 3; ++y)
      for (int x = 0; x < 7; ++x) {
        const std::size_t from = f.index((x + 4) % 5, (y + 2) % 4, (z + 2) % 3);
        ASSERT_EQ(b.rho[b.index(x, y, z)], f.rho[from]) << x << " " << y << " " << z;
        ASSERT_EQ(b.u[b.index(x, y, z)], f.u[from]);
      }
  EXPECT_EQ(read_fields_hdf5("box.h5").rho, f.rho);
}

/// While alive, files may grow to `bytes` at most (writes past it fail with EFBIG, "File too
/// large", as on a full disk, instead of raising SIGXFSZ).
class FileSizeLimit {
 public:
  explicit FileSizeLimit(rlim_t bytes) {
    getrlimit(RLIMIT_FSIZE, &m_old);
    m_handler = std::signal(SIGXFSZ, SIG_IGN);
    rlimit r = m_old;
    r.rlim_cur = bytes;
    setrlimit(RLIMIT_FSIZE, &r);
  }
  ~FileSizeLimit() {
    setrlimit(RLIMIT_FSIZE, &m_old);
    std::signal(SIGXFSZ, m_handler);
  }

 private:
  rlimit m_old{};
  void (*m_handler)(int) = nullptr;
};

template <class F>
std::string output_error(F&& f) {
  try {
    f();
  } catch (const OutputError& e) {
    return e.what();
  }
  return "no error";
}

// Issue 22: a failed write names the file and the system's reason and never leaves half a row.
TEST(Output, CsvRowsAreWholeOrAbsent) {
  const std::string path = "csv_rows.csv";
  CsvFile csv(path, "step,value\n");  // 11 bytes
  csv.append("1,0.5\n");              // 17
  {
    const FileSizeLimit limit(30);
    const std::string msg =
        output_error([&] { csv.append("2,0.25\n3,0.125\n"); });  // would end at 33
    EXPECT_NE(msg.find(path + ": cannot write (File too large)"), std::string::npos) << msg;
    EXPECT_NE(msg.find("last complete row"), std::string::npos) << msg;
  }
  EXPECT_EQ(slurp(path), "step,value\n1,0.5\n");
  csv.append("2,0.25\n");  // room again: the series goes on from the last complete row
  EXPECT_EQ(slurp(path), "step,value\n1,0.5\n2,0.25\n");
  const std::string full = output_error([] { CsvFile("/dev/full", "step,value\n"); });
  EXPECT_NE(full.find("/dev/full: cannot write (No space left on device)"), std::string::npos)
      << full;
}

TEST(Output, Hdf5WriteErrorsSayWhy) {
  MacroFields f;
  f.nx = f.ny = f.nz = 16;
  f.rho.assign(4096, 1.0), f.u.assign(4096, {0.0, 0.0, 0.0}), f.solid.assign(4096, 0);
  const std::string path = "too_big.h5";
  std::string msg;
  testing::internal::CaptureStderr();
  {
    const FileSizeLimit limit(8192);
    msg = output_error([&] { write_fields_hdf5(path, f, 1); });
  }
  const std::string stack = testing::internal::GetCapturedStderr();
  EXPECT_NE(msg.find(path), std::string::npos) << msg;
  EXPECT_NE(msg.find("(File too large)"), std::string::npos) << msg;
  EXPECT_EQ(stack, "") << "HDF5's error stack was printed";
  EXPECT_FALSE(fs::exists(path + ".tmp"));
}

TEST(Output, XdmfListsEveryStep) {
  const std::string x = xdmf_series({{0, "a_0.h5"}, {10, "a_10.h5"}}, 4, 3, 1);
  EXPECT_NE(x.find("Dimensions=\"2 4 5\""), std::string::npos);
  EXPECT_NE(x.find("a_10.h5:/velocity"), std::string::npos);
  EXPECT_NE(x.find("<Time Value=\"10\"/>"), std::string::npos);
}

TEST(Output, JsonEscapes) {
  JsonObject j;
  j.add("a", "x\"y").add("b", 1.5).add("c", std::int64_t(3)).add("d", true);
  EXPECT_EQ(j.str(0), "{\n\"a\": \"x\\\"y\",\n\"b\": 1.5,\n\"c\": 3,\n\"d\": true\n}");
}

const std::string small_cavity = R"(
[model]
lattice = "D2Q9"
[domain]
nx = 16
ny = 16
[physics]
reynolds = 20.0
[boundary]
x_min = "wall"
x_max = "wall"
y_min = "wall"
y_max = { type = "moving_wall", velocity = [0.1, 0.0] }
[run]
name = "cav"
steps = 40
output_every = 20
progress = "none"
[[probe]]
name = "u_vertical_centreline"
type = "line"
start = [8, 0]
axis = "y"
[[probe]]
name = "centre"
position = [8, 8]
)";

TEST(Run, CavityWritesFieldsProbesAndSummary) {
  const std::string dir = "run_cavity";
  fs::remove_all(dir);
  const Case c = parse_deck(small_cavity, "small.toml", {"run.output_dir=\"" + dir + "\""});
  std::ostringstream log;
  const RunResult r = run_case(c, log);
  EXPECT_EQ(r.exit_code, 0) << r.message;
  EXPECT_EQ(r.steps, 40);
  for (const char* f : {"cav_00000000.h5", "cav_00000020.h5", "cav_00000040.h5", "cav.xdmf",
                        "summary.json", "probe_centre.csv", "line_u_vertical_centreline.csv"})
    EXPECT_TRUE(fs::exists(dir + "/" + f)) << f;
  const std::string summary = slurp(dir + "/summary.json");
  EXPECT_NE(summary.find("\"status\": \"completed\""), std::string::npos);
  EXPECT_NE(summary.find("\"mlups\""), std::string::npos);
  const auto f = read_fields_hdf5(dir + "/cav_00000040.h5");
  EXPECT_EQ(f.nx, 16);
  EXPECT_GT(f.u[f.index(8, 15, 0)][0], 0.01);  // the lid drags the top row along +x
  for (const auto& e : fs::directory_iterator(dir)) EXPECT_NE(e.path().extension(), ".tmp");
}

TEST(Run, TimelineTimesMoreStepsAfterTheOutput) {
  // --timeline N: N more steps after the last output, each point of a step timed; the log line
  // and summary.json carry them, the output files are those of the run.
  const std::string dir = "run_timeline";
  fs::remove_all(dir);
  const Case c = parse_deck(small_cavity, "small.toml", {"run.output_dir=\"" + dir + "\""});
  std::ostringstream log;
  RunOptions opts;
  opts.timeline_steps = 7;
  const RunResult r = run_case(c, log, opts);
  EXPECT_EQ(r.exit_code, 0) << r.message;
  EXPECT_EQ(r.steps, 40);
  EXPECT_FALSE(fs::exists(dir + "/cav_00000047.h5"));
  EXPECT_NE(log.str().find("kolibri: timeline of 7 more steps"), std::string::npos) << log.str();
  const std::string summary = slurp(dir + "/summary.json");
  EXPECT_TRUE(std::regex_search(
      summary, std::regex(R"("timeline": \{\s*"steps": 7,\s*"mean_ms": \{\s*"interior": )")))
      << summary;
  EXPECT_NE(summary.find("\"exposed_ms\": "), std::string::npos);
  // without it: null
  fs::remove_all(dir);
  ASSERT_EQ(run_case(c, log).exit_code, 0);
  EXPECT_NE(slurp(dir + "/summary.json").find("\"timeline\": null"), std::string::npos);
}

TEST(Run, BlowUpStopsWithPlaceAndTime) {
  const std::string dir = "run_blowup";
  fs::remove_all(dir);
  // A lid at Mach 0.5 on a tiny grid at tau near 1/2 with BGK: diverges within a few hundred steps.
  const Case c = parse_deck(small_cavity, "small.toml",
                            {"domain.nx=24", "domain.ny=24", "physics.reynolds=50000",
                             "physics.check_stability=false",
                             "boundary.y_max={type=\"moving_wall\", velocity=[0.4, 0.0]}",
                             "run.steps=20000", "run.output_every=0", "run.output_dir=\"" + dir + "\""});
  std::ostringstream log;
  const RunResult r = run_case(c, log);
  EXPECT_EQ(r.exit_code, kExitDiverged);
  EXPECT_LT(r.steps, 20000);
  EXPECT_NE(r.message.find("diverged by step"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("cell ("), std::string::npos) << r.message;
  EXPECT_NE(slurp(dir + "/summary.json").find("\"status\": \"diverged\""), std::string::npos);
}
TEST(Run, DivergenceAdviceNamesOnlyOperatorsTheCaseDoesNotUse) {
  // A diverged TRT run was told to use collision = "trt" (issue 22).
  SolverConfig c;
  c.lattice = LatticeKind::D2Q9;
  c.collision = CollisionKind::Trt;
  const std::string trt = divergence_advice(c);
  EXPECT_EQ(trt.find("\"trt\""), std::string::npos) << trt;
  EXPECT_NE(trt.find("\"regularized\""), std::string::npos) << trt;
  c.collision = CollisionKind::Bgk;
  EXPECT_NE(divergence_advice(c).find("collision = \"trt\""), std::string::npos);
  c.lattice = LatticeKind::D3Q19,
  c.collision = CollisionKind::RecursiveRegularized;  // no ACM on D3Q19
  const std::string rec = divergence_advice(c);
  EXPECT_EQ(rec.find("\"recursive\""), std::string::npos) << rec;
  EXPECT_EQ(rec.find("\"acm\""), std::string::npos) << rec;
}
}  // namespace
