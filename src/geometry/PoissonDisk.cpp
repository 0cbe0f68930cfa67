// SPDX-License-Identifier: Apache-2.0
// Maximal Poisson-disk sampling of triangle meshes.
//
// The samples are those of random sequential acceptance: candidates, uniform over the surface,
// are taken one after the other and accepted unless an accepted sample lies closer than the
// spacing. Phase 1 draws the candidates from the whole surface, phase 2 only from the gaps that
// phase 1 leaves (pieces of triangles that no sample's ball covers), until there are none.
//
// Speed: a candidate needs the samples around it, and candidates in drawing order land anywhere,
// so looking them up one by one is bound by memory latency. Candidates are therefore handled in
// batches, sorted by position: each is first checked against the samples of earlier batches (in
// sorted order: the grid is visited coherently), then the survivors, few and sparse, are checked
// against each other in drawing order. The result is exactly that of the one-by-one rule.
#include <kolibri/geometry/Surface.hpp>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>

namespace kolibri {

namespace {

/// Uniform double in [0, 1) from the top 53 bits (the same with every standard library).
double unit(std::uint64_t bits) { return static_cast<double>(bits >> 11) * 0x1.0p-53; }

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

/// Spread the low 21 bits of x to every third bit.
std::uint64_t spread3(std::uint64_t x) {
  x &= 0x1fffff;
  x = (x | x << 32) & 0x1f00000000ffffull;
  x = (x | x << 16) & 0x1f0000ff0000ffull;
  x = (x | x << 8) & 0x100f00f00f00f00full;
  x = (x | x << 4) & 0x10c30c30c30c30c3ull;
  x = (x | x << 2) & 0x1249249249249249ull;
  return x;
}

/// Samples in a grid of cubic cells of edge `spacing`, stored by bricks of 4^3 cells (a hash
/// table of bricks, open addressing) so that neighbouring cells share memory; each cell's samples
/// are chained through Sample::next. Every sample carries an id (for the batch's survivors).
class SampleGrid {
 public:
  SampleGrid(const Vec3& lo, const Vec3& hi, double spacing) : spacing_(spacing), inv_(1 / spacing) {
    for (int d = 0; d < 3; ++d) {
      origin_[d] = lo[d] - kBrick * spacing;  // cells (and neighbours) of the mesh's points >= 0
      if (!((hi[d] - origin_[d]) * inv_ + 2 * kBrick < double(kBrick * kAxisBricks)))
        throw std::invalid_argument("poisson_disk_samples: spacing " + std::to_string(spacing) +
                                    " is too small for the mesh size (more than 2^23 cells per axis)");
    }
    rehash(1 << 10);
  }

  double spacing() const { return spacing_; }

  /// True when a sample lies closer than the spacing to `p`.
  bool conflicts(const Vec3& p) const {
    std::int64_t c[3];
    double below[3], above[3];  // distance to the cell's lower and upper faces, in cells
    for (int d = 0; d < 3; ++d) {
      const double x = (p[d] - origin_[d]) * inv_;
      c[d] = static_cast<std::int64_t>(x);
      below[d] = x - double(c[d]);
      above[d] = 1 - below[d];
    }
    // The (at most 2 x 2 x 2) bricks of the 3 x 3 x 3 cells around p, looked up when first needed.
    const Brick* bricks[8];
    bool looked_up[8] = {};
    const double s2 = spacing_ * spacing_;
    for (const auto& o : kOffsets) {
      double gap2 = 0;  // lower bound on the squared distance to the cell, in cells^2
      for (int d = 0; d < 3; ++d) {
        const double g = o[d] < 0 ? below[d] : (o[d] > 0 ? above[d] : 0.0);
        gap2 += g * g;
      }
      if (gap2 >= 1) continue;
      std::int64_t n[3];
      int which = 0;
      for (int d = 0; d < 3; ++d) {
        n[d] = c[d] + o[d];
        which |= int(n[d] / kBrick != (c[d] - 1) / kBrick) << d;
      }
      if (!looked_up[which]) {
        bricks[which] = find_brick(n[0] / kBrick, n[1] / kBrick, n[2] / kBrick);
        looked_up[which] = true;
      }
      if (!bricks[which]) continue;
      for (int i = bricks[which]->head[local(n[0], n[1], n[2])]; i >= 0; i = samples_[i].next)
        if (distance2(p, samples_[i].p) < s2) return true;
    }
    return false;
  }

