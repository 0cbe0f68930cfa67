// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Multiple-relaxation-time operators: the central-moment MRT of De Rosis (2017) with a
/// constant or adaptive high-order rate (ACM-MRT, chen2022; THEORY.md section 1), on the
/// tensor-product lattices D2Q9 and D3Q27, and the raw-moment MRT of Suga et al. (2015) on D3Q27
/// (THEORY.md section 2). Same calling convention as Collision.hpp:
/// `void operator()(R (&f)[Q], const R (&F)[3]) const`, Guo forcing, rho u = sum c f + F/2.
#pragma once

#include <kolibri/collision/Collision.hpp>

#include <type_traits>

namespace kolibri {

/// True for the lattices whose velocities are every combination of {-1, 0, 1} per axis (D2Q9,
/// D3Q27): their monomial moments c_x^p c_y^q c_z^r, p, q, r <= 2, are complete, so populations
/// and moments convert axis by axis (the "chimera" transform).
template <class L>
inline constexpr bool kTensorLattice = std::is_same_v<L, D2Q9> || std::is_same_v<L, D3Q27>;

/// \brief Populations <-> central moments k_pqr = sum_i f_i (c_ix - u_x)^p (c_iy - u_y)^q
/// (c_iz - u_z)^r, p, q, r in {0, 1, 2}, on a tensor-product lattice (THEORY.md 1.3). The values
/// live in a cube k[9a + 3b + c] (3D) or k[3a + b] (2D): before the forward transform position
/// (c_x + 1, c_y + 1, c_z + 1) holds f_q; after it, position (p, q, r) holds k_pqr. Each axis
/// sweep maps the lines of three values (f_-, f_0, f_+) to (k_0, k_1, k_2): the monomials shared
/// by all populations are formed once per line (chen2022's simplification, in closed form).
template <class L>
struct Chimera {
  static_assert(kTensorLattice<L>, "the chimera transform needs D2Q9 or D3Q27");
  static constexpr int N = L::D == 3 ? 27 : 9;
  /// Cube position of population q.
  KOKKOS_INLINE_FUNCTION static constexpr int slot(int q) {
    return L::D == 3 ? 9 * (L::c(q, 0) + 1) + 3 * (L::c(q, 1) + 1) + (L::c(q, 2) + 1)
                     : 3 * (L::c(q, 0) + 1) + (L::c(q, 1) + 1);
  }
  /// Cube position of moment (p, q, r) (r = 0 in 2D).
  KOKKOS_INLINE_FUNCTION static constexpr int at(int p, int q, int r) {
    return L::D == 3 ? 9 * p + 3 * q + r : 3 * p + q;
  }
  /// Cube position of the moment of order n (1 or 2) along axis d alone: k_100, k_200, ...
  KOKKOS_INLINE_FUNCTION static constexpr int axial(int d, int n) { return at(n * (d == 0), n * (d == 1), n * (d == 2)); }
  /// Stride of axis d in the cube.
  KOKKOS_INLINE_FUNCTION static constexpr int stride(int d) { return L::D == 3 ? (d == 0 ? 9 : d == 1 ? 3 : 1) : (d == 0 ? 3 : 1); }

  /// `shift` = cs^2 gives the central Hermite moments instead: per axis h_2 = k_2 - cs^2 k_0,
  /// so position (p, q, r) holds sum_i f_i h_p(c_x - u_x) h_q(c_y - u_y) h_r(c_z - u_z).
  template <class R>
  KOKKOS_INLINE_FUNCTION static void forward(R (&k)[N], const R (&u)[3], R shift = R(0)) {
    KOLIBRI_UNROLL
    for (int d = 0; d < L::D; ++d) {
      const int s = stride(d);
      const R v = u[d], v2 = u[d] * u[d] - shift;
      KOLIBRI_UNROLL
      for (int line = 0; line < N / 3; ++line) {
        // The line's first position: every position with component d equal to zero.
        const int i0 = (line / s) * 3 * s + line % s;
        const R fm = k[i0], f0 = k[i0 + s], fp = k[i0 + 2 * s];
        const R k0 = fm + f0 + fp, m1 = fp - fm, m2 = fp + fm;
        k[i0] = k0;
        k[i0 + s] = m1 - v * k0;
        k[i0 + 2 * s] = m2 - R(2) * v * m1 + v2 * k0;
      }
    }
  }

