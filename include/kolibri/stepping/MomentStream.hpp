// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The moment representation of the regularized LBM (valero-lara): only the post-
/// collision moments (rho, j*, A*: 6 values a cell in 2D, 10 in 3D) live in memory between
/// steps. One kernel per step reads them, rebuilds the post-collision populations, streams them
/// through team scratch memory in a window sliding along columns, accumulates the arriving
/// moments, collides in moment space and writes the new moments.
#pragma once

#include <kolibri/stepping/StreamCollide.hpp>

#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

namespace kolibri {

/// \brief Which moments are stored and where: slot 0 rho, then j* (D values), then A* (xx yy xy in
/// 2D; xx yy zz xy xz yz in 3D). Slot k of cell n at k * cells + n (SoA).
template <class L>
struct MomentSlots {
  static constexpr int M = L::D == 2 ? 6 : 10;
  /// A* component (xx yy zz xy xz yz) of slot 1 + D + k.
  KOKKOS_INLINE_FUNCTION static constexpr int a_component(int k) { return L::D == 2 ? (k == 2 ? 3 : k) : k; }

  /// The post-collision populations of a cell's M stored values (C: RegularizedBgk or
  /// RecursiveRegularizedBgk, whose `project` maps a collided state to populations).
  template <class C, class R>
  KOKKOS_INLINE_FUNCTION static void departing(const R (&m)[M], const C& op, const R (&F)[3], R (&f)[L::Q]) {
    R js[3] = {R(0), R(0), R(0)}, A[6] = {R(0), R(0), R(0), R(0), R(0), R(0)};
    for (int d = 0; d < L::D; ++d) js[d] = m[1 + d];
    KOLIBRI_UNROLL
    for (int k = 0; k < M - 1 - L::D; ++k) A[a_component(k)] = m[1 + L::D + k];
    RegularizedMoments<L, R> s;
    s.post(m[0], js, A, F, op.omega);
    C::project(s, f);
  }
  /// The M values of the cell at p (slot k at p[k * cells], SoA).
  template <class R>
  KOKKOS_INLINE_FUNCTION static void load(const R* p, Index cells, R (&m)[M]) {
    KOLIBRI_UNROLL
    for (int k = 0; k < M; ++k) m[k] = p[k * cells];
  }
  template <class R>
  KOKKOS_INLINE_FUNCTION static void store(R* p, Index cells, R rho, const R (&js)[3], const R (&A)[6]) {
    p[0] = rho;
    KOLIBRI_UNROLL
    for (int d = 0; d < L::D; ++d) p[(1 + d) * cells] = js[d];
    KOLIBRI_UNROLL
    for (int k = 0; k < M - 1 - L::D; ++k) p[(1 + L::D + k) * cells] = A[a_component(k)];
  }
};

/// \brief Raw moments of arriving populations: rho = sum f, j = sum c f, pi = sum cc f.
template <class R>
struct MomentSum {
  R rho, j[3], pi[6];
  /// -0, not +0: the first sum after a clear is folded away (-0 + f == f; 0 + f is an add).
  KOKKOS_INLINE_FUNCTION void clear() {
    rho = R(-0.0);
    for (int d = 0; d < 3; ++d) j[d] = R(-0.0);
    for (int k = 0; k < 6; ++k) pi[k] = R(-0.0);
  }
  /// Add population q (compile-time q folds the velocity components away).
  template <class L>
  KOKKOS_INLINE_FUNCTION void add(int q, R f) {
    const int cx = L::c(q, 0), cy = L::c(q, 1), cz = L::c(q, 2);
    rho += f;
    j[0] = add_c(j[0], cx, f), j[1] = add_c(j[1], cy, f), j[2] = add_c(j[2], cz, f);
    pi[0] = add_c(pi[0], cx * cx, f), pi[1] = add_c(pi[1], cy * cy, f), pi[2] = add_c(pi[2], cz * cz, f);
    pi[3] = add_c(pi[3], cx * cy, f), pi[4] = add_c(pi[4], cx * cz, f), pi[5] = add_c(pi[5], cy * cz, f);
  }
  /// Add population q (value a) and its mirror across `axis` (value b, the same velocity with
  /// c_axis negated): each moment takes the sum or the difference, even or odd in c_axis, so a
  /// pair costs two adds fewer than two single ones (four fewer with a mixed component).
  template <class L>
  KOKKOS_INLINE_FUNCTION void add_pair(int q, int axis, R a, R b) {
    const int c[3] = {L::c(q, 0), L::c(q, 1), L::c(q, 2)};
    const R s = a + b, d = a - b;
    rho += s;
    KOLIBRI_UNROLL
    for (int e = 0; e < 3; ++e) j[e] = add_c(j[e], c[e], e == axis ? d : s);
    KOLIBRI_UNROLL
    for (int e = 0; e < 3; ++e) pi[e] = add_c(pi[e], c[e] * c[e], s);
    pi[3] = add_c(pi[3], c[0] * c[1], axis == 0 || axis == 1 ? d : s);
    pi[4] = add_c(pi[4], c[0] * c[2], axis == 0 || axis == 2 ? d : s);
    pi[5] = add_c(pi[5], c[1] * c[2], axis == 1 || axis == 2 ? d : s);
  }
};

/// \brief Calls f(std::integral_constant<int, i>) for i = 0 .. N-1: the index is a constant
/// expression in the body (for `constexpr` tables that an unrolled loop would evaluate at run
/// time).
template <int N, class F>
KOKKOS_FORCEINLINE_FUNCTION void static_for(F&& f) {
  [&]<int... I>(std::integer_sequence<int, I...>) { (f(std::integral_constant<int, I>{}), ...); }(std::make_integer_sequence<int, N>{});
}

/// \brief Shape of the moment kernel's teams: TX x TY cells across the columns (TY = 1 in 2D),
/// columns cut into segments of `segment` layers (0: whole columns), scratch planes.
struct MomentTile {
  int tx = 30, ty = 6;
  int segment = 32;
  int planes = 2;  ///< scratch planes: 2 alternate (one barrier a layer), 1 where 2 do not fit
};

/// \brief The tiles the moment kernel is compiled for (TX, TY): GPUs choose between two (3D: 256
/// and 128 threads a team with the ring; 2D: 256 and 128); host backends run one fixed tile a
/// thread (8 x 8 in 3D, 64 x 1 in 2D).
template <int D, bool Host>
struct MomentTiles {
  static constexpr int count = Host ? 1 : 2;
  static constexpr int tx(int i) { return Host ? (D == 3 ? 8 : 64) : D == 3 ? (i == 0 ? 30 : 14) : (i == 0 ? 254 : 126); }
  static constexpr int ty(int) { return D == 3 ? (Host ? 8 : 6) : 1; }
  static std::string list() {
    std::string s;
    for (int i = 0; i < count; ++i) s += (i ? ", " : "") + std::to_string(tx(i)) + "x" + std::to_string(ty(i));
    return s;
  }
};

/// \brief One time step of the moment representation for a TX x TY tile fixed at compile time,
/// one team per column segment.
///
/// Columns run along z in 3D (y in 2D); the tile spans x and y (x in 2D). A team has one thread
/// per cell of the tile and of its one-cell ring (the neighbouring columns): (TX + 2)(TY + 2)
/// threads in 3D (host backends: one thread owns all of them). For each layer k of its segment,
/// bottom to top, plus one layer below and one above: (A) every thread rebuilds the
/// post-collision populations of its cell from the stored moments; the ones that move across the
/// column (c_x or c_y nonzero) go to team scratch, the others (rest, +-z) of tile cells straight
/// into the thread's running sums; the moments of layer k + 1 are loaded meanwhile. (B) After one
/// team barrier each tile thread adds the populations arriving from the scratch plane. Three
/// running sums per cell (layers k-1, k, k+1) collect what arrives from layers k, k-1 and k-2 in
/// turn, so layer k-1 is complete after step k: it is collided in moment space and written. The
/// layer loop is unrolled three times so the sums rotate by renaming, not by copies. Two scratch
/// planes alternate, so one barrier a layer suffices (one plane and two barriers where two exceed
/// the team scratch limit). Reads and writes go to two moment arrays: a layer's moments are read
/// by the neighbouring columns and segments too, which other teams update at their own pace.
///
/// With the tile fixed at compile time every scratch access is a constant offset from one
/// per-thread base, and the moment arrays are reached through one pointer a cell and constant
/// slot strides (docs/performance.md: the run-time tile spent most of its instructions on
/// addresses).
///
/// Boundaries are pushed like the in-place scheme's: a population whose downwind cell is solid
/// or across a non-periodic face comes back to its own cell (Boundary::reflect), added to that
/// cell's running sum; a solid or missing upwind cell contributes zero. The results equal the
/// population form with the same operator to round-off.
template <class L, class R, class C, int TX, int TY>
struct MomentKernel {
  using Team = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  static constexpr int M = MomentSlots<L>::M;
  // axes: tile a, tile b, march m
  static constexpr int ta = 0, tb = L::D == 3 ? 1 : 2, ma = L::D == 3 ? 2 : 1;
  static constexpr int RB = L::D == 3 ? 1 : 0;  ///< ring width along tile axis b
  static constexpr int PX = TX + 2, PY = TY + 2 * RB, NP = PX * PY;
  static constexpr int CPT = kHostMemory ? NP : 1;  ///< positions a thread
  static constexpr int T = NP / CPT;          ///< threads a team

