// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Halo exchange of populations between ranks: for each of the 26 neighbours (faces,
/// edges, corners) only the populations that cross into it, gathered into one send buffer and
/// scattered from one receive buffer by index lists built once (pack/unpack kernels), with
/// device buffers handed to MPI when it is GPU-aware and host copies otherwise.
#pragma once

#include <kolibri/core/Kokkos.hpp>
#include <kolibri/grid/Flags.hpp>
#include <kolibri/parallel/Comm.hpp>
#include <kolibri/parallel/Decomposition.hpp>
#include <kolibri/parallel/Nccl.hpp>
#include <kolibri/parallel/Streams.hpp>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace kolibri {

/// What a halo exchange moves (Q populations per cell, SoA slot q of local cell n at q N + n).
enum class HaloMode {
  Pull,       ///< two arrays: my border cells' post-collision populations to the neighbour's ghosts
  AAForward,  ///< in place, before a streaming step: departing slots (opposite(q)) to the ghosts
  AAReverse,  ///< in place, after a streaming step: the ghosts' arriving slots back to their owners
  Moments,    ///< moment representation: all stored moments of my border cells to the neighbour's ghosts
};

/// \brief Send and receive index lists of one exchange mode, in message order.
struct HaloLists {
  std::vector<Index> send, recv;
  std::vector<HaloMessage> messages;  ///< byte offsets in `send`/`recv` (pointers set later)
};

/// \brief A rank's box of cells with its ghost layers: the grid of its local configuration, so
/// the extents, ghost sides and origin are worked out in one place (Decomposition::local_config).
/// Here rather than in Decomposition.hpp, which host-only units include (no Kokkos there).
inline DenseGrid grid_of(const Decomposition& dc) {
  return DenseGrid::of(dc.local_config(SolverConfig{}));
}

