"""Held-out check of `contend nccl-tests` (issue 25, round 22): public nccl-tests tables the project was never tuned
on, found by round 22's tester after every default was set, each run on its machine as the source states it with
maxmin's shipped defaults. Nothing is fitted here.

Scored as bench/nccl_validation.py scores its set, with its own helpers (`within`, `saturation_check`,
`measured_rows`): each row of at least 1 MiB (out-of-place busbw) within ±15%, the saturation size (first size at 90%
of the largest busbw) within one doubling where a table starts at or below 1 MiB, a stated plateau against the largest
busbw predicted over the sizes its source names. Each measured number and NCCL setting is read from its stored source
under bench/validation/data/heldout (PROVENANCE.txt says where each comes from); the script refuses to run if a quoted
number or setting is not there.

Which tables count is the validation's inclusion rule (docs/validation.md, round 9 second part; its clauses as round 16
numbers them), applied unchanged: a table that fails a clause is printed with its rows and its own score, and left out
of the total with the clause named.

Usage: python bench/nccl_heldout.py   (prints the block of docs/validation.md, "Held out (round 22)")
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from nccl_validation import measured_rows, nccl_version, quoted, require, saturation_check, within

from contend import api

HELDOUT = Path(__file__).parent / "validation" / "data" / "heldout"
MACHINES = Path(__file__).parent / "validation" / "machines"

# The validation's inclusion rule (docs/validation.md, round 16's numbering).
CLAUSES = {
    1: "a public nccl-tests table, its *_perf rows as printed",
    2: "its machine a preset or a machine file from public facts",
    3: "at least four rows of >= 1 MiB",
    4: "the collective stated, the NCCL settings stated or NCCL's defaults",
    5: "the NIC rate stated where the table spans nodes",
}


@dataclass(frozen=True)
class Table:
    """A held-out nccl-tests table: `request` is contend.nccl_tests' keywords (the op among them), `settings` the
    quotes (file, text) that give each setting the request carries, `left_out` the clauses it fails and why."""

    label: str
    machine: str
    request: dict
    file: str
    settings: list[tuple[str, str]] = field(default_factory=list)
    left_out: tuple[tuple[int, ...], str] | None = None


@dataclass(frozen=True)
class Plateau:
    """A source's statement of a plateau: `text` quotes it, `measured` is the busbw it gives (GB/s)."""

    label: str
    machine: str
    request: dict
    file: str
    text: str
    measured: float


# The NCCL release each table names, and the restated release it runs under (nccl_validation.VERSIONS' form). Tables
# naming none run under the default (2.30).
VERSIONS = {
    "a100-docker-all_reduce-g2.txt": ("2.20", "a100-docker-all_reduce-g2.txt", "NCCL version 2.20.5+cuda12.4"),
    "a100-docker-all_reduce-g4.txt": ("2.20", "a100-docker-all_reduce-g4.txt", "NCCL version 2.20.5+cuda12.4"),
    "a100-docker-sendrecv-g2.txt": ("2.20", "a100-docker-sendrecv-g2.txt", "NCCL version 2.20.5+cuda12.4"),
    "alps-gh200-2x1-sarus.txt": ("2.30", "alps-gh200-2x1-sarus.txt", "nccl-library=23007"),
    "b200-2node-gke-a4-all_gather.txt": ("2.26", "b200-2node-gke-a4-all_gather.txt", "NCCL version 2.26.6+cuda12.8"),
}

