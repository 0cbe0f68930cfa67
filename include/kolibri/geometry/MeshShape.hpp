// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief A closed triangle mesh as the shape of an obstacle (host only, no Kokkos): which points
/// it holds, by the voxelizer's ray rule, and where a link first crosses its surface, for
/// interpolated bounce-back walls from STL and OBJ files.
#pragma once

#include <kolibri/config/Case.hpp>
#include <kolibri/geometry/Surface.hpp>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kolibri {

/// \brief Where the ray along +x through (y, z) crosses triangle `t` of `mesh`: the crossing's x
/// and +1 where the ray leaves the solid (an outward-facing triangle), -1 where it enters;
/// nothing where it misses, or sees the triangle edge-on. A point on an edge or vertex shared by
/// two triangles belongs to exactly one of them (edge functions evaluated from each edge's
/// smaller end point, a tie rule on the edge's direction), so a ray does not leak through the
/// seams of a watertight mesh. The one crossing rule of `voxelize` and `MeshShape`.
std::optional<std::pair<double, int>> ray_crossing(const TriangleMesh& mesh,
                                                   const std::array<int, 3>& t, double y, double z);

/// \brief A closed mesh placed in the domain (cell coordinates), with the triangles binned into
/// unit columns along x and into unit cells, so that each query visits the triangles near it.
class MeshShape {
 public:
  explicit MeshShape(TriangleMesh placed);

  /// True where point p lies inside: the crossings of the ray along x through (p.y, p.z) before
  /// p.x have a nonzero winding sum (overlapping shells stay inside). At cell centres, the
  /// voxelizer's answer, from the rows of centres' crossings kept sorted (a binary search).
  bool inside(const Vec3& p) const;
  /// The fraction t (0 < t <= 1) of the way from a to b at which the segment first crosses a
  /// triangle; nothing where it crosses none (in floating point).
  std::optional<double> first_crossing(const Vec3& a, const Vec3& b) const;
  /// The placed mesh's bounding box {min, max}.
  const std::array<Vec3, 2>& bounds() const { return m_bounds; }
  std::size_t triangles() const { return m_mesh.triangles.size(); }

  /// A checksum of the placed mesh (vertices and triangles): what a checkpoint's signature
  /// compares, so a restart on another mesh, scale, rotation or centre is refused.
  std::uint64_t checksum() const;

 private:
  /// The triangles that reach each unit bin (a y-z column, or a cell), counted from m_origin:
  /// only the bins that hold some, sorted by key (memory grows with the surface, not the box).
  struct Bins {
    std::vector<std::int64_t>
        keys;  ///< x + m_extent[0] (y + m_extent[1] z), ascending (columns: y + m_extent[1] z)
    std::vector<std::int64_t> start;  ///< per key, into `items`; keys.size() + 1 entries
    std::vector<int> items;
    /// The index of `key` in `keys`, or -1 where the bin holds no triangle.
    std::int64_t find(std::int64_t key) const;
    const int* begin(std::int64_t i) const { return items.data() + start[std::size_t(i)]; }
    const int* end(std::int64_t i) const { return items.data() + start[std::size_t(i + 1)]; }
  };
  /// The bin of coordinate v on axis d (-1 outside the box).
  int bin_of(double v, int d) const;
  static Bins bin(const TriangleMesh& mesh, const std::array<int, 3>& origin,
                  const std::array<int, 3>& extent, bool along_x);

  TriangleMesh m_mesh;
  std::array<Vec3, 2> m_bounds;
  std::array<int, 3> m_origin{0, 0, 0};  ///< the integer corner below the bounding box
  std::array<int, 3> m_extent{0, 0, 0};  ///< unit bins along each axis
  Bins m_columns;                        ///< y-z columns (extent[0] = 1)
  Bins m_cells;                          ///< unit cells
  /// The crossings of the ray through each column's cell centres (y + 1/2, z + 1/2), sorted along
  /// x, per column of m_columns.keys from m_row_start, and the winding sum up to and with each.
  struct Row {
    double x;
    int winding;
  };
  std::vector<std::int64_t> m_row_start;
  std::vector<Row> m_rows;
};

/// \brief What the run's log and `kolibri check` say of obstacle k when it is a mesh ("" when it is
/// not): its name, file, triangles, placed bounding box (cells) and walls, e.g.
/// `obstacle 'ball': mesh meshes/sphere.obj, 1280 triangles, from (32, 24, 24) to (48, 40, 40)
/// cells, interpolated walls, solid inside`.
std::string describe_mesh_obstacle(const std::vector<Obstacle>& all, std::size_t k);

/// \brief An obstacle's mesh: read from `file` (STL or OBJ), refused unless closed (check_closed),
/// its bounding box's centre moved to the origin, scaled by `scale` (cells per file unit),
/// rotated by `rotation_deg` (about x, then y, then z) and moved to `centre`. Throws
/// GeometryError("file", ...) naming the file and what was wrong.
MeshShape load_mesh_shape(const std::string& file, double scale, const Vec3& rotation_deg,
                          const Vec3& centre);

}  // namespace kolibri
