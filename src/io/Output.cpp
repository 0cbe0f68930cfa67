// SPDX-License-Identifier: Apache-2.0
#include <kolibri/core/Backend.hpp>
#include <kolibri/io/Output.hpp>

#include <hdf5.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/file.h>
#include <tuple>
#include <unistd.h>
#include <utility>

#include "Hdf5.hpp"

namespace kolibri {
using detail::h5_detail;
using detail::H5Handle;
using detail::H5Quiet;

OutputLock::OutputLock(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw OutputError(dir + ": cannot create the output directory (" + ec.message() + ")");
  const std::string path = dir + "/kolibri.lock";
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0)
    throw OutputError(path + ": cannot open the lock file (" + std::strerror(errno) + ")");
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    char holder[512] = {};
    const ssize_t n = ::pread(fd, holder, sizeof holder - 1, 0);
    ::close(fd);
    std::string who = n > 0 ? std::string(holder, std::size_t(n)) : std::string("unknown");
    while (!who.empty() && (who.back() == '\n' || who.back() == ' ')) who.pop_back();
    if (err == EWOULDBLOCK)
      throw OutputError(dir + ": in use by another kolibri run (" + who +
                        "); two runs must not share an output directory: wait for it, or use "
                        "another output directory");
    throw OutputError(path + ": cannot lock (" + std::strerror(err) + ")");
  }
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) std::snprintf(host, sizeof host, "?");
  char when[32] = {};
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
  const std::string text =
      "pid " + std::to_string(::getpid()) + " on " + host + ", since " + when + "\n";
  if (::ftruncate(fd, 0) != 0 ||
      ::pwrite(fd, text.data(), text.size(), 0) != ssize_t(text.size())) {
    const int err = errno;
    ::close(fd);
    throw OutputError(path + ": cannot write the lock file (" + std::strerror(err) + ")");
  }
  m_fd = fd;
  m_path = path;
}

OutputLock& OutputLock::operator=(OutputLock&& o) noexcept {
  std::swap(m_fd, o.m_fd);  // o releases what this held
  std::swap(m_path, o.m_path);
  return *this;
}

OutputLock::~OutputLock() {
  if (m_fd < 0) return;
  ::close(m_fd);  // the file stays (removing it would let two runs lock two different files)
  m_fd = -1;
}

CsvFile::CsvFile(const std::string& path, const std::string& head) : m_path(path) {
  m_fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (m_fd < 0) throw OutputError(path + ": cannot create the file (" + std::strerror(errno) + ")");
  append(head);
}

CsvFile& CsvFile::operator=(CsvFile&& o) noexcept {
  std::swap(m_fd, o.m_fd);  // o closes what this held
  std::swap(m_path, o.m_path);
  std::swap(m_size, o.m_size);
  return *this;
}

CsvFile::~CsvFile() {
  if (m_fd >= 0) ::close(m_fd);
  m_fd = -1;
}

void CsvFile::close() {
  if (m_fd < 0) return;
  const int fd = m_fd;
  m_fd = -1;
  if (::close(fd) != 0) throw OutputError(m_path + ": cannot close (" + std::strerror(errno) + ")");
}

