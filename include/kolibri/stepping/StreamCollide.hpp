// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The stream + boundary + collide kernels on a dense box, for two population arrays (pull)
/// and for one array streamed in place (AA pattern), SoA through an index policy, and the small
/// kernels beside them (initialisation, macroscopic fields).
#pragma once

#include <kolibri/collision/Collision.hpp>
#include <kolibri/config/Case.hpp>
#include <kolibri/grid/CellLists.hpp>
#include <kolibri/grid/DenseGrid.hpp>
#include <kolibri/grid/Flags.hpp>
#include <kolibri/grid/LinkRules.hpp>
#include <kolibri/storage/Storage.hpp>

#include <stdexcept>
#include <string>
#include <type_traits>

namespace kolibri {

/// \brief Structure-of-arrays index policy: population q of cell n at q * cells + n, so a warp
/// reading one direction of consecutive cells reads consecutive addresses.
struct SoA {
  Index cells;
  KOKKOS_INLINE_FUNCTION Index operator()(Index n, int q) const { return Index(q) * cells + n; }
};

/// \brief Collected SoA, CSoA(alpha) (chen2022 Eq. 9): the cells in groups of alpha consecutive
/// ones (alpha a power of two), the Q values of a group stored together, value q of the group's
/// cells side by side: slot Q alpha floor(n / alpha) + alpha q + n mod alpha. A warp still reads
/// consecutive addresses (alpha >= 32 fills whole 128-byte lines in FP32); the values of one cell
/// lie within Q alpha slots instead of Q cells apart. The last group is padded to alpha cells.
template <int Q>
struct CSoA {
  Index cells;
  Index mask;  ///< alpha - 1
  int shift;   ///< log2 alpha
  KOKKOS_INLINE_FUNCTION Index operator()(Index n, int q) const {
    const Index r = n & mask;
    return (n - r) * Q + (Index(q) << shift) + r;
  }
};

/// \brief Either policy, chosen at run time, for the kernels off the hot path (initialisation,
/// fields, checkpoints, immersed boundaries): slot (n & ~mask) count + q stride + (n & mask), which
/// is SoA for mask = ~0 and stride = cells, and CSoA(alpha) for mask = alpha - 1 and stride = alpha.
/// The stream-collide kernels take SoA or CSoA<Q> (as_soa, as_csoa), compiled for each.
struct Slots {
  Index cells = 0;
  int count = 1;    ///< values a cell (Q, or the moments of the moment representation)
  int alpha = 0;    ///< CSoA group; 0: SoA
  Index mask = -1;  ///< alpha - 1; all ones for SoA
  Index stride = 0; ///< between the values q and q + 1 of a cell

  static Slots soa(Index cells, int count) { return {cells, count, 0, Index(-1), cells}; }
  /// alpha: a power of two from 2 to 2^20.
  static Slots csoa(Index cells, int count, int alpha) {
    if (!valid_csoa_alpha(alpha))
      throw std::invalid_argument("CSoA group alpha = " + std::to_string(alpha) + ": expected a power of two from 2 to 2^20");
    return {cells, count, alpha, Index(alpha - 1), Index(alpha)};
  }
  KOKKOS_INLINE_FUNCTION Index operator()(Index n, int q) const {
    return (n & ~mask) * count + Index(q) * stride + (n & mask);
  }
  /// Values to allocate: the cells rounded up to whole groups.
  Index size() const { return alpha == 0 ? cells * count : (cells + alpha - 1) / alpha * alpha * count; }
  SoA as_soa() const { return {cells}; }
  template <int Q>
  CSoA<Q> as_csoa() const {
    int shift = 0;
    while ((1 << shift) < alpha) ++shift;
    return {cells, mask, shift};
  }
};

/// \brief What the kernels share with the characteristic outlets (CharacteristicOutlets), in
/// device memory: every face's density of the step, and where the two-array kernels leave the
/// velocity of each boundary cell with a pressure-face link after its collision (the next
/// step's sums read it there instead of the cell's populations).
template <class R>
struct OutletExchange {
  R density[6];
  R* layer_velocity;  ///< 3 values a boundary-list position
};

/// \brief Face boundary conditions in a form kernels can copy: type, velocity and density per
/// face (x_min, x_max, y_min, y_max, z_min, z_max).
template <class R>
struct DeviceFaces {
  int type[6];
  /// Bit f set: face f's entering populations come from its layer (FaceBC::from_layer: outflow
  /// faces, developed pressure faces). One word, not six: the functors stay under 512 bytes.
  int from_layer_bits;
  R velocity[6][3];
  R density[6];
  /// The characteristic outlets' exchange, where CharacteristicOutlets steps the faces'
  /// densities on the device (the host does not wait for them); null: `density`.
  OutletExchange<R>* outlets = nullptr;

  /// The density of face `face` this step.
  KOKKOS_INLINE_FUNCTION R density_of(int face) const {
    return outlets != nullptr ? outlets->density[face] : density[face];
  }
  KOKKOS_INLINE_FUNCTION bool from_layer(int face) const { return (from_layer_bits >> face) & 1; }