  template <class R>
  KOKKOS_INLINE_FUNCTION static void inverse(R (&k)[N], const R (&u)[3], R shift = R(0)) {
    KOLIBRI_UNROLL
    for (int d = L::D - 1; d >= 0; --d) {
      const int s = stride(d);
      const R v = u[d], v2 = u[d] * u[d] + shift;
      KOLIBRI_UNROLL
      for (int line = 0; line < N / 3; ++line) {
        const int i0 = (line / s) * 3 * s + line % s;
        const R k0 = k[i0], k1 = k[i0 + s], k2 = k[i0 + 2 * s];
        const R m1 = k1 + v * k0, m2 = k2 + R(2) * v * k1 + v2 * k0;
        k[i0] = R(0.5) * (m2 - m1);
        k[i0 + s] = k0 - m2;
        k[i0 + 2 * s] = R(0.5) * (m2 + m1);
      }
    }
  }
};

/// \brief How the rate of the moments of order >= 3 is chosen (THEORY.md 1.7).
enum class HighOrderRate {
  Constant,  ///< omega_h fixed (De Rosis 2017: 1)
  Adaptive,  ///< ACM-MRT, empirical rule: nu_h = nu_a (5 - 4 |u| / u_ref), omega_h = 1/(3 nu_h + 1/2)
};

/// \brief Central-moment MRT and its adaptive form ACM-MRT (Li et al. 2019/2020, chen2022) on
/// D2Q9 and D3Q27, with central-moment Guo forcing.
///
/// Shear moments relax with omega (nu = cs^2 (1/omega - 1/2)), the trace of the second-order
/// moments with omega_b (bulk viscosity), every moment of order >= 3 with omega_h. Two bases:
///  - `hermite` (default): central Hermite moments, products of h_0 = 1, h_1 = x, h_2 = x^2 - cs^2
///    of the peculiar velocity. They are orthogonal at rest, the Maxwellian's vanish above order
///    zero and Guo's source only has a first-order one, so relaxation is H* = (1 - w) H; any rates
///    in (0, 2) are stable at rest.
///  - monomial (De Rosis 2017's non-orthogonal basis; as all orders >= 3 share one rate, relaxing
///    plain monomials is the same, THEORY.md 1.2): equilibria rho mu(p) mu(q) mu(r),
///    mu = (1, 0, cs^2). The basis couples the second-order moments to the fourth-order ones:
///    with omega_b or omega unequal to a large omega_h (1.54 vs 1.98, say) a fluid at rest grows
///    round-off into a blow-up (tests/validation/test_stability.cpp, docs/theory.md).
/// With omega_b = omega_h = omega and no force both are BGK with the product-form equilibrium.
template <class L, class R>
struct CentralMomentMrt {
  static_assert(kTensorLattice<L>, "central-moment MRT needs D2Q9 or D3Q27");
  R omega;                 ///< shear rate 1/tau
  R omega_b;               ///< bulk rate (trace of the second-order moments); < 0: the high-order rate
  R omega_h;               ///< rate of orders >= 3 (Constant)
  HighOrderRate policy = HighOrderRate::Constant;
  R nu_a = R(5e-4);        ///< Adaptive: artificial viscosity scale (lattice units)
  R inv_u_ref = R(0);      ///< Adaptive: 1 / reference speed (the fastest speed of the case)
  bool hermite = true;     ///< central Hermite moments (true) or De Rosis's monomials

