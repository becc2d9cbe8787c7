#!/usr/bin/env bash
# Halo-exchange schedule search: COSMO 2D and 3D on cs-storm-socket (exhaustive, branch and
# bound, annealing; 1 and 2 threads) and annealing on a 4x4 grid over a 16-GPU tree.
# Pass --quick for one repetition per case.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo run --quiet --release -p contend-core --example bench_schedule -- "$@"
