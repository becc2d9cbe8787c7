"""The flow level's small-message rules measured together against `packet` (issue 23, round 23).

    python bench/agreement_grid.py grid [--jobs 2] > grid.md
        every combination of maxmin's opt-in rules (pruned below) on the eight 64 KiB cases of the
        four seed-003 fabrics and the 1 / 16 MiB permutations; one table row per option set,
        sorted by how many of the eight cases meet issue 23's targets, then the chosen set's
        case-by-case table beside the default's, then every set's own case-by-case table.
    python bench/agreement_grid.py heldout SET [--jobs 2] > heldout.md
        SET (k=v,k=v) and the default on cases the grid did not choose on: the same fabrics under
        traffic seed 2, 32 and 128 KiB messages, and the presets that route the same way (the other
        seed-003 fat-trees and dragonflies, quartz).

Each case is one `bench_cluster compare` (crates/contend-core/examples/bench_cluster.rs): one
`packet` run under the preset's network seed, five more under seeds 1-5 (the mean a
deterministic flow model can at best predict; the first run against it is `packet`'s floor),
then maxmin once per option set against both. 16 MiB cases use no extra seeds (one `packet`
run takes about a minute on fat-tree-2048x1). Nothing is cached; build the example first:
    CARGO_BUILD_JOBS=1 cargo build --release -q -p contend-core --example bench_cluster

Pruned (combinations that cannot differ from one kept):
- release_frees_nic and head_priority act only on an early release (shared, buffered); maxmin
  refuses them with nic_release=delivered, so delivered appears once with both off.
- clos_routing chooses one-path adaptive routes; with fluid_routing on there is no one path and
  the network ignores it (flow/network.rs, `clos_routes_all`), so routing is one of: one path
  (default), clos, fluid.
- port_queueing is a real scale in [0, 4]; its source defines 1 (the M/D/1 wait), 2 is kept as
  the largest scale earlier rounds considered, 0 is off.
Kept although a no-op on some fabrics (their rows show it): clos_routing on the dragonflies
(not fat-trees of planes) and fluid_routing on dragonfly-256x8 (two groups: PAR is minimal).
"""

import argparse
import itertools
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

BIN = Path(__file__).resolve().parent.parent / "target/release/examples/bench_cluster"
FABRICS = ["fat-tree-2048x1", "dragonfly-2048x1", "fat-tree-256x8", "dragonfly-256x8"]
TARGET_MEDIAN, TARGET_P90 = 10.0, 25.0
# A 1 / 16 MiB figure "within today's" moves by no more than this many points (median and p90).
TOLERANCE = 0.5
LINE = re.compile(
    r"^(?P<fabric>\S+) (?P<traffic>\S+) (?P<n>\d+)(?P<label>(?: \[[^\]]*\])*) median (?P<med>[-\d.]+)% "
    r"p90 (?P<p90>[-\d.]+)% max [-\d.]+% makespan (?P<mk>[-+\d.]+)% \(signed median (?P<sgn>[-+\d.]+)%\)"
    r"(?: (?P<secs>[\d.]+) s)?$"
)


def option_sets():
    """Every kept combination, as the k=v list of its non-default values ('' is the default)."""
    releases = [("delivered", False, False)] + [
        (r, f, h) for r in ("shared", "buffered") for f in (False, True) for h in (False, True)
    ]
    sets = []
    for (release, frees, priority), sf, routing, pq in itertools.product(
        releases, (False, True), ("path", "clos", "fluid"), ("0", "1", "2")
    ):
        kv = []
        if release != "shared":
            kv.append(f"nic_release={release}")
        if frees:
            kv.append("release_frees_nic=on")
        if priority:
            kv.append("head_priority=on")
        if sf:
            kv.append("store_forward=on")
        if routing != "path":
            kv.append(f"{routing}_routing=on")
        if pq != "0":
            kv.append(f"port_queueing={pq}")
        sets.append(",".join(kv))
    return sets


def grid_cases():
    small = [(f, f"{t}-64KiB", 5) for f in FABRICS for t in ("permutation", "uniform")]
    large = [(f, "permutation-1MiB", 5) for f in FABRICS] + [(f, "permutation-16MiB", 0) for f in FABRICS]
    return small, large


def heldout_cases(seeds):
    cases = [(f, f"{t}-64KiB@2", seeds) for f in FABRICS for t in ("permutation", "uniform")]
    cases += [(f, f"{t}-{s}", seeds) for s in ("32KiB", "128KiB") for f in FABRICS for t in ("permutation", "uniform")]
    others = ["fat-tree-1024x2", "fat-tree-512x4", "dragonfly-1024x2", "dragonfly-512x4", "quartz"]
    cases += [(f, f"{t}-64KiB", seeds) for f in others for t in ("permutation", "uniform")]
    return cases


def compare(case, sets):
    """One bench_cluster compare: {set: {'one': (med, p90, mk), 'mean': ..., 'secs': s}, 'floor': ...}."""
    fabric, traffic, seeds = case
    args = [str(BIN), "compare", fabric, traffic, "10000", f"seeds:{seeds}", *[s for s in sets if s]]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    res = {}
    for line in out.splitlines():
        m = LINE.match(line)
        if not m:
            sys.exit(f"agreement_grid: cannot read bench_cluster's line: {line}")
        labels = re.findall(r"\[([^\]]*)\]", m["label"])
        fig = (float(m["med"]), float(m["p90"]), float(m["mk"]))
        if labels and labels[0].startswith("packet seed"):
            res["floor"] = fig
            continue
        vs_mean = bool(labels) and labels[-1].startswith("vs mean")
        key = labels[0] if labels and not labels[0].startswith("vs mean") else ""
        entry = res.setdefault(key, {})
        if vs_mean:
            entry["mean"] = fig
        else:
            entry["one"] = fig
            entry["secs"] = float(m["secs"])
    return res


