// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The solver of a refined grid (mahmoud2024): the levels of refine/Octree.hpp on the
/// device, each with its two population arrays and its collision operator (tau rescaled so the
/// viscosity is the same everywhere), stepped by the recursive cycle of docs/theory.md, "Grid
/// refinement": a level steps between the two steps of the level below it, one fused launch
/// (refine/LevelStep.hpp) a level step. Fields, probes and reductions see the deck's box (level
/// 0): a level-0 cell holds the volume average of the leaves inside it. On several ranks each
/// rank steps its range of every level's leaves, holds only those leaves and the ones its cells
/// read, numbered anew, and exchanges blocks after each level step (refine/LevelRanks.hpp); fields,
/// checkpoints and loads are those of one rank, bit for bit.
#pragma once

#include <kolibri/collision/Factory.hpp>
#include <kolibri/config/Memory.hpp>
#include <kolibri/core/Backend.hpp>
#include <kolibri/grid/CellLists.hpp>
#include <kolibri/ib/Immersed.hpp>
#include <kolibri/parallel/Halo.hpp>
#include <kolibri/refine/LevelBodies.hpp>
#include <kolibri/refine/LevelOutlets.hpp>
#include <kolibri/refine/LevelRanks.hpp>
#include <kolibri/refine/LevelStep.hpp>
#include <kolibri/refine/Octree.hpp>
#include <kolibri/refine/RefinedGrid.hpp>
#include <kolibri/solver/Halted.hpp>
#include <kolibri/solver/Solver.hpp>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

namespace kolibri {

namespace Impl {
template <class L, class S, class C>
std::unique_ptr<Solver> make_refined_of(const SolverConfig& cfg, const Distribution* dist);
}  // namespace Impl

/// \brief A level's cells as the reductions read them (copied into their kernels): density and
/// velocity of the fluid ones from the level's current state, with the bodies' force on the
/// finest level.
template <class L, class S>
struct LevelCells {
  using R = typename S::real;
  static constexpr int SX = refine_block_shift(L::D);
  static constexpr int VS = SX * L::D;
  Kokkos::View<const typename S::value_type*, MemSpace> f;
  Kokkos::View<const std::uint8_t*, MemSpace> flags;
  Slots idx;
  R force[3];
  const std::int32_t* origin = nullptr;  ///< leaf slot -> block position (the bodies' force)
  LevelBodyForce<R> body;
  /// False where cell t is not fluid; else its rho and u.
  KOKKOS_INLINE_FUNCTION bool operator()(const Index t, double& rho, double (&u)[3]) const {
    if (flags(t) != kLevelFluid) return false;
    R F[3] = {force[0], force[1], force[2]};
    if (body.f != nullptr) {
      int p[3];
      level_position<L::D, SX>(origin, t >> VS, t & ((Index(1) << VS) - 1), p);
      body.template add<L::D>(p, F);
    }
    cell_moments<L, S>(f, idx, t, F, rho, u);
    return true;
  }
};

/// \brief The post-collision population j of cell m of the bodies' box (LevelBodyBox, x
/// fastest) in the finest level's state `f` (level step Step's layout), for the bodies' node
/// kernel (ImmersedBoundary::apply_with): through the leaf slot of each block of the box (-1:
/// none, read as 0; the nodes that matter read fluid cells of the level only: level_body_box).
template <class Step>
struct LevelDeparting {
  using R = typename Step::R;
  const typename Step::V* f = nullptr;
  const std::int32_t* slot = nullptr;
  int n[3] = {1, 1, 1};       ///< the box's cells
  int blocks[3] = {1, 1, 1};  ///< its blocks
  KOKKOS_INLINE_FUNCTION R operator()(const Index m, const int j) const {
    const Coord c = coords_in(n, m);
    const std::int32_t s = slot[cell_in(blocks, c.x >> Step::SX, c.y >> Step::SX, c.z >> Step::SX)];
    if (s < 0) return R(0);
    return Step::Storage::template load<typename Step::Lattice>(
        f[Step::at(s, j, Step::place_of(c.x, c.y, c.z))], j);
  }
};

template <class L, class S, class C>
class RefinedSolver final : public Solver, public RefinedGrid {
 public:
  using R = typename S::real;
  using V = typename S::value_type;
  using Step = LevelStep<L, S, C>;
  static constexpr int VS = Step::VS;
  static constexpr Index TV = Step::TV;

  /// On the ranks of `dist` (its comm; the transport it names), or on one rank.
  explicit RefinedSolver(const SolverConfig& cfg, const Distribution* dist = nullptr)
      : Solver(cfg) {
    m_tree = build_octree(cfg);
    if (dist && dist->comm && dist->comm->size() > 1) m_comm = dist->comm;
    m_ranks = cut_levels(m_tree, m_comm ? m_comm->size() : 1);
    hold_levels(cfg);  // before allocating
    m_fluid_cells = m_tree.updates_per_step();
    set_faces(cfg);
    for (const RefinedLevel& h : m_tree.levels) {  // block position -> leaf slot (leaf_cell)
      auto& slots = m_leaf_of.emplace_back();
      for (std::size_t s = 0; s < h.leaf.size(); ++s)
        slots[block_key(h, h.leaf[s])] = std::int32_t(s);
    }
    for (const RefinedLevel& h : local().levels) {  // this rank's leaves of each level
      DeviceLevel d;
      d.cells = h.cells();
      d.all_cells = m_tree.levels[std::size_t(h.level)].cells();
      d.flags = to_device(h.flags, "kolibri::refine_flags");
      d.links = to_device(h.links, "kolibri::refine_links");
      d.neighbours = to_device(h.neighbours, "kolibri::refine_neighbours");
      d.coarse = to_device(h.coarse, "kolibri::refine_coarse");
      d.children = to_device(h.children, "kolibri::refine_children");
      std::vector<std::int32_t> origin;
      for (const auto& b : h.leaf) origin.insert(origin.end(), b.begin(), b.end());
      d.origin = to_device(origin, "kolibri::refine_origin");
      d.reentry_start = to_device(h.reentry_start, "kolibri::refine_reentry_start");
      d.reentry_key = to_device(h.reentry_key, "kolibri::refine_reentry_key");
      d.reentry_source = to_device(h.reentry_source, "kolibri::refine_reentry_source");
      d.reentry_value =
          Kokkos::View<V*, MemSpace>("kolibri::refine_reentry_value", h.reentry_key.size());
      d.general_cell = to_device(h.general_cell, "kolibri::refine_general_cell");
      d.general_dirs = to_device(h.general_dirs, "kolibri::refine_general_dirs");
      d.general_rule = to_device(h.general_rule, "kolibri::refine_general_rule");
      d.general_rule_start = to_device(h.general_rule_start, "kolibri::refine_general_rule_start");
      d.arrived = Kokkos::View<R*, MemSpace>(
          Kokkos::view_alloc("kolibri::refine_arrived", Kokkos::WithoutInitializing),
          h.general_rule.size());
      d.link_cell = to_device(h.link_cell, "kolibri::refine_link_cell");
      d.link_dir = to_device(h.link_dir, "kolibri::refine_link_dir");
      d.link_history =
          Kokkos::View<V*, MemSpace>("kolibri::refine_link_history", h.link_cell.size() << h.level);
      set_walls(h, d);
      for (auto& f : d.f)
        f = Kokkos::View<V*, MemSpace>(
            Kokkos::view_alloc("kolibri::refine_f", Kokkos::WithoutInitializing),
            std::size_t(d.cells * L::Q));
      set_link_loads(h.level, d);
      SolverConfig at = cfg;
      at.tau = level_tau(cfg.tau, h.level);
      at.acm_viscosity = cfg.acm_viscosity * double(1 << h.level);  // a lattice viscosity
      d.op = CollisionFactory<C>::make(at);
      const double scale = 1.0 / double(1 << h.level);  // a force per mass: dt^2 / dx
      for (int k = 0; k < 3; ++k) d.force[k] = R(cfg.force[std::size_t(k)] * scale);
      d.volume = std::ldexp(1.0, -L::D * h.level);
      own_range(std::size_t(h.level), d);
      m_levels.push_back(d);
    }
    if (m_comm) {
      const auto blocks = level_exchange(m_tree, m_ranks, m_comm->rank());
      for (std::size_t l = 0; l < blocks.size(); ++l) {
        m_exchange.emplace_back(*m_comm, exchange_lists(blocks[l], l), dist->device_buffers,
                                dist->nccl);
        if (m_exchange.back().active()) split_range(l, blocks[l], m_levels[l]);
        for (const LevelPeerBlocks& p : blocks[l])
          for (const std::uint64_t read : p.send_cells)
            m_sent_per_step +=
                double(std::int64_t(std::popcount(read)) << l) * double(L::Q * Index(sizeof(V)));
      }
    }
    set_outlets(cfg);
    if (!cfg.bodies.empty()) set_bodies(cfg, dist);
    if (cfg.initial.kind == InitialCondition::Kind::Uniform) {
      const auto n = std::size_t(cfg.cells());
      initialize(std::vector<double>(n, cfg.initial.density),
                 std::vector<std::array<double, 3>>(n, cfg.initial.velocity));
    } else {
      std::vector<double> rho;
      std::vector<std::array<double, 3>> u;
      initial_fields(cfg, rho, u);
      initialize(rho, u);
    }
  }

  const Octree& octree() const override { return m_tree; }
  std::optional<std::string> travel_ahead(const std::int64_t from,
                                          const std::int64_t to) const override {
    if (!m_ib) return std::nullopt;
    return prescribed_travel_leaves(m_body_box, m_cfg, from, to);
  }

  /// n steps of level 0. Throws RunHalted, the steps before it taken, where a travelling body
  /// would leave the finest level in the next one (travel_check).
  void step(std::int64_t n) override {
    for (std::int64_t i = 0; i < n; ++i) {
      m_body_time = (m_steps + i) << m_body_box.level;
      if (!m_travelling.empty()) {
        const std::vector<double> motion = m_ib->motion();  // the free bodies', in body order
        if (const std::string why = travel_check(m_steps + i, motion); !why.empty()) {
          Kokkos::fence();
          m_steps += i;
          throw RunHalted(why);
        }
        if (m_comm) follow_bodies(motion);
      }
      for (std::size_t l = 0; l < m_levels.size(); ++l) m_levels[l].steps = (m_steps + i) << l;
      if (m_outlets.active()) step_outlets();
      advance(0, 0);
    }
    Kokkos::fence();
    m_steps += n;
  }

