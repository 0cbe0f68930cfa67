// SPDX-License-Identifier: Apache-2.0
// Maximal Poisson-disk sampling of triangle meshes.
//
// Random sequential acceptance: candidates, uniform over the surface, are taken in a random order
// and accepted unless an accepted sample lies closer than the spacing.
//
// Phase 1 takes a pool of kPoolDensity candidates per spacing^2 of area. Looked up one by one in
// random order, the candidates would hit the grid of samples all over memory, so they are drawn
// in time slices: each slice sweeps the mesh (runs of consecutive triangles of about 64
// spacing^2 each; the grid stays in cache) and gives every candidate a random time. A candidate
// is first checked against the samples of earlier slices, in sweep order; the survivors, few and
// sparse, are then checked against each other in the order of their times. The result is exactly
// that of taking all the candidates one by one in time order.
//
// Phase 1 leaves gaps: parts of the surface farther than the spacing from every sample. Phase 2
// goes through the runs in random order. In a run it finds the gaps as pieces of the triangles
// that no single sample's ball covers (halving the pieces down to a quarter spacing), then fills
// them with candidates drawn from those pieces, area-weighted, so uniform over the gaps, in
// rounds: after each round the pieces are halved and the covered halves dropped, until none is
// left. Then no point of the surface is farther than the spacing from a sample: the samples are
// maximal (up to gaps narrower than 1e-10 spacings, which are dropped).
#include <kolibri/geometry/Surface.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>

namespace kolibri {

namespace {

/// Uniform double in [0, 1) from the top 53 bits (the same with every standard library).
double unit(std::uint64_t bits) { return static_cast<double>(bits >> 11) * 0x1.0p-53; }

/// Uniform integer in [0, n) from 64 random bits.
std::size_t below(std::uint64_t bits, std::size_t n) {
  return std::min(n - 1, static_cast<std::size_t>(unit(bits) * double(n)));
}

/// Uniform point in the triangle (a, b, c) from 64 random bits (32 for each barycentric
/// coordinate).
Vec3 point_in_triangle(const Vec3& a, const Vec3& b, const Vec3& c, std::uint64_t bits) {
  double u = static_cast<double>(bits >> 32) * 0x1.0p-32, v = static_cast<double>(bits & 0xffffffffu) * 0x1.0p-32;
  if (u + v > 1) {
    u = 1 - u;
    v = 1 - v;
  }
  return {a[0] + u * (b[0] - a[0]) + v * (c[0] - a[0]), a[1] + u * (b[1] - a[1]) + v * (c[1] - a[1]),
          a[2] + u * (b[2] - a[2]) + v * (c[2] - a[2])};
}

double distance2(const Vec3& a, const Vec3& b) {
  const double x = a[0] - b[0], y = a[1] - b[1], z = a[2] - b[2];
  return x * x + y * y + z * z;
}

double triangle_area(const Vec3& a, const Vec3& b, const Vec3& c) {
  const Vec3 e{b[0] - a[0], b[1] - a[1], b[2] - a[2]}, f{c[0] - a[0], c[1] - a[1], c[2] - a[2]};
  const double x = e[1] * f[2] - e[2] * f[1], y = e[2] * f[0] - e[0] * f[2], z = e[0] * f[1] - e[1] * f[0];
  return 0.5 * std::sqrt(x * x + y * y + z * z);
}

/// Samples in a grid of cubic cells of edge `spacing`, stored by bricks of 4^3 cells (a hash
/// table of bricks, open addressing) so that neighbouring cells share memory; each cell's samples
/// are chained through Sample::next. Every sample carries an id (for a slice's survivors).
class SampleGrid {
 public:
  struct Sample {
    Vec3 p;
    int next;  // the previous sample of the same cell, or -1
    int id;
  };

  SampleGrid(const Vec3& lo, const Vec3& hi, double spacing) : spacing_(spacing), inv_(1 / spacing) {
    for (int d = 0; d < 3; ++d) {
      origin_[d] = lo[d] - kBrick * spacing;  // the cells of the mesh's points and their neighbours: >= 0
      if (!((hi[d] - origin_[d]) * inv_ + 2 * kBrick < double(kBrick << kKeyBits)))
        throw std::invalid_argument("poisson_disk_samples: spacing " + std::to_string(spacing) +
                                    " is too small for the mesh size (more than 2^23 cells per axis)");
    }
    rehash(1 << 10);
  }

