// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Checkpoints: HDF5 pieces (one file per rank, or one file written by all ranks through
/// parallel HDF5) plus a TOML manifest, written under `path.tmp` and renamed when complete, and
/// checked on load (manifest keys, tiling of the global box, per-piece checksums).
#include <kolibri/io/Checkpoint.hpp>
#include <kolibri/io/Output.hpp>

#include <hdf5.h>
#include <toml++/toml.h>

#include "Hdf5.hpp"
#include "TomlText.hpp"

#if defined(KOLIBRI_HAVE_MPI) || defined(KOLIBRI_HAVE_PARALLEL_HDF5)
#include <mpi.h>
#endif

#include <algorithm>
#include <bit>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <system_error>
#include <unistd.h>

namespace kolibri {
namespace {
namespace fs = std::filesystem;
using detail::h5_detail;
using detail::H5Handle;
using detail::H5Quiet;
using detail::os_cause;

constexpr std::int64_t kFormatVersion = 1;
constexpr const char* kManifest = "manifest.toml";
constexpr const char* kSingleFile = "state.h5";
constexpr const char* kDataset = "populations";
constexpr const char* kIbForcesFile = "ib_forces.h5";
constexpr const char* kIbForcesDataset = "force";
constexpr const char* kLevelsFile = "levels.h5";
constexpr const char* kOutletsFile = "outlets.h5";
constexpr const char* kOutletsDataset = "state";

// ---------------------------------------------------------------------------------------------
// Small helpers

hid_t h5_type(const std::string& value_type) {
  if (value_type == "float64") return H5T_NATIVE_DOUBLE;
  if (value_type == "float32") return H5T_NATIVE_FLOAT;
  return H5T_NATIVE_UINT16;  // float16: raw binary16 bits
}

std::string box_str(const Box& b) {
  std::ostringstream os;
  os << "lo (" << b.lo[0] << ", " << b.lo[1] << ", " << b.lo[2] << ") n (" << b.n[0] << ", " << b.n[1] << ", "
     << b.n[2] << ")";
  return os.str();
}

std::string rank_file(int r) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "rank_%05d.h5", r);
  return buf;
}

std::string now_iso_utc() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string library_version() {
  return std::to_string(KOLIBRI_VERSION_MAJOR) + "." + std::to_string(KOLIBRI_VERSION_MINOR) + "." +
         std::to_string(KOLIBRI_VERSION_PATCH);
}

/// fsync a file or directory; "" on success, else the reason. Directories on some file systems
/// refuse fsync (EINVAL): that is not an error.
std::string sync_path(const std::string& p, bool directory) {
  const int fd = ::open(p.c_str(), O_RDONLY | (directory ? O_DIRECTORY : 0));
  if (fd < 0) return std::strerror(errno);
  std::string err;
  if (::fsync(fd) != 0 && !(directory && (errno == EINVAL || errno == EROFS))) err = std::strerror(errno);
  ::close(fd);
  return err;
}

/// "" when `boxes` tile the global box exactly (in bounds, no overlap, every cell), else the defect.
std::string tiling_defect(const std::array<int, 3>& global, const std::vector<Box>& boxes) {
  std::int64_t total = 0;
  for (std::size_t r = 0; r < boxes.size(); ++r) {
    const Box& b = boxes[r];
    for (std::size_t d = 0; d < 3; ++d) {
      if (b.n[d] < 0) return "the piece of rank " + std::to_string(r) + " (" + box_str(b) + ") has a negative size";
      if (b.lo[d] < 0 || std::int64_t(b.lo[d]) + b.n[d] > global[d])
        return "the piece of rank " + std::to_string(r) + " (" + box_str(b) + ") lies outside the global box " +
               std::to_string(global[0]) + " x " + std::to_string(global[1]) + " x " + std::to_string(global[2]);
    }
    total += b.cells();
  }
  for (std::size_t i = 0; i < boxes.size(); ++i)
    for (std::size_t j = i + 1; j < boxes.size(); ++j)
      if (boxes[i].cells() > 0 && boxes[j].cells() > 0 && boxes[i].intersect(boxes[j]).cells() > 0)
        return "the pieces of ranks " + std::to_string(i) + " (" + box_str(boxes[i]) + ") and " + std::to_string(j) +
               " (" + box_str(boxes[j]) + ") overlap";
  const std::int64_t want = std::int64_t(global[0]) * global[1] * global[2];
  if (total != want)
    return "the pieces cover " + std::to_string(total) + " of the " + std::to_string(want) +
           " cells of the global box";
  return "";
}

// ---------------------------------------------------------------------------------------------
// Writing

void write_attr(hid_t obj, const char* name, hid_t type, const std::vector<hsize_t>& dims, const void* data,
                const std::string& file) {
  H5Handle space{H5Screate_simple(int(dims.size()), dims.data(), nullptr), H5Sclose};
  H5Handle attr{H5Acreate2(obj, name, type, space.id, H5P_DEFAULT, H5P_DEFAULT), H5Aclose};
  if (space.id < 0 || attr.id < 0 || H5Awrite(attr.id, type, data) < 0)
    throw OutputError(file + ": HDF5 could not write attribute " + name);
}

/// A file built in memory (detail::create_in_memory) out to `file` with plain writes, which
/// closes it: a full disk must not leave HDF5 with a half-flushed file.
void write_file_image(const std::string& file, H5Handle& f) {
  const std::vector<unsigned char> image = detail::image_of(f.id);
  if (image.empty() || !f.close_now())
    throw OutputError(file + ": HDF5 could not build the file image" + h5_detail());
  if (const auto err = detail::write_image(file, image, true, true); !err.empty())
    throw OutputError(file + ": cannot write (" + err + ")");
}

