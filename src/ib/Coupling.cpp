// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The implicit forcing's coupling system: assembly on the device and the
/// preconditioned conjugate gradients on Kokkos Kernels (ib/Coupling.hpp).
#include <kolibri/ib/Bins.hpp>
#include <kolibri/ib/Coupling.hpp>

#ifdef KOLIBRI_HAVE_KOKKOS_KERNELS
#if defined(__GNUC__) && !defined(__clang__)
// Kokkos Kernels 3.4's multivector spmv (Debian's) leaves a member of its transpose functor
// unset on the host path (a range policy), which never reads it; GCC 12 at -O3 flags the copy.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <KokkosSparse_CrsMatrix.hpp>
#include <KokkosSparse_spmv.hpp>
#include <Kokkos_Graph.hpp>
#endif

#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>

namespace kolibri {

#ifdef KOLIBRI_HAVE_KOKKOS_KERNELS
namespace {

using Device = Kokkos::Device<ExecSpace, MemSpace>;
using Matrix = KokkosSparse::CrsMatrix<double, int, Device, void, Index>;
using Range = Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<Index>>;

/// \brief The samples' stencils over the node box, and the bins that find a sample's
/// neighbours: the samples whose stencils share a node with it have their base nodes at most
/// one node away, in the 3^dims bins around its own (bins: the box grown by a node a side).
struct Stencils {
  int dims = 3;
  int lo[3] = {0, 0, 0}, n[3] = {0, 0, 0};         ///< the node box
  int bin_lo[3] = {0, 0, 0}, bins[3] = {1, 1, 1};  ///< the bins' origin and extent
  Kokkos::View<const int* [3], MemSpace> base;
  Kokkos::View<const double* [3], MemSpace> frac;
  Kokkos::View<const double*, MemSpace> factor;
  Kokkos::View<const Index*, MemSpace> start;  ///< the bins' first entries in `list`
  Kokkos::View<const int*, MemSpace> list;     ///< the samples, bin by bin

  explicit Stencils(const CouplingProblem& p)
      : dims(p.dims), base(p.base), frac(p.frac), factor(p.node_factor) {
    for (int d = 0; d < 3; ++d) {
      lo[d] = p.lo[d], n[d] = p.n[d];
      bin_lo[d] = d < dims ? p.lo[d] - 1 : 0;
      bins[d] = d < dims ? p.n[d] + 2 : 1;
    }
  }
  Index bin_count() const { return Index(bins[0]) * bins[1] * bins[2]; }

