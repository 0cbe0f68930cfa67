// SPDX-License-Identifier: Apache-2.0
// Grid refinement (refine/): tau per level, the levels' blocks (closure and balance), a grid
// refined everywhere against the dense solver at the fine resolution (bit for bit), uniform flow
// as a fixed point across level interfaces, mass and momentum conserved to round-off by the
// transfers between levels, and the deck's [refinement] keys with their errors.
#include <kolibri/config/Rules.hpp>
#include <kolibri/ib/Coupling.hpp>
#include <kolibri/io/Deck.hpp>
#include <kolibri/refine/LevelRanks.hpp>
#include <kolibri/refine/RefinedSolver.hpp>
#include <kolibri/run/Runner.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <numeric>
#include <random>

#include "Helpers.hpp"
#include "TestFiles.hpp"

namespace {
using namespace kolibri;

RefinementRegion box_region(int level, std::array<double, 3> lo, std::array<double, 3> hi) {
  RefinementRegion r;
  r.level = level, r.min = lo, r.max = hi;
  return r;
}
/// A band of `width` cells of level `level` around `around` (RefinementRegion::around).
RefinementRegion band_region(int level, const std::string& around, double width) {
  RefinementRegion r;
  r.kind = RefinementRegion::Kind::Band;
  r.level = level, r.around = around, r.width = width;
  return r;
}

/// Expects `make()` to throw std::invalid_argument whose message holds each of `needles`.
template <class Make>
void expect_refused(const Make& make, std::initializer_list<const char*> needles) {
  try {
    make();
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    for (const char* needle : needles) EXPECT_NE(what.find(needle), std::string::npos) << what;
    return;
  }
  ADD_FAILURE() << "no error";
}

/// A periodic box of n cells a side (nz = 1 in 2D) with two nested boxes: level 1 over the middle
/// half, level 2 over the middle quarter (levels = 3), or level 1 only (levels = 2).
SolverConfig nested(LatticeKind lat, int n, int levels, double tau = 0.8) {
  const bool two_d = lat == LatticeKind::D2Q9;
  auto c = test::periodic_box(lat, n, n, two_d ? 1 : n, tau);
  c.refinement.levels = levels;
  const double z1 = two_d ? 0.0 : n / 4.0, z2 = two_d ? 1.0 : 3.0 * n / 4.0;
  c.refinement.regions.push_back(
      box_region(1, {n / 4.0, n / 4.0, z1}, {3.0 * n / 4.0, 3.0 * n / 4.0, z2}));
  if (levels > 2)
    c.refinement.regions.push_back(
        box_region(2, {3.0 * n / 8.0, 3.0 * n / 8.0, two_d ? 0.0 : 3.0 * n / 8.0},
                   {5.0 * n / 8.0, 5.0 * n / 8.0, two_d ? 1.0 : 5.0 * n / 8.0}));
  return c;
}

/// A closed box (walls on every face; nz = 8 in 3D) with its finest level (of `levels`) in a band
/// three cells wide along the walls.
SolverConfig walled_with_band(LatticeKind lat, int levels) {
  const bool two_d = lat == LatticeKind::D2Q9;
  auto c = test::periodic_box(lat, two_d ? 32 : 16, two_d ? 32 : 16, two_d ? 1 : 8, 0.7);
  for (std::size_t f = 0; f < (two_d ? 4u : 6u); ++f) c.faces[f].type = FaceType::Wall;
  c.refinement.levels = levels;
  c.refinement.regions = {band_region(levels - 1, "walls", 3)};
  return c;
}

const RefinedGrid& grid_of(const Solver& s) { return dynamic_cast<const RefinedGrid&>(s); }

void perturb(Solver& s, unsigned seed) {
  const auto& c = s.config();
  std::vector<double> rho(std::size_t(c.cells()));
  std::vector<std::array<double, 3>> u(rho.size());
  std::mt19937 g(seed);
  std::uniform_real_distribution<double> d(-0.02, 0.02);
  for (std::size_t i = 0; i < rho.size(); ++i) {
    rho[i] = 1.0 + d(g);
    u[i] = {d(g), d(g), c.lattice == LatticeKind::D2Q9 ? 0.0 : d(g)};
  }
  s.initialize(rho, u);
}

/// Perturbed (seed), then `steps` coarse steps: the total mass and momentum keep their values to
/// round-off (sums over ~1e4 cells of O(1) values, each step adding a few eps a cell).
void expect_conserved(Solver& s, unsigned seed, int steps) {
  perturb(s, seed);
  const double m0 = grid_of(s).total_mass();
  const auto j0 = s.momentum();
  s.step(steps);
  EXPECT_NEAR(grid_of(s).total_mass(), m0, 1e-12 * m0);
  const auto j1 = s.momentum();
  for (int d = 0; d < 3; ++d) EXPECT_NEAR(j1[std::size_t(d)], j0[std::size_t(d)], 1e-12 * m0) << d;
}

TEST(Refinement, TauKeepsTheViscosityOnEveryLevel) {
  // mahmoud2024 eq. 9: omega_L = 2 omega_0 / (2^(L+1) + (1 - 2^L) omega_0).
  for (const double tau0 : {0.51, 0.6, 0.8, 1.5})
    for (int l = 0; l < 5; ++l) {
      const double w0 = 1.0 / tau0,
                   wl = 2.0 * w0 / (std::ldexp(2.0, l) + (1.0 - std::ldexp(1.0, l)) * w0);
      EXPECT_NEAR(1.0 / level_tau(tau0, l), wl, 1e-14) << tau0 << " " << l;
      EXPECT_NEAR(level_tau(tau0, l) - 0.5, std::ldexp(tau0 - 0.5, l), 1e-14);
    }
}

TEST(Refinement, NestedBoxesCoverTheBoxOnce) {
  // Every point of the box lies in exactly one leaf: the leaves' volumes add up to the box.
  for (const LatticeKind lat : {LatticeKind::D2Q9, LatticeKind::D3Q19}) {
    const auto c = nested(lat, 32, 3);
    const Octree t = build_octree(c);
    ASSERT_EQ(t.levels.size(), 3u);
    double volume = 0.0;
    for (const RefinedLevel& l : t.levels) {
      EXPECT_GT(l.fluid_cells, 0) << l.level;
      volume += std::ldexp(double(l.fluid_cells), -t.dims * l.level);
    }
    EXPECT_EQ(volume, double(c.cells()));
    EXPECT_EQ(t.updates_per_step(),
              t.levels[0].fluid_cells + 2 * t.levels[1].fluid_cells + 4 * t.levels[2].fluid_cells);
  }
}

TEST(Refinement, RanksStepRangesOfEveryLevelAndTradeTheBlocksTheyRead) {
  // The leaves cut among 1 to 8 ranks in the blocks' depth-first order: each rank's leaves of a
  // level are one range of slots, the ranges tile every level in rank order, the shares of the
  // updates are even to a leaf, and what a rank sends a peer after a level step is what the peer
  // expects, of its own blocks and cells. (That they suffice: tests/mpi, bit-identical to one
  // rank.)
  for (const LatticeKind lat : {LatticeKind::D2Q9, LatticeKind::D3Q19}) {
    const Octree t = build_octree(nested(lat, lat == LatticeKind::D2Q9 ? 64 : 32, 3));
    const int layers = t.levels[0].blocks[std::size_t(t.dims - 1)];
    ASSERT_EQ(layers, 8);
    std::int64_t total = 0;
    for (const RefinedLevel& h : t.levels)
      total += std::int64_t(h.leaf.size() * std::size_t(t.block_cells())) << h.level;
    const std::int64_t largest = std::int64_t(t.block_cells()) << (t.levels.size() - 1);
    for (int ranks = 1; ranks <= layers; ++ranks) {
      SCOPED_TRACE(std::string(to_string(lat)) + " on " + std::to_string(ranks) + " ranks");
      const LevelRanks r = cut_levels(t, ranks);
      ASSERT_EQ(r.updates.size(), std::size_t(ranks));
      EXPECT_EQ(std::accumulate(r.updates.begin(), r.updates.end(), std::int64_t(0)), total);
      for (int k = 0; k < ranks; ++k) {
        EXPECT_GT(r.updates[std::size_t(k)], 0);
        EXPECT_LE(std::abs(r.updates[std::size_t(k)] - total / ranks), largest) << "rank " << k;
      }
      for (const RefinedLevel& h : t.levels) {
        const auto& starts = r.slot_start[std::size_t(h.level)];
        ASSERT_EQ(starts.size(), std::size_t(ranks) + 1);
        EXPECT_EQ(starts.front(), 0);
        EXPECT_EQ(starts.back(), std::int64_t(h.leaf.size()));
        for (int k = 0; k < ranks; ++k)
          EXPECT_LE(starts[std::size_t(k)], starts[std::size_t(k) + 1]);
        for (std::size_t s = 0; s < h.leaf.size(); ++s) {
          const int o = r.owner(h.level, std::int64_t(s));
          ASSERT_TRUE(std::int64_t(s) >= starts[std::size_t(o)] &&
                      std::int64_t(s) < starts[std::size_t(o) + 1]);
        }
      }
      std::vector<std::vector<std::vector<LevelPeerBlocks>>> x;
      for (int k = 0; k < ranks; ++k) x.push_back(level_exchange(t, r, k));
      std::size_t moved = 0;
      for (int k = 0; k < ranks; ++k)
        for (std::size_t m = 0; m < t.levels.size(); ++m)
          for (const LevelPeerBlocks& b : x[std::size_t(k)][m]) {
            EXPECT_NE(b.peer, k);
            const auto& back = x[std::size_t(b.peer)][m];
            const auto it = std::find_if(back.begin(), back.end(),
                                         [&](const LevelPeerBlocks& e) { return e.peer == k; });
            ASSERT_NE(it, back.end());
            EXPECT_EQ(b.send, it->recv);
            EXPECT_EQ(b.send_cells, it->recv_cells);  // the same cells of each block
            for (const std::uint64_t c : b.send_cells) EXPECT_NE(c, 0u);
            for (const std::int32_t slot : b.send) EXPECT_EQ(r.owner(int(m), slot), k);
            for (const std::int32_t slot : b.recv) EXPECT_EQ(r.owner(int(m), slot), b.peer);
            moved += b.send.size();
          }
      EXPECT_EQ(moved > 0, ranks > 1);
      // The leaves each rank holds of each level (level_held): its own and every block it
      // receives, in increasing order; on one rank every leaf. In its own numbering
      // (local_levels) its own run stays one range and each table names the same blocks.
      for (int k = 0; k < ranks; ++k) {
        const std::vector<std::vector<std::int32_t>> held = level_held(t, r, k);
        ASSERT_EQ(held.size(), t.levels.size());
        const Octree mine = local_levels(t, held);
        for (const RefinedLevel& h : t.levels) {
          const auto l = std::size_t(h.level);
          const auto& own = r.slot_start[l];
          const std::vector<std::int32_t>& hl = held[l];
          EXPECT_TRUE(std::is_sorted(hl.begin(), hl.end()));
          EXPECT_EQ(std::adjacent_find(hl.begin(), hl.end()), hl.end());
          for (std::int64_t s = own[std::size_t(k)]; s < own[std::size_t(k) + 1]; ++s)
            EXPECT_TRUE(std::binary_search(hl.begin(), hl.end(), std::int32_t(s)));
          for (const LevelPeerBlocks& b : x[std::size_t(k)][l])
            for (const std::int32_t slot : b.recv)
              EXPECT_TRUE(std::binary_search(hl.begin(), hl.end(), slot)) << "level " << l;
          if (ranks == 1) {
            EXPECT_EQ(hl.size(), h.leaf.size());
          }
          const RefinedLevel& m = mine.levels[l];
          ASSERT_EQ(m.leaf.size(), hl.size());
          for (std::size_t i = 0; i < hl.size(); ++i) {
            const auto g = std::size_t(hl[i]);
            EXPECT_EQ(m.leaf[i], h.leaf[g]);
            for (std::size_t n = 0; n < 27; ++n) {  // a held neighbour: the same block
              const std::int32_t code = h.neighbours[27 * g + n], got = m.neighbours[27 * i + n];
              if (code < 0) {
                EXPECT_EQ(got, code);
              } else if (got >= 0) {
                EXPECT_EQ(hl[std::size_t(got)], code);
              }
            }
          }
        }
      }
    }
    try {
      (void)cut_levels(t, layers + 1);
      ADD_FAILURE() << "more ranks than layers";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("at most 8 ranks"), std::string::npos) << e.what();
    }
  }
}

