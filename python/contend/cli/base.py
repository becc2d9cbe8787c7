"""What every command shares that needs no typer: the consoles, a command's failures as one line and an exit
code, output paths checked before any work, bounds on outputs, reading the inputs, and the progress bar.
``shared`` declares the commands' options for typer on top of this; ``direct`` runs `contend simulate`
without typer where its command line is plain."""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable

from contend import api
from contend.errors import ContendError, InputError

# typing's TYPE_CHECKING, without importing typing at run time (a twentieth of `simulate --json`'s start-up).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any, TextIO

    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from contend.output import Target

def out() -> Console:
    """The console of reports and tables: ``sys.stdout``, or ``sys.stderr`` while an output file goes to
    standard output (``-o -``)."""
    return _console(sys.stderr if _REPORT_ON_STDERR else sys.stdout, 160)


def err() -> Console:
    """The console on the current ``sys.stderr`` (errors, notes on files written, progress)."""
    return _console(sys.stderr, 200)


# Set while a command writes an output file to standard output: its report goes to stderr instead.
_REPORT_ON_STDERR = False


@functools.lru_cache(maxsize=4)
def _console(stream: TextIO, piped_width: int) -> Console:
    # Bound to the stream at call time, not import time, so that a caller who swaps sys.stdout/sys.stderr
    # (tests run the CLI in-process) gets the output. Piped output keeps whole lines: tables and notes are
    # read by people and by grep alike. No markup and no emoji codes: names, paths and notes are the user's
    # text and print as written ("[/]" or ":ab:" in a name is not a style or an emoji); styles are Text.
    # rich is imported here and in the two helpers below, not at start-up: it is about a sixth of the CLI's fixed
    # cost, and `simulate --json` or `run --json` print no table.
    from rich.console import Console

    return Console(file=stream, highlight=False, markup=False, emoji=False,
                   width=None if stream.isatty() else piped_width)


def _maybe_terminal(stream: TextIO) -> bool:
    """False where rich's ``Console.is_terminal`` is sure to be False (no tty, and neither TTY_COMPATIBLE=1
    nor FORCE_COLOR says otherwise): a piped ``run --json`` then never imports rich, a tenth of its start-up."""
    if os.environ.get("TTY_COMPATIBLE") == "1" or os.environ.get("FORCE_COLOR") is not None:
        return True
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def styled(*parts: str | tuple[str, str]) -> Text:
    """A line with styled parts, e.g. ``styled(("error:", "bold red"), " ", message)``; text is never markup."""
    from rich.text import Text

    return Text.assemble(*parts)


def new_table(*columns: str, **options: Any) -> Table:
    """A rich table (columns and options as ``rich.table.Table`` takes them)."""
    from rich.table import Table

    return Table(*columns, **options)


def run_command(body: Callable[[], Any]) -> tuple[Any, int | None]:
    """Run a command's body: its value and None, or where it failed, None and the exit code. A user's mistake is
    one line on stderr and exit code 2, never a traceback; so is an output that cannot be written. A failure of
    the engine is one line and exit code 1."""
    global _REPORT_ON_STDERR
    _REPORT_ON_STDERR = False
    try:
        return body(), None
    except InputError as e:
        err().print(styled(("error:", "bold red"), " ", one_line(str(e))), soft_wrap=True)
        return None, 2
    except ContendError as e:
        err().print(styled(("failed:", "bold red"), " ", one_line(str(e))), soft_wrap=True)
        return None, 1
    except OverflowError as e:
        # A number the engine's argument cannot hold (PyO3 notes which: "while processing 'factor'"); any other
        # overflow is not the user's and keeps its traceback.
        field = next((n[len("while processing "):].strip("'") for n in getattr(e, "__notes__", [])
                      if n.startswith("while processing ")), None)
        if field is None:
            raise
        err().print(styled(("error:", "bold red"), " ", f"{field}: {e}; give a smaller, non-negative whole number"),
                    soft_wrap=True)
        return None, 2
    except BrokenPipeError:
        # `contend … | head`: the reader has gone; nothing left to say to it.
        sys.stderr.flush()
        return None, 0
    finally:
        _REPORT_ON_STDERR = False