  /// Where the levels are cut among the ranks (empty on one rank).
  std::string ranks_report() const override {
    if (!m_comm) return {};
    const double mib = 1.0 / double(1 << 20);
    char sent[200];
    std::snprintf(sent, sizeof sent,
                  "; rank %d sends %.1f MiB a step of level 0 and holds %.1f MiB of the levels "
                  "(%.1f MiB on one rank)",
                  m_comm->rank(), m_sent_per_step * mib,
                  held_bytes(m_tree, m_held, bytes_per_cell()) * mib,
                  octree_bytes(m_tree, bytes_per_cell()) * mib);
    return level_ranks_report(m_tree, m_ranks) + sent;
  }

  /// Each level's exchange measured alone, times its steps in a step of level 0.
  double exchange_time_per_step(int repeats) override {
    double t = 0.0;
    for (std::size_t l = 0; l < m_exchange.size(); ++l)
      t += double(1 << l) * m_exchange[l].time_alone(m_levels[l].f[m_levels[l].cur], repeats);
    return m_comm ? m_comm->max(t) : t;
  }

  /// Fields on the deck's box, interpolated (trilinear between level-0 cell centres) to every
  /// leaf cell's centre (on several ranks, those the rank holds).
  void initialize(const std::vector<double>& rho,
                  const std::vector<std::array<double, 3>>& u) override {
    if (rho.size() != std::size_t(m_cfg.cells()) || u.size() != rho.size())
      throw std::invalid_argument("initialize: expected " + std::to_string(m_cfg.cells()) +
                                  " values per field");
    for (std::size_t l = 0; l < m_levels.size(); ++l) {
      DeviceLevel& d = m_levels[l];
      const RefinedLevel& h = local().levels[l];
      Kokkos::View<double*, MemSpace> d_rho("kolibri::refine_rho_init", std::size_t(d.cells));
      Kokkos::View<double* [3], MemSpace> d_u("kolibri::refine_u_init", std::size_t(d.cells));
      auto h_rho = Kokkos::create_mirror_view(d_rho);
      auto h_u = Kokkos::create_mirror_view(d_u);
      for (Index t = 0; t < d.cells; ++t) {
        const auto x = centre(h, t);
        double r = m_cfg.initial.density, v[3] = {0.0, 0.0, 0.0};
        if (h.flags[std::size_t(t)] == kLevelFluid) interpolate(rho, u, x, r, v);
        h_rho(t) = r;
        for (int k = 0; k < 3; ++k) h_u(t, k) = v[k];
      }
      Kokkos::deep_copy(d_rho, h_rho);
      Kokkos::deep_copy(d_u, h_u);
      InitEquilibrium<L, S, C> init{
          d.f[0], d_rho, d_u, slots(d), {d.force[0], d.force[1], d.force[2]}, false, d.op};
      Kokkos::parallel_for("kolibri::refine_init",
                           Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<Index>>(0, d.cells),
                           init);
      Kokkos::deep_copy(d.f[1], d.f[0]);
      d.cur = 0;
      for (std::size_t r = 0; r < (std::size_t(1) << l); ++r) record_links(int(l));
    }
    Kokkos::fence();
    m_outlets.reset();
  }

  /// Each rank's cells of the level from its device, gathered on rank 0 (collective; the other
  /// ranks get the level's number only).
  LevelFields level_fields(int l) const override {
    const DeviceLevel& d = m_levels[std::size_t(l)];
    const RefinedLevel& h = m_tree.levels[std::size_t(l)];
    const Index first = d.owned.first, n = d.owned.end - d.owned.first;  // this rank's numbers
    Kokkos::View<double* [4], Kokkos::LayoutRight, MemSpace> values("kolibri::refine_fields",
                                                                    std::size_t(n));
    const LevelCells<L, S> read = cells_of(d);
    const double rho0 = m_cfg.initial.density;
    Kokkos::parallel_for(
        "kolibri::refine_fields", Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<Index>>(0, n),
        KOKKOS_LAMBDA(const Index i) {
          double r = rho0, v[3] = {0.0, 0.0, 0.0};
          read(first + i, r, v);  // not fluid: rho0 and rest
          values(i, 0) = r;
          for (int k = 0; k < 3; ++k) values(i, 1 + k) = v[k];
        });
    const auto mine = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, values);
    LevelFields out;
    out.level = l;
    std::vector<double> all(m_comm && !m_comm->root() ? 0 : std::size_t(d.all_cells) * 4);
    gather_cells(std::size_t(l), mine.data(), 4, all.data());
    if (m_comm && !m_comm->root()) return out;
    out.centre.resize(std::size_t(d.all_cells));
    out.rho.resize(std::size_t(d.all_cells));
    out.u.resize(std::size_t(d.all_cells));
    out.flag = h.flags;
    for (Index t = 0; t < d.all_cells; ++t) {
      const double* v = all.data() + t * 4;
      out.centre[std::size_t(t)] = centre(h, t);
      out.rho[std::size_t(t)] = v[0];
      out.u[std::size_t(t)] = {v[1], v[2], v[3]};
    }
    return out;
  }

  int level_at(const std::array<double, 3>& x) const override {
    for (int l = int(m_levels.size()) - 1; l > 0; --l)
      if (leaf_cell(l, level_cell(l, x)) >= 0) return l;
    return 0;
  }

