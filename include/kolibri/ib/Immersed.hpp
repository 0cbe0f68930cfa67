// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Immersed boundaries (chen2022 sections 3.1, 4.2.2, 4.3): rigid bodies carried by surface
/// samples that impose their velocity on the fluid through a penalty (direct-forcing) force.
///
/// Before each stream-collide step, for the populations that step will collide:
///  1. `IbNodes`: density and velocity u* = (sum c f + F/2)/rho of the cells around the bodies
///     (the streamed populations, with walls; F the uniform body force), into a node box;
///  2. per sample: trilinear (2 x 2 x 2; 2 x 2 in 2D) interpolation of rho and u*, the penalty
///     force density g = 2 rho (u_b - u) times the surface area the sample stands for, spread to
///     the same nodes with the same weights. "Scatter": one thread per sample, atomic additions
///     (the default). "Gather": samples binned by cell on the device, one thread per node summing
///     its samples (the baseline of chen2022 Table 1).
/// The stream-collide step then collides with F + F_ib, so the collision velocity
/// u* + F_ib/(2 rho) meets the body velocity at a lone sample (Guo's half-force shift). Further
/// passes (multi-direct forcing) correct with the velocity that includes the force so far.
/// The force on a body is minus the sum of its samples' forces; the torque is about its centre.
#pragma once

#include <kolibri/ib/Loads.hpp>
#include <kolibri/ib/Sampling.hpp>
#include <kolibri/stepping/StreamCollide.hpp>

#include <string>
#include <vector>

namespace kolibri {

/// Force and torque sums of a pass: Kokkos reduction value with joins for Kokkos 3 and 4.
struct Load6 {
  double v[6];
  KOKKOS_INLINE_FUNCTION Load6() : v{0, 0, 0, 0, 0, 0} {}
};

/// \brief A body's kinematics at one step, as kernels read it.
template <class R>
struct BodyPose {
  R c[3];    ///< centre
  R rot[9];  ///< rotation of the sample offsets since t = 0 (row-major)
  R v[3];    ///< translation velocity
  R w[3];    ///< angular velocity (radians per step)
  R weight;  ///< area per sample

  /// Offset r = rot * ref of a sample from the centre, and its position x = c + r.
  template <class Ref>
  KOKKOS_INLINE_FUNCTION void place(const Ref& ref, Index s, R (&r)[3], R (&x)[3]) const {
    for (int d = 0; d < 3; ++d) {
      r[d] = rot[3 * d] * ref(s, 0) + rot[3 * d + 1] * ref(s, 1) + rot[3 * d + 2] * ref(s, 2);
      x[d] = c[d] + r[d];
    }
  }
};

/// \brief A box of cells (the nodes around the bodies): origin and extent.
struct NodeBox {
  int lo[3] = {0, 0, 0}, n[3] = {0, 0, 0};
  KOKKOS_INLINE_FUNCTION Index cells() const { return Index(n[0]) * n[1] * n[2]; }
  bool operator==(const NodeBox& o) const {
    for (int d = 0; d < 3; ++d)
      if (lo[d] != o.lo[d] || n[d] != o.n[d]) return false;
    return true;
  }
  /// Box-local coordinates of node i (x fastest).
  KOKKOS_INLINE_FUNCTION Coord coords(const Index i) const { return coords_in(n, i); }
  /// The grid's cell at box-local index i.
  KOKKOS_INLINE_FUNCTION Index global(const Index i, const GridCells& grid) const {
    const Coord p = coords(i);
    return grid.cell(lo[0] + p.x, lo[1] + p.y, lo[2] + p.z);
  }
  /// Local index of cell (x, y, z), or -1 outside.
  KOKKOS_INLINE_FUNCTION Index local(int x, int y, int z) const {
    const int a = x - lo[0], b = y - lo[1], c = z - lo[2];
    if (a < 0 || b < 0 || c < 0 || a >= n[0] || b >= n[1] || c >= n[2]) return -1;
    return cell_in(n, a, b, c);
  }
};

/// \brief Trilinear stencil of a point: base node and weights (cell (i, j, k) has its centre at
/// (i + 1/2, j + 1/2, k + 1/2)). In 2D the z extent is one node.
template <int D, class R>
struct Stencil {
  int base[3];
  R frac[3];
  KOKKOS_INLINE_FUNCTION explicit Stencil(const R (&x)[3]) {
    for (int d = 0; d < 3; ++d) {
      const R s = x[d] - R(0.5);
      const R f = math::floor(s);
      base[d] = d < D ? int(f) : 0;
      frac[d] = d < D ? s - f : R(0);
    }
  }
  static constexpr int count = D == 3 ? 8 : 4;
  /// Node k of the stencil (bits: x, y, z offsets) and its weight.
  KOKKOS_INLINE_FUNCTION R node(int k, int (&p)[3]) const {
    R w = R(1);
    for (int d = 0; d < 3; ++d) {
      const int o = (k >> d) & 1;
      p[d] = base[d] + o;
      w *= d < D ? (o ? frac[d] : R(1) - frac[d]) : R(1);
    }
    return w;
  }
};

/// \brief The device side of the immersed bodies of one solver (two-array streaming).
template <class L, class S>
class ImmersedBoundary {
 public:
  using R = typename S::real;
  using V = typename S::value_type;