  /// The bin of sample s, or -1 (a sample whose stencil misses the box).
  KOKKOS_INLINE_FUNCTION Index bin_of(const Index s) const {
    Index b = 0;
    for (int d = 2; d >= 0; --d) {
      const int a = base(s, d) - bin_lo[d];
      if (a < 0 || a >= bins[d]) return -1;
      b = b * bins[d] + a;
    }
    return b;
  }
  /// Domain node c lies in the box.
  KOKKOS_INLINE_FUNCTION bool in_box(const int (&c)[3]) const {
    for (int d = 0; d < 3; ++d)
      if (c[d] < lo[d] || c[d] >= lo[d] + n[d]) return false;
    return true;
  }
  /// d_n of domain node c (0 outside the box).
  KOKKOS_INLINE_FUNCTION double factor_at(const int (&c)[3]) const {
    Index i = 0;
    for (int d = 2; d >= 0; --d) {
      const int a = c[d] - lo[d];
      if (a < 0 || a >= n[d]) return 0.0;
      i = i * n[d] + a;
    }
    return factor(i);
  }
  /// sum over the nodes both stencils hold of w_in w_jn f(node). The shared nodes are walked
  /// in the domain's order and each weight is a product of the pairs w_i,d w_j,d, so the sum
  /// for (i, j) and for (j, i) is the same bits.
  template <class NodeFactor>
  KOKKOS_INLINE_FUNCTION double weighted_overlap(const Index i, const Index j,
                                                 const NodeFactor& f) const {
    int from[3], to[3];  // the shared nodes along each axis (empty: from > to)
    for (int d = 0; d < 3; ++d) {
      const int a = base(i, d), b = base(j, d);
      from[d] = a > b ? a : b;
      to[d] = d < dims ? (a < b ? a : b) + 1 : from[d];
    }
    double sum = 0.0;
    for (int z = from[2]; z <= to[2]; ++z)
      for (int y = from[1]; y <= to[1]; ++y)
        for (int x = from[0]; x <= to[0]; ++x) {
          const int c[3] = {x, y, z};
          double w = 1.0;
          for (int d = 0; d < dims; ++d) {
            const double wi = c[d] > base(i, d) ? frac(i, d) : 1.0 - frac(i, d);
            const double wj = c[d] > base(j, d) ? frac(j, d) : 1.0 - frac(j, d);
            w *= wi * wj;
          }
          sum += w * f(c);
        }
    return sum;
  }
  /// M_ij = sum_n w_in w_jn d_n (M is exactly symmetric).
  KOKKOS_INLINE_FUNCTION double overlap(const Index i, const Index j) const {
    return weighted_overlap(i, j, [&](const int(&c)[3]) { return factor_at(c); });
  }
  /// The stencils of i and j share a node of the box with weight in both: M_ij is an entry of
  /// the pattern. The pattern depends on the stencils and the box only (not on d_n, which
  /// changes every step, nor on which nodes are solid: their entries are stored as zeros).
  KOKKOS_INLINE_FUNCTION bool shares(const Index i, const Index j) const {
    return weighted_overlap(i, j, [&](const int(&c)[3]) { return in_box(c) ? 1.0 : 0.0; }) != 0.0;
  }
  /// Calls fn(j) for every sample j in the bins around sample i's (i itself included).
  template <class Fn>
  KOKKOS_INLINE_FUNCTION void neighbours(const Index i, const Fn& fn) const {
    const Index own = bin_of(i);
    if (own < 0) return;
    int at[3];
    Index rest = own;
    for (int d = 0; d < 3; ++d) at[d] = int(rest % bins[d]), rest /= bins[d];
    const int reach[3] = {dims > 0 ? 1 : 0, dims > 1 ? 1 : 0, dims > 2 ? 1 : 0};
    for (int z = -reach[2]; z <= reach[2]; ++z)
      for (int y = -reach[1]; y <= reach[1]; ++y)
        for (int x = -reach[0]; x <= reach[0]; ++x) {
          const int b[3] = {at[0] + x, at[1] + y, at[2] + z};
          bool inside = true;
          for (int d = 0; d < 3; ++d) inside = inside && b[d] >= 0 && b[d] < bins[d];
          if (!inside) continue;
          const Index bin = (Index(b[2]) * bins[1] + b[1]) * bins[0] + b[0];
          for (Index e = start(bin); e < start(bin + 1); ++e) fn(Index(list(e)));
        }
  }
};

/// \brief A row's length: the samples whose stencils it shares a node of the box with (itself
/// included), or 1 for a sample whose stencil misses the box (its row is the identity, its force
/// 0), into row_map(i + 1). Counted in a launch of its own, not inside the scan: Kokkos' scan
/// calls its functor in two passes, and those two passes were about 0.3 ms of the implicit
/// forcing's 1 ms step when the pattern was built every step (Nsight Compute,
/// docs/performance.md).
struct RowLength {
  Stencils st;
  Kokkos::View<Index*, MemSpace> row_map;
  KOKKOS_INLINE_FUNCTION void operator()(const Index i) const {
    Index len = 0;
    if (st.shares(i, i)) {
      st.neighbours(i, [&](const Index j) { len += st.shares(i, j) ? 1 : 0; });
    } else {
      len = 1;
    }
    row_map(i + 1) = len;
  }
};

/// \brief The row offsets from the lengths RowLength left in row_map(1..ns): an inclusive sum
/// over row_map(0..ns) with row_map(0) = 0, so row_map(ns) is the number of entries.
struct RowOffsets {
  Kokkos::View<Index*, MemSpace> row_map;
  KOKKOS_INLINE_FUNCTION void operator()(const Index i, Index& sum, const bool last) const {
    sum += i == 0 ? Index(0) : row_map(i);
    if (last) row_map(i) = sum;
  }
};

/// \brief A row's pattern: its columns in order, and the row of each entry (for FillValues).
struct FillPattern {
  Stencils st;
  Kokkos::View<const Index*, MemSpace> row_map;
  Kokkos::View<int*, MemSpace> rows, cols;
  KOKKOS_INLINE_FUNCTION void operator()(const Index i) const {
    const Index a = row_map(i);
    Index e = a;
    if (st.shares(i, i)) {
      st.neighbours(i, [&](const Index j) {
        if (st.shares(i, j)) cols(e++) = int(j);
      });
    } else {
      cols(e++) = int(i);
    }
    for (Index k = a + 1; k < e; ++k)  // insertion sort: a few dozen entries at a cell's spacing
      for (Index m = k; m > a && cols(m - 1) > cols(m); --m) {
        const int c = cols(m);
        cols(m) = cols(m - 1), cols(m - 1) = c;
      }
    for (Index k = a; k < e; ++k) rows(k) = int(i);
  }
};

/// \brief An entry's value M_ij for this step's d_n, and at the diagonal the inverse of M_ii
/// (the Jacobi preconditioner). A sample none of whose nodes takes a force (M_ii = 0, and then
/// its whole row and column are 0) gets the identity row and a preconditioner of 0, which keeps
/// its zero force out of the solve.
struct FillValues {
  Stencils st;
  Kokkos::View<const int*, MemSpace> rows, cols;
  Kokkos::View<double*, MemSpace> vals, diag_inv;
  KOKKOS_INLINE_FUNCTION void operator()(const Index e) const {
    const Index i = rows(e), j = cols(e);
    const double v = st.overlap(i, j);
    if (i != j) {
      vals(e) = v;
      return;
    }
    vals(e) = v > 0.0 ? v : 1.0;
    diag_inv(i) = v > 0.0 ? 1.0 / v : 0.0;
  }
};

/// \brief Compares the samples' stencils with those the pattern was built for (counting the
/// samples that moved) and keeps the new ones for the next step's comparison.
struct StencilsMoved {
  Kokkos::View<const int* [3], MemSpace> base;
  Kokkos::View<const double* [3], MemSpace> frac;
  Kokkos::View<int* [3], MemSpace> seen_base;
  Kokkos::View<double* [3], MemSpace> seen_frac;
  KOKKOS_INLINE_FUNCTION void operator()(const Index s, Index& moved) const {
    bool same = true;
    for (int d = 0; d < 3; ++d) {
      same = same && base(s, d) == seen_base(s, d) && frac(s, d) == seen_frac(s, d);
      seen_base(s, d) = base(s, d), seen_frac(s, d) = frac(s, d);
    }
    moved += same ? 0 : 1;
  }
};

/// \brief Three sums per velocity component, reduced in one launch (dot products of the CG),
/// and three values the reduction's last step (`final`, on the device) derives from them and
/// from other device arrays, so that one copy brings the host all it reads.
struct ComponentSums {
  double v[3][3];
  double after[3];  ///< set by `final` only (not summed)
  KOKKOS_INLINE_FUNCTION ComponentSums() : v{{0, 0, 0}, {0, 0, 0}, {0, 0, 0}}, after{0, 0, 0} {}
};

/// \brief The conjugate-gradient vectors of all components side by side (ns x 3, a column a
/// component: what KokkosSparse::spmv multiplies at once), and the Jacobi preconditioner D^-1:
/// residual r, preconditioned residual u = D^-1 r and w = M u, direction p and s = M p.
struct Vectors {
  using Block = Kokkos::View<double* [3], Kokkos::LayoutLeft, MemSpace>;
  Block b, x, r, u, w, p, s;
  Kokkos::View<const double*, MemSpace> dinv;
  int dims = 3;
};

/// \brief What the CG's reductions share: the vectors, and the sums' identity and join.
struct ComponentReduction {
  Vectors v;
  using value_type = ComponentSums;
  KOKKOS_INLINE_FUNCTION void init(ComponentSums& s) const { s = ComponentSums(); }
  KOKKOS_INLINE_FUNCTION void join(ComponentSums& a, const ComponentSums& c) const {
    for (int k = 0; k < 3; ++k)
      for (int d = 0; d < 3; ++d) a.v[k][d] += c.v[k][d];
  }
#if KOKKOS_VERSION < 40000  // Kokkos 3 joins through volatile references
  KOKKOS_INLINE_FUNCTION void join(volatile ComponentSums& a,
                                   const volatile ComponentSums& c) const {
    for (int k = 0; k < 3; ++k)
      for (int d = 0; d < 3; ++d) a.v[k][d] = a.v[k][d] + c.v[k][d];
  }
#endif
};

/// \brief b and the first guess x from the problem's right-hand sides and forces, and b.b of
/// every component (the second row of the sums), in one reduction. A row made the identity (no
/// node of its stencil takes a force) keeps b = 0 and x = 0.
struct RightHandSides : ComponentReduction {
  Kokkos::View<const double*[3], MemSpace> rhs, force;
  KOKKOS_INLINE_FUNCTION void operator()(const Index i, ComponentSums& s) const {
    const bool kept = v.dinv(i) > 0.0;
    for (int d = 0; d < 3; ++d) {
      v.b(i, d) = kept && d < v.dims ? rhs(i, d) : 0.0;
      v.x(i, d) = kept && d < v.dims ? force(i, d) : 0.0;
      s.v[1][d] += v.b(i, d) * v.b(i, d);
    }
  }
};

/// \brief After the solve, with r = b - M x: r.r of every component (first row, summed) and the
/// largest slip |r_i| / W_i it leaves at a sample (second row, the maximum; samples none of
/// whose nodes takes a force are left out), in one reduction.
struct ResidualAndSlip {
  Vectors v;
  Kokkos::View<const double*, MemSpace> weight;       ///< W_i
  Kokkos::View<const ComponentSums, MemSpace> norms;  ///< b.b of every component (row 1)
  Kokkos::View<const int[3], MemSpace> moved;         ///< the iterations each component moved
  using value_type = ComponentSums;
  KOKKOS_INLINE_FUNCTION void init(ComponentSums& s) const { s = ComponentSums(); }
  /// The rest of the solve's report in the same copy: b.b in the third row, the iterations in
  /// `after`.
  KOKKOS_INLINE_FUNCTION void final(ComponentSums& s) const {
    for (int d = 0; d < 3; ++d) s.v[2][d] = norms().v[1][d], s.after[d] = double(moved(d));
  }
  KOKKOS_INLINE_FUNCTION void join(ComponentSums& a, const ComponentSums& c) const {
    for (int d = 0; d < 3; ++d) {
      a.v[0][d] += c.v[0][d];
      a.v[1][d] = a.v[1][d] < c.v[1][d] ? c.v[1][d] : a.v[1][d];
    }
  }
#if KOKKOS_VERSION < 40000  // Kokkos 3 joins through volatile references
  KOKKOS_INLINE_FUNCTION void join(volatile ComponentSums& a,
                                   const volatile ComponentSums& c) const {
    for (int d = 0; d < 3; ++d) {
      a.v[0][d] = a.v[0][d] + c.v[0][d];
      a.v[1][d] = a.v[1][d] < c.v[1][d] ? c.v[1][d] : a.v[1][d];
    }
  }
#endif
  KOKKOS_INLINE_FUNCTION void operator()(const Index i, ComponentSums& s) const {
    for (int d = 0; d < v.dims; ++d) {
      s.v[0][d] += v.r(i, d) * v.r(i, d);
      const double slip = weight(i) > 0.0 ? math::fabs(v.r(i, d)) / weight(i) : 0.0;
      s.v[1][d] = s.v[1][d] < slip ? slip : s.v[1][d];
    }
  }
};

// The conjugate gradients in the Chronopoulos-Gear form (Chronopoulos and Gear 1989; theory.md,
// "Implicit forcing"): s = M p is carried by a recurrence, so the three dot products of an
// iteration (r.u, r.r, w.u) come from the rows of the product w = M u, and an iteration is two
// launches: CgStep and CgProductSums. The same iterates as the textbook form in exact
// arithmetic, which needs two reductions and four launches.

/// \brief u = D^-1 r.
struct CgPrecondition {
  Vectors v;
  KOKKOS_INLINE_FUNCTION void operator()(const Index i) const {
    for (int d = 0; d < v.dims; ++d) v.u(i, d) = v.dinv(i) * v.r(i, d);
  }
};

/// \brief The product w = M u, a row a thread over M's compressed rows (the CrsMatrix's
/// arrays), and from each row gamma = r.u, rho = r.r and delta = w.u of every component
/// (rows 0, 1, 2 of the sums): the product and the reduction in one launch, so that an
/// iteration is two kernels a graph can hold (KokkosSparse::spmv launches kernels of its own).
struct CgProductSums : ComponentReduction {
  Kokkos::View<const Index*, MemSpace> row_map;
  Kokkos::View<const int*, MemSpace> cols;
  Kokkos::View<const double*, MemSpace> vals;
  Kokkos::View<const ComponentSums, MemSpace> norms;  ///< b.b of every component (row 1)
  double tolerance2 = 0.0;
  /// after[0] = 1 when every component met its tolerance, r.r <= tolerance^2 b.b: the host's
  /// look at the residuals reads this one flag.
  KOKKOS_INLINE_FUNCTION void final(ComponentSums& s) const {
    bool settled = true;
    for (int d = 0; d < v.dims; ++d)
      settled = settled && !(s.v[1][d] > tolerance2 * norms().v[1][d]);
    s.after[0] = settled ? 1.0 : 0.0;
  }
  KOKKOS_INLINE_FUNCTION void operator()(const Index i, ComponentSums& s) const {
    double mu[3] = {0.0, 0.0, 0.0};
    for (Index e = row_map(i); e < row_map(i + 1); ++e) {
      const Index j = cols(e);
      const double a = vals(e);
      for (int d = 0; d < v.dims; ++d) mu[d] += a * v.u(j, d);
    }
    for (int d = 0; d < v.dims; ++d) {
      v.w(i, d) = mu[d];
      s.v[0][d] += v.r(i, d) * v.u(i, d);
      s.v[1][d] += v.r(i, d) * v.r(i, d);
      s.v[2][d] += mu[d] * v.u(i, d);
    }
  }
};

/// \brief A component's step as the device sees it, from the sums of this iteration (`now`)
/// and the last (`last`: its gamma) and the last step length (`alpha_in`):
/// beta = gamma / gamma_last, alpha = gamma / (delta - beta gamma / alpha_last). A component
/// whose last step length is 0 (the first iteration, or it stood still in the last) restarts:
/// beta = 0, p = u, and p.Mp = delta computed afresh. A component whose residual met the
/// tolerance, or whose p.Mp is not positive (a direction M does not see, or the recurrence's
/// cancellation near convergence), stands still for the iteration and restarts in the next. The
/// coefficients come from the device sums, so an iteration needs no host synchronisation.
struct CgScalars {
  using Sums = Kokkos::View<const ComponentSums, MemSpace>;
  Sums now, last;
  Sums norms;  ///< b.b of every component (row 1)
  Kokkos::View<const double[3], MemSpace> alpha_in;
  double tolerance2 = 0.0;  ///< tolerance^2: a component stops at r.r <= tolerance^2 b.b

