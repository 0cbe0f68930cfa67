// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The time loop of `kolibri run`: stepping in chunks, progress display, probes, field
/// output, blow-up detection and the JSON run summary.
#pragma once

#include <kolibri/config/Case.hpp>

#include <cstdint>
#include <iosfwd>
#include <string>

namespace kolibri {

/// Exit codes of `kolibri` (documented in docs/user-guide.md).
enum ExitCode : int {
  kExitOk = 0,
  kExitUsage = 1,     ///< bad command line
  kExitDeck = 2,      ///< invalid deck
  kExitDiverged = 3,  ///< NaN / blow-up detected
  kExitIo = 4,        ///< output could not be written
  kExitResource = 5,  ///< the case could not be set up (e.g. device memory exhausted)
  kExitStopped = 6,   ///< stopped early (signal or --walltime) after writing a checkpoint
  kExitRestart = 7,   ///< the checkpoint given to --restart cannot be used (nothing was written)
  kExitHalted = 8,    ///< the run cannot go on (a travelling body leaves the finest level)
};

/// \brief Options of `kolibri run` beyond the deck.
struct RunOptions {
  std::string restart;      ///< checkpoint directory to continue from, or "latest"
  bool restart_fallback =
      true;                 ///< latest: skip damaged checkpoints (with a warning) for older ones
  double walltime = 0.0;    ///< seconds the job may run (0: no limit); stop with a checkpoint before
  std::string deck_text;    ///< the deck as read (stored in checkpoints)
  /// --timeline: this many more steps after a completed run (after its last output), each point
  /// of a step timed on the device (Solver::step_timeline; summary.json "timeline").
  std::int64_t timeline_steps = 0;
};

/// \brief Result of a run, as written to summary.json.
struct RunResult {
  int exit_code = kExitOk;
  std::int64_t steps = 0;
  double wall_seconds = 0.0;
  double mlups = 0.0;
  double mass_drift = 0.0;  ///< relative change of the fluid mass over the run
  double max_speed = 0.0;
  std::string message;
  std::string checkpoint;   ///< the last checkpoint written, if any
};

/// \brief What to try after a run diverged: lower the velocity, refine, or one or two of the more
/// stable operators (TRT, regularized, recursive, ACM) that the case does not already use and
/// its lattice supports.
std::string divergence_advice(const SolverConfig& c);

/// \brief Run the case to completion. Progress goes to `log` (stdout in the app).
/// Collective over the ranks of Comm::world(): every rank calls it; only rank 0 writes files
/// and log lines.
RunResult run_case(const Case& c, std::ostream& log, const RunOptions& opts = {});

}  // namespace kolibri
