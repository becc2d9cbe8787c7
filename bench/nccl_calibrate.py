"""`contend calibrate` on every nccl-tests paste of the validation (issue 25, rounds 22 and 23): each table of
bench/nccl_validation.py and bench/nccl_heldout.py (round 22's and 23's) fitted with --hold-out (every other size of
its first run fitted, the others held out) on its machine as those scripts run it (its nodes, NIC rate and NCCL
settings given as `--param`), and the held-out rows of at least 1 MiB within ±15% (out-of-place busbw, the
validation's test) with the constants given (before) and with the fit (after). The fitted values follow, and the fit's
warnings (a value held at a bound, a latency of 0, an efficiency at 1).

NCCL_ALGO and NCCL_PROTO are given as `--algo`/`--proto`, as the table ran them; the other NCCL variables the table's
source states (bench/nccl_heldout.py's `env`) as the shell's environment (`env=`), and nothing of this process's
environment. Since round 23 calibrate reads the NCCL_* assignments and nccl-tests' -g (`# nThread 1 nGpus N`) the
paste itself shows, and runs each table as `contend nccl-tests` runs them: the last column says which -g it read.

A paste is given as a user would paste it: the stored text, in a file named after its binary (`all_gather_perf.txt`,
which says the collective), under the command line its source states where the stored text has no `Rank N … on HOST`
lines (`mpirun -np RANKS -N RANKS_A_NODE …`: the ranks and nodes bench/nccl_validation.py runs it on).

Usage: python bench/nccl_calibrate.py   (prints the table of docs/nccl.md, "Round 23 (calib2)")
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import nccl_heldout
import nccl_validation
from nccl_validation import DATA, machine_for, nccl_version

from contend import api
from contend.errors import InputError

MIB = 1 << 20
WARNINGS = ("held at", "fitted at 1", "fitted at 0", "defaults are kept")


def cases() -> list[tuple[str, str, Path, int, str | None, dict, dict]]:
    """(label, machine, paste, nodes, NIC rate, NCCL params, request) of every whole table of both scripts."""
    out = []
    for label, machine, nodes, nic, request, file, _ in nccl_validation.TABLES:
        params = {k: v for k, v in request.items() if k.startswith("nccl_")} | nccl_version(file)
        out.append((label, machine_for(machine, file), DATA / file, nodes, nic, params, request))
    for t in nccl_heldout.TABLES + nccl_heldout.ROUND23:
        params = {k: v for k, v in t.request.items() if k.startswith("nccl_")} | nccl_version(
            t.file, nccl_heldout.VERSIONS, nccl_heldout.HELDOUT)
        out.append((t.label, t.machine, nccl_heldout.HELDOUT / t.file, t.request.get("nodes", 1), None, params,
                    t.request))
    return out


def as_pasted(paste: Path, machine: str, nodes: int, nic: str | None, params: dict, request: dict, at: Path) -> Path:
    """The paste in a file named after its binary, under its launch line where it has no Rank lines."""
    op = request.get("op", "all_reduce")
    text = paste.read_text()
    if "Rank" not in text:
        net = dict(nodes=nodes, network_bandwidth=nic) if nodes > 1 else {}
        ranks = api.nccl_tests(machine, op, min_bytes="1M", max_bytes="1M", gpus=request.get("gpus"), env={}, **net,
                               **params)["ranks"]
        text = f"mpirun -np {ranks} -N {ranks // nodes} ./build/{op}_perf\n{text}"
    path = at / paste.stem / f"{op}_perf.txt"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def score(fit: dict) -> tuple[int, int, int]:
    """Held-out rows of at least 1 MiB: how many, and within ±15% before and after the fit."""
    rows = [(r, b) for r, b in zip(fit["residuals"], fit["before"], strict=True) if r["held_out"]
            and int(r["src"].split()[0]) >= MIB]
    ok = nccl_validation.TOLERANCE + 1e-12
    return len(rows), sum(abs(b) <= ok for _, b in rows), sum(abs(r["relative_error"]) <= ok for r, _ in rows)


def main() -> None:
    print("| table | machine | held-out rows ≥ 1 MiB within ±15%: before → after | fitted | warnings | -g read |")
    print("|---|---|---|---|---|---|")
    totals = [0, 0, 0]
    scratch = Path(tempfile.mkdtemp())
    for label, machine, paste, nodes, nic, params, request in cases():
        where = f"`{Path(machine).stem}`" + (f" × {nodes}" + (f" at {nic}" if nic else "") if nodes > 1 else "")
        try:
            pasted = as_pasted(paste, machine, nodes, nic, params, request, scratch)
            fit = api.calibrate(machine, pasted, hold_out=True, network_bandwidth=nic if nodes > 1 else None,
                                algo=request.get("algo"), proto=request.get("proto"), env=request.get("env", {}),
                                **params)
        except InputError as e:
            print(f"| {label} | {where} | refused: {e} | | | |")
            continue
        n, before, after = score(fit)
        totals = [totals[0] + n, totals[1] + before, totals[2] + after]
        given = {k for k in params}
        fitted = ", ".join(f"{k}={v}" for k, v in fit["fitted"].items() if k not in given) or "(defaults)"
        warnings = "; ".join(n.split(":")[0] for n in fit["notes"] if any(w in n for w in WARNINGS))
        gpus = ", ".join(sorted({f"-g {r['ngpus']}" for r in fit["runs"] if r.get("ngpus")}))
        print(f"| {label} | {where} | {before} → {after} of {n} | {fitted} | {warnings} | {gpus} |")
    print(f"\nTotal: {totals[1]} → {totals[2]} of {totals[0]} held-out rows of at least 1 MiB within ±15%.")


if __name__ == "__main__":
    main()
