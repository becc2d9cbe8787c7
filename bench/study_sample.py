"""Estimate a study's wall time from a sample of its points, run as a worker runs them.

A study runs the points that share their lowered jobs and prepared model (`_core.lowering_group`: the same
cluster and workload, another bandwidth or NIC policy) one after another, and each worker prepares a
group once: its first point there is cold, the rest are warm. So the sample is G groups drawn at random
(fixed seed) and K points of each, every point run twice in one process through the worker's own
function: cold (after another group's point), then warm (after itself: it takes its own lowering). A
group of n points on W workers costs W cold points and n - W warm ones, spread over the W workers; the
estimate sums that over the study's groups from the sample's means, beside the estimate with every
point cold (no reuse). Points are independent, so the wall time is linear in workers until there are
about as many workers as points per group.
Usage: python bench/study_sample.py STUDY.yaml [G groups, default 12] [K points per group, default 2]
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
g = int(sys.argv[2]) if len(sys.argv) > 2 else 12
k = int(sys.argv[3]) if len(sys.argv) > 3 else 2
groups = defaultdict(list)
for p in s.points:
    groups[_core.lowering_group(p.text, origin_of(s, p))].append(p)
rng = random.Random(0)
cold, warm = [], []
for key in rng.sample(sorted(groups), min(g, len(groups))):
    for p in rng.sample(groups[key], min(k, len(groups[key]))):
        times = []
        for _ in range(2):
            t = time.perf_counter()
            run_point(p.text, origin_of(s, p))
            times.append(time.perf_counter() - t)
        cold.append(times[0])
        warm.append(times[1])
        print(f"{times[0]:8.3f} s cold {times[1]:8.3f} s warm  " + ", ".join(f"{a}={v}" for a, v in p.values.items()),
              flush=True)
mean_cold, mean_warm = statistics.mean(cold), statistics.mean(warm)
n = len(s.points) / len(groups)
print(f"{len(cold)} of {len(s.points)} points in {min(g, len(groups))} of {len(groups)} groups of {n:.0f}: "
      f"cold {mean_cold:.3f} s (median {statistics.median(cold):.3f}), warm {mean_warm:.3f} s "
      f"(median {statistics.median(warm):.3f}) per point on one core")
for workers in (1, 2, 16, 64):
    cold_points = min(workers, n)  # per group: each worker that runs one of its points prepares it once
    total = len(groups) * ((n - cold_points) * mean_warm + cold_points * mean_cold)
    print(f"estimated wall time of the whole study on {workers:>2} workers: {total / workers / 3600:.2f} h "
          f"({total / len(s.points):.2f} s per point; every point cold: "
          f"{mean_cold * len(s.points) / workers / 3600:.2f} h)")
