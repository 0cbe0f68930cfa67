// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The fused kernels of one level of a refined grid (mahmoud2024's Fig. 4f carried to every
/// level): a thread per cell (two or four a thread on the fast path) gathers its arriving
/// populations, from the same level, from the coarser level (explosion) or from the finer one
/// (coalescence), resolves walls, collides and writes; two launches per level step, the general
/// rules (a thread per direction of a general cell that needs one), then the general cells
/// (their lists from the octree) and the fast cells. No ghost layer and no atomics: the
/// fine level keeps its last two states (two arrays), and the coarse level steps between the
/// fine level's two steps, so a coarse cell reads the fine populations that cross into it from
/// both fine steps directly (docs/theory.md, "Grid refinement": the rules and why they conserve
/// mass exactly).
///
/// Layout: a level's populations are blocked like the tiled grid's, value q of place l of leaf
/// slot s at (s Q + q) V + l (V = E^D cells a block), which is CSoA(V) over the cell number
/// t = s V + l: the code off the hot path reads it through Slots::csoa(cells, Q, V).
#pragma once

#include <kolibri/refine/Octree.hpp>
#include <kolibri/stepping/ObstacleLoads.hpp>
#include <kolibri/stepping/StreamCollide.hpp>
#include <kolibri/stepping/TileStreamCollide.hpp>

#include <limits>

namespace kolibri {

/// The general rules of a level: thread j = entry j of RefinedLevel::general_rule, one
/// direction of one general cell, its arriving population into `arrived`.
struct LevelRuleTag {
  static constexpr const char* label = "kolibri::refine_level_rule";
};
/// The general and the fast cells of a level, after LevelRuleTag: thread j < general_threads =
/// entry j of RefinedLevel::general_cell (the rules' values and the other directions gathered,
/// then collided), the threads after them Cells fast cells each, `stride` apart (cell = leaf
/// slot V + place). `Bodies`: the level holds immersed bodies, whose force (LevelBodyForce) joins
/// the collision: a kernel of its own, so the levels without pay nothing for it (docs/
/// performance.md, "immersed bodies on the finest level").
template <int Cells, bool Bodies = false>
struct LevelStepTag {
  static constexpr int cells = Cells;
  static constexpr const char* label = "kolibri::refine_level_step";
};
/// The unfused baseline (LevelKernels::Unfused): the fast cells' streaming, the general cells'
/// gather (the transfers between levels), each storing the arriving populations into the next
/// state, then the collision of every fluid cell from there.
struct LevelStreamTag {
  static constexpr const char* label = "kolibri::refine_level_stream";
};
struct LevelTransferTag {
  static constexpr const char* label = "kolibri::refine_level_transfer";
};
struct LevelCollideTag {
  static constexpr const char* label = "kolibri::refine_level_collide";
};

/// \brief The position, in its level's cells, of place l of leaf slot s whose block position is
/// origin[3 s .. 3 s + 2] (blocks of 2^SX cells a side, place = x + E (y + E z)).
template <int D, int SX>
KOKKOS_INLINE_FUNCTION void level_position(const std::int32_t* origin, const Index s, const Index l,
                                           int (&p)[3]) {
  constexpr int E = 1 << SX;
  p[0] = (origin[3 * s] << SX) + (int(l) & (E - 1));
  p[1] = (origin[3 * s + 1] << SX) + (int(l >> SX) & (E - 1));
  p[2] = D == 3 ? (origin[3 * s + 2] << SX) + int(l >> (2 * SX)) : 0;
}

/// \brief The immersed bodies' force on the finest level (refine/LevelBodies.hpp): a dense box
/// [lo, lo + n) of that level's cells, three values a cell (component-major, x fastest, as the
/// dense solver's force field); `f` null on the other levels and without bodies.
template <class R>
struct LevelBodyForce {
  const R* f = nullptr;
  int lo[3] = {0, 0, 0}, n[3] = {0, 0, 0};
  /// Adds the force at the level's cell p to F, D components (nothing outside the box).
  template <int D>
  KOKKOS_INLINE_FUNCTION void add(const int (&p)[3], R (&F)[3]) const {
    const int x = p[0] - lo[0], y = p[1] - lo[1], z = p[2] - lo[2];
    if (x < 0 || y < 0 || z < 0 || x >= n[0] || y >= n[1] || z >= n[2]) return;
    const Index c = cell_in(n, x, y, z), cells = Index(n[0]) * n[1] * n[2];
    for (int d = 0; d < D; ++d) F[d] += f[d * cells + c];
  }
};

/// \brief A cell's post-collision density and velocity (post_collision_state): what the pressure
/// faces' rules take (the cell's own state before its step), read where a rule crosses one.
template <class R>
struct LevelCellState {
  R rho = R(1);
  R u[3] = {R(0), R(0), R(0)};
};

/// \brief The velocity inlets' profiles (InletProfile) on a level: a built-in profile at the
/// level's own cell centres (builtin_profile, the dense planes' formula), a profile file's value
/// at the level-0 cell that a finer cell lies in (the file's resolution).
template <class R>
struct LevelInletShapes {
  std::uint8_t kind[6] = {};  ///< InletProfile a face (Uniform: none, or not a velocity inlet)
  bool bounded[3] = {};       ///< bounded_axis of the domain
  int shift = 0;              ///< the level: 2^shift of its cells a level-0 cell along an axis
  int n0[3] = {1, 1, 1};      ///< level 0's extents
  const R* file = nullptr;    ///< level 0's planes (inlet_shape_plane) where a face reads a file
  Index plane[6] = {};        ///< where face f's plane starts in `file` (inlet_plane_offset)

