// SPDX-License-Identifier: Apache-2.0
#include <kolibri/parallel/Comm.hpp>

#if defined(KOLIBRI_HAVE_MPI)
#include <mpi.h>
#if defined(OPEN_MPI) && __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif
#endif

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace kolibri {

#if defined(KOLIBRI_HAVE_MPI)
namespace {
MPI_Comm g_world = MPI_COMM_WORLD;
constexpr std::int64_t kChunk = std::int64_t(1) << 30;  // MPI counts are int: move bytes in 1 GiB pieces

void send_bytes(const std::byte* p, std::int64_t n, int to, MPI_Comm c) {
  for (std::int64_t off = 0; off < n; off += kChunk)
    MPI_Send(p + off, int(std::min(kChunk, n - off)), MPI_BYTE, to, 7, c);
}
void recv_bytes(std::byte* p, std::int64_t n, int from, MPI_Comm c) {
  for (std::int64_t off = 0; off < n; off += kChunk)
    MPI_Recv(p + off, int(std::min(kChunk, n - off)), MPI_BYTE, from, 7, c, MPI_STATUS_IGNORE);
}
}  // namespace
#endif

const Comm& Comm::world() {
  static const Comm c = [] {
    Comm w;
#if defined(KOLIBRI_HAVE_MPI)
    int init = 0, fin = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    if (init && !fin) {
      w.m_mpi = true;
      w.m_native = &g_world;
      MPI_Comm_rank(MPI_COMM_WORLD, &w.m_rank);
      MPI_Comm_size(MPI_COMM_WORLD, &w.m_size);
    }
#endif
    return w;
  }();
  return c;
}

#if defined(KOLIBRI_HAVE_MPI)
#define KOLIBRI_ALLREDUCE(v, type, op)                                   \
  do {                                                                   \
    if (m_mpi) MPI_Allreduce(MPI_IN_PLACE, &v, 1, type, op, g_world);    \
  } while (0)
#else
#define KOLIBRI_ALLREDUCE(v, type, op) (void)0
#endif

void Comm::barrier() const {
#if defined(KOLIBRI_HAVE_MPI)
  if (m_mpi) MPI_Barrier(g_world);
#endif
}
double Comm::sum(double v) const {
  KOLIBRI_ALLREDUCE(v, MPI_DOUBLE, MPI_SUM);
  return v;
}
double Comm::max(double v) const {
  KOLIBRI_ALLREDUCE(v, MPI_DOUBLE, MPI_MAX);
  return v;
}
std::int64_t Comm::sum(std::int64_t v) const {
  KOLIBRI_ALLREDUCE(v, MPI_INT64_T, MPI_SUM);
  return v;
}
std::int64_t Comm::min(std::int64_t v) const {
  KOLIBRI_ALLREDUCE(v, MPI_INT64_T, MPI_MIN);
  return v;
}
std::int64_t Comm::max(std::int64_t v) const {
  KOLIBRI_ALLREDUCE(v, MPI_INT64_T, MPI_MAX);
  return v;
}
#undef KOLIBRI_ALLREDUCE

void Comm::sum(std::vector<double>& v) const {
#if defined(KOLIBRI_HAVE_MPI)
  if (m_mpi && !v.empty()) MPI_Allreduce(MPI_IN_PLACE, v.data(), int(v.size()), MPI_DOUBLE, MPI_SUM, g_world);
#else
  (void)v;
#endif
}

void Comm::sum(std::vector<std::int64_t>& v) const {
#if defined(KOLIBRI_HAVE_MPI)
  if (m_mpi && !v.empty())
    MPI_Allreduce(MPI_IN_PLACE, v.data(), int(v.size()), MPI_INT64_T, MPI_SUM, g_world);
#else
  (void)v;
#endif
}

void Comm::bcast(std::string& s, int root) const {
#if defined(KOLIBRI_HAVE_MPI)
  if (!m_mpi) return;
  std::int64_t n = std::int64_t(s.size());
  MPI_Bcast(&n, 1, MPI_INT64_T, root, g_world);
  s.resize(std::size_t(n));
  if (n > 0) MPI_Bcast(s.data(), int(n), MPI_CHAR, root, g_world);
#else
  (void)s, (void)root;
#endif
}

void Comm::bcast(void* data, std::int64_t bytes, int root) const {
#if defined(KOLIBRI_HAVE_MPI)
  if (!m_mpi) return;
  auto* p = static_cast<std::byte*>(data);
  for (std::int64_t off = 0; off < bytes; off += kChunk)
    MPI_Bcast(p + off, int(std::min(kChunk, bytes - off)), MPI_BYTE, root, g_world);
#else
  (void)data, (void)bytes, (void)root;
#endif
}

std::vector<std::byte> Comm::gather(const std::vector<std::byte>& mine, std::vector<std::int64_t>& counts,
                                    int root) const {
  counts.assign(std::size_t(m_size), 0);
  std::vector<std::byte> out;
  if (!m_mpi || m_size == 1) {
    counts[0] = std::int64_t(mine.size());
    return mine;
  }
#if defined(KOLIBRI_HAVE_MPI)
  std::int64_t n = std::int64_t(mine.size());
  MPI_Gather(&n, 1, MPI_INT64_T, counts.data(), 1, MPI_INT64_T, root, g_world);
  if (m_rank == root) {
    std::int64_t total = 0;
    for (auto c : counts) total += c;
    out.resize(std::size_t(total));
    std::int64_t off = 0;
    for (int r = 0; r < m_size; ++r) {
      if (r == root) std::memcpy(out.data() + off, mine.data(), mine.size());
      else recv_bytes(out.data() + off, counts[std::size_t(r)], r, g_world);
      off += counts[std::size_t(r)];
    }
  } else {
    send_bytes(mine.data(), n, root, g_world);
  }
#else
  (void)root;
#endif
  return out;
}

void Comm::send(const void* data, std::int64_t bytes, int to) const {
#if defined(KOLIBRI_HAVE_MPI)
  if (m_mpi) send_bytes(static_cast<const std::byte*>(data), bytes, to, g_world);
#else
  (void)data, (void)bytes, (void)to;
#endif
}

void Comm::recv(void* data, std::int64_t bytes, int from) const {
#if defined(KOLIBRI_HAVE_MPI)
  if (m_mpi) recv_bytes(static_cast<std::byte*>(data), bytes, from, g_world);
#else
  (void)data, (void)bytes, (void)from;
#endif
}

std::vector<std::string> Comm::allgather(const std::string& mine) const {
  if (!m_mpi || m_size == 1) return {mine};
  std::vector<std::byte> bytes(mine.size());
  std::memcpy(bytes.data(), mine.data(), mine.size());
  std::vector<std::int64_t> counts;
  const auto all = gather(bytes, counts, 0);
  std::string joined(reinterpret_cast<const char*>(all.data()), all.size());
  bcast(joined, 0);
  std::string c(std::size_t(m_size) * sizeof(std::int64_t), '\0');
  if (m_rank == 0) std::memcpy(c.data(), counts.data(), c.size());
  bcast(c, 0);
  counts.resize(std::size_t(m_size));
  std::memcpy(counts.data(), c.data(), c.size());
  std::vector<std::string> out;
  std::size_t off = 0;
  for (auto n : counts) out.push_back(joined.substr(off, std::size_t(n))), off += std::size_t(n);
  return out;
}

void Comm::start(const std::vector<HaloMessage>& messages, PendingExchange& pending) const {
#if defined(KOLIBRI_HAVE_MPI)
  pending.requests.assign(2 * messages.size() * sizeof(MPI_Request), std::byte{0});
  auto* req = reinterpret_cast<MPI_Request*>(pending.requests.data());
  int k = 0;
  for (const auto& m : messages)
    if (m.recv_bytes > 0) MPI_Irecv(m.recv, int(m.recv_bytes), MPI_BYTE, m.peer, m.recv_tag, g_world, &req[k++]);
  for (const auto& m : messages)
    if (m.send_bytes > 0) MPI_Isend(m.send, int(m.send_bytes), MPI_BYTE, m.peer, m.send_tag, g_world, &req[k++]);
  pending.count = k;
#else
  if (!messages.empty()) throw std::logic_error("halo exchange without MPI");
  pending.count = 0;
#endif
}

void Comm::wait(PendingExchange& pending) const {
#if defined(KOLIBRI_HAVE_MPI)
  if (pending.count > 0)
    MPI_Waitall(pending.count, reinterpret_cast<MPI_Request*>(pending.requests.data()), MPI_STATUSES_IGNORE);
#endif
  pending.count = 0;
}

bool Comm::mpi_reports_gpu_support() {
#if defined(KOLIBRI_HAVE_MPI) && defined(MPIX_CUDA_AWARE_SUPPORT) && MPIX_CUDA_AWARE_SUPPORT
  if (MPIX_Query_cuda_support()) return true;
#endif
#if defined(KOLIBRI_HAVE_MPI) && defined(MPIX_ROCM_AWARE_SUPPORT) && MPIX_ROCM_AWARE_SUPPORT
  if (MPIX_Query_rocm_support()) return true;
#endif
  return false;
}

}  // namespace kolibri
