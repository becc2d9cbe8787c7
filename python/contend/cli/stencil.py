"""`contend stencil`: seed 004's 2D stencil, CPU-posted against stream-ordered communication."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from contend import _core
from contend.cli.shared import err, output_path, parse_params
from contend.cli.tables import print_iterations
from contend.errors import InputError

# Seed 004's weak-scaling sweep: local lattice 8 ... 8,192.
SWEEP = [2**k for k in range(3, 14)]


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
