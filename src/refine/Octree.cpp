// SPDX-License-Identifier: Apache-2.0
#include <kolibri/geometry/MeshShape.hpp>
#include <kolibri/grid/DenseGrid.hpp>
#include <kolibri/grid/LinkRules.hpp>
#include <kolibri/ib/Sampling.hpp>
#include <kolibri/lattice/Lattice.hpp>
#include <kolibri/refine/Octree.hpp>

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>

namespace kolibri {

namespace {

using Pos = std::array<int, 3>;

/// The 26 offsets around a block and itself, k = 13 + dx + 3 dy + 9 dz.
Pos offset_of(int k) { return {k % 3 - 1, k / 3 % 3 - 1, k / 9 - 1}; }

/// Floor division by 2^s of a possibly negative coordinate.
int floor_shift(int v, int s) { return v >> s; }  // arithmetic shift: floor for negatives

/// Block positions of the levels during construction: which are refined, packed into 64 bits.
struct Positions {
  Pos blocks{1, 1, 1};
  std::int64_t key(const Pos& p) const {
    return p[0] + std::int64_t(blocks[0]) * (p[1] + std::int64_t(blocks[1]) * p[2]);
  }
};

/// What the builder knows of the case: the box at each level, the faces and the block shape.
class Builder {
 public:
  Builder(const SolverConfig& cfg, const std::vector<Pos>& velocities)
      : m_cfg(cfg),
        m_c(velocities),
        m_dims(dimensions(cfg.lattice)),
        m_levels(cfg.refinement.levels),
        m_shift(refine_block_shift(m_dims)) {
    m_periodic = cfg.periodic_axes();
    for (int f = 0; f < 6; ++f) m_type[f] = static_cast<int>(cfg.faces[std::size_t(f)].type);
    m_n0 = {cfg.nx, cfg.ny, cfg.nz};
    for (int d = 0; d < 3; ++d) m_sh[d] = d < m_dims ? m_shift : 0;
    bool bands_around_bodies = false;
    for (const RefinementRegion& r : cfg.refinement.regions)
      bands_around_bodies = bands_around_bodies ||
                            (r.kind == RefinementRegion::Kind::Band && around_bodies(r.around));
    if (bands_around_bodies)  // a body's reach: its farthest sample and the retraction
      for (const Body& b : cfg.bodies)
        m_body_reach.push_back(sample_body(b, m_dims, cfg.ib).extent + retraction_of(b, cfg.ib));
  }

  Octree build() {
    Octree t;
    t.dims = m_dims;
    t.shift = m_shift;
    t.levels.resize(std::size_t(m_levels));
    for (int l = 0; l < m_levels; ++l) {
      RefinedLevel& lv = t.levels[std::size_t(l)];
      lv.level = l;
      for (int d = 0; d < 3; ++d) {
        lv.n[std::size_t(d)] = d < m_dims ? m_n0[std::size_t(d)] << l : 1;
        lv.blocks[std::size_t(d)] = (lv.n[std::size_t(d)] + (1 << m_sh[d]) - 1) >> m_sh[d];
      }
    }
    m_tree = &t;
    for (const RefinementRegion& r : m_cfg.refinement.regions)  // level 0's cells: cell_place
      if (r.kind == RefinementRegion::Kind::Band && r.around == "geometry") {
        const int reach = geometry_reach(r);
        if (!m_geometry_bands.count(reach)) m_geometry_bands[reach] = geometry_band(reach);
      }
    mark_regions();
    balance();
    assign_slots();
    for (int l = 0; l < m_levels; ++l) build_tables(l);
    for (int l = 0; l < m_levels; ++l) build_flags(l);
    for (int l = 0; l < m_levels; ++l) build_links(l);
    return t;
  }

 private:
  RefinedLevel& lv(int l) { return m_tree->levels[std::size_t(l)]; }
  const RefinedLevel& lv(int l) const { return m_tree->levels[std::size_t(l)]; }
  Positions positions(int l) const { return {lv(l).blocks}; }
  /// Offset k is a neighbour in this many dimensions (2D: no step along z).
  bool used(int k) const { return m_dims == 3 || offset_of(k)[2] == 0; }

  /// Block position p at level l moved into the box across periodic faces; false when it lies
  /// past a non-periodic face.
  bool place(Pos& p, int l) const {
    for (int d = 0; d < 3; ++d) {
      const int nb = lv(l).blocks[std::size_t(d)];
      int& v = p[std::size_t(d)];
      if (v >= 0 && v < nb) continue;
      if (!m_periodic[std::size_t(d)]) return false;
      v = ((v % nb) + nb) % nb;
    }
    return true;
  }

