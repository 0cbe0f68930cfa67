// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief An inlet profile read from a file (`profile = "file"`): one value a cell of the face,
/// as CSV text or as a dataset of an HDF5 file.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace kolibri {

/// \brief A profile file that cannot be used; `key` is the face key at fault (`profile_file` or
/// `profile_dataset`), the message names the file and what was expected.
struct InletPlaneError : std::runtime_error {
  InletPlaneError(std::string at, const std::string& what)
      : std::runtime_error(what), key(std::move(at)) {}
  std::string key;
};

/// \brief The extents of a face's plane of cells: `columns` cells along its first tangential axis
/// and `rows` along its second (the two axes other than the face's normal, in the order x, y, z),
/// with the axes' letters for messages.
struct PlaneShape {
  int columns = 1, rows = 1;
  char column_axis = 'y', row_axis = 'z';
};

/// \brief The plane of `shape.rows` x `shape.columns` values in `path`: row r holds the cells at
/// index r of the face's second tangential axis, column c those at index c of its first.
/// Returned with the column fastest.
///
/// A file ending in `.h5` or `.hdf5` is HDF5: its dataset `dataset` (any numeric type) has the
/// shape {rows, columns}, or {columns} when rows = 1 (a 2D deck's face). Any other file is CSV:
/// one line a row, values separated by commas (spaces around them allowed), lines that are empty
/// or start with `#` skipped; with rows = 1, one value a line is accepted too.
///
/// \throws InletPlaneError when the file cannot be read, holds a number of rows or columns other
/// than the face's, a value that is not a number, or one that is not finite (NaN, infinity).
std::vector<double> read_inlet_plane(const std::string& path, const std::string& dataset,
                                     const PlaneShape& shape);

/// \brief Whether `path` is read as HDF5 (it ends in `.h5` or `.hdf5`).
bool is_hdf5_path(const std::string& path);

}  // namespace kolibri
