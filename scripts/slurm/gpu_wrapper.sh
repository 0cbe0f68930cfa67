#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# gpu_wrapper.sh: give each MPI rank of a node its own GPU, then run the command in its place.
#
#   srun -n 4 scripts/slurm/gpu_wrapper.sh ./build-cuda/bin/kolibri run deck.toml
#   mpirun -np 4 scripts/slurm/gpu_wrapper.sh ./build-cuda/bin/kolibri run deck.toml
#
# The rank on this node comes from the MPI launcher (Open MPI, MVAPICH2, MPICH/Hydra) or from
# Slurm (SLURM_LOCALID, set by srun). The launcher's variable goes first: under `mpirun` inside a
# Slurm job, SLURM_LOCALID belongs to mpirun's daemon step and is 0 for every rank.
#
# The GPU is entry (local rank mod count) of the list already in CUDA_VISIBLE_DEVICES, so the
# wrapper also works where Slurm has set that list; with one entry (srun --gpus-per-task=1 has
# already bound the GPU) nothing changes. With no list, the local rank itself is the device number.
# For AMD GPUs run it with KOLIBRI_GPU_VAR=ROCR_VISIBLE_DEVICES.
#
# `exec` keeps the process id: signals sent to the rank (SIGUSR1 from srun or mpirun) reach kolibri.
set -euo pipefail
var=${KOLIBRI_GPU_VAR:-CUDA_VISIBLE_DEVICES}
rank=${OMPI_COMM_WORLD_LOCAL_RANK:-${MV2_COMM_WORLD_LOCAL_RANK:-${MPI_LOCALRANKID:-${SLURM_LOCALID:-0}}}}
IFS=, read -r -a gpus <<<"${!var:-}"
if ((${#gpus[@]} == 0)); then
  export "$var=$rank"
elif ((${#gpus[@]} > 1)); then
  export "$var=${gpus[rank % ${#gpus[@]}]}"
fi
exec "$@"
