#!/usr/bin/env bash
# Two builds of the engine side by side on seed 003's full study, as a worker runs its points:
#   bash bench/engine_ab.sh BENCH_RUN_A BENCH_RUN_B [ROUNDS=4]
# BENCH_RUN_* are copies of target/release/examples/bench_run built from the two versions
# (`cargo build --release -p contend-core --example bench_run`). Six groups of points drawn
# with a fixed seed (python/contend/study/groups.py: a group shares its lowered jobs and flow
# table); each group runs point 1 (cold), point 2 and point 1 again (both warm). A and B run at
# the same moment, one per core, and swap cores every round, so the machine's drift between
# runs falls on both alike; each round prints the seconds of the twelve warm points and B/A.
# The runs' makespans must agree: a change meant to be faster must not change a result.
set -euo pipefail
a=$1 b=$2 rounds=${3:-4}
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
python - "$dir" <<'EOF'
import random, sys
from collections import defaultdict
from contend import _core, study
from contend.study.spec import origin_of
s = study.load("examples/studies/seed003-full.yaml")
groups = defaultdict(list)
for p in s.points:
    groups[_core.lowering_group(p.text, origin_of(s, p))].append(p)
rng = random.Random(1)
for g, key in enumerate(rng.sample(sorted(groups), 6)):
    for k, p in enumerate(rng.sample(groups[key], 2)):
        open(f"{sys.argv[1]}/g{g}_{k}.json", "w").write(p.text)
EOF
points=()
for g in 0 1 2 3 4 5; do points+=("$dir/g${g}_0.json" "$dir/g${g}_1.json" "$dir/g${g}_0.json"); done
warm() { taskset -c "$2" "$1" "${points[@]}" > "$3"; }
seconds() { awk 'NR % 3 != 1 && / s  /{s += $1} END{printf "%.2f", s}' "$1"; }
for i in $(seq "$rounds"); do
    warm "$a" $((i % 2)) "$dir/a" & warm "$b" $(((i + 1) % 2)) "$dir/b" & wait
    if ! diff -q <(grep -o 'makespan.*' "$dir/a") <(grep -o 'makespan.*' "$dir/b") > /dev/null; then
        echo "A and B disagree on a makespan:"; diff <(grep -o 'makespan.*' "$dir/a") <(grep -o 'makespan.*' "$dir/b"); exit 1
    fi
    python -c "a, b = $(seconds "$dir/a"), $(seconds "$dir/b"); print(f'round $i: A {a:.2f} s  B {b:.2f} s  B/A {b / a:.3f}')"
done
