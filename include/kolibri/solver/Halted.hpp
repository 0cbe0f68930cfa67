// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief What Solver::step throws where the run cannot go on although nothing diverged (a
/// travelling immersed body about to leave a refined grid's finest level): the steps before it
/// were taken (steps_done() counts them) and the state is theirs, so its fields can be written.
#pragma once

#include <stdexcept>

namespace kolibri {

/// \brief A run that cannot go on, with the reason (the deck's keys to change).
class RunHalted : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace kolibri
