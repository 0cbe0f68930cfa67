// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief A refined grid over ranks: which leaves each rank steps, and which blocks it sends and
/// receives after a level's step (docs/design.md, "Refinement over ranks").
///
/// The octree numbers a level's leaves in the depth-first order of the blocks (level 0 along z
/// last, then each refined block's children by octant, recursively): a level's leaves are that
/// order restricted to the level. Cut the whole order, every level's leaves together, into one run
/// a rank, and each rank's leaves of each level are one range of slots, its cells one range of cell
/// numbers: the level kernels run over that range. The cuts fall between any two leaves, so the
/// shares of the cell updates come out even to a block (whole layers of level-0 blocks were 3%
/// apart on the refined tunnel); a rank's region is a slab whose faces follow the blocks near the
/// cut. Every rank holds every level's tables whole, and of each level's two arrays the window
/// of slots its cells read (level_windows: its own run and about two layers of level-0 blocks on
/// either side); after a step of level l a rank sends to each other rank the
/// blocks of level l that the other's cells read (the same level's neighbours, the explosion's
/// coarse blocks, the coalescence's children) and receives the blocks its own cells read. No
/// Kokkos here: unit tests include it.
#pragma once

#include <kolibri/refine/Octree.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace kolibri {

/// \brief The leaves of every level that each rank steps.
struct LevelRanks {
  int ranks = 1;
  int axis = 2;    ///< the axis along which the level-0 blocks are ordered last (z, y in 2D)
  int layers = 1;  ///< layers of level-0 blocks along `axis`
  /// The layer of level-0 blocks where rank r's first leaf lies: its cut from rank r - 1 runs
  /// through that layer.
  std::vector<int> first_layer{0};
  /// Rank r's leaf slots of level l: [slot_start[l][r], slot_start[l][r + 1]).
  std::vector<std::vector<std::int64_t>> slot_start;
  /// Each rank's cell updates in a step of level 0 (every cell of its leaves times 2^level).
  std::vector<std::int64_t> updates;

  /// The rank that steps leaf slot `slot` of level `level`.
  int owner(int level, std::int64_t slot) const;
};

/// \brief The leaves of `tree` cut among `ranks` ranks in their depth-first order, each rank's
/// share of the cell updates as near the mean as whole leaves allow. Throws std::invalid_argument
/// where there are fewer layers of level-0 blocks than ranks (a checkpoint's pieces are slabs of
/// level-0 cells, one a rank).
LevelRanks cut_levels(const Octree& tree, int ranks);

/// \brief The blocks of one level that this rank sends to `peer` after each step of the level
/// (its own, read by the peer's cells) and receives from it (the peer's, read by its cells),
/// leaf slots in increasing order, each with the cells of it that are read (read_cells).
struct LevelPeerBlocks {
  int peer = -1;
  std::vector<std::int32_t> send, recv;
  std::vector<std::uint64_t> send_cells, recv_cells;
};

/// \brief For each level of `tree`, the blocks `rank` exchanges with each other rank (peers in
/// increasing order, none without a block either way). What a cell of level l reads besides its
/// own block: the leaves among its block's 27 neighbours, the children of its refined neighbours
/// (level l + 1), the coarse blocks of level l - 1 its neighbours lie in and their 27 neighbours,
/// and its re-entry links' sources.
std::vector<std::vector<LevelPeerBlocks>> level_exchange(const Octree& tree,
                                                         const LevelRanks& ranks, int rank);

/// \brief The cells of leaf slot `slot` of level `level` (bit `place`) that rank `reader`'s cells
/// read: those within two cells of this level of a cell of the reader's leaves of this level, of
/// the level above (a coarse cell's children) or of the level below (a fine cell's parent). No
/// rule reads farther: a re-entry source lies two cells upwind; the explosion reads the coarse
/// cell one coarse cell upwind of a fine cell's parent and that cell's neighbours (the slopes);
/// the coalescence reads the fine cells one and two fine cells upwind of a coarse cell's children.
std::uint64_t read_cells(const Octree& tree, const LevelRanks& ranks, int level, std::int32_t slot,
                         int reader);

/// \brief The leaf slots of a level that a rank holds in device memory, [first, end): its own
/// and those its cells read, with the slots between them (the level's arrays on that rank cover
/// this range only; the tables stay whole).
struct SlotWindow {
  std::int64_t first = 0, end = 0;
  std::int64_t slots() const { return end - first; }
  /// Widened to hold `slot` too.
  void hold(std::int64_t slot);
};

/// \brief For each level of `tree`, the window of slots `rank` holds: the smallest range with its
/// own leaves (ranks.slot_start) and every block a cell of its own leaves of any level reads (the
/// blocks level_exchange walks: the same level's neighbours, the children of refined neighbours,
/// the coarse blocks and their neighbours, the re-entry sources), so that each rank's memory falls
/// with the rank count. On one rank every level whole. A cut whose reads wrap across a periodic
/// face (the first and the last rank along a periodic axis) widens the window to the level's
/// whole range: such ranks hold the level whole.
std::vector<SlotWindow> level_windows(const Octree& tree, const LevelRanks& ranks, int rank);

/// \brief The bytes of device memory the levels take on a rank that holds `windows` (level_windows)
/// of their arrays: `array_bytes` a cell in the arrays (both of them), the rest of
/// `bytes_per_cell` (flags, links, tables) for every cell of the level, as octree_bytes counts.
double window_bytes(const Octree& tree, const std::vector<SlotWindow>& windows,
                    double bytes_per_cell, double array_bytes);

/// \brief Throws std::invalid_argument, naming [[refinement.region]] and the rank count, where rank
/// `rank`'s share of the levels (window_bytes) needs more than `available` bytes (the device's
/// free memory); check_levels_fit is the one-rank form.
void check_window_fits(const Octree& tree, const LevelRanks& ranks, int rank,
                       const std::vector<SlotWindow>& windows, double bytes_per_cell,
                       double array_bytes, double available);

/// \brief One line: the layer where each rank's run of blocks starts (in level-0 cells along the
/// axis) and each rank's share of the updates.
std::string level_ranks_report(const Octree& tree, const LevelRanks& ranks);

}  // namespace kolibri
