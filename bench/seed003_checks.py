"""Seed 003's checks of NIC scheduling and GPUs per node (issue 9), on the 1D dragonfly at x:
each job alone on the 2,048-GPU machine, its run time relative to 1 GPU per node with FCFS NICs.

Usage: python bench/seed003_checks.py [model ...]   (default: maxmin packet; a model may carry
its parameters as MODEL:k=v,k=v, e.g. maxmin:release_frees_nic=on)
Prints one Markdown row per (model, application, ranks); docs/validation.md quotes them.
"""

from __future__ import annotations

import sys
import tempfile
import time
from pathlib import Path

from contend import api

CASES = [("stencil4d", 64), ("stencil4d", 512), ("subcomm3d", 64), ("subcomm3d", 512), ("kripke", 64), ("kripke", 512)]
CONFIGS = [("dragonfly-2048x1", "rr"), ("dragonfly-256x8", "fcfs"), ("dragonfly-256x8", "rr")]


def run_time(folder: Path, cluster: str, nic: str, app: str, ranks: int, model: str) -> float:
    name, _, params = model.partition(":")
    pairs = dict(p.split("=", 1) for p in params.split(",") if p)
    p = folder / f"{cluster}-{nic}-{app}-{ranks}-{name}.yaml"
    p.write_text(
        f"cluster: {cluster}\nnic_scheduling: {nic}\nmodel: {name}\n"
        + (f"params: {pairs}\n" if pairs else "")
        + f"workload:\n  jobs:\n    - {{app: {app}, ranks: {ranks}, params: {{iterations: 5}}}}\n"
    )
    return api.run(p).raw["jobs"]["run_time_s"][0]


def main() -> None:
    models = sys.argv[1:] or ["maxmin", "packet"]
    print("| model | app | ranks | baseline (1/node, FCFS) | RR, 1/node | FCFS, 8/node | RR, 8/node | wall s |")
    print("|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as d:
        folder = Path(d)
        for model in models:
            for app, ranks in CASES:
                t0 = time.perf_counter()
                base = run_time(folder, "dragonfly-2048x1", "fcfs", app, ranks, model)
                speedups = [base / run_time(folder, c, n, app, ranks, model) for c, n in CONFIGS]
                cells = " | ".join(f"{s:.2f}" for s in speedups)
                wall = time.perf_counter() - t0
                print(f"| {model} | {app} | {ranks} | {base * 1e3:.3f} ms | {cells} | {wall:.1f} |", flush=True)


if __name__ == "__main__":
    main()