  static DeviceFaces from(const FaceSet& faces) {
    DeviceFaces d{};
    const FaceTypes types(faces);
    for (int f = 0; f < 6; ++f) {
      d.type[f] = types.type[f];
      if (types.from_layer[f]) d.from_layer_bits |= 1 << f;
      for (int k = 0; k < 3; ++k) d.velocity[f][k] = R(faces[f].velocity[k]);
      d.density[f] = R(faces[f].density);
    }
    return d;
  }
};

/// \brief The population arriving in direction q from face `face` (>= 0), given the cell's own
/// post-collision population in the opposite direction (`back`) and its velocity `u` (pressure
/// faces only): halfway bounce-back for walls; moving walls and velocity inlets add
/// 2 w rho (c.u_w)/cs^2 (`shape` scales an inlet's velocity); pressure faces anti-bounce-back.
/// The one face rule of every grid (Boundary::reflect, the refined levels' LevelStep).
template <class L, class R>
KOKKOS_INLINE_FUNCTION R face_rule(const DeviceFaces<R>& faces, int q, int face, R back,
                                   const R (&u)[3], R shape = R(1)) {
  const R w = R(L::w(q));
  switch (static_cast<FaceType>(faces.type[face])) {
    case FaceType::MovingWall:
    case FaceType::VelocityInlet: {
      const R* uw = faces.velocity[face];
      const R cu = R(L::c(q, 0)) * uw[0] + R(L::c(q, 1)) * uw[1] + R(L::c(q, 2)) * uw[2];
      return back + R(6) * w * faces.density_of(face) * (cu * shape);
    }
    case FaceType::PressureOutlet:
    case FaceType::PressureInlet: {
      const R cu = R(L::c(q, 0)) * u[0] + R(L::c(q, 1)) * u[1] + R(L::c(q, 2)) * u[2];
      const R usq = u[0] * u[0] + u[1] * u[1] + u[2] * u[2];
      return -back + R(2) * w * faces.density_of(face) * (R(1) + R(4.5) * cu * cu - R(1.5) * usq);
    }
    default:
      return back;
  }
}

/// \brief The developed pressure rule's density step (PressureRule::Developed): what a
/// population q entering across pressure face `face` gains over the layer's entering one, the
/// equilibrium's change from the cell's density rho to the face's at the cell's velocity u,
/// 2 w_q (rho_face - rho)(1 + 3 c.u + 4.5 (c.u)^2 - 1.5 u^2) (two half cells: docs/theory.md).
template <class L, class R>
KOKKOS_INLINE_FUNCTION R pressure_step(const DeviceFaces<R>& faces, int q, int face, R rho,
                                       const R (&u)[3]) {
  const R cu = R(L::c(q, 0)) * u[0] + R(L::c(q, 1)) * u[1] + R(L::c(q, 2)) * u[2];
  const R usq = u[0] * u[0] + u[1] * u[1] + u[2] * u[2];
  return R(2) * R(L::w(q)) * (faces.density_of(face) - rho) *
         (R(1) + R(3) * cu + R(4.5) * cu * cu - R(1.5) * usq);
}

/// \brief Density and velocity from post-collision populations, rho = sum f*, u = (sum c f* -
/// F/2) / rho: the one formula every scheme uses for pressure faces, so they agree bit for bit.
template <class L, class R>
KOKKOS_INLINE_FUNCTION void post_collision_state(const R (&fs)[L::Q], const R (&force)[3], R& rho,
                                                 R (&u)[3]) {
  R j[3] = {R(0), R(0), R(0)};
  rho = R(0);
  for (int k = 0; k < L::Q; ++k) {
    rho += fs[k];
    for (int d = 0; d < 3; ++d) j[d] += R(L::c(k, d)) * fs[k];
  }
  for (int d = 0; d < 3; ++d) u[d] = (j[d] - R(0.5) * force[d]) / rho;
}
/// The velocity of post_collision_state.
template <class L, class R>
KOKKOS_INLINE_FUNCTION void post_collision_velocity(const R (&fs)[L::Q], const R (&force)[3],
                                                    R (&u)[3]) {
  R rho;
  post_collision_state<L>(fs, force, rho, u);
}

/// A reader of post-collision populations that rebuilds a cell's Q together (`dep.all(m, g)`:
/// the moment representation's MomentDeparting), where reading one population costs them all.
template <class Departing, class R, int Q>
concept ReadsWholeCells = requires(const Departing& dep, Index m, R (&g)[Q]) {
  dep.all(m, g);
};

/// \brief Geometry and boundary rules shared by every kernel that crosses cells: the flags, the
/// grid, the faces and the body force.
template <class L, class R>
struct Boundary {
  Kokkos::View<const Flag*, MemSpace> flags;
  GridCells grid;  ///< extents only: keeps the functors under Kokkos' 512-byte argument launch
  DeviceFaces<R> faces;
  R force[3];
  /// The wall-link masks of every cell (CellLists::links); null without boundary cells.
  const std::uint32_t* links = nullptr;
  /// The inlets' profile factors (InletProfile) on the six faces' planes of cells, face by face
  /// (inlet_shape_plane); null where no inlet has a profile.
  const R* inlet_shape = nullptr;
  /// The obstacles' link rules (LinkRules): each boundary-list position's row (-1: none), and per
  /// row and direction the wall distances (0: the mask's rule) and, where an obstacle rotates, the
  /// moving-wall terms; null where no obstacle needs them.
  const std::int32_t* link_row = nullptr;
  const float* link_distance = nullptr;
  const float* link_term = nullptr;

  /// The cell reached from p by sign * c_q, with periodic wrap; -1 when the move leaves the box
  /// through a non-periodic face, with `face` set (face_priority at edges and corners).
  KOKKOS_INLINE_FUNCTION Index neighbour(const Coord& p, int q, int sign, int& face) const {
    return grid.neighbour<L>(faces.type, p, q, sign, face);
  }

  /// The population arriving at a cell in direction q from a face (`face` >= 0) or a solid cell
  /// (`face` < 0), given the cell's own post-collision population in the opposite direction
  /// (`back`) and its velocity `u` (used by pressure outlets only). Halfway bounce-back for walls;
  /// moving walls and velocity inlets add 2 w rho (c.u_w)/cs^2; outlets anti-bounce-back.
  /// `shape` scales an inlet's velocity (shape_at: its profile at the cell).
  KOKKOS_INLINE_FUNCTION R reflect(int q, int face, R back, const R (&u)[3], R shape = R(1)) const {
    return face < 0 ? back : face_rule<L>(faces, q, face, back, u, shape);
  }
  /// The profile factor of face `face`'s velocity at cell p (1 without profiles or a face).
  KOKKOS_INLINE_FUNCTION R shape_at(int face, const Coord& p) const {
    if (inlet_shape == nullptr || face < 0) return R(1);
    const int c[3] = {p.x, p.y, p.z}, t1 = (face / 2 + 1) % 3, t2 = (face / 2 + 2) % 3;
    return inlet_shape[inlet_plane_offset(grid.n, face) + c[t1] + Index(grid.n[t1]) * c[t2]];
  }
  /// The row of link rules (LinkRules) of the cell at boundary-list position i; -1: none.
  KOKKOS_INLINE_FUNCTION Index link_row_of(const Index i) const {
    return link_row ? Index(link_row[i]) : Index(-1);
  }
  KOKKOS_INLINE_FUNCTION bool is_outlet(int face) const {
    return face >= 0 && is_pressure(static_cast<FaceType>(faces.type[face]));
  }
  /// True for a face whose entering populations come from the layer next to it
  /// (FaceBC::from_layer): outflow faces and developed pressure faces.
  KOKKOS_INLINE_FUNCTION bool from_layer(int face) const {
    return face >= 0 && faces.from_layer(face);
  }
  /// The outflow rule's source of population q arriving at cell p across outflow face `face`
  /// (GridCells::outflow_source).
  KOKKOS_INLINE_FUNCTION OutflowSource outflow_source(const Coord& p, int q, int face) const {
    return grid.outflow_source<L>(faces.type, p, q, face, SolidCells{flags.data()});
  }
  /// The population q arriving at cell p across face `face` from the layer next to it (outflow
  /// faces; developed pressure faces add pressure_step), from the post-collision populations
  /// `dep` of the step before. A reader that rebuilds whole cells (ReadsWholeCells) is read at
  /// the two directions the rule can take (q, or where it falls back its opposite), both known
  /// at compile time where the caller's loop is unrolled, so the rebuild keeps to those two.
  template <class Departing>
  KOKKOS_INLINE_FUNCTION R outflow_value(const Coord& p, int q, int face,
                                         const Departing& dep) const {
    const OutflowSource s = outflow_source(p, q, face);
    if constexpr (ReadsWholeCells<Departing, R, L::Q>) {
      R g[L::Q];
      dep.all(s.cell, g);
      return s.q == q ? g[q] : g[L::opposite(q)];
    } else {
      return dep(s.cell, s.q);
    }
  }

  /// `value`, the population q arriving at a cell across face `face` from its layer
  /// (outflow_value), plus pressure_step where the face is a pressure outlet (rho, u: the
  /// receiving cell's state).
  KOKKOS_INLINE_FUNCTION R layer_arrival(R value, int q, int face, R rho, const R (&u)[3]) const {
    return is_outlet(face) ? value + pressure_step<L>(faces, q, face, rho, u) : value;
  }