  void insert(const Vec3& p, int id) {
    std::int64_t c[3];
    for (int d = 0; d < 3; ++d) c[d] = cell(p, d);
    Brick& brick = add_brick(c[0] / kBrick, c[1] / kBrick, c[2] / kBrick);
    int& head = brick.head[local(c[0], c[1], c[2])];
    samples_.push_back({p, head, id});
    head = static_cast<int>(samples_.size()) - 1;
  }

  /// Call f(id, position) for every sample in the cells that overlap [lo - spacing, hi + spacing].
  template <class F>
  void for_each_near(const Vec3& lo, const Vec3& hi, F&& f) const {
    std::int64_t c0[3], c1[3];
    for (int d = 0; d < 3; ++d) {
      c0[d] = cell(lo, d) - 1;
      c1[d] = cell(hi, d) + 1;
    }
    for (std::int64_t bz = c0[2] / kBrick; bz <= c1[2] / kBrick; ++bz)
      for (std::int64_t by = c0[1] / kBrick; by <= c1[1] / kBrick; ++by)
        for (std::int64_t bx = c0[0] / kBrick; bx <= c1[0] / kBrick; ++bx) {
          const Brick* brick = find_brick(bx, by, bz);
          if (!brick) continue;
          const std::int64_t z0 = std::max(c0[2], bz * kBrick), z1 = std::min(c1[2], bz * kBrick + kBrick - 1);
          const std::int64_t y0 = std::max(c0[1], by * kBrick), y1 = std::min(c1[1], by * kBrick + kBrick - 1);
          const std::int64_t x0 = std::max(c0[0], bx * kBrick), x1 = std::min(c1[0], bx * kBrick + kBrick - 1);
          for (std::int64_t z = z0; z <= z1; ++z)
            for (std::int64_t y = y0; y <= y1; ++y)
              for (std::int64_t x = x0; x <= x1; ++x)
                for (int i = brick->head[local(x, y, z)]; i >= 0; i = samples_[i].next)
                  f(samples_[i].id, samples_[i].p);
        }
  }

