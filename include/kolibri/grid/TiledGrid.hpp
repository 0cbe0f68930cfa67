// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The tiled grid (tomczak2018): a rank's box cut into tiles of 4^3 cells (16^2 in 2D,
/// or another power-of-two edge), the tiles holding no cell to update or read dropped, and the
/// tile-blocked population layout of the kept ones: population q of the cell at place l of the
/// tile in slot s at (s Q + q) V + l (V cells a tile), so a tile's values lie together and a
/// warp reads whole sectors. Cells keep their dense-box numbers (DenseGrid) for the flags, lists
/// and every code off the hot path; TileIndex turns a cell number into its slot. The hot kernel
/// (stepping/TileStreamCollide.hpp) runs tile by tile. docs/design.md, "The tiled grid".
#pragma once

#include <kolibri/core/Kokkos.hpp>
#include <kolibri/grid/CellLists.hpp>
#include <kolibri/grid/DenseGrid.hpp>
#include <kolibri/grid/Flags.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace kolibri {

/// \brief A tile's shape and the box's tiles: every extent a power of two (shifts and masks).
struct TileShape {
  int n[3] = {1, 1, 1};      ///< the box's cells (ghost layers included)
  int shift[3] = {0, 0, 0};  ///< log2 of the tile's edge along each axis
  int tiles[3] = {1, 1, 1};  ///< tiles along each axis (the last one may be partial)
  int volume_shift = 0;      ///< log2 of the cells a tile: shift[0] + shift[1] + shift[2]

  /// Tiles of `edge` cells a side (a power of two from 2 to 64), over the box's dimensions `dims`
  /// (2: tiles one cell deep along z). Throws std::invalid_argument for another edge.
  static TileShape of(const GridCells& grid, int dims, int edge) {
    if (edge < 2 || edge > 64 || (edge & (edge - 1)) != 0)
      throw std::invalid_argument("tile edge " + std::to_string(edge) +
                                  ": expected a power of two from 2 to 64");
    TileShape t;
    int s = 0;
    while ((1 << s) < edge) ++s;
    for (int d = 0; d < 3; ++d) {
      t.n[d] = grid.n[d];
      t.shift[d] = d < dims ? s : 0;
      t.tiles[d] = (grid.n[d] + (1 << t.shift[d]) - 1) >> t.shift[d];
    }
    t.volume_shift = t.shift[0] + t.shift[1] + t.shift[2];
    return t;
  }
  KOKKOS_INLINE_FUNCTION Index volume() const { return Index(1) << volume_shift; }
  KOKKOS_INLINE_FUNCTION Index cells() const { return Index(n[0]) * n[1] * n[2]; }
  KOKKOS_INLINE_FUNCTION std::int64_t box_tiles() const {
    return std::int64_t(tiles[0]) * tiles[1] * tiles[2];
  }
  /// The tile (its number in the box, x fastest) holding coordinates (x, y, z).
  KOKKOS_INLINE_FUNCTION std::uint32_t tile_of(int x, int y, int z) const {
    return std::uint32_t(x >> shift[0]) +
           std::uint32_t(tiles[0]) * (std::uint32_t(y >> shift[1]) +
                                      std::uint32_t(tiles[1]) * std::uint32_t(z >> shift[2]));
  }
  /// The place of (x, y, z) in its tile, x fastest.
  KOKKOS_INLINE_FUNCTION Index place_of(int x, int y, int z) const {
    const int mx = (1 << shift[0]) - 1, my = (1 << shift[1]) - 1, mz = (1 << shift[2]) - 1;
    return Index(x & mx) | (Index(y & my) << shift[0]) | (Index(z & mz) << (shift[0] + shift[1]));
  }
  /// The coordinates of place l of box tile b.
  KOKKOS_INLINE_FUNCTION Coord coords_of(std::uint32_t b, Index l) const {
    const std::uint32_t t0 = std::uint32_t(tiles[0]), t1 = std::uint32_t(tiles[1]);
    const std::uint32_t u = b / t0, tx = b - u * t0, ty = u % t1, tz = u / t1;
    const int mx = (1 << shift[0]) - 1, my = (1 << shift[1]) - 1;
    const int lx = int(l) & mx, ly = int(l >> shift[0]) & my, lz = int(l >> (shift[0] + shift[1]));
    return {int(tx << shift[0]) + lx, int(ty << shift[1]) + ly, int(tz << shift[2]) + lz};
  }
};

