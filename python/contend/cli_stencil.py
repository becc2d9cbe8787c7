"""`contend stencil`: seed 004's 2D stencil, CPU-posted against stream-ordered communication."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer
from rich.table import Table

from contend import _core
from contend.cli import app, err, human_bytes, out, output_path, parse_params, user_errors
from contend.errors import InputError

# Seed 004's weak-scaling sweep: local lattice 8 ... 8,192.
SWEEP = [2**k for k in range(3, 14)]
# Seed 004's kernel profiles (K40m, boundary 16, ghost 1), percent of GPU time.
SEED_MIX = {
    1024: {"interior": 84.7, "boundary_y": 9.2, "pack_y": 1.7, "boundary_x": 1.3, "unpack_y": 1.3, "pack_x": 1.0,
           "unpack_x": 0.8},
    128: {"interior": 27.1, "boundary_y": 24.3, "boundary_x": 11.5, "pack_y": 11.1, "unpack_y": 10.9, "unpack_x": 7.8,
          "pack_x": 7.3},
}


@app.command()
@user_errors
def stencil(
    lattice: list[int] | None = typer.Option(
        None, "--lattice", "-l", help="Local lattice per GPU (repeat; default seed 004's sweep 8 … 8192)."
    ),
    param: list[str] | None = typer.Option(None, "--param", "-p", help="Model term key=value, e.g. launch=3us."),
    plot: Path | None = typer.Option(None, "--plot", help="Draw the gain against the lattice (PNG)."),
    as_json: bool = typer.Option(False, "--json", help="Print every iteration as JSON."),
) -> None:
    """One iteration of seed 004's 2D stencil per local lattice: CPU-posted MPI (launch, synchronise, post per
    neighbour) against stream-ordered communication (GPUDirect Async), and the gain."""
    target = output_path(plot, [], "--plot")
    bad = [n for n in lattice or [] if n < 2]
    if bad:
        raise InputError(f"--lattice: {bad[0]} is too small; a local lattice has at least 2 points per side")
    r = json.loads(_core.stencil(lattice or SWEEP, list(parse_params(param).items())))
    if as_json:
        sys.stdout.write(json.dumps(r, indent=2) + "\n")
    else:
        print_iterations(r)
    if target:
        from contend.plots import stencil_gain

        stencil_gain(r, target)
        err().print(f"gain curve written to {target}")


def print_iterations(r: dict) -> None:
    table = Table(title="2D stencil, one iteration per GPU (4 neighbours)", title_justify="left")
    for col in ("lattice", "halo message", "CPU-posted µs", "stream-ordered µs", "gain", "stream-ordered bound by"):
        table.add_column(col, justify="left" if col.startswith("stream-ordered bound") else "right")
    for it in r["iterations"]:
        table.add_row(f"{it['lattice']:,}²", human_bytes(it["message_bytes"][0]), f"{it['cpu_posted_s'] * 1e6:.2f}",
                      f"{it['stream_ordered_s'] * 1e6:.2f}", f"{it['gain']:.1%}",
                      "CPU enqueueing" if it["cpu_bound"] else "GPU")
    out().print(table)
    for it in r["iterations"]:
        seed = SEED_MIX.get(it["lattice"])
        if seed is None:
            continue
        total = sum(it["kernels"].values())
        mix = Table(title=f"kernel mix at {it['lattice']}² (share of GPU time)", title_justify="left")
        for col in ("kernel", "model", "seed 004 (K40m)"):
            mix.add_column(col, justify="left" if col == "kernel" else "right")
        for k, v in sorted(it["kernels"].items(), key=lambda kv: -kv[1]):
            mix.add_row(k, f"{v / total:.1%}", f"{seed[k]:.1f}%")
        out().print(mix)
    out().print("parameters: " + ", ".join(f"{k}={v}" for k, v in r["params"].items()))
