// SPDX-License-Identifier: Apache-2.0
// The auto-tuner: it times the candidates, applies the fastest, caches the choice per case and
// device, reads it back without timing, and times again when asked or when the case changes.
#include <kolibri/run/Tune.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "Helpers.hpp"

namespace {
using namespace kolibri;
namespace fs = std::filesystem;

struct TempDir {
  fs::path path;
  TempDir() : path(fs::temp_directory_path() / ("kolibri_tune_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
                                                ::testing::UnitTest::GetInstance()->current_test_info()->name())) {
    fs::remove_all(path);
  }
  ~TempDir() { fs::remove_all(path); }
};

Case small_case(const std::string& cache) {
  Case c;
  c.source = "small.toml";
  c.solver = test::closed_box(LatticeKind::D3Q19);
  c.tune.enabled = true;
  c.tune.steps = 2;
  c.tune.warmup = 1;
  c.tune.alpha = {0, 4, 16};
  c.tune.cache = cache;
  return c;
}

TEST(Tune, TimesEachCandidateThenServesTheCache) {
  TempDir dir;
  const std::string cache = (dir.path / "sub" / "tune.txt").string();
  Case c = small_case(cache);
  std::ostringstream log;
  const TuneReport first = autotune(c, log);
  EXPECT_FALSE(first.cached);
  // the deck's setting (automatic: CSoA 32, list), SoA, CSoA 4 and 16, then the faces kernels of
  // the fastest layout: 5 settings (a setting met twice is timed once)
  EXPECT_EQ(first.trials, 5) << log.str();
  EXPECT_NE(log.str().find("layout csoa 16, boundary kernels list:"), std::string::npos) << log.str();
  EXPECT_NE(log.str().find("chose"), std::string::npos);
  EXPECT_EQ(c.solver.csoa_alpha, first.choice.alpha);
  EXPECT_EQ(c.solver.face_kernels, first.choice.face_kernels);
  EXPECT_GT(first.choice.ms_per_step, 0.0);
  ASSERT_TRUE(fs::exists(cache)) << "the cache directory is created";

  Case again = small_case(cache);
  std::ostringstream log2;
  const TuneReport second = autotune(again, log2);
  EXPECT_TRUE(second.cached);
  EXPECT_EQ(second.trials, 0);
  EXPECT_EQ(second.key, first.key);
  EXPECT_EQ(again.solver.csoa_alpha, first.choice.alpha);
  EXPECT_EQ(again.solver.face_kernels, first.choice.face_kernels);
  EXPECT_NE(log2.str().find("cached"), std::string::npos);

  Case forced = small_case(cache);
  forced.tune.retune = true;
  std::ostringstream log3;
  EXPECT_EQ(autotune(forced, log3).trials, 5);

  Case other = small_case(cache);  // another case: another key, timed
  other.solver.nx += 2;
  std::ostringstream log4;
  const TuneReport r4 = autotune(other, log4);
  EXPECT_FALSE(r4.cached);
  EXPECT_NE(r4.key, first.key);
  Case lists = small_case(cache);  // other candidates: timed again
  lists.tune.alpha = {0, 8};
  std::ostringstream log5;
  EXPECT_FALSE(autotune(lists, log5).cached);
  // both cases kept, one line each
  std::ifstream in(cache);
  int entries = 0;
  for (std::string line; std::getline(in, line);) entries += !line.empty() && line[0] != '#';
  EXPECT_EQ(entries, 3);
}

TEST(Tune, ImmersedBodiesAddTheBlockAndTheSpreading) {
  TempDir dir;
  Case c = small_case((dir.path / "tune.txt").string());
  c.solver = test::periodic_box(LatticeKind::D3Q27, 16, 16, 12, 0.8);
  c.solver.initial.velocity = {0.03, 0, 0};
  Body b;
  b.shape = Body::Shape::Sphere, b.radius = 3.0, b.spacing = 0.5, b.position = {8, 8, 6};
  c.solver.bodies.push_back(b);
  c.tune.alpha = {0, 32};
  c.tune.block = {2, 4};
  std::ostringstream log;
  const TuneReport r = autotune(c, log);
  // deck setting (automatic: csoa 32), soa, block 2 (block 4 is the deck's), gather; periodic
  // box: no face kernels
  EXPECT_EQ(r.trials, 4) << log.str();
  EXPECT_NE(log.str().find("spreading gather"), std::string::npos) << log.str();
  EXPECT_EQ(log.str().find("boundary kernels faces"), std::string::npos) << log.str();
  EXPECT_EQ(c.solver.ib.block, r.choice.block);
  EXPECT_EQ(c.solver.ib.spreading, r.choice.spreading);
}

TEST(Tune, InPlaceStreamingSearchesTheLayoutOnly) {
  TempDir dir;
  Case c = small_case((dir.path / "tune.txt").string());
  c.solver.streaming = Streaming::InPlace;
  std::ostringstream log;
  const TuneReport r = autotune(c, log);
  // the deck's setting (automatic: CSoA 32), SoA, CSoA 4 and 16; per-face kernels are two-array only
  EXPECT_EQ(r.trials, 4) << log.str();
  EXPECT_EQ(log.str().find("boundary kernels faces"), std::string::npos) << log.str();
  EXPECT_FALSE(c.solver.face_kernels);
}

TEST(Tune, CacheLinesRoundTripAndDamagedOnesAreIgnored) {
  TempDir dir;
  const std::string path = (dir.path / "tune.txt").string();
  TuneChoice c;
  c.alpha = 64, c.block = 3, c.spreading = ImmersedSettings::Spreading::Gather, c.face_kernels = true, c.ms_per_step = 1.5;
  write_tune_cache(path, "abc", c, "Some \"GPU\"", "decks/a b.toml");
  TuneChoice r;
  ASSERT_TRUE(read_tune_cache(path, "abc", r));
  EXPECT_EQ(r.alpha, 64);
  EXPECT_EQ(r.block, 3);
  EXPECT_EQ(r.spreading, ImmersedSettings::Spreading::Gather);
  EXPECT_TRUE(r.face_kernels);
  EXPECT_DOUBLE_EQ(r.ms_per_step, 1.5);
  EXPECT_FALSE(read_tune_cache(path, "abd", r));
  EXPECT_FALSE(read_tune_cache((dir.path / "missing.txt").string(), "abc", r));
  {
    std::ofstream out(path, std::ios::app);
    out << "key=bad alpha=seven block=2\n";
    out << "key=odd alpha=24 block=2 spreading=scatter boundary_kernels=list ms_per_step=1\n";
  }
  EXPECT_FALSE(read_tune_cache(path, "bad", r));
  EXPECT_FALSE(read_tune_cache(path, "odd", r)) << "alpha must be a power of two";
  c.alpha = 0;  // a newer entry of a key replaces the older one
  write_tune_cache(path, "abc", c, "gpu", "deck");
  ASSERT_TRUE(read_tune_cache(path, "abc", r));
  EXPECT_EQ(r.alpha, 0);
}

TEST(Tune, KeyFollowsTheCaseAndTheDeviceNotTheSearchedOptions) {
  SolverConfig a = test::closed_box(LatticeKind::D2Q9);
  SolverConfig b = a;
  b.csoa_alpha = 32, b.face_kernels = true;
  EXPECT_EQ(tune_key(a, "gpu"), tune_key(b, "gpu"));
  EXPECT_NE(tune_key(a, "gpu"), tune_key(a, "other gpu"));
  b = a;
  b.tau = 0.8;
  EXPECT_NE(tune_key(a, "gpu"), tune_key(b, "gpu"));
  b = a;
  b.collision_kernels = 2;
  EXPECT_NE(tune_key(a, "gpu"), tune_key(b, "gpu"));
}

}  // namespace