/// \brief The index policy of the tile-blocked layout for code that holds a dense cell number
/// (the list kernels, halo lists, staging copies): cell n's tile slot from the tile map, then
/// (slot Q + q) V + place. A cell of a dropped tile maps to the spare tile after the kept ones:
/// only solid cells lie there, and no stream-collide kernel reads or updates it (nor the halo,
/// whose lists leave solid cells out).
struct TileIndex {
  Index cells = 0;  ///< the dense box's cells (the body-force field's stride)
  TileShape shape;
  int count = 1;                          ///< values a cell (Q)
  const std::int32_t* slot_of = nullptr;  ///< box tile -> slot (the spare slot for dropped tiles)

  KOKKOS_INLINE_FUNCTION Index operator()(Index n, int q) const {
    const Coord p = coords_in(shape.n, n);
    const Index slot = slot_of[shape.tile_of(p.x, p.y, p.z)];
    return ((slot * count + q) << shape.volume_shift) + shape.place_of(p.x, p.y, p.z);
  }
};

/// \brief A rank's tiles: which box tiles are kept (those with a cell that is not solid: fluid or
/// ghost), their slots (the border tiles first, each group in box order), and the flags and
/// wall-link masks of their cells in the tile-blocked order (cells past the box's end: solid).
struct TileMap {
  TileShape shape;
  std::int64_t kept = 0;  ///< tiles with storage (the spare one not counted)
  /// The border tiles: kept tiles holding a cell of the border launch (CellLists::border: next to
  /// a ghost layer), slots 0 to border - 1. On several ranks the tile kernel updates them first
  /// (the launch `stream_collide_tile_border`), on the exchange's instance, so the pack can start
  /// while the other tiles run (stepping/TwoArrays.hpp).
  std::int64_t border = 0;
  std::vector<std::int32_t> slot_of;    ///< box tile -> slot; dropped: the spare slot `kept`
  std::vector<std::uint32_t> tile_box;  ///< slot -> box tile
  std::vector<Flag> flags;              ///< kept cells' flags, slot-major (kept << volume_shift)
  /// Kept cells' wall-link masks (CellLists::links), slot-major; without masks (a box with no
  /// boundary cell in the interior launch) kListedCell for every boundary cell.
  std::vector<std::uint32_t> links;
  /// Per kept tile, the slots of the 27 tiles around it and itself (offset (dx, dy, dz) at
  /// 13 + dx + 3 dy + 9 dz), wrapped around the box's tiles; the spare slot for dropped tiles.
  std::vector<std::int32_t> neighbours;
  /// Per kept tile: 1 where it lies at the box's end along an axis whose cells are no multiple of
  /// the tile's edge (a step across that end does not land at the far tile's mirrored place: the
  /// tile kernel takes such tiles through TileIndex-like arithmetic, TileRows).
  std::vector<std::uint8_t> edge;