/// One rank's file rank_RRRRR.h5: /populations (q, n2, n1, n0) and its box, checksum and step.
void write_rank_file(const std::string& file, const CheckpointInfo& info, const StatePiece& p, std::uint64_t sum) {
  const hid_t type = h5_type(info.value_type);
  const H5Quiet quiet;
  // Built in memory and written with plain writes (detail::create_in_memory: a full disk must
  // not leave HDF5 with a half-flushed file).
  H5Handle f{detail::create_in_memory(), H5Fclose};
  if (f.id < 0) throw OutputError(file + ": HDF5 cannot create the file in memory" + h5_detail());
  const std::vector<hsize_t> dims = {hsize_t(info.q), hsize_t(p.box.n[2]), hsize_t(p.box.n[1]), hsize_t(p.box.n[0])};
  {
    H5Handle space{H5Screate_simple(4, dims.data(), nullptr), H5Sclose};
    H5Handle set{H5Dcreate2(f.id, kDataset, type, space.id, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Dclose};
    if (space.id < 0 || set.id < 0) throw OutputError(file + ": HDF5 could not create dataset populations");
    if (!p.data.empty() && H5Dwrite(set.id, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, p.data.data()) < 0)
      throw OutputError(file + ": HDF5 could not write dataset populations" + h5_detail());
  }
  const long long step = info.step;
  write_attr(f.id, "box_lo", H5T_NATIVE_INT, {3}, p.box.lo.data(), file);
  write_attr(f.id, "box_n", H5T_NATIVE_INT, {3}, p.box.n.data(), file);
  write_attr(f.id, "checksum", H5T_NATIVE_UINT64, {1}, &sum, file);
  write_attr(f.id, "step", H5T_NATIVE_LLONG, {1}, &step, file);
  write_file_image(file, f);
}

/// A file beside the pieces holding one dataset `name` of `type` and shape `dims` (ib_forces.h5,
/// levels.h5); written by one rank, built in memory like write_rank_file.
void write_side_file(const std::string& file, const char* name, hid_t type,
                     const std::vector<hsize_t>& dims, const void* data) {
  const H5Quiet quiet;
  H5Handle f{detail::create_in_memory(), H5Fclose};
  if (f.id < 0) throw OutputError(file + ": HDF5 cannot create the file in memory" + h5_detail());
  {
    H5Handle space{H5Screate_simple(int(dims.size()), dims.data(), nullptr), H5Sclose};
    H5Handle set{H5Dcreate2(f.id, name, type, space.id, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                 H5Dclose};
    if (space.id < 0 || set.id < 0 ||
        H5Dwrite(set.id, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)
      throw OutputError(file + ": HDF5 could not write dataset " + name + h5_detail());
  }
  write_file_image(file, f);
}

/// Dataset `name` of a side file opened for reading (HDF5's messages silenced meanwhile), its
/// shape checked against `dims` (`shape` says it in words for the message).
struct SideDataset {
  const H5Quiet quiet;
  H5Handle file, set, space;
  SideDataset(const std::string& path, const char* name, const std::vector<hsize_t>& dims,
              const std::string& shape)
      : file{H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose},
        set{file.id < 0 ? hid_t(-1) : H5Dopen2(file.id, name, H5P_DEFAULT), H5Dclose},
        space{set.id < 0 ? hid_t(-1) : H5Dget_space(set.id), H5Sclose} {
    if (file.id < 0)
      throw CheckpointError(path + ": missing or not HDF5 (named by the manifest)" + h5_detail());
    if (set.id < 0) throw CheckpointError(path + ": no dataset " + name + h5_detail());
    std::vector<hsize_t> got(dims.size(), 0);
    if (H5Sget_simple_extent_ndims(space.id) != int(dims.size()) ||
        H5Sget_simple_extent_dims(space.id, got.data(), nullptr) < 0 || got != dims)
      throw CheckpointError(path + ": dataset " + name + " is not " + shape +
                            " (from the manifest)");
  }
};

/// Dataset `name` of a side file into `out` (its size set by the caller), its shape checked
/// against `dims` (`shape` says it in words for the message).
void read_side_file(const std::string& file, const char* name, hid_t type,
                    const std::vector<hsize_t>& dims, const std::string& shape, void* out) {
  const SideDataset d(file, name, dims, shape);
  if (H5Dread(d.set.id, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, out) < 0)
    throw CheckpointError(file + ": reading dataset " + name + " failed" + h5_detail());
}

/// read_side_file into `out` (sized by the caller), then its checksum64 against the manifest's
/// `checksum` (ib_forces.h5, levels.h5, outlets.h5).
template <class T>
void read_checked_side_file(const std::string& file, const char* name, hid_t type,
                            const std::vector<hsize_t>& dims, const std::string& shape,
                            std::uint64_t checksum, std::vector<T>& out) {
  read_side_file(file, name, type, dims, shape, out.data());
  const std::uint64_t sum = checksum64(out);
  if (sum != checksum)
    throw CheckpointError(file + ": checksum " + hex64(sum) + " does not match the manifest's " +
                          hex64(checksum) + ": the checkpoint is corrupted");
}

/// ib_forces.h5: /force (samples, 3) float64, the implicit forcing's last solution. Returns its
/// checksum.
std::uint64_t write_ib_forces_file(const std::string& file, const std::vector<double>& forces) {
  write_side_file(file, kIbForcesDataset, H5T_NATIVE_DOUBLE, {hsize_t(forces.size() / 3), 3},
                  forces.data());
  return checksum64(forces);
}

/// outlets.h5: /state (values) float64, the characteristic outlets' state of the whole domain.
/// Returns its checksum.
std::uint64_t write_outlets_file(const std::string& file, const std::vector<double>& state) {
  write_side_file(file, kOutletsDataset, H5T_NATIVE_DOUBLE, {hsize_t(state.size())}, state.data());
  return checksum64(state);
}

/// levels.h5: /populations (values) of `value_type`, a refined grid's levels as stored. Returns
/// its checksum.
std::uint64_t write_levels_file(const std::string& file, const std::string& value_type,
                                const std::vector<std::byte>& bytes) {
  write_side_file(file, kDataset, h5_type(value_type),
                  {hsize_t(bytes.size() / std::size_t(value_bytes(value_type)))}, bytes.data());
  return checksum64(bytes);
}

/// state.h5: /populations (q, nz, ny, nx), each rank writing its hyperslab. Collective through
/// MPI-IO when `mpio`, else one rank writing the whole box with the default (serial) driver.
void write_single_file(const Comm& comm, bool mpio, const std::string& file, const CheckpointInfo& info,
                       const StatePiece& p, const std::vector<Box>& boxes, const std::vector<std::uint64_t>& sums) {
  const hid_t type = h5_type(info.value_type);
  H5Handle fapl{H5Pcreate(H5P_FILE_ACCESS), H5Pclose};
  H5Handle dxpl{H5Pcreate(H5P_DATASET_XFER), H5Pclose};
  if (fapl.id < 0 || dxpl.id < 0) throw OutputError(file + ": HDF5 cannot create property lists");
#if defined(KOLIBRI_HAVE_PARALLEL_HDF5)
  if (mpio) {
    const MPI_Comm mc = *static_cast<const MPI_Comm*>(comm.native());
    if (H5Pset_fapl_mpio(fapl.id, mc, MPI_INFO_NULL) < 0 || H5Pset_dxpl_mpio(dxpl.id, H5FD_MPIO_COLLECTIVE) < 0)
      throw OutputError(file + ": HDF5 cannot set up MPI-IO");
  }
#else
  (void)comm;
  if (mpio) throw OutputError(file + ": this build has no parallel HDF5");
#endif
  const H5Quiet quiet;
  errno = 0;
  H5Handle f{H5Fcreate(file.c_str(), H5F_ACC_EXCL, H5P_DEFAULT, fapl.id), H5Fclose};
  if (f.id < 0) throw OutputError(file + ": HDF5 cannot create the file" + os_cause());
  const std::array<hsize_t, 4> dims = {hsize_t(info.q), hsize_t(info.global[2]), hsize_t(info.global[1]),
                                       hsize_t(info.global[0])};
  {
    H5Handle fspace{H5Screate_simple(4, dims.data(), nullptr), H5Sclose};
    H5Handle set{H5Dcreate2(f.id, kDataset, type, fspace.id, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Dclose};
    if (fspace.id < 0 || set.id < 0) throw OutputError(file + ": HDF5 could not create dataset populations");
    const std::array<hsize_t, 4> start = {0, hsize_t(p.box.lo[2]), hsize_t(p.box.lo[1]), hsize_t(p.box.lo[0])};
    const std::array<hsize_t, 4> count = {hsize_t(info.q), hsize_t(p.box.n[2]), hsize_t(p.box.n[1]),
                                          hsize_t(p.box.n[0])};
    const bool empty = p.box.cells() == 0;
    const hsize_t one = 1;
    H5Handle mspace{empty ? H5Screate_simple(1, &one, nullptr) : H5Screate_simple(4, count.data(), nullptr), H5Sclose};
    herr_t sel = empty ? H5Sselect_none(fspace.id)
                       : H5Sselect_hyperslab(fspace.id, H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr);
    if (empty && sel >= 0) sel = H5Sselect_none(mspace.id);
    static const std::byte dummy[8] = {};
    const void* src = empty ? static_cast<const void*>(dummy) : static_cast<const void*>(p.data.data());
    if (mspace.id < 0 || sel < 0 || H5Dwrite(set.id, type, mspace.id, fspace.id, dxpl.id, src) < 0)
      throw OutputError(file + ": HDF5 could not write the hyperslab of rank " +
                        std::to_string(comm.rank()) + " to dataset populations" + os_cause());
  }
  // Attributes are metadata: with MPI-IO every rank writes the same values.
  const std::size_t nr = boxes.size();
  std::vector<int> lo(3 * nr), n(3 * nr);
  for (std::size_t r = 0; r < nr; ++r)
    for (std::size_t d = 0; d < 3; ++d) lo[3 * r + d] = boxes[r].lo[d], n[3 * r + d] = boxes[r].n[d];
  const long long step = info.step;
  write_attr(f.id, "box_lo", H5T_NATIVE_INT, {hsize_t(nr), 3}, lo.data(), file);
  write_attr(f.id, "box_n", H5T_NATIVE_INT, {hsize_t(nr), 3}, n.data(), file);
  write_attr(f.id, "checksum", H5T_NATIVE_UINT64, {hsize_t(nr)}, sums.data(), file);
  write_attr(f.id, "step", H5T_NATIVE_LLONG, {1}, &step, file);
  errno = 0;
  if (!f.close_now())
    throw OutputError(file + ": HDF5 could not close (flush) the file" + os_cause());
  if (const auto e = sync_path(file, false); !e.empty()) throw OutputError(file + ": fsync failed (" + e + ")");
}

std::string manifest_text(const CheckpointInfo& info, int ranks, const std::string& format,
                          const std::vector<Box>& boxes, const std::vector<std::uint64_t>& sums) {
  toml::table t;
  t.insert("format_version", kFormatVersion);
  t.insert("kolibri_version", info.kolibri_version.empty() ? library_version() : info.kolibri_version);
  t.insert("created", info.created.empty() ? now_iso_utc() : info.created);
  t.insert("step", std::int64_t(info.step));
  t.insert("value_type", info.value_type);
  t.insert("q", info.q);
  t.insert("global", toml::array{info.global[0], info.global[1], info.global[2]});
  t.insert("phase", info.phase);
  t.insert("ranks", ranks);
  t.insert("format", format);
  t.insert("signature", info.signature);
  t.insert("deck", info.deck);
  if (!info.body_motion.empty()) {
    toml::array motion;
    for (const double v : info.body_motion)
      motion.push_back(hex64(std::bit_cast<std::uint64_t>(v)));
    t.insert("body_motion", std::move(motion));
  }
  if (info.ib_forces_samples > 0)
    t.insert("ib_forces", toml::table{{"file", std::string(kIbForcesFile)},
                                      {"samples", info.ib_forces_samples},
                                      {"checksum", hex64(info.ib_forces_checksum)}});
  if (info.level_values > 0)
    t.insert("levels", toml::table{{"file", std::string(kLevelsFile)},
                                   {"values", info.level_values},
                                   {"checksum", hex64(info.level_checksum)}});
  if (info.outlet_values > 0)
    t.insert("outlets", toml::table{{"file", std::string(kOutletsFile)},
                                    {"values", info.outlet_values},
                                    {"checksum", hex64(info.outlet_checksum)}});
  toml::array pieces;
  for (std::size_t r = 0; r < boxes.size(); ++r) {
    const Box& b = boxes[r];
    pieces.push_back(toml::table{{"rank", std::int64_t(r)},
                                 {"file", format == "single" ? std::string(kSingleFile) : rank_file(int(r))},
                                 {"lo", toml::array{b.lo[0], b.lo[1], b.lo[2]}},
                                 {"n", toml::array{b.n[0], b.n[1], b.n[2]}},
                                 {"checksum", hex64(sums[r])}});
  }
  t.insert("piece", std::move(pieces));
  std::ostringstream os;
  os << "# kolibri checkpoint manifest (see docs/checkpoints.md)\n" << t << "\n";
  return os.str();
}

/// The first non-empty message of any rank ("" when every rank succeeded). Collective.
std::string agree(const Comm& comm, const std::string& mine) {
  for (const auto& m : comm.allgather(mine))
    if (!m.empty()) return m;
  return "";
}

// ---------------------------------------------------------------------------------------------
// Reading the manifest

std::string type_name(const toml::node& n) { return detail::toml_type_name(n); }

class Manifest {
 public:
  Manifest(std::string file, const toml::table& root) : m_file(std::move(file)), m_root(root) {}

  [[noreturn]] void fail(const std::string& key, const toml::node* n, const std::string& what) const {
    std::ostringstream os;
    os << m_file;
    if (n && n->source().begin.line > 0) os << ':' << n->source().begin.line;
    os << ": key '" << key << "': " << what;
    throw CheckpointError(os.str());
  }

  const toml::node& need(const toml::table& t, const std::string& key, const std::string& full) const {
    const toml::node* n = t.get(key);
    if (!n) fail(full, &t == &m_root ? nullptr : &t, "missing");  // a [[piece]]: its line
    return *n;
  }
  std::int64_t integer(const toml::table& t, const std::string& key, const std::string& full, std::int64_t lo,
                       std::int64_t hi) const {
    const toml::node& n = need(t, key, full);
    if (!n.is_integer()) fail(full, &n, "expected an integer, got " + type_name(n));
    const std::int64_t v = *n.value<std::int64_t>();
    if (v < lo || v > hi)
      fail(full, &n, "value " + std::to_string(v) + " out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    return v;
  }
  std::string string(const toml::table& t, const std::string& key, const std::string& full) const {
    const toml::node& n = need(t, key, full);
    if (!n.is_string()) fail(full, &n, "expected a string, got " + type_name(n));
    return *n.value<std::string>();
  }
  std::array<int, 3> int3(const toml::table& t, const std::string& key, const std::string& full, int lo) const {
    const toml::node& n = need(t, key, full);
    const toml::array* a = n.as_array();
    if (!a || a->size() != 3) fail(full, &n, "expected an array of 3 integers");
    std::array<int, 3> out{};
    for (std::size_t i = 0; i < 3; ++i) {
      const toml::node& e = *a->get(i);
      if (!e.is_integer()) fail(full, &n, "expected an array of 3 integers; element " + std::to_string(i) + " is " + type_name(e));
      const std::int64_t v = *e.value<std::int64_t>();
      if (v < lo || v > std::int64_t(0x7fffffff)) fail(full, &n, "element " + std::to_string(i) + " out of range");
      out[i] = int(v);
    }
    return out;
  }
  const toml::table& root() const { return m_root; }

 private:
  std::string m_file;
  const toml::table& m_root;
};

std::uint64_t parse_hex64(const Manifest& m, const toml::table& t, const std::string& full) {
  const std::string s = m.string(t, "checksum", full);
  std::uint64_t v = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 16);
  if (s.size() != 16 || ec != std::errc() || ptr != s.data() + s.size())
    m.fail(full, t.get("checksum"), "expected 16 hexadecimal digits, got '" + s + "'");
  return v;
}

/// A side file's table `key` = { file, <count>, checksum } of the manifest (ib_forces, levels,
/// outlets): `count` (its entry's value, from 1 to `most`) and `checksum` set where the manifest
/// has the table, left as they are where not.
void parse_side_table(const Manifest& m, const char* key, const char* file, const char* count_key,
                      std::int64_t most, std::int64_t& count, std::uint64_t& checksum) {
  const toml::node* n = m.root().get(key);
  if (!n) return;
  const std::string k = key;
  const toml::table* t = n->as_table();
  if (!t) m.fail(k, n, std::string("expected a table { file, ") + count_key + ", checksum }");
  if (m.string(*t, "file", k + ".file") != file)
    m.fail(k + ".file", n, std::string("expected '") + file + "'");
  count = m.integer(*t, count_key, k + "." + count_key, 1, most);
  checksum = parse_hex64(m, *t, k + ".checksum");
}

// ---------------------------------------------------------------------------------------------
// Reading the pieces

/// Reads whole pieces (from rank files or hyperslabs of state.h5) and checks their checksums.
class PieceReader {
 public:
  PieceReader(const std::string& path, const CheckpointInfo& info)
      : m_path(path), m_info(info), m_vb(value_bytes(info.value_type)), m_type(h5_type(info.value_type)) {}

  std::vector<std::byte> read(int r) {
    const Box& b = m_info.boxes[std::size_t(r)];
    std::vector<std::byte> buf(std::size_t(m_info.q) * std::size_t(b.cells()) * std::size_t(m_vb));
    const std::array<hsize_t, 4> count = {hsize_t(m_info.q), hsize_t(b.n[2]), hsize_t(b.n[1]), hsize_t(b.n[0])};
    std::string file;
    if (m_info.format == "single") {
      file = m_path + "/" + kSingleFile;
      if (m_single.id < 0) open(file, m_single_file, m_single,
                                {hsize_t(m_info.q), hsize_t(m_info.global[2]), hsize_t(m_info.global[1]),
                                 hsize_t(m_info.global[0])});
      H5Handle fspace{H5Dget_space(m_single.id), H5Sclose};
      const std::array<hsize_t, 4> start = {0, hsize_t(b.lo[2]), hsize_t(b.lo[1]), hsize_t(b.lo[0])};
      H5Handle mspace{H5Screate_simple(4, count.data(), nullptr), H5Sclose};
      if (fspace.id < 0 || mspace.id < 0 ||
          H5Sselect_hyperslab(fspace.id, H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr) < 0 ||
          H5Dread(m_single.id, m_type, mspace.id, fspace.id, H5P_DEFAULT, buf.data()) < 0)
        throw CheckpointError(file + ": cannot read the piece of rank " + std::to_string(r) + " from dataset " +
                              kDataset + h5_detail());
    } else {
      file = m_path + "/" + rank_file(r);
      H5Handle f{-1, H5Fclose};
      H5Handle set{-1, H5Dclose};
      open(file, f, set, std::vector<hsize_t>(count.begin(), count.end()));
      if (H5Dread(set.id, m_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf.data()) < 0)
        throw CheckpointError(file + ": cannot read dataset " + kDataset + h5_detail());
    }
    const std::uint64_t sum = checksum64(buf.data(), buf.size());
    if (sum != m_info.checksums[std::size_t(r)])
      throw CheckpointError(m_path + ": checksum mismatch in piece of rank " + std::to_string(r) + " (file " + file +
                            "): the checkpoint is corrupted (manifest " + hex64(m_info.checksums[std::size_t(r)]) +
                            ", data " + hex64(sum) + ")");
    return buf;
  }

 private:
  void open(const std::string& file, H5Handle& f, H5Handle& set, const std::vector<hsize_t>& dims) {
    f.id = H5Fopen(file.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f.id < 0) throw CheckpointError(file + ": HDF5 cannot open the file (truncated or damaged?)" + h5_detail());
    set.id = H5Dopen2(f.id, kDataset, H5P_DEFAULT);
    if (set.id < 0) throw CheckpointError(file + ": no dataset '" + kDataset + "'" + h5_detail());
    H5Handle space{H5Dget_space(set.id), H5Sclose};
    H5Handle type{H5Dget_type(set.id), H5Tclose};
    const int nd = space.id >= 0 ? H5Sget_simple_extent_ndims(space.id) : -1;
    std::vector<hsize_t> have(4, 0);
    if (nd == 4) H5Sget_simple_extent_dims(space.id, have.data(), nullptr);
    if (nd != 4 || have != dims) {
      std::ostringstream os;
      os << file << ": dataset " << kDataset << " has the wrong shape (expected " << dims[0] << " x " << dims[1]
         << " x " << dims[2] << " x " << dims[3] << " for q x nz x ny x nx from the manifest)";
      throw CheckpointError(os.str());
    }
    // The step comes from the data: the file's own attribute must agree with the manifest.
    long long step = -1;
    {
      H5Handle attr{H5Aexists(f.id, "step") > 0 ? H5Aopen(f.id, "step", H5P_DEFAULT) : hid_t(-1),
                    H5Aclose};
      if (attr.id < 0 || H5Aread(attr.id, H5T_NATIVE_LLONG, &step) < 0)
        throw CheckpointError(
            file + ": no step attribute (not a kolibri checkpoint file, or damaged)" + h5_detail());
    }
    if (step != m_info.step)
      throw CheckpointError(file + ": holds step " + std::to_string(step) +
                            " but the manifest says step " + std::to_string(m_info.step) +
                            " (edited or mixed up); refused");
    const H5T_class_t cls = type.id >= 0 ? H5Tget_class(type.id) : H5T_NO_CLASS;
    const bool want_float = m_info.value_type != "float16";
    if (cls != (want_float ? H5T_FLOAT : H5T_INTEGER) || H5Tget_size(type.id) != std::size_t(m_vb))
      throw CheckpointError(file + ": dataset " + kDataset + " does not hold " + m_info.value_type +
                            " values (the manifest's value_type)");
  }

  std::string m_path;
  const CheckpointInfo& m_info;
  int m_vb;
  hid_t m_type;
  H5Handle m_single_file{-1, H5Fclose};  // declared before m_single: closed after it
  H5Handle m_single{-1, H5Dclose};
};

}  // namespace

// ---------------------------------------------------------------------------------------------

int value_bytes(const std::string& value_type) {
  if (value_type == "float64") return 8;
  if (value_type == "float32") return 4;
  if (value_type == "float16") return 2;
  throw std::invalid_argument("unknown value type '" + value_type + "' (expected float64, float32 or float16)");
}

bool checkpoint_single_supported(const Comm& comm) {
#if defined(KOLIBRI_HAVE_PARALLEL_HDF5)
  if (comm.mpi()) return true;
#endif
  return comm.size() == 1;
}

void write_checkpoint(const Comm& comm, const std::string& path, const CheckpointInfo& info, const StatePiece& mine,
                      CheckpointLayout layout) {
  const std::string tmp = path + ".tmp";
#if defined(KOLIBRI_HAVE_PARALLEL_HDF5)
  const bool mpio = comm.mpi();
#else
  const bool mpio = false;
#endif
  if (layout == CheckpointLayout::Auto) layout = mpio ? CheckpointLayout::Single : CheckpointLayout::PerRank;
  if (layout == CheckpointLayout::Single && !checkpoint_single_supported(comm))
    throw OutputError(path + ": a single-file checkpoint written by " + std::to_string(comm.size()) +
                      " ranks needs parallel HDF5 with MPI, and this build has serial HDF5; use the per-rank layout");
  const bool single = layout == CheckpointLayout::Single;

  // 1. Check this rank's piece; rank 0 prepares path.tmp. Then every rank learns every box and
  //    checksum (for the manifest and the tiling check) or every failure.
  std::string local;
  std::uint64_t sum = 0;
  try {
    int vb = 0;
    try {
      vb = value_bytes(info.value_type);
    } catch (const std::invalid_argument& e) {
      throw OutputError(path + ": " + e.what());
    }
    if (info.q <= 0) throw OutputError(path + ": q must be positive");
    for (int d : info.global)
      if (d <= 0) throw OutputError(path + ": the global box must have a positive size in every direction");
    const std::size_t want = std::size_t(info.q) * std::size_t(std::max<std::int64_t>(mine.box.cells(), 0)) *
                             std::size_t(vb);
    if (mine.data.size() != want)
      throw OutputError(path + ": the piece of rank " + std::to_string(comm.rank()) + " has " +
                        std::to_string(mine.data.size()) + " bytes; q x cells x value bytes = " + std::to_string(want));
    sum = checksum64(mine.data.data(), mine.data.size());
    if (comm.root()) {
      std::error_code ec;
      if (fs::exists(path, ec)) throw OutputError(path + ": exists already (a checkpoint is never overwritten)");
      fs::remove_all(tmp, ec);
      if (ec) throw OutputError(tmp + ": cannot remove the stale directory (" + ec.message() + ")");
      fs::create_directories(tmp, ec);
      if (ec) throw OutputError(tmp + ": cannot create the directory (" + ec.message() + ")");
    }
  } catch (const std::exception& e) {
    local = e.what();
  }
  std::ostringstream me;
  if (local.empty()) {
    me << "B";
    for (int v : mine.box.lo) me << ' ' << v;
    for (int v : mine.box.n) me << ' ' << v;
    me << ' ' << sum;
  } else {
    me << "E" << local;
  }
  const auto all = comm.allgather(me.str());
  std::vector<Box> boxes(all.size());
  std::vector<std::uint64_t> sums(all.size());
  std::string failed;
  for (std::size_t r = 0; r < all.size(); ++r) {
    if (all[r].empty() || all[r][0] == 'E') {
      if (failed.empty()) failed = all[r].empty() ? path + ": rank " + std::to_string(r) + " failed" : all[r].substr(1);
      continue;
    }
    std::istringstream in(all[r].substr(1));
    Box& b = boxes[r];
    in >> b.lo[0] >> b.lo[1] >> b.lo[2] >> b.n[0] >> b.n[1] >> b.n[2] >> sums[r];
  }
  if (failed.empty()) {
    if (const auto defect = tiling_defect(info.global, boxes); !defect.empty()) failed = path + ": " + defect;
  }
  const auto fail_all = [&](const std::string& msg) {
    if (comm.root()) {
      std::error_code ec;
      fs::remove_all(tmp, ec);
    }
    throw OutputError(msg);
  };
  if (!failed.empty()) fail_all(failed);
  comm.barrier();  // path.tmp exists (the allgather already ordered this; kept explicit)

  // 2. Every rank writes its piece.
  local.clear();
  try {
    if (single) write_single_file(comm, mpio, tmp + "/" + kSingleFile, info, mine, boxes, sums);
    else write_rank_file(tmp + "/" + rank_file(comm.rank()), info, mine, sum);
  } catch (const std::exception& e) {
    local = e.what();
  }
  if (const auto msg = agree(comm, local); !msg.empty()) fail_all(msg);

  // 3. Rank 0 writes the manifest and publishes the directory under its final name.
  local.clear();
  if (comm.root()) {
    try {
      CheckpointInfo with = info;  // the implicit forcing's forces, in a file of their own
      if (!info.ib_forces.empty()) {
        if (info.ib_forces.size() % 3 != 0)
          throw OutputError(path + ": the implicit forcing's forces are not 3 values a sample");
        with.ib_forces_samples = std::int64_t(info.ib_forces.size() / 3);
        with.ib_forces_checksum = write_ib_forces_file(tmp + "/" + kIbForcesFile, info.ib_forces);
      }
      if (!info.level_state.empty()) {  // a refined grid's levels, in a file of their own
        const std::size_t vb = std::size_t(value_bytes(info.value_type));
        if (info.level_state.size() % vb != 0)
          throw OutputError(path + ": the refined levels' state is not a whole number of values");
        with.level_values = std::int64_t(info.level_state.size() / vb);
        with.level_checksum =
            write_levels_file(tmp + "/" + kLevelsFile, info.value_type, info.level_state);
      }
      if (!info.outlet_state.empty()) {  // the characteristic outlets' state, in a file of its own
        with.outlet_values = std::int64_t(info.outlet_state.size());
        with.outlet_checksum = write_outlets_file(tmp + "/" + kOutletsFile, info.outlet_state);
      }
      const std::string mf = tmp + "/" + kManifest;
      {
        std::ofstream out(mf, std::ios::binary | std::ios::trunc);
        if (!out) throw OutputError(mf + ": cannot write (" + std::strerror(errno) + ")");
        out << manifest_text(with, comm.size(), single ? "single" : "per-rank", boxes, sums);
        out.close();
        if (!out) throw OutputError(mf + ": write failed (" + std::strerror(errno) + ")");
      }
      if (const auto e = sync_path(mf, false); !e.empty()) throw OutputError(mf + ": fsync failed (" + e + ")");
      (void)sync_path(tmp, true);
      std::error_code ec;
      if (fs::exists(path, ec)) throw OutputError(path + ": exists already (a checkpoint is never overwritten)");
      fs::rename(tmp, path, ec);
      if (ec) throw OutputError(path + ": cannot rename from " + tmp + " (" + ec.message() + ")");
      const fs::path parent = fs::path(path).parent_path();
      (void)sync_path(parent.empty() ? std::string(".") : parent.string(), true);
    } catch (const std::exception& e) {
      local = e.what();
    }
  }
  comm.bcast(local, 0);
  if (!local.empty()) fail_all(local);
  comm.barrier();
}

namespace {
/// The step in a checkpoint directory's name (`..._ckpt_<digits>`), or -1 when it has none.
std::int64_t step_in_name(const std::string& file) {
  const auto at = file.rfind("_ckpt_");
  if (at == std::string::npos) return -1;
  const char* b = file.data() + at + 6;
  const char* e = file.data() + file.size();
  if (b == e || !std::all_of(b, e, [](char c) { return c >= '0' && c <= '9'; })) return -1;
  std::int64_t step = -1;
  const auto [ptr, ec] = std::from_chars(b, e, step);
  return ec == std::errc() && ptr == e ? step : -1;
}
}  // namespace

CheckpointInfo read_checkpoint_info(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    if (fs::exists(path + ".tmp", ec))
      throw CheckpointError(path + ": incomplete: the run was stopped while writing it (only " + path +
                            ".tmp exists)");
    throw CheckpointError(path + ": no such checkpoint (the directory does not exist)");
  }
  if (!fs::is_directory(path, ec)) throw CheckpointError(path + ": not a checkpoint directory");
  const std::string mf = path + "/" + kManifest;
  if (!fs::exists(mf, ec)) throw CheckpointError(mf + ": missing: " + path + " is not a complete checkpoint");

  toml::table root;
  try {
    root = toml::parse_file(mf);
  } catch (const toml::parse_error& e) {
    std::ostringstream os;
    os << mf << ':' << e.source().begin.line << ':' << e.source().begin.column << ": TOML syntax error: "
       << e.description();
    throw CheckpointError(os.str());
  }
  const Manifest m(mf, root);
  constexpr std::int64_t kInt = 0x7fffffff;
  CheckpointInfo info;
  const std::int64_t version = m.integer(root, "format_version", "format_version", 0, kInt);
  if (version != kFormatVersion)
    m.fail("format_version", root.get("format_version"),
           "unknown checkpoint format version " + std::to_string(version) + " (this kolibri reads version " +
               std::to_string(kFormatVersion) + ")");
  info.kolibri_version = m.string(root, "kolibri_version", "kolibri_version");
  info.created = m.string(root, "created", "created");
  info.step = m.integer(root, "step", "step", 0, INT64_MAX);
  if (const std::int64_t named = step_in_name(fs::path(path).filename().string());
      named >= 0 && named != info.step)
    throw CheckpointError(path + ": the directory name says step " + std::to_string(named) +
                          " but its manifest says step " + std::to_string(info.step) +
                          " (renamed or edited); refused");
  info.value_type = m.string(root, "value_type", "value_type");
  try {
    (void)value_bytes(info.value_type);
  } catch (const std::invalid_argument& e) {
    m.fail("value_type", root.get("value_type"), e.what());
  }
  info.q = int(m.integer(root, "q", "q", 1, 1024));
  info.global = m.int3(root, "global", "global", 1);
  info.phase = int(m.integer(root, "phase", "phase", INT32_MIN, INT32_MAX));
  info.ranks = int(m.integer(root, "ranks", "ranks", 1, kInt));
  info.format = m.string(root, "format", "format");
  if (info.format != "single" && info.format != "per-rank")
    m.fail("format", root.get("format"), "'" + info.format + "' is not one of single, per-rank");
  info.signature = m.string(root, "signature", "signature");
  info.deck = m.string(root, "deck", "deck");
  if (const toml::node* bm = root.get("body_motion")) {  // free bodies only
    const toml::array* a = bm->as_array();
    if (!a) m.fail("body_motion", bm, "expected an array of 16-digit hexadecimal strings");
    for (std::size_t i = 0; i < a->size(); ++i) {
      const auto* v = a->get(i)->as_string();
      const std::string text = v ? v->get() : std::string();
      std::uint64_t bits = 0;
      const auto [end, bad] = std::from_chars(text.data(), text.data() + text.size(), bits, 16);
      if (text.size() != 16 || bad != std::errc() || end != text.data() + text.size())
        m.fail(
            "body_motion", bm,
            "entry " + std::to_string(i) + ": expected 16 hexadecimal digits, got '" + text + "'");
      info.body_motion.push_back(std::bit_cast<double>(bits));
    }
  }

  constexpr std::int64_t kMost = std::numeric_limits<std::int64_t>::max();
  parse_side_table(m, "ib_forces", kIbForcesFile, "samples", kInt, info.ib_forces_samples,
                   info.ib_forces_checksum);  // the implicit forcing only
  parse_side_table(m, "levels", kLevelsFile, "values", kMost, info.level_values,
                   info.level_checksum);  // refined grids only
  parse_side_table(m, "outlets", kOutletsFile, "values", kMost, info.outlet_values,
                   info.outlet_checksum);  // characteristic outlets only

  const toml::node& pn = m.need(root, "piece", "piece");
  const toml::array* pieces = pn.as_array();
  if (!pieces || !pieces->is_array_of_tables()) m.fail("piece", &pn, "expected an array of tables [[piece]]");
  if (pieces->size() != std::size_t(info.ranks))
    m.fail("piece", &pn, std::to_string(pieces->size()) + " pieces for " + std::to_string(info.ranks) + " ranks");
  info.boxes.assign(std::size_t(info.ranks), Box{});
  info.checksums.assign(std::size_t(info.ranks), 0);
  std::vector<bool> seen(std::size_t(info.ranks), false);
  for (std::size_t i = 0; i < pieces->size(); ++i) {
    const toml::table& t = *pieces->get(i)->as_table();
    const std::string key = "piece[" + std::to_string(i) + "]";
    const int r = int(m.integer(t, "rank", key + ".rank", 0, info.ranks - 1));
    if (seen[std::size_t(r)]) m.fail(key + ".rank", t.get("rank"), "rank " + std::to_string(r) + " appears twice");
    seen[std::size_t(r)] = true;
    const std::string file = m.string(t, "file", key + ".file");
    const std::string expect = info.format == "single" ? std::string(kSingleFile) : rank_file(r);
    if (file != expect)
      m.fail(key + ".file", t.get("file"), "'" + file + "': a " + info.format + " checkpoint keeps rank " +
                                               std::to_string(r) + "'s piece in '" + expect + "'");
    Box& b = info.boxes[std::size_t(r)];
    b.lo = m.int3(t, "lo", key + ".lo", 0);
    b.n = m.int3(t, "n", key + ".n", 0);
    info.checksums[std::size_t(r)] = parse_hex64(m, t, key + ".checksum");
  }
  if (const auto defect = tiling_defect(info.global, info.boxes); !defect.empty())
    throw CheckpointError(mf + ": the pieces do not tile the global box: " + defect);
  if (info.format == "single") {
    if (!fs::is_regular_file(path + "/" + kSingleFile, ec))
      throw CheckpointError(path + "/" + kSingleFile + ": missing (named by the manifest)");
  } else {
    for (int r = 0; r < info.ranks; ++r)
      if (!fs::is_regular_file(path + "/" + rank_file(r), ec))
        throw CheckpointError(path + "/" + rank_file(r) + ": missing (the piece of rank " + std::to_string(r) +
                              " named by the manifest)");
  }
  if (info.ib_forces_samples > 0 && !fs::is_regular_file(path + "/" + kIbForcesFile, ec))
    throw CheckpointError(path + "/" + kIbForcesFile +
                          ": missing (the implicit forcing's forces named by the manifest)");
  if (info.level_values > 0 && !fs::is_regular_file(path + "/" + kLevelsFile, ec))
    throw CheckpointError(path + "/" + kLevelsFile +
                          ": missing (the refined levels named by the manifest)");
  if (info.outlet_values > 0 && !fs::is_regular_file(path + "/" + kOutletsFile, ec))
    throw CheckpointError(path + "/" + kOutletsFile +
                          ": missing (the characteristic outlets' state named by the manifest)");
  return info;
}

void read_checkpoint_state(const std::string& path, const CheckpointInfo& info, StatePiece& want) {
  int vb = 0;
  try {
    vb = value_bytes(info.value_type);
  } catch (const std::invalid_argument& e) {
    throw CheckpointError(path + ": " + e.what());
  }
  if (info.boxes.size() != std::size_t(info.ranks) || info.checksums.size() != std::size_t(info.ranks) ||
      (info.format != "single" && info.format != "per-rank") || info.q <= 0)
    throw CheckpointError(path + ": the checkpoint description is incomplete (use read_checkpoint_info)");
  const Box& w = want.box;
  const Box global{{0, 0, 0}, info.global};
  if (w.cells() < 0 || global.intersect(w) != w)
    throw CheckpointError(path + ": the requested box (" + box_str(w) + ") lies outside the global box " +
                          std::to_string(info.global[0]) + " x " + std::to_string(info.global[1]) + " x " +
                          std::to_string(info.global[2]));
  want.data.assign(std::size_t(info.q) * std::size_t(w.cells()) * std::size_t(vb), std::byte{0});
  if (w.cells() == 0) return;

  const H5Quiet quiet;
  PieceReader reader(path, info);
  for (int r = 0; r < info.ranks; ++r) {
    const Box& p = info.boxes[std::size_t(r)];
    const Box o = w.intersect(p);
    if (o.cells() == 0) continue;
    const std::vector<std::byte> buf = reader.read(r);
    const std::size_t run = std::size_t(o.n[0]) * std::size_t(vb);
    for (std::int64_t qi = 0; qi < info.q; ++qi)
      for (int z = o.lo[2]; z < o.lo[2] + o.n[2]; ++z)
        for (int y = o.lo[1]; y < o.lo[1] + o.n[1]; ++y) {
          const std::int64_t src =
              ((qi * p.n[2] + (z - p.lo[2])) * p.n[1] + (y - p.lo[1])) * p.n[0] + (o.lo[0] - p.lo[0]);
          const std::int64_t dst =
              ((qi * w.n[2] + (z - w.lo[2])) * w.n[1] + (y - w.lo[1])) * w.n[0] + (o.lo[0] - w.lo[0]);
          std::memcpy(want.data.data() + std::size_t(dst) * std::size_t(vb),
                      buf.data() + std::size_t(src) * std::size_t(vb), run);
        }
  }
}

std::vector<double> read_checkpoint_ib_forces(const std::string& path, const CheckpointInfo& info) {
  if (info.ib_forces_samples == 0) return {};
  const std::string file = path + "/" + kIbForcesFile;
  std::vector<double> forces(std::size_t(info.ib_forces_samples) * 3);
  read_checked_side_file(file, kIbForcesDataset, H5T_NATIVE_DOUBLE,
                         {hsize_t(info.ib_forces_samples), 3},
                         std::to_string(info.ib_forces_samples) + " x 3 (samples x components)",
                         info.ib_forces_checksum, forces);
  return forces;
}

std::vector<double> read_checkpoint_outlet_state(const std::string& path,
                                                 const CheckpointInfo& info) {
  if (info.outlet_values == 0) return {};
  const std::string file = path + "/" + kOutletsFile;
  std::vector<double> state(std::size_t(info.outlet_values));
  read_checked_side_file(file, kOutletsDataset, H5T_NATIVE_DOUBLE, {hsize_t(info.outlet_values)},
                         std::to_string(info.outlet_values) + " values", info.outlet_checksum,
                         state);
  return state;
}

std::vector<std::byte> read_checkpoint_levels(const std::string& path, const CheckpointInfo& info) {
  if (info.level_values == 0) return {};
  const std::string file = path + "/" + kLevelsFile;
  int vb = 0;
  try {
    vb = value_bytes(info.value_type);
  } catch (const std::invalid_argument& e) {
    throw CheckpointError(path + ": " + e.what());
  }
  std::vector<std::byte> bytes(std::size_t(info.level_values) * std::size_t(vb));
  read_checked_side_file(file, kDataset, h5_type(info.value_type), {hsize_t(info.level_values)},
                         std::to_string(info.level_values) + " values", info.level_checksum, bytes);
  return bytes;
}

std::vector<std::byte> read_checkpoint_levels(const std::string& path, const CheckpointInfo& info,
                                              const LevelSlice& slice, bool verify,
                                              std::int64_t part_bytes) {
  if (info.level_values == 0 && slice.total == 0) return {};
  if (slice.total == 0)
    throw std::invalid_argument(
        path + ": the checkpoint holds a refined grid's levels; this run has none");
  if (info.level_values != slice.total)
    throw std::invalid_argument(path + ": the checkpoint's refined levels hold " +
                                std::to_string(info.level_values) + " values; this deck's levels " +
                                std::to_string(slice.total));
  const std::string file = path + "/" + kLevelsFile;
  std::size_t vb = 0;
  try {
    vb = std::size_t(value_bytes(info.value_type));
  } catch (const std::invalid_argument& e) {
    throw CheckpointError(path + ": " + e.what());
  }
  const hid_t type = h5_type(info.value_type);
  const SideDataset d(file, kDataset, {hsize_t(info.level_values)},
                      std::to_string(info.level_values) + " values");
  // Values [first, first + n) of the dataset into `to`.
  const auto read = [&](std::int64_t first, std::int64_t n, std::byte* to) {
    const hsize_t start = hsize_t(first), count = hsize_t(n);
    H5Handle mem{H5Screate_simple(1, &count, nullptr), H5Sclose};
    if (H5Sselect_hyperslab(d.space.id, H5S_SELECT_SET, &start, nullptr, &count, nullptr) < 0 ||
        H5Dread(d.set.id, type, mem.id, d.space.id, H5P_DEFAULT, to) < 0)
      throw CheckpointError(file + ": reading dataset " + kDataset + " failed" + h5_detail());
  };
  std::int64_t end = 0;
  for (const auto& r : slice.ranges) {
    if (r[0] < end || r[1] < r[0] || r[1] > slice.total)
      throw std::logic_error("read_checkpoint_levels: ranges not in order or outside the levels");
    end = r[1];
  }
  std::vector<std::byte> out(std::size_t(slice.values()) * vb);
  if (!verify) {  // the ranges only
    std::size_t at = 0;
    for (const auto& r : slice.ranges) {
      if (r[1] > r[0]) read(r[0], r[1] - r[0], out.data() + at);
      at += std::size_t(r[1] - r[0]) * vb;
    }
    return out;
  }
  // The whole file once, in parts, through the checksum; the ranges' values taken on the way.
  if (part_bytes <= 0 || part_bytes % 8 != 0)
    throw std::logic_error("read_checkpoint_levels: parts must be whole 8-byte words");
  const std::int64_t part = std::max<std::int64_t>(1, part_bytes / std::int64_t(vb));
  std::vector<std::byte> buffer(std::size_t(std::min(part, info.level_values)) * vb);
  Checksum64 sum;
  std::size_t k = 0, at = 0;  // the next range, and where its values go in `out`
  for (std::int64_t first = 0; first < info.level_values; first += part) {
    const std::int64_t n = std::min(part, info.level_values - first);
    read(first, n, buffer.data());
    sum.add(buffer.data(), std::size_t(n) * vb);
    for (; k < slice.ranges.size(); ++k) {
      const auto& r = slice.ranges[k];
      const std::int64_t a = std::max(r[0], first), b = std::min(r[1], first + n);
      if (a < b) {
        std::memcpy(out.data() + at, buffer.data() + std::size_t(a - first) * vb,
                    std::size_t(b - a) * vb);
        at += std::size_t(b - a) * vb;
      }
      if (r[1] > first + n) break;  // the range goes on in the next part
    }
  }
  if (sum.value() != info.level_checksum)
    throw CheckpointError(file + ": checksum " + hex64(sum.value()) +
                          " does not match the manifest's " + hex64(info.level_checksum) +
                          ": the checkpoint is corrupted");
  return out;
}

CheckpointInfo verify_checkpoint(const Comm& comm, const std::string& path) {
  CheckpointInfo info;
  std::string err;
  try {
    info = read_checkpoint_info(path);
    if (comm.root()) (void)read_checkpoint_ib_forces(path, info);
    if (comm.root())  // the whole file through its checksum, in parts
      (void)read_checkpoint_levels(path, info, LevelSlice{info.level_values, {}}, true);
    if (comm.root()) (void)read_checkpoint_outlet_state(path, info);
    const H5Quiet quiet;
    PieceReader reader(path, info);
    for (int r = comm.rank(); r < info.ranks; r += comm.size()) (void)reader.read(r);
  } catch (const std::exception& e) {
    err = e.what();
    if (err.empty()) err = path + ": unreadable";
  }
  for (const auto& e : comm.allgather(err))
    if (!e.empty()) throw CheckpointError(e);
  return info;
}

std::string move_aside(const std::string& path, const std::string& what) {
  std::error_code ec;
  std::string aside = path + "." + what;
  for (int i = 2; fs::exists(aside, ec); ++i) aside = path + "." + what + "." + std::to_string(i);
  fs::rename(path, aside, ec);
  if (ec)
    throw OutputError(path + ": cannot move it aside to " + aside + " (" + ec.message() + ")");
  return aside;
}

std::string checkpoint_path(const std::string& dir, const std::string& name, std::int64_t step) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%08lld", static_cast<long long>(step));
  return dir + "/" + name + "_ckpt_" + buf;
}

namespace {
/// The step of a directory name `name_ckpt_<digits><suffix>`, or -1 when it does not match.
std::int64_t ckpt_step(const std::string& file, const std::string& name, const std::string& suffix) {
  const std::string prefix = name + "_ckpt_";
  if (file.size() <= prefix.size() + suffix.size() || file.compare(0, prefix.size(), prefix) != 0 ||
      file.compare(file.size() - suffix.size(), suffix.size(), suffix) != 0)
    return -1;
  const char* b = file.data() + prefix.size();
  const char* e = file.data() + file.size() - suffix.size();
  if (!std::all_of(b, e, [](char c) { return c >= '0' && c <= '9'; })) return -1;
  std::int64_t step = -1;
  const auto [ptr, ec] = std::from_chars(b, e, step);
  return ec == std::errc() && ptr == e ? step : -1;
}
}  // namespace

std::vector<std::string> list_checkpoints(const std::string& dir, const std::string& name) {
  std::vector<std::pair<std::int64_t, std::string>> found;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code ec2;
    if (!it->is_directory(ec2)) continue;
    const std::string file = it->path().filename().string();
    const std::int64_t step = ckpt_step(file, name, "");
    if (step < 0 || !fs::is_regular_file(it->path() / kManifest, ec2)) continue;
    found.emplace_back(step, dir + "/" + file);
  }
  std::sort(found.begin(), found.end());
  std::vector<std::string> out;
  for (auto& f : found) out.push_back(std::move(f.second));
  return out;
}