TEST(Refinement, RanksHoldTheirShareOfTheLevels) {
  // A channel along z, 32 layers of level-0 blocks long, level 1 over its middle, closed (walls
  // on every face) and periodic along z: on 4 ranks each rank holds the leaves it steps and those
  // its cells read (level_held), under 40% of every level, so its memory (held_bytes) is under
  // 40% of one rank's; the first and the last rank of the periodic channel read across the face
  // and hold no more than the others.
  for (const bool periodic : {false, true}) {
    auto c = test::periodic_box(LatticeKind::D3Q19, 16, 16, 128, 0.8);
    if (!periodic)
      for (std::size_t f = 0; f < 6; ++f) c.faces[f].type = FaceType::Wall;
    c.refinement.levels = 2;
    c.refinement.regions = {box_region(1, {4, 4, 0}, {12, 12, 128})};
    const Octree t = build_octree(c);
    const int ranks = 4;
    const LevelRanks r = cut_levels(t, ranks);
    const double per_cell = level_bytes_per_cell(c);
    const double whole = octree_bytes(t, per_cell);
    for (int k = 0; k < ranks; ++k) {
      SCOPED_TRACE((periodic ? "periodic, rank " : "closed, rank ") + std::to_string(k));
      const std::vector<std::vector<std::int32_t>> held = level_held(t, r, k);
      for (const RefinedLevel& h : t.levels)
        EXPECT_LT(double(held[std::size_t(h.level)].size()), 0.4 * double(h.leaf.size()))
            << "level " << h.level;
      EXPECT_LT(held_bytes(t, held, per_cell), 0.4 * whole);
    }
    // With bodies every rank also holds the bodies' box's blocks (their kernels run on every
    // rank), on the box's level only; the slots of level 1's middle layers stand for a box.
    LevelBodyBox box;
    box.level = 1;
    const auto leaves = std::int32_t(t.levels[1].leaf.size());
    box.slot = {0, leaves / 2, leaves - 1, -1};
    for (int k = 0; k < ranks; ++k) {
      const auto plain = level_held(t, r, k), with = rank_held(t, r, k, &box);
      EXPECT_EQ(rank_held(t, r, k, nullptr), plain);
      EXPECT_EQ(with[0], plain[0]);
      for (const std::int32_t slot : box.slot)
        EXPECT_TRUE(slot < 0 || std::binary_search(with[1].begin(), with[1].end(), slot)) << slot;
      for (const std::int32_t slot : plain[1])
        EXPECT_TRUE(std::binary_search(with[1].begin(), with[1].end(), slot)) << slot;
    }
    // A rank's share that does not fit its device is refused, naming the rank and the remedy.
    try {
      check_held_fits(t, r, 1, level_held(t, r, 1), per_cell, 1.0);
      ADD_FAILURE() << "a share over the device's memory";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("rank 1 of 4 holds"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("more ranks"), std::string::npos) << e.what();
    }
  }
}

TEST(Refinement, ConcaveRegionsKeepTheirShapeAndReenter) {
  // 2D blocks are 8 x 8 cells: regions over blocks (0, 0) and (1, 1) touch at a corner only, and
  // a ring of blocks has concave corners. Both keep their shape; the fine cells there whose
  // population leaves the level for one fine step and comes back in the second read it from
  // the re-entry links (RefinedLevel::reentry_*).
  auto c = test::periodic_box(LatticeKind::D2Q9, 32, 32, 1);
  c.refinement.levels = 2;
  c.refinement.regions = {box_region(1, {0, 0, 0}, {8, 8, 1}),
                          box_region(1, {8, 8, 0}, {16, 16, 1})};
  const Octree t = build_octree(c);
  EXPECT_EQ(t.levels[0].refined.size(), 2u);
  EXPECT_EQ(t.levels[1].leaf.size(), 8u);
  EXPECT_GT(t.levels[1].reentry_key.size(), 0u);
  EXPECT_EQ(t.levels[1].reentry_start.back(), std::int32_t(t.levels[1].reentry_key.size()));
}

TEST(Refinement, ConcaveRegionsConserveMass) {
  // The corner-touching pair and a wall band (a ring with four concave corners), perturbed: the
  // re-entering populations are read once, so mass is conserved to round-off.
  auto a = test::periodic_box(LatticeKind::D2Q9, 32, 32, 1, 0.7);
  a.refinement.levels = 2;
  a.refinement.regions = {box_region(1, {0, 0, 0}, {8, 8, 1}),
                          box_region(1, {8, 8, 0}, {16, 16, 1})};
  auto b = test::periodic_box(LatticeKind::D3Q27, 16, 16, 16, 0.7);
  b.collision = CollisionKind::Kbc;
  b.refinement.levels = 2;
  b.refinement.regions = {box_region(1, {0, 0, 0}, {4, 4, 4}), box_region(1, {4, 4, 4}, {8, 8, 8}),
                          box_region(1, {8, 0, 0}, {12, 16, 4})};
  for (const SolverConfig& c : {a, b}) {
    auto s = make_solver(c);
    EXPECT_GT(grid_of(*s).octree().levels[1].reentry_key.size(), 0u);
    expect_conserved(*s, 11, 40);
  }
}

TEST(Refinement, LevelsMeetAtMostOneApart) {
  // A level-2 region of one block: level 1 grows around it until every refined level-1 block has
  // its 8 neighbours at level 1 (the builder refuses tables that break this).
  auto c = test::periodic_box(LatticeKind::D2Q9, 64, 64, 1);
  c.refinement.levels = 3;
  c.refinement.regions = {box_region(2, {30, 30, 0}, {31, 31, 1})};
  const Octree t = build_octree(c);
  ASSERT_EQ(t.levels[1].refined.size(), 1u);  // the one level-1 block with the region
  // Its 8 neighbours exist at level 1: their 4 parents (and its own) are refined at level 0.
  EXPECT_EQ(t.levels[0].refined.size(), 4u);
  EXPECT_EQ(t.levels[2].leaf.size(), 4u);
  for (const RefinedLevel& l : t.levels)
    for (std::size_t i = 0; i < l.neighbours.size(); ++i) {
      if (l.neighbours[i] == kCoarserBlock) {
        EXPECT_GE(l.coarse[i], 0);
      }
    }
}

TEST(Refinement, GeneralCellsAreListedWithTheDirectionsThatNeedARule) {
  // The general launch's list (RefinedLevel::general_cell, general_dirs) holds exactly the fluid
  // cells with kLevelSlow, once each in slot order, each with the directions that need a general
  // rule (never the rest population); the others take the fast launch.
  for (const LatticeKind lat : {LatticeKind::D2Q9, LatticeKind::D3Q27}) {
    const Octree t = build_octree(nested(lat, 32, 3));
    for (const RefinedLevel& l : t.levels) {
      ASSERT_EQ(l.general_cell.size(), l.general_dirs.size());
      EXPECT_EQ(std::int64_t(l.general_cell.size()), l.slow_cells) << l.level;
      EXPECT_GT(l.slow_cells, 0) << l.level;
      std::size_t next = 0;
      for (std::size_t c = 0; c < l.links.size(); ++c) {
        if (l.flags[c] != kLevelFluid || !(l.links[c] & kLevelSlow)) continue;
        ASSERT_LT(next, l.general_cell.size());
        EXPECT_EQ(l.general_cell[next], std::int32_t(c));
        EXPECT_NE(l.general_dirs[next], 0u);
        EXPECT_EQ(l.general_dirs[next] & 1u, 0u);
        ++next;
      }
      EXPECT_EQ(next, l.general_cell.size());
      // The rules: one per marked direction, cell by cell and by direction within a cell.
      ASSERT_EQ(l.general_rule_start.size(), l.general_cell.size() + 1);
      EXPECT_EQ(l.general_rule_start.front(), 0);
      EXPECT_EQ(std::size_t(l.general_rule_start.back()), l.general_rule.size());
      for (std::size_t i = 0; i < l.general_cell.size(); ++i) {
        std::uint32_t dirs = 0;
        int last = 0;
        for (auto j = l.general_rule_start[i]; j < l.general_rule_start[i + 1]; ++j) {
          const std::int32_t e = l.general_rule[std::size_t(j)];
          EXPECT_EQ(std::size_t(e >> 5), i);
          EXPECT_GT(e & 31, last);
          last = e & 31;
          dirs |= 1u << (e & 31);
        }
        EXPECT_EQ(dirs, l.general_dirs[i]) << i;
      }
    }
  }
  // A level-1 cell on the west side of its region, away from corners and from level 2: only the
  // directions arriving from the west (c_x = +1) read the coarser level.
  const Octree t = build_octree(nested(LatticeKind::D2Q9, 32, 3));
  const RefinedLevel& l1 = t.levels[1];
  const int e = t.edge(), x = 16, y = 18;  // level-1 cells; the region starts at x = 16
  std::int64_t cell = -1;
  for (std::size_t s = 0; s < l1.leaf.size(); ++s)
    if (l1.leaf[s][0] == x / e && l1.leaf[s][1] == y / e)
      cell = std::int64_t(s) * t.block_cells() + (x % e) + e * (y % e);
  ASSERT_GE(cell, 0);
  std::uint32_t west = 0;
  for (int q = 0; q < D2Q9::Q; ++q)
    if (D2Q9::c(q, 0) == 1) west |= 1u << q;
  bool listed = false;
  for (std::size_t i = 0; i < l1.general_cell.size(); ++i)
    if (l1.general_cell[i] == cell) {
      listed = true;
      EXPECT_EQ(l1.general_dirs[i], west);
    }
  EXPECT_TRUE(listed);
}

