// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief How a geometry falls onto tiles, and tomczak2018's model of what tiles cost (host only,
/// no Kokkos): the tile porosity, the share of ghost buffers a tiled grid would allocate, and the
/// paper's memory and bandwidth overheads for two copies (T2C, its eqs. 24 and 35) and ghost
/// buffers (TGB, eqs. 30 and 37) against the minimum of one node's populations (eqs. 9, 10).
/// The log and `kolibri check` print them for sparse geometries; docs/theory.md ("Tiles").
#pragma once

#include <kolibri/config/Case.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace kolibri {

/// \brief A geometry cut into tiles of edge^d cells (cells beyond the box's end count as solid).
struct TileStatistics {
  int edge = 4;                  ///< a: cells along a tile's edge
  int dims = 3;                  ///< d
  std::int64_t cells = 0;        ///< N_nodes (the box)
  std::int64_t fluid_cells = 0;  ///< N_fnodes
  std::int64_t tiles = 0;        ///< N_tiles (the tile map's entries)
  std::int64_t fluid_tiles = 0;  ///< N_ftiles: tiles holding at least one fluid cell
  double porosity = 0.0;         ///< phi = N_fnodes / N_nodes (eq. 11)
  double tile_porosity = 0.0;    ///< phi_t: fluid cells per cell of the kept tiles (eq. 17)
  /// alpha_M: of the ghost buffers a kept tile could have (one per propagated direction and face
  /// it crosses), the share whose tile across that face is kept too.
  double ghost_share = 0.0;
};

/// \brief Tile statistics of the solid mask `solid` (1 solid, x fastest over n cells) for tiles
/// of `edge` cells a side; a tile across a periodic axis wraps.
TileStatistics tile_statistics(const std::vector<std::uint8_t>& solid, const std::array<int, 3>& n,
                               int dims, int edge, const std::array<bool, 3>& periodic);

/// \brief The sizes the model takes, in bytes: a population value (s_d), a node type (s_t), a
/// tile-map entry (s_ti) and a ghost-buffer index (s_gbi).
struct TileSizes {
  double value = 4.0, node_type = 1.0, tile_index = 4.0, ghost_index = 4.0;
};

/// \brief tomczak2018's overheads: extra bytes over the minimum (eqs. 9, 10), as fractions.
struct TileOverheads {
  double memory_two_copies = 0.0;        ///< Delta^M_T2C (eq. 24)
  double memory_ghost_buffers = 0.0;     ///< Delta^M_TGB (eq. 30)
  double bandwidth_two_copies = 0.0;     ///< Delta^B_T2C (eq. 35)
  double bandwidth_ghost_buffers = 0.0;  ///< Delta^B_TGB (eq. 37)
  /// A dense box with two arrays holds every cell twice: 2 / phi - 1 (memory).
  double memory_dense_two_arrays = 0.0;
};
TileOverheads tile_overheads(LatticeKind lattice, const TileStatistics& t, const TileSizes& s);

/// \brief What the log, `kolibri check` and summary.json say of a sparse geometry: its tiles
/// (4^3 in 3D, 16^2 in 2D) and the model's overheads for the run's value size (s_d), kolibri's
/// one-byte node type and four-byte indices.
struct GeometryReport {
  TileStatistics tiles;
  TileOverheads model;
  /// `layout = "auto"` (csoa_alpha -1, tile_edge 0): the tile edge the run takes, 0 for the dense
  /// box (auto_tiles).
  int auto_tile_edge = 0;
  std::string text;  ///< three lines, each starting "geometry: " or "tiles: "
};
GeometryReport geometry_report(const SolverConfig& whole);

/// \brief `layout = "auto"` takes the tiled grid when its kept tiles hold at most this share of
/// the box's cells (φ / φ_t). Measured (docs/performance.md, the tiled grid against the dense box):
/// the tiles move whole kept tiles (tomczak2018's eq. 41) and their kernel runs at 0.89 to 0.99
/// of the dense one, so they win from about 0.8 down (porous φ = 0.7, share 0.77: 1.13x FP32,
/// 1.08x FP64; φ = 0.9, share 0.93: 0.97x and 1.01x).
inline constexpr double kAutoTilesKeptShare = 0.8;

/// \brief The solids of the whole domain of a one-rank configuration: [geometry]'s cells and the
/// obstacles' (1 solid, x fastest).
std::vector<std::uint8_t> domain_solids(const SolverConfig& whole);

}  // namespace kolibri