  double spacing() const { return spacing_; }

  /// Call f(sample) for the samples in the cells that may hold one closer than the spacing to
  /// `p` (p's own cell first, then by distance) until f returns true; returns whether it did.
  template <class F>
  bool any_near(const Vec3& p, F&& f) const {
    // Per axis, the cells at offsets 0, then the nearer neighbour, then the other: the squared
    // distance (in cells) to them (ascending), their brick (bit set: the upper of the two bricks
    // the three cells can span) and their coordinate inside the brick.
    std::uint64_t c[3];
    double gap2[3][3];
    unsigned upper[3][3], inside[3][3];
    for (int d = 0; d < 3; ++d) {
      const double x = (p[d] - origin_[d]) * inv_;
      c[d] = static_cast<std::uint64_t>(x);
      const double below = x - double(c[d]), above = 1 - below;
      const unsigned m = unsigned(c[d] & 3);
      // Cells c - 1 (brick bit 0: it defines the lower brick), c and c + 1.
      const unsigned up_lo = 0, up_mid = unsigned(m == 0) << d, up_hi = unsigned(((m + 1) & 3) <= 1) << d;
      const unsigned in_lo = ((m - 1) & 3) << (2 * d), in_mid = m << (2 * d), in_hi = ((m + 1) & 3) << (2 * d);
      const bool low = below < above;
      gap2[d][0] = 0;
      upper[d][0] = up_mid;
      inside[d][0] = in_mid;
      gap2[d][1] = low ? below * below : above * above;
      upper[d][1] = low ? up_lo : up_hi;
      inside[d][1] = low ? in_lo : in_hi;
      gap2[d][2] = low ? above * above : below * below;
      upper[d][2] = low ? up_hi : up_lo;
      inside[d][2] = low ? in_hi : in_lo;
    }
    const std::uint64_t base[3] = {(c[0] - 1) >> 2, (c[1] - 1) >> 2, (c[2] - 1) >> 2};
    const Brick* bricks[8];
    bool looked_up[8] = {};
    for (int iz = 0; iz < 3 && gap2[2][iz] < 1; ++iz)
      for (int iy = 0; iy < 3 && gap2[2][iz] + gap2[1][iy] < 1; ++iy) {
        const double gzy = gap2[2][iz] + gap2[1][iy];
        for (int ix = 0; ix < 3 && gzy + gap2[0][ix] < 1; ++ix) {
          const unsigned which = upper[0][ix] | upper[1][iy] | upper[2][iz];
          if (!looked_up[which]) {
            bricks[which] = find_brick(base[0] + (which & 1), base[1] + ((which >> 1) & 1), base[2] + (which >> 2));
            looked_up[which] = true;
          }
          if (!bricks[which]) continue;
          for (int i = bricks[which]->head[inside[0][ix] | inside[1][iy] | inside[2][iz]]; i >= 0; i = samples_[i].next)
            if (f(samples_[i])) return true;
        }
      }
    return false;
  }

  /// True when a sample lies closer than the spacing to `p`.
  bool conflicts(const Vec3& p) const {
    const double s2 = spacing_ * spacing_;
    return any_near(p, [&](const Sample& s) { return distance2(p, s.p) < s2; });
  }

  void insert(const Vec3& p, int id) {
    std::uint64_t c[3];
    for (int d = 0; d < 3; ++d) c[d] = cell(p, d);
    Brick& brick = add_brick(c[0] >> 2, c[1] >> 2, c[2] >> 2);
    int& head = brick.head[local(c[0], c[1], c[2])];
    samples_.push_back({p, head, id});
    head = static_cast<int>(samples_.size()) - 1;
  }