TEST(Refinement, LevelsThatDoNotFitAreRefusedWithTheirMemory) {
  // Each level's memory in the log line; levels beyond the device's free memory are refused
  // before anything is allocated, naming the regions and each level's share.
  const Octree t = build_octree(nested(LatticeKind::D2Q9, 32, 3));
  const double per_cell = 2.0 * 9 * 8 + 5.0;
  const auto lines = octree_report(t, per_cell);
  ASSERT_EQ(lines.size(), 3u);
  for (const std::string& line : lines) EXPECT_NE(line.find(" MiB"), std::string::npos) << line;
  const double need = octree_bytes(t, per_cell);
  EXPECT_GT(need, double(t.levels[0].cells()) * per_cell);
  EXPECT_NO_THROW(check_levels_fit(t, per_cell, need));
  expect_refused([&] { check_levels_fit(t, per_cell, need / 2); },
                 {"[[refinement.region]]", "level 2: "});
}

TEST(Refinement, LevelsBeyondTheDeviceNumbersAreRefused) {
  // Cell numbers are 32-bit on the device, and a general rule holds its cell's place in the
  // general list above five bits of direction: past either, the level is refused by name.
  const std::int64_t most = std::numeric_limits<std::int32_t>::max();
  EXPECT_NO_THROW(check_level_numbering(2, most, kMaxGeneralCells));
  const auto refused = [](std::int64_t cells, std::int64_t general, const char* what) {
    try {
      check_level_numbering(2, cells, general);
      FAIL() << "no error for " << what;
    } catch (const std::invalid_argument& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find("level 2 has"), std::string::npos) << message;
      EXPECT_NE(message.find(what), std::string::npos) << message;
      EXPECT_NE(message.find("[[refinement.region]]"), std::string::npos) << message;
    }
  };
  refused(most + 1, 0, "cells, more than the 2147483647");
  refused(most, kMaxGeneralCells + 1, "cells on the general path, more than the 67108864");
}

/// Level 1 of `refined`, which covers its whole box, against the dense box `dense` at its
/// resolution: every fluid cell's density and velocity bit for bit, and as many fluid cells.
void expect_level_one_is(const Solver& dense, const Solver& refined, const std::string& what) {
  const MacroFields a = dense.macroscopic();
  const LevelFields b = grid_of(refined).level_fields(1);
  const bool two_d = dense.config().nz == 1;
  int checked = 0;
  for (std::size_t t = 0; t < b.rho.size(); ++t) {
    if (b.flag[t] != kLevelFluid) continue;
    const auto& x = b.centre[t];
    const std::size_t i = a.index(int(2 * x[0]), int(2 * x[1]), two_d ? 0 : int(2 * x[2]));
    ASSERT_EQ(b.rho[t], a.rho[i]) << what << ", cell " << t;
    for (int d = 0; d < 3; ++d)
      ASSERT_EQ(b.u[t][std::size_t(d)], a.u[i][std::size_t(d)]) << what << ", cell " << t;
    ++checked;
  }
  EXPECT_EQ(checked, int(std::count(a.solid.begin(), a.solid.end(), 0))) << what;
}

TEST(Refinement, RefinedEverywhereIsTheDenseSolverAtTheFineResolution) {
  // Level 1 over the whole box: no interface, so the level is a dense box of twice the cells,
  // with tau_1, half the force, and the same walls and lid: the same bits as the dense solver.
  for (const LatticeKind lat : {LatticeKind::D2Q9, LatticeKind::D3Q19}) {
    const bool two_d = lat == LatticeKind::D2Q9;
    auto fine = test::closed_box(lat);  // walls, a lid, a sphere and a body force
    fine.obstacles.clear();             // (a sphere's staircase differs between resolutions)
    fine.nx = 16, fine.ny = 16, fine.nz = two_d ? 1 : 16;
    fine.tau = level_tau(0.6, 1);
    fine.force = {1e-5, -2e-5, 0.0};
    auto coarse = fine;
    coarse.nx = 8, coarse.ny = 8, coarse.nz = two_d ? 1 : 8;
    coarse.tau = 0.6;
    coarse.force = {2e-5, -4e-5, 0.0};
    coarse.refinement.levels = 2;
    coarse.refinement.regions = {box_region(1, {0, 0, 0}, {8, 8, two_d ? 1.0 : 8.0})};
    auto dense = make_solver(fine);
    auto refined = make_solver(coarse);
    ASSERT_EQ(grid_of(*refined).octree().levels[0].fluid_cells, 0);
    dense->step(20);
    refined->step(10);
    expect_level_one_is(*dense, *refined, to_string(lat));
  }
}

/// [geometry]'s solid cells for a box of n cells (x fastest), each level-0 cell of the pattern
/// `scale` cells a side: every cell (x, y, z) of the pattern with (x + 2y + 3z) % 7 == 3 (cells
/// alone, in diagonal rows and against the walls).
std::shared_ptr<const std::vector<std::uint8_t>> scattered_solids(const std::array<int, 3>& n,
                                                                  int scale) {
  const std::size_t cells = std::size_t(n[0]) * std::size_t(n[1]) * std::size_t(n[2]);
  std::vector<std::uint8_t> solid(cells);
  for (int z = 0; z < n[2]; ++z)
    for (int y = 0; y < n[1]; ++y)
      for (int x = 0; x < n[0]; ++x)
        solid[std::size_t(x + n[0] * (y + n[1] * z))] =
            (x / scale + 2 * (y / scale) + 3 * (z / scale)) % 7 == 3;
  return std::make_shared<const std::vector<std::uint8_t>>(std::move(solid));
}

TEST(Refinement, RefinedEverywhereTakesGeometrySolids) {
  // [geometry] on a refined grid: each leaf cell takes the solid of the level-0 cell holding its
  // centre. Refined everywhere, level 1 is the dense box of twice the cells whose image has each
  // voxel doubled along every axis: the same bits.
  for (const LatticeKind lat : {LatticeKind::D2Q9, LatticeKind::D3Q19}) {
    const bool two_d = lat == LatticeKind::D2Q9;
    auto fine = test::closed_box(lat);
    fine.obstacles.clear();
    fine.nx = 16, fine.ny = 16, fine.nz = two_d ? 1 : 16;
    fine.tau = level_tau(0.6, 1);
    fine.force = {1e-5, -2e-5, 0.0};
    fine.geometry.kind = SolidGeometry::Kind::Voxels;
    fine.geometry.solid = scattered_solids({fine.nx, fine.ny, fine.nz}, 2);
    auto coarse = fine;
    coarse.nx = 8, coarse.ny = 8, coarse.nz = two_d ? 1 : 8;
    coarse.tau = 0.6;
    coarse.force = {2e-5, -4e-5, 0.0};
    coarse.geometry.solid = scattered_solids({coarse.nx, coarse.ny, coarse.nz}, 1);
    coarse.refinement.levels = 2;
    coarse.refinement.regions = {box_region(1, {0, 0, 0}, {8, 8, two_d ? 1.0 : 8.0})};
    EXPECT_FALSE(broken_rule(coarse));
    auto dense = make_solver(fine);
    auto refined = make_solver(coarse);
    const auto solid = dense->macroscopic().solid;
    EXPECT_GT(std::count(solid.begin(), solid.end(), 1), 8) << to_string(lat);
    dense->step(20);
    refined->step(10);
    expect_level_one_is(*dense, *refined, to_string(lat));
  }
}

TEST(Refinement, BandAroundGeometryHoldsItsSurfaceOnTheFinestLevel) {
  // around = "geometry": the blocks within the band's width (along each axis) of a solid cell
  // next to fluid are refined, so the finest level holds every such cell, no interface cuts a
  // solid, and the solid far inside stays on level 0. The leaf cells take their level-0 cell's
  // solid.
  auto c = test::periodic_box(LatticeKind::D2Q9, 128, 64, 1, 0.7);
  const std::array<int, 3> n{c.nx, c.ny, 1};
  std::vector<std::uint8_t> image(std::size_t(n[0] * n[1]), 0);
  for (int y = 8; y < 56; ++y)  // a thick block, and a cell alone
    for (int x = 24; x < 104; ++x) image[std::size_t(x + n[0] * y)] = 1;
  image[std::size_t(4 + n[0] * 32)] = 1;
  c.geometry.kind = SolidGeometry::Kind::Voxels;
  c.geometry.solid = std::make_shared<const std::vector<std::uint8_t>>(image);
  c.force = {1e-5, 0.0, 0.0};
  c.refinement.levels = 3;
  c.refinement.regions = {band_region(2, "geometry", 4)};
  EXPECT_FALSE(broken_rule(c));
  const Octree t = build_octree(c);
  const int e = t.edge();
  // The level-l leaf cell holding level-0 cell (x, y)'s centre: its flag, or -1 (not a leaf).
  const auto flag_at = [&](int l, int x, int y) -> int {
    const int cx = (x << l) + (1 << l) / 2, cy = (y << l) + (1 << l) / 2;
    const RefinedLevel& v = t.levels[std::size_t(l)];
    for (std::size_t s = 0; s < v.leaf.size(); ++s)
      if (v.leaf[s][0] == cx / e && v.leaf[s][1] == cy / e)
        return v.flags[s * std::size_t(t.block_cells()) + std::size_t(cx % e + e * (cy % e))];
    return -1;
  };
  int surface = 0;
  for (int y = 0; y < n[1]; ++y)
    for (int x = 0; x < n[0]; ++x) {
      if (!image[std::size_t(x + n[0] * y)]) continue;
      bool next_to_fluid = false;
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx)
          next_to_fluid =
              next_to_fluid ||
              !image[std::size_t((x + dx + n[0]) % n[0] + n[0] * ((y + dy + n[1]) % n[1]))];
      if (!next_to_fluid) continue;
      ++surface;
      EXPECT_EQ(flag_at(2, x, y), kLevelSolid) << x << ", " << y;
    }
  EXPECT_EQ(surface, 2 * 80 + 2 * 46 + 1);
  EXPECT_EQ(flag_at(0, 64, 32), kLevelSolid);  // deep inside the block: level 0
  EXPECT_EQ(flag_at(0, 2, 60), kLevelFluid);   // far from any solid: level 0
  EXPECT_EQ(flag_at(2, 4, 32), kLevelSolid);   // the cell alone
  EXPECT_EQ(flag_at(2, 5, 32), kLevelFluid);
  auto s = make_solver(c);  // mass kept to round-off across the interfaces and solids
  const double m0 = grid_of(*s).total_mass();
  s->step(20);
  EXPECT_NEAR(grid_of(*s).total_mass(), m0, 1e-12 * m0);
  // A band around "geometry" needs [geometry].
  c.geometry = SolidGeometry{};
  const auto none = broken_rule(c);
  ASSERT_TRUE(none);
  EXPECT_EQ(none->section + "." + none->key, "refinement.region[0].around");
  EXPECT_NE(none->message.find("no [geometry]"), std::string::npos) << none->message;
}

