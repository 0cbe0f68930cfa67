#!/bin/bash
# B = this working tree (inlet profiles/ramps and the layer rules on refined levels; auto = developed),
# A = B with b2.patch reversed (main). D3Q27 KBC FP64 cut; the refined sphere bench and its deck.
R=$OUT/r; mkdir -p $R
save() { tar -czf $OUT/r.tgz -C $OUT r; }
K=$(cd "$(dirname "$0")" && pwd)
t0=$SECONDS
[ -d /tmp/k/inst ] || bash $K/kokkos.sh > $R/kokkos.out 2>&1
export Kokkos_ROOT=/tmp/k/inst
sed -i 's/-j16/-j8/' $K/tree.sh
CUT="-DKOLIBRI_OPERATORS=Kbc -DKOLIBRI_STORAGES=Fp64 -DKOLIBRI_LATTICES=D3Q27"
mkdir -p /tmp/treeA && tar -cf - --exclude=./perf --exclude=./build_dev --exclude=./docs . | tar -xf - -C /tmp/treeA
(cd /tmp/treeA && patch -R -p1 < $K/b2.patch > $R/patch.out 2>&1 && bash $K/tree.sh A $CUT > $R/buildA.out 2>&1) &
bash $K/tree.sh B $CUT > $R/buildB.out 2>&1; wait
echo "built $((SECONDS-t0)) s" >> $R/time.txt; save
M="--lattice D3Q27 --collision kbc --precision fp64 --streaming two_array --case refined_sphere --seconds 1"
for t in A B; do
  /tmp/b_$t/bin/kolibri bench $M --size 816 --json $R/${t}_bench.json --label $t > $R/${t}_bench.log 2>&1; save
  echo "bench $t $((SECONDS-t0)) s" >> $R/time.txt
done
# B with the anti-bounce-back outlet (A's rule): what the new code costs the level kernels alone
/tmp/b_B/bin/kolibri run perf/decks/refined_sphere.toml --set run.steps=150 -o /tmp/o_Babb --set 'boundary.x_max.pressure_rule="anti_bounce_back"' --progress lines > $R/B_abb_run.log 2>&1; save
/tmp/b_A/bin/kolibri run perf/decks/refined_sphere.toml --set run.steps=150 -o /tmp/o_A --progress lines > $R/A_run.log 2>&1; save
/tmp/b_B/bin/kolibri run perf/decks/refined_sphere.toml --set run.steps=150 -o /tmp/o_B --progress lines > $R/B_run.log 2>&1
cp /tmp/o_A/summary.json $R/A_run.summary.json; cp /tmp/o_B/summary.json $R/B_run.summary.json; cp /tmp/o_Babb/summary.json $R/B_abb_run.summary.json
echo "all $((SECONDS-t0)) s" >> $R/time.txt; save
