// SPDX-License-Identifier: Apache-2.0
#include <kolibri/refine/LevelRanks.hpp>

#include <algorithm>
#include <cstdio>
#include <limits>
#include <stdexcept>

namespace kolibri {

namespace {
/// The level-0 block layer (along `axis`) that leaf slot s of level l descends from.
int layer_of(const RefinedLevel& h, std::int64_t s, int axis) {
  return h.leaf[std::size_t(s)][std::size_t(axis)] >> h.level;
}

/// Leaf slot s of level h's place in the depth-first order of the blocks: its level-0 ancestor's
/// number (z-major), then the octant of its ancestor at each finer level, zeros past its own level
/// (a leaf of level l spans the keys of every block that would lie under it).
std::int64_t depth_first_key(const Octree& tree, const RefinedLevel& h, std::size_t s) {
  const auto& b = h.leaf[s];
  const auto& n = tree.levels.front().blocks;
  const int l = h.level, finest = int(tree.levels.size()) - 1;
  std::int64_t key =
      (b[0] >> l) + std::int64_t(n[0]) * ((b[1] >> l) + std::int64_t(n[1]) * (b[2] >> l));
  for (int k = 1; k <= finest; ++k) {
    int octant = 0;
    if (k <= l)
      for (int d = 0; d < tree.dims; ++d) octant |= ((b[std::size_t(d)] >> (l - k)) & 1) << d;
    key = (key << tree.dims) + octant;
  }
  return key;
}

/// Every block that a cell of leaf slot s of level l reads, as (level, slot), repeats allowed:
/// see level_exchange.
template <class Fn>
void for_each_read(const Octree& tree, int l, std::int64_t s, const Fn& fn) {
  const RefinedLevel& h = tree.levels[std::size_t(l)];
  const bool finer = std::size_t(l + 1) < tree.levels.size();
  std::vector<std::int32_t> coarse;  // the coarse blocks, once each
  for (std::size_t k = 0; k < 27; ++k) {
    const std::int32_t code = h.neighbours[std::size_t(s) * 27 + k];
    if (code >= 0) {
      fn(l, code);
    } else if (code <= -kRefinedBase && finer) {
      const std::size_t r = std::size_t(-(code + kRefinedBase));
      for (std::size_t o = 0; o < (std::size_t(1) << tree.dims); ++o)
        if (const std::int32_t child = h.children[(r << tree.dims) + o]; child >= 0)
          fn(l + 1, child);
    }
    if (l > 0) {
      const std::int32_t c = h.coarse[std::size_t(s) * 27 + k];
      if (c >= 0 && std::find(coarse.begin(), coarse.end(), c) == coarse.end()) coarse.push_back(c);
    }
  }
  for (const std::int32_t c : coarse) {  // the explosion's blocks and their neighbours (slopes)
    fn(l - 1, c);
    const RefinedLevel& up = tree.levels[std::size_t(l - 1)];
    for (std::size_t k = 0; k < 27; ++k)
      if (const std::int32_t n = up.neighbours[std::size_t(c) * 27 + k]; n >= 0) fn(l - 1, n);
  }
  if (!h.reentry_start.empty()) {
    const int vs = tree.shift * tree.dims;
    for (std::int32_t e = h.reentry_start[std::size_t(s)]; e < h.reentry_start[std::size_t(s) + 1];
         ++e)
      fn(l, h.reentry_source[std::size_t(e)] >> vs);
  }
}
}  // namespace

int LevelRanks::owner(int level, std::int64_t slot) const {
  const auto& starts = slot_start[std::size_t(level)];
  return int(std::upper_bound(starts.begin(), starts.end(), slot) - starts.begin()) - 1;
}

LevelRanks cut_levels(const Octree& tree, int ranks) {
  LevelRanks out;
  out.ranks = ranks;
  out.axis = tree.dims - 1;
  const auto& blocks0 = tree.levels.front().blocks;
  out.layers = blocks0[std::size_t(out.axis)];
  const char* axis_name = out.axis == 2 ? "z" : "y";
  if (out.layers < ranks)
    throw std::invalid_argument("a refined grid over " + std::to_string(ranks) +
                                " ranks needs a layer of level-0 blocks (" +
                                std::to_string(tree.edge()) + " cells along " + axis_name +
                                ") a rank, and the box has " + std::to_string(out.layers) +
                                ": run on at most " + std::to_string(out.layers) + " ranks");
  // The leaves of every level in depth-first order, with their cell updates (every cell of the
  // block times the level's steps).
  struct Leaf {
    std::int64_t key, cost;
  };
  std::vector<Leaf> order;
  for (const RefinedLevel& h : tree.levels)
    for (std::size_t s = 0; s < h.leaf.size(); ++s)
      order.push_back({depth_first_key(tree, h, s), std::int64_t(tree.block_cells()) << h.level});
  std::sort(order.begin(), order.end(), [](const Leaf& x, const Leaf& y) { return x.key < y.key; });
  std::int64_t total = 0;
  for (const Leaf& f : order) total += f.cost;
  // Rank r's run starts at the first leaf whose middle lies past r / ranks of the updates, one
  // leaf at least a rank (there are more leaves than layers of level-0 blocks).
  std::vector<std::int64_t> first_key(std::size_t(ranks), std::numeric_limits<std::int64_t>::min());
  std::vector<std::size_t> first(std::size_t(ranks), 0);
  std::int64_t before = 0;
  std::size_t at = 0;
  for (int r = 1; r < ranks; ++r) {
    const long double target = (long double)total * r / ranks;
    const std::size_t last = order.size() - std::size_t(ranks - r);
    while (at < last && ((long double)before + 0.5L * (long double)order[at].cost < target ||
                         at == first[std::size_t(r) - 1]))
      before += order[at++].cost;
    first[std::size_t(r)] = at;
    first_key[std::size_t(r)] = order[at].key;
  }
  auto rank_of = [&](std::int64_t key) {
    return int(std::upper_bound(first_key.begin(), first_key.end(), key) - first_key.begin()) - 1;
  };
  out.updates.assign(std::size_t(ranks), 0);
  for (const Leaf& f : order) out.updates[std::size_t(rank_of(f.key))] += f.cost;
  for (const RefinedLevel& h : tree.levels) {
    std::vector<int> owner(h.leaf.size());
    for (std::size_t s = 0; s < h.leaf.size(); ++s) {
      owner[s] = rank_of(depth_first_key(tree, h, s));
      if (s > 0 && owner[s] < owner[s - 1])
        throw std::logic_error("cut_levels: level " + std::to_string(h.level) +
                               "'s leaves are not in the blocks' depth-first order");
    }
    std::vector<std::int64_t> starts(std::size_t(ranks) + 1);
    for (int r = 0; r <= ranks; ++r)
      starts[std::size_t(r)] = std::lower_bound(owner.begin(), owner.end(), r) - owner.begin();
    out.slot_start.push_back(std::move(starts));
  }
  out.first_layer.assign(std::size_t(ranks), 0);
  const std::int64_t under = std::int64_t(1) << (tree.dims * (int(tree.levels.size()) - 1));
  for (int r = 1; r < ranks; ++r) {  // the layer of the first leaf's level-0 ancestor
    const std::int64_t block0 = first_key[std::size_t(r)] / under;
    out.first_layer[std::size_t(r)] = int(block0 / blocks0[0] / (out.axis == 2 ? blocks0[1] : 1));
  }
  return out;
}

std::uint64_t read_cells(const Octree& tree, const LevelRanks& ranks, int level, std::int32_t slot,
                         int reader) {
  if (tree.block_cells() > 64)
    throw std::logic_error("read_cells: a block's cells do not fit a 64-bit word");
  const RefinedLevel& h = tree.levels[std::size_t(level)];
  const int e = tree.edge(), half = e / 2, dims = tree.dims, w = 3 * e;
  const bool finer = std::size_t(level + 1) < tree.levels.size();
  // The reader's cells, at this level's resolution, over the block's 27 neighbours: a grid of
  // (3 E)^D cells with the block in its middle.
  std::vector<char> theirs(std::size_t(w) * std::size_t(w) * std::size_t(dims == 3 ? w : 1), 0);
  auto fill = [&](const int(&lo)[3], int n, bool yes) {
    if (!yes) return;
    for (int z = lo[2]; z < (dims == 3 ? lo[2] + n : 1); ++z)
      for (int y = lo[1]; y < lo[1] + n; ++y)
        for (int x = lo[0]; x < lo[0] + n; ++x) theirs[std::size_t(x + w * (y + w * z))] = 1;
  };
  for (int k = 0; k < 27; ++k) {
    const int d[3] = {k % 3 - 1, k / 3 % 3 - 1, k / 9 - 1};
    if (dims == 2 && d[2] != 0) continue;
    const int lo[3] = {(d[0] + 1) * e, (d[1] + 1) * e, dims == 3 ? (d[2] + 1) * e : 0};
    const std::int32_t code = h.neighbours[std::size_t(slot) * 27 + std::size_t(k)];
    if (code >= 0) {
      fill(lo, e, ranks.owner(level, code) == reader);
    } else if (code == kCoarserBlock) {
      const std::int32_t c = h.coarse[std::size_t(slot) * 27 + std::size_t(k)];
      fill(lo, e, c >= 0 && ranks.owner(level - 1, c) == reader);
    } else if (code <= -kRefinedBase && finer) {  // the finer blocks' parent cells, by octant
      const std::size_t r = std::size_t(-(code + kRefinedBase));
      for (int o = 0; o < (1 << dims); ++o) {
        const std::int32_t child = h.children[(r << dims) + std::size_t(o)];
        const int at[3] = {lo[0] + (o & 1) * half, lo[1] + ((o >> 1) & 1) * half,
                           dims == 3 ? lo[2] + ((o >> 2) & 1) * half : 0};
        fill(at, half, child >= 0 && ranks.owner(level + 1, child) == reader);
      }
    }
  }
  std::uint64_t cells = 0;
  const int reach = 2, zr = dims == 3 ? reach : 0;
  for (int place = 0; place < tree.block_cells(); ++place) {
    const int p[3] = {e + (place & (e - 1)), e + ((place >> tree.shift) & (e - 1)),
                      dims == 3 ? e + (place >> (2 * tree.shift)) : 0};
    bool read = false;
    for (int z = p[2] - zr; z <= p[2] + zr && !read; ++z)
      for (int y = p[1] - reach; y <= p[1] + reach && !read; ++y)
        for (int x = p[0] - reach; x <= p[0] + reach && !read; ++x)
          read = theirs[std::size_t(x + w * (y + w * z))] != 0;
    if (read) cells |= std::uint64_t(1) << place;
  }
  return cells;
}

std::vector<std::vector<LevelPeerBlocks>> level_exchange(const Octree& tree,
                                                         const LevelRanks& ranks, int rank) {
  const std::size_t levels = tree.levels.size(), nr = std::size_t(ranks.ranks);
  std::vector<std::vector<std::vector<std::int32_t>>> send(
      levels, std::vector<std::vector<std::int32_t>>(nr)),
      recv = send;
  if (ranks.ranks > 1) {
    // A cell reads blocks whose level-0 ancestors lie at most two layers away (a coarse block's
    // neighbour at level 1), so only leaves within two layers of a cut read another rank's.
    // The cut before rank r runs through layer first_layer[r] (rank 0's: across a periodic face,
    // between the last layer and the first).
    const int layers = ranks.layers;
    std::vector<char> near(std::size_t(layers), 0);
    for (std::size_t r = 0; r < nr; ++r) {
      const int cut = ranks.first_layer[r];
      for (int z = cut - 2; z <= cut + 2; ++z)
        near[std::size_t(((z % layers) + layers) % layers)] = 1;
    }
    for (std::size_t l = 0; l < levels; ++l) {
      const RefinedLevel& h = tree.levels[l];
      for (std::size_t s = 0; s < h.leaf.size(); ++s) {
        if (!near[std::size_t(layer_of(h, std::int64_t(s), ranks.axis))]) continue;
        const int p = ranks.owner(int(l), std::int64_t(s));
        for_each_read(tree, int(l), std::int64_t(s), [&](int m, std::int32_t t) {
          const int o = ranks.owner(m, t);
          if (o == p) return;
          if (o == rank) send[std::size_t(m)][std::size_t(p)].push_back(t);
          if (p == rank) recv[std::size_t(m)][std::size_t(o)].push_back(t);
        });
      }
    }
  }
  std::vector<std::vector<LevelPeerBlocks>> out(levels);
  for (std::size_t m = 0; m < levels; ++m)
    for (std::size_t p = 0; p < nr; ++p) {
      LevelPeerBlocks b;
      b.peer = int(p);
      for (auto* list : {&send[m][p], &recv[m][p]}) {
        std::sort(list->begin(), list->end());
        list->erase(std::unique(list->begin(), list->end()), list->end());
      }
      // Each block with the cells of it that are read; a block none of whose cells are (the
      // blocks are a coarser bound) goes neither way.
      for (const std::int32_t t : send[m][p])
        if (const std::uint64_t c = read_cells(tree, ranks, int(m), t, int(p)); c != 0)
          b.send.push_back(t), b.send_cells.push_back(c);
      for (const std::int32_t t : recv[m][p])
        if (const std::uint64_t c = read_cells(tree, ranks, int(m), t, rank); c != 0)
          b.recv.push_back(t), b.recv_cells.push_back(c);
      if (!b.send.empty() || !b.recv.empty()) out[m].push_back(std::move(b));
    }
  return out;
}

void SlotWindow::hold(const std::int64_t slot) {
  if (end <= first) {
    first = slot, end = slot + 1;
    return;
  }
  first = std::min(first, slot), end = std::max(end, slot + 1);
}

std::vector<SlotWindow> level_windows(const Octree& tree, const LevelRanks& ranks, int rank) {
  const std::size_t levels = tree.levels.size();
  std::vector<SlotWindow> out(levels);
  for (std::size_t l = 0; l < levels; ++l) {
    const auto& starts = ranks.slot_start[l];
    out[l].first = starts[std::size_t(rank)], out[l].end = starts[std::size_t(rank) + 1];
  }
  if (ranks.ranks == 1) return out;
  for (std::size_t l = 0; l < levels; ++l) {
    const auto& starts = ranks.slot_start[l];
    for (std::int64_t s = starts[std::size_t(rank)]; s < starts[std::size_t(rank) + 1]; ++s)
      for_each_read(tree, int(l), s, [&](int m, std::int32_t t) { out[std::size_t(m)].hold(t); });
  }
  return out;
}

double window_bytes(const Octree& tree, const std::vector<SlotWindow>& windows,
                    double bytes_per_cell, double array_bytes) {
  double sum = octree_bytes(tree, bytes_per_cell);
  for (std::size_t l = 0; l < tree.levels.size(); ++l)
    sum -= double(tree.levels[l].cells() - (windows[l].slots() << (tree.shift * tree.dims))) *
           array_bytes;
  return sum;
}

void check_window_fits(const Octree& tree, const LevelRanks& ranks, int rank,
                       const std::vector<SlotWindow>& windows, double bytes_per_cell,
                       double array_bytes, double available) {
  const double need = window_bytes(tree, windows, bytes_per_cell, array_bytes);
  if (need <= available) return;
  const double mib = 1.0 / double(1 << 20);
  char line[400];
  std::snprintf(line, sizeof line,
                "refinement: rank %d of %d holds %.0f MiB of the levels (of their %.0f MiB on one "
                "rank) and its device has %.0f MiB free: more ranks, fewer or smaller "
                "[[refinement.region]] tables, fewer refinement.levels or a smaller [domain]",
                rank, ranks.ranks, need * mib, octree_bytes(tree, bytes_per_cell) * mib,
                available * mib);
  throw std::invalid_argument(line);
}

std::string level_ranks_report(const Octree& tree, const LevelRanks& ranks) {
  std::int64_t total = 0;
  for (const std::int64_t u : ranks.updates) total += u;
  std::string out = std::to_string(ranks.ranks) +
                    " ranks, each a run of the blocks in depth-first order (from level-0 " +
                    (ranks.axis == 2 ? "z" : "y") + " =";
  for (std::size_t r = 0; r < std::size_t(ranks.ranks); ++r)
    out += (r ? ", " : " ") + std::to_string(ranks.first_layer[r] * tree.edge());
  out += "); each rank's share of the cell updates";
  for (std::size_t r = 0; r < ranks.updates.size(); ++r) {
    char share[32];
    std::snprintf(share, sizeof share, "%s%.1f%%", r ? ", " : " ",
                  total > 0 ? 100.0 * double(ranks.updates[r]) / double(total) : 0.0);
    out += share;
  }
  return out;
}

}  // namespace kolibri