  /// Where cell p of level l lies: false past a non-periodic face (face set by face_priority at
  /// edges and corners), else p wrapped into the box.
  bool cell_place(Pos& p, int l, int& face) const {
    face = -1;
    for (int d = 0; d < 3; ++d) {
      const int n = lv(l).n[std::size_t(d)];
      int& v = p[std::size_t(d)];
      if (v >= 0 && v < n) continue;
      const int crossed = v < 0 ? 2 * d : 2 * d + 1;
      if (m_periodic[std::size_t(d)]) {
        v = ((v % n) + n) % n;
      } else if (face < 0 || face_priority(m_type[crossed]) < face_priority(m_type[face])) {
        face = crossed;
      }
    }
    return face < 0;
  }
  /// The blocks of level l (level 0: all; else the children of level l - 1's refined blocks).
  template <class Fn>
  void for_each_block(int l, const Fn& fn) const {
    if (l == 0) {
      const Pos& b = lv(0).blocks;
      for (int z = 0; z < b[2]; ++z)
        for (int y = 0; y < b[1]; ++y)
          for (int x = 0; x < b[0]; ++x) fn(Pos{x, y, z});
      return;
    }
    for (const std::int64_t key : m_refined_order[std::size_t(l - 1)]) {
      const Pos p = unkey(key, l - 1);
      for_each_child(p, l - 1, [&](const Pos& c, int) { fn(c); });
    }
  }
  /// The children of block p of level l that lie in the box (octant o = ox + 2 oy + 4 oz).
  template <class Fn>
  void for_each_child(const Pos& p, int l, const Fn& fn) const {
    const Pos& nb = lv(l + 1).blocks;
    for (int o = 0; o < (1 << m_dims); ++o) {
      const Pos c{2 * p[0] + (o & 1), 2 * p[1] + ((o >> 1) & 1),
                  m_dims == 3 ? 2 * p[2] + (o >> 2) : 0};
      if (c[0] < nb[0] && c[1] < nb[1] && c[2] < nb[2]) fn(c, o);
    }
  }
  Pos unkey(std::int64_t key, int l) const {
    const Pos& b = lv(l).blocks;
    return {int(key % b[0]), int(key / b[0] % b[1]), int(key / b[0] / b[1])};
  }

  /// Block p of level l in level-0 cells: [lo, hi) per axis.
  void extent(const Pos& p, int l, double (&lo)[3], double (&hi)[3]) const {
    for (int d = 0; d < 3; ++d) {
      if (d >= m_dims) {
        lo[d] = 0.0, hi[d] = 1.0;
        continue;
      }
      const double w = double(1 << m_sh[d]) / double(1 << l);
      lo[d] = p[std::size_t(d)] * w, hi[d] = lo[d] + w;
    }
  }

  /// Distance from the box [lo, hi] to the surface of obstacle o (level-0 cells; 0 where the box
  /// holds part of the surface): from the box's nearest and farthest points.
  /// A mesh is taken as its bounding box, from outside only: 0 for a box that reaches into it.
  double surface_distance(const Obstacle& o, const double (&lo)[3], const double (&hi)[3]) const {
    if (o.shape == Obstacle::Shape::Mesh) {
      double out = 0.0;
      for (int d = 0; d < m_dims; ++d) {
        const double a = o.mesh->bounds()[0][std::size_t(d)],
                     b = o.mesh->bounds()[1][std::size_t(d)];
        const double gap = std::max({a - hi[d], lo[d] - b, 0.0});
        out += gap * gap;
      }
      return std::sqrt(out);
    }
    if (o.shape == Obstacle::Shape::Box) {
      double out = 0.0, in = 1e300;  // outside: box-to-box distance; inside: to the nearest face
      bool inside = true;
      for (int d = 0; d < m_dims; ++d) {
        const double a = o.min[std::size_t(d)], b = o.max[std::size_t(d)];
        const double gap = std::max({a - hi[d], lo[d] - b, 0.0});
        out += gap * gap;
        inside = inside && lo[d] >= a && hi[d] <= b;
        in = std::min({in, lo[d] - a, b - hi[d]});
      }
      return inside ? std::max(0.0, in) : std::sqrt(out);
    }
    return round_distance(o.center, o.radius, o.shape == Obstacle::Shape::Cylinder ? o.axis : -1,
                          lo, hi);
  }

  /// True where block p of level l must be refined for region r (r.level > l).
  bool wants(const RefinementRegion& r, const Pos& p, int l) const {
    double lo[3], hi[3];
    extent(p, l, lo, hi);
    if (r.kind == RefinementRegion::Kind::Box) {
      for (int d = 0; d < m_dims; ++d)
        if (!(lo[d] < r.max[std::size_t(d)] && hi[d] > r.min[std::size_t(d)])) return false;
      return true;
    }
    const double width = r.width / double(1 << r.level);  // level-0 cells
    if (r.around == "geometry")
      return band_overlaps(m_geometry_bands.at(geometry_reach(r)), lo, hi);
    if (r.around == "walls") {
      for (int f = 0; f < 2 * m_dims; ++f) {
        if (m_type[f] == static_cast<int>(FaceType::Periodic)) continue;
        const int a = f / 2;
        const double dist = f % 2 == 0 ? lo[a] : m_n0[std::size_t(a)] - hi[a];
        if (dist <= width) return true;
      }
      return false;
    }
    for (std::size_t k = 0; k < m_cfg.obstacles.size(); ++k) {
      if (r.around != "obstacles" && obstacle_name(m_cfg.obstacles, k) != r.around) continue;
      if (surface_distance(m_cfg.obstacles[k], lo, hi) <= width) return true;
    }
    for (std::size_t k = 0; k < m_body_reach.size(); ++k) {
      if (r.around != "bodies" && m_cfg.bodies[k].name != r.around) continue;
      if (round_distance(m_cfg.bodies[k].position, m_body_reach[k], -1, lo, hi) <= width)
        return true;
    }
    return false;
  }

