// SPDX-License-Identifier: Apache-2.0
#include <kolibri/config/Rules.hpp>
#include <kolibri/geometry/MeshShape.hpp>
#include <kolibri/geometry/SolidImage.hpp>
#include <kolibri/io/Deck.hpp>
#include <kolibri/io/InletPlane.hpp>
#include <kolibri/io/Output.hpp>

#include <toml++/toml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <optional>
#include <set>
#include <sstream>
#include <string_view>

#include "TomlText.hpp"

namespace kolibri {
namespace {

std::string type_name(const toml::node& n) { return detail::toml_type_name(n); }

/// A number as messages show it: 6 significant digits (-1e+308, not 309 digits).
std::string num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.6g", v);
  return b;
}

/// A value as messages quote it: at most 60 characters (a 5 MB string is not echoed whole).
std::string quoted(const std::string& v) {
  std::string out(1, '\'');  // appended, not "'" + ...: GCC 12 -Wrestrict false positive
  if (v.size() <= 60) return out.append(v).append(1, '\'');
  return out.append(v, 0, 48)
      .append("...' (")
      .append(std::to_string(v.size()))
      .append(" characters)");
}

/// `v` as a TOML basic string ("..." with escapes).
std::string toml_quote(const std::string& v) {
  std::string out = "\"";
  for (const unsigned char ch : v) {
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += char(ch);
    } else if (ch < 0x20 || ch == 0x7f) {
      char b[8];
      std::snprintf(b, sizeof b, "\\u%04x", unsigned(ch));
      out += b;
    } else {
      out += char(ch);
    }
  }
  return out + "\"";
}

/// The source name that marks values given on the command line (--set) rather than in the deck.
constexpr std::string_view kSetSource = "--set ";

/// Reads one table of the deck, remembers which keys were used and reports the rest as unknown.
class Section {
 public:
  Section(const std::string& file, std::string path, const toml::table* t)
      : m_file(file), m_path(std::move(path)), m_table(t) {}

  bool has(const std::string& key) const { return m_table && m_table->get(key); }
  bool present() const { return m_table != nullptr; }

  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    std::ostringstream os;
    os << m_file;
    const toml::node* n = m_table ? m_table->get(key) : nullptr;
    const toml::node* at = n && n->source().begin.line > 0               ? n
                           : m_table && m_table->source().begin.line > 0 ? m_table
                                                                         : nullptr;
    const auto path =
        at && at->source().path ? std::string_view(*at->source().path) : std::string_view{};
    if (path.substr(0, kSetSource.size()) ==
        kSetSource)  // a value given with --set: name it, not a deck line
      os << ": --set " << quoted(std::string(path.substr(kSetSource.size())));
    else if (at)
      os << ':' << at->source().begin.line;
    os << ": key '" << full(key) << "': " << what;
    throw DeckError(os.str());
  }

  const std::string& path() const { return m_path; }
  std::string full(const std::string& key) const { return m_path.empty() ? key : m_path + "." + key; }

  const toml::node* node(const std::string& key) {
    m_used.insert(key);
    return m_table ? m_table->get(key) : nullptr;
  }

  std::optional<std::int64_t> integer(const std::string& key) {
    const toml::node* n = node(key);
    if (!n) return std::nullopt;
    if (!n->is_integer()) fail(key, "expected an integer, got " + type_name(*n));
    return n->value<std::int64_t>();
  }
  std::int64_t integer(const std::string& key, std::int64_t def, std::int64_t lo, std::int64_t hi) {
    const auto v = integer(key);
    if (!v) return def;
    if (*v < lo || *v > hi)
      fail(key, "value " + std::to_string(*v) + " out of range: expected an integer in [" +
                    std::to_string(lo) + ", " + std::to_string(hi) + "]");
    return *v;
  }

  std::optional<double> number(const std::string& key) {
    const toml::node* n = node(key);
    if (!n) return std::nullopt;
    if (!n->is_number()) fail(key, "expected a number, got " + type_name(*n));
    const double v = *n->value<double>();
    if (!std::isfinite(v)) fail(key, "expected a finite number");
    return v;
  }
  double number(const std::string& key, double def) { return number(key).value_or(def); }

  std::optional<std::string> string(const std::string& key) {
    const toml::node* n = node(key);
    if (!n) return std::nullopt;
    if (!n->is_string()) fail(key, "expected a string, got " + type_name(*n));
    return *n->value<std::string>();
  }
  std::string choice(const std::string& key, const std::string& def,
                     const std::vector<std::string>& allowed) {
    const auto v = string(key);
    if (!v) return def;
    std::string low = *v;
    std::transform(low.begin(), low.end(), low.begin(), [](unsigned char c) { return std::tolower(c); });
    for (const auto& a : allowed) {
      std::string al = a;
      std::transform(al.begin(), al.end(), al.begin(), [](unsigned char c) { return std::tolower(c); });
      if (low == al) return a;
    }
    fail(key, quoted(*v) + " is not one of " + join(allowed));
  }

  /// An enum value by its name in NameTable<E> (case-insensitive, as choice()).
  template <class E>
  E choice_of(const std::string& key, E def) {
    return *parse_name<E>(choice(key, name_of(def), names_of<E>()));
  }

  std::optional<bool> boolean(const std::string& key) {
    const toml::node* n = node(key);
    if (!n) return std::nullopt;
    if (!n->is_boolean()) fail(key, "expected true or false, got " + type_name(*n));
    return *n->value<bool>();
  }

  template <class T>
  std::optional<std::array<T, 3>> vec3(const std::string& key, int dims) {
    const toml::node* n = node(key);
    if (!n) return std::nullopt;
    const toml::array* a = n->as_array();
    const std::string want = "an array of " + std::to_string(dims) + " " +
                             (std::is_integral_v<T> ? "integers" : "numbers") +
                             (dims == 2 ? " [x, y] (or 3 with z = 0)" : " [x, y, z]");
    if (!a) fail(key, "expected " + want + ", got " + type_name(*n));
    if (!(a->size() == std::size_t(dims) || (dims == 2 && a->size() == 3)))
      fail(key, "expected " + want + ", got " + std::to_string(a->size()) + " values");
    std::array<T, 3> out{};
    for (std::size_t i = 0; i < a->size(); ++i) {
      const toml::node& e = *a->get(i);
      if constexpr (std::is_integral_v<T>) {
        if (!e.is_integer()) fail(key, "expected " + want + "; element " + std::to_string(i) + " is " + type_name(e));
        out[i] = static_cast<T>(*e.value<std::int64_t>());
      } else {
        if (!e.is_number()) fail(key, "expected " + want + "; element " + std::to_string(i) + " is " + type_name(e));
        out[i] = *e.value<double>();
        if (!std::isfinite(double(out[i])))
          fail(key, "expected " + want + "; element " + std::to_string(i) +
                        " is not a finite number (" + num(double(out[i])) + ")");
      }
    }
    if (dims == 2 && a->size() == 3 && out[2] != T(0))
      fail(key, "a 2D deck has no z direction: the third component must be 0 (or give 2 values)");
    return out;
  }

  /// A non-empty array of integers in [lo, hi].
  std::optional<std::vector<int>> int_list(const std::string& key, int lo, int hi) {
    const toml::node* n = node(key);
    if (!n) return std::nullopt;
    const toml::array* a = n->as_array();
    const std::string want = "a non-empty array of integers in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
    if (!a || a->empty()) fail(key, "expected " + want + ", got " + type_name(*n));
    std::vector<int> out;
    for (std::size_t i = 0; i < a->size(); ++i) {
      const toml::node& e = *a->get(i);
      if (!e.is_integer() || *e.value<std::int64_t>() < lo || *e.value<std::int64_t>() > hi)
        fail(key, "expected " + want + "; element " + std::to_string(i) + " is not");
      out.push_back(int(*e.value<std::int64_t>()));
    }
    return out;
  }

  /// Every key of the table must have been read.
  void finish(const std::vector<std::string>& known) const {
    if (!m_table) return;
    for (const auto& [k, v] : *m_table) {
      const std::string key(k.str());
      if (!m_used.count(key)) fail(key, "unknown key (expected one of " + join(known) + ")");
    }
  }

  static std::string join(const std::vector<std::string>& v) {
    std::string s;
    for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + v[i];
    return s;
  }

  const toml::table* table() const { return m_table; }
  const std::string& file() const { return m_file; }

 private:
  std::string m_file, m_path;
  const toml::table* m_table;
  std::set<std::string> m_used;
};

const toml::table* subtable(Section& parent, const std::string& key) {
  const toml::node* n = parent.node(key);
  if (!n) return nullptr;
  if (!n->is_table()) parent.fail(key, "expected a table [" + parent.full(key) + "], got " + type_name(*n));
  return n->as_table();
}

