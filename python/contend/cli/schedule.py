"""`contend schedule`: the fastest order of a halo exchange."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from contend import results
from contend.cli.shared import (
    Count,
    ForceOpt,
    MachineArg,
    ModelOpt,
    ParamOpt,
    err,
    load_machine,
    new_file,
    parse_params,
    picture_path,
    run_with_progress,
    written,
)
from contend.cli.tables import print_schedule
from contend.errors import InputError
from contend.output import write_text


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
    model: str | None = ModelOpt,
    param: list[str] | None = ParamOpt,
    alpha: str = typer.Option("0s", "--alpha", help="Per-message overhead with unit, e.g. 5us."),
    seed: int = Count(0, "--seed", lo=0, hi=2**64 - 1, help="Seed of the annealing."),
    iterations: int = Count(
        20_000, "--iterations", lo=1, hi=10**9, help="Annealing moves per restart (1 to 10^9)."
    ),
    threads: int = Count(0, "--threads", lo=0, help="Worker threads: 0 (one per core) up to 4 per core."),
    as_json: bool = typer.Option(False, "--json", help="Print the result as JSON."),
    plot: Path | None = typer.Option(
        None, "--plot", help="Draw the sorted times of all orders and their histogram (PNG; exhaustive only)."
    ),
    output: Path | None = typer.Option(
        None,
        "--output",
        "-o",
        help="Write the best schedule as a transfers file for `contend simulate` (- for standard output).",
    ),
    force: bool = ForceOpt,
) -> None:
    """Find the fastest order of a halo exchange: best, median and worst orders, and the gain."""
    params = parse_params(param)
    target = picture_path(plot, [machine, halo], "--plot", force)
    if target and search != "exhaustive":
        raise InputError("--plot: the plot shows every order's time; use --search exhaustive, or drop --plot")
    best = new_file(output, [machine, halo], force)
    if best is not None and best.stdout and as_json:
        raise InputError("--output: - and --json would both write to standard output; write one of them to a file")
    m = load_machine(machine)
    s = run_with_progress(lambda progress: results.schedule(
        m, halo, semantics=semantics, search=search, model=model, alpha=alpha, seed=seed, iterations=iterations,
        threads=threads, keep_times=target is not None, progress=progress, **params))
    if s.raw["method"] == "bnb":
        # Branch and bound on several threads prunes by whichever thread improves the incumbent first: its
        # counts vary from run to run (the best order does not), so they are a note, not a result.
        nodes, evaluated = s.raw.pop("nodes_visited", 0), s.raw.pop("orders_evaluated", 0)
        err().print(f"note: branch and bound evaluated {evaluated:,} orders and visited {nodes:,} nodes this run "
                    "(these counts vary with thread timing; the best order does not)")
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
    if best is not None:
        write_text(best, s.best.to_yaml())
        written(best, "best schedule", f" (try: contend simulate {machine} {best})")
