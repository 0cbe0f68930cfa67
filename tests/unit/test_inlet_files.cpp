// SPDX-License-Identifier: Apache-2.0
// Inlet profiles read from a file (profile = "file", issue 18): the CSV and HDF5 readers, the
// deck keys and their errors, and the solver: a file holding the parabolic profile's values runs
// bit for bit like profile = "parabolic".
#include <kolibri/config/Rules.hpp>
#include <kolibri/grid/CellLists.hpp>
#include <kolibri/io/Deck.hpp>
#include <kolibri/io/InletPlane.hpp>
#include <kolibri/solver/Solver.hpp>

#include <gtest/gtest.h>
#include <hdf5.h>

#include <cmath>
#include <cstdio>
#include <limits>

#include "Helpers.hpp"
#include "TestFiles.hpp"

namespace {
using namespace kolibri;

/// What read_inlet_plane throws for `path` (its key and message), or "no error".
std::string plane_error(const std::string& path, const PlaneShape& shape,
                        const std::string& dataset = "profile") {
  try {
    read_inlet_plane(path, dataset, shape);
  } catch (const InletPlaneError& e) {
    return e.key + ": " + e.what();
  }
  return "no error";
}

/// An HDF5 file at `path` with the dataset `name` of the given extents (1 or 2) and values.
template <class T>
void write_h5(const std::string& path, const std::string& name, std::vector<hsize_t> dims,
              const std::vector<T>& values, hid_t type) {
  const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  const hid_t space = H5Screate_simple(int(dims.size()), dims.data(), nullptr);
  const hid_t set =
      H5Dcreate2(file, name.c_str(), type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  H5Dwrite(set, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data());
  H5Dclose(set), H5Sclose(space), H5Fclose(file);
}

/// Values with 17 significant digits, so the text reads back to the same doubles.
std::string csv_rows(const std::vector<double>& v, int columns) {
  std::string s;
  char buf[32];
  for (std::size_t k = 0; k < v.size(); ++k) {
    std::snprintf(buf, sizeof buf, "%.17g", v[k]);
    s += buf;
    s += (k + 1) % std::size_t(columns) == 0 ? "\n" : ", ";
  }
  return s;
}

TEST(InletPlane, ReadsCsvRowsColumnFastest) {
  const test::ScratchDir dir;
  const PlaneShape shape{3, 2, 'y', 'z'};
  const auto p = dir.write("plane.csv", "# u_x / U on x_min\n1, 2,3\r\n\n 4 ,5e-1,-6\n");
  EXPECT_EQ(read_inlet_plane(p, "profile", shape), (std::vector<double>{1, 2, 3, 4, 0.5, -6}));
  // a 2D deck's face (one row): one value a line is read too
  const PlaneShape line{3, 1, 'y', 'z'};
  EXPECT_EQ(read_inlet_plane(dir.write("column.csv", "1\n2\n3\n"), "profile", line),
            (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(read_inlet_plane(dir.write("row.csv", "1,2,3\n"), "profile", line),
            (std::vector<double>{1, 2, 3}));
}

TEST(InletPlane, ReadsHdf5DatasetsOfAnyNumericType) {
  const test::ScratchDir dir;
  const PlaneShape shape{3, 2, 'x', 'y'};
  write_h5(dir.path("plane.h5"), "u", {2, 3}, std::vector<double>{1, 2, 3, 4, 5, 6},
           H5T_NATIVE_DOUBLE);
  EXPECT_EQ(read_inlet_plane(dir.path("plane.h5"), "u", shape),
            (std::vector<double>{1, 2, 3, 4, 5, 6}));
  write_h5(dir.path("ints.hdf5"), "profile", {3}, std::vector<int>{7, 8, 9}, H5T_NATIVE_INT);
  EXPECT_EQ(read_inlet_plane(dir.path("ints.hdf5"), "profile", PlaneShape{3, 1, 'x', 'z'}),
            (std::vector<double>{7, 8, 9}));
}

// Every mistake names the file, where in it, and what the face needs.
TEST(InletPlane, RefusesFilesThatDoNotFitTheFace) {
  const test::ScratchDir dir;
  const PlaneShape shape{3, 2, 'y', 'z'};
  const auto err = [&](const std::string& name, const std::string& text) {
    return plane_error(dir.write(name, text), shape);
  };
  EXPECT_EQ(plane_error(dir.path("none.csv"), shape),
            "profile_file: " + dir.path("none.csv") +
                ": cannot open the profile file (no such file or no permission)");
  EXPECT_EQ(err("rows.csv", "1,2,3\n"),
            "profile_file: " + dir.path("rows.csv") +
                " holds 1 row of values; the face needs 2 rows of 3 values (a row per cell "
                "along z, a value per cell along y)");
  EXPECT_EQ(err("columns.csv", "1,2,3\n4,5\n"),
            "profile_file: " + dir.path("columns.csv") +
                ": row 2 holds 2 values; the face needs 2 rows of 3 values (a row per cell along "
                "z, a value per cell along y)");
  EXPECT_EQ(err("word.csv", "1,2,3\n4,u,6\n").substr(0, 14), "profile_file: ");
  EXPECT_NE(
      err("word.csv", "1,2,3\n4,u,6\n").find("word.csv, line 2, value 2: \"u\" is not a number"),
      std::string::npos);
  EXPECT_NE(err("empty.csv", "1,2,3\n4,,6\n").find("line 2, value 2: \"\" is not a number"),
            std::string::npos);
  EXPECT_NE(err("nan.csv", "1,2,3\n4,5,nan\n").find("nan.csv, line 2, value 3: nan is not finite"),
            std::string::npos);
  EXPECT_NE(err("inf.csv", "# header\ninf,2,3\n4,5,6\n").find("line 2, value 1: inf is not finite"),
            std::string::npos);

  write_h5(dir.path("shape.h5"), "profile", {3, 2}, std::vector<double>(6, 1.0), H5T_NATIVE_DOUBLE);
  EXPECT_NE(plane_error(dir.path("shape.h5"), shape)
                .find("dataset \"profile\" is 2-D, 3 x 2; the face needs 2 rows of 3 values"),
            std::string::npos);
  EXPECT_EQ(plane_error(dir.path("shape.h5"), shape, "u").substr(0, 17), "profile_dataset: ");
  EXPECT_NE(plane_error(dir.path("shape.h5"), shape, "u").find("has no dataset \"u\""),
            std::string::npos);
  std::vector<double> bad(6, 1.0);
  bad[4] = std::numeric_limits<double>::quiet_NaN();
  write_h5(dir.path("nan.h5"), "profile", {2, 3}, bad, H5T_NATIVE_DOUBLE);
  EXPECT_NE(plane_error(dir.path("nan.h5"), shape).find("row 2, value 2: nan is not finite"),
            std::string::npos);
  EXPECT_NE(plane_error(dir.write("text.h5", "1,2,3\n4,5,6\n"), shape).find("not an HDF5 file"),
            std::string::npos);
  write_h5(dir.path("cube.h5"), "profile", {2, 3, 1}, std::vector<double>(6, 1.0),
           H5T_NATIVE_DOUBLE);
  EXPECT_NE(plane_error(dir.path("cube.h5"), shape).find("is 3-D, 2 x 3 x 1; the face needs"),
            std::string::npos);
  // a spreadsheet's byte-order mark before the first value is no error
  EXPECT_EQ(read_inlet_plane(dir.write("bom.csv",
                                       "\xEF\xBB\xBF"
                                       "1,2,3\n4,5,6\n"),
                             "profile", shape),
            (std::vector<double>{1, 2, 3, 4, 5, 6}));
}

/// A 2D channel deck with a velocity inlet of profile = "file" at x_min; `face` adds keys.
std::string channel_deck(const std::string& face) {
  return R"(
[model]
lattice = "D2Q9"
[domain]
nx = 12
ny = 4
[physics]
tau = 0.8
[boundary]
x_min = { type = "velocity_inlet", velocity = [0.02, 0.0], )" +
         face + R"( }
x_max = "pressure_outlet"
y_min = "wall"
y_max = "wall"
[run]
steps = 10
)";
}

TEST(InletProfileDeck, ReadsTheFileBesideTheDeck) {
  const test::ScratchDir dir;
  dir.write("inlet.csv", "0.5\n1\n2\n0.25\n");
  const Case c = parse_deck(channel_deck("profile = \"file\", profile_file = \"inlet.csv\""),
                            dir.path("case.toml"));
  const FaceBC& f = c.solver.faces[0];
  EXPECT_EQ(f.profile, InletProfile::File);
  EXPECT_EQ(f.profile_file, dir.path("inlet.csv"));
  ASSERT_TRUE(f.profile_values);
  EXPECT_EQ(*f.profile_values, (std::vector<double>{0.5, 1, 2, 0.25}));
  EXPECT_DOUBLE_EQ(f.profile_peak(), 2.0);
  EXPECT_DOUBLE_EQ(c.u_char, 0.04);  // the velocity scale is the profile's peak
}

TEST(InletProfileDeck, MistakesNameTheKeyAndTheFile) {
  const test::ScratchDir dir;
  dir.write("short.csv", "1\n2\n");
  const auto err = [&](const std::string& face) {
    return test::deck_error(channel_deck(face), dir.path("case.toml"));
  };
  EXPECT_NE(err("profile = \"file\"").find("key 'boundary.x_min.profile_file': missing"),
            std::string::npos);
  EXPECT_NE(err("profile_file = \"short.csv\"")
                .find("key 'boundary.x_min.profile_file': only a face with profile = \"file\""),
            std::string::npos);
  EXPECT_NE(err("profile = \"file\", profile_file = \"short.csv\", profile_dataset = \"u\"")
                .find("key 'boundary.x_min.profile_dataset': only an HDF5 profile_file"),
            std::string::npos);
  const std::string wrong = err("profile = \"file\", profile_file = \"short.csv\"");
  EXPECT_NE(wrong.find("key 'boundary.x_min.profile_file': " + dir.path("short.csv") +
                       " holds 2 rows of values; the face needs 1 row of 4 values"),
            std::string::npos)
      << wrong;
  EXPECT_NE(err("profile = \"file\", profile_file = \"absent.h5\"")
                .find(dir.path("absent.h5") + ": cannot open the profile file"),
            std::string::npos);
}

/// The duct or channel of `lat` with a parabolic inlet at x_min (walls on every axis across).
SolverConfig parabolic_channel(LatticeKind lat, Streaming streaming) {
  SolverConfig c = test::open_channel(lat, streaming, 10, 8, lat == LatticeKind::D2Q9 ? 1 : 6);
  c.faces[0].velocity = {0.03, 0.004, 0};
  c.faces[0].profile = InletProfile::Parabolic;
  return c;
}

// A file holding the parabolic profile's values, written as text and read back, gives the
// populations of profile = "parabolic" bit for bit: the file's axes reach the right cells.
TEST(InletProfileFile, RunsLikeTheBuiltInProfileItHolds) {
  const test::ScratchDir dir;
  for (LatticeKind lat : {LatticeKind::D2Q9, LatticeKind::D3Q19})
    for (Streaming streaming : {Streaming::TwoArray, Streaming::InPlace}) {
      SCOPED_TRACE(std::string(to_string(lat)) + " " + to_string(streaming));
      const SolverConfig parabolic = parabolic_channel(lat, streaming);
      const int ny = parabolic.ny, nz = parabolic.nz;
      std::vector<double> values;  // y fastest, then z
      for (int z = 0; z < nz; ++z)
        for (int y = 0; y < ny; ++y) {
          const double sy = (y + 0.5) / ny, sz = (z + 0.5) / nz;
          values.push_back(4 * sy * (1 - sy) * (nz > 1 ? 4 * sz * (1 - sz) : 1.0));
        }
      const auto path = dir.write("inlet.csv", csv_rows(values, ny));
      SolverConfig from_file = parabolic;
      from_file.faces[0].profile = InletProfile::File;
      from_file.faces[0].profile_values = std::make_shared<const std::vector<double>>(
          read_inlet_plane(path, "profile", PlaneShape{ny, nz, 'y', 'z'}));
      EXPECT_FALSE(broken_rule(from_file).has_value());
      auto a = make_solver(parabolic), b = make_solver(from_file);
      a->step(25), b->step(25);
      EXPECT_EQ(a->populations(), b->populations());
    }
}

// On a y face the file's columns run along x and its rows along z; an asymmetric plane shows
// that every cell gets its own value.
TEST(InletProfileFile, TheFileAxesFollowXYZ) {
  SolverConfig c = test::periodic_box(LatticeKind::D3Q19, 4, 3, 2, 0.8);
  c.faces[2].type = FaceType::VelocityInlet;
  c.faces[2].velocity = {0, 0.01, 0};
  c.faces[2].profile = InletProfile::File;
  c.faces[2].profile_values =
      std::make_shared<const std::vector<double>>(std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8});
  const DenseGrid grid = DenseGrid::of(c);
  auto plane = inlet_shape_plane(grid, c.faces, c.domain_faces());
  // the plane of face y_min is stored z fastest (its axes (y + 1) % 3, (y + 2) % 3 = z, x)
  for (int x = 0; x < 4; ++x)
    for (int z = 0; z < 2; ++z)
      EXPECT_EQ(plane[std::size_t(inlet_plane_offset(grid.n, 2) + z + 2 * x)], 1 + x + 4 * z);
  // face z_max: the file's values run along x, its rows along y (stored x fastest, then y)
  c.faces[2] = FaceBC{};
  c.faces[4].type = FaceType::Wall;  // a periodic axis has two periodic faces
  c.faces[5].type = FaceType::VelocityInlet;
  c.faces[5].velocity = {0, 0, -0.01};
  c.faces[5].profile = InletProfile::File;
  std::vector<double> xy(12);
  for (std::size_t k = 0; k < xy.size(); ++k) xy[k] = double(k) + 0.5;
  c.faces[5].profile_values = std::make_shared<const std::vector<double>>(xy);
  EXPECT_FALSE(broken_rule(c).has_value());
  plane = inlet_shape_plane(grid, c.faces, c.domain_faces());
  for (int y = 0; y < 3; ++y)
    for (int x = 0; x < 4; ++x)
      EXPECT_EQ(plane[std::size_t(inlet_plane_offset(grid.n, 5) + x + 4 * y)], x + 4 * y + 0.5);
}

// A wrong-sized plane given through the API is a broken rule; the values are in the signature.
TEST(InletProfileFile, ValuesAreCheckedAndSigned) {
  SolverConfig c = parabolic_channel(LatticeKind::D2Q9, Streaming::TwoArray);
  c.faces[0].profile = InletProfile::File;
  auto breach = broken_rule(c);
  ASSERT_TRUE(breach.has_value());
  EXPECT_EQ(breach->what(), std::string("boundary.x_min.profile_file: profile = \"file\" needs one "
                                        "value a cell of the face (8), got 0"));
  c.faces[0].profile_values = std::make_shared<const std::vector<double>>(8, 1.0);
  EXPECT_FALSE(broken_rule(c).has_value());
  const std::string ones = solver_signature(c);
  c.faces[0].profile_values = std::make_shared<const std::vector<double>>(8, 0.5);
  EXPECT_NE(solver_signature(c), ones);
}

}  // namespace