  ImmersedBoundary() = default;
  /// `exec`: the instance the immersed-boundary kernels run on (the level's).
  explicit ImmersedBoundary(const SolverConfig& cfg, const ExecSpace& exec = ExecSpace())
      : m_cfg(cfg), m_exec(exec) {
    const int nb = int(cfg.bodies.size());
    if (nb == 0) return;
    std::vector<BodySamples> bs;
    std::int64_t total = 0;
    for (const auto& b : cfg.bodies) {
      bs.push_back(sample_body(b, L::D, cfg.ib));
      m_offset.push_back(total);
      total += std::int64_t(bs.back().offsets.size());
    }
    m_offset.push_back(total);
    m_ref = Kokkos::View<R* [3], MemSpace>("kolibri::ib_samples", total);
    m_body = Kokkos::View<int*, MemSpace>("kolibri::ib_sample_body", total);
    auto hr = Kokkos::create_mirror_view(m_ref);
    auto hb = Kokkos::create_mirror_view(m_body);
    for (int b = 0; b < nb; ++b) {
      m_weight.push_back(bs[std::size_t(b)].weight);
      m_extent.push_back(bs[std::size_t(b)].extent);
      m_bounds.push_back(bs[std::size_t(b)].box);  // the samples' box (static bodies)
      const Body& body = cfg.bodies[std::size_t(b)];
      m_moving = m_moving || body.velocity != std::array<double, 3>{0, 0, 0} ||
                 body.angular_velocity != std::array<double, 3>{0, 0, 0};
      for (std::size_t i = 0; i < bs[std::size_t(b)].offsets.size(); ++i) {
        const Index s = Index(m_offset[std::size_t(b)]) + Index(i);
        for (int d = 0; d < 3; ++d) hr(s, d) = R(bs[std::size_t(b)].offsets[i][std::size_t(d)]);
        hb(s) = b;
      }
    }
    Kokkos::deep_copy(m_ref, hr);
    Kokkos::deep_copy(m_body, hb);
    m_pose = Kokkos::View<BodyPose<R>*, MemSpace>("kolibri::ib_pose", nb);
    m_pose_host = Kokkos::create_mirror_view(m_pose);
    m_force = Kokkos::View<R*, MemSpace>("kolibri::ib_force", std::size_t(3 * cfg.cells()));
    m_passes = std::max(1, cfg.ib.iterations);
    m_loads = Kokkos::View<Load6**, MemSpace>("kolibri::ib_loads", nb, m_passes);
    const bool gather = cfg.ib.spreading == ImmersedSettings::Spreading::Gather;
    if (gather || m_passes > 1)  // forces stored per sample: gathering, and passes after the first
      m_sample_force = Kokkos::View<R* [3], MemSpace>("kolibri::ib_sample_force", total);
    if (gather) {
      m_key = Kokkos::View<Index*, MemSpace>("kolibri::ib_sample_cell", total);
      m_slot = Kokkos::View<int*, MemSpace>("kolibri::ib_sample_slot", total);
      m_list = Kokkos::View<Index*, MemSpace>("kolibri::ib_bin_list", total);
    }
    m_stats.samples = total;
    m_stats.loops_min = m_stats.loops_max = Stencil<L::D, R>::count;
  }

  bool active() const { return !m_offset.empty(); }
  const Kokkos::View<R*, MemSpace>& force() const { return m_force; }
  const IbStats& stats() const { return m_stats; }

