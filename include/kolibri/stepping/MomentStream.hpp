// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The moment representation of the regularized LBM (valero-lara): only the post-
/// collision moments (rho, j*, A*: 6 values a cell in 2D, 10 in 3D) live in memory between
/// steps. One kernel per step reads them, rebuilds the post-collision populations, streams them
/// through team scratch memory in a window sliding along columns, accumulates the arriving
/// moments, collides in moment space and writes the new moments.
#pragma once

#include <kolibri/stepping/StreamCollide.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace kolibri {

/// \brief Which moments are stored and where: slot 0 rho, then j* (D values), then A* (xx yy xy in
/// 2D; xx yy zz xy xz yz in 3D). The moment arrays: moment_slots (CSoA in 3D).
template <class L>
struct MomentSlots {
  static constexpr int M = L::D == 2 ? 6 : 10;
  /// A* component (xx yy zz xy xz yz) of slot 1 + D + k.
  KOKKOS_INLINE_FUNCTION static constexpr int a_component(int k) { return L::D == 2 ? (k == 2 ? 3 : k) : k; }

  /// The post-collision populations of a cell's M stored values (C: RegularizedBgk or
  /// RecursiveRegularizedBgk, whose `project` maps a collided state to populations).
  template <class C, class R>
  KOKKOS_INLINE_FUNCTION static void departing(const R (&m)[M], const C& op, const R (&F)[3], R (&f)[L::Q]) {
    R js[3] = {R(0), R(0), R(0)}, A[6] = {R(0), R(0), R(0), R(0), R(0), R(0)};
    for (int d = 0; d < L::D; ++d) js[d] = m[1 + d];
    KOLIBRI_UNROLL
    for (int k = 0; k < M - 1 - L::D; ++k) A[a_component(k)] = m[1 + L::D + k];
    RegularizedMoments<L, R> s;
    s.post(m[0], js, A, F, op.omega);
    C::project(s, f);
  }
  /// The M values of the cell at p (slot k at p[k * cells], SoA).
  template <class R>
  KOKKOS_INLINE_FUNCTION static void load(const R* p, Index cells, R (&m)[M]) {
    KOLIBRI_UNROLL
    for (int k = 0; k < M; ++k) m[k] = p[k * cells];
  }
  template <class R>
  KOKKOS_INLINE_FUNCTION static void store(R* p, Index cells, R rho, const R (&js)[3], const R (&A)[6]) {
    p[0] = rho;
    KOLIBRI_UNROLL
    for (int d = 0; d < L::D; ++d) p[(1 + d) * cells] = js[d];
    KOLIBRI_UNROLL
    for (int k = 0; k < M - 1 - L::D; ++k) p[(1 + L::D + k) * cells] = A[a_component(k)];
  }
};

/// \brief Raw moments of arriving populations: rho = sum f, j = sum c f, pi = sum cc f.
template <class R>
struct MomentSum {
  R rho, j[3], pi[6];
  /// -0, not +0: the first sum after a clear is folded away (-0 + f == f; 0 + f is an add).
  KOKKOS_INLINE_FUNCTION void clear() {
    rho = R(-0.0);
    for (int d = 0; d < 3; ++d) j[d] = R(-0.0);
    for (int k = 0; k < 6; ++k) pi[k] = R(-0.0);
  }
  /// Add population q (compile-time q folds the velocity components away).
  template <class L>
  KOKKOS_INLINE_FUNCTION void add(int q, R f) {
    const int cx = L::c(q, 0), cy = L::c(q, 1), cz = L::c(q, 2);
    rho += f;
    j[0] = add_c(j[0], cx, f), j[1] = add_c(j[1], cy, f), j[2] = add_c(j[2], cz, f);
    pi[0] = add_c(pi[0], cx * cx, f), pi[1] = add_c(pi[1], cy * cy, f), pi[2] = add_c(pi[2], cz * cz, f);
    pi[3] = add_c(pi[3], cx * cy, f), pi[4] = add_c(pi[4], cx * cz, f), pi[5] = add_c(pi[5], cy * cz, f);
  }
  /// Add population q (value a) and its mirror across `axis` (value b, the same velocity with
  /// c_axis negated): each moment takes the sum or the difference, even or odd in c_axis, so a
  /// pair costs two adds fewer than two single ones (four fewer with a mixed component).
  template <class L>
  KOKKOS_INLINE_FUNCTION void add_pair(int q, int axis, R a, R b) {
    const int c[3] = {L::c(q, 0), L::c(q, 1), L::c(q, 2)};
    const R s = a + b, d = a - b;
    rho += s;
    KOLIBRI_UNROLL
    for (int e = 0; e < 3; ++e) j[e] = add_c(j[e], c[e], e == axis ? d : s);
    KOLIBRI_UNROLL
    for (int e = 0; e < 3; ++e) pi[e] = add_c(pi[e], c[e] * c[e], s);
    pi[3] = add_c(pi[3], c[0] * c[1], axis == 0 || axis == 1 ? d : s);
    pi[4] = add_c(pi[4], c[0] * c[2], axis == 0 || axis == 2 ? d : s);
    pi[5] = add_c(pi[5], c[1] * c[2], axis == 1 || axis == 2 ? d : s);
  }
};

/// \brief Calls f(std::integral_constant<int, i>) for i = 0 .. N-1: the index is a constant
/// expression in the body (for `constexpr` tables that an unrolled loop would evaluate at run
/// time).
template <int N, class F>
KOKKOS_FORCEINLINE_FUNCTION void static_for(F&& f) {
  [&]<int... I>(std::integer_sequence<int, I...>) { (f(std::integral_constant<int, I>{}), ...); }(std::make_integer_sequence<int, N>{});
}

/// The CSoA group of the moment arrays in D dimensions (MomentKernel::csoa), 0 for SoA: a
/// warp's row of cells reads and writes a few blocks of 16 M values (SoA: M rows a whole array
/// apart), and the M slots are constant offsets from one address. D3Q19 FP32 on the H100: 15-16%
/// faster than SoA, groups of 8, 32 and 64 slower; D2Q9 runs faster in SoA (docs/performance.md).
template <int D>
inline constexpr int kMomentGroup = D == 3 ? 16 : 0;
/// The layout of a moment array of `places` places (MomentPlacement::stride), m values a place.
inline Slots moment_slots(int dims, Index places, int m) {
  const int g = dims == 3 ? kMomentGroup<3> : kMomentGroup<2>;
  return g > 0 ? Slots::csoa(places, m, g) : Slots::soa(places, m);
}

/// The first value (slot 0) of place n in a moment array of M values a place (moment_slots):
/// slot k follows at k moment_slot_stride. CSoA in 3D (groups of kMomentGroup places), SoA in 2D.
template <int D, int M>
KOKKOS_FORCEINLINE_FUNCTION Index moment_first(Index n) {
  constexpr Index G = kMomentGroup<D>;
  if constexpr (G == 0) return n;
  return (n & ~(G - 1)) * M + (n & (G - 1));
}
/// The distance between a place's slots (moment_first) in an array of `places` places.
template <int D>
KOKKOS_FORCEINLINE_FUNCTION Index moment_slot_stride(Index places) {
  return kMomentGroup<D> ? Index(kMomentGroup<D>) : places;
}

