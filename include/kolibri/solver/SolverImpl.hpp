// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The compiled solver for one (lattice, collision, precision): owns the device Views and
/// launches the fused kernel. Explicitly instantiated in src/solver/Solver*.cpp.
#pragma once

#include <kolibri/collision/Mrt.hpp>
#include <kolibri/grid/CellLists.hpp>
#include <kolibri/grid/Flags.hpp>
#include <kolibri/ib/Immersed.hpp>
#include <kolibri/parallel/Halo.hpp>
#include <kolibri/solver/Solver.hpp>
#include <kolibri/stepping/MomentStream.hpp>
#include <kolibri/stepping/StreamCollide.hpp>

#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

namespace kolibri {

/// \brief Operator parameters from the configuration.
template <class C>
struct CollisionFactory;
template <class L, class R>
struct CollisionFactory<Bgk<L, R>> {
  static Bgk<L, R> make(const SolverConfig& c) { return {R(1.0 / c.tau)}; }
};
template <class L, class R>
struct CollisionFactory<Trt<L, R>> {
  static Trt<L, R> make(const SolverConfig& c) {
    const double lp = c.tau - 0.5;                  // 1/omega+ - 1/2
    const double tau_minus = c.trt_magic / lp + 0.5;  // Lambda = lp * (1/omega- - 1/2)
    return {R(1.0 / c.tau), R(1.0 / tau_minus)};
  }
};
template <class L, class R>
struct CollisionFactory<RegularizedBgk<L, R>> {
  static RegularizedBgk<L, R> make(const SolverConfig& c) { return {R(1.0 / c.tau)}; }
};
template <class L, class R>
struct CollisionFactory<RecursiveRegularizedBgk<L, R>> {
  static RecursiveRegularizedBgk<L, R> make(const SolverConfig& c) { return {R(1.0 / c.tau)}; }
};

template <class L, class R>
struct CollisionFactory<RawMomentMrt<L, R>> {
  static RawMomentMrt<L, R> make(const SolverConfig& c) {
    return RawMomentMrt<L, R>::suga(R(1.0 / c.tau), R(c.bulk_rate > 0 ? c.bulk_rate : 1.54));
  }
};
template <class L, class R>
struct CollisionFactory<CentralMomentMrt<L, R>> {
  static CentralMomentMrt<L, R> make(const SolverConfig& c) {
    // Default bulk rate: De Rosis's 1; the monomial basis ties it to the high-order rate (stability).
    const double bulk = c.bulk_rate > 0 ? c.bulk_rate : c.cm_hermite ? 1.0 : -1.0;
    CentralMomentMrt<L, R> op{R(1.0 / c.tau), R(bulk), R(c.high_order_rate)};
    op.hermite = c.cm_hermite;
    if (c.collision == CollisionKind::AdaptiveCentralMoment) {
      op.policy = HighOrderRate::Adaptive;
      op.nu_a = R(c.acm_viscosity);
      op.inv_u_ref = R(1.0 / c.acm_velocity);
    }
    return op;
  }
};

/// \brief The moment kernel's tile: cfg.moment_tile where given (GPU backends; one of the tiles
/// compiled, MomentTiles), else 30 x 6 in 3D (32 x 8 threads with the ring) and 254 x 1 in 2D,
/// columns in segments of 64 layers in 3D and 32 in 2D (the fastest on an H100 at 256^3 and
/// 4096^2; 3D: 1-2% over 32 at 256^3, 5% at 128^3, 1% under at 512^3: docs/performance.md); on
/// host backends a fixed one-thread tile.
template <class L, class R, class C>
MomentTile moment_tile_for(const SolverConfig& cfg) {
  MomentTile t = L::D == 3 ? MomentTile{30, 6, 64, 2} : MomentTile{254, 1, 32, 2};
  if (cfg.moment_tile[0] > 0) t.tx = cfg.moment_tile[0];
  if (cfg.moment_tile[1] > 0) t.ty = L::D == 3 ? cfg.moment_tile[1] : 1;
  if (cfg.moment_segment > 0) t.segment = cfg.moment_segment;
  return MomentStep<L, R, C>::fit(t);
}

/// \tparam L lattice, S storage policy (NativeStorage<double>, NativeStorage<float>, Fp16Storage),
/// C collision operator on S::real.
template <class L, class S, class C>
class SolverImpl final : public Solver {
 public:
  using R = typename S::real;
  using V = typename S::value_type;
  /// The moment representation: regularized operators, values stored in the arithmetic type.
  static constexpr bool kMoments = kMomentOperator<C> && std::is_same_v<V, R>;
  static constexpr int M = MomentSlots<L>::M;

