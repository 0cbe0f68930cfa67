// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Each collision operator with its parameters from the case (tau, TRT magic, MRT rates).
#pragma once

#include <kolibri/collision/Kbc.hpp>
#include <kolibri/collision/Mrt.hpp>
#include <kolibri/config/Case.hpp>

namespace kolibri {

/// \brief Operator parameters from the configuration.
template <class C>
struct CollisionFactory;
template <class L, class R>
struct CollisionFactory<Bgk<L, R>> {
  static Bgk<L, R> make(const SolverConfig& c) { return {R(1.0 / c.tau)}; }
};
template <class L, class R>
struct CollisionFactory<Trt<L, R>> {
  static Trt<L, R> make(const SolverConfig& c) {
    const double lp = c.tau - 0.5;                    // 1/omega+ - 1/2
    const double tau_minus = c.trt_magic / lp + 0.5;  // Lambda = lp * (1/omega- - 1/2)
    return {R(1.0 / c.tau), R(1.0 / tau_minus)};
  }
};
template <class L, class R>
struct CollisionFactory<RegularizedBgk<L, R>> {
  static RegularizedBgk<L, R> make(const SolverConfig& c) { return {R(1.0 / c.tau)}; }
};
template <class L, class R>
struct CollisionFactory<RecursiveRegularizedBgk<L, R>> {
  static RecursiveRegularizedBgk<L, R> make(const SolverConfig& c) { return {R(1.0 / c.tau)}; }
};

template <class L, class R>
struct CollisionFactory<RawMomentMrt<L, R>> {
  static RawMomentMrt<L, R> make(const SolverConfig& c) {
    return RawMomentMrt<L, R>::suga(R(1.0 / c.tau), R(c.bulk_rate > 0 ? c.bulk_rate : 1.54));
  }
};
template <class L, class R>
struct CollisionFactory<CentralMomentMrt<L, R>> {
  static CentralMomentMrt<L, R> make(const SolverConfig& c) {
    // Default bulk rate: De Rosis's 1; the monomial basis ties it to the high-order rate
    // (stability).
    const double bulk = c.bulk_rate > 0 ? c.bulk_rate : c.cm_hermite ? 1.0 : -1.0;
    CentralMomentMrt<L, R> op{R(1.0 / c.tau), R(bulk), R(c.high_order_rate)};
    op.hermite = c.cm_hermite;
    if (c.collision == CollisionKind::AdaptiveCentralMoment) {
      op.policy = HighOrderRate::Adaptive;
      op.nu_a = R(c.acm_viscosity);
      op.inv_u_ref = R(1.0 / c.acm_velocity);
    }
    return op;
  }
};

template <class L, class R>
struct CollisionFactory<Kbc<L, R>> {
  static Kbc<L, R> make(const SolverConfig& c) {
    return {R(1.0 / c.tau), c.kbc_shear == KbcShear::WithTrace};
  }
};

/// \brief Whether operator C is defined on its lattice: the compile-time face of
/// config/Case.hpp's supports(lattice, collision) (raw-moment MRT on D3Q27, central moments and
/// KBC on the tensor-product lattices); the solver of an undefined pair is never compiled.
template <class C>
inline constexpr bool kDefinedOnLattice = true;
template <class L, class R>
inline constexpr bool kDefinedOnLattice<RawMomentMrt<L, R>> = std::is_same_v<L, D3Q27>;
template <class L, class R>
inline constexpr bool kDefinedOnLattice<CentralMomentMrt<L, R>> = kTensorLattice<L>;
template <class L, class R>
inline constexpr bool kDefinedOnLattice<Kbc<L, R>> = kTensorLattice<L>;

}  // namespace kolibri
