#!/bin/bash
# B = this working tree (obstacles' interpolated walls on refined levels), D3Q27 KBC FP64 cut:
# the Re 100 sphere wake on three levels at D = 64, the sphere interpolated.
R=$OUT/r; mkdir -p $R
save() { tar -czf $OUT/r.tgz -C $OUT r; }
K=$(cd "$(dirname "$0")" && pwd)
t0=$SECONDS
[ -d /tmp/k/inst ] || bash $K/kokkos.sh > $R/kokkos.out 2>&1
export Kokkos_ROOT=/tmp/k/inst
[ -x /tmp/b_B/bin/kolibri ] || bash $K/tree.sh B -DKOLIBRI_OPERATORS=Kbc -DKOLIBRI_STORAGES=Fp64 -DKOLIBRI_LATTICES=D3Q27 > $R/buildB.out 2>&1
echo "built $((SECONDS-t0)) s" >> $R/time.txt; save
python3 scripts/wake.py run sphere 64 /tmp/w_I_64 --levels 3 --obstacle --box 24x12x12 --kolibri /tmp/b_B/bin/kolibri --set 'obstacle[0].wall="interpolated"' > $R/wake_I_64.log 2>&1
python3 scripts/wake.py analyse /tmp/w_I_64 > $R/wake_I_64.json 2>&1
echo "wake I 64 $((SECONDS-t0)) s" >> $R/time.txt; save