  /// One component's step: whether it moves, restarts, and its alpha and beta.
  struct Step {
    bool moving = false, restart = true;
    double alpha = 0.0, beta = 0.0;
  };
  /// Component d's step, its sums read once.
  KOKKOS_INLINE_FUNCTION Step of(const int d) const {
    const double gamma = now().v[0][d], rho = now().v[1][d], delta = now().v[2][d];
    const double gamma_last = last().v[0][d], alpha_last = alpha_in(d);
    Step st;
    st.restart = alpha_last == 0.0;
    st.beta = st.restart || gamma_last == 0.0 ? 0.0 : gamma / gamma_last;
    const double curvature = st.restart ? delta : delta - st.beta * gamma / alpha_last;  // p.Mp
    st.moving = rho > tolerance2 * norms().v[1][d] && curvature > 0.0;
    st.alpha = st.moving ? gamma / curvature : 0.0;
    return st;
  }
};

/// \brief p = u + beta p, s = w + beta s, x += alpha p, r -= alpha s, u = D^-1 r for every
/// moving component; the first thread keeps alpha for the next step (0 for a component that
/// stood still: it restarts) and counts the iterations each component moved.
struct CgStep {
  Vectors v;
  CgScalars c;
  Kokkos::View<double[3], MemSpace> alpha_out;
  Kokkos::View<int[3], MemSpace> moved;
  KOKKOS_INLINE_FUNCTION void operator()(const Index i) const {
    for (int d = 0; d < v.dims; ++d) {
      const CgScalars::Step st = c.of(d);
      if (i == 0) {
        alpha_out(d) = st.alpha;  // 0 for a component that stands still: it restarts
        if (st.moving) moved(d) += 1;
      }
      if (!st.moving) continue;
      v.p(i, d) = st.restart ? v.u(i, d) : v.u(i, d) + st.beta * v.p(i, d);
      v.s(i, d) = st.restart ? v.w(i, d) : v.w(i, d) + st.beta * v.s(i, d);
      v.x(i, d) += st.alpha * v.p(i, d);
      v.r(i, d) -= st.alpha * v.s(i, d);
      v.u(i, d) = v.dinv(i) * v.r(i, d);
    }
  }
};

/// \brief What one iteration launches, by its turn (k % 2 for iteration k: the sums and the step
/// lengths alternate between two views): CgStep, then CgProductSums into the other turn's sums.
struct CgIteration {
  Vectors v;
  CgScalars scalars;  ///< the tolerance and b.b; the turn's views are set by step()
  Kokkos::View<ComponentSums, MemSpace> sums[2];
  Kokkos::View<double[3], MemSpace> alpha[2];
  Kokkos::View<int[3], MemSpace> moved;
  Kokkos::View<const Index*, MemSpace> row_map;
  Kokkos::View<const int*, MemSpace> cols;
  Kokkos::View<const double*, MemSpace> vals;
  Index ns = 0;

