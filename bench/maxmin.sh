#!/usr/bin/env bash
# maxmin at scale on a 64-GPU PCIe tree: 1,000 to 100,000 transfers, all at once ("burst") and
# 2 ms apart on average ("staggered"); the generic phase engine with a full refill per event runs
# beside it on the smaller sizes as the baseline. Targets: 10,000 burst <= 1 s, staggered <= 0.2 s.
# Usage: bench/maxmin.sh [largest size, default 100000]
set -euo pipefail
cd "$(dirname "$0")/.."
cargo run --quiet --release -p contend-core --example bench_maxmin -- "${1:-100000}"
