#!/bin/bash
# B = this working tree (obstacles' interpolated and rotating walls on refined levels), D3Q27 KBC
# FP64 cut. The refined sphere tunnel (n = 816 deck, 150 steps) with its sphere halfway (H) and
# interpolated (I); the Re 100 sphere wake on three levels at D = 32 (H, I) and 48 (I).
R=$OUT/r; mkdir -p $R
save() { tar -czf $OUT/r.tgz -C $OUT r; }
K=$(cd "$(dirname "$0")" && pwd)
t0=$SECONDS
[ -d /tmp/k/inst ] || bash $K/kokkos.sh > $R/kokkos.out 2>&1
export Kokkos_ROOT=/tmp/k/inst
bash $K/tree.sh B -DKOLIBRI_OPERATORS=Kbc -DKOLIBRI_STORAGES=Fp64 -DKOLIBRI_LATTICES=D3Q27 > $R/buildB.out 2>&1
echo "built $((SECONDS-t0)) s" >> $R/time.txt
cuobjdump -res-usage /tmp/b_B/bin/kolibri 2>/dev/null | grep -A1 "LevelRuleTag\|LinkRecordTag" | grep -o "REG:[0-9]* STACK:[0-9]*" | sort | uniq -c > $R/res_B.txt; save
K1=/tmp/b_B/bin/kolibri
$K1 run perf/decks/refined_sphere.toml --set run.steps=150 -o /tmp/o_H --progress lines > $R/tunnel_H.log 2>&1
cp /tmp/o_H/summary.json $R/tunnel_H.summary.json; cp /tmp/o_H/obstacles.csv $R/tunnel_H.obstacles.csv; save
$K1 run perf/decks/refined_sphere.toml --set run.steps=150 --set 'obstacle[0].wall="interpolated"' -o /tmp/o_I --progress lines > $R/tunnel_I.log 2>&1
cp /tmp/o_I/summary.json $R/tunnel_I.summary.json; cp /tmp/o_I/obstacles.csv $R/tunnel_I.obstacles.csv; save
echo "tunnels $((SECONDS-t0)) s" >> $R/time.txt
W="python3 scripts/wake.py"
for c in "H 32" "I 32" "I 48"; do
  set -- $c
  S=(); [ $1 = I ] && S=(--set 'obstacle[0].wall="interpolated"')
  $W run sphere $2 /tmp/w_$1_$2 --levels 3 --obstacle --box 24x12x12 --kolibri $K1 "${S[@]}" > $R/wake_$1_$2.log 2>&1
  $W analyse /tmp/w_$1_$2 > $R/wake_$1_$2.json 2>&1
  echo "wake $1 $2 $((SECONDS-t0)) s" >> $R/time.txt; save
done