  /// A band around "geometry" reaches this many level-0 cells along each axis from [geometry]'s
  /// surface: its width in level-0 cells, rounded up.
  static int geometry_reach(const RefinementRegion& r) {
    return int(std::ceil(r.width / double(1 << r.level) - 1e-9));
  }
  std::size_t voxel(int x, int y, int z) const {
    return std::size_t(x + std::int64_t(m_n0[0]) * (y + std::int64_t(m_n0[1]) * z));
  }
  /// The level-0 cells within `reach` cells along each axis (across periodic faces) of
  /// [geometry]'s surface: its solid cells with a fluid cell among their 3^D neighbours.
  std::vector<std::uint8_t> geometry_band(int reach) const {
    const SolidGeometry& g = m_cfg.geometry;
    int face = -1;  // cell_place's face past the box: not read
    std::vector<std::uint8_t> near(voxel(0, 0, m_n0[2]), 0);
    for (int z = 0; z < m_n0[2]; ++z)
      for (int y = 0; y < m_n0[1]; ++y)
        for (int x = 0; x < m_n0[0]; ++x) {
          if (!g.solid_at(m_n0, x, y, z)) continue;
          for (int k = 0; k < 27; ++k) {
            Pos q{x + offset_of(k)[0], y + offset_of(k)[1], z + offset_of(k)[2]};
            if (!used(k) || !cell_place(q, 0, face)) continue;
            if (!g.solid_at(m_n0, q[0], q[1], q[2])) {
              near[voxel(x, y, z)] = 1;
              break;
            }
          }
        }
    for (int d = 0; d < m_dims; ++d) {  // grown along each axis in turn
      std::vector<std::uint8_t> grown(near.size(), 0);
      for (int z = 0; z < m_n0[2]; ++z)
        for (int y = 0; y < m_n0[1]; ++y)
          for (int x = 0; x < m_n0[0]; ++x) {
            if (!near[voxel(x, y, z)]) continue;
            for (int s = -reach; s <= reach; ++s) {
              Pos q{x, y, z};
              q[std::size_t(d)] += s;
              if (cell_place(q, 0, face)) grown[voxel(q[0], q[1], q[2])] = 1;
            }
          }
      near.swap(grown);
    }
    return near;
  }
  /// True where a cell of `near` overlaps the box [lo, hi) (level-0 cells).
  bool band_overlaps(const std::vector<std::uint8_t>& near, const double (&lo)[3],
                     const double (&hi)[3]) const {
    int a[3], b[3];
    for (int d = 0; d < 3; ++d) {
      a[d] = std::max(0, int(std::floor(lo[d])));
      b[d] = std::min(m_n0[std::size_t(d)], int(std::ceil(hi[d])));
    }
    for (int z = a[2]; z < b[2]; ++z)
      for (int y = a[1]; y < b[1]; ++y)
        for (int x = a[0]; x < b[0]; ++x)
          if (near[voxel(x, y, z)]) return true;
    return false;
  }
  /// True where [geometry] makes the level-0 cell holding point x solid (the finer levels'
  /// cells take their level-0 cell's solid: the image's or the mesh's voxels).
  bool geometry_solid(const std::array<double, 3>& x) const {
    if (!m_cfg.geometry.given()) return false;
    return m_cfg.geometry.solid_at(m_n0, int(std::floor(x[0])), int(std::floor(x[1])),
                                   m_dims == 3 ? int(std::floor(x[2])) : 0);
  }

  /// A band around "bodies" or a [[body]] by name?
  bool around_bodies(const std::string& around) const {
    if (around == "bodies") return true;
    return std::any_of(m_cfg.bodies.begin(), m_cfg.bodies.end(),
                       [&](const Body& b) { return b.name == around; });
  }
  /// Distance from the box [lo, hi] to the surface of the sphere (centre c, radius r; in 2D the
  /// circle) or, along axis `axis` (-1: none), the infinite cylinder: 0 where the box holds part of
  /// it. From the box's nearest and farthest points. An immersed body's band takes its bounding
  /// sphere.
  double round_distance(const std::array<double, 3>& c, const double r, const int axis,
                        const double (&lo)[3], const double (&hi)[3]) const {
    double near = 0.0, far = 0.0;  // squared distances from the axis or centre
    for (int d = 0; d < m_dims; ++d) {
      if (d == axis) continue;
      const double x = c[std::size_t(d)];
      const double g = std::max({lo[d] - x, x - hi[d], 0.0});
      const double f = std::max(std::fabs(lo[d] - x), std::fabs(hi[d] - x));
      near += g * g, far += f * f;
    }
    return std::max({0.0, std::sqrt(near) - r, r - std::sqrt(far)});
  }

  void mark_regions() {
    m_refined.assign(std::size_t(m_levels), {});
    m_refined_order.assign(std::size_t(m_levels), {});
    for (int l = 0; l + 1 < m_levels; ++l)
      for_each_block(l, [&](const Pos& p) {
        for (const RefinementRegion& r : m_cfg.refinement.regions)
          if (r.level > l && wants(r, p, l)) {
            refine(p, l);
            break;
          }
      });
  }