/// \brief Shape of the moment kernel's teams: TX x TY cells across the columns (TY = 1 in 2D),
/// columns cut into segments of `segment` layers (moment_segment_for), scratch planes.
struct MomentTile {
  int tx = 30, ty = 6;
  int segment = 64;
  int planes = 2;  ///< scratch planes: 2 alternate (one barrier a layer), 1 where 2 do not fit
};

/// \brief The tiles the moment kernel is compiled for (TX, TY): GPUs choose between two (3D: 256
/// and 128 threads a team with the ring; 2D: 256 and 128); host backends run one fixed tile a
/// thread (8 x 8 in 3D, 64 x 1 in 2D).
template <int D, bool Host>
struct MomentTiles {
  static constexpr int count = Host ? 1 : 2;
  static constexpr int tx(int i) { return Host ? (D == 3 ? 8 : 64) : D == 3 ? (i == 0 ? 30 : 14) : (i == 0 ? 254 : 126); }
  static constexpr int ty(int) { return D == 3 ? (Host ? 8 : 6) : 1; }
  static std::string list() {
    std::string s;
    for (int i = 0; i < count; ++i) s += (i ? ", " : "") + std::to_string(tx(i)) + "x" + std::to_string(ty(i));
    return s;
  }
};

/// \brief The cells lo .. hi - 1 of a box (its own coordinates, ghost layers counted) where the
/// immersed bodies' force can be non-zero: the node box of their kernels
/// (ImmersedBoundary::node_box); empty by default.
struct BodyCells {
  int lo[3] = {0, 0, 0}, hi[3] = {0, 0, 0};
  KOKKOS_INLINE_FUNCTION bool spans(const int axis, const int v) const {
    return v >= lo[axis] && v < hi[axis];
  }
};

/// \brief Where a cell's moments live in the one moment array, on the device (pointer `edge`
/// into device memory) or the host (into host memory); built by MomentPlacement.
///
/// A team reads its tile's columns and their one-cell ring, layers m0 - 1 to m1, and writes its
/// tile's columns, layers m0 to m1 - 1. A cell that no other team reads (not on a tile's edge,
/// not a segment's first or last layer) is therefore read and then overwritten by its own team
/// alone: it is updated in place. A cell on an edge is read by neighbouring teams too, which run
/// at their own pace; it has a second place (the shadow) and moves between the two every step.
/// At parity 0 the edge cells are in the main part (place n for cell n), at parity 1 in the
/// shadow, which follows the main part: the edge columns (all layers), then the edge layers (two
/// a segment) of the other columns. A step at parity p reads at p and writes at
/// 1 - p. The shadow never exceeds the cells (a box within one tile: two arrays).
struct MomentPlace {
  Index cells = 0;    ///< the box
  Index columns = 0;  ///< cells a layer (the stride between layers)
  Index shared = 0;   ///< edge columns (the others: columns - shared)
  Index stride = 0;   ///< places: the main part and the shadow
  int layers = 1;     ///< along the march axis
  int segment = 1;    ///< layers a segment (all of them: one segment)
  /// A column's index among the edge columns (>= 0), or -1 - its index among the others.
  const std::int32_t* edge = nullptr;

  /// l s for l >= 0 and s < 2^32 (columns < 2^31: MomentPlacement): one 32 x 32 -> 64-bit
  /// multiply-add where a 64-bit product takes three.
  KOKKOS_FORCEINLINE_FUNCTION static Index wide(int l, Index s) {
    return Index(std::uint64_t(std::uint32_t(l)) * std::uint32_t(s));
  }

  /// Layer l's place among the edge layers (the first and last of each segment); -1 inside.
  KOKKOS_INLINE_FUNCTION int edge_layer(int l) const {
    if (segment == 1) return l;
    const int r = l % segment, s = l / segment;
    return r == 0 ? 2 * s : r == segment - 1 || l == layers - 1 ? 2 * s + 1 : -1;
  }
  /// Edge layers (edge_layer's range).
  KOKKOS_INLINE_FUNCTION int edge_layers() const {
    if (segment == 1) return layers;
    const int last = layers - (layers - 1) / segment * segment;  // the last segment's layers
    return 2 * ((layers - 1) / segment) + (last >= 2 ? 2 : 1);
  }
  /// The place of the cell in column `col` (its edge index e) and layer l (its edge layer el).
  KOKKOS_INLINE_FUNCTION Index at(Index col, int e, int l, int el, int parity) const {
    if (parity) {
      if (e >= 0) return cells + e + wide(l, shared);
      if (el >= 0) return cells + shared * layers + (-1 - e) + wide(el, columns - shared);
    }
    return col + wide(l, columns);
  }
  KOKKOS_INLINE_FUNCTION Index at(Index n, int parity) const {
    const Index col = n % columns;
    const int l = int(n / columns);
    return at(col, edge[col], l, edge_layer(l), parity);
  }
};

/// \brief The placement of one box, tile and segment length (MomentPlace): owns the edge-column
/// table on the device and the host.
class MomentPlacement {
 public:
  MomentPlacement() = default;
  /// Box nx x ny x nz (2D: nz = 1), columns along z in 3D and y in 2D, tile tx x ty (2D: tx),
  /// `segment` layers a segment (0 or more than the column: whole columns).
  /// `two`: every cell has two places (two arrays, the fastest: docs/performance.md).
  MomentPlacement(int dims, int nx, int ny, int nz, int tx, int ty, int segment, bool two = false) {
    const int layers = dims == 3 ? nz : ny;
    const Index columns = dims == 3 ? Index(nx) * ny : Index(nx);
    auto edge = [](int v, int n, int t) { return v % t == 0 || v % t == t - 1 || v == n - 1; };
    if (columns >= (Index(1) << 31))
      throw std::invalid_argument("moment representation: " + std::to_string(columns) +
                                  " columns (cells across the march axis): at most 2^31 - 1 per rank");
    m_host.resize(std::size_t(columns));
    std::int32_t shared = 0, inner = 0;
    const int plane[3] = {nx, dims == 3 ? ny : 1, 1};
    for (Index c = 0; c < columns; ++c) {
      const Coord p = coords_in(plane, c);  // the column's place across the march axis
      const int a = p.x, b = p.y;
      m_host[std::size_t(c)] = two || edge(a, nx, tx) || (dims == 3 && edge(b, ny, ty)) ? shared++ : -1 - inner++;
    }
    m_edge = Kokkos::View<std::int32_t*, MemSpace>("kolibri::moment_edge_columns", std::size_t(columns));
    Kokkos::deep_copy(m_edge, Kokkos::View<const std::int32_t*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>(
                                  m_host.data(), m_host.size()));
    m_place.cells = columns * layers;
    m_place.columns = columns;
    m_place.shared = shared;
    m_place.layers = layers;
    m_place.segment = segment > 0 && segment < layers ? segment : layers;
    m_place.stride = m_place.cells + shared * layers + Index(m_place.edge_layers()) * inner;
  }
  /// For kernels (device memory).
  MomentPlace device() const {
    MomentPlace p = m_place;
    p.edge = m_edge.data();
    return p;
  }
  /// For host code (halo lists, tests).
  MomentPlace host() const {
    MomentPlace p = m_place;
    p.edge = m_host.data();
    return p;
  }
  /// Places: the main part and the shadow (the moment array holds M values a place).
  Index stride() const { return m_place.stride; }
  /// Cells with a second place.
  Index shared_cells() const { return m_place.stride - m_place.cells; }

