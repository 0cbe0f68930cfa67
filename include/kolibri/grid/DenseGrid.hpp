// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The dense box of cells a rank holds, ghost layers included: the one place where a cell
/// index and its coordinates are converted, where neighbours along a lattice direction are found
/// (with periodic wrap and the face rule) and where ghost and border cells are recognised. Every
/// kernel, list builder, halo list, checkpoint, field gather and immersed-boundary routine goes
/// through it. A tiled grid and one level of a refined grid offer the same members
/// (docs/design.md, "The grid layer").
#pragma once

#include <kolibri/config/Case.hpp>
#include <kolibri/core/Kokkos.hpp>
#include <kolibri/grid/Box.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace kolibri {

/// \brief A cell's coordinates in a rank's box (ghost layers included).
struct Coord {
  int x = 0, y = 0, z = 0;
};

/// \brief The one encode and decode of an x-fastest box of n[0] x n[1] x n[2] cells: cell
/// x + n0 (y + n1 z). The decode divides in 32 bits (a rank's box, and every box inside it,
/// holds fewer than 2^32 cells: DenseGrid::of).
KOKKOS_INLINE_FUNCTION Index cell_in(const int (&n)[3], int x, int y, int z) {
  return x + Index(n[0]) * (y + Index(n[1]) * z);
}
KOKKOS_INLINE_FUNCTION Coord coords_in(const int (&n)[3], Index c) {
  using U = std::uint32_t;
  const U u = U(c), t = u / U(n[0]);
  return {int(u - t * U(n[0])), int(t % U(n[1])), int(t / U(n[1]))};
}

/// \brief Where face `face`'s plane of cells starts in an array holding the six faces' planes of
/// a box of n cells one after the other (x_min, x_max, y_min, ...): a plane of face f spans the
/// two axes across it, (f / 2 + 1) % 3 fastest, then (f / 2 + 2) % 3.
KOKKOS_INLINE_FUNCTION Index inlet_plane_offset(const int (&n)[3], int face) {
  Index offset = 0;
  for (int g = 0; g < face; ++g) offset += Index(n[(g / 2 + 1) % 3]) * Index(n[(g / 2 + 2) % 3]);
  return offset;
}

/// \brief The factor of a built-in inlet profile (InletProfile::Parabolic, Pipe; 1 otherwise) at a
/// cell of a face's plane: x, its centre along the plane's two axes (face f: (f / 2 + 1) % 3, then
/// (f / 2 + 2) % 3), n, the domain's extents along them, both in cells of one grid (walls at 0
/// and n); `bounded`, which of the two axes end at walls (bounded_axis; a parabola spans only
/// those). The one formula of the dense planes (inlet_shape_plane) and of the refined levels,
/// whose finer cells take it at their own centres.
KOKKOS_INLINE_FUNCTION double builtin_profile(InletProfile kind, const double (&x)[2],
                                              const double (&n)[2], const bool (&bounded)[2]) {
  double shape = 1.0, r2 = 0.0;
  for (int d = 0; d < 2; ++d) {
    if (kind == InletProfile::Parabolic && bounded[d])
      shape *= 4.0 * (x[d] / n[d]) * (1.0 - x[d] / n[d]);
    r2 += (x[d] - 0.5 * n[d]) * (x[d] - 0.5 * n[d]);
  }
  if (kind != InletProfile::Pipe) return shape;
  const double radius = 0.5 * (n[0] < n[1] ? n[0] : n[1]);
  const double pipe = 1.0 - r2 / (radius * radius);
  return pipe > 0.0 ? pipe : 0.0;
}

/// \brief A face held at its density (anti-bounce-back): a pressure outlet or inlet (host and
/// device).
KOKKOS_INLINE_FUNCTION constexpr bool is_pressure(FaceType t) {
  return t == FaceType::PressureOutlet || t == FaceType::PressureInlet;
}

/// \brief Where the outflow rule (GridCells::outflow_source) takes a population from: population
/// `q` of cell `cell` (post-collision, the step before).
struct OutflowSource {
  Index cell = -1;
  int q = 0;
};

/// \brief Which face a population crossing several faces (edges, corners) takes its condition
/// from: velocity inlets first, so an inlet delivers its whole flux (its corner cells' links
/// into the side walls included), then walls, so a lid never leaks through a corner.
KOKKOS_INLINE_FUNCTION int face_priority(int type) {
  switch (static_cast<FaceType>(type)) {
    case FaceType::VelocityInlet:
      return 0;
    case FaceType::Wall:
      return 1;
    case FaceType::MovingWall:
      return 2;
    case FaceType::PressureOutlet:
    case FaceType::PressureInlet:
    case FaceType::Outflow:
      return 3;
    default:
      return 4;
  }
}

