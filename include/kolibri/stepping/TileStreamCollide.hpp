// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The two-array stream-collide kernel of the tiled grid (grid/TiledGrid.hpp), one thread
/// per cell of the kept tiles, tile by tile, and the copies between the tile-blocked layout and
/// the dense SoA one that the code off the hot path reads. The kernel does for each cell what the
/// dense interior kernel does (gather_links, move_links, collide, store), so the two give the
/// same bits; only the addresses differ.
#pragma once

#include <kolibri/grid/TiledGrid.hpp>
#include <kolibri/stepping/StreamCollide.hpp>

#include <array>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace kolibri {

/// \brief A cell's upwind neighbours on the tiled grid, built once per cell: along each axis the
/// box tile (as its contribution to the tile number) and the place in that tile of coordinate
/// v - c for c = -1, 0, +1 (index c + 1), wrapped across the box like Rows.
struct TileRows {
  std::uint32_t tile[3][3];   ///< [axis][c + 1]: the tile coordinate times the axis' tile stride
  std::uint32_t place[3][3];  ///< [axis][c + 1]: the in-tile coordinate shifted into the place

  KOKKOS_INLINE_FUNCTION TileRows(const TileShape& t, const Coord& p) {
    const int v[3] = {p.x, p.y, p.z};
    std::uint32_t stride = 1;
    int place_shift = 0;
    for (int a = 0; a < 3; ++a) {
      const int n = t.n[a], mask = (1 << t.shift[a]) - 1;
      const int at[3] = {v[a] == n - 1 ? 0 : v[a] + 1, v[a], v[a] == 0 ? n - 1 : v[a] - 1};
      for (int k = 0; k < 3; ++k) {
        tile[a][k] = std::uint32_t(at[k] >> t.shift[a]) * stride;
        place[a][k] = std::uint32_t(at[k] & mask) << place_shift;
      }
      stride *= std::uint32_t(t.tiles[a]);
      place_shift += t.shift[a];
    }
  }
  /// The box tile and the place of the upwind neighbour of direction q (the cell at x - c_q).
  template <class L>
  KOKKOS_INLINE_FUNCTION std::uint32_t upwind_tile(int q) const {
    return tile[0][L::c(q, 0) + 1] + tile[1][L::c(q, 1) + 1] + tile[2][L::c(q, 2) + 1];
  }
  template <class L>
  KOKKOS_INLINE_FUNCTION Index upwind_place(int q) const {
    return Index(place[0][L::c(q, 0) + 1] + place[1][L::c(q, 1) + 1] + place[2][L::c(q, 2) + 1]);
  }
};

/// log2 of a block's edge E (4, 8, 16 or 32 cells).
template <int E>
KOKKOS_INLINE_FUNCTION constexpr int block_shift() {
  constexpr int shift = E == 4 ? 2 : E == 8 ? 3 : E == 16 ? 4 : 5;
  static_assert((1 << shift) == E, "a block's edge is 4, 8, 16 or 32 cells");
  return shift;
}

/// The side of its block a cell at coordinate v (0 .. E - 1) along one axis touches: -1, 0
/// (none) or +1.
template <int E>
KOKKOS_INLINE_FUNCTION int block_side(const int v) {
  return v == 0 ? -1 : v == E - 1 ? 1 : 0;
}

/// \brief The slots of the blocks a cell's upwind neighbours lie in, for place l of the block in
/// slot s of a blocked layout (the tiled grid; a level of a refined grid): blocks of E cells a
/// side; `nb` points at the middle of the block's row of 27 neighbour slots (offset (dx, dy, dz)
/// at nb[dx + 3 dy + 9 dz]).
///
/// A cell touches at most one side of its block along each axis, so its upwind neighbours lie in
/// at most 8 blocks: its own and `across[k - 1]`, k's bit 0 across x, bit 1 across y, bit 2
/// across z. The slots depend on the cell's place only, not on its flags: a kernel loads them
/// with the flags, in the same round trip to memory, before it knows whether the cell is its
/// (ncu on the H200: the chain flags, links, slots, values took four round trips at 8 warps an
/// SM, and the latency, not the bytes, set the time).
template <int D, int E>
struct BlockSlots {
  std::uint32_t own;
  std::uint32_t across[7];

