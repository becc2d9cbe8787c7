"""Measured patterns of the ASUS ESC8000A-E13P (two AMD EPYC 9575F, 8 x RTX PRO 6000 Blackwell Server Edition behind
two partitioned Broadcom PEX890xx switches) as `contend calibrate` reads them, from the public page copied verbatim
into data/esc8000a-e13p.md (PROVENANCE.txt).

Every value there is a bandwidth of copies pushed at once (the page's PyTorch script: each flow 20 copies of 256 MiB
on its own stream, total bytes over the time until all are done). A pattern here is one 256 MiB copy per flow at the
table's total over the number of flows (the 20 copies in a row of one stream are one copy's rate; their fixed costs,
a few microseconds over tens of milliseconds, are below 0.1%). The single pairs come from the 8 x 8 unidirectional
matrix [ASSUMPTION: measured with the same script; the page does not say, and its values, 36-40 GB/s across the
sockets and 53-54 inside a chip, match the script's single-flow rows, 37.7 and 54.1]. Left out: the rows the page
marks as its switch's posted-write collapse (2.7, 7.4, 7.7 GB/s: an arbitration fault no bandwidth model predicts),
the 56-flow all-to-all (which the page puts down to the same collapse), the reads, and rows that do not name their
flows ("4 flows, all different GPU", "4 flows, all from GPU0").

Usage: python bench/validation/esc8000a_patterns.py   (writes data/esc8000a-e13p.csv)
"""

import re
from pathlib import Path

HERE = Path(__file__).parent / "data"
SIZE = 256 * 2**20

# (section, the cell that names the row (its first or second), column of the total in GB/s, pattern,
#  flows as (src, dst) GPU numbers)
ROWS = [
    ("Cross-Chip Scaling (Uplinks Used)", "GPU0→GPU4", 2, "cross-1", [(0, 4)]),
    ("Cross-Chip Scaling (Uplinks Used)", "Different uplinks (GPU0→4 + GPU2→6)", 2, "cross-2-two-uplinks",
     [(0, 4), (2, 6)]),
    # [ASSUMPTION: "1:1 mapping all pairs" is GPUi -> GPUi+4, the pairing of the page's cross-chip examples]
    ("Cross-Chip Scaling (Uplinks Used)", "1:1 mapping all pairs", 2, "cross-4-one-to-one",
     [(0, 4), (1, 5), (2, 6), (3, 7)]),
    ("Cross-Chip Scaling (Uplinks Used)", "All pairs bidir", 2, "cross-8-both-ways",
     [(0, 4), (1, 5), (2, 6), (3, 7), (4, 0), (5, 1), (6, 2), (7, 3)]),
    ("Same-Chip Scaling (No Uplink Used)", "GPU0→GPU1", 2, "chip-1", [(0, 1)]),
    ("Same-Chip Scaling (No Uplink Used)", "GPU0→GPU1 + GPU2→GPU3", 2, "chip-2", [(0, 1), (2, 3)]),
    ("Same-Chip Scaling (No Uplink Used)", "Both pairs bidir", 2, "chip-4-both-ways", [(0, 1), (1, 0), (2, 3), (3, 2)]),
    ("Same-Chip Scaling (No Uplink Used)", "4-GPU all-to-all", 2, "chip-12-all-to-all",
     [(a, b) for a in range(4) for b in range(4) if a != b]),
    ("GPU DS Port Is the Bandwidth Limit", "2 flows from SAME GPU (GPU0→GPU4 + GPU0→GPU2)", 1, "one-gpu-two-peers",
     [(0, 4), (0, 2)]),
    ("GPU DS Port Is the Bandwidth Limit", "2 flows from DIFFERENT GPU (GPU0→GPU4 + GPU1→GPU2)", 1,
     "two-gpus-two-peers", [(0, 4), (1, 2)]),
    ("What Does NOT Trigger Collapse", "Same GPU → multiple root ports (GPU0→GPU4 + GPU0→GPU6)", 1,
     "one-gpu-two-root-ports", [(0, 4), (0, 6)]),
    ("What Does NOT Trigger Collapse", "Different VS → different root ports (GPU0→GPU4 + GPU2→GPU6)", 1,
     "two-switches-two-root-ports", [(0, 4), (2, 6)]),
    ("What Does NOT Trigger Collapse", "Same VS → same root port (GPU0→GPU4 + GPU1→GPU5)", 1,
     "one-switch-one-root-port", [(0, 4), (1, 5)]),
    ("What Does NOT Trigger Collapse", "Reverse direction (GPU4→GPU0 + GPU6→GPU1)", 1, "into-one-switch",
     [(4, 0), (6, 1)]),
]


def sections(text: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    name = ""
    for line in text.splitlines():
        if line.startswith("### "):
            name = line[4:].strip()
        out.setdefault(name, []).append(line)
    return out


def gbps(cell: str) -> float:
    m = re.search(r"[\d.]+", cell.replace("*", ""))
    assert m, cell
    return float(m.group())


def rows(text: str) -> list[tuple[str, str, str, float]]:
    """(pattern, src, dst, seconds) of every copy."""
    parts = sections(text)
    out = []
    matrix = [ln for ln in parts["Full 8×8 Unidirectional Bandwidth Matrix (GB/s)"] if re.match(r"GPU\d:", ln)]
    assert len(matrix) == 8
    for ln in matrix:
        src, *cells = ln.split()
        for dst, cell in enumerate(cells):
            if cell != "—":
                s = f"GPU{src.rstrip(':')[3:]}"
                out.append((f"pair-{s}-GPU{dst}", s, f"GPU{dst}", SIZE / (float(cell) * 1e9)))
    for section, first, column, name, flows in ROWS:
        table = [[c.strip() for c in ln.strip().strip("|").split("|")] for ln in parts[section] if ln.startswith("|")]
        found = [r for r in table if first in (r[0], r[1])]
        assert len(found) == 1, (section, first, found)
        each = gbps(found[0][column]) / len(flows)
        out += [(name, f"GPU{a}", f"GPU{b}", SIZE / (each * 1e9)) for a, b in flows]
    return out


def main() -> None:
    # The page's flows push (posted writes: `dst.copy_(src)` on the source GPU's stream).
    lines = ["pattern,src,dst,size,time,access"]
    lines += [f"{p},{a},{b},{SIZE}B,{t:.9f}s,write" for p, a, b, t in rows((HERE / "esc8000a-e13p.md").read_text())]
    (HERE / "esc8000a-e13p.csv").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