ALPS = str(MACHINES / "alps-gh200.yaml")
TABLES = [
    Table("2 x H100 SXM of a DigitalOcean HGX H100 node, all_reduce, one process (-g 2)", "hgx-h100",
          dict(op="all_reduce", min_bytes="1K", max_bytes="1G", ngpus=2), "h100x2-digitalocean.txt",
          [("h100x2-digitalocean.txt", "# nThread 1 nGpus 2 minBytes 1024 maxBytes 1073741824")]),
    # CSCS's NCCL environment, which the container engine's NCCL hook sets (NCCL_PROTO=^LL128 among it).
    Table("2 x 4 GH200 (CSCS Alps, a Slingshot-11 NIC per GH200), all_reduce, CSCS's NCCL settings", ALPS,
          dict(op="all_reduce", min_bytes="8", max_bytes="128M", nodes=2, proto="^LL128"), "alps-gh200-2x4-cscs.txt",
          [("alps-gh200-2x4-cscs.txt", "--ntasks-per-node=4 --environment=nccl-test-ompi"),
           ("alps-cscs-nccl-hook.txt", "While the container engine sets these automatically when using the NCCL hook"),
           ("alps-cscs-nccl-hook.txt", 'com.hooks.aws_ofi_nccl.enabled = "true"'),
           ("alps-cscs-nccl-env.txt", "export NCCL_PROTO=^LL128")]),
    Table("2 x 1 GH200 (CSCS Alps, one GPU a node), all_reduce, NCCL 2.30.7", ALPS,
          dict(op="all_reduce", min_bytes="1M", max_bytes="128M", nodes=2, gpus=["GPU0"]), "alps-gh200-2x1-sarus.txt",
          [("alps-gh200-2x1-sarus.txt", "#  Rank  1 Group  0 Pid  24926 on  nid007109 device  0")]),
    Table("2 x 8 B200 (GKE A4, 8 x 400 Gb/s RoCE a node, Google's gIB plugin), all_gather, NCCL 2.26.6", "hgx-b200",
          dict(op="all_gather", min_bytes="1K", max_bytes="8G", nodes=2), "b200-2node-gke-a4-all_gather.txt",
          [("b200-2node-gke-a4-all_gather.txt", "run_nccl_tests.sh -t all_gather -b 1K -e 8G")],
          ((4,), "gIB's set_nccl_env.sh points NCCL at a tuner configuration (tuner_config_a4.txtpb) that is not "
                 "public and sets no NCCL_ALGO/NCCL_PROTO: every row's algorithm, protocol and channels are the "
                 "tuner's, neither stated nor NCCL's defaults")),
    Table("2 x A100-SXM4-80GB of an NVSwitch node (a docker container), all_reduce, one process (-g 2)", "dgx-a100",
          dict(op="all_reduce", min_bytes="128M", max_bytes="512M", ngpus=2), "a100-docker-all_reduce-g2.txt",
          [("a100-docker-all_reduce-g2.txt", "all_reduce_perf -b 128M -e 512M -f 2 -g 2")],
          ((3,), "three rows of >= 1 MiB (128-512 MiB)")),
    Table("4 x A100-SXM4-80GB of the same container, all_reduce, one process (-g 4)", "dgx-a100",
          dict(op="all_reduce", min_bytes="128M", max_bytes="512M", ngpus=4), "a100-docker-all_reduce-g4.txt",
          [("a100-docker-all_reduce-g4.txt", "all_reduce_perf -b 128M -e 512M -f 2 -g 4")],
          ((3,), "three rows of >= 1 MiB (128-512 MiB)")),
    Table("2 x A100-SXM4-80GB of the same container, sendrecv, one process (-g 2)", "dgx-a100",
          dict(op="sendrecv", min_bytes="128M", max_bytes="512M", ngpus=2), "a100-docker-sendrecv-g2.txt",
          [("a100-docker-sendrecv-g2.txt", "sendrecv_perf -b 128M -e 512M -f 2 -g 2")],
          ((3,), "three rows of >= 1 MiB (128-512 MiB)")),
    Table("2 x 8 H200 (8 x 400 Gb/s RoCE a node; NVIDIA/nccl-tests 256, bare metal), all_reduce", "hgx-h200",
          dict(op="all_reduce", min_bytes="1G", max_bytes="16G", factor=3, nodes=2), "h200-2node-nccl-tests-256.txt",
          [("h200-2node-nccl-tests-256.txt", "mpirun -np 16 -H 20.0.8.1:8,20.0.8.2:8")],
          ((3,), "three rows (1, 3, 9 GiB)")),
    Table("2 x Tesla T4 of a Kaggle VM (no peer access: SHM), all_reduce, one process (-g 2)",
          str(MACHINES / "kaggle-t4x2.yaml"), dict(op="all_reduce", min_bytes="8", max_bytes="128M", ngpus=2),
          "t4x2-kaggle.txt", [],
          ((2, 3), "the VM hides the PCIe tree the answer turns on (kaggle-t4x2-sw.yaml is the other reading), and "
                   "the excerpt has two rows of >= 1 MiB")),
    Table("4 x A100 80GB PCIe (Azure NC96ads_A100_v4, NV12 pairs), all_gather 32 MiB, one process (-g 4)",
          str(MACHINES / "azure-nc96ads-a100-v4.yaml"),
          dict(op="all_gather", min_bytes="32M", max_bytes="32M", ngpus=4), "a100pcie-x4-azure-nc96.txt",
          [("a100pcie-x4-azure-nc96.txt", "# nThread 1 nGpus 4 minBytes 33554432 maxBytes 33554432")],
          ((3,), "one row")),
]

PLATEAUS = [
    Plateau("8 x H100 SXM (NVSwitch), all_gather plateau (NVIDIA/nccl-tests 326, confirmed by its maintainer)",
            "hgx-h100", dict(op="all_gather", min_bytes="128M", max_bytes="16384M", ngpus=8),
            "h100x8-nccl-tests-326.txt", "the bandwidth is saturated at ~360 GB/s for busbw", 360.0),
]