  bool refined(const Pos& p, int l) const {
    return l < m_levels && m_refined[std::size_t(l)].count(positions(l).key(p)) != 0;
  }
  void refine(const Pos& p, int l) {
    const std::int64_t k = positions(l).key(p);
    if (m_refined[std::size_t(l)].insert(k).second) m_refined_order[std::size_t(l)].push_back(k);
  }

  /// From the finest refined level to the coarsest: the level above refines the parents of
  /// every neighbour of a refined block (2:1 balance, corners included).
  void balance() {
    for (int l = m_levels - 2; l >= 1; --l) {
      for (const std::int64_t key : std::vector<std::int64_t>(m_refined_order[std::size_t(l)])) {
        const Pos p = unkey(key, l);
        for (int k = 0; k < 27; ++k) {
          if (!used(k)) continue;
          Pos q{p[0] + offset_of(k)[0], p[1] + offset_of(k)[1], p[2] + offset_of(k)[2]};
          if (!place(q, l)) continue;
          refine(
              {floor_shift(q[0], 1), floor_shift(q[1], 1), m_dims == 3 ? floor_shift(q[2], 1) : 0},
              l - 1);
        }
      }
    }
    // The order of refined blocks: the sweep order at level 0, the parents' order below (what
    // assign_slots follows), so rebuild each level's list in that order.
    for (int l = 0; l + 1 < m_levels; ++l) {
      std::vector<std::int64_t> order;
      for_each_block(l, [&](const Pos& p) {
        if (refined(p, l)) order.push_back(positions(l).key(p));
      });
      m_refined_order[std::size_t(l)] = std::move(order);
    }
  }

  void assign_slots() {
    m_code.assign(std::size_t(m_levels), {});
    for (int l = 0; l < m_levels; ++l) {
      RefinedLevel& v = lv(l);
      const Positions pos = positions(l);
      auto add = [&](const Pos& p) {
        if (refined(p, l)) {
          m_code[std::size_t(l)][pos.key(p)] = -(kRefinedBase + std::int32_t(v.refined.size()));
          v.refined.push_back(p);
        } else {
          m_code[std::size_t(l)][pos.key(p)] = std::int32_t(v.leaf.size());
          v.leaf.push_back(p);
        }
      };
      for_each_block(l, add);
    }
    for (int l = 0; l + 1 < m_levels; ++l) {
      RefinedLevel& v = lv(l);
      v.children.assign(v.refined.size() << m_dims, -1);
      for (std::size_t r = 0; r < v.refined.size(); ++r)
        for_each_child(v.refined[r], l, [&](const Pos& c, int o) {
          const std::int32_t code = m_code[std::size_t(l + 1)].at(positions(l + 1).key(c));
          v.children[(r << m_dims) + std::size_t(o)] = code >= 0 ? code : -1;
        });
    }
  }

  std::int32_t code_at(const Pos& p, int l) const {
    const auto& m = m_code[std::size_t(l)];
    const auto it = m.find(positions(l).key(p));
    return it == m.end() ? kCoarserBlock : it->second;
  }

  void build_tables(int l) {
    RefinedLevel& v = lv(l);
    constexpr int nk = 27;
    v.neighbours.assign(v.leaf.size() * nk, kOutsideBlock);
    if (l > 0) v.coarse.assign(v.leaf.size() * nk, -1);
    for (std::size_t s = 0; s < v.leaf.size(); ++s)
      for (int k = 0; k < nk; ++k) {
        const Pos o = offset_of(k);
        Pos q{v.leaf[s][0] + o[0], v.leaf[s][1] + o[1], v.leaf[s][2] + (m_dims == 3 ? o[2] : 0)};
        if (!place(q, l)) continue;
        const std::int32_t code = code_at(q, l);
        v.neighbours[s * nk + std::size_t(k)] = code;
        if (code != kCoarserBlock) continue;
        if (l == 0) throw std::logic_error("refinement: a level-0 block is missing");
        const Pos parent{floor_shift(q[0], 1), floor_shift(q[1], 1), floor_shift(q[2], 1)};
        const std::int32_t up = code_at(parent, l - 1);
        if (up < 0) throw std::logic_error("refinement: the levels are not balanced");
        v.coarse[s * nk + std::size_t(k)] = up;
      }
  }

  /// Whether the coarse cell holding x (a position of level l that cell p of leaf slot s reads
  /// with direction c in one of its steps) has not half of its children y read in each fine
  /// step (y + c of level l: the coarse cell moved by c along a non-empty subset of c's axes is
  /// refined, for half of the subsets): LevelStep::halves_read, which along one axis needs no
  /// table and is not asked.
  bool uneven_read(std::size_t s, const Pos& p, const Pos& x, const Pos& c, int l) const {
    const Pos cell{floor_shift(x[0], 1), floor_shift(x[1], 1), floor_shift(x[2], 1)};
    const int moving = (c[0] != 0 ? 1 : 0) | (c[1] != 0 ? 2 : 0) | (c[2] != 0 ? 4 : 0);
    if (moving == 1 || moving == 2 || moving == 4) return false;
    int refined = 0, sets = 0;
    for (int set = 1; set < 8; ++set) {
      if ((set & moving) != set) continue;
      Pos child{2 * cell[0], 2 * cell[1], 2 * cell[2]};
      for (std::size_t d = 0; d < 3; ++d)
        if ((set >> d) & 1) child[d] += 2 * c[d];
      const Found f = find_near(s, p, child, l);
      refined += f.inside && f.code != kCoarserBlock ? 1 : 0;
      ++sets;
    }
    return 2 * refined != sets + 1;
  }

