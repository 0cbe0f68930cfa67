#!/usr/bin/env bash
# call 22: Nsight Compute on the FP32 tile kernel (one cell a thread, the committed FP32 form) against
# the dense kernel, D3Q19 TRT FP32 periodic 256^3: instruction counts, stall reasons, SASS source.
R=$OUT/r; mkdir -p $R
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $R/gpu.txt
mkdir -p /tmp/k && python3 -c "
import lzma,tarfile,os
for b in ['X1n']:
    open('/tmp/k/'+b,'wb').write(lzma.open('.dev/'+b+'.xz').read()); os.chmod('/tmp/k/'+b,0o755)
tarfile.open('.dev/libs.tar.xz').extractall('/tmp/k')
"
export LD_LIBRARY_PATH=/tmp/k/libs
B="/tmp/k/X1n bench --lattice D3Q19 --collision trt --precision fp32 --streaming two_array --seconds 0.2 --size 256 --case periodic"
for t in 0 4; do
  timeout 150 ncu --clock-control none --kernel-name-base demangled -k regex:"stream_collide|StreamCollide" --launch-skip 10 --launch-count 1 --section SpeedOfLight --section InstructionStats --section WarpStateStats --section Occupancy --section SourceCounters -o $R/t$t $B --tiles $t > $R/ncu_t$t.log 2>&1
  ncu -i $R/t$t.ncu-rep --print-details all > $R/details_t$t.txt 2>&1
  ncu -i $R/t$t.ncu-rep --page source --csv --print-source sass > $R/sass_t$t.csv 2>&1
  rm -f $R/t$t.ncu-rep
  tar czf $OUT/results.tgz -C $OUT r
done