def command(machine: str, request: dict) -> str:
    """The `contend nccl-tests` command line of a request (machine files by their path from the repository root)."""
    flags = {"op": "--op", "min_bytes": "-b", "max_bytes": "-e", "factor": "-f", "ngpus": "-g", "nodes": "--nodes",
             "proto": "--proto", "nccl_version": "--nccl-version"}
    name = str(Path(machine).relative_to(Path(__file__).parent.parent)) if "/" in machine else machine
    words = ["contend nccl-tests", name]
    for key, value in request.items():
        words += ["--gpus", ",".join(value)] if key == "gpus" else [flags[key], str(value)]
    return " ".join(words)


def score(table: Table) -> tuple[int, int, str]:
    """Prints a table's rows (markdown); returns the rows within ±15%, the rows scored, and the saturation cell."""
    for source, text in table.settings:
        require(source, text, "the table's settings", HELDOUT)
    request = dict(table.request, **nccl_version(table.file, VERSIONS, HELDOUT))
    report = api.nccl_tests(table.machine, **request)
    predicted = {r["size"]: r for r in report["rows"]}
    measured_all = measured_rows(table.file, data=HELDOUT)
    measured = {size: b for size, b in measured_all.items() if size >= 1 << 20}
    print(f"`{command(table.machine, request)}` (NCCL {report['nccl_version']}'s choice)\n")
    print("| size | measured busbw | predicted busbw | algo/proto | error | within ±15% |")
    print("|---|---|---|---|---|---|")
    inside = 0
    for size in sorted(measured):
        row = predicted[size]
        ok = within(row["busbw"], measured[size])
        inside += ok
        cells = [f"{size >> 20} MiB", f"{measured[size]:.2f}", f"{row['busbw']:.2f}", f"{row['algo']}/{row['proto']}",
                 f"{row['busbw'] / measured[size] - 1:+.1%}", "yes" if ok else "no"]
        print("| " + " | ".join(cells) + " |")
    saturation = "-"
    # A saturation size is told only by a table that starts at or below 1 MiB.
    if any(0 < size <= 1 << 20 for size in measured_all):
        m, p, ratio, ok = saturation_check(measured, {s: predicted[s]["busbw"] for s in measured})
        saturation = f"×{ratio:g} ({'yes' if ok else 'no'})"
        print(f"| saturation (90% of largest) | {m >> 20} MiB | {p >> 20} MiB | | ×{ratio:g} | "
              f"{'yes' if ok else 'no'} (one doubling) |")
    print(f"\n{inside} of {len(measured)} rows within ±15%.\n")
    return inside, len(measured), saturation


def plateau(case: Plateau) -> tuple[int, int, str]:
    """Prints a stated plateau against the largest busbw predicted over the sizes the source names."""
    quoted(case.file, case.text, case.measured, HELDOUT)
    report = api.nccl_tests(case.machine, **case.request)
    top = max(report["rows"], key=lambda r: r["busbw"])
    ok = within(top["busbw"], case.measured)
    print(f"`{command(case.machine, case.request)}` (NCCL {report['nccl_version']}'s choice)\n")
    print("| statement | measured busbw | predicted busbw (largest) | algo/proto | error | within ±15% |")
    print("|---|---|---|---|---|---|")
    print(f"| \"{case.text}\" | {case.measured:g} | {top['busbw']:.2f} | {top['algo']}/{top['proto']} | "
          f"{top['busbw'] / case.measured - 1:+.1%} | {'yes' if ok else 'no'} |")
    print(f"\n{int(ok)} of 1 rows within ±15%.\n")
    return int(ok), 1, "-"


def main() -> None:
    summary = []
    for item in TABLES + PLATEAUS:
        print(f"#### {item.label}\n")
        inside, rows, saturation = plateau(item) if isinstance(item, Plateau) else score(item)
        out = getattr(item, "left_out", None)
        if out:
            clauses, why = out
            print(f"Left out of the total by clause{'s' * (len(clauses) > 1)} {', '.join(map(str, clauses))} "
                  f"({'; '.join(CLAUSES[c] for c in clauses)}): {why}.\n")
        summary.append((item.label, inside, rows, saturation, out))
    print("| table | rows within ±15% | saturation | counted |")
    print("|---|---|---|---|")
    for label, inside, rows, saturation, out in summary:
        counted = "yes" if out is None else f"no (clause{'s' * (len(out[0]) > 1)} {', '.join(map(str, out[0]))})"
        print(f"| {label} | {inside} of {rows} | {saturation} | {counted} |")
    counted = [s for s in summary if s[4] is None]
    inside, rows = sum(s[1] for s in counted), sum(s[2] for s in counted)
    every, every_rows = sum(s[1] for s in summary), sum(s[2] for s in summary)
    plateaus = len(PLATEAUS)
    print(f"\nheld out: {inside} of {rows} rows within ±15% ({inside / rows:.0%}): the {len(counted) - plateaus} "
          f"tables the inclusion rule admits and {plateaus} stated plateau.")
    print(f"With the {len(summary) - len(counted)} tables it leaves out (shown above): {every} of {every_rows} "
          f"({every / every_rows:.0%}).")


if __name__ == "__main__":
    main()
