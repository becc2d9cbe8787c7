#!/usr/bin/env bash
# What one NCCL point-to-point channel's send moves on one GPU, timed by NCCL's own kernel: nccl-tests'
# sendrecv_perf with one rank sends to itself, so each channel's send warps copy device memory to device memory
# (device/sendrecv.h: the send group of a channel's block) with no link in the way; one channel, two, and NCCL's
# default, and the one-rank all_reduce beside. The figure to compare with `tuning::channel_rate`'s p2p cap inside a
# node (docs/nccl.md). Prepared in round 24 for a machine with a GPU, nvcc and NCCL (the device image's
# nvidia-nccl wheel); not yet run (the machine lent that round was withdrawn before the first call).
# Usage: bash bench/device/nccl_p2p_self.sh NCCL_TESTS_DIR OUTDIR   (NCCL_TESTS_DIR: a checkout of NVIDIA/nccl-tests)
set -uo pipefail
SRC=$(cd "$1" && pwd); O=$2; mkdir -p "$O"
L=$O/nccl-p2p-self-log.txt
exec > >(tee -a "$L") 2>&1
date -u; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,clocks.max.mem --format=csv
NV=$(python3 -c "import nvidia.nccl as m; print(list(m.__path__)[0])")
echo "nccl package: $NV"; ls "$NV" "$NV/include" "$NV/lib" 2>&1 | head -20
python3 -m pip show nvidia-nccl-cu13 2>/dev/null | head -3
INC=$NV/include; [ -f "$INC/nccl.h" ] || INC=$(dirname "$(find / -name nccl.h -not -path '*/proc/*' 2>/dev/null | head -1)"); echo "nccl.h in $INC"
LIB=$(dirname "$(find "$NV" / -name 'libnccl.so*' -not -path '*/proc/*' 2>/dev/null | head -1)"); echo "libnccl in $LIB"
mkdir -p /tmp/ncclh/lib && ln -sf "$(ls $LIB/libnccl.so* | head -1)" /tmp/ncclh/lib/libnccl.so && ln -sfn "$INC" /tmp/ncclh/include
export LD_LIBRARY_PATH=$LIB:${LD_LIBRARY_PATH:-}
CUDA=$(dirname "$(dirname "$(command -v nvcc)")"); echo "cuda: $CUDA"; nvcc --version | tail -2
cd "$SRC" && time make -j 16 -C src build BUILDDIR=/tmp/nt NCCL_HOME=/tmp/ncclh CUDA_HOME="$CUDA" \
  NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" > "$O/build.txt" 2>&1; echo "make rc=$?"; tail -3 "$O/build.txt"
ls /tmp/nt
run() { local name=$1; shift; echo "== $name: $*"; env "$@" > "$O/$name.txt" 2>&1; echo "rc=$?"; grep -E "^ +[0-9]+ |Avg bus|NCCL version|nccl-tests version|channels|Channel" "$O/$name.txt" | head -40; }
T=/tmp/nt
run sendrecv-1ch NCCL_MIN_NCHANNELS=1 NCCL_MAX_NCHANNELS=1 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,TUNING $T/sendrecv_perf -g 1 -b 1M -e 1G -f 4 -n 20 -w 5
run sendrecv-2ch NCCL_MIN_NCHANNELS=2 NCCL_MAX_NCHANNELS=2 $T/sendrecv_perf -g 1 -b 1M -e 1G -f 4 -n 20 -w 5
run sendrecv-default NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT $T/sendrecv_perf -g 1 -b 1M -e 1G -f 4 -n 20 -w 5
run sendrecv-1ch-rep2 NCCL_MIN_NCHANNELS=1 NCCL_MAX_NCHANNELS=1 $T/sendrecv_perf -g 1 -b 1M -e 1G -f 4 -n 20 -w 5
run allreduce-1rank $T/all_reduce_perf -g 1 -b 8 -e 1G -f 4 -n 20 -w 5
date -u
