// SPDX-License-Identifier: Apache-2.0
// The one file that asks backend-specific questions (device name and vendor).
#include <kolibri/core/Backend.hpp>
#include <kolibri/core/Kokkos.hpp>

#include <fstream>
#include <string>
#include <unistd.h>

#if defined(KOKKOS_ENABLE_CUDA)
#include <cuda_runtime.h>
#endif
#if defined(KOKKOS_ENABLE_HIP)
#include <hip/hip_runtime.h>
#endif

namespace kolibri {

namespace {
std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      return colon == std::string::npos ? line : line.substr(colon + 2);
    }
  return "unknown CPU";
}
}  // namespace

BackendInfo backend_info() {
  BackendInfo b;
  const int v = KOKKOS_VERSION;
  b.kokkos_version = std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." +
                     std::to_string(v % 100);
  b.version = std::to_string(KOLIBRI_VERSION_MAJOR) + "." + std::to_string(KOLIBRI_VERSION_MINOR) + "." +
              std::to_string(KOLIBRI_VERSION_PATCH);
  b.execution_space = ExecSpace::name();
  b.concurrency = ExecSpace().concurrency();
  b.device = cpu_model();
  b.vendor = "host";
  char host[256] = "";
  gethostname(host, sizeof host - 1);
  b.device_uid = "host";
#if defined(KOKKOS_ENABLE_CUDA)
  int dev = 0;
  cudaDeviceProp prop{};
  if (cudaGetDevice(&dev) == cudaSuccess && cudaGetDeviceProperties(&prop, dev) == cudaSuccess) {
    b.device = prop.name;
    b.vendor = "NVIDIA";
    char bus[32] = "";
    if (cudaDeviceGetPCIBusId(bus, sizeof bus, dev) == cudaSuccess) b.device_uid = bus;
  }
#elif defined(KOKKOS_ENABLE_HIP)
  int dev = 0;
  hipDeviceProp_t prop{};
  if (hipGetDevice(&dev) == hipSuccess && hipGetDeviceProperties(&prop, dev) == hipSuccess) {
    b.device = prop.name;
    b.vendor = "AMD";
    char bus[32] = "";
    if (hipDeviceGetPCIBusId(bus, sizeof bus, dev) == hipSuccess) b.device_uid = bus;
  }
#endif
  b.device_uid = std::string(host) + "/" + b.device_uid;
#if defined(__clang__)
  b.compiler = std::string("clang ") + __clang_version__;
#elif defined(__GNUC__)
  b.compiler = std::string("gcc ") + __VERSION__;
#endif
#if defined(__NVCC__)
  b.compiler += " + nvcc " + std::to_string(__CUDACC_VER_MAJOR__) + "." + std::to_string(__CUDACC_VER_MINOR__);
#endif
  return b;
}

std::size_t device_free_memory() {
#if defined(KOKKOS_ENABLE_CUDA)
  std::size_t free = 0, total = 0;
  if (cudaMemGetInfo(&free, &total) == cudaSuccess) return free;
#elif defined(KOKKOS_ENABLE_HIP)
  std::size_t free = 0, total = 0;
  if (hipMemGetInfo(&free, &total) == hipSuccess) return free;
#endif
  return std::size_t(sysconf(_SC_AVPHYS_PAGES)) * std::size_t(sysconf(_SC_PAGESIZE));
}

}  // namespace kolibri