  /// Gather with boundaries, for a cell of the boundary list with wall-link mask `mask`
  /// (wall_links): f[q] is the post-collision population q of the upwind cell, `dep(m, j)`, or
  /// where the link behind c_q is a wall (bit opposite(q)) the reflected one. No
  /// neighbour's flag is read; in the device passes the loop is unrolled (KOLIBRI_UNROLL_LINKS),
  /// so the directions are known at compile time and f stays in registers. The
  /// outlet state (kOutletLink) is the cell's own post-collision density and velocity
  /// (post_collision_state): from `dep` or, when given, from `u_known` (u, then rho). `slot`,
  /// the cell's row of link rules
  /// (link_row_of), selects its obstacle link rules (-1: the mask's rules only); their far-wall
  /// rule reads the cell's own f*_q from `dep` or, when given, from `same` (its Q values saved
  /// before an in-place streaming step: LinkSaveTag). With `Outflow` (only the kernels of runs
  /// with faces that read their layer carry its code: BoundaryOutflowTag) a link across such a
  /// face (from_layer) takes outflow_value, or when given `outflow_known[q]` (saved before an
  /// in-place streaming step, which overwrites the source: BoundarySaveTag), plus on a pressure
  /// face pressure_step.
  template <bool Outflow = false, class Departing>
  KOKKOS_INLINE_FUNCTION void pull(const Index n, const std::uint32_t mask, R (&f)[L::Q],
                                   const Departing& dep, const R* u_known = nullptr,
                                   const Index slot = -1, const R* same = nullptr,
                                   const R* outflow_known = nullptr) const {
    const Coord p = grid.coords(n);
    const Rows rows = grid.rows(n);
    R u[3] = {R(0), R(0), R(0)}, rho = R(1);
    if (u_known) {
      for (int d = 0; d < 3; ++d) u[d] = u_known[d];
      rho = u_known[3];
    } else if (mask & kOutletLink) {
      state_of(dep, n, rho, u);
    }
    KOLIBRI_UNROLL_LINKS
    for (int q = 0; q < L::Q; ++q) {
      if (q > 0 && ((mask >> L::opposite(q)) & 1u)) {
        int face;
        neighbour(p, q, -1, face);  // the face crossed, -1 for a solid neighbour
        const R d =
            face < 0 && link_distance && slot >= 0 ? R(link_distance[slot * L::Q + q]) : R(0);
        if (d > R(0)) {
          const int k = L::opposite(q);
          const R term = link_term ? R(link_term[slot * L::Q + q]) : R(0);
          f[q] = interpolated_bounce_back(
              d, dep(n, k), same ? same[q] : dep(n, q), [&] { return dep(rows.upwind<L>(k), k); },
              term);
        } else if (Outflow && from_layer(face)) {
          const R arrived = outflow_known ? outflow_known[q] : outflow_value(p, q, face, dep);
          f[q] = layer_arrival(arrived, q, face, rho, u);
        } else {
          f[q] = reflect(q, face, dep(n, L::opposite(q)), u, shape_at(face, p));
        }
      } else {
        f[q] = dep(rows.upwind<L>(q), q);
      }
    }
  }

  /// state(), out of line in the AMD device pass (KOLIBRI_OUT_OF_LINE_ON_AMD; push).
  KOLIBRI_OUT_OF_LINE_ON_AMD KOKKOS_FUNCTION void state_out_of_line(const R (&fs)[L::Q], R& rho,
                                                                    R (&u)[3]) const {
    state(fs, rho, u);
  }
  /// post_collision_state with the body force.
  KOKKOS_INLINE_FUNCTION void state(const R (&fs)[L::Q], R& rho, R (&u)[3]) const {
    post_collision_state<L>(fs, force, rho, u);
  }
  /// state() of cell n from its post-collision populations as `dep(n, q)` reads them back (a
  /// Departing or PostCollision reader), or all Q at once where the reader rebuilds them
  /// together (`dep.all(n, fs)`: the moment representation's MomentDeparting).
  template <class Dep>
  KOKKOS_INLINE_FUNCTION void state_of(const Dep& dep, const Index n, R& rho, R (&u)[3]) const {
    R fs[L::Q];
    if constexpr (ReadsWholeCells<Dep, R, L::Q>) {
      dep.all(n, fs);
    } else {
      KOLIBRI_UNROLL
      for (int q = 0; q < L::Q; ++q) fs[q] = dep(n, q);
    }
    state(fs, rho, u);
  }
  /// post_collision_velocity with the body force.
  KOKKOS_INLINE_FUNCTION void velocity(const R (&fs)[L::Q], R (&u)[3]) const {
    post_collision_velocity<L>(fs, force, u);
  }

  /// The interior kernel's boundary cells with a link across a moving wall or a velocity inlet
  /// (kMovingLink; the cell's links cross that face only, moving_face): the term its rule adds
  /// to the populations gather_links bounced back, by reflect() itself, so the values are those
  /// of pull(). The directions from the face are those along its axis pointing inwards.
  KOKKOS_INLINE_FUNCTION void move_links(const std::uint32_t mask, R (&f)[L::Q]) const {
    const int face = moving_face(mask), axis = face / 2, inward = face % 2 == 0 ? 1 : -1;
    const R no_u[3] = {R(0), R(0), R(0)};  // no outlet link here (those cells are listed)
    KOLIBRI_UNROLL
    for (int q = 1; q < L::Q; ++q)
      if (((mask >> L::opposite(q)) & 1u) && L::c(q, axis) == inward)
        f[q] = reflect(q, face, f[q], no_u);
  }

  /// The in-place scatter's counterpart of move_links (the interior launch's boundary cells
  /// with a link across a moving wall or a velocity inlet): fr[q], whose link leaves into a wall
  /// (bit q of `mask`) and comes back as the cell's arriving population opposite(q), takes the
  /// face's term where the link leaves through the moving face, by reflect() itself, so the
  /// values are those of push().
  KOKKOS_INLINE_FUNCTION void move_back(const std::uint32_t mask, R (&fr)[L::Q]) const {
    const int face = moving_face(mask), axis = face / 2, inward = face % 2 == 0 ? 1 : -1;
    const R no_u[3] = {R(0), R(0), R(0)};  // no outlet link here (those cells are listed)
    KOLIBRI_UNROLL
    for (int q = 1; q < L::Q; ++q)
      if (((mask >> q) & 1u) && L::c(L::opposite(q), axis) == inward)
        fr[q] = reflect(L::opposite(q), face, fr[q], no_u);
  }

  /// Scatter with boundaries (in-place scheme), for a cell of the boundary list with wall-link
  /// mask `mask`: the post-collision fs[q] goes to the downwind cell as its arriving population
  /// q, `arrive(m, q, value)`, or where that link is a wall (bit q) is reflected back into this
  /// cell as arriving population opposite(q). Reflections and the outlet velocity use `fr`, the
  /// post-collision values as the storage holds them (= fs unless the storage rounds, e.g. FP16),
  /// which is what the two-array scheme reflects one step later. An obstacle link with its own
  /// rule (`slot`, the cell's row of link rules, >= 0) takes interpolated_bounce_back where the
  /// wall is at least half a link away; nearer, the rule needs the cell behind's population of this
  /// step, so it gets the cell's own f*_k here and LinkCompleteTag finishes it after the step.
  /// Either way f*_k goes to `leaving` (Q values of the cell) for the momentum exchange. With
  /// `Outflow` a link across a face that reads its layer (from_layer) writes nothing: its cell's
  /// arriving population comes from the rule's source cell (push_outflow); where `state` is
  /// given the cell's post-collision velocity and density go there (u, then rho), from which
  /// PressureStepTag adds a developed pressure face's pressure_step after the step.
  template <bool Outflow = false, class Arriving>
  KOKKOS_INLINE_FUNCTION void push(const Index n, const std::uint32_t mask, const R (&fs)[L::Q],
                                   const R (&fr)[L::Q], const Arriving& arrive,
                                   const Index slot = -1, R* leaving = nullptr,
                                   R* state = nullptr) const {
    const Coord p = grid.coords(n);
    const Rows rows = grid.rows(n);
    // The outlet state, used by outlet links only, for every cell and out of line on AMD:
    // computed under a branch on kOutletLink (D2Q9), or inlined (D3Q19), it made the AMDGPU
    // back end of LLVM 15 (SI Fold Operands) run for hours on the FP16 TRT in-place list kernel
    // (docs/portability.md).
    R u[3], rho;
    state_out_of_line(fr, rho, u);
    if (state) {
      for (int d = 0; d < 3; ++d) state[d] = u[d];
      state[3] = rho;
    }
    KOLIBRI_UNROLL_LINKS
    for (int q = 0; q < L::Q; ++q) {
      if (q > 0 && ((mask >> q) & 1u)) {
        int face;
        neighbour(p, q, +1, face);
        const int a = L::opposite(q);  // arriving back
        const R d =
            face < 0 && link_distance && slot >= 0 ? R(link_distance[slot * L::Q + a]) : R(0);
        if (d > R(0)) {
          const R term = link_term ? R(link_term[slot * L::Q + a]) : R(0);
          if (leaving) leaving[a] = fr[q];
          arrive(n, a,
                 d < R(0.5) ? fr[q]
                            : interpolated_bounce_back(
                                  d, fr[q], fr[a], [] { return R(0); }, term));
        } else if (!Outflow || !from_layer(face)) {
          arrive(n, a, reflect(a, face, fr[q], u, shape_at(face, p)));
        }
      } else {
        arrive(rows.upwind<L>(L::opposite(q)), q, fs[q]);  // downwind of q: upwind of opposite(q)
      }
    }
    if constexpr (Outflow) push_outflow(n, p, fr, arrive);
  }

