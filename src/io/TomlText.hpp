// SPDX-License-Identifier: Apache-2.0
// Internal: wording shared by the TOML readers (the deck and the checkpoint manifest).
#pragma once

#include <toml++/toml.h>

#include <string>

namespace kolibri::detail {

/// "a table", "an integer", ...: what a TOML value is, for error messages.
inline std::string toml_type_name(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "an array";
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a number";
    case toml::node_type::boolean: return "a boolean";
    default: return "a date/time";
  }
}

}  // namespace kolibri::detail
