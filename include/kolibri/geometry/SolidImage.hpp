// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Solid cells of porous samples and other voxel geometries (host only, no Kokkos): raw
/// voxel images, the format of public micro-CT rock samples, and random arrays of overlapping
/// spheres (tomczak2018's RAS cases). Both resolve into one byte a cell of the whole domain,
/// which the flags read (grid/Flags.hpp).
#pragma once

#include <kolibri/config/Case.hpp>
#include <kolibri/geometry/Surface.hpp>

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace kolibri {

/// \brief A geometry that cannot be built: the message names the file or value and what was
/// expected; `key` is the [geometry] key at fault (the deck reader names it).
struct GeometryError : std::runtime_error {
  GeometryError(std::string at, const std::string& what)
      : std::runtime_error(what), key(std::move(at)) {}
  std::string key;
};

/// \brief The solid cells of a domain of n cells from the voxel image g.file: g.size[0] x
/// g.size[1] x g.size[2] bytes, x fastest, no header, placed with its first voxel at domain cell
/// g.offset; a voxel is solid when its value is one of g.solid_values (every nonzero value when
/// that list is empty). Cells outside the image are fluid. Throws GeometryError when the file
/// cannot be read, its size is not the product of the extents, or the image does not fit.
std::vector<std::uint8_t> read_voxel_image(const SolidGeometry& g, const std::array<int, 3>& n);

/// \brief Overlapping spheres of diameter g.diameter (cells; discs in 2D) at uniformly random
/// centres (a SplitMix64 sequence from g.seed: the same spheres on every machine and rank
/// count), added one at a time until the fraction of fluid cells is at most g.porosity. A
/// sphere wraps across periodic axes and is cut by bounded faces. A cell is solid when its
/// centre lies in a sphere. `spheres` returns how many were placed.
std::vector<std::uint8_t> random_spheres(const SolidGeometry& g, const std::array<int, 3>& n,
                                         const std::array<bool, 3>& periodic, int dims,
                                         std::int64_t& spheres);

/// \brief Refuse a triangle mesh that is not closed: every edge (its two end points, equal when
/// their coordinates are) must border exactly two triangles that run along it in opposite
/// directions. Throws GeometryError naming `file`, how many edges fail and where the first lies
/// (a hole, a seam whose vertices do not coincide, a flipped triangle).
void check_closed(const TriangleMesh& mesh, const std::string& file);

/// \brief The cells of a box of n cells whose centres lie inside the closed mesh (cell
/// coordinates: cell (x, y, z) spans [x, x + 1) ...): one ray along x through each row of cell
/// centres, inside where the winding number of the crossings before the centre is not zero
/// (overlapping shells stay solid). Each crossing point is tested against the triangles'
/// projections with edge functions evaluated in one canonical direction per edge and a tie
/// rule that gives a point on a shared edge or vertex to exactly one side, so a ray does not
/// leak through the seams of a watertight mesh. In 2D (dims 2) the plane z = 1/2 is cut.
std::vector<std::uint8_t> voxelize(const TriangleMesh& mesh, const std::array<int, 3>& n);

/// \brief A vessel-like geometry for benchmarks (issue 19: a bent tube with an aneurysm-like
/// bulge) in a box of n cells: fluid inside a tube of radius n/8 whose centre line runs from the
/// y_min face along y, bends through a half circle of radius n/4 about the box's centre in the
/// x-y plane and returns to the y_min face, with a sphere of radius n/7 bulging out of the bend's
/// apex; solid elsewhere.
std::vector<std::uint8_t> vessel_geometry(const std::array<int, 3>& n);

/// \brief Build g.solid (and g.spheres) for a domain of n cells; throws
/// GeometryError when the geometry leaves no fluid cell.
void resolve_geometry(SolidGeometry& g, const std::array<int, 3>& n,
                      const std::array<bool, 3>& periodic, int dims);

}  // namespace kolibri
