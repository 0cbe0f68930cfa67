// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Items sorted into bins on the device, a counting sort: the immersed boundary's
/// gathering bins its samples by the base node of their stencil (Immersed.hpp), the implicit
/// forcing's assembly by the node box's bins (Coupling.cpp).
#pragma once

#include <kolibri/core/Kokkos.hpp>

namespace kolibri {

/// \brief Sorts the items 0 .. n-1 into `list` by their bin key(i) in [0, bins) (key < 0: left
/// out). After it, start(b) is the position of bin b's first item in `list` and start(bins) the
/// number of items kept; `slot(i)` is item i's place within its bin (the order the atomics gave).
/// `start` has bins + 1 entries, `slot` and `list` n; three launches on `exec`.
template <class Key, class List>
void counting_sort(const ExecSpace& exec, const Index n, const Index bins, const Key& key,
                   const Kokkos::View<Index*, MemSpace>& start,
                   const Kokkos::View<int*, MemSpace>& slot, const List& list) {
  using Range = Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<Index>>;
  Kokkos::deep_copy(exec, start, Index(0));
  Kokkos::parallel_for(
      "kolibri::bin_count", Range(exec, 0, n), KOKKOS_LAMBDA(const Index i) {
        if (key(i) >= 0) slot(i) = int(Kokkos::atomic_fetch_add(&start(key(i)), Index(1)));
      });
  Kokkos::parallel_scan(
      "kolibri::bin_scan", Range(exec, 0, bins + 1),
      KOKKOS_LAMBDA(const Index b, Index& sum, const bool last) {
        const Index c = b < bins ? start(b) : 0;
        if (last) start(b) = sum;
        sum += c;
      });
  Kokkos::parallel_for(
      "kolibri::bin_fill", Range(exec, 0, n), KOKKOS_LAMBDA(const Index i) {
        if (key(i) >= 0) list(start(key(i)) + slot(i)) = typename List::value_type(i);
      });
}

}  // namespace kolibri
