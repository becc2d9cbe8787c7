#!/usr/bin/env bash
# Studies on Dask (issue 10): the reduced seed-003 study on 1 and on 2 LocalCluster workers, wall clock
# of the whole `contend study` command into a fresh folder (cluster start-up included), median of R runs
# each; the two datasets are compared byte for byte. Then a sample of the full study's points, one at a
# time on one core, to estimate the full study's wall time (bench/study_sample.py).
# Usage: bench/study.sh [R=1] [sample points=24]
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-1}"
sample="${2:-24}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for workers in 1 2; do
  times=()
  for r in $(seq "$runs"); do
    rm -rf "$tmp/w$workers"
    start=$(date +%s.%N)
    contend study examples/studies/seed003-reduced.yaml -o "$tmp/w$workers" --workers "$workers" 2>/dev/null
    times+=("$(echo "$(date +%s.%N) - $start" | bc)")
  done
  median=$(printf '%s\n' "${times[@]}" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  echo "reduced study, $workers worker(s): median ${median} s of ${runs} run(s): ${times[*]}"
  eval "t$workers=$median"
done
echo "speed-up 2 workers over 1: $(echo "scale=2; $t1 / $t2" | bc)"
points=$(ls "$tmp/w1" | wc -l)
diff -r "$tmp/w1" "$tmp/w2" >/dev/null && echo "datasets identical ($points points)" || echo "DATASETS DIFFER"
python bench/study_sample.py examples/studies/seed003-full.yaml "$sample"