  KOKKOS_INLINE_FUNCTION BlockSlots(const std::int32_t* nb, const std::uint32_t s, const Index l) {
    const int sx = block_side<E>(int(l) & (E - 1)),
              sy = block_side<E>(int(l >> block_shift<E>()) & (E - 1)),
              sz = D == 3 ? block_side<E>(int(l >> (2 * block_shift<E>()))) : 0;
    own = s;
    KOLIBRI_UNROLL
    for (int k = 1; k < 8; ++k)
      across[k - 1] =
          std::uint32_t(nb[(k & 1 ? sx : 0) + (k & 2 ? 3 * sy : 0) + (k & 4 ? 9 * sz : 0)]);
  }
};

/// \brief The index of value v of the cell at x - c_q, for place l of a block whose neighbour
/// slots `slots` holds (BlockSlots), values v of place l of slot s at (s Q + v) E^D + l, and the
/// sides (block_side) sx, sy, sz of l. A direction (known at compile time once unrolled) picks
/// its block with selects and its place with constant offsets: no load depends on another.
template <class L, int E>
KOKKOS_INLINE_FUNCTION Index upwind_value(const BlockSlots<L::D, E>& slots, const Index l,
                                          const int sx, const int sy, const int sz, const int q,
                                          const int v) {
  constexpr int VS = block_shift<E>() * L::D;
  constexpr Index TV = Index(1) << VS;
  const int cx = L::c(q, 0), cy = L::c(q, 1), cz = L::c(q, 2);
  const bool ax = cx != 0 && sx == -cx, ay = cy != 0 && sy == -cy, az = cz != 0 && sz == -cz;
  const std::uint32_t* n = slots.across;  // selects, not an index: n stays in registers
  const std::uint32_t lo = ay ? (ax ? n[2] : n[1]) : (ax ? n[0] : slots.own);
  const std::uint32_t hi = ay ? (ax ? n[6] : n[5]) : (ax ? n[4] : n[3]);
  const std::uint32_t slot = az ? hi : lo;
  const Index place = l - (cx + cy * E + cz * E * E) + (ax ? cx * E : 0) + (ay ? cy * E * E : 0) +
                      (az ? cz * E * E * E : 0);
  return Index(slot) * Index(L::Q * TV) + (Index(v) << VS) + place;
}

/// The sides of its block (block_side) place l touches along x, y and z (z: 0 in 2D).
template <int D, int E>
KOKKOS_INLINE_FUNCTION void block_sides(const Index l, int& sx, int& sy, int& sz) {
  constexpr int SX = block_shift<E>();
  sx = block_side<E>(int(l) & (E - 1));
  sy = block_side<E>(int(l >> SX) & (E - 1));
  sz = D == 3 ? block_side<E>(int(l >> (2 * SX))) : 0;
}

/// \brief The populations arriving at place l of a block whose neighbour slots `slots` holds
/// (BlockSlots): population q from the cell at x - c_q (upwind_value). Where the link behind c_q
/// is a wall (bit opposite(q) of `mask`) the cell's own opposite population comes back (halfway
/// bounce-back); each direction is one load whose address the mask chooses.
template <class L, class S, int E>
KOKKOS_INLINE_FUNCTION void gather_block(const typename S::value_type* src,
                                         const BlockSlots<L::D, E>& slots, const Index l,
                                         const std::uint32_t mask, typename S::real (&f)[L::Q]) {
  constexpr int VS = block_shift<E>() * L::D;
  constexpr Index TV = Index(1) << VS;
  // The sides again, not kept in BlockSlots: a thread holds its next cell's slots across the
  // collision of the one before (LevelStep), where three more live registers cost more than
  // these few integer operations (KBC D3Q27 FP64: 240 registers against 236).
  int sx, sy, sz;
  block_sides<L::D, E>(l, sx, sy, sz);
  const Index own = Index(slots.own) * Index(L::Q * TV) + l;
  KOLIBRI_UNROLL
  for (int q = 0; q < L::Q; ++q) {
    const bool wall = q > 0 && ((mask >> L::opposite(q)) & 1u);
    f[q] = S::template load<L>(src[wall ? own + (Index(L::opposite(q)) << VS)
                                        : upwind_value<L, E>(slots, l, sx, sy, sz, q, q)],
                               q);
  }
}

/// Calls f with std::integral_constant<int, E> for the tile edge E of `map` (one of the edges
/// the lattice's dimension is compiled for: kTileEdges3D, kTileEdges2D), so a tile kernel knows
/// its tile's shape at compile time. Another edge is a logic error (the rules refuse it).
template <class L, class F>
void with_tile_edge(const TileShape& shape, F&& f) {
  constexpr std::array<int, 2> edges = L::D == 3 ? kTileEdges3D : kTileEdges2D;
  const int edge = 1 << shape.shift[0];
  if (edge == edges[0])
    f(std::integral_constant<int, edges[0]>{});
  else if (edge == edges[1])
    f(std::integral_constant<int, edges[1]>{});
  else
    throw std::logic_error("no tile kernel for tiles of " + std::to_string(edge) +
                           " cells (the rules refuse them)");
}

