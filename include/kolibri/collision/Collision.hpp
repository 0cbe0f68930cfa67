// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Collision operators in population form: BGK, TRT, projective and recursive regularized
/// BGK, all with Guo's body-force term (THEORY.md sections 4.2, 4.3, 6.1, 6.2).
///
/// Each operator is a small aggregate of parameters with
/// `void operator()(R (&f)[Q], const R (&F)[3]) const` that maps the node's pre-collision
/// populations to post-collision ones in place. No memory access happens inside. Conventions:
/// lattice units, cs^2 = 1/3, rho u = sum_i f_i c_i + F/2 (Guo), E2 equilibrium.
#pragma once

#include <kolibri/core/Kokkos.hpp>
#include <kolibri/lattice/Lattice.hpp>

namespace kolibri {

/// \brief acc + c x for a lattice coefficient c in {-1, 0, 1}, with no operation at all for c = 0:
/// under IEEE rules the compiler may not fold a product with zero (NaN, -0), so sums written as
/// `R(c) * x` with c = 0 cost an instruction each on the GPU. Start such sums at R(-0.0), which
/// the compiler does fold (-0 + x == x for every x).
template <class R>
KOKKOS_FORCEINLINE_FUNCTION R add_c(R acc, int c, R x) {
  return c == 0 ? acc : c > 0 ? acc + x : acc - x;
}

/// \brief Density and velocity of a node, with half the body force in the velocity (Guo).
template <class L, class R>
KOKKOS_INLINE_FUNCTION void macroscopic(const R (&f)[L::Q], const R (&F)[3], R& rho, R (&u)[3]) {
  rho = R(0);
  R j[3] = {R(0), R(0), R(0)};
  KOLIBRI_UNROLL
  for (int q = 0; q < L::Q; ++q) {
    rho += f[q];
    for (int d = 0; d < 3; ++d) j[d] += R(L::c(q, d)) * f[q];
  }
  const R inv = R(1) / rho;
  for (int d = 0; d < 3; ++d) u[d] = (j[d] + R(0.5) * F[d]) * inv;
}

/// \brief Second-order polynomial equilibrium (E2) of direction q.
template <class L, class R>
KOKKOS_INLINE_FUNCTION R equilibrium(int q, R rho, const R (&u)[3], R usq) {
  const R cu = R(L::c(q, 0)) * u[0] + R(L::c(q, 1)) * u[1] + R(L::c(q, 2)) * u[2];
  return R(L::w(q)) * rho * (R(1) + R(3) * cu + R(4.5) * cu * cu - R(1.5) * usq);
}

/// \brief Guo's source term of direction q without the (1 - omega/2) factor:
/// w_q [ (c_q - u)/cs^2 + (c_q.u) c_q / cs^4 ] . F
template <class L, class R>
KOKKOS_INLINE_FUNCTION R guo_source(int q, const R (&u)[3], const R (&F)[3]) {
  const R cu = R(L::c(q, 0)) * u[0] + R(L::c(q, 1)) * u[1] + R(L::c(q, 2)) * u[2];
  R s = R(0);
  for (int d = 0; d < 3; ++d) s += (R(3) * (R(L::c(q, d)) - u[d]) + R(9) * cu * R(L::c(q, d))) * F[d];
  return R(L::w(q)) * s;
}

/// \brief Single-relaxation-time BGK: f* = f - omega (f - feq) + (1 - omega/2) F_q.
template <class L, class R>
struct Bgk {
  R omega;
  KOKKOS_INLINE_FUNCTION void operator()(R (&f)[L::Q], const R (&F)[3]) const {
    R rho, u[3];
    macroscopic<L>(f, F, rho, u);
    const R usq = u[0] * u[0] + u[1] * u[1] + u[2] * u[2];
    const R kf = R(1) - R(0.5) * omega;
    KOLIBRI_UNROLL
    for (int q = 0; q < L::Q; ++q)
      f[q] += -omega * (f[q] - equilibrium<L>(q, rho, u, usq)) + kf * guo_source<L>(q, u, F);
  }
};

/// \brief Two-relaxation-time operator: omega_plus sets the viscosity; omega_minus follows from the
/// magic parameter Lambda = (1/omega_plus - 1/2)(1/omega_minus - 1/2).
template <class L, class R>
struct Trt {
  R omega_plus, omega_minus;
  KOKKOS_INLINE_FUNCTION void operator()(R (&f)[L::Q], const R (&F)[3]) const {
    R rho, u[3];
    macroscopic<L>(f, F, rho, u);
    const R usq = u[0] * u[0] + u[1] * u[1] + u[2] * u[2];
    const R uF = u[0] * F[0] + u[1] * F[1] + u[2] * F[2];
    const R kp = R(1) - R(0.5) * omega_plus, km = R(1) - R(0.5) * omega_minus;
    {  // rest population: purely even
      const R feq = R(L::w(0)) * rho * (R(1) - R(1.5) * usq);
      f[0] += -omega_plus * (f[0] - feq) + kp * R(L::w(0)) * (R(-3) * uF);
    }
    KOLIBRI_UNROLL
    for (int q = 1; q < L::Q; q += 2) {  // (q, q+1) are opposite pairs
      const R cu = R(L::c(q, 0)) * u[0] + R(L::c(q, 1)) * u[1] + R(L::c(q, 2)) * u[2];
      const R cF = R(L::c(q, 0)) * F[0] + R(L::c(q, 1)) * F[1] + R(L::c(q, 2)) * F[2];
      const R w = R(L::w(q));
      const R feq_p = w * rho * (R(1) + R(4.5) * cu * cu - R(1.5) * usq);
      const R feq_m = w * rho * R(3) * cu;
      const R src_p = w * (R(9) * cu * cF - R(3) * uF);
      const R src_m = w * R(3) * cF;
      const R fp = R(0.5) * (f[q] + f[q + 1]), fm = R(0.5) * (f[q] - f[q + 1]);
      const R dp = -omega_plus * (fp - feq_p) + kp * src_p;
      const R dm = -omega_minus * (fm - feq_m) + km * src_m;
      f[q] += dp + dm;
      f[q + 1] += dp - dm;
    }
  }
};

/// \brief The second-order part shared by the regularized operators: the node's density,
/// velocity (with half the force), (1 - omega) Pi_neq, and the post-collision j* = rho u + F/2 and
/// A* = rho uu + (1 - omega) Pi_neq + (1 - omega/2)(uF + Fu) (components xx yy zz xy xz yz).
/// Built from populations, from raw moments (rho, sum c f, sum cc f), or from a stored
/// post-collision state (rho, j*, A*) of the moment representation: the ten numbers determine
/// every post-collision population of both regularized operators.
template <class L, class R>
struct RegularizedMoments {
  R rho, u[3], aneq[6], A[6], js[3], trA;
  /// The axes (a, b) of symmetric-tensor component k (xx yy zz xy xz yz).
  KOKKOS_INLINE_FUNCTION static constexpr int axis_a(int k) { return k < 3 ? k : k == 5 ? 1 : 0; }
  KOKKOS_INLINE_FUNCTION static constexpr int axis_b(int k) { return k < 3 ? k : k == 3 ? 1 : 2; }

