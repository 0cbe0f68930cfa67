// SPDX-License-Identifier: Apache-2.0
#include <kolibri/config/Checksum.hpp>

#include <bit>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace kolibri {

std::string hex64(std::uint64_t v) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

void Checksum64::add(const std::byte* data, std::size_t n) {
  if (m_tail) throw std::logic_error("Checksum64: a part after one that was not whole words");
  constexpr std::uint64_t prime = 0x100000001b3ULL;
  std::uint64_t h = m_h;
  std::size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    std::uint64_t w = 0;
    if constexpr (std::endian::native == std::endian::little) {
      std::memcpy(&w, data + i, 8);
    } else {
      for (std::size_t k = 0; k < 8; ++k)
        w |= std::uint64_t(std::to_integer<std::uint8_t>(data[i + k])) << (8 * k);
    }
    h = (h ^ w) * prime;
    h ^= h >> 32;  // a product carries bits upwards only: without this, flips of bit 63 in two
                   // words cancel
  }
  for (; i < n; ++i) h = (h ^ std::to_integer<std::uint8_t>(data[i])) * prime;
  m_h = h;
  m_n += n;
  m_tail = n % 8 != 0;
}

std::uint64_t Checksum64::value() const {
  constexpr std::uint64_t prime = 0x100000001b3ULL;
  return (m_h ^ std::uint64_t(m_n)) * prime;
}

std::uint64_t checksum64(const std::byte* data, std::size_t n) {
  Checksum64 sum;
  sum.add(data, n);
  return sum.value();
}

}  // namespace kolibri
