"""Estimate a study's wall time from a sample of its points, each run alone on one core.

The sample is every k-th point of the study's configurations (each with its own workload seed, so
seeds vary too), timed around the engine call that a Dask worker makes. The estimate is the mean time
per point times the number of points, divided by the workers; points are independent, so the wall time
is linear in workers until there are about as many workers as points.
Usage: python bench/study_sample.py STUDY.yaml [N points, default 24]
"""

import statistics
import sys
import time

from contend import study
from contend.study.execute import run_point
from contend.study.spec import origin_of

s = study.load(sys.argv[1])
n = int(sys.argv[2]) if len(sys.argv) > 2 else 24
stride = max(1, len(s.points) // n)
# An odd stride over the points walks every axis and the repetitions rather than one corner of the grid.
stride += stride % 2 == 0
sample = s.points[::stride][:n]
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
