"""Validation against public measurements: calibrate each machine on its single-pair data
(`contend calibrate --hold-out`) and score every measurement, per kind, split by fitted and
held out and by how the copy moves (peer, staged through host memory, or between a GPU and its
host); and the machine as written from its data sheet, uncalibrated (`contend p2p`, with `--tool
nvbandwidth` for nvbandwidth's tests), against the same measurements. nvbandwidth's tests of
several GPUs copying at once are kind "concurrent": never fitted, predicted on the calibrated
machine; a second table splits them by testcase (one GPU's host copies both ways are single-GPU
data: kind "bidirectional", fitted). A CSV of measured
patterns (the project's own measurements, bench/device/hostlink.cu) is fitted on its single-pair
patterns (`--hold-out`) and each pattern scored by its kind (see `pattern_kinds`); its data-sheet
row runs every pattern on the machine as written.

Usage: python bench/validation.py   (prints the markdown tables of docs/validation.md)
"""

import csv
import statistics
import tempfile
from pathlib import Path

import contend

HERE = Path(__file__).parent / "validation"
CASES = [  # (machine file, measurement file)
    ("a100-pcie-x4", "a100-pcie-x4.txt"),
    ("rtx3090x4-puget", "rtx3090x4-puget.txt"),
    ("rtx5090x2-genoa", "rtx5090x2-genoa.txt"),
    ("rtx4090x8-rome", "rtx4090x8-rome.txt"),
    ("dgx-station-v100", "dgx-station-v100.txt"),
    ("dgx1-v100", "dgx1-v100.txt"),
    ("hgx-h100", "hgx-h100.txt"),
    ("rtx-a6000x6", "rtx-a6000x6-nvbandwidth.txt"),
    ("h800x8", "h800x8-nvbandwidth.txt"),
    ("h100-host", "h100-host.csv"),
]

# One copy this small is timed by its fixed cost (4 KiB move in 0.1 µs of 2 µs on a Gen5 x16 link).
LATENCY_BYTES = 4096


def pattern_kinds(path: Path) -> tuple[dict[str, str], dict[str, list[dict[str, str]]]]:
    """Each measured pattern's kind — one copy of at most LATENCY_BYTES: latency; one larger copy:
    unidirectional; one copy each way at once: bidirectional; anything else: concurrent — and its rows."""
    rows: dict[str, list[dict[str, str]]] = {}
    for r in csv.DictReader(path.open()):
        rows.setdefault(r["pattern"], []).append(r)
    kinds = {}
    for name, rs in rows.items():
        if len(rs) == 1:
            kinds[name] = "latency" if int(rs[0]["size"].removesuffix("B")) <= LATENCY_BYTES else "unidirectional"
        elif len(rs) == 2 and (rs[0]["src"], rs[0]["dst"]) == (rs[1]["dst"], rs[1]["src"]):
            kinds[name] = "bidirectional"
        else:
            kinds[name] = "concurrent"
    return kinds, rows


def data_sheet_times(m: contend.Machine, rows: dict[str, list[dict[str, str]]]) -> dict[str, list[float]]:
    """Each pattern's copies run together on the machine as written (maxmin), in µs."""
    out = {}
    for name, rs in rows.items():
        t = contend.Transfers.from_records([{k: r[k] for k in ("src", "dst", "size", "access")} for r in rs])
        d = contend.simulate(m, t, model="maxmin").transfers
        out[name] = list((d["finish_s"] - d["start_s"]) * 1e6)
    return out


def score_patterns(
    m: contend.Machine, path: Path, groups: dict[tuple[str, str, str], list[float]], tests: dict[str, list[float]]
) -> None:
    kinds, rows = pattern_kinds(path)
    sheet = data_sheet_times(m, rows)
    c = contend.calibrate(m, path, hold_out=True)
    seen: dict[str, int] = {}
    for r in c["residuals"]:
        pattern = r["matrix"].removeprefix("pattern ").removesuffix(" (us)")
        k = seen[pattern] = seen.get(pattern, -1) + 1
        key = (kinds[pattern], "host", "held out" if r["held_out"] else "fitted")
        groups.setdefault(key, []).append(abs(r["relative_error"]))
        groups.setdefault((kinds[pattern], "host", "data sheet"), []).append(abs(sheet[pattern][k] / r["measured"] - 1))
        if kinds[pattern] == "concurrent":
            tests.setdefault(pattern, []).append(abs(r["relative_error"]))


