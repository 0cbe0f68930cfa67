// SPDX-License-Identifier: Apache-2.0
// read_mesh: binary and ASCII STL, Wavefront OBJ.
#include <kolibri/geometry/Surface.hpp>

#include <algorithm>
#include <bit>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace kolibri {

namespace {

/// Error of a mesh file: "<path>: <what>" or "<path>:<line>: <what>".
[[noreturn]] void fail(const std::string& path, const std::string& what, long line = 0) {
  throw std::runtime_error(path + (line > 0 ? ":" + std::to_string(line) : std::string()) + ": " + what);
}

/// A word of the file as shown in a message: quoted, at most 40 characters.
std::string quote_word(std::string_view s) {
  constexpr std::size_t shown = 40;
  std::string out(1, '\'');
  out.append(s.substr(0, shown));
  out.append(s.size() > shown ? "...'" : "'");
  return out;
}

/// A number as written in the file: from_chars (locale independent), an optional leading '+'.
bool parse_number(std::string_view s, double& v) {
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

bool parse_int(std::string_view s, long& v) {
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f'; }

/// True for a triangle of zero area (also: one with a repeated vertex).
bool zero_area(const Vec3& p, const Vec3& q, const Vec3& r) {
  const Vec3 e1{q[0] - p[0], q[1] - p[1], q[2] - p[2]}, e2{r[0] - p[0], r[1] - p[1], r[2] - p[2]};
  return e1[1] * e2[2] - e1[2] * e2[1] == 0 && e1[2] * e2[0] - e1[0] * e2[2] == 0 &&
         e1[0] * e2[1] - e1[1] * e2[0] == 0;
}

/// Append the last three vertices as a triangle, or drop them when it has zero area.
void add_last_triangle(TriangleMesh& m) {
  const int first = static_cast<int>(m.vertices.size()) - 3;
  if (zero_area(m.vertices[first], m.vertices[first + 1], m.vertices[first + 2])) m.vertices.resize(first);
  else m.triangles.push_back({first, first + 1, first + 2});
}

void require_triangles(const std::string& path, const TriangleMesh& m, std::size_t count_read) {
  if (!m.triangles.empty()) return;
  if (count_read == 0) fail(path, "empty mesh: the file has no triangles");
  fail(path, "empty mesh: all " + std::to_string(count_read) + " triangles of the file have zero area");
}

// --- binary STL ---------------------------------------------------------------------------------

std::uint32_t le32(const char* p) {
  std::uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | static_cast<unsigned char>(p[i]);
  return v;
}

TriangleMesh read_binary_stl(const std::string& path, const std::string& data) {
  const std::uint32_t n = le32(data.data() + 80);
  if (n > std::numeric_limits<int>::max() / 3) fail(path, std::to_string(n) + " triangles: too many for one mesh");
  TriangleMesh m;
  m.vertices.reserve(3 * std::size_t(n));
  m.triangles.reserve(n);
  for (std::uint32_t t = 0; t < n; ++t) {
    const char* rec = data.data() + 84 + 50 * std::size_t(t) + 12;  // after the normal
    for (int v = 0; v < 3; ++v) {
      Vec3 p{};
      for (int d = 0; d < 3; ++d) {
        p[d] = std::bit_cast<float>(le32(rec + 12 * v + 4 * d));
        if (!std::isfinite(p[d]))
          fail(path, "triangle " + std::to_string(t + 1) + " of " + std::to_string(n) +
                         ": vertex coordinate is not a finite number");
      }
      m.vertices.push_back(p);
    }
    add_last_triangle(m);
  }
  require_triangles(path, m, n);
  return m;
}

// --- ASCII STL ----------------------------------------------------------------------------------

/// Whitespace-separated words with their line numbers.
class Words {
 public:
  explicit Words(std::string_view text) : text_(text) {}

  /// The next word, empty at the end of the text.
  std::string_view next() {
    skip_space();
    const std::size_t begin = pos_;
    while (pos_ < text_.size() && !is_space(text_[pos_])) ++pos_;
    word_line_ = line_;
    return text_.substr(begin, pos_ - begin);
  }
  /// Skip the rest of the current line (a solid's name).
  void skip_line() {
    while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
  }
  /// Line of the last word returned (or of the end of the text).
  long line() const { return word_line_; }

 private:
  void skip_space() {
    while (pos_ < text_.size() && is_space(text_[pos_])) {
      if (text_[pos_] == '\n') ++line_;
      ++pos_;
    }
  }
  std::string_view text_;
  std::size_t pos_ = 0;
  long line_ = 1, word_line_ = 1;
};

TriangleMesh read_ascii_stl(const std::string& path, const std::string& data) {
  Words words(data);
  auto found = [](std::string_view w) { return w.empty() ? std::string("end of file") : quote_word(w); };
  auto expect = [&](std::string_view keyword) {
    const auto w = words.next();
    if (w != keyword) fail(path, "expected '" + std::string(keyword) + "', found " + found(w), words.line());
  };
  auto number = [&](const char* what) {
    const auto w = words.next();
    double v = 0;
    if (!parse_number(w, v)) fail(path, std::string("expected a number (") + what + "), found " + found(w), words.line());
    if (!std::isfinite(v)) fail(path, std::string("expected a finite number (") + what + "), found " + found(w), words.line());
    return v;
  };

  TriangleMesh m;
  std::size_t count_read = 0;
  expect("solid");
  words.skip_line();
  for (;;) {
    const auto w = words.next();
    if (w == "endsolid") {
      words.skip_line();
      const auto after = words.next();
      if (after.empty()) break;
      if (after != "solid") fail(path, "expected 'solid' or the end of the file after 'endsolid', found " + found(after), words.line());
      words.skip_line();
      continue;
    }
    if (w != "facet") fail(path, "expected 'facet' or 'endsolid', found " + found(w), words.line());
    expect("normal");
    for (int d = 0; d < 3; ++d) number("normal component");
    expect("outer");
    expect("loop");
    for (int v = 0; v < 3; ++v) {
      expect("vertex");
      Vec3 p{};
      for (int d = 0; d < 3; ++d) p[d] = number("vertex coordinate");
      m.vertices.push_back(p);
    }
    expect("endloop");
    expect("endfacet");
    ++count_read;
    add_last_triangle(m);
  }
  require_triangles(path, m, count_read);
  return m;
}

TriangleMesh read_stl(const std::string& path, const std::string& data) {
  const std::size_t size = data.size();
  std::string binary_note = "the file has fewer than the 84 bytes of a binary STL header";
  if (size >= 84) {
    const std::uint64_t n = le32(data.data() + 80);
    if (size == 84 + 50 * n) return read_binary_stl(path, data);
    binary_note = "its header counts " + std::to_string(n) + " triangles, so a binary STL would have " +
                  std::to_string(84 + 50 * n) + " bytes, the file has " + std::to_string(size);
  }
  std::size_t start = 0;
  while (start < size && is_space(data[start])) ++start;
  if (data.compare(start, 5, "solid") != 0)
    fail(path, "not an STL file: not binary (" + binary_note + ") and not ASCII (does not start with 'solid')");
  try {
    return read_ascii_stl(path, data);
  } catch (const std::runtime_error& e) {
    if (size < 84 || std::find(data.begin(), data.end(), '\0') == data.end()) throw;
    throw std::runtime_error(std::string(e.what()) + " (read as ASCII STL; as binary STL: " + binary_note + ")");
  }
}

// --- OBJ ----------------------------------------------------------------------------------------

TriangleMesh read_obj(const std::string& path, const std::string& data) {
  struct Face {
    std::array<long, 3> index;  // 0-based, not yet checked against the vertex count
    long line;
  };
  TriangleMesh all;
  std::vector<Face> faces;
  std::vector<long> polygon;
  std::size_t pos = 0;
  long line = 0;
  while (pos < data.size()) {
    ++line;
    const std::size_t end = std::min(data.find('\n', pos), data.size());
    std::string_view text(data.data() + pos, end - pos);
    pos = end + 1;
    if (const auto hash = text.find('#'); hash != std::string_view::npos) text = text.substr(0, hash);
    Words words(text);
    const auto record = words.next();
    if (record == "v") {
      Vec3 p{};
      for (int d = 0; d < 3; ++d) {
        const auto w = words.next();
        if (!parse_number(w, p[d]) || !std::isfinite(p[d]))
          fail(path, "expected 3 finite numbers after 'v', found " + (w.empty() ? std::string("fewer") : quote_word(w)), line);
      }
      all.vertices.push_back(p);  // a w coordinate or colours may follow: ignored
    } else if (record == "f") {
      polygon.clear();
      for (auto w = words.next(); !w.empty(); w = words.next()) {
        // i, i/t, i//n or i/t/n: the vertex index is the part before the first '/'.
        const auto slash = w.find('/');
        long i = 0;
        bool ok = parse_int(w.substr(0, slash), i);
        if (ok && slash != std::string_view::npos) {
          const auto rest = w.substr(slash + 1);
          const auto slash2 = rest.find('/');
          long unused = 0;
          const auto t = rest.substr(0, slash2);
          ok = (t.empty() ? slash2 != std::string_view::npos : parse_int(t, unused)) &&
               (slash2 == std::string_view::npos || parse_int(rest.substr(slash2 + 1), unused));
        }
        if (!ok) fail(path, "bad face vertex " + quote_word(w) + " (expected i, i/t, i//n or i/t/n with integers)", line);
        if (i == 0) fail(path, "face index 0 is invalid (OBJ indices start at 1)", line);
        if (i < 0) {
          const long count = static_cast<long>(all.vertices.size());
          if (-i > count)
            fail(path, "face index " + std::to_string(i) + " out of range (" + std::to_string(count) +
                           " vertices before this line)", line);
          polygon.push_back(count + i);
        } else {
          polygon.push_back(i - 1);
        }
      }
      if (polygon.size() < 3)
        fail(path, "face with " + std::to_string(polygon.size()) + " vertices (expected at least 3)", line);
      for (std::size_t k = 1; k + 1 < polygon.size(); ++k) faces.push_back({{polygon[0], polygon[k], polygon[k + 1]}, line});
    }
  }
  const long count = static_cast<long>(all.vertices.size());
  for (const auto& f : faces)
    for (long i : f.index)
      if (i >= count)
        fail(path, "face index " + std::to_string(i + 1) + " out of range (the file has " + std::to_string(count) +
                       " vertices)", f.line);
  // Drop zero-area triangles, then keep only the vertices the others use, in the file's order.
  std::vector<std::array<int, 3>> kept;
  for (const auto& f : faces) {
    const std::array<int, 3> t{static_cast<int>(f.index[0]), static_cast<int>(f.index[1]), static_cast<int>(f.index[2])};
    if (!zero_area(all.vertices[t[0]], all.vertices[t[1]], all.vertices[t[2]])) kept.push_back(t);
  }
  std::vector<int> renumber(all.vertices.size(), -1);
  for (const auto& t : kept)
    for (int i : t) renumber[i] = 0;
  TriangleMesh m;
  for (std::size_t i = 0; i < renumber.size(); ++i)
    if (renumber[i] == 0) {
      renumber[i] = static_cast<int>(m.vertices.size());
      m.vertices.push_back(all.vertices[i]);
    }
  for (const auto& t : kept) m.triangles.push_back({renumber[t[0]], renumber[t[1]], renumber[t[2]]});
  require_triangles(path, m, faces.size());
  return m;
}

}  // namespace

TriangleMesh read_mesh(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (ext != ".stl" && ext != ".obj")
    fail(path, "unknown mesh file extension " + (ext.empty() ? std::string("(none)") : quote_word(ext)) +
                   " (supported: .stl (binary or ASCII) and .obj)");
  // Only a regular file, read up to its size: a device (/dev/zero) would read until memory runs
  // out, a FIFO would block, a directory gives a stream error.
  std::error_code ec;
  const auto st = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(st))
    fail(path,
         "cannot open the mesh file (" + (ec ? ec.message() : std::string("no such file")) + ")");
  if (!std::filesystem::is_regular_file(st)) {
    const auto t = st.type();
    const char* what =
        t == std::filesystem::file_type::directory ? "a directory"
        : t == std::filesystem::file_type::fifo    ? "a FIFO (named pipe)"
        : t == std::filesystem::file_type::character || t == std::filesystem::file_type::block
            ? "a device"
            : "not a regular file";
    fail(path, std::string("is ") + what + ", not a mesh file: give a regular STL or OBJ file");
  }
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) fail(path, "cannot read the size of the mesh file (" + ec.message() + ")");
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, std::string("cannot open the mesh file (") + std::strerror(errno) + ")");
  std::string data(static_cast<std::size_t>(size), '\0');
  in.read(data.data(), std::streamsize(size));
  if (in.bad() || std::uintmax_t(in.gcount()) != size)
    fail(path, "cannot read the mesh file (read " + std::to_string(in.gcount()) + " of " +
                   std::to_string(size) + " bytes)");
  return ext == ".stl" ? read_stl(path, data) : read_obj(path, data);
}

}  // namespace kolibri