  /// Populations that cross the column (kept in scratch), numbered in direction order.
  KOKKOS_INLINE_FUNCTION static constexpr bool cross(int q) { return L::c(q, ta) != 0 || (RB && L::c(q, tb) != 0); }
  KOKKOS_INLINE_FUNCTION static constexpr int cross_slot(int q) {
    int s = 0;
    for (int k = 0; k < q; ++k) s += cross(k) ? 1 : 0;
    return s;
  }
  static constexpr int CROSS = cross_slot(L::Q);
  /// Scratch offset, within its slot, of the population q that a cell receives (from the
  /// position - c_q across the tile).
  KOKKOS_INLINE_FUNCTION static constexpr int arrival(int q) { return -L::c(q, ta) - (RB ? L::c(q, tb) * PX : 0); }
  /// The tile axis a crossing population is paired across: a, or b where c_a = 0.
  KOKKOS_INLINE_FUNCTION static constexpr int pair_axis(int q) { return L::c(q, ta) != 0 ? ta : tb; }
  /// The direction q with c_axis negated.
  KOKKOS_INLINE_FUNCTION static constexpr int mirror(int q, int axis) {
    for (int k = 0; k < L::Q; ++k) {
      bool same = true;
      for (int d = 0; d < 3; ++d) same = same && L::c(k, d) == (d == axis ? -L::c(q, d) : L::c(q, d));
      if (same) return k;
    }
    return -1;
  }
  /// Projective regularization: populations linear in the stored moments, so a missing source
  /// is zeroed in its 6 or 10 moments, not in its Q populations.
  static constexpr bool kLinear = std::is_same_v<C, RegularizedBgk<L, R>>;

