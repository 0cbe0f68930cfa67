#!/bin/bash
# B = this working tree (probes between cells on the finest level; dfg.py --levels), D2Q9 TRT FP64
# cut: DFG 2D-1 with the interpolated cylinder on three levels (D = 80 and 160 finest cells, level
# 0 at D = 20 and 40) and on the uniform grid at D = 80, one after the other.
R=$OUT/r; mkdir -p $R
save() { tar -czf $OUT/r.tgz -C $OUT r; }
K=$(cd "$(dirname "$0")" && pwd)
t0=$SECONDS
[ -d /tmp/k/inst ] || bash $K/kokkos.sh > $R/kokkos.out 2>&1
export Kokkos_ROOT=/tmp/k/inst
bash $K/tree.sh D -DKOLIBRI_OPERATORS=Trt -DKOLIBRI_STORAGES=Fp64 -DKOLIBRI_LATTICES=D2Q9 > $R/buildD.out 2>&1
echo "built $((SECONDS-t0)) s" >> $R/time.txt; save
K1=/tmp/b_D/bin/kolibri
for c in "80 3" "80 1" "160 3"; do
  set -- $c
  python3 scripts/dfg.py run 2d1 $1 /tmp/dfg_$1_$2 --levels $2 --kolibri $K1 > $R/dfg_$1_L$2.log 2>&1
  python3 scripts/dfg.py analyse 2d1 $1 /tmp/dfg_$1_$2 --levels $2 > $R/dfg_$1_L$2.json 2>&1
  cp /tmp/dfg_$1_$2/summary.json $R/dfg_$1_L$2.summary.json
  echo "dfg $1 L$2 $((SECONDS-t0)) s" >> $R/time.txt; save
done
