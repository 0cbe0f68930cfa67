#!/usr/bin/env bash
# call 23: the tile kernel with Kokkos launch bounds (experiment switch KX_LB: 0 none, 8 = <128, 8>
# at most 64 registers, 10 = <128, 10> at most 51), D3Q19 TRT FP32 and FP64, alternating, two rounds.
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $R/gpu.txt
mkdir -p /tmp/k && python3 -c "
import lzma,tarfile,os
for b in ['LBn']:
    open('/tmp/k/'+b,'wb').write(lzma.open('.dev/'+b+'.xz').read()); os.chmod('/tmp/k/'+b,0o755)
tarfile.open('.dev/libs.tar.xz').extractall('/tmp/k')
"
export LD_LIBRARY_PATH=/tmp/k/libs
t0=$(date +%s)
for round in 1 2; do for lb in 0 8 10; do
  KX_LB=$lb /tmp/k/LBn bench --lattice D3Q19 --collision trt --precision fp32,fp64 --streaming two_array --seconds 1 --size 256 --case periodic,porous --porosity 0.9 --tiles 0,4,8 --json $R/lb${lb}_$round.json > $R/lb${lb}_$round.log 2>&1
  echo $lb $round $(( $(date +%s) - t0 )) s >> $R/times.txt; tar czf $OUT/results.tgz -C $OUT r
done; done
