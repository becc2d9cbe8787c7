"""`contend run` and `contend import-trace`: scenarios of jobs on a cluster, and rank programs from traces."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from contend import api
from contend.cli.base import parse_params
from contend.cli.shared import (
    Count,
    ForceOpt,
    MaxRowsOpt,
    ParamOpt,
    err,
    new_file,
    output_path,
    picture_path,
    run_with_progress,
)
from contend.output import write_text
from contend.trace import RUN_EVENTS


def run_(
    scenario: Path = typer.Argument(..., help="A scenario file: cluster, jobs, model (`contend schema scenario`)."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
    as_csv: bool = typer.Option(False, "--csv", help="Print one CSV row per job."),
    links: int = Count(
        10, "--links", lo=0, hi=1000, help="Report the N busiest links (0 to 1000); --detail reports all."
    ),
    detail: bool = typer.Option(
        False, "--detail", help="Report every link, and with --json or --parquet every operation too."
    ),
    parquet: Path | None = typer.Option(
        None, "--parquet", help="Write jobs.parquet and links.parquet (with --detail operations.parquet) here."
    ),
    replace: bool = typer.Option(False, "--replace", hidden=True, help="The old name of --force."),
    plot: Path | None = typer.Option(None, "--plot", help="Draw each job's computation and communication time (PNG)."),
    trace: Path | None = typer.Option(
        None, "--trace", help="Perfetto trace: a track per rank, its computations and messages (JSON); past "
        "250,000 events (--max-rows), counters per job and the tracks of as many whole ranks as fit."
    ),
    force: bool = typer.Option(
        False, "--force", "-f", help="Overwrite output files (--plot, --trace, --parquet's tables) that exist."
    ),
    max_rows: int | None = MaxRowsOpt,
    check: bool = typer.Option(
        False, "--check", help="Check the scenario (its cluster, every job and file it names) and run nothing."
    ),
    model: str | None = typer.Option(
        None, "--model", "-m", help="Run under this model instead of the scenario's (see `contend models`)."
    ),
    param: list[str] | None = ParamOpt,
) -> None:
    """Run a scenario's jobs (rank programs, application skeletons) on its cluster: each job's run time,
    computation, communication and their overlap, and the busiest links. Rank programs' NCCL calls read this
    shell's NCCL_* variables as NCCL does (NCCL_ALGO, NCCL_PROTO, ...: docs/nccl.md); notes say which applied."""
    force = force or replace
    params = parse_params(param)
    if check:
        api.check(scenario, model=model, **params)
        err().print(f"{scenario}: checked; nothing run")
        return
    png = picture_path(plot, [str(scenario)], "--plot", force)
    tr = output_path(trace, [str(scenario)], "--trace", force)
    tables = None
    if parquet is not None:
        from contend.run_parquet import targets

        tables = targets(parquet, detail, force, [str(scenario)])
    r = run_with_progress(lambda progress: api.run(scenario, detail=detail or bool(tr),
                                                   links=None if detail else links, progress=progress,
                                                   model=model, **params),
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
        # Imported where a table is printed: `--json` and `--csv` print none.
        from contend.cli.tables import print_jobs, print_run_links

        print_jobs(r)
        print_run_links(r)
    if not as_json:
        # What NCCL_* variables of this shell did to the rank programs' NCCL calls (read by api.run's env=None;
        # the JSON holds the same notes): on stderr, leaving the tables and the CSV on stdout as they were.
        for note in r.notes:
            err().print(f"note: {note}", soft_wrap=True, highlight=False)
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

        # Bounded whatever the run's size (aggregated past the bound), so it is never refused after the work.
        write_run_trace(r.raw, tr, max_rows or RUN_EVENTS)
        err().print(f"trace written to {tr} (open it in ui.perfetto.dev)")


def import_trace(
    trace: Path = typer.Argument(
        ..., help="The .otf2 anchor file of a Score-P trace of an MPI program, or the folder holding it."
    ),
    output: Path = typer.Option(
        ..., "-o", "--output", help="Rank program to write (YAML; `contend schema program`; - for standard output)."
    ),
    iterations: int = Count(
        1, "--iterations", lo=1, hi=100_000, help="Replay the traced loop this many times (1 to 100,000)."
    ),
    in_place: bool = typer.Option(
        False, "--in-place", help="Read a collective whose traced bytes fit both forms as called with MPI_IN_PLACE."
    ),
    force: bool = ForceOpt,
) -> None:
    """Turn an OTF2 trace into a rank program: MPI calls become operations, the gaps between them compute."""
    from contend import otf2_records

    target = new_file(output, [str(trace)], force)
    assert target is not None
    records, ranks, either = otf2_records.read(str(trace), in_place)
    text = api.program_from_trace(records, ranks, iterations, str(trace))
    write_text(target, text)
    err().print(f"{ranks} ranks, {len(records)} MPI events → {target} (use it as a job's `program` in a scenario)")
    if either:
        # Score-P writes the bytes an in-place allreduce, allgather or alltoall moves, (N - 1) x B, and no flag:
        # where N also divides them, the trace fits both forms (docs/workloads.md, "Traces").
        read_as, other = ("in place", "without --in-place") if in_place else ("not in place", "--in-place")
        err().print(f"note: {either} collective record(s) fit a call in place as well as one not in place; read as "
                    f"{read_as} (the trace does not say); give {other} if the program calls them the other way")