  CgStep step(const int turn) const {
    CgScalars c = scalars;
    c.now = sums[turn], c.last = sums[1 - turn], c.alpha_in = alpha[turn];
    return CgStep{v, c, alpha[1 - turn], moved};
  }
  CgProductSums product() const {
    return CgProductSums{{v}, row_map, cols, vals, scalars.norms, scalars.tolerance2};
  }

  /// w = M u and its sums into `out`, launched now.
  void product_into(const Kokkos::View<ComponentSums, MemSpace>& out) const {
    Kokkos::parallel_reduce("kolibri::ib_coupling_product_sums", Range(0, ns), product(), out);
  }
  /// The iteration of turn `turn`, launched now.
  void launch(const int turn) const {
    Kokkos::parallel_for("kolibri::ib_coupling_step", Range(0, ns), step(turn));
    product_into(sums[1 - turn]);
  }
};

/// \brief Blocks of iterations (those between two looks of the host) as graphs, one for each
/// turn of a block's first iteration: on CUDA and HIP one graph launch where the iterations
/// took two launches each, with their latencies (host backends run the nodes in order, as
/// launched one by one). A graph holds its kernels' arguments, so it is made again when the
/// arrays, the tolerance or the block's length changed (Key).
class CgBlocks {
 public:
  struct Key {
    int generation = -1, dims = 0, iterations = 0;  ///< generation: Work::generation
    double tolerance2 = 0.0;
    bool operator==(const Key&) const = default;
  };

