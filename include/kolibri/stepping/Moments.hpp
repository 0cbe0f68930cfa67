// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The moment representation (valero-lara): the regularized operators' post-collision
/// moments stored instead of populations, one array whose edge cells have two places
/// (MomentPlacement), stepped by the column kernel of MomentStream.hpp.
#pragma once

#include <kolibri/collision/Factory.hpp>
#include <kolibri/grid/CellLists.hpp>
#include <kolibri/stepping/MomentStream.hpp>
#include <kolibri/stepping/Scheme.hpp>

#include <cstdint>

namespace kolibri {

/// \brief The moment kernel's tile: cfg.moment_tile where given (GPU backends; one of the tiles
/// compiled, MomentTiles), else 30 x 6 in 3D (32 x 8 threads with the ring) and 254 x 1 in 2D;
/// columns of `layers` layers in segments of moment_segment_for (64 layers in 3D and 32 in 2D
/// unless given: the fastest on an H100 at 256^3 and 4096^2; 3D: 1-2% over 32 at 256^3, 5% at
/// 128^3, 1% under at 512^3: docs/performance.md); on host backends a fixed one-thread tile.
template <class L, class R, class C>
MomentTile moment_tile_for(const SolverConfig& cfg, int layers) {
  MomentTile t = L::D == 3 ? MomentTile{30, 6, 0, 2} : MomentTile{254, 1, 0, 2};
  if (cfg.moment_tile[0] > 0) t.tx = cfg.moment_tile[0];
  if (cfg.moment_tile[1] > 0) t.ty = L::D == 3 ? cfg.moment_tile[1] : 1;
  t.segment = moment_segment_for(L::D, layers, cfg.moment_segment);
  return MomentStep<L, R, C>::fit(t);
}

/// \brief The moment scheme; only for the regularized operators with values stored in the
/// arithmetic type.
template <class S, class C>
inline constexpr bool kMomentScheme =
    kMomentOperator<C>&& std::is_same_v<typename S::value_type, typename S::real>;

template <class L, class S, class C>
class Moments final : public Scheme<L, S> {
  static_assert(kMomentScheme<S, C>,
                "the moment representation needs a regularized operator and native storage");

 public:
  using typename Scheme<L, S>::R;
  using typename Scheme<L, S>::V;
  static constexpr int M = MomentSlots<L>::M;

  /// The moments of the cells, then the shadow of the edge cells (MomentPlacement).
  Moments(const SolverConfig& cfg, const Level<L, S>& level, const std::vector<Flag>& host_flags)
      : m_op(CollisionFactory<C>::make(cfg)),
        m_tile(moment_tile_for<L, R, C>(cfg, level.grid.n[L::D - 1])),
        m_cells(level.grid.cells()),
        m_exec(level.exec) {
    const DenseGrid& g = level.grid;
    m_place = MomentPlacement(L::D, g.n[0], g.n[1], g.n[2], m_tile.tx, m_tile.ty, m_tile.segment,
                              cfg.moment_arrays == 2);
    this->m_idx = moment_slots(L::D, m_place.stride(), M);
    m_f = Kokkos::View<V*, MemSpace>("kolibri::f_a", this->m_idx.size());
    const MomentPlace place = m_place.host();
    m_walls = MomentWallCells(host_flags, place.columns, place.layers, place.segment);
    m_wall_sums = Kokkos::View<R*, MemSpace>("kolibri::moment_wall_sums",
                                             std::size_t(m_walls.count()) * kMomentWallValues);
    if (level.dist.comm) {  // one exchange for each parity of the moment array
      for (int parity = 0; parity < 2; ++parity)
        m_halo[parity] = make_exchange<L, V>(
            level, cfg, host_flags, HaloMode::Moments,
            [place, parity, idx = this->m_idx](Index cell, int slot) {
              return idx(place.at(cell, parity), slot);
            },
            M);
      std::vector<std::int32_t> teams = MomentStep<L, R, C>::border_first(
          g, m_tile.tx, m_tile.ty, m_place.device().segment, m_border_teams);
      m_teams = to_device(teams, "kolibri::moment_teams");
    }
  }

  /// On several ranks in two streams: the teams that write cells next to a ghost layer, then the
  /// pack, the transfer and the unpack on the exchange's instance, the other teams meanwhile on
  /// the level's instance (teams of one launch run concurrently anyway; the ghost cells, read at
  /// one parity and received at the other, have two places). The instances wait for each other
  /// on the device, not the host.
  void step(Level<L, S>& level, std::int64_t first, std::int64_t nsteps) override {
    MomentStep<L, R, C> k{m_f,         m_place.device(), 0,         m_op,
                          level.rules, m_tile.tx,        m_tile.ty, m_tile.planes};
    k.links = level.links.data();
    k.walls = &m_walls;
    k.wall_sums = m_wall_sums.data();
    k.cell_force = level.ib.force();  // empty without bodies
    const int teams = int(m_teams.extent(0));
    for (std::int64_t s = 0; s < nsteps; ++s) {
      level.start_step();
      k.bc.faces = level.faces_at(first + s);
      k.parity = m_parity;
      if (level.ib.active())  // the bodies' force from the populations this step streams
        level.ib.apply_with(k.departing(), false, k.bc, first + s);
      // the characteristic outlets' densities of this step, from the layer's states as the
      // populations this step streams give them (before sum_walls, whose outlet links read them)
      if (level.outlets.active()) level.outlets.step(k.departing(), k.bc, level.exec, k.bc.faces);
      k.body_cells = body_cells(level.ib.node_box());
      k.sum_walls(level.exec);  // (before the border teams: the join below orders them)
      HaloExchange<V>& halo = m_halo[1 - m_parity];  // into the ghosts at the new parity
      if (halo.active()) {
        MomentStep<L, R, C> border = k, inner = k;
        border.teams = m_teams.data(), border.team_count = m_border_teams;
        inner.teams = m_teams.data() + m_border_teams, inner.team_count = teams - m_border_teams;
        m_join.join(level.exec, halo.exec());  // the border teams write what the last step read
        if (border.team_count > 0) border.run(halo.exec());
        level.mark(halo.exec(), StepPoint::Border);
        halo.pack(m_f);
        level.mark(halo.exec(), StepPoint::Packed);
        if (inner.team_count > 0) inner.run(level.exec);
        level.mark(level.exec, StepPoint::Interior);
        halo.post();
        level.mark(halo.exec(), StepPoint::Transferred);
        halo.finish(m_f);  // the neighbours' new moments in the ghost cells
        level.mark(halo.exec(), StepPoint::Received);
        m_join.join(halo.exec(), level.exec);  // the next step reads them
      } else {
        k.run(level.exec);
        level.mark(level.exec, StepPoint::Interior);
      }
      level.mark(level.exec, StepPoint::End);
      m_parity = 1 - m_parity;
    }
  }