  RegularizedMoments() = default;
  KOKKOS_INLINE_FUNCTION RegularizedMoments(const R (&f)[L::Q], const R (&F)[3], R omega) {
    R j[3] = {R(0), R(0), R(0)};
    R pi[6] = {R(0), R(0), R(0), R(0), R(0), R(0)};
    R r = R(0);
    KOLIBRI_UNROLL
    for (int q = 0; q < L::Q; ++q) {
      const R cx = R(L::c(q, 0)), cy = R(L::c(q, 1)), cz = R(L::c(q, 2));
      r += f[q];
      j[0] += cx * f[q], j[1] += cy * f[q], j[2] += cz * f[q];
      pi[0] += cx * cx * f[q], pi[1] += cy * cy * f[q], pi[2] += cz * cz * f[q];
      pi[3] += cx * cy * f[q], pi[4] += cx * cz * f[q], pi[5] += cy * cz * f[q];
    }
    collide(r, j, pi, F, omega);
  }

  /// Collide the raw moments of the arriving populations: r = sum f, j = sum c f, pi = sum cc f.
  KOKKOS_INLINE_FUNCTION void collide(R r, const R (&j)[3], const R (&pi)[6], const R (&F)[3], R omega) {
    rho = r;
    const R inv = R(1) / rho;
    for (int d = 0; d < 3; ++d) u[d] = (j[d] + R(0.5) * F[d]) * inv;
    const R cs2 = R(1) / R(3), a = R(1) - omega, b = R(1) - R(0.5) * omega;
    for (int k = 0; k < 6; ++k) {
      const int p = axis_a(k), q = axis_b(k);
      const R ruu = rho * u[p] * u[q];
      // Isotropic part rho cs^2 I lives on the lattice's D axes only (no zz term in 2D).
      aneq[k] = a * (pi[k] - ruu - (k < L::D ? rho * cs2 : R(0)));
      A[k] = ruu + aneq[k] + b * (u[p] * F[q] + F[p] * u[q]);
    }
    for (int d = 0; d < 3; ++d) js[d] = rho * u[d] + R(0.5) * F[d];
    trA = A[0] + A[1] + (L::D == 3 ? A[2] : R(0));
  }