/// Apply one "a.b.c=value" override to the parsed tree.
void apply_override(toml::table& root, const std::string& text, const std::string& file) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    throw DeckError(file + ": --set " + quoted(text) +
                    ": expected key=value, e.g. --set run.steps=100");
  const std::string key = text.substr(0, eq), raw = text.substr(eq + 1);
  toml::table* t = &root;
  std::size_t start = 0;
  for (std::size_t dot; (dot = key.find('.', start)) != std::string::npos; start = dot + 1) {
    std::string part = key.substr(start, dot - start);
    // name[i]: the i-th table of an array of tables ([[probe]], [[body]], [[obstacle]]); i equal
    // to their number adds one.
    std::optional<std::size_t> index;
    if (const auto open = part.find('['); open != std::string::npos) {
      const auto close = part.find(']', open);
      std::size_t i = 0;
      const auto [end, ec] =
          std::from_chars(part.data() + open + 1, part.data() + std::min(close, part.size()), i);
      if (close != part.size() - 1 || ec != std::errc() || end != part.data() + close || open == 0)
        throw DeckError(file + ": --set " + quoted(text) + ": '" + part +
                        "': expected name[index], e.g. --set probe[0].at=[10.5,20.25]");
      index = i;
      part.resize(open);
    }
    toml::node* n = t->get(part);
    if (!n) {
      if (index)
        t->insert(part, toml::array{});  // the size check below names the index
      else
        t->insert(part, toml::table{});
      n = t->get(part);
    }
    if (index) {
      toml::array* a = n ? n->as_array() : nullptr;
      if (!a || (!a->empty() && !a->is_array_of_tables()))
        throw DeckError(file + ": --set " + quoted(text) + ": '" + key.substr(0, start) + part +
                        "' is not an array of tables ([[" + part + "]]) to index");
      if (*index > a->size())
        throw DeckError(file + ": --set " + quoted(text) + ": the deck has " +
                        std::to_string(a->size()) + " [[" + part + "]] tables: index " +
                        std::to_string(*index) + " is neither one of them nor the next");
      if (*index == a->size()) a->push_back(toml::table{});
      n = a->get(*index);
    }
    if (!n->is_table())
      throw DeckError(file + ": --set " + quoted(text) + ": '" + key.substr(0, dot) +
                      "' is not a table (an array of tables takes an index: name[0].key=value)");
    t = n->as_table();
  }
  const std::string leaf = key.substr(start);
  if (leaf.find('[') != std::string::npos)
    throw DeckError(file + ": --set " + quoted(text) + ": '" + leaf +
                    "': a whole table cannot be set; set its keys (e.g. --set probe[0].at=[1,2])");
  try {
    auto parsed = toml::parse("v = " + raw, std::string(kSetSource) + text);
    t->insert_or_assign(leaf, std::move(*parsed.get("v")));
  } catch (const toml::parse_error&) {
    // A bare word: a string (parsed as one, so it too carries the --set source).
    auto parsed = toml::parse("v = " + toml_quote(raw), std::string(kSetSource) + text);
    t->insert_or_assign(leaf, std::move(*parsed.get("v")));
  }
}

/// A file a deck names: as given when absolute, else relative to the deck's directory.
std::string beside_deck(const std::string& path, const std::string& deck) {
  if (path.empty() || path.front() == '/') return path;
  const auto slash = deck.find_last_of('/');
  return slash == std::string::npos ? path : deck.substr(0, slash + 1) + path;
}

/// [geometry]: solid cells from a voxel image, a closed mesh or a random array of spheres,
/// resolved into sc.geometry (errors name the key at fault).
void read_geometry(Section& geometry, SolverConfig& sc, int dims, const std::string& file) {
  SolidGeometry& g = sc.geometry;
  const std::string type = geometry.choice("type", "", {"voxels", "mesh", "random_spheres"});
  if (type.empty()) geometry.fail("type", "missing: expected one of voxels, mesh, random_spheres");
  const std::array<int, 3> n{sc.nx, sc.ny, sc.nz};
  if (type == "voxels" || type == "mesh") {
    const auto path = geometry.string("file");
    if (!path || path->empty())
      geometry.fail("file",
                    type == "voxels"
                        ? "missing: expected file = \"sample.raw\" (one uint8 a voxel, x fastest)"
                        : "missing: expected file = \"vessel.stl\" (a closed STL or OBJ mesh)");
    g.file = *path;
    g.file = beside_deck(g.file, file);
  }
  if (type == "mesh") {
    g.kind = SolidGeometry::Kind::Mesh;
    g.scale = geometry.number("scale", 1.0);
    if (!(g.scale > 0.0) || !std::isfinite(g.scale))
      geometry.fail("scale", "expected a positive number: cells per unit of the mesh file");
    if (const auto r = geometry.vec3<double>("rotation", 3)) g.rotation = *r;
    if (const auto at = geometry.vec3<double>("position", dims)) g.position = *at;
    g.solid_outside = geometry.choice("solid", "inside", {"inside", "outside"}) == "outside";
  } else if (type == "voxels") {
    g.kind = SolidGeometry::Kind::Voxels;
    const auto size = geometry.vec3<int>("size", dims);
    if (!size)
      geometry.fail("size", std::string("missing: expected the image's extents, size = [nx, ny") +
                                (dims == 3 ? ", nz]" : "]"));
    g.size = *size;
    if (dims == 2) g.size[2] = 1;
    for (int d = 0; d < dims; ++d)
      if (g.size[std::size_t(d)] < 1) geometry.fail("size", "expected positive extents");
    if (const auto offset = geometry.vec3<int>("offset", dims)) g.offset = *offset;
    if (const auto values = geometry.int_list("solid_values", 0, 255)) g.solid_values = *values;
  } else {
    g.kind = SolidGeometry::Kind::RandomSpheres;
    const auto diameter = geometry.number("diameter");
    if (!diameter || !(*diameter >= 1.0))
      geometry.fail("diameter", "expected the spheres' diameter in cells, at least 1");
    g.diameter = *diameter;
    const auto porosity = geometry.number("porosity");
    if (!porosity || !(*porosity > 0.0 && *porosity < 1.0))
      geometry.fail("porosity", "expected the fraction of fluid cells to reach, 0 < porosity < 1");
    g.porosity = *porosity;
    g.seed =
        std::uint64_t(geometry.integer("seed", 1, 0, std::numeric_limits<std::int64_t>::max()));
  }
  geometry.finish(
      type == "voxels" ? std::vector<std::string>{"type", "file", "size", "offset", "solid_values"}
      : type == "mesh"
          ? std::vector<std::string>{"type", "file", "scale", "rotation", "position", "solid"}
          : std::vector<std::string>{"type", "diameter", "porosity", "seed"});
  try {
    resolve_geometry(g, n, sc.periodic_axes(), dims);
  } catch (const GeometryError& e) {
    geometry.fail(e.key, e.what());
  }
}

/// The values of face f's profile file (profile = "file"), resolved beside the deck and read
/// over the whole domain's face (errors name boundary.<face>.profile_file or profile_dataset).
void read_profile_file(Section& boundary, const std::string& key, SolverConfig& sc, int f,
                       const std::string& file) {
  FaceBC& bc = sc.faces[std::size_t(f)];
  const int n[3] = {sc.nx, sc.ny, sc.nz};
  const auto [a, b] = face_plane_axes(f);
  const PlaneShape shape{n[a], n[b], "xyz"[a], "xyz"[b]};
  bc.profile_file = beside_deck(bc.profile_file, file);
  try {
    bc.profile_values = std::make_shared<const std::vector<double>>(
        read_inlet_plane(bc.profile_file, bc.profile_dataset, shape));
  } catch (const InletPlaneError& e) {
    boundary.fail(key + "." + e.key, e.what());
  }
}