 private:
  MomentPlace m_place{};
  std::vector<std::int32_t> m_host;
  Kokkos::View<std::int32_t*, MemSpace> m_edge;
};

/// \brief The boundary cells (kBoundaryFluid) of a box for the moment kernel, in the order its
/// teams meet them: column by column, bottom to top. Built on the host from the flags; `start`
/// gives each column segment's first one, so a team's thread counts its way through its column
/// instead of looking a cell up.
class MomentWallCells {
 public:
  MomentWallCells() = default;
  /// The box's flags (cell n = column + layer * columns), `segment` layers a segment
  /// (MomentPlace::segment).
  MomentWallCells(const std::vector<Flag>& flags, Index columns, int layers, int segment) {
    const int segments = (layers + segment - 1) / segment;
    std::vector<std::int32_t> base(std::size_t(columns), 0), seen(std::size_t(columns), 0);
    Index count = 0;
    for (Index n = 0; n < Index(flags.size()); ++n)
      if (flags[std::size_t(n)] == kBoundaryFluid) ++base[std::size_t(n % columns)], ++count;
    if (count >= (Index(1) << 31))
      throw std::invalid_argument("moment representation: " + std::to_string(count) +
                                  " boundary cells: at most 2^31 - 1 per rank");
    std::int32_t first = 0;
    for (auto& b : base) first += std::exchange(b, first);  // counts -> each column's first slot
    std::vector<Index> cell;
    // one more start than column segments: the count, so segment s of column c ends where the
    // entry after its own begins
    std::vector<std::int32_t> slot, start(std::size_t(columns) * segments + 1, std::int32_t(count));
    cell.reserve(std::size_t(count)), slot.reserve(std::size_t(count));
    for (int l = 0; l < layers; ++l) {  // cell order: coalesced reads in MomentWallSums
      if (l % segment == 0)
        for (Index c = 0; c < columns; ++c)
          start[std::size_t(c * segments + l / segment)] =
              base[std::size_t(c)] + seen[std::size_t(c)];
      for (Index c = 0; c < columns; ++c) {
        const Index n = c + Index(l) * columns;
        if (flags[std::size_t(n)] != kBoundaryFluid) continue;
        cell.push_back(n);
        slot.push_back(base[std::size_t(c)] + seen[std::size_t(c)]++);
      }
    }
    m_count = count;
    if (count == 0) return;
    m_cell = to_device(cell, "kolibri::moment_wall_cells");
    m_slot = to_device(slot, "kolibri::moment_wall_slots");
    m_start = to_device(start, "kolibri::moment_wall_start");
  }
  Index count() const { return m_count; }
  /// Device bytes of the lists.
  double bytes() const {
    return double(m_cell.extent(0)) * sizeof(Index) +
           double(m_slot.extent(0) + m_start.extent(0)) * sizeof(std::int32_t);
  }
  const Index* cells() const { return m_cell.data(); }
  const std::int32_t* slots() const { return m_slot.data(); }
  /// Per column c and segment s, at c * segments + s: the slot of the column's first boundary
  /// cell at or above the segment's first layer; the entry after it ends the segment's slots (the
  /// last entry is the count). Null without boundary cells.
  const std::int32_t* start() const { return m_count ? m_start.data() : nullptr; }

 private:
  Index m_count = 0;
  Kokkos::View<Index*, MemSpace> m_cell;
  Kokkos::View<std::int32_t*, MemSpace> m_slot, m_start;
};

/// The populations a boundary cell at p reflects into itself, added to `into`: the directions
/// of its wall-link mask (wall_links, found at set-up), each resolved by the rule of its wall
/// (solid or face), from its post-collision populations f (an outlet's velocity from them too).
/// `Open` (MomentWallSums of runs with a face that reads its layer or an inlet profile): a link
/// across a face that reads its layer (Boundary::from_layer: outflow faces, developed and
/// characteristic pressure faces) takes the population its source in the layer left
/// (GridCells::outflow_source; rebuilt from the source's moments, `dep`), plus on a pressure face
/// the density step (pressure_step) from the cell's own state, as Boundary::pull does; an
/// inlet's velocity takes its profile at the cell (Boundary::shape_at). Without it the code is
/// that of the column kernel's never-run `reflect` and of the other runs' sums.
template <bool Open = false, class L, class R, class Departing = std::nullptr_t>
KOKKOS_INLINE_FUNCTION void add_reflected(const Boundary<L, R>& bc, const std::uint32_t mask,
                                          const Coord& p, const R (&f)[L::Q], MomentSum<R>& into,
                                          const Departing& dep = nullptr) {
  R u[3] = {R(0), R(0), R(0)}, rho = R(1);
  bool have_u = false;
  KOLIBRI_UNROLL
  for (int q = 1; q < L::Q; ++q) {
    if (!((mask >> q) & 1u)) continue;
    int face;
    bc.neighbour(p, q, +1, face);  // the face crossed, -1 for a solid neighbour
    if (bc.is_outlet(face) && !have_u) {
      if constexpr (Open)
        bc.state(f, rho, u);
      else
        bc.velocity(f, u);
      have_u = true;
    }
    const int arriving = L::opposite(q);
    if constexpr (Open) {
      if (bc.from_layer(face)) {
        // the source's population, rebuilt at two directions only (Boundary::outflow_value)
        const R value = bc.outflow_value(p, arriving, face, dep);
        into.template add<L>(arriving, bc.layer_arrival(value, arriving, face, rho, u));
        continue;
      }
      into.template add<L>(arriving, bc.reflect(arriving, face, f[q], u, bc.shape_at(face, p)));
    } else {
      into.template add<L>(arriving, bc.reflect(arriving, face, f[q], u));
    }
  }
}

/// \brief Post-collision population j of cell m rebuilt from its stored moments at the read
/// parity: the moment representation's departing populations, for code that reads populations
/// by cell (the immersed bodies' node kernel through Boundary::pull, the sources of faces that
/// read their layer, the characteristic outlets' sums through Boundary::state_of, which takes a
/// cell's Q at once: all()).
template <class L, class R, class C>
struct MomentDeparting {
  static constexpr int M = MomentSlots<L>::M;
  const R* moments;
  MomentPlace place;
  int parity;
  C op;
  R force[3];
  /// All Q populations of cell m.
  KOKKOS_INLINE_FUNCTION void all(const Index m, R (&f)[L::Q]) const {
    R mi[M];
    MomentSlots<L>::load(moments + moment_first<L::D, M>(place.at(m, parity)),
                         moment_slot_stride<L::D>(place.stride), mi);
    MomentSlots<L>::departing(mi, op, force, f);
  }
  /// Population j of cell m (all Q are rebuilt for one).
  KOKKOS_INLINE_FUNCTION R operator()(const Index m, const int j) const {
    R f[L::Q];
    all(m, f);
    return f[j];
  }
};