  CgBlocks() = default;
  CgBlocks(CgBlocks&&) = delete;
  ~CgBlocks() { forget(); }

  /// Launches `key.iterations` iterations of `it`, the first of turn `turn`.
  void launch(const CgIteration& it, const int turn, const Key& key) {
    if (!(key == m_key)) forget(), m_key = key;
    auto& graph = m_graph[turn];
    if (!graph) graph = make(it, turn, key.iterations);
#if KOKKOS_VERSION >= 40000
    graph->submit(ExecSpace());  // behind the solve's other launches
#else
    graph->submit();
#endif
  }

 private:
  using Graph = Kokkos::Experimental::Graph<ExecSpace>;

  /// The graphs' own instance: a reduction in a graph keeps the scratch memory of its instance
  /// at the time the graph was made, so no launch outside the graphs may grow (reallocate) it.
  /// The graphs are launched on the default instance.
  ExecSpace instance() {
#if KOKKOS_VERSION >= 40000
    if (!m_space) m_space = Kokkos::Experimental::partition_space(ExecSpace(), 1)[0];
#else
    if (!m_space) m_space = ExecSpace();
#endif
    return *m_space;
  }

  Graph make(const CgIteration& it, const int turn, const int iterations) {
    const ExecSpace space = instance();
    return Kokkos::Experimental::create_graph(space, [&](const auto& root) {
      Kokkos::Experimental::GraphNodeRef<ExecSpace> node = root;
      for (int k = 0; k < iterations; ++k) {
        const int t = (turn + k) % 2;
        node =
            node.then_parallel_for("kolibri::ib_coupling_step", Range(space, 0, it.ns), it.step(t));
        node = node.then_parallel_reduce("kolibri::ib_coupling_product_sums",
                                         Range(space, 0, it.ns), it.product(), it.sums[1 - t]);
      }
    });
  }

