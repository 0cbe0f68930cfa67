// SPDX-License-Identifier: Apache-2.0
#include <kolibri/refine/LevelRanks.hpp>

#include <algorithm>
#include <cstdio>
#include <iterator>
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

std::vector<std::vector<std::int32_t>> level_held(const Octree& tree, const LevelRanks& ranks,
                                                  int rank) {
  const std::size_t levels = tree.levels.size();
  std::vector<std::vector<char>> mark(levels);
  for (std::size_t l = 0; l < levels; ++l)
    mark[l].assign(tree.levels[l].leaf.size(), ranks.ranks == 1 ? 1 : 0);
  if (ranks.ranks > 1)
    for (std::size_t l = 0; l < levels; ++l) {
      const auto& starts = ranks.slot_start[l];
      for (std::int64_t s = starts[std::size_t(rank)]; s < starts[std::size_t(rank) + 1]; ++s) {
        mark[l][std::size_t(s)] = 1;
        for_each_read(tree, int(l), s,
                      [&](int m, std::int32_t t) { mark[std::size_t(m)][std::size_t(t)] = 1; });
      }
    }
  std::vector<std::vector<std::int32_t>> out(levels);
  for (std::size_t l = 0; l < levels; ++l)
    for (std::size_t s = 0; s < mark[l].size(); ++s)
      if (mark[l][s]) out[l].push_back(std::int32_t(s));
  return out;
}

std::vector<std::vector<std::int32_t>> held_index(
    const Octree& tree, const std::vector<std::vector<std::int32_t>>& held) {
  std::vector<std::vector<std::int32_t>> index(tree.levels.size());
  for (std::size_t l = 0; l < index.size(); ++l) {
    index[l].assign(tree.levels[l].leaf.size(), -1);
    for (std::size_t k = 0; k < held[l].size(); ++k)
      index[l][std::size_t(held[l][k])] = std::int32_t(k);
  }
  return index;
}

void hold_slots(std::vector<std::int32_t>& held, std::vector<std::int32_t> slots) {
  slots.erase(std::remove_if(slots.begin(), slots.end(), [](std::int32_t s) { return s < 0; }),
              slots.end());
  std::sort(slots.begin(), slots.end());
  std::vector<std::int32_t> both;
  std::set_union(held.begin(), held.end(), slots.begin(), slots.end(), std::back_inserter(both));
  held = std::move(both);
}

Octree local_levels(const Octree& tree, const std::vector<std::vector<std::int32_t>>& held) {
  const std::size_t levels = tree.levels.size();
  const int vs = tree.shift * tree.dims;
  const std::int32_t place_mask = (std::int32_t(1) << vs) - 1;
  const std::vector<std::vector<std::int32_t>> index = held_index(tree, held);
  const auto slot = [&](std::size_t m, std::int32_t s) {
    return s < 0 ? s : index[m][std::size_t(s)];  // codes stay
  };
  const auto cell = [&](std::size_t m, std::int32_t t) {
    if (t < 0) return t;
    const std::int32_t s = index[m][std::size_t(t >> vs)];
    return s < 0 ? std::int32_t(-1) : (s << vs) | (t & place_mask);
  };
  Octree out;
  out.dims = tree.dims, out.shift = tree.shift;
  for (std::size_t l = 0; l < levels; ++l) {
    const RefinedLevel& g = tree.levels[l];
    RefinedLevel h;
    h.level = g.level, h.n = g.n, h.blocks = g.blocks;
    h.refined = g.refined;
    h.fluid_cells = g.fluid_cells, h.slow_cells = g.slow_cells;
    const std::size_t block = std::size_t(1) << vs;
    for (const std::int32_t s : held[l]) {
      const auto su = std::size_t(s);
      h.leaf.push_back(g.leaf[su]);
      for (std::size_t k = 0; k < 27; ++k) {
        h.neighbours.push_back(slot(l, g.neighbours[27 * su + k]));
        if (!g.coarse.empty()) h.coarse.push_back(slot(l - 1, g.coarse[27 * su + k]));
      }
      h.flags.insert(h.flags.end(), g.flags.begin() + std::ptrdiff_t(su * block),
                     g.flags.begin() + std::ptrdiff_t((su + 1) * block));
      h.links.insert(h.links.end(), g.links.begin() + std::ptrdiff_t(su * block),
                     g.links.begin() + std::ptrdiff_t((su + 1) * block));
      if (!g.reentry_start.empty()) {
        h.reentry_start.push_back(std::int32_t(h.reentry_key.size()));
        for (std::int32_t e = g.reentry_start[su]; e < g.reentry_start[su + 1]; ++e) {
          h.reentry_key.push_back(g.reentry_key[std::size_t(e)]);
          h.reentry_source.push_back(cell(l, g.reentry_source[std::size_t(e)]));
        }
      }
    }
    if (!g.reentry_start.empty()) h.reentry_start.push_back(std::int32_t(h.reentry_key.size()));
    for (const std::int32_t c : g.children) h.children.push_back(slot(l + 1, c));
    for (const std::int32_t t : g.link_cell) h.link_cell.push_back(cell(l, t));
    h.link_dir = g.link_dir, h.link_start = g.link_start;
    h.link_distance = g.link_distance, h.link_wall_velocity = g.link_wall_velocity;
    for (const std::int32_t t : g.link_behind) h.link_behind.push_back(cell(l, t));
    h.rule_link = g.rule_link;
    for (const std::int32_t t : g.general_cell) h.general_cell.push_back(cell(l, t));
    h.general_dirs = g.general_dirs, h.general_rule = g.general_rule;
    h.general_rule_start = g.general_rule_start;
    out.levels.push_back(std::move(h));
  }
  return out;
}

double held_bytes(const Octree& tree, const std::vector<std::vector<std::int32_t>>& held,
                  double bytes_per_cell) {
  double sum = octree_bytes(tree, bytes_per_cell);
  for (std::size_t l = 0; l < tree.levels.size(); ++l) {
    const RefinedLevel& level = tree.levels[l];
    sum -= double(level.cells() - (std::int64_t(held[l].size()) << (tree.shift * tree.dims))) *
           bytes_per_cell;
    if (!level.link_cell.empty())  // the obstacles' loads' whole-level tables (origin, link cells)
      sum += 12.0 * double(level.leaf.size()) + 4.0 * double(level.link_cell.size());
  }
  return sum;
}

void check_held_fits(const Octree& tree, const LevelRanks& ranks, int rank,
                     const std::vector<std::vector<std::int32_t>>& held, double bytes_per_cell,
                     double available) {
  const double need = held_bytes(tree, held, bytes_per_cell);
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
