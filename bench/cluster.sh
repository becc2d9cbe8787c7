#!/usr/bin/env bash
# Flow level (maxmin) against packet level (packet) on the seed-003 2,048-GPU fabrics (issue 8).
# Per case and model: wall seconds of the simulation (flow table included, machine build and
# traffic generation not), median of R runs, and the peak memory of the whole process (KiB).
# Then, per case, how far maxmin's per-message durations are from packet's.
# With K > 0 each comparison also runs `packet` under K more routing seeds and reports maxmin
# against their per-message mean, and packet's first run against that mean (packet's own noise:
# the floor of any deterministic flow model). Today's figure (against one packet run) is unchanged.
# Usage: bench/cluster.sh [R=3] [largest uniform count=100000] [K=0]
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-3}"
largest="${2:-100000}"
seeds="${3:-0}"
cargo build --release -q -p contend-core --example bench_cluster
bin=target/release/examples/bench_cluster
fabrics="fat-tree-2048x1 dragonfly-2048x1 fat-tree-256x8 dragonfly-256x8"
echo "fabric traffic model messages median_s min_s max_s peak_MiB"
for fabric in $fabrics; do
  cases="permutation-64KiB:1 permutation-1MiB:1 permutation-16MiB:1"
  for n in 10000 100000 1000000; do
    if [ "$n" -le "$largest" ]; then cases="$cases uniform-64KiB:$n"; fi
  done
  for case in $cases; do
    traffic="${case%%:*}"
    count="${case##*:}"
    for model in maxmin packet; do
      # One run past 10^5 messages: those take minutes.
      r="$runs"
      if [ "$count" -ge 100000 ]; then r=1; fi
      times=()
      peak=0
      for _ in $(seq "$r"); do
        out=$( { /usr/bin/time -f "%M" "$bin" time "$fabric" "$traffic" "$count" "$model"; } 2>&1 )
        times+=("$(echo "$out" | head -1 | awk '{print $5}')")
        kib=$(echo "$out" | tail -1)
        if [ "$kib" -gt "$peak" ]; then peak="$kib"; fi
        messages=$(echo "$out" | head -1 | awk '{print $4}')
      done
      stats=$(printf '%s\n' "${times[@]}" | sort -g | awk '{a[NR]=$1} END {printf "%s %s %s", a[int((NR+1)/2)], a[1], a[NR]}')
      echo "$fabric $traffic $model $messages $stats $((peak / 1024))"
    done
  done
done
echo
echo "per-message durations, |maxmin - packet| / packet:"
for fabric in $fabrics; do
  for case in permutation-64KiB:1 permutation-1MiB:1 permutation-16MiB:1 uniform-64KiB:10000; do
    if [ "$seeds" -gt 0 ]; then
      "$bin" compare "$fabric" "${case%%:*}" "${case##*:}" "seeds:$seeds"
    else
      "$bin" compare "$fabric" "${case%%:*}" "${case##*:}"
    fi
  done
done