  /// Each cell from the rank that steps it.
  MacroFields level_cells(int l, const std::vector<std::int64_t>& cells) const override {
    const RefinedLevel& h = m_tree.levels[std::size_t(l)];
    const DeviceLevel& d = m_levels[std::size_t(l)];
    const std::size_t m = cells.size();
    std::vector<std::int32_t> leaf(m, -1);  // the level's cell number t, -1: not its leaf
    std::vector<std::int32_t> mine(m, -1);  // the same where this rank steps it
    for (std::size_t i = 0; i < m; ++i) {
      const std::int64_t c = cells[i], nx = h.n[0], ny = h.n[1];
      leaf[i] = leaf_cell(l, {int(c % nx), int((c / nx) % ny), int(c / (nx * ny))});
      const Index t = leaf[i] - d.shift;  // in this rank's numbers where it steps the cell
      if (leaf[i] >= 0 && t >= d.owned.first && t < d.owned.end) mine[i] = std::int32_t(t);
    }
    const auto at = to_device(mine, "kolibri::refine_probe_cells");
    Kokkos::View<double* [5], Kokkos::LayoutRight, MemSpace> values("kolibri::refine_probe_values",
                                                                    m);
    const LevelCells<L, S> read = cells_of(d);
    Kokkos::parallel_for(
        "kolibri::refine_probe",
        Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<Index>>(0, Index(m)),
        KOKKOS_LAMBDA(const Index i) {
          double r = 0.0, v[3] = {0.0, 0.0, 0.0};
          const bool fluid = at(i) >= 0 && read(Index(at(i)), r, v);
          values(i, 0) = fluid ? r : 0.0;
          for (int k = 0; k < 3; ++k) values(i, 1 + k) = fluid ? v[k] : 0.0;
          values(i, 4) = fluid ? 0.0 : 1.0;
        });
    const auto hv = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, values);
    std::vector<double> all(hv.data(), hv.data() + m * 5);
    if (m_comm) {  // each leaf's row from the rank that steps it
      std::vector<double> from(all.size());
      for (int r = 0; r < m_comm->size(); ++r) {
        if (r == m_comm->rank()) from.assign(hv.data(), hv.data() + m * 5);
        m_comm->bcast(from.data(), std::int64_t(from.size() * sizeof(double)), r);
        for (std::size_t i = 0; i < m; ++i)
          if (leaf[i] >= 0 && m_ranks.owner(l, leaf[i] >> VS) == r)
            std::copy(from.begin() + std::ptrdiff_t(5 * i),
                      from.begin() + std::ptrdiff_t(5 * i + 5),
                      all.begin() + std::ptrdiff_t(5 * i));
      }
    }
    return cell_rows(all);
  }

  /// Each level-0 cell: the volume average of the fluid leaf cells inside it (mass-weighted for
  /// the velocity); solid where none is fluid. On rank 0 (collective; empty on the others).
  MacroFields macroscopic() const override {
    std::vector<LevelFields> levels;
    for (std::size_t l = 0; l < m_levels.size(); ++l) levels.push_back(level_fields(int(l)));
    return deck_average(levels);
  }

  /// macroscopic() from every level's level_fields (rank 0's; empty on the others).
  MacroFields deck_average(const std::vector<LevelFields>& levels) const override {
    MacroFields m;
    if (m_comm && !m_comm->root()) return m;
    m.nx = m_cfg.nx, m.ny = m_cfg.ny, m.nz = m_cfg.nz;
    const auto n = std::size_t(m_cfg.cells());
    std::vector<double> mass(n, 0.0), vol(n, 0.0);
    std::vector<std::array<double, 3>> mom(n, {0.0, 0.0, 0.0});
    for (std::size_t l = 0; l < m_levels.size(); ++l) {
      const LevelFields& f = levels[l];
      const double v = m_levels[l].volume;
      for (std::size_t t = 0; t < f.rho.size(); ++t) {
        if (f.flag[t] != kLevelFluid) continue;
        const std::size_t i = deck_cell(f.centre[t]);
        mass[i] += v * f.rho[t], vol[i] += v;
        for (int k = 0; k < 3; ++k) mom[i][std::size_t(k)] += v * f.rho[t] * f.u[t][std::size_t(k)];
      }
    }
    m.rho.assign(n, m_cfg.initial.density);
    m.u.assign(n, {0.0, 0.0, 0.0});
    m.solid.assign(n, 1);
    for (std::size_t i = 0; i < n; ++i) {
      if (vol[i] == 0.0) continue;
      m.solid[i] = 0;
      m.rho[i] = mass[i] / vol[i];
      for (int k = 0; k < 3; ++k) m.u[i][std::size_t(k)] = mom[i][std::size_t(k)] / mass[i];
    }
    return m;
  }

  /// The cells' averages (macroscopic()), taken on rank 0 and sent to every rank (collective).
  MacroFields sample(const std::vector<std::int64_t>& cells) const override {
    const MacroFields all = macroscopic();
    const std::size_t m = cells.size();
    std::vector<double> values(5 * m);  // rho, u, solid: a row a cell
    if (!m_comm || m_comm->root())
      for (std::size_t i = 0; i < m; ++i) {
        const auto c = std::size_t(cells[i]);
        values[5 * i] = all.rho[c];
        for (std::size_t k = 0; k < 3; ++k) values[5 * i + 1 + k] = all.u[c][k];
        values[5 * i + 4] = all.solid[c];
      }
    if (m_comm) m_comm->bcast(values.data(), std::int64_t(values.size() * sizeof(double)), 0);
    return cell_rows(values);
  }

  Diagnostics diagnostics() const override {
    Diagnostics d;
    d.mass = total_mass();
    for (std::size_t l = 0; l < m_levels.size(); ++l) {
      const DeviceLevel& lv = m_levels[l];
      const LevelCells<L, S> read = cells_of(lv);
      double top = 0.0;
      Index bad = lv.all_cells;  // the whole level's numbers, the same on every rank
      const Index shift = lv.shift;
      Kokkos::parallel_reduce(
          "kolibri::refine_max_speed", owned(lv),
          KOKKOS_LAMBDA(const Index t, double& m) {
            double r, u[3];
            if (!read(t, r, u)) return;
            const double s = math::sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
            if (s > m) m = s;
          },
          Kokkos::Max<double>(top));
      Kokkos::parallel_reduce(
          "kolibri::refine_first_bad", owned(lv),
          KOKKOS_LAMBDA(const Index t, Index& b) {
            double r, u[3];
            if (!read(t, r, u)) return;
            const bool ok = math::is_finite(r) && math::is_finite(u[0]) && math::is_finite(u[1]) &&
                            math::is_finite(u[2]);
            if (!ok && t + shift < b) b = t + shift;
          },
          Kokkos::Min<Index>(bad));
      if (m_comm) top = m_comm->max(top), bad = m_comm->min(std::int64_t(bad));
      if (m_tree.levels[l].fluid_cells > 0) d.max_speed = std::max(d.max_speed, top);
      if (bad < lv.all_cells && d.first_bad < 0) {
        const auto x = centre(m_tree.levels[l], bad);
        d.first_bad = std::int64_t(x[0]) +
                      std::int64_t(m_cfg.nx) *
                          (std::int64_t(x[1]) + std::int64_t(m_cfg.ny) * std::int64_t(x[2]));
      }
    }
    return d;
  }

  double total_mass() const override {
    double mass = 0.0;
    for (const DeviceLevel& lv : m_levels) {
      const LevelCells<L, S> read = cells_of(lv);
      double m = 0.0;
      Kokkos::parallel_reduce(
          "kolibri::refine_mass", owned(lv),
          KOKKOS_LAMBDA(const Index t, double& sum) {
            double r, u[3];
            if (read(t, r, u)) sum += r;
          },
          m);
      mass += m * lv.volume;
    }
    return m_comm ? m_comm->sum(mass) : mass;
  }

  std::array<double, 3> momentum() const override {
    std::array<double, 3> j{0.0, 0.0, 0.0};
    for (const DeviceLevel& lv : m_levels) {
      const LevelCells<L, S> read = cells_of(lv);
      for (int k = 0; k < L::D; ++k) {
        double sum = 0.0;
        Kokkos::parallel_reduce(
            "kolibri::refine_momentum", owned(lv),
            KOKKOS_LAMBDA(const Index t, double& s) {
              double r, u[3];
              if (read(t, r, u)) s += r * u[k];
            },
            sum);
        j[std::size_t(k)] += sum * lv.volume;
      }
    }
    if (m_comm)
      for (double& v : j) v = m_comm->sum(v);
    return j;
  }

  /// Every level's populations (leaf cells, slot-major), coarsest first: for tests.
  std::vector<double> populations() const override {
    std::vector<double> out;
    for (std::size_t l = 0; l < m_levels.size(); ++l) {
      const std::vector<V> h = whole_level(l);
      for (std::size_t i = 0; i < h.size(); ++i)
        out.push_back(double(S::template load<L>(h[i], int((i >> VS) % L::Q))));
    }
    return out;
  }

  /// Each immersed body's force and torque over the last step of level 0, in level-0 lattice
  /// units: the sums of the finest level's 2^l steps in it, whose momentum counts 2^(-D l) of a
  /// level-0 cell's mass (the torque's arms a 2^l-th of the level's); centre and turning rate
  /// back in level-0 cells and steps. With a free body the steps' loads are summed instead
  /// (apply_bodies): the torque then takes each step's forces at that step's arms.
  std::vector<BodyLoad> body_loads() const override {
    if (!m_ib) return {};
    std::vector<BodyLoad> out = m_step_loads.empty() ? m_ib->loads() : m_step_loads;
    const int l = m_body_box.level;
    const double mass = std::ldexp(1.0, -L::D * l), k = std::ldexp(1.0, l);
    for (BodyLoad& b : out)
      for (std::size_t d = 0; d < 3; ++d) {
        b.force[d] *= mass;
        b.torque[d] *= mass / k;
        b.centre[d] = (b.centre[d] + m_body_box.lo[d]) / k;
        b.angular_velocity[d] *= k;
      }
    return out;
  }
  /// The free bodies' motion (in the finest level's cells and steps: a checkpoint's, read back
  /// by the same deck's levels).
  std::vector<double> body_motion() const override {
    return m_ib ? m_ib->motion() : std::vector<double>{};
  }
  void set_body_motion(const std::vector<double>& packed) override {
    if (!m_ib) return Solver::set_body_motion(packed);
    m_ib->set_motion(packed);
  }
  std::vector<double> ib_coupling_forces() const override {
    return m_ib ? m_ib->coupling_forces() : std::vector<double>{};
  }
  std::string set_ib_coupling_forces(const std::vector<double>& forces) override {
    if (!m_ib) return Solver::set_ib_coupling_forces(forces);
    return m_ib->set_coupling_forces(forces);
  }
  /// The bodies' kernels' sizes and time; `steps` counts steps of level 0.
  IbStats ib_stats() const override {
    if (!m_ib) return {};
    IbStats s = m_ib->stats();
    s.steps >>= m_body_box.level;
    s.enclosed_volume = std::ldexp(s.enclosed_volume, -L::D * m_body_box.level);  // level-0 cells
    s.whole_box_on_every_rank = m_comm != nullptr;
    return s;
  }

  /// Each obstacle's force and torque over the last step of level 0, in level-0 lattice units:
  /// the links of the level it lies in (an obstacle lies inside one level) over that level's 2^l
  /// steps in it (LinkRecord), whose momentum counts 2^(-D l) of a level-0 cell's mass.
  std::vector<BodyLoad> obstacle_loads() const override {
    std::vector<BodyLoad> out(m_cfg.obstacles.size());
    for (std::size_t k = 0; k < out.size(); ++k) {
      out[k].name = obstacle_name(m_cfg.obstacles, k);
      out[k].centre = obstacle_centre(m_cfg.obstacles[k]);
      for (std::size_t l = 0; l < m_levels.size(); ++l) {
        const DeviceLevel& d = m_levels[l];
        const RefinedLevel& h = m_tree.levels[l];
        const Index a = h.link_start[k], b = h.link_start[k + 1];
        if (b == a) continue;
        const Kokkos::View<V*, MemSpace> history = link_history(l, d.link_history);
        const Kokkos::View<double*, MemSpace> back = link_history(l, d.link_back);
        // Each recorded step of the cycle; their sum times the mass of a cell (2^(-D l) of a
        // level-0 cell) is the momentum of one level-0 step.
        const double scale = std::ldexp(1.0, -L::D * h.level);
        const Index links = Index(d.link_cell.extent(0));
        for (Index row = 0; row < (Index(1) << h.level); ++row) {
          LevelLinkMomentum<L, S> sum;
          sum.f = history.data() + row * links;
          sum.cell = d.link_cell_whole.data();  // every link, merged from its rank
          sum.dir = d.link_dir.data();
          sum.origin = d.origin_whole.data();
          sum.width = 1.0 / double(1 << h.level);
          for (int c = 0; c < 3; ++c) sum.centre[c] = out[k].centre[std::size_t(c)];
          if (back.extent(0) > 0) {
            sum.back = back.data() + row * links;
            sum.distance = d.link_distance.data();
            sum.wall_u = d.link_wall_u.data();
          }
          LinkSums s;
          Kokkos::parallel_reduce("kolibri::refine_obstacle_loads",
                                  Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<Index>>(a, b),
                                  sum, s);
          for (int c = 0; c < 3; ++c) {
            out[k].force[std::size_t(c)] += scale * s.total(c);
            out[k].torque[std::size_t(c)] += scale * s.total(3 + c);
          }
        }
      }
    }
    return out;
  }

  /// A checkpoint's piece: each deck cell's populations as the volume average of the leaves
  /// inside it (as stored), for the record; the levels themselves go to level_state().
  StatePiece state(int& phase) const override {
    CheckpointState s = checkpoint_state();
    phase = s.phase;
    return std::move(s.piece);
  }
  /// The levels gathered on rank 0 once (level_state's form), and this rank's piece of their
  /// average (state): rank 0 averages and sends each rank its slab (collective).
  CheckpointState checkpoint_state() const override {
    CheckpointState s;
    s.phase = 0;  // two arrays, slot q
    s.levels = level_state();
    s.piece.box = state_box();
    const std::size_t mine = std::size_t(s.piece.box.cells()) * std::size_t(L::Q) * sizeof(V);
    s.piece.data.resize(mine);
    if (m_comm && !m_comm->root()) {
      m_comm->recv(s.piece.data.data(), std::int64_t(mine), 0);
      return s;
    }
    const std::vector<double> sum = level_average(reinterpret_cast<const V*>(s.levels.data()));
    const std::size_t n = std::size_t(m_cfg.cells());
    const int ranks = m_comm ? m_comm->size() : 1;
    for (int r = ranks - 1; r >= 0; --r) {  // rank 0's last: its piece stays
      const Box b = state_box(r);
      const std::size_t first =
          std::size_t(b.lo[0]) +
          std::size_t(m_cfg.nx) *
              (std::size_t(b.lo[1]) + std::size_t(m_cfg.ny) * std::size_t(b.lo[2]));
      const std::size_t cells = std::size_t(b.cells());
      std::vector<V> values(cells * std::size_t(L::Q));  // the slab, q-major
      for (std::size_t q = 0; q < std::size_t(L::Q); ++q)
        for (std::size_t i = 0; i < cells; ++i) values[q * cells + i] = V(sum[q * n + first + i]);
      if (r > 0)
        m_comm->send(values.data(), std::int64_t(values.size() * sizeof(V)), r);
      else
        std::memcpy(s.piece.data.data(), values.data(), mine);
    }
    return s;
  }
  /// The deck's box, or on several ranks this rank's slab of it along z (y in 2D), near-equal
  /// slabs in rank order: a checkpoint's pieces.
  Box state_box() const override { return state_box(m_comm ? m_comm->rank() : 0); }
  /// The pieces of a checkpoint hold the level-0 average only: the state comes back through
  /// set_level_state (Runner calls it after this).
  void load_state(const StatePiece&, int) override {}
  /// Every level's current populations as stored, coarsest first, on rank 0 (each rank's own
  /// leaves from it; empty on the other ranks). Collective.
  std::vector<std::byte> level_state() const override {
    std::size_t bytes = 0;
    for (const DeviceLevel& d : m_levels) bytes += std::size_t(d.all_cells * L::Q) * sizeof(V);
    std::vector<std::byte> out(m_comm && !m_comm->root() ? 0 : bytes);
    std::size_t at = 0;
    for (std::size_t l = 0; l < m_levels.size(); ++l) {
      const DeviceLevel& d = m_levels[l];
      gather_cells(l, own_state(d).data(), L::Q,
                   out.empty() ? nullptr : reinterpret_cast<V*>(out.data() + at));
      at += std::size_t(d.all_cells * L::Q) * sizeof(V);
    }
    return out;
  }
  /// The slots this rank holds of every level, as ranges of level_state's values.
  LevelSlice level_slice() const override {
    LevelSlice s;
    constexpr std::int64_t block = std::int64_t(L::Q) * TV;  // values a slot
    for (std::size_t l = 0; l < m_levels.size(); ++l) {
      const DeviceLevel& d = m_levels[l];
      for (std::size_t k = 0; k < std::size_t(d.cells >> VS); ++k) {
        const std::int64_t a = s.total + std::int64_t(global_slot(l, k)) * block;
        if (!s.ranges.empty() && s.ranges.back()[1] == a)
          s.ranges.back()[1] += block;
        else
          s.ranges.push_back({a, a + block});
      }
      s.total += std::int64_t(d.all_cells) * L::Q;
    }
    return s;
  }
  /// level_slice()'s values (a checkpoint's levels, this rank's part): each held slot's.
  void set_level_state(const std::vector<std::byte>& bytes) override {
    const LevelSlice slice = level_slice();
    const std::size_t want = std::size_t(slice.values()) * sizeof(V);
    if (bytes.size() != want)
      throw std::invalid_argument("the checkpoint's refined levels give " +
                                  std::to_string(bytes.size()) +
                                  " bytes; this deck's levels take " + std::to_string(want));
    std::size_t at = 0;
    constexpr std::size_t block = std::size_t(L::Q) * std::size_t(TV) * sizeof(V);
    for (DeviceLevel& d : m_levels) {
      auto f = Kokkos::create_mirror_view(d.f[d.cur]);
      const std::size_t held = std::size_t(d.cells >> VS) * block;
      std::memcpy(reinterpret_cast<std::byte*>(f.data()), bytes.data() + at, held);
      Kokkos::deep_copy(d.f[d.cur], f);
      at += held;
    }
  }
  /// The characteristic outlets' state (LevelOutlets::state; empty without such faces).
  std::vector<double> outlet_state() const override { return m_outlets.state(); }
  void set_outlet_state(const std::vector<double>& s) override {
    if (!m_outlets.active()) return Solver::set_outlet_state(s);
    m_outlets.set_state(s);
  }

  std::string value_type() const override { return sizeof(V) == 8 ? "float64" : "float32"; }
  int populations_per_cell() const override { return L::Q; }
  /// Read and write Q values, the flag and the links word; the unfused baseline writes the
  /// arriving values and reads them back (and the flag again) for its collision launch.
  double bytes_per_update() const override {
    const double fused = 2.0 * L::Q * sizeof(V) + 5.0;
    return m_cfg.refinement.kernels == LevelKernels::Fused ? fused : 2.0 * fused - 4.0;
  }
  /// Both arrays, flag and links a cell, and each block's tables spread over its cells
  /// (level_bytes_per_cell, which `kolibri check` reports before anything is built).
  double bytes_per_cell() const override {
    static_assert(TV == 64, "level_bytes_per_cell counts blocks of 64 cells");
    return level_bytes_per_cell(m_cfg);
  }

 private:
  /// A range of a level's cells [first, end) and the general cells and general rules in it (each
  /// list is in slot order).
  struct CellRange {
    Index first = 0, end = 0;
    Index general_first = 0, general_end = 0;
    Index rule_first = 0, rule_end = 0;
  };
  struct DeviceLevel {
    /// The cells this rank holds (their numbers, slot V + place, are its own: local_levels) and
    /// the whole level's; a cell of its own run is cell `shift` more of the whole level.
    Index cells = 0, all_cells = 0, shift = 0;
    Kokkos::View<std::uint8_t*, MemSpace> flags;
    Kokkos::View<std::uint32_t*, MemSpace> links;
    Kokkos::View<std::int32_t*, MemSpace> neighbours, coarse, children, origin;
    Kokkos::View<std::int32_t*, MemSpace> reentry_start, reentry_key, reentry_source;
    Kokkos::View<V*, MemSpace> reentry_value;
    Kokkos::View<std::int32_t*, MemSpace> general_cell;
    Kokkos::View<std::uint32_t*, MemSpace> general_dirs;
    Kokkos::View<std::int32_t*, MemSpace> general_rule, general_rule_start;
    Kokkos::View<R*, MemSpace> arrived;  ///< a value a general rule (LevelStep::arrived)
    Kokkos::View<std::int32_t*, MemSpace> link_cell;
    Kokkos::View<std::uint8_t*, MemSpace> link_dir;
    Kokkos::View<V*, MemSpace> link_history;  ///< 2^level rows of f*_k a link (LinkRecord)
    /// The obstacles' link rules (set_walls; empty where the level has none): a distance and a
    /// moving-wall term a general rule (LevelStep::wall_distance, wall_term), and for the loads
    /// each link's distance, term, wall velocity (three), cell behind, and 2^level rows of the
    /// value the wall returns (LinkRecord::back).
    Kokkos::View<float*, MemSpace> wall_distance, wall_term;
    Kokkos::View<double*, MemSpace> link_distance, link_term, link_wall_u, link_back;
    Kokkos::View<std::int32_t*, MemSpace> link_behind;
    Index link_row = 0;  ///< the row of the level's next step
    /// The obstacles' loads' view of the links (LevelLinkMomentum): each link's cell and each
    /// slot's block position in the whole level's numbers (on one rank link_cell and origin).
    Kokkos::View<std::int32_t*, MemSpace> link_cell_whole, origin_whole;
    Kokkos::View<V*, MemSpace> f[2];
    int cur = 0;
    std::int64_t steps = 0;  ///< the level's steps so far (its time times 2^level)
    C op{};
    R force[3] = {R(0), R(0), R(0)};
    LevelBodyForce<R> body_force;  ///< the immersed bodies' (the finest level; set_bodies)
    double volume = 1.0;           ///< a cell's volume in level-0 cells
    /// This rank's cells (all of them on one rank; LevelRanks) and its re-entry links.
    CellRange owned;
    Index reentry_first = 0, reentry_end = 0;
    /// Several ranks, `overlap`: the owned cells in three parts, the first and last holding the
    /// blocks the level sends (stepped first, on the exchange's instance), the middle stepped
    /// beside the exchange.
    bool overlap = false;
    CellRange lower, middle, upper;
  };

  static Slots slots(const DeviceLevel& d) { return Slots::csoa(d.cells, L::Q, int(TV)); }
  static LevelCells<L, S> cells_of(const DeviceLevel& d) {
    return {d.f[d.cur],      d.flags,     slots(d), {d.force[0], d.force[1], d.force[2]},
            d.origin.data(), d.body_force};
  }

  /// On several ranks, the leaves of every level this rank holds (m_held: level_held, and the
  /// bodies' box, whose blocks every rank's bodies' kernels read) and their levels in its own
  /// numbering (m_local), checked against the device's free memory before anything is
  /// allocated.
  void hold_levels(const SolverConfig& cfg) {
    if (!cfg.bodies.empty()) m_body_box = level_body_box(m_tree, cfg);
    const double free = double(device_free_memory());
    if (!m_comm) return check_levels_fit(m_tree, bytes_per_cell(), free);
    const int rank = m_comm->rank();
    m_held = rank_held(m_tree, m_ranks, rank, cfg.bodies.empty() ? nullptr : &m_body_box);
    check_held_fits(m_tree, m_ranks, rank, m_held, bytes_per_cell(), free);
    m_local = local_levels(m_tree, m_held);
    m_local_slot = held_index(m_tree, m_held);
  }
  /// The levels as this rank holds them: m_local on several ranks, the whole tree on one.
  const Octree& local() const { return m_comm ? m_local : m_tree; }
  /// Level l's slot s in this rank's numbers (-1: not held), and back.
  std::int32_t local_slot(const std::size_t l, const std::int64_t s) const {
    return m_comm ? m_local_slot[l][std::size_t(s)] : std::int32_t(s);
  }
  std::size_t global_slot(const std::size_t l, const std::size_t k) const {
    return m_comm ? std::size_t(m_held[l][k]) : k;
  }
  /// The obstacles' loads read each link's cell position in the whole level's numbers.
  void set_link_loads(const int l, DeviceLevel& d) const {
    d.link_cell_whole = d.link_cell, d.origin_whole = d.origin;
    if (!m_comm || d.link_cell.extent(0) == 0) return;
    const RefinedLevel& g = m_tree.levels[std::size_t(l)];
    std::vector<std::int32_t> origin;
    for (const auto& b : g.leaf) origin.insert(origin.end(), b.begin(), b.end());
    d.origin_whole = to_device(origin, "kolibri::refine_origin_whole");
    d.link_cell_whole = to_device(g.link_cell, "kolibri::refine_link_cell_whole");
  }
  /// This rank's cells of the level (the reductions').
  static Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<Index>> owned(const DeviceLevel& d) {
    return {d.owned.first, d.owned.end};
  }

  /// Cells [first, end) of level h with its general cells and rules.
  static CellRange cell_range(const RefinedLevel& h, const Index first, const Index end) {
    CellRange c;
    c.first = first, c.end = end;
    const auto& g = h.general_cell;
    c.general_first = std::lower_bound(g.begin(), g.end(), first) - g.begin();
    c.general_end = std::lower_bound(g.begin(), g.end(), end) - g.begin();
    c.rule_first = h.general_rule_start[std::size_t(c.general_first)];
    c.rule_end = h.general_rule_start[std::size_t(c.general_end)];
    return c;
  }
  /// Level l's cells [first, end) of the whole level's numbers with their general cells and
  /// rules (cell_range), in this rank's numbers (the cells of its own run: d.shift less).
  CellRange own_cells(const std::size_t l, const DeviceLevel& d, const Index first,
                      const Index end) const {
    CellRange c = cell_range(m_tree.levels[l], first, end);  // the lists keep their indices
    c.first -= d.shift, c.end -= d.shift;
    return c;
  }
  /// This rank's ranges of level l (m_ranks): its leaf slots' cells, general cells, rules and
  /// re-entry links.
  void own_range(const std::size_t l, DeviceLevel& d) const {
    const int rank = m_comm ? m_comm->rank() : 0;
    const auto& starts = m_ranks.slot_start[l];
    const std::int64_t s0 = starts[std::size_t(rank)], s1 = starts[std::size_t(rank) + 1];
    const Index k0 = s1 > s0 ? Index(local_slot(l, s0)) : 0;  // its first slot in its numbers
    d.shift = (Index(s0) - k0) << VS;
    d.owned = own_cells(l, d, Index(s0) << VS, Index(s1) << VS);
    const RefinedLevel& h = local().levels[l];
    if (!h.reentry_start.empty())
      d.reentry_first = h.reentry_start[std::size_t(k0)],
      d.reentry_end = h.reentry_start[std::size_t(k0 + (s1 - s0))];
  }
  /// Splits this rank's cells of level l around the blocks it sends (`peers`): the sent blocks
  /// in the first half of its range end the lower part, those in the second begin the upper.
  void split_range(const std::size_t l, const std::vector<LevelPeerBlocks>& peers,
                   DeviceLevel& d) const {
    const Index s0 = (d.owned.first + d.shift) >> VS, s1 = (d.owned.end + d.shift) >> VS;
    const Index mid = (s0 + s1) / 2;
    Index lower_end = s0, upper_first = s1;
    for (const LevelPeerBlocks& p : peers)
      for (const std::int32_t s : p.send) {
        if (s < mid)
          lower_end = std::max(lower_end, Index(s) + 1);
        else
          upper_first = std::min(upper_first, Index(s));
      }
    d.overlap = upper_first > lower_end;  // something to step beside the exchange
    if (!d.overlap) return;
    d.lower = own_cells(l, d, s0 << VS, lower_end << VS);
    d.middle = own_cells(l, d, lower_end << VS, upper_first << VS);
    d.upper = own_cells(l, d, upper_first << VS, s1 << VS);
  }

  /// A level's exchange lists: the Q values of each read cell of each block (its bit in the
  /// block's cells word), block by block, by peer, of level `level` in this rank's numbers.
  HaloLists exchange_lists(const std::vector<LevelPeerBlocks>& peers,
                           const std::size_t level) const {
    HaloLists out;
    auto add = [&](std::vector<Index>& list, const std::vector<std::int32_t>& slots,
                   const std::vector<std::uint64_t>& cells) {
      for (std::size_t i = 0; i < slots.size(); ++i) {
        const Index s = local_slot(level, slots[i]);
        for (int q = 0; q < L::Q; ++q)
          for (Index l = 0; l < TV; ++l)
            if ((cells[i] >> l) & 1u) list.push_back(Step::at(s, q, l));
      }
    };
    for (const LevelPeerBlocks& p : peers) {
      HaloMessage m;
      m.peer = p.peer;
      m.send_tag = m.recv_tag = 0;  // one message each way between two ranks an exchange
      const std::size_t s0 = out.send.size(), r0 = out.recv.size();
      add(out.send, p.send, p.send_cells);
      add(out.recv, p.recv, p.recv_cells);
      m.send = reinterpret_cast<const void*>(std::uintptr_t(s0 * sizeof(V)));
      m.recv = reinterpret_cast<void*>(std::uintptr_t(r0 * sizeof(V)));
      m.send_bytes = std::int64_t((out.send.size() - s0) * sizeof(V));
      m.recv_bytes = std::int64_t((out.recv.size() - r0) * sizeof(V));
      if (m.send_bytes >= (std::int64_t(1) << 31) || m.recv_bytes >= (std::int64_t(1) << 31))
        throw std::invalid_argument(
            "a refined level's exchange between two ranks is over 2 GiB: run on more ranks");
      out.messages.push_back(m);
    }
    return out;
  }

  /// Rows of 5 values a cell (rho, u, solid as 0 or 1) as a MacroFields of cells x 1 x 1.
  static MacroFields cell_rows(const std::vector<double>& rows) {
    MacroFields out;
    const std::size_t m = rows.size() / 5;
    out.nx = int(m), out.ny = out.nz = 1;
    for (std::size_t i = 0; i < m; ++i) {
      const double* v = rows.data() + 5 * i;
      out.rho.push_back(v[0]);
      out.u.push_back({v[1], v[2], v[3]});
      out.solid.push_back(std::uint8_t(v[4] != 0.0));
    }
    return out;
  }
  /// `mine` (`per_cell` values a cell of this rank's cells of level l, in order) from every
  /// rank into `all` on rank 0 (the level's values in cell order; nullptr on the other ranks).
  /// Collective.
  template <class T>
  void gather_cells(const std::size_t l, const T* mine, const std::size_t per_cell, T* all) const {
    const int me = m_comm ? m_comm->rank() : 0, ranks = m_comm ? m_comm->size() : 1;
    const auto start = [&](int r) {
      return m_comm ? (std::size_t(m_ranks.slot_start[l][std::size_t(r)]) << VS) * per_cell : 0;
    };
    const std::size_t own =
        m_comm ? start(me + 1) - start(me) : std::size_t(m_levels[l].all_cells) * per_cell;
    if (me != 0) return m_comm->send(mine, std::int64_t(own * sizeof(T)), 0);
    std::copy(mine, mine + own, all + start(0));
    for (int r = 1; r < ranks; ++r)
      m_comm->recv(all + start(r), std::int64_t((start(r + 1) - start(r)) * sizeof(T)), r);
  }
  /// This rank's own cells' current state of level d (as stored, slot-major) on the host.
  std::vector<V> own_state(const DeviceLevel& d) const {
    const auto range =
        std::make_pair(std::size_t(d.owned.first * L::Q), std::size_t(d.owned.end * L::Q));
    const auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{},
                                                       Kokkos::subview(d.f[d.cur], range));
    return std::vector<V>(h.data(), h.data() + h.extent(0));
  }
  /// Level l's current state, every cell (as stored, slot-major), on every rank: each rank's own
  /// cells from it, for tests (populations()). Collective.
  std::vector<V> whole_level(const std::size_t l) const {
    std::vector<V> out(std::size_t(m_levels[l].all_cells * L::Q));
    gather_cells(l, own_state(m_levels[l]).data(), L::Q, out.data());
    if (m_comm) m_comm->bcast(out.data(), std::int64_t(out.size() * sizeof(V)), 0);
    return out;
  }
  /// Each deck cell's populations (q-major: q * cells + cell) as the volume average of the leaf
  /// cells inside it (not outside the levels), from every level's state `levels` (level_state's
  /// form).
  std::vector<double> level_average(const V* levels) const {
    const std::size_t n = std::size_t(m_cfg.cells());
    std::vector<double> sum(n * std::size_t(L::Q), 0.0);
    for (std::size_t l = 0; l < m_levels.size(); ++l) {
      const DeviceLevel& d = m_levels[l];
      const RefinedLevel& h = m_tree.levels[l];
      for (Index t = 0; t < d.all_cells; ++t) {
        if (h.flags[std::size_t(t)] == kLevelOutside) continue;
        const std::size_t cell = deck_cell(centre(h, t));
        const Index s = t >> VS, place = t & (TV - 1);
        for (int q = 0; q < L::Q; ++q)
          sum[std::size_t(q) * n + cell] +=
              d.volume * double(levels[std::size_t(Step::at(s, q, place))]);
      }
      levels += std::size_t(d.all_cells * L::Q);
    }
    return sum;
  }
  /// The deck's box, or on several ranks rank r's slab of it (state_box).
  Box state_box(const int r) const {
    Box b;
    b.n = {m_cfg.nx, m_cfg.ny, m_cfg.nz};
    if (m_comm) {
      const std::size_t a = std::size_t(m_ranks.axis);
      const std::int64_t n = b.n[a], size = m_comm->size();
      b.lo[a] = int(r * n / size);
      b.n[a] = int((r + 1) * n / size) - b.lo[a];
    }
    return b;
  }

  /// Level l's link history `history` (link_history or link_back: rows of a value a link), on
  /// several ranks each link's values from the rank that steps its cell (the others' copies of
  /// it are stale). Collective.
  template <class T>
  Kokkos::View<T*, MemSpace> link_history(std::size_t l,
                                          const Kokkos::View<T*, MemSpace>& history) const {
    const RefinedLevel& h = m_tree.levels[l];
    const std::size_t links = h.link_cell.size();
    if (!m_comm || links == 0 || history.extent(0) == 0) return history;
    const auto mine = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, history);
    const std::size_t values = mine.extent(0), rows = values / links;
    std::vector<T> merged(values), from(values);
    for (int r = 0; r < m_comm->size(); ++r) {
      if (r == m_comm->rank()) std::copy(mine.data(), mine.data() + values, from.begin());
      m_comm->bcast(from.data(), std::int64_t(values * sizeof(T)), r);
      for (std::size_t i = 0; i < links; ++i)
        if (m_ranks.owner(int(l), h.link_cell[i] >> VS) == r)
          for (std::size_t row = 0; row < rows; ++row)
            merged[row * links + i] = from[row * links + i];
    }
    Kokkos::View<T*, MemSpace> out(
        Kokkos::view_alloc("kolibri::refine_link_history_merged", Kokkos::WithoutInitializing),
        values);
    const Kokkos::View<const T*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>> host(
        merged.data(), values);
    Kokkos::deep_copy(out, host);
    return out;
  }

  /// The cell of level l holding the point x (level-0 cells), clamped into the level's box (a
  /// point on its far face: the last cell).
  std::array<int, 3> level_cell(int l, const std::array<double, 3>& x) const {
    const RefinedLevel& h = m_tree.levels[std::size_t(l)];
    std::array<int, 3> p{0, 0, 0};
    for (std::size_t d = 0; d < 3; ++d)
      p[d] = std::clamp(int(std::floor(std::ldexp(x[d], l))), 0, h.n[d] - 1);
    return p;
  }
  /// Cell p of level l (inside its box) as the level's cell number (slot V + place) where it is a
  /// leaf cell of that level (fluid or solid); -1 where its block is not a leaf of the level.
  std::int32_t leaf_cell(int l, const std::array<int, 3>& p) const {
    const RefinedLevel& h = m_tree.levels[std::size_t(l)];
    const int sh = m_tree.shift, e = (1 << sh) - 1;
    const std::array<int, 3> b{p[0] >> sh, p[1] >> sh, p[2] >> sh};  // (p[2] = 0 in 2D)
    const auto it = m_leaf_of[std::size_t(l)].find(block_key(h, b));
    if (it == m_leaf_of[std::size_t(l)].end()) return -1;
    const int place = (p[0] & e) | ((p[1] & e) << sh) | (L::D == 3 ? (p[2] & e) << (2 * sh) : 0);
    const std::int32_t t = std::int32_t((Index(it->second) << VS) + place);
    return h.flags[std::size_t(t)] == kLevelOutside ? -1 : t;
  }
  static std::int64_t block_key(const RefinedLevel& h, const std::array<int, 3>& b) {
    return b[0] + std::int64_t(h.blocks[0]) * (b[1] + std::int64_t(h.blocks[1]) * b[2]);
  }

  /// The position of cell t of level h in the level's cells (level_position on the host).
  static std::array<int, 3> position(const RefinedLevel& h, Index t) {
    int p[3];
    level_position<L::D, Step::SX>(h.leaf[std::size_t(t >> VS)].data(), 0, t & (TV - 1), p);
    return {p[0], p[1], p[2]};
  }
  /// The centre of cell t of level h, in level-0 cells.
  std::array<double, 3> centre(const RefinedLevel& h, Index t) const {
    const std::array<int, 3> p = position(h, t);
    std::array<double, 3> x{0.5, 0.5, 0.5};
    for (int d = 0; d < L::D; ++d) x[std::size_t(d)] = (p[d] + 0.5) / double(1 << h.level);
    return x;
  }

  /// The deck cell (level 0, x fastest) holding the point x (level-0 cells): where a leaf's
  /// values go in the level-0 fields and in a checkpoint's pieces.
  std::size_t deck_cell(const std::array<double, 3>& x) const {
    return std::size_t(int(x[0])) +
           std::size_t(m_cfg.nx) *
               (std::size_t(int(x[1])) + std::size_t(m_cfg.ny) * std::size_t(int(x[2])));
  }

  /// Trilinear interpolation of level-0 fields at x (level-0 cells): between cell centres,
  /// wrapped across periodic faces and clamped at the others.
  void interpolate(const std::vector<double>& rho, const std::vector<std::array<double, 3>>& u,
                   const std::array<double, 3>& x, double& r, double (&v)[3]) const {
    const int n[3] = {m_cfg.nx, m_cfg.ny, m_cfg.nz};
    const auto periodic = m_cfg.periodic_axes();
    int i[3][2];
    double w[3][2];
    for (int d = 0; d < 3; ++d) {
      if (d >= L::D) {
        i[d][0] = i[d][1] = 0, w[d][0] = 1.0, w[d][1] = 0.0;
        continue;
      }
      const double s = x[std::size_t(d)] - 0.5;
      const int lo = int(std::floor(s));
      const double a = s - lo;
      for (int k = 0; k < 2; ++k) {
        int c = lo + k;
        if (periodic[std::size_t(d)])
          c = ((c % n[d]) + n[d]) % n[d];
        else
          c = std::clamp(c, 0, n[d] - 1);
        i[d][k] = c;
      }
      w[d][0] = 1.0 - a, w[d][1] = a;
    }
    r = 0.0, v[0] = v[1] = v[2] = 0.0;
    MacroFields shape;
    shape.nx = n[0], shape.ny = n[1], shape.nz = n[2];
    for (int a = 0; a < 2; ++a)
      for (int b = 0; b < 2; ++b)
        for (int c = 0; c < 2; ++c) {
          const double wt = w[0][a] * w[1][b] * w[2][c];
          if (wt == 0.0) continue;
          const std::size_t k = shape.index(i[0][a], i[1][b], i[2][c]);
          r += wt * rho[k];
          for (int d = 0; d < 3; ++d) v[d] += wt * u[k][std::size_t(d)];
        }
  }

  /// Level l's links' f*_k of the step just made into the next row of its link history (and
  /// where the level has walls' rules, the values they return).
  void record_links(int l) {
    DeviceLevel& d = m_levels[std::size_t(l)];
    const Index links = Index(d.link_cell.extent(0));
    if (links == 0) return;
    LinkRecord<L, S> record{d.f[d.cur].data(),     d.link_cell.data(), d.link_dir.data(),
                            d.link_history.data(), d.link_row,         links};
    record.first = d.owned.first, record.end = d.owned.end;  // the others' links: theirs
    if (d.link_back.extent(0) > 0) {
      record.back = d.link_back.data();
      record.distance = d.link_distance.data();
      record.term = d.link_term.data();
      record.behind = d.link_behind.data();
    }
    Kokkos::parallel_for(
        LinkRecordTag::label,
        Kokkos::RangePolicy<ExecSpace, LinkRecordTag, Kokkos::IndexType<Index>>(0, links), record);
    d.link_row = (d.link_row + 1) % (Index(1) << l);
  }

  /// The obstacles' link rules of level h on the device (nothing where it has none): each
  /// general rule's wall distance and term in the floats the dense box's kernels read
  /// (LinkRules), each link's in double as its loads take them (ObstacleLinks).
  static void set_walls(const RefinedLevel& h, DeviceLevel& d) {
    if (h.link_distance.empty()) return;
    const std::size_t links = h.link_cell.size();
    std::vector<double> distance(links), term(links), wall_u(3 * links);
    for (std::size_t i = 0; i < links; ++i) {
      distance[i] = double(float(h.link_distance[i]));
      term[i] = double(moving_wall_term<L>(L::opposite(h.link_dir[i]), h.link_wall_velocity[i]));
      for (std::size_t a = 0; a < 3; ++a) wall_u[3 * i + a] = h.link_wall_velocity[i][a];
    }
    d.link_distance = to_device(distance, "kolibri::refine_link_distance");
    d.link_term = to_device(term, "kolibri::refine_link_term");
    d.link_wall_u = to_device(wall_u, "kolibri::refine_link_wall_velocity");
    d.link_behind = to_device(h.link_behind, "kolibri::refine_link_behind");
    d.link_back = Kokkos::View<double*, MemSpace>("kolibri::refine_link_back", links << h.level);
    if (!has_wall_rules(h)) return;
    std::vector<float> rule_distance(h.general_rule.size(), 0.0f), rule_term(rule_distance);
    bool moving = false;
    for (std::size_t j = 0; j < h.rule_link.size(); ++j) {
      if (h.rule_link[j] < 0) continue;
      const std::size_t k = std::size_t(h.rule_link[j]);
      rule_distance[j] = float(h.link_distance[k]), rule_term[j] = float(term[k]);
      moving = moving || term[k] != 0.0;
    }
    d.wall_distance = to_device(rule_distance, "kolibri::refine_wall_distance");
    if (moving) d.wall_term = to_device(rule_term, "kolibri::refine_wall_term");
  }

  /// One step of level l (parity: its place in the step of level l - 1) after the first of
  /// the two steps of level l + 1, and before the second.
  void advance(int l, int parity) {
    const bool finer = std::size_t(l + 1) < m_levels.size();
    if (finer) advance(l + 1, 0);
    launch(l, parity);
    if (finer) advance(l + 1, 1);
  }

  void launch(int l, int parity) {
    DeviceLevel& d = m_levels[std::size_t(l)];
    if (m_ib && l == m_body_box.level) apply_bodies(d);
    if (parity == 0 && d.reentry_end > d.reentry_first)
      Kokkos::parallel_for(ReentrySaveTag::label,
                           Kokkos::RangePolicy<ExecSpace, ReentrySaveTag, Kokkos::IndexType<Index>>(
                               d.reentry_first, d.reentry_end),
                           ReentrySave<V, VS, L::Q>{d.f[d.cur].data(), d.reentry_source.data(),
                                                    d.reentry_key.data(), d.reentry_value.data()});
    Step k;
    k.src = d.f[d.cur].data();
    k.dst = d.f[1 - d.cur].data();
    k.flags = d.flags.data();
    k.links = d.links.data();
    k.neighbours = d.neighbours.data();
    k.coarse = d.coarse.data();
    k.children = d.children.data();
    k.origin = d.origin.data();
    k.general_cell = d.general_cell.data();
    k.general_dirs = d.general_dirs.data();
    k.general_rule = d.general_rule.data();
    k.general_rule_start = d.general_rule_start.data();
    k.arrived = d.arrived.data();
    k.wall_distance = d.wall_distance.extent(0) > 0 ? d.wall_distance.data() : nullptr;
    k.wall_term = d.wall_term.extent(0) > 0 ? d.wall_term.data() : nullptr;
    k.reentry_start = d.reentry_start.data();
    k.reentry_key = d.reentry_key.data();
    k.reentry_value = d.reentry_value.data();
    if (l > 0) {  // the coarser level's state at the start of its step
      const DeviceLevel& up = m_levels[std::size_t(l - 1)];
      k.coarse_state = up.f[parity == 0 ? up.cur : 1 - up.cur].data();
      k.coarse_flags = up.flags.data();
      k.coarse_neighbours = up.neighbours.data();
    }
    if (std::size_t(l + 1) < m_levels.size()) {
      const DeviceLevel& down = m_levels[std::size_t(l + 1)];
      k.fine_now = down.f[down.cur].data();
      k.fine_before = down.f[1 - down.cur].data();
    }
    const RefinedLevel& h = m_tree.levels[std::size_t(l)];
    for (int a = 0; a < 3; ++a) k.n[a] = h.n[std::size_t(a)];
    k.parity = parity;
    // The faces at the step's time: a step of level l starts at d.steps / 2^l steps of level 0.
    k.faces =
        m_timed_faces
            ? DeviceFaces<R>::from(faces_at_time(m_cfg.faces, std::ldexp(double(d.steps), -l)))
            : m_faces;
    m_outlets.apply(k.faces);  // the characteristic outlets' densities of this step of level 0
    k.inlets = m_inlets;
    k.inlets.shift = l;
    for (int a = 0; a < 3; ++a) k.force[a] = d.force[a];
    k.body_force = d.body_force;
    k.collide = d.op;
    // This rank's cells of the level (all of them on one rank); on several, the blocks others
    // read go to them after the step.
    const auto& next = d.f[1 - d.cur];
    const ExecSpace level{};
    const bool fused = m_cfg.refinement.kernels == LevelKernels::Fused;
    if (fused && d.overlap) {  // the sent blocks first, their exchange beside the others
      auto& x = m_exchange[std::size_t(l)];
      m_join.join(level, x.exec());  // what the step reads is done
      step_cells(x.exec(), k, d, d.lower);
      step_cells(x.exec(), k, d, d.upper);
      x.pack(next);
      step_cells(level, k, d, d.middle);
      x.post();
      x.finish(next);
      m_join.join(x.exec(), level);  // the next launches read what came
    } else {
      if (fused) {
        step_cells(level, k, d, d.owned);
      } else {  // the baseline: stored, then collided
        run<LevelStreamTag>(level, k, d.owned.first, d.owned.end);
        run<LevelTransferTag>(level, k, d.owned.general_first, d.owned.general_end);
        run<LevelCollideTag>(level, k, d.owned.first, d.owned.end);
      }
      if (!m_exchange.empty()) m_exchange[std::size_t(l)].run(next);  // after the whole step
    }
    d.cur = 1 - d.cur;
    ++d.steps;
    record_links(l);
  }

  /// The faces' rules on every level: their device form where none changes in time, and the
  /// velocity inlets' profiles (LevelInletShapes; a profile file's values on level 0's planes).
  void set_faces(const SolverConfig& cfg) {
    m_faces = DeviceFaces<R>::from(cfg.faces);
    const auto domain = cfg.domain_faces();
    bool file = false;
    for (std::size_t f = 0; f < 6; ++f) {
      const FaceBC& face = cfg.faces[f];
      m_timed_faces = m_timed_faces || face.time_dependent();
      if (face.type == FaceType::VelocityInlet)
        m_inlets.kind[f] = static_cast<std::uint8_t>(face.profile);
      file = file || (face.type == FaceType::VelocityInlet && face.profile == InletProfile::File);
    }
    for (int a = 0; a < 3; ++a) m_inlets.bounded[a] = bounded_axis(domain, a);
    m_inlets.n0[0] = cfg.nx, m_inlets.n0[1] = cfg.ny, m_inlets.n0[2] = cfg.nz;
    for (int f = 0; f < 6; ++f) m_inlets.plane[f] = inlet_plane_offset(m_inlets.n0, f);
    if (!file) return;
    const std::vector<double> plane =
        inlet_shape_plane(DenseGrid::whole(cfg.nx, cfg.ny, cfg.nz), cfg.faces, domain);
    m_inlet_file =
        to_device(std::vector<R>(plane.begin(), plane.end()), "kolibri::refine_inlet_file");
    m_inlets.file = m_inlet_file.data();
  }

  /// The characteristic outlets (LevelOutlets) over this rank's leaf slots of every level.
  void set_outlets(const SolverConfig& cfg) {
    std::vector<std::array<std::int64_t, 2>> slots;  // in this rank's numbers
    for (const DeviceLevel& d : m_levels)
      slots.push_back({std::int64_t(d.owned.first >> VS), std::int64_t(d.owned.end >> VS)});
    m_outlets = LevelOutlets(cfg, local(), slots, m_comm, &position);
  }
  /// The characteristic outlets' densities for the next step of level 0, from every level's
  /// current state (collective).
  void step_outlets() {
    std::vector<LevelCells<L, S>> cells;
    for (const DeviceLevel& d : m_levels) cells.push_back(cells_of(d));
    m_outlets.step(cells);
  }

  /// The immersed bodies on the finest level: their box and its tables (level_body_box; solid
  /// where the level has no fluid cell), and their kernels on the bodies measured in the level's
  /// cells (level_body_config). On several ranks every rank runs the bodies' kernels on the whole
  /// box, as one rank would, and applies their force to its own cells; before each step of the
  /// level the box's blocks go from their owners to every other rank (m_body_exchange): all of
  /// them, or with a travelling body (whose box is the level's whole extent) those around the
  /// bodies (follow_bodies).
  void set_bodies(const SolverConfig& cfg, const Distribution* dist) {
    if (m_comm) m_device_buffers = dist->device_buffers, m_nccl = dist->nccl;
    const SolverConfig at = level_body_config(cfg, m_body_box);
    const std::vector<Flag> flags = body_box_flags(at);
    m_ib = std::make_unique<ImmersedBoundary<L, S>>(at);
    m_level_bodies = at.bodies;
    int free = 0;
    for (std::size_t b = 0; b < at.bodies.size(); ++b) {
      m_free_index.push_back(at.bodies[b].free ? free++ : -1);
      m_travel_reach.push_back(travel_reach(at.bodies[b], L::D, at.ib));
      if (travels(at.bodies[b])) m_travelling.push_back(b);
    }
    m_free_bodies = free > 0;
    if (m_comm && m_travelling.empty())
      m_body_exchange = HaloExchange<V>(
          *m_comm, body_exchange_lists(std::vector<std::uint8_t>(m_body_box.slot.size(), 1)),
          m_device_buffers, m_nccl);
    std::vector<std::int32_t> slots = m_body_box.slot;  // in this rank's numbers (all held)
    for (std::int32_t& slot : slots)
      if (slot >= 0) slot = local_slot(std::size_t(m_body_box.level), slot);
    m_body_slot = to_device(slots, "kolibri::refine_body_slot");
    m_body_flags = to_device(flags, "kolibri::refine_body_flags");
    m_body_bc.flags = m_body_flags;
    const DenseGrid grid = DenseGrid::of(at);
    m_body_links = to_device(wall_links<L>(grid, flags, at.faces), "kolibri::refine_body_links");
    m_body_bc.links = m_body_links.data();
    m_body_bc.faces = DeviceFaces<R>::from(at.faces);
    m_body_departing.slot = m_body_slot.data();
    LevelBodyForce<R>& f = m_levels[std::size_t(m_body_box.level)].body_force;
    f.f = m_ib->force().data();
    for (std::size_t d = 0; d < 3; ++d) {
      m_body_bc.grid.n[d] = m_body_box.n[d];
      m_body_bc.force[d] = R(at.force[d]);
      m_body_departing.n[d] = m_body_box.n[d], m_body_departing.blocks[d] = m_body_box.blocks[d];
      f.lo[d] = m_body_box.lo[d], f.n[d] = m_body_box.n[d];
    }
  }

  /// The bodies' box's flags for their kernels (`at`: level_body_config): kSolid where the level
  /// has no fluid cell, kBoundaryFluid for a fluid cell with an upwind neighbour that is solid or
  /// lies past a wall side (the node kernel pulls its populations through the wall's rule, as the
  /// level's step does: mark_boundary_cells, build_flags' rule), else kFluid.
  std::vector<Flag> body_box_flags(const SolverConfig& at) const {
    std::vector<Flag> flags(m_body_box.fluid.size(), kSolid);
    for (std::size_t i = 0; i < flags.size(); ++i)
      if (m_body_box.fluid[i]) flags[i] = kFluid;
    mark_boundary_cells<L>(DenseGrid::of(at), at.faces, true, flags);
    return flags;
  }

  /// Body b's pose for the coming step of level 0 in the box's cells: a free body's from its
  /// motion (`motion`: m_ib->motion(), the same on every rank), else its prescribed one.
  BodyState body_pose(const std::size_t b, const std::vector<double>& motion) const {
    if (m_free_index[b] < 0) return body_state(m_level_bodies[b], double(m_body_time));
    return FreeMotion::unpack(motion.data() + std::size_t(m_free_index[b]) * FreeMotion::kValues)
        .pose();
  }

  /// Empty where every travelling body stays inside the finest level through step `step` of
  /// level 0 (travel_outside), else why not. The bodies' poses are those of the coming step.
  std::string travel_check(const std::int64_t step, const std::vector<double>& motion) const {
    const int l = m_body_box.level;
    for (const std::size_t b : m_travelling) {
      const BodyState s = body_pose(b, motion);
      if (const auto cell = travel_outside(m_body_box, L::D, s, m_travel_reach[b])) {
        std::array<double, 3> centre = s.centre;
        std::array<int, 3> at = *cell;
        for (std::size_t d = 0; d < 3; ++d)
          centre[d] += m_body_box.lo[d], at[d] += m_body_box.lo[d];
        return left_finest_level(b, m_cfg.bodies[b], l, step, centre, at,
                                 travel_radius(m_travel_reach[b], s.velocity, l), L::D);
      }
    }
    return {};
  }

  /// Several ranks with a travelling body: before a step of level 0, each body's cube of the
  /// box's cells that its kernels read in it (its travel_radius and one cell more around its
  /// centre: the node box, a free body's extra cell, and the cells the nodes stream from) must
  /// lie inside the cube the body exchange covers for it; where one does not, every body's cube
  /// is widened by two blocks and the exchange is built again over the blocks they meet. Every
  /// rank works out the same cubes from the same poses, so the lists agree.
  void follow_bodies(const std::vector<double>& motion) {
    const int l = m_body_box.level, pad = 2 << m_tree.shift;
    std::vector<std::array<int, 6>> need;  // per body: lo x, y, z, hi x, y, z (inclusive)
    bool inside = m_body_covered.size() == m_level_bodies.size();
    for (std::size_t b = 0; b < m_level_bodies.size(); ++b) {
      const BodyState s = body_pose(b, motion);
      const double r = travel_radius(m_travel_reach[b], s.velocity, l) + 1.0;
      std::array<int, 6> c{0, 0, 0, 0, 0, 0};
      for (std::size_t d = 0; d < std::size_t(L::D); ++d) {
        c[d] = int(std::floor(s.centre[d] - r));
        c[3 + d] = int(std::floor(s.centre[d] + r));
        if (inside) inside = c[d] >= m_body_covered[b][d] && c[3 + d] <= m_body_covered[b][3 + d];
      }
      need.push_back(c);
    }
    if (inside) return;
    const int e = m_tree.edge();
    const int nb[3] = {m_body_box.blocks[0], m_body_box.blocks[1], m_body_box.blocks[2]};
    std::vector<std::uint8_t> wanted(m_body_box.slot.size(), 0);
    m_body_covered = need;
    for (std::array<int, 6>& c : m_body_covered) {
      int from[3] = {0, 0, 0}, to[3] = {0, 0, 0};  // blocks
      for (std::size_t d = 0; d < std::size_t(L::D); ++d) {
        c[d] -= pad, c[3 + d] += pad;
        from[d] = std::clamp(floor_div(c[d], e), 0, nb[d] - 1);
        to[d] = std::clamp(floor_div(c[3 + d], e), -1, nb[d] - 1);
      }
      for (int z = from[2]; z <= to[2]; ++z)
        for (int y = from[1]; y <= to[1]; ++y)
          for (int x = from[0]; x <= to[0]; ++x) wanted[std::size_t(cell_in(nb, x, y, z))] = 1;
    }
    m_body_exchange =
        HaloExchange<V>(*m_comm, body_exchange_lists(wanted), m_device_buffers, m_nccl);
  }

  /// Several ranks: the bodies' box's blocks marked in `wanted` (box order), each from the rank
  /// that steps it to every other rank, all its cells (their state before a step of the level:
  /// what the bodies' kernels read). Both sides list the blocks in the box's order, so each
  /// message's blocks match.
  HaloLists body_exchange_lists(const std::vector<std::uint8_t>& wanted) const {
    const int me = m_comm->rank(), level = m_body_box.level;
    std::uint64_t all = 0;  // every cell of a block
    for (Index c = 0; c < TV; ++c) all |= std::uint64_t(1) << c;
    std::vector<LevelPeerBlocks> peers;
    for (int peer = 0; peer < m_comm->size(); ++peer) {
      if (peer == me) continue;
      LevelPeerBlocks b;
      b.peer = peer;
      for (std::size_t k = 0; k < m_body_box.slot.size(); ++k) {
        const std::int32_t slot = m_body_box.slot[k];
        if (slot < 0 || !wanted[k]) continue;
        const int owner = m_ranks.owner(level, slot);
        if (owner == me) b.send.push_back(slot), b.send_cells.push_back(all);
        if (owner == peer) b.recv.push_back(slot), b.recv_cells.push_back(all);
      }
      if (!b.send.empty() || !b.recv.empty()) peers.push_back(b);
    }
    return exchange_lists(peers, std::size_t(level));
  }

  /// The bodies' forces for the coming step of the finest level d, from its state: each step of
  /// level 0 sums its 2^l steps' loads (keep_totals after the first). On several ranks the box's
  /// state first comes whole to every rank.
  /// With a free body the kernels keep no totals (its motion takes each step's own forcing): the
  /// loads of the level's steps are summed here on the host instead (m_step_loads).
  void apply_bodies(const DeviceLevel& d) {
    if (m_comm) m_body_exchange.run(d.f[d.cur]);
    const std::int64_t steps = std::int64_t(1) << m_body_box.level;
    const bool first = m_body_time % steps == 0;
    m_ib->keep_totals(!m_free_bodies && !first);
    LevelDeparting<Step> dep = m_body_departing;
    dep.f = d.f[d.cur].data();
    m_ib->apply_with(dep, false, m_body_bc, m_body_time);
    if (m_free_bodies) add_step_loads(first);
    ++m_body_time;
  }

  /// The loads of the level's step just taken added to those of the step of level 0 (`first`:
  /// its first step: they start there); centre and velocities the last step's.
  void add_step_loads(const bool first) {
    const std::vector<BodyLoad> now = m_ib->loads();
    if (first || m_step_loads.size() != now.size()) {
      m_step_loads = now;
      return;
    }
    for (std::size_t b = 0; b < now.size(); ++b) {
      BodyLoad& sum = m_step_loads[b];
      for (std::size_t k = 0; k < 3; ++k) {
        sum.force[k] += now[b].force[k];
        sum.torque[k] += now[b].torque[k];
      }
      sum.centre = now[b].centre;
      sum.velocity = now[b].velocity;
      sum.angular_velocity = now[b].angular_velocity;
    }
  }

  /// The fused level step k over cells c of level d on `exec`: the general rules, then the
  /// general and the fast cells.
  static void step_cells(const ExecSpace& exec, Step k, const DeviceLevel& d, const CellRange& c) {
    run<LevelRuleTag>(exec, k, c.rule_first, c.rule_end);
    k.first_general = c.general_first;
    k.generals = c.general_end - c.general_first;
    k.general_threads = (k.generals + 31) / 32 * 32;
    k.first_cell = c.first;
    if (k.body_force.f != nullptr)
      step_cells_with<true>(exec, k, d, c);
    else
      step_cells_with<false>(exec, k, d, c);
  }
  template <bool Bodies>
  static void step_cells_with(const ExecSpace& exec, Step& k, const DeviceLevel& d,
                              const CellRange& c) {
    if (d.all_cells >= kManyCells)  // the whole level's, as on one rank
      step_launch<kLargeLevelCellsPerThread, Bodies>(exec, k, c.end - c.first);
    else
      step_launch<2, Bodies>(exec, k, c.end - c.first);
  }

  /// Kernel tag T of the level step k over threads 0 .. n (none where n is 0). The functor is
  /// over 512 bytes: Kokkos' default launch would put it in its constant-memory buffer, where
  /// each launch waits for the one before, and the refined cavity, bound by its launches, took
  /// 2.4 times as long; as a kernel argument (async_launch) it does not wait. A kernel argument
  /// is copied to every thread's stack where a device function takes its address, so none of
  /// the level kernels' calls stays out of line (LevelStep::arriving).
  /// LevelStepTag<Cells, Bodies> over a level of `cells` (k.general_threads threads of general
  /// cells first, then Cells fast cells a thread).
  template <int Cells, bool Bodies>
  static void step_launch(const ExecSpace& exec, Step& k, const Index cells) {
    k.stride = cells / Cells;
    run<LevelStepTag<Cells, Bodies>>(exec, k, 0, k.general_threads + k.stride);
  }
  /// Levels of kManyCells cells or more run kLargeLevelCellsPerThread fast cells a thread, the
  /// others 2. On the H200, four cells against two gained 3-5% on the refined tunnel's levels of
  /// 2.7 to 14 million cells and lost up to 7% on levels under 2 million (half the threads fill
  /// the device fewer times over; docs/performance.md, "the general cells in the fast launch,
  /// and four cells a thread on large levels"). Host backends take two (no latency to hide
  /// there, one kernel less to compile).
  static constexpr Index kManyCells = Index(1) << 21;
  static constexpr int kLargeLevelCellsPerThread =
      std::is_same_v<typename ExecSpace::memory_space, Kokkos::HostSpace> ? 2 : 4;
  template <class T>
  static void run(const ExecSpace& exec, const Step& k, const Index begin, const Index end) {
    if (end > begin)
      Kokkos::parallel_for(T::label,
                           async_launch(Kokkos::RangePolicy<ExecSpace, T, Kokkos::IndexType<Index>>(
                               exec, begin, end)),
                           k);
  }

  Octree m_tree;
  std::vector<DeviceLevel> m_levels;
  /// The immersed bodies (set_bodies; null without): their box on the finest level, its flags,
  /// its blocks' leaf slots, the node kernel's view of it, and the time of the level's next step.
  std::unique_ptr<ImmersedBoundary<L, S>> m_ib;
  LevelBodyBox m_body_box;
  Kokkos::View<Flag*, MemSpace> m_body_flags;
  Kokkos::View<std::uint32_t*, MemSpace> m_body_links;  ///< wall_links of the box (body_box_flags)
  Kokkos::View<std::int32_t*, MemSpace> m_body_slot;
  Boundary<L, R> m_body_bc{};
  LevelDeparting<Step> m_body_departing;
  std::int64_t m_body_time = 0;
  /// The bodies in the box's cells (level_body_config), each one's place among the free bodies
  /// (-1: not free) and travel_reach; the travelling ones (travels), checked a step at a time.
  std::vector<Body> m_level_bodies;
  std::vector<int> m_free_index;
  std::vector<double> m_travel_reach;
  std::vector<std::size_t> m_travelling;
  bool m_free_bodies = false;
  std::vector<BodyLoad>
      m_step_loads;                 ///< with a free body: the last step of level 0's (apply_bodies)
  HaloExchange<V> m_body_exchange;  ///< several ranks: body_exchange_lists, before apply_bodies
  bool m_device_buffers = false;    ///< several ranks: the Distribution's, for m_body_exchange
  const NcclComm* m_nccl = nullptr;
  std::vector<std::array<int, 6>> m_body_covered;  ///< follow_bodies: each body's exchanged cube
  DeviceFaces<R> m_faces;        ///< the faces' rules (set_faces), at every time unless timed
  bool m_timed_faces = false;    ///< a face's velocity changes in time (faces_at_time)
  LevelInletShapes<R> m_inlets;  ///< shift set per level at its launch
  LevelOutlets m_outlets;        ///< the characteristic outlets (set_outlets)
  Kokkos::View<R*, MemSpace> m_inlet_file;  ///< inlet_shape_plane of level 0 (a profile file)
  const Comm* m_comm = nullptr;             ///< several ranks (null: one)
  LevelRanks m_ranks;
  std::vector<HaloExchange<V>> m_exchange;  ///< a level's, after each of its steps
  double m_sent_per_step = 0.0;             ///< bytes this rank sends in a step of level 0
  StreamJoin m_join;  ///< the order of the level's and the exchange's instances
  /// Several ranks: each level's leaf slots this rank holds (hold_levels), its levels in its own
  /// numbering (local_levels; local() gives the levels as held on any rank count), and each
  /// level's slot -> this rank's slot (-1: not held).
  std::vector<std::vector<std::int32_t>> m_held;
  Octree m_local;
  std::vector<std::vector<std::int32_t>> m_local_slot;
  /// Each level's leaf slots by block position (block_key): where leaf_cell finds a cell.
  std::vector<std::unordered_map<std::int64_t, std::int32_t>> m_leaf_of;
};

}  // namespace kolibri
