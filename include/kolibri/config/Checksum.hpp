// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The project's 64-bit checksum (checkpoint pieces, the tuner's cache keys, the solids of
/// a [geometry] in the checkpoint signature) and its hex form. Plain C++, no Kokkos.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace kolibri {

/// \brief 64-bit checksum of a byte range: FNV-1a over little-endian 8-byte words (each step
/// followed by h ^= h >> 32), then over the tail bytes, then the length (docs/checkpoints.md).
std::uint64_t checksum64(const std::byte* data, std::size_t n);
/// checksum64 of a vector's bytes (its values as stored).
template <class T>
std::uint64_t checksum64(const std::vector<T>& values) {
  return checksum64(reinterpret_cast<const std::byte*>(values.data()), values.size() * sizeof(T));
}
/// \brief checksum64 of bytes that come in parts (a file read piece by piece): add() each part in
/// order, every part but the last a whole number of 8-byte words; value() is then
/// checksum64 of all the bytes added.
class Checksum64 {
 public:
  void add(const std::byte* data, std::size_t n);
  std::uint64_t value() const;

 private:
  std::uint64_t m_h = 0xcbf29ce484222325ULL;
  std::size_t m_n = 0;
  bool m_tail = false;  ///< a part not a whole number of words was added: it must be the last
};
/// The 16 lower-case hex digits of v (checksums in manifests, tuner cache keys).
std::string hex64(std::uint64_t v);

}  // namespace kolibri
