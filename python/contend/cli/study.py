"""`contend study` and `contend report`: sweeps on Dask into a Parquet dataset, and seed 003's figures from it.

contend.cli registers these on its app; Dask, pyarrow and matplotlib are imported only when they run.
"""

from __future__ import annotations

from pathlib import Path

import typer


def study(
    study_file: Path = typer.Argument(..., help="A study file (YAML): base scenario, axes, repetitions, baseline."),
    output: Path | None = typer.Option(
        None, "--output", "-o", help="Results folder (Parquet, a file per point); default: ./STUDY-results."),
    workers: int | None = typer.Option(None, "--workers", "-w", help="LocalCluster worker processes (default: cores)."),
    scheduler: str | None = typer.Option(
        None, "--scheduler", help="Address of a running Dask scheduler, e.g. tcp://10.0.0.1:8786 (dask-jobqueue)."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Check the study file and count its points; run nothing."),
) -> None:
    """Run every point of a study on Dask, each written to the results folder as soon as it finishes.

    A rerun skips finished points, so an interrupted study resumes where it stopped.
    """
    from contend import study as studies
    from contend.cli.shared import err, out
    from contend.study.execute import check_workers

    check_workers(workers, scheduler)
    s = studies.load(study_file)
    folder = output or Path(f"{study_file.stem}-results")
    if dry_run:
        from contend.study.dataset import finished

        done = len(finished(folder, s.meta()) & {p.hash for p in s.points})  # refuses another study's folder
        out().print(f"{study_file}: {len(s.points)} points over {', '.join(s.axes)}"
                    f"{f' × {s.repetitions} repetitions' if s.repetitions > 1 else ''}; results would go to {folder}"
                    f"{f' ({done} already done there)' if done else ''}")
        return
    try:
        outcome = run_with_bar(s, folder, workers, scheduler)
    except KeyboardInterrupt:
        # Each finished point is already a whole file there; the rest are run by the same command again.
        err().print(f"interrupted: the points finished are kept in {folder}; run the same command again to resume")
        raise typer.Exit(130) from None
    err().print(f"{outcome.ran} points run, {outcome.skipped} already done; results in {folder} "
                f"(try: contend report {folder})")


def run_with_bar(s, folder: Path, workers: int | None, scheduler: str | None):
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    from contend import study as studies
    from contend.cli.shared import err

    with Progress(TextColumn("{task.description}", markup=False), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(), "eta", TimeRemainingColumn(), console=err(),
                  disable=not err().is_terminal) as bar:
        task = bar.add_task(s.name, total=None)

        def start(total: int, skipped: int) -> None:
            # Points finished before count as done but not towards the speed, so the ETA is this run's.
            bar.update(task, total=total - skipped)

        return studies.run(s, folder, workers=workers, scheduler=scheduler, on_start=start,
                           on_point=lambda: bar.advance(task))


def report(
    results: Path = typer.Argument(..., help="A study's results folder (written by `contend study`)."),
    output: Path | None = typer.Option(None, "--output", "-o", help="Folder for the tables and charts; "
                                       "default: RESULTS/_report."),
    force: bool = typer.Option(False, "--force", "-f", help="Write over the files of an earlier report there."),
) -> None:
    """Speed-ups against the study's baseline per application and job size, as seed 003 shows them:
    charts per axis, NIC policies per application, and the minimum bandwidth reaching 90% (its Table II)."""
    from contend.cli.shared import err
    from contend.errors import InputError
    from contend.output import check
    from contend.study.report_files import write_report

    if not results.is_dir():
        raise InputError(f"{results}: no such folder of study results; give the folder `contend study` wrote")
    # Named as the user gave it: the option, or the default folder it stands for. The default's leading `_` keeps
    # it out of the dataset: Parquet readers (pyarrow, `pd.read_parquet(RESULTS)`) skip names starting with `_`.
    folder = check(output or results / "_report", "--output" if output else "the report folder (default of --output)",
                   folder=True, force=force, inputs=[results])
    assert folder is not None
    written = write_report(results, folder)
    for path in written:
        err().print(f"written {path}")