/// \brief Build the lists: for direction d (from this rank to neighbour(d)) the populations q
/// with c_q,k = d_k on every axis where d_k != 0. Send region: my real layer at side d (ghost
/// layer for AAReverse); receive region: my ghost layer at side d (real layer for AAReverse),
/// populations of -d. Both sides enumerate cells x fastest over the same global cells and
/// leave out the solid ones (nothing reads them), so their lists match.
///
/// AAReverse moves only populations that a fluid cell actually wrote into a fluid ghost (the
/// upwind cell of (cell, q) is fluid, not solid and not across a wall): the owner's own value
/// (e.g. its bounce-back from a solid across the border) must not be overwritten. Both sides
/// decide this from the same global cells, so their lists match. `flags` and `faces` are the
/// local box's (build_flags, local_config). `at(cell, slot)` places a value in the state array
/// (the solver's layout, SoA or CSoA); SoA (slot * cells + cell) where none is given.
template <class L>
HaloLists build_halo_lists(const Decomposition& dc, HaloMode mode, std::size_t value_bytes,
                           const std::vector<Flag>& flags, const FaceSet& faces, int moments = 0,
                           const std::function<Index(Index, int)>& at = {}) {
  const DenseGrid grid = grid_of(dc);
  const FaceTypes types(faces);
  // A solid cell's values are never read by a neighbour (kSolid), so none of them move: on a
  // sparse geometry the messages carry the fluid cells' values only.
  const SolidCells solid{flags.data()};
  // AAReverse filter: population q of (fluid) cell (x, y, z) was written by its upwind cell, which
  // must be fluid and lie where the sender owns cells: in the sender's real box (`from` = 0,0,0),
  // or, seen from the receiver, in its ghost region towards the sender (`from` = that direction).
  // Across a face that reads its layer (FaceBC::from_layer) the writer is the rule's source
  // (GridCells::outflow_source).
  auto written = [&](const Coord& p, int q, const std::array<int, 3>& from) {
    int face;
    Index m = grid.neighbour<L>(types.type, p, q, -1, face);
    if (m < 0 && face >= 0 && types.from_layer[face])
      m = grid.outflow_source<L>(types.type, p, q, face, solid).cell;
    if (m < 0 || solid(m)) return false;
    const Coord mp = grid.coords(m);
    const int mc[3] = {mp.x, mp.y, mp.z};
    for (std::size_t k = 0; k < 3; ++k) {
      const int first = dc.ghost[2 * k], last = first + dc.mine.n[k] - 1;
      const int where = mc[k] < first ? -1 : mc[k] > last ? 1 : 0;
      if (where != from[k]) return false;
    }
    return true;
  };
  const Index cells = grid.cells();
  auto place = [&](Index cell, int slot) { return at ? at(cell, slot) : Index(slot) * cells + cell; };
  HaloLists out;
  // Region of side d: ghost layer (ghost = true) or the real layer next to it, and the real
  // range along axes where d is 0.
  auto region = [&](const std::array<int, 3>& d, bool ghost, std::array<int, 3>& lo, std::array<int, 3>& hi) {
    for (std::size_t k = 0; k < 3; ++k) {
      const int g0 = dc.ghost[2 * k], first = g0, last = g0 + dc.mine.n[k] - 1;
      if (d[k] == 0) lo[k] = first, hi[k] = last;
      else if (d[k] > 0) lo[k] = hi[k] = ghost ? last + 1 : last;
      else lo[k] = hi[k] = ghost ? first - 1 : first;
    }
  };
  auto add = [&](std::vector<Index>& list, const std::array<int, 3>& d, bool ghost, int sign, bool opposite_slot) {
    const std::array<int, 3> from = ghost ? std::array<int, 3>{0, 0, 0} : d;
    std::array<int, 3> lo{}, hi{};
    region(d, ghost, lo, hi);
    auto crosses = [&](int q) {  // population q moves towards side d (sign +1) or from it (-1)
      for (int k = 0; k < 3; ++k)
        if (d[std::size_t(k)] != 0 && L::c(q, k) != sign * d[std::size_t(k)]) return false;
      return true;
    };
    // Moments: every stored value of the cells, where some population crosses towards side d.
    bool any = false;
    for (int q = 0; q < L::Q; ++q) any = any || crosses(q);
    const bool moments_mode = mode == HaloMode::Moments;
    const int slots = moments_mode ? (any ? moments : 0) : L::Q;
    for (int q = 0; q < slots; ++q) {
      if (!moments_mode && !crosses(q)) continue;
      const int slot = opposite_slot ? L::opposite(q) : q;
      for (int z = lo[2]; z <= hi[2]; ++z)
        for (int y = lo[1]; y <= hi[1]; ++y)
          for (int x = lo[0]; x <= hi[0]; ++x)
            if (!solid(grid.cell(x, y, z)) &&
                (mode != HaloMode::AAReverse || written(Coord{x, y, z}, q, from)))
              list.push_back(place(grid.cell(x, y, z), slot));
    }
  };
  const bool opp = mode == HaloMode::AAForward;
  const bool send_ghost = mode == HaloMode::AAReverse;
  for (int k = 0; k < 27; ++k) {
    const int peer = dc.neighbour[std::size_t(k)];
    if (peer < 0) continue;
    const auto d = direction(k);
    const std::size_t s0 = out.send.size(), r0 = out.recv.size();
    add(out.send, d, send_ghost, +1, opp);
    add(out.recv, d, !send_ghost, -1, opp);
    if (out.send.size() == s0 && out.recv.size() == r0) continue;  // e.g. D3Q19 corners
    HaloMessage m;
    m.peer = peer;
    m.send_tag = k;
    m.recv_tag = 26 - k;  // the neighbour sends towards -d
    m.send_bytes = std::int64_t((out.send.size() - s0) * value_bytes);
    m.recv_bytes = std::int64_t((out.recv.size() - r0) * value_bytes);
    if (m.send_bytes >= (std::int64_t(1) << 31) || m.recv_bytes >= (std::int64_t(1) << 31))
      throw std::invalid_argument("halo message over 2 GiB: use more ranks along the other axes");
    // offsets into the buffers, as fake pointers until the buffers exist
    m.send = reinterpret_cast<const void*>(std::uintptr_t(s0 * value_bytes));
    m.recv = reinterpret_cast<void*>(std::uintptr_t(r0 * value_bytes));
    out.messages.push_back(m);
  }
  return out;
}

#if KOKKOS_VERSION >= 40000
/// Host buffers of the staged exchange: page-locked where the backend has them (asynchronous
/// copies on the exchange's own stream).
using HaloHostSpace = Kokkos::SharedHostPinnedSpace;
#else
using HaloHostSpace = Kokkos::HostSpace;
#endif

