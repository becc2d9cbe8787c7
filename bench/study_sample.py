"""Estimate a study's wall time from a sample of its points, run as a worker runs them.

A study's points that share their lowered jobs and prepared model (`_core.lowering_group`: the same cluster
and workload, another bandwidth or NIC policy) form a group, and each worker works through a group of its
own (contend/study/groups.py): a group's first point is cold, the rest are warm, and at the end each worker
but one helps with another's group, one more cold point each. So the sample is G groups drawn at random
(fixed seed) and K points of each, run one after another in one process through the worker's own function:
the first cold (after another group's point), then again warm, then the others warm. The estimate sums
the study's groups from the sample's means, divided by the workers, beside the estimate with every point
cold (no reuse). With --cpu the points are timed in CPU seconds of this process (time.process_time) instead
of wall seconds: on a machine that other work shares, that is what a quiet core would take, give or take the
caches the other work evicts.
Usage: python bench/study_sample.py STUDY.yaml [G groups, default 12] [K points per group, default 2] [--cpu]"""

import random
import statistics
import sys
import time
from collections import defaultdict

from contend import _core, study
from contend.study.execute import run_point
from contend.study.spec import origin_of

cpu = "--cpu" in sys.argv
args = [a for a in sys.argv[1:] if a != "--cpu"]
clock = time.process_time if cpu else time.perf_counter
s = study.load(args[0])
g = int(args[1]) if len(args) > 1 else 12
k = int(args[2]) if len(args) > 2 else 2
groups = defaultdict(list)
for p in s.points:
    groups[_core.lowering_group(p.text, origin_of(s, p))].append(p)
rng = random.Random(0)
cold, warm = [], []
for key in rng.sample(sorted(groups), min(g, len(groups))):
    # The group's first point cold (the last run was another group's) and again warm; the others warm.
    points = rng.sample(groups[key], min(k, len(groups[key])))
    for i, p in enumerate([points[0]] + points):
        t = clock()
        run_point(p.text, origin_of(s, p))
        (cold if i == 0 else warm).append(clock() - t)
        print(f"{(cold if i == 0 else warm)[-1]:8.3f} s {'cold' if i == 0 else 'warm'}  "
              + ", ".join(f"{a}={v}" for a, v in p.values.items()), flush=True)
mean_cold, mean_warm = statistics.mean(cold), statistics.mean(warm)
n = len(s.points) / len(groups)  # points per group
print(f"{len(cold) + len(warm)} runs of {len(warm)} of the {len(s.points)} points, in {len(cold)} of {len(groups)} "
      f"groups of {n:.0f}: cold {mean_cold:.3f} s (median {statistics.median(cold):.3f}), warm {mean_warm:.3f} s "
      f"(median {statistics.median(warm):.3f}) per point on one core ({'CPU' if cpu else 'wall'} seconds)")
for workers in (1, 2, 16, 64):
    colds = min(len(groups) + workers - 1, len(s.points))
    total = (len(s.points) - colds) * mean_warm + colds * mean_cold
    print(f"estimated wall time of the whole study on {workers:>2} workers: {total / workers / 3600:.2f} h "
          f"({total / len(s.points):.2f} s per point; every point cold: "
          f"{mean_cold * len(s.points) / workers / 3600:.2f} h)")
