"""`contend datatype`, `datatypes` and `calibrate-kernels`: non-contiguous messages, method by method."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from contend.cli.shared import (
    Count,
    ForceOpt,
    KernelOpt,
    MachineArg,
    ParamOpt,
    err,
    load_machine,
    new_table,
    out,
    parse_params,
    picture_path,
)
from contend.cli.tables import human_bytes, print_comparison, print_sweep
from contend.datatype import calibrate_kernels, datatype_presets, datatype_sweep, kernel_params
from contend.datatype import datatype as predict
from contend.errors import InputError


def datatypes() -> None:
    """List the datatype presets and the kernel cost terms of the methods."""
    table = new_table(title="datatype presets")
    for col in ("name", "bytes", "blocks", "description"):
        table.add_column(col, justify="right" if col in ("bytes", "blocks") else "left")
    for d in datatype_presets():
        table.add_row(d["name"], f"{d['bytes']:,}", f"{d['blocks']:,}", d["description"])
    out().print(table)
    for p in kernel_params():
        out().print(f"  --kernel {p['name']}=…  {p['help']} ({p['kind']}; default {p['default']})")


def datatype(
    machine: str = MachineArg,
    src: str = typer.Argument(..., help="Sending GPU, e.g. GPU0."),
    dst: str = typer.Argument(..., help="Receiving GPU."),
    type_: str = typer.Argument(
        ..., metavar="TYPE", help="A datatype preset (see `contend datatypes`) or a datatype file."
    ),
    count: int = Count(
        1, "--count", "-n", lo=1, hi=2**32 - 1, help="Instances of the type in the message (MPI's count)."
    ),
    model: str = typer.Option("maxmin", "--model", "-m", help="Model that times the copy (maxmin caps zero-copy)."),
    param: list[str] | None = ParamOpt,
    kernel: list[str] | None = KernelOpt,
    sweep: int = Count(0, "--sweep", lo=0, hi=40, help="Also time N message sizes, 1, 2, 4, … instances."),
    plot: Path | None = typer.Option(None, "--plot", help="Draw the sweep's crossover chart (PNG; default 16 sizes)."),
    as_json: bool = typer.Option(False, "--json", help="Print the comparison (and sweep) as JSON."),
    force: bool = ForceOpt,
) -> None:
    """Predict each method's time for a message of a datatype — pack-copy-unpack, zero-copy load-store,
    host-staged — with its parts, and which wins."""
    params, kernels = parse_params(param), parse_params(kernel, "--kernel")
    target = picture_path(plot, [machine, type_], "--plot", force)
    m = load_machine(machine)
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


def calibrate_kernels_cmd(
    machine: str = MachineArg,
    src: str = typer.Argument(..., help="GPU the load-store measurements sent from."),
    dst: str = typer.Argument(..., help="GPU they stored into."),
    measurements: str = typer.Argument(..., help="CSV: kernel (pack, unpack, load-store), block, bytes, time."),
    as_json: bool = typer.Option(False, "--json", help="Print the fit and every residual as JSON."),
) -> None:
    """Fit the datatype methods' kernel terms (launch + sync, pack/unpack throughput and per-block cost, load-store
    fraction of the path and per-block cost) to measurements, with the residual of every point."""
    if src == dst:
        raise InputError(f"DST: {dst} is also SRC; the load-store measurements were taken between two GPUs, "
                         "give both (e.g. GPU0 GPU1)")
    f = calibrate_kernels(load_machine(machine), src, dst, measurements)
    if as_json:
        sys.stdout.write(json.dumps(f, indent=2) + "\n")
        return
    table = new_table(title=f"residuals (rms {f['rms_relative_error']:.1%})", title_justify="left")
    for col in ("kernel", "block", "bytes", "measured µs", "predicted µs", "error"):
        table.add_column(col, justify="left" if col == "kernel" else "right")
    for r in f["residuals"]:
        table.add_row(r["kernel"], human_bytes(int(r["block_bytes"])), human_bytes(int(r["bytes"])),
                      f"{r['measured_s'] * 1e6:.2f}", f"{r['predicted_s'] * 1e6:.2f}", f"{r['relative_error']:+.1%}")
    out().print(table)
    if f.get("path_bps") is not None:
        out().print(f"path {src}→{dst}: {f['path_class']}, {f['path_bps'] / 1e9:.2f} GB/s alone (maxmin)")
    out().print("fitted: " + ", ".join(f["fitted"]) + "; put them in a transfers file as")
    out().print("kernels: {" + ", ".join(f"{k}: {f['kernels'][k]}" for k in f["fitted"]) + "}")
    out().print("or pass " + " ".join(f"--kernel {k}={f['kernels'][k]}" for k in f["fitted"]))
