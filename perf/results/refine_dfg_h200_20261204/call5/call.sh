#!/bin/bash
# DFG 2D-1 on refined grids with the channel's walls refined too (dfg.py --wall-band 8), D2Q9 TRT
# FP64 cut of this working tree: (D, L) = (80, 2), (80, 3), (160, 3).
R=$OUT/r; mkdir -p $R
save() { tar -czf $OUT/r.tgz -C $OUT r; }
K=$(cd "$(dirname "$0")" && pwd)
t0=$SECONDS
[ -d /tmp/k/inst ] || bash $K/kokkos.sh > $R/kokkos.out 2>&1
export Kokkos_ROOT=/tmp/k/inst
[ -x /tmp/b_D/bin/kolibri ] || bash $K/tree.sh D -DKOLIBRI_OPERATORS=Trt -DKOLIBRI_STORAGES=Fp64 -DKOLIBRI_LATTICES=D2Q9 > $R/buildD.out 2>&1
echo "built $((SECONDS-t0)) s" >> $R/time.txt; save
for c in "80 2" "80 3" "160 3"; do
  set -- $c
  python3 scripts/dfg.py run 2d1 $1 /tmp/dfgwb_$1_$2 --levels $2 --wall-band 8 --kolibri /tmp/b_D/bin/kolibri > $R/dfgwb_$1_L$2.log 2>&1
  python3 scripts/dfg.py analyse 2d1 $1 /tmp/dfgwb_$1_$2 --levels $2 > $R/dfgwb_$1_L$2.json 2>&1
  echo "dfg $1 L$2 $((SECONDS-t0)) s" >> $R/time.txt; save
done
