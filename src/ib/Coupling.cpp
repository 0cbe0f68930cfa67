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
  /// M_ij: the nodes both stencils hold, each weighted by both samples and d_n. The shared
  /// nodes are walked in the domain's order and each weight is a product of the pairs
  /// w_i,d w_j,d, so M_ij and M_ji are the same bits (M is exactly symmetric).
  KOKKOS_INLINE_FUNCTION double overlap(const Index i, const Index j) const {
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
          sum += w * factor_at(c);
        }
    return sum;
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

/// \brief A row's length: its non-zero overlaps, or 1 for a sample none of whose nodes takes
/// a force (its row becomes the identity, its force 0), into row_map(i + 1). Counted in a launch
/// of its own, not inside the scan: Kokkos' scan calls its functor in two passes, and those two
/// passes were about 0.3 ms of the implicit forcing's 1 ms step (Nsight Compute,
/// docs/performance.md).
struct RowLength {
  Stencils st;
  Kokkos::View<Index*, MemSpace> row_map;
  KOKKOS_INLINE_FUNCTION void operator()(const Index i) const {
    Index len = 0;
    if (st.overlap(i, i) > 0.0) {
      st.neighbours(i, [&](const Index j) { len += st.overlap(i, j) != 0.0 ? 1 : 0; });
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

/// \brief A row's entries, ordered by column, and the inverse of its diagonal (the Jacobi
/// preconditioner; 0 for an identity row, which keeps its zero force).
struct FillRow {
  Stencils st;
  Kokkos::View<const Index*, MemSpace> row_map;
  Kokkos::View<int*, MemSpace> cols;
  Kokkos::View<double*, MemSpace> vals, diag_inv;
  KOKKOS_INLINE_FUNCTION void operator()(const Index i) const {
    const Index a = row_map(i);
    Index e = a;
    const double diag = st.overlap(i, i);
    if (diag > 0.0) {
      st.neighbours(i, [&](const Index j) {
        const double v = st.overlap(i, j);
        if (v == 0.0) return;
        cols(e) = int(j), vals(e) = v;
        ++e;
      });
    } else {
      cols(e) = int(i), vals(e) = 1.0;
      ++e;
    }
    for (Index k = a + 1; k < e; ++k)  // insertion sort: a few dozen entries at a cell's spacing
      for (Index m = k; m > a && cols(m - 1) > cols(m); --m) {
        const int c = cols(m);
        const double v = vals(m);
        cols(m) = cols(m - 1), vals(m) = vals(m - 1);
        cols(m - 1) = c, vals(m - 1) = v;
      }
    diag_inv(i) = diag > 0.0 ? 1.0 / diag : 0.0;  // 0: an identity row, left out of the solve
  }
};

/// \brief Two sums per velocity component, reduced in one launch (dot products of the CG).
struct ComponentSums {
  double v[2][3];
  KOKKOS_INLINE_FUNCTION ComponentSums() : v{{0, 0, 0}, {0, 0, 0}} {}
};

/// \brief The conjugate-gradient vectors of all components side by side (ns x 3, a column a
/// component: what KokkosSparse::spmv multiplies at once), and the Jacobi preconditioner.
struct Vectors {
  using Block = Kokkos::View<double* [3], Kokkos::LayoutLeft, MemSpace>;
  Block b, x, r, z, p, ap;
  Kokkos::View<const double*, MemSpace> dinv;
  int dims = 3;
};

/// \brief What the CG's reductions share: the vectors, and the sums' identity and join.
struct ComponentReduction {
  Vectors v;
  using value_type = ComponentSums;
  KOKKOS_INLINE_FUNCTION void init(ComponentSums& s) const { s = ComponentSums(); }
  KOKKOS_INLINE_FUNCTION void join(ComponentSums& a, const ComponentSums& c) const {
    for (int k = 0; k < 2; ++k)
      for (int d = 0; d < 3; ++d) a.v[k][d] += c.v[k][d];
  }
#if KOKKOS_VERSION < 40000  // Kokkos 3 joins through volatile references
  KOKKOS_INLINE_FUNCTION void join(volatile ComponentSums& a,
                                   const volatile ComponentSums& c) const {
    for (int k = 0; k < 2; ++k)
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

/// \brief After r = b - M x: z = D^-1 r and p = z, with the sums r.z and r.r.
struct CgStart : ComponentReduction {
  KOKKOS_INLINE_FUNCTION void operator()(const Index i, ComponentSums& s) const {
    for (int d = 0; d < v.dims; ++d) {
      v.z(i, d) = v.dinv(i) * v.r(i, d);
      v.p(i, d) = v.z(i, d);
      s.v[0][d] += v.r(i, d) * v.z(i, d);
      s.v[1][d] += v.r(i, d) * v.r(i, d);
    }
  }
};

/// \brief p . M p (the first row of the sums).
struct CgCurvature : ComponentReduction {
  KOKKOS_INLINE_FUNCTION void operator()(const Index i, ComponentSums& s) const {
    for (int d = 0; d < v.dims; ++d) s.v[0][d] += v.p(i, d) * v.ap(i, d);
  }
};

/// \brief A component's step as the device sees it: `now` holds r.z and r.r of the current
/// residual, `curv` p.Mp; a component whose residual met the tolerance (or whose p.Mp is not
/// positive: a direction M does not see) stands still. Its coefficients come from the device
/// sums, so an iteration needs no host synchronisation.
struct CgScalars {
  using Sums = Kokkos::View<const ComponentSums, MemSpace>;
  Sums now, curv, next;
  double tol2[3] = {0, 0, 0};  ///< tolerance^2 b.b per component
  KOKKOS_INLINE_FUNCTION bool moving(const int d) const {
    return now().v[1][d] > tol2[d] && curv().v[0][d] > 0.0;
  }
  KOKKOS_INLINE_FUNCTION double alpha(const int d) const {
    return moving(d) ? now().v[0][d] / curv().v[0][d] : 0.0;
  }
  KOKKOS_INLINE_FUNCTION double beta(const int d) const {
    return moving(d) && now().v[0][d] != 0.0 ? next().v[0][d] / now().v[0][d] : 0.0;
  }
};

/// \brief x += alpha p, r -= alpha M p, z = D^-1 r, with the sums r.z and r.r.
struct CgAdvance : ComponentReduction {
  CgScalars c;
  KOKKOS_INLINE_FUNCTION void operator()(const Index i, ComponentSums& s) const {
    for (int d = 0; d < v.dims; ++d) {
      const double alpha = c.alpha(d);
      v.x(i, d) += alpha * v.p(i, d);
      v.r(i, d) -= alpha * v.ap(i, d);
      v.z(i, d) = v.dinv(i) * v.r(i, d);
      s.v[0][d] += v.r(i, d) * v.z(i, d);
      s.v[1][d] += v.r(i, d) * v.r(i, d);
    }
  }
};

/// \brief p = z + beta p; the first thread counts the iterations each component moved.
struct CgTurn {
  Vectors v;
  CgScalars c;
  Kokkos::View<int[3], MemSpace> moved;
  KOKKOS_INLINE_FUNCTION void operator()(const Index i) const {
    for (int d = 0; d < v.dims; ++d) {
      v.p(i, d) = v.z(i, d) + c.beta(d) * v.p(i, d);
      if (i == 0 && c.moving(d)) moved(d) += 1;
    }
  }
};

/// How many iterations run between two looks at the residuals from the host.
constexpr int kCgCheckEvery = 4;

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
  Kokkos::View<int*, MemSpace> cols;
  Kokkos::View<double*, MemSpace> vals, diag_inv;
  Vectors::Block b, x, r, z, p, ap;
  Kokkos::View<ComponentSums, MemSpace> sums[3];  ///< r.z and r.r (two, by turns), and p.Mp
  Kokkos::View<int[3], MemSpace> moved;  ///< iterations each component moved in the last solve

  void resize(const Index ns) {
    if (sums[0].data() == nullptr) {
      for (auto& v : sums) v = Kokkos::View<ComponentSums, MemSpace>("kolibri::ib_coupling_sums");
      moved = Kokkos::View<int[3], MemSpace>("kolibri::ib_coupling_moved");
    }
    if (Index(key.extent(0)) == ns) return;
    const auto n = std::size_t(ns);
    key = Kokkos::View<int*, MemSpace>("kolibri::ib_coupling_key", n);
    slot = Kokkos::View<int*, MemSpace>("kolibri::ib_coupling_slot", n);
    list = Kokkos::View<int*, MemSpace>("kolibri::ib_coupling_list", n);
    row_map = Kokkos::View<Index*, MemSpace>("kolibri::ib_coupling_rows", n + 1);
    diag_inv = Kokkos::View<double*, MemSpace>("kolibri::ib_coupling_diag", n);
    for (auto* v : {&b, &x, &r, &z, &p, &ap})
      *v = Vectors::Block("kolibri::ib_coupling_vectors", n);
  }
};

CouplingSystem::CouplingSystem() : m_work(std::make_unique<Work>()) {}
CouplingSystem::~CouplingSystem() = default;
CouplingSystem::CouplingSystem(CouplingSystem&&) noexcept = default;
CouplingSystem& CouplingSystem::operator=(CouplingSystem&&) noexcept = default;

bool CouplingSystem::built() { return true; }

CouplingReport CouplingSystem::solve(const CouplingProblem& prob, const double tolerance,
                                     const int max_iterations) {
  CouplingReport rep;
  const auto ns = Index(prob.base.extent(0));
  if (ns == 0) return rep;
  if (ns > Index(2147483647))
    throw std::invalid_argument("the implicit forcing takes at most 2^31 - 1 samples");
  Work& w = *m_work;
  w.resize(ns);
  Stencils st(prob);
  const Index bins = st.bin_count();
  if (Index(w.start.extent(0)) < bins + 1)
    w.start = Kokkos::View<Index*, MemSpace>("kolibri::ib_coupling_bins", std::size_t(bins + 1));
  bin_samples(st, ns, w.start, w.key, w.slot, w.list);
  st.start = w.start, st.list = w.list;
  Index nnz = 0;
  Kokkos::parallel_for("kolibri::ib_coupling_row_lengths", Range(0, ns), RowLength{st, w.row_map});
  Kokkos::parallel_scan("kolibri::ib_coupling_rows", Range(0, ns + 1), RowOffsets{w.row_map}, nnz);
  if (Index(w.cols.extent(0)) < nnz) {
    w.cols = Kokkos::View<int*, MemSpace>("kolibri::ib_coupling_cols", std::size_t(nnz + nnz / 4));
    w.vals =
        Kokkos::View<double*, MemSpace>("kolibri::ib_coupling_vals", std::size_t(nnz + nnz / 4));
  }
  Kokkos::parallel_for("kolibri::ib_coupling_fill", Range(0, ns),
                       FillRow{st, w.row_map, w.cols, w.vals, w.diag_inv});
  const auto cols = Kokkos::subview(w.cols, std::make_pair(Index(0), nnz));
  const auto vals = Kokkos::subview(w.vals, std::make_pair(Index(0), nnz));
  const Matrix a("kolibri::ib_coupling", int(ns), int(ns), nnz, vals, w.row_map, cols);
  rep.nonzeros = std::int64_t(nnz);

  Vectors v{w.b, w.x, w.r, w.z, w.p, w.ap, w.diag_inv, prob.dims};
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
  Kokkos::View<ComponentSums, MemSpace> now = w.sums[0], next = w.sums[1];
  Kokkos::parallel_reduce("kolibri::ib_coupling_start", Range(0, ns), CgStart{{v}}, now);
  const auto seen = Kokkos::create_mirror_view(now);
  auto settled = [&]() {  // every component met its tolerance (a host synchronisation)
    Kokkos::deep_copy(seen, now);
    for (int d = 0; d < dims; ++d)
      if (seen().v[1][d] > sc.tol2[d]) return false;
    return true;
  };
  Kokkos::deep_copy(w.moved, 0);
  int it = 0;  // loop passes: a component that met its tolerance stands still until the check
  while (it < max_iterations && !(it % kCgCheckEvery == 0 && settled())) {
    KokkosSparse::spmv("N", 1.0, a, w.p, 0.0, w.ap);
    Kokkos::parallel_reduce("kolibri::ib_coupling_curvature", Range(0, ns), CgCurvature{{v}},
                            w.sums[2]);
    sc.now = now, sc.curv = w.sums[2], sc.next = next;
    Kokkos::parallel_reduce("kolibri::ib_coupling_advance", Range(0, ns), CgAdvance{{v}, sc}, next);
    Kokkos::parallel_for("kolibri::ib_coupling_turn", Range(0, ns), CgTurn{v, sc, w.moved});
    std::swap(now, next);
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
CouplingReport CouplingSystem::solve(const CouplingProblem&, double, int) {
  throw std::invalid_argument(
      "ib.forcing = \"implicit\" needs Kokkos Kernels: this build has none (configure with "
      "KokkosKernels_ROOT, or Debian's libtrilinos-kokkos-kernels-dev; docs/building.md)");
}

#endif

}  // namespace kolibri