/// \brief Wrapped neighbour rows of a cell, 32-bit (cells < 2^32, a grid invariant): the upwind
/// neighbour of direction q is xs[c_x + 1] + ys[c_y + 1] + zs[c_z + 1] (index 0 is the +1
/// neighbour, 2 the -1 one). Built once per cell by the interior kernels; each direction then
/// costs two adds of registers chosen at compile time (a run-time neighbour search per direction
/// pushed the populations to local memory: docs/design.md). Wraps every axis: the flags keep the
/// cells that use it away from non-periodic faces.
struct Rows {
  std::uint32_t xs[3], ys[3], zs[3];
  /// Upwind neighbour of direction q (the cell at x - c_q).
  template <class L>
  KOKKOS_INLINE_FUNCTION Index upwind(int q) const {
    return Index(xs[L::c(q, 0) + 1] + ys[L::c(q, 1) + 1] + zs[L::c(q, 2) + 1]);
  }
};

/// \brief The cells of a dense box, numbered x fastest: cell(x, y, z) = x + nx (y + ny z), with
/// the neighbour rules. Extents only: this is what every kernel carries (in `Boundary`). Kokkos
/// passes a functor under 512 bytes as a kernel argument and a larger one through constant
/// memory; carrying the whole DenseGrid (60 bytes) moved the D3Q27 MRT kernels over that line and
/// cost them 2.2% on an H100 (docs/performance.md, 2026-11-23).
struct GridCells {
  int n[3] = {1, 1, 1};  ///< extents, ghost layers included

  KOKKOS_INLINE_FUNCTION Index cells() const { return Index(n[0]) * n[1] * n[2]; }
  KOKKOS_INLINE_FUNCTION Index cell(int x, int y, int z) const { return cell_in(n, x, y, z); }
  KOKKOS_INLINE_FUNCTION Index cell(const Coord& p) const { return cell_in(n, p.x, p.y, p.z); }
  /// Coordinates of cell c.
  KOKKOS_INLINE_FUNCTION Coord coords(Index c) const { return coords_in(n, c); }
  KOKKOS_INLINE_FUNCTION bool contains(int x, int y, int z) const {
    return x >= 0 && x < n[0] && y >= 0 && y < n[1] && z >= 0 && z < n[2];
  }

  /// The wrapped neighbour rows of cell c (interior kernels).
  KOKKOS_INLINE_FUNCTION Rows rows(Index c) const {
    using U = std::uint32_t;
    const U ux = U(n[0]), uy = U(n[1]), uz = U(n[2]), u = U(c);
    const U x = u % ux, t = u / ux, y = t % uy, z = t / uy;
    Rows r;
    r.xs[0] = x == ux - 1 ? 0u : x + 1, r.xs[1] = x, r.xs[2] = x == 0 ? ux - 1 : x - 1;
    r.ys[0] = (y == uy - 1 ? 0u : y + 1) * ux, r.ys[1] = y * ux,
    r.ys[2] = (y == 0 ? uy - 1 : y - 1) * ux;
    const U plane = ux * uy;
    r.zs[0] = (z == uz - 1 ? 0u : z + 1) * plane, r.zs[1] = z * plane;
    r.zs[2] = (z == 0 ? uz - 1 : z - 1) * plane;
    return r;
  }

