// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Immersed boundaries (chen2022 sections 3.1, 4.2.2, 4.3): rigid bodies carried by surface
/// samples that impose their velocity on the fluid through a penalty (direct-forcing) force.
///
/// Before each stream-collide step, for the populations that step will collide:
///  1. `Nodes`: density and velocity u* = (sum c f + F/2)/rho of the cells around the bodies
///     (the streamed populations, with walls; F the uniform body force), into a node box; the
///     moment representation's populations rebuilt from the neighbours' moments (apply_with);
///  2. per sample: trilinear (2 x 2 x 2; 2 x 2 in 2D) interpolation of rho and u*, the penalty
///     force density g = 2 rho (u_b - u) times the surface area the sample stands for, spread to
///     the same nodes with the same weights. "Scatter": one thread per sample, atomic additions
///     (the default). "Gather": samples binned by cell on the device, one thread per node summing
///     its samples (the baseline of chen2022 Table 1).
/// The stream-collide step then collides with F + F_ib, so the collision velocity
/// u* + F_ib/(2 rho) meets the body velocity at a lone sample (Guo's half-force shift). Further
/// passes (multi-direct forcing) correct with the velocity that includes the force so far.
/// The implicit forcing (ib.forcing = "implicit", one rank) instead solves for every sample's
/// force at once, no slip at all samples together (ib/Coupling.hpp), and spreads the solution.
/// The force on a body is minus the sum of its samples' forces (summed over the passes per
/// sample, then over the samples in their order, when the loads are asked for); the torque is
/// about its centre.
///
/// On several ranks every rank holds every sample and the nodes of its own cells (ghost layers
/// excluded). A sample whose stencil lies on one rank is that rank's alone. The samples whose
/// stencils cross a rank border ("shared") get a row of a node table: per pass each rank writes
/// the values of the stencil nodes it owns (zeros elsewhere), a sum over ranks gives every rank
/// every row exactly (each entry has one non-zero term), and every rank finishes the shared
/// samples as one rank would, spreading onto its own nodes only. The loads sum the samples'
/// forces over the ranks the same way (each sample's on one rank). Forces, fields and loads are
/// the single-rank ones bit for bit.
///
/// Free bodies (Body::free) move under their loads (ib/Motion.hpp): after the node kernel of a
/// step, the momentum of the fluid inside each (`InnerMomentum`, summed in fixed point over the
/// ranks) and the forcing's load of the last step give the hydrodynamic force, and the body steps
/// on the host, every rank alike, before the sample kernels place its samples.
#pragma once

#include <kolibri/ib/Bins.hpp>
#include <kolibri/ib/Coupling.hpp>
#include <kolibri/ib/Inside.hpp>
#include <kolibri/ib/Loads.hpp>
#include <kolibri/ib/Motion.hpp>
#include <kolibri/ib/Sampling.hpp>
#include <kolibri/parallel/Distribution.hpp>
#include <kolibri/parallel/Streams.hpp>
#include <kolibri/stepping/StreamCollide.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace kolibri {

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

