#!/usr/bin/env bash
# `contend run` on seed 003's multi-job workload (mix seed 1: about 10 jobs filling 2,048 GPUs,
# 10 iterations each) on the fat-tree and the dragonfly at 1 and 8 GPUs per node, under maxmin
# and packet: wall time (CLI start-up and the JSON report included) and peak memory of the
# process, median of R runs (one run for packet), and the user CPU seconds of the same runs (the
# figure to compare on a loaded machine). Issue 9's targets: maxmin <= 2 s, packet <= 10 min.
# Usage: bench/run_mix.sh [R=3] [models="maxmin packet"] [params k=v,k=v (for every model named)]
set -euo pipefail
cd "$(dirname "$0")/.."
runs="${1:-3}"
models="${2:-maxmin packet}"
params="${3:-}"
# The model's parameters as the scenario's map, values quoted ("on" would read as a boolean).
params_line=""
if [ -n "$params" ]; then
  params_line="params: {$(echo "$params" | sed 's/\([^,=]*\)=\([^,]*\)/\1: "\2"/g; s/,/, /g')}"
fi
dir="$(mktemp -d)"
trap 'rm -rf "$dir"' EXIT
echo "| cluster | model | jobs | messages | median s | min – max s | user s (median) | peak MiB |"
echo "|---|---|---|---|---|---|---|---|"
for cluster in fat-tree-2048x1 fat-tree-256x8 dragonfly-2048x1 dragonfly-256x8; do
  for model in $models; do
    s="$dir/$cluster-$model.yaml"
    printf 'cluster: %s\nmodel: %s\nnic_scheduling: fcfs\n%s\nworkload:\n  mix: {seed: 1}\n' "$cluster" "$model" "$params_line" > "$s"
    r="$runs"
    if [ "$model" = packet ]; then r=1; fi
    times=()
    users=()
    peak=0
    for _ in $(seq "$r"); do
      out=$( { /usr/bin/time -f "%e %U %M" contend run "$s" --json > "$dir/out.json"; } 2>&1 | tail -1)
      read -r wall user kib <<< "$out"
      times+=("$wall")
      users+=("$user")
      if [ "$kib" -gt "$peak" ]; then peak="$kib"; fi
    done
    stats=$(printf '%s\n' "${times[@]}" | sort -g | awk '{a[NR]=$1} END {printf "%s | %s – %s", a[int((NR+1)/2)], a[1], a[NR]}')
    user=$(printf '%s\n' "${users[@]}" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
    counts=$(python3 -c "import json,sys; j=json.load(open('$dir/out.json')); print(j['summary']['jobs'], '|', j['summary']['messages'])")
    echo "| $cluster | $model | $counts | $stats | $user | $((peak / 1024)) |"
  done
done