void CsvFile::append(const std::string& rows) {
  if (m_fd < 0) throw OutputError(m_path + ": the file is not open");
  std::size_t done = 0;
  while (done < rows.size()) {
    const ssize_t n =
        ::pwrite(m_fd, rows.data() + done, rows.size() - done, off_t(m_size + (long long)done));
    if (n > 0) {
      done += std::size_t(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    const int err = n < 0 ? errno : ENOSPC;
    const bool cut = ::ftruncate(m_fd, off_t(m_size)) == 0;  // no half row left behind
    throw OutputError(m_path + ": cannot write (" + std::strerror(err) + ")" +
                      (cut ? "; the file ends at its last complete row" : ""));
  }
  m_size += (long long)rows.size();
}

void write_file_atomic(const std::string& path, const std::string& content) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw OutputError(path + ": cannot write (" + std::strerror(errno) + ")");
    out << content;
    out.close();
    if (!out) {
      std::remove(tmp.c_str());
      throw OutputError(path + ": write failed (" + std::strerror(errno) + ")");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    throw OutputError(path + ": cannot rename from " + tmp + " (" + std::strerror(errno) + ")");
}

namespace {
void write_dataset(hid_t file, const char* name, hid_t type, const std::vector<hsize_t>& dims,
                   const void* data, const std::string& path) {
  H5Handle space{H5Screate_simple(int(dims.size()), dims.data(), nullptr), H5Sclose};
  H5Handle set{H5Dcreate2(file, name, type, space.id, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), H5Dclose};
  if (set.id < 0 || H5Dwrite(set.id, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)
    throw OutputError(path + ": HDF5 could not write dataset " + name + h5_detail());
}
}  // namespace

namespace {
/// An HDF5 file built in memory by `fill(file)` (detail::create_in_memory), then written to
/// `path` through `path.tmp` and a rename.
template <class Fill>
void write_hdf5_atomic(const std::string& path, const Fill& fill) {
  const std::string tmp = path + ".tmp";
  const H5Quiet quiet;
  std::vector<unsigned char> image;
  {
    H5Handle file{detail::create_in_memory(), H5Fclose};
    if (file.id < 0)
      throw OutputError(path + ": HDF5 cannot create the file in memory" + h5_detail());
    fill(file.id);
    image = detail::image_of(file.id);
    if (image.empty())
      throw OutputError(path + ": HDF5 could not build the file image" + h5_detail());
  }
  if (const auto err = detail::write_image(tmp, image, false, false); !err.empty())
    throw OutputError(path + ": cannot write (" + err + ")");
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    std::remove(tmp.c_str());
    throw OutputError(path + ": cannot rename from " + tmp + " (" + std::strerror(e) + ")");
  }
}
}  // namespace

void write_fields_hdf5(const std::string& path, const MacroFields& f, std::int64_t step,
                       const Units& units) {
  write_hdf5_atomic(path, [&](hid_t file) {
    const std::vector<hsize_t> dims = {hsize_t(f.nz), hsize_t(f.ny), hsize_t(f.nx)};
    write_dataset(file, "density", H5T_NATIVE_DOUBLE, dims, f.rho.data(), path);
    write_dataset(file, "velocity", H5T_NATIVE_DOUBLE, {dims[0], dims[1], dims[2], 3}, f.u.data(),
                  path);
    write_dataset(file, "solid", H5T_NATIVE_UINT8, dims, f.solid.data(), path);
    std::vector<double> p(f.rho.size());
    for (std::size_t i = 0; i < p.size(); ++i) p[i] = lattice_pressure(f.rho[i]);
    write_dataset(file, "pressure", H5T_NATIVE_DOUBLE, dims, p.data(), path);
    if (units.given) {
      for (double& v : p) v = units.pressure(v);
      write_dataset(file, "pressure_si", H5T_NATIVE_DOUBLE, dims, p.data(), path);
      std::vector<std::array<double, 3>> u(f.u.size());
      for (std::size_t i = 0; i < u.size(); ++i)
        for (std::size_t d = 0; d < 3; ++d) u[i][d] = units.velocity(f.u[i][d]);
      write_dataset(file, "velocity_si", H5T_NATIVE_DOUBLE, {dims[0], dims[1], dims[2], 3},
                    u.data(), path);
      const double scale[3] = {units.dx, units.dt, units.density};
      write_dataset(file, "units_dx_dt_density", H5T_NATIVE_DOUBLE, {3}, scale, path);
    }
    const long long s = step;
    write_dataset(file, "step", H5T_NATIVE_LLONG, {1}, &s, path);
  });
}

std::vector<std::int64_t> write_levels_hdf5(const std::string& path,
                                            const std::vector<LevelFields>& levels,
                                            std::int64_t step, int dims) {
  std::vector<std::int64_t> counts;
  write_hdf5_atomic(path, [&](hid_t file) {
    const int corners = dims == 3 ? 8 : 4;
    for (const LevelFields& l : levels) {
      const double half = 0.5 / double(1 << l.level);
      std::vector<float> xyz;
      std::vector<double> rho, p;
      std::vector<std::array<double, 3>> u;
      for (std::size_t t = 0; t < l.rho.size(); ++t) {
        if (l.flag[t] != kLevelFluid) continue;
        const auto& c = l.centre[t];
        for (int k = 0; k < corners; ++k) {  // VTK's hexahedron (quadrilateral) corner order
          const int bx = (k & 1) ^ ((k >> 1) & 1), by = (k >> 1) & 1, bz = k >> 2;
          xyz.push_back(float(c[0] + (bx ? half : -half)));
          xyz.push_back(float(c[1] + (by ? half : -half)));
          xyz.push_back(dims == 3 ? float(c[2] + (bz ? half : -half)) : 0.0f);
        }
        rho.push_back(l.rho[t]);
        p.push_back(lattice_pressure(l.rho[t]));
        u.push_back(l.u[t]);
      }
      const auto n = hsize_t(rho.size());
      counts.push_back(std::int64_t(n));
      std::vector<std::int32_t> cells(std::size_t(n) * std::size_t(corners));
      for (std::size_t i = 0; i < cells.size(); ++i) cells[i] = std::int32_t(i);
      const std::string at = "level" + std::to_string(l.level) + "_";
      write_dataset(file, (at + "points").c_str(), H5T_NATIVE_FLOAT, {n * hsize_t(corners), 3},
                    xyz.data(), path);
      write_dataset(file, (at + "cells").c_str(), H5T_NATIVE_INT32, {n, hsize_t(corners)},
                    cells.data(), path);
      write_dataset(file, (at + "density").c_str(), H5T_NATIVE_DOUBLE, {n}, rho.data(), path);
      write_dataset(file, (at + "pressure").c_str(), H5T_NATIVE_DOUBLE, {n}, p.data(), path);
      write_dataset(file, (at + "velocity").c_str(), H5T_NATIVE_DOUBLE, {n, 3}, u.data(), path);
    }
    const long long s = step;
    write_dataset(file, "step", H5T_NATIVE_LLONG, {1}, &s, path);
  });
  return counts;
}

std::string xdmf_levels_series(const std::vector<std::pair<std::int64_t, std::string>>& outputs,
                               const std::vector<std::int64_t>& cells, int dims) {
  std::ostringstream x;
  const int corners = dims == 3 ? 8 : 4;
  x << "<?xml version=\"1.0\" ?>\n<Xdmf Version=\"3.0\">\n <Domain>\n"
    << "  <Grid Name=\"kolibri_levels\" GridType=\"Collection\" CollectionType=\"Temporal\">\n";
  for (const auto& [step, file] : outputs) {
    x << "   <Grid Name=\"step_" << step
      << "\" GridType=\"Collection\" CollectionType=\"Spatial\">\n"
      << "    <Time Value=\"" << step << "\"/>\n";
    for (std::size_t l = 0; l < cells.size(); ++l) {
      const std::string n = std::to_string(cells[l]),
                        at = file + ":/level" + std::to_string(l) + "_";
      x << "    <Grid Name=\"level_" << l << "\" GridType=\"Uniform\">\n"
        << "     <Topology TopologyType=\"" << (dims == 3 ? "Hexahedron" : "Quadrilateral")
        << "\" NumberOfElements=\"" << n << "\">\n"
        << "      <DataItem Dimensions=\"" << n << " " << corners
        << "\" NumberType=\"Int\" Precision=\"4\" Format=\"HDF\">" << at << "cells</DataItem>\n"
        << "     </Topology>\n     <Geometry GeometryType=\"XYZ\">\n"
        << "      <DataItem Dimensions=\"" << cells[l] * corners
        << " 3\" NumberType=\"Float\" Precision=\"4\" Format=\"HDF\">" << at
        << "points</DataItem>\n"
        << "     </Geometry>\n";
      for (const auto& [name, kind, extent] :
           {std::tuple{"density", "Scalar", n}, std::tuple{"pressure", "Scalar", n},
            std::tuple{"velocity", "Vector", n + " 3"}})
        x << "     <Attribute Name=\"" << name << "\" AttributeType=\"" << kind
          << "\" Center=\"Cell\">\n      <DataItem Dimensions=\"" << extent
          << "\" NumberType=\"Float\" Precision=\"8\" Format=\"HDF\">" << at << name
          << "</DataItem>\n     </Attribute>\n";
      x << "     <Attribute Name=\"level\" AttributeType=\"Scalar\" Center=\"Grid\">\n"
        << "      <DataItem Dimensions=\"1\" Format=\"XML\">" << l << "</DataItem>\n"
        << "     </Attribute>\n    </Grid>\n";
    }
    x << "   </Grid>\n";
  }
  x << "  </Grid>\n </Domain>\n</Xdmf>\n";
  return x.str();
}

namespace {
/// Open `name` in `file` and check it holds `rank` dimensions of doubles; returns its extents.
std::vector<hsize_t> field_dims(hid_t file, const char* name, int rank, const std::string& path,
                                H5Handle& set) {
  set.id = H5Dopen2(file, name, H5P_DEFAULT);
  if (set.id < 0) throw OutputError(path + ": no dataset '" + name + "'");
  H5Handle space{H5Dget_space(set.id), H5Sclose};
  H5Handle type{H5Dget_type(set.id), H5Tclose};
  if (space.id < 0 || H5Sget_simple_extent_ndims(space.id) != rank)
    throw OutputError(path + ": dataset '" + name + "' is not " + std::to_string(rank) +
                      "-dimensional");
  if (type.id < 0 || H5Tget_class(type.id) != H5T_FLOAT)
    throw OutputError(path + ": dataset '" + name + "' does not hold floating-point values");
  std::vector<hsize_t> dims(std::size_t(rank), 0);
  H5Sget_simple_extent_dims(space.id, dims.data(), nullptr);
  return dims;
}
}  // namespace

namespace {
/// A field file opened and checked once: /density (nz, ny, nx) and /velocity (nz, ny, nx, 3).
struct FieldFile {
  H5Handle file{-1, H5Fclose}, rho{-1, H5Dclose}, vel{-1, H5Dclose};
  std::array<int, 3> extent{};  ///< nx, ny, nz
  explicit FieldFile(const std::string& path) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec))
      throw OutputError(path + ": no such file (or not a regular file)");
    file.id = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    if (file.id < 0) throw OutputError(path + ": HDF5 cannot open the file (not HDF5, or damaged)");
    const auto d = field_dims(file.id, "density", 3, path, rho);
    const auto v = field_dims(file.id, "velocity", 4, path, vel);
    if (v[0] != d[0] || v[1] != d[1] || v[2] != d[2] || v[3] != 3)
      throw OutputError(path +
                        ": dataset 'velocity' is not (nz, ny, nx, 3) of 'density''s nz, ny, nx");
    extent = {int(d[2]), int(d[1]), int(d[0])};
  }
};
}  // namespace

