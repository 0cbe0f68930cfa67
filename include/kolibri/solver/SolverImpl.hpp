// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The compiled solver for one (lattice, collision, precision): owns the device Views and
/// launches the fused kernel. Explicitly instantiated in src/solver/Solver*.cpp.
#pragma once

#include <kolibri/grid/Flags.hpp>
#include <kolibri/solver/Solver.hpp>
#include <kolibri/stepping/StreamCollide.hpp>

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

/// \tparam L lattice, S storage policy (NativeStorage<double>, NativeStorage<float>, Fp16Storage),
/// C collision operator on S::real.
template <class L, class S, class C>
class SolverImpl final : public Solver {
 public:
  using R = typename S::real;
  using V = typename S::value_type;

  explicit SolverImpl(const SolverConfig& cfg) : Solver(cfg) {
    const Index n = cfg.cells();
    if (n >= (Index(1) << 32))
      throw std::invalid_argument("kolibri: " + std::to_string(n) + " cells: at most 2^32 - 1 per rank");
    m_idx = SoA{n};
    m_in_place = cfg.streaming == Streaming::InPlace;
    m_f[0] = Kokkos::View<V*, MemSpace>("kolibri::f_a", n * L::Q);
    if (!m_in_place) m_f[1] = Kokkos::View<V*, MemSpace>("kolibri::f_b", n * L::Q);
    const auto host_flags = build_flags<L>(cfg);
    m_flags = Kokkos::View<Flag*, MemSpace>("kolibri::flags", n);
    auto hf = Kokkos::create_mirror_view(m_flags);
    m_fluid_cells = 0;
    std::vector<std::uint32_t> boundary;
    for (Index i = 0; i < n; ++i) {
      hf(i) = host_flags[static_cast<std::size_t>(i)];
      m_fluid_cells += hf(i) != kSolid;
      if (hf(i) == kBoundaryFluid) boundary.push_back(std::uint32_t(i));
    }
    Kokkos::deep_copy(m_flags, hf);
    m_boundary = Kokkos::View<std::uint32_t*, MemSpace>("kolibri::boundary_cells", boundary.size());
    auto hb = Kokkos::create_mirror_view(m_boundary);
    for (std::size_t i = 0; i < boundary.size(); ++i) hb(i) = boundary[i];
    Kokkos::deep_copy(m_boundary, hb);
    for (int d = 0; d < 3; ++d) m_force[d] = R(cfg.force[d]);
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
    using Range = Kokkos::IndexType<Index>;
    const Kokkos::RangePolicy<ExecSpace, InteriorTag, Range> interior(0, m_cfg.cells());
    const Kokkos::RangePolicy<ExecSpace, BoundaryTag, Range> boundary(0, Index(m_boundary.extent(0)));
    const bool any_boundary = m_boundary.extent(0) > 0;
    if (m_in_place) {
      bool outlets = false;
      for (const auto& f : m_cfg.faces) outlets = outlets || f.type == FaceType::PressureOutlet;
      if (outlets && m_outlet_u.extent(0) != m_boundary.extent(0))
        m_outlet_u = Kokkos::View<R* [3], MemSpace>("kolibri::outlet_velocity", m_boundary.extent(0));
      const InPlaceStep<L, S, C> k{m_f[0], m_boundary, m_idx, CollisionFactory<C>::make(m_cfg), rules(), m_outlet_u};
      const Kokkos::RangePolicy<ExecSpace, LocalTag, Range> local(0, m_cfg.cells());
      const Kokkos::RangePolicy<ExecSpace, OutletVelocityTag, Range> outlet(0, Index(m_outlet_u.extent(0)));
      for (std::int64_t s = 0; s < nsteps; ++s) {
        if (m_arriving) {
          Kokkos::parallel_for(LocalTag::label, local, k);
        } else {
          if (outlets) Kokkos::parallel_for(OutletVelocityTag::label, outlet, k);
          Kokkos::parallel_for(InteriorTag::label, interior, k);
          if (any_boundary) Kokkos::parallel_for(BoundaryTag::label, boundary, k);
        }
        m_arriving = !m_arriving;
      }
    } else {
      StreamCollide<L, S, C> k{{}, {}, m_boundary, m_idx, CollisionFactory<C>::make(m_cfg), rules()};
      for (std::int64_t s = 0; s < nsteps; ++s) {
        k.src = m_f[m_cur];
        k.dst = m_f[1 - m_cur];
        Kokkos::parallel_for(InteriorTag::label, interior, k);
        if (any_boundary) Kokkos::parallel_for(BoundaryTag::label, boundary, k);
        m_cur = 1 - m_cur;
      }
    }
    Kokkos::fence();
    m_steps += nsteps;
  }