TEST(Refinement, RefinedEverywhereTakesInletProfilesAndVelocitiesInTime) {
  // The test above with a duct: a velocity inlet with a profile (parabolic, or a file's values
  // on level 0's cells) that ramps up and oscillates, and an outlet (the pressure faces' two
  // rules, an outflow face). Level 1 steps at half steps of level 0, so its velocity follows the
  // dense fine box's with the ramp and the period in its (twice as many) steps, and a file's
  // value of a level-0 cell is the value of its four (2D: two) fine cells on the dense box; the
  // outlets read the layer next to them as the dense box does: the same bits.
  enum { AntiBounceBack, Developed, Outflow };
  for (const LatticeKind lat : {LatticeKind::D2Q9, LatticeKind::D3Q19})
    for (const InletProfile profile : {InletProfile::Parabolic, InletProfile::File})
      for (const int outlet : {AntiBounceBack, Developed, Outflow}) {
        const bool two_d = lat == LatticeKind::D2Q9;
        auto fine = test::channel(lat);
        fine.obstacles.clear();
        fine.faces[1].pressure_rule =
            outlet == AntiBounceBack ? PressureRule::AntiBounceBack : PressureRule::Developed;
        if (outlet == Outflow) fine.faces[1] = FaceBC{}, fine.faces[1].type = FaceType::Outflow;
        fine.nx = 24, fine.ny = 16, fine.nz = two_d ? 1 : 16;
        if (!two_d) fine.faces[4].type = fine.faces[5].type = FaceType::Wall;
        fine.tau = level_tau(0.6, 1);
        FaceBC& in = fine.faces[0];
        in.velocity = {0.05, 0.0, 0.0};
        in.profile = profile;
        in.ramp_steps = 12, in.period = 8.0, in.amplitude = 0.3, in.offset = 1.0;
        auto coarse = fine;
        coarse.nx = 12, coarse.ny = 8, coarse.nz = two_d ? 1 : 8;
        coarse.tau = 0.6;
        coarse.faces[0].ramp_steps = 6, coarse.faces[0].period = 4.0;
        if (profile == InletProfile::File) {  // a value a level-0 cell of the face (y fastest)
          std::vector<double> values(std::size_t(coarse.ny * coarse.nz)), fine_values;
          for (std::size_t i = 0; i < values.size(); ++i) values[i] = 0.5 + 0.05 * double(i % 7);
          for (int z = 0; z < fine.nz; ++z)
            for (int y = 0; y < fine.ny; ++y)
              fine_values.push_back(values[std::size_t(y / 2 + coarse.ny * (z / 2))]);
          coarse.faces[0].profile_values = std::make_shared<const std::vector<double>>(values);
          fine.faces[0].profile_values = std::make_shared<const std::vector<double>>(fine_values);
        }
        coarse.refinement.levels = 2;
        coarse.refinement.regions = {box_region(1, {0, 0, 0}, {12, 8, two_d ? 1.0 : 8.0})};
        auto dense = make_solver(fine);
        auto refined = make_solver(coarse);
        dense->step(30);
        refined->step(15);
        expect_level_one_is(*dense, *refined,
                            std::string(to_string(lat)) + " profile " +
                                std::to_string(int(profile)) + " outlet " + std::to_string(outlet));
        const MacroFields a = dense->macroscopic();
        EXPECT_GT(a.u[a.index(1, fine.ny / 2, fine.nz / 2)][0], 0.01);  // the inlet drives it
      }
}

struct Scene {
  LatticeKind lat;
  CollisionKind col;
  int levels;
};
class RefinedScenes : public ::testing::TestWithParam<Scene> {};

class UniformScenes : public ::testing::TestWithParam<Scene> {};

TEST_P(UniformScenes, UniformFlowStaysUniformAcrossInterfaces) {
  // Every cell at the same equilibrium: explosion copies and coalescence averages equal values,
  // so nothing may change but round-off. (Operators whose start is their own equilibrium: KBC
  // and the central-moment operators start from the E2 equilibrium like the dense solver, a
  // state they relax from at each level's own rate, which then differs across an interface by
  // about 1e-8 at u = 0.05.)
  const Scene p = GetParam();
  auto c = nested(p.lat, p.lat == LatticeKind::D2Q9 ? 32 : 16, p.levels);
  c.collision = p.col;
  c.initial.velocity = {0.05, -0.03, p.lat == LatticeKind::D2Q9 ? 0.0 : 0.02};
  auto s = make_solver(c);
  s->step(12);
  for (int l = 0; l < p.levels; ++l) {
    const LevelFields f = grid_of(*s).level_fields(l);
    for (std::size_t t = 0; t < f.rho.size(); ++t) {
      if (f.flag[t] != kLevelFluid) continue;
      ASSERT_NEAR(f.rho[t], 1.0, 1e-13) << l << " " << t;
      for (int d = 0; d < 3; ++d)
        ASSERT_NEAR(f.u[t][std::size_t(d)], c.initial.velocity[std::size_t(d)], 1e-14)
            << l << " " << t;
    }
  }
}

TEST_P(RefinedScenes, PeriodicBoxConservesMassAndMomentum) {
  // Each population's transfers between levels conserve its mass (docs/theory.md), and the
  // collisions conserve mass and momentum: both totals to round-off over many coarse steps.
  const Scene p = GetParam();
  auto c = nested(p.lat, p.lat == LatticeKind::D2Q9 ? 32 : 16, p.levels);
  c.collision = p.col;
  auto s = make_solver(c);
  expect_conserved(*s, 3, 60);
}

TEST_P(RefinedScenes, ClosedBoxConservesMassWithLevelsAtTheWalls) {
  // Walls on every face and the finest level in a band along them: the interfaces meet the
  // walls, where the coarse cells take part of their populations from the face's rule.
  const Scene p = GetParam();
  const bool two_d = p.lat == LatticeKind::D2Q9;
  auto c = walled_with_band(p.lat, p.levels);
  c.collision = p.col;
  auto s = make_solver(c);
  perturb(*s, 7);
  const double m0 = grid_of(*s).total_mass();
  s->step(two_d ? 60 : 20);
  EXPECT_NEAR(grid_of(*s).total_mass(), m0, 1e-12 * m0);
}

TEST_P(RefinedScenes, RestartFromTheLevelsIsBitIdentical) {
  // A checkpoint's refined state (every level's populations, Solver::level_state) taken after
  // k coarse steps and loaded into a fresh solver continues as the run that did not stop.
  const Scene p = GetParam();
  auto c = nested(p.lat, p.lat == LatticeKind::D2Q9 ? 32 : 16, p.levels);
  c.collision = p.col;
  auto whole = make_solver(c), first = make_solver(c), second = make_solver(c);
  perturb(*whole, 5);
  perturb(*first, 5);
  whole->step(12);
  first->step(5);
  second->set_level_state(first->level_state());
  second->step(7);
  EXPECT_EQ(second->level_state(), whole->level_state());
  // The piece of a checkpoint is each deck cell's average of its leaves (two-array layout):
  // its mass is the grid's.
  int phase = -1;
  const StatePiece piece = whole->state(phase);
  EXPECT_EQ(phase, 0);
  ASSERT_EQ(whole->value_type(), "float64");
  ASSERT_EQ(piece.data.size(),
            std::size_t(c.cells()) * std::size_t(whole->populations_per_cell()) * sizeof(double));
  std::vector<double> values(piece.data.size() / sizeof(double));
  std::memcpy(values.data(), piece.data.data(), piece.data.size());
  double mass = 0.0;
  for (const double v : values) mass += v;
  EXPECT_NEAR(mass, grid_of(*whole).total_mass(), 1e-12 * mass);
  // Levels of another deck are refused, naming the sizes.
  auto other = make_solver(nested(p.lat, p.lat == LatticeKind::D2Q9 ? 32 : 16, 2));
  if (p.levels != 2) {
    EXPECT_THROW(other->set_level_state(whole->level_state()), std::invalid_argument);
  }
  EXPECT_THROW(whole->set_level_state({}), std::invalid_argument);
}

TEST_P(RefinedScenes, UnfusedLevelKernelsGiveTheFusedStateBitForBit) {
  // refinement.kernels = "unfused" (the baseline: streaming, transfers and collision in launches
  // of their own, the arriving populations stored between them) steps every level as the fused
  // kernels do, to the last bit: on the nested periodic box, and on a channel (velocity inlet,
  // pressure outlet, a moving wall, resting walls) with the finest level along its faces.
  const Scene p = GetParam();
  const bool two_d = p.lat == LatticeKind::D2Q9;
  auto periodic = nested(p.lat, two_d ? 32 : 16, p.levels);
  auto channel = walled_with_band(p.lat, p.levels);
  channel.faces[0].type = FaceType::VelocityInlet, channel.faces[0].velocity = {0.02, 0.0, 0.0};
  channel.faces[1].type = FaceType::PressureOutlet;
  channel.faces[3].type = FaceType::MovingWall, channel.faces[3].velocity = {0.03, 0.0, 0.0};
  for (SolverConfig c : {periodic, channel}) {
    c.collision = p.col;
    auto fused = make_solver(c);
    c.refinement.kernels = LevelKernels::Unfused;
    auto unfused = make_solver(c);
    perturb(*fused, 9);
    perturb(*unfused, 9);
    fused->step(two_d ? 20 : 8);
    unfused->step(two_d ? 20 : 8);
    EXPECT_EQ(unfused->level_state(), fused->level_state());
    // The baseline moves the populations twice more (stored, read back for the collision).
    EXPECT_EQ(unfused->bytes_per_update(), 2.0 * fused->bytes_per_update() - 4.0);
  }
}