std::array<int, 3> fields_hdf5_extent(const std::string& path) {
  const H5Quiet quiet;
  return FieldFile(path).extent;
}

MacroFields read_fields_hdf5(const std::string& path) {
  return read_fields_hdf5(path, {0, 0, 0}, fields_hdf5_extent(path));
}

namespace {
/// Where a box's cells lie along one axis of a periodic domain of `size` cells: runs of
/// consecutive global cells (at most three: the box may reach one layer past each side).
struct AxisRun {
  int local = 0, global = 0, count = 0;
};
std::vector<AxisRun> axis_runs(int origin, int n, int size) {
  std::vector<AxisRun> runs;
  for (int i = 0; i < n; ++i) {
    const int g = ((origin + i) % size + size) % size;
    if (!runs.empty() && runs.back().global + runs.back().count == g)
      ++runs.back().count;
    else
      runs.push_back({i, g, 1});
  }
  return runs;
}
}  // namespace

MacroFields read_fields_hdf5(const std::string& path, const std::array<int, 3>& origin,
                             const std::array<int, 3>& n) {
  const H5Quiet quiet;
  const FieldFile in(path);
  const std::array<int, 3>& domain = in.extent;
  const H5Handle& rho = in.rho;
  const H5Handle& vel = in.vel;
  MacroFields f;
  f.nx = n[0], f.ny = n[1], f.nz = n[2];
  const std::size_t cells = std::size_t(n[0]) * std::size_t(n[1]) * std::size_t(n[2]);
  f.rho.resize(cells), f.u.resize(cells), f.solid.assign(cells, 0);
  H5Handle rho_space{H5Dget_space(rho.id), H5Sclose}, vel_space{H5Dget_space(vel.id), H5Sclose};
  std::vector<double> r, v;
  // Each block of runs is one hyperslab (z, y, x; velocity with its 3 components).
  for (const AxisRun& z : axis_runs(origin[2], n[2], domain[2]))
    for (const AxisRun& y : axis_runs(origin[1], n[1], domain[1]))
      for (const AxisRun& x : axis_runs(origin[0], n[0], domain[0])) {
        const hsize_t start[4] = {hsize_t(z.global), hsize_t(y.global), hsize_t(x.global), 0};
        const hsize_t count[4] = {hsize_t(z.count), hsize_t(y.count), hsize_t(x.count), 3};
        const std::size_t block =
            std::size_t(z.count) * std::size_t(y.count) * std::size_t(x.count);
        r.resize(block), v.resize(3 * block);
        H5Handle rho_mem{H5Screate_simple(3, count, nullptr), H5Sclose};
        H5Handle vel_mem{H5Screate_simple(4, count, nullptr), H5Sclose};
        if (H5Sselect_hyperslab(rho_space.id, H5S_SELECT_SET, start, nullptr, count, nullptr) < 0 ||
            H5Dread(rho.id, H5T_NATIVE_DOUBLE, rho_mem.id, rho_space.id, H5P_DEFAULT, r.data()) < 0)
          throw OutputError(path + ": cannot read dataset 'density'" + h5_detail());
        if (H5Sselect_hyperslab(vel_space.id, H5S_SELECT_SET, start, nullptr, count, nullptr) < 0 ||
            H5Dread(vel.id, H5T_NATIVE_DOUBLE, vel_mem.id, vel_space.id, H5P_DEFAULT, v.data()) < 0)
          throw OutputError(path + ": cannot read dataset 'velocity'" + h5_detail());
        std::size_t k = 0;
        for (int c = 0; c < z.count; ++c)
          for (int b = 0; b < y.count; ++b)
            for (int a = 0; a < x.count; ++a, ++k) {
              const std::size_t to = f.index(x.local + a, y.local + b, z.local + c);
              f.rho[to] = r[k];
              f.u[to] = {v[3 * k], v[3 * k + 1], v[3 * k + 2]};
            }
      }
  return f;
}