def one_line(message: str) -> str:
    """An error is one line, whatever text of the user's it quotes."""
    return " ".join(message.split()) if "\n" in message or "\r" in message else message


def report_on_stderr() -> None:
    """This command's output file goes to standard output: print its report on stderr."""
    global _REPORT_ON_STDERR
    _REPORT_ON_STDERR = True


def parse_params(pairs: list[str] | None, flag: str = "--param") -> dict[str, str]:
    params: dict[str, str] = {}
    example = "launch=3us" if flag == "--kernel" else "tau=0.2"
    for p in pairs or []:
        key, sep, value = p.partition("=")
        if not sep or not key.strip() or not value.strip():
            raise InputError(f'{flag}: "{p}" is not key=value; write e.g. {flag} {example}')
        params[key.strip()] = value.strip()
    return params


def output_path(
    path: Path | str | None, inputs: list[str], flag: str, force: bool = False, suffixes: tuple[str, ...] | None = None,
) -> Target | None:
    """An output option's target, checked before any work (``contend.output.check``): never an input or a file
    the run reads, never an existing file unless ``force``; ``suffixes`` where the format follows the name.
    An option not given is None, as ``check`` gives it, without importing ``contend.output`` (its dataclass and
    pathlib are a tenth of `simulate --json`'s start-up)."""
    if path is None:
        return None
    from contend import output

    return output.check(path, flag, inputs=inputs, force=force, suffixes=suffixes)


def picture_path(path: Path | str | None, inputs: list[str], flag: str, force: bool = False) -> Target | None:
    """A picture's target: its name ends in .png, .svg or .pdf (the format follows it)."""
    if path is None:
        return None
    from contend import output

    return output_path(path, inputs, flag, force, output.PICTURE)


def new_file(path: Path | str | None, inputs: list[str], force: bool = False, flag: str = "--output") -> Target | None:
    """A file of the user's work (machine, transfers, program): ``-`` writes it to standard output, and the
    command's report then goes to stderr."""
    from contend import output

    target = output.check(path, flag, inputs=inputs, force=force, stdout=True)
    if target is not None and target.stdout:
        report_on_stderr()
    return target


def written(target: Target, what: str, hint: str = "") -> None:
    """The note that an output was written (nothing when it went to standard output)."""
    if not target.stdout:
        err().print(f"{what} written to {target}{hint}")


# Default bounds on outputs that grow with the number of transfers squared; --max-rows raises them. At these
# bounds --phases needs about 0.3 GB, explain about 0.3 GB and a trace file about 50 MB (measured: about 115
# bytes a phase row, 1.2 kB an explain row, 100 bytes a trace event).
PHASE_ROWS = 2_000_000
EXPLAIN_ROWS = 250_000
TRACE_ROWS = 500_000
# generate and transfers files: the engine holds about 1 kB per transfer (a file of them is read whole).
GENERATE_TRANSFERS = 1_000_000
# The shortest line a transfer takes in a file ("  - {src: GPU0, dst: GPU1, size: 1MiB}", or a CSV's "a,b,1B"
# row): a file's size over it bounds the transfers it holds; a file past the bound by that measure, by at most
# COUNTED times, has its transfers counted.
TRANSFER_LINE_BYTES = 40
CSV_ROW_BYTES = 7
COUNTED = 10

def phase_rows(transfers: int) -> int:
    """Rows of a per-phase table, bounded above: at most 2n phases (every start and finish), each with at
    most n transfers moving."""
    return 2 * transfers * transfers


def bound(flag: str, rows: int, default: int, max_rows: int | None, what: str, instead: str) -> None:
    """Refuse, before any work, an output estimated to grow past its bound."""
    limit = max_rows or default
    if rows > limit:
        raise InputError(f"{flag}: up to {rows:,} {what} exceed the limit of {limit:,}; {instead}, "
                         f"or raise the limit with --max-rows {rows}")


def write_pictures(raw: dict[str, Any], timeline: Target | None, trace: Target | None) -> None:
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


