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
/// cut. Each rank holds of every level only the leaves it steps and those its cells read
/// (level_held), numbered anew (local_levels); after a step of level l a rank sends to each other
/// rank the blocks of level l that the other's cells read (the same level's neighbours, the
/// explosion's coarse blocks, the coalescence's children) and receives the blocks its own cells
/// read. No Kokkos here: unit tests include it.
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

/// \brief The leaf slots of each level that rank `rank` holds, in increasing order: its own run
/// (ranks.slot_start) and every block a cell of its own leaves of any level reads (the blocks
/// level_exchange walks: the same level's neighbours, the children of refined neighbours, the
/// coarse blocks and their neighbours, the re-entry sources). On one rank every slot.
std::vector<std::vector<std::int32_t>> level_held(const Octree& tree, const LevelRanks& ranks,
                                                  int rank);

/// \brief For each level, its slot -> the rank's slot: the place of the slot in held[l]
/// (level_held), -1 where not held.
std::vector<std::vector<std::int32_t>> held_index(
    const Octree& tree, const std::vector<std::vector<std::int32_t>>& held);

/// \brief `held` (a level's slots in increasing order) with `slots` added.
void hold_slots(std::vector<std::int32_t>& held, std::vector<std::int32_t> slots);

/// \brief A rank's levels in its own numbering: of each level the leaves held[l] (level_held) as
/// slots 0, 1, ... in that order (so the rank's own run stays one range), their rows of every
/// per-slot and per-cell table, and every slot or cell a table names renumbered; one the rank
/// does not hold becomes -1 (kOutsideBlock in a neighbour table), and no kernel of the rank reads
/// it. The lists of general cells and rules and the obstacles' links keep every entry (their
/// indices stay the whole level's); the re-entry links are those of the held leaves. fluid_cells
/// and slow_cells stay the whole level's.
Octree local_levels(const Octree& tree, const std::vector<std::vector<std::int32_t>>& held);

/// \brief The bytes of device memory the levels take on a rank that holds `held` (level_held),
/// `bytes_per_cell` a cell held, the general cells and rules whole, as octree_bytes counts, and
/// on a level with links the obstacles' loads' whole-level tables (12 bytes a block, 4 a link).
double held_bytes(const Octree& tree, const std::vector<std::vector<std::int32_t>>& held,
                  double bytes_per_cell);

/// \brief Throws std::invalid_argument, naming the rank, the rank count and the remedies, where
/// rank `rank`'s share of the levels (held_bytes) needs more than `available` bytes (the
/// device's free memory); check_levels_fit is the one-rank form.
void check_held_fits(const Octree& tree, const LevelRanks& ranks, int rank,
                     const std::vector<std::vector<std::int32_t>>& held, double bytes_per_cell,
                     double available);

/// \brief One line: the layer where each rank's run of blocks starts (in level-0 cells along the
/// axis) and each rank's share of the updates.
std::string level_ranks_report(const Octree& tree, const LevelRanks& ranks);

}  // namespace kolibri