  const R* src;
  R* dst;
  Index cells;
  C op;
  Boundary<L, R> bc;
  int segment, planes;
  bool forced;  ///< a body force: the collision without force terms otherwise

  KOKKOS_INLINE_FUNCTION static std::size_t scratch_values(int planes) { return std::size_t(planes) * CROSS * NP; }
  static std::size_t scratch_bytes(int planes) {
    return Kokkos::View<R*, typename ExecSpace::scratch_memory_space>::shmem_size(scratch_values(planes));
  }
  KOKKOS_INLINE_FUNCTION int size(int axis) const { return axis == 0 ? bc.nx : axis == 1 ? bc.ny : bc.nz; }
  KOKKOS_INLINE_FUNCTION int segment_length() const { return segment > 0 && segment < size(ma) ? segment : size(ma); }
  int segments() const { return (size(ma) + segment_length() - 1) / segment_length(); }
  int league() const { return ((size(ta) + TX - 1) / TX) * ((size(tb) + TY - 1) / TY) * segments(); }
  /// True where the box side (axis, 0 low / 1 high) wraps: a periodic face, or a rank's ghost
  /// side (an open connection, whose faces differ on the two sides of a rank's box).
  KOKKOS_INLINE_FUNCTION bool periodic(int axis, int side) const {
    return bc.faces.type[2 * axis + side] == static_cast<int>(FaceType::Periodic);
  }
  /// Coordinate along `axis` one step at most outside the box, wrapped where periodic; -1
  /// outside a non-periodic box side.
  KOKKOS_INLINE_FUNCTION int wrap(int v, int axis) const {
    const int n = size(axis);
    if (v < 0) return periodic(axis, 0) ? v + n : -1;
    if (v >= n) return periodic(axis, 1) ? v - n : -1;
    return v;
  }