  /// The factor of face `face`'s velocity at the level's cell p in a level of n cells.
  KOKKOS_INLINE_FUNCTION R at(int face, const int (&p)[3], const int (&n)[3]) const {
    const auto profile = static_cast<InletProfile>(kind[face]);
    if (profile == InletProfile::Uniform) return R(1);
    // The plane's axes, (face / 2 + 1) % 3 and (face / 2 + 2) % 3, picked without indexing a
    // register array at run time (which would put it in local memory).
    const int axis = face / 2;
    const auto along = [axis](const int(&v)[3], int k) {
      const int a = (axis + k) % 3;
      return a == 0 ? v[0] : a == 1 ? v[1] : v[2];
    };
    if (profile == InletProfile::File)
      return file[plane[face] + (along(p, 1) >> shift) +
                  Index(along(n0, 1)) * (along(p, 2) >> shift)];
    const int lo[3] = {bounded[0], bounded[1], bounded[2]};
    const double x[2] = {along(p, 1) + 0.5, along(p, 2) + 0.5};
    const double m[2] = {double(along(n, 1)), double(along(n, 2))};
    const bool b[2] = {along(lo, 1) != 0, along(lo, 2) != 0};
    return R(builtin_profile(profile, x, m, b));
  }
};

/// \brief One step of one level (two arrays, pull), in two launches.
///
/// LevelRuleTag: each direction that the general list marks, by the rules of docs/theory.md
/// (`arriving`), into `arrived`; a thread a rule runs a cell's chains of loads side by side (one
/// thread a cell ran them one after another: the general cells took 1.6 times as long,
/// docs/performance.md), at the occupancy of a small kernel. LevelStepTag: the general cells,
/// those values and the other directions as the fast path reads them, collided; then the cells
/// whose links word is free of kLevelSlow, which read every direction from a leaf of their own
/// level, or bounce back from a resting wall or solid (their own opposite slot, chosen by the
/// mask): the tiled grid's gather (gather_block). The general and the fast cells share a launch
/// and the occupancy of the collision's registers; the general cells' warps, first, wait for
/// their loads while the fast cells' run. The unfused baseline (LevelKernels::Unfused) keeps one
/// thread a general cell (`general`).
template <class L, class S, class C>
struct LevelStep {
  using Lattice = L;
  using Storage = S;
  using R = typename S::real;
  using V = typename S::value_type;
  static constexpr int SX = refine_block_shift(L::D);  ///< log2 of the block edge
  static constexpr int E = 1 << SX;
  static constexpr int VS = SX * L::D;  ///< log2 of the cells a block
  static constexpr Index TV = Index(1) << VS;

  const V* src = nullptr;  ///< this level's last state (post-collision)
  V* dst = nullptr;        ///< its next; at parity 1 it still holds the state before `src`
  const std::uint8_t* flags = nullptr;
  const std::uint32_t* links = nullptr;
  const std::int32_t* neighbours = nullptr;     ///< RefinedLevel::neighbours
  const std::int32_t* coarse = nullptr;         ///< RefinedLevel::coarse (level > 0)
  const std::int32_t* children = nullptr;       ///< RefinedLevel::children (a finer level exists)
  const std::int32_t* origin = nullptr;         ///< leaf slot -> its block position (3 ints)
  const std::int32_t* general_cell = nullptr;   ///< RefinedLevel::general_cell
  const std::uint32_t* general_dirs = nullptr;  ///< RefinedLevel::general_dirs
  const std::int32_t* general_rule = nullptr;   ///< RefinedLevel::general_rule
  const std::int32_t* general_rule_start = nullptr;  ///< RefinedLevel::general_rule_start
  R* arrived = nullptr;  ///< a value a general rule (LevelRuleTag, then LevelStepTag)
  /// Where the level has obstacles' link rules (interpolated or rotating walls; else null): a
  /// value a general rule, the wall's distance (RefinedLevel::link_distance; 0: not a wall's
  /// rule) and its moving-wall term (moving_wall_term; null where no wall moves).
  const float* wall_distance = nullptr;
  const float* wall_term = nullptr;
  /// LevelStepTag's cells: general cells first_general .. first_general + generals of the list,
  /// and cells first_cell .. first_cell + Cells stride of the level (all of them on one rank;
  /// this rank's range on several, refine/LevelRanks.hpp).
  Index first_general = 0, generals = 0;
  Index first_cell = 0;
  /// LevelStepTag's threads before its fast cells: `generals` rounded up to whole warps of 32,
  /// so that a warp's fast cells start on a multiple of 32 cells.
  Index general_threads = 0;
  Index stride = 0;  ///< the cells stepped / LevelStepTag's cells a thread
  /// The coarser level's state at the start of its step and its flags (level > 0).
  const V* coarse_state = nullptr;
  const std::uint8_t* coarse_flags = nullptr;
  const std::int32_t* coarse_neighbours =
      nullptr;  ///< the coarser level's RefinedLevel::neighbours
  /// The finer level's last state and the one before (a finer level exists): the finer level
  /// has made the first of its two steps when this level steps.
  const V* fine_now = nullptr;
  const V* fine_before = nullptr;
  /// Re-entry links (RefinedLevel::reentry_start, reentry_key) and their saved values
  /// (ReentrySave, before the first of this level's two steps).
  const std::int32_t* reentry_start = nullptr;
  const std::int32_t* reentry_key = nullptr;
  const V* reentry_value = nullptr;
  int n[3] = {1, 1, 1};        ///< this level's box in its cells
  int parity = 0;              ///< 0 or 1: this step's place in the coarser level's step
  DeviceFaces<R> faces;        ///< at this step's time (faces_at_time)
  LevelInletShapes<R> inlets;  ///< the velocity inlets' profiles
  R force[3] = {R(0), R(0), R(0)};
  LevelBodyForce<R> body_force;  ///< the immersed bodies' (finest level), added to `force`
  C collide;