  /// The high-order rate at a node moving with velocity u: omega_h, or the adaptive rule clamped
  /// to [1, 1.999].
  KOKKOS_INLINE_FUNCTION R high_rate(const R (&u)[3]) const {
    if (policy == HighOrderRate::Constant) return omega_h;
    const R speed = math::sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]) * inv_u_ref;
    const R nu_h = nu_a * (R(5) - R(4) * (speed < R(1) ? speed : R(1)));
    const R w = R(1) / (R(3) * nu_h + R(0.5));
    return w < R(1) ? R(1) : (w > R(1.999) ? R(1.999) : w);
  }

  KOKKOS_INLINE_FUNCTION void operator()(R (&f)[L::Q], const R (&F)[3]) const {
    using X = Chimera<L>;
    R rho, u[3];
    macroscopic<L>(f, F, rho, u);
    const R shift = hermite ? R(1) / R(3) : R(0);
    R k[X::N];
    KOLIBRI_UNROLL
    for (int q = 0; q < L::Q; ++q) k[X::slot(q)] = f[q];
    X::forward(k, u, shift);
    relax(k, rho, F, high_rate(u));
    X::inverse(k, u, shift);
    KOLIBRI_UNROLL
    for (int q = 0; q < L::Q; ++q) f[q] = k[X::slot(q)];
  }

  /// Relax the moments k (cube of Chimera<L>, Hermite or monomial) of a node of density rho
  /// (THEORY.md 1.5, 1.6): k* = k - w (k - k_eq) + (1 - w/2) R, R the moments of Guo's source.
  KOKKOS_INLINE_FUNCTION void relax(R (&k)[Chimera<L>::N], R rho, const R (&F)[3], R wh) const {
    using X = Chimera<L>;
    constexpr int rmax = L::D == 3 ? 2 : 0;
    const R cs2 = R(1) / R(3);
    // First order: k*_1 = F/2 (momentum gains F over the step, whatever the rate).
    KOLIBRI_UNROLL
    for (int d = 0; d < L::D; ++d) k[X::axial(d, 1)] = R(0.5) * F[d];
    // Second order: off-diagonals and the deviator with omega, the trace with omega_b. The
    // equilibrium diagonal is rho cs^2 (monomials) or 0 (Hermite).
    const R a = R(1) - omega;
    k[X::at(1, 1, 0)] *= a;
    if constexpr (L::D == 3) k[X::at(1, 0, 1)] *= a, k[X::at(0, 1, 1)] *= a;
    R trace = R(0);
    KOLIBRI_UNROLL
    for (int d = 0; d < L::D; ++d) trace += k[X::axial(d, 2)];
    const R third = R(1) / R(L::D);
    const R wb = omega_b < R(0) ? wh : omega_b;
    const R trace_star = trace - wb * (trace - (hermite ? R(0) : R(L::D) * rho * cs2));
    KOLIBRI_UNROLL
    for (int d = 0; d < L::D; ++d) {
      R& kd = k[X::axial(d, 2)];
      kd = a * (kd - third * trace) + third * trace_star;
    }
    // Orders 3 to 6. Hermite: no equilibrium, no source. Monomials: mu(n) is the n-th central
    // moment of the one-dimensional Maxwellian factor (mu(3) = 0).
    const R keep = R(1) - wh, bh = R(1) - R(0.5) * wh;
    auto mu = [cs2](int n) { return n == 0 ? R(1) : n == 2 ? cs2 : R(0); };
    KOLIBRI_UNROLL
    for (int p = 0; p < 3; ++p) {
      KOLIBRI_UNROLL
      for (int q = 0; q < 3; ++q) {
        KOLIBRI_UNROLL
        for (int r = 0; r <= rmax; ++r) {
          if (p + q + r < 3) continue;
          R& kk = k[X::at(p, q, r)];
          if (hermite) {
            kk *= keep;
          } else {
            const R keq = rho * mu(p) * mu(q) * mu(r);
            const R src = (F[0] * mu(p + 1) * mu(q) * mu(r) + F[1] * mu(p) * mu(q + 1) * mu(r) +
                           F[2] * mu(p) * mu(q) * mu(r + 1)) / cs2;
            kk = keep * kk + wh * keq + bh * src;
          }
        }
      }
    }
  }
};

/// \brief The orthogonal raw-moment basis of Suga et al. (2015) on D3Q27 (THEORY.md 2.1): the
/// polynomial rows p_k(c) Gram-Schmidt orthogonalised in order with the plain dot product over
/// the 27 directions, so M M^T is diagonal and M^-1 = M^T diag(1 / |row_k|^2). Evaluated at
/// compile time.
struct SugaBasis {
  double m[27][27];
  double inv_norm2[27];
};

namespace Impl {
/// Row k of Suga's polynomial basis at velocity (x, y, z).
KOKKOS_INLINE_FUNCTION constexpr double suga_row(int k, double x, double y, double z) {
  const double e = x * x + y * y + z * z;
  switch (k) {
    case 0: return 1;
    case 1: return x;
    case 2: return y;
    case 3: return z;
    case 4: return e;
    case 5: return 2 * x * x - y * y - z * z;
    case 6: return y * y - z * z;
    case 7: return x * y;
    case 8: return y * z;
    case 9: return z * x;
    case 10: return 3 * e * x;
    case 11: return 3 * e * y;
    case 12: return 3 * e * z;
    case 13: return 4.5 * e * e * x;
    case 14: return 4.5 * e * e * y;
    case 15: return 4.5 * e * e * z;
    case 16: return 1.5 * e * e;
    case 17: return 4.5 * e * e * e;
    case 18: return 3 * (2 * x * x - y * y - z * z) * e;
    case 19: return 3 * (y * y - z * z) * e;
    case 20: return 3 * x * y * e;
    case 21: return 3 * y * z * e;
    case 22: return 3 * z * x * e;
    case 23: return x * (y * y - z * z);
    case 24: return y * (z * z - x * x);
    case 25: return z * (x * x - y * y);
    default: return x * y * z;
  }
}
/// Classical Gram-Schmidt over the tabulated rows. Each step of a constant evaluation counts
/// against the compiler's limit (clang: 2^20 by default), so the 27 velocities and the 27 x 27
/// polynomial values are computed once each, not inside the O(27^3) loop: about 10^5 steps
/// instead of the 10^7 that calling D3Q27::c (which unpacks its constants per call) there took.
/// The arithmetic is the same as before, so the basis is the same to the last bit.
KOKKOS_INLINE_FUNCTION constexpr SugaBasis make_suga_basis() {
  double p[27][27]{};  // p[k][i]: row k of the polynomial basis at direction i
  for (int i = 0; i < 27; ++i) {
    const double x = D3Q27::c(i, 0), y = D3Q27::c(i, 1), z = D3Q27::c(i, 2);
    for (int k = 0; k < 27; ++k) p[k][i] = suga_row(k, x, y, z);
  }
  SugaBasis b{};
  for (int k = 0; k < 27; ++k) {
    for (int i = 0; i < 27; ++i) b.m[k][i] = p[k][i];
    for (int j = 0; j < k; ++j) {
      double dot = 0;
      for (int i = 0; i < 27; ++i) dot += p[k][i] * b.m[j][i];
      const double c = dot * b.inv_norm2[j];
      for (int i = 0; i < 27; ++i) b.m[k][i] -= c * b.m[j][i];
    }
    double n2 = 0;
    for (int i = 0; i < 27; ++i) n2 += b.m[k][i] * b.m[k][i];
    b.inv_norm2[k] = 1.0 / n2;
  }
  return b;
}
}  // namespace Impl