  /// In-place streaming step, the outflow rule's writes (outflow_source, whose source is this
  /// cell n at p): to each cell t of an outflow face's layer that takes its population q from
  /// n, n's post-collision population as stored (`fr`). Such a t is n + c_q moved back into
  /// the layer (n in the layer), n itself (its own bounce-back), or the cell of the layer next
  /// to n (n one layer in). Every (t, q) has one source, so no two cells write it.
  template <class Arriving>
  KOKKOS_INLINE_FUNCTION void push_outflow(const Index n, const Coord& p, const R (&fr)[L::Q],
                                           const Arriving& arrive) const {
    for (int face = 0; face < 6; ++face) {
      if (!from_layer(face)) continue;
      const int axis = face / 2, inward = face % 2 == 0 ? 1 : -1;
      const int layer = face % 2 == 0 ? 0 : grid.n[axis] - 1;
      const int at = axis == 0 ? p.x : axis == 1 ? p.y : p.z;
      if (at != layer && at != layer + inward) continue;
      for (int q = 1; q < L::Q; ++q) {
        if (L::c(q, axis) != inward) continue;
        Coord targets[2];
        int count = 0;
        if (at == layer) {
          targets[count++] = p;  // its own bounce-back (the cell one layer in is solid)
          int t[3] = {p.x + L::c(q, 0), p.y + L::c(q, 1), p.z + L::c(q, 2)};
          t[axis] = layer;
          bool inside = true;
          for (int d = 0; d < 3; ++d) {
            t[d] = grid.wrap(t[d], d, faces.type);
            inside = inside && t[d] >= 0;
          }
          const Coord c{t[0], t[1], t[2]};
          if (inside && (c.x != p.x || c.y != p.y || c.z != p.z)) targets[count++] = c;
        } else {
          Coord c = p;
          (axis == 0 ? c.x : axis == 1 ? c.y : c.z) = layer;
          targets[count++] = c;
        }
        for (int k = 0; k < count; ++k) {
          const Index t = grid.cell(targets[k]);
          if (flags(t) == kSolid) continue;
          int crossed;
          if (neighbour(targets[k], q, -1, crossed) >= 0 || crossed != face) continue;
          const OutflowSource s = outflow_source(targets[k], q, face);
          if (s.cell == n) arrive(t, q, fr[s.q]);
        }
      }
    }
  }
};

/// \brief A force per cell added to the uniform body force (immersed boundaries): component d of
/// cell n at d * cells + n. Empty: none (the kernels check once per cell, a uniform branch).
template <class R>
struct CellForce {
  Kokkos::View<const R*, MemSpace> field{};
  /// F = uniform + the field at cell n (D components).
  template <int D>
  KOKKOS_INLINE_FUNCTION void at(const Index n, const Index cells, const R (&uniform)[3], R (&F)[3]) const {
    for (int d = 0; d < 3; ++d) F[d] = uniform[d];
    if (field.extent(0) > 0)
      for (int d = 0; d < D; ++d) F[d] += field(d * cells + n);
  }
};

/// \brief The immersed bodies' force per cell, as a base of the kernels that read it (an empty
/// base for those that do not: their functors keep their size).
template <class R>
struct WithCellForce {
  CellForce<R> cell_force{};
};
struct WithoutCellForce {};

/// \brief Populations `f` as storage S keeps them (what a kernel reading them back gets): the
/// same values for native storage, rounded through FP16 for the FP16 storage.
template <class L, class S>
KOKKOS_INLINE_FUNCTION void as_stored(const typename S::real (&f)[L::Q],
                                      typename S::real (&stored)[L::Q]) {
  KOLIBRI_UNROLL
  for (int q = 0; q < L::Q; ++q) stored[q] = S::template load<L>(S::template store<L>(f[q], q), q);
}

/// \brief Post-collision population j of cell m in a two-array state: slot j of `src`.
template <class L, class S, class I = SoA>
struct PostCollision {
  Kokkos::View<const typename S::value_type*, MemSpace> src;
  I idx;
  KOKKOS_INLINE_FUNCTION typename S::real operator()(Index m, int j) const {
    return S::template load<L>(src(idx(m, j)), j);
  }
};

/// \brief Post-collision population j of cell m in an in-place state after a local step: slot
/// opposite(j) (the AA pattern's departing slot).
template <class L, class S, class I = SoA>
struct PostCollisionInPlace {
  Kokkos::View<const typename S::value_type*, MemSpace> src;
  I idx;
  KOKKOS_INLINE_FUNCTION typename S::real operator()(Index m, int j) const {
    return S::template load<L>(src(idx(m, L::opposite(j))), j);
  }
};

/// \brief The populations arriving at a cell whose upwind neighbours are all fluid (two arrays):
/// index arithmetic only.
template <class L, class S, class I>
KOKKOS_INLINE_FUNCTION void gather_interior(const Kokkos::View<const typename S::value_type*, MemSpace>& src,
                                            const I& idx, const Rows& rows, typename S::real (&f)[L::Q]) {
  KOLIBRI_UNROLL
  for (int q = 0; q < L::Q; ++q) f[q] = S::template load<L>(src(idx(rows.upwind<L>(q), q)), q);
}

/// \brief The populations arriving at a cell of the interior kernel: f[q] from the upwind
/// neighbour or, where the link behind c_q is a wall (bit opposite(q) of the cell's wall-link
/// mask), the cell's own post-collision population opposite(q), halfway bounce-back (moving
/// walls and inlets add their term after: Boundary::move_links). One load per direction whatever
/// the cell, its address chosen by the mask, so a boundary cell costs the interior's registers.
/// (Storage conversions depend on w_q only, the same for q and opposite(q).)
template <class L, class S, class I>
KOKKOS_INLINE_FUNCTION void gather_links(
    const Kokkos::View<const typename S::value_type*, MemSpace>& src, const I& idx,
    const Rows& rows, const Index n, const std::uint32_t mask, typename S::real (&f)[L::Q]) {
  KOLIBRI_UNROLL
  for (int q = 0; q < L::Q; ++q) {
    const bool wall = q > 0 && ((mask >> L::opposite(q)) & 1u);
    f[q] = S::template load<L>(src(wall ? idx(n, L::opposite(q)) : idx(rows.upwind<L>(q), q)), q);
  }
}

/// \brief In-place streaming step, the values a cell of the interior launch sends back into
/// itself where its link along c_q is a wall (bit q of its wall-link mask; CellLists leaves the
/// cells whose walls the mask alone resolves to that launch): the post-collision f[q] as the
/// storage holds it, plus a moving wall's or an inlet's term (Boundary::move_back), which is
/// what Boundary::push gives the listed cells. The other directions keep f[q].
template <class L, class S>
KOKKOS_INLINE_FUNCTION void bounce_back_in_place(const Boundary<L, typename S::real>& bc,
                                                 const std::uint32_t mask,
                                                 typename S::real (&f)[L::Q]) {
  KOLIBRI_UNROLL
  for (int q = 1; q < L::Q; ++q)
    if ((mask >> q) & 1u) f[q] = S::template load<L>(S::template store<L>(f[q], q), q);
  if (mask & kMovingLink) bc.move_back(mask, f);
}

/// Interior cells: every neighbour is fluid (periodic wrap resolved by index arithmetic).
struct InteriorTag {
  static constexpr const char* label = "kolibri::stream_collide_interior";
};
/// Boxes with walls: the interior cells and the boundary cells that are in no list, whose walls
/// are resolved from their wall-link masks (gather_links). A kernel of its own, so the periodic
/// box keeps InteriorTag's registers.
struct InteriorWallsTag {
  static constexpr const char* label = "kolibri::stream_collide_interior_walls";
};
/// The collision split over two launches (chen2022 4.4.1): each gathers the cell and collides
/// it, and writes half of the results (the compiler drops the other half's arithmetic).
struct InteriorLowTag {
  static constexpr const char* label = "kolibri::stream_collide_interior_low";
};
struct InteriorHighTag {
  static constexpr const char* label = "kolibri::stream_collide_interior_high";
};
/// Cells next to a ghost layer (multi-rank), from a list (CellLists::border): InPlaceStep's are
/// kFluidBorder cells (the fast path of InteriorTag); StreamCollide's also boundary cells that
/// their wall-link masks resolve (what InteriorWallsTag does).
struct BorderTag {
  static constexpr const char* label = "kolibri::stream_collide_border";
};
/// Cells next to a solid or a non-periodic face, from a compact list.
struct BoundaryTag {
  static constexpr const char* label = "kolibri::stream_collide_boundary";
};
/// BoundaryTag with outflow faces: a kernel of its own, so the others do not carry the outflow
/// rule's code (it cost the in-place boundary kernel 4-14% on the closed box and the channel:
/// docs/performance.md).
struct BoundaryOutflowTag {
  static constexpr const char* label = "kolibri::stream_collide_boundary_outflow";
};
/// Cells next to one non-periodic face only (no solid neighbour, no other face), one launch per
/// face (chen2022 4.3): which directions come from the face is known per launch, so no thread
/// looks for neighbours and the face's rule is the same in every thread.
struct FaceTag {
  static constexpr const char* label = "kolibri::stream_collide_face";
};
/// In-place scheme, local step: every fluid cell collides its own populations.
struct LocalTag {
  static constexpr const char* label = "kolibri::in_place_local";
};
/// In-place scheme, before a streaming step with pressure or outflow faces: what the rules of
/// those faces read from slots the step overwrites (a pressure face's cell velocity, an outflow
/// face's arriving populations).
struct BoundarySaveTag {
  static constexpr const char* label = "kolibri::in_place_boundary_save";
};
/// In-place scheme, after a streaming step with developed pressure faces: the populations that
/// entered across them (the layer's, push_outflow) get the density step (pressure_step) of their
/// cell's state after the collision, once every source has written.
struct PressureStepTag {
  static constexpr const char* label = "kolibri::in_place_pressure_step";
};
/// In-place scheme, before a streaming step with obstacle link rules: the listed cells' own
/// departing f*_q for their links whose wall is at least half a link away (the cell behind
/// overwrites that slot in the streaming step).
struct LinkSaveTag {
  static constexpr const char* label = "kolibri::in_place_link_save";
};
/// In-place scheme, after a streaming step with obstacle link rules: the links whose wall is
/// nearer than half a link get their interpolated value, now that the cell behind's population
/// of the step has arrived.
struct LinkCompleteTag {
  static constexpr const char* label = "kolibri::in_place_link_complete";
};

/// \brief Two-array pull step: gather the upwind neighbours' post-collision populations from
/// `src`, resolve boundaries, collide, write to `dst`.
///
/// Two launches per step over disjoint cells: InteriorTag over all cells (fluid cells with only
/// fluid neighbours; everything else returns at once) and BoundaryTag over the list of boundary
/// cells. Kept apart, the interior kernel holds its populations in registers; fused with the
/// boundary logic (which indexes them at run time) they went to a local-memory stack frame and
/// the kernel ran at 65% of the copy bandwidth on an H100 (docs/performance.md). Options: the
/// cells next to one face in per-face launches (FaceTag), the interior collision in two launches
/// (InteriorLowTag, InteriorHighTag).
/// \tparam L lattice, S storage policy (its `real` is the arithmetic type), C collision operator,
/// I index policy (SoA or CSoA<L::Q>)
template <class L, class S, class C, class I = SoA>
struct StreamCollide {
  using R = typename S::real;
  using V = typename S::value_type;
  Kokkos::View<const V*, MemSpace> src;
  Kokkos::View<V*, MemSpace> dst;
  Kokkos::View<const std::uint32_t*, MemSpace> boundary_cells;
  I idx;
  C collide;
  Boundary<L, R> bc;
  Kokkos::View<const std::uint32_t*, MemSpace> border_cells{};  ///< BorderTag: CellLists::border
  CellForce<R> cell_force{};  ///< immersed boundaries; empty without bodies
  Kokkos::View<const std::uint32_t*, MemSpace> face_cells{};  ///< FaceTag: this launch's cells
  int face = 0;                                               ///< FaceTag: this launch's face

