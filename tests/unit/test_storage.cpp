// SPDX-License-Identifier: Apache-2.0
// Storage policies: IEEE binary16 conversions (the host path; GPUs use their intrinsics) and the
// shifted FP16 population storage.
#include <kolibri/lattice/Lattice.hpp>
#include <kolibri/storage/Storage.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace {
using namespace kolibri;

TEST(Half, EveryBitPatternRoundTrips) {
  for (std::uint32_t h = 0; h < 65536; ++h) {
    const float f = half_bits_to_float(std::uint16_t(h));
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(half_bits_to_float(float_to_half_bits(f))));
      continue;
    }
    ASSERT_EQ(float_to_half_bits(f), h) << "half 0x" << std::hex << h;
  }
}

TEST(Half, KnownValuesAndRounding) {
  EXPECT_EQ(float_to_half_bits(1.0f), 0x3c00);
  EXPECT_EQ(float_to_half_bits(-2.0f), 0xc000);
  EXPECT_EQ(float_to_half_bits(65504.0f), 0x7bff);
  EXPECT_EQ(float_to_half_bits(65520.0f), 0x7c00);                       // rounds to infinity
  EXPECT_EQ(float_to_half_bits(std::ldexp(1.0f, -24)), 0x0001);          // smallest subnormal
  EXPECT_EQ(float_to_half_bits(std::ldexp(1.0f, -25)), 0x0000);          // tie to even: zero
  EXPECT_EQ(float_to_half_bits(3 * std::ldexp(1.0f, -25)), 0x0002);      // tie to even: 2
  EXPECT_EQ(float_to_half_bits(1.0f + std::ldexp(1.0f, -11)), 0x3c00);   // tie to even: down
  EXPECT_EQ(float_to_half_bits(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);  // tie to even: up
  EXPECT_EQ(half_bits_to_float(0x3555), 0.333251953125f);
}

TEST(Half, RandomFloatsRoundToNearest) {
  std::mt19937 g(1);
  std::uniform_real_distribution<float> mag(-20.0f, 15.0f);
  for (int i = 0; i < 100000; ++i) {
    const float x = std::ldexp(1.0f, 0) * std::exp2(mag(g)) * (i % 2 ? -1.0f : 1.0f);
    const float y = half_bits_to_float(float_to_half_bits(x));
    // half has 11 significant bits: error <= half an ulp (2^-11 relative) above 2^-14, and
    // <= 2^-25 absolute in the subnormal range
    const float bound = std::max(std::fabs(x) * std::ldexp(1.0f, -11), std::ldexp(1.0f, -25));
    ASSERT_LE(std::fabs(y - x), bound) << x;
  }
}

TEST(Fp16Storage, RestStateIsExactAndSmallDeviationsKeepElevenBits) {
  for (int q = 0; q < D3Q19::Q; ++q) {
    const float w = float(D3Q19::w(q));
    EXPECT_EQ(Fp16Storage::load<D3Q19>(Fp16Storage::store<D3Q19>(w, q), q), w);
    for (float dev : {1e-7f, -3e-5f, 2e-3f, -0.04f}) {
      const float f = w + dev;
      const float back = Fp16Storage::load<D3Q19>(Fp16Storage::store<D3Q19>(f, q), q);
      EXPECT_LE(std::fabs(back - f), std::fabs(dev) * std::ldexp(1.0f, -11) + 2e-7f * w) << q << " " << dev;
    }
  }
  static_assert(sizeof(Fp16Storage::value_type) == 2);
}
}  // namespace
