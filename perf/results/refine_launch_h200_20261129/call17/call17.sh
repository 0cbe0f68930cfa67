#!/usr/bin/env bash
# call 17: A = arriving inlined (no functor copy), rules apart; M = rules merged into the fast launch.
# Each with every launch async, and with launches of 2^20 threads or more through constant memory.
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $R/gpu.txt
mkdir -p /tmp/k && python3 -c "
import lzma,tarfile,os
for b in ['A3','A2','M3','M2']:
    open('/tmp/k/'+b,'wb').write(lzma.open('.dev/'+b+'.xz').read()); os.chmod('/tmp/k/'+b,0o755)
tarfile.open('.dev/libs.tar.xz').extractall('/tmp/k')
"
export LD_LIBRARY_PATH=/tmp/k/libs
t0=$(date +%s)
S="--set domain.nx=256 --set domain.ny=256 --set physics.length=256 --set model.collision=bgk --set run.steps=76800 --set run.output_every=0 --set run.write_fields=false --set probe[0].start=[128,0] --set probe[1].start=[0,128]"
K="--lattice D3Q27 --collision kbc --precision fp64 --streaming two_array --seconds 1"
/tmp/k/A3 bench $K --size 256 --case periodic --json $R/uniform.json > $R/uniform.log 2>&1
for v in A M; do for mode in async size; do
  if [ $mode = size ]; then export KOLIBRI_LARGE_LAUNCH=1048576; else unset KOLIBRI_LARGE_LAUNCH; fi
  /tmp/k/${v}2 run inputs/cavity2d_refined.toml $S -o $R/cavity_${v}_$mode > $R/cavity_${v}_$mode.log 2>&1
  /tmp/k/${v}3 bench $K --size 272,544,816 --case refined_sphere --json $R/refined_${v}_$mode.json > $R/refined_${v}_$mode.log 2>&1
  echo $v $mode $(( $(date +%s) - t0 )) s >> $R/times.txt; rm -f $R/*/kolibri.lock; tar czf $OUT/results.tgz -C $OUT r
done; done
unset KOLIBRI_LARGE_LAUNCH
for v in A M; do
python3 scripts/wake.py run sphere 32 $R/wake_$v --levels 3 --box 24x12x12 --kolibri /tmp/k/${v}3 > $R/wake_$v.log 2>&1
python3 scripts/wake.py analyse $R/wake_$v > $R/wake_$v.json 2>&1
echo wake $v $(( $(date +%s) - t0 )) s >> $R/times.txt
done
rm -f $R/*/kolibri.lock
tar czf $OUT/results.tgz -C $OUT r