  /// The body force at cell n.
  KOKKOS_INLINE_FUNCTION void force_at(const Index n, R (&F)[3]) const {
    cell_force.template at<L::D>(n, idx.cells, bc.force, F);
  }

  /// kFluid cells only: cells next to a ghost layer (kFluidBorder) go through BorderTag.
  KOKKOS_INLINE_FUNCTION void operator()(InteriorTag, const Index n) const {
    if (bc.flags(n) != kFluid) return;
    fast<0, L::Q>(n);
  }
  /// kFluid cells and the boundary cells in no list (no kListedCell); cells next to a ghost
  /// layer (kFluidBorder) go through BorderTag. So do both halves of a split collision.
  KOKKOS_INLINE_FUNCTION void operator()(InteriorWallsTag, const Index n) const {
    interior<0, L::Q>(n);
  }
  KOKKOS_INLINE_FUNCTION void operator()(InteriorLowTag, const Index n) const {
    interior<0, L::Q / 2>(n);
  }
  KOKKOS_INLINE_FUNCTION void operator()(InteriorHighTag, const Index n) const {
    interior<L::Q / 2, L::Q>(n);
  }
  /// A warp's cells in one launch, boundary cells included, so it writes whole sectors: cells
  /// left to a second launch leave holes in the lines this one writes, which the memory system
  /// reads to fill (the closed box's interior launch ran 8% longer that way, and the boundary
  /// list's scattered cells moved 5.5 times their bytes: docs/performance.md).
  template <int q0, int q1>
  KOKKOS_INLINE_FUNCTION void interior(const Index n) const {
    const Flag flag = bc.flags(n);
    if (flag != kFluid && flag != kBoundaryFluid) return;
    const std::uint32_t mask = flag == kFluid ? 0u : bc.links[n];
    if (mask & kListedCell) return;
    resolve<q0, q1>(n, mask);
  }
  /// A kFluidBorder cell, or a boundary cell next to a ghost layer whose wall links its mask
  /// resolves (kListedCell: this list's, not the interior launch's).
  KOKKOS_INLINE_FUNCTION void operator()(BorderTag, const Index i) const {
    const Index n = Index(border_cells(i));
    resolve<0, L::Q>(n, bc.flags(n) == kBoundaryFluid ? bc.links[n] : 0u);
  }
  /// Gather cell n's populations with its wall links `mask` (gather_links, move_links), collide,
  /// write the results q0 <= q < q1.
  template <int q0, int q1>
  KOKKOS_INLINE_FUNCTION void resolve(const Index n, const std::uint32_t mask) const {
    R f[L::Q];
    gather_links<L, S>(src, idx, bc.grid.rows(n), n, mask, f);
    if (mask & kMovingLink) bc.move_links(mask, f);
    collide_store<q0, q1>(n, f);
  }

