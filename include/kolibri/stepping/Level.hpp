// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief What a streaming scheme steps on: one level of cells with its grid, flags, launch
/// lists, boundary rules, body forces and place among the ranks. A dense solver has one level;
/// a refined one will have one per refinement level, each stepped by its own scheme.
#pragma once

#include <kolibri/config/Case.hpp>
#include <kolibri/grid/CellLists.hpp>
#include <kolibri/grid/DenseGrid.hpp>
#include <kolibri/grid/Flags.hpp>
#include <kolibri/ib/Immersed.hpp>
#include <kolibri/parallel/Distribution.hpp>
#include <kolibri/parallel/Streams.hpp>
#include <kolibri/stepping/CharacteristicOutlets.hpp>
#include <kolibri/stepping/StreamCollide.hpp>

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

namespace kolibri {

/// \tparam L lattice, S storage policy.
template <class L, class S>
struct Level {
  using R = typename S::real;

  /// `cfg` is this rank's local configuration (Decomposition::local_config) on several ranks;
  /// `host_flags` are build_flags(cfg) (the schemes build their halo lists from them too).
  Level(const SolverConfig& cfg, const Distribution* distribution,
        const std::vector<Flag>& host_flags)
      : grid(DenseGrid::of(cfg)) {  // refuses 2^32 cells or more
    if (distribution) dist = *distribution;
    flags = to_device(host_flags, "kolibri::flags");
    const CellLists lists = build_cell_lists<L>(grid, host_flags, cfg.faces, cfg.face_kernels,
                                                cfg.streaming != Streaming::Moments, cfg.obstacles,
                                                cfg.streaming == Streaming::InPlace);
    const LinkRules rules_of_links =
        link_rules<L>(grid, cfg.faces, host_flags, cfg.obstacles, lists.boundary);
    link_distance = to_device(rules_of_links.distance, "kolibri::link_distance");
    link_term = to_device(rules_of_links.term, "kolibri::link_term");
    link_cells = to_device(rules_of_links.cells, "kolibri::link_cells");
    link_row = to_device(rules_of_links.row, "kolibri::link_row");
    fluid_cells = dist.comm ? dist.comm->sum(std::int64_t(lists.updated)) : lists.updated;
    std::vector<std::uint32_t>
        all;  // per-face cells: face f from face_start[f] to face_start[f + 1]
    for (int f = 0; f < 6; ++f) {
      face_start[f] = Index(all.size());
      all.insert(all.end(), lists.faces[f].begin(), lists.faces[f].end());
    }
    face_start[6] = Index(all.size());
    face_cells = to_device(all, "kolibri::face_cells");
    boundary_border = lists.boundary_next_to_ghost;
    border = to_device(lists.border, "kolibri::border_cells");
    boundary = to_device(lists.boundary, "kolibri::boundary_cells");
    links = to_device(lists.links, "kolibri::wall_links");
    saved_rows = to_device(lists.saved, "kolibri::saved_rows");
    layer_links = lists.layer_links;
    layer_from[0] = lists.layer_from[0], layer_from[1] = lists.layer_from[1];
    for (int d = 0; d < 3; ++d) force[d] = R(cfg.force[d]);
    faces = cfg.faces;
    for (const FaceBC& f : faces) timed_faces = timed_faces || f.time_dependent();
    const std::vector<double> shape = inlet_shape_plane(grid, faces, cfg.domain_faces());
    inlet_shape = to_device(std::vector<R>(shape.begin(), shape.end()), "kolibri::inlet_shape");
    rules = {flags,
             grid,
             DeviceFaces<R>::from(faces),
             {force[0], force[1], force[2]},
             links.data(),
             shape.empty() ? nullptr : inlet_shape.data(),
             link_row.extent(0) ? link_row.data() : nullptr,
             link_distance.extent(0) ? link_distance.data() : nullptr,
             link_term.extent(0) ? link_term.data() : nullptr};
    outlets = CharacteristicOutlets<L, R>(cfg, grid, host_flags, lists.boundary, dist.comm);
    if (!cfg.bodies.empty()) ib = ImmersedBoundary<L, S>(cfg, exec, &dist);
  }