  /// Forces for the step that starts at time t from the post-collision state `src`.
  /// Timed only on request (ib.timing): the timing fences the device twice a step.
  void apply(const Kokkos::View<const V*, MemSpace>& src, const Boundary<L, R>& bc, const Slots& idx, std::int64_t t) {
    const bool timed = m_cfg.ib.timing;
    if (timed) Kokkos::fence();
    Kokkos::Timer timer;
    const NodeBox box = set_poses(t);
    zero(m_box);  // the previous step's nodes
    if (!(box == m_box)) zero(box);
    m_box = box;
    if (Index(m_node.extent(0)) < 4 * box.cells())
      m_node = Kokkos::View<R*, MemSpace>("kolibri::ib_nodes", std::size_t(4 * box.cells() * 5 / 4 + 64));
    Kokkos::parallel_for(
        "kolibri::ib_nodes",
        Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<Index>>(m_exec, 0, box.cells()),
        Nodes{src, bc, idx, m_node, box});
    const bool gather = m_cfg.ib.spreading == ImmersedSettings::Spreading::Gather;
    for (int pass = 0; pass < m_passes; ++pass) {
      // Later passes read the force so far at the nodes: spreading in the same kernel would let
      // them see part of this pass's, so they store first and spread after (`Spread`).
      const bool fused = !gather && pass == 0;
      Samples k{{grid(box, bc, idx)}, m_node, m_sample_force, m_key, pass > 0, fused};
      for (std::size_t b = 0; b + 1 < m_offset.size(); ++b) {
        const auto load = Kokkos::subview(m_loads, b, pass);
        Kokkos::parallel_reduce("kolibri::ib_samples",
                                Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<Index>>(
                                    m_exec, m_offset[b], m_offset[b + 1]),
                                k, load);
      }
      if (gather) {
        gather_forces(box, bc, idx);
      } else if (!fused) {
        Kokkos::parallel_for(
            "kolibri::ib_spread",
            Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<Index>>(m_exec, 0, m_stats.samples),
            Spread{{grid(box, bc, idx)}, m_sample_force});
      }
    }
    if (timed) {
      Kokkos::fence();
      m_stats.seconds += timer.seconds();
      m_stats.timed = true;
    }
    ++m_stats.steps;
  }

  /// Force and torque on each body during the last step (copies from the device).
  std::vector<BodyLoad> loads() const {
    std::vector<BodyLoad> out;
    if (!active()) return out;
    auto h = Kokkos::create_mirror_view(m_loads);
    Kokkos::deep_copy(h, m_loads);
    for (std::size_t b = 0; b < m_cfg.bodies.size(); ++b) {
      BodyLoad l;
      l.name = m_cfg.bodies[b].name;
      for (int p = 0; p < m_passes; ++p)
        for (int d = 0; d < 3; ++d) {
          l.force[std::size_t(d)] -= h(b, std::size_t(p)).v[d];
          l.torque[std::size_t(d)] -= h(b, std::size_t(p)).v[3 + d];
        }
      for (int d = 0; d < 3; ++d) l.centre[std::size_t(d)] = double(m_pose_host(b).c[d]);
      out.push_back(l);
    }
    return out;
  }

 private:
  /// Poses at time t (host), and the node box around every body (clipped to the solver's box).
  NodeBox set_poses(std::int64_t t) {
    const int size[3] = {m_cfg.nx, m_cfg.ny, m_cfg.nz};
    double lo[3] = {1e300, 1e300, 1e300}, hi[3] = {-1e300, -1e300, -1e300};
    for (std::size_t b = 0; b < m_cfg.bodies.size(); ++b) {
      const Body& body = m_cfg.bodies[b];
      BodyPose<R>& p = m_pose_host(b);
      const double w = std::hypot(body.angular_velocity[0], body.angular_velocity[1], body.angular_velocity[2]);
      const auto rot = axis_rotation(body.angular_velocity, w * double(t));
      for (int i = 0; i < 9; ++i) p.rot[i] = R(rot[std::size_t(i)]);
      for (int d = 0; d < 3; ++d) {
        const double c = body.position[std::size_t(d)] + body.velocity[std::size_t(d)] * double(t);
        p.c[d] = R(c);
        p.v[d] = R(body.velocity[std::size_t(d)]);
        p.w[d] = R(body.angular_velocity[std::size_t(d)]);
        // Moving bodies: the bounding sphere; static ones: the samples' own box.
        lo[d] = std::min(lo[d], c + (m_moving ? -m_extent[b] : m_bounds[b][std::size_t(d)]));
        hi[d] = std::max(hi[d], c + (m_moving ? m_extent[b] : m_bounds[b][3 + std::size_t(d)]));
      }
      p.weight = R(m_weight[b]);
    }
    if (m_moving || m_stats.steps == 0) Kokkos::deep_copy(m_pose, m_pose_host);
    NodeBox box;
    for (int d = 0; d < 3; ++d) {
      if (d >= L::D) {
        box.lo[d] = 0, box.n[d] = size[d];
        continue;
      }
      const int a = std::max(0, int(std::floor(lo[d] - 0.5)) - 1), e = std::min(size[d], int(std::floor(hi[d] - 0.5)) + 3);
      box.lo[d] = a, box.n[d] = std::max(0, e - a);
    }
    return box;
  }

