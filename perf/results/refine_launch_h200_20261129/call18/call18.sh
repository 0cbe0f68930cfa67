#!/usr/bin/env bash
# call 18: T2 = arriving inlined + a level's few rules (< 2^15) in its fast launch, two cells a thread;
# T4 = the same with four cells a thread. Alternating, two rounds; then the wakes and ncu kernel times.
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $R/gpu.txt
mkdir -p /tmp/k && python3 -c "
import lzma,tarfile,os
for b in ['T23','T22','T43','T42']:
    open('/tmp/k/'+b,'wb').write(lzma.open('.dev/'+b+'.xz').read()); os.chmod('/tmp/k/'+b,0o755)
tarfile.open('.dev/libs.tar.xz').extractall('/tmp/k')
"
export LD_LIBRARY_PATH=/tmp/k/libs
t0=$(date +%s)
S="--set domain.nx=256 --set domain.ny=256 --set physics.length=256 --set model.collision=bgk --set run.steps=76800 --set run.output_every=0 --set run.write_fields=false --set probe[0].start=[128,0] --set probe[1].start=[0,128]"
K="--lattice D3Q27 --collision kbc --precision fp64 --streaming two_array --seconds 1"
/tmp/k/T23 bench $K --size 256 --case periodic --json $R/uniform.json > $R/uniform.log 2>&1
for round in 1 2; do for v in T2 T4; do
  /tmp/k/${v}2 run inputs/cavity2d_refined.toml $S -o $R/cavity_${v}_$round > $R/cavity_${v}_$round.log 2>&1
  LK=fused; if [ $v = T2 ] && [ $round = 1 ]; then LK=fused,unfused; fi
  /tmp/k/${v}3 bench $K --size 272,544,816 --case refined_sphere --level-kernels $LK --json $R/refined_${v}_$round.json > $R/refined_${v}_$round.log 2>&1
  echo $v $round $(( $(date +%s) - t0 )) s >> $R/times.txt; rm -f $R/*/kolibri.lock; tar czf $OUT/results.tgz -C $OUT r
done; done
for v in T2 T4; do
python3 scripts/wake.py run sphere 32 $R/wake_$v --levels 3 --box 24x12x12 --kolibri /tmp/k/${v}3 > $R/wake_$v.log 2>&1
python3 scripts/wake.py analyse $R/wake_$v > $R/wake_$v.json 2>&1
echo wake $v $(( $(date +%s) - t0 )) s >> $R/times.txt
done
rm -f $R/*/kolibri.lock; tar czf $OUT/results.tgz -C $OUT r
timeout 150 ncu --clock-control none --kernel-name-base demangled -k regex:Level --launch-skip 60 --launch-count 40 --metrics gpu__time_duration.sum --csv --page raw /tmp/k/T23 bench --lattice D3Q27 --collision kbc --precision fp64 --streaming two_array --seconds 0.1 --size 816 --case refined_sphere > $R/ncu_T2_816.csv 2> $R/ncu_T2_816.err
echo ncu $(( $(date +%s) - t0 )) s >> $R/times.txt
rm -f $R/*/kolibri.lock; tar czf $OUT/results.tgz -C $OUT r
