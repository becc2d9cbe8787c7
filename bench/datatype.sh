#!/usr/bin/env bash
# One message's cost for a datatype of up to a million blocks (issue 11): flattening once, then
# every method compared (`contend datatype`) and one adaptive message simulated, medians of N runs.
# Target: predicting one message's cost for a million-block type <= 1 ms (flattened once).
# Usage: bench/datatype.sh [N, default 101]
set -euo pipefail
cd "$(dirname "$0")/.."
cargo run --quiet --release -p contend-core --example bench_datatype -- "${1:-101}"
