"""A ring Simple slice's handshake on PCIe peer paths, per table (issue 25, round 24, pcie24): diagnosis, not a fit.

contend charges a ring's Simple step inside a node NCCL's per-step latency of the path type once per slice of every
loop (docs/nccl.md, "A Simple slice's handshake"); on PCIe that is NCCL's PCI ring Simple figure, 5.7 us. The two
public all_reduce tables that run NCCL's ring over PCIe peer paths say different things about that charge: this script
runs each over a range of values (`nccl_step_simple`, pinned to ring/Simple so that NCCL's choice does not move) and
prints each row's error and the rows of 2-128 MiB within ±15%. Nothing is set from it: it shows that no one value
serves both tables (docs/validation.md, "Round 24 (pcie24)").

- rtx5090x8-turin-p2p (held out: 8 x RTX 5090, Gen5, two EPYC 9575F, NCCL 2.29.7, NCCL_P2P_LEVEL=SYS);
- rtx4090x8-rome-p2p (8 x RTX 4090, Gen4, two EPYC 7542, peer access on; run as P2P, `--nccl-version 2.21`:
  docs/nccl.md, "Peer copies across the sockets of a PCIe box").

Usage: python bench/nccl_slice_scan.py
"""

from __future__ import annotations

from pathlib import Path

from nccl_validation import DATA, measured_rows, within

from contend import api

ROOT = Path(__file__).parent
MACHINES = ROOT / "validation" / "machines"
CASES = [
    ("rtx5090x8-turin-p2p", dict(ngpus=8, nccl_version="2.29", env={"NCCL_P2P_LEVEL": "SYS"}),
     DATA.parent / "heldout", "rtx5090x8-turin-p2p-all_reduce.txt"),
    ("rtx4090x8-rome-p2p", dict(ngpus=8, nccl_version="2.21"), DATA, "rtx4090x8-rome-p2p-chlc.txt"),
]
VALUES_US = [0.25, 0.5, 1.0, 1.25, 1.5, 2.0, 3.0, 3.4, 4.0, 5.0, 5.7, 6.5, 7.5]


def main() -> None:
    for machine, request, data, file in CASES:
        measured = {s: b for s, b in measured_rows(file, data=data).items() if 1 << 20 <= s <= 128 << 20}
        print(f"#### {machine} ({file}), ring/Simple, error of busbw at 1, 2, ..., 128 MiB\n")
        print("| slice handshake (us) | errors | rows of 2-128 MiB within ±15% |")
        print("|---|---|---|")
        for h in VALUES_US:
            report = api.nccl_tests(str(MACHINES / f"{machine}.yaml"), "all_reduce", "1M", "128M", algo="ring",
                                    proto="Simple", nccl_step_simple=f"{h}us", **request)
            got = {r["size"]: r["busbw"] for r in report["rows"]}
            errors = " ".join(f"{got[s] / measured[s] - 1:+.0%}" for s in sorted(measured))
            inside = sum(within(got[s], measured[s]) for s in sorted(measured) if s >= 2 << 20)
            print(f"| {h} | {errors} | {inside} of {sum(s >= 2 << 20 for s in measured)} |")
        print()


if __name__ == "__main__":
    main()
