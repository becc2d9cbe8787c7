#!/usr/bin/env bash
# `contend nccl-tests MACHINE --nodes N` at one size as the nodes grow: wall clock, CPU (user) and
# peak memory (`/usr/bin/time`), and the transfers the call was lowered to (issue 25, sixteenth
# round). One run per node count: the figures grow by 2x per doubling, far beyond the noise.
# Usage: bench/nccl_nodes.sh [MACHINE, default hgx-h100] [SIZE, default 1G] [NODES..., default 128 256 512 1024]
set -euo pipefail
cd "$(dirname "$0")/.."
machine="${1:-hgx-h100}"; size="${2:-1G}"; shift $(( $# > 2 ? 2 : $# )) || true
nodes=("$@"); [ ${#nodes[@]} -eq 0 ] && nodes=(128 256 512 1024)
contend="${CONTEND:-contend}"
tmp="$(mktemp)"; trap 'rm -f "$tmp"' EXIT
printf '%-6s %9s %9s %9s %10s %s\n' nodes wall_s user_s peak_MB transfers algo
for n in "${nodes[@]}"; do
  /usr/bin/time -f '%e %U %M' -o "$tmp.t" $contend nccl-tests "$machine" --nodes "$n" -b "$size" -e "$size" --json >"$tmp"
  read -r wall user kb <"$tmp.t"; rm -f "$tmp.t"
  python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['rows'][0]; print(r['transfers'], r['algo'])" "$tmp" |
    { read -r t a; printf '%-6s %9s %9s %9d %10s %s\n' "$n" "$wall" "$user" $((kb / 1024)) "$t" "$a"; }
done