  // FIXME_CUDA: nvcc refuses extended lambdas in private member functions and private nested
  // types as kernel functors: what follows is public but not part of the interface.
 public:
  /// Clear the force in a box.
  void zero(const NodeBox& box) {
    if (box.cells() == 0) return;
    const auto force = m_force;
    const GridCells grid = DenseGrid::of(m_cfg);
    const Index cells = grid.cells();
    Kokkos::parallel_for(
        "kolibri::ib_zero",
        Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<Index>>(m_exec, 0, box.cells()),
        KOKKOS_LAMBDA(const Index i) {
          const Index n = box.global(i, grid);
          for (int d = 0; d < 3; ++d) force(d * cells + n) = R(0);
        });
  }

  /// Gathering: bin the samples by the base node of their stencil (counting sort on the device),
  /// then one thread per node sums the forces of the samples whose stencil covers it.
  void gather_forces(const NodeBox& box, const Boundary<L, R>& bc, const Slots& idx) {
    const Index nbc = box.cells(), ns = m_stats.samples;
    if (Index(m_count.extent(0)) < nbc + 1) m_count = Kokkos::View<Index*, MemSpace>("kolibri::ib_bins", std::size_t(nbc + 1));
    Kokkos::deep_copy(m_count, Index(0));
    const auto count = m_count;
    const auto key = m_key;
    const auto slot = m_slot;
    const auto list = m_list;
    using Range = Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<Index>>;
    Kokkos::parallel_for(
        "kolibri::ib_bin_count", Range(m_exec, 0, ns), KOKKOS_LAMBDA(const Index s) {
          if (key(s) >= 0) slot(s) = int(Kokkos::atomic_fetch_add(&count(key(s)), Index(1)));
        });
    Kokkos::parallel_scan(
        "kolibri::ib_bin_scan", Range(m_exec, 0, nbc + 1),
        KOKKOS_LAMBDA(const Index i, Index& sum, const bool last) {
          const Index c = i < nbc ? count(i) : 0;
          if (last) count(i) = sum;
          sum += c;
        });
    Kokkos::parallel_for(
        "kolibri::ib_bin_fill", Range(m_exec, 0, ns), KOKKOS_LAMBDA(const Index s) {
          if (key(s) >= 0) list(count(key(s)) + slot(s)) = s;
        });
    const GatherNodes g{{grid(box, bc, idx)}, m_sample_force, m_count, m_list};
    Kokkos::parallel_for("kolibri::ib_gather", Range(m_exec, 0, nbc), g);
    if (m_stats.steps == 0) {  // loop counts of the first step (chen2022 Table 1)
      Kokkos::MinMaxScalar<int> m;
      Kokkos::parallel_reduce("kolibri::ib_gather_loops", Range(m_exec, 0, nbc),
                              typename GatherNodes::Loops{g}, Kokkos::MinMax<int>(m));
      m_stats.loops_min = m.max_val > 0 ? m.min_val : 0, m_stats.loops_max = std::max(0, m.max_val);
    }
  }


  /// Density and velocity (without the immersed force) of the populations the coming step
  /// collides, for every cell of the node box: 4 values a node, value-major.
  struct Nodes {
    Kokkos::View<const V*, MemSpace> src;
    Boundary<L, R> bc;
    Slots idx;
    Kokkos::View<R*, MemSpace> node;
    NodeBox box;
    KOKKOS_INLINE_FUNCTION void operator()(const Index i) const {
      const Index nb = box.cells();
      const Index n = box.global(i, bc.grid);
      if (bc.flags(n) == kSolid) {
        node(i) = R(1), node(nb + i) = node(2 * nb + i) = node(3 * nb + i) = R(0);
        return;
      }
      R f[L::Q];
      if (bc.flags(n) == kFluid)
        gather_interior<L, S>(src, idx, bc.grid.rows(n), f);
      else
        bc.pull(n, bc.links ? bc.links[n] : 0u, f, PostCollision<L, S, Slots>{src, idx});
      R rho, u[3];
      macroscopic<L>(f, bc.force, rho, u);
      node(i) = rho;
      for (int d = 0; d < 3; ++d) node((1 + d) * nb + i) = u[d];
    }
  };