INSTANTIATE_TEST_SUITE_P(Lattices, UniformScenes,
                         ::testing::Values(Scene{LatticeKind::D2Q9, CollisionKind::Bgk, 2},
                                           Scene{LatticeKind::D2Q9, CollisionKind::Trt, 3},
                                           Scene{LatticeKind::D3Q19, CollisionKind::Bgk, 2},
                                           Scene{LatticeKind::D3Q19, CollisionKind::Regularized, 3},
                                           Scene{LatticeKind::D3Q27, CollisionKind::Trt, 3}));
INSTANTIATE_TEST_SUITE_P(Lattices, RefinedScenes,
                         ::testing::Values(Scene{LatticeKind::D2Q9, CollisionKind::Bgk, 2},
                                           Scene{LatticeKind::D2Q9, CollisionKind::Trt, 3},
                                           Scene{LatticeKind::D2Q9, CollisionKind::Kbc, 3},
                                           Scene{LatticeKind::D3Q19, CollisionKind::Bgk, 2},
                                           Scene{LatticeKind::D3Q19, CollisionKind::Regularized, 3},
                                           Scene{LatticeKind::D3Q27, CollisionKind::Kbc, 3},
                                           Scene{LatticeKind::D3Q27, CollisionKind::CentralMoment,
                                                 2}));

TEST(Refinement, ObstacleLoadsBalanceTheBodyForceInSteadyState) {
  // Two discs, each inside level 1 (x in [0, 8) and [16, 24), periodic), level 0 between: in
  // steady state the fluid's momentum stops changing, so the obstacles take the body force on
  // the whole fluid, F times its volume in level-0 cells (the dense test's balance, to round-off).
  auto c = test::periodic_box(LatticeKind::D2Q9, 24, 16, 1, 1.0);
  c.force = {2e-6, 5e-7, 0.0};
  for (const double x : {4.0, 20.0}) {
    Obstacle o;
    o.shape = Obstacle::Shape::Cylinder;
    o.center = {x, 8.0, 0.5};
    o.radius = 2.6;
    c.obstacles.push_back(o);
  }
  c.refinement.levels = 2;
  c.refinement.regions = {band_region(1, "obstacles", 2)};
  auto s = make_solver(c);
  const auto& t = grid_of(*s).octree();
  ASSERT_GT(t.levels[0].fluid_cells, 0);
  ASSERT_GT(t.levels[1].link_cell.size(), 0u);
  EXPECT_EQ(t.levels[0].link_cell.size(), 0u);
  double volume = 0.0;
  for (const RefinedLevel& l : t.levels) volume += std::ldexp(double(l.fluid_cells), -2 * l.level);
  s->step(15000);
  const auto loads = s->obstacle_loads();
  ASSERT_EQ(loads.size(), 2u);
  for (std::size_t d = 0; d < 2; ++d) {
    const double got = loads[0].force[d] + loads[1].force[d];
    EXPECT_NEAR(got, volume * c.force[d], 1e-9 * volume * c.force[0]) << "axis " << d;
  }
  EXPECT_GT(loads[0].force[0], 0.1 * volume * c.force[0]);
  EXPECT_GT(loads[1].force[0], 0.1 * volume * c.force[0]);
}

TEST(Refinement, ObstacleCutByAnInterfaceIsRefused) {
  auto c = nested(LatticeKind::D2Q9, 32, 2);
  Obstacle o;
  o.shape = Obstacle::Shape::Sphere;
  o.center = {8, 16, 0.5};  // on the level-1 region's edge at x = 8
  o.radius = 3;
  c.obstacles.push_back(o);
  expect_refused([&] { (void)make_solver(c); }, {"cut by the interface between levels 0 and 1"});
}

TEST(Refinement, RefinedEverywhereTakesInterpolatedAndRotatingObstacleWalls) {
  // Level 1 over the whole box with an obstacle whose links take their own rule: interpolated
  // bounce-back (the wall where the shape crosses each link, the cell behind read where it is
  // nearer than half a link), a rotating wall (halfway, with the moving-wall term), both. The
  // obstacle in level-0 cells is the dense box's at twice the size, turning at half the rate a
  // step (the same wall velocity): the same distances, terms and bits. Its loads over a step of
  // level 0 are the fine steps' two at a fine cell's mass (2^-D), the torque's arms half.
  enum class Wall { Interpolated, Rotating, Both };
  for (const LatticeKind lat : {LatticeKind::D2Q9, LatticeKind::D3Q19})
    for (const Wall wall : {Wall::Interpolated, Wall::Rotating, Wall::Both}) {
      const bool two_d = lat == LatticeKind::D2Q9;
      const int dims = two_d ? 2 : 3;
      Obstacle o;
      o.shape = two_d ? Obstacle::Shape::Cylinder : Obstacle::Shape::Sphere;
      o.center = {8.3, 7.9, two_d ? 0.5 : 8.15};  // off the lattice's symmetry
      o.radius = 3.35;
      if (wall != Wall::Rotating) o.wall = Obstacle::Wall::Interpolated;
      if (wall != Wall::Interpolated) o.angular_velocity = {0.0, two_d ? 0.0 : 0.004, 0.006};
      auto coarse = test::periodic_box(lat, 16, 16, two_d ? 1 : 16, 0.6);
      coarse.force = {2e-5, -8e-6, 0.0};
      coarse.obstacles = {o};
      coarse.refinement.levels = 2;
      coarse.refinement.regions = {box_region(1, {0, 0, 0}, {16, 16, two_d ? 1.0 : 16.0})};
      auto fine = test::periodic_box(lat, 32, 32, two_d ? 1 : 32, level_tau(0.6, 1));
      fine.force = {1e-5, -4e-6, 0.0};
      Obstacle& big = fine.obstacles.emplace_back(o);
      for (int d = 0; d < dims; ++d) big.center[std::size_t(d)] = 2.0 * o.center[std::size_t(d)];
      big.radius = 2.0 * o.radius;
      for (double& w : big.angular_velocity) w /= 2.0;
      ASSERT_FALSE(broken_rule(coarse));
      const std::string what = std::string(to_string(lat)) + " wall " + std::to_string(int(wall));
      auto dense = make_solver(fine);
      auto refined = make_solver(coarse);
      const RefinedLevel& one = grid_of(*refined).octree().levels[1];
      ASSERT_TRUE(has_wall_rules(one)) << what;
      if (wall != Wall::Rotating) {  // some walls nearer than half a link: their rule reads behind
        ASSERT_TRUE(std::any_of(one.link_distance.begin(), one.link_distance.end(), [](double d) {
          return d < 0.5;
        })) << what;
      }
      dense->step(19);
      const auto before = dense->obstacle_loads();
      dense->step(1);
      const auto after = dense->obstacle_loads();
      refined->step(10);
      expect_level_one_is(*dense, *refined, what);
      auto baseline_cfg = coarse;  // the unfused baseline's general path takes the same rules
      baseline_cfg.refinement.kernels = LevelKernels::Unfused;
      auto baseline = make_solver(baseline_cfg);
      baseline->step(10);
      expect_level_one_is(*dense, *baseline, what + ", unfused");
      const auto loads = refined->obstacle_loads();
      ASSERT_EQ(loads.size(), 1u);
      const double mass = std::ldexp(1.0, -dims);
      const double scale = std::abs(after[0].force[0]) * mass;
      ASSERT_GT(scale, 0.0) << what;
      for (std::size_t d = 0; d < 3; ++d) {
        EXPECT_NEAR(loads[0].force[d], mass * (before[0].force[d] + after[0].force[d]),
                    1e-12 * scale)
            << what << ", axis " << d;
        EXPECT_NEAR(loads[0].torque[d], mass / 2 * (before[0].torque[d] + after[0].torque[d]),
                    1e-12 * scale)
            << what << ", axis " << d;
      }
    }
}

/// The rows of a probe's CSV file without their step column.
std::vector<std::string> probe_values(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> out;
  for (std::string row; std::getline(in, row);) out.push_back(row.substr(row.find(',') + 1));
  return out;
}

TEST(Refinement, ProbesBetweenCellsReadTheFinestLevelThere) {
  // A point probe between cells (`at`) on a refined grid interpolates between the centres of
  // the finest level's cells around it. With level 1 over the whole box (a disc with
  // interpolated walls in a force-driven periodic box) those are the dense fine box's cells, the
  // point at twice its coordinates: the same rows (12 significant digits), every sample (the
  // refined run samples every second level-0 step, the dense one every fourth step).
  const auto deck = [](int n, double tau, double force, double scale, const std::string& level) {
    char text[1400];
    std::snprintf(text, sizeof text, R"([model]
lattice = "D2Q9"
[domain]
nx = %d
ny = %d
[physics]
tau = %.17g
force = [%.17g, %.17g]
[boundary]
x_min = "periodic"
x_max = "periodic"
y_min = "periodic"
y_max = "periodic"
[[obstacle]]
type = "cylinder"
center = [%.17g, %.17g]
radius = %.17g
wall = "interpolated"
%s
[run]
steps = %d
write_fields = false
progress = "none"
[[probe]]
name = "near"
at = [%.17g, %.17g]
every = %d
[[probe]]
name = "far"
at = [%.17g, %.17g]
every = %d
[[probe]]
name = "across"
type = "line"
at = [0, %.17g]
every = %d
)",
                  n, n, tau, force, -0.4 * force, 8.3 * scale, 7.9 * scale, 3.35 * scale,
                  level.c_str(), int(40 * scale), 12.13 * scale, 6.71 * scale, int(2 * scale),
                  1.37 * scale, 14.9 * scale, int(2 * scale), 5.3 * scale, int(10 * scale));
    return std::string(text);
  };
  const std::string levels =
      "[refinement]\nlevels = 2\n[[refinement.region]]\nlevel = 1\n"
      "min = [0, 0]\nmax = [16, 16]\n";
  const test::ScratchDir scratch;  // the two runs' output directories, removed at the end
  const std::string a = scratch.path("refined"), b = scratch.path("dense");
  const Case refined =
      parse_deck(deck(16, 0.6, 2e-5, 1.0, levels), "r.toml", {"run.output_dir=\"" + a + "\""});
  const Case dense = parse_deck(deck(32, level_tau(0.6, 1), 1e-5, 2.0, ""), "d.toml",
                                {"run.output_dir=\"" + b + "\""});
  std::ostringstream log;
  ASSERT_EQ(run_case(refined, log).exit_code, 0) << log.str();
  ASSERT_EQ(run_case(dense, log).exit_code, 0) << log.str();
  for (const char* probe : {"/probe_near.csv", "/probe_far.csv"}) {
    const auto x = probe_values(a + probe), y = probe_values(b + probe);
    EXPECT_EQ(x.size(), 22u) << probe;  // the header, step 0 and every second step to 40
    EXPECT_EQ(x, y) << probe;
  }
  // A line between cells: a row at each leaf cell along it (level 1's 32), the dense box's rows
  // at the same points (x, y at half its coordinates), the same values; `level` 1 against 0.
  const auto line_values = [](const std::string& path) {
    std::ifstream in(path);
    std::vector<std::vector<std::string>> rows;
    for (std::string row; std::getline(in, row);) {
      std::vector<std::string> fields;
      for (std::size_t at = 0, end; at != std::string::npos;
           at = end == std::string::npos ? end : end + 1)
        fields.push_back(row.substr(at, (end = row.find(',', at)) - at));
      rows.push_back(fields);
    }
    return rows;
  };
  const auto x = line_values(a + "/line_across_40.csv"), y = line_values(b + "/line_across_80.csv");
  ASSERT_EQ(x.size(), 33u);
  ASSERT_EQ(y.size(), 33u);
  for (std::size_t i = 1; i < x.size(); ++i) {
    EXPECT_EQ(2 * std::stod(x[i][0]), std::stod(y[i][0])) << i;
    EXPECT_EQ(2 * std::stod(x[i][1]), std::stod(y[i][1])) << i;
    for (std::size_t k = 4; k < 9; ++k) EXPECT_EQ(x[i][k], y[i][k]) << i << " " << k;
    EXPECT_EQ(x[i][9], "1");
    EXPECT_EQ(y[i][9], "0");
  }
}

