// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Collision operators in population form: BGK, TRT and projective regularized BGK, all
/// with Guo's body-force term (THEORY.md sections 4.2, 6.1, 6.2).
///
/// Each operator is a small aggregate of parameters with
/// `void operator()(R (&f)[Q], const R (&F)[3]) const` that maps the node's pre-collision
/// populations to post-collision ones in place. No memory access happens inside. Conventions:
/// lattice units, cs^2 = 1/3, rho u = sum_i f_i c_i + F/2 (Guo), E2 equilibrium.
#pragma once

#include <kolibri/core/Kokkos.hpp>
#include <kolibri/lattice/Lattice.hpp>

namespace kolibri {

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

/// \brief Projective regularized BGK (Latt & Chopard 2006) with Guo forcing, written as the
/// post-collision Hermite moments: f*_q = w_q [rho + c.j*/cs^2 + H2(c):A*/(2 cs^4)] with
/// j* = rho u + F/2 and A* = rho uu + (1 - omega) Pi_neq + (1 - omega/2)(uF + Fu).
template <class L, class R>
struct RegularizedBgk {
  R omega;
  KOKKOS_INLINE_FUNCTION void operator()(R (&f)[L::Q], const R (&F)[3]) const {
    R rho = R(0), j[3] = {R(0), R(0), R(0)};
    R pi[6] = {R(0), R(0), R(0), R(0), R(0), R(0)};  // xx yy zz xy xz yz
    KOLIBRI_UNROLL
    for (int q = 0; q < L::Q; ++q) {
      const R cx = R(L::c(q, 0)), cy = R(L::c(q, 1)), cz = R(L::c(q, 2));
      rho += f[q];
      j[0] += cx * f[q], j[1] += cy * f[q], j[2] += cz * f[q];
      pi[0] += cx * cx * f[q], pi[1] += cy * cy * f[q], pi[2] += cz * cz * f[q];
      pi[3] += cx * cy * f[q], pi[4] += cx * cz * f[q], pi[5] += cy * cz * f[q];
    }
    const R inv = R(1) / rho;
    const R u[3] = {(j[0] + R(0.5) * F[0]) * inv, (j[1] + R(0.5) * F[1]) * inv,
                    (j[2] + R(0.5) * F[2]) * inv};
    const R cs2 = R(1) / R(3), a = R(1) - omega, b = R(1) - R(0.5) * omega;
    const int ia[6] = {0, 1, 2, 0, 0, 1}, ib[6] = {0, 1, 2, 1, 2, 2};
    R A[6];
    for (int k = 0; k < 6; ++k) {
      const R ruu = rho * u[ia[k]] * u[ib[k]];
      // Isotropic part rho cs^2 I lives on the lattice's D axes only (no zz term in 2D).
      const R neq = pi[k] - ruu - (k < L::D ? rho * cs2 : R(0));
      A[k] = ruu + a * neq + b * (u[ia[k]] * F[ib[k]] + F[ia[k]] * u[ib[k]]);
    }
    const R js[3] = {rho * u[0] + R(0.5) * F[0], rho * u[1] + R(0.5) * F[1],
                     rho * u[2] + R(0.5) * F[2]};
    const R trA = A[0] + A[1] + (L::D == 3 ? A[2] : R(0));
    KOLIBRI_UNROLL
    for (int q = 0; q < L::Q; ++q) {
      const R cx = R(L::c(q, 0)), cy = R(L::c(q, 1)), cz = R(L::c(q, 2));
      const R cAc = cx * cx * A[0] + cy * cy * A[1] + cz * cz * A[2] +
                    R(2) * (cx * cy * A[3] + cx * cz * A[4] + cy * cz * A[5]);
      f[q] = R(L::w(q)) *
             (rho + R(3) * (cx * js[0] + cy * js[1] + cz * js[2]) + R(4.5) * (cAc - cs2 * trA));
    }
  }
};

}  // namespace kolibri
