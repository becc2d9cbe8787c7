"""`contend simulate`, `explain`, `generate` and `demo`: transfers on a machine, predicted and explained."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from contend import api
from contend.cli.shared import (
    MachineArg,
    ModelOpt,
    ParamOpt,
    TimelineOpt,
    TraceOpt,
    TransfersArg,
    err,
    new_file,
    out,
    output_path,
    prepare,
    write_pictures,
)
from contend.cli.tables import print_explanation, print_transfers
from contend.errors import InputError


def simulate(
    machine: str = MachineArg,
    transfers: str = TransfersArg,
    model: str = ModelOpt,
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
) -> None:
    """Predict each transfer's start, finish, duration and effective bandwidth, and each link's load."""
    m, t, params, tl, tr = prepare(machine, transfers, param, timeline, trace)
    fab = output_path(fabric, [machine, transfers], "--fabric")
    if fab and not m.spec.get("network"):
        raise InputError(f"--fabric: {m.name} is one node, not a cluster; use --timeline or show --png")
    cluster = bool(m.spec.get("network"))
    r = api.simulate(m, t, model=model, phases=phases or bool(tl or tr), nics=nics or bool(tr and cluster), **params)
    if as_json:
        sys.stdout.write(r.to_json() + "\n")
    elif as_csv:
        import csv

        cols = r.raw["transfers"]
        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow(cols.keys())
        writer.writerows(zip(*cols.values(), strict=True))
    else:
        print_transfers(r)
    write_pictures(r.raw, tl, tr)
    if fab:
        from contend.plots import fabric_diagram

        links = r.raw["links"]
        fabric_diagram(m.graph(), fab, dict(zip(links["name"], links["peak_utilisation"], strict=True)))
        err().print(f"fabric written to {fab}")


def explain(
    machine: str = MachineArg,
    transfers: str = TransfersArg,
    model: str = ModelOpt,
    param: list[str] | None = ParamOpt,
    as_json: bool = typer.Option(False, "--json", help="Print factors and causes as JSON."),
    timeline: Path | None = TimelineOpt,
    trace: Path | None = TraceOpt,
) -> None:
    """Show, per phase, every transfer's congestion factor after steps A-D and the port that caused each change."""
    m, t, params, tl, tr = prepare(machine, transfers, param, timeline, trace)
    e = api.explain(m, t, model=model, **params)
    if as_json:
        sys.stdout.write(e.to_json() + "\n")
    else:
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
    count: int = typer.Option(
        32, "--count", help="Number of transfers of a random graph (1 to 10,000,000; pairs repeat once all are used)."
    ),
    seed: int = typer.Option(0, "--seed", help="Seed of a random graph or permutation."),
    gap: str | None = typer.Option(None, "--gap", help="Issue transfer k at k × gap, e.g. 2us (default: all at 0)."),
    grid: str | None = typer.Option(None, "--grid", help="Rank grid of neighbours, e.g. 16x16x8 (row-major)."),
    periodic: bool = typer.Option(False, "--periodic", help="Neighbours wrap around the grid."),
    output: Path | None = typer.Option(
        None, "--output", "-o", help="Write here instead of printing; never overwrites."
    ),
) -> None:
    """Generate a transfers file for a communication pattern."""
    m = api.Machine.load(machine)
    peers = [g.strip() for g in gpus.split(",")] if gpus else None
    t = api.Transfers.generate(pattern, m, size, peers=peers, root=root, count=count, seed=seed, gap=gap, grid=grid,
                               periodic=periodic)
    t.check(m)  # a wrong GPU name is reported now, not when the file is used
    text = t.to_yaml()
    if output is None:
        sys.stdout.write(text)
        return
    new_file(output, [machine])
    output.write_text(text)
    err().print(f"{len(t)} transfers written to {output}")


def demo(outdir: Path = typer.Option(Path("contend-demo"), "--out", help="Folder for the pictures.")) -> None:
    """The built-in default scenario: the SC16 worked example on cs-storm-socket, simulated and explained."""
    outdir.mkdir(parents=True, exist_ok=True)
    m, t = api.Machine.load("cs-storm-socket"), api.Transfers.example()
    out().print("[bold]The SC16 worked example[/]: 0→2, 1→4, 3→2, 6→4, 300 MiB each, on one CS-Storm socket\n")
    out().print(m.tree())
    e = api.explain(m, t, tau=0.2)
    out().print("[dim]tau = 0.2, as in the slides' table:[/]")
    print_explanation(e)
    out().print()
    r = api.simulate(m, t)
    out().print("[dim]with the fitted tau = 0.1735:[/]")
    print_transfers(r)
    write_pictures(e.raw, str(outdir / "timeline.png"), str(outdir / "trace.json"))