std::string xdmf_series(const std::vector<std::pair<std::int64_t, std::string>>& outputs, int nx,
                        int ny, int nz, const Units& units) {
  std::ostringstream x;
  const std::string cells = std::to_string(nz) + " " + std::to_string(ny) + " " + std::to_string(nx);
  const std::string points = std::to_string(nz + 1) + " " + std::to_string(ny + 1) + " " + std::to_string(nx + 1);
  x << "<?xml version=\"1.0\" ?>\n<Xdmf Version=\"3.0\">\n <Domain>\n"
    << "  <Grid Name=\"kolibri\" GridType=\"Collection\" CollectionType=\"Temporal\">\n";
  for (const auto& [step, file] : outputs) {
    x << "   <Grid Name=\"step_" << step << "\" GridType=\"Uniform\">\n"
      << "    <Time Value=\"" << step << "\"/>\n"
      << "    <Topology TopologyType=\"3DCoRectMesh\" Dimensions=\"" << points << "\"/>\n"
      << "    <Geometry GeometryType=\"ORIGIN_DXDYDZ\">\n"
      << "     <DataItem Dimensions=\"3\" Format=\"XML\">0 0 0</DataItem>\n"
      << "     <DataItem Dimensions=\"3\" Format=\"XML\">1 1 1</DataItem>\n"
      << "    </Geometry>\n"
      << "    <Attribute Name=\"density\" AttributeType=\"Scalar\" Center=\"Cell\">\n"
      << "     <DataItem Dimensions=\"" << cells
      << "\" NumberType=\"Float\" Precision=\"8\" Format=\"HDF\">" << file
      << ":/density</DataItem>\n    </Attribute>\n"
      << "    <Attribute Name=\"velocity\" AttributeType=\"Vector\" Center=\"Cell\">\n"
      << "     <DataItem Dimensions=\"" << cells
      << " 3\" NumberType=\"Float\" Precision=\"8\" Format=\"HDF\">" << file
      << ":/velocity</DataItem>\n    </Attribute>\n"
      << "    <Attribute Name=\"solid\" AttributeType=\"Scalar\" Center=\"Cell\">\n"
      << "     <DataItem Dimensions=\"" << cells
      << "\" NumberType=\"UChar\" Precision=\"1\" Format=\"HDF\">" << file
      << ":/solid</DataItem>\n    </Attribute>\n";
    auto attribute = [&x, &h5 = file](const char* name, const char* kind,
                                      const std::string& extent) {
      x << "    <Attribute Name=\"" << name << "\" AttributeType=\"" << kind
        << "\" Center=\"Cell\">\n     <DataItem Dimensions=\"" << extent
        << "\" NumberType=\"Float\" Precision=\"8\" Format=\"HDF\">" << h5 << ":/" << name
        << "</DataItem>\n    </Attribute>\n";
    };
    attribute("pressure", "Scalar", cells);
    if (units.given) {
      attribute("pressure_si", "Scalar", cells);
      attribute("velocity_si", "Vector", cells + " 3");
    }
    x << "   </Grid>\n";
  }
  x << "  </Grid>\n </Domain>\n</Xdmf>\n";
  return x.str();
}

