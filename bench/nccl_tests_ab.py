"""Two installs of contend timed on `bench/nccl_tests.sh`'s sweeps, interleaved (A, B, A, B, ...), medians.

On a shared machine the load moves between two back-to-back runs of `bench/nccl_tests.sh`; alternating the two
installs run by run puts both under the same load. Usage:
    python bench/nccl_tests_ab.py A_CONTEND B_CONTEND [RUNS, default 5] [--32]
A_CONTEND / B_CONTEND: the `contend` executables (e.g. /work/venv/bin/contend); --32 times only the 32-node case.
"""

import statistics
import subprocess
import sys
import time

args = [a for a in sys.argv[1:] if a != "--32"]
a, b = args[0], args[1]
runs = int(args[2]) if len(args) > 2 else 5
sweep = ["-b", "8", "-e", "8G", "-f", "2"]
cases = [
    ("all_reduce dgx-a100 (8 GPUs)", ["dgx-a100", "--op", "all_reduce"]),
    ("all_gather dgx-a100", ["dgx-a100", "--op", "all_gather"]),
    ("alltoall dgx-a100", ["dgx-a100", "--op", "alltoall"]),
    ("all_reduce 2 x dgx-a100", ["dgx-a100", "--nodes", "2"]),
    ("all_reduce dgx-a100 --explain", ["dgx-a100", "--explain"]),
]
if "--32" in sys.argv:
    cases = [("all_reduce 32 x dgx-a100 (256 ranks)", ["dgx-a100", "--nodes", "32"])]


def once(contend: str, case: list[str]) -> float:
    t0 = time.perf_counter()
    cmd = [contend, "nccl-tests", *case, *sweep]
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - t0


print(f"A = {a}, B = {b}, {runs} runs each, interleaved, wall clock, medians")
for name, case in cases:
    once(a, case), once(b, case)  # warm the file cache
    ta, tb = [], []
    for _ in range(runs):
        ta.append(once(a, case))
        tb.append(once(b, case))
    print(f"{name:<38} A {statistics.median(ta):7.3f}s  B {statistics.median(tb):7.3f}s", flush=True)