  /// The stored moments and flag of a cell (n < 0: none). Loaded without a branch on the flag,
  /// so the loads of the next layer are all in flight while this one is processed.
  struct Source {
    R m[M];
    Index n;
    Flag flag;
    KOKKOS_INLINE_FUNCTION bool fluid() const { return n >= 0 && flag != kSolid; }
  };
  KOKKOS_FORCEINLINE_FUNCTION void fetch(Index n, Source& s) const {
    s.n = n;
    const Index safe = n >= 0 ? n : 0;
    s.flag = bc.flags(safe);
    MomentSlots<L>::load(src + safe, cells, s.m);
  }

  /// The populations cell n (fluid, next to a wall, solid or face) reflects into itself.
  KOKKOS_INLINE_FUNCTION void reflect(Index n, const R (&f)[L::Q], MomentSum<R>& into) const {
    const int x = int(n % bc.nx), y = int((n / bc.nx) % bc.ny), z = int(n / (Index(bc.nx) * bc.ny));
    R u[3] = {R(0), R(0), R(0)};
    bool have_u = false;
    KOLIBRI_UNROLL
    for (int q = 1; q < L::Q; ++q) {
      int face;
      const Index m = bc.neighbour(x, y, z, q, +1, face);
      if (m >= 0 && bc.flags(m) != kSolid) continue;
      if (bc.is_outlet(face) && !have_u) {
        bc.velocity(f, u);
        have_u = true;
      }
      into.template add<L>(L::opposite(q), bc.reflect(L::opposite(q), face, f[q], u));
    }
  }

  /// The cell of a column in a layer; -1 where either is -1 (none).
  KOKKOS_INLINE_FUNCTION static Index cell(Index col, int layer, Index step) {
    return layer >= 0 && col >= 0 ? col + layer * step : Index(-1);
  }

  /// What one team keeps from layer to layer, per position.
  struct State {
    MomentSum<R> acc[CPT][3];  // running sums, rotated by the unrolled loop
    Source next[CPT];          // the next layer's moments, in flight
    Index col[CPT];            // the position's column (layer 0), -1 outside the box
    bool own[CPT];             // a tile cell (not ring, inside the box)
    Flag done[CPT], last[CPT]; // own flags of layers k and k - 1
  };

