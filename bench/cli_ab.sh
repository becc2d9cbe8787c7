#!/usr/bin/env bash
# Two versions of the Python package (the CLI) side by side on one command, alternating A, B,
# A, B, … so that the machine's drift falls on both alike: wall and CPU (user + system of the
# command's process) median (min, max) of each, and the median of the pairs' ratios B/A (CPU
# time moves less than wall time where other work shares the cores). A version is a folder holding a `contend` package (with
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


def run(version: str, out: str) -> tuple[float, float]:
    env = dict(os.environ)
    if version != "-":
        env["PYTHONPATH"] = version
    t = time.perf_counter()
    with open(out, "wb") as f:
        p = subprocess.Popen(cmd, stdout=f, env=env)
        _, status, usage = os.wait4(p.pid, 0)
    if status != 0:
        sys.exit(f"{' '.join(cmd)} failed under {version}")
    return time.perf_counter() - t, usage.ru_utime + usage.ru_stime


times: dict[str, list[tuple[float, float]]] = {"A": [], "B": []}
outs = {"A": f"{folder}/a.out", "B": f"{folder}/b.out"}
run(a, outs["A"])  # warm the file cache
for _ in range(n):
    times["A"].append(run(a, outs["A"]))
    times["B"].append(run(b, outs["B"]))
same = open(outs["A"], "rb").read() == open(outs["B"], "rb").read()
print(f"{' '.join(cmd)}: {n} pairs, load {os.getloadavg()[0]:.1f} at the end; outputs identical: {same}")
for k, v in times.items():
    wall, cpu = [x[0] for x in v], [x[1] for x in v]
    print(f"  {k} {(a if k == 'A' else b):<30} median {statistics.median(wall):.3f} s  "
          f"(min {min(wall):.3f}, max {max(wall):.3f}); CPU {statistics.median(cpu):.3f} s "
          f"(min {min(cpu):.3f}, max {max(cpu):.3f})")
for i, what in enumerate(("wall", "CPU")):
    ratios = [y[i] / x[i] for x, y in zip(times["A"], times["B"], strict=True)]
    print(f"  B/A pair ratio, {what}, median {statistics.median(ratios):.3f} ({min(ratios):.2f}-{max(ratios):.2f})")
sys.exit(0 if same else 1)
PY
