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
#endif

#include <algorithm>
#include <cmath>
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

/// \brief Three sums per velocity component, reduced in one launch (dot products of the CG).
struct ComponentSums {
  double v[3][3];
  KOKKOS_INLINE_FUNCTION ComponentSums() : v{{0, 0, 0}, {0, 0, 0}, {0, 0, 0}} {}
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

/// \brief b.b of every component (the second row of the sums), in one reduction.
struct RhsNorms : ComponentReduction {
  KOKKOS_INLINE_FUNCTION void operator()(const Index i, ComponentSums& s) const {
    for (int d = 0; d < v.dims; ++d) s.v[1][d] += v.b(i, d) * v.b(i, d);
  }
};

/// \brief After the solve, with r = b - M x: r.r of every component (first row, summed) and the
/// largest slip |r_i| / W_i it leaves at a sample (second row, the maximum; samples none of
/// whose nodes takes a force are left out), in one reduction.
struct ResidualAndSlip {
  Vectors v;
  Kokkos::View<const double*, MemSpace> weight;  ///< W_i
  using value_type = ComponentSums;
  KOKKOS_INLINE_FUNCTION void init(ComponentSums& s) const { s = ComponentSums(); }
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
// iteration (r.u, r.r, w.u) come from one reduction after the product w = M u, and an iteration
// is three launches: CgStep, the product, CgSums. The same iterates as the textbook form in
// exact arithmetic, which needs two reductions and four launches.

/// \brief u = D^-1 r.
struct CgPrecondition {
  Vectors v;
  KOKKOS_INLINE_FUNCTION void operator()(const Index i) const {
    for (int d = 0; d < v.dims; ++d) v.u(i, d) = v.dinv(i) * v.r(i, d);
  }
};

/// \brief gamma = r.u, rho = r.r and delta = w.u of every component (rows 0, 1, 2).
struct CgSums : ComponentReduction {
  KOKKOS_INLINE_FUNCTION void operator()(const Index i, ComponentSums& s) const {
    for (int d = 0; d < v.dims; ++d) {
      s.v[0][d] += v.r(i, d) * v.u(i, d);
      s.v[1][d] += v.r(i, d) * v.r(i, d);
      s.v[2][d] += v.w(i, d) * v.u(i, d);
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
  Kokkos::View<const double[3], MemSpace> alpha_in;
  double tol2[3] = {0, 0, 0};  ///< tolerance^2 b.b per component

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
    st.moving = rho > tol2[d] && curvature > 0.0;
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
  Kokkos::View<ComponentSums, MemSpace> sums[2];  ///< this iteration's and the last, by turns
  Kokkos::View<double[3], MemSpace> alpha[2];     ///< the step lengths, by turns
  Kokkos::View<int[3], MemSpace> moved;  ///< iterations each component moved in the last solve
  /// The pattern's key: the stencils and the node box it was built for (none yet: nnz < 0).
  Kokkos::View<int* [3], MemSpace> seen_base;
  Kokkos::View<double* [3], MemSpace> seen_frac;
  int seen_lo[3] = {0, 0, 0}, seen_n[3] = {0, 0, 0}, seen_dims = 0;
  Index nnz = -1;

  void resize(const Index ns) {
    if (sums[0].data() == nullptr) {
      for (auto& v : sums) v = Kokkos::View<ComponentSums, MemSpace>("kolibri::ib_coupling_sums");
      for (auto& v : alpha) v = Kokkos::View<double[3], MemSpace>("kolibri::ib_coupling_alpha");
      moved = Kokkos::View<int[3], MemSpace>("kolibri::ib_coupling_moved");
    }
    if (Index(key.extent(0)) == ns) return;
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
  /// bodies: every step after the first). One reduction, which also keeps the stencils.
  bool pattern_fits(const CouplingProblem& prob, const Index ns) {
    Index shifted = 0;
    Kokkos::parallel_reduce("kolibri::ib_coupling_stencils_moved", Range(0, ns),
                            StencilsMoved{prob.base, prob.frac, seen_base, seen_frac}, shifted);
    bool same_box = seen_dims == prob.dims;
    for (int d = 0; d < 3; ++d) {
      same_box = same_box && seen_lo[d] == prob.lo[d] && seen_n[d] == prob.n[d];
      seen_lo[d] = prob.lo[d], seen_n[d] = prob.n[d];
    }
    seen_dims = prob.dims;
    return nnz >= 0 && same_box && shifted == 0;
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
  {  // b and the first guess; a row made the identity (no node of its stencil takes a force)
     // keeps b = 0 and G = 0
    const auto rhs = prob.rhs;
    const auto force = prob.force;
    Kokkos::parallel_for(
        "kolibri::ib_coupling_rhs", Range(0, ns), KOKKOS_LAMBDA(const Index i) {
          const bool kept = v.dinv(i) > 0.0;
          for (int d = 0; d < 3; ++d) {
            v.b(i, d) = kept && d < dims ? rhs(i, d) : 0.0;
            v.x(i, d) = kept && d < dims ? force(i, d) : 0.0;
          }
        });
  }
  ComponentSums norms;  // b.b of every component: one host synchronisation
  Kokkos::parallel_reduce("kolibri::ib_coupling_rhs_norms", Range(0, ns), RhsNorms{{v}}, norms);
  const double* bb = norms.v[1];
  Kokkos::deep_copy(w.r, w.b);
  KokkosSparse::spmv("N", -1.0, a, w.x, 1.0, w.r);  // r = b - M G, every component at once
  CgScalars sc;
  for (int d = 0; d < dims; ++d) sc.tol2[d] = tolerance * tolerance * bb[d];
  Kokkos::View<ComponentSums, MemSpace> now = w.sums[0], last = w.sums[1];
  Kokkos::View<double[3], MemSpace> alpha_in = w.alpha[0], alpha_out = w.alpha[1];
  Kokkos::deep_copy(alpha_in, 0.0);  // every component starts with a restart: p = u
  Kokkos::parallel_for("kolibri::ib_coupling_precondition", Range(0, ns), CgPrecondition{v});
  KokkosSparse::spmv("N", 1.0, a, w.u, 0.0, w.w);
  Kokkos::parallel_reduce("kolibri::ib_coupling_sums", Range(0, ns), CgSums{{v}}, now);
  // A copy of its own: `now` and `last` swap every iteration, and a mirror view of `now` would be
  // `now` itself on a host backend, so a look at an odd iteration would overwrite `last`.
  const auto seen = Kokkos::create_mirror(now);
  auto settled = [&]() {  // every component met its tolerance (a host synchronisation)
    Kokkos::deep_copy(seen, now);
    for (int d = 0; d < dims; ++d)
      if (seen().v[1][d] > sc.tol2[d]) return false;
    return true;
  };
  Kokkos::deep_copy(w.moved, 0);
  int it = 0;  // loop passes: a component that met its tolerance stands still until the check
  while (it < max_iterations && !(it % check_every == 0 && settled())) {
    sc.now = now, sc.last = last, sc.alpha_in = alpha_in;
    Kokkos::parallel_for("kolibri::ib_coupling_step", Range(0, ns),
                         CgStep{v, sc, alpha_out, w.moved});
    KokkosSparse::spmv("N", 1.0, a, w.u, 0.0, w.w);
    Kokkos::parallel_reduce("kolibri::ib_coupling_sums", Range(0, ns), CgSums{{v}}, last);
    std::swap(now, last);  // the sums just reduced are this iteration's; the old ones, the last
    std::swap(alpha_in, alpha_out);
    ++it;
  }
  {
    const auto moved = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), w.moved);
    for (int d = 0; d < dims; ++d) rep.iterations = std::max(rep.iterations, moved(d));
  }
  // The true residual (not the recursion's), and the slip it leaves at the samples.
  Kokkos::deep_copy(w.r, w.b);
  KokkosSparse::spmv("N", -1.0, a, w.x, 1.0, w.r);
  ComponentSums left;  // r.r and the slip of every component: one host synchronisation
  Kokkos::parallel_reduce("kolibri::ib_coupling_residual", Range(0, ns),
                          ResidualAndSlip{v, prob.weight_sum}, left);
  for (int d = 0; d < dims; ++d) {
    if (!(bb[d] > 0.0)) continue;
    const double res = std::sqrt(left.v[0][d] / bb[d]);
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
  Kokkos::fence();
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
