// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The lists of cells the kernels launch over, built from a grid and its flags: the
/// boundary cells (those next to a ghost layer first, so the halo exchange can start early), the
/// fluid cells next to a ghost layer, optionally the cells next to one face only, and every
/// cell's wall-link mask.
#pragma once

#include <kolibri/config/Case.hpp>
#include <kolibri/grid/DenseGrid.hpp>
#include <kolibri/grid/Flags.hpp>
#include <kolibri/grid/LinkRules.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

namespace kolibri {

/// \name The wall-link mask of a cell (wall_links), one 32-bit word:
/// - bits 1 to Q - 1: direction q sends into a wall (a solid neighbour or a non-periodic face);
/// - bit 0, kOutletLink: a link crosses a pressure outlet, whose rule needs the cell's velocity;
/// - bits 27 to 29, kMovingFaceBits: 1 + the face a moving wall's or an inlet's rule comes from,
///   when it is the one non-periodic face the cell's links cross and has no inlet profile (0
///   otherwise);
/// - bit 30, kMovingLink: a link takes a moving wall's or a velocity inlet's rule;
/// - bit 31, kListedCell: resolved by the boundary list or a face kernel, not the interior one.
/// @{
inline constexpr std::uint32_t kOutletLink = 1u;
inline constexpr int kMovingFaceShift = 27;
inline constexpr std::uint32_t kMovingFaceBits = 7u << kMovingFaceShift;
inline constexpr std::uint32_t kMovingLink = 1u << 30;
inline constexpr std::uint32_t kListedCell = 1u << 31;
/// The face of kMovingFaceBits, -1 where there is none.
KOKKOS_INLINE_FUNCTION int moving_face(std::uint32_t mask) {
  return int((mask & kMovingFaceBits) >> kMovingFaceShift) - 1;
}
/// @}

/// \brief Every cell's wall-link mask (0 for all but kBoundaryFluid cells). Found once here, so
/// a kernel resolving a boundary cell reads one word instead of searching its Q - 1 neighbours
/// and their flags every step. Needs Q <= 27.
template <class L>
std::vector<std::uint32_t> wall_links(const DenseGrid& grid, const std::vector<Flag>& flags,
                                      const FaceSet& faces) {
  static_assert(L::Q <= kMovingFaceShift, "wall_links: the directions below kMovingFaceBits");
  std::vector<std::uint32_t> out(flags.size(), 0u);
  const FaceTypes types(faces);
  const auto is = [&](int face, FaceType t) { return types.type[face] == static_cast<int>(t); };
  grid.for_each([&](const Coord& p, Index c) {
    if (flags[static_cast<std::size_t>(c)] != kBoundaryFluid) return;
    std::uint32_t mask = 0;
    unsigned crossed = 0;  // bit f: a link leaves through non-periodic face f
    int moving = -1;
    for (int q = 1; q < L::Q; ++q) {
      int face;
      const Index m = grid.neighbour<L>(types.type, p, q, +1, face);
      if (m < 0 || flags[static_cast<std::size_t>(m)] == kSolid) mask |= 1u << q;
      if (m >= 0) continue;
      const int s[3] = {p.x + L::c(q, 0), p.y + L::c(q, 1), p.z + L::c(q, 2)};
      for (int d = 0; d < 3; ++d) {
        const int f = s[d] < 0 ? 2 * d : s[d] >= grid.n[d] ? 2 * d + 1 : -1;
        if (f >= 0 && !is(f, FaceType::Periodic)) crossed |= 1u << f;
      }
      if (is_pressure(FaceType(types.type[face]))) mask |= kOutletLink;
      if (is(face, FaceType::MovingWall) || is(face, FaceType::VelocityInlet))
        mask |= kMovingLink, moving = face;
    }
    if (moving >= 0 && crossed == 1u << moving &&
        faces[std::size_t(moving)].profile == InletProfile::Uniform)  // (move_links: no profile)
      mask |= std::uint32_t(moving + 1) << kMovingFaceShift;
    out[static_cast<std::size_t>(c)] = mask;
  });
  return out;
}

/// \brief True for a cell with a link across a face whose rule reads the layer next to it
/// (FaceBC::from_layer: outflow faces, developed pressure faces): the rule reads other cells
/// (GridCells::outflow_source), so the cell is listed.
template <class L>
bool has_layer_link(const DenseGrid& grid, const FaceTypes& types, const Coord& p) {
  for (int q = 1; q < L::Q; ++q) {
    int face;
    if (grid.neighbour<L>(types.type, p, q, +1, face) < 0 && types.from_layer[face]) return true;
  }
  return false;
}

/// \brief True for a cell within two layers of a face that reads its layer (FaceBC::from_layer):
/// its gather takes the face's rule, or in place its scatter writes a source's population
/// (push_outflow).
inline bool near_layer_face(const DenseGrid& grid, const FaceTypes& types, const Coord& p) {
  const int at[3] = {p.x, p.y, p.z};
  for (int f = 0; f < 6; ++f) {
    if (!types.from_layer[f]) continue;
    const int d = f / 2, from_face = f % 2 == 0 ? at[d] : grid.n[d] - 1 - at[d];
    if (from_face < 2) return true;
  }
  return false;
}

/// \brief The velocity inlets' profile factors (InletProfile) over the six faces' planes of the
/// rank's box (inlet_plane_offset; 1 on faces without a profile), from the cells' global
/// positions and the whole domain's face types (`domain`, SolverConfig::domain_faces), so every
/// rank holds the values of one rank; empty where no inlet has a profile.
inline std::vector<double> inlet_shape_plane(const DenseGrid& grid, const FaceSet& faces,
                                             const std::array<FaceType, 6>& domain) {
  bool any = false;
  for (const FaceBC& f : faces)
    any = any || (f.type == FaceType::VelocityInlet && f.profile != InletProfile::Uniform);
  if (!any) return {};
  std::vector<double> out(std::size_t(inlet_plane_offset(grid.n, 6)), 1.0);
  for (int f = 0; f < 6; ++f) {
    const FaceBC& face = faces[std::size_t(f)];
    if (face.type != FaceType::VelocityInlet || face.profile == InletProfile::Uniform) continue;
    const int t[2] = {(f / 2 + 1) % 3, (f / 2 + 2) % 3};
    const double n[2] = {double(grid.global[t[0]]), double(grid.global[t[1]])};
    const bool bounded[2] = {bounded_axis(domain, t[0]), bounded_axis(domain, t[1])};
    for (int j = 0; j < grid.n[t[1]]; ++j)
      for (int i = 0; i < grid.n[t[0]]; ++i) {
        int local[3] = {0, 0, 0};
        local[t[0]] = i, local[t[1]] = j;
        const Coord g = grid.global_coords({local[0], local[1], local[2]});
        const int gc[3] = {g.x, g.y, g.z};
        const double x[2] = {gc[t[0]] + 0.5, gc[t[1]] + 0.5};
        double shape = builtin_profile(face.profile, x, n, bounded);
        if (face.profile == InletProfile::File) {
          const auto [a, b] = face_plane_axes(f);
          shape = (*face.profile_values)[std::size_t(gc[a] + Index(grid.global[a]) * gc[b])];
        }
        out[std::size_t(inlet_plane_offset(grid.n, f) + i + Index(grid.n[t[0]]) * j)] = shape;
      }
  }
  return out;
}

/// \brief Cell lists of one grid (32-bit cell indices: a rank holds fewer than 2^32 cells).
struct CellLists {
  /// kBoundaryFluid cells resolved per direction: those next to a ghost layer first, then the
  /// rest (a cell in a face list is in neither).
  std::vector<std::uint32_t> boundary;
  Index boundary_next_to_ghost = 0;  ///< how many of `boundary` come first
  /// The cells next to a ghost layer that the border launch updates: the kFluidBorder cells and,
  /// with `interior_walls`, the boundary cells there that the interior kernel could take (their
  /// wall links from their masks; kListedCell keeps them out of the interior launch).
  std::vector<std::uint32_t> border;
  std::vector<std::uint32_t> faces[6];  ///< with face kernels: cells completed by one face alone
  std::vector<std::uint32_t> links;     ///< wall_links of every cell; empty without boundary cells
  /// The positions in `boundary` of the cells whose rules read slots that an in-place streaming
  /// step overwrites: a link across a pressure face (kOutletLink) or a face that reads its layer
  /// (has_layer_link). That scheme saves what they need first (BoundarySaveTag).
  std::vector<std::uint32_t> saved;
  bool layer_links = false;  ///< some cell of `boundary` has a link across a face of has_layer_link
  /// Where each part of `boundary` (next to a ghost layer, then the others) has its cells within
  /// two layers of a face that reads its layer (near_layer_face) at its end: from layer_from[0]
  /// and layer_from[1]. Only those take the layer rule's kernel (Level::boundary_cells).
  Index layer_from[2] = {0, 0};
  std::int64_t updated = 0;  ///< cells this rank updates (fluid, not ghost)
};

/// \brief The lists of `grid` with `flags` (build_flags) and the faces' types; `face_kernels`
/// puts the cells that one face alone completes into per-face lists (single_face);
/// `interior_walls` leaves the boundary cells without an outlet link, and whose moving walls or
/// inlets are one face, to the interior kernel (two arrays), or to the border launch next to a
/// ghost layer; the others get kListedCell, so do the cells with a link into one of `obstacles`
/// that needs its own rule (has_link_rules) and those with a link across a face that reads its
/// layer (has_layer_link), which are also listed in `saved` with the pressure-face cells.
/// `in_place` (with `interior_walls`) keeps the boundary cells near a face that reads its layer
/// (near_layer_face) listed too: an in-place scatter there writes the face's arriving
/// populations (Boundary::push_outflow), which the interior launch does not.
template <class L>
CellLists build_cell_lists(const DenseGrid& grid, const std::vector<Flag>& flags,
                           const FaceSet& faces, bool face_kernels, bool interior_walls,
                           const std::vector<Obstacle>& obstacles = {}, bool in_place = false) {
  const bool rules = any_link_rules(obstacles);
  const FaceTypes types(faces);
  CellLists out;
  if (std::find(flags.begin(), flags.end(), kBoundaryFluid) != flags.end())
    out.links = wall_links<L>(grid, flags, faces);
  std::vector<std::uint32_t> inner;
  std::vector<bool> saves, inner_saves;  // beside `boundary` and `inner`: the cell is saved
  std::vector<bool> nears, inner_nears;  // and near_layer_face
  grid.for_each([&](const Coord& p, Index c) {
    const Flag f = flags[static_cast<std::size_t>(c)];
    out.updated += is_updated(f);
    if (f == kFluidBorder) out.border.push_back(std::uint32_t(c));
    if (f != kBoundaryFluid) return;
    std::uint32_t& mask = out.links[static_cast<std::size_t>(c)];
    const bool layer = has_layer_link<L>(grid, types, p);
    out.layer_links = out.layer_links || layer;
    const bool saved = (mask & kOutletLink) || layer;
    // the rules that the wall-link mask alone (gather_links, move_links) does not resolve
    const auto own_rule = [&] {
      return !interior_walls || saved || ((mask & kMovingLink) && moving_face(mask) < 0) ||
             (in_place && near_layer_face(grid, types, p)) ||
             (rules && has_link_rules<L>(grid, types.type, flags, obstacles, p));
    };
    if (grid.is_border(p)) {
      if (own_rule()) {
        out.boundary.push_back(std::uint32_t(c));
        saves.push_back(saved);
        nears.push_back(near_layer_face(grid, types, p));
      } else {
        out.border.push_back(std::uint32_t(c));  // the border launch: its wall links alone
      }
    } else if (const int face = face_kernels ? single_face<L>(grid, faces, flags, p) : -1;
               face >= 0) {
      out.faces[face].push_back(std::uint32_t(c));
    } else if (own_rule()) {
      inner.push_back(std::uint32_t(c));
      inner_saves.push_back(saved);
      inner_nears.push_back(near_layer_face(grid, types, p));
    } else {
      return;  // resolved by the interior kernel
    }
    mask |= kListedCell;
  });
  // each part: the cells near a face that reads its layer last, in cell order otherwise
  const auto near_last = [](std::vector<std::uint32_t>& cells, std::vector<bool>& saved,
                            const std::vector<bool>& near) {
    std::vector<std::uint32_t> c;
    std::vector<bool> s;
    for (const bool last : {false, true})
      for (std::size_t i = 0; i < cells.size(); ++i)
        if (near[i] == last) c.push_back(cells[i]), s.push_back(saved[i]);
    cells.swap(c), saved.swap(s);
    return Index(std::count(near.begin(), near.end(), false));
  };
  out.layer_from[0] = near_last(out.boundary, saves, nears);
  out.layer_from[1] = Index(out.boundary.size()) + near_last(inner, inner_saves, inner_nears);
  out.boundary_next_to_ghost = Index(out.boundary.size());
  out.boundary.insert(out.boundary.end(), inner.begin(), inner.end());
  saves.insert(saves.end(), inner_saves.begin(), inner_saves.end());
  for (std::size_t i = 0; i < saves.size(); ++i)
    if (saves[i]) out.saved.push_back(std::uint32_t(i));
  return out;
}

}  // namespace kolibri