  /// Gather, collide, write the results q0 <= q < q1: a cell whose upwind neighbours are all fluid.
  template <int q0, int q1>
  KOKKOS_INLINE_FUNCTION void fast(const Index n) const {
    R f[L::Q];
    gather_interior<L, S>(src, idx, bc.grid.rows(n), f);
    collide_store<q0, q1>(n, f);
  }

  template <int q0 = 0, int q1 = L::Q>
  KOKKOS_INLINE_FUNCTION void collide_store(const Index n, R (&f)[L::Q]) const {
    R F[3];
    force_at(n, F);
    collide(f, F);
    KOLIBRI_UNROLL
    for (int q = q0; q < q1; ++q) dst(idx(n, q)) = S::template store<L>(f[q], q);
  }

  KOKKOS_INLINE_FUNCTION void operator()(BoundaryTag, const Index i) const { boundary<false>(i); }
  KOKKOS_INLINE_FUNCTION void operator()(BoundaryOutflowTag, const Index i) const {
    boundary<true>(i);
  }
  template <bool Outflow>
  KOKKOS_INLINE_FUNCTION void boundary(const Index i) const {
    const Index n = Index(boundary_cells(i));
    const std::uint32_t mask = bc.links[n];
    R f[L::Q];
    bc.template pull<Outflow>(n, mask, f, PostCollision<L, S, I>{src, idx}, nullptr,
                              bc.link_row_of(i));
    collide_store(n, f);
    if ((mask & kOutletLink) && bc.faces.outlets != nullptr) leave_velocity(i, f);
  }
  /// The velocity of the cell at boundary-list position i from its post-collision populations
  /// `f` as stored (what PostCollision reads back), left for the characteristic outlets' sums
  /// of the next step (OutletExchange::layer_velocity).
  KOKKOS_INLINE_FUNCTION void leave_velocity(const Index i, const R (&f)[L::Q]) const {
    R fs[L::Q], rho, u[3];
    as_stored<L, S>(f, fs);
    bc.state(fs, rho, u);
    R* out = bc.faces.outlets->layer_velocity + 3 * i;
    for (int d = 0; d < 3; ++d) out[d] = u[d];
  }

  /// The directions that come from the face (c_q along its axis pointing inwards) are reflected
  /// by the face's rule, the others gathered as in the interior.
  KOKKOS_INLINE_FUNCTION void operator()(FaceTag, const Index i) const {
    const Index n = Index(face_cells(i));
    const int axis = face / 2, inward = face % 2 == 0 ? 1 : -1;
    const PostCollision<L, S, I> dep{src, idx};
    R u[3] = {R(0), R(0), R(0)};
    if (bc.is_outlet(face)) {
      R fs[L::Q];
      for (int k = 0; k < L::Q; ++k) fs[k] = dep(n, k);
      bc.velocity(fs, u);
    }
    const R shape = bc.inlet_shape ? bc.shape_at(face, bc.grid.coords(n)) : R(1);
    const Rows rows = bc.grid.rows(n);
    R f[L::Q];
    KOLIBRI_UNROLL
    for (int q = 0; q < L::Q; ++q)
      f[q] = L::c(q, axis) == inward ? bc.reflect(q, face, dep(n, L::opposite(q)), u, shape)
                                     : dep(rows.upwind<L>(q), q);
    collide_store(n, f);
  }
};

/// \brief One population array streamed in place (AA pattern, Bailey et al. 2009): half the memory
/// of two arrays, the same bytes per update, bit-identical results.
///
/// Two kinds of step alternate. After a local step (and initially) slot opposite(j) of cell m
/// holds its post-collision population j ("departing"). A streaming step (InteriorTag,
/// BoundaryTag) gathers each cell's arriving populations from the departing slots of its
/// upwind neighbours, collides, and scatters the results into the downwind neighbours' slots
/// q ("arriving"), reflecting at walls and faces. A local step (LocalTag) collides each cell's
/// arriving populations in place and writes them back as departing ones. Every slot is read and
/// written by one cell only, so no step races, with two exceptions handled apart: a pressure
/// outlet needs its cell's velocity from all of its own departing slots, and an outflow face
/// the departing slots of other cells (outflow_source), which fluid neighbours overwrite during
/// the streaming step; BoundarySaveTag saves both first into `saved`.
/// On several ranks the streaming step of the fluid cells next to a ghost layer (kFluidBorder)
/// runs apart, from a list (BorderTag), so the halo exchanges can overlap the other cells'.
/// `Forced`: the immersed bodies' force per cell (`cell_force`, from a base class) joins the
/// uniform one. The unforced kernel's functor does not hold it: one more view made the functor
/// 512 bytes or more, which Kokkos launches through constant memory on CUDA, a copy per launch
/// that cost the in-place steps without bodies 1.2-1.6% (H100, docs/performance.md).
template <class L, class S, class C, class I = SoA, bool Forced = false>
struct InPlaceStep : std::conditional_t<Forced, WithCellForce<typename S::real>, WithoutCellForce> {
  using R = typename S::real;
  using V = typename S::value_type;
  Kokkos::View<V*, MemSpace> a;
  Kokkos::View<const std::uint32_t*, MemSpace> boundary_cells;
  I idx;
  C collide;
  Boundary<L, R> bc;
  /// Per boundary cell `saved_width` values: the state (u, rho) of a cell with a pressure-face
  /// link before the streaming step (BoundarySaveTag, at kStateBefore); with faces that read
  /// their layer (from_layer) also its state after the step's collision (push, at kStateAfter;
  /// PressureStepTag reads it) and the Q populations arriving across them (BoundarySaveTag, at
  /// kArriving). Empty without pressure or outflow faces.
  Kokkos::View<R*, MemSpace> saved{};
  int saved_width = 0;
  static constexpr int kStateBefore = 0, kStateAfter = 4, kArriving = 8;
  /// saved_width: without faces that read their layer, with them.
  static constexpr int kSavedState = 4, kSavedLayer = kArriving + L::Q;
  /// BoundarySaveTag: the boundary-list positions of the cells that save (Level::saved_rows).
  Kokkos::View<const std::uint32_t*, MemSpace> saved_rows{};
  Kokkos::View<const std::uint32_t*, MemSpace> border_cells{};  ///< BorderTag: kFluidBorder cells
  /// With obstacle link rules, Q values per row of link rules: the saved f*_q (LinkSaveTag)
  /// and the last streaming step's f*_k of the links (push; the momentum exchange reads them).
  /// Empty without link rules.
  Kokkos::View<R*, MemSpace> link_same{};
  Kokkos::View<R*, MemSpace> link_leaving{};
  /// LinkSaveTag, LinkCompleteTag: each row's boundary-list position (Level::link_cells).
  Kokkos::View<const std::uint32_t*, MemSpace> link_cells{};