  /// Layer k: rebuild and stream layer k, complete and write layer k - 1. Running sums I0, I1,
  /// I2 hold layers k - 1, k, k + 1.
  template <int I0, int I1, int I2>
  KOKKOS_FORCEINLINE_FUNCTION void layer(const Team& team, R* scratch, State& st, int k, int m0, int m1,
                                         Index step) const {
    const int here = wrap(k, ma), after = k < m1 ? wrap(k + 1, ma) : -1;
    R* plane = scratch + (planes == 2 ? (k & 1) : 0) * (CROSS * NP);
    const int t = team.team_rank();
    if (here >= 0) {
      for (int c = 0; c < CPT; ++c) {  // (A)
        const int p = t + c * T;
        Source cur = st.next[c];
        R f[L::Q];
        const bool source = cur.fluid();
        if constexpr (kLinear) {
          KOLIBRI_UNROLL
          for (int j = 0; j < M; ++j) cur.m[j] = source ? cur.m[j] : R(0);
          MomentSlots<L>::departing(cur.m, op, bc.force, f);
        } else {
          MomentSlots<L>::departing(cur.m, op, bc.force, f);
          KOLIBRI_UNROLL
          for (int q = 0; q < L::Q; ++q) f[q] = source ? f[q] : R(0);
        }
        // The slot counts up in the unrolled loop, so it is a constant in every store
        // (cross_slot(q) called with an unrolled loop's index ran as a loop: 57% of the kernel's
        // instructions; static_for here, as in the gather, measured 1-2% slower). The ring rows
        // along b (whole warps on GPUs: PX = 32) store only what enters the tile, and the
        // compiler drops the other populations' arithmetic.
        const int row = RB ? p / PX : 1, side = row == 0 ? 1 : row == PY - 1 ? -1 : 0;
        int slot = 0;
        KOLIBRI_UNROLL
        for (int q = 0; q < L::Q; ++q)
          if (cross(q)) {
            if (side == 0 || L::c(q, tb) == side) plane[slot * NP + p] = f[q];
            ++slot;
          }
        // the next layer's moments, loading while this layer is summed and collided (loaded
        // before the rebuild, both layers' moments are live at once: 128 registers, 5% slower)
        fetch(cell(st.col[c], after, step), st.next[c]);
        if (!st.own[c]) continue;
        KOLIBRI_UNROLL
        for (int q = 0; q < L::Q; ++q)
          if (!cross(q)) {
            const int cm = L::c(q, ma);
            (cm < 0 ? st.acc[c][I0] : cm == 0 ? st.acc[c][I1] : st.acc[c][I2]).template add<L>(q, f[q]);
          }
        if (source && cur.flag == kBoundaryFluid) reflect(cur.n, f, st.acc[c][I1]);
        st.done[c] = cur.flag;
      }
    } else {
      for (int c = 0; c < CPT; ++c) fetch(cell(st.col[c], after, step), st.next[c]);
    }
    team.team_barrier();
    if (here >= 0) {
      for (int c = 0; c < CPT; ++c) {  // (B) arrivals across the column
        if (!st.own[c]) continue;
        const R* from = plane + (t + c * T);
        // crossing populations in mirror pairs (same layer, c_a or c_b negated)
        static_for<L::Q>([&](auto qc) {
          constexpr int q = decltype(qc)::value, axis = pair_axis(q);
          if constexpr (cross(q) && L::c(q, axis) > 0) {
            constexpr int qm = mirror(q, axis), cm = L::c(q, ma);
            static_assert(qm >= 0 && cross(qm), "a crossing direction's mirror crosses too");
            MomentSum<R>& into = cm < 0 ? st.acc[c][I0] : cm == 0 ? st.acc[c][I1] : st.acc[c][I2];
            into.template add_pair<L>(q, axis, from[cross_slot(q) * NP + arrival(q)], from[cross_slot(qm) * NP + arrival(qm)]);
          }
        });
      }
    }
    if (planes == 1) team.team_barrier();  // the plane is rewritten next
    for (int c = 0; c < CPT; ++c) {
      if (k - 1 >= m0 && st.own[c] && is_updated(st.last[c])) {  // layer k - 1 is complete
        const MomentSum<R>& s = st.acc[c][I0];
        RegularizedMoments<L, R> post;
        const R none[3] = {R(0), R(0), R(0)};
        if (forced) post.collide(s.rho, s.j, s.pi, bc.force, op.omega);
        else post.collide(s.rho, s.j, s.pi, none, op.omega);
        MomentSlots<L>::store(dst + (st.col[c] + (k - 1) * step), cells, post.rho, post.js, post.A);
      }
      st.last[c] = st.done[c];
      st.acc[c][I0].clear();
    }
  }

