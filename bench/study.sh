#!/usr/bin/env bash
# Studies on Dask (issue 10): the reduced seed-003 study on 1 and on 2 LocalCluster workers, wall clock
# of the whole `contend study` command into a fresh folder (cluster start-up included), median of R runs
# each; the two datasets are compared byte for byte. Then G groups of the full study's points (2 each:
# the first cold, the rest warm), run as a worker runs them on one core, to estimate the full study's
# wall time (bench/study_sample.py).
# Usage: bench/study.sh [R=1] [sample groups G=12]
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-1}"
sample="${2:-12}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# 1 and 2 workers alternate, so that both meet the same load from anything else on the machine;
# the load average before each run is printed, as the machine may be shared.
t1=(); t2=()
for r in $(seq "$runs"); do
  for workers in 1 2; do
    rm -rf "$tmp/w$workers"
    load=$(cut -d' ' -f1 /proc/loadavg)
    # GNU time: wall seconds, and CPU seconds of the command and its processes (the Dask workers).
    /usr/bin/time -o "$tmp/time" -f "%e %U %S" contend study examples/studies/seed003-reduced.yaml \
      -o "$tmp/w$workers" --workers "$workers" 2>/dev/null
    read -r t cpu < <(awk '{print $1, $2 + $3}' "$tmp/time")
    echo "run $r, $workers worker(s): $t s wall, $cpu s CPU ($(echo "scale=2; $cpu / $t" | bc) cores busy;" \
         "load average before: $load)"
    if [ "$workers" = 1 ]; then t1+=("$t"); else t2+=("$t"); fi
  done
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
m1=$(median "${t1[@]}"); m2=$(median "${t2[@]}")
echo "reduced study: 1 worker median $m1 s, 2 workers median $m2 s, speed-up $(echo "scale=2; $m1 / $m2" | bc)"
points=$(ls "$tmp/w1" | wc -l)
diff -r "$tmp/w1" "$tmp/w2" >/dev/null && echo "datasets identical ($points points)" || echo "DATASETS DIFFER"
if [ "$sample" -gt 0 ]; then
  python bench/study_sample.py examples/studies/seed003-full.yaml "$sample"
fi
