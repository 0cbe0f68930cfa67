// SPDX-License-Identifier: Apache-2.0
#include <kolibri/parallel/Nccl.hpp>

#include <stdexcept>
#include <string>

#if defined(KOLIBRI_HAVE_NCCL)
#if defined(KOLIBRI_NCCL_IS_RCCL)
#include <rccl/rccl.h>
#else
#include <nccl.h>
#endif
#include <algorithm>
#include <cstring>
#endif

namespace kolibri {

#if defined(KOLIBRI_HAVE_NCCL)
namespace {
#if defined(KOLIBRI_NCCL_IS_RCCL)
using Stream = hipStream_t;
#else
using Stream = cudaStream_t;
#endif
void check(ncclResult_t r, const char* what) {
  if (r != ncclSuccess) throw std::runtime_error(std::string("NCCL ") + what + ": " + ncclGetErrorString(r));
}
}  // namespace

struct NcclComm::Impl {
  ncclComm_t comm = nullptr;
};

bool NcclComm::built() { return true; }

NcclComm::NcclComm(const Comm& comm) : m(std::make_unique<Impl>()) {
  ncclUniqueId id;
  std::string bytes(sizeof id, '\0');
  if (comm.root()) {
    check(ncclGetUniqueId(&id), "ncclGetUniqueId");
    std::memcpy(bytes.data(), &id, sizeof id);
  }
  comm.bcast(bytes);
  std::memcpy(&id, bytes.data(), sizeof id);
  check(ncclCommInitRank(&m->comm, comm.size(), id, comm.rank()), "ncclCommInitRank");
}

NcclComm::~NcclComm() {
  if (m && m->comm) ncclCommDestroy(m->comm);
}

void NcclComm::exchange(const std::vector<HaloMessage>& messages, void* stream) const {
  std::vector<const HaloMessage*> sends, recvs;
  for (const auto& msg : messages) {
    if (msg.send_bytes > 0) sends.push_back(&msg);
    if (msg.recv_bytes > 0) recvs.push_back(&msg);
  }
  std::sort(sends.begin(), sends.end(), [](auto a, auto b) { return a->send_tag < b->send_tag; });
  std::sort(recvs.begin(), recvs.end(), [](auto a, auto b) { return a->recv_tag < b->recv_tag; });
  auto s = static_cast<Stream>(stream);
  check(ncclGroupStart(), "ncclGroupStart");
  for (auto r : recvs) check(ncclRecv(r->recv, std::size_t(r->recv_bytes), ncclUint8, r->peer, m->comm, s), "ncclRecv");
  for (auto x : sends) check(ncclSend(x->send, std::size_t(x->send_bytes), ncclUint8, x->peer, m->comm, s), "ncclSend");
  check(ncclGroupEnd(), "ncclGroupEnd");
}
#else
struct NcclComm::Impl {};
bool NcclComm::built() { return false; }
NcclComm::NcclComm(const Comm&) { throw std::runtime_error("this kolibri was built without NCCL (KOLIBRI_ENABLE_NCCL)"); }
NcclComm::~NcclComm() = default;
void NcclComm::exchange(const std::vector<HaloMessage>&, void*) const {}
#endif

}  // namespace kolibri