  /// Drops the graphs once the device has run them.
  void forget() {
    if (m_graph[0] || m_graph[1]) Kokkos::fence();
    m_graph[0].reset(), m_graph[1].reset();
  }

  std::optional<ExecSpace> m_space;
  std::optional<Graph> m_graph[2];
  Key m_key;
};

/// \brief Bin the samples by their stencils' base nodes (a counting sort): `start` (bins + 1)
/// the bins' first entries in `list`, `key` and `slot` each sample's bin and place in it.
void bin_samples(const Stencils& st, const Index ns, const Kokkos::View<Index*, MemSpace>& start,
                 const Kokkos::View<int*, MemSpace>& key, const Kokkos::View<int*, MemSpace>& slot,
                 const Kokkos::View<int*, MemSpace>& list) {
  Kokkos::parallel_for(
      "kolibri::ib_coupling_bin", Range(0, ns),
      KOKKOS_LAMBDA(const Index s) { key(s) = int(st.bin_of(s)); });
  counting_sort(ExecSpace(), ns, st.bin_count(), key, start, slot, list);
}

}  // namespace

struct CouplingSystem::Work {
  Kokkos::View<Index*, MemSpace> start;
  Kokkos::View<int*, MemSpace> key, slot, list;
  Kokkos::View<Index*, MemSpace> row_map;
  Kokkos::View<int*, MemSpace> rows, cols;
  Kokkos::View<double*, MemSpace> vals, diag_inv;
  Vectors::Block b, x, r, u, w, p, s;
  /// The sums of the iterations, by turns: iteration k reads sums[k % 2] (its own: gamma, rho,
  /// delta) and sums[(k + 1) % 2] (the last's gamma), and its product writes the next's into
  /// sums[(k + 1) % 2]; likewise the step lengths alpha.
  Kokkos::View<ComponentSums, MemSpace> sums[2];
  Kokkos::View<double[3], MemSpace> alpha[2];
  Kokkos::View<ComponentSums, MemSpace> norms;  ///< b.b of every component (row 1)
  /// The host's copy of the sums a look reads. A copy of its own: a mirror view would be the
  /// device view itself on a host backend, and the look would write over the last sums.
  Kokkos::View<ComponentSums, MemSpace>::HostMirror seen;
  Kokkos::View<int[3], MemSpace> moved;  ///< iterations each component moved in the last solve
  /// The pattern's key: the stencils and the node box it was built for (none yet: nnz < 0).
  Kokkos::View<int* [3], MemSpace> seen_base;
  Kokkos::View<double* [3], MemSpace> seen_frac;
  int seen_lo[3] = {0, 0, 0}, seen_n[3] = {0, 0, 0}, seen_dims = 0;
  Index nnz = -1;
  /// Counts the allocations of the arrays an iteration reads or writes: a graph of iterations
  /// holds them, and is made again when this changed.
  int generation = 0;
  CgBlocks blocks;

