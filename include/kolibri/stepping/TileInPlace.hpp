// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The in-place (AA pattern) kernels of the tiled grid (grid/TiledGrid.hpp), one thread
/// per cell of the kept tiles, tile by tile: the local step (collide, write back to the opposite
/// slots) and the streaming step's interior cells, kFluid and the boundary cells whose walls their
/// masks resolve (gather the upwind neighbours' departing populations or the own reflected ones,
/// collide, scatter into the downwind neighbours' arriving slots or the own opposite ones). Each
/// does for a cell what InPlaceStep's LocalTag and InteriorWallsTag do on the dense box, so the
/// two give the same bits; the listed, border and face cells go through InPlaceStep's lists with
/// TileIndex.
#pragma once

#include <kolibri/stepping/TileStreamCollide.hpp>

namespace kolibri {

/// The tiled grid's in-place launches: the local step over the kept tiles' cells, and the
/// streaming step's cells of the interior launch (kFluid, and kBoundaryFluid without kListedCell).
struct TileLocalTag {
  static constexpr const char* label = "kolibri::in_place_local_tiles";
};
struct TileStreamTag {
  static constexpr const char* label = "kolibri::in_place_stream_tiles";
};

/// \brief In-place step over the kept tiles' cells (cell t = slot V + place) for tiles of E cells
/// a side: TileLocalTag collides every updated cell in its own slots; TileStreamTag streams the
/// interior launch's cells (the others are InPlaceStep's lists). Tiles at the box's end along an
/// axis that is no multiple of E (TileMap::edge) take the general arithmetic (TileRows).
template <class L, class S, class C, int E>
struct TileInPlace {
  using R = typename S::real;
  using V = typename S::value_type;
  using Map = TileKernelMap<L, E>;
  static constexpr int VS = Map::VS;
  static constexpr Index TV = Map::TV;
  Kokkos::View<V*, MemSpace> a;
  Map map;
  C collide;
  Boundary<L, R> bc;  ///< the moving walls' and inlets' rules (move_links) and the body force

  KOKKOS_INLINE_FUNCTION void operator()(TileLocalTag, const Index t) const {
    if (!is_updated(map.flags(t))) return;
    const std::uint32_t s = std::uint32_t(t >> VS);
    const Index l = t & (TV - 1);
    R f[L::Q];
    KOLIBRI_UNROLL
    for (int q = 0; q < L::Q; ++q) f[q] = S::template load<L>(a(Map::at(s, q, l)), q);
    R F[3] = {bc.force[0], bc.force[1], bc.force[2]};
    collide(f, F);
    KOLIBRI_UNROLL
    for (int q = 0; q < L::Q; ++q) a(Map::at(s, L::opposite(q), l)) = S::template store<L>(f[q], q);
  }

  /// Where the link behind c_q is a wall (bit opposite(q) of `mask`) the cell's own slot q, where
  /// the link along c_q is one (bit q) its own slot opposite(q): InPlaceStep::stream_walls.
  KOKKOS_INLINE_FUNCTION void operator()(TileStreamTag, const Index t) const {
    const Flag flag = map.flags(t);
    if (flag != kFluid && flag != kBoundaryFluid) return;
    const std::uint32_t mask = flag == kFluid ? 0u : map.links(t);
    if (mask & kListedCell) return;
    const std::uint32_t s = std::uint32_t(t >> VS);
    const Index l = t & (TV - 1);
    const auto behind_wall = [&](int q) { return q > 0 && ((mask >> L::opposite(q)) & 1u); };
    const auto ahead_wall = [&](int q) { return q > 0 && ((mask >> q) & 1u); };
    R f[L::Q];
    if (map.edge(s) != 0) {  // the wrapped coordinates of each neighbour and its tile's slot
      const std::uint32_t own = map.tile_box(s);
      const TileRows rows(map.shape, map.shape.coords_of(own, l));
      const auto upwind = [&](int q, int v) {
        const std::uint32_t b = rows.upwind_tile<L>(q);
        return Map::at(b == own ? s : std::uint32_t(map.slot_of(b)), v, rows.upwind_place<L>(q));
      };
      KOLIBRI_UNROLL
      for (int q = 0; q < L::Q; ++q)
        f[q] = S::template load<L>(a(behind_wall(q) ? Map::at(s, q, l) : upwind(q, L::opposite(q))),
                                   q);
      collide_walls(mask, f);
      KOLIBRI_UNROLL  // the downwind neighbour of q is the upwind one of opposite(q)
          for (int q = 0; q < L::Q; ++q)
              a(ahead_wall(q) ? Map::at(s, L::opposite(q), l) : upwind(L::opposite(q), q)) =
                  S::template store<L>(f[q], q);
      return;
    }
    const BlockSlots<L::D, E> slots(map.neighbours.data() + Index(s) * 27 + 13, s, l);
    int sx, sy, sz;
    block_sides<L::D, E>(l, sx, sy, sz);
    KOLIBRI_UNROLL
    for (int q = 0; q < L::Q; ++q)
      f[q] = S::template load<L>(
          a(behind_wall(q) ? Map::at(s, q, l)
                           : upwind_value<L, E>(slots, l, sx, sy, sz, q, L::opposite(q))),
          q);
    collide_walls(mask, f);
    KOLIBRI_UNROLL
    for (int q = 0; q < L::Q; ++q)
      a(ahead_wall(q) ? Map::at(s, L::opposite(q), l)
                      : upwind_value<L, E>(slots, l, sx, sy, sz, L::opposite(q), q)) =
          S::template store<L>(f[q], q);
  }

  /// The gathered f of a cell with wall-link mask `mask`: the moving walls' terms, the
  /// collision, and the values it sends back into itself (bounce_back_in_place).
  KOKKOS_INLINE_FUNCTION void collide_walls(const std::uint32_t mask, R (&f)[L::Q]) const {
    if (mask & kMovingLink) bc.move_links(mask, f);
    R F[3] = {bc.force[0], bc.force[1], bc.force[2]};
    collide(f, F);
    if (mask != 0u) bounce_back_in_place<L, S>(bc, mask, f);
  }
};

}  // namespace kolibri
