#!/bin/bash
# B = this working tree (HEAD 9036898: the rule kernel without a stack), A = B with s9.patch
# reversed (300eaf5: 64 registers + 48-byte stack). D3Q27 KBC FP64 cut; rule kernel resources;
# refined sphere bench n = 816 (A, B, A again) and the uniform periodic box 256^3 (B).
R=$OUT/r; mkdir -p $R
save() { tar -czf $OUT/r.tgz -C $OUT r; }
K=$(cd "$(dirname "$0")" && pwd)
t0=$SECONDS
[ -d /tmp/k/inst ] || bash $K/kokkos.sh > $R/kokkos.out 2>&1
export Kokkos_ROOT=/tmp/k/inst
sed -i 's/-j16/-j8/' $K/tree.sh
CUT="-DKOLIBRI_OPERATORS=Kbc -DKOLIBRI_STORAGES=Fp64 -DKOLIBRI_LATTICES=D3Q27"
mkdir -p /tmp/treeA
tar -cf - --exclude=./perf --exclude=./build_dev --exclude=./docs . | tar -xf - -C /tmp/treeA
(cd /tmp/treeA && patch -R -p1 < $K/s9.patch > $R/patchA.out 2>&1 && bash $K/tree.sh A $CUT > $R/buildA.out 2>&1) &
bash $K/tree.sh B $CUT > $R/buildB.out 2>&1; wait
echo "built $((SECONDS-t0)) s" >> $R/time.txt; save
for t in A B; do
  cuobjdump -res-usage /tmp/b_$t/bin/kolibri 2>/dev/null | grep -A1 "LevelRuleTag" | grep -o "REG:[0-9]* STACK:[0-9]*" | sort | uniq -c > $R/res_$t.txt
done; save
M="--lattice D3Q27 --collision kbc --precision fp64 --streaming two_array --case refined_sphere --seconds 1"
for t in B A; do
  /tmp/b_$t/bin/kolibri bench $M --size 816 --json $R/${t}_bench.json --label $t > $R/${t}_bench.log 2>&1; save
done
/tmp/b_B/bin/kolibri bench $M --size 816 --json $R/B2_bench.json --label B2 > $R/B2_bench.log 2>&1; save
/tmp/b_B/bin/kolibri bench --lattice D3Q27 --collision kbc --precision fp64 --streaming two_array --case periodic --size 256 --seconds 1 --json $R/B_uniform.json --label B > $R/B_uniform.log 2>&1
echo "all $((SECONDS-t0)) s" >> $R/time.txt; save