  KOKKOS_INLINE_FUNCTION void operator()(const Team& team) const {
    R* scratch = static_cast<R*>(team.team_scratch(0).get_shmem(scratch_values(planes) * sizeof(R)));
    const int na = size(ta), nb = size(tb), nm = size(ma);
    const int tiles_a = (na + TX - 1) / TX, tiles_b = (nb + TY - 1) / TY;
    const int tile = team.league_rank() % (tiles_a * tiles_b), seg = team.league_rank() / (tiles_a * tiles_b);
    const int a0 = (tile % tiles_a) * TX, b0 = (tile / tiles_a) * TY;
    const int len = segment_length();
    const int m0 = seg * len, m1 = m0 + len < nm ? m0 + len : nm;  // layers written: [m0, m1)
    const Index step = ma == 2 ? Index(bc.nx) * bc.ny : Index(bc.nx);
    const int t = team.team_rank();
    State st;
    for (int c = 0; c < CPT; ++c) {
      const int p = t + c * T, pa = p % PX, pb = p / PX;
      const int a = a0 + pa - 1, b = RB ? b0 + pb - RB : b0;
      st.own[c] = pa >= 1 && pa <= TX && pb >= RB && pb < RB + TY && a < na && b < nb;
      // Positions past the box hold the wrapped cells there (periodic axes), read by the last
      // cells of the box; a tile owns none of them.
      const int wa = wrap(a, ta), wb = RB ? wrap(b, tb) : b;
      int xyz[3] = {0, 0, 0};
      xyz[ta] = wa, xyz[tb] = wb;
      st.col[c] = wa >= 0 && wb >= 0 ? xyz[0] + Index(bc.nx) * (xyz[1] + Index(bc.ny) * xyz[2]) : Index(-1);
      for (int l = 0; l < 3; ++l) st.acc[c][l].clear();
      st.done[c] = st.last[c] = kSolid;
      fetch(cell(st.col[c], wrap(m0 - 1, ma), step), st.next[c]);
    }
    for (int k = m0 - 1;; k += 3) {
      layer<0, 1, 2>(team, scratch, st, k, m0, m1, step);
      if (k + 1 > m1) break;
      layer<1, 2, 0>(team, scratch, st, k + 1, m0, m1, step);
      if (k + 2 > m1) break;
      layer<2, 0, 1>(team, scratch, st, k + 2, m0, m1, step);
      if (k + 3 > m1) break;
    }
  }

  void run(const ExecSpace& ex) const {
    // FP32 teams of 256 threads: registers capped at 128 for two teams an SM (118 used, no
    // spills). Three teams (80 registers) spill 400 bytes and run at half the speed
    // (docs/performance.md). FP64 is left to the compiler.
    if constexpr (!kHostMemory && sizeof(R) == 4 && T == 256) {
      Kokkos::TeamPolicy<ExecSpace, Kokkos::LaunchBounds<256, 2>> policy(ex, league(), T);
      Kokkos::parallel_for("kolibri::moment_step", policy.set_scratch_size(0, Kokkos::PerTeam(scratch_bytes(planes))), *this);
    } else {
      Kokkos::TeamPolicy<ExecSpace> policy(ex, league(), T);
      Kokkos::parallel_for("kolibri::moment_step", policy.set_scratch_size(0, Kokkos::PerTeam(scratch_bytes(planes))), *this);
    }
  }
};

/// \brief One time step of the moment representation: the run-time tile, segment and scratch
/// planes, dispatched to the MomentKernel compiled for the tile.
template <class L, class R, class C>
struct MomentStep {
  using Tiles = MomentTiles<L::D, kHostMemory>;

  Kokkos::View<const R*, MemSpace> src;
  Kokkos::View<R*, MemSpace> dst;
  SoA idx;
  C op;
  Boundary<L, R> bc;
  int tx, ty, segment = 0, planes = 2;

  template <int I>
  using Kernel = MomentKernel<L, R, C, Tiles::tx(I), Tiles::ty(I)>;