/// \brief Before a step of the moment kernel: the populations each boundary cell reflects into
/// itself, summed in moment space (rho, j, pi; kMomentWallValues at its slot of MomentWallCells).
/// The directions are those of its wall-link mask (wall_links, found at set-up), each resolved by
/// the rule of its wall (solid or face), from the post-collision populations rebuilt from its
/// moments at the read parity (`dep`). Done in the kernel, this work fell on a few threads of a
/// team that waited for them at every layer (docs/performance.md); here it is one thread a
/// boundary cell. `Open` (runs with a face that reads its layer or an inlet profile): such a
/// face's links take their sources' populations and inlets their profiles (add_reflected),
/// compiled only there.
template <class L, class R, class C, bool Open = false>
struct MomentWallSums {
  MomentDeparting<L, R, C> dep;
  Boundary<L, R> bc;
  const std::uint32_t* links;  ///< wall_links of every cell
  const Index* cells;          ///< MomentWallCells::cells
  const std::int32_t* slots;   ///< MomentWallCells::slots
  R* sums;                     ///< kMomentWallValues a slot

  KOKKOS_INLINE_FUNCTION void operator()(const Index i) const {
    const Index n = cells[i];
    R f[L::Q];
    dep.all(n, f);
    MomentSum<R> into;
    into.clear();
    add_reflected<Open>(bc, links[n], bc.grid.coords(n), f, into, dep);
    R* out = sums + Index(slots[i]) * kMomentWallValues;
    out[0] = into.rho;
    for (int d = 0; d < 3; ++d) out[1 + d] = into.j[d];
    for (int k = 0; k < 6; ++k) out[4 + k] = into.pi[k];
  }
  void run(const ExecSpace& ex, Index count) const {
    Kokkos::parallel_for(
        "kolibri::moment_wall_sums",
        async_launch(Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<Index>>(ex, 0, count)),
        *this);
  }
};

/// \brief One time step of the moment representation for a TX x TY tile fixed at compile time,
/// one team per column segment.
///
/// Columns run along z in 3D (y in 2D); the tile spans x and y (x in 2D). A team has one thread
/// per cell of the tile and of its one-cell ring (the neighbouring columns): (TX + 2)(TY + 2)
/// threads in 3D (host backends: one thread owns all of them). For each layer k of its segment,
/// bottom to top, plus one layer below and one above: (A) every thread rebuilds the
/// post-collision populations of its cell from the stored moments; the ones that move across the
/// column (c_x or c_y nonzero) go to team scratch, the others (rest, +-z) of tile cells straight
/// into the thread's running sums; the moments of layer k + 1 are loaded meanwhile. (B) After one
/// team barrier each tile thread adds the populations arriving from the scratch plane. Three
/// running sums per cell (layers k-1, k, k+1) collect what arrives from layers k, k-1 and k-2 in
/// turn, so layer k-1 is complete after step k: it is collided in moment space and written. The
/// layer loop is unrolled three times so the sums rotate by renaming, not by copies. Two scratch
/// planes alternate, so one barrier a layer suffices (one plane and two barriers where two exceed
/// the team scratch limit). One moment array: cells only their own team reads are updated in
/// place, the cells on a tile's or segment's edge alternate between two places (MomentPlace).
///
/// With the tile fixed at compile time every scratch access is a constant offset from one
/// per-thread base, and the moment arrays are reached through one pointer a cell and constant
/// slot strides (docs/performance.md: the run-time tile spent most of its instructions on
/// addresses).
///
/// Boundaries are pushed like the in-place scheme's: a population whose downwind cell is solid
/// or across a non-periodic face comes back to its own cell (Boundary::reflect), added to that
/// cell's running sum; a solid or missing upwind cell contributes zero. The results equal the
/// population form with the same operator to round-off. The reflected populations are summed
/// before the step (MomentWallSums); the kernel adds a boundary cell's sums (`Walls`: compiled
/// only for boxes with boundary cells).
///
/// `Bodies`: the immersed bodies' force per cell joins the collision inside their node box
/// (`body_cells`), checked a column and a layer at a time; compiled apart, so the kernel without
/// bodies carries no check (the check in the one kernel cost the closed box 4-5% where it never
/// ran: docs/performance.md).
///
/// `Two`: every cell has two places (MomentPlace::shared == columns: two arrays, the second at
/// `cells`), compiled apart: the place is the cell plus cells at parity 1, and the kernel runs as
/// fast as the two-array kernel before the one-array placement (the general placement costs
/// 9% on D3Q27 FP32 and D3Q19 FP64 when every cell takes it: docs/performance.md).
template <class L, class R, class C, int TX, int TY, bool Two = false, bool Walls = false,
          bool Bodies = false>
struct MomentKernel {
  using Team = typename Kokkos::TeamPolicy<ExecSpace>::member_type;
  static constexpr int M = MomentSlots<L>::M;
  // axes: tile a, tile b, march m
  static constexpr int ta = 0, tb = L::D == 3 ? 1 : 2, ma = L::D == 3 ? 2 : 1;
  static constexpr int RB = L::D == 3 ? 1 : 0;  ///< ring width along tile axis b
  static constexpr int PX = TX + 2, PY = TY + 2 * RB, NP = PX * PY;
  static constexpr int CPT = kHostMemory ? NP : 1;  ///< positions a thread
  static constexpr int T = NP / CPT;          ///< threads a team

  /// Populations that cross the column (kept in scratch), numbered in direction order.
  KOKKOS_INLINE_FUNCTION static constexpr bool cross(int q) { return L::c(q, ta) != 0 || (RB && L::c(q, tb) != 0); }
  KOKKOS_INLINE_FUNCTION static constexpr int cross_slot(int q) {
    int s = 0;
    for (int k = 0; k < q; ++k) s += cross(k) ? 1 : 0;
    return s;
  }
  static constexpr int CROSS = cross_slot(L::Q);
  /// Scratch offset, within its slot, of the population q that a cell receives (from the
  /// position - c_q across the tile).
  KOKKOS_INLINE_FUNCTION static constexpr int arrival(int q) { return -L::c(q, ta) - (RB ? L::c(q, tb) * PX : 0); }
  /// The tile axis a crossing population is paired across: a, or b where c_a = 0.
  KOKKOS_INLINE_FUNCTION static constexpr int pair_axis(int q) { return L::c(q, ta) != 0 ? ta : tb; }
  /// The direction q with c_axis negated.
  KOKKOS_INLINE_FUNCTION static constexpr int mirror(int q, int axis) {
    for (int k = 0; k < L::Q; ++k) {
      bool same = true;
      for (int d = 0; d < 3; ++d) same = same && L::c(k, d) == (d == axis ? -L::c(q, d) : L::c(q, d));
      if (same) return k;
    }
    return -1;
  }
  /// The moment array's CSoA group (kMomentGroup): slot k of place n at csoa(n) + k slot_stride().
  static constexpr Index G = kMomentGroup<L::D>;
  KOKKOS_FORCEINLINE_FUNCTION static Index csoa(Index n) { return moment_first<L::D, M>(n); }
  KOKKOS_FORCEINLINE_FUNCTION Index slot_stride() const {
    return moment_slot_stride<L::D>(place.stride);
  }
  /// Projective regularization: populations linear in the stored moments, so a missing source
  /// is zeroed in its 6 or 10 moments, not in its Q populations.
  static constexpr bool kLinear = std::is_same_v<C, RegularizedBgk<L, R>>;

