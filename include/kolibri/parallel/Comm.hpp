// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief The ranks of a run: a thin wrapper over MPI_COMM_WORLD (or one rank without MPI), so
/// no header outside src/parallel includes mpi.h. Every call here is collective unless noted.
#pragma once

#include <kolibri/grid/Box.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace kolibri {

/// \brief One message pair of a halo exchange: send `send_bytes` from `send` to `peer` with tag
/// `send_tag`, receive `recv_bytes` into `recv` from `peer` with tag `recv_tag`.
struct HaloMessage {
  int peer = -1;
  int send_tag = 0, recv_tag = 0;
  const void* send = nullptr;
  void* recv = nullptr;
  std::int64_t send_bytes = 0, recv_bytes = 0;
};

/// \brief Requests of an exchange in flight (opaque MPI_Request storage).
class PendingExchange {
 public:
  std::vector<std::byte> requests;
  int count = 0;
};

/// Whether MPI may be handed device pointers: `auto` asks the MPI library at run time.
enum class GpuAwareMpi { Auto, On, Off };

class Comm {
 public:
  /// All ranks of the run (MPI_COMM_WORLD), or a single rank when built without MPI or when MPI
  /// was not initialised (library use from tests).
  static const Comm& world();

  int rank() const { return m_rank; }
  int size() const { return m_size; }
  bool root() const { return m_rank == 0; }
  /// True when MPI is initialised and usable.
  bool mpi() const { return m_mpi; }
  /// The MPI_Comm handle as an opaque pointer (points to an MPI_Comm), or nullptr without MPI.
  const void* native() const { return m_native; }

  void barrier() const;
  double sum(double v) const;
  double max(double v) const;
  std::int64_t sum(std::int64_t v) const;
  std::int64_t min(std::int64_t v) const;
  std::int64_t max(std::int64_t v) const;
  /// Logical or over ranks.
  bool any(bool v) const { return max(std::int64_t(v)) != 0; }
  /// Element-wise sum of `v` over ranks, result on every rank.
  void sum(std::vector<double>& v) const;
  /// Element-wise sum of `v` over ranks, result on every rank (exact: integers).
  void sum(std::vector<std::int64_t>& v) const;
  /// Root's string on every rank.
  void bcast(std::string& s, int root = 0) const;
  /// Root's `bytes` bytes at `data` into `data` on every rank (any size: moved in 1 GiB pieces).
  void bcast(void* data, std::int64_t bytes, int root) const;
  /// Every rank's bytes, concatenated in rank order, on `root` (empty elsewhere); `counts` gets
  /// each rank's byte count on `root`.
  std::vector<std::byte> gather(const std::vector<std::byte>& mine, std::vector<std::int64_t>& counts,
                                int root = 0) const;
  /// `bytes` bytes at `data` to rank `to` (blocking, any size: moved in 1 GiB pieces); rank
  /// `to` takes them with recv. A refined grid gathers its levels to rank 0 with these.
  void send(const void* data, std::int64_t bytes, int to) const;
  /// `bytes` bytes from rank `from` (its send) into `data` (blocking).
  void recv(void* data, std::int64_t bytes, int from) const;
  /// Every rank's string on every rank.
  std::vector<std::string> allgather(const std::string& mine) const;

  /// Post the receives and sends of a halo exchange (not collective: neighbours only).
  void start(const std::vector<HaloMessage>& messages, PendingExchange& pending) const;
  /// Wait for every request of `pending`.
  void wait(PendingExchange& pending) const;
  /// Whether the MPI library reports CUDA (or ROCm) support for device buffers, asked at run
  /// time (Open MPI's MPIX_Query_cuda_support / MPIX_Query_rocm_support); false when unknown.
  static bool mpi_reports_gpu_support();

 private:
  Comm() = default;
  int m_rank = 0, m_size = 1;
  bool m_mpi = false;
  const void* m_native = nullptr;
};

}  // namespace kolibri