  /// A range over cells [begin, end) on this level's execution-space instance.
  template <class Tag = void>
  auto range(Index begin, Index end) const {
    using Range = Kokkos::IndexType<Index>;
    if constexpr (std::is_void_v<Tag>)
      return Kokkos::RangePolicy<ExecSpace, Range>(exec, begin, end);
    else
      return Kokkos::RangePolicy<ExecSpace, Tag, Range>(exec, begin, end);
  }
  /// The boundary list's cells [begin, end) with kernel functor `k` on instance `e`: the cells
  /// near a face that reads its layer (CellLists::layer_from) through BoundaryOutflowTag where
  /// this rank has such links (CellLists::layer_links), the others through BoundaryTag. (All of
  /// them through BoundaryOutflowTag cost the in-place channel 12%: docs/performance.md.)
  template <class K>
  void boundary_cells(const ExecSpace& e, Index begin, Index end, const K& k) const {
    using Range = Kokkos::IndexType<Index>;
    const Index part[3] = {0, boundary_border, Index(boundary.extent(0))};
    for (int p = 0; p < 2; ++p) {
      const Index lo = std::max(begin, part[p]), hi = std::min(end, part[p + 1]);
      if (lo >= hi) continue;
      const Index split = layer_links ? std::clamp(layer_from[p], lo, hi) : hi;
      if (lo < split)
        Kokkos::parallel_for(BoundaryTag::label,
                             Kokkos::RangePolicy<ExecSpace, BoundaryTag, Range>(e, lo, split), k);
      if (split < hi)
        Kokkos::parallel_for(
            BoundaryOutflowTag::label,
            Kokkos::RangePolicy<ExecSpace, BoundaryOutflowTag, Range>(e, split, hi), k);
    }
  }
  /// Device bytes a cell besides the scheme's state: the flag and, with boundary cells, the
  /// wall-link mask.
  double bytes_per_cell() const {
    return double(sizeof(Flag)) +
           double(links.extent(0)) * sizeof(std::uint32_t) / double(grid.cells()) +
           double(link_distance.extent(0) + link_term.extent(0) + link_cells.extent(0) +
                  link_row.extent(0)) *
               sizeof(float) / double(grid.cells());
  }

  /// The face rules of time step `step`: the moving walls' and inlets' velocities times their
  /// time factor (FaceBC::time_factor); `rules.faces` where none changes in time.
  DeviceFaces<R> faces_at(std::int64_t step) const {
    if (!timed_faces) return rules.faces;
    return DeviceFaces<R>::from(faces_at_time(faces, double(step)));
  }

  /// The start of a step and its points on the timeline being recorded (StepClock), if any.
  void start_step() const {
    if (clock) clock->start(exec);
  }
  void mark(const ExecSpace& e, StepPoint p) const {
    if (clock) clock->mark(e, p);
  }

  /// Over every cell of the grid, ghosts included.
  template <class Tag = void>
  auto all_cells() const {
    return range<Tag>(0, grid.cells());
  }

  DenseGrid grid;  ///< this rank's box of cells, ghost layers included
  Kokkos::View<Flag*, MemSpace> flags;
  Kokkos::View<std::uint32_t*, MemSpace> boundary;    ///< cells with kBoundaryFluid (CellLists)
  Kokkos::View<std::uint32_t*, MemSpace> links;       ///< CellLists::links (empty: no boundary)
  Kokkos::View<std::uint32_t*, MemSpace> saved_rows;  ///< CellLists::saved
  bool layer_links = false;                           ///< CellLists::layer_links
  Index layer_from[2] = {0, 0};                       ///< CellLists::layer_from
  Kokkos::View<float*, MemSpace> link_distance;       ///< LinkRules::distance (empty: none)
  Kokkos::View<float*, MemSpace> link_term;           ///< LinkRules::term (empty: no wall moves)
  Kokkos::View<std::uint32_t*, MemSpace> link_cells;  ///< LinkRules::cells
  Kokkos::View<std::int32_t*, MemSpace> link_row;     ///< LinkRules::row
  Index boundary_border = 0;  ///< the first ones of `boundary` lie next to a ghost layer
  Kokkos::View<std::uint32_t*, MemSpace> border;      ///< CellLists::border (multi-rank)
  Kokkos::View<std::uint32_t*, MemSpace> face_cells;  ///< face_kernels: cells next to one face only
  Index face_start[7] = {0, 0, 0, 0, 0, 0, 0};        ///< face f's cells in face_cells
  std::int64_t fluid_cells = 0;                       ///< updated cells over all ranks
  R force[3]{};                                       ///< the body force
  FaceSet faces{};                                    ///< the faces' conditions as set
  bool timed_faces = false;                           ///< a face's velocity changes in time
  Kokkos::View<R*, MemSpace> inlet_shape;             ///< inlet_shape_plane (empty: no profile)
  Boundary<L, R> rules{};  ///< the boundary rules the kernels apply (flags, faces, force)
  /// The characteristic outlets: their densities of each step (none: not active).
  CharacteristicOutlets<L, R> outlets;
  Distribution dist;           ///< multi-rank runs; comm is null otherwise
  ImmersedBoundary<L, S> ib;   ///< immersed bodies (two arrays)
  ExecSpace exec{};            ///< the instance the level's kernels run on
  StepClock* clock = nullptr;  ///< while a timeline is recorded (Solver::step_timeline)
};

}  // namespace kolibri
