// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The one place an enum's names are spelled: a `NameTable<E>` beside each enum (its value
/// and name pairs, in the order help texts list them). The deck, `to_string`, the command line's
/// choices and the benchmark's JSON all read that table through the functions here.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kolibri {

/// \brief One value of an enum and its name in decks, on the command line and in output.
template <class E>
struct Named {
  E value;
  const char* name;
};

/// Specialised beside each enum: `static constexpr std::array<Named<E>, N> entries{...}`.
template <class E>
struct NameTable;

/// The name of `e` ("?" for a value the table lacks, which a test rules out).
template <class E>
constexpr const char* name_of(E e) {
  for (const auto& n : NameTable<E>::entries)
    if (n.value == e) return n.name;
  return "?";
}

/// The value named `s`, if any (exact, case-sensitive).
template <class E>
std::optional<E> parse_name(std::string_view s) {
  for (const auto& n : NameTable<E>::entries)
    if (s == n.name) return n.value;
  return std::nullopt;
}

/// Every name of E, in table order.
template <class E>
std::vector<std::string> names_of() {
  std::vector<std::string> out;
  for (const auto& n : NameTable<E>::entries) out.emplace_back(n.name);
  return out;
}

}  // namespace kolibri
