#!/usr/bin/env bash
# `contend nccl-tests`: a whole sweep 8 B - 8 GiB (x2, 31 sizes) of one collective, whole command
# with start-up, wall clock, median (and min/max) of N runs per case.
# Targets (issue 25): <= 1 s on an 8-GPU node; <= 10 s on 32 nodes x 8 GPUs.
# BENCH_CASES=32 runs only the 32-node case.
# Usage: bench/nccl_tests.sh [N, default 5]; CONTEND="python -m contend.cli" to time the module.
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-5}"
if [ -z "${CONTEND:-}" ]; then
  if command -v contend >/dev/null; then CONTEND=contend; else CONTEND="python3 -m contend.cli"; fi
fi
python3 - "$runs" "$CONTEND" <<'PY'
import os
import shlex
import statistics
import subprocess
import sys
import time

runs, contend = int(sys.argv[1]), shlex.split(sys.argv[2])
sweep = ["-b", "8", "-e", "8G", "-f", "2"]
cases = [
    ("all_reduce dgx-a100 (8 GPUs)", ["nccl-tests", "dgx-a100", "--op", "all_reduce", *sweep]),
    ("all_gather dgx-a100", ["nccl-tests", "dgx-a100", "--op", "all_gather", *sweep]),
    ("alltoall dgx-a100", ["nccl-tests", "dgx-a100", "--op", "alltoall", *sweep]),
    ("broadcast dgx-a100", ["nccl-tests", "dgx-a100", "--op", "broadcast", *sweep]),
    ("all_reduce typical-8gpu (PCIe)", ["nccl-tests", "typical-8gpu", "--op", "all_reduce", *sweep]),
    ("all_reduce dgx-a100 -g 4", ["nccl-tests", "dgx-a100", "-g", "4", *sweep]),
    ("all_reduce 2 x dgx-a100", ["nccl-tests", "dgx-a100", "--nodes", "2", *sweep]),
    ("all_reduce dgx-a100 --explain", ["nccl-tests", "dgx-a100", "--explain", *sweep]),
    ("all_reduce 32 x dgx-a100 (256 ranks)", ["nccl-tests", "dgx-a100", "--nodes", "32", *sweep]),
]
if os.environ.get("BENCH_CASES") == "32":
    cases = cases[-1:]
print(f"{' '.join(contend)}, {runs} runs each, wall clock, {os.cpu_count()} cores")
print(f"{'case':<38} {'median':>8} {'min':>8} {'max':>8}")
for name, args in cases:
    cmd = [*contend, *args]
    subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True)  # warm the file cache
    t = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True)
        t.append(time.perf_counter() - t0)
    print(f"{name:<38} {statistics.median(t):>7.3f}s {min(t):>7.3f}s {max(t):>7.3f}s")
PY