  R* moments;       ///< the moment array (moment_slots of MomentPlace::stride places)
  MomentPlace place;
  int parity;       ///< read at this parity, write at the other
  C op;
  Boundary<L, R> bc;
  int planes;
  bool forced;  ///< a body force (uniform or per cell): the collision without force terms otherwise
  /// The boundary cells' reflected moments (MomentWallSums, kMomentWallValues a cell in the order
  /// of MomentWallCells) and each column segment's first of them; null without boundary cells.
  const R* wall_sums = nullptr;
  const std::int32_t* wall_start = nullptr;
  const std::uint32_t* links = nullptr;  ///< wall_links of every cell (`Walls` false: reflect)
  /// The teams to run, by number (league rank r runs team teams[r]); every team when null.
  const std::int32_t* teams = nullptr;
  int team_count = 0;
  /// The immersed bodies' force per cell (`Bodies`; null otherwise): component d of cell n at
  /// d place.cells + n, read only inside `body_cells`. (A pointer, not CellForce's view: the
  /// functor stays small.)
  const R* cell_force = nullptr;
  BodyCells body_cells{};

  KOKKOS_INLINE_FUNCTION static std::size_t scratch_values(int planes) { return std::size_t(planes) * CROSS * NP; }
  static std::size_t scratch_bytes(int planes) {
    return Kokkos::View<R*, typename ExecSpace::scratch_memory_space>::shmem_size(scratch_values(planes));
  }
  KOKKOS_INLINE_FUNCTION int size(int axis) const { return bc.grid.n[axis]; }
  KOKKOS_INLINE_FUNCTION int segment_length() const { return place.segment; }
  KOKKOS_INLINE_FUNCTION int segments() const {
    return (size(ma) + segment_length() - 1) / segment_length();
  }
  int all_teams() const {
    return ((size(ta) + TX - 1) / TX) * ((size(tb) + TY - 1) / TY) * segments();
  }
  int league() const { return teams ? team_count : all_teams(); }

  /// The teams that write a cell next to a ghost layer of `grid` (whose new moments the halo
  /// exchange sends), then the others: the first `border` of the returned numbers.
  static std::vector<std::int32_t> border_first(const DenseGrid& grid, int segment, int& border) {
    const int n[3] = {grid.n[0], grid.n[1], grid.n[2]};
    const int len = segment, tiles_a = (n[ta] + TX - 1) / TX, tiles_b = (n[tb] + TY - 1) / TY;
    const int teams = tiles_a * tiles_b * ((n[ma] + len - 1) / len);
    // [lo, hi) along `axis` holds the layer next to a ghost layer
    auto touches = [&](int axis, int lo, int hi) {
      const bool low = grid.ghost[2 * axis] && lo <= 1 && 1 < hi;
      const bool high = grid.ghost[2 * axis + 1] && lo <= n[axis] - 2 && n[axis] - 2 < hi;
      return low || high;
    };
    std::vector<std::int32_t> first, second;
    for (int id = 0; id < teams; ++id) {
      const int tile = id % (tiles_a * tiles_b), seg = id / (tiles_a * tiles_b);
      const int a0 = (tile % tiles_a) * TX, b0 = (tile / tiles_a) * TY, m0 = seg * len;
      const bool on = touches(ta, a0, a0 + TX) || (L::D == 3 && touches(tb, b0, b0 + TY)) ||
                      touches(ma, m0, m0 + len);
      (on ? first : second).push_back(id);
    }
    border = int(first.size());
    first.insert(first.end(), second.begin(), second.end());
    return first;
  }
  /// Coordinate along `axis` one step at most outside the box, wrapped where the side is
  /// periodic (a periodic face, or a rank's ghost side: an open connection); -1 outside a
  /// non-periodic box side.
  KOKKOS_INLINE_FUNCTION int wrap(int v, int axis) const {
    return bc.grid.wrap(v, axis, bc.faces.type);
  }

  /// The stored moments and flag of a cell (n < 0: none). Loaded without a branch on the flag,
  /// so the loads of the next layer are all in flight while this one is processed.
  struct Source {
    R m[M];
    Index n;
    Flag flag;
    KOKKOS_INLINE_FUNCTION bool fluid() const { return n >= 0 && flag != kSolid; }
  };
  /// The cell of column col (edge index e) in layer l (-1: none; el: its edge index), at the
  /// read parity.
  KOKKOS_FORCEINLINE_FUNCTION void fetch(Index col, int e, int l, int el, Source& s) const {
    const bool any = col >= 0 && l >= 0;
    s.n = any ? col + MomentPlace::wide(l, place.columns) : Index(-1);
    s.flag = bc.flags(any ? s.n : 0);
    MomentSlots<L>::load(moments + (any ? csoa(address(col, e, l, el, parity)) : 0), slot_stride(), s.m);
  }
  /// The edge index of layer l (wrapped; logical layer k, -1: none) for a team writing layers
  /// [m0, m1): only the two first and two last layers it touches can be edge layers (the
  /// division in edge_layer runs at those alone, the same for the whole team).
  KOKKOS_INLINE_FUNCTION int team_edge_layer(int k, int l, int m0, int m1) const {
    if constexpr (Two) return -1;
    return l >= 0 && (k <= m0 || k >= m1 - 1) ? place.edge_layer(l) : -1;
  }
  /// MomentPlace::at, or with two arrays the cell in the array of parity p.
  KOKKOS_FORCEINLINE_FUNCTION Index address(Index col, int e, int l, int el, int p) const {
    if constexpr (Two) return col + MomentPlace::wide(l, place.columns) + (p ? place.cells : Index(0));
    return place.at(col, e, l, el, p);
  }

  /// The populations a boundary cell (column col, layer l) reflects into itself, resolved in the
  /// kernel: the directions of its wall-link mask, each by the rule of its wall (as
  /// MomentWallSums). The coordinates come from the column (32-bit: columns < 2^31). Only in the
  /// kernel without `Walls`, which runs where the box has no boundary cells, so this never runs:
  /// it is compiled in because ptxas schedules the kernel with it faster (periodic box 256^3 on
  /// an H100, D3Q19 FP32: 29,620 MLUPS with it, 24,527 without; D3Q27 6% faster, D3Q19 FP64 9%
  /// slower: docs/performance.md). It goes when the kernel's latency hiding is made explicit; the
  /// wall sums in flight did not do it (the kernel with `Walls` on the periodic box, H200: 30,677
  /// MLUPS against 35,039).
  KOKKOS_INLINE_FUNCTION void reflect(Index n, Index col, int l, const R (&f)[L::Q],
                                      MomentSum<R>& into) const {
    const std::uint32_t c = std::uint32_t(col), nx = std::uint32_t(bc.grid.n[0]);
    const Coord p = L::D == 3 ? Coord{int(c % nx), int(c / nx), l} : Coord{int(c), l, 0};
    add_reflected(bc, links[n], p, f, into);
  }