  using Departing =
      PostCollisionInPlace<L, S, I>;  // post-collision f*_j of cell m: slot opposite(j)
  struct Arriving {  // arriving population q of cell m: slot q
    Kokkos::View<V*, MemSpace> a;
    I idx;
    KOKKOS_INLINE_FUNCTION void operator()(Index m, int q, R v) const {
      a(idx(m, q)) = S::template store<L>(v, q);
    }
  };

  KOKKOS_INLINE_FUNCTION void operator()(LocalTag, const Index n) const {
    if (!is_updated(bc.flags(n))) return;
    R f[L::Q];
    KOLIBRI_UNROLL
    for (int q = 0; q < L::Q; ++q) f[q] = S::template load<L>(a(idx(n, q)), q);
    collide_at(n, f);
    KOLIBRI_UNROLL
    for (int q = 0; q < L::Q; ++q) a(idx(n, L::opposite(q))) = S::template store<L>(f[q], q);
  }

  /// Collide with the body force at cell n (uniform, plus the immersed bodies' where they act).
  KOKKOS_INLINE_FUNCTION void collide_at(const Index n, R (&f)[L::Q]) const {
    if constexpr (Forced) {
      R F[3];
      this->cell_force.template at<L::D>(n, idx.cells, bc.force, F);
      collide(f, F);
    } else {
      collide(f, bc.force);
    }
  }

  /// kFluid cells only: cells next to a ghost layer (kFluidBorder) go through BorderTag.
  KOKKOS_INLINE_FUNCTION void operator()(InteriorTag, const Index n) const {
    if (bc.flags(n) == kFluid) stream(n);
  }
  /// Boxes with walls: kFluid cells and the boundary cells in no list (no kListedCell), whose
  /// walls their masks resolve (stream_walls); cells next to a ghost layer go through BorderTag.
  KOKKOS_INLINE_FUNCTION void operator()(InteriorWallsTag, const Index n) const {
    const Flag flag = bc.flags(n);
    if (flag != kFluid && flag != kBoundaryFluid) return;
    const std::uint32_t mask = flag == kFluid ? 0u : bc.links[n];
    if (!(mask & kListedCell)) stream_walls(n, mask);
  }
  /// A kFluidBorder cell, or a boundary cell next to a ghost layer whose walls its mask resolves.
  KOKKOS_INLINE_FUNCTION void operator()(BorderTag, const Index i) const {
    const Index n = Index(border_cells(i));
    stream_walls(n, bc.flags(n) == kBoundaryFluid ? bc.links[n] : 0u);
  }

  /// Streaming step of a fluid cell with only fluid neighbours: gather the upwind neighbours'
  /// departing populations, collide, scatter into the downwind neighbours' arriving slots
  /// (stream_walls without walls: its mask, 0 at compile time, leaves no wall code).
  KOKKOS_INLINE_FUNCTION void stream(const Index n) const { stream_walls(n, 0u); }

  /// Streaming step of a cell with wall-link mask `mask` (0: only fluid neighbours) whose walls
  /// the mask resolves: gather the upwind neighbours' departing populations, collide, scatter
  /// into the downwind neighbours' arriving slots; where the link behind c_q is a wall (bit
  /// opposite(q)) the cell's own departing population opposite(q) (slot q) comes back, and where
  /// the link along c_q is one (bit q) its f[q] goes back into its own slot opposite(q)
  /// (bounce_back_in_place): each slot is read and written by this cell alone, and every value is
  /// that of the boundary list (pull, push).
  KOKKOS_INLINE_FUNCTION void stream_walls(const Index n, const std::uint32_t mask) const {
    const Rows rows = bc.grid.rows(n);
    R f[L::Q];
    KOLIBRI_UNROLL
    for (int q = 0; q < L::Q; ++q) {
      const bool wall = q > 0 && ((mask >> L::opposite(q)) & 1u);
      f[q] = S::template load<L>(a(wall ? idx(n, q) : idx(rows.upwind<L>(q), L::opposite(q))), q);
    }
    if (mask & kMovingLink) bc.move_links(mask, f);
    collide_at(n, f);
    if (mask != 0u) bounce_back_in_place<L, S>(bc, mask, f);
    KOLIBRI_UNROLL
    for (int q = 0; q < L::Q; ++q) {
      const bool wall = q > 0 && ((mask >> q) & 1u);
      a(wall ? idx(n, L::opposite(q)) : idx(rows.upwind<L>(L::opposite(q)), q)) =
          S::template store<L>(f[q], q);
    }
  }

  /// Only the cells that save: over the whole boundary list this launch cost 13% of an in-place
  /// step of the sphere channel at 128^3 (docs/performance.md, then the outlet velocity only).
  KOKKOS_INLINE_FUNCTION void operator()(BoundarySaveTag, const Index j) const {
    const Index i = Index(saved_rows(j)), n = Index(boundary_cells(i));
    const std::uint32_t mask = bc.links[n];
    const Departing dep{a, idx};
    R* row = &saved(i * saved_width);
    if (mask & kOutletLink) {
      R u[3], rho;
      bc.state_of(dep, n, rho, u);
      for (int d = 0; d < 3; ++d) row[kStateBefore + d] = u[d];
      row[kStateBefore + 3] = rho;
    }
    if (saved_width == kSavedState) return;  // no face reads its layer
    const Coord p = bc.grid.coords(n);
    for (int q = 1; q < L::Q; ++q) {
      if (!((mask >> L::opposite(q)) & 1u)) continue;
      int face;
      bc.neighbour(p, q, -1, face);
      if (bc.from_layer(face)) row[kArriving + q] = bc.outflow_value(p, q, face, dep);
    }
  }

  /// Only the cells that save; those without a pressure-face link return at once.
  KOKKOS_INLINE_FUNCTION void operator()(PressureStepTag, const Index j) const {
    const Index i = Index(saved_rows(j)), n = Index(boundary_cells(i));
    const std::uint32_t mask = bc.links[n];
    if (!(mask & kOutletLink)) return;
    const R* after = &saved(i * saved_width + kStateAfter);
    const R u[3] = {after[0], after[1], after[2]};
    const Coord p = bc.grid.coords(n);
    for (int q = 1; q < L::Q; ++q) {
      if (!((mask >> L::opposite(q)) & 1u)) continue;
      int face;
      bc.neighbour(p, q, -1, face);
      if (!bc.from_layer(face) || !bc.is_outlet(face)) continue;
      const R entered = S::template load<L>(a(idx(n, q)), q);
      a(idx(n, q)) =
          S::template store<L>(entered + pressure_step<L>(bc.faces, q, face, after[3], u), q);
    }
  }

