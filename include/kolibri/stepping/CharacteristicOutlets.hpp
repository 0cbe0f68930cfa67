// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Characteristic (non-reflecting) pressure outlets (PressureRule::Characteristic): each
/// such face's density, stepped from the mean velocity leaving across it, handed to the developed
/// rule as the face's density (DeviceFaces::density) for the step (docs/theory.md,
/// "Characteristic outlets").
#pragma once

#include <kolibri/config/Case.hpp>
#include <kolibri/grid/DenseGrid.hpp>
#include <kolibri/grid/Flags.hpp>
#include <kolibri/parallel/Comm.hpp>
#include <kolibri/stepping/StreamCollide.hpp>

#include <cmath>
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
    const Index n = Index(cells(i));
    R fs[L::Q], rho, u[3];
    for (int k = 0; k < L::Q; ++k) fs[k] = dep(n, k);
    bc.state(fs, rho, u);
    sum += outgoing_fixed(face, u);
  }
};

/// \brief The same from the velocities an in-place streaming step saved (InPlaceStep::saved:
/// `width` values a boundary-list position, u at `offset`).
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

/// \brief A level's characteristic outlets: per such face (of the whole domain: every rank
/// keeps every face's state and takes part in each step's sum) its relaxation K, its density
/// rho_w, the invariant s it keeps, and this rank's fluid cells of the layer next to it.
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
    for (std::size_t f = 0; f < 6; ++f) {
      const FaceBC& bc = cfg.faces[f];
      const bool mine = bc.is_characteristic();  // this rank holds the face's layer
      Face face;
      face.index = int(f);
      face.rate = global_max(mine ? characteristic_relaxation(cfg, f) : -1.0);
      if (face.rate < 0.0) continue;  // no characteristic outlet there on any rank
      face.density = global_max(mine ? bc.density : -1.0);
      std::vector<std::uint32_t> cells, positions;
      for (std::size_t i = 0; i < boundary.size() && mine; ++i) {
        const Coord p = grid.coords(Index(boundary[i]));
        const int c[3] = {p.x, p.y, p.z}, axis = int(f / 2);
        if (c[axis] == (f % 2 == 0 ? 0 : grid.n[axis] - 1) && !grid.is_ghost(p) &&
            is_updated(flags[boundary[i]]))
          cells.push_back(boundary[i]), positions.push_back(std::uint32_t(i));
      }
      face.count = comm ? comm->sum(std::int64_t(cells.size())) : std::int64_t(cells.size());
      face.cells = to_device(cells, "kolibri::outlet_cells");
      face.positions = to_device(positions, "kolibri::outlet_positions");
      m_faces.push_back(face);
    }
  }

  bool active() const { return !m_faces.empty(); }

  /// The faces' densities of a step whose gather reads the post-collision populations `dep`
  /// (two arrays; in place before a streaming step), into `faces` (collective).
  template <class Departing>
  void step(const Departing& dep, const Boundary<L, R>& bc, const ExecSpace& exec,
            DeviceFaces<R>& faces) {
    std::vector<std::int64_t> sums(m_faces.size(), 0);
    for (std::size_t k = 0; k < m_faces.size(); ++k) {
      const Face& f = m_faces[k];
      Kokkos::parallel_reduce(
          "kolibri::characteristic_outlet_flux",
          Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<Index>>(exec, 0, f.cells.extent(0)),
          OutletFluxFromPopulations<L, R, Departing>{dep, bc, f.cells, f.index}, sums[k]);
    }
    take(sums, faces);
  }
  /// The same from the cells' velocities saved after an in-place streaming step's collision
  /// (`saved`, `width` values a boundary-list position, u at `offset`), for PressureStepTag.
  void step_saved(const Kokkos::View<R*, MemSpace>& saved, int width, int offset,
                  const ExecSpace& exec, DeviceFaces<R>& faces) {
    std::vector<std::int64_t> sums(m_faces.size(), 0);
    for (std::size_t k = 0; k < m_faces.size(); ++k) {
      const Face& f = m_faces[k];
      Kokkos::parallel_reduce(
          "kolibri::characteristic_outlet_flux",
          Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<Index>>(exec, 0, f.positions.extent(0)),
          OutletFluxFromSaved<R>{saved, f.positions, width, offset, f.index}, sums[k]);
    }
    take(sums, faces);
  }

  /// Each face's kept invariant s, in face order (NaN before its first step): for checkpoints.
  std::vector<double> state() const {
    std::vector<double> s;
    for (const Face& f : m_faces) s.push_back(f.invariant);
    return s;
  }
  /// Take back state() (restarts); throws std::invalid_argument when it does not fit.
  void set_state(const std::vector<double>& s) {
    if (s.size() != m_faces.size())
      throw std::invalid_argument("the checkpoint holds the state of " + std::to_string(s.size()) +
                                  " characteristic outlets; this run has " +
                                  std::to_string(m_faces.size()));
    for (std::size_t k = 0; k < s.size(); ++k) m_faces[k].invariant = s[k];
  }
  /// Forget the state (a new initial state): the next step takes the faces' set densities.
  void reset() {
    for (Face& f : m_faces) f.invariant = std::numeric_limits<double>::quiet_NaN();
  }

 private:
  struct Face {
    int index = 0;                                                ///< x_min ... z_max
    double rate = 0.0;                                            ///< K, a step
    double density = 1.0;                                         ///< rho_w
    double invariant = std::numeric_limits<double>::quiet_NaN();  ///< s (NaN: no step yet)
    std::int64_t count = 0;                            ///< fluid cells of the layer over all ranks
    Kokkos::View<std::uint32_t*, MemSpace> cells;      ///< this rank's, cell indices
    Kokkos::View<std::uint32_t*, MemSpace> positions;  ///< their boundary-list positions
  };

  /// The step of each face from its summed outgoing velocity: the mean u_out over its cells,
  /// rho_b = (1 - K)(s + rho_w u_out / c_s) + K rho_w (rho_w where s is not kept yet), then
  /// s = rho_b - rho_w u_out / c_s; rho_b becomes the face's density.
  void take(std::vector<std::int64_t>& sums, DeviceFaces<R>& faces) {
    if (m_comm) m_comm->sum(sums);
    const double sqrt3 = 1.7320508075688772;
    for (std::size_t k = 0; k < m_faces.size(); ++k) {
      Face& f = m_faces[k];
      const double mean = f.count > 0 ? double(sums[k]) / kOutletFixedPoint / double(f.count) : 0.0;
      const double acoustic = f.density * sqrt3 * mean;
      const double rho_b = std::isnan(f.invariant)
                               ? f.density
                               : (1.0 - f.rate) * (f.invariant + acoustic) + f.rate * f.density;
      f.invariant = rho_b - acoustic;
      faces.density[f.index] = R(rho_b);
    }
  }

  std::vector<Face> m_faces;
  const Comm* m_comm = nullptr;
};

}  // namespace kolibri