  /// Morton code of the brick of `p`: sorting by it puts neighbouring bricks close together.
  std::uint64_t brick_code(const Vec3& p) const {
    return spread3(std::uint64_t(cell(p, 0) / kBrick)) | spread3(std::uint64_t(cell(p, 1) / kBrick)) << 1 |
           spread3(std::uint64_t(cell(p, 2) / kBrick)) << 2;
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
  static constexpr std::int64_t kBrick = 4;  // cells per brick edge
  static constexpr std::int64_t kAxisBricks = std::int64_t(1) << 21;
  static constexpr std::uint64_t kEmpty = ~std::uint64_t(0);
  // The 27 neighbour offsets, the cell itself first, then by distance.
  static constexpr auto kOffsets = [] {
    std::array<std::array<int, 3>, 27> o{};
    int n = 0;
    for (int r = 0; r <= 3; ++r)
      for (int z = -1; z <= 1; ++z)
        for (int y = -1; y <= 1; ++y)
          for (int x = -1; x <= 1; ++x)
            if (x * x + y * y + z * z == r) o[n++] = {x, y, z};
    return o;
  }();

  struct Sample {
    Vec3 p;
    int next;  // the previous sample of the same cell, or -1
    int id;
  };
  struct Brick {
    std::array<int, kBrick * kBrick * kBrick> head;
  };

  std::int64_t cell(const Vec3& p, int d) const { return static_cast<std::int64_t>((p[d] - origin_[d]) * inv_); }
  static int local(std::int64_t x, std::int64_t y, std::int64_t z) {
    return int(x % kBrick + kBrick * (y % kBrick + kBrick * (z % kBrick)));
  }
  static std::uint64_t key(std::int64_t x, std::int64_t y, std::int64_t z) {
    return std::uint64_t(x) | (std::uint64_t(y) << 21) | (std::uint64_t(z) << 42);
  }
  std::size_t slot_of(std::uint64_t k) const {
    std::size_t slot = (k * 0x9E3779B97F4A7C15ull) >> shift_;
    while (keys_[slot] != k && keys_[slot] != kEmpty) slot = (slot + 1) & (keys_.size() - 1);
    return slot;
  }
  const Brick* find_brick(std::int64_t x, std::int64_t y, std::int64_t z) const {
    const std::size_t slot = slot_of(key(x, y, z));
    return keys_[slot] == kEmpty ? nullptr : &bricks_[index_[slot]];
  }
  Brick& add_brick(std::int64_t x, std::int64_t y, std::int64_t z) {
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

/// Random sequential acceptance of candidates in batches (see the top of the file).
class BatchAcceptor {
 public:
  BatchAcceptor(const Vec3& lo, const Vec3& hi, double spacing, double area_per_spacing2)
      : survivors_grid_(lo, hi, spacing), area_cells_(area_per_spacing2) {}

  /// Draw `count` candidates from next() and accept them into `grid` in drawing order.
  template <class Next>
  void run(SampleGrid& grid, std::uint64_t count, Next&& next) {
    const double s2 = grid.spacing() * grid.spacing();
    for (std::uint64_t done = 0; done < count;) {
      // As many candidates as leave about 0.3 survivors per spacing^2: few pairs among them.
      const double want = std::clamp(0.3 * area_cells_ / survival_, 4096.0, double(kMaxBatch));
      const auto m = static_cast<std::size_t>(std::min<double>(want, double(count - done)));
      done += m;
      sorted_.resize(m);
      for (std::size_t i = 0; i < m; ++i) {
        const Vec3 p = next();
        sorted_[i] = {grid.brick_code(p), p, std::uint32_t(i)};
      }
      radix_sort(sorted_, scratch_);

      // 1. Against the samples of earlier batches, in the order of the bricks.
      survivors_.clear();
      for (const auto& c : sorted_)
        if (!grid.conflicts(c.p)) survivors_.push_back(c);
      survival_ = std::max<double>(1.0, double(survivors_.size())) / double(m);

      // 2. Survivors against earlier survivors of this batch closer than the spacing.
      survivors_grid_.clear();
      for (const auto& c : survivors_) survivors_grid_.insert(c.p, int(c.index));
      earlier_.clear();
      for (const auto& c : survivors_)
        survivors_grid_.for_each_near(c.p, c.p, [&](int j, const Vec3& q) {
          if (std::uint32_t(j) < c.index && distance2(c.p, q) < s2) earlier_.push_back({c.index, std::uint32_t(j)});
        });
      std::sort(earlier_.begin(), earlier_.end());
      state_.assign(m, kRejected);
      for (const auto& c : survivors_) state_[c.index] = kAccepted;
      for (const auto& [i, j] : earlier_)  // in drawing order of i: j's state is final
        if (state_[j] == kAccepted) state_[i] = kRejected;

      // 3. The accepted ones into the grid, in brick order.
      for (const auto& c : survivors_)
        if (state_[c.index] == kAccepted) grid.insert(c.p, int(grid.size()));
    }
  }

 private:
  struct Candidate {
    std::uint64_t key;  // brick code
    Vec3 p;
    std::uint32_t index;  // in drawing order
  };
  static constexpr std::size_t kMaxBatch = std::size_t(1) << 19;
  static constexpr char kRejected = 0, kAccepted = 1;

  /// Stable LSD radix sort by key, 11 bits a pass, as many passes as the largest key needs.
  static void radix_sort(std::vector<Candidate>& a, std::vector<Candidate>& tmp) {
    constexpr int bits = 11;
    constexpr std::uint64_t mask = (1u << bits) - 1;
    std::uint64_t largest = 0;
    for (const auto& c : a) largest = std::max(largest, c.key);
    tmp.resize(a.size());
    std::vector<std::size_t> start(mask + 2);
    for (int shift = 0; shift < 64 && (largest >> shift) != 0; shift += bits) {
      std::fill(start.begin(), start.end(), 0);
      for (const auto& c : a) ++start[((c.key >> shift) & mask) + 1];
      for (std::size_t b = 0; b <= mask; ++b) start[b + 1] += start[b];
      for (const auto& c : a) tmp[start[(c.key >> shift) & mask]++] = c;
      a.swap(tmp);
    }
  }

  SampleGrid survivors_grid_;
  double area_cells_;
  double survival_ = 1;  // fraction of the last batch that survived step 1
  std::vector<Candidate> sorted_, scratch_, survivors_;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> earlier_;  // (survivor, earlier survivor)
  std::vector<char> state_;
};

/// Walker/Vose alias table: picks index i with probability weight[i] / sum in O(1).
class AliasTable {
 public:
  explicit AliasTable(const std::vector<double>& weight) : prob_(weight.size()), alias_(weight.size()) {
    const std::size_t n = weight.size();
    const double total = std::accumulate(weight.begin(), weight.end(), 0.0);
    std::vector<double> scaled(n);
    std::vector<std::size_t> small, large;
    for (std::size_t i = 0; i < n; ++i) {
      scaled[i] = weight[i] * double(n) / total;
      (scaled[i] < 1 ? small : large).push_back(i);
    }
    while (!small.empty() && !large.empty()) {
      const std::size_t s = small.back(), l = large.back();
      small.pop_back();
      prob_[s] = scaled[s];
      alias_[s] = l;
      scaled[l] -= 1 - scaled[s];
      if (scaled[l] < 1) {
        large.pop_back();
        small.push_back(l);
      }
    }
    for (std::size_t i : small) prob_[i] = 1, alias_[i] = i;  // rounding leftovers
    for (std::size_t i : large) prob_[i] = 1, alias_[i] = i;
  }
  /// Index for a uniform u in [0, 1).
  std::size_t pick(double u) const {
    const double x = u * double(prob_.size());
    const std::size_t i = std::min(prob_.size() - 1, static_cast<std::size_t>(x));
    return x - double(i) < prob_[i] ? i : alias_[i];
  }

 private:
  std::vector<double> prob_;
  std::vector<std::size_t> alias_;
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

/// Candidates per spacing^2 of area in phase 1.
constexpr double kPoolDensity = 10;

}  // namespace

SurfaceSamples poisson_disk_samples(const TriangleMesh& mesh, double spacing, std::uint64_t seed) {
  if (!(std::isfinite(spacing) && spacing > 0))
    throw std::invalid_argument("poisson_disk_samples: spacing must be positive and finite, got " +
                                std::to_string(spacing));
  std::vector<double> areas(mesh.triangles.size());
  for (std::size_t t = 0; t < areas.size(); ++t) {
    const auto& tri = mesh.triangles[t];
    areas[t] = triangle_area(mesh.vertices[tri[0]], mesh.vertices[tri[1]], mesh.vertices[tri[2]]);
  }
  const double area = std::accumulate(areas.begin(), areas.end(), 0.0);
  if (!(area > 0) || !std::isfinite(area)) throw std::invalid_argument("poisson_disk_samples: the mesh has no area");
  const double area_cells = area / (spacing * spacing);
  if (area_cells > 1e10) throw std::invalid_argument("poisson_disk_samples: spacing is too small for the mesh area");
  const auto box = mesh.bounds();
  SampleGrid grid(box[0], box[1], spacing);
  BatchAcceptor acceptor(box[0], box[1], spacing, area_cells);
  std::mt19937_64 rng(seed);

  // Phase 1: candidates from the whole surface (area-weighted triangle, uniform in it).
  {
    const AliasTable pick(areas);
    acceptor.run(grid, static_cast<std::uint64_t>(std::ceil(kPoolDensity * area_cells)), [&] {
      const auto& tri = mesh.triangles[pick.pick(unit(rng()))];
      return point_in_triangle(mesh.vertices[tri[0]], mesh.vertices[tri[1]], mesh.vertices[tri[2]], rng());
    });
  }

  // Phase 2: the gaps, as pieces of triangles that no single sample's ball covers (pieces of up
  // to 2 spacings, then halved down to a quarter spacing). Each round draws one candidate per
  // piece on average (area-weighted, so uniform over the gaps), then halves the pieces and drops
  // the covered halves, until none is left: then every point of the surface is closer than the
  // spacing to a sample. Pieces below 1e-10 spacings are dropped unresolved ("in practice").
  std::vector<Piece> gaps;
  {
    std::vector<std::vector<Near>> scratch(8);  // depth <= 4: from 2 spacings to a quarter
    std::vector<Piece> stack;
    const double top2 = 4 * spacing * spacing, leaf2 = spacing * spacing / 16, s2 = spacing * spacing;
    for (std::size_t t = 0; t < mesh.triangles.size(); ++t) {
      if (!(areas[t] > 0)) continue;
      const auto& tri = mesh.triangles[t];
      stack.push_back({mesh.vertices[tri[0]], mesh.vertices[tri[1]], mesh.vertices[tri[2]], areas[t]});
      while (!stack.empty()) {
        const Piece piece = stack.back();
        stack.pop_back();
        if (longest_edge2(piece) > top2) {
          const Points6 p = points6(piece);
          for (int k = 0; k < 4; ++k) stack.push_back(child(p, k, piece.area));
          continue;
        }
        Vec3 lo, hi;
        piece_bounds(piece, lo, hi);
        const auto [g, reach2] = reach(piece, spacing);
        const Vec3 corners[3] = {piece.a, piece.b, piece.c};
        auto& list = scratch[0];
        list.clear();
        bool covered = false;
        grid.for_each_near(lo, hi, [&](int, const Vec3& q) {
          if (distance2(q, g) >= reach2) return;
          const unsigned m = close_mask(q, corners, 3, s2);
          covered = covered || m == 7u;
          list.push_back({q, m});
        });
        if (covered) continue;
        if (list.empty()) gaps.push_back(piece);
        else find_gaps(piece, list, spacing, leaf2, scratch, 1, gaps);
      }
    }
  }
  const double tiny2 = 1e-20 * spacing * spacing, s2 = spacing * spacing;
  std::vector<Piece> next;
  std::vector<double> weights;
  std::vector<unsigned> masks;
  while (!gaps.empty()) {
    weights.resize(gaps.size());
    for (std::size_t i = 0; i < gaps.size(); ++i) weights[i] = gaps[i].area;
    const AliasTable pick(weights);
    acceptor.run(grid, gaps.size(), [&] {
      const Piece& t = gaps[pick.pick(unit(rng()))];
      return point_in_triangle(t.a, t.b, t.c, rng());
    });
    next.clear();
    for (const Piece& t : gaps) {
      if (longest_edge2(t) < tiny2) continue;
      Vec3 lo, hi;
      piece_bounds(t, lo, hi);
      const Points6 p = points6(t);
      masks.clear();
      bool covered = false;
      grid.for_each_near(lo, hi, [&](int, const Vec3& q) {
        const unsigned m = close_mask(q, p.data(), 6, s2);
        covered = covered || (m & 7u) == 7u;
        masks.push_back(m);
      });
      if (covered) continue;
      for (int k = 0; k < 4; ++k) {
        bool child_covered = false;
        for (unsigned m : masks) child_covered = child_covered || child_mask(m, k) == 7u;
        if (!child_covered) next.push_back(child(p, k, t.area));
      }
    }
    gaps.swap(next);
  }

  SurfaceSamples s;
  s.position = grid.positions();
  s.area = area;
  return s;
}

}  // namespace kolibri
