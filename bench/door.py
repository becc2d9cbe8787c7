"""What a user waits for at the door: contend.simulate from building the machine to holding every finish time
(imports excluded), on bench/vs_simgrid.py's 64-GPU tree and workloads, plus 10^6 staggered transfers (time and
peak memory of the process), and `contend simulate --json` / `--csv` of 100,000 transfers (the whole command,
start-up included). Each figure is the median of 3 runs in fresh processes.

    python bench/door.py
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from vs_simgrid import CONTEND, tree_spec, workload  # noqa: E402

RUNS = 3
MEMORY = r"""
import json, resource, sys, time
import numpy as np
import pyarrow  # noqa: F401
import contend
n, gap = json.load(sys.stdin)
rng = np.random.default_rng(1)
src = rng.integers(0, 64, n)
dst = (src + rng.integers(1, 64, n)) % 64
size = rng.integers(256 * 1024, 64 * 1024 * 1024, n, dtype=np.uint64)
start = np.cumsum(rng.exponential(gap, n))
names = [f"GPU{i}" for i in range(64)]
t0 = time.perf_counter()
m = contend.Machine.load(sys.argv[1])
t = contend.Transfers.from_columns([names[i] for i in src], [names[i] for i in dst], size, start=start)
r = contend.simulate(m, t, model="maxmin", eff_pcie=1, duplex_pcie=0)
finish = r.column("finish_s")
wall = time.perf_counter() - t0
json.dump({"wall": wall, "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}, sys.stdout)
"""


def child(code: str, payload: object, *args: str) -> dict:
    out = subprocess.run([sys.executable, "-c", code, *args], input=json.dumps(payload), capture_output=True,
                         text=True, check=True)
    return json.loads(out.stdout)


def whole(cmd: list[str]) -> float:
    t = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, check=True)
    return time.perf_counter() - t


def main() -> None:
    print("contend.simulate, 64-GPU tree, plain max-min (median of 3, seconds)")
    for n, gap in ((1000, 0.0), (1000, 2e-3), (10000, 0.0), (10000, 2e-3)):
        w = workload(n, gap)
        t = statistics.median(child(CONTEND, [tree_spec(), w])["wall"] for _ in range(RUNS))
        print(f"  {n:>7,} {'at once' if gap == 0 else 'staggered':<10} {t:8.3f}", flush=True)
    with tempfile.TemporaryDirectory() as d:
        machine = Path(d) / "tree64.yaml"
        machine.write_text(json.dumps(tree_spec()))
        runs = [child(MEMORY, [1_000_000, 2e-3], str(machine)) for _ in range(RUNS)]
        print(f"  10^6 staggered: {statistics.median(r['wall'] for r in runs):.2f} s, "
              f"peak {statistics.median(r['rss_mb'] for r in runs):.0f} MB (the whole process)")
        big = Path(d) / "big.yaml"
        subprocess.run(["contend", "generate", "random", "cs-storm", "--count", "100000", "--gap", "2us", "-o",
                        str(big)], check=True, capture_output=True)
        for flag in ("--json", "--csv"):
            t = statistics.median(whole(["contend", "simulate", "cs-storm", str(big), "--model", "maxmin", flag])
                                  for _ in range(RUNS))
            print(f"  contend simulate {flag} of 100,000 transfers (cs-storm, 300 MiB each, 2 us apart): {t:.2f} s")


if __name__ == "__main__":
    main()