/// A body at rest in a periodic box of lattice `lat` with a uniform force: a disc in 2D (n x n),
/// a sphere in 3D (n^3), radius r at the box's centre, its samples `spacing` cells apart.
Body round_body(LatticeKind lat, double n, double r, double spacing) {
  Body b;
  b.name = "ball";
  b.shape = lat == LatticeKind::D2Q9 ? Body::Shape::Cylinder : Body::Shape::Sphere;
  b.radius = r, b.spacing = spacing;
  b.position = {n / 2, n / 2, lat == LatticeKind::D2Q9 ? 0.5 : n / 2};
  return b;
}

TEST(Refinement, RefinedEverywhereWithABodyIsTheDenseSolverAtTheFineResolution) {
  // Level 1 over the whole box with an immersed body: the body measured in level-1 cells on the
  // level's cells is the dense solver's body at twice the resolution, the same bits; its loads
  // over a step of level 0 are the fine steps' two, at a fine cell's mass (2^-D). Direct forcing
  // with scatter spreading, then gather spreading and the implicit forcing (the same kernels on
  // the level's box).
  // Oscillating (a translation and a turn about its place, amplitude and frequency measured in
  // level-0 cells and steps): at twice the amplitude and half the frequency on the fine box; the
  // carried fluid's momentum change in its loads spans both fine steps.
  // Travelling (a steady translation; free under gravity): the same velocity on the fine box (a
  // lattice velocity), gravity at half (an acceleration, dt^2 / dx); a smaller body, so that its
  // travel reach fits the box.
  enum class Forcing { Scatter, Gather, Implicit, Oscillating, Translating, Free };
  for (const LatticeKind lat : {LatticeKind::D2Q9, LatticeKind::D3Q19})
    for (const Forcing forcing : {Forcing::Scatter, Forcing::Gather, Forcing::Implicit,
                                  Forcing::Oscillating, Forcing::Translating, Forcing::Free}) {
      if (forcing == Forcing::Implicit && !CouplingSystem::built()) continue;  // no Kokkos Kernels
      SCOPED_TRACE(std::string(to_string(lat)) + ", forcing " + std::to_string(int(forcing)));
      const bool two_d = lat == LatticeKind::D2Q9;
      const int dims = two_d ? 2 : 3;
      auto fine = test::periodic_box(lat, 16, 16, two_d ? 1 : 16, level_tau(0.6, 1));
      fine.force = {1e-5, -4e-6, 0.0};
      fine.bodies = {round_body(lat, 16, 4.2, 0.7)};
      if (forcing == Forcing::Gather) fine.ib.spreading = ImmersedSettings::Spreading::Gather;
      if (forcing == Forcing::Implicit) fine.ib.forcing = ImmersedSettings::Forcing::Implicit;
      if (forcing == Forcing::Oscillating) {
        fine.bodies[0].amplitude = {1.0, two_d ? 0.5 : -0.5, 0.0};
        fine.bodies[0].angular_amplitude = {0.0, 0.0, 0.3};
        fine.bodies[0].frequency = 1.0 / 64.0;
      }
      const bool travelling = forcing == Forcing::Translating || forcing == Forcing::Free;
      if (travelling) fine.bodies[0].radius = 3.2;
      if (forcing == Forcing::Translating) fine.bodies[0].velocity = {0.01, -0.005, 0.0};
      if (forcing == Forcing::Free) {
        fine.bodies[0].free = true;
        fine.bodies[0].density = 1.5;
        fine.ib.gravity = {0.0, -2e-5, 0.0};
      }
      auto coarse = test::periodic_box(lat, 8, 8, two_d ? 1 : 8, 0.6);
      coarse.force = {2e-5, -8e-6, 0.0};
      coarse.bodies = {round_body(lat, 8, 2.1, 0.7)};  // spacing: in cells of the finest level
      if (forcing == Forcing::Oscillating) {
        coarse.bodies[0].amplitude = {0.5, two_d ? 0.25 : -0.25, 0.0};
        coarse.bodies[0].angular_amplitude = fine.bodies[0].angular_amplitude;
        coarse.bodies[0].frequency = 1.0 / 32.0;
      }
      if (travelling) {
        coarse.bodies[0].radius = 1.6;
        coarse.bodies[0].velocity = fine.bodies[0].velocity;
        coarse.bodies[0].free = fine.bodies[0].free;
        coarse.bodies[0].density = fine.bodies[0].density;
      }
      coarse.ib = fine.ib;
      if (forcing == Forcing::Free) coarse.ib.gravity = {0.0, -4e-5, 0.0};
      coarse.refinement.levels = 2;
      coarse.refinement.regions = {box_region(1, {0, 0, 0}, {8, 8, two_d ? 1.0 : 8.0})};
      ASSERT_FALSE(broken_rule(coarse));
      auto dense = make_solver(fine);
      auto refined = make_solver(coarse);
      dense->step(19);
      const auto before = dense->body_loads();
      dense->step(1);
      const auto after = dense->body_loads();
      refined->step(10);
      const MacroFields a = dense->macroscopic();
      const LevelFields b = grid_of(*refined).level_fields(1);
      for (std::size_t t = 0; t < b.rho.size(); ++t) {
        const auto& x = b.centre[t];
        const std::size_t i = a.index(int(2 * x[0]), int(2 * x[1]), two_d ? 0 : int(2 * x[2]));
        ASSERT_EQ(b.rho[t], a.rho[i]) << t;
        for (int d = 0; d < 3; ++d) ASSERT_EQ(b.u[t][std::size_t(d)], a.u[i][std::size_t(d)]) << t;
      }
      const auto loads = refined->body_loads();
      ASSERT_EQ(loads.size(), 1u);
      const double mass = std::ldexp(1.0, -dims);
      const double scale = std::abs(after[0].force[0]) * mass;
      ASSERT_GT(scale, 0.0);
      // The torque of a level-0 step takes the samples' summed forces at their arms after it:
      // where the body turns within the step, each fine step's torque about its own arms differs
      // by up to the angle of a fine step (here 0.3 * 2 pi / 64 rad) times the torque.
      const double turn = forcing == Forcing::Oscillating ? 0.3 * 2.0 * 3.141592653589793 / 64 : 0;
      for (std::size_t d = 0; d < 3; ++d) {
        EXPECT_NEAR(loads[0].force[d], mass * (before[0].force[d] + after[0].force[d]),
                    1e-12 * scale)
            << d;
        const double torque = mass / 2 * (before[0].torque[d] + after[0].torque[d]);
        EXPECT_NEAR(loads[0].torque[d], torque, 1e-12 * scale + turn * std::abs(torque)) << d;
        const double centre = int(d) < dims ? after[0].centre[d] / 2 : coarse.bodies[0].position[d];
        EXPECT_NEAR(loads[0].centre[d], centre, 1e-12) << d;  // level-0 cells
        // A velocity: the same lattice value on every level.
        EXPECT_DOUBLE_EQ(loads[0].velocity[d], after[0].velocity[d]) << d;
      }
      if (forcing == Forcing::Free) {
        EXPECT_LT(loads[0].velocity[1], 0.0);  // it sinks
      }
    }
}