// Not collective: call it from rank 0 only (after write_checkpoint returned on every rank).
std::vector<std::string> prune_checkpoints(const std::string& dir, const std::string& name, int keep,
                                           std::int64_t upto_step) {
  if (keep < 0) throw std::invalid_argument("prune_checkpoints: keep must be >= 0, got " + std::to_string(keep));
  std::vector<std::string> doomed, complete;
  for (const auto& p : list_checkpoints(dir, name)) {  // oldest first
    if (ckpt_step(fs::path(p).filename().string(), name, "") > upto_step) continue;
    try {  // only checkpoints whose manifest reads (and agrees with the name) count or go
      (void)read_checkpoint_info(p);
    } catch (const CheckpointError&) {
      continue;
    }
    complete.push_back(p);
  }
  if (complete.size() > std::size_t(keep)) doomed.assign(complete.begin(), complete.end() - keep);
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code ec2;
    const std::string file = it->path().filename().string();
    if (it->is_directory(ec2) && ckpt_step(file, name, ".tmp") >= 0) doomed.push_back(dir + "/" + file);
  }
  std::vector<std::string> removed;
  for (const auto& p : doomed) {
    fs::remove_all(p, ec);
    if (ec) throw OutputError(p + ": cannot remove the old checkpoint (" + ec.message() + ")");
    removed.push_back(p);
  }
  return removed;
}

}  // namespace kolibri
