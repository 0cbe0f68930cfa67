// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The tiled grid's state as a population scheme holds it (two arrays or in place): the
/// tile map on the device and the dense SoA copy that the code reading the state by cell reads
/// (Scheme::values()), made by settle() when fields, probes, loads or checkpoints ask and freed
/// when the next step starts. So checkpoints are layout-free and the code off the hot path needs
/// no tile arithmetic.
#pragma once

#include <kolibri/stepping/Level.hpp>
#include <kolibri/stepping/TileStreamCollide.hpp>

#include <functional>
#include <memory>
#include <vector>

namespace kolibri {

template <class L, class S>
class TiledValues {
 public:
  using V = typename S::value_type;

  TiledValues() = default;
  /// The tiles of `level` (`edge` cells a side) from its cells' flags `host_flags` and wall-link
  /// masks; with `border_tiles` its border launch's cells are the tile kernel's, in the border
  /// tiles (TileMap::of: two arrays), without it they stay the border list's (in place).
  TiledValues(const Level<L, S>& level, const int edge, const std::vector<Flag>& host_flags,
              const bool border_tiles) {
    const TileMap map =
        TileMap::of(level.grid, L::D, edge, host_flags, to_host(level.links),
                    border_tiles ? to_host(level.border) : std::vector<std::uint32_t>{});
    m_map = DeviceTileMap::of(map);
    m_size = map.size(L::Q);
    m_dense_size = map.shape.cells() * L::Q;
    m_host_slot_of = std::make_shared<const std::vector<std::int32_t>>(map.slot_of);
  }

  /// The tiled grid is on (else the scheme steps the dense box and nothing here is used).
  bool active() const { return m_map.active(); }
  const DeviceTileMap& map() const { return m_map; }
  /// Values of the tile-blocked array (the kept tiles and the spare one).
  Index size() const { return m_size; }
  /// The index of the tile-blocked array for code holding dense cell numbers (the list kernels).
  TileIndex index() const { return m_map.index(L::Q); }
  /// The same index on the host, for the halo lists (make_exchange): it holds its own share of
  /// the slot table, so it outlives the map it came from.
  std::function<Index(Index, int)> halo_slot() const {
    return [slots = m_host_slot_of, shape = m_map.shape](Index cell, int q) {
      return TileIndex{shape.cells(), shape, L::Q, slots->data()}(cell, q);
    };
  }

  /// The dense copy, allocated here when absent (settle() fills it; a restart or the initial
  /// state writes it, then load()).
  Kokkos::View<V*, MemSpace> dense() const {
    if (m_dense.extent(0) == 0)
      m_dense = Kokkos::View<V*, MemSpace>(
          Kokkos::view_alloc("kolibri::f_dense", Kokkos::WithoutInitializing), m_dense_size);
    return m_dense;
  }
  /// A step is about to change the tiles: the dense copy is out of date and its memory freed.
  void stepping() {
    m_dense = {};
    m_settled = false;
  }
  /// The tiles changed outside a step (ghost cells filled): settle() copies them again.
  void changed() { m_settled = false; }

  /// The tile-blocked values `tiles` into the dense copy, unless it holds them already.
  void settle(const Kokkos::View<const V*, MemSpace>& tiles) const {
    if (m_settled) return;
    Kokkos::fence();  // the last step ran on the level's instance
    Kokkos::parallel_for(
        "kolibri::tiles_to_dense",
        Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<Index>>(0, m_map.shape.cells()),
        TilesToDense<L, S>{tiles, dense(), index(), std::int32_t(m_map.kept)});
    Kokkos::fence();
    m_settled = true;
  }

  /// The dense copy into the tiles `tiles` (after the initial state or a restart wrote it).
  /// `ghosts_current`: its ghost cells hold the neighbours' values (one rank); else they do not
  /// (a restart writes the real cells only) and the next settle() copies the tiles again, after
  /// the caller's exchange.
  void load(const Kokkos::View<V*, MemSpace>& tiles, const bool ghosts_current) {
    Kokkos::fence();  // the dense copy was written on another instance
    Kokkos::parallel_for(
        "kolibri::dense_to_tiles",
        Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<Index>>(0, m_map.kept_cells()),
        DenseToTiles<L, S>{dense(), tiles, m_map.tile_box, m_map.shape, m_map.shape.cells()});
    m_settled = ghosts_current;
  }

  /// Device bytes of the tile map (the values are the scheme's).
  double map_bytes() const { return m_map.bytes(); }

 private:
  DeviceTileMap m_map;
  Index m_size = 0, m_dense_size = 0;
  std::shared_ptr<const std::vector<std::int32_t>> m_host_slot_of;  ///< TileMap::slot_of
  mutable Kokkos::View<V*, MemSpace> m_dense;  ///< the dense copy values() returns
  mutable bool m_settled = false;              ///< m_dense holds the current state
};

}  // namespace kolibri
