// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Field output (HDF5 + XDMF for ParaView), probe CSVs and the JSON run summary. Every
/// file is written under a temporary name and renamed when complete, so a killed run never
/// leaves a half-written file behind.
#pragma once

#include <kolibri/refine/RefinedGrid.hpp>
#include <kolibri/solver/Solver.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace kolibri {

/// \brief Raised when a file cannot be written; the message names the file and the reason.
class OutputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// \brief One run at a time in an output directory: an exclusive lock (flock) on
/// `dir/kolibri.lock`, which names its holder (pid, host, start time). A second run is refused
/// with OutputError naming the holder. The lock goes with the process (also when killed); the
/// file stays, and only the lock on it counts.
class OutputLock {
 public:
  OutputLock() = default;
  /// Creates `dir` if needed and takes the lock, or throws OutputError.
  explicit OutputLock(const std::string& dir);
  OutputLock(OutputLock&& o) noexcept { *this = std::move(o); }
  OutputLock& operator=(OutputLock&& o) noexcept;
  OutputLock(const OutputLock&) = delete;
  OutputLock& operator=(const OutputLock&) = delete;
  ~OutputLock();

 private:
  int m_fd = -1;
  std::string m_path;
};

/// \brief A CSV time series written row by row: whole rows or nothing. A failed write (disk full,
/// quota, file size limit) cuts the file back to its last complete row and throws OutputError
/// naming the file and the system's reason ("No space left on device").
class CsvFile {
 public:
  CsvFile() = default;
  /// Creates (or truncates) `path` and writes `head` (the header and any rows kept from before).
  CsvFile(const std::string& path, const std::string& head);
  CsvFile(CsvFile&& o) noexcept { *this = std::move(o); }
  CsvFile& operator=(CsvFile&& o) noexcept;
  CsvFile(const CsvFile&) = delete;
  CsvFile& operator=(const CsvFile&) = delete;
  ~CsvFile();
  /// Appends complete rows (each ending in a newline).
  void append(const std::string& rows);
  /// Closes the file (nothing when not open); a failure names the file.
  void close();
  const std::string& path() const { return m_path; }

 private:
  int m_fd = -1;
  std::string m_path;
  long long m_size = 0;  ///< bytes of complete rows
};

/// \brief Write `content` to `path` through `path.tmp` + rename.
void write_file_atomic(const std::string& path, const std::string& content);

/// \brief Fields of one output time in HDF5: /density (nz,ny,nx), /velocity (nz,ny,nx,3), /solid,
/// /pressure (c_s^2 (rho - 1), lattice units); with SI units also /velocity_si (m/s),
/// /pressure_si (Pa, relative to the reference density's) and /units_dx_dt_density.
void write_fields_hdf5(const std::string& path, const MacroFields& f, std::int64_t step,
                       const Units& units = {});

/// \brief nx, ny, nz of a field file's /density, checked against its /velocity (nz, ny, nx, 3);
/// throws OutputError naming the file and the defect.
std::array<int, 3> fields_hdf5_extent(const std::string& path);

/// \brief Read back /density and /velocity (initial fields, tests and tools); checked as by
/// fields_hdf5_extent.
MacroFields read_fields_hdf5(const std::string& path);

/// \brief The fields of a box of n cells from global cell `origin` on: a rank's box, its ghost
/// layers reaching one cell past the domain's faces read from across them (periodic).
MacroFields read_fields_hdf5(const std::string& path, const std::array<int, 3>& origin,
                             const std::array<int, 3>& n);

/// \brief The fluid cells of a refined grid's levels in HDF5 (refine/): per level l, each cell as
/// a hexahedron (a quadrilateral in 2D, `dims` = 2) of its own width, /level<l>_points (its
/// corners, level-0 cells), /level<l>_cells (their indices), /level<l>_density, _pressure and
/// _velocity. Returns the cells written per level (for xdmf_levels_series).
std::vector<std::int64_t> write_levels_hdf5(const std::string& path,
                                            const std::vector<LevelFields>& levels,
                                            std::int64_t step, int dims);
/// \brief The XDMF time series of write_levels_hdf5's files: at each time a spatial collection
/// of the levels, which ParaView opens as one dataset.
std::string xdmf_levels_series(const std::vector<std::pair<std::int64_t, std::string>>& outputs,
                               const std::vector<std::int64_t>& cells, int dims);

/// \brief The XDMF time series over the written HDF5 files (file name relative to the XDMF).
std::string xdmf_series(const std::vector<std::pair<std::int64_t, std::string>>& outputs, int nx,
                        int ny, int nz, const Units& units = {});

/// \brief Minimal JSON writer for flat summaries: keys in insertion order.
class JsonObject {
 public:
  JsonObject& add(const std::string& key, const std::string& value);
  JsonObject& add(const std::string& key, const char* value) { return add(key, std::string(value)); }
  JsonObject& add(const std::string& key, double value);
  JsonObject& add(const std::string& key, std::int64_t value);
  JsonObject& add(const std::string& key, int value) { return add(key, std::int64_t(value)); }
  JsonObject& add(const std::string& key, bool value);
  JsonObject& add_raw(const std::string& key, const std::string& json);
  std::string str(int indent = 2) const;

 private:
  std::vector<std::pair<std::string, std::string>> m_items;
};

std::string json_escape(const std::string& s);
/// \brief A number as JSON: all 17 significant digits, `null` where it is not finite.
std::string json_number(double value);

struct BackendInfo;
/// \brief The machine a figure was measured on, as summary.json and the bench JSON record it:
/// backend, device, vendor, kokkos_version, compiler.
JsonObject& add_backend(JsonObject& js, const BackendInfo& bi);

}  // namespace kolibri
