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
  template <class V, class R>
  KOKKOS_INLINE_FUNCTION static void load(const V& v, const SoA& idx, Index n, R (&m)[M]) {
    KOLIBRI_UNROLL
    for (int k = 0; k < M; ++k) m[k] = R(v(idx(n, k)));
  }
  template <class V, class R>
  KOKKOS_INLINE_FUNCTION static void store(const V& m, const SoA& idx, Index n, R rho, const R (&js)[3],
                                           const R (&A)[6]) {
    m(idx(n, 0)) = rho;
    KOLIBRI_UNROLL
    for (int d = 0; d < L::D; ++d) m(idx(n, 1 + d)) = js[d];
    KOLIBRI_UNROLL
    for (int k = 0; k < M - 1 - L::D; ++k) m(idx(n, 1 + L::D + k)) = A[a_component(k)];
  }
};

/// \brief Raw moments of arriving populations: rho = sum f, j = sum c f, pi = sum cc f.
template <class R>
struct MomentSum {
  R rho, j[3], pi[6];
  KOKKOS_INLINE_FUNCTION void clear() {
    rho = R(0);
    for (int d = 0; d < 3; ++d) j[d] = R(0);
    for (int k = 0; k < 6; ++k) pi[k] = R(0);
  }
  /// Add population q (compile-time q folds the velocity components away).
  template <class L>
  KOKKOS_INLINE_FUNCTION void add(int q, R f) {
    const int cx = L::c(q, 0), cy = L::c(q, 1), cz = L::c(q, 2);
    rho += f;
    if (cx) j[0] += R(cx) * f;
    if (cy) j[1] += R(cy) * f;
    if (cz) j[2] += R(cz) * f;
    if (cx) pi[0] += f;
    if (cy) pi[1] += f;
    if (cz) pi[2] += f;
    if (cx && cy) pi[3] += R(cx * cy) * f;
    if (cx && cz) pi[4] += R(cx * cz) * f;
    if (cy && cz) pi[5] += R(cy * cz) * f;
  }
};

/// \brief Shape of the moment kernel's teams: TX x TY cells across the columns (TY = 1 in 2D),
/// columns cut into segments of `segment` layers (0: whole columns), scratch planes.
struct MomentTile {
  int tx = 30, ty = 6;
  int segment = 64;
  int planes = 2;  ///< scratch planes: 2 alternate (one barrier a layer), 1 where 2 do not fit
};

/// \brief One time step of the moment representation, one team per column segment of TX x TY
/// cells.
///
/// Columns run along z in 3D (y in 2D); the tile spans x and y (x in 2D). A team has one thread
/// per cell of the tile and of its one-cell ring (the neighbouring columns): (TX + 2)(TY + 2)
/// threads in 3D. For each layer k of its segment, bottom to top, plus one layer below and one
/// above: (A) every thread rebuilds the post-collision populations of its cell from the stored
/// moments; the ones that move across the column (c_x or c_y nonzero) go to team scratch, the
/// others (rest, +-z) of tile cells straight into the thread's running sums; the moments of
/// layer k + 1 are loaded meanwhile. (B) After one team barrier each tile thread adds the
/// populations arriving from the scratch plane. Three running sums per cell (layers k-1, k,
/// k+1) collect what arrives from layers k, k-1 and k-2 in turn, so layer k-1 is complete after
/// step k: it is collided in moment space and written. Two scratch planes alternate, so one
/// barrier a layer suffices (one plane and two barriers where two exceed the team scratch
/// limit). Reads and writes go to two moment arrays: a layer's moments are read by the
/// neighbouring columns and segments too, which other teams update at their own pace.
///
/// Boundaries are pushed like the in-place scheme's: a population whose downwind cell is solid
/// or across a non-periodic face comes back to its own cell (Boundary::reflect), added to that
/// cell's running sum; a solid or missing upwind cell contributes zero. The results equal the
/// population form with the same operator to round-off.
template <class L, class R, class C>
struct MomentStep {
  using Team = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  using Scratch = Kokkos::View<R*, typename ExecSpace::scratch_memory_space, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
  static constexpr int M = MomentSlots<L>::M;
  // axes: tile a, tile b, march m
  static constexpr int ta = 0, tb = L::D == 3 ? 1 : 2, ma = L::D == 3 ? 2 : 1;
  static constexpr int RB = L::D == 3 ? 1 : 0;  ///< ring width along tile axis b
  /// Host backends run one thread a team, which owns every position of a fixed tile (8 x 8 in
  /// 3D, 64 x 1 in 2D); GPUs one position a thread.
  static constexpr bool kHost = std::is_same_v<MemSpace, Kokkos::HostSpace>;
  static constexpr int kHostTx = L::D == 3 ? 8 : 64, kHostTy = L::D == 3 ? 8 : 1;
  static constexpr int CPT = kHost ? (kHostTx + 2) * (kHostTy + 2 * RB) : 1;