  /// The tiles of `grid` (edge `edge`, `dims` dimensions) from its cells' `flags` and wall-link
  /// masks `links` (empty: none), and the cells of the border launch `border` (CellLists::border),
  /// which the tile kernel takes in the border tiles: their masks lose kListedCell here.
  static TileMap of(const GridCells& grid, int dims, int edge, const std::vector<Flag>& flags,
                    const std::vector<std::uint32_t>& links,
                    const std::vector<std::uint32_t>& border = {}) {
    TileMap m;
    m.shape = TileShape::of(grid, dims, edge);
    const TileShape& t = m.shape;
    const auto box_tiles = std::size_t(t.box_tiles());
    enum : char { kDropped = 0, kKept = 1, kBorderTile = 2 };
    std::vector<char> keep(box_tiles, kDropped);
    for (int z = 0; z < grid.n[2]; ++z)
      for (int y = 0; y < grid.n[1]; ++y)
        for (int x = 0; x < grid.n[0]; ++x)
          if (flags[std::size_t(grid.cell(x, y, z))] != kSolid) keep[t.tile_of(x, y, z)] = kKept;
    for (const std::uint32_t c : border) {
      const Coord p = coords_in(grid.n, Index(c));
      keep[t.tile_of(p.x, p.y, p.z)] = kBorderTile;
    }
    for (std::size_t b = 0; b < box_tiles; ++b)
      if (keep[b] == kBorderTile) m.tile_box.push_back(std::uint32_t(b));
    m.border = std::int64_t(m.tile_box.size());
    for (std::size_t b = 0; b < box_tiles; ++b)
      if (keep[b] == kKept) m.tile_box.push_back(std::uint32_t(b));
    m.kept = std::int64_t(m.tile_box.size());
    m.slot_of.assign(box_tiles, std::int32_t(m.kept));
    for (std::size_t s = 0; s < m.tile_box.size(); ++s) m.slot_of[m.tile_box[s]] = std::int32_t(s);
    const Index v = t.volume();
    m.flags.assign(std::size_t(m.kept * v), kSolid);
    m.links.assign(std::size_t(m.kept * v), 0u);
    m.neighbours.assign(std::size_t(m.kept * 27), std::int32_t(m.kept));
    m.edge.assign(std::size_t(m.kept), 0);
    for (std::int64_t s = 0; s < m.kept; ++s) {
      const Coord o = t.coords_of(m.tile_box[std::size_t(s)], 0);
      const int at[3] = {o.x >> t.shift[0], o.y >> t.shift[1], o.z >> t.shift[2]};
      for (int d = 0; d < 3; ++d)
        if (grid.n[d] % (1 << t.shift[d]) != 0 && (at[d] == 0 || at[d] == t.tiles[d] - 1))
          m.edge[std::size_t(s)] = 1;
      for (int k = 0; k < 27; ++k) {
        int b[3];
        const int step[3] = {k % 3 - 1, k / 3 % 3 - 1, k / 9 - 1};
        for (int d = 0; d < 3; ++d) b[d] = (at[d] + step[d] + t.tiles[d]) % t.tiles[d];
        m.neighbours[std::size_t(s * 27 + k)] =
            m.slot_of[std::size_t(b[0] + t.tiles[0] * (b[1] + std::int64_t(t.tiles[1]) * b[2]))];
      }
    }
    for (std::int64_t s = 0; s < m.kept; ++s)
      for (Index l = 0; l < v; ++l) {
        const Coord p = t.coords_of(m.tile_box[std::size_t(s)], l);
        if (!grid.contains(p.x, p.y, p.z)) continue;
        const auto n = std::size_t(grid.cell(p));
        const auto at = std::size_t(s * v + l);
        m.flags[at] = flags[n];
        m.links[at] = !links.empty() ? links[n] : flags[n] == kBoundaryFluid ? kListedCell : 0u;
      }
    const TileIndex at = m.index(1);  // a cell's place among the kept cells
    for (const std::uint32_t c : border) m.links[std::size_t(at(Index(c), 0))] &= ~kListedCell;
    return m;
  }
  /// Values to allocate for `count` values a cell: the kept tiles and the spare one.
  Index size(int count) const { return (kept + 1) * count * shape.volume(); }
  /// The index policy over this map's slot_of on the host (halo lists).
  TileIndex index(int count) const { return {shape.cells(), shape, count, slot_of.data()}; }
};

/// \brief A TileMap on the device: what the tile kernel and TileIndex read.
struct DeviceTileMap {
  TileShape shape;
  Index kept = 0;                                    ///< tiles with storage (may be 0: all solid)
  Index border = 0;                                  ///< TileMap::border: the first slots
  bool on = false;                                   ///< false: no tiles (the dense layout)
  Kokkos::View<Flag*, MemSpace> flags;               ///< TileMap::flags
  Kokkos::View<std::uint32_t*, MemSpace> links;      ///< TileMap::links
  Kokkos::View<std::uint32_t*, MemSpace> tile_box;   ///< TileMap::tile_box
  Kokkos::View<std::int32_t*, MemSpace> slot_of;     ///< TileMap::slot_of
  Kokkos::View<std::int32_t*, MemSpace> neighbours;  ///< TileMap::neighbours
  Kokkos::View<std::uint8_t*, MemSpace> edge;        ///< TileMap::edge

  static DeviceTileMap of(const TileMap& m) {
    DeviceTileMap d;
    d.shape = m.shape;
    d.kept = m.kept;
    d.border = m.border;
    d.on = true;
    d.flags = to_device(m.flags, "kolibri::tile_flags");
    d.links = to_device(m.links, "kolibri::tile_links");
    d.tile_box = to_device(m.tile_box, "kolibri::tile_box");
    d.slot_of = to_device(m.slot_of, "kolibri::tile_slots");
    d.neighbours = to_device(m.neighbours, "kolibri::tile_neighbours");
    d.edge = to_device(m.edge, "kolibri::tile_edge");
    return d;
  }
  /// The tiled grid is on, also on a rank whose cells are all solid (no kept tile: only the
  /// spare one, which nothing updates).
  bool active() const { return on; }
  /// The cells of the kept tiles (the tile kernel's threads).
  Index kept_cells() const { return kept << shape.volume_shift; }
  /// The cells of the border tiles (the first threads).
  Index border_cells() const { return border << shape.volume_shift; }
  TileIndex index(int count) const { return {shape.cells(), shape, count, slot_of.data()}; }
  /// Device bytes of the map: flags and masks of the kept cells, the slot tables.
  double bytes() const {
    return double(flags.extent(0) + edge.extent(0)) * sizeof(Flag) +
           double(links.extent(0) + tile_box.extent(0) + slot_of.extent(0) + neighbours.extent(0)) *
               4.0;
  }
};

}  // namespace kolibri
