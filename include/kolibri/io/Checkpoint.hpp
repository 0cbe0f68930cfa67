// SPDX-License-Identifier: Apache-2.0
/// \file
/// \brief Checkpoints of the full solver state in HDF5: one file written by all ranks (parallel
/// HDF5) or one file per rank, plus a manifest (TOML) with the step, the deck, the solver
/// signature and a checksum per rank piece. Written under `path.tmp` and renamed when complete;
/// verified on load; readable on any rank count (each rank reads the pieces its box overlaps).
#pragma once

#include <kolibri/config/Checksum.hpp>
#include <kolibri/parallel/Comm.hpp>
#include <kolibri/solver/State.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace kolibri {

/// \brief A checkpoint that cannot be used: the message names the file and the defect.
class CheckpointError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// \brief What the manifest holds besides the pieces.
struct CheckpointInfo {
  std::int64_t step = 0;
  std::string kolibri_version;
  std::string created;          ///< ISO 8601 UTC
  std::string deck;             ///< deck text as loaded (for the record and for restarts)
  std::string signature;        ///< canonical solver settings; a restart must match them
  std::string value_type;       ///< "float64", "float32" or "float16" (raw binary16 bits)
  int q = 0;                    ///< populations per cell
  std::array<int, 3> global{0, 0, 0};  ///< nx, ny, nz
  int phase = 0;                ///< state layout (SolverState::phase)
  int ranks = 1;                ///< ranks that wrote it
  std::string format;           ///< "single" (one HDF5 file) or "per-rank"
  /// The free bodies' motion (Solver::body_motion; the same on every rank), kept bit for bit
  /// (hexadecimal IEEE 754 patterns in the manifest); empty without free bodies.
  std::vector<double> body_motion;
  /// The implicit forcing's last solution (Solver::ib_coupling_forces), written to its own file
  /// (ib_forces.h5, dataset `force`: samples x 3 float64) with its checksum in the manifest;
  /// not filled by read_checkpoint_info (read_checkpoint_ib_forces reads it).
  std::vector<double> ib_forces;
  std::int64_t ib_forces_samples = 0;    ///< filled when read: samples in ib_forces.h5 (0: none)
  std::uint64_t ib_forces_checksum = 0;  ///< filled when read: their checksum64
  /// A refined grid's levels (Solver::level_state: every level's populations as stored, of
  /// value_type), written to their own file (levels.h5, dataset `populations`, one dimension)
  /// with their count and checksum in the manifest; not filled by read_checkpoint_info
  /// (read_checkpoint_levels reads it). The pieces then hold each deck cell's average of the
  /// leaves inside it, for the record.
  std::vector<std::byte> level_state;
  std::int64_t level_values = 0;     ///< filled when read: values in levels.h5 (0: none)
  std::uint64_t level_checksum = 0;  ///< filled when read: their checksum64
  /// The characteristic outlets' state of the whole domain (Solver::outlet_state), written to
  /// its own file (outlets.h5, dataset `state`, float64, one dimension) with its count and
  /// checksum in the manifest; not filled by read_checkpoint_info (read_checkpoint_outlet_state
  /// reads it).
  std::vector<double> outlet_state;
  std::int64_t outlet_values = 0;     ///< filled when read: values in outlets.h5 (0: none)
  std::uint64_t outlet_checksum = 0;  ///< filled when read: their checksum64
  std::vector<Box> boxes;       ///< per writing rank (filled when read)
  std::vector<std::uint64_t> checksums;  ///< per writing rank (filled when read)
};

/// \brief Bytes per stored value of a value_type; throws for an unknown name.
int value_bytes(const std::string& value_type);

enum class CheckpointLayout { Auto, Single, PerRank };

/// \brief Whether `comm` can write the Single layout: one rank always can (a plain HDF5 file);
/// several ranks need a parallel HDF5 build and MPI.
bool checkpoint_single_supported(const Comm& comm);

