"""Reading a transfers file: `contend.Transfers.load` alone (time and the process's peak memory, in fresh
processes), on `contend generate`'s 100,000 random transfers (cs-storm, 2 us apart) and on a file of about
200 MB in the same shape (3.4 million transfers); and the whole `contend simulate cs-storm FILE --model maxmin
--json` of the 100,000 (start-up, parsing, engine, report). Medians of R runs (default 5; 3 for the 200 MB
file, whose run is long before the one-pass reader).

    python bench/transfers_parse.py [R]
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LOAD = r"""
import json, resource, sys, time
import contend
t0 = time.perf_counter()
t = contend.Transfers.load(sys.argv[1])
wall = time.perf_counter() - t0
json.dump({"wall": wall, "n": len(t), "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}, sys.stdout)
"""
BASE = r"""
import json, resource, sys
import contend
json.dump({"rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}, sys.stdout)
"""


def child(code: str, *args: str) -> dict:
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def big_file(path: Path, target_bytes: int) -> int:
    """contend generate's shape (src, dst, size, start), written here: generating 3.4 million transfers with
    contend itself would measure generate, not the reader."""
    n = 0
    with open(path, "w") as f:
        f.write("transfers:\n")
        written = 11
        while written < target_bytes:
            src, dst = n % 16, (n * 7 + 3) % 16
            if dst == src:
                dst = (n + 1) % 16
            line = f"  - {{src: GPU{src}, dst: GPU{dst}, size: 300MiB, start: {2 * n}us}}\n"
            f.write(line)
            written += len(line)
            n += 1
    return n


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    base = statistics.median(child(BASE)["rss_mb"] for _ in range(3))
    print(f"python + import contend alone: peak {base:.0f} MB")
    with tempfile.TemporaryDirectory() as d:
        small = Path(d) / "t100k.yaml"
        subprocess.run(["contend", "generate", "random", "cs-storm", "--count", "100000", "--gap", "2us", "-o",
                        str(small)], check=True, capture_output=True)
        big = Path(d) / "t200mb.yaml"
        big_file(big, 200_000_000)
        for path, r in ((small, runs), (big, max(1, min(runs, 3)))):
            res = [child(LOAD, str(path)) for _ in range(r)]
            n = res[0]["n"]
            wall = statistics.median(x["wall"] for x in res)
            rss = statistics.median(x["rss_mb"] for x in res)
            size = path.stat().st_size
            print(f"Transfers.load {n:>9,} transfers ({size / 1e6:5.0f} MB): {wall:6.3f} s "
                  f"(min {min(x['wall'] for x in res):.3f}), peak {rss:6.0f} MB, "
                  f"{(rss - base) * 1e6 / n:5.0f} bytes/transfer above the import")
        times = []
        for _ in range(runs):
            t = time.perf_counter()
            subprocess.run(["contend", "simulate", "cs-storm", str(small), "--model", "maxmin", "--json"],
                           stdout=subprocess.DEVNULL, check=True)
            times.append(time.perf_counter() - t)
        print(f"contend simulate cs-storm --model maxmin --json, 100,000 transfers: {statistics.median(times):.2f} s "
              f"(min {min(times):.2f})")


if __name__ == "__main__":
    main()
