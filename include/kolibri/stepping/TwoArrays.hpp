// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Two population arrays (pull streaming): each step reads one array and writes the
/// other, in any layout (SoA, CSoA, or tile-blocked on the tiled grid); the only scheme with
/// immersed bodies for now, and the one whose halo exchange overlaps the interior update on
/// several ranks.
#pragma once

#include <kolibri/collision/Factory.hpp>
#include <kolibri/stepping/Scheme.hpp>
#include <kolibri/stepping/TiledValues.hpp>

#include <functional>
#include <type_traits>

namespace kolibri {

template <class L, class S, class C>
class TwoArrays final : public Scheme<L, S> {
 public:
  using typename Scheme<L, S>::V;

  TwoArrays(const SolverConfig& cfg, const Level<L, S>& level, const std::vector<Flag>& host_flags)
      : m_op(CollisionFactory<C>::make(cfg)), m_split_collision(cfg.collision_kernels == 2) {
    Index size = 0;
    std::function<Index(Index, int)> slot;  // the halo lists' value (cell, slot)
    if (cfg.tile_edge > 0) {
      // The tiled grid: the values tile-blocked over the kept tiles; values() is a dense SoA
      // copy made when asked for (settle), so the code reading the state by cell is unchanged.
      m_tiles = TiledValues<L, S>(level, cfg.tile_edge, host_flags, true);
      this->m_idx = Slots::soa(level.grid.cells(), L::Q);
      size = m_tiles.size();
      slot = m_tiles.halo_slot();
    } else {
      this->m_idx = population_slots<L>(cfg, level.grid.cells());
      size = this->m_idx.size();
      slot = [idx = this->m_idx](Index cell, int q) { return idx(cell, q); };
    }
    if (level.dist.comm) m_pull = make_exchange<L, V>(level, cfg, host_flags, HaloMode::Pull, slot);
    m_f[0] = Kokkos::View<V*, MemSpace>("kolibri::f_a", size);
    m_f[1] = Kokkos::View<V*, MemSpace>("kolibri::f_b", size);
  }

  void step(Level<L, S>& level, std::int64_t first, std::int64_t n) override {
    // the stream-collide kernels, compiled for each layout
    auto run = [&](auto idx) {
      using I = decltype(idx);
      steps(StreamCollide<L, S, C, I>{{}, {}, level.boundary, idx, m_op, level.rules}, level, first,
            n);
    };
    if (m_tiles.active()) {
      m_tiles.stepping();  // the dense copy is out of date (and its memory free) until settle()
      run(m_tiles.index());
    } else {
      with_layout<L>(this->m_idx, run);
    }
  }

  void set_equilibrium(const Level<L, S>& level, Kokkos::View<const double*, MemSpace> rho,
                       Kokkos::View<const double* [3], MemSpace> u) override {
    fill_equilibrium<L, S>(level, values(), this->m_idx, rho, u, false, m_op);
    loaded(0);
    Kokkos::fence();
  }