  KOKKOS_INLINE_FUNCTION static Index at(Index slot, int q, Index place) {
    return ((slot * L::Q + q) << VS) + place;
  }
  KOKKOS_INLINE_FUNCTION static int place_of(int x, int y, int z) {
    return (x & (E - 1)) | ((y & (E - 1)) << SX) | (L::D == 3 ? (z & (E - 1)) << (2 * SX) : 0);
  }
  /// Row k = 13 + dx + 3 dy + 9 dz of the neighbour tables for the block of cell b (unwrapped)
  /// seen from the block of cell p.
  KOKKOS_INLINE_FUNCTION static int block_offset(const int (&p)[3], const int (&b)[3]) {
    int k = 13;
    k += (b[0] >> SX) - (p[0] >> SX);
    k += 3 * ((b[1] >> SX) - (p[1] >> SX));
    if (L::D == 3) k += 9 * ((b[2] >> SX) - (p[2] >> SX));
    return k;
  }

  template <int Cells, bool Bodies>
  KOKKOS_INLINE_FUNCTION void operator()(LevelStepTag<Cells, Bodies>, const Index j) const {
    if (j >= general_threads)
      fast_cells<Cells, Bodies>(first_cell + j - general_threads);
    else if (j < generals)
      slow<true, Bodies>(first_general + j);
  }
  KOKKOS_INLINE_FUNCTION void operator()(LevelRuleTag, const Index j) const { rule(j); }
  /// Fused: Cells cells a thread, `stride` apart (a warp's cells stay consecutive): each cell's
  /// first round trip (`fast_cell`) is issued before the cell before it is gathered and
  /// collided, so only the first cell of a thread waits for it (docs/performance.md, "the level
  /// kernels' round trips").
  template <int Cells, bool Bodies>
  KOKKOS_INLINE_FUNCTION void fast_cells(const Index i) const {
    static_assert(TV % Cells == 0, "LevelStep: the cells a thread divide a block's cells");
    FastCell next = fast_cell(i);
    KOLIBRI_UNROLL
    for (int k = 0; k < Cells; ++k) {
      const FastCell cell = next;
      if (k + 1 < Cells) next = fast_cell(i + (k + 1) * stride);
      fast<true, Bodies>(cell);
    }
  }
  KOKKOS_INLINE_FUNCTION void operator()(LevelStreamTag, const Index t) const {
    fast<false>(fast_cell(t));
  }
  KOKKOS_INLINE_FUNCTION void operator()(LevelTransferTag, const Index i) const { slow<false>(i); }
  /// What cell t's addresses need: its flag, links word and block's neighbour slots, loaded in
  /// one round trip to memory (BlockSlots).
  struct FastCell {
    Index s, l;
    std::uint8_t flag;
    std::uint32_t mask;
    BlockSlots<L::D, E> slots;
  };
  KOKKOS_INLINE_FUNCTION FastCell fast_cell(const Index t) const {
    const Index s = t >> VS, l = t & (TV - 1);
    return {s, l, flags[t], links[t],
            BlockSlots<L::D, E>(neighbours + s * 27 + 13, std::uint32_t(s), l)};
  }
  /// A fast cell (the others return: not fluid, or general, which the same launch's first
  /// threads take), gathered, then collided and stored (fused) or stored as it arrived (the
  /// baseline's streaming).
  template <bool Collide, bool Bodies = false>
  KOKKOS_INLINE_FUNCTION void fast(const FastCell& c) const {
    if (c.flag != kLevelFluid || (c.mask & kLevelSlow)) return;
    R f[L::Q];
    gather_block<L, S, E>(src, c.slots, c.l, c.mask, f);
    finish<Collide, Bodies>(c.s, c.l, f);
  }
  /// General rule j: one direction of one general cell by the rules of docs/theory.md, into
  /// arrived[j]. A thread a direction: the rule's chain of loads (neighbour slot, coarse or fine
  /// slot, value) is one chain, and the chains of a cell's directions run side by side, not one
  /// after the other as in a thread that takes every direction of its cell.
  KOKKOS_INLINE_FUNCTION void rule(const Index j) const {
    const std::int32_t entry = general_rule[j];
    const Index t = general_cell[entry >> 5];
    const Index s = t >> VS, l = t & (TV - 1);
    int p[3];
    position(s, l, p);
    arrived[j] = rule_value(j, s, l, p, entry & 31, (links[t] & kLevelUnevenRead) != 0u);
  }
  /// General rule j, population q of the cell at p: an obstacle's link rule (`wall`) where the
  /// rule has a wall distance, else the rules of docs/theory.md (`arriving`).
  KOKKOS_FORCEINLINE_FUNCTION R rule_value(const Index j, const Index s, const Index l,
                                           const int (&p)[3], const int q,
                                           const bool uneven) const {
    if (wall_distance) {
      const R d = R(wall_distance[j]);
      if (d > R(0)) return wall(s, l, p, q, d, wall_term ? R(wall_term[j]) : R(0));
    }
    return arriving(s, l, p, q, uneven);
  }
  /// Population q arriving at the cell at p across an obstacle's wall at distance d along the
  /// link k = opposite(q) (interpolated_bounce_back, the dense box's rule): the cell's own f*_k
  /// and f*_q, and where d < 1/2 f*_k of the cell behind it, p + c_q, a fluid leaf of this level
  /// (the octree made d 1/2 where it is not).
  KOKKOS_FORCEINLINE_FUNCTION R wall(const Index s, const Index l, const int (&p)[3], const int q,
                                     const R d, const R term) const {
    const int k = L::opposite(q);
    return interpolated_bounce_back(
        d, own(s, k, l), own(s, q, l),
        [&] {
          const int b[3] = {p[0] + L::c(q, 0), p[1] + L::c(q, 1), p[2] + L::c(q, 2)};
          const std::int32_t code = neighbours[s * 27 + block_offset(p, b)];
          return S::template load<L>(src[at(code, k, place_of(b[0], b[1], b[2]))], k);
        },
        term);
  }
  /// General cell i of the list, gathered (every direction read before any is stored), then as
  /// `fast`: fused, the marked directions from the rules' values (LevelRuleTag); the baseline's
  /// transfer (not Collide) takes them itself.
  template <bool Collide, bool Bodies = false>
  KOKKOS_INLINE_FUNCTION void slow(const Index i) const {
    const Index t = general_cell[i];
    const Index s = t >> VS, l = t & (TV - 1);
    R f[L::Q];
    if constexpr (Collide)
      from_rules(s, l, links[t], general_dirs[i], general_rule_start[i], f);
    else
      general(s, l, links[t], general_dirs[i], general_rule_start[i], f);
    finish<Collide, Bodies>(s, l, f);
  }
  template <bool Collide, bool Bodies>
  KOKKOS_INLINE_FUNCTION void finish(const Index s, const Index l, R (&f)[L::Q]) const {
    if constexpr (Collide)
      collide_and_store<Bodies>(s, l, f);
    else
      store(s, l, f);
  }
  KOKKOS_INLINE_FUNCTION void operator()(LevelCollideTag, const Index t) const {
    if (flags[t] != kLevelFluid) return;
    const Index s = t >> VS, l = t & (TV - 1);
    R f[L::Q];
    KOLIBRI_UNROLL
    for (int q = 0; q < L::Q; ++q) f[q] = S::template load<L>(dst[at(s, q, l)], q);
    if (body_force.f != nullptr)  // the baseline: one kernel, the check at run time
      collide_and_store<true>(s, l, f);
    else
      collide_and_store<false>(s, l, f);
  }
  /// Collide with the uniform force and, with `Bodies`, the bodies' force at the cell.
  template <bool Bodies>
  KOKKOS_INLINE_FUNCTION void collide_and_store(const Index s, const Index l, R (&f)[L::Q]) const {
    R F[3] = {force[0], force[1], force[2]};
    if constexpr (Bodies) {
      int p[3];
      position(s, l, p);
      body_force.template add<L::D>(p, F);
    }
    collide(f, F);
    store(s, l, f);
  }
  KOKKOS_INLINE_FUNCTION void store(const Index s, const Index l, const R (&f)[L::Q]) const {
    KOLIBRI_UNROLL
    for (int q = 0; q < L::Q; ++q) dst[at(s, q, l)] = S::template store<L>(f[q], q);
  }