  KOKKOS_INLINE_FUNCTION void operator()(BoundaryTag, const Index i) const { boundary<false>(i); }
  KOKKOS_INLINE_FUNCTION void operator()(BoundaryOutflowTag, const Index i) const {
    boundary<true>(i);
  }
  template <bool Outflow>
  KOKKOS_INLINE_FUNCTION void boundary(const Index i) const {
    const Index n = Index(boundary_cells(i));
    const std::uint32_t mask = bc.links[n];
    const Index slot = bc.link_row_of(i);
    const bool rules = slot >= 0;
    const R* same = rules ? &link_same(slot * L::Q) : nullptr;
    R* row = saved_width > 0 ? &saved(i * saved_width) : nullptr;
    const bool layer = saved_width == kSavedLayer;
    const R* outflow = layer ? row + kArriving : nullptr;
    R f[L::Q];
    bc.template pull<Outflow>(n, mask, f, Departing{a, idx},
                              (mask & kOutletLink) ? row + kStateBefore : nullptr, slot, same,
                              outflow);
    collide_at(n, f);
    R fr[L::Q];
    as_stored<L, S>(f, fr);
    bc.template push<Outflow>(n, mask, f, fr, Arriving{a, idx}, slot,
                              rules ? &link_leaving(slot * L::Q) : nullptr,
                              layer && (mask & kOutletLink) ? row + kStateAfter : nullptr);
  }

  KOKKOS_INLINE_FUNCTION void operator()(LinkSaveTag, const Index j) const {
    const Index n = Index(boundary_cells(Index(link_cells(j))));
    const Departing dep{a, idx};
    for (int q = 1; q < L::Q; ++q)
      if (bc.link_distance[j * L::Q + q] >= 0.5f) link_same(j * L::Q + q) = dep(n, q);
  }

  /// Slot q of the cell holds its own f*_k (k = opposite(q), pushed back by push), slot k the
  /// population k that the cell behind sent this step.
  KOKKOS_INLINE_FUNCTION void operator()(LinkCompleteTag, const Index j) const {
    const Index n = Index(boundary_cells(Index(link_cells(j))));
    for (int q = 1; q < L::Q; ++q) {
      const float d = bc.link_distance[j * L::Q + q];
      if (!(d > 0.0f && d < 0.5f)) continue;
      const int k = L::opposite(q);
      const R back = S::template load<L>(a(idx(n, q)), q);
      const R behind = S::template load<L>(a(idx(n, k)), k);
      const R term = bc.link_term ? R(bc.link_term[j * L::Q + q]) : R(0);
      a(idx(n, q)) = S::template store<L>(interpolated_bounce_back(
                                              R(d), back, R(0), [&] { return behind; }, term),
                                          q);
    }
  }
};

/// \brief Where the populations of a cell sit in the stored state, for reading it back.
/// Post-collision state (two arrays; in place after a local step): population q in slot q or, in
/// place, slot opposite(q); u = (sum c f* - F/2)/rho. Arriving state (in place after a streaming
/// step): pre-collision population q in slot q; u = (sum c f + F/2)/rho, the velocity the next
/// collision uses.
/// Moment representation (`moments`): slot 0 holds rho, slots 1..D j* = rho u + F/2.
struct StateLayout {
  bool opposite_slots = false;
  double half_force_sign = -1.0;
  bool moments = false;
  /// Arriving (pre-collision) populations: in place after a streaming step.
  KOKKOS_INLINE_FUNCTION bool arriving() const { return !moments && half_force_sign > 0; }
};

/// \brief Density and velocity of cell n from the stored state.
template <class L, class S, class R = typename S::real, class I = Slots>
KOKKOS_INLINE_FUNCTION void cell_moments(const Kokkos::View<const typename S::value_type*, MemSpace>& f,
                                         const I& idx, Index n, const R (&force)[3], double& rho,
                                         double (&u)[3], const StateLayout& layout = {}) {
  R r = R(0), j[3] = {R(0), R(0), R(0)};
  if (layout.moments) {
    r = R(f(idx(n, 0)));
    for (int d = 0; d < L::D; ++d) j[d] = R(f(idx(n, 1 + d)));
  }
  for (int q = 0; q < (layout.moments ? 0 : L::Q); ++q) {
    const R v = S::template load<L>(f(idx(n, layout.opposite_slots ? L::opposite(q) : q)), q);
    r += v;
    for (int d = 0; d < 3; ++d) j[d] += R(L::c(q, d)) * v;
  }
  rho = double(r);
  const R h = R(0.5 * layout.half_force_sign);
  for (int d = 0; d < 3; ++d) u[d] = double((j[d] + h * force[d]) / r);
}

/// \brief Macroscopic fields of the listed cells (all cells when `cells` is empty); solids get
/// rho0 and zero velocity.
template <class L, class S>
struct Macroscopic {
  using R = typename S::real;
  Kokkos::View<const typename S::value_type*, MemSpace> f;
  Kokkos::View<const Flag*, MemSpace> flags;
  Kokkos::View<const Index*, MemSpace> cells;
  Kokkos::View<double*, MemSpace> rho;
  Kokkos::View<double* [3], MemSpace> u;
  Slots idx;
  R force[3];
  double rho0;
  StateLayout layout;
  CellForce<R> cell_force{};  ///< immersed boundaries; empty without bodies

  KOKKOS_INLINE_FUNCTION void operator()(const Index i) const {
    const Index n = cells.extent(0) > 0 ? cells(i) : i;
    if (flags(n) == kSolid) {
      rho(i) = rho0;
      u(i, 0) = u(i, 1) = u(i, 2) = 0.0;
      return;
    }
    R F[3];  // (the field's cells: the flags', which the moment representation's slots are not)
    cell_force.template at<L::D>(n, Index(flags.extent(0)), force, F);
    double r, v[3];
    cell_moments<L, S>(f, idx, n, F, r, v, layout);
    rho(i) = r;
    for (int d = 0; d < 3; ++d) u(i, d) = v[d];
  }
};

/// \brief Equilibrium initialisation from rho and u as a post-collision state (slot q, or
/// opposite(q) in place); the stored momentum is rho u + F/2, which Macroscopic maps back to u.
/// The regularized operators store the populations they would produce from the equilibrium
/// moments rho, rho v, rho vv (v = u + F/(2 rho)): the E2 equilibrium for the projective one,
/// plus the higher Hermite terms for the recursive one, so the population form and the moment
/// representation start from the same state. Fields of extent 1 give every cell the same state
/// (no per-cell temporaries for large boxes).
template <class L, class S, class C>
struct InitEquilibrium {
  using R = typename S::real;
  Kokkos::View<typename S::value_type*, MemSpace> f;
  Kokkos::View<const double*, MemSpace> rho;
  Kokkos::View<const double* [3], MemSpace> u;
  Slots idx;
  R force[3];
  bool opposite_slots;
  C op;

  KOKKOS_INLINE_FUNCTION void operator()(const Index n) const {
    const Index k = rho.extent(0) == 1 ? 0 : n;
    const R r = R(rho(k));
    R feq[L::Q];
    if constexpr (kMomentOperator<C>) {
      const R u0[3] = {R(u(k, 0)), R(u(k, 1)), R(u(k, 2))};
      RegularizedMoments<L, R> s;
      s.equilibrium(r, u0, force, op.omega);
      C::project(s, feq);
    } else {
      R v[3];
      for (int d = 0; d < 3; ++d) v[d] = R(u(k, d)) + R(0.5) * force[d] / r;
      const R usq = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
      for (int q = 0; q < L::Q; ++q) feq[q] = equilibrium<L>(q, r, v, usq);
    }
    for (int q = 0; q < L::Q; ++q) f(idx(n, opposite_slots ? L::opposite(q) : q)) = S::template store<L>(feq[q], q);
  }
};

}  // namespace kolibri
