// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief What the build runs on: the Kokkos backend, the device and the compiler (`kolibri info`,
/// summaries, benchmark records), and the device's free memory. Defined in src/core/Backend.cpp,
/// the one source file that asks backend-specific questions.
#pragma once

#include <cstddef>
#include <string>

namespace kolibri {

/// \brief Backend facts for `kolibri info` and summaries.
struct BackendInfo {
  std::string version;  ///< kolibri's own version
  std::string kokkos_version;
  std::string execution_space;
  std::string device;      ///< GPU name, or the host's CPU model
  std::string vendor;      ///< NVIDIA, AMD or host
  std::string device_uid;  ///< host name / PCI bus id of the device: ranks sharing a GPU match
  std::string compiler;
  int concurrency = 1;
};
BackendInfo backend_info();

/// \brief Free memory of the default device (host: available RAM), in bytes.
std::size_t device_free_memory();

}  // namespace kolibri
