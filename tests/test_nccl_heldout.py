"""The held-out nccl-tests check (bench/nccl_heldout.py, issue 25 rounds 22 to 25): its stored tables, quotes and
machine files stay readable, and its scoring runs on one table of each round."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import contend

BENCH = Path(__file__).resolve().parent.parent / "bench"


@pytest.fixture(scope="module")
def heldout():
    sys.path.insert(0, str(BENCH))
    try:
        import nccl_heldout
    finally:
        sys.path.remove(str(BENCH))
    return nccl_heldout


def test_every_table_quotes_its_stored_source_and_has_rows(heldout):
    """Each setting, release and plateau the script runs with is in the stored text, and each table has the rows of
    at least 1 MiB the clause it is scored or left out under says (no contend run)."""
    for table in heldout.TABLES + heldout.ROUND23 + heldout.ROUND24 + heldout.ROUND25:
        for source, text in table.settings:
            heldout.require(source, text, "the table's settings", heldout.HELDOUT)
        heldout.nccl_version(table.file, heldout.VERSIONS, heldout.HELDOUT)
        rows = [s for s in heldout.measured_rows(table.file, data=heldout.HELDOUT) if s >= 1 << 20]
        clauses = table.left_out[0] if table.left_out else ()
        assert rows and (len(rows) < 4) == (3 in clauses), table.file
        if table.machine.endswith(".yaml"):
            contend.Machine.load(table.machine)
    for case in heldout.PLATEAUS + heldout.PLATEAUS24:
        heldout.quoted(case.file, case.text, case.measured, heldout.HELDOUT)


def test_scoring_one_table(heldout, capsys):
    """The Alps 2 x 4 GH200 table (a machine file, two nodes, CSCS's NCCL_PROTO): its eight rows of 1-128 MiB scored
    with nccl_validation's test, and its saturation size (the table starts at 8 B)."""
    table = next(t for t in heldout.TABLES if t.file == "alps-gh200-2x4-cscs.txt")
    inside, rows, saturation = heldout.score(table)
    out = capsys.readouterr().out
    assert rows == 8 and 0 <= inside <= rows
    assert sum(line.startswith("|") for line in out.splitlines()) == 2 + rows + 1  # header, rule, rows, saturation
    assert "| 128 MiB | 122.57 |" in out and saturation.startswith("×")
    assert f"{inside} of 8 rows within ±15%." in out


def test_scoring_one_round23_table(heldout, capsys):
    """Round 23's H800 broadcast (a machine file, one process driving 8 GPUs, NCCL 2.18.3 from the stored text): its
    twelve rows of 1 MiB-2 GiB scored with nccl_validation's test, and its saturation size (the table starts at 4 B)."""
    table = next(t for t in heldout.ROUND23 if t.file == "h800x8-nf5688m7-broadcast.txt")
    inside, rows, saturation = heldout.score(table)
    out = capsys.readouterr().out
    assert rows == 12 and 0 <= inside <= rows
    assert "--nccl-version 2.18" in out and "| 4 MiB | 92.94 |" in out and saturation.startswith("×")
    assert f"{inside} of 12 rows within ±15%." in out


def test_scoring_one_round24_table(heldout, capsys):
    """Round 24's 2 x 8 B200 sendrecv (a preset on two nodes, uint8 rows as the report prints them): its fifteen rows of
    1 MiB-16 GiB scored with nccl_validation's test, and its saturation size (the stored rows start at 1 MiB)."""
    table = next(t for t in heldout.ROUND24 if t.file == "b200-2node-vultr-sendrecv.txt")
    inside, rows, saturation = heldout.score(table)
    out = capsys.readouterr().out
    assert rows == 15 and 0 <= inside <= rows
    assert "--nodes 2 -d uint8" in out and "| 16384 MiB | 19.63 |" in out and saturation.startswith("×")
    assert f"{inside} of 15 rows within ±15%." in out


def test_scoring_one_round25_table(heldout, capsys):
    """Round 25's 2 x 1 A100 PCIe pair without GPUDirect RDMA (a machine file, one GPU of each node, NCCL 2.21.5 and
    NCCL_NET_GDR_LEVEL=2 read as PXB from the stored text): its eleven rows of 1 MiB-1 GiB scored with
    nccl_validation's test, and its saturation size (the table starts at 8 B)."""
    table = next(t for t in heldout.ROUND25 if t.file == "a100pcie-2x1-r7525-hdr-nps4-nccl-tests-293.txt")
    inside, rows, saturation = heldout.score(table)
    out = capsys.readouterr().out
    assert rows == 11 and 0 <= inside <= rows
    assert "NCCL_NET_GDR_LEVEL=PXB" in out and "--gpus GPU0 --nccl-version 2.21" in out
    assert "| 256 MiB | 9.00 |" in out and saturation.startswith("×")
    assert f"{inside} of 11 rows within ±15%." in out