  /// The position of place l of leaf slot s in this level's cells.
  KOKKOS_INLINE_FUNCTION void position(const Index s, const Index l, int (&p)[3]) const {
    level_position<L::D, SX>(origin, s, l, p);
  }
  /// The density and velocity of the cell's last state (the pressure faces' rules need them).
  KOKKOS_INLINE_FUNCTION void state(const Index s, const Index l, LevelCellState<R>& st) const {
    R fs[L::Q];
    for (int k = 0; k < L::Q; ++k) fs[k] = S::template load<L>(src[at(s, k, l)], k);
    post_collision_state<L>(fs, force, st.rho, st.u);
  }
  /// The fused general cell: the directions set in `dirs` from the rules' values (the cell's
  /// from `start` on, by direction), the others as `from_leaf`. No load depends on another.
  KOKKOS_INLINE_FUNCTION void from_rules(const Index s, const Index l, const std::uint32_t mask,
                                         const std::uint32_t dirs, const std::int32_t start,
                                         R (&f)[L::Q]) const {
    int p[3];
    position(s, l, p);
    KOLIBRI_UNROLL
    for (int q = 0; q < L::Q; ++q)
      f[q] = (dirs >> q) & 1u ? arrived[start + bit_count(dirs & ((1u << q) - 1u))]
                              : from_leaf(s, l, p, q, mask);
  }
  /// The baseline's general path: the directions set in `dirs` by their rules (`rule_value`,
  /// the cell's from `start` on), the others from a leaf of this level or bounced back (`mask`), as
  /// the fast path reads them.
  KOKKOS_INLINE_FUNCTION void general(const Index s, const Index l, const std::uint32_t mask,
                                      const std::uint32_t dirs, const std::int32_t start,
                                      R (&f)[L::Q]) const {
    int p[3];
    position(s, l, p);
    const bool uneven = (mask & kLevelUnevenRead) != 0u;
    // The directions through a rolled loop into an array of their own, copied into f at fixed
    // places: `arriving` is inlined (below), and 27 unrolled copies of it would make a kernel
    // of registers and code for the few general cells of this baseline.
    R g[L::Q];
    for (int q = 0; q < L::Q; ++q)
      g[q] = (dirs >> q) & 1u
                 ? rule_value(start + bit_count(dirs & ((1u << q) - 1u)), s, l, p, q, uneven)
                 : from_leaf(s, l, p, q, mask);
    KOLIBRI_UNROLL
    for (int q = 0; q < L::Q; ++q) f[q] = g[q];
  }

  /// Arriving population q of the cell at p (leaf slot s, place l) where no general rule is
  /// needed: its own f*_0, its own f*_opposite(q) where bit opposite(q) of `mask` says a resting
  /// wall or solid lies upwind (halfway bounce-back), else the upwind leaf of this level (the
  /// neighbour table wraps across periodic faces, the place is the position's low bits).
  KOKKOS_INLINE_FUNCTION R from_leaf(const Index s, const Index l, const int (&p)[3], const int q,
                                     const std::uint32_t mask) const {
    if (q == 0) return own(s, 0, l);
    const int o = L::opposite(q);
    if ((mask >> o) & 1u) return own(s, o, l);
    const int b[3] = {p[0] - L::c(q, 0), p[1] - L::c(q, 1), p[2] - L::c(q, 2)};
    const std::int32_t code = neighbours[s * 27 + block_offset(p, b)];
    return S::template load<L>(src[at(code, q, place_of(b[0], b[1], b[2]))], q);
  }

