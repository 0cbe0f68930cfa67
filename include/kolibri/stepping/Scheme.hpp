// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief A streaming scheme: how a level's state is stored and advanced. Each scheme owns its
/// arrays, its halo exchanges, its phase and what it saves; TwoArrays.hpp, InPlace.hpp and
/// Moments.hpp implement it. The solver (solver/SolverImpl.hpp) is a level plus one scheme.
#pragma once

#include <kolibri/config/Case.hpp>
#include <kolibri/parallel/Halo.hpp>
#include <kolibri/stepping/Level.hpp>
#include <kolibri/stepping/StreamCollide.hpp>

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace kolibri {

/// \brief The checkpoint phase of a saved state (its stored layout): 0 two arrays, 1 in place
/// after a local step, 2 in place holding arriving populations, 3 the moment representation.
/// The scheme that wrote each phase:
inline Streaming streaming_of_phase(int phase) {
  if (phase < 0 || phase > 3)
    throw std::invalid_argument("state phase " + std::to_string(phase) + " unknown");
  return phase == 0 ? Streaming::TwoArray : phase == 3 ? Streaming::Moments : Streaming::InPlace;
}

/// \tparam L lattice, S storage policy.
template <class L, class S>
class Scheme {
 public:
  using R = typename S::real;
  using V = typename S::value_type;
  using Fields =
      std::pair<Kokkos::View<const double*, MemSpace>, Kokkos::View<const double* [3], MemSpace>>;

  virtual ~Scheme() = default;
  /// `n` time steps of `level`; `first` is the number of the first (bodies move with time).
  virtual void step(Level<L, S>& level, std::int64_t first, std::int64_t n) = 0;
  /// The stored state from the equilibrium of rho and u (extent cells, or 1: every cell alike),
  /// with the ghost layers filled.
  virtual void set_equilibrium(const Level<L, S>& level, Kokkos::View<const double*, MemSpace> rho,
                               Kokkos::View<const double* [3], MemSpace> u) = 0;
  /// The array that code reading the state by cell reads (after settle()), at slots().
  virtual Kokkos::View<V*, MemSpace> values() const = 0;
  const Slots& slots() const { return m_idx; }
  /// Where a cell's density and velocity sit in values().
  virtual StateLayout layout() const = 0;
  /// The checkpoint phase of the current state (streaming_of_phase).
  virtual int phase() const = 0;
  /// values() now holds a saved state of `phase` (of this scheme): the scheme's own bookkeeping
  /// and the ghost layers follow (collective).
  virtual void loaded(int phase) = 0;
  /// In place with obstacle link rules: each listed cell's f*_k of the last streaming step for its
  /// rule links, per row of link rules and direction opposite(k) (the momentum exchange
  /// needs them after a streaming step, which leaves only the reflected values); empty otherwise.
  virtual Kokkos::View<const R*, MemSpace> link_leaving() const { return {}; }
  /// The ghost layers hold the neighbour ranks' current values (in place after a local step
  /// they lag until the next streaming step exchanges them; the momentum exchange of
  /// interpolated walls reads the cell behind a link, which may be a ghost). Collective.
  virtual void fill_ghosts() {}
  /// Brings the state into values() where a step left part of it elsewhere (moments).
  virtual void settle() const {}
  /// Seconds of halo exchange per time step, measured alone (collective).
  virtual double exchange_time_per_step(int repeats) = 0;
  /// Device bytes of state per cell of `level` (flags not included).
  virtual double state_bytes_per_cell(const Level<L, S>& level) const = 0;

  /// Post-collision populations, q-major (population q of cell n at q * cells + n). In place
  /// after a streaming step the state holds arriving populations; those are returned as stored.
  virtual std::vector<double> populations(const Level<L, S>& level) const {
    settle();
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, values());
    const std::size_t n = std::size_t(level.grid.cells());
    const bool opp = layout().opposite_slots;
    std::vector<double> out(n * L::Q);
    for (int q = 0; q < L::Q; ++q) {
      const int slot = opp ? L::opposite(q) : q;
      const std::size_t to = std::size_t(q) * n;
      for (std::size_t i = 0; i < n; ++i)
        out[to + i] = double(S::template load<L>(h(m_idx(Index(i), slot)), q));
    }
    return out;
  }

 protected:
  Slots m_idx{};  ///< the layout of the values: populations (SoA or CSoA) or moments
};

/// \brief The population layout of a population scheme: SoA or CSoA(alpha) (csoa_alpha_for).
template <class L>
Slots population_slots(const SolverConfig& cfg, Index cells) {
  const int alpha = csoa_alpha_for(cfg);
  return alpha == 0 ? Slots::soa(cells, L::Q) : Slots::csoa(cells, L::Q, alpha);
}

/// \brief Calls f with the layout of `idx` as its compile-time index type (SoA or CSoA<Q>): the
/// stream-collide kernels are compiled for each.
template <class L, class F>
void with_layout(const Slots& idx, F&& f) {
  if (idx.alpha == 0)
    f(idx.as_soa());
  else
    f(idx.template as_csoa<L::Q>());
}

/// \brief The halo exchange of one scheme on a multi-rank level: the cells' values that cross to
/// the neighbour ranks in `mode` (`moments` values a cell in HaloMode::Moments), value (cell, slot)
/// at array index at(cell, slot).
template <class L, class V, class S>
HaloExchange<V> make_exchange(const Level<L, S>& level, const SolverConfig& cfg,
                              const std::vector<Flag>& host_flags, HaloMode mode,
                              const std::function<Index(Index, int)>& at, int moments = 0) {
  const Distribution& d = level.dist;
  HaloLists lists = build_halo_lists<L>(d.dc, mode, sizeof(V), host_flags, cfg.faces, moments, at);
  return HaloExchange<V>(*d.comm, std::move(lists), d.device_buffers, d.nccl);
}

/// \brief The population schemes' initial state: the equilibrium of rho and u, post-collision,
/// in slot q (or opposite(q) in place).
template <class L, class S, class C>
void fill_equilibrium(const Level<L, S>& level,
                      const Kokkos::View<typename S::value_type*, MemSpace>& f, const Slots& idx,
                      Kokkos::View<const double*, MemSpace> rho,
                      Kokkos::View<const double* [3], MemSpace> u, bool opposite_slots,
                      const C& op) {
  const InitEquilibrium<L, S, C> init{
      f, rho, u, idx, {level.force[0], level.force[1], level.force[2]}, opposite_slots, op};
  Kokkos::parallel_for("kolibri::init_equilibrium", level.all_cells(), init);
}

}  // namespace kolibri
