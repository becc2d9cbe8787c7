#!/usr/bin/env bash
# Two versions of the Python package (the CLI) side by side on one command, alternating A, B,
# A, B, … so that the machine's drift falls on both alike: wall median (min, max) of each and
# the median of the pairs' ratios B/A. A version is a folder holding a `contend` package (with
# its _core extension), put first on PYTHONPATH; "-" is the installed one.
#   bash bench/cli_ab.sh DIR_A DIR_B N contend simulate cs-storm FILE --model maxmin --json
# Each run's standard output goes to a file; the two versions' last outputs must be identical.
set -euo pipefail
a=$1 b=$2 n=$3
shift 3
python3 - "$a" "$b" "$n" "$@" <<'PY'
import os
import statistics
import subprocess
import sys
import tempfile
import time

a, b, n, cmd = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
folder = tempfile.mkdtemp()


def run(version: str, out: str) -> float:
    env = dict(os.environ)
    if version != "-":
        env["PYTHONPATH"] = version
    t = time.perf_counter()
    with open(out, "wb") as f:
        subprocess.run(cmd, stdout=f, env=env, check=True)
    return time.perf_counter() - t


times: dict[str, list[float]] = {"A": [], "B": []}
outs = {"A": f"{folder}/a.out", "B": f"{folder}/b.out"}
run(a, outs["A"])  # warm the file cache
for _ in range(n):
    times["A"].append(run(a, outs["A"]))
    times["B"].append(run(b, outs["B"]))
same = open(outs["A"], "rb").read() == open(outs["B"], "rb").read()
print(f"{' '.join(cmd)}: {n} pairs, load {os.getloadavg()[0]:.1f} at the end; outputs identical: {same}")
for k, v in times.items():
    print(f"  {k} {(a if k == 'A' else b):<30} median {statistics.median(v):.3f} s  "
          f"(min {min(v):.3f}, max {max(v):.3f})")
ratios = [y / x for x, y in zip(times["A"], times["B"], strict=True)]
print(f"  B/A pair ratio median {statistics.median(ratios):.3f} ({min(ratios):.2f}-{max(ratios):.2f})")
sys.exit(0 if same else 1)
PY