/// \brief Write every rank's piece to the checkpoint directory `path` (collective). The files go
/// to `path.tmp/` and the directory is renamed to `path` when every rank is done, replacing
/// nothing: an existing `path` is an error. Auto: Single with parallel HDF5 and MPI, else
/// PerRank. Throws OutputError on every rank if any rank failed (the message names the file).
void write_checkpoint(const Comm& comm, const std::string& path, const CheckpointInfo& info,
                      const StatePiece& mine, CheckpointLayout layout = CheckpointLayout::Auto);

/// \brief Read and check the manifest of the checkpoint directory `path` (no collective call).
/// Its step must agree with the directory name's (`..._ckpt_<step>`); each data file's own step
/// is checked against it when the file is read.
CheckpointInfo read_checkpoint_info(const std::string& path);

/// \brief Fill want.data (resized here) with the state of want.box from the checkpoint, reading
/// every piece that overlaps it and verifying its checksum. Not collective.
void read_checkpoint_state(const std::string& path, const CheckpointInfo& info, StatePiece& want);

/// \brief The implicit forcing's forces of the checkpoint `path` (empty when it has none), their
/// size and checksum checked against the manifest; throws CheckpointError on a defect.
std::vector<double> read_checkpoint_ib_forces(const std::string& path, const CheckpointInfo& info);

/// \brief The characteristic outlets' state of the checkpoint `path` (empty when it has none),
/// its size and checksum checked against the manifest (no collective call).
std::vector<double> read_checkpoint_outlet_state(const std::string& path,
                                                 const CheckpointInfo& info);

/// \brief A refined grid's levels of the checkpoint `path` (empty when it has none), their
/// count and checksum checked against the manifest (no collective call).
std::vector<std::byte> read_checkpoint_levels(const std::string& path, const CheckpointInfo& info);
/// \brief The values of `slice` (a rank's part of a refined grid's levels: Solver::level_slice)
/// of the checkpoint `path`, in the slice's order. With `verify` (rank 0 on a restart) the whole
/// file is read once, in parts, and its checksum checked (CheckpointError); without,
/// the slice's ranges only (`part_bytes`: the parts' size, whole 8-byte words; tests use small
/// ones). Throws std::invalid_argument where the checkpoint's levels and the slice's do not fit
/// (another deck). No collective call.
std::vector<std::byte> read_checkpoint_levels(const std::string& path, const CheckpointInfo& info,
                                              const LevelSlice& slice, bool verify,
                                              std::int64_t part_bytes = std::int64_t(64) << 20);

/// \brief Read back the checkpoint `path` (collective): its manifest on every rank, then every
/// piece once over the ranks (piece r on rank r mod size), checking each piece's checksum and the
/// step its file holds against the manifest (and the directory name's step). Throws
/// CheckpointError on every rank when any rank found a defect; returns the manifest.
CheckpointInfo verify_checkpoint(const Comm& comm, const std::string& path);
/// \brief Rename `path` (a damaged or incomplete checkpoint directory) to `path.<what>` (or
/// `path.<what>.2`, ...), never deleting it; returns the new path. Not collective.
std::string move_aside(const std::string& path, const std::string& what);
/// \brief Directory of the checkpoint of `name` at `step` in `dir`: dir/name_ckpt_00001000.
std::string checkpoint_path(const std::string& dir, const std::string& name, std::int64_t step);

/// \brief Complete checkpoints (with a manifest) of `name` in `dir`, oldest first.
std::vector<std::string> list_checkpoints(const std::string& dir, const std::string& name);

/// \brief Remove all but the newest `keep` complete checkpoints of `name` in `dir` among those at
/// steps up to `upto_step`, and stale `.tmp` directories of this name (a run killed while
/// writing). Checkpoints of later steps are never removed (a run restarted from an earlier one
/// writing at `upto_step`). Returns the removed paths.
std::vector<std::string> prune_checkpoints(const std::string& dir, const std::string& name, int keep,
                                           std::int64_t upto_step = INT64_MAX);

}  // namespace kolibri