  void resize(const Index ns) {
    if (sums[0].data() == nullptr) {
      for (auto& v : sums) v = Kokkos::View<ComponentSums, MemSpace>("kolibri::ib_coupling_sums");
      for (auto& v : alpha) v = Kokkos::View<double[3], MemSpace>("kolibri::ib_coupling_alpha");
      moved = Kokkos::View<int[3], MemSpace>("kolibri::ib_coupling_moved");
      norms = Kokkos::View<ComponentSums, MemSpace>("kolibri::ib_coupling_norms");
      seen = Kokkos::create_mirror(norms);
    }
    if (Index(key.extent(0)) == ns) return;
    ++generation;
    const auto n = std::size_t(ns);
    key = Kokkos::View<int*, MemSpace>("kolibri::ib_coupling_key", n);
    slot = Kokkos::View<int*, MemSpace>("kolibri::ib_coupling_slot", n);
    list = Kokkos::View<int*, MemSpace>("kolibri::ib_coupling_list", n);
    row_map = Kokkos::View<Index*, MemSpace>("kolibri::ib_coupling_rows", n + 1);
    diag_inv = Kokkos::View<double*, MemSpace>("kolibri::ib_coupling_diag", n);
    seen_base = Kokkos::View<int* [3], MemSpace>("kolibri::ib_coupling_seen_base", n);
    seen_frac = Kokkos::View<double* [3], MemSpace>("kolibri::ib_coupling_seen_frac", n);
    nnz = -1;
    for (auto* v : {&b, &x, &r, &u, &w, &p, &s})
      *v = Vectors::Block("kolibri::ib_coupling_vectors", n);
  }

  /// The pattern still fits: the same node box and every sample's stencil where it was (fixed
  /// bodies: every step after the first). One reduction, which also keeps the stencils and waits
  /// for the device; none where the problem says its stencils are static.
  bool pattern_fits(const CouplingProblem& prob, const Index ns) {
    const bool same_box = seen_dims == prob.dims && std::equal(seen_lo, seen_lo + 3, prob.lo) &&
                          std::equal(seen_n, seen_n + 3, prob.n);
    seen_dims = prob.dims;
    std::copy(prob.lo, prob.lo + 3, seen_lo), std::copy(prob.n, prob.n + 3, seen_n);
    const bool kept = nnz >= 0 && same_box;
    if (kept && prob.stencils_static) return true;  // no look at the stencils: bodies at rest
    Index shifted = 0;  // the reduction also keeps the stencils, for the next step's comparison
    Kokkos::parallel_reduce("kolibri::ib_coupling_stencils_moved", Range(0, ns),
                            StencilsMoved{prob.base, prob.frac, seen_base, seen_frac}, shifted);
    return kept && shifted == 0;
  }

