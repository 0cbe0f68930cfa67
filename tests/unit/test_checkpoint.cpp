// SPDX-License-Identifier: Apache-2.0
// Checkpoints on one rank: round trips of every value type and layout, reads of sub-boxes and of
// boxes spanning several pieces, and every defect a user can meet (truncated or corrupted files,
// a damaged manifest, an interrupted write, an existing target), plus listing and pruning.
#include <kolibri/io/Checkpoint.hpp>
#include <kolibri/io/Output.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>

#include "CheckpointData.hpp"
#include "TestFiles.hpp"

namespace {
using namespace kolibri;
namespace fs = std::filesystem;

constexpr std::array<int, 3> kGlobal{7, 5, 3};
constexpr int kQ = 19;

/// A fresh, empty directory under the test's working directory, named after the running test.
std::string fresh_dir() {
  const auto* t = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string name = std::string("ckpt_unit/") + t->test_suite_name() + "_" + t->name();
  fs::remove_all(name);
  fs::create_directories(name);
  return name;
}

using test::slurp;

void spit(const std::string& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
}

std::vector<std::byte> expected(const std::string& vt, const std::array<int, 3>& g, int q, const Box& box) {
  return test::checkpoint_state(vt, g, q, box);
}

CheckpointInfo make_info(const std::string& vt, std::array<int, 3> global = kGlobal, int q = kQ,
                         std::int64_t step = 1234) {
  CheckpointInfo info;
  info.step = step;
  info.value_type = vt;
  info.q = q;
  info.global = global;
  info.phase = 1;
  info.signature = "D3Q19 bgk " + vt;
  info.deck = "[model]\nlattice = \"D3Q19\" # a comment with 'quotes' and \\ backslash\n";
  return info;
}

StatePiece whole(const CheckpointInfo& info) {
  StatePiece p;
  p.box = Box{{0, 0, 0}, info.global};
  p.data = expected(info.value_type, info.global, info.q, p.box);
  return p;
}

/// A complete one-rank checkpoint of the formula state in dir/name.
std::string write_simple(const std::string& dir, const std::string& vt = "float64",
                         CheckpointLayout layout = CheckpointLayout::PerRank, const std::string& name = "ck") {
  const auto info = make_info(vt);
  const std::string path = dir + "/" + name;
  write_checkpoint(Comm::world(), path, info, whole(info), layout);
  return path;
}

/// Runs f, expects a CheckpointError whose message contains every one of `parts`.
template <class E = CheckpointError>
void expect_error(const std::function<void()>& f, const std::vector<std::string>& parts) {
  try {
    f();
    ADD_FAILURE() << "no exception; expected one mentioning '" << parts.front() << "'";
  } catch (const E& e) {
    const std::string msg = e.what();
    for (const auto& p : parts) EXPECT_NE(msg.find(p), std::string::npos) << "'" << p << "' not in: " << msg;
  }
}

void replace_once(std::string& s, const std::string& from, const std::string& to) {
  const auto at = s.find(from);
  ASSERT_NE(at, std::string::npos) << "'" << from << "' not in the manifest:\n" << s;
  s.replace(at, from.size(), to);
}

TEST(Checkpoint, ValueBytes) {
  EXPECT_EQ(value_bytes("float64"), 8);
  EXPECT_EQ(value_bytes("float32"), 4);
  EXPECT_EQ(value_bytes("float16"), 2);
  EXPECT_THROW(value_bytes("bfloat16"), std::invalid_argument);
}

TEST(Checkpoint, ChecksumIsFnvOverLittleEndianWords) {
  constexpr std::uint64_t off = 0xcbf29ce484222325ULL, prime = 0x100000001b3ULL;
  EXPECT_EQ(checksum64(nullptr, 0), off * prime);  // (off ^ 0) * prime: the length only
  std::byte b[11];
  for (int i = 0; i < 11; ++i) b[i] = std::byte(i + 1);
  std::uint64_t h = off;
  h = (h ^ 0x0807060504030201ULL) * prime;  // one little-endian word
  h ^= h >> 32;
  for (int i = 8; i < 11; ++i) h = (h ^ std::uint64_t(i + 1)) * prime;  // the tail bytes
  h = (h ^ 11) * prime;  // the length
  EXPECT_EQ(checksum64(b, 11), h);
  // Every single-bit change shows, and zeros of different lengths differ.
  const std::uint64_t ref = checksum64(b, 11);
  for (int i = 0; i < 11; ++i)
    for (int bit = 0; bit < 8; ++bit) {
      b[i] ^= std::byte(1 << bit);
      EXPECT_NE(checksum64(b, 11), ref) << "byte " << i << " bit " << bit;
      b[i] ^= std::byte(1 << bit);
    }
  std::vector<std::byte> z(16, std::byte{0});
  EXPECT_NE(checksum64(z.data(), 8), checksum64(z.data(), 16));
  // The sign bits of two doubles flipped: plain FNV over words would not see it.
  const std::uint64_t zeros = checksum64(z.data(), 16);
  z[7] = z[15] = std::byte{0x80};
  EXPECT_NE(checksum64(z.data(), 16), zeros);
}

// The checksum of a file read piece by piece (a restart's levels.h5 on rank 0) is the whole's.
TEST(Checkpoint, ChecksumInPartsIsTheWholes) {
  std::vector<std::byte> b(43);
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = std::byte(7 * i + 3);
  for (const std::size_t part : {8u, 16u, 40u}) {
    Checksum64 sum;
    std::size_t at = 0;
    for (; at + part < b.size(); at += part) sum.add(b.data() + at, part);
    sum.add(b.data() + at, b.size() - at);
    EXPECT_EQ(sum.value(), checksum64(b)) << "parts of " << part << " bytes";
  }
  Checksum64 odd;
  odd.add(b.data(), 3);
  EXPECT_THROW(odd.add(b.data() + 3, 8), std::logic_error) << "a part after a ragged one";
}

TEST(Checkpoint, PathsAreZeroPadded) {
  EXPECT_EQ(checkpoint_path("out", "cavity", 1000), "out/cavity_ckpt_00001000");
  EXPECT_EQ(checkpoint_path("a/b", "x", 0), "a/b/x_ckpt_00000000");
  EXPECT_EQ(checkpoint_path("d", "x", 123456789), "d/x_ckpt_123456789");
}

TEST(Checkpoint, OneRankCanWriteASingleFile) { EXPECT_TRUE(checkpoint_single_supported(Comm::world())); }

// Every value type and layout: the manifest says what was written, and the whole box and a
// sub-box away from the origin read back bit for bit.
TEST(Checkpoint, RoundTripEveryValueTypeAndLayout) {
  const std::string dir = fresh_dir();
  for (const std::string vt : {"float64", "float32", "float16"})
    for (const auto layout : {CheckpointLayout::PerRank, CheckpointLayout::Single, CheckpointLayout::Auto}) {
      const std::string lname = layout == CheckpointLayout::Single ? "single"
                                : layout == CheckpointLayout::PerRank ? "per-rank"
                                                                      : "auto";
      SCOPED_TRACE(vt + " " + lname);
      const std::string path = dir + "/" + vt + "_" + lname;
      const auto info = make_info(vt);
      const auto mine = whole(info);
      write_checkpoint(Comm::world(), path, info, mine, layout);
      EXPECT_FALSE(fs::exists(path + ".tmp"));
      // Auto on one rank without MPI: per-rank files.
      const std::string format = layout == CheckpointLayout::Single ? "single" : "per-rank";
      EXPECT_TRUE(fs::exists(path + (format == "single" ? "/state.h5" : "/rank_00000.h5")));

      const auto got = read_checkpoint_info(path);
      EXPECT_EQ(got.step, 1234);
      EXPECT_EQ(got.value_type, vt);
      EXPECT_EQ(got.q, kQ);
      EXPECT_EQ(got.global, kGlobal);
      EXPECT_EQ(got.phase, 1);
      EXPECT_EQ(got.ranks, 1);
      EXPECT_EQ(got.format, format);
      EXPECT_EQ(got.signature, info.signature);
      EXPECT_EQ(got.deck, info.deck);
      EXPECT_FALSE(got.kolibri_version.empty());
      EXPECT_EQ(got.created.size(), 20u) << got.created;  // 2026-01-02T03:04:05Z
      ASSERT_EQ(got.boxes.size(), 1u);
      EXPECT_EQ(got.boxes[0], mine.box);
      ASSERT_EQ(got.checksums.size(), 1u);
      EXPECT_EQ(got.checksums[0], checksum64(mine.data.data(), mine.data.size()));

      StatePiece all;
      all.box = mine.box;
      read_checkpoint_state(path, got, all);
      EXPECT_EQ(all.data, mine.data);

      StatePiece sub;
      sub.box = Box{{2, 1, 1}, {4, 3, 2}};
      read_checkpoint_state(path, got, sub);
      EXPECT_EQ(sub.data, expected(vt, kGlobal, kQ, sub.box));
    }
}

TEST(Checkpoint, ReadOutsideTheGlobalBoxIsRefused) {
  const std::string path = write_simple(fresh_dir());
  const auto info = read_checkpoint_info(path);
  StatePiece p;
  p.box = Box{{5, 0, 0}, {3, 1, 1}};  // x 5..7, nx = 7
  expect_error([&] { read_checkpoint_state(path, info, p); }, {"outside the global box"});
}

// --- Hand-made checkpoints of several pieces ----------------------------------------------------

struct HandPiece {
  Box box;
  std::uint64_t checksum = 0;
};

std::string hex(std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

std::string hand_manifest(const std::vector<HandPiece>& pieces, const std::string& vt = "float64",
                          int version = 1) {
  std::ostringstream m;
  m << "format_version = " << version
    << "\nkolibri_version = \"0.1.0\"\ncreated = \"2026-01-01T00:00:00Z\"\n"
    << "step = 1234\nvalue_type = \"" << vt << "\"\nq = " << kQ << "\nglobal = [" << kGlobal[0]
    << ", " << kGlobal[1] << ", " << kGlobal[2] << "]\nphase = 0\nranks = " << pieces.size()
    << "\nformat = \"per-rank\"\n"
    << "signature = \"sig\"\ndeck = \"\"\n";
  for (std::size_t r = 0; r < pieces.size(); ++r) {
    const Box& b = pieces[r].box;
    char file[32];
    std::snprintf(file, sizeof file, "rank_%05zu.h5", r);
    m << "\n[[piece]]\nrank = " << r << "\nfile = \"" << file << "\"\nlo = [" << b.lo[0] << ", " << b.lo[1] << ", "
      << b.lo[2] << "]\nn = [" << b.n[0] << ", " << b.n[1] << ", " << b.n[2] << "]\nchecksum = \""
      << hex(pieces[r].checksum) << "\"\n";
  }
  return m.str();
}

/// A per-rank checkpoint in `path` whose pieces are `boxes` (each rank file written by a one-rank
/// checkpoint of that box alone, then gathered under one manifest).
void hand_checkpoint(const std::string& path, const std::vector<Box>& boxes, const std::string& vt = "float64") {
  fs::create_directories(path);
  std::vector<HandPiece> pieces;
  for (std::size_t r = 0; r < boxes.size(); ++r) {
    auto info = make_info(vt, boxes[r].n);
    StatePiece p;
    p.box = Box{{0, 0, 0}, boxes[r].n};
    p.data = expected(vt, kGlobal, kQ, boxes[r]);  // values of the global cells of this piece
    const std::string part = path + "_part" + std::to_string(r);
    write_checkpoint(Comm::world(), part, info, p, CheckpointLayout::PerRank);
    char file[32];
    std::snprintf(file, sizeof file, "/rank_%05zu.h5", r);
    fs::rename(part + "/rank_00000.h5", path + file);
    fs::remove_all(part);
    pieces.push_back({boxes[r], checksum64(p.data.data(), p.data.size())});
  }
  spit(path + "/manifest.toml", hand_manifest(pieces, vt));
}

// Three pieces: x 0..2 (all y, z); x 3..6 with y 0..1; x 3..6 with y 2..4.
const std::vector<Box> kThree = {Box{{0, 0, 0}, {3, 5, 3}}, Box{{3, 0, 0}, {4, 2, 3}}, Box{{3, 2, 0}, {4, 3, 3}}};

TEST(Checkpoint, ReadsBoxesSpanningSeveralPieces) {
  const std::string path = fresh_dir() + "/three";
  for (const std::string vt : {"float64", "float16"}) {
    SCOPED_TRACE(vt);
    fs::remove_all(path);
    hand_checkpoint(path, kThree, vt);
    const auto info = read_checkpoint_info(path);
    ASSERT_EQ(info.ranks, 3);
    EXPECT_EQ(info.boxes, kThree);
    for (const Box& b : {Box{{0, 0, 0}, kGlobal}, Box{{1, 1, 1}, {5, 3, 2}}, Box{{2, 1, 0}, {2, 2, 3}},
                         Box{{4, 3, 2}, {2, 1, 1}}, Box{{6, 4, 2}, {1, 1, 1}}}) {
      SCOPED_TRACE("box " + std::to_string(b.lo[0]) + "," + std::to_string(b.lo[1]) + "," + std::to_string(b.lo[2]));
      StatePiece p;
      p.box = b;
      read_checkpoint_state(path, info, p);
      EXPECT_EQ(p.data, expected(vt, kGlobal, kQ, b));
    }
  }
}

// A corrupted piece that the wanted box does not touch is not read; one that it touches is caught.
TEST(Checkpoint, OnlyOverlappingPiecesAreRead) {
  const std::string path = fresh_dir() + "/three";
  hand_checkpoint(path, kThree);
  fs::resize_file(path + "/rank_00002.h5", 100);
  const auto info = read_checkpoint_info(path);
  StatePiece p;
  p.box = Box{{0, 0, 0}, {7, 2, 3}};  // pieces 0 and 1
  read_checkpoint_state(path, info, p);
  EXPECT_EQ(p.data, expected("float64", kGlobal, kQ, p.box));
  p.box = Box{{2, 2, 0}, {2, 1, 1}};  // pieces 0 and 2
  expect_error([&] { read_checkpoint_state(path, info, p); }, {"rank_00002.h5"});
}

TEST(Checkpoint, PiecesMustTileTheGlobalBox) {
  const std::string dir = fresh_dir();
  hand_checkpoint(dir + "/good", kThree);
  const auto try_pieces = [&](const std::vector<Box>& boxes) {
    std::vector<HandPiece> pieces;
    for (const auto& b : boxes) pieces.push_back({b, 0});
    spit(dir + "/good/manifest.toml", hand_manifest(pieces));
    return [&dir] { read_checkpoint_info(dir + "/good"); };
  };
  // Overlap: piece 1 also covers y = 2.
  expect_error(try_pieces({kThree[0], Box{{3, 0, 0}, {4, 3, 3}}, kThree[2]}),
               {"manifest.toml", "do not tile", "ranks 1", "and 2", "overlap"});
  // Gap: piece 2 misses z = 2.
  expect_error(try_pieces({kThree[0], kThree[1], Box{{3, 2, 0}, {4, 3, 2}}}), {"cover 93 of the 105 cells"});
  // Out of bounds: piece 2 reaches x = 7.
  expect_error(try_pieces({kThree[0], kThree[1], Box{{4, 2, 0}, {4, 3, 3}}}), {"rank 2", "outside the global box"});
}

// --- Defects of the manifest and of the directory -----------------------------------------------

TEST(Checkpoint, MissingOrIncompleteCheckpoints) {
  const std::string dir = fresh_dir();
  expect_error([&] { read_checkpoint_info(dir + "/nothing"); }, {dir + "/nothing", "does not exist"});
  fs::create_directories(dir + "/cut.tmp");
  expect_error([&] { read_checkpoint_info(dir + "/cut"); },
               {dir + "/cut", "incomplete: the run was stopped while writing it"});
  const std::string path = write_simple(dir);
  fs::remove(path + "/manifest.toml");
  expect_error([&] { read_checkpoint_info(path); }, {path + "/manifest.toml", "missing"});
}

TEST(Checkpoint, DamagedManifests) {
  const std::string path = write_simple(fresh_dir());
  const std::string mf = path + "/manifest.toml";
  const std::string good = slurp(mf);
  ASSERT_NO_THROW(read_checkpoint_info(path));
  struct Case {
    std::string from, to;
    std::vector<std::string> parts;
  };
  const std::vector<Case> cases = {
      {"q = 19", "q = [19", {"manifest.toml:", "TOML syntax error"}},
      {"q = 19", "qq = 19", {"manifest.toml", "key 'q': missing"}},
      {"step = 1234", "step = \"1234\"", {"manifest.toml:", "key 'step'", "expected an integer, got a string"}},
      {"format_version = 1", "format_version = 99", {"unknown checkpoint format version 99"}},
      {"value_type = 'float64'", "value_type = 'float8'", {"key 'value_type'", "unknown value type 'float8'"}},
      {"format = 'per-rank'", "format = 'striped'", {"key 'format'", "'striped' is not one of"}},
      {"global = [ 7, 5, 3 ]", "global = [ 7, 5 ]", {"key 'global'", "expected an array of 3 integers"}},
      {"lo = [ 0, 0, 0 ]", "lo = [ 0, 'a', 0 ]", {"key 'piece[0].lo'", "element 1 is a string"}},
      {"ranks = 1", "ranks = 2", {"key 'piece'", "1 pieces for 2 ranks"}},
      {"file = 'rank_00000.h5'", "file = '../x.h5'", {"key 'piece[0].file'", "'../x.h5'"}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.to);
    std::string text = good;
    replace_once(text, c.from, c.to);
    spit(mf, text);
    expect_error([&] { read_checkpoint_info(path); }, c.parts);
  }
  // The checksum is a string of 16 hex digits.
  std::string text = good;
  const auto at = text.find("checksum = '");
  ASSERT_NE(at, std::string::npos) << text;
  text.replace(at, 13, "checksum = 'zz");
  spit(mf, text);
  expect_error([&] { read_checkpoint_info(path); }, {"key 'piece[0].checksum'", "16 hexadecimal digits"});
  // A piece file named by the manifest is gone.
  spit(mf, good);
  fs::remove(path + "/rank_00000.h5");
  expect_error([&] { read_checkpoint_info(path); }, {path + "/rank_00000.h5", "missing"});
}

// --- Defects of the data ------------------------------------------------------------------------

TEST(Checkpoint, TruncatedFilesNameTheFile) {
  const std::string dir = fresh_dir();
  for (const auto layout : {CheckpointLayout::PerRank, CheckpointLayout::Single}) {
    const bool single = layout == CheckpointLayout::Single;
    const std::string path = write_simple(dir, "float64", layout, single ? "single" : "per_rank");
    const std::string file = path + (single ? "/state.h5" : "/rank_00000.h5");
    fs::resize_file(file, fs::file_size(file) / 2);
    const auto info = read_checkpoint_info(path);
    StatePiece p;
    p.box = Box{{0, 0, 0}, {1, 1, 1}};
    ::testing::internal::CaptureStderr();
    expect_error([&] { read_checkpoint_state(path, info, p); }, {file});
    EXPECT_EQ(::testing::internal::GetCapturedStderr(), "") << "HDF5 printed its error stack";
  }
}

/// Flips one byte in the middle of the populations data of `file` (found by its first bytes).
void flip_data_byte(const std::string& file, const std::vector<std::byte>& data) {
  std::string bytes = slurp(file);
  const std::string head(reinterpret_cast<const char*>(data.data()), 64);
  const auto at = bytes.find(head);
  ASSERT_NE(at, std::string::npos) << "the data is not stored contiguously in " << file;
  ASSERT_EQ(bytes.find(head, at + 1), std::string::npos);
  bytes[at + data.size() / 2] = char(bytes[at + data.size() / 2] ^ 0x10);
  spit(file, bytes);
}

TEST(Checkpoint, OneFlippedByteIsACorruptedCheckpoint) {
  const std::string dir = fresh_dir();
  const auto data = whole(make_info("float64")).data;
  for (const auto layout : {CheckpointLayout::PerRank, CheckpointLayout::Single}) {
    const bool single = layout == CheckpointLayout::Single;
    const std::string path = write_simple(dir, "float64", layout, single ? "single" : "per_rank");
    const std::string file = path + (single ? "/state.h5" : "/rank_00000.h5");
    flip_data_byte(file, data);
    const auto info = read_checkpoint_info(path);  // the manifest is fine
    StatePiece p;
    p.box = Box{{0, 0, 0}, {1, 1, 1}};  // far from the flipped byte: the whole piece is checked
    expect_error([&] { read_checkpoint_state(path, info, p); },
                 {"checksum mismatch in piece of rank 0", "(file " + file + ")", "the checkpoint is corrupted"});
  }
}

TEST(Checkpoint, VerifyReadsEveryPieceBack) {
  const std::string dir = fresh_dir();
  const auto data = whole(make_info("float64")).data;
  for (const auto layout : {CheckpointLayout::PerRank, CheckpointLayout::Single}) {
    const bool single = layout == CheckpointLayout::Single;
    const std::string path = write_simple(dir, "float64", layout, single ? "single" : "per_rank");
    EXPECT_EQ(verify_checkpoint(Comm::world(), path).step, make_info("float64").step);
    flip_data_byte(path + (single ? "/state.h5" : "/rank_00000.h5"), data);
    expect_error([&] { (void)verify_checkpoint(Comm::world(), path); },
                 {"checksum mismatch in piece of rank 0"});
  }
}

// The implicit forcing's forces (issue 21's warm start) go to ib_forces.h5 beside the pieces,
// their size and checksum to the manifest; they read back bit for bit, a checkpoint without them
// reads back none, and a flipped byte is found by read and verify alike.
TEST(Checkpoint, ImplicitForcingForcesRoundTripAndAreChecked) {
  const std::string dir = fresh_dir();
  CheckpointInfo info = make_info("float64");
  for (int i = 0; i < 300; ++i)
    info.ib_forces.push_back(std::ldexp(1.0 + i, -i % 40) * (i % 3 - 1));
  const std::string path = dir + "/ck";
  write_checkpoint(Comm::world(), path, info, whole(info));
  const CheckpointInfo back = read_checkpoint_info(path);
  EXPECT_EQ(back.ib_forces_samples, 100);
  EXPECT_TRUE(back.ib_forces.empty())
      << "the manifest names the file; read_checkpoint_ib_forces reads it";
  EXPECT_EQ(read_checkpoint_ib_forces(path, back), info.ib_forces);
  EXPECT_NE(slurp(path + "/manifest.toml").find("[ib_forces]"), std::string::npos);
  const std::string plain = write_simple(dir, "float64", CheckpointLayout::PerRank, "plain");
  EXPECT_TRUE(read_checkpoint_ib_forces(plain, read_checkpoint_info(plain)).empty());
  std::vector<std::byte> data(info.ib_forces.size() * sizeof(double));
  std::memcpy(data.data(), info.ib_forces.data(), data.size());
  flip_data_byte(path + "/ib_forces.h5", data);
  expect_error([&] { (void)read_checkpoint_ib_forces(path, back); },
               {path + "/ib_forces.h5", "does not match the manifest's", "corrupted"});
  expect_error([&] { (void)verify_checkpoint(Comm::world(), path); }, {"ib_forces.h5"});
  std::filesystem::remove(path + "/ib_forces.h5");  // a checkpoint without the file it names
  expect_error([&] { (void)read_checkpoint_info(path); }, {"ib_forces.h5: missing"});
  info.ib_forces.pop_back();
  expect_error<OutputError>(
      [&] { write_checkpoint(Comm::world(), dir + "/odd", info, whole(info)); },
      {"not 3 values a sample"});
}

// A refined grid's levels go to levels.h5 beside the pieces (of the checkpoint's value type),
// their count and checksum to the manifest; they read back bit for bit, a checkpoint without
// them reads back none, and a flipped byte or a missing file is found.
TEST(Checkpoint, RefinedLevelsRoundTripAndAreChecked) {
  const std::string dir = fresh_dir();
  for (const std::string vt : {"float64", "float32"}) {
    CheckpointInfo info = make_info(vt);
    const std::size_t vb = std::size_t(value_bytes(vt));
    std::mt19937 bits(11);
    for (std::size_t i = 0; i < 1000 * vb; ++i)
      info.level_state.push_back(std::byte(bits() & 0xff));
    const std::string path = dir + "/levels_" + vt;
    write_checkpoint(Comm::world(), path, info, whole(info));
    const CheckpointInfo back = read_checkpoint_info(path);
    EXPECT_EQ(back.level_values, 1000);
    EXPECT_TRUE(back.level_state.empty())
        << "the manifest names the file; read_checkpoint_levels reads it";
    EXPECT_EQ(read_checkpoint_levels(path, back), info.level_state);
    EXPECT_NE(slurp(path + "/manifest.toml").find("[levels]"), std::string::npos);
    // A rank's part (a restart on several ranks): its ranges, the whole file checked or not.
    const LevelSlice part{1000, {{0, 3}, {3, 17}, {400, 400}, {640, 1000}}};
    std::vector<std::byte> want(info.level_state.begin(),
                                info.level_state.begin() + std::ptrdiff_t(17 * vb));
    want.insert(want.end(), info.level_state.begin() + std::ptrdiff_t(640 * vb),
                info.level_state.end());
    for (const bool verify : {false, true})
      EXPECT_EQ(read_checkpoint_levels(path, back, part, verify), want) << "verify " << verify;
    for (const std::int64_t bytes : {8, 24, 136})  // parts that cut the ranges
      EXPECT_EQ(read_checkpoint_levels(path, back, part, true, bytes), want)
          << "parts of " << bytes;
    EXPECT_EQ(read_checkpoint_levels(path, back, LevelSlice{1000, {}}, true).size(), 0u);
    expect_error<std::invalid_argument>(
        [&] {
          (void)read_checkpoint_levels(path, back, LevelSlice{999, {{0, 999}}}, false);
        },
        {"refined levels hold 1000 values; this deck's levels 999"});
    expect_error<std::invalid_argument>(
        [&] { (void)read_checkpoint_levels(path, back, LevelSlice{}, false); },
        {"holds a refined grid's levels; this run has none"});
    flip_data_byte(path + "/levels.h5", info.level_state);
    expect_error([&] { (void)read_checkpoint_levels(path, back); },
                 {path + "/levels.h5", "does not match the manifest's", "corrupted"});
    expect_error([&] { (void)read_checkpoint_levels(path, back, part, true, 24); },
                 {path + "/levels.h5", "does not match the manifest's", "corrupted"});
    expect_error([&] { (void)verify_checkpoint(Comm::world(), path); }, {"levels.h5"});
    std::filesystem::remove(path + "/levels.h5");
    expect_error([&] { (void)read_checkpoint_info(path); }, {"levels.h5: missing"});
  }
  const std::string plain = write_simple(dir, "float64", CheckpointLayout::PerRank, "plain");
  EXPECT_TRUE(read_checkpoint_levels(plain, read_checkpoint_info(plain)).empty());
  EXPECT_TRUE(
      read_checkpoint_levels(plain, read_checkpoint_info(plain), LevelSlice{}, true).empty());
}

TEST(Checkpoint, TheStepComesFromTheData) {
  const std::string dir = fresh_dir();
  auto info = make_info("float64");
  info.step = 300;
  const std::string path = dir + "/run_ckpt_00000300";
  write_checkpoint(Comm::world(), path, info, whole(info));
  EXPECT_EQ(read_checkpoint_info(path).step, 300);
  // Renamed: the name and the manifest disagree.
  fs::rename(path, dir + "/run_ckpt_00000350");
  expect_error([&] { (void)read_checkpoint_info(dir + "/run_ckpt_00000350"); },
               {"name says step 350", "manifest says step 300"});
  EXPECT_TRUE(prune_checkpoints(dir, "run", 0).empty());  // pruning leaves it alone
  EXPECT_TRUE(fs::exists(dir + "/run_ckpt_00000350"));
  // The manifest (and the name) edited: the data file still holds step 300.
  std::string m = slurp(dir + "/run_ckpt_00000350/manifest.toml");
  replace_once(m, "step = 300", "step = 299");
  spit(dir + "/run_ckpt_00000350/manifest.toml", m);
  fs::rename(dir + "/run_ckpt_00000350", dir + "/run_ckpt_00000299");
  expect_error([&] { (void)verify_checkpoint(Comm::world(), dir + "/run_ckpt_00000299"); },
               {"rank_00000.h5", "holds step 300 but the manifest says step 299"});
}

TEST(Checkpoint, MoveAsideNeverDeletes) {
  const std::string dir = fresh_dir();
  const std::string path = write_simple(dir);
  EXPECT_EQ(move_aside(path, "damaged"), path + ".damaged");
  EXPECT_TRUE(fs::exists(path + ".damaged/manifest.toml"));
  fs::create_directories(path);
  EXPECT_EQ(move_aside(path, "damaged"), path + ".damaged.2");
  EXPECT_TRUE(list_checkpoints(dir, "ck").empty());  // neither counts as a checkpoint of "ck"
}

// --- Writing ------------------------------------------------------------------------------------

TEST(Checkpoint, AnExistingCheckpointIsNeverReplaced) {
  const std::string dir = fresh_dir();
  const std::string path = write_simple(dir);
  const std::string manifest = slurp(path + "/manifest.toml");
  auto info = make_info("float64");
  info.step = 9;
  expect_error<OutputError>([&] { write_checkpoint(Comm::world(), path, info, whole(info)); },
                            {path, "exists already"});
  EXPECT_EQ(slurp(path + "/manifest.toml"), manifest);
  EXPECT_FALSE(fs::exists(path + ".tmp"));
}

TEST(Checkpoint, AStaleTmpDirectoryIsReplaced) {
  const std::string dir = fresh_dir();
  fs::create_directories(dir + "/ck.tmp");
  spit(dir + "/ck.tmp/rank_00000.h5", "half a file");
  const std::string path = write_simple(dir);
  EXPECT_FALSE(fs::exists(path + ".tmp"));
  StatePiece p;
  p.box = Box{{0, 0, 0}, kGlobal};
  read_checkpoint_state(path, read_checkpoint_info(path), p);
  EXPECT_EQ(p.data, whole(make_info("float64")).data);
}

TEST(Checkpoint, BadPiecesAreRefusedAndLeaveNothing) {
  const std::string dir = fresh_dir();
  const std::string path = dir + "/ck";
  auto info = make_info("float64");
  StatePiece p = whole(info);
  p.data.pop_back();
  expect_error<OutputError>([&] { write_checkpoint(Comm::world(), path, info, p); },
                            {"piece of rank 0 has 15959 bytes", "15960"});
  p = whole(info);
  p.box.n[2] = 2;  // covers 70 of 105 cells
  p.data.resize(p.data.size() * 2 / 3);
  expect_error<OutputError>([&] { write_checkpoint(Comm::world(), path, info, p); }, {"cover 70 of the 105 cells"});
  info.value_type = "float128";
  expect_error<OutputError>([&] { write_checkpoint(Comm::world(), path, info, whole(make_info("float64"))); },
                            {"unknown value type 'float128'"});
  EXPECT_FALSE(fs::exists(path));
  EXPECT_FALSE(fs::exists(path + ".tmp"));
}

// --- Listing and pruning ------------------------------------------------------------------------

TEST(Checkpoint, ListAndPrune) {
  const std::string dir = fresh_dir();
  const auto info0 = make_info("float32", {2, 2, 1}, 1);
  for (const std::int64_t step : {100000000, 20, 5, 99999999, 1000}) {
    auto info = info0;
    info.step = step;
    write_checkpoint(Comm::world(), checkpoint_path(dir, "run", step), info, whole(info));
  }
  write_checkpoint(Comm::world(), checkpoint_path(dir, "other", 1), info0, whole(info0));
  fs::create_directories(checkpoint_path(dir, "run", 300) + ".tmp");  // a killed write
  fs::create_directories(checkpoint_path(dir, "run", 400));           // no manifest: not a checkpoint
  spit(dir + "/run_ckpt_00000007", "a file, not a directory");

  const std::vector<std::string> all = {checkpoint_path(dir, "run", 5), checkpoint_path(dir, "run", 20),
                                        checkpoint_path(dir, "run", 1000), checkpoint_path(dir, "run", 99999999),
                                        checkpoint_path(dir, "run", 100000000)};
  EXPECT_EQ(list_checkpoints(dir, "run"), all);  // by step, not by name
  EXPECT_EQ(list_checkpoints(dir, "other"), std::vector<std::string>{checkpoint_path(dir, "other", 1)});
  EXPECT_TRUE(list_checkpoints(dir + "/nowhere", "run").empty());

  auto removed = prune_checkpoints(dir, "run", 2);
  std::sort(removed.begin(), removed.end());
  std::vector<std::string> want = {all[0], all[1], all[2], checkpoint_path(dir, "run", 300) + ".tmp"};
  std::sort(want.begin(), want.end());
  EXPECT_EQ(removed, want);
  for (const auto& r : removed) EXPECT_FALSE(fs::exists(r)) << r;
  EXPECT_EQ(list_checkpoints(dir, "run"), (std::vector<std::string>{all[3], all[4]}));
  EXPECT_TRUE(fs::exists(checkpoint_path(dir, "run", 400)));  // not ours to judge
  EXPECT_TRUE(fs::exists(checkpoint_path(dir, "other", 1)));
  EXPECT_TRUE(prune_checkpoints(dir, "run", 2).empty());
  EXPECT_EQ(prune_checkpoints(dir, "run", 0).size(), 2u);
  EXPECT_TRUE(list_checkpoints(dir, "run").empty());
  EXPECT_THROW(prune_checkpoints(dir, "run", -1), std::invalid_argument);
}

}  // namespace
