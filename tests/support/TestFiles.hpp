// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Files the tests write and read: a scratch directory per test, ASCII STL meshes, a
/// file's contents, and the error a deck text gives.
#pragma once

#include <kolibri/geometry/Surface.hpp>
#include <kolibri/io/Deck.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace kolibri::test {

/// \brief A fresh directory for a test's files, removed at the end: named after the running
/// test (and the clock, so repeated runs never meet). ctest runs tests, and each case of a
/// parameterised test, in parallel processes: a fixed name would be shared between them.
class ScratchDir {
 public:
  ScratchDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = std::string("kolibri_") + (info ? info->name() : "test") + "_" +
                       std::to_string(std::chrono::steady_clock::now().time_since_epoch().count());
    for (char& c : name)
      if (c == '/') c = '_';
    make(name);
  }
  ~ScratchDir() { std::filesystem::remove_all(m_dir); }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::filesystem::path& dir() const { return m_dir; }
  std::string path(const std::string& file) const { return (m_dir / file).string(); }
  /// Write `bytes` to `file` in the directory; its path.
  std::string write(const std::string& file, std::string_view bytes) const {
    const std::string p = path(file);
    std::ofstream(p, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size()));
    return p;
  }
  std::string write(const std::string& file, const std::vector<std::uint8_t>& bytes) const {
    return write(file, std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
  }

 private:
  void make(const std::string& name) {
    m_dir = std::filesystem::temp_directory_path() / name;
    std::filesystem::remove_all(m_dir);
    std::filesystem::create_directories(m_dir);
  }
  std::filesystem::path m_dir;
};

/// \brief The mesh as ASCII STL text (vertices with six decimals; line ending `eol`).
inline std::string ascii_stl(const TriangleMesh& m, const char* eol = "\n") {
  std::string s = std::string("solid tetra") + eol;
  for (const auto& t : m.triangles) {
    s += std::string("  facet normal 0 0 0") + eol + "    outer loop" + eol;
    for (int v : t)
      s += "      vertex " + std::to_string(m.vertices[std::size_t(v)][0]) + " " +
           std::to_string(m.vertices[std::size_t(v)][1]) + " " +
           std::to_string(m.vertices[std::size_t(v)][2]) + eol;
    s += std::string("    endloop") + eol + "  endfacet" + eol;
  }
  return s + "endsolid tetra" + eol;
}

/// \brief The whole contents of the file at `path` (empty when it cannot be read).
inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

/// \brief The DeckError message of a deck text read as `path` with `overrides`, or "no error".
inline std::string deck_error(const std::string& text, const std::string& path,
                              const std::vector<std::string>& overrides = {}) {
  try {
    parse_deck(text, path, overrides);
  } catch (const DeckError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace kolibri::test