  Kokkos::View<const R*, MemSpace> src;
  Kokkos::View<R*, MemSpace> dst;
  SoA idx;
  C op;
  Boundary<L, R> bc;
  int tx, ty, segment = 0, planes = 2;

  /// Populations that cross the column (kept in scratch), numbered in direction order.
  KOKKOS_INLINE_FUNCTION static constexpr bool cross(int q) { return L::c(q, ta) != 0 || (RB && L::c(q, tb) != 0); }
  KOKKOS_INLINE_FUNCTION static constexpr int cross_slot(int q) {
    int s = 0;
    for (int k = 0; k < q; ++k) s += cross(k) ? 1 : 0;
    return s;
  }
  KOKKOS_INLINE_FUNCTION static constexpr int crossing() { return cross_slot(L::Q); }

  KOKKOS_INLINE_FUNCTION int px() const { return tx + 2; }
  KOKKOS_INLINE_FUNCTION int py() const { return ty + 2 * RB; }
  KOKKOS_INLINE_FUNCTION std::size_t scratch_values() const { return std::size_t(planes) * crossing() * px() * py(); }
  std::size_t scratch_bytes() const { return Scratch::shmem_size(scratch_values()); }
  /// The largest team scratch a launch may ask for on this backend.
  static std::size_t scratch_limit() { return Kokkos::TeamPolicy<ExecSpace>::scratch_size_max(0); }
  /// `want` (the fixed tile on hosts), or the nearest tile that fits the scratch limit: two
  /// planes, else one, else a thinner tile (ty, then tx halved).
  static MomentTile fit(MomentTile want) {
    if (kHost) want.tx = kHostTx, want.ty = kHostTy;
    for (;;) {
      for (int p = 2; p >= 1; --p) {
        MomentStep k{};
        k.tx = want.tx, k.ty = want.ty, k.planes = p;
        if (k.scratch_bytes() <= scratch_limit()) return {want.tx, want.ty, want.segment, p};
      }
      if (kHost) throw std::runtime_error("moment representation: the host tile exceeds the team scratch memory");
      if (want.ty > 1) want.ty /= 2;
      else if (want.tx > 1) want.tx /= 2;
      else throw std::runtime_error("moment representation: no tile fits the team scratch memory");
    }
  }
  int team_size() const { return px() * py() / CPT; }
  KOKKOS_INLINE_FUNCTION int size(int axis) const { return axis == 0 ? bc.nx : axis == 1 ? bc.ny : bc.nz; }
  KOKKOS_INLINE_FUNCTION int segment_length() const { return segment > 0 && segment < size(ma) ? segment : size(ma); }
  int segments() const { return (size(ma) + segment_length() - 1) / segment_length(); }
  int league() const { return ((size(ta) + tx - 1) / tx) * ((size(tb) + ty - 1) / ty) * segments(); }
  /// True where the box side (axis, 0 low / 1 high) wraps: a periodic face, or a rank's ghost
  /// side (an open connection, whose faces differ on the two sides of a rank's box).
  KOKKOS_INLINE_FUNCTION bool periodic(int axis, int side) const {
    return bc.faces.type[2 * axis + side] == static_cast<int>(FaceType::Periodic);
  }
  /// Cell (a, b) of layer 0 (a column's base index); layer m adds m * stride().
  KOKKOS_INLINE_FUNCTION Index column(int a, int b) const {
    int p[3];
    p[ta] = a, p[tb] = b, p[ma] = 0;
    return p[0] + Index(bc.nx) * (p[1] + Index(bc.ny) * p[2]);
  }
  KOKKOS_INLINE_FUNCTION Index stride() const { return ma == 2 ? Index(bc.nx) * bc.ny : Index(bc.nx); }
  /// Coordinate along `axis`, wrapped where periodic; -1 outside a non-periodic box side.
  KOKKOS_INLINE_FUNCTION int wrap(int v, int axis) const {
    const int n = size(axis);
    if (v >= 0 && v < n) return v;
    if (!periodic(axis, v < 0 ? 0 : 1)) return -1;
    return ((v % n) + n) % n;
  }

