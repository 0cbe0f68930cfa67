// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The samples' coupling system of the implicit forcing (ib.forcing = "implicit";
/// docs/theory.md, "Implicit forcing").
///
/// The collision sees at node n the velocity u*_n + F_n / (2 rho_n) (Guo), and the force at a
/// node is what the samples spread there, F_n = sum_j w_jn G_j. A sample interpolates
/// sum_n w_in (u*_n + F_n / (2 rho_n)) / W_i over the nodes that take a force (W_i: their
/// weights; fluid nodes in the node box). No slip at every sample at once is the linear system
///
///   M G = b,  M_ij = sum_n w_in w_jn d_n,  d_n = 1 / (2 rho_n) (0 where a node takes no force),
///             b_i  = W_i u_b,i - sum_n w_in u*_n,
///
/// one for each velocity component, with the same matrix. M is interpolation x spreading:
/// symmetric and positive semi-definite (singular where samples outnumber the nodes around
/// them, and consistent wherever the body's velocity is linear in space, which the trilinear
/// stencil reproduces exactly). It is assembled on the device as a KokkosSparse::CrsMatrix
/// (rows ordered by column; the pairs whose shared nodes are all solid are stored as zeros) and
/// solved by conjugate gradients with a Jacobi preconditioner on KokkosSparse::spmv (the
/// Chronopoulos-Gear form: one reduction an iteration), in double precision whatever the storage.
#pragma once

#include <kolibri/core/Kokkos.hpp>

#include <cstdint>
#include <memory>

namespace kolibri {

/// \brief How the last solve went.
struct CouplingReport {
  int iterations = 0;     ///< conjugate-gradient iterations of the component that took most
  double residual = 0.0;  ///< |b - M G| / |b| after the solve, the worst component
  double slip = 0.0;  ///< the largest |r_i| / W_i, a component's slip at a sample (lattice units)
  /// entries of M's pattern: the pairs of stencils sharing a node of the box (zeros where the
  /// shared nodes are all solid) and the identity rows of samples off the box
  std::int64_t nonzeros = 0;
  bool converged = true;      ///< every component's true residual met the tolerance
  bool pattern_built = true;  ///< M's pattern was built (else the last solve's was kept)
};

/// \brief What the solve reads: the samples' trilinear stencils (base node and fractions,
/// domain cells), the nodes' factors d_n over a box (x fastest; nodes outside it take no force),
/// the right-hand sides b and the first guess of the forces G (overwritten by the solution).
struct CouplingProblem {
  int dims = 3;
  int lo[3] = {0, 0, 0}, n[3] = {0, 0, 0};  ///< the node box
  Kokkos::View<const int* [3], MemSpace> base;
  Kokkos::View<const double* [3], MemSpace> frac;
  Kokkos::View<const double*, MemSpace> node_factor;  ///< d_n over the box
  Kokkos::View<const double* [3], MemSpace> rhs;      ///< b, per component
  Kokkos::View<const double*, MemSpace> weight_sum;   ///< W_i (the slip is r_i / W_i)
  Kokkos::View<double* [3], MemSpace> force;          ///< G: first guess in, solution out
  /// The stencils are those of the last solve wherever the node box is the same (bodies that do
  /// not move): the solve then keeps M's pattern without comparing them (a reduction and a wait
  /// for the device a step).
  bool stencils_static = false;
};

/// \brief Assembles and solves the coupling system. Keeps its work arrays between steps.
class CouplingSystem {
 public:
  CouplingSystem();
  ~CouplingSystem();
  CouplingSystem(CouplingSystem&&) noexcept;
  CouplingSystem& operator=(CouplingSystem&&) noexcept;

  /// This build has Kokkos Kernels (else solve() throws).
  static bool built();

  /// Assemble M for `p` and solve for each of its `dims` components until |b - M G| <=
  /// tolerance |b| or `max_iterations`, looking at the residuals from the host every
  /// `check_every` iterations (the forces are the same for any: a component that met its
  /// tolerance stands still until the look). M's pattern (which pairs of stencils share a node of
  /// the box) is kept from the last solve while the box and every stencil are unchanged (fixed
  /// bodies); its values, which follow the density, are filled every solve. Everything runs on
  /// the default execution-space instance, and the solution's copy into `force` may still be
  /// running when solve returns: work on another instance must be ordered after it.
  CouplingReport solve(const CouplingProblem& p, double tolerance, int max_iterations,
                       int check_every);

 private:
  struct Work;
  std::unique_ptr<Work> m_work;
};

}  // namespace kolibri
