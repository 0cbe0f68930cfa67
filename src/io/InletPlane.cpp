// SPDX-License-Identifier: Apache-2.0
#include <kolibri/io/InletPlane.hpp>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <string_view>

#include "Hdf5.hpp"

namespace kolibri {

namespace {

using detail::H5Handle;

/// What the face needs, for messages: "8 rows of 16 values (a row per cell along z, a value per
/// cell along y)".
std::string expected(const PlaneShape& s) {
  std::string text = std::to_string(s.rows);
  text += s.rows == 1 ? " row of " : " rows of ";
  text += std::to_string(s.columns);
  text += s.columns == 1 ? " value" : " values";
  text += " (a row per cell along ";
  text.push_back(s.row_axis);
  text += ", a value per cell along ";
  text.push_back(s.column_axis);
  text += ")";
  return text;
}

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

void require_finite(const std::string& where, double v) {
  if (!std::isfinite(v))
    throw InletPlaneError("profile_file", where + ": " + std::to_string(v) +
                                              " is not finite (expected a finite factor of the "
                                              "face's velocity)");
}

std::vector<double> read_csv(const std::string& path, const PlaneShape& shape) {
  std::ifstream in(path);
  if (!in)
    throw InletPlaneError("profile_file",
                          path + ": cannot open the profile file (no such file or no permission)");
  std::vector<std::vector<double>> rows;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    std::string_view text = trimmed(line);
    if (number == 1 && text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);  // UTF-8 BOM
    if (text.empty() || text.front() == '#') continue;
    std::vector<double> row;
    std::size_t start = 0;
    while (true) {
      const std::size_t comma = text.find(',', start);
      const std::string_view field = trimmed(text.substr(
          start, comma == std::string_view::npos ? text.size() - start : comma - start));
      const std::string where =
          path + ", line " + std::to_string(number) + ", value " + std::to_string(row.size() + 1);
      double v = 0.0;
      const auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), v);
      if (field.empty() || ec != std::errc() || end != field.data() + field.size())
        throw InletPlaneError("profile_file", where + ": \"" + std::string(field) +
                                                  "\" is not a number (expected " +
                                                  expected(shape) + ", separated by commas)");
      require_finite(where, v);
      row.push_back(v);
      if (comma == std::string_view::npos) break;
      start = comma + 1;
    }
    rows.push_back(std::move(row));
  }
  if (in.bad()) throw InletPlaneError("profile_file", path + ": read failed");
  std::vector<double> plane;
  plane.reserve(std::size_t(shape.rows) * std::size_t(shape.columns));
  const bool one_a_line = shape.rows == 1 && int(rows.size()) == shape.columns &&
                          shape.columns > 1;  // a 2D face's values, one a line
  if (one_a_line) {
    for (std::size_t r = 0; r < rows.size(); ++r) {
      if (rows[r].size() != 1)
        throw InletPlaneError("profile_file", path + ": row " + std::to_string(r + 1) + " holds " +
                                                  std::to_string(rows[r].size()) +
                                                  " values; expected " + expected(shape) +
                                                  " or one value a line");
      plane.push_back(rows[r][0]);
    }
    return plane;
  }
  if (int(rows.size()) != shape.rows)
    throw InletPlaneError("profile_file", path + " holds " + std::to_string(rows.size()) +
                                              (rows.size() == 1 ? " row" : " rows") +
                                              " of values; the face needs " + expected(shape));
  for (std::size_t r = 0; r < rows.size(); ++r) {
    if (int(rows[r].size()) != shape.columns)
      throw InletPlaneError("profile_file", path + ": row " + std::to_string(r + 1) + " holds " +
                                                std::to_string(rows[r].size()) +
                                                " values; the face needs " + expected(shape));
    plane.insert(plane.end(), rows[r].begin(), rows[r].end());
  }
  return plane;
}

std::vector<double> read_hdf5(const std::string& path, const std::string& dataset,
                              const PlaneShape& shape) {
  const detail::H5Quiet quiet;
  {
    std::ifstream probe(path);
    if (!probe)
      throw InletPlaneError(
          "profile_file", path + ": cannot open the profile file (no such file or no permission)");
  }
  H5Handle file{H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose};
  if (file.id < 0)
    throw InletPlaneError("profile_file",
                          path + ": not an HDF5 file" + detail::h5_detail() +
                              " (a name ending in .h5 or .hdf5 is read as HDF5, any other as CSV)");
  if (H5Lexists(file.id, dataset.c_str(), H5P_DEFAULT) <= 0)
    throw InletPlaneError("profile_dataset", path + " has no dataset \"" + dataset +
                                                 "\" (expected a dataset of " + expected(shape) +
                                                 ")");
  H5Handle data{H5Dopen2(file.id, dataset.c_str(), H5P_DEFAULT), H5Dclose};
  if (data.id < 0)
    throw InletPlaneError("profile_dataset",
                          path + ": \"" + dataset + "\" is not a dataset" + detail::h5_detail());
  H5Handle type{H5Dget_type(data.id), H5Tclose};
  const H5T_class_t kind = H5Tget_class(type.id);
  if (kind != H5T_INTEGER && kind != H5T_FLOAT)
    throw InletPlaneError("profile_dataset", path + ": dataset \"" + dataset +
                                                 "\" is not numeric (expected integers or "
                                                 "floating-point numbers)");
  H5Handle space{H5Dget_space(data.id), H5Sclose};
  const int rank = H5Sget_simple_extent_ndims(space.id);
  std::vector<hsize_t> dims(std::size_t(std::max(rank, 2)), 0);
  if (rank > 0) H5Sget_simple_extent_dims(space.id, dims.data(), nullptr);
  const bool fits =
      (rank == 2 && dims[0] == hsize_t(shape.rows) && dims[1] == hsize_t(shape.columns)) ||
      (rank == 1 && shape.rows == 1 && dims[0] == hsize_t(shape.columns));
  if (!fits) {
    std::string got = rank < 0 ? std::string("an unreadable shape") : std::to_string(rank) + "-D";
    for (int d = 0; d < rank; ++d) {
      got += d == 0 ? ", " : " x ";
      got += std::to_string(dims[d]);
    }
    throw InletPlaneError("profile_file", path + ": dataset \"" + dataset + "\" is " + got +
                                              "; the face needs " + expected(shape) +
                                              " (shape {rows, values})");
  }
  std::vector<double> plane(std::size_t(shape.rows) * std::size_t(shape.columns));
  if (H5Dread(data.id, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, plane.data()) < 0)
    throw InletPlaneError("profile_file", path + ": reading dataset \"" + dataset + "\" failed" +
                                              detail::h5_detail());
  for (std::size_t k = 0; k < plane.size(); ++k)
    require_finite(path + ", dataset \"" + dataset + "\", row " +
                       std::to_string(k / std::size_t(shape.columns) + 1) + ", value " +
                       std::to_string(k % std::size_t(shape.columns) + 1),
                   plane[k]);
  return plane;
}

}  // namespace

bool is_hdf5_path(const std::string& path) {
  const auto ends = [&](std::string_view tail) {
    return path.size() >= tail.size() &&
           path.compare(path.size() - tail.size(), tail.size(), tail) == 0;
  };
  return ends(".h5") || ends(".hdf5");
}

std::vector<double> read_inlet_plane(const std::string& path, const std::string& dataset,
                                     const PlaneShape& shape) {
  return is_hdf5_path(path) ? read_hdf5(path, dataset, shape) : read_csv(path, shape);
}

}  // namespace kolibri
