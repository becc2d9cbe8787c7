"""Estimate a study's wall time from a sample of its points, run as a worker runs them.

A study runs the points that share their lowered jobs (`_core.lowering_group`: the same cluster and
workload, another bandwidth or NIC policy) one after another, and each worker lowers a group once. So the
sample is G groups drawn at random (fixed seed), and K points of each, run back to back in one process
through the worker's own function: the first lowers the jobs (cold), the others take them (warm). Each
group on W workers costs W cold points and the rest warm ones, spread over the W workers; the estimate
is that summed over the study's groups, from the sampled groups' means. Points are independent, so the
wall time is linear in workers until there are about as many workers as points per group.
Usage: python bench/study_sample.py STUDY.yaml [G groups, default 8] [K points per group, default 3]
"""

import random
import statistics
import sys
import time
from collections import defaultdict

from contend import _core, study
from contend.study.execute import run_point
from contend.study.spec import origin_of

s = study.load(sys.argv[1])
g = int(sys.argv[2]) if len(sys.argv) > 2 else 8
k = int(sys.argv[3]) if len(sys.argv) > 3 else 3
groups = defaultdict(list)
for p in s.points:
    groups[_core.lowering_group(p.text, origin_of(s, p))].append(p)
rng = random.Random(0)
cold, warm, sizes = [], [], []
for key in rng.sample(sorted(groups), min(g, len(groups))):
    points = rng.sample(groups[key], min(k, len(groups[key])))
    sizes.append(len(groups[key]))
    for i, p in enumerate(points):
        t = time.perf_counter()
        run_point(p.text, origin_of(s, p))
        (cold if i == 0 else warm).append(time.perf_counter() - t)
        print(f"{cold[-1] if i == 0 else warm[-1]:8.3f} s  {'cold' if i == 0 else 'warm'}  "
              + ", ".join(f"{a}={v}" for a, v in p.values.items()), flush=True)
mean_cold, mean_warm = statistics.mean(cold), statistics.mean(warm or cold)
per_group = statistics.mean(sizes)
print(f"{len(cold)} of {len(groups)} groups ({per_group:.0f} points each), {len(cold) + len(warm)} of "
      f"{len(s.points)} points: cold {mean_cold:.3f} s (median {statistics.median(cold):.3f}), warm "
      f"{mean_warm:.3f} s (median {statistics.median(warm or cold):.3f}) per point on one core")
for workers in (1, 2, 16, 64):
    per_worker = min(workers, per_group)  # workers that lower each group
    total = len(groups) * (per_group * mean_warm + per_worker * (mean_cold - mean_warm))
    print(f"estimated wall time of the whole study on {workers:>2} workers: {total / workers / 3600:.2f} h "
          f"({total / len(s.points):.2f} s per point)")
