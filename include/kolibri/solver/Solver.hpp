// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The runtime face of the solver: one virtual call per batch of steps; the compiled
/// (lattice, collision, precision) instantiation behind it is chosen once by make_solver.
#pragma once

#include <kolibri/config/Case.hpp>
#include <kolibri/ib/Loads.hpp>
#include <kolibri/parallel/Distribution.hpp>
#include <kolibri/parallel/Timeline.hpp>
#include <kolibri/solver/FlowStatistics.hpp>
#include <kolibri/solver/State.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace kolibri {

/// \brief Host copies of the macroscopic fields, x fastest (index x + nx (y + ny z)).
struct MacroFields {
  int nx = 0, ny = 0, nz = 0;
  std::vector<double> rho;
  std::vector<std::array<double, 3>> u;
  std::vector<std::uint8_t> solid;
  /// (Plain arithmetic, not grid/DenseGrid.hpp: host-only units include this header without
  /// Kokkos.)
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

/// With a Distribution, the calls marked collective must be made by every rank; fields and
/// reductions are global (macroscopic() on rank 0 only, the rest on every rank).
class Solver {
 public:
  virtual ~Solver() = default;
  /// Advance n time steps.
  virtual void step(std::int64_t n) = 0;
  /// Advance n time steps as step(n) does, timing the points of each on the device
  /// (parallel/Timeline.hpp; results unchanged); solvers without a timeline return none.
  virtual Timeline step_timeline(std::int64_t n) {
    step(n);
    return {};
  }
  /// Set the state to the equilibrium of the given fields (x fastest, size cells()).
  virtual void initialize(const std::vector<double>& rho,
                          const std::vector<std::array<double, 3>>& u) = 0;
  /// Macroscopic fields of the whole domain copied to the host (collective; on rank 0 only).
  virtual MacroFields macroscopic() const = 0;
  /// Mass, max speed and the first non-finite cell (global index), reduced on the device and
  /// over ranks (collective).
  virtual Diagnostics diagnostics() const = 0;
  /// Kinetic energy and enstrophy of the whole domain (collective; valid on rank 0): reduced on
  /// the device where this rank holds the whole domain, else from macroscopic() on rank 0.
  virtual FlowStatistics flow_statistics() const;
  /// The momentum of the fluid, sum of rho u over the updated cells of the whole domain (lattice
  /// units; the velocity with the half-force correction), reduced on the device and over ranks
  /// (collective): the permeability of porous cases (run/Runner.cpp).
  virtual std::array<double, 3> momentum() const = 0;
  /// Density and velocity at a few cells (global linear indices), on every rank (collective).
  virtual MacroFields sample(const std::vector<std::int64_t>& cells) const = 0;
  /// Populations of this rank's box (ghosts included) copied to the host, q-major: for tests.
  virtual std::vector<double> populations() const = 0;
  /// The raw stored state of this rank's cells (checkpoints); `phase` gets its layout: 0 two
  /// arrays (slot q), 1 in place after a local step (slot opposite(q)), 2 in place, arriving,
  /// 3 the moment representation (M moments a cell; stepping/Scheme.hpp, streaming_of_phase).
  virtual StatePiece state(int& phase) const = 0;
  /// The cells whose state this rank saves and loads (global coordinates).
  virtual Box state_box() const = 0;
  /// Restore a state() of this rank's box (collective: refreshes the ghost layers).
  virtual void load_state(const StatePiece& piece, int phase) = 0;
  /// "float64", "float32" or "float16": the stored value type.
  virtual std::string value_type() const = 0;
  virtual int populations_per_cell() const = 0;
  /// Seconds of halo exchange per time step, measured alone (pack, transfer, unpack; in two-
  /// array runs it overlaps the interior update); 0 on one rank. Collective.
  virtual double exchange_time_per_step(int /*repeats*/) { return 0.0; }
  /// Force and torque on each immersed body during the last step (empty without bodies).
  virtual std::vector<BodyLoad> body_loads() const { return {}; }
  /// The free bodies' motion for a checkpoint (ib/Motion.hpp's FreeMotion, packed; empty
  /// without free bodies), and taking it back on a restart (throws std::invalid_argument when
  /// it does not fit the deck's free bodies).
  virtual std::vector<double> body_motion() const { return {}; }
  virtual void set_body_motion(const std::vector<double>& packed) {
    if (!packed.empty())
      throw std::invalid_argument("the checkpoint holds free bodies' motion; this solver has none");
  }
  /// The implicit forcing's last solution, the next solve's first guess (3 values a sample;
  /// empty when the next solve starts cold), for a checkpoint, and taking it back on a restart:
  /// forces that do not fit the deck's samples (or a deck whose forcing does not start warm)
  /// are left aside, and the returned text says why (empty: taken, or none given).
  virtual std::vector<double> ib_coupling_forces() const { return {}; }
  virtual std::string set_ib_coupling_forces(const std::vector<double>& forces) {
    return forces.empty() ? std::string() : std::string("this solver has no bodies");
  }
  /// The characteristic outlets' state for a checkpoint (CharacteristicOutlets::state: a value
  /// a face, the same on every rank; empty without such faces), and taking it back on a restart
  /// (throws std::invalid_argument when it does not fit).
  virtual std::vector<double> outlet_state() const { return {}; }
  virtual void set_outlet_state(const std::vector<double>& s) {
    if (!s.empty())
      throw std::invalid_argument(
          "the checkpoint holds characteristic outlets' state; this run has no such face");
  }
  /// A refined grid's state for a checkpoint: every level's populations as stored, on rank 0
  /// (empty on the other ranks and for the other solvers; collective).
  virtual std::vector<std::byte> level_state() const { return {}; }
  /// The values of level_state() this rank takes back on a restart (its own and those its cells
  /// read), and the whole's count; empty (total 0) without levels.
  virtual LevelSlice level_slice() const { return {}; }
  /// Taking them back on a restart after load_state: the values of level_slice()'s ranges, in
  /// order (throws std::invalid_argument when they do not fit this solver's levels).
  virtual void set_level_state(const std::vector<std::byte>& bytes) {
    if (!bytes.empty())
      throw std::invalid_argument(
          "the checkpoint holds a refined grid's levels; this run has none");
  }
  /// What a checkpoint holds of the state (collective): state() and level_state() (a refined
  /// grid gathers its levels once for both).
  virtual CheckpointState checkpoint_state() const {
    CheckpointState s;
    s.levels = level_state();
    s.piece = state(s.phase);
    return s;
  }
  /// Force and torque (about obstacle_centre) on each bounce-back obstacle in the last step, by
  /// momentum exchange, summed over ranks (collective; stepping/ObstacleLoads.hpp).
  virtual std::vector<BodyLoad> obstacle_loads() const { return {}; }
  /// Immersed-boundary sizes and time spent.
  virtual IbStats ib_stats() const { return {}; }
  /// Restore the step counter (restarts).
  void set_steps_done(std::int64_t s) { m_steps = s; }

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

/// \brief This rank's solver of a multi-rank run: `cfg` is the whole case, `dist.dc` this rank's
/// piece (collective: the constructor sets up the halo exchange and counts cells over ranks).
std::unique_ptr<Solver> make_solver(const SolverConfig& cfg, const Distribution& dist);

/// \brief The settings a checkpoint's state depends on (lattice, operator, precision, storage,
/// streaming, box, tau, force, faces, obstacles) as "key=value;..." text: a restart must match.
std::string solver_signature(const SolverConfig& cfg);

/// \brief The initial fields of cfg.initial (uniform, the 2D or 3D Taylor-Green vortex, or read
/// from an HDF5 field file) over cfg's box, placed in the whole domain by cfg.part.
void initial_fields(const SolverConfig& cfg, std::vector<double>& rho,
                    std::vector<std::array<double, 3>>& u);

}  // namespace kolibri