FaceBC read_face(Section& boundary, const std::string& key, int dims) {
  FaceBC bc;
  const toml::node* n = boundary.node(key);
  if (!n) return bc;
  const std::vector<std::string> types = names_of<FaceType>();
  std::string type;
  Section s(boundary.file(), boundary.full(key), n->as_table());
  if (n->is_string()) {
    type = *n->value<std::string>();
  } else if (n->is_table()) {
    const auto t = s.string("type");
    if (!t) s.fail("type", "missing: every boundary table needs type = one of " + Section::join(types));
    type = *t;
  } else {
    boundary.fail(key, "expected a string or a table { type = ... }, got " + type_name(*n));
  }
  const auto parsed = parse_name<FaceType>(type);
  if (!parsed) boundary.fail(key, quoted(type) + " is not one of " + Section::join(types));
  bc.type = *parsed;
  if (n->is_table()) {
    if (auto v = s.vec3<double>("velocity", dims)) {
      if (bc.type != FaceType::MovingWall && bc.type != FaceType::VelocityInlet)
        s.fail("velocity", "only moving_wall and velocity_inlet faces take a velocity");
      bc.velocity = *v;
    } else if (bc.type == FaceType::MovingWall || bc.type == FaceType::VelocityInlet) {
      s.fail("velocity", "missing: a " + type + " face needs velocity = [ux, uy" +
                             std::string(dims == 3 ? ", uz]" : "]"));
    }
    if (auto r = s.number("density")) {
      if (bc.type == FaceType::Wall || bc.type == FaceType::Periodic ||
          bc.type == FaceType::Outflow)
        s.fail("density",
               "only moving_wall, velocity_inlet, pressure_outlet and pressure_inlet faces take a "
               "density");
      if (*r <= 0) s.fail("density", "expected a positive density");
      bc.density = *r;
    }
    const bool moving = bc.type == FaceType::MovingWall || bc.type == FaceType::VelocityInlet;
    if (s.has("profile") && bc.type != FaceType::VelocityInlet)
      s.fail("profile", "only velocity_inlet faces take a profile");
    bc.profile = s.choice_of<InletProfile>("profile", InletProfile::Uniform);
    const bool from_file = bc.profile == InletProfile::File;
    if (s.has("profile_file") && !from_file)
      s.fail("profile_file", "only a face with profile = \"file\" takes a profile_file");
    if (from_file) {
      const auto path = s.string("profile_file");
      if (!path || path->empty())
        s.fail("profile_file",
               "missing: profile = \"file\" needs profile_file = \"inlet.csv\" (CSV, or HDF5 "
               "when the name ends in .h5 or .hdf5)");
      bc.profile_file = *path;
    }
    if (s.has("profile_dataset") && !(from_file && is_hdf5_path(bc.profile_file)))
      s.fail("profile_dataset",
             "only an HDF5 profile_file (a name ending in .h5 or .hdf5) takes a profile_dataset");
    if (from_file) bc.profile_dataset = s.string("profile_dataset").value_or("profile");
    for (const char* k : {"ramp_steps", "period", "amplitude", "offset"})
      if (s.has(k) && !moving)
        s.fail(k, "only moving_wall and velocity_inlet faces change in time");
    bc.ramp_steps = s.integer("ramp_steps", 0, 0, std::int64_t(1) << 62);
    if (auto t = s.number("period")) {
      if (*t <= 0) s.fail("period", "expected a positive period in time steps");
      bc.period = *t;
    }
    for (const char* k : {"amplitude", "offset"})
      if (s.has(k) && bc.period <= 0)
        s.fail(k, std::string("needs period = ... (time steps): the velocity is offset + amplitude "
                              "sin(2 pi t / period) times the set one"));
    bc.amplitude = s.number("amplitude", 0.0);
    bc.offset = s.number("offset", 1.0);
    if (s.has("pressure_rule") && !bc.is_pressure())
      s.fail("pressure_rule", "only pressure_outlet and pressure_inlet faces take a pressure_rule");
    bc.pressure_rule = s.choice_of<PressureRule>("pressure_rule", PressureRule::Auto);
    if (auto k = s.number("relaxation")) {  // where it applies: config/Rules.cpp
      if (!(*k >= 0.0)) s.fail("relaxation", "expected a rate a time step from 0 to 1");
      bc.relaxation = *k;
    }
    s.finish({"type", "velocity", "density", "profile", "profile_file", "profile_dataset",
              "ramp_steps", "period", "amplitude", "offset", "pressure_rule", "relaxation"});
  } else if (bc.type == FaceType::MovingWall || bc.type == FaceType::VelocityInlet) {
    boundary.fail(key, "a " + type + " face needs a velocity: write " + key + " = { type = \"" +
                           type + "\", velocity = [...] }");
  }
  return bc;
}

/// The `retraction` key of [ib] or of a [[body]] (`whose`: the samples it moves), if given: 0 to
/// kMaxRetraction cells.
std::optional<double> read_retraction(Section& s, const std::string& whose) {
  const std::optional<double> r = s.number("retraction");
  if (r && !(*r >= 0.0 && *r <= kMaxRetraction))
    s.fail("retraction", "expected 0 to " + std::to_string(int(kMaxRetraction)) +
                             " cells (how far the samples sit inside " + whose + ")");
  return r;
}

/// Every table of the array of tables `[[key]]` as a Section named key[i], handed to fn(s, i).
template <class Fn>
void for_each_table(Section& top, const std::string& key, const std::string& file, const Fn& fn) {
  const toml::node* n = top.node(key);
  if (!n) return;
  const toml::array* arr = n->as_array();
  if (!arr || !arr->is_array_of_tables()) top.fail(key, "expected [[" + key + "]] tables");
  for (std::size_t i = 0; i < arr->size(); ++i) {
    Section s(file, top.full(key) + "[" + std::to_string(i) + "]", arr->get(i)->as_table());
    fn(s, i);
  }
}

int axis_of(Section& s, const std::string& key, int def) {
  const std::string a = s.choice(key, def == 0 ? "x" : def == 1 ? "y" : "z", {"x", "y", "z"});
  return a[0] - 'x';
}

}  // namespace

