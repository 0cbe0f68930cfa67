// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Small host arithmetic on points and meshes (geometry/Surface.hpp's Vec3 and
/// TriangleMesh), shared by the sources that place, sample and intersect meshes.
#pragma once

#include <kolibri/geometry/Surface.hpp>

namespace kolibri {

inline Vec3 sub(const Vec3& a, const Vec3& b) { return {a[0] - b[0], a[1] - b[1], a[2] - b[2]}; }
inline Vec3 cross(const Vec3& a, const Vec3& b) {
  return {a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
}
inline double dot(const Vec3& a, const Vec3& b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

/// \brief Move the mesh so that its bounding box's centre lies at the origin (a file's mesh
/// before it is placed by that centre: immersed bodies, mesh obstacles).
inline void centre_on_bounds(TriangleMesh& m) {
  const auto box = m.bounds();
  const Vec3 centre{0.5 * (box[0][0] + box[1][0]), 0.5 * (box[0][1] + box[1][1]),
                    0.5 * (box[0][2] + box[1][2])};
  for (auto& v : m.vertices)
    for (std::size_t d = 0; d < 3; ++d) v[d] -= centre[d];
}

}  // namespace kolibri