  /// FP32: a boundary cell's reflected moments are loaded a layer before they are added, like the
  /// moments (loaded when added, their latency fell on the boundary threads' warps at every layer:
  /// closed box 256^3 on an H200 +19% D3Q19, +13% D3Q27). FP64 loads them when it adds them:
  /// with them in flight its kernels ran 5-17% slower (docs/performance.md).
  static constexpr bool kPrefetchWalls = Walls && sizeof(R) == 4;
  /// The reflected moments of the boundary cell at `slot` (MomentWallSums).
  KOKKOS_FORCEINLINE_FUNCTION void load_walls(std::int32_t slot, R (&w)[kMomentWallValues]) const {
    const R* from = wall_sums + Index(slot) * kMomentWallValues;
    KOLIBRI_UNROLL
    for (int v = 0; v < kMomentWallValues; ++v) w[v] = from[v];
  }
  /// Add a boundary cell's reflected moments (load_walls) to its sum.
  KOKKOS_INLINE_FUNCTION static void add_walls(const R (&w)[kMomentWallValues],
                                               MomentSum<R>& into) {
    into.rho += w[0];
    KOLIBRI_UNROLL
    for (int d = 0; d < L::D; ++d) into.j[d] += w[1 + d];
    KOLIBRI_UNROLL
    for (int k = 0; k < 6; ++k)
      if (L::D == 3 || k == 0 || k == 1 || k == 3) into.pi[k] += w[4 + k];  // 2D: xx yy xy
  }

  /// What one team keeps from layer to layer, per position.
  struct State {
    MomentSum<R> acc[CPT][3];  // running sums, rotated by the unrolled loop
    Source next[CPT];          // the next layer's moments, in flight
    Index col[CPT];            // the position's column (layer 0), -1 outside the box
    std::int32_t edge[CPT];    // the column's edge index (MomentPlace::edge)
    bool own[CPT];             // a tile cell (not ring, inside the box)
    bool body[CPT];            // an own column through the bodies' node box (Bodies)
    Flag done[CPT], last[CPT]; // own flags of layers k and k - 1
    std::int32_t wall[CPT];    // the next boundary cell of the column (wall_sums' slot)
    std::int32_t wall_end[CPT];  // past the segment's last one (kPrefetchWalls)
    R walls[kPrefetchWalls ? CPT : 1][kMomentWallValues] = {};  // its reflected moments, in flight
  };

  /// Layer k: rebuild and stream layer k, complete and write layer k - 1. Running sums I0, I1,
  /// I2 hold layers k - 1, k, k + 1.
  template <int I0, int I1, int I2>
  KOKKOS_FORCEINLINE_FUNCTION void layer(const Team& team, R* scratch, State& st, int k, int m0, int m1) const {
    const int here = wrap(k, ma), after = k < m1 ? wrap(k + 1, ma) : -1;
    const int edge_next = team_edge_layer(k + 1, after, m0, m1);
    R* plane = scratch + (planes == 2 ? (k & 1) : 0) * (CROSS * NP);
    const int t = team.team_rank();
    if (here >= 0) {
      for (int c = 0; c < CPT; ++c) {  // (A)
        const int p = t + c * T;
        Source cur = st.next[c];
        R f[L::Q];
        const bool source = cur.fluid();
        if constexpr (kLinear) {
          KOLIBRI_UNROLL
          for (int j = 0; j < M; ++j) cur.m[j] = source ? cur.m[j] : R(0);
          MomentSlots<L>::departing(cur.m, op, bc.force, f);
        } else {
          MomentSlots<L>::departing(cur.m, op, bc.force, f);
          KOLIBRI_UNROLL
          for (int q = 0; q < L::Q; ++q) f[q] = source ? f[q] : R(0);
        }
        // The slot counts up in the unrolled loop, so it is a constant in every store
        // (cross_slot(q) called with an unrolled loop's index ran as a loop: 57% of the kernel's
        // instructions; static_for here, as in the gather, measured 1-2% slower). The ring rows
        // along b (whole warps on GPUs: PX = 32) store only what enters the tile, and the
        // compiler drops the other populations' arithmetic.
        const int row = RB ? p / PX : 1, side = row == 0 ? 1 : row == PY - 1 ? -1 : 0;
        int slot = 0;
        KOLIBRI_UNROLL
        for (int q = 0; q < L::Q; ++q)
          if (cross(q)) {
            if (side == 0 || L::c(q, tb) == side) plane[slot * NP + p] = f[q];
            ++slot;
          }
        // the next layer's moments, loading while this layer is summed and collided (loaded
        // before the rebuild, both layers' moments are live at once: 128 registers, 5% slower)
        fetch(st.col[c], st.edge[c], after, edge_next, st.next[c]);
        if (!st.own[c]) continue;
        KOLIBRI_UNROLL
        for (int q = 0; q < L::Q; ++q)
          if (!cross(q)) {
            const int cm = L::c(q, ma);
            (cm < 0 ? st.acc[c][I0] : cm == 0 ? st.acc[c][I1] : st.acc[c][I2]).template add<L>(q, f[q]);
          }
        // the populations it reflects into itself, summed before the step (layers the team
        // writes: the sums of layers m0 - 1 and m1 are dropped)
        if constexpr (Walls) {
          if (cur.flag == kBoundaryFluid && k >= m0 && k < m1) {
            if constexpr (kPrefetchWalls) {
              add_walls(st.walls[c], st.acc[c][I1]);
              if (++st.wall[c] < st.wall_end[c]) load_walls(st.wall[c], st.walls[c]);
            } else {
              R w[kMomentWallValues];
              load_walls(st.wall[c]++, w);
              add_walls(w, st.acc[c][I1]);
            }
          }
        } else if (source && cur.flag == kBoundaryFluid) {
          reflect(cur.n, st.col[c], here, f, st.acc[c][I1]);
        }
        st.done[c] = cur.flag;
      }
    } else {
      for (int c = 0; c < CPT; ++c) fetch(st.col[c], st.edge[c], after, edge_next, st.next[c]);
    }
    team.team_barrier();
    if (here >= 0) {
      for (int c = 0; c < CPT; ++c) {  // (B) arrivals across the column
        if (!st.own[c]) continue;
        const R* from = plane + (t + c * T);
        // crossing populations in mirror pairs (same layer, c_a or c_b negated)
        static_for<L::Q>([&](auto qc) {
          constexpr int q = decltype(qc)::value, axis = pair_axis(q);
          if constexpr (cross(q) && L::c(q, axis) > 0) {
            constexpr int qm = mirror(q, axis), cm = L::c(q, ma);
            static_assert(qm >= 0 && cross(qm), "a crossing direction's mirror crosses too");
            MomentSum<R>& into = cm < 0 ? st.acc[c][I0] : cm == 0 ? st.acc[c][I1] : st.acc[c][I2];
            into.template add_pair<L>(q, axis, from[cross_slot(q) * NP + arrival(q)], from[cross_slot(qm) * NP + arrival(qm)]);
          }
        });
      }
    }
    if (planes == 1) team.team_barrier();  // the plane is rewritten next
    const int edge_written = team_edge_layer(k - 1, k - 1, m0, m1);
    for (int c = 0; c < CPT; ++c) {
      if (k - 1 >= m0 && st.own[c] && is_updated(st.last[c])) {  // layer k - 1 is complete
        const MomentSum<R>& s = st.acc[c][I0];
        RegularizedMoments<L, R> post;
        if (forced) {
          R F[3] = {bc.force[0], bc.force[1], bc.force[2]};
          // The kernel without bodies keeps the field's read at every cell, which never runs
          // there (cell_force null): without it nvcc gave the closed box's kernel 117 registers
          // instead of 96 and it ran 4.9% slower (D3Q19 FP32, docs/performance.md).
          const bool read =
              Bodies ? st.body[c] && body_cells.spans(ma, k - 1) : cell_force != nullptr;
          if (read) {
            const Index n = st.col[c] + MomentPlace::wide(k - 1, place.columns);
            KOLIBRI_UNROLL
            for (int d = 0; d < L::D; ++d) F[d] += cell_force[d * place.cells + n];
          }
          post.collide(s.rho, s.j, s.pi, F, op.omega);
        } else {
          const R none[3] = {R(0), R(0), R(0)};
          post.collide(s.rho, s.j, s.pi, none, op.omega);
        }
        MomentSlots<L>::store(moments + csoa(address(st.col[c], st.edge[c], k - 1, edge_written, 1 - parity)), slot_stride(),
                              post.rho, post.js, post.A);
      }
      st.last[c] = st.done[c];
      st.acc[c][I0].clear();
    }
  }