  /// Call f(position) for every sample in the cells that overlap [lo - spacing, hi + spacing].
  template <class F>
  void for_each_near(const Vec3& lo, const Vec3& hi, F&& f) const {
    std::uint64_t c0[3], c1[3];
    for (int d = 0; d < 3; ++d) {
      c0[d] = cell(lo, d) - 1;
      c1[d] = cell(hi, d) + 1;
    }
    for (std::uint64_t bz = c0[2] >> 2; bz <= c1[2] >> 2; ++bz)
      for (std::uint64_t by = c0[1] >> 2; by <= c1[1] >> 2; ++by)
        for (std::uint64_t bx = c0[0] >> 2; bx <= c1[0] >> 2; ++bx) {
          const Brick* brick = find_brick(bx, by, bz);
          if (!brick) continue;
          const std::uint64_t z0 = std::max(c0[2], bz << 2), z1 = std::min(c1[2], (bz << 2) + 3);
          const std::uint64_t y0 = std::max(c0[1], by << 2), y1 = std::min(c1[1], (by << 2) + 3);
          const std::uint64_t x0 = std::max(c0[0], bx << 2), x1 = std::min(c1[0], (bx << 2) + 3);
          for (std::uint64_t z = z0; z <= z1; ++z)
            for (std::uint64_t y = y0; y <= y1; ++y)
              for (std::uint64_t x = x0; x <= x1; ++x)
                for (int i = brick->head[local(x, y, z)]; i >= 0; i = samples_[i].next) f(samples_[i].p);
        }
  }

  void clear() {
    std::fill(keys_.begin(), keys_.end(), kEmpty);
    bricks_.clear();
    samples_.clear();
  }

  std::size_t size() const { return samples_.size(); }

  std::vector<Vec3> positions() const {
    std::vector<Vec3> out(samples_.size());
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = samples_[i].p;
    return out;
  }

 private:
  static constexpr std::uint64_t kBrick = 4;  // cells per brick edge
  static constexpr int kKeyBits = 21;         // bits per axis of a brick key
  static constexpr std::uint64_t kEmpty = ~std::uint64_t(0);

  struct Brick {
    std::array<int, kBrick * kBrick * kBrick> head;
  };

  std::uint64_t cell(const Vec3& p, int d) const { return static_cast<std::uint64_t>((p[d] - origin_[d]) * inv_); }
  static int local(std::uint64_t x, std::uint64_t y, std::uint64_t z) {
    return int((x & 3) | (y & 3) << 2 | (z & 3) << 4);
  }
  static std::uint64_t key(std::uint64_t x, std::uint64_t y, std::uint64_t z) {
    return x | y << kKeyBits | z << (2 * kKeyBits);
  }
  std::size_t slot_of(std::uint64_t k) const {
    std::size_t slot = (k * 0x9E3779B97F4A7C15ull) >> shift_;
    while (keys_[slot] != k && keys_[slot] != kEmpty) slot = (slot + 1) & (keys_.size() - 1);
    return slot;
  }
  const Brick* find_brick(std::uint64_t x, std::uint64_t y, std::uint64_t z) const {
    const std::size_t slot = slot_of(key(x, y, z));
    return keys_[slot] == kEmpty ? nullptr : &bricks_[index_[slot]];
  }
  Brick& add_brick(std::uint64_t x, std::uint64_t y, std::uint64_t z) {
    const std::uint64_t k = key(x, y, z);
    std::size_t slot = slot_of(k);
    if (keys_[slot] == kEmpty) {
      if (2 * (bricks_.size() + 1) > keys_.size()) {
        rehash(2 * keys_.size());
        slot = slot_of(k);
      }
      keys_[slot] = k;
      index_[slot] = static_cast<int>(bricks_.size());
      Brick b;
      b.head.fill(-1);
      bricks_.push_back(b);
    }
    return bricks_[index_[slot]];
  }
  void rehash(std::size_t capacity) {
    std::vector<std::uint64_t> old_keys(capacity, kEmpty);
    std::vector<int> old_index(capacity, -1);
    old_keys.swap(keys_);
    old_index.swap(index_);
    shift_ = 64 - std::countr_zero(capacity);
    for (std::size_t i = 0; i < old_keys.size(); ++i)
      if (old_keys[i] != kEmpty) {
        const std::size_t slot = slot_of(old_keys[i]);
        keys_[slot] = old_keys[i];
        index_[slot] = old_index[i];
      }
  }