/// \brief What a tile kernel reads of the tile map (DeviceTileMap's tables, read-only) for tiles
/// of E cells a side, and where value v of place l of slot s sits: (s Q + v) E^D + l (at).
template <class L, int E>
struct TileKernelMap {
  static constexpr int VS = block_shift<E>() * L::D;  ///< log2 of the cells a tile
  static constexpr Index TV = Index(1) << VS;
  Kokkos::View<const Flag*, MemSpace> flags;           ///< TileMap::flags
  Kokkos::View<const std::uint32_t*, MemSpace> links;  ///< TileMap::links
  Kokkos::View<const std::uint32_t*, MemSpace> tile_box;
  Kokkos::View<const std::int32_t*, MemSpace> slot_of;
  Kokkos::View<const std::int32_t*, MemSpace> neighbours;  ///< TileMap::neighbours
  Kokkos::View<const std::uint8_t*, MemSpace> edge;        ///< TileMap::edge
  TileShape shape;

  static TileKernelMap of(const DeviceTileMap& t) {
    return {t.flags, t.links, t.tile_box, t.slot_of, t.neighbours, t.edge, t.shape};
  }
  KOKKOS_INLINE_FUNCTION static Index at(std::uint32_t slot, int v, Index place) {
    return Index(slot) * Index(L::Q * TV) + (Index(v) << VS) + place;
  }
};

/// Kept tiles' cells that the interior launch of the dense box would take (kFluid, and
/// kBoundaryFluid without kListedCell), and in the border tiles (TileMap::border) those next to a
/// ghost layer: kFluidBorder cells, and the boundary cells of CellLists::border, whose masks the
/// tile map left unlisted (what the dense box's BorderTag list does). The list launches take the
/// rest through TileIndex. Launched apart over the border tiles and over the others.
struct TileInteriorTag {
  static constexpr const char* label = "kolibri::stream_collide_tiles";
  static constexpr const char* border_label = "kolibri::stream_collide_tile_border";
};

/// Cells of the tile kernel a thread (TileStreamCollide) for arithmetic in R: with two, each
/// cell's first round trip is issued before the cell before it is gathered and collided. FP64
/// kernels, at a low occupancy, wait on those round trips: two gained 10% (D3Q19 TRT) and 19%
/// (D3Q27 KBC) on the H200; FP32 kernels have the warps to cover them and lost 8% to the extra
/// registers (docs/performance.md, "two cells a thread in the tile kernel").
template <class R>
inline constexpr int kTileCellsPerThread = sizeof(R) == 8 ? 2 : 1;

/// \brief Two-array pull step over the kept tiles' cells (cell t = slot V + place), for tiles
/// of E cells a side (E^D cells, known at compile time): Cells cells a thread, `stride` apart
/// from `first` (a warp's cells stay consecutive).
///
/// The gather is gather_block over the tile's row of TileMap::neighbours (BlockSlots). Tiles at the
/// box's end along an axis that is no multiple of E (TileMap::edge) take the general arithmetic
/// (TileRows) instead.
template <class L, class S, class C, int E, int Cells = kTileCellsPerThread<typename S::real>>
struct TileStreamCollide {
  using R = typename S::real;
  using V = typename S::value_type;
  using Map = TileKernelMap<L, E>;
  static constexpr int VS = Map::VS;
  static constexpr Index TV = Map::TV;
  Kokkos::View<const V*, MemSpace> src;
  Kokkos::View<V*, MemSpace> dst;
  Map map;
  C collide;
  Boundary<L, R> bc;  ///< the faces (move_links) and the body force
  Index first = 0;    ///< the launch's first cell
  Index stride = 0;   ///< its cells / Cells
  static constexpr int cells = Cells;
  static_assert(TV % Cells == 0, "TileStreamCollide: the cells a thread divide a tile's cells");

  KOKKOS_INLINE_FUNCTION void operator()(TileInteriorTag, const Index i) const {
    TileCell next = tile_cell(first + i);
    KOLIBRI_UNROLL
    for (int k = 0; k < Cells; ++k) {
      const TileCell cell = next;
      if (k + 1 < Cells) next = tile_cell(first + i + (k + 1) * stride);
      step(cell);
    }
  }