  /// Level-0 coordinates of the centre of cell p of level l.
  std::array<double, 3> centre(const Pos& p, int l) const {
    std::array<double, 3> x{0.5, 0.5, 0.5};
    for (int d = 0; d < m_dims; ++d) x[std::size_t(d)] = (p[std::size_t(d)] + 0.5) / double(1 << l);
    return x;
  }

  Pos cell_of(std::size_t slot, int place, int l) const {
    const Pos& b = lv(l).leaf[slot];
    const int m0 = (1 << m_sh[0]) - 1, m1 = (1 << m_sh[1]) - 1;
    return {(b[0] << m_sh[0]) + (place & m0), (b[1] << m_sh[1]) + ((place >> m_sh[0]) & m1),
            (b[2] << m_sh[2]) + (place >> (m_sh[0] + m_sh[1]))};
  }
  int place_of(const Pos& p) const {
    const int m0 = (1 << m_sh[0]) - 1, m1 = (1 << m_sh[1]) - 1, m2 = (1 << m_sh[2]) - 1;
    return (p[0] & m0) | ((p[1] & m1) << m_sh[0]) | ((p[2] & m2) << (m_sh[0] + m_sh[1]));
  }

  void build_flags(int l) {
    RefinedLevel& v = lv(l);
    const int bc = 1 << (m_sh[0] + m_sh[1] + m_sh[2]);
    v.flags.assign(v.leaf.size() * std::size_t(bc), kLevelFluid);
    for (std::size_t s = 0; s < v.leaf.size(); ++s)
      for (int i = 0; i < bc; ++i) {
        const Pos p = cell_of(s, i, l);
        std::uint8_t& f = v.flags[s * std::size_t(bc) + std::size_t(i)];
        if (p[0] >= v.n[0] || p[1] >= v.n[1] || p[2] >= v.n[2]) {
          f = kLevelOutside;
          continue;
        }
        const std::array<double, 3> x = centre(p, l);
        for (const Obstacle& o : m_cfg.obstacles)
          if (covers_point(o, x)) f = kLevelSolid;
        if (f == kLevelFluid && geometry_solid(x)) f = kLevelSolid;
        if (f == kLevelFluid) ++v.fluid_cells;
      }
  }

  /// What lies at cell p of level l (wrapped): a leaf cell (its flag), or the code of its block.
  struct Found {
    bool inside = false;  ///< false: past a non-periodic face (`face`)
    int face = -1;
    std::int32_t code = 0;  ///< leaf slot, kCoarserBlock or refined
    int place = 0;
    std::uint8_t flag = kLevelOutside;
  };
  Found find(Pos p, int l) const {
    Found f;
    f.inside = cell_place(p, l, f.face);
    if (!f.inside) return f;
    const Pos b{p[0] >> m_sh[0], p[1] >> m_sh[1], p[2] >> m_sh[2]};
    f.code = code_at(b, l);
    f.place = place_of(p);
    f.flag = flag_at(f.code, f.place, l);
    return f;
  }
  /// The flag of place `place` in the block of level l numbered `code` (kLevelOutside: none).
  std::uint8_t flag_at(int code, int place, int l) const {
    if (code < 0) return kLevelOutside;
    return lv(l).flags[(std::size_t(code) << (m_sh[0] + m_sh[1] + m_sh[2])) + std::size_t(place)];
  }

  /// `find` for a cell b of level l near cell p of leaf slot s (at most one block away): the
  /// block from s's row of the neighbour table instead of the level's map.
  Found find_near(std::size_t s, const Pos& p, Pos b, int l) const {
    Found f;
    constexpr int stride[3] = {1, 3, 9};  // the neighbour table's 3 x 3 x 3 offsets
    int k = 13;
    for (int d = 0; d < 3; ++d)
      k += stride[d] * ((b[std::size_t(d)] >> m_sh[d]) - (p[std::size_t(d)] >> m_sh[d]));
    f.inside = cell_place(b, l, f.face);
    if (!f.inside) return f;
    f.code = lv(l).neighbours[s * 27 + std::size_t(k)];
    f.place = place_of(b);
    f.flag = flag_at(f.code, f.place, l);
    return f;
  }

  [[noreturn]] void cut(const Pos& p, int l) const {
    std::ostringstream os;
    os << "refinement: a solid (an obstacle or [geometry]) is cut by the interface between levels "
       << l - 1 << " and " << l << " near level-0 cell (";
    const std::array<double, 3> x = centre(p, l);
    for (int d = 0; d < m_dims; ++d) os << (d ? ", " : "") << int(std::floor(x[std::size_t(d)]));
    os << "): solids must lie inside one level with at least one cell of it around them (a "
          "[[refinement.region]] type = \"band\" around = \"obstacles\" or \"geometry\" does "
          "that)";
    throw std::invalid_argument(os.str());
  }

  /// The leaf cell at p of level l must exist and be fluid (a source of a transfer between
  /// levels); `at` names the cell whose rule reads it.
  void need_fluid(const Pos& p, int l, const Pos& at, int at_level) const {
    const Found f = find(p, l);
    if (!f.inside) return;  // a face rule, not a transfer
    if (f.code < 0)
      throw std::logic_error("refinement: a transfer reads a cell that is not a leaf");
    if (f.flag != kLevelFluid) cut(at, at_level);
  }