  void initialize(const std::vector<double>& rho,
                  const std::vector<std::array<double, 3>>& u) override {
    const Index n = m_cfg.cells();
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

  MacroFields macroscopic() const override { return gather({}); }

  MacroFields sample(const std::vector<std::int64_t>& cells) const override {
    return cells.empty() ? MacroFields{} : gather(cells);
  }

  Diagnostics diagnostics() const override {
    const Index n = m_cfg.cells();
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
          if (flags(i) == kSolid) return;
          double r, u[3];
          cell_moments<L, S>(f, idx, i, force, r, u, layout);
          m += r;
        },
        d.mass);
    Kokkos::parallel_reduce(
        "kolibri::diag_max_speed", Policy(0, n),
        KOKKOS_LAMBDA(const Index i, double& m) {
          if (flags(i) == kSolid) return;
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
          if (flags(i) == kSolid) return;
          double r, u[3];
          cell_moments<L, S>(f, idx, i, force, r, u, layout);
          const bool ok = math::is_finite(r) && math::is_finite(u[0]) && math::is_finite(u[1]) &&
                          math::is_finite(u[2]);
          if (!ok && i < b) b = i;
        },
        Kokkos::Min<Index>(bad));
    d.first_bad = bad < n ? bad : -1;
    if (m_fluid_cells == 0) d.max_speed = 0.0;  // the Max reducer's identity otherwise
    return d;
  }

  /// Post-collision populations, q-major (population q of cell n at q * cells + n), whatever the
  /// storage scheme. In place after a streaming step the state holds arriving (pre-collision)
  /// populations instead; those are returned as stored.
  std::vector<double> populations() const override {
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, m_f[m_cur]);
    const std::size_t n = std::size_t(m_cfg.cells());
    const bool opp = state_layout().opposite_slots;
    std::vector<double> out(h.extent(0));
    for (int q = 0; q < L::Q; ++q) {
      const std::size_t from = std::size_t(opp ? L::opposite(q) : q) * n, to = std::size_t(q) * n;
      for (std::size_t i = 0; i < n; ++i) out[to + i] = double(S::template load<L>(h(from + i), q));
    }
    return out;
  }

  double bytes_per_update() const override { return 2.0 * L::Q * sizeof(V) + sizeof(Flag); }
  double bytes_per_cell() const override {
    return (m_in_place ? 1.0 : 2.0) * L::Q * sizeof(V) + sizeof(Flag);
  }

 private:
  /// The equilibrium of the given fields (extent cells, or 1 for a uniform state) as the stored
  /// post-collision state.
  void set_equilibrium(Kokkos::View<const double*, MemSpace> rho, Kokkos::View<const double* [3], MemSpace> u) {
    m_arriving = false;
    const InitEquilibrium<L, S> init{m_f[m_cur], rho, u, m_idx, {m_force[0], m_force[1], m_force[2]}, m_in_place};
    Kokkos::parallel_for("kolibri::init_equilibrium",
                         Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<Index>>(0, m_cfg.cells()), init);
    Kokkos::fence();
  }

  Boundary<L, R> rules() const {
    return {m_flags, m_cfg.nx, m_cfg.ny, m_cfg.nz, DeviceFaces<R>::from(m_cfg.faces),
            {m_force[0], m_force[1], m_force[2]}};
  }
  StateLayout state_layout() const {
    if (!m_in_place) return {};
    return m_arriving ? StateLayout{false, +1.0} : StateLayout{true, -1.0};
  }

  MacroFields gather(const std::vector<std::int64_t>& list) const {
    const Index count = list.empty() ? m_cfg.cells() : Index(list.size());
    Kokkos::View<Index*, MemSpace> cells("kolibri::sample_cells", list.size());
    auto h_cells = Kokkos::create_mirror_view(cells);
    for (std::size_t i = 0; i < list.size(); ++i) h_cells(i) = list[i];
    Kokkos::deep_copy(cells, h_cells);
    Kokkos::View<double*, MemSpace> rho("kolibri::rho", count);
    Kokkos::View<double* [3], MemSpace> u("kolibri::u", count);
    Macroscopic<L, S> m{m_f[m_cur], m_flags, cells, rho, u, m_idx,
                        {m_force[0], m_force[1], m_force[2]}, m_cfg.initial.density, state_layout()};
    Kokkos::parallel_for("kolibri::macroscopic",
                         Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<Index>>(0, count), m);
    auto h_rho = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, rho);
    auto h_u = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, u);
    auto h_flags = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, m_flags);
    MacroFields out;
    if (list.empty()) out.nx = m_cfg.nx, out.ny = m_cfg.ny, out.nz = m_cfg.nz;
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

  SoA m_idx{};
  Kokkos::View<V*, MemSpace> m_f[2];
  int m_cur = 0;
  bool m_in_place = false;   ///< one array streamed in place (AA pattern)
  bool m_arriving = false;   ///< in place: the array holds arriving (pre-collision) populations
  Kokkos::View<R* [3], MemSpace> m_outlet_u;  ///< in place with outlets: boundary-cell velocities
  Kokkos::View<Flag*, MemSpace> m_flags;
  Kokkos::View<std::uint32_t*, MemSpace> m_boundary;  ///< cells with kBoundaryFluid
  R m_force[3]{};
};

}  // namespace kolibri
