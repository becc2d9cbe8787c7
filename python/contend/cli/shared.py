"""What every command shares: the typer app, the consoles, user errors as one line and exit code 2, the options
several commands take, output paths checked before any work, and the progress bar."""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

import typer
from rich.console import Console
from rich.markup import escape

from contend import api
from contend.errors import ContendError, InputError

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


def run_with_progress(work: Callable[[Any], Any], what: str = "searching") -> Any:
    """A progress bar on stderr while the engine works, when someone is watching."""
    if not err().is_terminal:
        return work(None)
    from rich.progress import BarColumn, Progress, TimeElapsedColumn, TimeRemainingColumn

    with Progress("[progress.description]{task.description}", BarColumn(), "{task.percentage:>3.0f}%",
                  TimeElapsedColumn(), TimeRemainingColumn(), console=err(), transient=True) as bar:
        task = bar.add_task(what, total=None)
        return work(lambda done, total: bar.update(task, completed=done, total=total))
