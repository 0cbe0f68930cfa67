// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Characteristic (non-reflecting) pressure outlets (PressureRule::Characteristic): each
/// such face's density, stepped on the device from the mean velocity leaving across it, handed to
/// the developed rule as the face's density (OutletExchange::density) for the step
/// (docs/theory.md, "Characteristic outlets").
#pragma once

#include <kolibri/config/Case.hpp>
#include <kolibri/grid/DenseGrid.hpp>
#include <kolibri/grid/Flags.hpp>
#include <kolibri/parallel/Comm.hpp>
#include <kolibri/parallel/Streams.hpp>
#include <kolibri/stepping/StreamCollide.hpp>

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace kolibri {

/// The fixed point of the outlets' velocity sums, 2^40 a unit: a velocity below 1 takes 41 bits,
/// so 2^22 cells add up without overflow.
inline constexpr double kOutletFixedPoint = 1099511627776.0;

/// \brief The velocity leaving across face `face` (the outward normal's component of u), in
/// fixed point (kOutletFixedPoint): integer sums are exact in any order, so the face's mean is
/// the same on every rank count and device.
template <class R>
KOKKOS_INLINE_FUNCTION std::int64_t outgoing_fixed(int face, const R (&u)[3]) {
  const double out = double(face % 2 == 0 ? -u[face / 2] : u[face / 2]) * kOutletFixedPoint;
  return std::int64_t(out >= 0.0 ? out + 0.5 : out - 0.5);
}

/// \brief Sum of outgoing_fixed over a face's cells, each cell's velocity from its post-collision
/// populations `dep` (Boundary::state, the one the developed rule reads).
template <class L, class R, class Departing>
struct OutletFluxFromPopulations {
  Departing dep;
  Boundary<L, R> bc;
  Kokkos::View<const std::uint32_t*, MemSpace> cells;
  int face;
  KOKKOS_INLINE_FUNCTION void operator()(const Index i, std::int64_t& sum) const {
    R rho, u[3];
    bc.state_of(dep, Index(cells(i)), rho, u);
    sum += outgoing_fixed(face, u);
  }
};

/// \brief The same from velocities saved by boundary-list position (`width` values a position,
/// u at `offset`): an in-place streaming step's (InPlaceStep::saved) or those the two-array
/// kernels left (OutletExchange::layer_velocity).
template <class R>
struct OutletFluxFromSaved {
  Kokkos::View<const R*, MemSpace> saved;
  Kokkos::View<const std::uint32_t*, MemSpace> positions;
  int width, offset, face;
  KOKKOS_INLINE_FUNCTION void operator()(const Index i, std::int64_t& sum) const {
    const R* s = &saved(Index(positions(i)) * width + offset);
    const R u[3] = {s[0], s[1], s[2]};
    sum += outgoing_fixed(face, u);
  }
};

/// \brief Where in an in-place streaming step the characteristic outlets' densities are
/// summed (CharacteristicOutlets::step_in_place): as the step starts, before any halo exchange;
/// or once BoundarySaveTag has saved the layer's states.
enum class InPlaceOutletPoint { StepStart, StatesSaved };

/// \brief One characteristic face's constants, on the device.
struct OutletRule {
  int face = 0;            ///< x_min ... z_max
  double rate = 0.0;       ///< K, a step
  double density = 1.0;    ///< rho_w
  std::int64_t count = 0;  ///< fluid cells of the layer over all ranks
};

/// \brief One step of a characteristic face's state from the mean velocity `mean` leaving
/// across it: with u_out the mean of this step's and the last step's (`last`; NaN: none yet),
/// rho_b = (1 - K)(s + rho_w u_out / c_s) + K rho_w (rho_w where s is not kept yet, NaN), then
/// s = rho_b - rho_w u_out / c_s and last = mean. Returns rho_b, the face's density for the
/// step. The one formula of the dense box (OutletDensityStep) and the refined levels.
KOKKOS_INLINE_FUNCTION double outlet_density_step(const OutletRule& f, const double mean, double& s,
                                                  double& last) {
  // The mean of this step's and the last step's: a face-mean velocity that alternates from
  // step to step does not move the density (docs/theory.md: it grew without bound in a
  // porous sample, whose dead-end cells in the layer reverse their momentum every step).
  const double two_steps = math::is_finite(last) ? 0.5 * (mean + last) : mean;
  const double acoustic = f.density * 1.7320508075688772 * two_steps;
  const double rho_b =
      math::is_finite(s) ? (1.0 - f.rate) * (s + acoustic) + f.rate * f.density : f.density;
  s = rho_b - acoustic;
  last = mean;
  return rho_b;
}

/// \brief The step of characteristic face `k` from its summed outgoing velocity `sum`
/// (outgoing_fixed): outlet_density_step with the mean over its cells; rho_b becomes the face's
/// density (OutletExchange::density).
template <class R>
struct OutletDensityStep {
  Kokkos::View<const OutletRule*, MemSpace> rules;
  /// By rule: s at 2k, the last step's mean outgoing velocity at 2k + 1 (NaN: none yet).
  Kokkos::View<double*, MemSpace> invariant;
  Kokkos::View<OutletExchange<R>, MemSpace> exchange;
  KOKKOS_INLINE_FUNCTION void operator()(const int k, const std::int64_t sum) const {
    const OutletRule& f = rules(k);
    const double mean = f.count > 0 ? double(sum) / kOutletFixedPoint / double(f.count) : 0.0;
    double s = invariant(2 * k), last = invariant(2 * k + 1);
    const double rho_b = outlet_density_step(f, mean, s, last);
    invariant(2 * k) = s;
    invariant(2 * k + 1) = last;
    exchange().density[f.face] = R(rho_b);
  }
};

/// \brief Every face's step from the sums over all ranks (`sums`, by rule), one thread a face.
template <class R>
struct OutletDensitySteps {
  OutletDensityStep<R> step;
  Kokkos::View<const std::int64_t*, MemSpace> sums;
  KOKKOS_INLINE_FUNCTION void operator()(const int k) const { step(k, sums(k)); }
};

/// \brief One face's sum (the reduction functor `Flux`, one term a cell or a boundary-list
/// position) and, in the reduction's final stage on the device, its step: one launch a face
/// where the face's sum is this rank's alone.
template <class Flux, class R>
struct OutletSumAndStep {
  Flux flux;
  OutletDensityStep<R> step;
  int k;  ///< the face's rule
  KOKKOS_INLINE_FUNCTION void operator()(const Index i, std::int64_t& sum) const { flux(i, sum); }
  KOKKOS_INLINE_FUNCTION void final(std::int64_t& sum) const { step(k, sum); }
};

/// \brief A level's characteristic outlets: per such face (of the whole domain: every rank
/// keeps every face's state and takes part in each step's sum) its relaxation K, its density
/// rho_w, the invariant s it keeps, and this rank's fluid cells of the layer next to it. The
/// sums, the step and the densities stay on the device: on one rank the host does not wait.
template <class L, class R>
class CharacteristicOutlets {
 public:
  CharacteristicOutlets() = default;
  /// `cfg` this rank's configuration, `grid` its box, `flags` its cells' flags, `boundary` its
  /// boundary list (CellLists::boundary: the layer's cells are in it); collective over `comm`.
  CharacteristicOutlets(const SolverConfig& cfg, const DenseGrid& grid,
                        const std::vector<Flag>& flags, const std::vector<std::uint32_t>& boundary,
                        const Comm* comm) {
    m_comm = comm;
    const auto global_max = [&](double v) { return comm ? comm->max(v) : v; };
    std::vector<OutletRule> rules;
    for (std::size_t f = 0; f < 6; ++f) {
      const FaceBC& bc = cfg.faces[f];
      const bool mine = bc.is_characteristic();  // this rank holds the face's layer
      OutletRule rule;
      rule.face = int(f);
      rule.rate = global_max(mine ? characteristic_relaxation(cfg, f) : -1.0);
      if (rule.rate < 0.0) continue;  // no characteristic outlet there on any rank
      rule.density = global_max(mine ? bc.density : -1.0);
      std::vector<std::uint32_t> cells, positions;
      for (std::size_t i = 0; i < boundary.size() && mine; ++i) {
        const Coord p = grid.coords(Index(boundary[i]));
        const int c[3] = {p.x, p.y, p.z}, axis = int(f / 2);
        if (c[axis] == (f % 2 == 0 ? 0 : grid.n[axis] - 1) && !grid.is_ghost(p) &&
            is_updated(flags[boundary[i]]))
          cells.push_back(boundary[i]), positions.push_back(std::uint32_t(i));
      }
      rule.count = comm ? comm->sum(std::int64_t(cells.size())) : std::int64_t(cells.size());
      rules.push_back(rule);
      m_faces.push_back(Face{rule.face, to_device(cells, "kolibri::outlet_cells"),
                             to_device(positions, "kolibri::outlet_positions")});
    }
    if (rules.empty()) return;
    m_exec = priority_instance();
    m_rules = to_device(rules, "kolibri::outlet_rules");
    m_sums = Kokkos::View<std::int64_t*, MemSpace>("kolibri::outlet_sums", rules.size());
    m_invariant = Kokkos::View<double*, MemSpace>("kolibri::outlet_invariants", 2 * rules.size());
    reset();
    // Every face's density (the kernels read them all there), the set ones until a step; the
    // velocities the two-array kernels leave get their room at the first step_two_arrays.
    m_boundary_cells = boundary.size();
    m_exchange = Kokkos::View<OutletExchange<R>, MemSpace>("kolibri::outlet_exchange");
    auto host = Kokkos::create_mirror_view(m_exchange);
    const DeviceFaces<R> set = DeviceFaces<R>::from(cfg.faces);
    for (int f = 0; f < 6; ++f) host().density[f] = set.density[f];
    host().layer_velocity = nullptr;
    Kokkos::deep_copy(m_exchange, host);
  }

  bool active() const { return !m_faces.empty(); }

  /// Two arrays: the faces' densities of a step from the velocities the last step's kernels left
  /// (OutletExchange::layer_velocity, StreamCollide::leave_velocity), or where none did (the
  /// first step, after reset() or new_populations()) from the post-collision populations `dep`;
  /// `faces` reads them, and this step's kernels leave the velocities again (collective). On one
  /// rank the sum and the step run on an instance of their own, after the work launched on
  /// `exec` so far and beside what follows there (the interior cells, which read no density of
  /// these faces), until join_densities(exec); on several on `exec` (the host adds the sums).
  template <class Departing>
  void step_two_arrays(const Departing& dep, const Boundary<L, R>& bc, const ExecSpace& exec,
                       DeviceFaces<R>& faces) {
    if (!m_room_for_velocities) leave_room_for_velocities();
    const bool beside = !several_ranks();
    if (beside) m_join.join(exec, m_exec);  // the last step's kernels left the velocities
    const ExecSpace& on = beside ? m_exec : exec;
    if (m_left)
      step_saved(m_layer_velocity, 3, 0, on, faces);
    else
      step(dep, bc, on, faces);
    m_left = true;
    m_beside = beside;
  }
  /// The work launched on `exec` from here on (the boundary cells) reads the faces' densities
  /// that step_two_arrays launched beside it, and overwrites the velocities it summed.
  void join_densities(const ExecSpace& exec) {
    if (m_beside) m_join.join(m_exec, exec);
    m_beside = false;
  }
  /// In place: the faces' densities of a streaming step, called at both points `at` of it;
  /// the sum runs at one. On one rank once BoundarySaveTag has saved the layer's states (`saved`,
  /// `width` values a boundary-list position, u at `offset`): the values a sum of the populations
  /// gives, without reading the layer's populations again. On several as the step starts, from
  /// the populations `dep`, before any halo exchange: every rank reaches the sums' all-reduce
  /// at the same point (a rank next to the face exchanges before BoundarySaveTag, one away from
  /// it only after its interior cells). Launched on `exec`; `faces` reads them (collective).
  template <class Departing>
  void step_in_place(InPlaceOutletPoint at, const Departing& dep, const Boundary<L, R>& bc,
                     const Kokkos::View<R*, MemSpace>& saved, int width, int offset,
                     const ExecSpace& exec, DeviceFaces<R>& faces) {
    if (!active() || (at == InPlaceOutletPoint::StepStart) != several_ranks()) return;
    if (at == InPlaceOutletPoint::StepStart)
      step(dep, bc, exec, faces);
    else
      step_saved(saved, width, offset, exec, faces);
  }
  /// The faces' densities of a step whose gather reads the post-collision populations `dep`
  /// (two arrays where no kernel left the velocities; in place on several ranks), launched on
  /// `exec`; `faces` reads them (collective).
  template <class Departing>
  void step(const Departing& dep, const Boundary<L, R>& bc, const ExecSpace& exec,
            DeviceFaces<R>& faces) {
    sum_and_step(exec, faces, [&](std::size_t k) {
      return OutletFluxFromPopulations<L, R, Departing>{dep, bc, m_faces[k].cells,
                                                        m_faces[k].index};
    });
  }
  /// The same from the cells' velocities saved by boundary-list position (`saved`, `width`
  /// values a position, u at `offset`): in place, the states BoundarySaveTag saves before a
  /// streaming step or those its collision saves for PressureStepTag; two arrays, those the
  /// kernels left (step_two_arrays).
  void step_saved(const Kokkos::View<R*, MemSpace>& saved, int width, int offset,
                  const ExecSpace& exec, DeviceFaces<R>& faces) {
    sum_and_step(exec, faces, [&](std::size_t k) {
      return OutletFluxFromSaved<R>{saved, m_faces[k].positions, width, offset, m_faces[k].index};
    });
  }

  /// Each face's kept invariant s and last mean outgoing velocity, in face order (NaN before its
  /// first step): for checkpoints.
  std::vector<double> state() const {
    if (!active()) return {};
    return to_host(m_invariant);
  }
  /// Take back state() (restarts), or a state of s alone (one value a face: checkpoints written
  /// before the two-step mean, whose first step then takes this step's mean alone); throws
  /// std::invalid_argument when it does not fit.
  void set_state(const std::vector<double>& s) {
    const std::size_t n = m_faces.size();
    if (s.size() != 2 * n && s.size() != n)
      throw std::invalid_argument("the checkpoint holds " + std::to_string(s.size()) +
                                  " values of characteristic outlets; this run's " +
                                  std::to_string(n) + " take " + std::to_string(2 * n) + " (or " +
                                  std::to_string(n) + " from before 2026-12-02)");
    if (!active()) return new_populations();
    std::vector<double> both(s);
    if (s.size() == n) {
      both.assign(2 * n, std::numeric_limits<double>::quiet_NaN());
      for (std::size_t k = 0; k < n; ++k) both[2 * k] = s[k];
    }
    Kokkos::deep_copy(m_invariant, HostValues<const double>(both.data(), both.size()));
    new_populations();
  }
  /// Forget the state (a new initial state): the next step takes the faces' set densities.
  void reset() {
    if (active()) Kokkos::deep_copy(m_invariant, std::numeric_limits<double>::quiet_NaN());
    new_populations();
  }
  /// The populations changed outside a step (a new state, a restart): the next step sums them,
  /// not the velocities the kernels left.
  void new_populations() { m_left = false; }

 private:
  /// This rank's cells of a face's layer (its rule in m_rules, same order).
  struct Face {
    int index = 0;                                     ///< x_min ... z_max
    Kokkos::View<std::uint32_t*, MemSpace> cells;      ///< cell indices
    Kokkos::View<std::uint32_t*, MemSpace> positions;  ///< their boundary-list positions
  };
  bool several_ranks() const { return m_comm && m_comm->size() > 1; }
  /// Three values a boundary-list position for the two-array kernels to leave the layer's
  /// velocities in (OutletExchange::layer_velocity): only the two-array scheme reads them, so
  /// in place and the moment representation allocate none.
  void leave_room_for_velocities() {
    m_layer_velocity =
        Kokkos::View<R*, MemSpace>("kolibri::outlet_layer_velocity", 3 * m_boundary_cells);
    auto host = Kokkos::create_mirror_view(m_exchange);
    Kokkos::deep_copy(host, m_exchange);
    host().layer_velocity = m_layer_velocity.data();
    Kokkos::deep_copy(m_exchange, host);
    m_room_for_velocities = true;
  }
  template <class T>
  using HostValues = Kokkos::View<T*, Kokkos::HostSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;

  /// Each face's sum of outgoing_fixed over its cells by the reduction functor `flux_of(k)`
  /// (one term a cell or a boundary-list position), then its step (OutletDensityStep): on one
  /// rank in the same launch (OutletSumAndStep), on several after the sums, into m_sums, are
  /// added over ranks (the host waits for that); `faces` reads the result.
  template <class FluxOf>
  void sum_and_step(const ExecSpace& exec, DeviceFaces<R>& faces, const FluxOf& flux_of) {
    using Sum = Kokkos::View<std::int64_t, MemSpace, Kokkos::MemoryTraits<Kokkos::Unmanaged>>;
    const OutletDensityStep<R> step{m_rules, m_invariant, m_exchange};
    const bool several = several_ranks();
    for (std::size_t k = 0; k < m_faces.size(); ++k) {
      const Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<Index>> cells(
          exec, 0, m_faces[k].cells.extent(0));
      const auto flux = flux_of(k);
      if (several)
        Kokkos::parallel_reduce("kolibri::characteristic_outlet_flux", cells, flux,
                                Sum(m_sums.data() + k));
      else
        Kokkos::parallel_reduce("kolibri::characteristic_outlet_flux_step", cells,
                                OutletSumAndStep<decltype(flux), R>{flux, step, int(k)},
                                Sum(m_sums.data() + k));
    }
    if (several) {
      fence(exec, "kolibri::characteristic_outlet_flux");
      std::vector<std::int64_t> sums = to_host(m_sums);
      m_comm->sum(sums);
      Kokkos::deep_copy(m_sums, HostValues<const std::int64_t>(sums.data(), sums.size()));
      Kokkos::parallel_for("kolibri::characteristic_outlet_step",
                           Kokkos::RangePolicy<ExecSpace>(exec, 0, int(m_faces.size())),
                           OutletDensitySteps<R>{step, m_sums});
    }
    faces.outlets = m_exchange.data();
  }

  std::vector<Face> m_faces;
  Kokkos::View<OutletRule*, MemSpace> m_rules;
  Kokkos::View<std::int64_t*, MemSpace> m_sums;          ///< this step's, by rule
  Kokkos::View<double*, MemSpace> m_invariant;           ///< OutletDensityStep::invariant
  Kokkos::View<OutletExchange<R>, MemSpace> m_exchange;  ///< the faces' densities, read by kernels
  Kokkos::View<R*, MemSpace> m_layer_velocity;           ///< OutletExchange::layer_velocity
  std::size_t m_boundary_cells = 0;                      ///< the boundary list's length
  bool m_room_for_velocities = false;                    ///< m_layer_velocity allocated
  bool m_left = false;    ///< the last step's kernels left the layer's velocities
  ExecSpace m_exec{};     ///< step_two_arrays' own instance (one rank)
  StreamJoin m_join;      ///< orders it with the level's instance
  bool m_beside = false;  ///< a sum and step launched on m_exec that no join has awaited yet
  const Comm* m_comm = nullptr;
};

}  // namespace kolibri