  double spacing_, inv_;
  Vec3 origin_{};
  std::vector<std::uint64_t> keys_;  // brick keys, kEmpty for a free slot
  std::vector<int> index_;           // slot -> brick
  int shift_ = 64;
  std::vector<Brick> bricks_;
  std::vector<Sample> samples_;
};

/// Acceptance of one time slice of candidates (see the top of the file): offer() each candidate
/// (best in a spatially coherent order), then finish().
class SliceAcceptor {
 public:
  SliceAcceptor(const Vec3& lo, const Vec3& hi, double spacing) : survivors_grid_(lo, hi, spacing) {}

  /// A candidate at `p` with a unique `time`: kept unless a sample of an earlier slice is closer
  /// than the spacing (the grid does not change during a slice).
  void offer(const SampleGrid& grid, const Vec3& p, std::uint64_t time) {
    ++offered_;
    if (!grid.conflicts(p)) survivors_.push_back({p, time});
  }

  /// Insert the survivors into `grid` exactly as if taken one by one in increasing time; returns
  /// the fraction of the slice's candidates that survived.
  double finish(SampleGrid& grid) {
    // A survivor closer than the spacing to an earlier one is rejected if that one is accepted.
    const double s2 = grid.spacing() * grid.spacing();
    survivors_grid_.clear();
    for (std::size_t i = 0; i < survivors_.size(); ++i) survivors_grid_.insert(survivors_[i].p, int(i));
    pairs_.clear();
    for (std::size_t i = 0; i < survivors_.size(); ++i) {
      const Survivor& c = survivors_[i];
      survivors_grid_.any_near(c.p, [&](const SampleGrid::Sample& o) {
        const Survivor& e = survivors_[o.id];
        if ((e.time < c.time || (e.time == c.time && std::size_t(o.id) < i)) && distance2(c.p, o.p) < s2)
          pairs_.emplace_back(c.time, int(i), o.id);
        return false;
      });
    }
    std::sort(pairs_.begin(), pairs_.end());  // in the order of the later one: the earlier one is final
    accepted_.assign(survivors_.size(), 1);
    for (const auto& [time, i, j] : pairs_)
      if (accepted_[j]) accepted_[i] = 0;
    for (std::size_t i = 0; i < survivors_.size(); ++i)
      if (accepted_[i]) grid.insert(survivors_[i].p, int(grid.size()));
    const double survival = offered_ == 0 ? 1.0 : double(survivors_.size()) / double(offered_);
    survivors_.clear();
    offered_ = 0;
    return survival;
  }

