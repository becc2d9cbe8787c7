"""The ``contend`` command line: thin over the Python API, which is thin over the Rust engine."""

from __future__ import annotations

import functools
import json
import os
import sys
from fractions import Fraction
from pathlib import Path
from typing import Any, Callable, List, Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from contend import api
from contend.errors import ContendError, InputError

app = typer.Typer(
    help="Predict, explain and optimise data movement on multi-GPU machines.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
# Piped output keeps whole lines: tables and notes are read by people and by grep alike.
out = Console(highlight=False, width=None if sys.stdout.isatty() else 160)
err = Console(stderr=True, highlight=False, width=None if sys.stderr.isatty() else 200)


def user_errors(fn: Callable) -> Callable:
    """A user's mistake is one line on stderr and exit code 2, never a traceback."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except InputError as e:
            err.print(f"[bold red]error:[/] {escape(str(e))}", soft_wrap=True)
            raise typer.Exit(2)
        except ContendError as e:
            err.print(f"[bold red]failed:[/] {escape(str(e))}", soft_wrap=True)
            raise typer.Exit(1)

    return wrapper


def parse_params(pairs: Optional[List[str]]) -> dict[str, str]:
    params: dict[str, str] = {}
    for p in pairs or []:
        key, sep, value = p.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise InputError(f'--param: "{p}" is not key=value; write e.g. --param tau=0.2')
        params[key.strip()] = value.strip()
    return params


def output_path(path: Optional[Path], inputs: list[str], flag: str) -> Optional[str]:
    """Outputs go where the user says, but never over one of the inputs."""
    if path is None:
        return None
    for i in inputs:
        if os.path.exists(i) and os.path.exists(path) and os.path.samefile(i, path):
            raise InputError(f"{flag}: {path} is an input of this command; write the output to another file")
    if path.parent and not path.parent.exists():
        raise InputError(f"{flag}: folder {path.parent} does not exist; create it or choose another path")
    return str(path)


def fmt_factor(x: float) -> str:
    f = Fraction(x).limit_denominator(100)
    if abs(float(f) - x) < 1e-9 and f.denominator > 1:
        return f"{f.numerator}/{f.denominator}"
    if abs(x - round(x)) < 1e-12:
        return str(int(round(x)))
    return f"{x:.4f}"


MachineArg = typer.Argument(..., help="A preset (see `contend machines`) or a machine file (YAML/JSON).")
TransfersArg = typer.Argument(..., help="A transfers file (YAML/JSON), or the built-in `sc16-example`.")
ModelOpt = typer.Option("sc16", "--model", "-m", help="Model to predict with (see `contend models`).")
ParamOpt = typer.Option(None, "--param", "-p", help="Model parameter key=value, e.g. tau=0.2 or bandwidth=11.6GiB/s.")
TimelineOpt = typer.Option(None, "--timeline", help="Write a Gantt chart of the transfers (PNG).")
TraceOpt = typer.Option(None, "--trace", help="Write a Chrome/Perfetto trace (JSON) for ui.perfetto.dev.")


def write_pictures(raw: dict[str, Any], timeline: Optional[str], trace: Optional[str]) -> None:
    if timeline:
        from contend.plots import timeline as draw

        draw(raw, timeline)
        err.print(f"timeline written to {timeline}")
    if trace:
        from contend.trace import write_trace

        write_trace(raw, trace)
        err.print(f"trace written to {trace} (open it in ui.perfetto.dev)")


def prepare(machine: str, transfers: str, param: Optional[List[str]], timeline: Optional[Path], trace: Optional[Path]):
    """Check every argument before any work, so a bad output path costs nothing."""
    params = parse_params(param)
    tl = output_path(timeline, [machine, transfers], "--timeline")
    tr = output_path(trace, [machine, transfers], "--trace")
    return api.Machine.load(machine), api.Transfers.load(transfers), params, tl, tr


@app.command()
@user_errors
def machines() -> None:
    """List the machine presets."""
    table = Table(title="machine presets")
    for col in ("name", "GPUs", "description"):
        table.add_column(col)
    for _, row in api.presets().iterrows():
        table.add_row(row["name"], str(row["gpus"]), row["description"])
    out.print(table)


@app.command()
@user_errors
def show(machine: str = MachineArg, png: Optional[Path] = typer.Option(None, "--png", help="Also draw the machine (PNG).")) -> None:
    """Print a machine's PCIe trees and other links."""
    m = api.Machine.load(machine)
    out.print(m.tree(), end="")
    target = output_path(png, [machine], "--png")
    if target:
        from contend.plots import machine_diagram

        machine_diagram(m.graph(), target)
        err.print(f"diagram written to {target}")


@app.command()
@user_errors
def simulate(
    machine: str = MachineArg,
    transfers: str = TransfersArg,
    model: str = ModelOpt,
    param: Optional[List[str]] = ParamOpt,
    as_json: bool = typer.Option(False, "--json", help="Print the full result as JSON."),
    as_csv: bool = typer.Option(False, "--csv", help="Print one CSV row per transfer."),
    timeline: Optional[Path] = TimelineOpt,
    trace: Optional[Path] = TraceOpt,
) -> None:
    """Predict each transfer's start, finish, duration and effective bandwidth."""
    m, t, params, tl, tr = prepare(machine, transfers, param, timeline, trace)
    r = api.simulate(m, t, model=model, **params)
    if as_json:
        sys.stdout.write(r.to_json() + "\n")
    elif as_csv:
        sys.stdout.write(r.transfers.to_csv(index=False))
    else:
        print_transfers(r)
    write_pictures(r.raw, tl, tr)


def print_transfers(r: api.Result) -> None:
    params = ", ".join(f"{k}={v}" for k, v in r.params.items())
    table = Table(title=f"{r.raw['machine']} — {r.raw['model']} ({params})")
    for col, just in (("transfer", "left"), ("src→dst", "left"), ("size", "right"), ("start ms", "right"),
                      ("finish ms", "right"), ("duration ms", "right"), ("GB/s", "right"), ("GiB/s", "right")):
        table.add_column(col, justify=just)
    for t in r.raw["transfers"]:
        table.add_row(
            t["name"],
            f"{t['src']}→{t['dst']}",
            human_bytes(t["size_bytes"]),
            f"{t['start_s'] * 1e3:.2f}",
            f"{t['finish_s'] * 1e3:.2f}",
            f"{t['duration_s'] * 1e3:.2f}",
            f"{t['bandwidth_bps'] / 1e9:.2f}",
            f"{t['bandwidth_bps'] / 2**30:.2f}",
        )
    out.print(table)
    out.print(f"makespan {r.makespan_s * 1e3:.2f} ms over {len(r.raw['phases'])} phases")


def human_bytes(n: int) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            v = n / scale
            return f"{v:.0f}{unit}" if v == int(v) else f"{v:.2f}{unit}"
    return f"{n}B"


@app.command()
@user_errors
def explain(
    machine: str = MachineArg,
    transfers: str = TransfersArg,
    model: str = ModelOpt,
    param: Optional[List[str]] = ParamOpt,
    as_json: bool = typer.Option(False, "--json", help="Print factors and causes as JSON."),
    timeline: Optional[Path] = TimelineOpt,
    trace: Optional[Path] = TraceOpt,
) -> None:
    """Show, per phase, every transfer's congestion factor after steps A-D and the port that caused each change."""
    m, t, params, tl, tr = prepare(machine, transfers, param, timeline, trace)
    e = api.explain(m, t, model=model, **params)
    if as_json:
        sys.stdout.write(e.to_json() + "\n")
    else:
        print_explanation(e)
    write_pictures(e.raw, tl, tr)


def print_explanation(e: api.Explanation) -> None:
    raw = e.raw
    params = ", ".join(f"{k}={v}" for k, v in raw["params"].items())
    out.print(f"[bold]{raw['machine']}[/] — sc16 congestion factors ({params})")
    for i, ph in enumerate(raw["explain"]):
        table = Table(title=f"phase {i + 1}: {ph['start_s'] * 1e3:.2f} – {ph['end_s'] * 1e3:.2f} ms", title_justify="left")
        for col in ("comm", "A", "B", "C", "D (HOL)", "final"):
            table.add_column(col, justify="left" if col == "comm" else "right")
        notes = []
        for row in ph["rows"]:
            t = raw["transfers"][row["transfer"]]
            comm = f"{t['name']} {t['src']}→{t['dst']}"
            table.add_row(comm, *(fmt_factor(row[k]) for k in ("a", "b", "c", "d", "final")))
            for step in ("B", "C", "D", "final"):
                for c in row["causes"].get(step, []):
                    notes.append(escape(f"  {comm} [{step}] {c}"))
        out.print(table)
        for n in notes:
            out.print(n)
    out.print()
    print_transfers(e)


@app.command()
@user_errors
def generate(
    pattern: str = typer.Argument(..., help="scatter, gather, all-to-all or random"),
    machine: str = MachineArg,
    size: str = typer.Option("300MiB", "--size", help="Size of every transfer, with unit."),
    root: Optional[str] = typer.Option(None, "--root", help="Root GPU of scatter or gather."),
    gpus: Optional[str] = typer.Option(None, "--gpus", help="Comma-separated GPUs to use (default: all)."),
    count: int = typer.Option(32, "--count", help="Number of transfers of a random graph."),
    seed: int = typer.Option(0, "--seed", help="Seed of a random graph."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write here instead of printing; never overwrites."),
) -> None:
    """Generate a transfers file for a communication pattern."""
    m = api.Machine.load(machine)
    peers = [g.strip() for g in gpus.split(",")] if gpus else m.gpus
    t = api.Transfers.generate(pattern, peers, size, root=root, count=count, seed=seed)
    t.check(m)  # a wrong GPU name is reported now, not when the file is used
    text = t.to_yaml()
    if output is None:
        sys.stdout.write(text)
        return
    if output.exists():
        raise InputError(f"--output: {output} exists; contend never overwrites a file, choose another name")
    output_path(output, [machine], "--output")
    output.write_text(text)
    err.print(f"{len(t)} transfers written to {output}")


@app.command()
@user_errors
def models() -> None:
    """List the models and their parameters."""
    for m in api.models():
        out.print(f"[bold]{m['name']}[/]: {m['summary']}")
        out.print(f"  applies to: {m['applies_to']}")
        for name, help_ in m["params"]:
            out.print(f"  --param {name}=…  {help_}")


@app.command()
@user_errors
def schema(which: str = typer.Argument("machine", help="machine or transfers")) -> None:
    """Print the JSON Schema of machine or transfers files (for editors)."""
    from contend import _core

    sys.stdout.write(_core.schema(which) + "\n")


@app.command()
@user_errors
def demo(outdir: Path = typer.Option(Path("contend-demo"), "--out", help="Folder for the pictures.")) -> None:
    """The built-in default scenario: the SC16 worked example on cs-storm-socket, simulated and explained."""
    outdir.mkdir(parents=True, exist_ok=True)
    m, t = api.Machine.load("cs-storm-socket"), api.Transfers.example()
    out.print("[bold]The SC16 worked example[/]: 0→2, 1→4, 3→2, 6→4, 300 MiB each, on one CS-Storm socket\n")
    out.print(m.tree())
    e = api.explain(m, t, tau=0.2)
    out.print("[dim]tau = 0.2, as in the slides' table:[/]")
    print_explanation(e)
    out.print()
    r = api.simulate(m, t)
    out.print("[dim]with the fitted tau = 0.1735:[/]")
    print_transfers(r)
    write_pictures(e.raw, str(outdir / "timeline.png"), str(outdir / "trace.json"))


def main() -> None:
    app()


if __name__ == "__main__":
    main()