  /// Cell v of this level moved into the box across periodic faces: false past a non-periodic
  /// face, `face` the one whose rule applies (face_priority at edges and corners).
  KOKKOS_INLINE_FUNCTION bool inside(int (&v)[3], int& face) const {
    face = -1;
    for (int d = 0; d < L::D; ++d) {
      if (v[d] >= 0 && v[d] < n[d]) continue;
      const int crossed = v[d] < 0 ? 2 * d : 2 * d + 1;
      if (faces.type[crossed] == static_cast<int>(FaceType::Periodic))
        v[d] = v[d] < 0 ? v[d] + n[d] : v[d] - n[d];
      else if (face < 0 || face_priority(faces.type[crossed]) < face_priority(faces.type[face]))
        face = crossed;
    }
    return face < 0;
  }
  /// Cell v of the finer level (twice this level's box) inside the box, wrapped like `inside`.
  KOKKOS_INLINE_FUNCTION bool inside_finer(int (&v)[3]) const { return inside_level(v, +1); }
  /// Cell v of the coarser level (half this level's box) inside the box, wrapped like `inside`.
  KOKKOS_INLINE_FUNCTION bool inside_coarser(int (&v)[3]) const { return inside_level(v, -1); }
  /// Cell v of the level `step` finer (+1) or coarser (-1) inside that level's box, wrapped across
  /// periodic faces; false past another face.
  KOKKOS_INLINE_FUNCTION bool inside_level(int (&v)[3], const int step) const {
    for (int d = 0; d < L::D; ++d) {
      const int m = step > 0 ? 2 * n[d] : n[d] / 2;
      if (v[d] >= 0 && v[d] < m) continue;
      if (faces.type[v[d] < 0 ? 2 * d : 2 * d + 1] != static_cast<int>(FaceType::Periodic))
        return false;
      v[d] = v[d] < 0 ? v[d] + m : v[d] - m;
    }
    return true;
  }

  KOKKOS_INLINE_FUNCTION R own(const Index s, const int q, const Index l) const {
    return S::template load<L>(src[at(s, q, l)], q);
  }
  /// Arriving population q of the cell at p (leaf slot s, place l); `uneven`: the cell's
  /// kLevelUnevenRead mark, from the links word the caller holds. Inlined, never a call: a call
  /// takes the functor's address, and where the functor is a kernel argument (async_launch)
  /// every thread then first copies all of it (over 500 bytes) to its stack; so the rule kernel
  /// did until this was inlined (docs/performance.md, "the rule kernel's stack").
  KOKKOS_FORCEINLINE_FUNCTION R arriving(const Index s, const Index l, const int (&p)[3],
                                         const int q, const bool uneven) const {
    if (q == 0) return own(s, 0, l);
    const int c[3] = {L::c(q, 0), L::c(q, 1), L::c(q, 2)};
    const int o = L::opposite(q);
    if (fine_now) {  // the children of this cell whose sources lie at the finer level
      const int behind[3] = {p[0] - c[0], p[1] - c[1], p[2] - c[2]};
      const std::int32_t code_behind = neighbours[s * 27 + block_offset(p, behind)];
      int from_fine = 0;
      R sum = R(0);
      for (int ch = 0; ch < (1 << L::D); ++ch) {
        // Child 2p + o; its source one fine cell upwind lies in this level's cell
        // p + floor((o - c) / 2), the one two fine cells upwind in p - c. Where that cell is
        // refined, the finer level holds the source (its state after its first step, or before).
        int one[3], two[3], cell[3];
        for (int d = 0; d < 3; ++d) {
          const int od = d < L::D ? (ch >> d) & 1 : 0;
          const int cd = d < L::D ? 2 * p[d] + od : 0;
          one[d] = cd - c[d], two[d] = cd - 2 * c[d], cell[d] = p[d] + ((od - c[d]) >> 1);
        }
        std::int32_t code = neighbours[s * 27 + block_offset(p, cell)];
        const V* from = nullptr;
        bool second = false;  // (a flag, not a pointer to one or two: that put both in memory)
        if (code <= -kRefinedBase && inside_finer(one)) {
          from = fine_now;
        } else if (code_behind <= -kRefinedBase && inside_finer(two)) {
          from = fine_before, code = code_behind, second = true;
        }
        if (!from) continue;  // this level's rule
        const int x[3] = {second ? two[0] : one[0], second ? two[1] : one[1],
                          second ? two[2] : one[2]};
        const Index r = -(code + kRefinedBase);
        const int octant = ((x[0] >> SX) & 1) | (((x[1] >> SX) & 1) << 1) |
                           (L::D == 3 ? ((x[2] >> SX) & 1) << 2 : 0);
        const Index slot = children[(r << L::D) + octant];
        sum += S::template load<L>(from[at(slot, q, place_of(x[0], x[1], x[2]))], q);
        ++from_fine;
      }
      constexpr R inv = R(1.0 / (1 << L::D));
      if (from_fine == (1 << L::D)) return sum * inv;
      if (from_fine > 0)
        return (sum + R((1 << L::D) - from_fine) * same_level(s, l, p, q, o, c, uneven)) * inv;
    }
    return same_level(s, l, p, q, o, c, uneven);
  }