 private:
  struct Survivor {
    Vec3 p;
    std::uint64_t time;
  };
  SampleGrid survivors_grid_;
  std::vector<Survivor> survivors_;
  std::size_t offered_ = 0;
  std::vector<std::tuple<std::uint64_t, int, int>> pairs_;  // (time of i, i, earlier j): (time, i) orders
  std::vector<char> accepted_;
};

/// A piece of a mesh triangle (phase 2).
struct Piece {
  Vec3 a, b, c;
  double area;
};

Vec3 midpoint(const Vec3& p, const Vec3& q) { return {0.5 * (p[0] + q[0]), 0.5 * (p[1] + q[1]), 0.5 * (p[2] + q[2])}; }

double longest_edge2(const Piece& t) { return std::max({distance2(t.a, t.b), distance2(t.b, t.c), distance2(t.c, t.a)}); }

void piece_bounds(const Piece& t, Vec3& lo, Vec3& hi) {
  for (int d = 0; d < 3; ++d) {
    lo[d] = std::min({t.a[d], t.b[d], t.c[d]});
    hi[d] = std::max({t.a[d], t.b[d], t.c[d]});
  }
}

/// A piece's corners (0, 1, 2) and edge midpoints (3: 01, 4: 12, 5: 20), and the corners of its
/// four children (cut at the midpoints) among them.
using Points6 = std::array<Vec3, 6>;
constexpr int kChildCorners[4][3] = {{0, 3, 5}, {3, 1, 4}, {5, 4, 2}, {3, 4, 5}};

Points6 points6(const Piece& t) {
  return {t.a, t.b, t.c, midpoint(t.a, t.b), midpoint(t.b, t.c), midpoint(t.c, t.a)};
}

Piece child(const Points6& p, int k, double parent_area) {
  return {p[kChildCorners[k][0]], p[kChildCorners[k][1]], p[kChildCorners[k][2]], 0.25 * parent_area};
}

/// The bits of child k's corners in a mask over the six points, as a mask over its corners.
unsigned child_mask(unsigned mask6, int k) {
  return ((mask6 >> kChildCorners[k][0]) & 1u) | ((mask6 >> kChildCorners[k][1]) & 1u) << 1 |
         ((mask6 >> kChildCorners[k][2]) & 1u) << 2;
}

/// Bit i set when q is closer than sqrt(s2) to p[i], i < n.
unsigned close_mask(const Vec3& q, const Vec3* p, int n, double s2) {
  unsigned m = 0;
  for (int i = 0; i < n; ++i) m |= unsigned(distance2(q, p[i]) < s2) << i;
  return m;
}

/// Centroid and squared reach (circumradius about the centroid plus s, squared) of a piece: a
/// sample farther than the reach from the centroid is farther than s from all of the piece.
std::pair<Vec3, double> reach(const Piece& t, double s) {
  const Vec3 g{(t.a[0] + t.b[0] + t.c[0]) / 3, (t.a[1] + t.b[1] + t.c[1]) / 3, (t.a[2] + t.b[2] + t.c[2]) / 3};
  const double r = std::sqrt(std::max({distance2(g, t.a), distance2(g, t.b), distance2(g, t.c)}));
  return {g, (r + s) * (r + s)};
}

/// A sample that can reach a piece, with the mask of the piece's corners closer than s to it (all
/// three: the sample's ball covers the whole piece, a triangle being convex).
struct Near {
  Vec3 q;
  unsigned mask;
};

/// Gap search below a piece `t` that no single ball covers: its parts that no single sample's
/// ball covers, as pieces with edges of at most sqrt(leaf2) (or larger where no sample reaches),
/// appended to `gaps`. `near`: the samples that reach t, with masks over t's corners (extended
/// here to its six points); scratch[depth]: the lists of the children.
void find_gaps(const Piece& t, std::vector<Near>& near, double s, double leaf2,
               std::vector<std::vector<Near>>& scratch, std::size_t depth, std::vector<Piece>& gaps) {
  if (longest_edge2(t) <= leaf2) {
    gaps.push_back(t);
    return;
  }
  const Points6 p = points6(t);
  const double s2 = s * s;
  for (auto& n : near) n.mask |= close_mask(n.q, &p[3], 3, s2) << 3;
  std::vector<Near>& list = scratch.at(depth);
  for (int k = 0; k < 4; ++k) {
    const Piece c = child(p, k, t.area);
    const auto [g, reach2] = reach(c, s);
    list.clear();
    bool covered = false;
    for (const auto& n : near) {
      const unsigned m = child_mask(n.mask, k);
      if (m == 7u) {
        covered = true;
        break;
      }
      if (distance2(n.q, g) < reach2) list.push_back({n.q, m});
    }
    if (covered) continue;
    if (list.empty()) gaps.push_back(c);
    else find_gaps(c, list, s, leaf2, scratch, depth + 1, gaps);
  }
}

/// The samples near a box, gathered once for several consecutive pieces inside it.
class NearCache {
 public:
  /// The samples (a superset) closer than the spacing to some point of [lo, hi].
  const std::vector<Vec3>& near(const SampleGrid& grid, const Vec3& lo, const Vec3& hi) {
    bool inside = valid_;
    for (int d = 0; d < 3 && inside; ++d) inside = lo[d] >= lo_[d] && hi[d] <= hi_[d];
    if (!inside) {  // a new box: at least 2 spacings wide, for the next pieces too
      for (int d = 0; d < 3; ++d) {
        const double margin = std::max(0.0, grid.spacing() - 0.5 * (hi[d] - lo[d]));
        lo_[d] = lo[d] - margin;
        hi_[d] = hi[d] + margin;
      }
      list_.clear();
      grid.for_each_near(lo_, hi_, [&](const Vec3& q) { list_.push_back(q); });
      valid_ = true;
    }
    return list_;
  }
  /// After the grid changed.
  void invalidate() { valid_ = false; }

