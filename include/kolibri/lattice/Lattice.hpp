// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Compile-time velocity sets D2Q9, D3Q19 and D3Q27 (lattice units, cs^2 = 1/3).
///
/// Each descriptor offers `Q`, `D`, `c(q, d)`, `w(q)` and `opposite(q)` as constexpr functions,
/// so kernels see no runtime tables. Direction 0 is the rest population; direction q and q+1
/// (q odd) are opposite, so `opposite` is arithmetic.
#pragma once

#include <kolibri/core/Kokkos.hpp>

namespace kolibri {

/// \brief Shared part of every velocity set: opposite direction and |c|^2.
template <class Derived>
struct LatticeBase {
  static constexpr double cs2 = 1.0 / 3.0;
  KOKKOS_INLINE_FUNCTION static constexpr int opposite(int q) {
    return q == 0 ? 0 : (q % 2 == 1 ? q + 1 : q - 1);
  }
  KOKKOS_INLINE_FUNCTION static constexpr int c2(int q) {
    return Derived::c(q, 0) * Derived::c(q, 0) + Derived::c(q, 1) * Derived::c(q, 1) +
           Derived::c(q, 2) * Derived::c(q, 2);
  }
};

struct D2Q9 : LatticeBase<D2Q9> {
  static constexpr int D = 2, Q = 9;
  static constexpr const char* name = "D2Q9";
  KOKKOS_INLINE_FUNCTION static constexpr int c(int q, int d) {
    // A local table: device code cannot read namespace-scope host arrays.
    constexpr int v[9][3] = {{0, 0, 0}, {1, 0, 0},   {-1, 0, 0}, {0, 1, 0}, {0, -1, 0},
                             {1, 1, 0}, {-1, -1, 0}, {1, -1, 0}, {-1, 1, 0}};
    return v[q][d];
  }
  KOKKOS_INLINE_FUNCTION static constexpr double w(int q) {
    return q == 0 ? 4.0 / 9.0 : (q < 5 ? 1.0 / 9.0 : 1.0 / 36.0);
  }
};

struct D3Q19 : LatticeBase<D3Q19> {
  static constexpr int D = 3, Q = 19;
  static constexpr const char* name = "D3Q19";
  KOKKOS_INLINE_FUNCTION static constexpr int c(int q, int d) {
    // A local table: device code cannot read namespace-scope host arrays.
    constexpr int v[19][3] = {{0, 0, 0},  {1, 0, 0},   {-1, 0, 0},  {0, 1, 0},   {0, -1, 0},
                              {0, 0, 1},  {0, 0, -1},  {1, 1, 0},   {-1, -1, 0}, {1, -1, 0},
                              {-1, 1, 0}, {1, 0, 1},   {-1, 0, -1}, {1, 0, -1},  {-1, 0, 1},
                              {0, 1, 1},  {0, -1, -1}, {0, 1, -1},  {0, -1, 1}};
    return v[q][d];
  }
  KOKKOS_INLINE_FUNCTION static constexpr double w(int q) {
    return q == 0 ? 1.0 / 3.0 : (q < 7 ? 1.0 / 18.0 : 1.0 / 36.0);
  }
};

struct D3Q27 : LatticeBase<D3Q27> {
  static constexpr int D = 3, Q = 27;
  static constexpr const char* name = "D3Q27";
  KOKKOS_INLINE_FUNCTION static constexpr int c(int q, int d) {
    // A local table: device code cannot read namespace-scope host arrays.
    constexpr int v[27][3] = {
        {0, 0, 0},  {1, 0, 0},   {-1, 0, 0},  {0, 1, 0},   {0, -1, 0}, {0, 0, 1},   {0, 0, -1},
        {1, 1, 0},  {-1, -1, 0}, {1, -1, 0},  {-1, 1, 0},  {1, 0, 1},  {-1, 0, -1}, {1, 0, -1},
        {-1, 0, 1}, {0, 1, 1},   {0, -1, -1}, {0, 1, -1},  {0, -1, 1}, {1, 1, 1},   {-1, -1, -1},
        {1, 1, -1}, {-1, -1, 1}, {1, -1, 1},  {-1, 1, -1}, {-1, 1, 1}, {1, -1, -1}};
    return v[q][d];
  }
  KOKKOS_INLINE_FUNCTION static constexpr double w(int q) {
    return q == 0 ? 8.0 / 27.0 : (q < 7 ? 2.0 / 27.0 : (q < 19 ? 1.0 / 54.0 : 1.0 / 216.0));
  }
};

}  // namespace kolibri
