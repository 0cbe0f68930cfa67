// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The rules a solver configuration must follow whoever built it (a deck, a test, another
/// code): combinations of values that cannot run. Each rule is written once, in src/config/
/// Rules.cpp; the deck reports a breach at the line of its key, make_solver throws it.
#pragma once

#include <kolibri/config/Case.hpp>

#include <optional>
#include <string>

namespace kolibri {

/// \brief A broken rule: the deck section and key it belongs to and what was expected (with what
/// was given).
struct RuleBreach {
  std::string section;  ///< "model", "domain", "boundary", "physics"
  std::string key;      ///< the key in that section
  std::string message;
  /// "section.key: message", as the library reports it.
  std::string what() const { return section + "." + key + ": " + message; }
};

/// \brief The first rule `c` breaks, in a fixed order (operator and lattice, storage, streaming,
/// kernel options, bodies, ACM speed, box, periodic faces, viscosity), or none.
std::optional<RuleBreach> broken_rule(const SolverConfig& c);

}  // namespace kolibri