  /// The rule of this level for arriving population q: from the upwind leaf cell, a face (one
  /// that reads its layer: from_layer), a solid cell (halfway bounce-back) or the coarser level
  /// (explosion).
  KOKKOS_INLINE_FUNCTION R same_level(const Index s, const Index l, const int (&p)[3], const int q,
                                      const int o, const int (&c)[3], const bool uneven) const {
    int b[3] = {p[0] - c[0], p[1] - c[1], p[2] - c[2]};
    const int k = block_offset(p, b);
    int face;
    if (!inside(b, face))
      return faces.from_layer(face) ? from_layer(s, l, p, q, o, c, face)
                                    : across_face(s, l, p, q, face, own(s, o, l));
    const std::int32_t code = neighbours[s * 27 + k];
    const int place = place_of(b[0], b[1], b[2]);
    if (code >= 0) {
      if (flags[(Index(code) << VS) + place] == kLevelSolid) return own(s, o, l);
      return S::template load<L>(src[at(code, q, place)], q);
    }
    // The coarser level (code == kCoarserBlock): the first step reads the coarse cell the
    // upwind cell lies in; the second the coarse cell one coarse step upwind of this cell's
    // parent, or past a face the face's rule on the cell's own state before the first step.
    // Linear only where every child of the coarse cell is read by this level: in the first
    // step where the coarse cell one coarse step downwind, which holds p + c, is refined and
    // inside the box (elsewhere, at a convex corner of the region or a face, some children's
    // shares go to the coarser level or a face's rule, uniform, and the slopes would not
    // cancel); in the second always (that cell is p's parent).
    bool linear = true;
    int x[3];
    if (parity == 0) {
      int ahead[3] = {p[0] + c[0], p[1] + c[1], p[2] + c[2]};
      const std::int32_t code_ahead = neighbours[s * 27 + block_offset(p, ahead)];
      int face_ahead;
      linear =
          code_ahead != kCoarserBlock && code_ahead != kOutsideBlock && inside(ahead, face_ahead);
      for (int d = 0; d < 3; ++d) x[d] = p[d] - c[d];
    } else {
      int b2[3] = {p[0] - 2 * c[0], p[1] - 2 * c[1], p[2] - 2 * c[2]};
      const int k2 = block_offset(p, b2);
      if (!inside(b2, face) && !faces.from_layer(face))
        return across_face(s, l, p, q, face, S::template load<L>(dst[at(s, o, l)], o));
      if (face >= 0) {  // past a face that reads its layer: the coarse cell p - c lies in
        for (int d = 0; d < 3; ++d) x[d] = p[d] - c[d];
        return exploded(s, p, x, q, false, uneven);
      }
      if (neighbours[s * 27 + k2] >= 0) {  // re-entry: this level's f*_q(t) two cells upwind
        const std::int32_t key = std::int32_t(l << 5) | q;
        for (std::int32_t e = reentry_start[s]; e < reentry_start[s + 1]; ++e)
          if (reentry_key[e] == key) return S::template load<L>(reentry_value[e], q);
      }
      for (int d = 0; d < 3; ++d) x[d] = p[d] - 2 * c[d];
    }
    return exploded(s, p, x, q, linear, uneven);
  }

  /// Population q arriving at cell p across face `face`, which reads its layer (outflow faces,
  /// developed pressure faces): GridCells::outflow_source's rule on this level, f*_q of the cell
  /// b = i - c_q of p's own layer, what the cell one layer in, i = p + e (e the face's inward
  /// normal), receives; where b is solid or past another face, i's own f*_opposite(q) (i took
  /// halfway bounce-back); where i is solid, p's own. Where b or i is not a leaf of this level
  /// (an interface meets the face there), p's own f*_q: the layer's value without its tangential
  /// offset. A pressure face adds pressure_step at p's state (Boundary::layer_arrival).
  KOKKOS_INLINE_FUNCTION R from_layer(const Index s, const Index l, const int (&p)[3], const int q,
                                      const int o, const int (&c)[3], const int face) const {
    const int axis = face / 2, inward = face % 2 == 0 ? 1 : -1;  // (no run-time array index)
    const int in[3] = {p[0] + (axis == 0 ? inward : 0), p[1] + (axis == 1 ? inward : 0),
                       p[2] + (axis == 2 ? inward : 0)};
    int b[3] = {in[0] - c[0], in[1] - c[1], in[2] - c[2]};
    const std::int32_t code_in = neighbours[s * 27 + block_offset(p, in)];
    const std::int32_t code_b = neighbours[s * 27 + block_offset(p, b)];
    const int place_in = place_of(in[0], in[1], in[2]);
    int crossed;
    R value;
    if (code_in < 0) {
      value = own(s, q, l);
    } else if (flags[(Index(code_in) << VS) + place_in] == kLevelSolid) {
      value = own(s, o, l);
    } else if (!inside(b, crossed) ||
               (code_b >= 0 &&
                flags[(Index(code_b) << VS) + place_of(b[0], b[1], b[2])] == kLevelSolid)) {
      value = S::template load<L>(src[at(code_in, o, place_in)], o);
    } else if (code_b < 0) {
      value = own(s, q, l);
    } else {
      value = S::template load<L>(src[at(code_b, q, place_of(b[0], b[1], b[2]))], q);
    }
    if (!is_pressure(static_cast<FaceType>(faces.type[face]))) return value;
    LevelCellState<R> st;
    state(s, l, st);
    return value + pressure_step<L>(faces, q, face, st.rho, st.u);
  }
  /// Population q arriving at cell p across face `face` by the face's own rule (face_rule) from
  /// the cell's `back`: a velocity inlet's profile at p; a pressure face's anti-bounce-back at
  /// the cell's velocity, read here, where a rule needs it, not for every rule of the level.
  KOKKOS_INLINE_FUNCTION R across_face(const Index s, const Index l, const int (&p)[3], const int q,
                                       const int face, const R back) const {
    LevelCellState<R> st;
    if (is_pressure(static_cast<FaceType>(faces.type[face]))) state(s, l, st);
    return face_rule<L>(faces, q, face, back, st.u, inlets.at(face, p, n));
  }

