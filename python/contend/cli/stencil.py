"""`contend stencil`: seed 004's 2D stencil, CPU-posted against stream-ordered communication."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from contend.cli.shared import ForceOpt, err, parse_params, picture_path
from contend.cli.tables import print_iterations
from contend.errors import InputError
from contend.stencil import stencil as stencil_model

# Seed 004's weak-scaling sweep: local lattice 8 ... 8,192.
SWEEP = [2**k for k in range(3, 14)]
# A side of 2^20 points is 2^40 points a GPU: beyond any memory, and far from overflowing the byte counts.
MAX_LATTICE = 2**20


def stencil(
    lattice: list[int] | None = typer.Option(
        None, "--lattice", "-l", help="Local lattice per GPU (repeat; default seed 004's sweep 8 … 8192)."
    ),
    kernel: list[str] | None = typer.Option(
        None, "--kernel", "-k", help="Kernel cost term key=value, e.g. launch=3us (see `contend datatypes`)."
    ),
    param: list[str] | None = typer.Option(None, "--param", "-p", hidden=True, help="The old name of --kernel."),
    plot: Path | None = typer.Option(None, "--plot", help="Draw the gain against the lattice (PNG)."),
    as_json: bool = typer.Option(False, "--json", help="Print every iteration as JSON."),
    force: bool = ForceOpt,
) -> None:
    """One iteration of seed 004's 2D stencil per local lattice: CPU-posted MPI (launch, synchronise, post per
    neighbour) against stream-ordered communication (GPUDirect Async), and the gain."""
    target = picture_path(plot, [], "--plot", force)
    bad = [n for n in lattice or [] if not 2 <= n <= MAX_LATTICE]
    if bad:
        raise InputError(f"--lattice: {bad[0]} is out of range; a local lattice has 2 to {MAX_LATTICE:,} points "
                         "per side")
    terms = {**parse_params(param, "--kernel"), **parse_params(kernel, "--kernel")}
    r = stencil_model(lattice or SWEEP, **terms)
    if as_json:
        sys.stdout.write(json.dumps(r, indent=2) + "\n")
    else:
        print_iterations(r)
    if target:
        from contend.plots import stencil_gain

        stencil_gain(r, target)
        err().print(f"gain curve written to {target}")