Case parse_deck(const std::string& text, const std::string& file,
                const std::vector<std::string>& overrides) {
  toml::table root;
  try {
    root = toml::parse(text, file);
  } catch (const toml::parse_error& e) {
    std::ostringstream os;
    os << file << ':' << e.source().begin.line << ':' << e.source().begin.column
       << ": TOML syntax error: " << e.description();
    throw DeckError(os.str());
  }
  for (const auto& o : overrides) apply_override(root, o, file);

  Case c;
  c.source = file;
  SolverConfig& sc = c.solver;
  Section top(file, "", &root);

  // [model]
  Section model(file, "model", subtable(top, "model"));
  sc.lattice = model.choice_of("lattice", LatticeKind::D2Q9);
  sc.collision = model.choice_of("collision", CollisionKind::Bgk);
  const std::string col = to_string(sc.collision);
  sc.precision = model.choice_of("precision", Precision::FP64);
  sc.streaming = model.choice_of("streaming", Streaming::TwoArray);
  const std::string str = to_string(sc.streaming);
  sc.storage = model.choice_of("storage", StorageKind::Same);
  sc.trt_magic = model.number("trt_magic", 3.0 / 16.0);
  if (sc.trt_magic <= 0) model.fail("trt_magic", "expected a positive number (3/16 puts walls exactly halfway)");
  // Multiple-relaxation-time rates (THEORY.md 1.5, 1.7, 2.3).
  const bool mrt = sc.collision == CollisionKind::Mrt, cm = sc.collision == CollisionKind::CentralMoment,
             acm = sc.collision == CollisionKind::AdaptiveCentralMoment;
  auto only = [&](const char* key, bool allowed, const char* who) {
    if (model.has(key) && !allowed) model.fail(key, std::string("only ") + who + " takes this key, got collision = \"" + col + "\"");
  };
  auto rate = [&](const char* key, double def, bool allowed, const char* who) {
    only(key, allowed, who);
    if (!model.has(key)) return def;
    const double v = *model.number(key);
    if (!(v > 0 && v < 2)) model.fail(key, "expected a relaxation rate in (0, 2), got " + num(v));
    return v;
  };
  sc.bulk_rate = rate("bulk_rate", 0.0, mrt || cm || acm, "collision = \"mrt\", \"cm\" or \"acm\"");
  sc.high_order_rate = rate("high_order_rate", 1.0, cm, "collision = \"cm\"");
  only("cm_basis", cm || acm, "collision = \"cm\" or \"acm\"");
  sc.cm_hermite = model.choice("cm_basis", "hermite", {"hermite", "monomial"}) == "hermite";
  only("kbc_shear", sc.collision == CollisionKind::Kbc, "collision = \"kbc\"");
  sc.kbc_shear = model.choice_of("kbc_shear", KbcShear::Deviatoric);
  only("acm_viscosity", acm, "collision = \"acm\"");
  only("acm_velocity", acm, "collision = \"acm\"");
  sc.acm_viscosity = model.number("acm_viscosity", 5e-4);
  if (!(sc.acm_viscosity > 0)) model.fail("acm_viscosity", "expected a positive artificial viscosity (lattice units; the ACM papers use 5e-4 to 1e-3)");
  const std::optional<double> acm_velocity = model.number("acm_velocity");
  if (acm_velocity && !(*acm_velocity > 0)) model.fail("acm_velocity", "expected a positive reference speed (lattice units)");
  // Kernel and layout options (two arrays; results are the same, speed differs)
  const std::string layout = model.choice("layout", "auto", {"auto", "soa", "csoa", "tiles"});
  const bool csoa = layout == "csoa", tiles = layout == "tiles";
  if (model.has("csoa_alpha") && !csoa) model.fail("csoa_alpha", "only layout = \"csoa\" takes this key");
  sc.csoa_alpha = csoa              ? int(model.integer("csoa_alpha", 32, 2, 1 << 20))
                  : layout == "soa" ? 0
                                    : -1;
  if (model.has("tile_edge") && !tiles)
    model.fail("tile_edge", "only layout = \"tiles\" takes this key");
  if (tiles) {
    sc.tile_edge = int(model.integer("tile_edge", tile_edges(dimensions(sc.lattice))[0], 1, 1024));
  }
  sc.face_kernels = model.choice("boundary_kernels", "list", {"list", "faces"}) == "faces";
  sc.collision_kernels = int(model.integer("collision_kernels", 1, 1, 2));
  if (sc.streaming == Streaming::Moments && model.has("layout"))
    model.fail("layout", "the moment representation stores moments, not populations: needs streaming = \"two_array\" or "
                         "\"in_place\"");
  sc.moment_arrays = int(model.integer("moment_arrays", 2, 1, 2));
  // 0: the default length (moment_segment_for)
  sc.moment_segment = int(model.integer("moment_segment", 0, 1, 1 << 20));
  for (const char* key : {"moment_arrays", "moment_segment"})
    if (sc.streaming != Streaming::Moments && model.has(key))
      model.fail(key, "needs streaming = \"moments\", got streaming = \"" + str + "\"");
  if (sc.streaming != Streaming::TwoArray)
    for (const char* key : {"boundary_kernels", "collision_kernels"})
      if (model.has(key))
        model.fail(key, "needs streaming = \"two_array\", got streaming = \"" + str + "\"");
  model.finish({"lattice", "collision", "precision", "storage", "streaming", "trt_magic",
                "bulk_rate", "high_order_rate", "cm_basis", "acm_viscosity", "acm_velocity",
                "layout", "csoa_alpha", "tile_edge", "boundary_kernels", "collision_kernels",
                "moment_arrays", "moment_segment"});
  const int dims = dimensions(sc.lattice);

  // [domain]
  Section domain(file, "domain", subtable(top, "domain"));
  if (!domain.table()) top.fail("domain", "missing: the deck needs [domain] with nx, ny (and nz in 3D)");
  const std::int64_t max_n = 1 << 20;
  if (!domain.has("nx")) domain.fail("nx", "missing: expected the number of cells along x");
  if (!domain.has("ny")) domain.fail("ny", "missing: expected the number of cells along y");
  sc.nx = int(domain.integer("nx", 1, 1, max_n));
  sc.ny = int(domain.integer("ny", 1, 1, max_n));
  if (dims == 3 && !domain.has("nz")) domain.fail("nz", "missing: a 3D lattice needs the number of cells along z");
  sc.nz = int(domain.integer("nz", 1, 1, max_n));
  if (sc.cells() >= (std::int64_t(1) << 32))
    domain.fail("nx", std::to_string(sc.nx) + " x " + std::to_string(sc.ny) + " x " + std::to_string(sc.nz) + " = " +
                          std::to_string(sc.cells()) + " cells: at most 2^32 - 1 = 4294967295 cells per rank");
  domain.finish({"nx", "ny", "nz"});

  // [boundary]
  Section boundary(file, "boundary", subtable(top, "boundary"));
  for (int f = 0; f < 6; ++f) {
    if (dims == 2 && f >= 4 && boundary.has(kFaceNames[std::size_t(f)]))
      boundary.fail(kFaceNames[std::size_t(f)], "a 2D deck has no z faces");
    sc.faces[f] = read_face(boundary, kFaceNames[std::size_t(f)], dims);
  }
  for (int f = 0; f < 6; ++f) {  // a profile needs walls across the inlet, or its file
    const InletProfile profile = sc.faces[f].profile;
    if (profile == InletProfile::Uniform) continue;
    if (profile == InletProfile::File) {
      read_profile_file(boundary, kFaceNames[std::size_t(f)], sc, f, file);
      continue;
    }
    const int axis = f / 2;
    int walled = 0;
    std::string axes;
    for (int t : {(axis + 1) % 3, (axis + 2) % 3}) {
      if (t == 2 && dims == 2) continue;
      axes += std::string(axes.empty() ? "" : " and ") + "xyz"[t];
      walled += bounded_axis(sc.domain_faces(), t);
    }
    if (profile == InletProfile::Parabolic && walled == 0)
      boundary.fail(
          kFaceNames[std::size_t(f)],
          "a parabolic profile needs walls across the inlet: the " + axes +
              " faces are periodic (make one pair non-periodic, or use profile = \"uniform\")");
    if (profile == InletProfile::Pipe && (dims == 2 || walled < 2))
      boundary.fail(
          kFaceNames[std::size_t(f)],
          std::string("a pipe profile needs a 3D deck with non-periodic faces on both axes across "
                      "the inlet (") +
              axes + ")");
  }
  boundary.finish({kFaceNames.begin(), kFaceNames.end()});

  // [initial]
  Section initial(file, "initial", subtable(top, "initial"));
  using Start = InitialCondition::Kind;
  sc.initial.kind = initial.choice_of<Start>("type", Start::Uniform);
  const std::string start = name_of(sc.initial.kind);
  sc.initial.density = initial.number("density", 1.0);
  if (sc.initial.density <= 0) initial.fail("density", "expected a positive density");
  const bool vortex = sc.initial.kind == Start::TaylorGreen ||
                      sc.initial.kind == Start::TaylorGreen3D ||
                      sc.initial.kind == Start::DoubleShearLayer;
  if (vortex) {
    if (initial.has("velocity"))
      initial.fail("velocity", "a " + start + " start takes amplitude = U, not velocity");
    sc.initial.velocity = {initial.number("amplitude", 0.05), 0.0, 0.0};
  } else {
    if (initial.has("amplitude"))
      initial.fail("amplitude",
                   "only the taylor_green, taylor_green_3d and double_shear_layer starts take "
                   "an amplitude");
    sc.initial.velocity = initial.vec3<double>("velocity", dims).value_or(std::array<double, 3>{0, 0, 0});
  }
  if (sc.initial.kind == Start::TaylorGreen3D) {
    if (dims != 3) initial.fail("type", "taylor_green_3d needs a 3D lattice (D3Q19 or D3Q27)");
    if (sc.nx != sc.ny || sc.ny != sc.nz)
      initial.fail("type", "taylor_green_3d needs a cubic box (one period on each axis), got " +
                               std::to_string(sc.nx) + " x " + std::to_string(sc.ny) + " x " +
                               std::to_string(sc.nz));
    for (std::size_t f = 0; f < 6; ++f)
      if (sc.faces[f].type != FaceType::Periodic)
        initial.fail("type", std::string("taylor_green_3d needs periodic faces; boundary.") +
                                 kFaceNames[f] + " is " + to_string(sc.faces[f].type));
  }
  if (sc.initial.kind == Start::File) {
    if (initial.has("velocity") || initial.has("density"))
      initial.fail(initial.has("velocity") ? "velocity" : "density",
                   "a file start reads density and velocity from the file");
    auto path = initial.string("file");
    if (!path || path->empty())
      initial.fail("file",
                   "missing: a file start needs file = \"fields.h5\" (an HDF5 field file "
                   "of kolibri: /density and /velocity in lattice units)");
    sc.initial.file = *path;
    sc.initial.file = beside_deck(sc.initial.file, file);
    std::array<int, 3> extent{};
    try {
      extent = fields_hdf5_extent(sc.initial.file);
    } catch (const OutputError& e) {
      initial.fail("file", e.what());
    }
    if (extent != std::array<int, 3>{sc.nx, sc.ny, sc.nz})
      initial.fail("file", sc.initial.file + " holds " + std::to_string(extent[0]) + " x " +
                               std::to_string(extent[1]) + " x " + std::to_string(extent[2]) +
                               " cells; the domain is " + std::to_string(sc.nx) + " x " +
                               std::to_string(sc.ny) + " x " + std::to_string(sc.nz));
  } else if (initial.has("file")) {
    initial.fail("file", "only type = \"file\" reads a file");
  }
  initial.finish({"type", "density", "velocity", "amplitude", "file"});

  // [physics]
  Section physics(file, "physics", subtable(top, "physics"));
  const auto tau = physics.number("tau"), nu = physics.number("viscosity"), re = physics.number("reynolds");
  const int given = int(tau.has_value()) + int(nu.has_value()) + int(re.has_value());
  Section units(file, "units", subtable(top, "units"));
  if (units.present() && given > 0)
    physics.fail(tau  ? "tau"
                 : nu ? "viscosity"
                      : "reynolds",
                 "the deck has [units]: tau follows from units.viscosity, units.length and "
                 "units.velocity (remove physics.tau, viscosity and reynolds)");
  if (!units.present() && given != 1)
    physics.fail(given == 0 ? "tau" : (re ? "reynolds" : "viscosity"),
                 given == 0 ? "missing: give exactly one of tau, viscosity or reynolds"
                            : "give exactly one of tau, viscosity or reynolds (" + std::to_string(given) + " given)");
  double umax_bc = 0.0;
  std::string umax_source = "physics.velocity";
  for (int f = 0; f < 6; ++f) {
    const FaceBC& face = sc.faces[f];
    const double v = std::hypot(face.velocity[0], face.velocity[1], face.velocity[2]) *
                     face.peak_factor() * face.profile_peak();
    if (v > umax_bc)
      umax_bc = v, umax_source = std::string("boundary.") + kFaceNames[std::size_t(f)] +
                                 ".velocity" +
                                 (face.peak_factor() != 1.0 ? " times offset + amplitude" : "") +
                                 (face.profile_peak() != 1.0 ? " times the profile's peak" : "");
  }
  // Taylor-Green: v peaks at U nx... (kx/ky) = U ny/nx
  const double u0 =
      sc.initial.kind == Start::TaylorGreen
          ? sc.initial.velocity[0] * std::max(1.0, double(sc.ny) / sc.nx)
          : std::hypot(sc.initial.velocity[0], sc.initial.velocity[1], sc.initial.velocity[2]);
  if (u0 > umax_bc) umax_source = vortex ? "initial.amplitude" : "initial.velocity";
  c.u_char = physics.number("velocity", std::max(umax_bc, u0));
  if (physics.has("velocity") && !(c.u_char > 0))
    physics.fail("velocity",
                 "expected a positive velocity scale (lattice units), got " + num(c.u_char));
  c.l_char = physics.number("length", double(sc.ny));
  if (c.l_char <= 0) physics.fail("length", "expected a positive length in cells");
  if (units.present()) {
    // SI: the characteristic length L (m) spans physics.length cells, the characteristic speed U
    // (m/s) is physics.velocity in lattice units: dx = L / length, dt = velocity dx / U, and the
    // lattice viscosity nu dt / dx^2 gives tau.
    auto positive = [&](const char* key, const char* what) {
      const auto v = units.number(key);
      if (!v) units.fail(key, std::string("missing: [units] needs ") + what);
      if (!(*v > 0))
        units.fail(key, "expected a positive " + std::string(what) + ", got " + num(*v));
      return *v;
    };
    const double length_m = positive("length", "length = the characteristic length in metres");
    const double speed_m_s = positive("velocity", "velocity = the characteristic speed in m/s");
    const double nu_si = positive("viscosity", "viscosity = the kinematic viscosity in m^2/s");
    c.units.density = positive("density", "density = the fluid's density in kg/m^3");
    if (!physics.has("velocity"))
      physics.fail("velocity",
                   "missing: [units] maps units.velocity onto physics.velocity, the "
                   "lattice velocity scale (e.g. 0.05; it sets the Mach number)");
    c.units.given = true;
    c.units.dx = length_m / c.l_char;
    c.units.dt = c.u_char * c.units.dx / speed_m_s;
    sc.tau = 3.0 * nu_si * c.units.dt / (c.units.dx * c.units.dx) + 0.5;
    units.finish({"length", "velocity", "viscosity", "density"});
  } else if (tau) {
    sc.tau = *tau;
  } else if (nu) {
    if (*nu <= 0) physics.fail("viscosity", "expected a positive lattice viscosity");
    sc.tau = 3.0 * *nu + 0.5;
  } else {
    if (*re <= 0) physics.fail("reynolds", "expected a positive Reynolds number");
    if (c.u_char <= 0)
      physics.fail("reynolds", "needs a velocity scale: set physics.velocity (lattice units) or a moving wall / inlet velocity");
    sc.tau = 3.0 * c.u_char * c.l_char / *re + 0.5;
  }
  const double viscosity = (sc.tau - 0.5) / 3.0;
  c.reynolds = viscosity > 0 ? c.u_char * c.l_char / viscosity : 0.0;
  if (auto F = physics.vec3<double>("force", dims)) sc.force = *F;
  const bool check = physics.boolean("check_stability").value_or(true);
  const std::string which = units.present() ? "velocity"
                            : tau           ? "tau"
                            : nu            ? "viscosity"
                                            : "reynolds";
  const double umax = std::max({umax_bc, u0, c.u_char});
  if (c.u_char >= std::max(umax_bc, u0) && physics.has("velocity")) umax_source = "physics.velocity";
  c.u_max = umax;
  // the adaptive rate compares |u| with the fastest speed of the case
  if (acm) sc.acm_velocity = acm_velocity.value_or(umax);
  const double mach = umax * std::sqrt(3.0);
  if (check && mach >= 0.5)
    physics.fail(physics.has("velocity") ? "velocity" : (re ? "reynolds" : which),
                 "lattice velocity " + num(umax) + " (from " + umax_source + ") gives Mach " +
                     num(mach) +
                     ": expected Mach < 0.5 (|u| < 0.288); lower the velocity and refine the grid, "
                     "or set physics.check_stability = false");
  if (check && sc.tau > 0.5 && sc.tau < 0.5005)  // tau <= 1/2 itself: broken_rule
    physics.fail(which,
                 "gives tau = " + num(sc.tau) +
                     ", too close to 1/2 to be stable: expected tau >= 0.5005 (refine the grid, "
                     "lower the velocity, or set physics.check_stability = false)");
  if (check && sc.tau > 5.0)
    physics.fail(which, "gives tau = " + num(sc.tau) +
                            ": expected tau <= 5 (accuracy degrades; "
                            "raise the velocity or set physics.check_stability = false)");
  physics.finish({"tau", "viscosity", "reynolds", "velocity", "length", "force", "check_stability"});
  if (sc.storage == StorageKind::FP16) {  // FP16 stores f - w: densities must stay near 1
    if (std::fabs(sc.initial.density - 1.0) > 0.2)
      initial.fail("density",
                   "fp16 storage keeps f - w_q and needs densities within 1 +- 0.2, got " +
                       num(sc.initial.density) + "; use storage = \"same\"");
    for (int f = 0; f < 6; ++f)
      if (std::fabs(sc.faces[f].density - 1.0) > 0.2)
        boundary.fail(kFaceNames[std::size_t(f)],
                      "fp16 storage needs face densities within 1 +- 0.2; use storage = \"same\"");
  }
  if (sc.collision != CollisionKind::Trt && model.has("trt_magic"))
    model.fail("trt_magic", "only collision = \"trt\" takes a magic parameter");

  // [[obstacle]]
  for_each_table(top, "obstacle", file, [&](Section& s, std::size_t i) {
    Obstacle o;
    if (const auto name = s.string("name")) {
      if (name->empty() || name->size() > 64 || name->find_first_of(",\"\n\r") != std::string::npos)
        s.fail("name",
               quoted(*name) +
                   ": expected 1 to 64 characters without commas, quotes or line breaks (it is "
                   "written in CSV rows)");
      o.name = *name;
    }
    const std::string mine = obstacle_name(o, i);
    for (std::size_t k = 0; k < sc.obstacles.size(); ++k)
      if (obstacle_name(sc.obstacles, k) == mine)
        s.fail("name", quoted(mine) + " is taken by another obstacle");
    const std::string shape = s.choice("type", "", {"box", "sphere", "cylinder", "mesh"});
    if (shape.empty()) s.fail("type", "missing: expected one of box, sphere, cylinder, mesh");
    if (shape == "mesh") {
      o.shape = Obstacle::Shape::Mesh;
      const auto path = s.string("file");
      if (!path || path->empty())
        s.fail("file", "missing: expected file = \"body.stl\" (a closed STL or OBJ mesh)");
      o.file = beside_deck(*path, file);
      o.scale = s.number("scale", 1.0);
      if (!(o.scale > 0.0) || !std::isfinite(o.scale))
        s.fail("scale", "expected a positive number: cells per unit of the mesh file");
      if (const auto r = s.vec3<double>("rotation", 3)) o.rotation = *r;
      const auto ctr = s.vec3<double>("center", dims);
      if (!ctr)
        s.fail("center", "missing: where the mesh's bounding-box centre goes, center = [x, y" +
                             std::string(dims == 3 ? ", z]" : "]") + " in cells");
      o.center = *ctr;
      if (dims == 2) o.center[2] = 0.5;
      try {
        o.mesh = std::make_shared<const MeshShape>(
            load_mesh_shape(o.file, o.scale, o.rotation, o.center));
      } catch (const GeometryError& e) {
        s.fail(e.key, e.what());
      } catch (const std::exception& e) {  // e.g. memory for the bins of a huge mesh
        s.fail("file", o.file + ": " + e.what());
      }
    } else if (shape == "box") {
      o.shape = Obstacle::Shape::Box;
      auto lo = s.vec3<double>("min", dims), hi = s.vec3<double>("max", dims);
      if (!lo) s.fail("min", "missing: a box needs min = [...] and max = [...] in cells");
      if (!hi) s.fail("max", "missing: a box needs min = [...] and max = [...] in cells");
      o.min = *lo, o.max = *hi;
      if (dims == 2) o.min[2] = 0.0, o.max[2] = 1.0;
      for (int d = 0; d < 3; ++d)
        if (o.max[d] <= o.min[d]) s.fail("max", "expected max > min on every axis");
    } else {
      o.shape = shape == "sphere" ? Obstacle::Shape::Sphere : Obstacle::Shape::Cylinder;
      auto ctr = s.vec3<double>("center", dims);
      if (!ctr)
        s.fail("center",
               "missing: expected center = [x, y" + std::string(dims == 3 ? ", z]" : "]"));
      o.center = *ctr;
      if (dims == 2) o.center[2] = 0.5;
      const auto r = s.number("radius");
      if (!r || *r <= 0) s.fail("radius", "expected a positive radius in cells");
      o.radius = *r;
      if (shape == "cylinder") o.axis = axis_of(s, "axis", 2);
      if (dims == 2 && o.shape == Obstacle::Shape::Cylinder && o.axis != 2)
        s.fail("axis", "a 2D cylinder is a disc: its axis is z");
    }
    o.wall = s.choice_of("wall", Obstacle::Wall::BounceBack);
    o.solid_outside = s.choice("solid", "inside", {"inside", "outside"}) == "outside";
    if (s.has("angular_velocity")) {
      if (o.shape == Obstacle::Shape::Cylinder) {  // about its axis
        const auto w = s.number("angular_velocity");
        if (!w) s.fail("angular_velocity", "expected a number: radians per step about the axis");
        o.angular_velocity[std::size_t(o.axis)] = *w;
      } else {
        const auto w = s.vec3<double>("angular_velocity", 3);
        if (!w) s.fail("angular_velocity", "expected [wx, wy, wz]: radians per step");
        o.angular_velocity = *w;
      }
      for (double w : o.angular_velocity)
        if (!std::isfinite(w) || std::fabs(w) * std::max(o.radius, 1.0) > 0.3)
          s.fail("angular_velocity",
                 "expected a finite rate whose wall speed (rate x radius) stays below 0.3 "
                 "(lattice units)");
    }
    s.finish(shape == "mesh"
                 ? std::vector<std::string>{"name", "type", "file", "scale", "rotation", "center",
                                            "wall", "solid", "angular_velocity"}
                 : std::vector<std::string>{"name", "type", "min", "max", "center", "radius",
                                            "axis", "wall", "solid", "angular_velocity"});
    sc.obstacles.push_back(o);
  });

  // [geometry]: solid cells from a voxel image, a closed mesh or a random array of spheres
  Section geometry(file, "geometry", subtable(top, "geometry"));
  if (geometry.present()) read_geometry(geometry, sc, dims, file);

  // [[body]]: immersed-boundary solids
  // [ib] before the bodies' samples: the forcing sets their default spacing.
  Section ib(file, "ib", subtable(top, "ib"));
  sc.ib.forcing = ib.choice_of("forcing", ImmersedSettings::Forcing::Direct);
  const bool implicit = sc.ib.forcing == ImmersedSettings::Forcing::Implicit;
  for_each_table(top, "body", file, [&](Section& s, std::size_t i) {
    Body b;
    b.name = s.string("name").value_or("body" + std::to_string(i));
    for (const auto& other : sc.bodies)
      if (other.name == b.name) s.fail("name", "\"" + b.name + "\" is taken by another body");
    const std::string shape = s.choice("type", "", {"sphere", "cylinder", "box", "torus", "mesh"});
    if (shape.empty()) s.fail("type", "missing: expected one of sphere, cylinder, box, torus, mesh");
    b.shape = shape == "sphere" ? Body::Shape::Sphere : shape == "cylinder" ? Body::Shape::Cylinder
            : shape == "box" ? Body::Shape::Box : shape == "torus" ? Body::Shape::Torus : Body::Shape::Mesh;
    if (dims == 2 && b.shape != Body::Shape::Cylinder && b.shape != Body::Shape::Box)
      s.fail("type", "a 2D (D2Q9) body is a closed curve: cylinder (circle) or box (rectangle), got " + shape);
    auto positive = [&](const char* key, const char* what) {
      const auto v = s.number(key);
      if (!v || *v <= 0) s.fail(key, std::string("expected a positive ") + what + " (cells)");
      return *v;
    };
    if (b.shape == Body::Shape::Sphere || b.shape == Body::Shape::Cylinder || b.shape == Body::Shape::Torus)
      b.radius = positive("radius", "radius");
    if (b.shape == Body::Shape::Torus) {
      b.minor_radius = positive("minor_radius", "tube radius");
      if (b.minor_radius >= b.radius) s.fail("minor_radius", "expected minor_radius < radius");
    }
    if (b.shape == Body::Shape::Cylinder && dims == 3) {
      b.length = positive("length", "length");
      b.caps = s.boolean("caps").value_or(true);
    }
    if ((b.shape == Body::Shape::Cylinder && dims == 3) || b.shape == Body::Shape::Torus) b.axis = axis_of(s, "axis", 2);
    if (b.shape == Body::Shape::Box) {
      auto sz = s.vec3<double>("size", dims);
      if (!sz) s.fail("size", "missing: a box needs size = [...] (edge lengths in cells)");
      for (int d = 0; d < dims; ++d)
        if ((*sz)[std::size_t(d)] <= 0) s.fail("size", "expected positive edge lengths");
      b.size = *sz;
    }
    if (b.shape == Body::Shape::Mesh) {
      auto path = s.string("file");
      if (!path || path->empty()) s.fail("file", "missing: a mesh body needs file = \"...\" (binary or ASCII STL, OBJ)");
      b.mesh = *path;
      b.mesh = beside_deck(b.mesh, file);
      std::ifstream probe(b.mesh);
      if (!probe) s.fail("file", "cannot open '" + b.mesh + "'");
      b.scale = s.number("scale", 1.0);
      if (b.scale <= 0) s.fail("scale", "expected a positive scale (cells per file unit)");
    }
    auto pos = s.vec3<double>("position", dims);
    if (!pos) s.fail("position", "missing: the body's centre in cells");
    b.position = *pos;
    if (dims == 2) {
      b.position[2] = 0.5;
      b.rotation = {0, 0, s.number("rotation", 0.0)};
      b.angular_velocity = {0, 0, s.number("angular_velocity", 0.0)};
    } else {
      b.rotation = s.vec3<double>("rotation", dims).value_or(std::array<double, 3>{0, 0, 0});
      b.angular_velocity = s.vec3<double>("angular_velocity", dims).value_or(std::array<double, 3>{0, 0, 0});
    }
    b.velocity = s.vec3<double>("velocity", dims).value_or(std::array<double, 3>{0, 0, 0});
    // Prescribed oscillation: angles in degrees in the deck, radians in the Body.
    constexpr double degree = 3.141592653589793 / 180.0;
    b.amplitude = s.vec3<double>("amplitude", dims).value_or(std::array<double, 3>{0, 0, 0});
    if (dims == 2) {
      b.angular_amplitude = {0, 0, s.number("angular_amplitude", 0.0) * degree};
    } else {
      b.angular_amplitude =
          s.vec3<double>("angular_amplitude", dims).value_or(std::array<double, 3>{0, 0, 0});
      for (double& a : b.angular_amplitude) a *= degree;
    }
    b.frequency = s.number("frequency", 0.0);  // its range: config/Rules.cpp
    b.phase = s.number("phase", 0.0) * degree;
    b.free = s.boolean("free").value_or(false);
    if (const auto rho = s.number("density")) {
      if (!b.free) s.fail("density", "a body's density is for free motion: add free = true");
      if (!(*rho > 0))
        s.fail("density",
               "expected a positive density (lattice units; the fluid's is initial.density)");
      b.density = *rho;
    } else if (b.free) {
      s.fail(
          "density",
          "missing: a free body needs its density (lattice units; the fluid's is initial.density)");
    }
    b.spacing = s.number("spacing", implicit ? kImplicitSampleSpacing : kDirectSampleSpacing);
    if (!(b.spacing > 0.02 && b.spacing <= 1.0))
      s.fail("spacing", "expected a sample spacing in (0.02, 1] cells (chen2022 uses 10 to 100 samples a boundary cell: 0.1 to 0.3)");
    b.retraction = read_retraction(s, "this body");
    s.finish({"name",      "type",
              "radius",    "minor_radius",
              "length",    "caps",
              "axis",      "size",
              "file",      "scale",
              "position",  "rotation",
              "velocity",  "angular_velocity",
              "amplitude", "angular_amplitude",
              "frequency", "phase",
              "free",      "density",
              "spacing",   "retraction"});
    sc.bodies.push_back(b);
  });
  // [ib]: how bodies act on the fluid
  if (ib.present() && sc.bodies.empty()) ib.fail("spreading", "an [ib] section without [[body]] tables");
  sc.ib.spreading = ib.choice_of("spreading", ImmersedSettings::Spreading::Scatter);
  const auto iters = ib.integer("iterations").value_or(sc.ib.iterations);
  if (iters < 1 || iters > 10) ib.fail("iterations", "expected 1 to 10 forcing passes a step");
  if (implicit && ib.has("iterations"))
    ib.fail("iterations",
            "counts direct-forcing passes; ib.forcing = \"implicit\" solves to ib.tolerance "
            "within ib.max_iterations instead");
  sc.ib.iterations = int(iters);
  for (const char* key : {"tolerance", "max_iterations", "check_every", "warm_start"})
    if (!implicit && ib.has(key))
      ib.fail(key,
              "belongs to ib.forcing = \"implicit\" (the forcing is \"direct\": "
              "ib.iterations passes)");
  sc.ib.tolerance = ib.number("tolerance", sc.ib.tolerance);
  if (!(sc.ib.tolerance >= 1e-12 && sc.ib.tolerance <= 0.1))
    ib.fail("tolerance", "expected a relative residual in [1e-12, 0.1]");
  const auto max_iter = ib.integer("max_iterations").value_or(sc.ib.max_iterations);
  if (max_iter < 1 || max_iter > 10000)
    ib.fail("max_iterations", "expected 1 to 10000 conjugate-gradient iterations a step");
  sc.ib.max_iterations = int(max_iter);
  const auto check_every = ib.integer("check_every").value_or(sc.ib.check_every);
  if (check_every < 1 || check_every > 64)
    ib.fail("check_every", "expected 1 to 64 conjugate-gradient iterations between two looks");
  sc.ib.check_every = int(check_every);
  sc.ib.warm_start = ib.boolean("warm_start").value_or(true);
  const auto block = ib.integer("block").value_or(4);
  if (block < 0 || block > 64) ib.fail("block", "expected a block edge of 0 (samples as generated) to 64 cells");
  sc.ib.block = int(block);
  sc.ib.loads_every = ib.integer("loads_every").value_or(1);
  if (sc.ib.loads_every < 1) ib.fail("loads_every", "expected a positive number of steps");
  sc.ib.timing = ib.boolean("timing").value_or(false);
  sc.ib.retraction = read_retraction(ib, "each body").value_or(sc.ib.retraction);
  sc.ib.gravity = ib.vec3<double>("gravity", dims).value_or(std::array<double, 3>{0, 0, 0});
  sc.ib.contact_range = ib.number("contact_range", sc.ib.contact_range);
  if (!(sc.ib.contact_range > 0.0 && sc.ib.contact_range <= 4.0))
    ib.fail("contact_range",
            "expected a distance in (0, 4] cells (walls push free bodies closer than it)");
  sc.ib.contact_stiffness = ib.number("contact_stiffness", sc.ib.contact_stiffness);
  if (!(sc.ib.contact_stiffness == 0.0 || sc.ib.contact_stiffness > 1.0))
    ib.fail("contact_stiffness",
            "expected 0 (no wall contact) or more than 1 buoyant weight (a body resting on a wall "
            "stops "
            "range (1 - 1/sqrt(stiffness)) above it; at 1 or less it would sink into the wall)");
  sc.ib.virtual_mass = ib.number("virtual_mass", sc.ib.virtual_mass);
  if (!(sc.ib.virtual_mass >= 0.0 && sc.ib.virtual_mass <= 10.0))
    ib.fail("virtual_mass",
            "expected a coefficient in [0, 10] (free bodies' virtual mass, in fluid masses)");
  ib.finish({"spreading", "forcing", "iterations", "tolerance", "max_iterations", "check_every",
             "warm_start", "block", "loads_every", "timing", "retraction", "gravity",
             "contact_range", "contact_stiffness", "virtual_mass"});
  // [refinement]: the levels of a refined grid and where they go
  Section refinement(file, "refinement", subtable(top, "refinement"));
  if (refinement.present()) {
    sc.refinement.levels = int(refinement.integer("levels", 1, 1, Refinement::kMaxLevels));
    for_each_table(refinement, "region", file, [&](Section& s, std::size_t) {
      RefinementRegion g;
      const auto level = s.integer("level");
      if (!level) s.fail("level", "missing: the level the region reaches (1 to levels - 1)");
      g.level = int(std::clamp<std::int64_t>(*level, -1, Refinement::kMaxLevels));
      g.kind = s.choice_of("type", RefinementRegion::Kind::Box);
      if (g.kind == RefinementRegion::Kind::Box) {
        const auto lo = s.vec3<double>("min", dims), hi = s.vec3<double>("max", dims);
        if (!lo) s.fail("min", "missing: a box region needs min = [...] and max = [...] (cells)");
        if (!hi) s.fail("max", "missing: a box region needs min = [...] and max = [...] (cells)");
        g.min = *lo, g.max = *hi;
        if (dims == 2) g.min[2] = 0.0, g.max[2] = 1.0;
      } else {
        const auto around = s.string("around");
        if (!around)
          s.fail("around",
                 "missing: a band goes around \"obstacles\", \"walls\", \"bodies\", "
                 "\"geometry\" or an obstacle's or a body's name");
        g.around = *around;
        const auto width = s.number("width");
        if (!width) s.fail("width", "missing: the band's width in cells of its level");
        g.width = *width;
      }
      s.finish({"level", "type", "min", "max", "around", "width"});
      sc.refinement.regions.push_back(g);
    });
    sc.refinement.kernels = refinement.choice_of("kernels", LevelKernels::Fused);
    refinement.finish({"levels", "region", "kernels"});
  }

  // The rules on combinations of values (config/Rules.hpp), reported at the line of their key.
  if (const auto breach = broken_rule(sc)) {
    for (const Section* sec : {&model, &domain, &boundary, &physics, &refinement})
      if (sec->path() == breach->section) sec->fail(breach->key, breach->message);
    top.fail(breach->section + "." + breach->key, breach->message);
  }

  // [run]
  Section run(file, "run", subtable(top, "run"));
  RunConfig& rc = c.run;
  rc.name = run.string("name").value_or([&] {
    auto slash = file.find_last_of('/');
    std::string stem = file.substr(slash == std::string::npos ? 0 : slash + 1);
    auto dot = stem.rfind(".toml");
    return dot == std::string::npos ? stem : stem.substr(0, dot);
  }());
  auto check_name = [](Section& sec, const std::string& key, const std::string& v) {
    if (v.empty() || v.find_first_of("/\\") != std::string::npos || v.find('\0') != std::string::npos || v == "." || v == "..")
      sec.fail(key, quoted(v) + " is not a usable file name part (no empty names, no '/' or '\\')");
  };
  check_name(run, "name", rc.name);
  rc.output_dir = run.string("output_dir").value_or("output/" + rc.name);
  if (rc.output_dir.empty()) run.fail("output_dir", "expected a directory path");
  rc.steps = run.integer("steps", 1000, 0, std::int64_t(1) << 40);
  rc.output_every = run.integer("output_every", 0, 0, std::int64_t(1) << 40);
  rc.log_every = run.integer("log_every", 0, 0, std::int64_t(1) << 40);
  rc.obstacle_loads_every = run.integer("obstacle_loads_every", 0, 0, std::int64_t(1) << 40);
  rc.statistics_every = run.integer("statistics_every", 0, 0, std::int64_t(1) << 40);
  rc.log_seconds = run.number("log_seconds", 10.0);
  if (rc.log_seconds <= 0) run.fail("log_seconds", "expected a positive number of seconds");
  rc.progress = run.choice("progress", "auto", {"auto", "bar", "lines", "none"});
  rc.write_fields = run.boolean("write_fields").value_or(true);
  rc.checkpoint_every = run.integer("checkpoint_every", 0, 0, std::int64_t(1) << 40);
  rc.checkpoint_keep = int(run.integer("checkpoint_keep", 2, 1, 1000));
  run.finish({"name", "output_dir", "steps", "output_every", "log_every", "log_seconds", "progress",
              "write_fields", "checkpoint_every", "checkpoint_keep", "obstacle_loads_every",
              "statistics_every"});

  // [parallel]
  Section par(file, "parallel", subtable(top, "parallel"));
  if (auto g = par.vec3<int>("grid", 3)) {
    for (int d = 0; d < 3; ++d)
      if ((*g)[std::size_t(d)] < 1) par.fail("grid", "expected three positive rank counts [px, py, pz]");
    if (dims == 2 && (*g)[2] != 1) par.fail("grid", "a 2D deck is not split in z: the third count must be 1");
    rc.grid = *g;
  }
  rc.gpu_aware_mpi = par.choice("gpu_aware_mpi", "auto", {"auto", "on", "off"});
  rc.halo_transport = par.choice("transport", "auto", {"auto", "mpi", "nccl"});
  rc.balance = par.choice("balance", "auto", {"auto", "volume", "fluid"});
  par.finish({"grid", "gpu_aware_mpi", "transport", "balance"});

  // [tune]: the auto-tuner (chen2022 Eq. 11) over the layout and kernel options
  Section tune(file, "tune", subtable(top, "tune"));
  TuneConfig& tc = c.tune;
  tc.enabled = tune.boolean("enabled").value_or(false);
  tc.steps = int(tune.integer("steps", tc.steps, 1, 100000));
  tc.warmup = int(tune.integer("warmup", tc.warmup, 0, 100000));
  tc.cache = tune.string("cache").value_or("");
  tc.retune = tune.boolean("retune").value_or(false);
  if (auto a = tune.int_list("alpha", 0, 1 << 20)) {
    for (const int v : *a)
      if (v != 0 && !valid_csoa_alpha(v))
        tune.fail("alpha", "expected 0 (SoA) or powers of two from 2 (CSoA groups), got " + std::to_string(v));
    tc.alpha = *a;
  }
  if (auto b = tune.int_list("block", 0, 64)) tc.block = *b;
  if (tune.present() && sc.streaming == Streaming::Moments)
    tune.fail("enabled", "the tuner searches population layouts: needs streaming = \"two_array\" or \"in_place\"");
  if (tc.enabled && sc.tile_edge > 0)
    tune.fail(
        "enabled",
        "the tuner searches the dense box's layouts; layout = \"tiles\" has no options to tune");
  tune.finish({"enabled", "steps", "warmup", "cache", "retune", "alpha", "block"});

  // [[probe]]
  std::set<std::string> probe_names;
  for_each_table(top, "probe", file, [&](Section& s, std::size_t i) {
    Probe p;
    p.name = s.string("name").value_or("probe" + std::to_string(i));
    check_name(s, "name", p.name);
    if (!probe_names.insert(p.name).second) s.fail("name", "duplicate probe name '" + p.name + "'");
    p.kind = s.choice("type", "point", {"point", "line"}) == "line" ? Probe::Kind::Line : Probe::Kind::Point;
    const bool line = p.kind == Probe::Kind::Line;
    const int n[3] = {sc.nx, sc.ny, sc.nz};
    const char* cell_key = line ? "start" : "position";
    const int places = int(s.has(cell_key)) + int(s.has("at")) + int(s.has("at_m"));
    if (places > 1)
      s.fail(s.has(cell_key) ? cell_key : "at",
             line ? "give one of start (a row of cells), at (a point on the line, in cell widths) "
                    "or at_m (in metres)"
                  : "give one of position (a cell), at (a point in cell widths) or at_m (in "
                    "metres)");
    if (s.has("at") || s.has("at_m")) {
      // A point between cells: the domain spans [0, n] on each axis, cell i's centre at i + 1/2;
      // a line through it along its axis (its coordinate on the axis does not matter).
      const char* key = s.has("at") ? "at" : "at_m";
      std::array<double, 3> at = *s.vec3<double>(key, dims);
      if (key == std::string("at_m")) {
        if (!c.units.given) s.fail(key, "positions in metres need a [units] section");
        for (double& v : at) v /= c.units.dx;
      }
      if (dims == 2) at[2] = 0.5;
      for (int d = 0; d < dims; ++d)
        if (!(at[std::size_t(d)] >= 0.0 && at[std::size_t(d)] <= n[d]))
          s.fail(key, "point " + num(at[std::size_t(d)]) + " on axis " + char('x' + d) +
                          " is outside the domain [0, " + std::to_string(n[d]) + "] (cell widths" +
                          (key == std::string("at_m") ? ", from metres by units.dx" : "") + ")");
      p.interpolated = true;
      p.at = at;
    } else {
      const char* where = line ? "start" : "position";
      const auto pos = s.vec3<int>(where, dims);
      if (!pos)
        s.fail(where, "missing: expected a cell index [x, y" +
                          std::string(dims == 3 ? ", z]" : "]") +
                          (line ? " (or at = [...], a point on a line between cells)"
                                : " (or at = [...], a point between cells)"));
      p.position = *pos;
      for (int d = 0; d < 3; ++d)
        if (p.position[d] < 0 || p.position[d] >= n[d])
          s.fail(where, "cell " + std::to_string(p.position[d]) + " on axis " + char('x' + d) +
                            " is outside the domain [0, " + std::to_string(n[d] - 1) + "]");
    }
    if (line)
      p.axis = axis_of(s, "axis", 0);
    else if (s.has("axis")) s.fail("axis", "only line probes take an axis");
    p.every = int(s.integer("every", 0, 0, 1 << 30));
    s.finish({"name", "type", "position", "at", "at_m", "start", "axis", "every"});
    c.probes.push_back(p);
  });

  top.finish({"model", "domain", "boundary", "initial", "physics", "units", "obstacle", "geometry",
              "run", "parallel", "probe", "body", "ib", "tune", "refinement"});
  return c;
}

