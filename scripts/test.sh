#!/usr/bin/env bash
# Run the test suite of the host build: unit, validation and mpi (mpirun --oversubscribe) labels (validation-long is opt-in:
# KOLIBRI_LONG=1 bash scripts/test.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
labels='unit|validation$|mpi'
if [ "${KOLIBRI_LONG:-0}" = 1 ]; then labels='unit|validation|mpi'; fi
ctest --test-dir build -L "$labels" --output-on-failure -j "$(nproc)"
