"""`contend simulate`'s work, apart from reading its command line: ``predict.simulate`` declares its options for
typer, and ``direct`` reads a plain command line without typer (about a third of the command's start-up)."""

from __future__ import annotations

import sys

from contend import api
from contend.cli.base import (
    PHASE_ROWS,
    TRACE_ROWS,
    bound,
    err,
    phase_rows,
    picture_path,
    prepare,
    write_pictures,
)
from contend.errors import InputError

# typing's TYPE_CHECKING, without importing typing at run time (a twentieth of `simulate --json`'s start-up).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path


def simulate(
    machine: str, transfers: str, model: str | None = None, param: list[str] | None = None, as_json: bool = False,
    as_csv: bool = False, phases: bool = False, timeline: Path | None = None, trace: Path | None = None,
    fabric: Path | None = None, nics: bool = False, force: bool = False, max_rows: int | None = None,
) -> None:
    """Predict each transfer's start, finish, duration and effective bandwidth, and each link's load."""
    m, t, params, tl, tr = prepare(machine, transfers, param, timeline, trace, force, max_rows)
    fab = picture_path(fabric, [machine, transfers], "--fabric", force)
    if fab and not m.spec.get("network"):
        raise InputError(f"--fabric: {m.name} is one node, not a cluster; use --timeline or show --png")
    cluster = bool(m.spec.get("network"))
    n = len(t)
    if phases:
        bound("--phases", phase_rows(n), PHASE_ROWS, max_rows, "phase rows (transfers × phases)",
              "drop --phases (the transfer and link tables need none)")
    if tr:
        bound("--trace", phase_rows(n), TRACE_ROWS, max_rows, "trace events (transfers × phases)",
              "trace fewer transfers, or use --json")
    if nics:
        bound("--nics", 2 * n, PHASE_ROWS, max_rows, "NIC queue samples", "drop --nics")
    r = api.simulate(m, t, model=model, phases=phases or bool(tl or tr), nics=nics or bool(tr and cluster), **params)
    if as_json:
        r.write_json(sys.stdout)
    elif as_csv:
        r.write_csv(sys.stdout)
    else:
        # The tables are imported where printed: `simulate --json` and `--csv` print none.
        from contend.cli.tables import print_nics, print_phases, print_transfers

        print_transfers(r, params)
        if phases:
            print_phases(r.raw)
        if nics:
            print_nics(r.raw)
    if tl or tr:
        write_pictures(r.raw, tl, tr)
    if fab:
        from contend.plots import fabric_diagram

        links = r.arrow("links").to_pydict()
        fabric_diagram(m.graph(), fab, dict(zip(links["name"], links["peak_utilisation"], strict=True)))
        err().print(f"fabric written to {fab}")