Case load_deck(const std::string& path, const std::vector<std::string>& overrides) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw DeckError(path + ": cannot open the deck (no such file or no permission)");
  std::ostringstream ss;
  ss << in.rdbuf();
  return parse_deck(ss.str(), path, overrides);
}

std::vector<std::string> deck_warnings(const Case& c) {
  std::vector<std::string> w;
  const double mach = c.u_char * std::sqrt(3.0);
  if (mach > 0.3)
    w.push_back("Mach number " + num(mach) +
                " > 0.3: compressibility errors of order Ma^2 are visible");
  if (c.u_max > c.u_char * 1.0001 && c.u_max * std::sqrt(3.0) > 0.3)
    w.push_back("the fastest wall, inlet or initial velocity " + num(c.u_max) + " gives Mach " +
                num(c.u_max * std::sqrt(3.0)) + " > 0.3");
  if (c.solver.tau < 0.51 && c.solver.collision == CollisionKind::Bgk)
    w.push_back("tau = " + num(c.solver.tau) +
                " < 0.51 with BGK: consider trt, regularized or recursive");
  const auto& s = c.solver;
  for (std::size_t f = 0; f < 6; ++f) {
    const double un = s.faces[f].velocity[f / 2];
    if (s.faces[f].type == FaceType::MovingWall && un != 0.0)
      w.push_back(std::string("boundary.") + kFaceNames[f] +
                  ": the moving wall's velocity has a component normal to the wall (" + num(un) +
                  "): it pushes mass through the wall; use velocity_inlet for flow through a face");
  }
  // Cadences longer than the run: their output never comes (or only at the end).
  auto warn_if_longer_than_run = [&](std::int64_t every, const std::string& key, const char* what) {
    if (every > c.run.steps && c.run.steps > 0)
      w.push_back(key + " = " + std::to_string(every) + " is longer than the run (run.steps = " +
                  std::to_string(c.run.steps) + "): " + what);
  };
  if (!s.bodies.empty())
    warn_if_longer_than_run(s.ib.loads_every, "ib.loads_every", "bodies.csv gets no row");
  if (!s.obstacles.empty())
    warn_if_longer_than_run(c.run.obstacle_loads_every, "run.obstacle_loads_every",
                            "obstacles.csv gets no row");
  warn_if_longer_than_run(c.run.output_every, "run.output_every",
                          "fields are written only at the end");
  warn_if_longer_than_run(c.run.checkpoint_every, "run.checkpoint_every",
                          "the only checkpoint is the final one");
  warn_if_longer_than_run(c.run.statistics_every, "run.statistics_every",
                          "statistics.csv gets only step 0");
  for (const Probe& p : c.probes)
    warn_if_longer_than_run(
        p.every, "probe '" + p.name + "' every",
        p.kind == Probe::Kind::Line ? "it is written only at the end" : "it samples only step 0");
  // Obstacles that cover no cell centre (too small, or outside the box) have no effect.
  for (std::size_t i = 0; i < s.obstacles.size(); ++i) {
    const auto& o = s.obstacles[i];
    if (o.solid_outside) continue;  // its solid reaches the box's edges
    int lo[3], hi[3];
    const int n[3] = {s.nx, s.ny, s.nz};
    for (int d = 0; d < 3; ++d) {
      const std::size_t k = std::size_t(d);
      const double a = o.shape == Obstacle::Shape::Box    ? o.min[k]
                       : o.shape == Obstacle::Shape::Mesh ? o.mesh->bounds()[0][k]
                                                          : o.center[k] - o.radius;
      const double b = o.shape == Obstacle::Shape::Box    ? o.max[k]
                       : o.shape == Obstacle::Shape::Mesh ? o.mesh->bounds()[1][k]
                                                          : o.center[k] + o.radius;
      const bool along_axis = o.shape == Obstacle::Shape::Cylinder && d == o.axis;
      lo[d] = along_axis ? 0 : std::max(0, int(std::floor(a - 0.5)));
      hi[d] = along_axis ? n[d] - 1 : std::min(n[d] - 1, int(std::ceil(b)));
    }
    bool any = false;
    for (int z = lo[2]; z <= hi[2] && !any; ++z)
      for (int y = lo[1]; y <= hi[1] && !any; ++y)
        for (int x = lo[0]; x <= hi[0] && !any; ++x) any = covers(o, x, y, z);
    if (!any)
      w.push_back("obstacle[" + std::to_string(i) + "] covers no cell centre (too small, or outside the box): it has no effect");
  }
  return w;
}

}  // namespace kolibri