  /// The coarser level's f*_q at this level's position x (unwrapped: a cell within two cells of
  /// p, inside the coarse cell C = x / 2): the linear explosion where `linear`. C's value plus,
  /// along each axis d where both of C's neighbours are fluid leaves of the coarser level, the
  /// central slope times an offset in C's cells: x's centre's offset from C's, +-1/4, less
  /// c_d / 4 in the first fine step and plus c_d / 4 in the second where half of C's children
  /// are read in each (`halves_read`). A post-collision population stands for the point half
  /// its link on (docs/theory.md, "Grid refinement"): the shift puts each read at the point
  /// where the fine population crosses into the finer level, so at a flat interface the copy
  /// is uniform along c (a steady channel stays exact) and linear across c. Along an axis with a
  /// refined neighbour, at a face or a solid the value stays C's (Rohde et al.). The offsets of
  /// C's 2^D children sum to zero, the shifts too where half are read in each step, and, where
  /// `linear`, every child is read once by this level in a coarse step: the mass C sends here
  /// is C's own. `uneven`: the cell's kLevelUnevenRead mark (halves_read decides only there).
  KOKKOS_INLINE_FUNCTION R exploded(const Index s, const int (&p)[3], const int (&x)[3],
                                    const int q, const bool linear, const bool uneven) const {
    int w[3] = {x[0], x[1], x[2]}, face;
    inside(w, face);
    const std::int32_t slot = coarse[s * 27 + block_offset(p, x)];
    const R centre = S::template load<L>(
        coarse_state[at(slot, q, place_of(w[0] >> 1, w[1] >> 1, w[2] >> 1))], q);
    if (!linear) return centre;
    const int cell[3] = {x[0] >> 1, x[1] >> 1, x[2] >> 1};  // unwrapped, the coarser level's
    // Every neighbour's load is issued before any is used (the general path is bound by the
    // latency of its chains of loads, not by their number).
    R lo[3] = {R(0), R(0), R(0)}, hi[3] = {R(0), R(0), R(0)};
    bool sloped[3] = {false, false, false};
    KOLIBRI_UNROLL
    for (int d = 0; d < L::D; ++d) {
      int below[3] = {cell[0], cell[1], cell[2]}, above[3] = {cell[0], cell[1], cell[2]};
      --below[d], ++above[d];
      const bool has_below = coarse_value(slot, cell, below, q, lo[d]);
      const bool has_above = coarse_value(slot, cell, above, q, hi[d]);
      sloped[d] = has_below && has_above;
    }
    // (hi - lo) / 2 is the slope a coarse cell; +-1/4 and c_d / 4 are in coarse cells.
    R f = centre, along_c = R(0);
    bool shifts = false;  // a slope along an axis the population moves along
    KOLIBRI_UNROLL
    for (int d = 0; d < L::D; ++d) {
      if (!sloped[d]) continue;
      f += ((x[d] & 1) ? R(0.125) : R(-0.125)) * (hi[d] - lo[d]);
      along_c += R(L::c(q, d)) * (hi[d] - lo[d]);
      shifts = shifts || L::c(q, d) != 0;
    }
    if (shifts && (!uneven || halves_read(s, p, cell, q)))
      f -= (parity == 0 ? R(0.125) : R(-0.125)) * along_c;
    return f;
  }
  /// Whether half of the children y of the coarser level's cell `cell` (unwrapped) are read in
  /// the first fine step for direction q (y + c is a cell of this level: the coarse cell
  /// holding it, `cell` moved by c along some of the axes where c is not zero, is refined and
  /// inside the box) and half in the second, where every child is read (`linear`). True at a
  /// flat interface; not at a concave edge or corner of the region, where the first step reads
  /// more. Along one axis the only such cell is `cell` + c, refined where every child is read.
  KOKKOS_INLINE_FUNCTION bool halves_read(const Index s, const int (&p)[3], const int (&cell)[3],
                                          const int q) const {
    const int c[3] = {L::c(q, 0), L::c(q, 1), L::c(q, 2)};
    const int moving = (c[0] != 0 ? 1 : 0) | (c[1] != 0 ? 2 : 0) | (c[2] != 0 ? 4 : 0);
    if (moving == 1 || moving == 2 || moving == 4) return true;
    int refined = 0, sets = 0;
    KOLIBRI_UNROLL
    for (int set = 1; set < (1 << L::D); ++set) {
      if ((set & moving) != set) continue;
      int child[3] = {2 * cell[0], 2 * cell[1], 2 * cell[2]};  // a child of the moved cell
      for (int d = 0; d < 3; ++d)
        if ((set >> d) & 1) child[d] += 2 * c[d];
      const std::int32_t code = neighbours[s * 27 + block_offset(p, child)];
      int face;
      refined += code != kCoarserBlock && code != kOutsideBlock && inside(child, face) ? 1 : 0;
      ++sets;
    }
    return 2 * refined == sets + 1;
  }
  /// f*_q of the coarser level's cell `to` (unwrapped, one cell from `from`, a cell of
  /// that level's leaf block `slot`) into `value`; false where `to` is not a fluid leaf cell of
  /// that level (refined, solid, coarser, or past a face that is not periodic).
  KOKKOS_INLINE_FUNCTION bool coarse_value(const std::int32_t slot, const int (&from)[3],
                                           const int (&to)[3], const int q, R& value) const {
    const int k = block_offset(from, to);  // 13: the same block, no table to read
    const std::int32_t code = k == 13 ? slot : coarse_neighbours[Index(slot) * 27 + k];
    int w[3] = {to[0], to[1], to[2]};
    if (code < 0 || !inside_coarser(w)) return false;
    const int place = place_of(w[0], w[1], w[2]);
    // The value beside the flag (a leaf cell's, solid or not: in bounds), not after it.
    value = S::template load<L>(coarse_state[at(code, q, place)], q);
    return coarse_flags[(Index(code) << VS) + place] == kLevelFluid;
  }
};

/// After each step of a level with obstacle links: each link's f*_k (its cell's post-collision
/// population into the solid) into row `row` of the level's link history, one row a step of
/// the level within a step of level 0 (the steps differ: a level alternates with the levels
/// above it, so the loads average a whole cycle). Where the level has obstacles' link rules
/// (`back` not null), also the population the wall sends back from that state, as the dense
/// box's loads take it (LinkMomentum: interpolated_bounce_back in double, from the link's cell,
/// and the cell behind it where the wall is nearer than half a link).
struct LinkRecordTag {
  static constexpr const char* label = "kolibri::refine_link_record";
};
template <class L, class S>
struct LinkRecord {
  using V = typename S::value_type;
  static constexpr int VS = refine_block_shift(L::D) * L::D;
  const V* f = nullptr;
  const std::int32_t* cell = nullptr;
  const std::uint8_t* dir = nullptr;
  V* history = nullptr;
  Index row = 0, links = 0;
  /// The cells whose links are recorded (a rank's own; the other ranks' rows stay as they were:
  /// theirs are merged from their ranks).
  Index first = 0, end = std::numeric_limits<Index>::max();
  /// The walls' rules (RefinedLevel::link_distance, link_behind; the moving-wall term of the
  /// reflected direction, as ObstacleLinks::term): null where the level has none.
  double* back = nullptr;
  const double* distance = nullptr;
  const double* term = nullptr;
  const std::int32_t* behind = nullptr;