  /// `dist` (multi-rank runs): cfg is this rank's local configuration (Decomposition::local_config).
  explicit SolverImpl(const SolverConfig& cfg, const Distribution* dist = nullptr) : Solver(cfg) {
    if (dist) m_dist = *dist;
    m_grid = DenseGrid::of(cfg);  // refuses 2^32 cells or more
    const Index n = m_grid.cells();
    m_in_place = cfg.streaming == Streaming::InPlace;
    m_moments = cfg.streaming == Streaming::Moments;
    // The configuration rules (config/Rules.hpp) were checked by make_solver.
    if (!m_moments) {  // populations
      const int alpha = csoa_alpha_for(cfg);
      m_idx = alpha == 0 ? Slots::soa(n, L::Q) : Slots::csoa(n, L::Q, alpha);
    }
    if constexpr (kMoments)
      if (m_moments) {  // the moments of the cells, then the shadow of the edge cells (MomentPlacement)
        m_tile = moment_tile_for<L, R, C>(cfg);
        m_place = MomentPlacement(L::D, m_grid.n[0], m_grid.n[1], m_grid.n[2], m_tile.tx, m_tile.ty,
                                  m_tile.segment, cfg.moment_arrays == 2);
        m_idx = moment_slots(L::D, m_place.stride(), M);
      }
    m_f[0] = Kokkos::View<V*, MemSpace>("kolibri::f_a", m_idx.size());
    if (!m_in_place && !m_moments) m_f[1] = Kokkos::View<V*, MemSpace>("kolibri::f_b", m_idx.size());
    const auto host_flags = build_flags<L>(cfg);
    m_flags = to_device(host_flags, "kolibri::flags");
    const CellLists cell_lists =
        build_cell_lists<L>(m_grid, host_flags, cfg.faces, cfg.face_kernels);
    m_fluid_cells = cell_lists.updated;
    {  // per-face cells: one list, face f from m_face_start[f] to m_face_start[f + 1]
      std::vector<std::uint32_t> all;
      for (int f = 0; f < 6; ++f) {
        m_face_start[f] = Index(all.size());
        all.insert(all.end(), cell_lists.faces[f].begin(), cell_lists.faces[f].end());
      }
      m_face_start[6] = Index(all.size());
      m_face_cells = to_device(all, "kolibri::face_cells");
    }
    m_boundary_border = cell_lists.boundary_next_to_ghost;
    m_border = to_device(cell_lists.border, "kolibri::border_cells");
    if (m_dist.comm) {
      m_fluid_cells = m_dist.comm->sum(std::int64_t(m_fluid_cells));
      const auto& dc = m_dist.dc;
      auto exchange = [&](HaloMode mode, const std::function<Index(Index, int)>& at) {
        HaloLists lists = build_halo_lists<L>(dc, mode, sizeof(V), host_flags, cfg.faces, M, at);
        return HaloExchange<V>(*m_dist.comm, std::move(lists), m_dist.device_buffers, m_dist.nccl);
      };
      const auto slots = [this](Index cell, int slot) { return m_idx(cell, slot); };
      if (m_in_place) {
        m_fwd = exchange(HaloMode::AAForward, slots);
        m_rev = exchange(HaloMode::AAReverse, slots);
      } else if (m_moments) {  // one exchange for each parity of the moment array
        const MomentPlace place = m_place.host();
        for (int parity = 0; parity < 2; ++parity)
          m_halo_parity[parity] = exchange(HaloMode::Moments, [place, parity, idx = m_idx](Index cell, int slot) {
            return idx(place.at(cell, parity), slot);
          });
      } else {
        m_pull = exchange(HaloMode::Pull, slots);
      }
    }
    m_boundary = to_device(cell_lists.boundary, "kolibri::boundary_cells");
    for (int d = 0; d < 3; ++d) m_force[d] = R(cfg.force[d]);
    if (!cfg.bodies.empty()) {
      if (m_dist.comm)
        throw std::invalid_argument("kolibri: immersed bodies run on one rank (one GPU) for now; got a multi-rank run");
      m_ib = ImmersedBoundary<L, S>(cfg);
    }
    if (cfg.initial.kind == InitialCondition::Kind::Uniform) {
      initialize_uniform(cfg.initial.density, cfg.initial.velocity);
    } else {
      std::vector<double> rho;
      std::vector<std::array<double, 3>> u;
      initial_fields(cfg, rho, u);
      initialize(rho, u);
    }
  }