  KOKKOS_INLINE_FUNCTION void operator()(const Team& team) const {
    R* scratch = static_cast<R*>(team.team_scratch(0).get_shmem(scratch_values(planes) * sizeof(R)));
    const int na = size(ta), nb = size(tb), nm = size(ma);
    const int tiles_a = (na + TX - 1) / TX, tiles_b = (nb + TY - 1) / TY;
    const int id = teams ? teams[team.league_rank()] : team.league_rank();
    const int tile = id % (tiles_a * tiles_b), seg = id / (tiles_a * tiles_b);
    const int a0 = (tile % tiles_a) * TX, b0 = (tile / tiles_a) * TY;
    const int len = segment_length();
    const int m0 = seg * len, m1 = m0 + len < nm ? m0 + len : nm;  // layers written: [m0, m1)
    const int t = team.team_rank();
    State st;
    for (int c = 0; c < CPT; ++c) {
      const int p = t + c * T, pa = p % PX, pb = p / PX;
      const int a = a0 + pa - 1, b = RB ? b0 + pb - RB : b0;
      st.own[c] = pa >= 1 && pa <= TX && pb >= RB && pb < RB + TY && a < na && b < nb;
      st.body[c] = Bodies && st.own[c] && body_cells.spans(ta, a) && body_cells.spans(tb, b);
      // The position just past the box holds the wrapped cell there (periodic axes), read by the
      // last cells of the box; a tile owns none of them. Positions further out read nothing
      // (their cells, inside another tile, are updated in place meanwhile).
      const int wa = a <= na ? wrap(a, ta) : -1, wb = RB ? (b <= nb ? wrap(b, tb) : -1) : b;
      int xyz[3] = {0, 0, 0};
      xyz[ta] = wa, xyz[tb] = wb;
      st.col[c] = wa >= 0 && wb >= 0 ? bc.grid.cell(xyz[0], xyz[1], xyz[2]) : Index(-1);
      st.edge[c] = st.col[c] >= 0 ? place.edge[st.col[c]] : -1;  // (col -1: never placed)
      for (int l = 0; l < 3; ++l) st.acc[c][l].clear();
      st.done[c] = st.last[c] = kSolid;
      if constexpr (Walls) {
        const Index at = st.col[c] * segments() + seg;
        st.wall[c] = st.own[c] ? wall_start[at] : 0;
        if constexpr (kPrefetchWalls) {
          st.wall_end[c] = st.own[c] ? wall_start[at + 1] : 0;
          if (st.wall[c] < st.wall_end[c]) load_walls(st.wall[c], st.walls[c]);
        }
      }
      const int first = wrap(m0 - 1, ma);
      fetch(st.col[c], st.edge[c], first, team_edge_layer(m0 - 1, first, m0, m1), st.next[c]);
    }
    for (int k = m0 - 1;; k += 3) {
      layer<0, 1, 2>(team, scratch, st, k, m0, m1);
      if (k + 1 > m1) break;
      layer<1, 2, 0>(team, scratch, st, k + 1, m0, m1);
      if (k + 2 > m1) break;
      layer<2, 0, 1>(team, scratch, st, k + 2, m0, m1);
      if (k + 3 > m1) break;
    }
  }

  void run(const ExecSpace& ex) const {
    // FP32 teams of 256 threads: registers capped at 128 for two teams an SM (118 used, no
    // spills). Three teams (80 registers) spill 400 bytes and run at half the speed
    // (docs/performance.md). D2Q9 FP64 too (144 registers otherwise, one team an SM: 0.78x;
    // capped, 32 bytes spill). D3Q19/D3Q27 FP64 (about 186) are left to the compiler.
    if constexpr (!kHostMemory && (sizeof(R) == 4 || L::D == 2) && T == 256) {
      auto policy = async_launch(
          Kokkos::TeamPolicy<ExecSpace, Kokkos::LaunchBounds<256, 2>>(ex, league(), T));
      Kokkos::parallel_for("kolibri::moment_step", policy.set_scratch_size(0, Kokkos::PerTeam(scratch_bytes(planes))), *this);
    } else {
      auto policy = async_launch(Kokkos::TeamPolicy<ExecSpace>(ex, league(), T));
      Kokkos::parallel_for("kolibri::moment_step", policy.set_scratch_size(0, Kokkos::PerTeam(scratch_bytes(planes))), *this);
    }
  }
};

/// \brief One time step of the moment representation: the run-time tile, segment and scratch
/// planes, dispatched to the MomentKernel compiled for the tile.
template <class L, class R, class C>
struct MomentStep {
  using Tiles = MomentTiles<L::D, kHostMemory>;

  Kokkos::View<R*, MemSpace> m;  ///< the moment array
  MomentPlace place;              ///< (MomentPlacement::device)
  int parity = 0;                 ///< read at this parity, write at the other
  C op;
  Boundary<L, R> bc;
  int tx, ty, planes = 2;
  /// With boundary cells: their wall-link masks (wall_links), their order (MomentWallCells) and
  /// the sums of what they reflect (kMomentWallValues a cell, MomentWallSums).
  const std::uint32_t* links = nullptr;
  const MomentWallCells* walls = nullptr;
  R* wall_sums = nullptr;
  const std::int32_t* teams = nullptr;  ///< MomentKernel::teams: a subset of the teams
  int team_count = 0;
  /// The immersed bodies' force per cell, added to the uniform one in the collision inside
  /// `body_cells` (empty without bodies). Only with the projective operator (kBodies): the
  /// recursive one rebuilds a cell's populations with the force of its last collision, which the
  /// bodies' next force replaces.
  Kokkos::View<const R*, MemSpace> cell_force{};
  BodyCells body_cells{};
  /// Whether the kernel for bodies is compiled: the projective regularized operator only (the
  /// operator MomentKernel::kLinear names).
  static constexpr bool kBodies = std::is_same_v<C, RegularizedBgk<L, R>>;