  /// Bin the samples and build the pattern: the rows' offsets, their columns in order and the
  /// row of each entry.
  void build_pattern(Stencils& st, const Index ns) {
    nnz = -1;  // no pattern until this one is whole
    const Index bins = st.bin_count();
    if (Index(start.extent(0)) < bins + 1)
      start = Kokkos::View<Index*, MemSpace>("kolibri::ib_coupling_bins", std::size_t(bins + 1));
    bin_samples(st, ns, start, key, slot, list);
    st.start = start, st.list = list;
    Kokkos::parallel_for("kolibri::ib_coupling_row_lengths", Range(0, ns), RowLength{st, row_map});
    Index count = 0;
    Kokkos::parallel_scan("kolibri::ib_coupling_rows", Range(0, ns + 1), RowOffsets{row_map},
                          count);
    if (Index(cols.extent(0)) < count) {
      ++generation;
      const auto size = std::size_t(count + count / 4);
      rows = Kokkos::View<int*, MemSpace>("kolibri::ib_coupling_entry_rows", size);
      cols = Kokkos::View<int*, MemSpace>("kolibri::ib_coupling_cols", size);
      vals = Kokkos::View<double*, MemSpace>("kolibri::ib_coupling_vals", size);
    }
    Kokkos::parallel_for("kolibri::ib_coupling_pattern", Range(0, ns),
                         FillPattern{st, row_map, rows, cols});
    nnz = count;
  }
};

CouplingSystem::CouplingSystem() : m_work(std::make_unique<Work>()) {}
CouplingSystem::~CouplingSystem() = default;
CouplingSystem::CouplingSystem(CouplingSystem&&) noexcept = default;
CouplingSystem& CouplingSystem::operator=(CouplingSystem&&) noexcept = default;

bool CouplingSystem::built() { return true; }

CouplingReport CouplingSystem::solve(const CouplingProblem& prob, const double tolerance,
                                     const int max_iterations, const int check_every) {
  CouplingReport rep;
  const auto ns = Index(prob.base.extent(0));
  if (ns == 0) return rep;
  if (ns > Index(2147483647))
    throw std::invalid_argument("the implicit forcing takes at most 2^31 - 1 samples");
  Work& w = *m_work;
  w.resize(ns);
  Stencils st(prob);
  // The pattern is built again only when a sample moved or the box changed; the values
  // (d_n changes every step) are filled every step, an entry a thread.
  rep.pattern_built = !w.pattern_fits(prob, ns);
  if (rep.pattern_built) w.build_pattern(st, ns);
  const Index nnz = w.nnz;
  Kokkos::parallel_for("kolibri::ib_coupling_values", Range(0, nnz),
                       FillValues{st, w.rows, w.cols, w.vals, w.diag_inv});
  const auto cols = Kokkos::subview(w.cols, std::make_pair(Index(0), nnz));
  const auto vals = Kokkos::subview(w.vals, std::make_pair(Index(0), nnz));
  const Matrix a("kolibri::ib_coupling", int(ns), int(ns), nnz, vals, w.row_map, cols);
  rep.nonzeros = std::int64_t(nnz);

  Vectors v{w.b, w.x, w.r, w.u, w.w, w.p, w.s, w.diag_inv, prob.dims};
  const int dims = prob.dims;
  // b, the first guess and b.b of every component, which stays on the device: the iterations
  // compare their residuals with it there.
  Kokkos::parallel_reduce("kolibri::ib_coupling_rhs", Range(0, ns),
                          RightHandSides{{v}, prob.rhs, prob.force}, w.norms);
  // The copies and fills name the instance: Kokkos' deep_copy without one waits for the device.
  auto true_residual = [&]() {  // r = b - M G, every component at once
    Kokkos::deep_copy(ExecSpace(), w.r, w.b);
    KokkosSparse::spmv("N", -1.0, a, w.x, 1.0, w.r);
  };
  true_residual();
  CgIteration cg{
      v,      {}, {w.sums[0], w.sums[1]}, {w.alpha[0], w.alpha[1]}, w.moved, w.row_map, w.cols,
      w.vals, ns};
  cg.scalars.norms = w.norms;
  cg.scalars.tolerance2 = tolerance * tolerance;
  Kokkos::deep_copy(ExecSpace(), w.alpha[0], 0.0);  // every component starts with a restart: p = u
  Kokkos::parallel_for("kolibri::ib_coupling_precondition", Range(0, ns), CgPrecondition{v});
  cg.product_into(w.sums[0]);
  Kokkos::deep_copy(ExecSpace(), w.moved, 0);
  // The host looks at the residuals every `check_every` iterations, from the first block's end
  // (a look waits for the device: a solve that starts converged runs one block standing still);
  // the iterations between two looks run as one graph. The look reads the flag the product's
  // reduction left beside the sums.
  auto settled = [&](const int turn) {
    Kokkos::deep_copy(w.seen, w.sums[turn]);
    return w.seen().after[0] != 0.0;
  };
  const CgBlocks::Key block{w.generation, dims, check_every, cg.scalars.tolerance2};
  int it = 0;  // loop passes: a component that met its tolerance stands still until the look
  while (it < max_iterations && !(it > 0 && it % check_every == 0 && settled(it % 2))) {
    if (it + check_every <= max_iterations) {  // a whole block, up to the next look
      w.blocks.launch(cg, it % 2, block);
      it += check_every;
    } else {  // the last passes before max_iterations
      cg.launch(it % 2);
      ++it;
    }
  }
  // The true residual (not the recursion's), and the slip it leaves at the samples.
  true_residual();
  ComponentSums left;  // r.r, the slip, b.b and the iterations: one host synchronisation
  Kokkos::parallel_reduce("kolibri::ib_coupling_residual", Range(0, ns),
                          ResidualAndSlip{v, prob.weight_sum, w.norms, w.moved}, left);
  for (int d = 0; d < dims; ++d) {
    rep.iterations = std::max(rep.iterations, int(left.after[d]));
    const double norm2 = left.v[2][d];
    if (!(norm2 > 0.0)) continue;
    const double res = std::sqrt(left.v[0][d] / norm2);
    rep.residual = std::max(rep.residual, res);
    rep.converged = rep.converged && res <= tolerance * (1.0 + 1e-6);
    rep.slip = std::max(rep.slip, left.v[1][d]);
  }
  const auto force = prob.force;
  const auto x = w.x;
  Kokkos::parallel_for(
      "kolibri::ib_coupling_solution", Range(0, ns), KOKKOS_LAMBDA(const Index i) {
        for (int d = 0; d < dims; ++d) force(i, d) = x(i, d);
      });
  return rep;
}

#else  // without Kokkos Kernels

struct CouplingSystem::Work {};
CouplingSystem::CouplingSystem() = default;
CouplingSystem::~CouplingSystem() = default;
CouplingSystem::CouplingSystem(CouplingSystem&&) noexcept = default;
CouplingSystem& CouplingSystem::operator=(CouplingSystem&&) noexcept = default;
bool CouplingSystem::built() { return false; }
CouplingReport CouplingSystem::solve(const CouplingProblem&, double, int, int) {
  throw std::invalid_argument(
      "ib.forcing = \"implicit\" needs Kokkos Kernels: this build has none (configure with "
      "KokkosKernels_ROOT, or Debian's libtrilinos-kokkos-kernels-dev; docs/building.md)");
}

#endif

}  // namespace kolibri
