"""`contend datatype`, `datatypes` and `calibrate-kernels`: non-contiguous messages, method by method."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import typer
from rich.markup import escape
from rich.table import Table

from contend import _core, api
from contend.cli import MachineArg, ParamOpt, app, err, human_bytes, out, output_path, parse_params, user_errors
from contend.datatypes import calibrate_kernels, datatype_sweep
from contend.datatypes import datatype as predict
from contend.errors import InputError
from contend.units import time_unit

KernelOpt = typer.Option(
    None, "--kernel", "-k", help="Kernel cost term key=value, e.g. launch=3us (see `contend datatypes`)."
)


@app.command()
@user_errors
def datatypes() -> None:
    """List the datatype presets and the kernel cost terms of the methods."""
    table = Table(title="datatype presets")
    for col in ("name", "bytes", "blocks", "description"):
        table.add_column(col, justify="right" if col in ("bytes", "blocks") else "left")
    for name, description, size, blocks in json.loads(_core.datatype_presets()):
        table.add_row(name, f"{size:,}", f"{blocks:,}", description)
    out().print(table)
    for p in json.loads(_core.kernel_params()):
        out().print(f"  --kernel {p['name']}=…  {p['help']} (default {p['default']})")


@app.command()
@user_errors
def datatype(
    machine: str = MachineArg,
    src: str = typer.Argument(..., help="Sending GPU, e.g. GPU0."),
    dst: str = typer.Argument(..., help="Receiving GPU."),
    type_: str = typer.Argument(
        ..., metavar="TYPE", help="A datatype preset (see `contend datatypes`) or a datatype file."
    ),
    count: int = typer.Option(1, "--count", "-n", help="Instances of the type in the message (MPI's count)."),
    model: str = typer.Option("maxmin", "--model", "-m", help="Model that times the copy (maxmin caps zero-copy)."),
    param: list[str] | None = ParamOpt,
    kernel: list[str] | None = KernelOpt,
    sweep: int = typer.Option(0, "--sweep", help="Also time N message sizes, 1, 2, 4, … instances."),
    plot: Path | None = typer.Option(None, "--plot", help="Draw the sweep's crossover chart (PNG; default 16 sizes)."),
    as_json: bool = typer.Option(False, "--json", help="Print the comparison (and sweep) as JSON."),
) -> None:
    """Predict each method's time for a message of a datatype — pack-copy-unpack, zero-copy load-store,
    host-staged — with its parts, and which wins."""
    params, kernels = parse_params(param), parse_params(kernel)
    target = output_path(plot, [machine, type_], "--plot")
    if sweep < 0:
        raise InputError(f"--sweep: {sweep} is negative; give the number of sizes, e.g. 16")
    if count < 1:
        raise InputError(f"--count: {count} sends nothing; give at least 1")
    m = api.Machine.load(machine)
    r = predict(m, type_, src, dst, count=count, model=model, kernels=kernels, **params)
    points = sweep or (16 if target else 0)
    s = datatype_sweep(m, type_, src, dst, points=points, model=model, kernels=kernels, **params) if points else None
    if as_json:
        sys.stdout.write(json.dumps({**r, "sweep": s} if s else r, indent=2) + "\n")
    else:
        print_comparison(r)
        if s:
            print_sweep(s)
    if target and s:
        from contend.plots import crossover

        crossover(s, f"{r['datatype']}: {r['src']}→{r['dst']} on {r['machine']} ({r['model']})", target)
        err().print(f"crossover chart written to {target}")


def print_comparison(r: dict[str, Any]) -> None:
    msg, st = r["message"], r["stats"]
    out().print(f"[bold]{escape(r['datatype'])}[/] × {msg['count']:,}: {human_bytes(msg['bytes'])} "
                f"in {msg['blocks']:,} blocks (mean {msg['mean_block_bytes']:,.0f} B; "
                f"one instance: extent {st['extent_bytes']:,} B, "
                f"blocks {st['min_block_bytes']:,}–{st['max_block_bytes']:,} B)")
    times = [m["simulated_s"] for m in r["methods"] if m["simulated_s"] is not None]
    unit, scale = time_unit(min(times))
    table = Table(title=f"{r['src']}→{r['dst']} on {r['machine']} — {r['model']}", title_justify="left")
    for col in ("method", f"total {unit}", f"kernels before {unit}", f"latency {unit}", f"bytes moving {unit}",
                f"kernels after {unit}", "GB/s", "note"):
        table.add_column(col, justify="left" if col in ("method", "note") else "right")
    for m in r["methods"]:
        if m["simulated_s"] is None:
            table.add_row(m["method"], "-", "", "", "", "", "", escape(m.get("why_not") or ""))
            continue
        best = "winner" if m["method"] == r["winner"] else ""
        parts = (f"{m[k] * scale:.2f}" for k in ("simulated_s", "before_s", "latency_s", "moving_s", "after_s"))
        table.add_row(m["method"], *parts, f"{m['rate_bps'] / 1e9:.2f}", best)
    out().print(table)
    win = next(m["simulated_s"] for m in r["methods"] if m["method"] == r["winner"])
    if r["margin_s"] is None:
        out().print(f"winner: {r['winner']} (the only method this pair allows)")
    else:
        out().print(f"winner: {r['winner']}, {r['margin_s'] * scale:.2f} {unit} ahead of the next method "
                    f"({(win + r['margin_s']) / win:.2f}x)")


def print_sweep(s: dict[str, Any]) -> None:
    every = [t for col in s["times"].values() for t in col if t is not None]
    unit, scale = time_unit(min(every))
    table = Table(title="sweep over message sizes", title_justify="left")
    methods = list(s["times"])
    for col in ("count", "size", "blocks", *(f"{m} {unit}" for m in methods), "winner"):
        table.add_column(col, justify="left" if col == "winner" else "right")
    for k, c in enumerate(s["count"]):
        cells = ["-" if s["times"][m][k] is None else f"{s['times'][m][k] * scale:.2f}" for m in methods]
        table.add_row(f"{c:,}", human_bytes(s["bytes"][k]), f"{s['blocks'][k]:,}", *cells, s["winner"][k])
    out().print(table)


def print_methods(raw: dict[str, Any]) -> None:
    """Simulate's and explain's decisions for transfers sent by a datatype method."""
    mt = raw.get("methods")
    if not mt:
        return
    names = raw["transfers"]["name"]
    every = [x for col in ("pack_s", "zero_copy_s", "staged_s") for x in mt[col] if x is not None]
    unit, scale = time_unit(min(every))
    table = Table(title="datatype methods (estimates alone on the path)", title_justify="left")
    times = (f"margin {unit}", f"pack {unit}", f"zero-copy {unit}", f"staged {unit}")
    for col in ("transfer", "blocks", "asked", "chosen", *times):
        table.add_column(col, justify="right" if col == "blocks" or col in times else "left")
    fmt = lambda x: "-" if x is None else f"{x * scale:.2f}"  # noqa: E731
    for k, i in enumerate(mt["transfer"]):
        table.add_row(names[i], f"{mt['blocks'][k]:,}", mt["asked"][k], mt["chosen"][k], fmt(mt["margin_s"][k]),
                      fmt(mt["pack_s"][k]), fmt(mt["zero_copy_s"][k]), fmt(mt["staged_s"][k]))
    out().print(table)


@app.command("calibrate-kernels")
@user_errors
def calibrate_kernels_cmd(
    machine: str = MachineArg,
    src: str = typer.Argument(..., help="GPU the load-store measurements sent from."),
    dst: str = typer.Argument(..., help="GPU they stored into."),
    measurements: str = typer.Argument(..., help="CSV: kernel (pack, unpack, load-store), block, bytes, time."),
    as_json: bool = typer.Option(False, "--json", help="Print the fit and every residual as JSON."),
) -> None:
    """Fit the datatype methods' kernel terms (launch + sync, pack/unpack throughput and per-block cost, load-store
    fraction of the path and per-block cost) to measurements, with the residual of every point."""
    f = calibrate_kernels(api.Machine.load(machine), src, dst, measurements)
    if as_json:
        sys.stdout.write(json.dumps(f, indent=2) + "\n")
        return
    table = Table(title=f"residuals (rms {f['rms_relative_error']:.1%})", title_justify="left")
    for col in ("kernel", "block", "bytes", "measured µs", "predicted µs", "error"):
        table.add_column(col, justify="left" if col == "kernel" else "right")
    for r in f["residuals"]:
        table.add_row(r["kernel"], human_bytes(int(r["block_bytes"])), human_bytes(int(r["bytes"])),
                      f"{r['measured_s'] * 1e6:.2f}", f"{r['predicted_s'] * 1e6:.2f}", f"{r['relative_error']:+.1%}")
    out().print(table)
    out().print(f"path {src}→{dst}: {f['path_class']}, {f['path_bps'] / 1e9:.2f} GB/s alone (maxmin)")
    out().print("fitted: " + ", ".join(f["fitted"]) + "; put them in a transfers file as")
    out().print("kernels: {" + ", ".join(f"{k}: {f['kernels'][k]}" for k in f["fitted"]) + "}")
    out().print("or pass " + " ".join(f"--kernel {k}={f['kernels'][k]}" for k in f["fitted"]))
