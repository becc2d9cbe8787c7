"""Validation against public measurements: calibrate each machine on its single-pair data
(`contend calibrate --hold-out`) and score every measurement, per kind, split by fitted and
held out and by how the copy moves (peer or staged through host memory); and the machine as
written from its data sheet, uncalibrated (`contend p2p`), against the same measurements.

Usage: python bench/validation.py   (prints the markdown table of docs/validation.md)
"""

import statistics
from pathlib import Path

import contend

HERE = Path(__file__).parent / "validation"
CASES = [  # (machine file, measurement file)
    ("a100-pcie-x4", "a100-pcie-x4.txt"),
    ("rtx3090x4-puget", "rtx3090x4-puget.txt"),
    ("rtx5090x2-genoa", "rtx5090x2-genoa.txt"),
    ("dgx-station-v100", "dgx-station-v100.txt"),
    ("dgx1-v100", "dgx1-v100.txt"),
    ("hgx-h100", "hgx-h100.txt"),
    ("rtx-a6000x6", "rtx-a6000x6-nvbandwidth.txt"),
]


def kind(matrix: str) -> str:
    return matrix.split("_")[0]


def main() -> None:
    print("| machine | kind | copies | fitted or held out | n | median abs error | within ±10% |")
    print("|---|---|---|---|---|---|---|")
    pooled: dict[tuple[str, str, str], list[float]] = {}
    for name, data in CASES:
        m = contend.Machine.load(HERE / "machines" / f"{name}.yaml")
        c = contend.calibrate(m, HERE / "data" / data, hold_out=True)
        peers = contend.p2p(m)
        idx = {g: i for i, g in enumerate(peers["gpus"])}
        groups: dict[tuple[str, str, str], list[float]] = {}
        for r in c["residuals"]:
            if r["relative_error"] is None or r["src"] == r["dst"]:
                continue
            peer = "_p2p_" in r["matrix"] and peers["peer_access"][idx[r["src"]]][idx[r["dst"]]]
            how = "peer" if peer else "staged"
            key = (kind(r["matrix"]), how, "held out" if r["held_out"] else "fitted")
            groups.setdefault(key, []).append(abs(r["relative_error"]))
            sheet = peers[r["matrix"]][idx[r["src"]]][idx[r["dst"]]]
            if sheet is not None and r["measured"] > 0:
                groups.setdefault((kind(r["matrix"]), how, "data sheet"), []).append(abs(sheet / r["measured"] - 1))
        for key in sorted(groups):
            e = groups[key]
            pooled.setdefault(key, []).extend(e)
            within = sum(x <= 0.10 for x in e) / len(e)
            print(f"| {name} | {key[0]} | {key[1]} | {key[2]} | {len(e)} | {statistics.median(e):.1%} | {within:.0%} |")
    for key in sorted(pooled):
        e = pooled[key]
        within = sum(x <= 0.10 for x in e) / len(e)
        print(f"| **all** | {key[0]} | {key[1]} | {key[2]} | {len(e)} | {statistics.median(e):.1%} | {within:.0%} |")


if __name__ == "__main__":
    main()
