"""The ``contend`` command line: thin over the Python API, which is thin over the Rust engine."""

from __future__ import annotations

import functools
import json
import os
import sys
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from typing import Any, TextIO

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from contend import _core, api
from contend.errors import ContendError, InputError
from contend.units import time_unit

app = typer.Typer(
    help="Predict, explain and optimise data movement on multi-GPU machines.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def out() -> Console:
    """The console on the current ``sys.stdout`` (tables, reports)."""
    return _console(sys.stdout, 160)


def err() -> Console:
    """The console on the current ``sys.stderr`` (errors, notes on files written, progress)."""
    return _console(sys.stderr, 200)


@functools.lru_cache(maxsize=4)
def _console(stream: TextIO, piped_width: int) -> Console:
    # Bound to the stream at call time, not import time, so that a caller who swaps sys.stdout/sys.stderr
    # (tests run the CLI in-process) gets the output. Piped output keeps whole lines: tables and notes are
    # read by people and by grep alike.
    return Console(file=stream, highlight=False, width=None if stream.isatty() else piped_width)


def user_errors(fn: Callable) -> Callable:
    """A user's mistake is one line on stderr and exit code 2, never a traceback."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except InputError as e:
            err().print(f"[bold red]error:[/] {escape(str(e))}", soft_wrap=True)
            raise typer.Exit(2) from None
        except ContendError as e:
            err().print(f"[bold red]failed:[/] {escape(str(e))}", soft_wrap=True)
            raise typer.Exit(1) from None

    return wrapper


def parse_params(pairs: list[str] | None) -> dict[str, str]:
    params: dict[str, str] = {}
    for p in pairs or []:
        key, sep, value = p.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise InputError(f'--param: "{p}" is not key=value; write e.g. --param tau=0.2')
        params[key.strip()] = value.strip()
    return params


def output_path(path: Path | None, inputs: list[str], flag: str) -> str | None:
    """Outputs go where the user says, but never over one of the inputs."""
    if path is None:
        return None
    for i in inputs:
        if os.path.exists(i) and os.path.exists(path) and os.path.samefile(i, path):
            raise InputError(f"{flag}: {path} is an input of this command; write the output to another file")
    if path.parent and not path.parent.exists():
        raise InputError(f"{flag}: folder {path.parent} does not exist; create it or choose another path")
    return str(path)


def new_file(path: Path | None, inputs: list[str]) -> None:
    """Files that hold a user's work (machines, transfers) are written only where none exists."""
    if path is not None and path.exists():
        raise InputError(f"--output: {path} exists; contend never overwrites a file, choose another name")
    output_path(path, inputs, "--output")


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


def write_pictures(raw: dict[str, Any], timeline: str | None, trace: str | None) -> None:
    if timeline:
        from contend.plots import timeline as draw

        draw(raw, timeline)
        err().print(f"timeline written to {timeline}")
    if trace:
        from contend.trace import write_trace

        write_trace(raw, trace)
        err().print(f"trace written to {trace} (open it in ui.perfetto.dev)")


# A timeline draws one bar per transfer; past this it is unreadable.
TIMELINE_BARS = 200


def prepare(machine: str, transfers: str, param: list[str] | None, timeline: Path | None, trace: Path | None):
    """Check every argument before any work, so a bad output path costs nothing."""
    params = parse_params(param)
    tl = output_path(timeline, [machine, transfers], "--timeline")
    tr = output_path(trace, [machine, transfers], "--trace")
    t = api.Transfers.load(transfers)
    if tl and len(t) > TIMELINE_BARS:
        raise InputError(f"--timeline: {len(t):,} transfers are too many to draw a bar each (at most {TIMELINE_BARS}); "
                         "use --trace, which Perfetto shows at any size")
    return api.Machine.load(machine), t, params, tl, tr


@app.command()
@user_errors
def machines() -> None:
    """List the machine presets."""
    table = Table(title="machine presets")
    for col in ("name", "GPUs", "description"):
        table.add_column(col)
    for row in json.loads(_core.presets()):  # not api.presets(): listing needs no pandas
        table.add_row(row["name"], str(row["gpus"]), row["description"])
    out().print(table)


@app.command()
@user_errors
def show(
    machine: str = MachineArg,
    png: Path | None = typer.Option(None, "--png", help="Also draw the machine (PNG)."),
) -> None:
    """Print a machine's PCIe trees and other links."""
    m = api.Machine.load(machine)
    out().print(m.tree(), end="")
    target = output_path(png, [machine], "--png")
    if target:
        from contend.plots import fabric_diagram, machine_diagram

        draw = fabric_diagram if m.spec.get("network") else machine_diagram
        draw(m.graph(), target)
        err().print(f"diagram written to {target}")


@app.command()
@user_errors
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


# A terminal table shows this many transfers and links; --json and --csv give every one.
TABLE_ROWS = 50


def print_transfers(r: api.Result) -> None:
    raw = r.raw
    params = ", ".join(f"{k}={v}" for k, v in r.params.items())
    table = Table(title=f"{raw['machine']} — {raw['model']} ({params})")
    unit, scale = time_unit(r.makespan_s)
    for col in ("transfer", "src→dst", "size", f"start {unit}", f"finish {unit}", f"duration {unit}", "GB/s", "GiB/s"):
        table.add_column(col, justify="left" if col in ("transfer", "src→dst") else "right")
    t = raw["transfers"]
    n = len(t["name"])
    for i in range(min(n, TABLE_ROWS)):
        table.add_row(
            t["name"][i],
            f"{t['src'][i]}→{t['dst'][i]}",
            human_bytes(t["size_bytes"][i]),
            f"{t['start_s'][i] * scale:.2f}",
            f"{t['finish_s'][i] * scale:.2f}",
            f"{t['duration_s'][i] * scale:.2f}",
            f"{t['bandwidth_bps'][i] / 1e9:.2f}",
            f"{t['bandwidth_bps'][i] / 2**30:.2f}",
        )
    out().print(table)
    if n > TABLE_ROWS:
        out().print(f"… and {n - TABLE_ROWS:,} more transfers (--csv or --json lists every one)")
    print_links(raw)
    from contend.cli_datatype import print_methods

    print_methods(raw)
    phases = raw.get("phases")
    over = f" over {len(phases['start_s'])} phases" if phases else ""
    out().print(f"makespan {r.makespan_s * scale:.2f} {unit}{over}; {n:,} transfers, "
                f"{human_bytes(raw['summary']['bytes'])}")


def print_links(raw: dict[str, Any]) -> None:
    """The busiest links: bytes, busy time and peak utilisation."""
    links = raw["links"]
    shown = len(links["name"]) if len(links["name"]) <= 12 else 10
    order = sorted(range(len(links["name"])), key=lambda i: -links["busy_s"][i])[:shown]
    if not order:
        return
    unit, scale = time_unit(max(links["busy_s"]) or 1.0)
    table = Table(title="links, busiest first", title_justify="left")
    for col in ("link", "bytes", f"busy {unit}", "peak load"):
        table.add_column(col, justify="left" if col == "link" else "right")
    for i in order:
        table.add_row(links["name"][i], human_bytes(int(links["bytes"][i])), f"{links['busy_s'][i] * scale:.2f}",
                      f"{links['peak_utilisation'][i]:.0%}")
    out().print(table)


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


def print_explanation(e: api.Explanation) -> None:
    raw = e.raw
    params = ", ".join(f"{k}={v}" for k, v in raw["params"].items())
    out().print(f"[bold]{raw['machine']}[/] — sc16 congestion factors ({params})")
    for i, ph in enumerate(raw["explain"]):
        unit, scale = time_unit(raw["summary"]["makespan_s"])
        title = f"phase {i + 1}: {ph['start_s'] * scale:.2f} – {ph['end_s'] * scale:.2f} {unit}"
        table = Table(title=title, title_justify="left")
        for col in ("comm", "A", "B", "C", "D (HOL)", "final"):
            table.add_column(col, justify="left" if col == "comm" else "right")
        notes = []
        transfers = raw["transfers"]
        for row in ph["rows"]:
            i = row["transfer"]
            comm = f"{transfers['name'][i]} {transfers['src'][i]}→{transfers['dst'][i]}"
            table.add_row(comm, *(fmt_factor(row[k]) for k in ("a", "b", "c", "d", "final")))
            for step in ("B", "C", "D", "final"):
                for c in row["causes"].get(step, []):
                    notes.append(escape(f"  {comm} [{step}] {c}"))
        out().print(table)
        for n in notes:
            out().print(n)
    out().print()
    print_transfers(e)


@app.command()
@user_errors
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


@app.command()
@user_errors
def schedule(
    machine: str = MachineArg,
    halo: str = typer.Option(
        "2d", "--halo", help="2d, 3d (the COSMO presets), a halo preset, or a halo file (YAML/JSON)."
    ),
    semantics: str = typer.Option(
        "sequential",
        "--semantics",
        help="sequential (each GPU sends one message after the other) or rounds (barrier between rounds).",
    ),
    search: str = typer.Option(
        "exhaustive",
        "--search",
        help="exhaustive, bnb (branch and bound: proves the optimum) or anneal (heuristic, with a lower bound).",
    ),
    model: str = ModelOpt,
    param: list[str] | None = ParamOpt,
    alpha: str = typer.Option("0s", "--alpha", help="Per-message overhead with unit, e.g. 5us."),
    seed: int = typer.Option(0, "--seed", help="Seed of the annealing."),
    iterations: int = typer.Option(20_000, "--iterations", help="Annealing moves per restart (1 to 10^9)."),
    threads: int = typer.Option(0, "--threads", help="Worker threads: 0 (one per core) up to 4 per core."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
    plot: Path | None = typer.Option(
        None, "--plot", help="Draw the sorted times of all orders and their histogram (PNG; exhaustive only)."
    ),
    output: Path | None = typer.Option(
        None,
        "--output",
        "-o",
        help="Write the best schedule as a transfers file for `contend simulate`; never overwrites.",
    ),
) -> None:
    """Find the fastest order of a halo exchange: best, median and worst orders, and the gain."""
    params = parse_params(param)
    target = output_path(plot, [machine, halo], "--plot")
    if target and search != "exhaustive":
        raise InputError("--plot: the plot shows every order's time; use --search exhaustive, or drop --plot")
    new_file(output, [machine, halo])
    m = api.Machine.load(machine)
    s = run_with_progress(lambda progress: api.schedule(
        m, halo, semantics=semantics, search=search, model=model, alpha=alpha, seed=seed, iterations=iterations,
        threads=threads, keep_times=target is not None, progress=progress, **params))
    if as_json:
        raw = {k: v for k, v in s.raw.items() if k != "times_s"}
        raw["best_order"] = s.best_order
        sys.stdout.write(json.dumps(raw, indent=2) + "\n")
    else:
        print_schedule(s)
    if target:
        from contend.plots import schedule_times

        schedule_times(s.raw, target)
        err().print(f"plot written to {target}")
    if output is not None:
        output.write_text(s.best.to_yaml())
        err().print(f"best schedule written to {output} (try: contend simulate {machine} {output})")


def run_with_progress(work: Callable[[Any], Any], what: str = "searching") -> Any:
    """A progress bar on stderr while the engine works, when someone is watching."""
    if not err().is_terminal:
        return work(None)
    from rich.progress import BarColumn, Progress, TimeElapsedColumn, TimeRemainingColumn

    with Progress("[progress.description]{task.description}", BarColumn(), "{task.percentage:>3.0f}%",
                  TimeElapsedColumn(), TimeRemainingColumn(), console=err(), transient=True) as bar:
        task = bar.add_task(what, total=None)
        return work(lambda done, total: bar.update(task, completed=done, total=total))


def print_schedule(s: api.Schedule) -> None:
    r = s.raw
    params = ", ".join(f"{k}={v}" for k, v in r["params"].items())
    out().print(f"[bold]halo exchange on {r['machine']}[/]: {r['messages']} messages among {len(r['gpus'])} GPUs, "
              f"{r['semantics']} semantics, model {r['model']} ({params}), alpha {r['alpha_s'] * 1e6:g} µs")
    out().print(f"orders: {r['orders_total']:,} in all; {r['orders_evaluated']:,} simulated "
              f"({r['symmetries']} symmetries), search {r['method']}")
    unit, scale = time_unit(r["best_s"])
    table = Table()
    table.add_column("order")
    table.add_column(f"time ({unit})", justify="right")
    table.add_column("× T_msg", justify="right")
    table.add_column("", justify="left")
    rows = [("best", r["best_s"], f"{r['best_count']:,} orders" if r.get("best_count") else ""),
            ("median", r.get("median_s"), ""), ("worst", r.get("worst_s"), ""),
            ("identity", r["identity_s"], "each GPU sends in the generator's neighbour order"),
            ("lower bound", r["lower_bound_s"], "proven optimal" if r["proven_optimal"] else f"gap {r['gap']:.1%}")]
    for name, value, note in rows:
        if value is not None:
            table.add_row(name, f"{value * scale:.3f}", f"{value / r['t_msg_s']:.2f}", note)
    out().print(table)
    for name in ("median_s", "identity_s"):
        ref = r.get(name)
        if ref:
            out().print(f"the best takes {1 - r['best_s'] / ref:.1%} less time than the {name[:-2]} "
                      f"({ref / r['best_s']:.2f}× faster)")
    out().print("best order (each GPU's destinations, first first):")
    for gpu, to in s.best_order.items():
        out().print(f"  {gpu} → {', '.join(to)}")


MATRICES = (
    ("unidirectional_p2p_gbps", "Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)"),
    ("unidirectional_p2p_read_gbps", "Unidirectional P2P=Enabled Bandwidth (P2P Reads) Matrix (GB/s)"),
    ("unidirectional_staged_gbps", "Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)"),
    ("bidirectional_p2p_gbps", "Bidirectional P2P=Enabled Bandwidth Matrix (GB/s)"),
    ("bidirectional_staged_gbps", "Bidirectional P2P=Disabled Bandwidth Matrix (GB/s)"),
    ("latency_p2p_us", "P2P=Enabled Latency Matrix (us)"),
    ("latency_staged_us", "P2P=Disabled Latency Matrix (us)"),
)


@app.command()
@user_errors
def p2p(
    machine: str = MachineArg,
    param: list[str] | None = ParamOpt,
    tool: str = typer.Option(
        "p2pBandwidthLatencyTest", "--tool", "-t",
        help="Whose output to predict: p2pBandwidthLatencyTest (CUDA's sample) or nvbandwidth "
        "(its copy-engine testcases, printed as nvbandwidth prints them).",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the matrices as JSON."),
) -> None:
    """Predict what CUDA's p2pBandwidthLatencyTest or NVIDIA's nvbandwidth prints on this machine (maxmin model)."""
    params = parse_params(param)
    if tool.lower() == "nvbandwidth":
        r = api.nvbandwidth(api.Machine.load(machine), **params)
        text = r.pop("text")
        sys.stdout.write(json.dumps(r, indent=2) + "\n" if as_json else text)
        return
    if tool.lower() != "p2pbandwidthlatencytest":
        raise InputError(f'--tool: "{tool}" is not a tool contend predicts; '
                         "write p2pBandwidthLatencyTest or nvbandwidth")
    r = api.p2p(api.Machine.load(machine), **params)
    if as_json:
        sys.stdout.write(json.dumps(r, indent=2) + "\n")
        return
    out().print(f"[bold]{r['machine']}[/]: predicted p2pBandwidthLatencyTest (maxmin; "
              + ", ".join(f"{k}={v}" for k, v in r["params"].items()) + ")")
    for key, title in MATRICES:
        table = Table(title=title, title_justify="left")
        table.add_column("D\\D")
        for g in r["gpus"]:
            table.add_column(g, justify="right")
        for g, row in zip(r["gpus"], r[key], strict=True):
            table.add_row(g, *("-" if v is None else f"{v:.2f}" for v in row))
        out().print(table)
    for n in r["notes"]:
        out().print(f"note: {escape(n)}")


@app.command()
@user_errors
def calibrate(
    machine: str = MachineArg,
    measurements: Path = typer.Argument(
        ...,
        help="Output of CUDA's p2pBandwidthLatencyTest or of nvbandwidth as they print it (nvbandwidth -j JSON too); "
        "a CSV of measured patterns (pattern,src,dst,size,time or bandwidth[,access]) to fit every "
        "parameter the data identifies; or a CSV of transfer graphs (graph,src,dst,size,time) to fit sc16's B and tau.",
    ),
    param: list[str] | None = ParamOpt,
    output: Path | None = typer.Option(
        None, "--output", "-o", help="Write the calibrated machine file here; never overwrites."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print fitted values and residuals as JSON."),
    hold_out: bool = typer.Option(
        False, "--hold-out",
        help=(
            "Fit on single-pair data only (unidirectional, latencies of pairs i<j, one GPU's host copies "
            "both ways; of measured patterns, those of one copy or one each way between two ends); score the "
            "rest as held out."
        ),
    ),
) -> None:
    """Fit bandwidth efficiency and latency per link kind to measurements; report the residual per pair."""
    params = parse_params(param)
    new_file(output, [machine, str(measurements)])
    c = api.calibrate(api.Machine.load(machine), measurements, hold_out=hold_out, **params)
    if "tau" in c:
        print_sc16_fit(c, as_json)
        if output is not None:
            raise InputError(
                "--output: a sc16 fit gives two parameters, not a machine; "
                "pass them as --param bandwidth=… --param tau=…"
            )
        return
    if as_json:
        sys.stdout.write(json.dumps({k: v for k, v in c.items() if k not in ("yaml", "spec")}, indent=2) + "\n")
    else:
        table = Table(title="fitted parameters", title_justify="left")
        table.add_column("parameter")
        table.add_column("value", justify="right")
        for k, v in c["fitted"].items():
            table.add_row(k, v)
        out().print(table)
        table = Table(title="residual per pair", title_justify="left")
        for col in ("matrix", "pair", "measured", "predicted", "error"):
            table.add_column(col, justify="left" if col in ("matrix", "pair") else "right")
        for r in c["residuals"]:
            err_ = r.get("relative_error")
            table.add_row(r["matrix"], f"{r['src']}→{r['dst']}", f"{r['measured']:.2f}",
                          "-" if r.get("predicted") is None else f"{r['predicted']:.2f}",
                          "-" if err_ is None else f"{err_:+.1%}")
        out().print(table)
        for k, v in c["rms_relative_error"].items():
            out().print(f"rms relative error, {k}: {v:.1%}")
        for k, s in c.get("scores", {}).items():
            out().print(f"{k}: median |error| {s['median_abs_relative_error']:.1%}, "
                        f"{s['within_10_percent']:.0%} of {s['count']} within ±10%")
        if "within_10_percent" in c:
            fitted = sum(not r.get("held_out") for r in c["residuals"])
            out().print(f"{c['within_10_percent']:.1%} of {fitted} fitted measurements within ±10%")
        for n in c["notes"]:
            out().print(f"note: {escape(n)}")
    if output is not None:
        output.write_text(c["yaml"])
        err().print(f"calibrated machine written to {output}")


def print_sc16_fit(c: dict[str, Any], as_json: bool) -> None:
    if as_json:
        sys.stdout.write(json.dumps(c, indent=2) + "\n")
        return
    out().print(f"[bold]sc16 fit[/]: bandwidth={c['bandwidth']}  tau={c['tau']:.4f}   "
              f"(use: --param bandwidth={c['bandwidth']} --param tau={c['tau']:.4f})")
    out().print(f"rms relative error {c['rms_relative_error']:.1%}; {c['within_15_percent']:.1%} of "
              f"{len(c['residuals'])} transfers within ±15%")
    worst = sorted(c["residuals"], key=lambda r: -abs(r["relative_error"]))[:10]
    table = Table(title="largest residuals", title_justify="left")
    for col in ("graph", "transfer", "measured", "predicted", "error"):
        table.add_column(col, justify="left" if col in ("graph", "transfer") else "right")
    for r in worst:
        unit, scale = time_unit(r["measured_s"])
        table.add_row(r["graph"], f"{r['src']}→{r['dst']}", f"{r['measured_s'] * scale:.3f} {unit}",
                      f"{r['predicted_s'] * scale:.3f} {unit}", f"{r['relative_error']:+.1%}")
    out().print(table)


@app.command("import")
@user_errors
def import_(
    dump: Path = typer.Argument(
        ...,
        help="Output of `nvidia-smi topo -m`, an NCCL topology XML (NCCL_TOPO_DUMP_FILE), or `sudo lspci -vvv`.",
    ),
    name: str | None = typer.Option(None, "--name", help="Machine name (default: the file's name)."),
    output: Path | None = typer.Option(None, "--output", "-o", help="Write the machine file here; never overwrites."),
    numa_per_socket: int = typer.Option(
        1, "--numa-per-socket",
        help="NUMA nodes per CPU socket, where the BIOS splits sockets (AMD NPS2/NPS4: 2/4, Intel SNC2/SNC4: 2/4); "
        "the dumps show NUMA nodes, not sockets.",
    ),
) -> None:
    """Turn a topology dump into a machine file, stating every assumption made."""
    new_file(output, [str(dump)])
    yaml, assumptions = api.import_machine(dump, name, numa_per_socket)
    err().print(
        f"[bold]{len(assumptions)} assumptions[/] (also written as comments in the file; check and refine them):"
    )
    for a in assumptions:
        err().print(f"  - {escape(a)}", soft_wrap=True)
    if output is None:
        sys.stdout.write(yaml)
    else:
        output.write_text(yaml)
        err().print(f"machine written to {output} (try: contend show {output})")


@app.command()
@user_errors
def models() -> None:
    """List the models: what each assumes, where it comes from, and its parameters."""
    for m in api.models():
        out().print(f"[bold]{m['name']}[/] ({m['kind']} model): {m['summary']}")
        out().print(f"  applies to: {m['applies_to']}")
        for a in m["assumptions"]:
            out().print(f"  assumes: {a}")
        out().print(f"  source: {m['citation']}")
        for p in m["params"]:
            out().print(f"  --param {p['name']}=…  {p['help']} (default {p['default']})")


@app.command("run")
@user_errors
def run_(
    scenario: Path = typer.Argument(..., help="A scenario file: cluster, jobs, model (`contend schema scenario`)."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
    as_csv: bool = typer.Option(False, "--csv", help="Print one CSV row per job."),
    links: int = typer.Option(10, "--links", help="Report the N busiest links (0 to 1000); --detail reports all."),
    detail: bool = typer.Option(
        False, "--detail", help="Report every link, and with --json or --parquet every operation too."
    ),
    parquet: Path | None = typer.Option(
        None, "--parquet", help="Write jobs.parquet and links.parquet (with --detail operations.parquet) here."
    ),
    replace: bool = typer.Option(False, "--replace", help="Let --parquet overwrite the files of an earlier run."),
    plot: Path | None = typer.Option(None, "--plot", help="Draw each job's computation and communication time (PNG)."),
    trace: Path | None = typer.Option(
        None, "--trace", help="Perfetto trace: a track per rank, its computations and messages (JSON)."
    ),
) -> None:
    """Run a scenario's jobs (rank programs, application skeletons) on its cluster: each job's run time,
    computation, communication and their overlap, and the busiest links."""
    if links < 0:
        raise InputError(f"--links: is {links}; give 0 to 1000 (--detail reports every link)")
    png = output_path(plot, [str(scenario)], "--plot")
    tr = output_path(trace, [str(scenario)], "--trace")
    tables = None
    if parquet is not None:
        from contend.run_parquet import targets

        tables = targets(parquet, detail, replace)
    r = run_with_progress(lambda progress: api.run(scenario, detail=detail or bool(tr),
                                                   links=None if detail else links, progress=progress),
                          "messages delivered")
    jobs = r.raw["jobs"]
    if as_json:
        sys.stdout.write(r.json + "\n")
    elif as_csv:
        import csv

        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow(jobs.keys())
        writer.writerows(zip(*jobs.values(), strict=True))
    else:
        print_jobs(r)
        print_run_links(r)
    if tables:
        from contend.run_parquet import write

        for path in write(r.raw, tables):
            err().print(f"table written to {path}")
    if png:
        from contend.plots import job_bars

        job_bars(jobs, png, f"{r.raw['machine']}, {r.raw['model']}")
        err().print(f"chart written to {png}")
    if tr:
        from contend.trace import write_run_trace

        write_run_trace(r.raw, tr)
        err().print(f"trace written to {tr} (open it in ui.perfetto.dev)")


JOB_COLUMNS = ("job", "app", "ranks", "run_time_s", "compute_s", "comm_s", "overlap_s", "messages", "bytes")


def print_jobs(r: api.RunResult) -> None:
    jobs, s = r.raw["jobs"], r.summary
    table = Table("job", "app", "ranks", "run time", "compute", "communication", "overlap", "messages", "bytes")
    unit, scale = time_unit(max(jobs["run_time_s"], default=0.0))
    rows = list(zip(*(jobs[k] for k in JOB_COLUMNS), strict=True))
    for job, app_, ranks, run_t, comp, comm, over, msgs, nbytes in rows[:TABLE_ROWS]:
        share = f" ({comm / run_t:.0%})" if run_t > 0 else ""
        table.add_row(
            str(job),
            app_,
            str(ranks),
            f"{run_t * scale:.2f} {unit}",
            f"{comp * scale:.2f} {unit}",
            f"{comm * scale:.2f} {unit}{share}",
            f"{over * scale:.2f} {unit}",
            f"{msgs:,}",
            human_bytes(nbytes),
        )
    out().print(table)
    if len(rows) > TABLE_ROWS:
        out().print(f"… {len(rows) - TABLE_ROWS} more jobs: --json or --csv gives every one")
    out().print("communication: run time less compute (not hidden by computation); "
                "overlap: computing while a message of the rank is in flight (means over ranks)")
    out().print(
        f"{r.raw['machine']}, model {r.raw['model']}: makespan {s['makespan_s'] * scale:.2f} {unit}; "
        f"{s['jobs']} jobs, {s['ranks']:,} ranks, {s['messages']:,} messages, {human_bytes(s['bytes'])}"
    )


def print_run_links(r: api.RunResult) -> None:
    """The links the run reports (its busiest), with their busy share of the makespan."""
    links, total = r.raw["links"], r.summary["links"]
    if not links["name"]:
        return
    unit, scale = time_unit(max(links["busy_s"]) or 1.0)
    shown = len(links["name"])
    title = f"links, busiest first ({shown:,} of {total:,}{'' if shown == total else '; --links N or --detail'})"
    table = Table(title=title, title_justify="left")
    for col in ("link", "bytes", f"busy {unit}", "busy share", "peak load"):
        table.add_column(col, justify="left" if col == "link" else "right")
    for name, nbytes, busy, share, peak in zip(
        *(links[k] for k in ("name", "bytes", "busy_s", "busy_share", "peak_utilisation")), strict=True
    ):
        table.add_row(name, human_bytes(int(nbytes)), f"{busy * scale:.2f}", f"{share:.0%}", f"{peak:.0%}")
    out().print(table)


@app.command("import-trace")
@user_errors
def import_trace(
    trace: Path = typer.Argument(..., help="The .otf2 anchor file of a Score-P trace of an MPI program."),
    output: Path = typer.Option(..., "-o", "--output", help="Rank program to write (YAML; `contend schema program`)."),
    iterations: int = typer.Option(1, "--iterations", help="Replay the traced loop this many times."),
) -> None:
    """Turn an OTF2 trace into a rank program: MPI calls become operations, the gaps between them compute."""
    from contend import otf2_records

    new_file(output, [str(trace)])
    records, ranks = otf2_records.read(str(trace))
    text = _core.program_from_trace(json.dumps(records), ranks, iterations, str(trace))
    output.write_text(text)
    err().print(f"{ranks} ranks, {len(records)} MPI events → {output} (use it as a job's `program` in a scenario)")


@app.command()
def apps() -> None:
    """List the application skeletons a scenario's jobs can run, with their parameters and defaults."""
    for a in api.apps():
        out().print(f"[bold]{a['name']}[/]: {a['summary']}")
        for name, default, help_ in a["params"]:
            out().print(f"  {name}: {help_} (default {default})")


@app.command()
@user_errors
def schema(
    which: str = typer.Argument("machine", help="machine, transfers, halo, report, scenario, program or datatype"),
) -> None:
    """Print the JSON Schema of machine, transfers, halo, scenario, program or datatype files, or of a report."""
    sys.stdout.write(_core.schema(which) + "\n")


@app.command()
@user_errors
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


# Commands that live in their own files register on `app` when imported.
import contend.cli_datatype  # noqa: E402, F401
import contend.cli_nccl  # noqa: E402, F401
import contend.cli_stencil  # noqa: E402, F401

# The study commands live in their own module (Dask, pyarrow and their reports).
from contend.cli_study import report, study  # noqa: E402

app.command()(user_errors(study))
app.command()(user_errors(report))


def main() -> None:
    app()


if __name__ == "__main__":
    main()
