#!/bin/bash
# C = this working tree (the level kernels' face paths force-inlined; oscillating bodies),
# B = C with pC.patch reversed (HEAD 300eaf5). D3Q27 KBC FP64 cut; the rule kernel's resource
# usage; the refined sphere bench n = 816 (C, B) and the uniform periodic box 256^3 (C).
R=$OUT/r; mkdir -p $R
save() { tar -czf $OUT/r.tgz -C $OUT r; }
K=$(cd "$(dirname "$0")" && pwd)
t0=$SECONDS
[ -d /tmp/k/inst ] || bash $K/kokkos.sh > $R/kokkos.out 2>&1
export Kokkos_ROOT=/tmp/k/inst
sed -i 's/-j16/-j8/' $K/tree.sh
CUT="-DKOLIBRI_OPERATORS=Kbc -DKOLIBRI_STORAGES=Fp64 -DKOLIBRI_LATTICES=D3Q27"
mkdir -p /tmp/treeB
tar -cf - --exclude=./perf --exclude=./build_dev --exclude=./docs . | tar -xf - -C /tmp/treeB
(cd /tmp/treeB && patch -R -p1 < $K/pC.patch > $R/patchB.out 2>&1 && bash $K/tree.sh B $CUT > $R/buildB.out 2>&1) &
bash $K/tree.sh C $CUT > $R/buildC.out 2>&1; wait
echo "built $((SECONDS-t0)) s" >> $R/time.txt; save
for t in B C; do
  cuobjdump -res-usage /tmp/b_$t/bin/kolibri 2>/dev/null | grep -A1 "LevelRuleTag" | grep -o "REG:[0-9]* STACK:[0-9]*" | sort | uniq -c > $R/res_$t.txt
done; save
M="--lattice D3Q27 --collision kbc --precision fp64 --streaming two_array --case refined_sphere --seconds 1"
for t in C B; do
  /tmp/b_$t/bin/kolibri bench $M --size 816 --json $R/${t}_bench.json --label $t > $R/${t}_bench.log 2>&1; save
done
/tmp/b_C/bin/kolibri bench --lattice D3Q27 --collision kbc --precision fp64 --streaming two_array --case periodic --size 256 --seconds 1 --json $R/C_uniform.json --label C > $R/C_uniform.log 2>&1
echo "all $((SECONDS-t0)) s" >> $R/time.txt; save