std::string json_escape(const std::string& s) {
  std::string o = "\"";
  for (const char c : s) {
    switch (c) {
      case '"': o += "\\\""; break;
      case '\\': o += "\\\\"; break;
      case '\n': o += "\\n"; break;
      case '\t': o += "\\t"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          o += buf;
        } else {
          o += c;
        }
    }
  }
  return o + "\"";
}

JsonObject& JsonObject::add(const std::string& key, const std::string& value) {
  return add_raw(key, json_escape(value));
}
std::string json_number(double value) {
  if (!std::isfinite(value)) return "null";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.17g", value);
  return buf;
}
JsonObject& JsonObject::add(const std::string& key, double value) {
  return add_raw(key, json_number(value));
}
JsonObject& JsonObject::add(const std::string& key, std::int64_t value) {
  return add_raw(key, std::to_string(value));
}
JsonObject& JsonObject::add(const std::string& key, bool value) {
  return add_raw(key, value ? "true" : "false");
}
JsonObject& JsonObject::add_raw(const std::string& key, const std::string& json) {
  m_items.emplace_back(key, json);
  return *this;
}
std::string JsonObject::str(int indent) const {
  const std::string pad(std::size_t(indent), ' ');
  std::string s = "{\n";
  for (std::size_t i = 0; i < m_items.size(); ++i)
    s += pad + json_escape(m_items[i].first) + ": " + m_items[i].second + (i + 1 < m_items.size() ? ",\n" : "\n");
  return s + "}";
}

JsonObject& add_backend(JsonObject& js, const BackendInfo& bi) {
  return js.add("backend", bi.execution_space)
      .add("device", bi.device)
      .add("vendor", bi.vendor)
      .add("kokkos_version", bi.kokkos_version)
      .add("compiler", bi.compiler);
}

}  // namespace kolibri
