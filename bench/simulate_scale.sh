#!/usr/bin/env bash
# End to end, as a user waits for it: `contend simulate cs-storm FILE --model maxmin --json > out`
# on N random transfers between the 16 GPUs of cs-storm (1 MiB each, issued every 2 us: about a
# hundred in flight), CLI start-up, YAML parsing and writing the report included.
# Prints the median (min, max) wall time of R runs, and the report's bytes per transfer.
# For comparison in the same run: N/10 without detail, and with --phases (per-phase detail,
# which grows with transfers squared: only on request) at N/100 and N/1000.
# Target (issue 7): N = 100,000 in at most 5 s, a few hundred bytes per transfer.
# Usage: bench/simulate_scale.sh [N=100000] [R=5]
set -euo pipefail
cd "$(dirname "$0")/.."
n="${1:-100000}"
runs="${2:-5}"
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
for k in "$n" $((n / 10)) $((n / 100)) $((n / 1000)); do
  contend generate random cs-storm --count "$k" --size 1MiB --gap 2us --seed 1 -o "$dir/t$k.yaml" 2>/dev/null
done
python3 - "$dir" "$n" "$runs" <<'PY'
import statistics
import subprocess
import sys
import time

folder, n, runs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])


def timed(count, *extra):
    cmd = ["contend", "simulate", "cs-storm", f"{folder}/t{count}.yaml", "--model", "maxmin", "--json", *extra]
    out = f"{folder}/out.json"
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        with open(out, "w") as f:
            subprocess.run(cmd, stdout=f, check=True)
        times.append(time.perf_counter() - t)
    size = len(open(out, "rb").read())
    label = f"{count:>9,} transfers {' '.join(extra) or '(default)':<10}"
    print(f"{label} median {statistics.median(times):7.2f} s  (min {min(times):.2f}, max {max(times):.2f})  "
          f"{size / count:6.0f} bytes/transfer")


print(f"contend simulate cs-storm --model maxmin --json, {runs} runs each")
timed(n)
timed(n // 10)
timed(n // 100, "--phases")
timed(n // 1000, "--phases")
PY