def run_all(cases, sets, jobs):
    with ThreadPoolExecutor(jobs) as pool:
        results = list(pool.map(lambda c: compare(c, sets), cases))
    return dict(zip([(f, t) for f, t, _ in cases], results, strict=True))


def fmt(fig):
    return "" if fig is None else f"{fig[0]:.1f}, {fig[1]:.1f} ({fig[2]:+.1f})"


def met(fig):
    return fig[0] <= TARGET_MEDIAN and fig[1] <= TARGET_P90


def excess(fig):
    """How far a case is from the targets, in units of the target (< 1: met; lower: farther below)."""
    return max(fig[0] / TARGET_MEDIAN, fig[1] / TARGET_P90)


def score(res, small, large, s):
    figs = [res[(f, t)][s]["one"] for f, t, _ in small]
    n_met = sum(met(x) for x in figs)
    mean_excess = sum(excess(x) for x in figs) / len(figs)
    cpu = sum(res[(f, t)][s]["secs"] for f, t, _ in small)
    worse = [
        f"{f} {t.split('-')[1]}"
        for f, t, _ in large
        if res[(f, t)][s]["one"][0] > res[(f, t)][""]["one"][0] + TOLERANCE
        or res[(f, t)][s]["one"][1] > res[(f, t)][""]["one"][1] + TOLERANCE
    ]
    return n_met, mean_excess, cpu, worse


def case_table(res, cases, sets, title):
    print(f"\n{title}\n")
    head = " | ".join(f"`{s or 'default'}` | vs mean" for s in sets)
    print(f"| fabric | traffic | packet floor | {head} |")
    print("|---|---|---|" + "---|---|" * len(sets))
    for f, t, _ in cases:
        r = res[(f, t)]
        cells = " | ".join(f"{fmt(r[s]['one'])} | {fmt(r[s].get('mean'))}" for s in sets)
        print(f"| {f} | {t} | {fmt(r.get('floor'))} | {cells} |")


def grid(jobs):
    sets = option_sets()
    small, large = grid_cases()
    res = run_all(large + small, sets, jobs)  # the longest packet runs first
    scored = sorted(((score(res, small, large, s), s) for s in sets), key=lambda x: (-x[0][0], x[0][1], x[0][2]))
    print(f"{len(sets)} option sets; per-message |maxmin - packet| / packet against packet seed 0: median, p90")
    print("(makespan difference), in %; met: median <= 10 and p90 <= 25; excess: mean over the eight 64 KiB")
    print("cases of max(median / 10, p90 / 25); 1/16 MiB: the rows whose median or p90 is more than")
    print(f"{TOLERANCE} points worse than the default's; cpu: maxmin seconds over the eight cases.\n")
    names = [f"{f.replace('fat-tree', 'ft').replace('dragonfly', 'df')} {t.split('-')[0][:4]}" for f, t, _ in small]
    print("| option set | met | excess | cpu s | " + " | ".join(names) + " | 1/16 MiB worse than default |")
    print("|---|---|---|---|" + "---|" * len(small) + "---|")
    for (n_met, ex, cpu, worse), s in scored:
        cells = " | ".join(
            ("**" if met(res[(f, t)][s]["one"]) else "")
            + f"{res[(f, t)][s]['one'][0]:.1f}, {res[(f, t)][s]['one'][1]:.1f}"
            + ("**" if met(res[(f, t)][s]["one"]) else "")
            for f, t, _ in small
        )
        print(f"| `{s or 'default'}` | {n_met} | {ex:.2f} | {cpu:.2f} | {cells} | {', '.join(worse) or 'none'} |")
    best = scored[0][1]
    within = next((s for sc, s in scored if not sc[3]), "")
    print(f"\nchosen (most met, then least excess, then cpu): `{best or 'default'}`")
    print(f"chosen among the sets within today's 1/16 MiB figures: `{within or 'default'}`")
    shown = list(dict.fromkeys(["", within, best]))
    case_table(res, small + large, shown, "Case by case (vs packet seed 0 | vs mean of 5 seeds; 16 MiB: no seeds)")
    print("\nEvery option set, case by case, in the order above:")
    for _, s in scored:
        case_table(res, small + large, [s], f"`{s or 'default'}`")


def heldout(s, jobs, seeds):
    cases = heldout_cases(seeds)
    res = run_all(cases, ["", s], jobs)
    case_table(res, cases, ["", s], f"Held-out cases (vs packet seed 0 | vs mean of {seeds} seeds)")
    for key in ("", s):
        figs = [res[(f, t)][key]["one"] for f, t, _ in cases]
        print(f"\n`{key or 'default'}`: targets met on {sum(met(x) for x in figs)} of {len(figs)} held-out cases")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("mode", choices=["grid", "heldout"])
    ap.add_argument("set", nargs="?", default="")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--seeds", type=int, default=5, help="heldout: packet's extra seeds per case (0: none)")
    a = ap.parse_args()
    if not BIN.exists():
        sys.exit(f"agreement_grid: {BIN} is missing; cargo build --release -p contend-core --example bench_cluster")
    if a.mode == "grid":
        grid(a.jobs)
    else:
        heldout(a.set, a.jobs, a.seeds)


if __name__ == "__main__":
    main()
