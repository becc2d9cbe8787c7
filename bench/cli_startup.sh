#!/usr/bin/env bash
# Start-up time of the CLI: `contend --help`, `contend machines` and `contend models`, wall clock,
# median (and min/max) of N runs each, with `python -c pass` in the same run as the floor.
# Target: each contend command <= 0.3 s on a 2-core machine.
# Usage: bench/cli_startup.sh [N, default 11]. CONTEND="python -m contend.cli" bench/cli_startup.sh
# times the module instead of the installed console script.
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-11}"
if [ -z "${CONTEND:-}" ]; then
  if command -v contend >/dev/null; then CONTEND=contend; else CONTEND="python3 -m contend.cli"; fi
fi
python3 - "$runs" "$CONTEND" <<'PY'
import shlex
import statistics
import subprocess
import sys
import time

runs, contend = int(sys.argv[1]), shlex.split(sys.argv[2])
cases = [
    ("python -c pass (floor)", [sys.executable, "-c", "pass"]),
    ("contend --help", [*contend, "--help"]),
    ("contend machines", [*contend, "machines"]),
    ("contend models", [*contend, "models"]),
]
print(f"{' '.join(contend)}, {runs} runs each, wall clock")
print(f"{'command':<24} {'median':>9} {'min':>9} {'max':>9}")
for name, cmd in cases:
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)  # warm the file cache
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - t)
    ms = [t * 1e3 for t in times]
    print(f"{name:<24} {statistics.median(ms):>6.0f} ms {min(ms):>6.0f} ms {max(ms):>6.0f} ms")
PY