  /// The stored moments and flag of cell n (n < 0: none). Loaded without a branch on the flag,
  /// so the loads of the next layer are all in flight while this one is processed.
  struct Source {
    R m[M];
    Index n;
    Flag flag;
    KOKKOS_INLINE_FUNCTION bool fluid() const { return n >= 0 && flag != kSolid; }
  };
  KOKKOS_INLINE_FUNCTION void fetch(Index n, Source& s) const {
    s.n = n;
    const Index safe = n >= 0 ? n : 0;
    s.flag = bc.flags(safe);
    MomentSlots<L>::load(src, idx, safe, s.m);
  }
  /// Post-collision populations of a source into scratch position pos (zeros for no source).
  KOKKOS_INLINE_FUNCTION void put(const Scratch& s, int plane, int pos, const Source& from, R (&f)[L::Q]) const {
    const int np = px() * py();
    if (from.fluid()) {
      MomentSlots<L>::departing(from.m, op, bc.force, f);
    } else {
      KOLIBRI_UNROLL
      for (int q = 0; q < L::Q; ++q) f[q] = R(0);
    }
    KOLIBRI_UNROLL
    for (int q = 0; q < L::Q; ++q)
      if (cross(q)) s((plane * crossing() + cross_slot(q)) * np + pos) = f[q];
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

  KOKKOS_INLINE_FUNCTION void operator()(const Team& team) const {
    const Scratch s(team.team_scratch(0), scratch_values());
    const int na = size(ta), nb = size(tb), nm = size(ma);
    const int tiles_a = (na + tx - 1) / tx, tiles_b = (nb + ty - 1) / ty;
    const int tile = team.league_rank() % (tiles_a * tiles_b), seg = team.league_rank() / (tiles_a * tiles_b);
    const int a0 = (tile % tiles_a) * tx, b0 = (tile / tiles_a) * ty;
    const int len = segment_length();
    const int m0 = seg * len, m1 = m0 + len < nm ? m0 + len : nm;  // layers written: [m0, m1)
    const Index step = stride();
    const int t = team.team_rank(), T = team.team_size();
    const int np = px() * py();
    MomentSum<R> acc[CPT][3];  // layers k-1, k, k+1
    Source next[CPT];
    Index col[CPT];  // the position's column (layer 0), -1 outside the box
    bool own[CPT];
    Flag done[CPT], last[CPT];  // flags of layers k - 1 (own positions, from the fetch)
    for (int c = 0; c < CPT; ++c) {
      const int p = t + c * T, pa = p % px(), pb = p / px();
      const int a = a0 + pa - 1, b = RB ? b0 + pb - RB : b0;
      own[c] = pa >= 1 && pa <= tx && pb >= RB && pb < RB + ty && a < na && b < nb;
      // Positions past the box hold the wrapped cells there (periodic axes), read by the last
      // cells of the box; a tile owns none of them.
      const int wa = wrap(a, ta), wb = RB ? wrap(b, tb) : b;
      col[c] = wa >= 0 && wb >= 0 ? column(wa, wb) : Index(-1);
      for (int l = 0; l < 3; ++l) acc[c][l].clear();
      done[c] = last[c] = kSolid;
    }
    // Cell of position c in a layer (-1: none there).
    auto at = [&](int c, int layer) { return layer >= 0 && col[c] >= 0 ? col[c] + layer * step : Index(-1); };
    for (int c = 0; c < CPT; ++c) fetch(at(c, wrap(m0 - 1, ma)), next[c]);
    R f[L::Q];
    for (int k = m0 - 1; k <= m1; ++k) {
      const int plane = planes == 2 ? k & 1 : 0;
      const int layer = wrap(k, ma), after = k < m1 ? wrap(k + 1, ma) : -1;
      if (layer >= 0) {
        for (int c = 0; c < CPT; ++c) {  // (A)
          const int p = t + c * T;
          const Source cur = next[c];
          // the next layer's moments, loading while this one is rebuilt and streamed
          fetch(at(c, after), next[c]);
          put(s, plane, p, cur, f);
          if (!own[c]) continue;
          KOLIBRI_UNROLL
          for (int q = 0; q < L::Q; ++q)
            if (!cross(q)) acc[c][1 + L::c(q, ma)].template add<L>(q, f[q]);
          if (cur.n >= 0 && cur.flag == kBoundaryFluid) reflect(cur.n, f, acc[c][1]);
          done[c] = cur.flag;
        }
      } else {
        for (int c = 0; c < CPT; ++c) fetch(at(c, after), next[c]);
      }
      team.team_barrier();
      if (layer >= 0) {
        for (int c = 0; c < CPT; ++c) {  // (B) arrivals across the column
          if (!own[c]) continue;
          const int pos = t + c * T;
          KOLIBRI_UNROLL
          for (int q = 0; q < L::Q; ++q)
            if (cross(q)) {
              const int from = pos - L::c(q, ta) - (RB ? L::c(q, tb) * px() : 0);
              acc[c][1 + L::c(q, ma)].template add<L>(q, s((plane * crossing() + cross_slot(q)) * np + from));
            }
        }
      }
      if (planes == 1) team.team_barrier();  // the plane is rewritten next
      if (k - 1 >= m0) {  // layer k - 1 is complete: collide and write
        for (int c = 0; c < CPT; ++c) {
          if (!own[c]) continue;
          if (is_updated(last[c])) {
            const Index n = col[c] + (k - 1) * step;
            RegularizedMoments<L, R> post;
            const MomentSum<R>& m = acc[c][0];
            post.collide(m.rho, m.j, m.pi, bc.force, op.omega);
            MomentSlots<L>::store(dst, idx, n, post.rho, post.js, post.A);
          }
        }
      }
      for (int c = 0; c < CPT; ++c) {
        last[c] = done[c];
        acc[c][0] = acc[c][1];
        acc[c][1] = acc[c][2];
        acc[c][2].clear();
      }
    }
  }

  /// Launch over all column segments.
  void run(const ExecSpace& ex = ExecSpace()) const {
    if (team_size() < 1 || px() * py() != team_size() * CPT)
      throw std::invalid_argument("moment tile " + std::to_string(tx) + "x" + std::to_string(ty) + ": expected " +
                                  std::to_string(CPT) + " cells a thread");
    if (scratch_bytes() > scratch_limit())
      throw std::invalid_argument("moment tile " + std::to_string(tx) + "x" + std::to_string(ty) + " needs " +
                                  std::to_string(scratch_bytes()) + " bytes of team scratch, over the limit of " +
                                  std::to_string(scratch_limit()));
    // FP32 teams of up to 256 threads: registers capped for three teams an SM (80 instead of
    // 128 registers, a few bytes spilled): +7% on the H100 (docs/performance.md). FP64 would
    // spill hundreds of bytes.
    if (!kHost && sizeof(R) == 4 && team_size() <= 256) {
      Kokkos::TeamPolicy<ExecSpace, Kokkos::LaunchBounds<256, 3>> policy(ex, league(), team_size());
      Kokkos::parallel_for("kolibri::moment_step", policy.set_scratch_size(0, Kokkos::PerTeam(scratch_bytes())), *this);
      return;
    }
    Kokkos::TeamPolicy<ExecSpace> policy(ex, league(), team_size());
    Kokkos::parallel_for("kolibri::moment_step", policy.set_scratch_size(0, Kokkos::PerTeam(scratch_bytes())), *this);
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
    MomentSlots<L>::store(m, idx, n, s.rho, s.js, s.A);
  }};

}  // namespace kolibri
