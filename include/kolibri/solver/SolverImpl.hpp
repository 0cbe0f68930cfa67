// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The compiled solver for one (lattice, collision, precision): a level (grid, flags,
/// lists, bodies) and the streaming scheme that stores and steps its state. Instantiated in
/// src/solver/Solver*.cpp.
#pragma once

#include <kolibri/grid/Flags.hpp>
#include <kolibri/solver/Solver.hpp>
#include <kolibri/stepping/InPlace.hpp>
#include <kolibri/stepping/Level.hpp>
#include <kolibri/stepping/Moments.hpp>
#include <kolibri/stepping/ObstacleLoads.hpp>
#include <kolibri/stepping/TwoArrays.hpp>

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace kolibri {

/// \tparam L lattice, S storage policy (NativeStorage<double>, NativeStorage<float>, Fp16Storage),
/// C collision operator on S::real.
template <class L, class S, class C>
class SolverImpl final : public Solver {
 public:
  using R = typename S::real;
  using V = typename S::value_type;

  /// `dist` (multi-rank runs): cfg is this rank's local configuration
  /// (Decomposition::local_config). The configuration rules (config/Rules.hpp) were checked by
  /// make_solver.
  explicit SolverImpl(const SolverConfig& cfg, const Distribution* dist = nullptr)
      : SolverImpl(cfg, dist, build_flags<L>(cfg)) {}

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
    m_scheme->set_equilibrium(m_level, d_rho, d_u);
    m_level.outlets.reset();
  }

  void step(std::int64_t nsteps) override {
    m_scheme->step(m_level, m_steps, nsteps);
    Kokkos::fence();
    m_steps += nsteps;
  }
  Timeline step_timeline(std::int64_t nsteps) override {
    StepClock clock(int(std::min<std::int64_t>(nsteps, kMaxTimelineSteps)));
    m_level.clock = &clock;
    try {
      step(nsteps);
    } catch (...) {
      m_level.clock = nullptr;
      throw;
    }
    m_level.clock = nullptr;
    return clock.timeline();
  }

  void initialize(const std::vector<double>& rho,
                  const std::vector<std::array<double, 3>>& u) override {
    const Index n = m_level.grid.cells();
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
    m_scheme->set_equilibrium(m_level, d_rho, d_u);
    m_level.outlets.reset();
  }

  MacroFields macroscopic() const override {
    settle();
    if (!m_level.dist.comm) return gather({});
    // This rank's cells, x fastest, as bytes (rho, u, solid), assembled on rank 0.
    const MacroFields part = gather(real_cells());
    const std::size_t n = part.rho.size();
    std::vector<std::byte> bytes(n * (4 * sizeof(double) + 1));
    std::memcpy(bytes.data(), part.rho.data(), n * sizeof(double));
    std::memcpy(bytes.data() + n * sizeof(double), part.u.data(), n * 3 * sizeof(double));
    std::memcpy(bytes.data() + n * 4 * sizeof(double), part.solid.data(), n);
    std::vector<std::int64_t> counts;
    const auto all = m_level.dist.comm->gather(bytes, counts, 0);
    MacroFields out;
    if (!m_level.dist.comm->root()) return out;
    out.nx = m_cfg.global_n(0), out.ny = m_cfg.global_n(1), out.nz = m_cfg.global_n(2);
    const auto total = std::size_t(std::int64_t(out.nx) * out.ny * out.nz);
    out.rho.resize(total), out.u.resize(total), out.solid.resize(total);
    std::size_t off = 0;
    for (std::size_t r = 0; r < m_level.dist.boxes.size(); ++r) {
      const Box& b = m_level.dist.boxes[r];
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
    if (!m_level.dist.comm) return gather(cells);
    // Cells are global indices: each rank samples the ones it holds, the sum tells everyone.
    std::vector<std::int64_t> local;
    std::vector<std::size_t> where;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      const Index c = m_level.grid.from_global(m_level.grid.global_coords_of(cells[i]));
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
    m_level.dist.comm->sum(v);
    MacroFields out;
    out.nx = int(cells.size()), out.ny = out.nz = 1;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      out.rho.push_back(v[5 * i]);
      out.u.push_back({v[5 * i + 1], v[5 * i + 2], v[5 * i + 3]});
      out.solid.push_back(std::uint8_t(v[5 * i + 4] != 0.0));
    }
    return out;
  }

  Box state_box() const override { return m_level.grid.real_box(); }

  /// Packed on the device (this rank's cells, no ghosts), then one copy into the piece's bytes:
  /// the host holds the state once.
  StatePiece state(int& phase) const override {
    phase = m_scheme->phase();
    m_scheme->settle();
    const int count = m_scheme->slots().count;
    StatePiece p;
    p.box = state_box();
    const Index m = Index(p.box.cells());
    Kokkos::View<V*, MemSpace> packed("kolibri::state_packed", std::size_t(m) * count);
    const Kokkos::View<const V*, MemSpace> f = m_scheme->values();
    const StateSlots slot = state_slots();
    Kokkos::parallel_for(
        "kolibri::state_pack", m_level.range(0, m * count),
        KOKKOS_LAMBDA(const Index k) { packed(k) = f(slot(k, m)); });
    p.data.resize(std::size_t(m) * count * sizeof(V));
    Kokkos::View<V*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> h(
        reinterpret_cast<V*>(p.data.data()), std::size_t(m) * count);
    Kokkos::deep_copy(h, packed);
    return p;
  }

  void load_state(const StatePiece& p, int phase) override {
    const Streaming saved = streaming_of_phase(phase);
    if (saved != m_cfg.streaming)
      throw std::invalid_argument(std::string("the state was saved with streaming = \"") +
                                  to_string(saved) + "\"; set streaming to match");
    const int count = m_scheme->slots().count;
    const Box b = state_box();
    const Index m = Index(b.cells());
    if (!(p.box == b) || p.data.size() != std::size_t(m) * count * sizeof(V))
      throw std::invalid_argument("state piece does not match this rank's box or value type");
    Kokkos::View<V*, MemSpace> packed("kolibri::state_packed", std::size_t(m) * count);
    Kokkos::View<const V*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> h(
        reinterpret_cast<const V*>(p.data.data()), std::size_t(m) * count);
    Kokkos::deep_copy(packed, h);
    const Kokkos::View<V*, MemSpace> f = m_scheme->values();
    const StateSlots slot = state_slots();
    Kokkos::parallel_for(
        "kolibri::state_unpack", m_level.range(0, m * count),
        KOKKOS_LAMBDA(const Index k) { f(slot(k, m)) = packed(k); });
    m_scheme->loaded(phase);
    m_level.outlets.new_populations();
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
    const DenseGrid& g = m_level.grid;
    return {m_scheme->slots(), g, {b.n[0], b.n[1], b.n[2]}, {g.ghost[0], g.ghost[2], g.ghost[4]}};
  }

  std::string value_type() const override {
    return sizeof(V) == 8 ? "float64" : sizeof(V) == 4 ? "float32" : "float16";
  }
  int populations_per_cell() const override { return m_scheme->slots().count; }
  std::vector<BodyLoad> body_loads() const override { return m_level.ib.loads(); }
  std::vector<double> body_motion() const override { return m_level.ib.motion(); }
  void set_body_motion(const std::vector<double>& packed) override {
    m_level.ib.set_motion(packed);
  }
  std::vector<double> ib_coupling_forces() const override { return m_level.ib.coupling_forces(); }
  std::string set_ib_coupling_forces(const std::vector<double>& forces) override {
    return m_level.ib.set_coupling_forces(forces);
  }
  std::vector<double> outlet_state() const override { return m_level.outlets.state(); }
  void set_outlet_state(const std::vector<double>& s) override { m_level.outlets.set_state(s); }

  std::vector<BodyLoad> obstacle_loads() const override {
    const auto& obstacles = m_cfg.obstacles;
    if (obstacles.empty()) return {};
    settle();
    if (m_level.dist.comm && any_link_rules(obstacles))  // collective: decided alike on every rank
      m_scheme->fill_ghosts();
    const DenseGrid& g = m_level.grid;
    LinkMomentum<L, S, C> sum{{},  // the reduction (LinkSumsReduction)
                              m_scheme->values(),
                              m_scheme->slots(),
                              m_scheme->layout(),
                              CollisionFactory<C>::make(m_cfg),
                              {m_level.force[0], m_level.force[1], m_level.force[2]},
                              m_link_cell,
                              m_link_dir,
                              m_link_distance,
                              m_link_term,
                              m_link_wall_u,
                              m_link_slot,
                              m_scheme->link_leaving(),
                              g,
                              {g.origin[0] + 0.5, g.origin[1] + 0.5, g.origin[2] + 0.5},
                              {0.0, 0.0, 0.0}};
    std::vector<double> v(6 * obstacles.size(), 0.0);
    for (std::size_t k = 0; k < obstacles.size(); ++k) {
      const auto c = obstacle_centre(obstacles[k]);
      for (int d = 0; d < 3; ++d) sum.centre[d] = c[std::size_t(d)];
      LinkSums s;
      if (m_link_start[k + 1] > m_link_start[k])
        Kokkos::parallel_reduce("kolibri::obstacle_loads",
                                m_level.range(m_link_start[k], m_link_start[k + 1]), sum, s);
      for (int j = 0; j < 6; ++j) v[6 * k + std::size_t(j)] = s.total(j);
    }
    if (m_level.dist.comm) m_level.dist.comm->sum(v);
    std::vector<BodyLoad> out(obstacles.size());
    for (std::size_t k = 0; k < obstacles.size(); ++k) {
      out[k].name = obstacle_name(obstacles, k);
      out[k].centre = obstacle_centre(obstacles[k]);
      for (int d = 0; d < 3; ++d) {
        out[k].force[std::size_t(d)] = v[6 * k + std::size_t(d)];
        out[k].torque[std::size_t(d)] = v[6 * k + 3 + std::size_t(d)];
      }
    }
    return out;
  }
  IbStats ib_stats() const override { return m_level.ib.stats(); }
  double exchange_time_per_step(int repeats) override {
    return m_scheme->exchange_time_per_step(repeats);
  }

  Diagnostics diagnostics() const override {
    settle();
    const Index n = m_level.grid.cells();
    const Kokkos::View<const V*, MemSpace> f = m_scheme->values();
    const auto flags = m_level.flags;
    const Slots idx = m_scheme->slots();
    const R force[3] = {m_level.force[0], m_level.force[1], m_level.force[2]};
    const StateLayout layout = m_scheme->layout();
    Diagnostics d;
    const auto cells = m_level.range(0, n);
    Kokkos::parallel_reduce(
        "kolibri::diag_mass", cells,
        KOKKOS_LAMBDA(const Index i, double& m) {
          if (!is_updated(flags(i))) return;
          double r, u[3];
          cell_moments<L, S>(f, idx, i, force, r, u, layout);
          m += r;
        },
        d.mass);
    Kokkos::parallel_reduce(
        "kolibri::diag_max_speed", cells,
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
        "kolibri::diag_first_bad", cells,
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
    d.first_bad = bad < n ? m_level.grid.to_global(bad) : -1;
    if (m_level.dist.comm) {
      const auto& c = *m_level.dist.comm;
      d.mass = c.sum(d.mass);
      d.max_speed = c.max(d.max_speed);
      const std::int64_t none = std::numeric_limits<std::int64_t>::max();
      const std::int64_t first = c.min(d.first_bad < 0 ? none : d.first_bad);
      d.first_bad = first == none ? -1 : first;
    }
    return d;
  }

  std::array<double, 3> momentum() const override {
    settle();
    const Kokkos::View<const V*, MemSpace> f = m_scheme->values();
    const auto flags = m_level.flags;
    const Slots idx = m_scheme->slots();
    const R force[3] = {m_level.force[0], m_level.force[1], m_level.force[2]};
    const StateLayout layout = m_scheme->layout();
    std::array<double, 3> j{0.0, 0.0, 0.0};
    for (int d = 0; d < L::D; ++d) {
      Kokkos::parallel_reduce(
          "kolibri::momentum", m_level.range(0, m_level.grid.cells()),
          KOKKOS_LAMBDA(const Index i, double& sum) {
            if (!is_updated(flags(i))) return;
            double r, u[3];
            cell_moments<L, S>(f, idx, i, force, r, u, layout);
            sum += r * u[d];
          },
          j[std::size_t(d)]);
      if (m_level.dist.comm) j[std::size_t(d)] = m_level.dist.comm->sum(j[std::size_t(d)]);
    }
    return j;
  }

  FlowStatistics flow_statistics() const override {
    const DenseGrid& g = m_level.grid;
    for (int side : g.ghost)
      if (side != 0) return Solver::flow_statistics();  // a piece of the domain: gathered
    settle();
    const Index n = g.cells();
    // The fields for the differences: 32 bytes a cell while the row is reduced (kolibri check
    // counts them), every cell written before it is read.
    Kokkos::View<double*, MemSpace> rho(
        Kokkos::view_alloc("kolibri::statistics_rho", Kokkos::WithoutInitializing), n);
    Kokkos::View<double* [3], MemSpace> u(
        Kokkos::view_alloc("kolibri::statistics_u", Kokkos::WithoutInitializing), n);
    const R* force = m_level.force;
    Macroscopic<L, S> m{m_scheme->values(),
                        m_level.flags,
                        Kokkos::View<const Index*, MemSpace>(),
                        rho,
                        u,
                        m_scheme->slots(),
                        {force[0], force[1], force[2]},
                        m_cfg.initial.density,
                        m_scheme->layout(),
                        {m_level.ib.force()}};
    Kokkos::parallel_for("kolibri::statistics_fields", m_level.range(0, n), m);
    CellStatistics cell{rho, u, m_level.flags, g, {}};
    const FaceTypes types(m_cfg.domain_faces());
    for (int f = 0; f < 6; ++f) cell.type[f] = types.type[f];
    FlowStatistics s;
    Kokkos::parallel_reduce(
        "kolibri::statistics_energy", m_level.range(0, n),
        KOKKOS_LAMBDA(const Index i, double& e) { e += cell.energy(i); }, s.kinetic_energy);
    Kokkos::parallel_reduce(
        "kolibri::statistics_enstrophy", m_level.range(0, n),
        KOKKOS_LAMBDA(const Index i, double& e) { e += cell.enstrophy(i); }, s.enstrophy);
    if (m_fluid_cells == 0) return {};
    s.kinetic_energy /= double(m_fluid_cells);
    s.enstrophy /= double(m_fluid_cells);
    return s;
  }

  /// One cell's share of the flow statistics (as the host flow_statistics: central differences,
  /// wrapped across periodic faces, one-sided at the others, solid neighbours at rest).
  struct CellStatistics {
    Kokkos::View<const double*, MemSpace> rho;
    Kokkos::View<const double* [3], MemSpace> u;
    Kokkos::View<const Flag*, MemSpace> flags;
    GridCells grid;
    int type[6];
    KOKKOS_INLINE_FUNCTION double energy(Index i) const {
      if (flags(i) == kSolid) return 0.0;
      return 0.5 * rho(i) * (u(i, 0) * u(i, 0) + u(i, 1) * u(i, 1) + u(i, 2) * u(i, 2));
    }
    KOKKOS_INLINE_FUNCTION double enstrophy(Index i) const {
      if (flags(i) == kSolid) return 0.0;
      const Coord p = grid.coords(i);
      double grad[3][3] = {};  // grad[d][e] = d u_e / d x_d
      for (int d = 0; d < 3; ++d) {
        if (grid.n[d] == 1) continue;
        const int at[3] = {p.x, p.y, p.z};
        Index side[2] = {i, i};
        int span = 0;
        for (int k = 0; k < 2; ++k) {
          const int v = grid.wrap(at[d] + (k == 0 ? 1 : -1), d, type);
          if (v < 0) continue;  // one-sided at a bounded face
          int q[3] = {at[0], at[1], at[2]};
          q[d] = v;
          side[k] = grid.cell(q[0], q[1], q[2]);
          ++span;
        }
        if (span == 0) continue;
        for (int e = 0; e < 3; ++e) {
          const double a = flags(side[0]) == kSolid ? 0.0 : u(side[0], e);
          const double b = flags(side[1]) == kSolid ? 0.0 : u(side[1], e);
          grad[d][e] = (a - b) / span;
        }
      }
      const double wx = grad[1][2] - grad[2][1], wy = grad[2][0] - grad[0][2],
                   wz = grad[0][1] - grad[1][0];
      return 0.5 * (wx * wx + wy * wy + wz * wz);
    }
  };

  std::vector<double> populations() const override { return m_scheme->populations(m_level); }

  double bytes_per_update() const override {
    return 2.0 * m_scheme->slots().count * sizeof(V) + sizeof(Flag);
  }
  double bytes_per_cell() const override {
    return m_scheme->state_bytes_per_cell(m_level) + m_level.bytes_per_cell();
  }

 private:
  SolverImpl(const SolverConfig& cfg, const Distribution* dist, const std::vector<Flag>& host_flags)
      : Solver(cfg), m_level(cfg, dist, host_flags), m_scheme(make_scheme(cfg, host_flags)) {
    m_fluid_cells = m_level.fluid_cells;
    if (!cfg.obstacles.empty()) {
      const ObstacleLinks links =
          obstacle_links<L>(m_level.grid, cfg.faces, host_flags, cfg.obstacles);
      m_link_cell = to_device(links.cell, "kolibri::obstacle_link_cells");
      m_link_dir = to_device(links.dir, "kolibri::obstacle_link_directions");
      m_link_distance = to_device(links.distance, "kolibri::obstacle_link_distances");
      m_link_term = to_device(links.term, "kolibri::obstacle_link_terms");
      m_link_wall_u = to_device(links.wall_velocity, "kolibri::obstacle_link_wall_velocities");
      if (m_level.link_cells.extent(0) > 0) {  // rule links: their cells' rows of link rules
        const auto rows =
            Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, m_level.link_cells);
        const auto list =
            Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, m_level.boundary);
        std::unordered_map<std::uint32_t, std::int32_t> row_of;  // cell -> row
        for (std::size_t r = 0; r < rows.extent(0); ++r) row_of[list(rows(r))] = std::int32_t(r);
        std::vector<std::int32_t> slot(links.cell.size(), -1);
        for (std::size_t o = 0; o < cfg.obstacles.size(); ++o)
          if (cfg.obstacles[o].link_rules())
            for (auto k = links.start[o]; k < links.start[o + 1]; ++k)
              slot[std::size_t(k)] = row_of.at(links.cell[std::size_t(k)]);
        m_link_slot = to_device(slot, "kolibri::obstacle_link_rows");
      }
      m_link_start = links.start;
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

  std::unique_ptr<Scheme<L, S>> make_scheme(const SolverConfig& cfg,
                                            const std::vector<Flag>& host_flags) const {
    switch (cfg.streaming) {
      case Streaming::TwoArray:
        return std::make_unique<TwoArrays<L, S, C>>(cfg, m_level, host_flags);
      case Streaming::InPlace:
        return std::make_unique<InPlace<L, S, C>>(cfg, m_level, host_flags);
      case Streaming::Moments:
        if constexpr (kMomentScheme<S, C>)
          return std::make_unique<Moments<L, S, C>>(cfg, m_level, host_flags);
        break;
    }
    throw std::logic_error("SolverImpl: no " + std::string(to_string(cfg.streaming)) +
                           " scheme for this operator and storage (make_solver checks the rules)");
  }

  void settle() const { m_scheme->settle(); }

  /// Local indices of the cells this rank owns (no ghosts), x fastest.
  std::vector<std::int64_t> real_cells() const {
    const Box b = m_level.grid.real_box();
    std::vector<std::int64_t> list;
    list.reserve(std::size_t(b.cells()));
    m_level.grid.for_each_in(b, [&](Index c) { list.push_back(c); });
    return list;
  }

  MacroFields gather(const std::vector<std::int64_t>& list) const {
    const Index count = list.empty() ? m_level.grid.cells() : Index(list.size());
    Kokkos::View<Index*, MemSpace> cells("kolibri::sample_cells", list.size());
    auto h_cells = Kokkos::create_mirror_view(cells);
    for (std::size_t i = 0; i < list.size(); ++i) h_cells(i) = list[i];
    Kokkos::deep_copy(cells, h_cells);
    Kokkos::View<double*, MemSpace> rho("kolibri::rho", count);
    Kokkos::View<double* [3], MemSpace> u("kolibri::u", count);
    const R* force = m_level.force;
    Macroscopic<L, S> m{m_scheme->values(),
                        m_level.flags,
                        cells,
                        rho,
                        u,
                        m_scheme->slots(),
                        {force[0], force[1], force[2]},
                        m_cfg.initial.density,
                        m_scheme->layout(),
                        {m_level.ib.force()}};  // empty without bodies
    Kokkos::parallel_for("kolibri::macroscopic", m_level.range(0, count), m);
    auto h_rho = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, rho);
    auto h_u = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, u);
    auto h_flags = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, m_level.flags);
    MacroFields out;
    if (list.empty())
      out.nx = m_level.grid.n[0], out.ny = m_level.grid.n[1], out.nz = m_level.grid.n[2];
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

  Level<L, S> m_level;                     ///< the grid, flags, lists and bodies
  std::unique_ptr<Scheme<L, S>> m_scheme;  ///< the stored state and how it is stepped
  /// Obstacle links (obstacle_links): fluid cell, direction, obstacle k's from m_link_start[k].
  Kokkos::View<std::uint32_t*, MemSpace> m_link_cell;
  Kokkos::View<std::uint8_t*, MemSpace> m_link_dir;
  Kokkos::View<double*, MemSpace> m_link_distance;  ///< ObstacleLinks::distance
  Kokkos::View<double*, MemSpace> m_link_term;      ///< ObstacleLinks::term
  Kokkos::View<double*, MemSpace> m_link_wall_u;    ///< ObstacleLinks::wall_velocity
  /// Each link's row of link rules (LinkRules) where its obstacle has them (-1 elsewhere; empty
  /// without link rules): where the in-place scheme keeps its f*_k (Scheme::link_leaving).
  Kokkos::View<std::int32_t*, MemSpace> m_link_slot;
  std::vector<std::int64_t> m_link_start;
};

}  // namespace kolibri