  /// Equilibrium of one density and velocity everywhere (fields of extent 1, so the largest boxes
  /// need no per-cell temporaries).
  void initialize_uniform(double rho0, const std::array<double, 3>& u0) {
    Kokkos::View<double*, MemSpace> d_rho("kolibri::rho_init", 1);
    Kokkos::View<double* [3], MemSpace> d_u("kolibri::u_init", 1);
    auto h_rho = Kokkos::create_mirror_view(d_rho);
    auto h_u = Kokkos::create_mirror_view(d_u);
    h_rho(0) = rho0;
    for (int d = 0; d < 3; ++d) h_u(0, d) = u0[d];
    Kokkos::deep_copy(d_rho, h_rho);
    Kokkos::deep_copy(d_u, h_u);
    set_equilibrium(d_rho, d_u);
  }

  void step(std::int64_t nsteps) override {
    if (m_moments) {
      if constexpr (kMoments) {
        MomentStep<L, R, C> k{m_f[0], m_place.device(), 0, CollisionFactory<C>::make(m_cfg), rules(), m_tile.tx, m_tile.ty, m_tile.planes};
        for (std::int64_t s = 0; s < nsteps; ++s) {
          k.parity = m_parity;
          k.run();
          m_parity = 1 - m_parity;
          halo().run(m_f[0]);  // the neighbours' new moments into the ghost cells
        }
      }
    } else {
      // the stream-collide kernels, compiled for each layout
      auto run = [&](auto idx) {
        using I = decltype(idx);
        if (m_in_place)
          in_place_steps(InPlaceStep<L, S, C, I>{m_f[0], m_boundary, idx, CollisionFactory<C>::make(m_cfg), rules(), {}}, nsteps);
        else
          two_array_steps(StreamCollide<L, S, C, I>{{}, {}, m_boundary, idx, CollisionFactory<C>::make(m_cfg), rules()}, nsteps);
      };
      if (m_idx.alpha == 0) run(m_idx.as_soa());
      else run(m_idx.template as_csoa<L::Q>());
    }
    Kokkos::fence();
    m_steps += nsteps;
  }

  /// One array streamed in place, either layout: local and streaming steps alternate.
  template <class K>
  void in_place_steps(K k, std::int64_t nsteps) {
    using Range = Kokkos::IndexType<Index>;
    const Index nb = Index(m_boundary.extent(0));
    bool outlets = false;
    for (const auto& f : m_cfg.faces) outlets = outlets || f.type == FaceType::PressureOutlet;
    if (outlets && m_outlet_u.extent(0) != m_boundary.extent(0))
      m_outlet_u = Kokkos::View<R* [3], MemSpace>("kolibri::outlet_velocity", m_boundary.extent(0));
    k.outlet_u = m_outlet_u;
    const Kokkos::RangePolicy<ExecSpace, LocalTag, Range> local(0, m_grid.cells());
    const Kokkos::RangePolicy<ExecSpace, InteriorTag, Range> interior(0, m_grid.cells());
    const Kokkos::RangePolicy<ExecSpace, OutletVelocityTag, Range> outlet(0, Index(m_outlet_u.extent(0)));
    for (std::int64_t s = 0; s < nsteps; ++s) {
      if (m_arriving) {
        Kokkos::parallel_for(LocalTag::label, local, k);
      } else {
        m_fwd.run(m_f[0]);  // the neighbours' departing populations into the ghost cells
        if (outlets) Kokkos::parallel_for(OutletVelocityTag::label, outlet, k);
        Kokkos::parallel_for(InteriorTag::label, interior, k);
        if (nb > 0) Kokkos::parallel_for(BoundaryTag::label, Kokkos::RangePolicy<ExecSpace, BoundaryTag, Range>(0, nb), k);
        m_rev.run(m_f[0]);  // what this step wrote into ghost cells, back to their owners
      }
      m_arriving = !m_arriving;
    }
  }

