#!/usr/bin/env bash
# Weak and strong scaling of `kolibri run` (perf/decks/scaling.toml: periodic D3Q19 FP32 BGK,
# two arrays, no output), one MPI rank per GPU.
#   perf/scaling.sh KOLIBRI OUTDIR [RANK COUNTS, default "1 2 4"]
# Weak: 256^3 cells per rank, the box grows along z (grid 1x1xN). Strong: 512^3 on N ranks
# (automatic grid). Each run's log and summary.json go to OUTDIR/<kind>_<N>/; the table at the
# end gives MLUPS, parallel efficiency and the halo exchange per step measured alone (slowest
# rank; in the run it overlaps the interior update). Environment: MPIEXEC (default mpirun), EXTRA (more kolibri options,
# e.g. "--gpu-aware-mpi off"), STEPS (default 2000).
set -euo pipefail
K=$1 OUT=$2
shift 2
RANKS=${*:-1 2 4}
MPI=${MPIEXEC:-mpirun}
STEPS=${STEPS:-2000}
DECK="$(dirname "$0")/decks/scaling.toml"
export KOKKOS_MAP_DEVICE_ID_BY=mpi_rank OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p "$OUT"
run() {  # kind ranks extra-args...
  local kind=$1 n=$2
  shift 2
  local dir="$OUT/${kind}_$n"
  echo "== $kind scaling, $n rank(s): $*" >&2
  $MPI -np "$n" "$K" run "$DECK" -o "$dir" --set run.steps="$STEPS" --progress lines ${EXTRA:-} "$@" > "$dir.log" 2>&1 ||
    { tail -20 "$dir.log" >&2; return 1; }
}
for n in $RANKS; do run weak "$n" --set domain.nz=$((256 * n)) --grid "1x1x$n"; done
for n in $RANKS; do run strong "$n" --set domain.nx=512 --set domain.ny=512 --set domain.nz=512; done
python3 - "$OUT" $RANKS <<'PY'
import json, sys
out, ranks = sys.argv[1], [int(r) for r in sys.argv[2:]]
print(f"{'kind':7} {'ranks':>5} {'grid':>7} {'cells':>12} {'MLUPS':>10} {'per rank':>9} {'eff.':>6} {'step ms':>8} {'exch. ms':>8} {'exch.%':>6}")
for kind in ["weak", "strong"]:
    base = None
    for n in ranks:
        s = json.load(open(f"{out}/{kind}_{n}/summary.json"))
        m = s["mlups"]
        base = base or m
        eff = m / (base * n)  # weak and strong alike: MLUPS per rank against one rank's
        st = 1e3 * s["step_time_s"] / (s["steps"] - s.get("first_step", 0))
        ex = s.get("exchange_ms_per_step", 0.0)
        print(f"{kind:7} {n:5d} {s.get('process_grid', '1x1x1'):>7} {s['nx'] * s['ny'] * s['nz']:12d} {m:10.0f} "
              f"{m / n:9.0f} {eff:6.3f} {st:8.3f} {ex:8.3f} {100 * ex / st:6.1f}")
PY