  void set_equilibrium(const Level<L, S>& level, Kokkos::View<const double*, MemSpace> rho,
                       Kokkos::View<const double* [3], MemSpace> u) override {
    m_parity = 0;
    const InitMoments<L, R> init{
        m_f, rho, u, this->m_idx, {level.force[0], level.force[1], level.force[2]}, m_op.omega};
    Kokkos::parallel_for("kolibri::init_moments", level.all_cells(), init);
    refresh_ghosts();
    Kokkos::fence();
  }

  Kokkos::View<V*, MemSpace> values() const override { return m_f; }
  /// Slot 0 holds rho, slots 1..D j* = rho u + F/2.
  StateLayout layout() const override { return {false, -1.0, true}; }
  int phase() const override { return 3; }
  void loaded(int) override {
    m_parity = 0;  // the saved state has the edge cells in the main part
    refresh_ghosts();
  }
  double exchange_time_per_step(int repeats) override {
    return m_halo[m_parity].time_alone(m_f, repeats);
  }
  double state_bytes_per_cell(const Level<L, S>& level) const override {
    const double walls = m_walls.bytes() + double(m_wall_sums.extent(0)) * sizeof(R);
    return (double(this->m_idx.size()) * sizeof(V) + walls) / double(level.grid.cells());
  }

  // (public: the extended device lambdas inside need it)

  /// At parity 1: the edge cells' moments back into the main part (parity 0), where the code
  /// reading the state by cell (fields, diagnostics, checkpoints, populations) finds them. A copy
  /// of the edge cells, only when output is asked for.
  void settle() const override {
    if (m_parity == 0) return;
    const Kokkos::View<V*, MemSpace> f = m_f;
    const MomentPlace place = m_place.device();
    const Slots idx = this->m_idx;
    Kokkos::parallel_for(
        "kolibri::moment_settle",
        Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<Index>>(m_exec, 0, m_cells),
        KOKKOS_LAMBDA(const Index n) {
          const Index from = place.at(n, 1);
          if (from == n) return;
          for (int k = 0; k < M; ++k) f(idx(n, k)) = f(idx(from, k));
        });
    Kokkos::fence();
    m_parity = 0;
  }

  /// The post-collision populations rebuilt from the moments, q-major.
  std::vector<double> populations(const Level<L, S>& level) const override {
    settle();
    const Index n = level.grid.cells();
    Kokkos::View<double*, MemSpace> out("kolibri::populations", std::size_t(n) * L::Q);
    const Kokkos::View<const R*, MemSpace> m = m_f;
    const Slots idx = this->m_idx;
    const auto flags = level.flags;
    const auto op = m_op;
    const R force[3] = {level.force[0], level.force[1], level.force[2]};
    Kokkos::parallel_for(
        "kolibri::moment_populations", level.all_cells(), KOKKOS_LAMBDA(const Index i) {
          if (flags(i) == kSolid) return;
          R mi[M], f[L::Q];
          MomentSlots<L>::load(m.data() + idx(i, 0), idx.stride, mi);
          MomentSlots<L>::departing(mi, op, force, f);
          for (int q = 0; q < L::Q; ++q) out(Index(q) * n + i) = double(f[q]);
        });
    return to_host(out);
  }

 private:
  void refresh_ghosts() { m_halo[m_parity].run(m_f); }
  /// The node box of the bodies' kernels in the level's own cells (the only cells whose force
  /// the bodies' last apply can have made non-zero).
  static BodyCells body_cells(const NodeBox& box) {
    BodyCells b;
    for (int d = 0; d < 3; ++d) {
      b.lo[d] = box.lo[d] - box.origin[d];
      b.hi[d] = b.lo[d] + box.n[d];
    }
    return b;
  }

  C m_op;
  MomentTile m_tile{};
  Index m_cells = 0;        ///< the level's cells, ghosts included
  ExecSpace m_exec;         ///< the level's instance
  MomentPlacement m_place;  ///< the cells updated in place and the edge cells' two places
  Kokkos::View<V*, MemSpace> m_f;
  MomentWallCells m_walls;                 ///< the boundary cells in the kernel's order
  Kokkos::View<R*, MemSpace> m_wall_sums;  ///< what each reflects, before each step
  mutable int m_parity = 0;                ///< where the edge cells are (settle() moves them to 0)
  HaloExchange<V> m_halo[2];               ///< multi-rank: the exchange at parity 0 and 1
  StreamJoin m_join;                       ///< the order of the two instances' work
  Kokkos::View<std::int32_t*, MemSpace> m_teams;  ///< multi-rank: MomentStep::border_first
  int m_border_teams = 0;                         ///< the first ones of m_teams
};

}  // namespace kolibri