  /// Two arrays, either layout: the immersed-boundary forces, then the stream-collide launches
  /// (interior, boundary list, per-face lists), overlapped with the halo exchange on several ranks.
  template <class K>
  void two_array_steps(K k, std::int64_t nsteps) {
    using Range = Kokkos::IndexType<Index>;
    using BoundaryPolicy = Kokkos::RangePolicy<ExecSpace, BoundaryTag, Range>;
    const Index nb = Index(m_boundary.extent(0)), nbb = m_boundary_border;
    k.cell_force.field = m_ib.force();  // empty without bodies
    k.face_cells = m_face_cells;
    k.border_cells = m_border;
    auto interior = [&](const K& kk) {
      if (m_cfg.collision_kernels == 2) {
        Kokkos::parallel_for(
            InteriorLowTag::label,
            Kokkos::RangePolicy<ExecSpace, InteriorLowTag, Range>(0, m_grid.cells()), kk);
        Kokkos::parallel_for(
            InteriorHighTag::label,
            Kokkos::RangePolicy<ExecSpace, InteriorHighTag, Range>(0, m_grid.cells()), kk);
      } else {
        Kokkos::parallel_for(InteriorTag::label,
                             Kokkos::RangePolicy<ExecSpace, InteriorTag, Range>(0, m_grid.cells()),
                             kk);
      }
    };
    auto faces = [&](K kk) {
      for (int f = 0; f < 6; ++f) {
        if (m_face_start[f + 1] == m_face_start[f]) continue;
        kk.face = f;
        Kokkos::parallel_for(FaceTag::label, Kokkos::RangePolicy<ExecSpace, FaceTag, Range>(m_face_start[f], m_face_start[f + 1]), kk);
      }
    };
    for (std::int64_t s = 0; s < nsteps; ++s) {
      k.src = m_f[m_cur];
      k.dst = m_f[1 - m_cur];
      if (m_ib.active()) m_ib.apply(m_f[m_cur], k.bc, m_idx, m_steps + s);
      if (m_pull.active()) {
        // Two streams: the cells next to the ghost layers, the pack, the transfer and the
        // unpack on the exchange's instance, the other cells meanwhile on the default one.
        const ExecSpace& ex = m_pull.exec();
        Kokkos::parallel_for(BorderTag::label,
                             Kokkos::RangePolicy<ExecSpace, BorderTag, Range>(ex, 0, Index(m_border.extent(0))), k);
        if (nbb > 0) Kokkos::parallel_for(BoundaryTag::label, BoundaryPolicy(ex, 0, nbb), k);
        m_pull.pack(m_f[1 - m_cur]);
        interior(k);  // kFluid cells only
        if (nb > nbb) Kokkos::parallel_for(BoundaryTag::label, BoundaryPolicy(nbb, nb), k);
        faces(k);
        m_pull.post();
        m_pull.finish(m_f[1 - m_cur]);
        fence(ExecSpace(), "kolibri::step_done");  // the next step's border cells read these
      } else {
        interior(k);
        if (nb > 0) Kokkos::parallel_for(BoundaryTag::label, BoundaryPolicy(0, nb), k);
        faces(k);
      }
      m_cur = 1 - m_cur;
    }
  }

  void initialize(const std::vector<double>& rho,
                  const std::vector<std::array<double, 3>>& u) override {
    const Index n = m_grid.cells();
    if (Index(rho.size()) != n || Index(u.size()) != n)
      throw std::invalid_argument("initialize: expected " + std::to_string(n) + " values per field");
    Kokkos::View<double*, MemSpace> d_rho("kolibri::rho_init", n);
    Kokkos::View<double* [3], MemSpace> d_u("kolibri::u_init", n);
    auto h_rho = Kokkos::create_mirror_view(d_rho);
    auto h_u = Kokkos::create_mirror_view(d_u);
    for (Index i = 0; i < n; ++i) {
      h_rho(i) = rho[static_cast<std::size_t>(i)];
      for (int d = 0; d < 3; ++d) h_u(i, d) = u[static_cast<std::size_t>(i)][d];
    }
    Kokkos::deep_copy(d_rho, h_rho);
    Kokkos::deep_copy(d_u, h_u);
    set_equilibrium(d_rho, d_u);
  }

  MacroFields macroscopic() const override {
    settle();
    if (!m_dist.comm) return gather({});
    // This rank's cells, x fastest, as bytes (rho, u, solid), assembled on rank 0.
    const MacroFields part = gather(real_cells());
    const std::size_t n = part.rho.size();
    std::vector<std::byte> bytes(n * (4 * sizeof(double) + 1));
    std::memcpy(bytes.data(), part.rho.data(), n * sizeof(double));
    std::memcpy(bytes.data() + n * sizeof(double), part.u.data(), n * 3 * sizeof(double));
    std::memcpy(bytes.data() + n * 4 * sizeof(double), part.solid.data(), n);
    std::vector<std::int64_t> counts;
    const auto all = m_dist.comm->gather(bytes, counts, 0);
    MacroFields out;
    if (!m_dist.comm->root()) return out;
    out.nx = m_cfg.global_n(0), out.ny = m_cfg.global_n(1), out.nz = m_cfg.global_n(2);
    const auto total = std::size_t(std::int64_t(out.nx) * out.ny * out.nz);
    out.rho.resize(total), out.u.resize(total), out.solid.resize(total);
    std::size_t off = 0;
    for (std::size_t r = 0; r < m_dist.boxes.size(); ++r) {
      const Box& b = m_dist.boxes[r];
      const auto m = std::size_t(b.cells());
      const std::byte* p = all.data() + off;
      std::size_t i = 0;
      for (int z = 0; z < b.n[2]; ++z)
        for (int y = 0; y < b.n[1]; ++y)
          for (int x = 0; x < b.n[0]; ++x, ++i) {
            const auto k = out.index(b.lo[0] + x, b.lo[1] + y, b.lo[2] + z);
            std::memcpy(&out.rho[k], p + i * sizeof(double), sizeof(double));
            std::memcpy(out.u[k].data(), p + (m + 3 * i) * sizeof(double), 3 * sizeof(double));
            out.solid[k] = std::uint8_t(p[4 * m * sizeof(double) + i]);
          }
      off += m * (4 * sizeof(double) + 1);
    }
    return out;
  }