  /// What the sample kernels share: the samples and poses, the node box and the force field.
  struct SampleGrid {
    Kokkos::View<const R* [3], MemSpace> ref;
    Kokkos::View<const int*, MemSpace> body;
    Kokkos::View<const BodyPose<R>*, MemSpace> pose;
    NodeBox box;
    Kokkos::View<R*, MemSpace> force;
    Index cells;
    Kokkos::View<const Flag*, MemSpace> flags;
    GridCells grid;

    /// The cell of stencil node c, or -1 outside the node box.
    KOKKOS_INLINE_FUNCTION Index cell(const int (&c)[3]) const {
      return box.local(c[0], c[1], c[2]) < 0 ? -1 : grid.cell(c[0], c[1], c[2]);
    }
    /// Add a sample's force g to the fluid nodes of its stencil (atomic; solid cells take none).
    KOKKOS_INLINE_FUNCTION void spread(const Stencil<L::D, R>& st, const R (&g)[3]) const {
      for (int k = 0; k < Stencil<L::D, R>::count; ++k) {
        int c[3];
        const R w = st.node(k, c);
        const Index n = cell(c);
        if (n < 0 || flags(n) == kSolid) continue;
        for (int d = 0; d < L::D; ++d) Kokkos::atomic_add(&force(d * cells + n), w * g[d]);
      }
    }
  };

  /// One pass over the samples of one body: interpolate, penalty force, spread (scatter) or store
  /// (gather, later passes); reduces the force on the fluid and its torque about the body's centre.
  struct Samples : SampleGrid {
    Kokkos::View<const R*, MemSpace> node;
    Kokkos::View<R* [3], MemSpace> sample_force;
    Kokkos::View<Index*, MemSpace> key;
    bool corrected;  ///< later passes: the node velocity includes the force so far
    bool scatter;

    using value_type = Load6;
    KOKKOS_INLINE_FUNCTION void init(Load6& a) const { a = Load6(); }
    KOKKOS_INLINE_FUNCTION void join(Load6& a, const Load6& b) const {
      for (int k = 0; k < 6; ++k) a.v[k] += b.v[k];
    }
    KOKKOS_INLINE_FUNCTION void join(volatile Load6& a, const volatile Load6& b) const {  // Kokkos 3
      for (int k = 0; k < 6; ++k) a.v[k] = a.v[k] + b.v[k];
    }

    KOKKOS_INLINE_FUNCTION void operator()(const Index s, Load6& acc) const {
      const BodyPose<R>& p = this->pose(this->body(s));
      R r[3], x[3], ub[3];
      p.place(this->ref, s, r, x);
      ub[0] = p.v[0] + p.w[1] * r[2] - p.w[2] * r[1];
      ub[1] = p.v[1] + p.w[2] * r[0] - p.w[0] * r[2];
      ub[2] = p.v[2] + p.w[0] * r[1] - p.w[1] * r[0];
      const Stencil<L::D, R> st(x);
      const Index nb = this->box.cells();
      R rho = R(0), u[3] = {R(0), R(0), R(0)}, wsum = R(0);
      for (int k = 0; k < Stencil<L::D, R>::count; ++k) {
        int c[3];
        const R w = st.node(k, c);
        const Index i = this->box.local(c[0], c[1], c[2]);
        if (i < 0) continue;
        const R rn = node(i);
        const Index cn = this->grid.cell(c[0], c[1], c[2]);  // in the box (i >= 0)
        wsum += w;
        rho += w * rn;
        for (int d = 0; d < 3; ++d) {
          R v = node((1 + d) * nb + i);
          if (corrected) v += R(0.5) * this->force(d * this->cells + cn) / rn;
          u[d] += w * v;
        }
      }
      R g[3] = {R(0), R(0), R(0)};
      if (wsum > R(0)) {  // a sample outside the box acts on nothing
        rho /= wsum;
        for (int d = 0; d < 3; ++d) g[d] = R(2) * rho * (ub[d] - u[d] / wsum) * p.weight;
      }
      if (scatter) {
        this->spread(st, g);
      } else {
        for (int d = 0; d < 3; ++d) sample_force(s, d) = g[d];
        if (key.extent(0) > 0) key(s) = this->box.local(st.base[0], st.base[1], st.base[2]);  // gather; -1 outside
      }
      for (int d = 0; d < 3; ++d) acc.v[d] += double(g[d]);
      acc.v[3] += double(r[1] * g[2] - r[2] * g[1]);
      acc.v[4] += double(r[2] * g[0] - r[0] * g[2]);
      acc.v[5] += double(r[0] * g[1] - r[1] * g[0]);
    }
  };