/// \brief A box of cells (the nodes around the bodies): origin and extent, in the whole domain's
/// cells; `origin` is the domain cell of this rank's local cell (0, 0, 0).
struct NodeBox {
  int lo[3] = {0, 0, 0}, n[3] = {0, 0, 0}, origin[3] = {0, 0, 0};
  KOKKOS_INLINE_FUNCTION Index cells() const { return Index(n[0]) * n[1] * n[2]; }
  bool operator==(const NodeBox& o) const {
    for (int d = 0; d < 3; ++d)
      if (lo[d] != o.lo[d] || n[d] != o.n[d] || origin[d] != o.origin[d]) return false;
    return true;
  }
  /// Box-local coordinates of node i (x fastest).
  KOKKOS_INLINE_FUNCTION Coord coords(const Index i) const { return coords_in(n, i); }
  /// The grid's cell at box-local index i.
  KOKKOS_INLINE_FUNCTION Index global(const Index i, const GridCells& grid) const {
    const Coord p = coords(i);
    return grid.cell(lo[0] + p.x - origin[0], lo[1] + p.y - origin[1], lo[2] + p.z - origin[2]);
  }
  /// The grid's cell of domain cell c (inside the box).
  KOKKOS_INLINE_FUNCTION Index cell_of(const int (&c)[3], const GridCells& grid) const {
    return grid.cell(c[0] - origin[0], c[1] - origin[1], c[2] - origin[2]);
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

/// \brief The device side of the immersed bodies of one solver (two-array or in-place streaming).
template <class L, class S>
class ImmersedBoundary {
 public:
  using R = typename S::real;
  using V = typename S::value_type;

 private:
  /// A free body: which, its motion, mass and inertia, shape, and the fixed-point bits of its
  /// inner sums (linear, angular).
  struct FreeBody {
    int body = 0;
    FreeMotion motion;
    RigidInertia inertia;
    ShapeDistance shape;
    std::array<int, 2> bits{};
  };
  /// Each sample's force over a step's passes, on the host.
  using HostTotals = typename Kokkos::View<double* [3], MemSpace>::HostMirror;

 public:
  ImmersedBoundary() = default;
  /// `exec`: the instance the immersed-boundary kernels run on (the level's); `dist`: the ranks
  /// of a multi-rank run and their boxes (null or without comm: one rank), `cfg` this rank's piece.
  explicit ImmersedBoundary(const SolverConfig& cfg, const ExecSpace& exec = ExecSpace(),
                            const Distribution* dist = nullptr)
      : m_cfg(cfg), m_exec(exec), m_comm(dist ? dist->comm : nullptr) {
    for (const FaceBC& f : cfg.faces) m_layer_faces = m_layer_faces || f.from_layer();
    const int nb = int(cfg.bodies.size());
    if (nb == 0) return;
    if (m_comm && cfg.ib.spreading == ImmersedSettings::Spreading::Gather)
      throw std::invalid_argument(
          "ib.spreading = \"gather\" runs on one rank for now; \"scatter\" (the default) runs on "
          "several");
    if (m_comm && cfg.ib.forcing == ImmersedSettings::Forcing::Implicit)
      throw std::invalid_argument(
          "ib.forcing = \"implicit\" runs on one rank for now; \"direct\" (the default) runs on "
          "several");
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
    m_ref_host = Kokkos::create_mirror_view(m_ref);
    auto& hr = m_ref_host;
    auto hb = Kokkos::create_mirror_view(m_body);
    for (int b = 0; b < nb; ++b) {
      m_weight.push_back(bs[std::size_t(b)].weight);
      m_extent.push_back(bs[std::size_t(b)].extent);
      m_bounds.push_back(bs[std::size_t(b)].box);  // the samples' box (static bodies)
      const Body& body = cfg.bodies[std::size_t(b)];
      m_volume.push_back(bs[std::size_t(b)].volume);
      m_moving = m_moving || body.velocity != std::array<double, 3>{0, 0, 0} ||
                 body.angular_velocity != std::array<double, 3>{0, 0, 0} || body.oscillates() ||
                 body.free;
      m_free_slot.push_back(body.free ? int(m_free.size()) : -1);
      if (body.free) m_free.push_back(free_body(b, body, bs[std::size_t(b)]));
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
    m_setting = MotionSetting::of(cfg, L::D);
    m_velocity_change.assign(std::size_t(nb), std::array<double, 3>{0, 0, 0});
    m_cells = Index(cfg.cells());
    m_force = Kokkos::View<R*, MemSpace>("kolibri::ib_force", std::size_t(3 * m_cells));
    m_passes = std::max(1, cfg.ib.iterations);
    m_total = Kokkos::View<double* [3], MemSpace>("kolibri::ib_sample_total", total);
    m_total_host = Kokkos::create_mirror(m_total);
    const bool gather = cfg.ib.spreading == ImmersedSettings::Spreading::Gather;
    if (implicit()) m_passes = 1;
    if (gather || m_passes > 1 || implicit())  // forces stored per sample: gathering, later
                                               // passes, the implicit forcing
      m_sample_force = Kokkos::View<R* [3], MemSpace>("kolibri::ib_sample_force", total);
    if (gather) {
      m_key = Kokkos::View<Index*, MemSpace>("kolibri::ib_sample_cell", total);
      m_slot = Kokkos::View<int*, MemSpace>("kolibri::ib_sample_slot", total);
      m_list = Kokkos::View<Index*, MemSpace>("kolibri::ib_bin_list", total);
    }
    if (m_comm) set_slabs(*dist);
    m_stats.samples = total;
    m_stats.loops_min = m_stats.loops_max = Stencil<L::D, R>::count;
    for (const double v : m_volume) m_stats.enclosed_volume += v;
    m_stats.moving = m_moving;
  }

  bool active() const { return !m_offset.empty(); }
  /// Whether the coming steps' sample forces add to the totals of the steps before (the loads):
  /// a refined grid's finest level takes several steps in one of the run's; off (the default),
  /// each step's loads are its own.
  void keep_totals(const bool on) { m_keep_totals = on; }
  /// Body b's velocity change (component d) that the coming step adds to: the steps' before it
  /// where the totals are kept (keep_totals), so the carried fluid's momentum spans them all.
  double kept_change(std::size_t b, std::size_t d) const {
    return m_keep_totals ? m_velocity_change[b][d] : 0.0;
  }
  bool implicit() const { return m_cfg.ib.forcing == ImmersedSettings::Forcing::Implicit; }
  const Kokkos::View<R*, MemSpace>& force() const { return m_force; }
  /// The box of the last apply's nodes (the domain's cells): the force is zero outside it.
  const NodeBox& node_box() const { return m_box; }
  const IbStats& stats() const { return m_stats; }

  /// Forces for the step that starts at time t from the state `src`, laid out as the scheme's
  /// `layout()` says: post-collision (the coming step pulls from the upwind slots q, or in place
  /// opposite(q)) or arriving (in place before a local step: the cell's own slots).
  void apply(const Kokkos::View<const V*, MemSpace>& src, const Boundary<L, R>& bc,
             const Slots& idx, std::int64_t t, const StateLayout& layout = {}) {
    if (layout.opposite_slots && !layout.arriving())
      apply_with(PostCollisionInPlace<L, S, Slots>{src, idx}, false, bc, t);
    else
      apply_with(PostCollision<L, S, Slots>{src, idx}, layout.arriving(), bc, t);
  }

  /// Forces for the step that starts at time t, the nodes' density and velocity from the
  /// populations arriving at them: pulled through `bc` from `departing` (dep(m, j): the
  /// post-collision population j of cell m, the state's own form: stored populations, or those
  /// the moment representation rebuilds from its moments), or with `own` the cell's own
  /// dep(n, q) (in place before a local step). Timed only on request (ib.timing): the timing
  /// fences the device twice a step.
  template <class Departing>
  void apply_with(const Departing& departing, const bool own, const Boundary<L, R>& bc,
                  std::int64_t t) {
    const bool timed = m_cfg.ib.timing;
    if (timed) Kokkos::fence();
    Kokkos::Timer timer;
    const NodeBox box = set_poses(t);
    zero(m_box, true);  // the previous step's nodes
    if (!(box == m_box)) zero(box, false);
    m_box = box;
    if (Index(m_node.extent(0)) < 4 * box.cells())
      m_node = Kokkos::View<R*, MemSpace>("kolibri::ib_nodes", std::size_t(4 * box.cells() * 5 / 4 + 64));
    if (m_free.empty()) {  // the stencils' nodes first: the node table needs no others
      upload_poses();
      mark_reached(box, bc);
    }
    if (m_layer_faces)  // the boundary cells' gather with the layer rule only where it applies
      for_nodes("kolibri::ib_nodes", box, true,
                Nodes<true, Departing>{departing, own, bc, m_node, box});
    else
      for_nodes("kolibri::ib_nodes", box, true,
                Nodes<false, Departing>{departing, own, bc, m_node, box});
    forces(box, bc);
    if (timed) {
      Kokkos::fence();
      m_stats.seconds += timer.seconds();
      m_stats.timed = true;
    }
    ++m_stats.steps;
  }

 private:
  /// The samples' forces from the node table of `box` (apply_with's nodes): the free bodies'
  /// motion, the passes (or the implicit solve), the spreading.
  void forces(const NodeBox& box, const Boundary<L, R>& bc) {
    if (!m_free.empty()) {
      move_free_bodies(box);
      upload_poses();
    }
    const bool gather = m_cfg.ib.spreading == ImmersedSettings::Spreading::Gather;
    if (m_comm) find_shared_samples();
    if (implicit()) solve_coupling(box, bc);
    for (int pass = 0; pass < m_passes && !implicit(); ++pass) {
      // Later passes read the force so far at the nodes: spreading in the same kernel would let
      // them see part of this pass's, so they store first and spread after (`Spread`).
      const bool fused = !gather && pass == 0;
      const Samples k{{grid(box, bc)},
                      m_node,
                      m_sample_force,
                      m_key,
                      m_total,
                      m_row,
                      m_table,
                      pass,
                      m_keep_totals,
                      fused,
                      !m_comm || m_comm->rank() == 0};
      if (m_shared > 0) share_node_table(k);
      Kokkos::parallel_for(
          "kolibri::ib_samples",
          Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<Index>>(m_exec, 0, m_stats.samples), k);
      if (gather) {
        gather_forces(box, bc);
      } else if (!fused) {
        Kokkos::parallel_for(
            "kolibri::ib_spread",
            Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<Index>>(m_exec, 0, m_stats.samples),
            Spread{{grid(box, bc)}, m_sample_force});
      }
    }
    if (!m_free.empty()) {  // the forcing's load on each free body, for its next step
      const auto& totals = sample_totals();
      for (FreeBody& f : m_free) f.motion.forcing = forcing_load(std::size_t(f.body), totals);
    }
  }

 public:
  /// Force and torque on each body during the last step (copies from the device), and its
  /// centre and velocities. On several ranks a collective call: every rank must make it.
  std::vector<BodyLoad> loads() const {
    std::vector<BodyLoad> out;
    if (!active()) return out;
    const auto& totals = sample_totals();
    for (std::size_t b = 0; b < m_cfg.bodies.size(); ++b) {
      BodyLoad l;
      l.name = m_cfg.bodies[b].name;
      const std::array<double, 6> forcing = forcing_load(b, totals);
      // The fluid the body carries (density initial.density): the samples' forces change its
      // momentum by rho0 V (u_b(t) - u_b(t - 1)) over the step, so the fluid outside pushes on
      // the body that much more.
      for (std::size_t d = 0; d < 3; ++d) {
        l.force[d] = forcing[d] + m_cfg.initial.density * m_volume[b] * m_velocity_change[b][d];
        l.torque[d] = forcing[3 + d];
        l.centre[d] = double(m_pose_host(b).c[d]);
        l.velocity[d] = double(m_pose_host(b).v[d]);
        l.angular_velocity[d] = double(m_pose_host(b).w[d]);
      }
      out.push_back(l);
    }
    return out;
  }

  /// The free bodies' motion, packed for a checkpoint (FreeMotion::pack, in body order).
  std::vector<double> motion() const {
    std::vector<double> out;
    for (const FreeBody& f : m_free) f.motion.pack(out);
    return out;
  }
  /// Take the free bodies' motion back from a checkpoint (as motion() packed it).
  void set_motion(const std::vector<double>& packed) {
    if (packed.size() != m_free.size() * FreeMotion::kValues)
      throw std::invalid_argument("the checkpoint holds the motion of " +
                                  std::to_string(packed.size() / FreeMotion::kValues) +
                                  " free bodies, the deck has " + std::to_string(m_free.size()));
    for (std::size_t i = 0; i < m_free.size(); ++i)
      m_free[i].motion = FreeMotion::unpack(packed.data() + i * FreeMotion::kValues);
  }
  /// The implicit forcing's last solution (each sample's force G, sample by sample, 3 values a
  /// sample), which the next step's solve starts from (ib.warm_start); empty when the next solve
  /// starts cold. A checkpoint keeps it, so a restart continues bit for bit.
  std::vector<double> coupling_forces() const {
    if (!m_coupling_warm) return {};
    const Index ns = m_stats.samples;
    const auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), m_coupling_force);
    std::vector<double> out(std::size_t(ns) * 3);
    for (Index s = 0; s < ns; ++s)
      for (int d = 0; d < 3; ++d) out[std::size_t(3 * s + d)] = host(s, d);
    return out;
  }
  /// Take the implicit forcing's last solution back from a checkpoint (as coupling_forces()
  /// gave it). They fit only this deck's samples with the warm start on; otherwise (an [ib] key
  /// changed on the restart) they are left aside and the next solve starts cold. Returns why
  /// they were left aside, for the log (empty: taken, or none given).
  std::string set_coupling_forces(const std::vector<double>& forces) {
    m_coupling_warm = false;
    if (forces.empty()) return {};
    const Index ns = m_stats.samples;
    if (!implicit() || !m_cfg.ib.warm_start) return "this deck's forcing does not start warm";
    if (forces.size() != std::size_t(ns) * 3)
      return "this deck has " + std::to_string(ns) + " samples";
    reserve_coupling(ns);
    const auto host = Kokkos::create_mirror_view(m_coupling_force);
    for (Index s = 0; s < ns; ++s)
      for (int d = 0; d < 3; ++d) host(s, d) = forces[std::size_t(3 * s + d)];
    Kokkos::deep_copy(m_coupling_force, host);
    m_coupling_warm = true;
    return {};
  }

 private:
  /// Each sample's force over the last step's passes, summed over the ranks (it is non-zero on
  /// one: exact), in a host copy of its own (not the device view itself on host builds: the sum
  /// over the ranks must not land in m_total, or a second call would sum the sums).
  const HostTotals& sample_totals() const {
    Kokkos::deep_copy(m_total_host, m_total);
    if (m_comm) {
      m_total_sum.assign(m_total_host.data(), m_total_host.data() + m_total_host.size());
      m_comm->sum(m_total_sum);
      std::copy(m_total_sum.begin(), m_total_sum.end(), m_total_host.data());
    }
    return m_total_host;
  }
  /// Force and torque of body b's samples on it over the last step (minus their forces on the
  /// fluid; torque about its centre), summed in sample order: the same on any rank count.
  std::array<double, 6> forcing_load(std::size_t b, const HostTotals& h) const {
    std::array<double, 6> l{};
    for (auto s = Index(m_offset[b]); s < Index(m_offset[b + 1]); ++s) {
      R r[3], x[3];
      m_pose_host(b).place(m_ref_host, s, r, x);
      const double g[3] = {h(s, 0), h(s, 1), h(s, 2)};
      const double rd[3] = {double(r[0]), double(r[1]), double(r[2])};
      for (std::size_t d = 0; d < 3; ++d) l[d] -= g[d];
      l[3] -= rd[1] * g[2] - rd[2] * g[1];
      l[4] -= rd[2] * g[0] - rd[0] * g[2];
      l[5] -= rd[0] * g[1] - rd[1] * g[0];
    }
    return l;
  }

  /// Body b moving freely: its state at t = 0, mass and inertia, shape and fixed-point scales.
  FreeBody free_body(int b, const Body& body, const BodySamples& samples) const {
    FreeBody f;
    f.body = b;
    f.motion.centre = body.position, f.motion.velocity = body.velocity,
    f.motion.angular_velocity = body.angular_velocity;
    f.inertia = inertia_of(body, L::D, samples.volume);
    add_virtual_mass(f.inertia, body, samples, m_cfg.initial.density, m_cfg.ib.virtual_mass);
    f.shape = ShapeDistance::of(body, L::D);
    // |rho u*| < 2 in every covered cell of the body's box: the sums fit in 62 bits.
    const double reach = samples.extent + retraction_of(body, m_cfg.ib) + 2.0;
    const double cells = std::pow(2.0 * reach + 2.0, double(L::D));
    const auto bits = [](double bound) {
      return std::clamp(61 - int(std::ceil(std::log2(bound))), 16, 52);
    };
    f.bits = {bits(2.0 * cells), bits(2.0 * cells * reach)};
    return f;
  }

  /// The free bodies' step (ib/Motion.hpp): the fluid inside each from the node box, then the
  /// equations of motion; their poses for this step's samples.
  void move_free_bodies(const NodeBox& box) {
    std::vector<std::int64_t> sums;
    for (const FreeBody& f : m_free) {
      const auto turn = body_frame(m_cfg.bodies[std::size_t(f.body)], L::D, f.motion.rotation);
      InnerMomentum<L::D, R> k{};
      k.node = m_node;
      k.shape = f.shape;
      k.scale = std::ldexp(1.0, f.bits[0]), k.arm_scale = std::ldexp(1.0, f.bits[1]);
      for (int d = 0; d < 3; ++d) {
        k.lo[d] = box.lo[d], k.n[d] = box.n[d];
        k.centre[d] = f.motion.centre[std::size_t(d)];
      }
      for (int i = 0; i < 9; ++i) k.turn[i] = turn[std::size_t(i)];
      FixedSums sum;
      Kokkos::parallel_reduce(
          "kolibri::ib_inner_momentum",
          Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<Index>>(m_exec, 0, box.cells()), k, sum);
      for (const std::int64_t v : sum.v) sums.push_back(v);
    }
    if (m_comm) m_comm->sum(sums);  // exact: integers
    for (std::size_t i = 0; i < m_free.size(); ++i) {
      FreeBody& f = m_free[i];
      const auto b = std::size_t(f.body);
      std::array<double, 6> inner{};
      for (std::size_t k = 0; k < 6; ++k)
        inner[k] = std::ldexp(double(sums[6 * i + k]), -f.bits[k < 3 ? 0 : 1]);
      FreeMotion& m = f.motion;
      const std::array<double, 3> before = m.velocity;
      if (m.started) {
        advance(m, m_cfg.bodies[b], f.inertia, m_volume[b], inner, m_setting);
      } else {
        m.inner = inner, m.started = true;
      }
      for (std::size_t d = 0; d < 3; ++d)
        m_velocity_change[b][d] = kept_change(b, d) + m.velocity[d] - before[d];
      BodyPose<R>& p = m_pose_host(b);
      for (int j = 0; j < 9; ++j) p.rot[j] = R(m.rotation[std::size_t(j)]);
      for (std::size_t d = 0; d < 3; ++d) {
        p.c[d] = R(m.centre[d]);
        p.v[d] = R(m.velocity[d]);
        p.w[d] = R(m.angular_velocity[d]);
      }
    }
  }

  /// Poses at time t (host; the domain's coordinates), and the node box around every body
  /// (clipped to this rank's own cells: its box without the ghost layers).
  NodeBox set_poses(std::int64_t t) {
    const int size[3] = {m_cfg.nx, m_cfg.ny, m_cfg.nz};
    double lo[3] = {1e300, 1e300, 1e300}, hi[3] = {-1e300, -1e300, -1e300};
    for (std::size_t b = 0; b < m_cfg.bodies.size(); ++b) {
      const bool free = m_free_slot[b] >= 0;
      // A free body's pose of the last step: it moves (less than half a cell) before its samples.
      const BodyState state = free ? m_free[std::size_t(m_free_slot[b])].motion.pose()
                                   : body_state(m_cfg.bodies[b], double(t));
      const double margin = free ? 1.0 : 0.0;
      if (!free) {
        const BodyState before = body_state(m_cfg.bodies[b], double(t - 1));
        for (std::size_t d = 0; d < 3; ++d)
          m_velocity_change[b][d] = kept_change(b, d) + state.velocity[d] - before.velocity[d];
      }
      BodyPose<R>& p = m_pose_host(b);
      for (int i = 0; i < 9; ++i) p.rot[i] = R(state.rotation[std::size_t(i)]);
      for (int d = 0; d < 3; ++d) {
        const double c = state.centre[std::size_t(d)];
        p.c[d] = R(c);
        p.v[d] = R(state.velocity[std::size_t(d)]);
        p.w[d] = R(state.angular_velocity[std::size_t(d)]);
        // Moving bodies: the bounding sphere; static ones: the samples' own box.
        lo[d] =
            std::min(lo[d], c + (m_moving ? -m_extent[b] - margin : m_bounds[b][std::size_t(d)]));
        hi[d] = std::max(hi[d],
                         c + (m_moving ? m_extent[b] + margin : m_bounds[b][3 + std::size_t(d)]));
      }
      p.weight = R(m_weight[b]);
    }
    NodeBox box;
    for (int d = 0; d < 3; ++d) {
      if (d >= L::D) {
        box.lo[d] = 0, box.n[d] = size[d];
        continue;
      }
      const int o = m_cfg.part.origin[std::size_t(d)];
      box.origin[d] = o;
      const int own_lo = o + m_cfg.part.ghost[std::size_t(2 * d)],
                own_hi = o + size[d] - m_cfg.part.ghost[std::size_t(2 * d + 1)];
      const std::array<int, 2> span = node_span(lo[d], hi[d]);
      const int a = std::max(own_lo, span[0]), e = std::min(own_hi, span[1] + 1);
      box.lo[d] = a, box.n[d] = std::max(0, e - a);
    }
    return box;
  }

  // FIXME_CUDA: nvcc refuses extended lambdas in private member functions and private nested
  // types as kernel functors: what follows is public but not part of the interface.
 public:
  /// Clear the force in a box: at the nodes the stencils reached (`reached_only`, when the
  /// list of them is kept for this box), or at every node.
  void zero(const NodeBox& box, const bool reached_only) {
    if (box.cells() == 0) return;
    const auto force = m_force;
    const GridCells grid = DenseGrid::of(m_cfg);
    const Index cells = grid.cells();
    for_nodes(
        "kolibri::ib_zero", box, reached_only, KOKKOS_LAMBDA(const Index i) {
          const Index n = box.global(i, grid);
          for (int d = 0; d < 3; ++d) force(d * cells + n) = R(0);
        });
  }

  /// List the nodes of `box` that some sample's stencil reaches (all its nodes, whatever their
  /// weight), in the box's order: the only nodes whose node-table values and implicit-forcing
  /// factors are read, and the only ones whose force can be non-zero (gathering adds 0
  /// elsewhere). Listed again only when the box changed or a body moves.
  /// Not kept with free bodies, whose motion sums the fluid at every node inside them.
  void mark_reached(const NodeBox& box, const Boundary<L, R>& bc) {
    if (m_reached_box == box && !m_moving && m_reached_list.data() != nullptr) return;
    const Index nb = box.cells();
    if (Index(m_reached.extent(0)) < nb) {
      const auto size = std::size_t(nb * 5 / 4 + 64);
      m_reached = Kokkos::View<int*, MemSpace>("kolibri::ib_reached", size);
      m_reached_list = Kokkos::View<Index*, MemSpace>("kolibri::ib_reached_list", size);
    }
    using Range = Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<Index>>;
    const auto reached = m_reached;
    Kokkos::parallel_for(
        "kolibri::ib_reached_clear", Range(m_exec, 0, nb),
        KOKKOS_LAMBDA(const Index i) { reached(i) = 0; });
    Kokkos::parallel_for("kolibri::ib_reached", Range(m_exec, 0, m_stats.samples),
                         MarkReached{grid(box, bc), m_reached});
    Kokkos::parallel_scan("kolibri::ib_reached_list", Range(m_exec, 0, nb),
                          ListReached{m_reached, m_reached_list}, m_reached_count);
    m_reached_box = box;
  }

  /// Runs f(i) over the nodes i of `box` the stencils reach, when `reached_only` and their list
  /// is kept for this box (mark_reached), else over every node of the box.
  template <class F>
  void for_nodes(const char* name, const NodeBox& box, const bool reached_only, const F& f) {
    using Range = Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<Index>>;
    if (reached_only && m_free.empty() && m_reached_box == box && m_reached_list.data() != nullptr)
      Kokkos::parallel_for(name, Range(m_exec, 0, m_reached_count), OnList<F>{f, m_reached_list});
    else
      Kokkos::parallel_for(name, Range(m_exec, 0, box.cells()), f);
  }

  /// Gathering: bin the samples by the base node of their stencil (counting sort on the device),
  /// then one thread per node sums the forces of the samples whose stencil covers it.
  void gather_forces(const NodeBox& box, const Boundary<L, R>& bc) {
    const Index nbc = box.cells(), ns = m_stats.samples;
    if (Index(m_count.extent(0)) < nbc + 1) m_count = Kokkos::View<Index*, MemSpace>("kolibri::ib_bins", std::size_t(nbc + 1));
    counting_sort(m_exec, ns, nbc, m_key, m_count, m_slot, m_list);
    using Range = Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<Index>>;
    const GatherNodes g{{grid(box, bc)}, m_sample_force, m_count, m_list};
    Kokkos::parallel_for("kolibri::ib_gather", Range(m_exec, 0, nbc), g);
    if (m_stats.steps == 0) {  // loop counts of the first step (chen2022 Table 1)
      Kokkos::MinMaxScalar<int> m;
      Kokkos::parallel_reduce("kolibri::ib_gather_loops", Range(m_exec, 0, nbc),
                              typename GatherNodes::Loops{g}, Kokkos::MinMax<int>(m));
      m_stats.loops_min = m.max_val > 0 ? m.min_val : 0, m_stats.loops_max = std::max(0, m.max_val);
    }
  }

  /// Density and velocity (without the immersed force) of the populations the coming step
  /// collides, for every cell of the node box: 4 values a node, value-major. `Outflow`: the run
  /// has outflow faces, and the boundary cells' gather takes their rule (Boundary::pull).
  template <bool Outflow, class Departing>
  struct Nodes {
    Departing dep;  ///< dep(m, j): the post-collision population j of cell m
    bool own;       ///< the cell's own dep(n, q) (in place before a local step)
    Boundary<L, R> bc;
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
      const bool fast =
          bc.flags(n) == kFluid || bc.flags(n) == kFluidBorder;  // the fluid kernels' fast path
      if (own) {
        for (int q = 0; q < L::Q; ++q) f[q] = dep(n, q);
      } else if (fast) {
        const Rows rows = bc.grid.rows(n);
        for (int q = 0; q < L::Q; ++q) f[q] = dep(rows.upwind<L>(q), q);
      } else {
        bc.template pull<Outflow>(n, bc.links ? bc.links[n] : 0u, f, dep);
      }
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

    /// The interpolation stencil of sample s where its body is this step.
    KOKKOS_INLINE_FUNCTION Stencil<L::D, R> stencil(const Index s) const {
      R r[3], x[3];
      pose(body(s)).place(ref, s, r, x);
      return Stencil<L::D, R>(x);
    }
    /// The cell of stencil node c, or -1 outside the node box.
    KOKKOS_INLINE_FUNCTION Index cell(const int (&c)[3]) const {
      return box.local(c[0], c[1], c[2]) < 0 ? -1 : box.cell_of(c, grid);
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

  /// Counts, at each box node, the stencils that reach it (atomic: several samples share nodes).
  struct MarkReached : SampleGrid {
    Kokkos::View<int*, MemSpace> reached;
    KOKKOS_INLINE_FUNCTION void operator()(const Index s) const {
      const Stencil<L::D, R> st = this->stencil(s);
      for (int k = 0; k < Stencil<L::D, R>::count; ++k) {
        int c[3];
        st.node(k, c);
        const Index i = this->box.local(c[0], c[1], c[2]);
        if (i >= 0) Kokkos::atomic_add(&reached(i), 1);
      }
    }
  };
  /// The marked nodes' indices, in order (a scan).
  struct ListReached {
    Kokkos::View<const int*, MemSpace> reached;
    Kokkos::View<Index*, MemSpace> list;
    KOKKOS_INLINE_FUNCTION void operator()(const Index i, Index& at, const bool final) const {
      if (reached(i) == 0) return;
      if (final) list(at) = i;
      ++at;
    }
  };
  /// A node kernel run over a list of nodes.
  template <class F>
  struct OnList {
    F f;
    Kokkos::View<const Index*, MemSpace> list;
    KOKKOS_INLINE_FUNCTION void operator()(const Index j) const { f(list(j)); }
  };

  /// One pass over the samples: interpolate, penalty force, spread (scatter) or store (gather,
  /// later passes); adds each sample's force to its total over the passes (the loads' source).
  /// On several ranks a shared sample reads its row of the node table instead of the nodes.
  struct Samples : SampleGrid {
    Kokkos::View<const R*, MemSpace> node;
    Kokkos::View<R* [3], MemSpace> sample_force;
    Kokkos::View<Index*, MemSpace> key;
    Kokkos::View<double* [3], MemSpace> total;  ///< each sample's force summed over the passes
    Kokkos::View<const Index*, MemSpace>
        row;                           ///< several ranks: a shared sample's table row, or -1
    Kokkos::View<R*, MemSpace> table;  ///< several ranks: the shared samples' stencil nodes (rows)
    int pass;
    bool keep;  ///< the first pass adds to the totals too (keep_totals)
    bool scatter;
    bool owns_shared;  ///< this rank counts the shared samples' forces in the totals (rank 0)

    /// Density and velocity (with half the force so far on later passes) of stencil node c, when
    /// it lies in the node box.
    KOKKOS_INLINE_FUNCTION bool node_at(const int (&c)[3], R& rn, R (&v)[3]) const {
      const Index i = this->box.local(c[0], c[1], c[2]);
      if (i < 0) return false;
      const Index nb = this->box.cells();
      rn = node(i);
      const Index cn = this->box.cell_of(c, this->grid);  // in the box (i >= 0)
      for (int d = 0; d < 3; ++d) {
        v[d] = node((1 + d) * nb + i);
        if (pass > 0) v[d] += R(0.5) * this->force(d * this->cells + cn) / rn;
      }
      return true;
    }
    /// Stencil node k of a sample as the interpolation reads it: from the nodes, or for a shared
    /// sample from its table row `j` (entry 5k: 1 where some rank holds the node, then rho and u).
    KOKKOS_INLINE_FUNCTION bool read(const Index j, const int k, const int (&c)[3], R& rn,
                                     R (&v)[3]) const {
      if (j < 0) return node_at(c, rn, v);
      const Index e = j * kTable + 5 * k;
      if (table(e) == R(0)) return false;
      rn = table(e + 1);
      for (int d = 0; d < 3; ++d) v[d] = table(e + 2 + d);
      return true;
    }

    KOKKOS_INLINE_FUNCTION void operator()(const Index s) const {
      const BodyPose<R>& p = this->pose(this->body(s));
      R r[3], x[3], ub[3];
      p.place(this->ref, s, r, x);
      ub[0] = p.v[0] + p.w[1] * r[2] - p.w[2] * r[1];
      ub[1] = p.v[1] + p.w[2] * r[0] - p.w[0] * r[2];
      ub[2] = p.v[2] + p.w[0] * r[1] - p.w[1] * r[0];
      const Stencil<L::D, R> st(x);
      const Index j = row.extent(0) > 0 ? row(s) : Index(-1);
      R rho = R(0), u[3] = {R(0), R(0), R(0)}, wsum = R(0);
      for (int k = 0; k < Stencil<L::D, R>::count; ++k) {
        int c[3];
        const R w = st.node(k, c);
        R rn, v[3];
        if (!read(j, k, c, rn, v)) continue;
        wsum += w;
        rho += w * rn;
        for (int d = 0; d < 3; ++d) u[d] += w * v[d];
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
      // A sample that is not this rank's (a stencil on other ranks: g = 0 here) adds nothing.
      const bool counted = j < 0 || owns_shared;
      for (int d = 0; d < 3; ++d)
        total(s, d) = (pass > 0 || keep ? total(s, d) : 0.0) + (counted ? double(g[d]) : 0.0);
    }
  };

  /// Scattering of stored sample forces (passes after the first).
  struct Spread : SampleGrid {
    Kokkos::View<const R* [3], MemSpace> sample_force;
    KOKKOS_INLINE_FUNCTION void operator()(const Index s) const {
      const R g[3] = {sample_force(s, 0), sample_force(s, 1), sample_force(s, 2)};
      this->spread(this->stencil(s), g);
    }
  };

  /// The implicit forcing's nodes: d_n = 1 / (2 rho_n), 0 at solid nodes (they take no force).
  struct CouplingNodes {
    Kokkos::View<const R*, MemSpace> node;
    Kokkos::View<const Flag*, MemSpace> flags;
    GridCells grid;
    NodeBox box;
    Kokkos::View<double*, MemSpace> factor;
    KOKKOS_INLINE_FUNCTION void operator()(const Index i) const {
      factor(i) = flags(box.global(i, grid)) == kSolid ? 0.0 : 0.5 / double(node(i));
    }
  };

  /// The implicit forcing's samples: stencil, weight sum W over the nodes that take a force
  /// (fluid nodes in the box: what the spreading reaches), right-hand side W u_b - sum w u* over
  /// those nodes, and the first guess (the first direct-forcing pass's force).
  struct CouplingSamples : SampleGrid {
    Kokkos::View<const R*, MemSpace> node;
    Kokkos::View<int* [3], MemSpace> base;
    Kokkos::View<double*[3], MemSpace> frac, rhs, guess;
    Kokkos::View<double*, MemSpace> weight_sum;
    bool warm = false;  ///< `guess` holds the last step's solution: keep it
    KOKKOS_INLINE_FUNCTION void operator()(const Index s) const {
      const BodyPose<R>& p = this->pose(this->body(s));
      R r[3], x[3];
      p.place(this->ref, s, r, x);
      const double ub[3] = {double(p.v[0] + p.w[1] * r[2] - p.w[2] * r[1]),
                            double(p.v[1] + p.w[2] * r[0] - p.w[0] * r[2]),
                            double(p.v[2] + p.w[0] * r[1] - p.w[1] * r[0])};
      const Stencil<L::D, R> st(x);
      const Index nb = this->box.cells();
      double rho = 0.0, u[3] = {0.0, 0.0, 0.0}, wsum = 0.0;
      for (int k = 0; k < Stencil<L::D, R>::count; ++k) {
        int c[3];
        const double w = double(st.node(k, c));
        const Index i = this->box.local(c[0], c[1], c[2]);
        if (i < 0 || this->flags(this->box.cell_of(c, this->grid)) == kSolid) continue;
        wsum += w;
        rho += w * double(node(i));
        for (int d = 0; d < 3; ++d) u[d] += w * double(node((1 + d) * nb + i));
      }
      for (int d = 0; d < 3; ++d) {
        base(s, d) = st.base[d];
        frac(s, d) = double(st.frac[d]);
        const bool moves = d < L::D && wsum > 0.0;
        rhs(s, d) = moves ? wsum * ub[d] - u[d] : 0.0;
        if (!warm)
          guess(s, d) = moves ? 2.0 * (rho / wsum) * (ub[d] - u[d] / wsum) * double(p.weight) : 0.0;
      }
      weight_sum(s) = wsum;
    }
  };

  /// The implicit forcing's per-sample arrays for ns samples (a new allocation starts cold).
  void reserve_coupling(const Index ns) {
    if (Index(m_coupling_rhs.extent(0)) >= ns) return;
    const auto n = std::size_t(ns);
    m_coupling_base = Kokkos::View<int* [3], MemSpace>("kolibri::ib_coupling_base", n);
    m_coupling_frac = Kokkos::View<double* [3], MemSpace>("kolibri::ib_coupling_frac", n);
    m_coupling_rhs = Kokkos::View<double* [3], MemSpace>("kolibri::ib_coupling_rhs", n);
    m_coupling_force = Kokkos::View<double* [3], MemSpace>("kolibri::ib_coupling_force", n);
    m_coupling_wsum = Kokkos::View<double*, MemSpace>("kolibri::ib_coupling_wsum", n);
    m_coupling_warm = false;
  }

  /// The implicit forcing of a step: the system's parts on the device, the solve
  /// (CouplingSystem), then each sample's force stored, counted and spread.
  void solve_coupling(const NodeBox& box, const Boundary<L, R>& bc) {
    const Index ns = m_stats.samples;
    using Range = Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<Index>>;
    reserve_coupling(ns);
    if (Index(m_node_factor.extent(0)) < box.cells())
      m_node_factor = Kokkos::View<double*, MemSpace>("kolibri::ib_node_factor",
                                                      std::size_t(box.cells() * 5 / 4 + 64));
    const SampleGrid g = grid(box, bc);
    for_nodes("kolibri::ib_coupling_nodes", box, true,
              CouplingNodes{m_node, bc.flags, bc.grid, box, m_node_factor});
    Kokkos::parallel_for(
        "kolibri::ib_coupling_samples", Range(m_exec, 0, ns),
        CouplingSamples{g, m_node, m_coupling_base, m_coupling_frac, m_coupling_rhs,
                        m_coupling_force, m_coupling_wsum, m_coupling_warm});
    m_join.join(m_exec, ExecSpace());  // the solve runs on the default instance
    CouplingProblem p;
    p.dims = L::D;
    for (int d = 0; d < 3; ++d) p.lo[d] = box.lo[d], p.n[d] = box.n[d];
    p.base = m_coupling_base, p.frac = m_coupling_frac, p.node_factor = m_node_factor;
    p.rhs = m_coupling_rhs, p.weight_sum = m_coupling_wsum, p.force = m_coupling_force;
    p.stencils_static = !m_moving;
    const CouplingReport rep =
        m_coupling.solve(p, m_cfg.ib.tolerance, m_cfg.ib.max_iterations, m_cfg.ib.check_every);
    m_join.join(ExecSpace(), m_exec);
    m_coupling_warm = m_cfg.ib.warm_start;
    m_stats.solver_iterations += rep.iterations;
    m_stats.solver_iterations_max = std::max(m_stats.solver_iterations_max, rep.iterations);
    m_stats.solver_residual_max = std::max(m_stats.solver_residual_max, rep.residual);
    m_stats.slip_max = std::max(m_stats.slip_max, rep.slip);
    m_stats.unconverged_steps += rep.converged ? 0 : 1;
    m_stats.coupling_nonzeros = std::max(m_stats.coupling_nonzeros, rep.nonzeros);
    // The loads count what the spreading delivers: the stored force times the weights of the
    // nodes that take it (W; 1 for a stencil wholly in fluid).
    const auto force = m_coupling_force;
    const auto stored = m_sample_force;
    const auto total = m_total;
    const auto wsum = m_coupling_wsum;
    const bool keep = m_keep_totals;
    Kokkos::parallel_for(
        "kolibri::ib_coupling_store", Range(m_exec, 0, ns), KOKKOS_LAMBDA(const Index s) {
          for (int d = 0; d < 3; ++d) {
            stored(s, d) = R(force(s, d));
            total(s, d) = (keep ? total(s, d) : 0.0) + double(stored(s, d)) * wsum(s);
          }
        });
    Kokkos::parallel_for("kolibri::ib_spread", Range(m_exec, 0, ns), Spread{g, m_sample_force});
  }

  /// Several ranks: this rank's part of the shared samples' rows of the node table (its own
  /// stencil nodes; zeros elsewhere).
  struct FillTable {
    Samples k;
    Kokkos::View<const Index*, MemSpace> sample;  ///< the sample of each row
    KOKKOS_INLINE_FUNCTION void operator()(const Index j) const {
      const Stencil<L::D, R> st = k.stencil(sample(j));
      for (int n = 0; n < Stencil<L::D, R>::count; ++n) {
        int c[3];
        st.node(n, c);
        R rn = R(0), v[3] = {R(0), R(0), R(0)};
        const bool mine = k.node_at(c, rn, v);
        const Index e = j * kTable + 5 * n;
        k.table(e) = mine ? R(1) : R(0);
        k.table(e + 1) = mine ? rn : R(0);
        for (int d = 0; d < 3; ++d) k.table(e + 2 + d) = mine ? v[d] : R(0);
      }
    }
  };

  /// Several ranks: fill this rank's part of the shared rows, then sum them over the ranks
  /// (through the host), so that every rank reads every shared sample's whole stencil.
  void share_node_table(const Samples& k) {
    const Index rows = m_shared;
    Kokkos::parallel_for("kolibri::ib_node_table",
                         Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<Index>>(m_exec, 0, rows),
                         FillTable{k, m_shared_sample});
    const auto part = Kokkos::subview(m_table, std::make_pair(Index(0), rows * kTable));
    const auto h = Kokkos::subview(m_table_host, std::make_pair(Index(0), rows * kTable));
    Kokkos::deep_copy(m_exec, h, part);
    m_exec.fence();
    m_table_sum.assign(h.data(), h.data() + rows * kTable);
    m_comm->sum(m_table_sum);
    std::copy(m_table_sum.begin(), m_table_sum.end(), h.data());
    Kokkos::deep_copy(m_exec, part, h);
  }

  /// Several ranks: the rank slab of each domain cell along each axis, from every rank's box.
  void set_slabs(const Distribution& dist) {
    std::vector<int> host;
    for (int d = 0; d < 3; ++d) {
      const int size = m_cfg.global_n(d);
      m_domain[d] = size;
      std::vector<int> starts;
      for (const Box& b : dist.boxes) starts.push_back(b.lo[std::size_t(d)]);
      std::sort(starts.begin(), starts.end());
      for (int x = 0; x < size; ++x)
        host.push_back(int(std::upper_bound(starts.begin(), starts.end(), x) - starts.begin()));
    }
    m_slab = Kokkos::View<int*, MemSpace>("kolibri::ib_slabs", host.size());
    Kokkos::deep_copy(m_slab,
                      Kokkos::View<const int*, Kokkos::HostSpace>(host.data(), host.size()));
  }

  /// Several ranks: which samples' stencils cross a rank border (node pairs in the domain on
  /// two slabs of an axis), and their table rows. Static bodies: once.
  struct SharedRows {
    SampleGrid samples;  ///< the samples and poses (no node box needed)
    Kokkos::View<const int*, MemSpace> slab;
    int domain[3];
    Kokkos::View<Index*, MemSpace> row, sample;
    KOKKOS_INLINE_FUNCTION bool crosses(const Index s) const {
      const Stencil<L::D, R> st = samples.stencil(s);
      int offset = 0;
      for (int d = 0; d < L::D; ++d) {
        const int a = st.base[d];
        if (a >= 0 && a + 1 < domain[d] && slab(offset + a) != slab(offset + a + 1)) return true;
        offset += domain[d];
      }
      return false;
    }
    KOKKOS_INLINE_FUNCTION void operator()(const Index s, Index& next, const bool last) const {
      const bool shared = crosses(s);
      if (last) {
        row(s) = shared ? next : Index(-1);
        if (shared) sample(next) = s;
      }
      next += shared ? 1 : 0;
    }
  };

  void find_shared_samples() {
    if (!m_moving && m_stats.steps > 0) return;  // static bodies: the rows stay
    const Index ns = m_stats.samples;
    if (m_row.extent(0) == 0) {
      m_row = Kokkos::View<Index*, MemSpace>("kolibri::ib_sample_row", ns);
      m_shared_sample = Kokkos::View<Index*, MemSpace>("kolibri::ib_shared_sample", ns);
    }
    Index shared = 0;
    Kokkos::parallel_scan("kolibri::ib_shared_rows",
                          Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<Index>>(m_exec, 0, ns),
                          SharedRows{{m_ref, m_body, m_pose, NodeBox{}, m_force, 0, {}, {}},
                                     m_slab,
                                     {m_domain[0], m_domain[1], m_domain[2]},
                                     m_row,
                                     m_shared_sample},
                          shared);
    m_shared = shared;
    if (Index(m_table.extent(0)) < shared * kTable) {
      m_table = Kokkos::View<R*, MemSpace>("kolibri::ib_node_table",
                                           std::size_t((shared * 5 / 4 + 16) * kTable));
      m_table_host = Kokkos::create_mirror_view(m_table);
    }
    m_stats.shared_samples = std::max(m_stats.shared_samples, std::int64_t(shared));
  }

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
      visit(i, [&](const Index s, const int(&o)[3]) {
        int c[3];
        const R w = this->stencil(s).node(o[0] + 2 * o[1] + 4 * o[2], c);
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
  SampleGrid grid(const NodeBox& box, const Boundary<L, R>& bc) const {
    return {m_ref, m_body, m_pose, box, m_force, m_cells, bc.flags, bc.grid};
  }
  /// The poses onto the device, when they may have changed.
  void upload_poses() {
    if (m_moving || m_stats.steps == 0) Kokkos::deep_copy(m_pose, m_pose_host);
  }

 private:
  static constexpr int kTable = 5 * Stencil<L::D, R>::count;  ///< node-table entries a sample
  SolverConfig m_cfg;
  ExecSpace m_exec{};                    ///< the level's instance
  const Comm* m_comm = nullptr;          ///< several ranks: the node table is shared over them
  Kokkos::View<int*, MemSpace> m_slab;   ///< several ranks: slabs of the domain's cells
  int m_domain[3] = {0, 0, 0};           ///< several ranks: the domain's extent
  Kokkos::View<Index*, MemSpace> m_row;  ///< several ranks: table row of a shared sample, or -1
  Kokkos::View<Index*, MemSpace> m_shared_sample;  ///< several ranks: the sample of each row
  Index m_shared = 0;                              ///< several ranks: shared samples this step
  Kokkos::View<R*, MemSpace> m_table;  ///< several ranks: the shared rows, kTable values each
  typename Kokkos::View<R*, MemSpace>::HostMirror m_table_host;
  std::vector<double> m_table_sum;  ///< several ranks: the rows as the ranks sum them
  typename Kokkos::View<R* [3], MemSpace>::HostMirror
      m_ref_host;                               ///< the samples (the loads' arms)
  Kokkos::View<double* [3], MemSpace> m_total;  ///< each sample's force summed over the passes
  mutable HostTotals m_total_host;              ///< sample_totals()'s copy (a view of its own)
  mutable std::vector<double> m_total_sum;      ///< several ranks: the totals as the ranks sum them
  std::vector<std::int64_t> m_offset;
  std::vector<double> m_weight, m_extent;
  std::vector<double> m_volume;                          ///< what each body encloses (cells^3)
  std::vector<std::array<double, 3>> m_velocity_change;  ///< each body's over the last step
  std::vector<std::array<double, 6>> m_bounds;
  bool m_moving = false;
  bool m_keep_totals = false;    ///< keep_totals
  bool m_layer_faces = false;    ///< some face reads its layer (FaceBC::from_layer; Nodes<true>)
  std::vector<FreeBody> m_free;  ///< in body order
  std::vector<int> m_free_slot;  ///< per body: its place in m_free, or -1
  MotionSetting m_setting;
  int m_passes = 1;
  Kokkos::View<R* [3], MemSpace> m_ref, m_sample_force;
  Kokkos::View<int*, MemSpace> m_body, m_slot;
  Kokkos::View<BodyPose<R>*, MemSpace> m_pose;
  typename Kokkos::View<BodyPose<R>*, MemSpace>::HostMirror m_pose_host;
  Kokkos::View<R*, MemSpace> m_force, m_node;
  Index m_cells = 0;  ///< the grid's cells (m_force: 3 values each, component-major)
  Kokkos::View<Index*, MemSpace> m_key, m_list, m_count;
  NodeBox m_box;
  /// The nodes of m_reached_box some stencil reaches: counts, and their list (mark_reached).
  Kokkos::View<int*, MemSpace> m_reached;
  Kokkos::View<Index*, MemSpace> m_reached_list;
  Index m_reached_count = 0;
  NodeBox m_reached_box;
  IbStats m_stats;
  // The implicit forcing: the system's parts, the solution, and the solver's work arrays.
  Kokkos::View<int* [3], MemSpace> m_coupling_base;
  Kokkos::View<double*[3], MemSpace> m_coupling_frac, m_coupling_rhs, m_coupling_force;
  /// m_coupling_force holds the last step's solution, the next solve's first guess
  /// (ib.warm_start); else the guess is the first direct-forcing pass's force.
  bool m_coupling_warm = false;
  Kokkos::View<double*, MemSpace> m_coupling_wsum, m_node_factor;
  CouplingSystem m_coupling;
  StreamJoin m_join;  ///< orders the coupling's solve (default instance) and this one's work
};

}  // namespace kolibri