  MacroFields sample(const std::vector<std::int64_t>& cells) const override {
    if (cells.empty()) return MacroFields{};
    settle();
    if (!m_dist.comm) return gather(cells);
    // Cells are global indices: each rank samples the ones it holds, the sum tells everyone.
    std::vector<std::int64_t> local;
    std::vector<std::size_t> where;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      const Index c = m_grid.from_global(m_grid.global_coords_of(cells[i]));
      if (c < 0) continue;
      local.push_back(c);
      where.push_back(i);
    }
    std::vector<double> v(cells.size() * 5, 0.0);
    if (!local.empty()) {
      const MacroFields m = gather(local);
      for (std::size_t j = 0; j < where.size(); ++j) {
        double* o = &v[where[j] * 5];
        o[0] = m.rho[j], o[1] = m.u[j][0], o[2] = m.u[j][1], o[3] = m.u[j][2], o[4] = m.solid[j];
      }
    }
    m_dist.comm->sum(v);
    MacroFields out;
    out.nx = int(cells.size()), out.ny = out.nz = 1;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      out.rho.push_back(v[5 * i]);
      out.u.push_back({v[5 * i + 1], v[5 * i + 2], v[5 * i + 3]});
      out.solid.push_back(std::uint8_t(v[5 * i + 4] != 0.0));
    }
    return out;
  }

  Box state_box() const override { return m_grid.real_box(); }

  /// Packed on the device (this rank's cells, no ghosts), then one copy into the piece's bytes:
  /// the host holds the state once.
  StatePiece state(int& phase) const override {
    phase = m_moments ? 3 : m_in_place ? (m_arriving ? 2 : 1) : 0;
    settle();
    StatePiece p;
    p.box = state_box();
    const Index m = Index(p.box.cells());
    Kokkos::View<V*, MemSpace> packed("kolibri::state_packed", std::size_t(m) * m_idx.count);
    const Kokkos::View<const V*, MemSpace> f = m_f[m_cur];
    const StateSlots slot = state_slots();
    Kokkos::parallel_for("kolibri::state_pack", Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<Index>>(0, m * m_idx.count),
                         KOKKOS_LAMBDA(const Index k) { packed(k) = f(slot(k, m)); });
    p.data.resize(std::size_t(m) * m_idx.count * sizeof(V));
    Kokkos::View<V*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> h(reinterpret_cast<V*>(p.data.data()),
                                                                                   std::size_t(m) * m_idx.count);
    Kokkos::deep_copy(h, packed);
    return p;
  }

  void load_state(const StatePiece& p, int phase) override {
    if (phase < 0 || phase > 3) throw std::invalid_argument("state phase " + std::to_string(phase) + " unknown");
    const int saved = phase == 0 ? 0 : phase == 3 ? 2 : 1, mine = m_moments ? 2 : m_in_place ? 1 : 0;
    const char* names[3] = {"two arrays", "in-place streaming", "the moment representation"};
    if (saved != mine)
      throw std::invalid_argument(std::string("the state was saved with ") + names[saved] + "; set streaming to match");
    const Box b = state_box();
    const Index m = Index(b.cells());
    if (!(p.box == b) || p.data.size() != std::size_t(m) * m_idx.count * sizeof(V))
      throw std::invalid_argument("state piece does not match this rank's box or value type");
    Kokkos::View<V*, MemSpace> packed("kolibri::state_packed", std::size_t(m) * m_idx.count);
    Kokkos::View<const V*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> h(
        reinterpret_cast<const V*>(p.data.data()), std::size_t(m) * m_idx.count);
    Kokkos::deep_copy(packed, h);
    const Kokkos::View<V*, MemSpace> f = m_f[m_cur];
    m_parity = 0;  // the moment array's edge cells in the main part
    const StateSlots slot = state_slots();
    Kokkos::parallel_for("kolibri::state_unpack", Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<Index>>(0, m * m_idx.count),
                         KOKKOS_LAMBDA(const Index k) { f(slot(k, m)) = packed(k); });
    m_arriving = phase == 2;
    refresh_ghosts();
    Kokkos::fence();
  }

  /// Slot of the k-th stored value of a state piece: population q = k / m of the (k % m)-th cell
  /// of this rank's box (x fastest), in the local array with its ghost layers.
  struct StateSlots {
    Slots idx;
    GridCells grid;  ///< the local array's cells
    int box[3];      ///< extents of this rank's cells (x fastest)
    int off[3];      ///< where they start in the local array (the low ghost layers)
    KOKKOS_INLINE_FUNCTION Index operator()(Index k, Index m) const {
      const int q = int(k / m);
      const Coord p = coords_in(box, k % m);
      return idx(grid.cell(p.x + off[0], p.y + off[1], p.z + off[2]), q);
    }
  };
  StateSlots state_slots() const {
    const Box b = state_box();
    return {m_idx,
            m_grid,
            {b.n[0], b.n[1], b.n[2]},
            {m_grid.ghost[0], m_grid.ghost[2], m_grid.ghost[4]}};
  }

  std::string value_type() const override {
    return sizeof(V) == 8 ? "float64" : sizeof(V) == 4 ? "float32" : "float16";
  }
  int populations_per_cell() const override { return m_idx.count; }
  std::vector<BodyLoad> body_loads() const override { return m_ib.loads(); }
  IbStats ib_stats() const override { return m_ib.stats(); }
  double exchange_time_per_step(int repeats) override {
    // two arrays and moments: one exchange a step; in place: a forward and a reverse one every
    // two steps
    return m_in_place ? m_fwd.time_alone(m_f[0], repeats) : halo().time_alone(m_f[m_cur], repeats);
  }

  Diagnostics diagnostics() const override {
    settle();
    const Index n = m_grid.cells();
    const Kokkos::View<const V*, MemSpace> f = m_f[m_cur];
    const auto flags = m_flags;
    const auto idx = m_idx;
    const R force[3] = {m_force[0], m_force[1], m_force[2]};
    const StateLayout layout = state_layout();
    Diagnostics d;
    using Policy = Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<Index>>;
    Kokkos::parallel_reduce(
        "kolibri::diag_mass", Policy(0, n),
        KOKKOS_LAMBDA(const Index i, double& m) {
          if (!is_updated(flags(i))) return;
          double r, u[3];
          cell_moments<L, S>(f, idx, i, force, r, u, layout);
          m += r;
        },
        d.mass);
    Kokkos::parallel_reduce(
        "kolibri::diag_max_speed", Policy(0, n),
        KOKKOS_LAMBDA(const Index i, double& m) {
          if (!is_updated(flags(i))) return;
          double r, u[3];
          cell_moments<L, S>(f, idx, i, force, r, u, layout);
          const double s = math::sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
          if (s > m) m = s;
        },
        Kokkos::Max<double>(d.max_speed));
    Index bad = n;
    Kokkos::parallel_reduce(
        "kolibri::diag_first_bad", Policy(0, n),
        KOKKOS_LAMBDA(const Index i, Index& b) {
          if (!is_updated(flags(i))) return;
          double r, u[3];
          cell_moments<L, S>(f, idx, i, force, r, u, layout);
          const bool ok = math::is_finite(r) && math::is_finite(u[0]) && math::is_finite(u[1]) &&
                          math::is_finite(u[2]);
          if (!ok && i < b) b = i;
        },
        Kokkos::Min<Index>(bad));
    if (m_fluid_cells == 0) d.max_speed = 0.0;  // the Max reducer's identity otherwise
    d.first_bad = bad < n ? m_grid.to_global(bad) : -1;
    if (m_dist.comm) {
      const auto& c = *m_dist.comm;
      d.mass = c.sum(d.mass);
      d.max_speed = c.max(d.max_speed);
      const std::int64_t none = std::numeric_limits<std::int64_t>::max();
      const std::int64_t first = c.min(d.first_bad < 0 ? none : d.first_bad);
      d.first_bad = first == none ? -1 : first;
    }
    return d;
  }

  /// Post-collision populations, q-major (population q of cell n at q * cells + n), whatever the
  /// storage scheme. In place after a streaming step the state holds arriving (pre-collision)
  /// populations instead; those are returned as stored.
  std::vector<double> populations() const override {
    if (m_moments) return moment_populations();
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, m_f[m_cur]);
    const std::size_t n = std::size_t(m_grid.cells());
    const bool opp = state_layout().opposite_slots;
    std::vector<double> out(n * L::Q);
    for (int q = 0; q < L::Q; ++q) {
      const int slot = opp ? L::opposite(q) : q;
      const std::size_t to = std::size_t(q) * n;
      for (std::size_t i = 0; i < n; ++i) out[to + i] = double(S::template load<L>(h(m_idx(Index(i), slot)), q));
    }
    return out;
  }

  double bytes_per_update() const override { return 2.0 * m_idx.count * sizeof(V) + sizeof(Flag); }
  double bytes_per_cell() const override {
    if (m_moments) return double(m_idx.size()) * sizeof(V) / double(m_grid.cells()) + sizeof(Flag);
    return (m_in_place ? 1.0 : 2.0) * m_idx.count * sizeof(V) + sizeof(Flag);
  }


 private:
  /// The equilibrium of the given fields (extent cells, or 1 for a uniform state) as the stored
  /// post-collision state.
  void set_equilibrium(Kokkos::View<const double*, MemSpace> rho, Kokkos::View<const double* [3], MemSpace> u) {
    m_arriving = false;
    m_parity = 0;
    if (m_moments) {
      if constexpr (kMoments) {
        const InitMoments<L, R> init{m_f[m_cur], rho, u, m_idx, {m_force[0], m_force[1], m_force[2]},
                                     CollisionFactory<C>::make(m_cfg).omega};
        Kokkos::parallel_for(
            "kolibri::init_moments",
            Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<Index>>(0, m_grid.cells()), init);
      }
      refresh_ghosts();
      Kokkos::fence();
      return;
    }
    const InitEquilibrium<L, S, C> init{m_f[m_cur], rho, u, m_idx, {m_force[0], m_force[1], m_force[2]}, m_in_place,
                                        CollisionFactory<C>::make(m_cfg)};
    Kokkos::parallel_for(
        "kolibri::init_equilibrium",
        Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<Index>>(0, m_grid.cells()), init);
    refresh_ghosts();
    Kokkos::fence();
  }

  /// Two arrays: the neighbours' current populations into the ghost cells (after set-up or a
  /// restart; the in-place scheme exchanges at the start of every streaming step anyway).
  void refresh_ghosts() {
    if (!m_in_place) halo().run(m_f[m_cur]);
  }
  /// The exchange after a step: two arrays, or the moment array at its parity.
  HaloExchange<V>& halo() { return m_moments ? m_halo_parity[m_parity] : m_pull; }

 public:  // (an extended device lambda inside needs public access)
  /// Moment representation at parity 1: the edge cells' moments back into the main part (parity
  /// 0), where the code reading the state by cell (fields, diagnostics, checkpoints,
  /// populations) finds them. A copy of the edge cells, only when output is asked for.
  void settle() const {
    if (!m_moments || m_parity == 0) return;
    const Kokkos::View<V*, MemSpace> f = m_f[0];
    const MomentPlace place = m_place.device();
    const Slots idx = m_idx;
    Kokkos::parallel_for(
        "kolibri::moment_settle",
        Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<Index>>(0, m_grid.cells()),
        KOKKOS_LAMBDA(const Index n) {
          const Index from = place.at(n, 1);
          if (from == n) return;
          for (int k = 0; k < M; ++k) f(idx(n, k)) = f(idx(from, k));
        });
    Kokkos::fence();
    m_parity = 0;
  }

  /// Moment representation: the post-collision populations rebuilt from the moments, q-major.
  std::vector<double> moment_populations() const {
    settle();
    const Index n = m_grid.cells();
    Kokkos::View<double*, MemSpace> out("kolibri::populations", std::size_t(n) * L::Q);
    if constexpr (kMoments) {
      const Kokkos::View<const R*, MemSpace> m = m_f[m_cur];
      const Slots idx = m_idx;
      const auto flags = m_flags;
      const auto op = CollisionFactory<C>::make(m_cfg);
      const R force[3] = {m_force[0], m_force[1], m_force[2]};
      Kokkos::parallel_for(
          "kolibri::moment_populations", Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<Index>>(0, n),
          KOKKOS_LAMBDA(const Index i) {
            if (flags(i) == kSolid) return;
            R mi[M], f[L::Q];
            MomentSlots<L>::load(m.data() + idx(i, 0), idx.stride, mi);
            MomentSlots<L>::departing(mi, op, force, f);
            for (int q = 0; q < L::Q; ++q) out(Index(q) * n + i) = double(f[q]);
          });
    }
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, out);
    return std::vector<double>(h.data(), h.data() + h.extent(0));
  }

 private:
  /// Local indices of the cells this rank owns (no ghosts), x fastest.
  std::vector<std::int64_t> real_cells() const {
    const Box b = m_grid.real_box();
    std::vector<std::int64_t> list;
    list.reserve(std::size_t(b.cells()));
    m_grid.for_each_in(b, [&](Index c) { list.push_back(c); });
    return list;
  }

  Boundary<L, R> rules() const {
    return {
        m_flags, m_grid, DeviceFaces<R>::from(m_cfg.faces), {m_force[0], m_force[1], m_force[2]}};
  }
  StateLayout state_layout() const {
    if (m_moments) return {false, -1.0, true};
    if (!m_in_place) return {};
    return m_arriving ? StateLayout{false, +1.0} : StateLayout{true, -1.0};
  }

  MacroFields gather(const std::vector<std::int64_t>& list) const {
    const Index count = list.empty() ? m_grid.cells() : Index(list.size());
    Kokkos::View<Index*, MemSpace> cells("kolibri::sample_cells", list.size());
    auto h_cells = Kokkos::create_mirror_view(cells);
    for (std::size_t i = 0; i < list.size(); ++i) h_cells(i) = list[i];
    Kokkos::deep_copy(cells, h_cells);
    Kokkos::View<double*, MemSpace> rho("kolibri::rho", count);
    Kokkos::View<double* [3], MemSpace> u("kolibri::u", count);
    Macroscopic<L, S> m{m_f[m_cur], m_flags, cells, rho, u, m_idx,
                        {m_force[0], m_force[1], m_force[2]}, m_cfg.initial.density, state_layout(),
                        {m_ib.force()}};  // empty without bodies
    Kokkos::parallel_for("kolibri::macroscopic",
                         Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<Index>>(0, count), m);
    auto h_rho = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, rho);
    auto h_u = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, u);
    auto h_flags = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, m_flags);
    MacroFields out;
    if (list.empty())
      out.nx = m_grid.n[0], out.ny = m_grid.n[1], out.nz = m_grid.n[2];
    else out.nx = int(count), out.ny = out.nz = 1;
    const auto sz = static_cast<std::size_t>(count);
    out.rho.resize(sz), out.u.resize(sz), out.solid.resize(sz);
    for (std::size_t i = 0; i < sz; ++i) {
      out.rho[i] = h_rho(i);
      out.u[i] = {h_u(i, 0), h_u(i, 1), h_u(i, 2)};
      out.solid[i] = h_flags(list.empty() ? Index(i) : list[i]) == kSolid;
    }
    return out;
  }

  DenseGrid m_grid;  ///< this rank's box of cells, ghost layers included
  Slots m_idx{};  ///< the population layout (SoA or CSoA)
  Kokkos::View<V*, MemSpace> m_f[2];
  int m_cur = 0;
  bool m_in_place = false;   ///< one array streamed in place (AA pattern)
  bool m_moments = false;    ///< moment representation: m_f hold M moments a cell
  MomentTile m_tile{};
  MomentPlacement m_place;   ///< moments: the cells updated in place and the edge cells' two places
  mutable int m_parity = 0;  ///< moments: where the edge cells are (settle() moves them to 0)
  bool m_arriving = false;   ///< in place: the array holds arriving (pre-collision) populations
  Kokkos::View<R* [3], MemSpace> m_outlet_u;  ///< in place with outlets: boundary-cell velocities
  ImmersedBoundary<L, S> m_ib;  ///< immersed bodies (two arrays, one rank)
  Kokkos::View<Flag*, MemSpace> m_flags;
  Kokkos::View<std::uint32_t*, MemSpace> m_boundary;  ///< cells with kBoundaryFluid
  Index m_boundary_border = 0;  ///< the first ones of m_boundary lie next to a ghost layer
  Kokkos::View<std::uint32_t*, MemSpace> m_border;    ///< kFluidBorder cells (multi-rank)
  Kokkos::View<std::uint32_t*, MemSpace> m_face_cells;  ///< face_kernels: cells next to one face only
  Index m_face_start[7] = {0, 0, 0, 0, 0, 0, 0};     ///< face f's cells in m_face_cells
  Distribution m_dist;          ///< multi-rank runs; comm is null otherwise
  HaloExchange<V> m_pull, m_fwd, m_rev;  ///< two arrays; in place before / after streaming
  HaloExchange<V> m_halo_parity[2];      ///< moments: the exchange at parity 0 and 1
  R m_force[3]{};
};

}  // namespace kolibri
