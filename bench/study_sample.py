"""Estimate a study's wall time from a sample of its points, each run alone on one core.

The sample is drawn at random (fixed seed) from the study's points, so every axis and workload seed
is represented; each is timed around the engine call that a Dask worker makes. The estimate is the mean time
per point times the number of points, divided by the workers; points are independent, so the wall time
is linear in workers until there are about as many workers as points.
Usage: python bench/study_sample.py STUDY.yaml [N points, default 24]
"""

import random
import statistics
import sys
import time

from contend import study
from contend.study.execute import run_point
from contend.study.spec import origin_of

s = study.load(sys.argv[1])
n = int(sys.argv[2]) if len(sys.argv) > 2 else 24
sample = sorted(random.Random(0).sample(s.points, min(n, len(s.points))), key=lambda p: p.index)
rows = []
for p in sample:
    t = time.perf_counter()
    run_point(p.text, origin_of(s, p))
    rows.append((time.perf_counter() - t, p.values))
    print(f"{rows[-1][0]:8.3f} s  " + ", ".join(f"{k}={v}" for k, v in p.values.items()), flush=True)
times = [t for t, _ in rows]
mean, median = statistics.mean(times), statistics.median(times)
total = mean * len(s.points)
print(f"{len(sample)} of {len(s.points)} points: mean {mean:.3f} s, median {median:.3f} s, "
      f"min {min(times):.3f} s, max {max(times):.3f} s per point on one core")
for workers in (1, 2, 16, 64):
    print(f"estimated wall time of the whole study on {workers:>2} workers: {total / workers / 3600:.2f} h")