 private:
  bool valid_ = false;
  Vec3 lo_{}, hi_{};
  std::vector<Vec3> list_;
};

/// Phase 2 on a run of pieces (of at most a few spacings, in a spatially coherent order): find
/// their gaps (the parts no single sample's ball covers, as pieces down to a quarter spacing),
/// then fill them: rounds of candidates (one per gap piece on average, area-weighted, so uniform
/// over the gaps) accepted one by one, each round followed by halving the gap pieces and dropping
/// the covered halves, until none is left.
class GapFiller {
 public:
  explicit GapFiller(double spacing) : s_(spacing), s2_(spacing * spacing), scratch_(8) {}

  void fill(const std::vector<Piece>& pieces, SampleGrid& grid, std::mt19937_64& rng) {
    gaps_.clear();
    cache_.invalidate();
    for (const Piece& piece : pieces) {
      Vec3 lo, hi;
      piece_bounds(piece, lo, hi);
      const auto [g, reach2] = reach(piece, s_);
      const Vec3 corners[3] = {piece.a, piece.b, piece.c};
      auto& list = scratch_[0];
      list.clear();
      bool covered = false;
      for (const Vec3& q : cache_.near(grid, lo, hi)) {
        if (distance2(q, g) >= reach2) continue;
        const unsigned m = close_mask(q, corners, 3, s2_);
        if (m == 7u) {
          covered = true;
          break;
        }
        list.push_back({q, m});
      }
      if (covered) continue;
      if (list.empty()) gaps_.push_back(piece);
      else find_gaps(piece, list, s_, s2_ / 16, scratch_, 1, gaps_);
    }

    while (!gaps_.empty()) {
      cumulative_.resize(gaps_.size());
      double total = 0;
      for (std::size_t i = 0; i < gaps_.size(); ++i) cumulative_[i] = total += gaps_[i].area;
      for (std::size_t k = 0; k < gaps_.size(); ++k) {
        const auto it = std::upper_bound(cumulative_.begin(), cumulative_.end(), unit(rng()) * total);
        const Piece& t = gaps_[std::min(gaps_.size() - 1, std::size_t(it - cumulative_.begin()))];
        const Vec3 p = point_in_triangle(t.a, t.b, t.c, rng());
        if (!grid.conflicts(p)) grid.insert(p, int(grid.size()));
      }
      cache_.invalidate();
      next_.clear();
      for (const Piece& t : gaps_) {
        if (longest_edge2(t) < 1e-20 * s2_) continue;  // left unresolved: "maximal in practice"
        Vec3 lo, hi;
        piece_bounds(t, lo, hi);
        const auto [g, reach2] = reach(t, s_);
        const Points6 p = points6(t);
        masks_.clear();
        bool covered = false;
        for (const Vec3& q : cache_.near(grid, lo, hi)) {
          if (distance2(q, g) >= reach2) continue;
          const unsigned m = close_mask(q, p.data(), 6, s2_);
          if ((m & 7u) == 7u) {
            covered = true;
            break;
          }
          masks_.push_back(m);
        }
        if (covered) continue;
        for (int k = 0; k < 4; ++k) {
          bool child_covered = false;
          for (unsigned m : masks_) child_covered = child_covered || child_mask(m, k) == 7u;
          if (!child_covered) next_.push_back(child(p, k, t.area));
        }
      }
      gaps_.swap(next_);
    }
  }