/// \brief The exchange of one mode over a population View of value type V. Pack, copies and
/// unpack run on an execution-space instance of their own (a second stream on GPUs), so that
/// they overlap the interior update the caller launches on the default instance:
/// pack(f) -> [caller launches other work] -> post() -> finish(f).
template <class V>
class HaloExchange {
 public:
  HaloExchange() = default;
  /// `nccl`: send device buffers through NCCL/RCCL on the exchange's stream; otherwise MPI
  /// with device buffers (`device_buffers`, GPU-aware MPI) or page-locked host copies.
  HaloExchange(const Comm& comm, HaloLists lists, bool device_buffers, const NcclComm* nccl = nullptr)
      : m_comm(&comm), m_nccl(nccl), m_messages(std::move(lists.messages)) {
    m_exec = priority_instance();
    m_send_idx = to_device(lists.send, "kolibri::halo_send_idx");
    m_recv_idx = to_device(lists.recv, "kolibri::halo_recv_idx");
    m_send = Kokkos::View<V*, MemSpace>("kolibri::halo_send", lists.send.size());
    m_recv = Kokkos::View<V*, MemSpace>("kolibri::halo_recv", lists.recv.size());
    m_staged = !device_buffers && !kHostMemory && nccl == nullptr;
    if (m_staged) {
      m_h_send = Kokkos::View<V*, HaloHostSpace>("kolibri::halo_send_host", lists.send.size());
      m_h_recv = Kokkos::View<V*, HaloHostSpace>("kolibri::halo_recv_host", lists.recv.size());
    }
    auto* sbase = reinterpret_cast<std::byte*>(m_staged ? m_h_send.data() : m_send.data());
    auto* rbase = reinterpret_cast<std::byte*>(m_staged ? m_h_recv.data() : m_recv.data());
    for (auto& m : m_messages) {
      m.send = sbase + reinterpret_cast<std::uintptr_t>(m.send);
      m.recv = rbase + reinterpret_cast<std::uintptr_t>(m.recv);
    }
  }
  bool active() const { return m_comm != nullptr && !m_messages.empty(); }

  /// The exchange's own execution-space instance: work launched on it before pack() (e.g. the
  /// cells whose values are sent) is ordered before the pack.
  const ExecSpace& exec() const { return m_exec; }

  /// Gather the send buffer from `f` (and copy it to the host when staged) on the exchange's
  /// instance. The values of `f` it reads must be complete or produced on exec().
  void pack(const Kokkos::View<V*, MemSpace>& f) {
    if (!active()) return;
    const auto idx = m_send_idx;
    const auto buf = m_send;
    Kokkos::parallel_for(
        "kolibri::halo_pack",
        Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<Index>>(m_exec, 0, Index(idx.extent(0))),
        KOKKOS_LAMBDA(const Index e) { buf(e) = f(idx(e)); });
    if (m_staged) Kokkos::deep_copy(m_exec, m_h_send, m_send);
  }
  /// Wait for the pack, then post the messages (NCCL: enqueue them behind the pack).
  void post() {
    if (!active()) return;
    if (m_nccl) {
      m_nccl->exchange(m_messages, native_stream(m_exec));
    } else {
      fence(m_exec, "kolibri::halo_pack_done");
      m_comm->start(m_messages, m_pending);
    }
  }
  /// Wait for the messages and scatter the receive buffer into `f` on the exchange's instance
  /// (launched, not complete: fence exec() or join it to the instance that reads the ghosts).
  void finish(const Kokkos::View<V*, MemSpace>& f) {
    if (!active()) return;
    m_comm->wait(m_pending);
    if (m_staged) Kokkos::deep_copy(m_exec, m_recv, m_h_recv);
    const auto idx = m_recv_idx;
    const auto buf = m_recv;
    Kokkos::parallel_for(
        "kolibri::halo_unpack",
        Kokkos::RangePolicy<ExecSpace, Kokkos::IndexType<Index>>(m_exec, 0, Index(idx.extent(0))),
        KOKKOS_LAMBDA(const Index e) { f(idx(e)) = buf(e); });
  }
  /// The whole exchange, after the work on the default instance that produced `f`.
  void run(const Kokkos::View<V*, MemSpace>& f) {
    if (!active()) return;
    fence(ExecSpace(), "kolibri::halo_producers_done");
    pack(f);
    post();
    finish(f);
    fence(m_exec, "kolibri::halo_unpack_done");
  }
  /// Seconds per exchange of `f` measured alone (pack, transfer, unpack; nothing to overlap),
  /// the median of `repeats`; collective over the neighbours. Rewrites the same ghost values.
  double time_alone(const Kokkos::View<V*, MemSpace>& f, int repeats) {
    if (!active()) return 0.0;
    fence(ExecSpace(), "kolibri::halo_timing");
    std::vector<double> t;
    for (int r = 0; r < repeats; ++r) {
      Kokkos::Timer timer;
      pack(f);
      post();
      finish(f);
      fence(m_exec, "kolibri::halo_unpack_done");
      t.push_back(timer.seconds());
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
  }

 private:
  const Comm* m_comm = nullptr;
  const NcclComm* m_nccl = nullptr;
  std::vector<HaloMessage> m_messages;
  PendingExchange m_pending;
  ExecSpace m_exec{};
  Kokkos::View<Index*, MemSpace> m_send_idx, m_recv_idx;
  Kokkos::View<V*, MemSpace> m_send, m_recv;
  Kokkos::View<V*, HaloHostSpace> m_h_send, m_h_recv;
  bool m_staged = false;
};

}  // namespace kolibri
