// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Surfaces of immersed-boundary solids (host only, no Kokkos): triangle meshes read from
/// STL/OBJ files or tessellated from primitives, their placement in the domain, Poisson-disk
/// surface samples (Lagrangian markers) and the block + Morton ordering of those samples
/// (Chen et al. 2022, section 4.2.2).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace kolibri {

/// \brief A point or vector in 3D (x, y, z).
using Vec3 = std::array<double, 3>;

/// \brief A triangle surface: vertex positions and triangles as three vertex indices each,
/// counter-clockwise seen from outside (outward normals) for the primitives below.
struct TriangleMesh {
  std::vector<Vec3> vertices;
  std::vector<std::array<int, 3>> triangles;

  /// \brief Total area of the triangles.
  double area() const;
  /// \brief Axis-aligned bounding box of the vertices: {min, max}. For a mesh without vertices,
  /// min = +infinity and max = -infinity.
  std::array<Vec3, 2> bounds() const;
};

/// \brief Read a triangle mesh from `path`, by extension (case-insensitive):
/// - `.stl`: binary STL when the file size is 84 + 50 n with n the triangle count of its header,
///   otherwise ASCII STL (which starts with `solid`); duplicate vertices are not merged.
/// - `.obj`: Wavefront OBJ: `v x y z` records and `f` records with `i`, `i/t`, `i//n` or `i/t/n`
///   vertices (1-based; negative indices count back from the last vertex read), polygons
///   fan-triangulated; other records are ignored, as are vertices no triangle uses.
///
/// Zero-area triangles are dropped. Throws std::runtime_error naming the file (and the line, for
/// the text formats) and what was expected, e.g. `mesh.obj:12: face index 40 out of range (the
/// file has 37 vertices)`; also for an unknown extension and for a mesh without triangles.
TriangleMesh read_mesh(const std::string& path);

// The primitives below are closed (except an open cylinder), with outward normals, and throw
// std::invalid_argument for a non-positive or non-finite length, an axis outside 0..2, or a
// max_edge so small that the mesh would have more than 2e8 triangles.

/// \brief Sphere of `radius` centred at the origin: an icosahedron whose faces are subdivided
/// until the projected triangle edges are at most `max_edge` long, vertices on the sphere.
TriangleMesh sphere_mesh(double radius, double max_edge);

/// \brief Cylinder of `radius` and `length` along `axis` (0, 1, 2 = x, y, z) centred at the
/// origin, edges at most `max_edge` long; with `caps`, closed by two flat discs.
TriangleMesh cylinder_mesh(double radius, double length, int axis, double max_edge, bool caps);

/// \brief Closed box of edge lengths `size` centred at the origin, edges at most `max_edge` long.
TriangleMesh box_mesh(Vec3 size, double max_edge);

/// \brief Torus centred at the origin with symmetry axis `axis` (0, 1, 2): tube of radius
/// `minor_radius` around a circle of radius `major_radius` (> minor_radius), edges at most
/// `max_edge` long.
TriangleMesh torus_mesh(double major_radius, double minor_radius, int axis, double max_edge);

/// \brief Where a mesh goes: scaled about the origin, rotated, then moved to `position`.
struct Placement {
  double scale = 1;
  /// Rotations about the fixed x, then y, then z axes, in degrees (R = Rz Ry Rx).
  Vec3 rotation_deg{0, 0, 0};
  Vec3 position{0, 0, 0};
};

/// \brief Row-major rotation matrix Rz(c) Ry(b) Rx(a) for `rotation_deg` = {a, b, c} in degrees
/// (right-handed, counter-clockwise seen from the positive axis). Multiples of 90 degrees give
/// exact 0 and +-1 entries. Throws std::invalid_argument for a non-finite angle.
std::array<double, 9> rotation_matrix(const Vec3& rotation_deg);

/// \brief Apply `p` to every vertex: x -> R (scale x) + position, R = rotation_matrix(...).
/// Throws std::invalid_argument unless the scale is positive and all of `p` finite.
void place(TriangleMesh& mesh, const Placement& p);

/// \brief Sample points on a surface (3D) or a curve (2D, z = 0), e.g. immersed-boundary markers.
struct SurfaceSamples {
  std::vector<Vec3> position;
  /// Total surface area (3D) or curve length (2D) the samples stand for.
  double area = 0;
  /// \brief Area (or length) per sample.
  double weight() const { return position.empty() ? 0 : area / position.size(); }
};

/// \brief Maximal Poisson-disk samples of the mesh surface: every two samples are at least
/// `spacing` apart (Euclidean distance) and no point of the surface is farther than `spacing`
/// from a sample (up to gaps narrower than 1e-10 spacings). Random sequential acceptance: a pool
/// of 10 area-uniform candidates per spacing^2, taken in random order, each accepted unless a
/// sample lies closer than `spacing`, then candidates drawn from the gaps left until there are
/// none. About 0.70 samples per spacing^2 of a flat surface (the random sequential adsorption
/// limit for disks). The same `seed` gives the same samples (std::mt19937_64 mapped to numbers
/// without the standard library's distributions). `area` is the mesh area. Throws
/// std::invalid_argument for a non-positive spacing, a mesh without area, or more than about
/// 1e9 samples.
SurfaceSamples poisson_disk_samples(const TriangleMesh& mesh, double spacing,
                                    std::uint64_t seed = 1);

/// \brief ceil(2 pi radius / spacing) (at least 3) samples equally spaced along the circle of
/// `radius` about (cx, cy) in the plane z = 0, the first at angle 0, counter-clockwise;
/// `area` = 2 pi radius.
SurfaceSamples circle_samples(double cx, double cy, double radius, double spacing);

/// \brief Samples on the perimeter of the rectangle [x0, x1] x [y0, y1] (z = 0), each side split
/// into ceil(length / spacing) equal segments, corners included once, counter-clockwise from
/// (min x, min y); `area` = the perimeter.
SurfaceSamples rectangle_samples(double x0, double y0, double x1, double y1, double spacing);

/// \brief The order in which to store `points` (a permutation: element i is the index of the
/// point to put at position i) for cache-friendly interpolation and spreading (Chen et al. 2022,
/// 4.2.2): points are binned into cubic blocks of edge `block` (>= 1, in the points' units,
/// usually lattice cells) counted from floor() of the bounding-box minimum; blocks follow in
/// x-fastest, then y, then z order; inside a block, points are sorted by the Morton code (bit
/// interleave, 10 bits per axis) of their position relative to the block's corner; ties keep
/// their input order.
std::vector<std::size_t> block_morton_order(const std::vector<Vec3>& points, int block);

/// \brief Reorder `samples.position` by `order` (as from block_morton_order): the new position
/// i is the old position order[i]. Throws std::invalid_argument unless `order` is a permutation
/// of the sample indices.
void apply_order(SurfaceSamples& samples, const std::vector<std::size_t>& order);

}  // namespace kolibri
