#!/bin/bash
# A = this working tree (main), B = A + b.patch (branch mr-raw-sums: raw sums, completing launch
# with two-array addresses and 64 registers). D3Q19 FP32; benches 256 and 128; ncu of the launch.
R=$OUT/r; mkdir -p $R
save() { tar -czf $OUT/r.tgz -C $OUT r; }
K=$(cd "$(dirname "$0")" && pwd)
t0=$SECONDS
[ -d /tmp/k/inst ] || bash $K/kokkos.sh > $R/kokkos.out 2>&1
export Kokkos_ROOT=/tmp/k/inst
sed -i 's/-j16/-j8/' $K/tree.sh
CUT="-DKOLIBRI_OPERATORS=RegularizedBgk -DKOLIBRI_STORAGES=Fp32 -DKOLIBRI_LATTICES=D3Q19"
mkdir -p /tmp/treeB && tar -cf - --exclude=./perf --exclude=./build_dev --exclude=./docs . | tar -xf - -C /tmp/treeB
(cd /tmp/treeB && patch -p1 < $K/b.patch > $R/patch.out 2>&1 && bash $K/tree.sh B $CUT > $R/buildB.out 2>&1) &
bash $K/tree.sh A $CUT > $R/buildA.out 2>&1; wait
echo "built $((SECONDS-t0)) s" >> $R/time.txt; save
M="--collision regularized --streaming moments --lattice D3Q19 --precision fp32 --seconds 1"
for n in 256 128; do for t in A B; do
  /tmp/b_$t/bin/kolibri bench $M --size $n --case periodic,closed,channel,sphere --json $R/${t}_$n.json --label $t > $R/${t}_$n.log 2>&1; save
done; done
echo "benched $((SECONDS-t0)) s" >> $R/time.txt; save
N=/opt/nvidia/nsight-compute/2025.3.1/ncu
timeout 60 $N --kernel-name-base demangled --kernel-name regex:"MomentBoundaryCells|MomentWallSums" --launch-skip 10 --launch-count 1 --section SpeedOfLight --section Occupancy --section WarpStateStats /tmp/b_B/bin/kolibri bench $M --size 256 --case closed --seconds 0.2 > $R/ncu_B.txt 2>&1
echo "all $((SECONDS-t0)) s" >> $R/time.txt; save