  /// Scattering of stored sample forces (passes after the first).
  struct Spread : SampleGrid {
    Kokkos::View<const R* [3], MemSpace> sample_force;
    KOKKOS_INLINE_FUNCTION void operator()(const Index s) const {
      R r[3], x[3];
      this->pose(this->body(s)).place(this->ref, s, r, x);
      const R g[3] = {sample_force(s, 0), sample_force(s, 1), sample_force(s, 2)};
      this->spread(Stencil<L::D, R>(x), g);
    }
  };

  /// Gathering: one thread per node sums the stored forces of the samples whose stencil covers it.
  struct GatherNodes : SampleGrid {
    Kokkos::View<const R* [3], MemSpace> sample_force;
    Kokkos::View<const Index*, MemSpace> start;
    Kokkos::View<const Index*, MemSpace> list;

    /// Samples whose stencil covers node i (box-local), visited with `fn(s, offset of the node
    /// from the sample's base node)`; returns how many.
    template <class Fn>
    KOKKOS_INLINE_FUNCTION int visit(const Index i, const Fn& fn) const {
      const NodeBox& nbox = this->box;
      const Coord p = nbox.coords(i);
      int loops = 0;
      for (int k = 0; k < Stencil<L::D, R>::count; ++k) {
        const int o[3] = {k & 1, (k >> 1) & 1, (k >> 2) & 1};
        const Index base =
            nbox.local(nbox.lo[0] + p.x - o[0], nbox.lo[1] + p.y - o[1], nbox.lo[2] + p.z - o[2]);
        if (base < 0) continue;
        for (Index j = start(base); j < start(base + 1); ++j, ++loops) fn(list(j), o);
      }
      return loops;
    }
    KOKKOS_INLINE_FUNCTION void operator()(const Index i) const {
      const Index n = this->box.global(i, this->grid);
      if (this->flags(n) == kSolid) return;
      R sum[3] = {R(0), R(0), R(0)};
      visit(i, [&](const Index s, const int (&o)[3]) {
        R r[3], xs[3];
        this->pose(this->body(s)).place(this->ref, s, r, xs);
        int c[3];
        const R w = Stencil<L::D, R>(xs).node(o[0] + 2 * o[1] + 4 * o[2], c);
        for (int d = 0; d < 3; ++d) sum[d] += w * sample_force(s, d);
      });
      for (int d = 0; d < L::D; ++d) this->force(d * this->cells + n) += sum[d];
    }
    /// The fewest and most samples a node with any sums (chen2022 Table 1's loop counts).
    struct Loops {
      GatherNodes g;
      KOKKOS_INLINE_FUNCTION void operator()(const Index i, Kokkos::MinMaxScalar<int>& m) const {
        const int l = g.visit(i, [](Index, const int (&)[3]) {});
        if (l == 0) return;
        if (l < m.min_val) m.min_val = l;
        if (l > m.max_val) m.max_val = l;
      }
    };
  };

  /// The shared part of the sample kernels for this step's node box.
  SampleGrid grid(const NodeBox& box, const Boundary<L, R>& bc, const Slots& idx) const {
    return {m_ref, m_body, m_pose, box, m_force, idx.cells, bc.flags, bc.grid};
  }

 private:
  SolverConfig m_cfg;
  ExecSpace m_exec{};  ///< the level's instance
  std::vector<std::int64_t> m_offset;
  std::vector<double> m_weight, m_extent;
  std::vector<std::array<double, 6>> m_bounds;
  bool m_moving = false;
  int m_passes = 1;
  Kokkos::View<R* [3], MemSpace> m_ref, m_sample_force;
  Kokkos::View<int*, MemSpace> m_body, m_slot;
  Kokkos::View<BodyPose<R>*, MemSpace> m_pose;
  typename Kokkos::View<BodyPose<R>*, MemSpace>::HostMirror m_pose_host;
  Kokkos::View<R*, MemSpace> m_force, m_node;
  Kokkos::View<Load6**, MemSpace> m_loads;
  Kokkos::View<Index*, MemSpace> m_key, m_list, m_count;
  NodeBox m_box;
  IbStats m_stats;
};

}  // namespace kolibri
