// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief KBC entropic collision (Karlin, Bösch, Chikatamarla 2014; D3Q27 in Bösch et al. 2015)
/// on the tensor-product lattices D2Q9 and D3Q27 (THEORY.md 3, docs/theory.md "KBC").
///
/// The deviation g = f - f^eq splits into a shear part Delta s (second-order moments) and the
/// rest Delta h. Delta s relaxes at omega (it sets the viscosity); Delta h at beta gamma, with
/// beta = omega/2 and gamma chosen per node as the exact minimiser of the quadratic entropy
/// <f* - f^eq | f* - f^eq> (weights 1/f^eq) along Delta h. gamma = 2 is BGK; where the flow is
/// resolved gamma stays near it, where it is not gamma damps the higher moments (stability).
///
/// The equilibrium is the product form (EP): positive for every velocity (it is divided by),
/// with exact Maxwellian central moments. The body force enters by Kupershtokh's exact
/// difference, f* += f^eq(rho, u + F/rho) - f^eq(rho, u) with u = j/rho: the collision itself
/// conserves mass and momentum exactly whatever gamma is, and the step adds exactly F. The
/// fluid velocity is (j + F/2)/rho as with every other operator.
#pragma once

#include <kolibri/collision/Collision.hpp>
#include <kolibri/collision/Mrt.hpp>

namespace kolibri {

template <class L, class R>
struct Kbc {
  static_assert(kTensorLattice<L>, "KBC needs D2Q9 or D3Q27");
  R omega;                  ///< shear rate, nu = (1/omega - 1/2)/3
  bool with_trace = false;  ///< the shear part carries the trace too (bulk mode relaxes as BGK)

  /// \brief The per-axis factors of the product-form equilibrium, psi[a][c + 1] = psi(c, u_a)
  /// with psi(0, u) = 2/3 - u^2 and psi(+-1, u) = (1/3 + u^2 +- u)/2 (1 on the axis a 2D
  /// lattice lacks), so f^eq_q = rho prod_a psi[a][c_qa + 1].
  KOKKOS_INLINE_FUNCTION static void axis_factors(const R (&u)[3], R (&psi)[3][3]) {
    for (int a = 0; a < 3; ++a) {
      const R v = a < L::D ? u[a] : R(0), v2 = v * v;
      psi[a][0] = R(0.5) * (R(1.0 / 3.0) + v2 - v);
      psi[a][1] = a < L::D ? R(2.0 / 3.0) - v2 : R(1);
      psi[a][2] = R(0.5) * (R(1.0 / 3.0) + v2 + v);
    }
  }
  /// \brief The product over the axes of direction q's factors.
  KOKKOS_INLINE_FUNCTION static R product(const R (&psi)[3][3], int q) {
    return psi[0][L::c(q, 0) + 1] * psi[1][L::c(q, 1) + 1] * psi[2][L::c(q, 2) + 1];
  }
  /// \brief The factors' reciprocals, so that product(inv, q) = rho / f^eq_q, with one
  /// division: 1/psi[a][k] is the product of axis a's other two factors over D_a = psi[a][0]
  /// psi[a][1] psi[a][2], and 1/D_a = D_b D_c / (D_0 D_1 D_2) (docs/performance.md: nine
  /// divisions against one).
  KOKKOS_INLINE_FUNCTION static void inverse(const R (&psi)[3][3], R (&inv)[3][3]) {
    R d[3];
    for (int a = 0; a < 3; ++a) d[a] = psi[a][0] * psi[a][1] * psi[a][2];
    const R r = R(1) / (d[0] * d[1] * d[2]);
    for (int a = 0; a < 3; ++a) {
      const R inv_d = d[(a + 1) % 3] * d[(a + 2) % 3] * r;
      inv[a][0] = psi[a][1] * psi[a][2] * inv_d;
      inv[a][1] = psi[a][0] * psi[a][2] * inv_d;
      inv[a][2] = psi[a][0] * psi[a][1] * inv_d;
    }
  }

