// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Two population arrays (pull streaming): each step reads one array and writes the
/// other, in either layout (SoA, CSoA); the only scheme with immersed bodies for now, and the one
/// whose halo exchange overlaps the interior update on several ranks.
#pragma once

#include <kolibri/collision/Factory.hpp>
#include <kolibri/stepping/Scheme.hpp>

namespace kolibri {

template <class L, class S, class C>
class TwoArrays final : public Scheme<L, S> {
 public:
  using typename Scheme<L, S>::V;

  TwoArrays(const SolverConfig& cfg, const Level<L, S>& level, const std::vector<Flag>& host_flags)
      : m_op(CollisionFactory<C>::make(cfg)), m_split_collision(cfg.collision_kernels == 2) {
    this->m_idx = population_slots<L>(cfg, level.grid.cells());
    m_f[0] = Kokkos::View<V*, MemSpace>("kolibri::f_a", this->m_idx.size());
    m_f[1] = Kokkos::View<V*, MemSpace>("kolibri::f_b", this->m_idx.size());
    if (level.dist.comm)
      m_pull = make_exchange<L, V>(
          level, cfg, host_flags, HaloMode::Pull,
          [idx = this->m_idx](Index cell, int slot) { return idx(cell, slot); });
  }

  void step(Level<L, S>& level, std::int64_t first, std::int64_t n) override {
    // the stream-collide kernels, compiled for each layout
    auto run = [&](auto idx) {
      using I = decltype(idx);
      steps(StreamCollide<L, S, C, I>{{}, {}, level.boundary, idx, m_op, level.rules}, level, first,
            n);
    };
    with_layout<L>(this->m_idx, run);
  }

  void set_equilibrium(const Level<L, S>& level, Kokkos::View<const double*, MemSpace> rho,
                       Kokkos::View<const double* [3], MemSpace> u) override {
    fill_equilibrium<L, S>(level, m_f[m_cur], this->m_idx, rho, u, false, m_op);
    refresh_ghosts();
    Kokkos::fence();
  }

  Kokkos::View<V*, MemSpace> values() const override { return m_f[m_cur]; }
  StateLayout layout() const override { return {}; }
  int phase() const override { return 0; }
  void loaded(int) override { refresh_ghosts(); }
  double exchange_time_per_step(int repeats) override {
    return m_pull.time_alone(m_f[m_cur], repeats);
  }
  double state_bytes_per_cell(const Level<L, S>&) const override {
    return 2.0 * this->m_idx.count * sizeof(V);
  }

 private:
  /// The neighbours' current populations into the ghost cells (after set-up or a restart).
  void refresh_ghosts() { m_pull.run(m_f[m_cur]); }

  /// The immersed-boundary forces, then the stream-collide launches (interior, boundary list,
  /// per-face lists), overlapped with the halo exchange on several ranks.
  template <class K>
  void steps(K k, Level<L, S>& level, std::int64_t first, std::int64_t nsteps) {
    const Index nb = Index(level.boundary.extent(0)), nbb = level.boundary_border;
    k.cell_force.field = level.ib.force();  // empty without bodies
    k.face_cells = level.face_cells;
    k.border_cells = level.border;
    auto interior = [&](const K& kk) {
      if (m_split_collision) {
        Kokkos::parallel_for(InteriorLowTag::label, level.template all_cells<InteriorLowTag>(), kk);
        Kokkos::parallel_for(InteriorHighTag::label, level.template all_cells<InteriorHighTag>(),
                             kk);
      } else if (level.links.extent(0) > 0) {  // boundary cells: most in this launch
        Kokkos::parallel_for(InteriorWallsTag::label, level.template all_cells<InteriorWallsTag>(),
                             kk);
      } else {
        Kokkos::parallel_for(InteriorTag::label, level.template all_cells<InteriorTag>(), kk);
      }
    };
    auto faces = [&](K kk) {
      for (int f = 0; f < 6; ++f) {
        if (level.face_start[f + 1] == level.face_start[f]) continue;
        kk.face = f;
        Kokkos::parallel_for(
            FaceTag::label,
            level.template range<FaceTag>(level.face_start[f], level.face_start[f + 1]), kk);
      }
    };
    using Range = Kokkos::IndexType<Index>;
    for (std::int64_t s = 0; s < nsteps; ++s) {
      k.bc.faces = level.faces_at(first + s);
      k.src = m_f[m_cur];
      k.dst = m_f[1 - m_cur];
      if (level.ib.active()) level.ib.apply(m_f[m_cur], k.bc, this->m_idx, first + s);
      if (m_pull.active()) {
        // Two streams: the cells next to the ghost layers, the pack, the transfer and the
        // unpack on the exchange's instance, the other cells meanwhile on the level's one.
        const ExecSpace& ex = m_pull.exec();
        m_join.join(level.exec, ex);  // the border cells write where the last step's cells read
        Kokkos::parallel_for(
            BorderTag::label,
            Kokkos::RangePolicy<ExecSpace, BorderTag, Range>(ex, 0, Index(level.border.extent(0))),
            k);
        if (nbb > 0)
          Kokkos::parallel_for(BoundaryTag::label,
                               Kokkos::RangePolicy<ExecSpace, BoundaryTag, Range>(ex, 0, nbb), k);
        m_pull.pack(m_f[1 - m_cur]);
        interior(k);  // every cell but the border cells and the listed boundary cells
        if (nb > nbb)
          Kokkos::parallel_for(BoundaryTag::label, level.template range<BoundaryTag>(nbb, nb), k);
        faces(k);
        m_pull.post();
        m_pull.finish(m_f[1 - m_cur]);
        m_join.join(ex, level.exec);  // the next step's cells read the border cells and ghosts
      } else {
        interior(k);
        if (nb > 0)
          Kokkos::parallel_for(BoundaryTag::label, level.template range<BoundaryTag>(0, nb), k);
        faces(k);
      }
      m_cur = 1 - m_cur;
    }
  }

  C m_op;
  bool m_split_collision =
      false;  ///< the interior collision in two launches (collision_kernels = 2)
  Kokkos::View<V*, MemSpace> m_f[2];
  int m_cur = 0;           ///< the array holding the current state
  HaloExchange<V> m_pull;  ///< multi-rank: the crossing populations after each step
  StreamJoin m_join;       ///< the order of the two instances' work
};

}  // namespace kolibri