TEST(Refinement, BodiesBesideAnObstacleAreTheDenseSolverAtTheFineResolution) {
  // Level 1 over the whole box, an immersed disc (sphere) and beside it, 0.9 fine cells from its
  // surface, a halfway-bounce-back obstacle: the body's stencils reach the obstacle's
  // solid cells, which the bodies' kernels take as the level's step does (bounce-back from
  // them), so the state is the dense solver's at twice the resolution, bit for bit, and the
  // body's and the obstacle's loads its two fine steps'. With interpolated walls on the obstacle
  // the body is refused there, naming why (the bodies' kernels take halfway walls only; which
  // also shows that its stencils reach the obstacle's solid cells).
  for (const LatticeKind lat : {LatticeKind::D2Q9, LatticeKind::D3Q19}) {
    SCOPED_TRACE(to_string(lat));
    const bool two_d = lat == LatticeKind::D2Q9;
    const int dims = two_d ? 2 : 3;
    auto coarse = test::periodic_box(lat, 8, 8, two_d ? 1 : 8, 0.6);
    coarse.force = {2e-5, -8e-6, 0.0};
    coarse.bodies = {round_body(lat, 8, 1.6, 0.7)};
    coarse.bodies[0].position[0] = 3.5;
    Obstacle o;
    o.shape = two_d ? Obstacle::Shape::Cylinder : Obstacle::Shape::Sphere;
    o.center = {6.45, 4.0, two_d ? 0.5 : 4.0};
    o.radius = 0.9;  // its surface 0.45 level-0 cells (0.9 fine cells) from the body's
    coarse.obstacles = {o};
    coarse.refinement.levels = 2;
    coarse.refinement.regions = {box_region(1, {0, 0, 0}, {8, 8, two_d ? 1.0 : 8.0})};
    auto fine = test::periodic_box(lat, 16, 16, two_d ? 1 : 16, level_tau(0.6, 1));
    fine.force = {1e-5, -4e-6, 0.0};
    fine.bodies = {round_body(lat, 16, 3.2, 0.7)};
    fine.bodies[0].position[0] = 7.0;
    Obstacle& big = fine.obstacles.emplace_back(o);
    for (int d = 0; d < dims; ++d) big.center[std::size_t(d)] = 2.0 * o.center[std::size_t(d)];
    big.radius = 2.0 * o.radius;
    ASSERT_FALSE(broken_rule(coarse));
    auto dense = make_solver(fine);
    auto refined = make_solver(coarse);
    dense->step(19);
    const auto body_before = dense->body_loads(), wall_before = dense->obstacle_loads();
    dense->step(1);
    refined->step(10);
    expect_level_one_is(*dense, *refined, to_string(lat));
    const double mass = std::ldexp(1.0, -dims);
    const auto body_after = dense->body_loads(), wall_after = dense->obstacle_loads();
    const auto body = refined->body_loads(), wall = refined->obstacle_loads();
    ASSERT_EQ(body.size(), 1u);
    ASSERT_EQ(wall.size(), 1u);
    const double scale = std::abs(body_after[0].force[0]) * mass;
    ASSERT_GT(scale, 0.0);
    for (std::size_t d = 0; d < 3; ++d) {
      EXPECT_NEAR(body[0].force[d], mass * (body_before[0].force[d] + body_after[0].force[d]),
                  1e-12 * scale)
          << d;
      EXPECT_NEAR(wall[0].force[d], mass * (wall_before[0].force[d] + wall_after[0].force[d]),
                  1e-12 * scale)
          << d;
    }
    coarse.obstacles[0].wall = Obstacle::Wall::Interpolated;
    try {
      (void)make_solver(coarse);
      ADD_FAILURE() << "a body within reach of an obstacle's link rules";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("body[0] (\"ball\")"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("own link rules"), std::string::npos) << e.what();
    }
  }
}

TEST(Refinement, BodiesAtAWallAreTheDenseSolverAtTheFineResolution) {
  // Walls on y_min and y_max (the second moving), level 1 over the whole box: a disc a fine cell
  // above the resting wall held still under a body force, then free and falling onto it (the
  // walls' contact force on it): the bodies' box takes the walls as its sides, so its kernels
  // pull the populations next to them through the wall's rule, as the level's step does. The
  // same bits as the dense solver at twice the resolution.
  for (const bool free : {false, true}) {
    SCOPED_TRACE(free ? "free" : "held");
    auto fine = test::periodic_box(LatticeKind::D2Q9, 16, 16, 1, level_tau(0.6, 1));
    fine.faces[2].type = FaceType::Wall;
    fine.faces[3].type = FaceType::MovingWall;
    fine.faces[3].velocity = {0.02, 0.0, 0.0};
    fine.bodies = {round_body(LatticeKind::D2Q9, 16, 3.2, 0.7)};
    fine.bodies[0].position[1] = 4.4;  // 1.2 fine cells above the wall
    auto coarse = test::periodic_box(LatticeKind::D2Q9, 8, 8, 1, 0.6);
    coarse.faces = fine.faces;
    coarse.bodies = {round_body(LatticeKind::D2Q9, 8, 1.6, 0.7)};
    coarse.bodies[0].position[1] = 2.2;
    if (free) {
      for (Body* b : {&fine.bodies[0], &coarse.bodies[0]}) b->free = true, b->density = 1.5;
      fine.ib.gravity = {0.0, -1e-3, 0.0};
      coarse.ib.gravity = {0.0, -2e-3, 0.0};
    } else {
      fine.force = {1e-5, 0.0, 0.0};
      coarse.force = {2e-5, 0.0, 0.0};
    }
    coarse.refinement.levels = 2;
    coarse.refinement.regions = {box_region(1, {0, 0, 0}, {8, 8, 1})};
    ASSERT_FALSE(broken_rule(coarse));
    auto dense = make_solver(fine);
    auto refined = make_solver(coarse);
    dense->step(160);
    refined->step(80);
    const MacroFields a = dense->macroscopic();
    const LevelFields b = grid_of(*refined).level_fields(1);
    for (std::size_t t = 0; t < b.rho.size(); ++t) {
      const auto& x = b.centre[t];
      const std::size_t i = a.index(int(2 * x[0]), int(2 * x[1]), 0);
      ASSERT_EQ(b.rho[t], a.rho[i]) << t;
      for (int d = 0; d < 3; ++d) ASSERT_EQ(b.u[t][std::size_t(d)], a.u[i][std::size_t(d)]) << t;
    }
    const auto loads = refined->body_loads(), fine_loads = dense->body_loads();
    ASSERT_EQ(loads.size(), 1u);
    EXPECT_NEAR(loads[0].centre[1], fine_loads[0].centre[1] / 2, 1e-12);
    EXPECT_DOUBLE_EQ(loads[0].velocity[1], fine_loads[0].velocity[1]);
    if (free) {  // it fell within the contact range (a fine cell) of the wall
      EXPECT_LT(fine_loads[0].centre[1] - 3.2, fine.ib.contact_range);
    }
  }
}

TEST(Refinement, BodyLoadsBalanceTheBodyForceInSteadyState) {
  // A disc inside level 1 (a band around it), level 0 elsewhere, periodic with a body force: in
  // steady state the fluid's momentum stops changing, so the body takes the force on the whole
  // fluid (its inside too: immersed bodies are filled with fluid), F times the total mass.
  auto c = test::periodic_box(LatticeKind::D2Q9, 32, 16, 1, 1.0);
  c.force = {2e-6, 5e-7, 0.0};
  c.bodies = {round_body(LatticeKind::D2Q9, 16, 2.6, 0.5)};
  c.bodies[0].position[0] = 9.3;  // off the blocks' symmetry
  c.refinement.levels = 2;
  c.refinement.regions = {band_region(1, "ball", 4)};
  ASSERT_FALSE(broken_rule(c));
  auto s = make_solver(c);
  const auto& t = grid_of(*s).octree();
  ASSERT_GT(t.levels[0].fluid_cells, 0);
  ASSERT_GT(t.levels[1].fluid_cells, 0);
  s->step(15000);
  const double mass = grid_of(*s).total_mass();
  const auto loads = s->body_loads();
  ASSERT_EQ(loads.size(), 1u);
  for (std::size_t d = 0; d < 2; ++d)
    EXPECT_NEAR(loads[0].force[d], mass * c.force[d], 1e-9 * mass * c.force[0]) << "axis " << d;
}

/// A run of 12 steps of level 0 and one restarted from the levels and the free bodies' motion at
/// step 5: the same levels, and the bodies' loads and centres to the bit (no other state of the
/// bodies' besides the step). Returns the uninterrupted run's loads.
std::vector<BodyLoad> expect_restart_identical(const SolverConfig& c) {
  auto whole = make_solver(c), first = make_solver(c), second = make_solver(c);
  whole->step(12);
  first->step(5);
  second->set_level_state(first->level_state());
  second->set_body_motion(first->body_motion());
  second->set_steps_done(5);
  second->step(7);
  EXPECT_EQ(second->level_state(), whole->level_state());
  const auto a = whole->body_loads(), b = second->body_loads();
  EXPECT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i)
    for (std::size_t d = 0; d < 3; ++d) {
      EXPECT_EQ(a[i].force[d], b[i].force[d]) << d;
      EXPECT_EQ(a[i].torque[d], b[i].torque[d]) << d;
      EXPECT_EQ(a[i].centre[d], b[i].centre[d]) << d;
    }
  return a;
}

TEST(Refinement, TurningBodyRestartsBitIdentical) {
  // A body turning (then oscillating) in place inside level 1: its pose follows the steps of
  // level 1, from the run's step count, so a restart continues as the run that did not stop.
  auto c = nested(LatticeKind::D2Q9, 32, 2);  // level 1 over [8, 24)^2
  c.force = {1e-5, 0.0, 0.0};
  c.bodies = {round_body(LatticeKind::D2Q9, 32, 3.0, 0.5)};
  c.bodies[0].shape = Body::Shape::Box;  // a turning disc would look the same at every angle
  c.bodies[0].size = {5.0, 3.0, 1.0};
  c.bodies[0].angular_velocity = {0.0, 0.0, 0.02};
  ASSERT_FALSE(broken_rule(c));
  const auto a = expect_restart_identical(c);
  ASSERT_EQ(a.size(), 1u);
  EXPECT_NE(a[0].torque[2], 0.0);
  EXPECT_DOUBLE_EQ(a[0].angular_velocity[2], 0.02);  // back in radians per step of level 0

  // Oscillating about its place instead (its path inside level 1), the carried fluid's momentum
  // in its loads included.
  c.bodies[0].angular_velocity = {0.0, 0.0, 0.0};
  c.bodies[0].amplitude = {1.5, -0.5, 0.0};
  c.bodies[0].angular_amplitude = {0.0, 0.0, 0.2};
  c.bodies[0].frequency = 0.04;
  ASSERT_FALSE(broken_rule(c));
  const auto p = expect_restart_identical(c);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_NE(p[0].centre[0], 16.0);  // it moved
}

TEST(Refinement, TravellingBodiesRestartBitIdentical) {
  // A steady translation, then a free body under gravity, inside level 1: a restart continues
  // as the run that did not stop (a free body's motion comes back from the checkpoint's).
  auto c = nested(LatticeKind::D2Q9, 32, 2);  // level 1 over [8, 24)^2
  c.bodies = {round_body(LatticeKind::D2Q9, 32, 2.0, 0.5)};
  c.bodies[0].velocity = {0.02, 0.01, 0.0};
  ASSERT_FALSE(broken_rule(c));
  const auto a = expect_restart_identical(c);
  ASSERT_EQ(a.size(), 1u);
  // Its centre as the last step of level 1 took it (as on a uniform grid: the centre of the last
  // step's start), 11.5 steps of level 0 on, in level-0 cells.
  EXPECT_NEAR(a[0].centre[0], 16.0 + 11.5 * 0.02, 1e-12);
  EXPECT_NEAR(a[0].centre[1], 16.0 + 11.5 * 0.01, 1e-12);

  c.bodies[0].velocity = {0.0, 0.0, 0.0};
  c.bodies[0].free = true;
  c.bodies[0].density = 2.0;
  c.ib.gravity = {0.0, -1e-4, 0.0};
  ASSERT_FALSE(broken_rule(c));
  const auto f = expect_restart_identical(c);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_LT(f[0].velocity[1], 0.0);  // it sinks
  EXPECT_LT(f[0].centre[1], 16.0);
}

