// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Device-to-device halo transport through NCCL (NVIDIA) or RCCL (AMD, same API):
/// point-to-point sends and receives enqueued on the exchange's stream, so neither the host nor
/// host memory is involved (NVLink / xGMI between GPUs of a node). Built only with
/// KOLIBRI_ENABLE_NCCL; the declarations are always there so callers need no #ifdef.
#pragma once

#include <kolibri/parallel/Comm.hpp>

#include <memory>
#include <vector>

namespace kolibri {

class NcclComm {
 public:
  /// True when this build has NCCL/RCCL.
  static bool built();
  /// One communicator over the ranks of `comm` (collective; throws std::runtime_error with
  /// NCCL's message on failure). The id travels through MPI.
  explicit NcclComm(const Comm& comm);
  ~NcclComm();
  NcclComm(const NcclComm&) = delete;
  NcclComm& operator=(const NcclComm&) = delete;

  /// Enqueue the sends and receives of `messages` (device pointers) on `stream` (a
  /// cudaStream_t / hipStream_t) as one group. Messages to one peer are matched in tag order,
  /// which both sides share (the receiver's recv_tag is the sender's send_tag).
  void exchange(const std::vector<HaloMessage>& messages, void* stream) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> m;
};

}  // namespace kolibri