  /// Calls f(std::integral_constant<int, I>) for the compiled tile I that is tx x ty; false
  /// where none is.
  template <class F>
  static bool with_tile(int tx, int ty, F&& f) {
    return [&]<int... I>(std::integer_sequence<int, I...>) {
      return ((tx == Tiles::tx(I) && ty == Tiles::ty(I) ? (f(std::integral_constant<int, I>{}), true) : false) || ...);
    }(std::make_integer_sequence<int, Tiles::count>{});
  }
  static std::string not_compiled(int tx, int ty) {
    return "moment tile " + std::to_string(tx) + "x" + std::to_string(ty) + ": not compiled; expected one of " + Tiles::list();
  }
  /// The largest team scratch a launch may ask for on this backend.
  static std::size_t scratch_limit() { return Kokkos::TeamPolicy<ExecSpace>::scratch_size_max(0); }
  /// Team scratch of the compiled tile tx x ty (0: none compiled).
  static std::size_t scratch_bytes(int tx, int ty, int planes) {
    std::size_t bytes = 0;
    with_tile(tx, ty, [&](auto i) { bytes = Kernel<decltype(i)::value>::scratch_bytes(planes); });
    return bytes;
  }
  /// `want` (the fixed tile on hosts), with two scratch planes where they fit, else one; else
  /// the next compiled tile that fits. A tile not compiled is refused with the list.
  static MomentTile fit(MomentTile want) {
    if (kHostMemory) want.tx = Tiles::tx(0), want.ty = Tiles::ty(0);
    int first = -1;
    for (int i = 0; i < Tiles::count; ++i)
      if (Tiles::tx(i) == want.tx && Tiles::ty(i) == want.ty) first = i;
    if (first < 0) throw std::invalid_argument(not_compiled(want.tx, want.ty));
    for (int i = first; i < Tiles::count; ++i)
      for (int p = 2; p >= 1; --p)
        if (scratch_bytes(Tiles::tx(i), Tiles::ty(i), p) <= scratch_limit()) return {Tiles::tx(i), Tiles::ty(i), want.segment, p};
    throw std::runtime_error("moment representation: no compiled tile (" + Tiles::list() + ") fits the team scratch memory");
  }

  /// Launch over all column segments.
  void run(const ExecSpace& ex = ExecSpace()) const {
    if (scratch_bytes(tx, ty, planes) > scratch_limit())
      throw std::invalid_argument("moment tile " + std::to_string(tx) + "x" + std::to_string(ty) + " needs " +
                                  std::to_string(scratch_bytes(tx, ty, planes)) +
                                  " bytes of team scratch, over the limit of " + std::to_string(scratch_limit()));
    const bool forced = bc.force[0] != R(0) || bc.force[1] != R(0) || bc.force[2] != R(0);
    if (!with_tile(tx, ty, [&](auto i) {
          Kernel<decltype(i)::value>{src.data(), dst.data(), idx.cells, op, bc, segment, planes, forced}.run(ex);
        }))
      throw std::invalid_argument(not_compiled(tx, ty));
  }
};

/// \brief Equilibrium initialisation as a stored post-collision moment state
/// (RegularizedMoments::equilibrium, as the population form's InitEquilibrium).
template <class L, class R>
struct InitMoments {
  Kokkos::View<R*, MemSpace> m;
  Kokkos::View<const double*, MemSpace> rho;
  Kokkos::View<const double* [3], MemSpace> u;
  SoA idx;
  R force[3];
  R omega;

  KOKKOS_INLINE_FUNCTION void operator()(const Index n) const {
    const Index k = rho.extent(0) == 1 ? 0 : n;
    const R u0[3] = {R(u(k, 0)), R(u(k, 1)), R(u(k, 2))};
    RegularizedMoments<L, R> s;
    s.equilibrium(R(rho(k)), u0, force, omega);
    MomentSlots<L>::store(m.data() + n, idx.cells, s.rho, s.js, s.A);
  }};

}  // namespace kolibri
