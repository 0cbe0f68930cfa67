// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Storage policies: how a population is kept in memory, separate from the arithmetic
/// precision the kernels compute in. The one place with vendor-specific half-precision code.
///
/// A policy `S` offers `real` (arithmetic type), `value_type` (stored type), and
/// `load<L>(v, q)` / `store<L>(f, q)` converting population q of lattice L.
#pragma once

#include <kolibri/core/Kokkos.hpp>

#include <cstdint>
#include <cstring>

#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_fp16.h>
#elif defined(KOKKOS_ENABLE_HIP)
#include <hip/hip_fp16.h>
#endif

namespace kolibri {

/// \brief IEEE-754 binary16 from float, round to nearest even (hardware on GPUs).
KOKKOS_INLINE_FUNCTION std::uint16_t float_to_half_bits(float f) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  return __half_as_ushort(__float2half_rn(f));
#else
  std::uint32_t x;
  std::memcpy(&x, &f, sizeof x);
  const std::uint32_t sign = (x >> 16) & 0x8000u, a = x & 0x7fffffffu;
  if (a >= 0x7f800000u) return std::uint16_t(sign | (a > 0x7f800000u ? 0x7e00u : 0x7c00u));  // NaN, inf
  if (a >= 0x477ff000u) return std::uint16_t(sign | 0x7c00u);  // rounds beyond 65504: inf
  if (a >= 0x38800000u) {  // normal half
    std::uint32_t h = (a - 0x38000000u) >> 13;
    const std::uint32_t rem = a & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1u))) ++h;
    return std::uint16_t(sign | h);
  }
  if (a < 0x33000000u) return std::uint16_t(sign);  // below half the smallest subnormal: zero
  const int e = int(a >> 23), shift = 126 - e;     // subnormal half: units of 2^-24
  const std::uint32_t m = (a & 0x7fffffu) | 0x800000u;
  std::uint32_t h = m >> shift;
  const std::uint32_t rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1);
  if (rem > half || (rem == half && (h & 1u))) ++h;
  return std::uint16_t(sign | h);
#endif
}

/// \brief float from IEEE-754 binary16 (exact).
KOKKOS_INLINE_FUNCTION float half_bits_to_float(std::uint16_t h) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  return __half2float(__ushort_as_half(h));
#else
  const std::uint32_t sign = std::uint32_t(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  std::uint32_t x;
  if (e == 0) {
    const float v = float(m) * 5.9604644775390625e-8f;  // m * 2^-24, exact
    return sign ? -v : v;
  }
  x = e == 31 ? (sign | 0x7f800000u | (m << 13)) : (sign | ((e + 112u) << 23) | (m << 13));
  float f;
  std::memcpy(&f, &x, sizeof f);
  return f;
#endif
}

/// \brief Populations stored in the arithmetic type itself (FP64 or FP32).
template <class R>
struct NativeStorage {
  using real = R;
  using value_type = R;
  template <class L>
  KOKKOS_INLINE_FUNCTION static R load(value_type v, int) {
    return v;
  }
  template <class L>
  KOKKOS_INLINE_FUNCTION static value_type store(R f, int) {
    return f;
  }
};

/// \brief FP32 arithmetic, FP16 storage: the deviation from the rest equilibrium, f_q - w_q, scaled
/// by 2^14 into binary16. The shift keeps the mantissa for what varies (f_q itself is within a
/// few percent of w_q); the scale moves typical deviations (1e-6 to 0.1) into the normal range
/// (deviations up to 4 fit; 2^-24 / 2^14 = 3.6e-12 is the smallest step). Half the bytes of FP32.
struct Fp16Storage {
  using real = float;
  using value_type = std::uint16_t;
  static constexpr float scale = 16384.0f, inv_scale = 1.0f / 16384.0f;
  template <class L>
  KOKKOS_INLINE_FUNCTION static float load(value_type v, int q) {
    return half_bits_to_float(v) * inv_scale + float(L::w(q));
  }
  template <class L>
  KOKKOS_INLINE_FUNCTION static value_type store(float f, int q) {
    return float_to_half_bits((f - float(L::w(q))) * scale);
  }
};

}  // namespace kolibri
