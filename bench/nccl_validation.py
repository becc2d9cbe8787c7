"""Validation of `contend nccl-tests` (issue 25) against public nccl-tests results on machines whose topology is
known: for each case the measured busbw per size (sizes >= 1 MiB), or the plateau a source states, beside the
prediction of the machine as written (maxmin's defaults; nothing is fitted here, so there is no leave-one-machine-out
to report), the error, and the share of rows within +-15%. Where a source gives a whole table, the size where busbw
saturates (first size reaching 90% of the largest) is compared too, within one doubling.

Every measured number is read from its stored source under bench/validation/data/nccl (PROVENANCE.txt says where each
comes from); a case names the text it quotes, and the script refuses to run if the text is not there.

Usage: python bench/nccl_validation.py   (prints the markdown table of docs/validation.md, issue 25)
"""

import re
from pathlib import Path

from contend import api

DATA = Path(__file__).parent / "validation" / "data" / "nccl"
MACHINES = Path(__file__).parent / "validation" / "machines"
TOLERANCE = 0.15

# (label, machine, nccl-tests request, source file, quoted text giving the number, measured busbw GB/s)
# A stated plateau is compared with the largest busbw predicted over the sizes the source names.
CASES = [
    ("8 x H100 SXM, NVSwitch, all_reduce (NVLS)", "hgx-h100", dict(min_bytes="1G", max_bytes="8G"),
     "h100-sjeaugey.txt", "peak busBw of ~480GB/s", 480.0),
    ("8 x H100 SXM, NVSwitch, all_reduce, NCCL_ALGO=RING", "hgx-h100",
     dict(min_bytes="1G", max_bytes="8G", algo="ring"), "h100-sjeaugey.txt",
     "effective NVLink bandwidth of 370GB/s", 370.0),
    ("8 x H800 SXM, NVSwitch (8 NVLink 4 links), all_reduce (NVLS)", str(MACHINES / "h800x8.yaml"),
     dict(min_bytes="1G", max_bytes="8G"), "h800-yupatrick22.txt", "allreduce budBW is 215 GB/s", 215.0),
    ("2 x A100 SXM4, NV12, all_reduce", "dgx-a100", dict(min_bytes="1G", max_bytes="8G", gpus=["GPU0", "GPU1"]),
     "a100-pair-arul-lm.txt", "Bus_BW: 208 GBps", 208.0),
]


# Whole tables: (label, machine, nodes, network bandwidth per NIC, nccl-tests request, source file). Rows of at
# least 1 MiB are compared size by size (out-of-place busbw).
TABLES = [
    ("2 x 8 H100 (GCP A3 Mega: 8 x 200 Gb/s NICs per node), all_reduce", "hgx-h100", 2, "25GB/s",
     dict(min_bytes="1M", max_bytes="8G"), "a3mega-2node-ztan.txt"),
]


def measured_rows(file: str) -> dict[int, float]:
    """Size -> out-of-place busbw of an nccl-tests table (the `root` column is absent before nccl-tests 2.11)."""
    rows, busbw_col = {}, 7
    for line in (DATA / file).read_text().splitlines():
        if line.startswith("#") and "redop" in line and "busbw" in line:
            busbw_col = 7 if "root" in line else 6
        cols = line.split()
        if len(cols) > busbw_col and cols[0].isdigit() and cols[1].isdigit():
            rows[int(cols[0])] = float(cols[busbw_col])
    return rows


def saturation(rows: dict[int, float]) -> int:
    """The first size reaching 90% of the largest busbw."""
    top = max(rows.values())
    return min(size for size, b in rows.items() if b >= 0.9 * top)


def quoted(file: str, text: str, value: float) -> None:
    body = (DATA / file).read_text()
    if text not in body or not re.search(rf"(?<![\d.]){value:g}(?![\d.])", text):
        raise SystemExit(f"{file}: the case quotes {text!r} for {value:g} GB/s, which the stored source does not say")


def main() -> None:
    print("| case | machine (contend) | measured busbw | predicted busbw | error | within ±15% |")
    print("|---|---|---|---|---|---|")
    inside = 0
    for label, machine, request, file, text, measured in CASES:
        quoted(file, text, measured)
        report = api.nccl_tests(machine, "all_reduce", **request)
        predicted = max(r["busbw"] for r in report["rows"])
        error = predicted / measured - 1
        ok = abs(error) <= TOLERANCE
        inside += ok
        name = Path(machine).stem
        algo = sorted({r["algo"] for r in report["rows"]})
        cells = [label, f"`{name}` ({', '.join(algo)})", f"{measured:g} GB/s", f"{predicted:.1f} GB/s", f"{error:+.1%}"]
        print("| " + " | ".join(cells + ["yes" if ok else "no"]) + " |")
    total = len(CASES)
    for label, machine, nodes, nic, request, file in TABLES:
        measured = {size: b for size, b in measured_rows(file).items() if size >= 1 << 20}
        report = api.nccl_tests(machine, "all_reduce", nodes=nodes, network_bandwidth=nic, **request)
        predicted = {r["size"]: r["busbw"] for r in report["rows"]}
        for size in sorted(measured):
            error = predicted[size] / measured[size] - 1
            ok = abs(error) <= TOLERANCE
            inside += ok
            total += 1
            algo = next(f"{r['algo']}/{r['proto']}" for r in report["rows"] if r["size"] == size)
            cells = [f"{label}, {size >> 20} MiB", f"`{machine}` × {nodes} at {nic} ({algo})",
                     f"{measured[size]:g} GB/s", f"{predicted[size]:.1f} GB/s", f"{error:+.1%}"]
            print("| " + " | ".join(cells + ["yes" if ok else "no"]) + " |")
        m, p = saturation(measured), saturation(predicted)
        ratio = max(m, p) / min(m, p)
        cells = [f"{label}: saturation size", "", f"{m >> 20} MiB", f"{p >> 20} MiB", f"×{ratio:g}"]
        print("| " + " | ".join(cells + [("yes" if ratio <= 2 else "no") + " (one doubling)"]) + " |")
    print(f"\n{inside} of {total} rows within ±{TOLERANCE:.0%} ({inside / total:.0%}).")


if __name__ == "__main__":
    main()