  void build_links(int l) {
    RefinedLevel& v = lv(l);
    const std::size_t bc = std::size_t(1) << (m_sh[0] + m_sh[1] + m_sh[2]);
    check_level_numbering(l, std::int64_t(v.leaf.size() * bc), 0);
    v.links.assign(v.flags.size(), 0u);
    v.reentry_start.assign(1, 0);
    const int Q = int(m_c.size());
    const bool walls = any_link_rules(m_cfg.obstacles);
    std::vector<std::vector<Link>> links(m_cfg.obstacles.size());
    // Each wall rule's link while the lists grow: (rule, obstacle, place in that obstacle's).
    std::vector<std::array<std::int64_t, 3>> wall_rules;
    for (std::size_t s = 0; s < v.leaf.size();
         v.reentry_start.push_back(std::int32_t(v.reentry_key.size())), ++s)
      for (std::size_t i = 0; i < bc; ++i) {
        if (v.flags[s * bc + i] != kLevelFluid) continue;
        const Pos p = cell_of(s, int(i), l);
        // Only a block with a refined neighbour can take populations from the finer level.
        bool finer_near = false;
        for (int k = 0; k < 27 && l + 1 < m_levels; ++k)
          finer_near = finer_near || v.neighbours[s * 27 + std::size_t(k)] <= -kRefinedBase;
        std::uint32_t mask = 0, general_dirs = 0;
        std::array<std::int64_t, 2> wall_of[32];  // direction q's wall link: obstacle, place
        for (int q = 1; q < Q; ++q) {
          wall_of[q] = {-1, -1};
          const Pos& c = m_c[std::size_t(q)];
          const Found up = find_near(s, p, {p[0] - c[0], p[1] - c[1], p[2] - c[2]}, l);
          bool slow = false;
          if (!up.inside) {
            if (m_type[up.face] == static_cast<int>(FaceType::Wall))
              mask |= 1u << opposite(q);
            else
              slow = true;
          } else if (up.code >= 0) {
            if (up.flag == kLevelSolid) {
              mask |= 1u << opposite(q);
              Pos solid{p[0] - c[0], p[1] - c[1], p[2] - c[2]};
              int face;
              cell_place(solid, l, face);  // wrapped across periodic faces
              for (std::size_t k = 0; k < m_cfg.obstacles.size(); ++k)
                if (covers_point(m_cfg.obstacles[k], centre(solid, l))) {
                  const Obstacle& o = m_cfg.obstacles[k];
                  Link link = wall_link(o, s, p, solid, q, l);
                  link.cell = std::int32_t(s * bc + i);
                  if (o.link_rules()) {  // its own rule (LevelStep::wall): a general direction
                    slow = true;
                    wall_of[q] = {std::int64_t(k), std::int64_t(links[k].size())};
                  }
                  links[k].push_back(link);
                  break;
                }
            }
          } else {
            slow = true;
          }
          if (up.inside && up.code == kCoarserBlock &&
              (uneven_read(s, p, {p[0] - c[0], p[1] - c[1], p[2] - c[2]}, c, l) ||
               uneven_read(s, p, {p[0] - 2 * c[0], p[1] - 2 * c[1], p[2] - 2 * c[2]}, c, l)))
            mask |= kLevelUnevenRead;
          if (up.inside && up.code == kCoarserBlock) {  // the two coarse cells a step reads
            need_fluid({floor_shift(p[0] - c[0], 1), floor_shift(p[1] - c[1], 1),
                        floor_shift(p[2] - c[2], 1)},
                       l - 1, p, l);
            const Found two =
                find_near(s, p, {p[0] - 2 * c[0], p[1] - 2 * c[1], p[2] - 2 * c[2]}, l);
            if (two.inside && two.code != kCoarserBlock) {
              // Re-entry: two fine steps upwind lies this level again (a concave corner of its
              // region): the second step reads that cell's f*_q(t), saved before the first.
              if (two.code < 0) throw std::logic_error("refinement: a re-entry source is refined");
              if (two.flag != kLevelFluid) cut(p, l);
              v.reentry_key.push_back(std::int32_t(i << 5) | q);
              v.reentry_source.push_back(
                  std::int32_t((std::size_t(two.code) << (m_sh[0] + m_sh[1] + m_sh[2])) +
                               std::size_t(two.place)));
            } else {
              need_fluid({floor_shift(p[0], 1) - c[0], floor_shift(p[1], 1) - c[1],
                          floor_shift(p[2], 1) - c[2]},
                         l - 1, p, l);
            }
          }
          if (finer_near && fine_links(p, c, l)) slow = true;
          if (slow) mask |= kLevelSlow, general_dirs |= 1u << q;
        }
        if (mask & kLevelSlow) {
          ++v.slow_cells;
          const auto entry = std::int32_t(v.general_cell.size()) << 5;
          for (int q = 1; q < Q; ++q) {
            if (!((general_dirs >> q) & 1u)) continue;
            if (wall_of[q][0] >= 0)
              wall_rules.push_back(
                  {std::int64_t(v.general_rule.size()), wall_of[q][0], wall_of[q][1]});
            v.general_rule.push_back(entry | q);
          }
          v.general_rule_start.push_back(std::int32_t(v.general_rule.size()));
          v.general_cell.push_back(std::int32_t(s * bc + i));
          v.general_dirs.push_back(general_dirs);
        }
        v.links[s * bc + i] = mask;
      }
    check_level_numbering(l, std::int64_t(v.leaf.size() * bc), std::int64_t(v.general_cell.size()));
    v.link_start.assign(1, 0);
    for (const auto& per : links) {
      for (const Link& k : per) {
        v.link_cell.push_back(k.cell), v.link_dir.push_back(k.dir);
        if (!walls) continue;
        v.link_distance.push_back(k.distance);
        v.link_wall_velocity.push_back(k.wall_velocity);
        v.link_behind.push_back(k.behind);
      }
      v.link_start.push_back(std::int64_t(v.link_cell.size()));
    }
    if (walls) v.rule_link.assign(v.general_rule.size(), -1);
    for (const auto& [rule, k, at] : wall_rules)
      v.rule_link[std::size_t(rule)] = std::int32_t(v.link_start[std::size_t(k)] + at);
  }

