// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief One population array streamed in place (the AA pattern), in any layout (SoA, CSoA, or
/// tile-blocked on the tiled grid): a local step (collide, write back to the opposite slots) and
/// a streaming step alternate; on several ranks a forward exchange before each streaming step
/// and a reverse one after it, both overlapping the streaming of the cells away from the rank
/// borders.
#pragma once

#include <kolibri/collision/Factory.hpp>
#include <kolibri/stepping/Scheme.hpp>
#include <kolibri/stepping/TileInPlace.hpp>
#include <kolibri/stepping/TiledValues.hpp>

#include <functional>
#include <type_traits>

namespace kolibri {

template <class L, class S, class C>
class InPlace final : public Scheme<L, S> {
 public:
  using typename Scheme<L, S>::R;
  using typename Scheme<L, S>::V;

  InPlace(const SolverConfig& cfg, const Level<L, S>& level, const std::vector<Flag>& host_flags)
      : m_op(CollisionFactory<C>::make(cfg)) {
    std::function<Index(Index, int)> slot;  // the halo lists' value (cell, slot)
    if (cfg.tile_edge > 0) {
      // The tiled grid: the values tile-blocked over the kept tiles; values() is a dense SoA
      // copy made when asked for (TiledValues).
      m_tiles = TiledValues<L, S>(level, cfg.tile_edge, host_flags, false);
      this->m_idx = Slots::soa(level.grid.cells(), L::Q);
      m_f = Kokkos::View<V*, MemSpace>("kolibri::f_a", m_tiles.size());
      slot = m_tiles.halo_slot();
    } else {
      this->m_idx = population_slots<L>(cfg, level.grid.cells());
      m_f = Kokkos::View<V*, MemSpace>("kolibri::f_a", this->m_idx.size());
      slot = [idx = this->m_idx](Index cell, int q) { return idx(cell, q); };
    }
    if (level.saved_rows.extent(0) > 0) {  // cells with a link across a pressure or outflow face
      using Step = InPlaceStep<L, S, C>;
      m_saved_width = level.layer_links ? Step::kSavedLayer : Step::kSavedState;
      for (const FaceBC& f : cfg.faces)
        m_pressure_steps = m_pressure_steps || (f.is_pressure() && f.from_layer());
      m_pressure_steps = m_pressure_steps && level.layer_links;
      m_saved = Kokkos::View<R*, MemSpace>("kolibri::boundary_saved",
                                           level.boundary.extent(0) * std::size_t(m_saved_width));
    }
    if (level.link_distance.extent(0) > 0) {  // obstacle link rules
      m_link_same = Kokkos::View<R*, MemSpace>("kolibri::link_same", level.link_distance.extent(0));
      m_link_leaving =
          Kokkos::View<R*, MemSpace>("kolibri::link_leaving", level.link_distance.extent(0));
    }
    if (level.dist.comm) {
      m_fwd = make_exchange<L, V>(level, cfg, host_flags, HaloMode::AAForward, slot);
      m_rev = make_exchange<L, V>(level, cfg, host_flags, HaloMode::AAReverse, slot);
    }
  }