  /// Where population q of cell t (slot V + place) lies in the level's state.
  KOKKOS_INLINE_FUNCTION static Index at(const Index t, const int q) {
    return ((((t >> VS) * L::Q) + q) << VS) + (t & ((Index(1) << VS) - 1));
  }
  KOKKOS_INLINE_FUNCTION double value(const Index t, const int q) const {
    return double(S::template load<L>(f[at(t, q)], q));
  }
  KOKKOS_INLINE_FUNCTION void operator()(LinkRecordTag, const Index i) const {
    const Index t = cell[i];
    if (t < first || t >= end) return;
    const int k = dir[i];
    history[row * links + i] = f[at(t, k)];
    if (!back) return;
    back[row * links + i] = interpolated_bounce_back(
        distance[i], value(t, k), value(t, L::opposite(k)), [&] { return value(behind[i], k); },
        term[i]);
  }
};

/// \brief The momentum a level's links into an obstacle give it in one recorded step (a row of
/// the link history), in the level's lattice units: 2 c_k f*_k a link (halfway bounce-back at
/// rest, ObstacleLoads.hpp), and the torque about `centre` (level-0 cells) with the arm to the
/// link's midpoint. Where the level has obstacles' link rules (`back` not null), the dense
/// box's form (LinkSums::add_link, as LinkMomentum): (c_k - u_w) f*_k + (c_k + u_w) f_q with the
/// wall's returned f_q (`back`) and velocity, the arm to the wall's crossing.
template <class L, class S>
struct LevelLinkMomentum : LinkSumsReduction {
  using R = typename S::real;
  using V = typename S::value_type;
  static constexpr int SX = refine_block_shift(L::D);
  static constexpr int VS = SX * L::D;
  const V* f = nullptr;  ///< the recorded row: one value a link
  const std::int32_t* cell = nullptr;
  const std::uint8_t* dir = nullptr;
  const std::int32_t* origin = nullptr;
  double width = 1.0;  ///< a cell of the level in level-0 cells
  double centre[3] = {0, 0, 0};
  const double* back = nullptr;      ///< the recorded row of the walls' returned values
  const double* distance = nullptr;  ///< RefinedLevel::link_distance (with `back`)
  const double* wall_u = nullptr;    ///< RefinedLevel::link_wall_velocity, three a link

  KOKKOS_INLINE_FUNCTION void operator()(const Index i, LinkSums& sum) const {
    const Index t = cell[i], s = t >> VS;
    const int k = dir[i];
    int p[3];
    level_position<L::D, SX>(origin, s, t & ((Index(1) << VS) - 1), p);
    const double fk = double(S::template load<L>(f[i], k));
    const double returned = back ? back[i] : fk, d = back ? distance[i] : 0.5;
    double ck[3], u[3], r[3];
    for (int a = 0; a < 3; ++a) {
      ck[a] = L::c(k, a), u[a] = back ? wall_u[3 * i + a] : 0.0;
      r[a] = a < L::D ? (p[a] + 0.5 + d * L::c(k, a)) * width - centre[a] : 0.5 - centre[a];
    }
    sum.add_link(ck, u, fk, returned, r);
  }
};

/// Before the first of a level's two steps: the re-entry links' sources, f*_q at the start of
/// the coarser level's step, saved for the second step (which overwrites them).
struct ReentrySaveTag {
  static constexpr const char* label = "kolibri::refine_reentry_save";
};
template <class V, int VS, int Q>
struct ReentrySave {
  const V* src = nullptr;
  const std::int32_t* source = nullptr;  ///< RefinedLevel::reentry_source
  const std::int32_t* key = nullptr;     ///< RefinedLevel::reentry_key (its q)
  V* value = nullptr;
  KOKKOS_INLINE_FUNCTION void operator()(ReentrySaveTag, const Index e) const {
    const Index t = source[e];
    const int q = key[e] & 31;
    value[e] = src[(((t >> VS) * Q + q) << VS) + (t & ((Index(1) << VS) - 1))];
  }
};

}  // namespace kolibri