  /// A link from a fluid cell into an obstacle's solid cell (RefinedLevel::link_cell and what
  /// the walls' rules read).
  struct Link {
    std::int32_t cell = 0;
    std::uint8_t dir = 0;  ///< k, into the solid
    double distance = 0.5;
    std::array<double, 3> wall_velocity{0, 0, 0};
    std::int32_t behind = -1;
  };
  /// The link from fluid cell p (leaf slot s) of level l, whose arriving direction q comes from
  /// the solid cell `solid` (wrapped) of obstacle o: the dense box's rule (obstacle_link) at this
  /// level's cell centres (level-0 cells; the fraction of the link is the same at any scale).
  /// The solid's centre b and the fluid cell's a = b + c_q, one link apart on the solid's side of
  /// a periodic face; the wall's distance and velocity from wall_on_link; the cell behind p,
  /// p + c_q, where it is a fluid leaf of this level (else a distance under 1/2 becomes 1/2, as
  /// at a face or a solid in the dense box).
  Link wall_link(const Obstacle& o, std::size_t s, const Pos& p, const Pos& solid, int q,
                 int l) const {
    Link out;
    out.dir = std::uint8_t(opposite(q));
    if (!o.link_rules()) return out;
    const Pos& c = m_c[std::size_t(q)];
    const double w = 1.0 / double(1 << l);  // a cell of level l in level-0 cells
    const std::array<double, 3> b = centre(solid, l);
    const std::array<double, 3> link{-c[0] * w, -c[1] * w, -c[2] * w};
    const ObstacleLink wall =
        wall_on_link(o, 0, {b[0] - link[0], b[1] - link[1], b[2] - link[2]}, link);
    out.distance = wall.distance, out.wall_velocity = wall.wall_velocity;
    const Found behind = find_near(s, p, {p[0] + c[0], p[1] + c[1], p[2] + c[2]}, l);
    if (behind.inside && behind.code >= 0 && behind.flag == kLevelFluid)
      out.behind = std::int32_t((std::size_t(behind.code) << (m_sh[0] + m_sh[1] + m_sh[2])) +
                                std::size_t(behind.place));
    else if (out.distance < 0.5)
      out.distance = 0.5;
    return out;
  }

  /// The direction opposite to q.
  int opposite(int q) const {
    const Pos& c = m_c[std::size_t(q)];
    for (std::size_t k = 0; k < m_c.size(); ++k)
      if (m_c[k][0] == -c[0] && m_c[k][1] == -c[1] && m_c[k][2] == -c[2]) return int(k);
    throw std::logic_error("refinement: a velocity set without opposites");
  }

  /// True where direction c of cell p (level l) takes populations from the finer level: a cell
  /// p - s with s a non-empty part of c's non-zero components is refined. Checks that the fine
  /// cells it reads are fluid.
  bool fine_links(const Pos& p, const Pos& c, int l) const {
    bool any = false;
    for (int sub = 1; sub < 8; ++sub) {
      Pos t = p;
      bool valid = true;
      for (int d = 0; d < 3; ++d)
        if ((sub >> d) & 1) {
          if (c[std::size_t(d)] == 0) valid = false;
          t[std::size_t(d)] -= c[std::size_t(d)];
        }
      if (!valid) continue;
      const Found f = find(t, l);
      if (f.inside && f.code <= -kRefinedBase) any = true;
    }
    if (!any) return false;
    for (int o = 0; o < (1 << m_dims); ++o) {  // the children's sources
      const Pos ch{2 * p[0] + (o & 1), 2 * p[1] + ((o >> 1) & 1),
                   m_dims == 3 ? 2 * p[2] + (o >> 2) : 0};
      const Pos one{ch[0] - c[0], ch[1] - c[1], ch[2] - c[2]};
      const Pos two{ch[0] - 2 * c[0], ch[1] - 2 * c[1], ch[2] - 2 * c[2]};
      const Found a = find(one, l + 1);
      if (a.inside && a.code != kCoarserBlock) {
        if (a.code < 0) throw std::logic_error("refinement: a fine source is refined further");
        if (a.flag != kLevelFluid) cut(ch, l + 1);
        continue;
      }
      const Found b = find(two, l + 1);
      if (b.inside && b.code != kCoarserBlock) {
        if (b.code < 0) throw std::logic_error("refinement: a fine source is refined further");
        if (b.flag != kLevelFluid) cut(ch, l + 1);
      }
    }
    return true;
  }