  /// On tiles: the dense copy (TiledValues).
  Kokkos::View<V*, MemSpace> values() const override {
    return m_tiles.active() ? m_tiles.dense() : m_f[m_cur];
  }
  StateLayout layout() const override { return {}; }
  int phase() const override { return 0; }
  void loaded(int) override {
    if (m_tiles.active()) m_tiles.load(m_f[m_cur], !m_pull.active());
    refresh_ghosts();
  }
  /// On tiles: the tile-blocked state into the dense copy.
  void settle() const override {
    if (m_tiles.active()) m_tiles.settle(m_f[m_cur]);
  }
  double exchange_time_per_step(int repeats) override {
    return m_pull.time_alone(m_f[m_cur], repeats);
  }
  /// On tiles: the kept tiles' two arrays and the tile map, over the box's cells.
  double state_bytes_per_cell(const Level<L, S>& level) const override {
    if (!m_tiles.active()) return 2.0 * this->m_idx.count * sizeof(V);
    return (2.0 * double(m_f[0].extent(0)) * sizeof(V) + m_tiles.map_bytes()) /
           double(level.grid.cells());
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
    using Range = Kokkos::IndexType<Index>;
    constexpr bool tiled = std::is_same_v<decltype(K::idx), TileIndex>;
    // The tile kernel over threads [begin, end) (TileMap: the border tiles' cells first).
    auto tiles = [&](const char* label, const ExecSpace& exec, const K& kk, Index begin,
                     Index end) {
      with_tile_edge<L>(m_tiles.map().shape, [&](auto edge) {
        tile_launch<decltype(edge)::value>(label, exec, kk, begin, end);
      });
    };
    auto interior = [&](const K& kk) {
      if constexpr (tiled) {
        const Index begin = m_pull.active() ? m_tiles.map().border_cells() : 0;  // the border
        tiles(TileInteriorTag::label, level.exec, kk, begin, m_tiles.map().kept_cells());
      } else if (m_split_collision) {
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
    for (std::int64_t s = 0; s < nsteps; ++s) {
      level.start_step();
      k.bc.faces = level.faces_at(first + s);
      k.src = m_f[m_cur];
      k.dst = m_f[1 - m_cur];
      if (level.outlets.active())
        level.outlets.step_two_arrays(PostCollision<L, S, decltype(k.idx)>{k.src, k.idx}, k.bc,
                                      level.exec, k.bc.faces);
      if (level.ib.active()) level.ib.apply(m_f[m_cur], k.bc, this->m_idx, first + s);
      if (m_pull.active()) {
        // Two streams: the cells next to the ghost layers, the pack, the transfer and the
        // unpack on the exchange's instance, the other cells meanwhile on the level's one.
        const ExecSpace& ex = m_pull.exec();
        level.outlets.join_densities(level.exec);  // (on several ranks the sums ran there)
        m_join.join(level.exec, ex);  // the border cells write where the last step's cells read
        if constexpr (tiled)  // the border tiles through the tile kernel (their other cells too)
          tiles(TileInteriorTag::border_label, ex, k, 0, m_tiles.map().border_cells());
        else
          Kokkos::parallel_for(BorderTag::label,
                               Kokkos::RangePolicy<ExecSpace, BorderTag, Range>(
                                   ex, 0, Index(level.border.extent(0))),
                               k);
        if (nbb > 0) level.boundary_cells(ex, 0, nbb, k);
        level.mark(ex, StepPoint::Border);
        m_pull.pack(m_f[1 - m_cur]);
        level.mark(ex, StepPoint::Packed);
        interior(k);  // every cell but the border cells (tiles) and the listed boundary cells
        if (nb > nbb) level.boundary_cells(level.exec, nbb, nb, k);
        faces(k);
        level.mark(level.exec, StepPoint::Interior);
        m_pull.post();
        level.mark(ex, StepPoint::Transferred);
        m_pull.finish(m_f[1 - m_cur]);
        level.mark(ex, StepPoint::Received);
        m_join.join(ex, level.exec);  // the next step's cells read the border cells and ghosts
      } else {
        interior(k);
        level.outlets.join_densities(level.exec);  // the boundary cells read the faces' densities
        if (nb > 0) level.boundary_cells(level.exec, 0, nb, k);
        faces(k);
        level.mark(level.exec, StepPoint::Interior);
      }
      level.mark(level.exec, StepPoint::End);
      m_cur = 1 - m_cur;
    }
  }

  /// The tile kernel for tiles of E cells a side over threads [begin, end) on `exec` (named
  /// `label`), with the list launches' step state (K).
  template <int E, class K>
  void tile_launch(const char* label, const ExecSpace& exec, const K& kk, Index begin,
                   Index end) const {
    if (begin == end) return;
    using Kernel = TileStreamCollide<L, S, C, E>;
    const Index threads = (end - begin) / Kernel::cells;  // [begin, end): whole tiles
    const DeviceTileMap& t = m_tiles.map();
    Kokkos::parallel_for(
        label,
        Kokkos::RangePolicy<ExecSpace, TileInteriorTag, Kokkos::IndexType<Index>>(exec, 0, threads),
        Kernel{kk.src, kk.dst, Kernel::Map::of(t), kk.collide, kk.bc, begin, threads});
  }

  C m_op;
  bool m_split_collision =
      false;  ///< the interior collision in two launches (collision_kernels = 2)
  Kokkos::View<V*, MemSpace> m_f[2];
  int m_cur = 0;              ///< the array holding the current state
  TiledValues<L, S> m_tiles;  ///< the tiled grid (tile_edge > 0); inactive on the dense box
  HaloExchange<V> m_pull;     ///< multi-rank: the crossing populations after each step
  StreamJoin m_join;          ///< the order of the two instances' work
};

}  // namespace kolibri
