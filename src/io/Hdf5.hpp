// SPDX-License-Identifier: Apache-2.0
// Internal: the HDF5 helpers the field and checkpoint writers share.
#pragma once

#include <hdf5.h>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <unistd.h>
#include <vector>

namespace kolibri::detail {

/// HDF5 1.10 crashes in its exit handler after a write failed (disk full, quota, file size
/// limit): it flushes the failed file again. Field and per-rank checkpoint files are built in
/// memory (create_in_memory), so only the single-file checkpoint layout still writes through
/// HDF5; kolibri closes every file it opens, so the handler is not needed and is switched off
/// before HDF5 is first used (static initialisation). (With parallel HDF5, MPI_Finalize still runs
/// HDF5's clean-up: a failed single-file write can still end in a crash there.)
inline const herr_t kNoHdf5ExitHandler = H5dont_atexit();

struct H5Handle {  // closes an HDF5 id on scope exit
  hid_t id;
  herr_t (*close)(hid_t);
  H5Handle(hid_t i, herr_t (*c)(hid_t)) : id(i), close(c) {}
  H5Handle(const H5Handle&) = delete;
  H5Handle& operator=(const H5Handle&) = delete;
  ~H5Handle() {
    if (id >= 0) close(id);
  }
  /// Close now and report whether HDF5 managed (flushing a file happens here).
  bool close_now() {
    const hid_t i = id;
    id = -1;
    return i < 0 || close(i) >= 0;
  }
};

/// Silences HDF5's automatic error-stack printing while alive (our messages say what failed).
class H5Quiet {
 public:
  H5Quiet() {
    H5Eget_auto2(H5E_DEFAULT, &m_func, &m_data);
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  }
  H5Quiet(const H5Quiet&) = delete;
  H5Quiet& operator=(const H5Quiet&) = delete;
  ~H5Quiet() { H5Eset_auto2(H5E_DEFAULT, m_func, m_data); }

 private:
  H5E_auto2_t m_func = nullptr;
  void* m_data = nullptr;
};

/// The most specific message on HDF5's current error stack (e.g. "truncated file: eof = ..."),
/// as " (HDF5: ...)", or "" when the stack is empty.
inline std::string h5_detail() {
  std::string msg;
  H5Ewalk2(
      H5E_DEFAULT, H5E_WALK_UPWARD,
      [](unsigned n, const H5E_error2_t* e, void* out) -> herr_t {
        if (n == 0 && e && e->desc) *static_cast<std::string*>(out) = e->desc;
        return 0;
      },
      &msg);
  return msg.empty() ? std::string() : " (HDF5: " + msg + ")";
}

/// An HDF5 file built in memory (core driver, no backing store): HDF5 itself never writes to the
/// file system, so a full disk cannot leave it with a half-flushed file (which HDF5 1.10 flushes
/// again at exit or MPI_Finalize, and crashes). `write_image` then puts the bytes on disk with
/// plain writes that report errno. Returns the file id (negative on failure).
inline hid_t create_in_memory() {
  H5Handle fapl{H5Pcreate(H5P_FILE_ACCESS), H5Pclose};
  if (fapl.id < 0 || H5Pset_fapl_core(fapl.id, std::size_t(1) << 20, 0) < 0) return -1;
  return H5Fcreate("in-memory.h5", H5F_ACC_TRUNC, H5P_DEFAULT, fapl.id);
}

/// The bytes of an in-memory file (create_in_memory), after a flush; empty on failure.
inline std::vector<unsigned char> image_of(hid_t file) {
  if (H5Fflush(file, H5F_SCOPE_LOCAL) < 0) return {};
  const ssize_t n = H5Fget_file_image(file, nullptr, 0);
  if (n <= 0) return {};
  std::vector<unsigned char> bytes(static_cast<std::size_t>(n));
  if (H5Fget_file_image(file, bytes.data(), bytes.size()) != n) return {};
  return bytes;
}

/// Write `bytes` to a new file `path` (O_EXCL when `exclusive`, else truncating), fsynced when
/// `sync` (checkpoints; field files are not). Returns "" or the reason (errno text); a failed file
/// is removed.
inline std::string write_image(const std::string& path, const std::vector<unsigned char>& bytes,
                               bool exclusive, bool sync) {
  const int fd =
      ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | (exclusive ? O_EXCL : O_TRUNC), 0644);
  if (fd < 0) return std::strerror(errno);
  std::size_t done = 0;
  std::string err;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n > 0) {
      done += std::size_t(n);
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      err = std::strerror(n < 0 ? errno : ENOSPC);
      break;
    }
  }
  if (err.empty() && sync && ::fsync(fd) != 0) err = std::strerror(errno);
  if (::close(fd) != 0 && err.empty()) err = std::strerror(errno);
  if (!err.empty()) ::unlink(path.c_str());
  return err;
}

/// The system's reason for the last failed call (errno), as " (No space left on device)", or "".
/// Set errno = 0 before the call whose failure it explains.
inline std::string os_cause() {
  return errno != 0 ? std::string(" (") + std::strerror(errno) + ")" : std::string();
}

}  // namespace kolibri::detail
