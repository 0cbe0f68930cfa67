// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The runtime face of the solver: one virtual call per batch of steps; the compiled
/// (lattice, collision, precision) instantiation behind it is chosen once by make_solver.
#pragma once

#include <kolibri/solver/Case.hpp>

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

namespace kolibri {

/// \brief Host copies of the macroscopic fields, x fastest (index x + nx (y + ny z)).
struct MacroFields {
  int nx = 0, ny = 0, nz = 0;
  std::vector<double> rho;
  std::vector<std::array<double, 3>> u;
  std::vector<std::uint8_t> solid;
  std::size_t index(int x, int y, int z) const {
    return static_cast<std::size_t>(x + std::int64_t(nx) * (y + std::int64_t(ny) * z));
  }
};

/// \brief Whole-field reductions used by progress lines and blow-up detection.
struct Diagnostics {
  double mass = 0.0;             ///< sum of rho over fluid cells
  double max_speed = 0.0;        ///< max |u| over fluid cells
  std::int64_t first_bad = -1;   ///< first cell with a non-finite density or velocity, else -1
};

class Solver {
 public:
  virtual ~Solver() = default;
  /// Advance n time steps.
  virtual void step(std::int64_t n) = 0;
  /// Set the state to the equilibrium of the given fields (x fastest, size cells()).
  virtual void initialize(const std::vector<double>& rho,
                          const std::vector<std::array<double, 3>>& u) = 0;
  /// Macroscopic fields copied to the host.
  virtual MacroFields macroscopic() const = 0;
  /// Mass, max speed and the first non-finite cell, reduced on the device.
  virtual Diagnostics diagnostics() const = 0;
  /// Density and velocity at a few cells (linear indices), computed on the device.
  virtual MacroFields sample(const std::vector<std::int64_t>& cells) const = 0;
  /// Raw populations copied to the host (q-major, then cells): for tests and checkpoints.
  virtual std::vector<double> populations() const = 0;

  std::int64_t steps_done() const { return m_steps; }
  const SolverConfig& config() const { return m_cfg; }
  std::int64_t fluid_cells() const { return m_fluid_cells; }
  /// Bytes moved per fluid-cell update by the fused kernel (read Q + write Q values + flag).
  virtual double bytes_per_update() const = 0;
  /// Device bytes held per cell (populations, flags).
  virtual double bytes_per_cell() const = 0;

 protected:
  explicit Solver(SolverConfig cfg) : m_cfg(std::move(cfg)) {}
  SolverConfig m_cfg;
  std::int64_t m_steps = 0;
  std::int64_t m_fluid_cells = 0;
};

/// \brief Build the instantiation that matches cfg.lattice, cfg.collision and cfg.precision, with
/// flags from the faces and obstacles and the state set from cfg.initial.
std::unique_ptr<Solver> make_solver(const SolverConfig& cfg);

/// \brief The initial fields of cfg.initial (uniform, or a Taylor-Green vortex in the x-y plane).
void initial_fields(const SolverConfig& cfg, std::vector<double>& rho,
                    std::vector<std::array<double, 3>>& u);

}  // namespace kolibri
