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

namespace Impl {
/// Velocity components packed two bits per direction (c + 1 in {0, 1, 2}) into one 64-bit
/// constant per axis: `c(q, d)` becomes a shift and a mask, with no table in memory. (A local
/// array indexed at run time would be rebuilt on the stack wherever a loop is not unrolled, and
/// device code cannot read namespace-scope host arrays.)
template <int Q>
KOKKOS_INLINE_FUNCTION constexpr std::uint64_t pack_axis(const int (&v)[Q][3], int d) {
  static_assert(Q <= 32, "two bits per direction in 64 bits");
  std::uint64_t m = 0;
  for (int q = 0; q < Q; ++q) m |= std::uint64_t(v[q][d] + 1) << (2 * q);
  return m;
}
KOKKOS_INLINE_FUNCTION constexpr int unpack(std::uint64_t m, int q) {
  return int((m >> (2 * q)) & 3u) - 1;
}
}  // namespace Impl

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
    constexpr int v[9][3] = {{0, 0, 0}, {1, 0, 0},   {-1, 0, 0}, {0, 1, 0}, {0, -1, 0},
                             {1, 1, 0}, {-1, -1, 0}, {1, -1, 0}, {-1, 1, 0}};
    constexpr std::uint64_t mx = Impl::pack_axis(v, 0), my = Impl::pack_axis(v, 1),
                            mz = Impl::pack_axis(v, 2);
    return Impl::unpack(d == 0 ? mx : (d == 1 ? my : mz), q);
  }
  KOKKOS_INLINE_FUNCTION static constexpr double w(int q) {
    return q == 0 ? 4.0 / 9.0 : (q < 5 ? 1.0 / 9.0 : 1.0 / 36.0);
  }
};

struct D3Q19 : LatticeBase<D3Q19> {
  static constexpr int D = 3, Q = 19;
  static constexpr const char* name = "D3Q19";
  KOKKOS_INLINE_FUNCTION static constexpr int c(int q, int d) {
    constexpr int v[19][3] = {{0, 0, 0},  {1, 0, 0},   {-1, 0, 0},  {0, 1, 0},   {0, -1, 0},
                              {0, 0, 1},  {0, 0, -1},  {1, 1, 0},   {-1, -1, 0}, {1, -1, 0},
                              {-1, 1, 0}, {1, 0, 1},   {-1, 0, -1}, {1, 0, -1},  {-1, 0, 1},
                              {0, 1, 1},  {0, -1, -1}, {0, 1, -1},  {0, -1, 1}};
    constexpr std::uint64_t mx = Impl::pack_axis(v, 0), my = Impl::pack_axis(v, 1),
                            mz = Impl::pack_axis(v, 2);
    return Impl::unpack(d == 0 ? mx : (d == 1 ? my : mz), q);
  }
  KOKKOS_INLINE_FUNCTION static constexpr double w(int q) {
    return q == 0 ? 1.0 / 3.0 : (q < 7 ? 1.0 / 18.0 : 1.0 / 36.0);
  }
};

struct D3Q27 : LatticeBase<D3Q27> {
  static constexpr int D = 3, Q = 27;
  static constexpr const char* name = "D3Q27";
  KOKKOS_INLINE_FUNCTION static constexpr int c(int q, int d) {
    constexpr int v[27][3] = {
        {0, 0, 0},  {1, 0, 0},   {-1, 0, 0},  {0, 1, 0},   {0, -1, 0}, {0, 0, 1},   {0, 0, -1},
        {1, 1, 0},  {-1, -1, 0}, {1, -1, 0},  {-1, 1, 0},  {1, 0, 1},  {-1, 0, -1}, {1, 0, -1},
        {-1, 0, 1}, {0, 1, 1},   {0, -1, -1}, {0, 1, -1},  {0, -1, 1}, {1, 1, 1},   {-1, -1, -1},
        {1, 1, -1}, {-1, -1, 1}, {1, -1, 1},  {-1, 1, -1}, {-1, 1, 1}, {1, -1, -1}};
    constexpr std::uint64_t mx = Impl::pack_axis(v, 0), my = Impl::pack_axis(v, 1),
                            mz = Impl::pack_axis(v, 2);
    return Impl::unpack(d == 0 ? mx : (d == 1 ? my : mz), q);
  }
  KOKKOS_INLINE_FUNCTION static constexpr double w(int q) {
    return q == 0 ? 8.0 / 27.0 : (q < 7 ? 2.0 / 27.0 : (q < 19 ? 1.0 / 54.0 : 1.0 / 216.0));
  }
};

}  // namespace kolibri