def read_stdin(what: str) -> str:
    """Standard input, as the text of a ``what`` file (``-`` in place of its path)."""
    try:
        return sys.stdin.buffer.read().decode("utf-8")
    except UnicodeDecodeError as e:
        kinds = "YAML, JSON or CSV" if what == "transfers" else "YAML or JSON"
        raise InputError(f"<stdin>: the {what} on standard input is not UTF-8 text (byte {e.start}); "
                         f"give a {kinds} file") from None


def load_machine(source: str) -> api.Machine:
    """A preset, a machine file, or ``-``: a machine file on standard input."""
    if source == "-":
        return api.Machine.parse(read_stdin("machine"), "<stdin>")
    return api.Machine.load(source)


def load_transfers(source: str, max_rows: int | None = None) -> api.Transfers:
    """A transfers file, a built-in set, or ``-``: a transfers file on standard input. A file estimated (by its
    size) to hold more transfers than the bound is refused before it is parsed: the engine holds every one."""
    if source == "-":
        return api.Transfers.parse(read_stdin("transfers"), "<stdin>")
    if os.path.isfile(source):
        size, csv = os.path.getsize(source), source.lower().endswith(".csv")
        line = CSV_ROW_BYTES if csv else TRANSFER_LINE_BYTES
        limit, most = max_rows or GENERATE_TRANSFERS, size // line
        how = f"at about {line} bytes each"
        if limit < most <= COUNTED * limit:
            # Past the bound by size alone, though not by much (generate writes its largest files at about 56
            # bytes a transfer): count them, each transfer naming one src (a CSV's a line), before the engine
            # reads the file whole.
            most, how = (csv_rows(source), "counted by lines") if csv else (
                occurrences(source, b"src"), "counted by their src fields")
        bound("TRANSFERS", most, GENERATE_TRANSFERS, max_rows, f"transfers ({size / 1e6:,.0f} MB, {how})",
              f"split {source}")
    return api.Transfers.load(source)


def csv_rows(path: str) -> int:
    """A CSV's lines less its header (a last line without its newline counts): at least its transfers."""
    with open(path, "rb") as f:
        f.seek(-1, os.SEEK_END)
        last = f.read(1)
    return occurrences(path, b"\n") - (last == b"\n")


def occurrences(path: str, needle: bytes, chunk: int = 1 << 24) -> int:
    """How often ``needle`` occurs in a file (``src``, or a CSV's newline), read in chunks (memory stays bounded
    whatever its size): at least the number of transfers it holds."""
    count, tail, keep = 0, b"", len(needle) - 1
    with open(path, "rb") as f:
        while block := f.read(chunk):
            data = tail + block
            count += data.count(needle)
            # A needle cut between two chunks is counted in the next; its length less one byte cannot hold one.
            tail = data[len(data) - keep:] if keep else b""
    return count


def prepare(machine: str, transfers: str, param: list[str] | None, timeline: Path | None, trace: Path | None,
            force: bool = False, max_rows: int | None = None):
    """Check every argument before any work, so a bad output path costs nothing."""
    params = parse_params(param)
    if machine == "-" and transfers == "-":
        raise InputError("-: standard input can hold the machine or the transfers, not both; give one as a file")
    tl = picture_path(timeline, [machine, transfers], "--timeline", force)
    tr = output_path(trace, [machine, transfers], "--trace", force)
    t = load_transfers(transfers, max_rows)
    if tl and len(t) > TIMELINE_BARS:
        raise InputError(f"--timeline: {len(t):,} transfers are too many to draw a bar each (at most {TIMELINE_BARS}); "
                         "use --trace, which Perfetto shows up to --max-rows events")
    return load_machine(machine), t, params, tl, tr


def run_with_progress(work: Callable[[Any], Any], what: str = "searching") -> Any:
    """A progress bar on stderr while the engine works, when someone is watching."""
    if not _maybe_terminal(sys.stderr) or not err().is_terminal:
        return work(None)
    from rich.progress import BarColumn, Progress, TimeElapsedColumn, TimeRemainingColumn

    with Progress("[progress.description]{task.description}", BarColumn(), "{task.percentage:>3.0f}%",
                  TimeElapsedColumn(), TimeRemainingColumn(), console=err(), transient=True) as bar:
        task = bar.add_task(what, total=None)
        return work(lambda done, total: bar.update(task, completed=done, total=total))