  /// A stored post-collision state: u = (j* - F/2) / rho, (1 - omega) Pi_neq = A* - rho uu -
  /// (1 - omega/2)(uF + Fu).
  KOKKOS_INLINE_FUNCTION void post(R r, const R (&j_star)[3], const R (&a_star)[6], const R (&F)[3], R omega) {
    rho = r;
    const R inv = R(1) / rho, b = R(1) - R(0.5) * omega;
    for (int d = 0; d < 3; ++d) js[d] = j_star[d], u[d] = (j_star[d] - R(0.5) * F[d]) * inv;
    for (int k = 0; k < 6; ++k) {
      const int p = axis_a(k), q = axis_b(k);
      A[k] = a_star[k];
      aneq[k] = A[k] - rho * u[p] * u[q] - b * (u[p] * F[q] + F[p] * u[q]);
    }
    trA = A[0] + A[1] + (L::D == 3 ? A[2] : R(0));
  }

  /// The equilibrium's post-collision state: rho, j* = rho v, A* = rho vv with v = u + F/(2 rho)
  /// (what both storage forms start from).
  KOKKOS_INLINE_FUNCTION void equilibrium(R r, const R (&u0)[3], const R (&F)[3], R omega) {
    R v[3], j_star[3], a_star[6];
    for (int d = 0; d < 3; ++d) v[d] = u0[d] + R(0.5) * F[d] / r, j_star[d] = r * v[d];
    for (int k = 0; k < 6; ++k) a_star[k] = r * v[axis_a(k)] * v[axis_b(k)];
    post(r, j_star, a_star, F, omega);
  }

