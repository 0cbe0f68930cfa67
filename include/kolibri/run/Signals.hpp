// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Stop requests from the batch system: SIGTERM and SIGUSR1 (what Slurm sends before the
/// time limit, with --signal) and SIGINT set a flag that the time loop polls between chunks.
#pragma once

#include <string>

namespace kolibri {

/// Install the handlers (idempotent). The previous handlers are restored by restore_stop_signals.
void install_stop_signals();
void restore_stop_signals();
/// The signal number received since install (0: none).
int stop_signal();
/// Forget a received signal (tests).
void clear_stop_signal();
/// "SIGTERM", "SIGUSR1", "SIGINT" or "signal N".
const char* signal_name(int sig);

/// \brief Parse a wall-clock limit: seconds ("5400"), "MM:SS", "HH:MM:SS", or with days as
/// Slurm writes them ("D-HH", "D-HH:MM", "D-HH:MM:SS"). Throws std::invalid_argument naming the
/// expected forms.
double parse_walltime(const std::string& s);

}  // namespace kolibri