/// \brief Raw-moment MRT on D3Q27 with Suga et al.'s (2015) orthogonal basis and rates, E2
/// equilibrium and Guo forcing in moment space (THEORY.md 2.2):
/// f* = f + F^G - M^-1 S M (f - f_eq + F^G / 2), which is m* = m - S (m - m_eq) + (I - S/2) M F^G.
/// `s[k]` is the rate of row k; rows 5 to 9 (the traceless second-order tensor) carry omega.
template <class L, class R>
struct RawMomentMrt {
  static_assert(std::is_same_v<L, D3Q27>, "the raw-moment MRT is defined on D3Q27");
  R s[27];

  /// Entry (k, i) of M and of M^-1 (as (i, k) of M^T / |row k|^2); constant-folded where the
  /// indices are compile-time constants (unrolled loops).
  KOKKOS_INLINE_FUNCTION static constexpr double basis(int k, int i) {
    constexpr SugaBasis b = Impl::make_suga_basis();
    return b.m[k][i];
  }
  KOKKOS_INLINE_FUNCTION static constexpr double inverse(int i, int k) {
    constexpr SugaBasis b = Impl::make_suga_basis();
    return b.m[k][i] * b.inv_norm2[k];
  }

  /// Suga's rates (THEORY.md 2.3) for shear rate omega and bulk rate s4.
  static RawMomentMrt suga(R omega, R bulk = R(1.54)) {
    RawMomentMrt op{};
    const double ghost[27] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1.5, 1.5, 1.5, 1.83, 1.83, 1.83, 1.4, 1.61,
                              1.98, 1.98, 1.98, 1.98, 1.98, 1.74, 1.74, 1.74, 1.74};
    for (int k = 0; k < 27; ++k) op.s[k] = R(ghost[k]);
    op.s[4] = bulk;
    for (int k = 5; k < 10; ++k) op.s[k] = omega;
    return op;
  }

  KOKKOS_INLINE_FUNCTION void operator()(R (&f)[27], const R (&F)[3]) const {
    R rho, u[3];
    macroscopic<L>(f, F, rho, u);
    const R usq = u[0] * u[0] + u[1] * u[1] + u[2] * u[2];
    R g[27], src[27];
    KOLIBRI_UNROLL
    for (int i = 0; i < 27; ++i) {
      src[i] = guo_source<L>(i, u, F);
      g[i] = f[i] - equilibrium<L>(i, rho, u, usq) + R(0.5) * src[i];
    }
    // Rows 0-3 are conserved (s = 0); rows 4-26 relax.
    R m[27];
    KOLIBRI_UNROLL
    for (int k = 4; k < 27; ++k) {
      R sum = R(0);
      KOLIBRI_UNROLL
      for (int i = 0; i < 27; ++i) sum += R(basis(k, i)) * g[i];
      m[k] = s[k] * sum;
    }
    KOLIBRI_UNROLL
    for (int i = 0; i < 27; ++i) {
      R sum = R(0);
      KOLIBRI_UNROLL
      for (int k = 4; k < 27; ++k) sum += R(inverse(i, k)) * m[k];
      f[i] += src[i] - sum;
    }
  }
};

}  // namespace kolibri
