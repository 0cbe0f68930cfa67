#!/usr/bin/env bash
# call 21: the tile kernel with two cells a thread (X2) against one (X1): KBC D3Q27 FP64 (k) and
# TRT D3Q19 FP32/FP64 (n), the periodic box and the sparse geometries, alternating, two rounds.
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $R/gpu.txt
mkdir -p /tmp/k && python3 -c "
import lzma,tarfile,os
for b in ['X2k','X1k','X2n','X1n']:
    open('/tmp/k/'+b,'wb').write(lzma.open('.dev/'+b+'.xz').read()); os.chmod('/tmp/k/'+b,0o755)
tarfile.open('.dev/libs.tar.xz').extractall('/tmp/k')
"
export LD_LIBRARY_PATH=/tmp/k/libs
t0=$(date +%s)
for round in 1 2; do for v in X2 X1; do
  /tmp/k/${v}k bench --lattice D3Q27 --collision kbc --precision fp64 --streaming two_array --seconds 1 --size 256 --case periodic --tiles 0,4,8 --json $R/kbc_${v}_$round.json > $R/kbc_${v}_$round.log 2>&1
  /tmp/k/${v}n bench --lattice D3Q19 --collision trt --precision fp32,fp64 --streaming two_array --seconds 1 --size 256 --case periodic,porous,vessel --porosity 0.9 --tiles 0,4,8 --json $R/trt_${v}_$round.json > $R/trt_${v}_$round.log 2>&1
  echo $v $round $(( $(date +%s) - t0 )) s >> $R/times.txt; tar czf $OUT/results.tgz -C $OUT r
done; done
/tmp/k/X2k bench --lattice D3Q27 --collision kbc --precision fp64 --streaming two_array --seconds 1 --size 272,544,816 --case refined_sphere --json $R/refined_X2.json > $R/refined_X2.log 2>&1
echo refined $(( $(date +%s) - t0 )) s >> $R/times.txt
tar czf $OUT/results.tgz -C $OUT r