def gpu_index(name: str, gpus: list[str]) -> int | None:
    return gpus.index(name) if name in gpus else None


PEER_MATRICES = {  # calibrate's name of an nvbandwidth peer matrix: its testcase, and whether rows pull
    "unidirectional_p2p_gbps": ("device_to_device_memcpy_write_ce", False),
    "unidirectional_p2p_read_gbps": ("device_to_device_memcpy_read_ce", True),
    "bidirectional_p2p_gbps": ("device_to_device_bidirectional_memcpy_write_ce_total", False),
}


def nvbandwidth_sheet(r: dict, sheet: dict, gpus: list[str]) -> float | None:
    """The data-sheet value of an nvbandwidth residual from `contend p2p --tool nvbandwidth`'s
    prediction: a peer matrix's cell (a read matrix's row pulls from its column); a both-way Total
    its cell; v0.2's bidirectional peer cell (the measured copy while the opposite one runs) is
    today's Write2 (row to column) or Read1 (column into row); a one-row test's column is its GPU."""
    src, dst = gpu_index(r["src"], gpus), gpu_index(r["dst"], gpus)
    if r["matrix"] in PEER_MATRICES:
        key, pulled = PEER_MATRICES[r["matrix"]]
        row, col = (dst, src) if pulled else (src, dst)
    else:
        test = r["matrix"].split("_", 1)[1]
        if test.endswith("_total"):
            key, row, col = test, src, dst
        elif test.startswith("device_to_device_bidirectional_"):
            read = "_read_" in test
            key, row, col = (f"{test}_read1", dst, src) if read else (f"{test}_write2", src, dst)
        else:
            key, row, col = test, 0, src if src is not None else dst
    return sheet[key][row][col] if key in sheet else None


def kind(matrix: str) -> str:
    return matrix.split("_")[0]


def copies(r: dict, peer_access: bool) -> str:
    if "host" in r["matrix"]:
        return "host"
    if r["matrix"].startswith("concurrent_") or ("_p2p_" in r["matrix"] and peer_access):
        return "peer"
    return "staged"


def score(e: list[float]) -> str:
    within = sum(x <= 0.10 for x in e) / len(e)
    return f"{len(e)} | {statistics.median(e):.1%} | {within:.0%}"


def with_staging_duplex(name: str, value: float, folder: Path) -> contend.Machine:
    """The machine with `staging_duplex: value` on its host memories (written in flow style)."""
    text = (HERE / "machines" / f"{name}.yaml").read_text()
    path = folder / f"{name}.yaml"
    flow_style = text.count("kind: host_memory}") == text.count("host_memory")
    assert flow_style, f"{name}: write its host memories in flow style, e.g. {{name: MEM0, kind: host_memory}}"
    path.write_text(text.replace("kind: host_memory}", f"kind: host_memory, staging_duplex: {value}}}"))
    return contend.Machine.load(path)


def staged_both_ways_from_other_hosts(hosts: list[tuple[str, str]]) -> None:
    """Staged both-ways copies predicted with the median `staging_duplex` fitted on the *other* hosts
    (leave one host out): how far an empirical value carries to a host that measured none."""
    fitted = {}
    for name, data in hosts:
        c = contend.calibrate(contend.Machine.load(HERE / "machines" / f"{name}.yaml"), HERE / "data" / data)
        fitted[name] = float(c["fitted"]["staging_duplex"])
    print("| machine | fitted staging_duplex | median of the other hosts | n | median abs error | within ±10% |")
    print("|---|---|---|---|---|---|")
    every: list[float] = []
    with tempfile.TemporaryDirectory() as folder:
        for name, data in hosts:
            others = statistics.median(v for k, v in fitted.items() if k != name)
            c = contend.calibrate(with_staging_duplex(name, others, Path(folder)), HERE / "data" / data, hold_out=True)
            e = [abs(r["relative_error"]) for r in c["residuals"]
                 if r["held_out"] and r["matrix"] == "bidirectional_staged_gbps" and r["src"] != r["dst"]]
            every += e
            print(f"| {name} | {fitted[name]:.2f} | {others:.2f} | {score(e)} |")
    print(f"| **all** | median {statistics.median(fitted.values()):.2f} | | {score(every)} |")