  /// What cell t's addresses need: its flag, its tile's edge mark and neighbour slots, loaded in
  /// one round trip (BlockSlots); the links of the few boundary cells come after the flags.
  struct TileCell {
    Index t;
    Flag flag;
    bool at_edge;
    BlockSlots<L::D, E> slots;
  };
  KOKKOS_INLINE_FUNCTION TileCell tile_cell(const Index t) const {
    const std::uint32_t s = std::uint32_t(t >> VS);
    return {t, map.flags(t), map.edge(s) != 0,
            BlockSlots<L::D, E>(map.neighbours.data() + Index(s) * 27 + 13, s, t & (TV - 1))};
  }

  KOKKOS_INLINE_FUNCTION void step(const TileCell& c) const {
    if (!is_updated(c.flag)) return;  // kFluid, kBoundaryFluid, kFluidBorder go on
    const std::uint32_t mask = c.flag == kBoundaryFluid ? map.links(c.t) : 0u;
    if (mask & kListedCell) return;
    const std::uint32_t s = c.slots.own;
    const Index l = c.t & (TV - 1);
    R f[L::Q];
    if (c.at_edge)
      gather_general(s, l, mask, f);
    else
      gather_block<L, S, E>(src.data(), c.slots, l, mask, f);
    if (mask & kMovingLink) bc.move_links(mask, f);
    R F[3] = {bc.force[0], bc.force[1], bc.force[2]};
    collide(f, F);
    KOLIBRI_UNROLL
    for (int q = 0; q < L::Q; ++q) dst(Map::at(s, q, l)) = S::template store<L>(f[q], q);
  }

  /// The same for a tile at a box end that is no multiple of E: the wrapped coordinates of each
  /// neighbour (TileRows) and its tile's slot from the box's table.
  KOKKOS_INLINE_FUNCTION void gather_general(const std::uint32_t s, const Index l,
                                             const std::uint32_t mask, R (&f)[L::Q]) const {
    const std::uint32_t own = map.tile_box(s);
    const TileRows rows(map.shape, map.shape.coords_of(own, l));
    KOLIBRI_UNROLL
    for (int q = 0; q < L::Q; ++q) {
      const bool wall = q > 0 && ((mask >> L::opposite(q)) & 1u);
      const std::uint32_t b = rows.upwind_tile<L>(q);
      const std::uint32_t slot = b == own ? s : std::uint32_t(map.slot_of(b));
      f[q] = S::template load<L>(
          src(wall ? Map::at(s, L::opposite(q), l) : Map::at(slot, q, rows.upwind_place<L>(q))), q);
    }
  }
};

/// \brief The tile-blocked values into a dense SoA array (value q of cell n at q cells + n):
/// cells of dropped tiles (all solid) get the rest equilibrium w_q.
template <class L, class S>
struct TilesToDense {
  using V = typename S::value_type;
  Kokkos::View<const V*, MemSpace> tiles;
  Kokkos::View<V*, MemSpace> dense;
  TileIndex idx;
  std::int32_t spare = 0;  ///< the spare slot (TileMap::kept)

  KOKKOS_INLINE_FUNCTION void operator()(const Index n) const {
    const Coord p = coords_in(idx.shape.n, n);
    const bool dropped = idx.slot_of[idx.shape.tile_of(p.x, p.y, p.z)] == spare;
    for (int q = 0; q < L::Q; ++q)
      dense(Index(q) * idx.cells + n) =
          dropped ? S::template store<L>(typename S::real(L::w(q)), q) : tiles(idx(n, q));
  }
};

/// \brief A dense SoA array into the tile-blocked values of the kept tiles (their cells past the
/// box's end are left as they are).
template <class L, class S>
struct DenseToTiles {
  using V = typename S::value_type;
  Kokkos::View<const V*, MemSpace> dense;
  Kokkos::View<V*, MemSpace> tiles;
  Kokkos::View<const std::uint32_t*, MemSpace> tile_box;
  TileShape shape;
  Index cells = 0;

  KOKKOS_INLINE_FUNCTION void operator()(const Index t) const {
    const Index s = t >> shape.volume_shift, l = t & (shape.volume() - 1);
    const Coord p = shape.coords_of(tile_box(s), l);
    if (p.x >= shape.n[0] || p.y >= shape.n[1] || p.z >= shape.n[2]) return;
    const Index n = cell_in(shape.n, p.x, p.y, p.z);
    for (int q = 0; q < L::Q; ++q)
      tiles(((s * L::Q + q) << shape.volume_shift) + l) = dense(Index(q) * cells + n);
  }
};

}  // namespace kolibri