 private:
  double s_, s2_;
  std::vector<std::vector<Near>> scratch_;  // by depth: from 4 spacings to a quarter
  NearCache cache_;
  std::vector<Piece> gaps_, next_;
  std::vector<double> cumulative_;
  std::vector<unsigned> masks_;
};

/// Candidates per spacing^2 of area in phase 1.
constexpr double kPoolDensity = 10;
/// Survivors per spacing^2 a time slice aims at: few pairs among them.
constexpr double kSliceSurvivors = 0.25;

}  // namespace

SurfaceSamples poisson_disk_samples(const TriangleMesh& mesh, double spacing, std::uint64_t seed) {
  if (!(std::isfinite(spacing) && spacing > 0))
    throw std::invalid_argument("poisson_disk_samples: spacing must be positive and finite, got " +
                                std::to_string(spacing));
  const std::size_t n = mesh.triangles.size();
  std::vector<double> areas(n), cumulative(n + 1, 0.0);
  for (std::size_t t = 0; t < n; ++t) {
    const auto& tri = mesh.triangles[t];
    areas[t] = triangle_area(mesh.vertices[tri[0]], mesh.vertices[tri[1]], mesh.vertices[tri[2]]);
    cumulative[t + 1] = cumulative[t] + areas[t];
  }
  const double area = cumulative[n];
  if (!(area > 0) || !std::isfinite(area)) throw std::invalid_argument("poisson_disk_samples: the mesh has no area");
  const double s2 = spacing * spacing;
  if (area / s2 > 1e9)
    throw std::invalid_argument("poisson_disk_samples: spacing " + std::to_string(spacing) + " is too small for the mesh area " +
                                std::to_string(area) + " (more than 1e9 samples)");
  const auto box = mesh.bounds();
  SampleGrid grid(box[0], box[1], spacing);
  std::mt19937_64 rng(seed);

  // Runs of consecutive triangles of about 64 spacing^2 (or one larger triangle).
  std::vector<std::size_t> run_start;
  for (std::size_t t = 0; t < n; ++t)
    if (run_start.empty() || cumulative[t] - cumulative[run_start.back()] >= 64 * s2) run_start.push_back(t);
  run_start.push_back(n);
  const std::size_t runs = run_start.size() - 1;

  // Phase 1, slice by slice: each run gets its share of the slice's candidates (fractions carried
  // to the next slice), each candidate an area-weighted triangle of its run and a random time.
  {
    SliceAcceptor acceptor(box[0], box[1], spacing);
    std::vector<double> owed(runs, 0.0);
    double left = kPoolDensity, survival = 1;  // candidates per spacing^2 still to draw
    std::uint64_t count = 0;  // unique low bits of the times
    while (left > 0) {
      const double density = std::min(left, std::max(kSliceSurvivors / survival, 1e-3 * kPoolDensity));
      left = left - density < 1e-9 * kPoolDensity ? 0 : left - density;
      for (std::size_t r = 0; r < runs; ++r) {
        const double lo = cumulative[run_start[r]], run_area = cumulative[run_start[r + 1]] - lo;
        owed[r] += density * run_area / s2;
        if (left == 0) owed[r] = std::ceil(owed[r] - 1e-9);  // the last slice settles the fractions
        for (; owed[r] >= 1; owed[r] -= 1) {
          const double x = lo + unit(rng()) * run_area;
          const auto it = std::upper_bound(cumulative.begin() + run_start[r] + 1, cumulative.begin() + run_start[r + 1], x);
          const auto& tri = mesh.triangles[std::size_t(it - cumulative.begin()) - 1];
          const Vec3 p = point_in_triangle(mesh.vertices[tri[0]], mesh.vertices[tri[1]], mesh.vertices[tri[2]], rng());
          acceptor.offer(grid, p, (rng() & ~std::uint64_t(0xffffffff)) | (count++ & 0xffffffff));
        }
      }
      survival = std::max(acceptor.finish(grid), 1e-6);
    }
  }

  // Phase 2: the gaps, run by run in random order (the grid stays in cache; no direction is
  // preferred), the run's triangles cut into pieces of at most 4 spacings.
  {
    std::vector<std::size_t> order(runs);
    std::iota(order.begin(), order.end(), std::size_t(0));
    for (std::size_t i = runs; i > 1; --i) std::swap(order[i - 1], order[below(rng(), i)]);
    GapFiller filler(spacing);
    std::vector<Piece> pieces, stack;
    for (std::size_t r : order) {
      pieces.clear();
      for (std::size_t t = run_start[r]; t < run_start[r + 1]; ++t) {
        if (!(areas[t] > 0)) continue;
        const auto& tri = mesh.triangles[t];
        stack.push_back({mesh.vertices[tri[0]], mesh.vertices[tri[1]], mesh.vertices[tri[2]], areas[t]});
        while (!stack.empty()) {  // depth first: neighbouring pieces stay together
          const Piece piece = stack.back();
          stack.pop_back();
          if (longest_edge2(piece) <= 16 * s2) {
            pieces.push_back(piece);
            continue;
          }
          const Points6 p = points6(piece);
          for (int k = 3; k >= 0; --k) stack.push_back(child(p, k, piece.area));
        }
      }
      filler.fill(pieces, grid, rng);
    }
  }

  SurfaceSamples s;
  s.position = grid.positions();
  s.area = area;
  return s;
}

}  // namespace kolibri