  /// \brief The cell reached from p by sign * c_q, the faces having the types `type` (FaceType
  /// as int, x_min ... z_max): its index, wrapped across periodic faces, or -1 when the move
  /// leaves the box through a non-periodic face, with `face` set to the face whose condition
  /// applies (face_priority at edges and corners). The one rule the flags (host) and
  /// the boundary kernels (device) share. A ghost side is typed periodic (Decomposition::
  /// local_config): only moves that start in a ghost cell, which is never updated, cross it.
  template <class L>
  KOKKOS_INLINE_FUNCTION Index neighbour(const int (&type)[6], const Coord& p, int q, int sign,
                                         int& face) const {
    int s[3] = {p.x + sign * L::c(q, 0), p.y + sign * L::c(q, 1), p.z + sign * L::c(q, 2)};
    face = -1;
    for (int d = 0; d < 3; ++d) {
      const int crossed = s[d] < 0 ? 2 * d : (s[d] >= n[d] ? 2 * d + 1 : -1);
      if (crossed < 0) continue;
      if (type[crossed] == static_cast<int>(FaceType::Periodic))
        s[d] = crossed == 2 * d ? s[d] + n[d] : s[d] - n[d];
      else if (face < 0 || face_priority(type[crossed]) < face_priority(type[face]))
        face = crossed;
    }
    return face >= 0 ? Index(-1) : cell(s[0], s[1], s[2]);
  }
  /// \brief The outflow rule (FaceType::Outflow): population q arriving at cell p across outflow
  /// face `face` is the population q that the cell one layer in, i = p + e (e the face's inward
  /// normal), receives in the same step: a zero normal gradient of what enters. That one left
  /// `cell` = i - c_q, a cell of p's own layer, along the face; where that cell is solid or lies
  /// beyond another non-periodic face, i took halfway bounce-back, its own f*_opposite(q); where i
  /// itself is solid, p takes halfway bounce-back. `solid(cell)` tells solid cells. The one rule
  /// of the kernels (two arrays read the source, the in-place push writes it) and of the
  /// in-place reverse halo (who wrote a ghost's population). Needs p's box to be at least two
  /// cells along the face's axis (a rule of the deck). (A linear extrapolation from the two
  /// layers in, 2 f_q(p + e) - f_q(p + 2e), diverged in the DFG 2D-2 case: docs/validation.md.)
  template <class L, class Solid>
  KOKKOS_INLINE_FUNCTION OutflowSource outflow_source(const int (&type)[6], const Coord& p, int q,
                                                      int face, const Solid& solid) const {
    const int axis = face / 2, inward = face % 2 == 0 ? 1 : -1;
    const Coord in{p.x + (axis == 0 ? inward : 0), p.y + (axis == 1 ? inward : 0),
                   p.z + (axis == 2 ? inward : 0)};
    const Index i = cell(in);
    if (solid(i)) return {cell(p), L::opposite(q)};
    int crossed;
    const Index s = neighbour<L>(type, in, q, -1, crossed);
    if (s >= 0 && !solid(s)) return {s, q};
    return {i, L::opposite(q)};
  }
  /// Position v along `axis` moved back into the box across a periodic face (at most one box
  /// length outside), or -1 across a non-periodic one.
  KOKKOS_INLINE_FUNCTION int wrap(int v, int axis, const int (&type)[6]) const {
    const int size = n[axis];
    if (v < 0) return type[2 * axis] == static_cast<int>(FaceType::Periodic) ? v + size : -1;
    if (v >= size)
      return type[2 * axis + 1] == static_cast<int>(FaceType::Periodic) ? v - size : -1;
    return v;
  }

  /// Coordinates of cell c by 64-bit division: the same result as coords(). In the moment
  /// kernel, at its 128-register cap, the inlined 32-bit division raised the kernel from 118 to
  /// 128 registers and it ran 4% slower on an H100 (docs/performance.md); its boundary path
  /// (MomentKernel::reflect) decodes with this one.
  KOKKOS_INLINE_FUNCTION Coord coords_wide(Index c) const {
    const Index nx = n[0], ny = n[1];
    return {int(c % nx), int(c / nx % ny), int(c / (nx * ny))};
  }
  /// True for a cell in the layer next to a face that `open` marks (non-periodic faces).
  KOKKOS_INLINE_FUNCTION bool on_face(const Coord& p, const bool (&open)[6]) const {
    return (p.x == 0 && open[0]) || (p.x == n[0] - 1 && open[1]) || (p.y == 0 && open[2]) ||
           (p.y == n[1] - 1 && open[3]) || (p.z == 0 && open[4]) || (p.z == n[2] - 1 && open[5]);
  }
};

/// \brief A rank's dense box: its cells (GridCells) with the ghost layer on each side and where
/// the box sits in the whole domain. Built on the host from the rank's configuration; kernels
/// take its GridCells part.
struct DenseGrid : GridCells {
  int ghost[6] = {0, 0, 0, 0, 0, 0};  ///< 1 where a ghost layer lies (x_min ... z_max)
  int origin[3] = {0, 0, 0};          ///< global coordinates of local cell (0, 0, 0)
  int global[3] = {1, 1, 1};          ///< extents of the whole domain

