// SPDX-License-Identifier: Apache-2.0
// Checkpoints under mpirun: every rank writes its box of the global state (per-rank files, and one
// parallel-HDF5 file where the build has it), then reads back boxes of other decompositions (the
// next rank's box, z slabs, the whole box) and checks every value; a failure on one rank fails
// the write on every rank and leaves nothing behind.
#include <kolibri/io/Checkpoint.hpp>
#include <kolibri/io/Output.hpp>

#include <gtest/gtest.h>

#include "CheckpointData.hpp"

#include <filesystem>
#include <string>

namespace {
using namespace kolibri;
namespace fs = std::filesystem;

constexpr std::array<int, 3> kGlobal{9, 6, 5};
constexpr int kQ = 19;

/// The part [i * n / parts, (i + 1) * n / parts) of n cells.
std::pair<int, int> split(int n, int parts, int i) { return {i * n / parts, (i + 1) * n / parts - i * n / parts}; }

/// The writers' decomposition: px x py columns (uneven sizes), px = 2 for an even rank count.
Box writer_box(int rank, int size) {
  const int px = size % 2 == 0 ? 2 : 1, py = size / px;
  const auto [x0, nx] = split(kGlobal[0], px, rank % px);
  const auto [y0, ny] = split(kGlobal[1], py, rank / px);
  return Box{{x0, y0, 0}, {nx, ny, kGlobal[2]}};
}

/// Another decomposition: z slabs (empty for ranks beyond nz).
Box slab_box(int rank, int size) {
  const auto [z0, nz] = split(kGlobal[2], size, rank);
  return Box{{0, 0, z0}, {kGlobal[0], kGlobal[1], nz}};
}

/// The piece that rank `rank` of `size` writes (writer_box), filled with the test data.
StatePiece writer_piece(const std::string& vt, int rank, int size) {
  StatePiece p;
  p.box = writer_box(rank, size);
  p.data = test::checkpoint_state(vt, kGlobal, kQ, p.box);
  return p;
}

CheckpointInfo make_info(const std::string& vt) {
  CheckpointInfo info;
  info.step = 4200;
  info.value_type = vt;
  info.q = kQ;
  info.global = kGlobal;
  info.phase = 0;
  info.signature = "sig " + vt;
  info.deck = "[domain]\nnx = 9\n";
  return info;
}

/// A fresh directory for this test and rank count (rank 0 makes it; every rank returns after).
std::string fresh_dir(const Comm& comm) {
  const auto* t = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string dir = "ckpt_mpi_np" + std::to_string(comm.size()) + "/" + t->name();
  if (comm.root()) {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  comm.barrier();
  return dir;
}

/// Every rank reads boxes of other decompositions and checks every value.
void check_reads(const Comm& comm, const std::string& path, const std::string& vt, const std::string& format) {
  const auto info = read_checkpoint_info(path);
  EXPECT_EQ(info.ranks, comm.size());
  EXPECT_EQ(info.format, format);
  EXPECT_EQ(info.step, 4200);
  EXPECT_EQ(info.value_type, vt);
  for (int r = 0; r < comm.size(); ++r) EXPECT_EQ(info.boxes[std::size_t(r)], writer_box(r, comm.size()));
  const int r = comm.rank(), s = comm.size();
  const Box boxes[] = {writer_box((r + 1) % s, s), slab_box(r, s), Box{{0, 0, 0}, kGlobal},
                       Box{{3, 2, 1}, {5, 3, 3}}};
  for (const Box& b : boxes) {
    SCOPED_TRACE("rank " + std::to_string(r) + " reads lo " + std::to_string(b.lo[0]) + "," +
                 std::to_string(b.lo[1]) + "," + std::to_string(b.lo[2]) + " n " + std::to_string(b.n[0]) + "," +
                 std::to_string(b.n[1]) + "," + std::to_string(b.n[2]));
    StatePiece p;
    p.box = b;
    read_checkpoint_state(path, info, p);
    EXPECT_EQ(p.data, test::checkpoint_state(vt, kGlobal, kQ, b));
  }
}

void round_trip(CheckpointLayout layout, const std::string& format) {
  const Comm& comm = Comm::world();
  const std::string dir = fresh_dir(comm);
  for (const std::string vt : {"float64", "float32", "float16"}) {
    SCOPED_TRACE(vt);
    const auto info = make_info(vt);
    const StatePiece mine = writer_piece(vt, comm.rank(), comm.size());
    const std::string path = dir + "/" + vt;
    write_checkpoint(comm, path, info, mine, layout);
    // Every rank returns after the rename.
    EXPECT_TRUE(fs::exists(path + "/manifest.toml"));
    EXPECT_FALSE(fs::exists(path + ".tmp"));
    check_reads(comm, path, vt, format);
    comm.barrier();
  }
}

TEST(CheckpointMpi, PerRankRoundTripOnOtherDecompositions) {
  round_trip(CheckpointLayout::PerRank, "per-rank");
  const std::string dir = "ckpt_mpi_np" + std::to_string(Comm::world().size()) + "/" +
                          ::testing::UnitTest::GetInstance()->current_test_info()->name();
  for (int r = 0; r < Comm::world().size(); ++r) {
    char file[32];
    std::snprintf(file, sizeof file, "/float64/rank_%05d.h5", r);
    EXPECT_TRUE(fs::exists(dir + file)) << dir + file;
  }
}

TEST(CheckpointMpi, SingleFileRoundTripOnOtherDecompositions) {
  if (!checkpoint_single_supported(Comm::world())) {
    // Serial HDF5 on several ranks: Single is refused on every rank, Auto writes per-rank files.
    const Comm& comm = Comm::world();
    const std::string dir = fresh_dir(comm);
    const auto info = make_info("float64");
    const StatePiece mine = writer_piece("float64", comm.rank(), comm.size());
    EXPECT_THROW(write_checkpoint(comm, dir + "/single", info, mine, CheckpointLayout::Single), OutputError);
    write_checkpoint(comm, dir + "/auto", info, mine, CheckpointLayout::Auto);
    EXPECT_EQ(read_checkpoint_info(dir + "/auto").format, "per-rank");
    GTEST_SKIP() << "no parallel HDF5 in this build: single-file checkpoints need it on several ranks";
  }
  round_trip(CheckpointLayout::Single, "single");
}

TEST(CheckpointMpi, AutoLayout) {
  const Comm& comm = Comm::world();
  const std::string dir = fresh_dir(comm);
  const auto info = make_info("float32");
  const StatePiece mine = writer_piece("float32", comm.rank(), comm.size());
  write_checkpoint(comm, dir + "/auto", info, mine);
  // Single with parallel HDF5 and MPI, else per-rank (on one rank both are possible: the test
  // cannot see which HDF5 the library was built with).
  const std::string format = read_checkpoint_info(dir + "/auto").format;
  if (comm.size() > 1) {
    EXPECT_EQ(format, checkpoint_single_supported(comm) ? "single" : "per-rank");
  }
  check_reads(comm, dir + "/auto", "float32", format);
}

// One rank's bad piece fails the write on every rank, with that rank's message, and leaves nothing.
TEST(CheckpointMpi, OneRankFailingFailsEveryRank) {
  const Comm& comm = Comm::world();
  const std::string dir = fresh_dir(comm);
  for (const auto layout : {CheckpointLayout::PerRank, CheckpointLayout::Auto}) {
    const auto info = make_info("float64");
    StatePiece mine = writer_piece("float64", comm.rank(), comm.size());
    const int bad = comm.size() - 1;
    if (comm.rank() == bad) mine.data.resize(mine.data.size() - 8);
    try {
      write_checkpoint(comm, dir + "/ck", info, mine, layout);
      ADD_FAILURE() << "rank " << comm.rank() << ": no exception";
    } catch (const OutputError& e) {
      EXPECT_NE(std::string(e.what()).find("the piece of rank " + std::to_string(bad) + " has"), std::string::npos)
          << e.what();
    }
    comm.barrier();
    EXPECT_FALSE(fs::exists(dir + "/ck"));
    EXPECT_FALSE(fs::exists(dir + "/ck.tmp"));
    comm.barrier();  // before rank 0 makes ck.tmp again in the next round
  }
}

// Boxes that do not tile the global box (every rank claims the writer box of rank 0) are refused.
TEST(CheckpointMpi, OverlappingPiecesAreRefused) {
  const Comm& comm = Comm::world();
  if (comm.size() == 1) GTEST_SKIP() << "one rank cannot overlap itself";
  const std::string dir = fresh_dir(comm);
  const auto info = make_info("float64");
  const StatePiece mine = writer_piece("float64", 0, comm.size());
  try {
    write_checkpoint(comm, dir + "/ck", info, mine, CheckpointLayout::PerRank);
    ADD_FAILURE() << "rank " << comm.rank() << ": no exception";
  } catch (const OutputError& e) {
    EXPECT_NE(std::string(e.what()).find("overlap"), std::string::npos) << e.what();
  }
  comm.barrier();
  EXPECT_FALSE(fs::exists(dir + "/ck.tmp"));
}

TEST(CheckpointMpi, AnExistingCheckpointIsRefusedOnEveryRank) {
  const Comm& comm = Comm::world();
  const std::string dir = fresh_dir(comm);
  const auto info = make_info("float64");
  const StatePiece mine = writer_piece("float64", comm.rank(), comm.size());
  write_checkpoint(comm, dir + "/ck", info, mine, CheckpointLayout::PerRank);
  EXPECT_THROW(write_checkpoint(comm, dir + "/ck", info, mine, CheckpointLayout::PerRank), OutputError);
  comm.barrier();
  check_reads(comm, dir + "/ck", "float64", "per-rank");  // untouched
}

}  // namespace