  void step(Level<L, S>& level, std::int64_t first, std::int64_t n) override {
    auto run = [&](auto idx) {
      using I = decltype(idx);
      if (level.ib.active())  // the kernel that reads the bodies' force per cell
        steps(InPlaceStep<L, S, C, I, true>{{}, m_f, level.boundary, idx, m_op, level.rules, {}},
              level, first, n);
      else
        steps(InPlaceStep<L, S, C, I>{{}, m_f, level.boundary, idx, m_op, level.rules, {}}, level,
              first, n);
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
    m_arriving = false;
    fill_equilibrium<L, S>(level, values(), this->m_idx, rho, u, true, m_op);
    if (m_tiles.active()) m_tiles.load(m_f, !m_fwd.active());
    refresh_ghosts();
    Kokkos::fence();
  }

  /// On tiles: the dense copy (TiledValues).
  Kokkos::View<V*, MemSpace> values() const override {
    return m_tiles.active() ? m_tiles.dense() : m_f;
  }
  void settle() const override {
    if (m_tiles.active()) m_tiles.settle(m_f);
  }
  Kokkos::View<const R*, MemSpace> link_leaving() const override { return m_link_leaving; }
  void fill_ghosts() override {
    if (!m_arriving) refresh_ghosts();  // (the next streaming step sends the same values)
    Kokkos::fence();
    if (m_tiles.active() && m_fwd.active()) {  // the dense copy's ghost cells too
      m_tiles.changed();
      m_tiles.settle(m_f);
    }
  }
  /// After a local step population q sits in slot opposite(q), post-collision; after a
  /// streaming step in slot q, arriving.
  StateLayout layout() const override {
    return m_arriving ? StateLayout{false, +1.0} : StateLayout{true, -1.0};
  }
  int phase() const override { return m_arriving ? 2 : 1; }
  void loaded(int phase) override {
    m_arriving = phase == 2;
    if (m_tiles.active()) m_tiles.load(m_f, !m_fwd.active());
    refresh_ghosts();
  }
  /// A forward and a reverse exchange every two steps.
  double exchange_time_per_step(int repeats) override { return m_fwd.time_alone(m_f, repeats); }
  /// On tiles: the kept tiles' array and the tile map, over the box's cells.
  double state_bytes_per_cell(const Level<L, S>& level) const override {
    const double links = double(m_link_same.extent(0) + m_link_leaving.extent(0)) * sizeof(R);
    if (!m_tiles.active())
      return 1.0 * this->m_idx.count * sizeof(V) + links / double(level.grid.cells());
    return (double(m_f.extent(0)) * sizeof(V) + m_tiles.map_bytes() + links) /
           double(level.grid.cells());
  }

 private:
  /// The neighbours' departing populations into the ghost cells, as each streaming step begins
  /// (harmless after a streaming step: the local step reads no ghost cell). Here it also opens
  /// the transport's connections before the first timed step (NCCL connects a peer on first use:
  /// about a second).
  void refresh_ghosts() { m_fwd.run(m_f); }

  /// Local steps on the level's instance; a streaming step on several ranks in two streams: on
  /// the exchanges' instance the forward exchange, the cells next to the ghost layers (the only
  /// ones that read or write ghost cells) and the reverse exchange, the other cells meanwhile on
  /// the level's instance. Every slot is touched by one cell in a streaming step, so the two
  /// streams share no values; the instances wait for each other on the device, not the host.
  template <class K>
  void steps(K k, Level<L, S>& level, std::int64_t first, std::int64_t nsteps) {
    const Index nb = Index(level.boundary.extent(0)), nbb = level.boundary_border;
    const Index nborder = Index(level.border.extent(0));
    k.saved = m_saved;
    k.saved_width = m_saved_width;
    k.saved_rows = level.saved_rows;
    k.border_cells = level.border;
    k.link_same = m_link_same;
    k.link_leaving = m_link_leaving;
    k.link_cells = level.link_cells;
    if constexpr (std::is_base_of_v<WithCellForce<R>, K>) k.cell_force.field = level.ib.force();
    const bool rules = m_link_same.extent(0) > 0;
    const Index nsaved = Index(level.saved_rows.extent(0));
    const Index nl = Index(level.link_cells.extent(0));
    using Range = Kokkos::IndexType<Index>;
    // After a streaming step, once every source and every cell behind has written: the developed
    // pressure faces' density step, the near-wall links' interpolation.
    const auto complete = [&] {
      if (level.outlets.active())  // the faces' densities of the step after the streaming one
        level.outlets.step_saved(m_saved, m_saved_width, K::kStateAfter, level.exec, k.bc.faces);
      if (m_pressure_steps)
        Kokkos::parallel_for(PressureStepTag::label,
                             level.template range<PressureStepTag>(0, nsaved), k);
      if (rules)
        Kokkos::parallel_for(LinkCompleteTag::label, level.template range<LinkCompleteTag>(0, nl),
                             k);
    };
    for (std::int64_t s = 0; s < nsteps; ++s) {
      level.start_step();
      k.bc.faces = level.faces_at(first + s);
      if (!m_arriving) outlets(InPlaceOutletPoint::StepStart, k, level);
      // Immersed bodies read the populations this step collides: before a streaming step the
      // upwind cells' departing slots, ghost cells included, so on several ranks the forward
      // exchange comes first (blocking) and the step does not overlap it. So do the outflow
      // faces' rules (BoundarySaveTag reads ghost cells along the face).
      bool exchanged = false;
      if ((level.ib.active() || level.layer_links) && !m_arriving && m_fwd.active()) {
        level.exec.fence();  // the last step's writes, on the level's instance
        m_fwd.run(m_f);
        exchanged = true;
      }
      if (level.ib.active()) level.ib.apply(m_f, k.bc, this->m_idx, first + s, layout());
      if (m_arriving) {
        launch<LocalTag, TileLocalTag>(k, level);
        level.mark(level.exec, StepPoint::LocalEnd);
      } else if (m_fwd.active()) {
        if (nsaved > 0)  // pressure and outflow faces read slots that the streaming overwrites
          Kokkos::parallel_for(BoundarySaveTag::label,
                               level.template range<BoundarySaveTag>(0, nsaved), k);
        outlets(InPlaceOutletPoint::StatesSaved, k, level);
        if (rules)  // so do the far-wall links
          Kokkos::parallel_for(LinkSaveTag::label, level.template range<LinkSaveTag>(0, nl), k);
        m_join.join(level.exec, m_fwd.exec());  // the pack reads the departing slots
        if (!exchanged) m_fwd.pack(m_f);
        level.mark(m_fwd.exec(), StepPoint::ForwardPacked);
        stream_interior(k, level);
        if (nb > nbb) level.boundary_cells(level.exec, nbb, nb, k);
        level.mark(level.exec, StepPoint::Interior);
        if (!exchanged) {
          m_fwd.post();
          m_fwd.finish(m_f);  // the neighbours' departing populations in the ghost cells
        }
        level.mark(m_fwd.exec(), StepPoint::ForwardReceived);
        const ExecSpace& ex = m_rev.exec();
        m_join.join(m_fwd.exec(), ex);
        if (nborder > 0)
          Kokkos::parallel_for(BorderTag::label,
                               Kokkos::RangePolicy<ExecSpace, BorderTag, Range>(ex, 0, nborder), k);
        if (nbb > 0) level.boundary_cells(ex, 0, nbb, k);
        level.mark(ex, StepPoint::Border);
        m_rev.pack(m_f);
        level.mark(ex, StepPoint::Packed);
        m_rev.post();
        level.mark(ex, StepPoint::Transferred);
        m_rev.finish(m_f);  // what this step wrote into ghost cells, back to their owners
        level.mark(ex, StepPoint::Received);
        m_join.join(ex, level.exec);  // the next local step reads them
        complete();                   // (sources and cells behind in ghost cells included)
        level.mark(level.exec, StepPoint::End);
      } else {
        if (nsaved > 0)
          Kokkos::parallel_for(BoundarySaveTag::label,
                               level.template range<BoundarySaveTag>(0, nsaved), k);
        outlets(InPlaceOutletPoint::StatesSaved, k, level);
        if (rules)
          Kokkos::parallel_for(LinkSaveTag::label, level.template range<LinkSaveTag>(0, nl), k);
        stream_interior(k, level);
        if (nborder > 0)
          Kokkos::parallel_for(BorderTag::label, level.template range<BorderTag>(0, nborder), k);
        if (nb > 0) level.boundary_cells(level.exec, 0, nb, k);
        level.mark(level.exec, StepPoint::Interior);
        complete();
        level.mark(level.exec, StepPoint::End);
      }
      m_arriving = !m_arriving;
    }
  }

  /// The local step (every updated cell) and the streaming step's cells with only fluid
  /// neighbours: the dense kernel's DenseTag over all cells, on tiles the tile kernel's TileTag.
  template <class DenseTag, class TileTag, class K>
  void launch(const K& k, Level<L, S>& level) const {
    if constexpr (std::is_same_v<decltype(K::idx), TileIndex>)
      tile_launch<TileTag>(k, level);
    else
      Kokkos::parallel_for(DenseTag::label, level.template all_cells<DenseTag>(), k);
  }
  /// The streaming step's interior launch: on a box with walls (wall-link masks) also the
  /// boundary cells whose walls their masks resolve (InteriorWallsTag; on tiles TileStreamTag
  /// takes them either way), the periodic box's kernel without their code.
  template <class K>
  void stream_interior(const K& k, Level<L, S>& level) const {
    if (level.links.extent(0) > 0)
      launch<InteriorWallsTag, TileStreamTag>(k, level);
    else
      launch<InteriorTag, TileStreamTag>(k, level);
  }
  /// The tile kernel (TileInPlace) with tag T over the kept tiles' cells, on the level's instance.
  template <class T, class K>
  void tile_launch(const K& k, Level<L, S>& level) const {
    const DeviceTileMap& t = m_tiles.map();
    if (t.kept_cells() == 0) return;
    with_tile_edge<L>(t.shape, [&](auto edge) {
      using Kernel = TileInPlace<L, S, C, decltype(edge)::value>;
      Kernel kernel{m_f, Kernel::Map::of(t), k.collide, k.bc};
      Kokkos::parallel_for(T::label,
                           Kokkos::RangePolicy<ExecSpace, T, Kokkos::IndexType<Index>>(
                               level.exec, 0, t.kept_cells()),
                           kernel);
    });
  }

  /// A streaming step's characteristic faces' densities (its gather's faces), at the point `at`
  /// of the step (CharacteristicOutlets::step_in_place chooses the one where they are summed).
  template <class K>
  void outlets(InPlaceOutletPoint at, K& k, Level<L, S>& level) {
    level.outlets.step_in_place(at, typename K::Departing{k.a, k.idx}, k.bc, m_saved, m_saved_width,
                                K::kStateBefore, level.exec, k.bc.faces);
  }

  C m_op;
  Kokkos::View<V*, MemSpace> m_f;
  TiledValues<L, S> m_tiles;  ///< the tiled grid (tile_edge > 0); inactive on the dense box
  bool m_arriving = false;    ///< the array holds arriving (pre-collision) populations
  Kokkos::View<R*, MemSpace> m_saved;  ///< pressure and outflow faces (InPlaceStep::saved)
  int m_saved_width = 0;
  /// Developed pressure faces beside this rank's cells: PressureStepTag after each streaming step.
  bool m_pressure_steps = false;
  Kokkos::View<R*, MemSpace> m_link_same, m_link_leaving;  ///< obstacle link rules (InPlaceStep)
  HaloExchange<V> m_fwd, m_rev;  ///< multi-rank: before / after each streaming step
  StreamJoin m_join;             ///< the order of the three instances' work
};

}  // namespace kolibri