  /// The grid of a rank's configuration (`cfg.part` places it; the whole domain by default).
  /// Throws std::invalid_argument for 2^32 cells or more (the 32-bit decode and cell lists).
  static DenseGrid of(const SolverConfig& cfg) {
    DenseGrid g;
    g.n[0] = cfg.nx, g.n[1] = cfg.ny, g.n[2] = cfg.nz;
    for (int f = 0; f < 6; ++f) g.ghost[f] = cfg.part.ghost[std::size_t(f)];
    for (int d = 0; d < 3; ++d) {
      g.origin[d] = cfg.part.origin[std::size_t(d)];
      g.global[d] = cfg.global_n(d);
    }
    if (g.cells() >= (Index(1) << 32))
      throw std::invalid_argument("kolibri: " + std::to_string(g.cells()) +
                                  " cells: at most 2^32 - 1 per rank");
    return g;
  }
  /// A box of n[0] x n[1] x n[2] cells that is the whole domain (no ghost layers).
  static DenseGrid whole(int nx, int ny, int nz) {
    DenseGrid g;
    g.n[0] = g.global[0] = nx, g.n[1] = g.global[1] = ny, g.n[2] = g.global[2] = nz;
    return g;
  }

  /// True for a cell of a ghost layer (a neighbour rank's cell, never updated here).
  KOKKOS_INLINE_FUNCTION bool is_ghost(const Coord& p) const {
    return p.x < ghost[0] || p.x >= n[0] - ghost[1] || p.y < ghost[2] || p.y >= n[1] - ghost[3] ||
           p.z < ghost[4] || p.z >= n[2] - ghost[5];
  }
  /// True for a cell in the layer next to a ghost layer: its values leave in the halo exchange.
  KOKKOS_INLINE_FUNCTION bool is_border(const Coord& p) const {
    return (ghost[0] && p.x == 1) || (ghost[1] && p.x == n[0] - 2) || (ghost[2] && p.y == 1) ||
           (ghost[3] && p.y == n[1] - 2) || (ghost[4] && p.z == 1) || (ghost[5] && p.z == n[2] - 2);
  }
  /// Global coordinates of p, wrapped into the domain (a ghost layer across a periodic face is the
  /// other end's image).
  Coord global_coords(const Coord& p) const {
    const int c[3] = {p.x, p.y, p.z};
    int g[3];
    for (int d = 0; d < 3; ++d) g[d] = (c[d] + origin[d] + global[d]) % global[d];
    return {g[0], g[1], g[2]};
  }
  /// Linear index of global coordinates over the whole domain, x fastest (64-bit: the domain may
  /// hold 2^32 cells or more where each rank holds fewer).
  std::int64_t global_index(int gx, int gy, int gz) const {
    return gx + std::int64_t(global[0]) * (gy + std::int64_t(global[1]) * gz);
  }
  /// Global coordinates of a global linear index.
  Coord global_coords_of(std::int64_t g) const {
    const std::int64_t gx = global[0], gy = global[1];
    return {int(g % gx), int(g / gx % gy), int(g / (gx * gy))};
  }
  /// Global linear index of an updated cell (not wrapped).
  std::int64_t to_global(Index c) const {
    const Coord p = coords(c);
    return global_index(p.x + origin[0], p.y + origin[1], p.z + origin[2]);
  }
  /// The local cell this rank updates at global coordinates g, or -1 where it holds none.
  Index from_global(const Coord& g) const {
    const Box b = real_box();
    if (!b.contains(g.x, g.y, g.z)) return -1;
    return cell(g.x - origin[0], g.y - origin[1], g.z - origin[2]);
  }
  /// The cells this rank updates and owns (without ghost layers), in global coordinates.
  Box real_box() const {
    Box b;
    for (int d = 0; d < 3; ++d) {
      b.lo[std::size_t(d)] = origin[d] + ghost[2 * d];
      b.n[std::size_t(d)] = n[d] - ghost[2 * d] - ghost[2 * d + 1];
    }
    return b;
  }
  /// The local cells of a box given in global coordinates, x fastest (host).
  template <class F>
  void for_each_in(const Box& b, F&& f) const {
    for (int z = 0; z < b.n[2]; ++z)
      for (int y = 0; y < b.n[1]; ++y)
        for (int x = 0; x < b.n[0]; ++x)
          f(cell(b.lo[0] + x - origin[0], b.lo[1] + y - origin[1], b.lo[2] + z - origin[2]));
  }
  /// Every cell of the box, x fastest: f(Coord, cell) (host).
  template <class F>
  void for_each(F&& f) const {
    Index c = 0;
    for (int z = 0; z < n[2]; ++z)
      for (int y = 0; y < n[1]; ++y)
        for (int x = 0; x < n[0]; ++x) f(Coord{x, y, z}, c++);
  }
};

}  // namespace kolibri