  /// \brief Second moments of a deviation g: xx yy zz xy xz yz.
  KOKKOS_INLINE_FUNCTION static void second_moments(const R (&g)[L::Q], R (&P)[6]) {
    for (int k = 0; k < 6; ++k) P[k] = R(0);
    KOLIBRI_UNROLL
    for (int q = 0; q < L::Q; ++q) {
      const int cx = L::c(q, 0), cy = L::c(q, 1), cz = L::c(q, 2);
      P[0] = add_c(P[0], cx * cx, g[q]);
      P[1] = add_c(P[1], cy * cy, g[q]);
      P[2] = add_c(P[2], cz * cz, g[q]);
      P[3] = add_c(P[3], cx * cy, g[q]);
      P[4] = add_c(P[4], cx * cz, g[q]);
      P[5] = add_c(P[5], cy * cz, g[q]);
    }
  }
  /// \brief Direction q of the shear part (THEORY.md 3.2) of a deviation with second moments
  /// P: the populations with P's deviatoric part (T = 0) or all of P (T = its trace), no mass
  /// and no momentum.
  KOKKOS_INLINE_FUNCTION static R shear(int q, const R (&P)[6], R T) {
    const int cx = L::c(q, 0), cy = L::c(q, 1), cz = L::c(q, 2);
    if (L::c2(q) == 0) return -T;
    if (L::c2(q) == 1 && L::D == 2)  // N = Pxx - Pyy
      return R(0.25) * (cx != 0 ? T + (P[0] - P[1]) : T - (P[0] - P[1]));
    if (L::c2(q) == 1) {  // Nxz = Pxx - Pzz, Nyz = Pyy - Pzz
      const R nxz = P[0] - P[2], nyz = P[1] - P[2];
      return R(1.0 / 6.0) * (cx != 0   ? T + R(2) * nxz - nyz
                             : cy != 0 ? T + R(2) * nyz - nxz
                                       : T - nxz - nyz);
    }
    if (L::c2(q) == 2) {
      const R p = cz == 0 ? P[3] : cy == 0 ? P[4] : P[5];
      return R(0.25) * R(cz == 0 ? cx * cy : cy == 0 ? cx * cz : cy * cz) * p;
    }
    return R(0);  // corners
  }

  /// \brief Every direction's product-form equilibrium, and (if given) the entropic weights up
  /// to the common factor 1/rho, 1/(prod_a psi) (tests and diagnostics; the kernel takes the
  /// factors one direction at a time).
  KOKKOS_INLINE_FUNCTION static void equilibria(R rho, const R (&u)[3], R (&feq)[L::Q],
                                                R (*weights)[L::Q] = nullptr) {
    R psi[3][3], inv[3][3];
    axis_factors(u, psi);
    inverse(psi, inv);
    for (int q = 0; q < L::Q; ++q) {
      feq[q] = rho * product(psi, q);
      if (weights) (*weights)[q] = product(inv, q);
    }
  }
  /// \brief The whole shear part of a deviation g.
  KOKKOS_INLINE_FUNCTION static void shear_part(const R (&g)[L::Q], bool with_trace, R (&s)[L::Q]) {
    R P[6];
    second_moments(g, P);
    const R T = with_trace ? P[0] + P[1] + P[2] : R(0);
    for (int q = 0; q < L::Q; ++q) s[q] = shear(q, P, T);
  }

  /// \brief The entropic stabiliser gamma = 1/beta - (2 - 1/beta) <ds|dh>/<dh|dh>; BGK's 2
  /// where <dh|dh> vanishes (at equilibrium) or the quotient is not finite.
  KOKKOS_INLINE_FUNCTION static R stabiliser(R omega, R sh, R hh) {
    const R inv_beta = R(2) / omega;
    const R gamma = inv_beta - (R(2) - inv_beta) * (sh / hh);
    return hh > R(0) && gamma > R(1e-15) && gamma < R(1e15) ? gamma : R(2);
  }

  /// \brief f* = f - beta (2 ds + gamma dh) + f^eq(rho, u + F/rho) - f^eq(rho, u).
  KOKKOS_INLINE_FUNCTION void operator()(R (&f)[L::Q], const R (&F)[3]) const {
    const R no_force[3] = {R(0), R(0), R(0)};
    R rho, u[3], psi[3][3], feq[L::Q];
    macroscopic<L>(f, no_force, rho, u);
    axis_factors(u, psi);
    KOLIBRI_UNROLL
    for (int q = 0; q < L::Q; ++q) {
      feq[q] = rho * product(psi, q);
      f[q] -= feq[q];  // f is g = f - f^eq from here
    }
    R P[6], ds[L::Q], sh = R(0), hh = R(0);
    second_moments(f, P);
    const R T = with_trace ? P[0] + P[1] + P[2] : R(0);
    {
      R inv[3][3];
      inverse(psi, inv);
      KOLIBRI_UNROLL
      for (int q = 0; q < L::Q; ++q) {
        ds[q] = shear(q, P, T);
        const R dh = f[q] - ds[q], w = product(inv, q);
        sh += ds[q] * dh * w;
        hh += dh * dh * w;
      }
    }
    const R beta = R(0.5) * omega, gamma = stabiliser(omega, sh, hh);
    KOLIBRI_UNROLL
    for (int q = 0; q < L::Q; ++q) f[q] += feq[q] - beta * (R(2) * ds[q] + gamma * (f[q] - ds[q]));
    if (F[0] != R(0) || F[1] != R(0) || F[2] != R(0)) {
      const R inv_rho = R(1) / rho;
      const R shifted[3] = {u[0] + F[0] * inv_rho, u[1] + F[1] * inv_rho, u[2] + F[2] * inv_rho};
      R after[3][3];
      axis_factors(shifted, after);
      KOLIBRI_UNROLL
      for (int q = 0; q < L::Q; ++q) f[q] += rho * product(after, q) - feq[q];
    }
  }
};

}  // namespace kolibri
