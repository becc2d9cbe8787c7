"""`contend simulate`, `explain`, `generate` and `demo`: transfers on a machine, predicted and explained."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from contend import api
from contend.cli import simulation
from contend.cli.shared import (
    EXPLAIN_ROWS,
    GENERATE_TRANSFERS,
    TRACE_ROWS,
    Count,
    ForceOpt,
    MachineArg,
    MaxRowsOpt,
    ModelOpt,
    ParamOpt,
    TimelineOpt,
    TraceOpt,
    TransfersArg,
    bound,
    load_machine,
    new_file,
    out,
    output_path,
    phase_rows,
    picture_path,
    prepare,
    styled,
    write_pictures,
    written,
)
from contend.errors import InputError
from contend.output import Target, io_error, write_text


def simulate(
    machine: str = MachineArg,
    transfers: str = TransfersArg,
    model: str | None = ModelOpt,
    param: list[str] | None = ParamOpt,
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON (`contend schema report`)."),
    as_csv: bool = typer.Option(False, "--csv", help="Print one CSV row per transfer."),
    phases: bool = typer.Option(
        False, "--phases", help="Also report every phase's rates and link loads (grows with transfers squared)."
    ),
    timeline: Path | None = TimelineOpt,
    trace: Path | None = TraceOpt,
    fabric: Path | None = typer.Option(
        None, "--fabric", help="Draw a cluster's fabric coloured by each link's peak utilisation (PNG)."
    ),
    nics: bool = typer.Option(False, "--nics", help="Also report every NIC's queue over time (clusters)."),
    force: bool = ForceOpt,
    max_rows: int | None = MaxRowsOpt,
) -> None:
    """Predict each transfer's start, finish, duration and effective bandwidth, and each link's load."""
    simulation.simulate(machine, transfers, model, param, as_json, as_csv, phases, timeline, trace, fabric, nics,
                        force, max_rows)


def explain(
    machine: str = MachineArg,
    transfers: str = TransfersArg,
    model: str | None = ModelOpt,
    param: list[str] | None = ParamOpt,
    as_json: bool = typer.Option(False, "--json", help="Print factors and causes as JSON."),
    timeline: Path | None = TimelineOpt,
    trace: Path | None = TraceOpt,
    force: bool = ForceOpt,
    max_rows: int | None = MaxRowsOpt,
) -> None:
    """Show, per phase, every transfer's congestion factor after steps A-D and the port that caused each change."""
    m, t, params, tl, tr = prepare(machine, transfers, param, timeline, trace, force, max_rows)
    bound("explain", phase_rows(len(t)), EXPLAIN_ROWS, max_rows, "factor rows (transfers × phases)",
          "explain a smaller set of transfers, or use simulate")
    if tr:
        bound("--trace", phase_rows(len(t)), TRACE_ROWS, max_rows, "trace events (transfers × phases)",
              "trace fewer transfers")
    e = api.explain(m, t, model=model, **params)
    if as_json:
        e.write_json(sys.stdout)
    else:
        from contend.cli.tables import print_explanation

        print_explanation(e)
    write_pictures(e.raw, tl, tr)


def generate(
    pattern: str = typer.Argument(
        ..., help="scatter, gather, incast, all-to-all, random, permutation, neighbours or group-shift"
    ),
    machine: str = MachineArg,
    size: str = typer.Option("300MiB", "--size", help="Size of every transfer, with unit."),
    root: str | None = typer.Option(None, "--root", help="Root GPU of scatter, gather or incast."),
    gpus: str | None = typer.Option(None, "--gpus", help="Comma-separated GPUs to use (default: all)."),
    count: int = Count(
        32, "--count", lo=1, hi=10_000_000,
        help=f"Number of transfers of a random graph (1 to 10,000,000, above {GENERATE_TRANSFERS:,} with --max-rows; "
        "pairs repeat once all are used).",
    ),
    seed: int = Count(0, "--seed", lo=0, hi=2**64 - 1, help="Seed of a random graph or permutation."),
    gap: str | None = typer.Option(None, "--gap", help="Issue transfer k at k × gap, e.g. 2us (default: all at 0)."),
    grid: str | None = typer.Option(None, "--grid", help="Rank grid of neighbours, e.g. 16x16x8 (row-major)."),
    periodic: bool = typer.Option(False, "--periodic", help="Neighbours wrap around the grid."),
    output: Path | None = typer.Option(
        None, "--output", "-o", help="Write here instead of printing (- for standard output)."
    ),
    force: bool = ForceOpt,
    max_rows: int | None = MaxRowsOpt,
) -> None:
    """Generate a transfers file for a communication pattern."""
    if output and output.suffix.lower() == ".csv":
        # simulate reads a .csv as CSV: YAML under that name would fail there ("has 3 fields for 1 columns").
        raise InputError(f"--output: {output} is named .csv, but generate writes a YAML transfers file; name it .yaml")
    target = new_file(output, [machine], force) or Target(None, "--output")
    if pattern == "random":
        bound("--count", count, GENERATE_TRANSFERS, max_rows, "transfers (about 1 KiB of memory each)",
              "generate fewer")
    m = load_machine(machine)
    peers = [g.strip() for g in gpus.split(",")] if gpus else None
    if pattern == "all-to-all":
        p = len(peers) if peers else len(m.gpus)
        bound("generate", p * (p - 1), GENERATE_TRANSFERS, max_rows,
              f"transfers of an all-to-all among {p:,} GPUs (about 1 KiB of memory each)", "pick fewer with --gpus")
    t = api.Transfers.generate(pattern, m, size, peers=peers, root=root, count=count, seed=seed, gap=gap, grid=grid,
                               periodic=periodic)
    t.check(m)  # a wrong GPU name is reported now, not when the file is used
    write_text(target, t.to_yaml())
    written(target, f"{len(t)} transfers")


def demo(
    outdir: Path = typer.Option(Path("contend-demo"), "--out", help="Folder for the pictures."),
    force: bool = ForceOpt,
) -> None:
    """The built-in default scenario: the SC16 worked example on cs-storm-socket, simulated and explained."""
    if outdir.exists() and not outdir.is_dir():
        raise InputError(f"--out: {outdir} is a file; give a folder for the pictures")
    if not outdir.parent.is_dir():
        raise InputError(f"--out: folder {outdir.parent} does not exist; create it or choose another path")
    tl = picture_path(outdir / "timeline.png", [], "--out", force) if outdir.is_dir() else None
    tr = output_path(outdir / "trace.json", [], "--out", force) if outdir.is_dir() else None
    try:
        outdir.mkdir(exist_ok=True)
    except OSError as exc:
        raise io_error(outdir, exc, "--out") from None
    tl = tl or Target(outdir / "timeline.png", "--out")
    tr = tr or Target(outdir / "trace.json", "--out")
    from contend.cli.tables import print_explanation, print_transfers

    m, t = api.Machine.load("cs-storm-socket"), api.Transfers.example()
    out().print(styled(("The SC16 worked example", "bold"),
                       ": 0→2, 1→4, 3→2, 6→4, 300 MiB each, on one CS-Storm socket\n"))
    out().print(m.tree())
    e = api.explain(m, t, tau=0.2)
    out().print(styled(("tau = 0.2, as in the slides' table:", "dim")))
    print_explanation(e)
    out().print()
    r = api.simulate(m, t)
    out().print(styled(("with the fitted tau = 0.1735:", "dim")))
    print_transfers(r)
    write_pictures(e.raw, tl, tr)