  /// w times the parts of second_order(q) even and odd in c_q: w (rho - 1.5 trA + 4.5 cAc) and
  /// 3 w c.j*; opposite directions share them up to the sign of the odd part. Only the nonzero
  /// velocity components enter (add_c); w = 1 folds away.
  KOKKOS_INLINE_FUNCTION void parts(int q, R w, R& even, R& odd) const {
    const int cx = L::c(q, 0), cy = L::c(q, 1), cz = L::c(q, 2);
    const R diag = add_c(add_c(add_c(R(-0.0), cx * cx, A[0]), cy * cy, A[1]), cz * cz, A[2]);
    const R off = add_c(add_c(add_c(R(-0.0), cx * cy, A[3]), cx * cz, A[4]), cy * cz, A[5]);
    const R cj = add_c(add_c(add_c(R(-0.0), cx, js[0]), cy, js[1]), cz, js[2]);
    even = w * (rho - R(1.5) * trA) + R(4.5) * w * (diag + R(2) * off);
    odd = R(3) * w * cj;
  }
  /// rho + c.j*/cs^2 + H2(c):A*/(2 cs^4) for direction q: f*_q / w_q up to second order.
  KOKKOS_INLINE_FUNCTION R second_order(int q) const {
    R even, odd;
    parts(q, R(1), even, odd);
    return even + odd;
  }
};

/// \brief Projective regularized BGK (Latt & Chopard 2006) with Guo forcing, written as the
/// post-collision Hermite moments: f*_q = w_q [rho + c.j*/cs^2 + H2(c):A*/(2 cs^4)] with
/// j* = rho u + F/2 and A* = rho uu + (1 - omega) Pi_neq + (1 - omega/2)(uF + Fu).
template <class L, class R>
struct RegularizedBgk {
  R omega;
  KOKKOS_INLINE_FUNCTION void operator()(R (&f)[L::Q], const R (&F)[3]) const {
    project(RegularizedMoments<L, R>(f, F, omega), f);
  }
  /// The post-collision populations of a collided state.
  /// Opposite directions in pairs (RegularizedMoments::parts).
  KOKKOS_INLINE_FUNCTION static void project(const RegularizedMoments<L, R>& m, R (&f)[L::Q]) {
    R even, odd;
    m.parts(0, R(L::w(0)), even, odd);
    f[0] = even;
    KOLIBRI_UNROLL
    for (int q = 1; q < L::Q; q += 2) {  // q odd, opposite(q) = q + 1
      m.parts(q, R(L::w(q)), even, odd);
      f[q] = even + odd;
      f[q + 1] = even - odd;
    }
  }
};

/// \brief Hermite polynomial h_p(xi) of one component, p in {0, 1, 2} (cs^2 = 1/3).
template <class R>
KOKKOS_INLINE_FUNCTION R hermite1(int p, R xi) {
  return p == 0 ? R(1) : p == 1 ? xi : xi * xi - R(1) / R(3);
}

/// \brief x^k for k in {0, 1, 2}.
template <class R>
KOKKOS_INLINE_FUNCTION R pow012(R x, int k) {
  return k == 0 ? R(1) : k == 1 ? x : x * x;
}

/// \brief Recursive non-equilibrium Hermite coefficient a^neq_pqr (Malaspinas 2015, THEORY.md
/// 4.3): the sum over all index pairs of a2[pair] times the velocities of the other indices,
/// grouped by axes: C(m_d, 2) pairs (d, d) and m_d m_e pairs (d, e) for exponents m = (p, q, r)
/// in {0, 1, 2}. a2 is the symmetric second-order tensor (xx yy zz xy xz yz). No arrays indexed
/// at run time (GPU registers, no stack).
template <class R>
KOKKOS_INLINE_FUNCTION R recursive_neq(int p, int q, int r, const R (&a2)[6], const R (&u)[3]) {
  const int m[3] = {p, q, r};
  R sum = R(0);
  KOLIBRI_UNROLL
  for (int d = 0; d < 3; ++d) {
    if (m[d] == 2) {  // one pair (d, d)
      R rest = R(1);
      KOLIBRI_UNROLL
      for (int e = 0; e < 3; ++e)
        if (e != d) rest *= pow012(u[e], m[e]);
      sum += a2[d] * rest;
    }
    KOLIBRI_UNROLL
    for (int e = d + 1; e < 3; ++e) {
      if (m[d] == 0 || m[e] == 0) continue;
      const int f = 3 - d - e;  // the third axis
      const int de = d + e == 1 ? 3 : d + e == 2 ? 4 : 5;
      sum += R(m[d] * m[e]) * a2[de] * pow012(u[d], m[d] - 1) * pow012(u[e], m[e] - 1) * pow012(u[f], m[f]);
    }
  }
  return sum;
}

/// \brief The Hermite terms above second order that a lattice supports (THEORY.md 4.1): exponent
/// triples (p, q, r) with p + q + r >= 3. D3Q19's third order comes in the pairs it can tell apart
/// (xxy, yzz), (xzz, xyy), (yyz, xxz); its fourth order is unusable.
template <class L>
struct HigherHermite;
template <>
struct HigherHermite<D2Q9> {
  static constexpr int count = 3, pairs = 0;
  KOKKOS_INLINE_FUNCTION static constexpr int pqr(int k, int d) {
    constexpr int t[3][3] = {{2, 1, 0}, {1, 2, 0}, {2, 2, 0}};
    return t[k][d];
  }
  KOKKOS_INLINE_FUNCTION static constexpr int pair(int, int, int) { return 0; }
};
template <>
struct HigherHermite<D3Q19> {
  static constexpr int count = 0, pairs = 3;
  KOKKOS_INLINE_FUNCTION static constexpr int pqr(int, int) { return 0; }
  /// Exponent d of member m of pair k.
  KOKKOS_INLINE_FUNCTION static constexpr int pair(int k, int m, int d) {
    constexpr int t[3][2][3] = {{{2, 1, 0}, {0, 1, 2}}, {{1, 0, 2}, {1, 2, 0}}, {{0, 2, 1}, {2, 0, 1}}};
    return t[k][m][d];
  }
};
template <>
struct HigherHermite<D3Q27> {
  static constexpr int count = 17, pairs = 0;
  KOKKOS_INLINE_FUNCTION static constexpr int pqr(int k, int d) {
    constexpr int t[17][3] = {{2, 1, 0}, {2, 0, 1}, {1, 2, 0}, {0, 2, 1}, {1, 0, 2}, {0, 1, 2}, {1, 1, 1}, {2, 2, 0}, {2, 0, 2},
                              {0, 2, 2}, {2, 1, 1}, {1, 2, 1}, {1, 1, 2}, {2, 2, 1}, {2, 1, 2}, {1, 2, 2}, {2, 2, 2}};
    return t[k][d];
  }
  KOKKOS_INLINE_FUNCTION static constexpr int pair(int, int, int) { return 0; }
};

/// \brief The Hermite polynomial H_pqr(c) = h_p(c_x) h_q(c_y) h_r(c_z).
template <class R>
KOKKOS_INLINE_FUNCTION R hermite3(int p, int q, int r, const R (&c)[3]) {
  return hermite1(p, c[0]) * hermite1(q, c[1]) * hermite1(r, c[2]);
}

/// \brief Recursive regularized BGK (Malaspinas 2015; Coreixas et al. 2017) with Guo forcing: the
/// projective operator's moments up to second order, plus every higher Hermite term the lattice
/// supports, a*_pqr = rho u^p u^q u^r + (1 - omega) a^neq_pqr with a^neq built recursively from
/// Pi_neq (THEORY.md 4.3). Up to 4th order on D2Q9, 3rd (paired) on D3Q19, 6th on D3Q27.
template <class L, class R>
struct RecursiveRegularizedBgk {
  R omega;
  KOKKOS_INLINE_FUNCTION void operator()(R (&f)[L::Q], const R (&F)[3]) const {
    project(RegularizedMoments<L, R>(f, F, omega), f);
  }
  /// The post-collision populations of a collided state.
  KOKKOS_INLINE_FUNCTION static void project(const RegularizedMoments<L, R>& m, R (&f)[L::Q]) {
    const R rho = m.rho, cs2 = R(1) / R(3);
    const R(&u)[3] = m.u;
    // Post-collision coefficients above second order: rho u^p u^q u^r + (1 - omega) a^neq_pqr
    // (a^neq is linear in Pi_neq: built from (1 - omega) Pi_neq directly).
    using H = HigherHermite<L>;
    auto coeff = [&](int p, int q, int r) {
      R eq = rho;
      for (int k = 0; k < p; ++k) eq *= u[0];
      for (int k = 0; k < q; ++k) eq *= u[1];
      for (int k = 0; k < r; ++k) eq *= u[2];
      return eq + recursive_neq(p, q, r, m.aneq, u);
    };
    // Divided by the Hermite norms p! q! r! cs^(2n) here, once, not once per direction.
    R hi[H::count > 0 ? H::count : 1], hp[H::pairs > 0 ? H::pairs : 1][2];
    KOLIBRI_UNROLL
    for (int k = 0; k < H::count; ++k) {
      const int e[3] = {H::pqr(k, 0), H::pqr(k, 1), H::pqr(k, 2)};
      R norm = R(1);
      for (int d = 0; d < 3; ++d) norm *= (e[d] == 2 ? R(2) * cs2 * cs2 : e[d] == 1 ? cs2 : R(1));
      hi[k] = coeff(e[0], e[1], e[2]) / norm;
    }
    const R cs6 = cs2 * cs2 * cs2;
    KOLIBRI_UNROLL
    for (int k = 0; k < H::pairs; ++k) {  // D3Q19: (H_A +- H_B)(a_A +- a_B) / (2 cs^6), / (6 cs^6)
      const R a0 = coeff(H::pair(k, 0, 0), H::pair(k, 0, 1), H::pair(k, 0, 2));
      const R a1 = coeff(H::pair(k, 1, 0), H::pair(k, 1, 1), H::pair(k, 1, 2));
      hp[k][0] = (a0 + a1) / (R(2) * cs6);
      hp[k][1] = (a0 - a1) / (R(6) * cs6);
    }
    KOLIBRI_UNROLL
    for (int q = 0; q < L::Q; ++q) {
      const R c[3] = {R(L::c(q, 0)), R(L::c(q, 1)), R(L::c(q, 2))};
      R high = R(0);
      KOLIBRI_UNROLL
      for (int k = 0; k < H::count; ++k) high += hi[k] * hermite3(H::pqr(k, 0), H::pqr(k, 1), H::pqr(k, 2), c);
      KOLIBRI_UNROLL
      for (int k = 0; k < H::pairs; ++k) {
        const R ha = hermite3(H::pair(k, 0, 0), H::pair(k, 0, 1), H::pair(k, 0, 2), c);
        const R hb = hermite3(H::pair(k, 1, 0), H::pair(k, 1, 1), H::pair(k, 1, 2), c);
        high += (ha + hb) * hp[k][0] + (ha - hb) * hp[k][1];
      }
      f[q] = R(L::w(q)) * (m.second_order(q) + high);
    }
  }
};

/// True for the operators whose post-collision state is the ten moments (rho, j*, A*): the
/// regularized ones, which the moment representation supports.
template <class C>
inline constexpr bool kMomentOperator = false;
template <class L, class R>
inline constexpr bool kMomentOperator<RegularizedBgk<L, R>> = true;
template <class L, class R>
inline constexpr bool kMomentOperator<RecursiveRegularizedBgk<L, R>> = true;

}  // namespace kolibri
