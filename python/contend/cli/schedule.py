"""`contend schedule`: the fastest order of a halo exchange."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from contend import api
from contend.cli.shared import (
    MachineArg,
    ModelOpt,
    ParamOpt,
    err,
    new_file,
    output_path,
    parse_params,
    run_with_progress,
)
from contend.cli.tables import print_schedule
from contend.errors import InputError


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