  template <int I, bool Two = false, bool Walls = false, bool Bodies = false>
  using Kernel = MomentKernel<L, R, C, Tiles::tx(I), Tiles::ty(I), Two, Walls, Bodies>;

  /// Calls f(std::integral_constant<int, I>) for the compiled tile I that is tx x ty; false
  /// where none is.
  template <class F>
  static bool with_tile(int tx, int ty, F&& f) {
    return [&]<int... I>(std::integer_sequence<int, I...>) {
      return ((tx == Tiles::tx(I) && ty == Tiles::ty(I) ? (f(std::integral_constant<int, I>{}), true) : false) || ...);
    }(std::make_integer_sequence<int, Tiles::count>{});
  }
  static std::string not_compiled(int tx, int ty) {
    return "moment tile " + std::to_string(tx) + "x" + std::to_string(ty) + ": not compiled; expected one of " + Tiles::list();
  }
  /// The largest team scratch a launch may ask for on this backend.
  static std::size_t scratch_limit() { return Kokkos::TeamPolicy<ExecSpace>::scratch_size_max(0); }
  /// Team scratch of the compiled tile tx x ty (0: none compiled).
  static std::size_t scratch_bytes(int tx, int ty, int planes) {
    std::size_t bytes = 0;
    with_tile(tx, ty, [&](auto i) { bytes = Kernel<decltype(i)::value>::scratch_bytes(planes); });
    return bytes;
  }
  /// `want` (the fixed tile on hosts), with two scratch planes where they fit, else one; else
  /// the next compiled tile that fits. A tile not compiled is refused with the list.
  static MomentTile fit(MomentTile want) {
    if (kHostMemory) want.tx = Tiles::tx(0), want.ty = Tiles::ty(0);
    int first = -1;
    for (int i = 0; i < Tiles::count; ++i)
      if (Tiles::tx(i) == want.tx && Tiles::ty(i) == want.ty) first = i;
    if (first < 0) throw std::invalid_argument(not_compiled(want.tx, want.ty));
    for (int i = first; i < Tiles::count; ++i)
      for (int p = 2; p >= 1; --p)
        if (scratch_bytes(Tiles::tx(i), Tiles::ty(i), p) <= scratch_limit()) return {Tiles::tx(i), Tiles::ty(i), want.segment, p};
    throw std::runtime_error("moment representation: no compiled tile (" + Tiles::list() + ") fits the team scratch memory");
  }

  /// MomentKernel::border_first for the compiled tile tx x ty.
  static std::vector<std::int32_t> border_first(const DenseGrid& grid, int tx, int ty, int segment,
                                                int& border) {
    std::vector<std::int32_t> out;
    if (!with_tile(tx, ty, [&](auto i) {
          out = Kernel<decltype(i)::value>::border_first(grid, segment, border);
        }))
      throw std::invalid_argument(not_compiled(tx, ty));
    return out;
  }

  /// The boundary cells' reflected moments at this step's parity and faces (MomentWallSums):
  /// before run(), and before the first of its launches where a step takes several.
  void sum_walls(const ExecSpace& ex = ExecSpace()) const {
    if (!walls || walls->count() == 0) return;
    const MomentDeparting<L, R, C> dep = departing();
    if (bc.faces.from_layer_bits != 0 || bc.inlet_shape != nullptr)
      MomentWallSums<L, R, C, true>{dep, bc, links, walls->cells(), walls->slots(), wall_sums}.run(
          ex, walls->count());
    else
      MomentWallSums<L, R, C>{dep, bc, links, walls->cells(), walls->slots(), wall_sums}.run(
          ex, walls->count());
  }
  /// The post-collision populations this step streams, rebuilt from the moments at its parity.
  MomentDeparting<L, R, C> departing() const {
    return {m.data(), place, parity, op, {bc.force[0], bc.force[1], bc.force[2]}};
  }
  /// Launch over all column segments (then the state is at the other parity); sum_walls first.
  void run(const ExecSpace& ex = ExecSpace()) const {
    if (scratch_bytes(tx, ty, planes) > scratch_limit())
      throw std::invalid_argument("moment tile " + std::to_string(tx) + "x" + std::to_string(ty) + " needs " +
                                  std::to_string(scratch_bytes(tx, ty, planes)) +
                                  " bytes of team scratch, over the limit of " + std::to_string(scratch_limit()));
    const bool per_cell = cell_force.extent(0) > 0;
    if (per_cell && Index(cell_force.extent(0)) != 3 * place.cells)
      throw std::logic_error("moment kernel: a force field of " +
                             std::to_string(cell_force.extent(0)) + " values on a box of " +
                             std::to_string(place.cells) + " cells");
    if (per_cell && !kBodies)
      throw std::logic_error("moment kernel: immersed bodies need the projective operator");
    const bool forced =
        bc.force[0] != R(0) || bc.force[1] != R(0) || bc.force[2] != R(0) || per_cell;
    const std::int32_t* start = walls ? walls->start() : nullptr;
    auto launch = [&]<int I, bool Two, bool Walls, bool Bodies>() {
      Kernel<I, Two, Walls, Bodies>{m.data(),
                                    place,
                                    parity,
                                    op,
                                    bc,
                                    planes,
                                    forced,
                                    wall_sums,
                                    start,
                                    links,
                                    teams,
                                    team_count,
                                    Bodies ? cell_force.data() : nullptr,
                                    body_cells}
          .run(ex);
    };
    // the kernel for bodies where there are some (a force field)
    auto launch_for = [&]<int I, bool Two, bool Walls>() {
      if constexpr (kBodies)
        if (per_cell) return launch.template operator()<I, Two, Walls, true>();
      launch.template operator()<I, Two, Walls, false>();
    };
    // every cell placed twice (two arrays); boundary cells (the kernel without them where the box
    // has none)
    const bool two = place.shared == place.columns, with_walls = start != nullptr;
    if (!with_tile(tx, ty, [&](auto i) {
          constexpr int I = decltype(i)::value;
          if (two && with_walls)
            launch_for.template operator()<I, true, true>();
          else if (two)
            launch_for.template operator()<I, true, false>();
          else if (with_walls)
            launch_for.template operator()<I, false, true>();
          else
            launch_for.template operator()<I, false, false>();
        }))
      throw std::invalid_argument(not_compiled(tx, ty));
  }
};

/// \brief Equilibrium initialisation as a stored post-collision moment state
/// (RegularizedMoments::equilibrium, as the population form's InitEquilibrium).
template <class L, class R>
struct InitMoments {
  Kokkos::View<R*, MemSpace> m;
  Kokkos::View<const double*, MemSpace> rho;
  Kokkos::View<const double* [3], MemSpace> u;
  Slots idx;
  R force[3];
  R omega;

  KOKKOS_INLINE_FUNCTION void operator()(const Index n) const {
    const Index k = rho.extent(0) == 1 ? 0 : n;
    const R u0[3] = {R(u(k, 0)), R(u(k, 1)), R(u(k, 2))};
    RegularizedMoments<L, R> s;
    s.equilibrium(R(rho(k)), u0, force, omega);
    MomentSlots<L>::store(m.data() + idx(n, 0), idx.stride, s.rho, s.js, s.A);
  }};

}  // namespace kolibri