  const SolverConfig& m_cfg;
  std::vector<Pos> m_c;
  int m_dims, m_levels, m_shift;
  int m_sh[3] = {0, 0, 0};
  int m_type[6] = {};
  std::array<bool, 3> m_periodic{};
  Pos m_n0{1, 1, 1};
  std::vector<double> m_body_reach;  ///< each body's bounding radius (bands around bodies)
  /// Bands around [geometry]: the level-0 cells each reach refines (geometry_band).
  std::unordered_map<int, std::vector<std::uint8_t>> m_geometry_bands;
  Octree* m_tree = nullptr;
  std::vector<std::unordered_set<std::int64_t>> m_refined;
  std::vector<std::vector<std::int64_t>> m_refined_order;
  std::vector<std::unordered_map<std::int64_t, std::int32_t>> m_code;
};

}  // namespace

Octree build_octree(const SolverConfig& cfg, const std::vector<std::array<int, 3>>& velocities) {
  return Builder(cfg, velocities).build();
}

namespace {
/// Level l's device memory: its cells at `bytes_per_cell`, its general list (cell, directions
/// and first rule, 12 bytes an entry) and its general rules (entry and arrived value, 12 bytes
/// a rule: the value's 8 in FP64, 4 in FP32; 8 more where some rule is a wall's, its distance
/// and moving-wall term).
double level_bytes(const RefinedLevel& l, double bytes_per_cell) {
  const bool walls = has_wall_rules(l);
  return double(l.cells()) * bytes_per_cell + 12.0 * double(l.general_cell.size()) +
         (walls ? 20.0 : 12.0) * double(l.general_rule.size());
}
std::string mib(double bytes) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(bytes < 1024.0 * 1024.0 * 1024.0 ? 1 : 0)
     << bytes / (1024.0 * 1024.0) << " MiB";
  return os.str();
}
}  // namespace

std::vector<std::string> octree_report(const Octree& tree, double bytes_per_cell) {
  std::vector<std::string> out;
  for (const RefinedLevel& l : tree.levels) {
    std::ostringstream os;
    os << "level " << l.level << ": " << l.n[0] << " x " << l.n[1];
    if (tree.dims == 3) os << " x " << l.n[2];
    os << " box, " << l.leaf.size() << " blocks of " << tree.block_cells() << " cells, "
       << l.fluid_cells << " fluid cells (" << l.slow_cells << " on the general path, "
       << l.general_rule.size() << " general rules";
    const auto walls = std::count_if(l.rule_link.begin(), l.rule_link.end(),
                                     [](std::int32_t k) { return k >= 0; });
    if (walls > 0) os << ", " << walls << " of them obstacles' link rules";
    os << "), " << mib(level_bytes(l, bytes_per_cell));
    out.push_back(os.str());
  }
  return out;
}

Octree build_octree(const SolverConfig& cfg) {
  std::vector<std::array<int, 3>> c;
  const auto add = [&](auto lattice) {
    using L = decltype(lattice);
    for (int q = 0; q < L::Q; ++q) c.push_back({L::c(q, 0), L::c(q, 1), L::c(q, 2)});
  };
  if (cfg.lattice == LatticeKind::D2Q9) add(D2Q9{});
  if (cfg.lattice == LatticeKind::D3Q19) add(D3Q19{});
  if (cfg.lattice == LatticeKind::D3Q27) add(D3Q27{});
  return build_octree(cfg, c);
}

double octree_bytes(const Octree& tree, double bytes_per_cell) {
  double sum = 0.0;
  for (const RefinedLevel& l : tree.levels) sum += level_bytes(l, bytes_per_cell);
  return sum;
}

void check_level_numbering(int level, std::int64_t cells, std::int64_t general_cells) {
  const auto refuse = [level](const char* what, std::int64_t n, std::int64_t most) {
    std::ostringstream os;
    os << "refinement: level " << level << " has " << n << " " << what << ", more than the " << most
       << " a level can number: fewer or smaller [[refinement.region]] tables of level " << level
       << " or above, or a smaller [domain]";
    throw std::invalid_argument(os.str());
  };
  const std::int64_t most_cells = std::numeric_limits<std::int32_t>::max();
  if (cells > most_cells) refuse("cells", cells, most_cells);
  if (general_cells > kMaxGeneralCells)
    refuse("cells on the general path", general_cells, kMaxGeneralCells);
}

void check_levels_fit(const Octree& tree, double bytes_per_cell, double available) {
  const double need = octree_bytes(tree, bytes_per_cell);
  if (need <= available) return;
  std::ostringstream os;
  os << "refinement: the levels need " << mib(need) << " (";
  for (const RefinedLevel& l : tree.levels)
    os << (l.level ? ", " : "") << "level " << l.level << ": "
       << mib(level_bytes(l, bytes_per_cell));
  os << ") and the device has " << mib(available)
     << " free: fewer or smaller [[refinement.region]] tables, fewer refinement.levels or a "
        "smaller [domain]";
  throw std::invalid_argument(os.str());
}

}  // namespace kolibri
