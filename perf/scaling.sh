#!/usr/bin/env bash
# Weak and strong scaling of `kolibri run` for every streaming scheme, one MPI rank per GPU.
#   perf/scaling.sh KOLIBRI OUTDIR [RANK COUNTS, default "1 2 4"]
# Case: perf/decks/scaling.toml (a periodic box with a uniform flow, no output), with the scheme
# set per series (CASES below). The ranks split one axis, z unless AXIS says otherwise (grid
# 1x1xN, as kolibri's automatic grid cuts a cube). Weak: 256^3 cells per rank, the box grows
# along that axis. Strong: 512^3 on N ranks.
# Each run writes OUTDIR/<case>/<kind>_<N>/summary.json
# (one JSON per run) and a log beside it; at the end OUTDIR/scaling.json gathers every run with
# its efficiency (perf/compare.py --scaling draws it) and a table is printed.
# Environment:
#   CASES    the series to run (default: all of the table below)
#   KINDS    weak, strong or both (default "weak strong")
#   STEPS    time steps a run (default 2000)
#   MPIEXEC  (default mpirun), EXTRA (more kolibri options, e.g. "--halo-transport mpi")
#   AXIS     x, y or z: the axis the ranks split (default z; y cuts the moment
#            representation's 6-cell tile rows instead of its 64-layer column segments)
set -euo pipefail
K=$1 OUT=$2
shift 2
RANKS=${*:-1 2 4}
MPI=${MPIEXEC:-mpirun}
STEPS=${STEPS:-2000}
KINDS=${KINDS:-weak strong}
DECK="$(dirname "$0")/decks/scaling.toml"
# name: lattice precision storage streaming collision
declare -A SCHEME=(
  [d3q19_fp32_two_array]="D3Q19 fp32 same two_array bgk"
  [d3q19_fp32_in_place]="D3Q19 fp32 same in_place bgk"
  [d3q19_fp16_two_array]="D3Q19 fp32 fp16 two_array bgk"
  [d3q19_fp16_in_place]="D3Q19 fp32 fp16 in_place bgk"
  [d3q19_fp32_moments]="D3Q19 fp32 same moments regularized"
  [d3q27_fp64_two_array]="D3Q27 fp64 same two_array bgk"
  [d3q27_fp64_in_place]="D3Q27 fp64 same in_place bgk"
  [d3q27_fp64_moments]="D3Q27 fp64 same moments regularized"
)
ORDER="d3q19_fp32_two_array d3q19_fp32_in_place d3q19_fp16_two_array d3q19_fp16_in_place d3q19_fp32_moments
d3q27_fp64_two_array d3q27_fp64_in_place d3q27_fp64_moments"
CASES=${CASES:-$ORDER}
for c in $CASES; do
  [ -n "${SCHEME[$c]:-}" ] || { echo "perf/scaling.sh: unknown case '$c'; expected one of: $ORDER" >&2; exit 2; }
done
export KOKKOS_MAP_DEVICE_ID_BY=mpi_rank OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p "$OUT"
run() {  # case kind ranks extra-args...
  local c=$1 kind=$2 n=$3
  shift 3
  read -r lattice precision storage streaming collision <<< "${SCHEME[$c]}"
  local dir="$OUT/$c/${kind}_$n"
  mkdir -p "$OUT/$c"
  echo "== $c: $kind scaling, $n rank(s)" >&2
  $MPI -np "$n" "$K" run "$DECK" -o "$dir" --set run.steps="$STEPS" --progress lines \
    --set model.lattice="$lattice" --set model.precision="$precision" --set model.storage="$storage" \
    --set model.streaming="$streaming" --set model.collision="$collision" ${EXTRA:-} "$@" > "$dir.log" 2>&1 ||
    { tail -20 "$dir.log" >&2; return 1; }
}
axis=${AXIS:-z}
case $axis in x | y | z) ;; *) echo "perf/scaling.sh: AXIS '$axis': expected x, y or z" >&2; exit 2 ;; esac
for c in $CASES; do
  for kind in $KINDS; do
    for n in $RANKS; do
      case $axis in
        x) grid="${n}x1x1" ;;
        y) grid="1x${n}x1" ;;
        z) grid="1x1x$n" ;;
      esac
      case $kind in
        weak) run "$c" weak "$n" --set domain.n$axis=$((256 * n)) --grid "$grid" ;;
        strong) run "$c" strong "$n" --set domain.nx=512 --set domain.ny=512 --set domain.nz=512 --grid "$grid" ;;
        *) echo "perf/scaling.sh: unknown kind '$kind' (weak, strong)" >&2; exit 2 ;;
      esac
    done
  done
done
python3 - "$OUT" "$CASES" "$KINDS" $RANKS <<'PY'
import json, sys
out, cases, kinds, ranks = sys.argv[1], sys.argv[2].split(), sys.argv[3].split(), [int(r) for r in sys.argv[4:]]
rows = []
print(f"{'case':22} {'kind':6} {'ranks':>5} {'grid':>7} {'cells':>12} {'MLUPS':>10} {'per rank':>9} {'eff.':>6} "
      f"{'step ms':>8} {'exch. ms':>8} {'exch.%':>6}")
for c in cases:
    for kind in kinds:
        base = None
        for n in ranks:
            s = json.load(open(f"{out}/{c}/{kind}_{n}/summary.json"))
            m = s["mlups"]
            base = base or m
            eff = m * ranks[0] / (base * n)  # MLUPS per rank against the first count's per rank
            st = 1e3 * s["step_time_s"] / (s["steps"] - s.get("first_step", 0))
            ex = s.get("exchange_ms_per_step", 0.0)
            rows.append({"case": c, "kind": kind, "ranks": n, "grid": s.get("process_grid", "1x1x1"),
                         "cells": s["nx"] * s["ny"] * s["nz"], "mlups": m, "efficiency": eff,
                         "step_ms": st, "exchange_ms_alone": ex, "device": s.get("device", "")})
            print(f"{c:22} {kind:6} {n:5d} {rows[-1]['grid']:>7} {rows[-1]['cells']:12d} {m:10.0f} {m / n:9.0f} "
                  f"{eff:6.3f} {st:8.3f} {ex:8.3f} {100 * ex / st:6.1f}")
json.dump({"runs": rows}, open(f"{out}/scaling.json", "w"), indent=1)
PY
