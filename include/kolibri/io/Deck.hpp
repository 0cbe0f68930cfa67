// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Input decks (TOML): parse, apply `--set key=value` overrides, validate, derive tau.
#pragma once

#include <kolibri/config/Case.hpp>

#include <stdexcept>
#include <string>
#include <vector>

namespace kolibri {

/// \brief A deck mistake: the message names the file, the key and what was expected.
class DeckError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// \brief Read and validate a deck file. `overrides` are "section.key=value" strings whose value
/// is TOML (numbers, booleans, arrays) or a bare word taken as a string.
/// \throws DeckError on any mistake; nothing is created on disk.
Case load_deck(const std::string& path, const std::vector<std::string>& overrides = {});

/// \brief Same as load_deck, from deck text (`source_name` is used in messages).
Case parse_deck(const std::string& text, const std::string& source_name,
                const std::vector<std::string>& overrides = {});

/// \brief Warnings found while validating (e.g. Mach number above 0.3), one line each.
std::vector<std::string> deck_warnings(const Case& c);

}  // namespace kolibri
