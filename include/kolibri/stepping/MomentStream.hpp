// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The moment representation of the regularized LBM (valero-lara): only the post-
/// collision moments (rho, j*, A*: 6 values a cell in 2D, 10 in 3D) live in memory between
/// steps. One kernel per step reads them, rebuilds the post-collision populations, streams them
/// through team scratch memory in a window sliding along columns, accumulates the arriving
/// moments, collides in moment space and writes the new moments.
#pragma once

#include <kolibri/stepping/StreamCollide.hpp>

#include <type_traits>

namespace kolibri {

/// \brief Which moments are stored and where: slot 0 rho, then j* (D values), then A* (xx yy xy in
/// 2D; xx yy zz xy xz yz in 3D). Slot k of cell n at k * cells + n (SoA).
template <class L>
struct MomentSlots {
  static constexpr int M = L::D == 2 ? 6 : 10;
  /// A* component (xx yy zz xy xz yz) of slot 1 + D + k.
  KOKKOS_INLINE_FUNCTION static constexpr int a_component(int k) { return L::D == 2 ? (k == 2 ? 3 : k) : k; }

  template <class V, class R>
  KOKKOS_INLINE_FUNCTION static void load(const V& m, const SoA& idx, Index n, R& rho, R (&js)[3], R (&A)[6]) {
    rho = R(m(idx(n, 0)));
    for (int d = 0; d < 3; ++d) js[d] = d < L::D ? R(m(idx(n, 1 + d))) : R(0);
    for (int k = 0; k < 6; ++k) A[k] = R(0);
    KOLIBRI_UNROLL
    for (int k = 0; k < M - 1 - L::D; ++k) A[a_component(k)] = R(m(idx(n, 1 + L::D + k)));
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

/// \brief The post-collision populations of a stored moment state (C: RegularizedBgk or
/// RecursiveRegularizedBgk, whose `project` maps a collided state to populations).
template <class L, class C, class V, class R>
KOKKOS_INLINE_FUNCTION void departing_populations(const V& m, const SoA& idx, Index n, const C& op,
                                                  const R (&F)[3], R (&f)[L::Q]) {
  R rho, js[3], A[6];
  MomentSlots<L>::load(m, idx, n, rho, js, A);
  RegularizedMoments<L, R> s;
  s.post(rho, js, A, F, op.omega);
  C::project(s, f);
}

/// \brief Tile shape of the moment kernel: TX x TY cells across the columns (TY = 1 in 2D), and
/// how many cells each team thread owns (1 on GPUs; the whole tile with one thread on hosts).
struct MomentTile {
  int tx = 32, ty = 4;
};

/// \brief One time step of the moment representation, one team per column of TX x TY cells.
///
/// Columns run along z in 3D (y in 2D); the tile spans x and y (x in 2D). For each layer k of
/// the column, bottom to top, with one layer before and after where the column axis is periodic:
/// (A) every cell of the tile and of its one-cell ring (the neighbouring columns) rebuilds its
/// post-collision populations from its stored moments; the ones that move across the column
/// (c_x or c_y nonzero) go to team scratch, the others (rest, +-z) straight into the owning
/// thread's running sums; (B) after one team barrier each thread adds the populations arriving
/// from the scratch plane. Three running sums per cell (layers k-1, k, k+1) collect what
/// arrives from layers k, k-1 and k-2 in turn, so layer k-1 is complete after step k: it is
/// collided in moment space and written. Two scratch planes alternate, so one barrier a layer
/// suffices. Reads and writes go to two moment arrays: a layer's moments are read by the
/// neighbouring columns too, which other teams update at their own pace.
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
  /// Cells per thread: one on GPUs; on host backends (one thread a team) the whole tile.
  static constexpr int kHostTile = 128;
  static constexpr int CPT = std::is_same_v<MemSpace, Kokkos::HostSpace> ? kHostTile : 1;
  // axes: tile a, tile b, march m
  static constexpr int ta = 0, tb = L::D == 3 ? 1 : 2, ma = L::D == 3 ? 2 : 1;
  static constexpr int RB = L::D == 3 ? 1 : 0;  ///< ring width along tile axis b

  Kokkos::View<const R*, MemSpace> src;
  Kokkos::View<R*, MemSpace> dst;
  SoA idx;
  C op;
  Boundary<L, R> bc;
  int tx, ty;

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
  std::size_t scratch_bytes() const { return Scratch::shmem_size(std::size_t(2) * crossing() * px() * py()); }
  int team_size() const { return tx * ty / CPT; }
  int extent(int axis) const { return axis == 0 ? bc.nx : axis == 1 ? bc.ny : bc.nz; }
  int league() const { return ((extent(ta) + tx - 1) / tx) * ((extent(tb) + ty - 1) / ty); }

  KOKKOS_INLINE_FUNCTION int size(int axis) const { return axis == 0 ? bc.nx : axis == 1 ? bc.ny : bc.nz; }
  KOKKOS_INLINE_FUNCTION bool periodic(int axis) const {
    return bc.faces.type[2 * axis] == static_cast<int>(FaceType::Periodic);
  }
  KOKKOS_INLINE_FUNCTION Index cell(int a, int b, int m) const {
    int p[3];
    p[ta] = a, p[tb] = b, p[ma] = m;
    return p[0] + Index(bc.nx) * (p[1] + Index(bc.ny) * p[2]);
  }
  /// Coordinate along `axis`, wrapped where periodic; -1 outside a non-periodic box side.
  KOKKOS_INLINE_FUNCTION int wrap(int v, int axis) const {
    const int n = size(axis);
    if (v >= 0 && v < n) return v;
    if (!periodic(axis)) return -1;
    return ((v % n) + n) % n;
  }

  /// Post-collision populations of cell n into scratch position pos (zeros for no source).
  KOKKOS_INLINE_FUNCTION void put(const Scratch& s, int plane, int pos, Index n, R (&f)[L::Q]) const {
    const int np = px() * py();
    if (n >= 0 && bc.flags(n) != kSolid) {
      departing_populations<L>(src, idx, n, op, bc.force, f);
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
    const Scratch s(team.team_scratch(0), std::size_t(2) * crossing() * px() * py());
    const int na = size(ta), nb = size(tb), nm = size(ma);
    const int tiles_a = (na + tx - 1) / tx;
    const int a0 = (team.league_rank() % tiles_a) * tx, b0 = (team.league_rank() / tiles_a) * ty;
    const int t = team.team_rank(), T = team.team_size();
    const int np = px() * py(), ring = 2 * px() * RB + 2 * ty;
    const bool wrap_m = periodic(ma);
    MomentSum<R> acc[CPT][3];  // layers k-1, k, k+1
    for (int c = 0; c < CPT; ++c)
      for (int l = 0; l < 3; ++l) acc[c][l].clear();
    R f[L::Q];
    for (int k = wrap_m ? -1 : 0; k <= nm; ++k) {
      const int plane = k & 1;
      const int layer = wrap(k, ma);
      if (layer >= 0) {
        for (int c = 0; c < CPT; ++c) {  // (A) own cells
          const int i = t + c * T, a = a0 + i % tx, b = b0 + i / tx;
          // A tile reaching past the box holds the wrapped cells there (periodic axes), which the
          // last cells of the box read, but does not own them.
          const int wa = wrap(a, ta), wb = RB ? wrap(b, tb) : b;
          const Index n = wa >= 0 && wb >= 0 ? cell(wa, wb, layer) : Index(-1);
          put(s, plane, (i / tx + RB) * px() + i % tx + 1, n, f);
          if (a >= na || b >= nb) continue;
          KOLIBRI_UNROLL
          for (int q = 0; q < L::Q; ++q)
            if (!cross(q)) acc[c][1 + L::c(q, ma)].template add<L>(q, f[q]);
          if (bc.flags(n) == kBoundaryFluid) reflect(n, f, acc[c][1]);
        }
        for (int r = t; r < ring; r += T) {  // (A) the ring: neighbouring columns
          int pa, pb;
          if (r < 2 * px() * RB) {
            pa = r % px(), pb = r < px() ? 0 : py() - 1;
          } else {
            const int e = r - 2 * px() * RB;
            pa = e < ty ? 0 : px() - 1, pb = RB + e % ty;
          }
          const int a = wrap(a0 + pa - 1, ta), b = RB ? wrap(b0 + pb - RB, tb) : b0;
          put(s, plane, pb * px() + pa, a >= 0 && b >= 0 ? cell(a, b, layer) : Index(-1), f);
        }
      }
      team.team_barrier();
      if (layer >= 0) {
        for (int c = 0; c < CPT; ++c) {  // (B) arrivals across the column
          const int i = t + c * T, pos = (i / tx + RB) * px() + i % tx + 1;
          KOLIBRI_UNROLL
          for (int q = 0; q < L::Q; ++q)
            if (cross(q)) {
              const int from = pos - L::c(q, ta) - (RB ? L::c(q, tb) * px() : 0);
              acc[c][1 + L::c(q, ma)].template add<L>(q, s((plane * crossing() + cross_slot(q)) * np + from));
            }
        }
      }
      if (k >= 1) {  // layer k - 1 is complete: collide and write
        for (int c = 0; c < CPT; ++c) {
          const int i = t + c * T, a = a0 + i % tx, b = b0 + i / tx;
          if (a < na && b < nb) {
            const Index n = cell(a, b, k - 1);
            if (is_updated(bc.flags(n))) {
              RegularizedMoments<L, R> post;
              const MomentSum<R>& m = acc[c][0];
              post.collide(m.rho, m.j, m.pi, bc.force, op.omega);
              MomentSlots<L>::store(dst, idx, n, post.rho, post.js, post.A);
            }
          }
        }
      }
      for (int c = 0; c < CPT; ++c) {
        acc[c][0] = acc[c][1];
        acc[c][1] = acc[c][2];
        acc[c][2].clear();
      }
    }
  }

  /// Launch over all columns.
  void run(const ExecSpace& ex = ExecSpace()) const {
    Kokkos::TeamPolicy<ExecSpace> policy(ex, league(), team_size());
    Kokkos::parallel_for("kolibri::moment_step", policy.set_scratch_size(0, Kokkos::PerTeam(scratch_bytes())), *this);
  }
};

/// \brief Equilibrium initialisation as a stored post-collision moment state: rho, j* = rho v and
/// A* = rho v v with v = u + F/(2 rho) (the population form's InitEquilibrium, in moments).
template <class L, class R>
struct InitMoments {
  Kokkos::View<R*, MemSpace> m;
  Kokkos::View<const double*, MemSpace> rho;
  Kokkos::View<const double* [3], MemSpace> u;
  SoA idx;
  R force[3];

  KOKKOS_INLINE_FUNCTION void operator()(const Index n) const {
    const Index k = rho.extent(0) == 1 ? 0 : n;
    const R r = R(rho(k));
    R v[3], js[3], A[6];
    for (int d = 0; d < 3; ++d) v[d] = R(u(k, d)) + R(0.5) * force[d] / r;
    for (int d = 0; d < 3; ++d) js[d] = r * v[d];
    const int ia[6] = {0, 1, 2, 0, 0, 1}, ib[6] = {0, 1, 2, 1, 2, 2};
    for (int c = 0; c < 6; ++c) A[c] = r * v[ia[c]] * v[ib[c]];
    MomentSlots<L>::store(m, idx, n, r, js, A);
  }
};

}  // namespace kolibri