def main() -> None:
    print("| machine | kind | copies | fitted or held out | n | median abs error | within ±10% |")
    print("|---|---|---|---|---|---|---|")
    pooled: dict[tuple[str, str, str], list[float]] = {}
    tests: dict[tuple[str, str], list[float]] = {}
    ratios: dict[str, list[tuple[float, float]]] = {}  # staged both ways over one way: measured, model
    for name, data in CASES:
        m = contend.Machine.load(HERE / "machines" / f"{name}.yaml")
        if data.endswith(".csv"):
            groups = {}
            by_pattern: dict[str, list[float]] = {}
            score_patterns(m, HERE / "data" / data, groups, by_pattern)
            tests.update({(name, pattern): e for pattern, e in by_pattern.items()})
            for key in sorted(groups):
                pooled.setdefault(key, []).extend(groups[key])
                print(f"| {name} | {key[0]} | {key[1]} | {key[2]} | {score(groups[key])} |")
            continue
        c = contend.calibrate(m, HERE / "data" / data, hold_out=True)
        peers = contend.p2p(m)
        nvb = {x["key"]: x["values"] for t in contend.nvbandwidth(m)["testcases"] for x in t["matrices"]}
        idx = {g: i for i, g in enumerate(peers["gpus"])}
        groups: dict[tuple[str, str, str], list[float]] = {}
        for r in c["residuals"]:
            if r["relative_error"] is None or r["src"] == r["dst"]:
                continue
            pair = r["src"] in idx and r["dst"] in idx
            how = copies(r, pair and peers["peer_access"][idx[r["src"]]][idx[r["dst"]]])
            key = (kind(r["matrix"]), how, "held out" if r["held_out"] else "fitted")
            groups.setdefault(key, []).append(abs(r["relative_error"]))
            if r["matrix"].startswith("concurrent_"):
                tests.setdefault((name, r["matrix"].removeprefix("concurrent_")), []).append(abs(r["relative_error"]))
            # Each tool's matrices as that tool measures them.
            if "nvbandwidth" in data:
                sheet = nvbandwidth_sheet(r, nvb, peers["gpus"])
            else:
                sheet = peers[r["matrix"]][idx[r["src"]]][idx[r["dst"]]]
            if sheet is not None and r["measured"] > 0:
                groups.setdefault((kind(r["matrix"]), how, "data sheet"), []).append(abs(sheet / r["measured"] - 1))
        staged = {(r["matrix"], r["src"], r["dst"]): r for r in c["residuals"] if "_staged_" in r["matrix"]}
        for (matrix, a, b), r in staged.items():
            one = staged.get(("unidirectional_staged_gbps", a, b))
            if matrix == "bidirectional_staged_gbps" and one and a != b:
                ratios.setdefault(name, []).append((r["measured"] / one["measured"], r["predicted"] / one["predicted"]))
        for key in sorted(groups):
            pooled.setdefault(key, []).extend(groups[key])
            print(f"| {name} | {key[0]} | {key[1]} | {key[2]} | {score(groups[key])} |")
    for key in sorted(pooled):
        print(f"| **all** | {key[0]} | {key[1]} | {key[2]} | {score(pooled[key])} |")
    print()
    print("| machine | concurrent testcase | n | median abs error | within ±10% |")
    print("|---|---|---|---|---|")
    for (name, test), e in sorted(tests.items()):
        print(f"| {name} | {test} | {score(e)} |")
    every = [x for e in tests.values() for x in e]
    if every:
        print(f"| **all** | every testcase | {score(every)} |")
    print()
    print("| machine | staged pairs | both ways over one way, measured (median, range) | held-out model |")
    print("|---|---|---|---|")
    for name, rs in ratios.items():
        m, model = [x for x, _ in rs], statistics.median(p for _, p in rs)
        print(f"| {name} | {len(rs)} | {statistics.median(m):.2f} ({min(m):.2f}–{max(m):.2f}) | {model:.2f} |")
    print()
    staged_both_ways_from_other_hosts([(name, data) for name, data in CASES if name in ratios])


if __name__ == "__main__":
    main()