TEST(Refinement, TravellingBodyStopsTheRunBeforeItLeavesTheFinestLevel) {
  // A disc of radius 3 (6 cells of level 1; its samples at 5.7, ib.retraction 0.3 in) at x = 16
  // moving at 0.05 along x inside level 1 over [8, 24)^2 (level-1 cells [16, 48)): its reach on
  // level 1 is 5.7 + 2 sqrt 2 + 1, and 0.05 x 2 for the coming step of level 0: 9.628. The first
  // cell past the level (centre 48.5) is within it once the centre, 32 + 0.1 k in level-1 cells
  // before step k of level 0, passes 38.872: the check before step 69 halts the run.
  auto c = nested(LatticeKind::D2Q9, 32, 2);
  c.bodies = {round_body(LatticeKind::D2Q9, 32, 3.0, 0.5)};
  c.bodies[0].velocity = {0.05, 0.0, 0.0};
  ASSERT_FALSE(broken_rule(c));
  auto s = make_solver(c);
  try {
    s->step(100);
    FAIL() << "no halt";
  } catch (const RunHalted& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("body[0] (\"ball\")"), std::string::npos) << what;
    EXPECT_NE(what.find("at step 69"), std::string::npos) << what;
    EXPECT_NE(what.find("type = \"box\", level = 1"), std::string::npos) << what;
  }
  EXPECT_EQ(s->steps_done(), 69);  // the steps before it taken, their state kept
  // The same step found ahead, before a run starts (its path is prescribed).
  const LevelBodyBox box = level_body_box(build_octree(c), c);
  EXPECT_FALSE(prescribed_travel_leaves(box, c, 0, 69));
  for (const std::int64_t from : {0, 60, 69}) {
    const auto ahead = prescribed_travel_leaves(box, c, from, 100);
    ASSERT_TRUE(ahead) << from;
    EXPECT_NE(ahead->find("at step 69 "), std::string::npos) << *ahead;
  }
  EXPECT_TRUE(grid_of(*make_solver(c)).travel_ahead(0, 100));
  const auto loads = s->body_loads();
  ASSERT_EQ(loads.size(), 1u);
  EXPECT_NEAR(loads[0].centre[0], 16.0 + 68.5 * 0.05, 1e-12);  // the last step's (above)
  EXPECT_TRUE(std::isfinite(grid_of(*s).total_mass()));

  // Started where it already reaches level 0: refused before a step, naming it.
  c.bodies[0].position[0] = 21.5;
  expect_refused([&] { (void)make_solver(c); }, {"travelling body", "at step 0"});
}

TEST(Refinement, RunsWithTravellingBodiesLeavingTheFinestLevel) {
  // The case above through run_case: its prescribed path leaves the finest level before step 69
  // of 100, a deck error before anything is written. Free instead (ten times the fluid's
  // density, starting at its speed), its path is found as it runs: exit code 8 at that step, the
  // message naming the body and the step, that step's fields written as
  // <name>_<step>_halted.h5, summary.json "halted".
  const std::string dir = "run_travel_halt";
  std::filesystem::remove_all(dir);
  const std::string text = R"(
[model]
lattice = "D2Q9"
[domain]
nx = 32
ny = 32
[physics]
tau = 0.8
[[body]]
name = "ball"
type = "cylinder"
radius = 3.0
position = [16.0, 16.0]
velocity = [0.05, 0.0]
spacing = 0.5
[refinement]
levels = 2
[[refinement.region]]
level = 1
min = [8, 8]
max = [24, 24]
[run]
name = "towed"
steps = 100
output_every = 0
)";
  const std::string out = "run.output_dir=\"" + dir + "\"";
  std::ostringstream log;
  try {
    (void)run_case(parse_deck(text, "towed.toml", {out}), log);
    ADD_FAILURE() << "no error";
  } catch (const DeckError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("towed.toml: run.steps = 100: body[0] (\"ball\")"), std::string::npos)
        << what;
    EXPECT_NE(what.find("at step 69 "), std::string::npos) << what;
  }
  EXPECT_FALSE(std::filesystem::exists(dir + "/summary.json"));

  const Case free = parse_deck(text, "towed.toml",
                               {out, "body[0].free=true", "body[0].density=10.0", "run.steps=400"});
  const RunResult r = run_case(free, log);
  EXPECT_EQ(r.exit_code, kExitHalted) << log.str();
  EXPECT_GT(r.steps, 69);  // slowed down by the fluid it drags
  EXPECT_LT(r.steps, 400);
  const std::string step = std::to_string(r.steps);
  EXPECT_NE(r.message.find("the run stopped at step " + step + ": body[0] (\"ball\")"),
            std::string::npos)
      << r.message;
  char name[64];
  std::snprintf(name, sizeof name, "/towed_%08lld_halted.h5", static_cast<long long>(r.steps));
  EXPECT_TRUE(std::filesystem::exists(dir + name)) << name;
  EXPECT_NE(test::slurp(dir + "/summary.json").find("\"status\": \"halted\""), std::string::npos);
}

TEST(Refinement, BodiesOutsideTheFinestLevelAreRefused) {
  auto c = nested(LatticeKind::D2Q9, 32, 2);  // level 1 over [8, 24)^2
  c.bodies = {round_body(LatticeKind::D2Q9, 32, 3.0, 0.5)};
  c.bodies[0].position[0] = 9.0;  // reaches level 0
  expect_refused([&] { (void)make_solver(c); }, {"body[0]", "around = \"ball\""});
  c.bodies[0].position[0] = 16.0;
  EXPECT_FALSE(broken_rule(c));
  EXPECT_NO_THROW((void)make_solver(c));
  c.bodies[0].velocity = {0.01, 0.0, 0.0};  // travelling: taken (checked a step at a time)
  EXPECT_FALSE(broken_rule(c));
  c.bodies[0].velocity = {0.0, 0.0, 0.0};
  c.bodies[0].angular_velocity = {0.0, 0.0, 0.01};  // turning in place: taken
  EXPECT_FALSE(broken_rule(c));
  c.bodies[0].frequency = 0.01;  // oscillating: taken where its whole path stays inside level 1
  c.bodies[0].amplitude = {1.0, 0.0, 0.0};
  EXPECT_FALSE(broken_rule(c));
  EXPECT_NO_THROW((void)make_solver(c));
  c.bodies[0].amplitude = {5.0, 0.0, 0.0};  // reaches x = 16 - 5 - 3 = 8: level 0 within reach
  expect_refused([&] { (void)make_solver(c); }, {"body[0]"});
  c.bodies[0].amplitude = {0.0, 0.0, 0.0};
  c.refinement.regions[0].kind = RefinementRegion::Kind::Band;
  c.refinement.regions[0].around = "bodies";
  c.refinement.regions[0].width = 2;
  EXPECT_FALSE(broken_rule(c));
  c.bodies.clear();
  const auto none = broken_rule(c);
  ASSERT_TRUE(none);
  EXPECT_EQ(none->section + "." + none->key, "refinement.region[0].around");
}

const std::string deck = R"(
[model]
lattice = "D2Q9"
[domain]
nx = 32
ny = 32
[physics]
tau = 0.6
[boundary]
x_min = "wall"
x_max = "wall"
y_min = "wall"
y_max = { type = "moving_wall", velocity = [0.1, 0.0] }
[refinement]
levels = 3
[[refinement.region]]
level = 1
min = [4, 4]
max = [28, 28]
[[refinement.region]]
level = 2
type = "band"
around = "walls"
width = 4
[run]
steps = 10
)";

TEST(Refinement, DeckReadsLevelsAndRegions) {
  const Case c = parse_deck(deck, "case.toml");
  const Refinement& r = c.solver.refinement;
  EXPECT_EQ(r.levels, 3);
  ASSERT_EQ(r.regions.size(), 2u);
  EXPECT_EQ(r.regions[0].kind, RefinementRegion::Kind::Box);
  EXPECT_EQ(r.regions[0].max[1], 28.0);
  EXPECT_EQ(r.regions[1].kind, RefinementRegion::Kind::Band);
  EXPECT_EQ(r.regions[1].around, "walls");
  EXPECT_EQ(r.regions[1].width, 4.0);
  EXPECT_EQ(r.kernels, LevelKernels::Fused);  // the default
  EXPECT_EQ(
      parse_deck(deck, "case.toml", {"refinement.kernels=\"unfused\""}).solver.refinement.kernels,
      LevelKernels::Unfused);
}

TEST(Refinement, DeckErrorsNameTheKey) {
  const auto error = [](const std::vector<std::string>& set) {
    return test::deck_error(deck, "case.toml", set);
  };
  EXPECT_NE(error({"refinement.levels=9"}).find("key 'refinement.levels'"), std::string::npos);
  EXPECT_NE(error({"refinement.region[0].level=3"}).find("refinement.region[0].level"),
            std::string::npos)
      << error({"refinement.region[0].level=3"});
  EXPECT_NE(error({"refinement.region[1].around=\"sphere\""}).find("refinement.region[1].around"),
            std::string::npos);
  EXPECT_NE(error({"refinement.region[0].size=3"}).find("unknown key"), std::string::npos);
  EXPECT_NE(error({"model.streaming=\"in_place\""}).find("model.streaming"), std::string::npos);
  EXPECT_EQ(error({"run.checkpoint_every=5"}), "no error");  // checkpoints hold every level
  const std::string kernels = error({"refinement.kernels=\"split\""});
  EXPECT_NE(kernels.find("refinement.kernels"), std::string::npos) << kernels;
  EXPECT_NE(kernels.find("fused"), std::string::npos) << kernels;  // what was expected
  // Level kernels without levels would do nothing: refused.
  auto alone = test::periodic_box(LatticeKind::D2Q9, 16, 16, 1);
  alone.refinement.kernels = LevelKernels::Unfused;
  const auto breach = broken_rule(alone);
  ASSERT_TRUE(breach);
  EXPECT_EQ(breach->section + "." + breach->key, "refinement.kernels");
  // Periodic axes need whole blocks (8 cells in 2D).
  const std::string periodic =
      error({"boundary.x_min=\"periodic\"", "boundary.x_max=\"periodic\"", "domain.nx=36"});
  EXPECT_NE(periodic.find("domain.nx"), std::string::npos) << periodic;
  EXPECT_EQ(error({}), "no error");
}

}  // namespace
