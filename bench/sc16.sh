#!/usr/bin/env bash
# One sc16 evaluation and one simulation, worked example and random 32-transfer graph.
# Baseline in the same run: the plain Python reconstruction shared/docs/sc16_reference.py (if present).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo run --quiet --release -p contend-core --example bench_sc16
ref=../shared/docs/sc16_reference.py
if [ -f "$ref" ]; then
  python3 - "$ref" <<'PY'
import importlib.util, statistics, sys, timeit
from fractions import Fraction as F
spec = importlib.util.spec_from_file_location("ref", sys.argv[1]); ref = importlib.util.module_from_spec(spec); spec.loader.exec_module(ref)
p = ref.make_T1()
comms = {'a': ('G0', 'G2'), 'b': ('G1', 'G4'), 'c': ('G3', 'G2'), 'd': ('G6', 'G4')}
runs = [min(timeit.repeat(lambda: ref.congestion_factors(p, comms, 0.1735), number=200, repeat=1)) / 200 for _ in range(5)]
print(f"{'baseline: Python reference, worked example':<48} median {statistics.median(runs) * 1e6:>9.3f} µs")
PY
fi
