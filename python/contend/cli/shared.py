"""What every command shares: the typer app, the consoles, user errors as one line and exit code 2, the options
several commands take, output paths checked before any work, and the progress bar."""

from __future__ import annotations

import functools
import importlib
import os
import sys
from collections.abc import Callable, Iterator, MutableMapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import typer
from typer._click import exceptions as click_errors  # typer vendors click; its exceptions are the ones raised
from typer.core import Abort, TyperGroup
from typer.main import get_command_from_info

from contend import api, output
from contend.errors import ContendError, InputError
from contend.output import Target

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text


# (command, its module in contend.cli, its function), in the order `contend --help` lists them. A module is
# imported when its command is first looked up, not at start-up (shared.LazyCommands).
COMMANDS = (
    ("machines", "machines", "machines"),
    ("show", "machines", "show"),
    ("simulate", "predict", "simulate"),
    ("explain", "predict", "explain"),
    ("compare", "compare", "compare"),
    ("generate", "predict", "generate"),
    ("schedule", "schedule", "schedule"),
    ("p2p", "calibrate", "p2p"),
    ("nccl-tests", "nccl", "nccl_tests"),
    ("calibrate", "calibrate", "calibrate"),
    ("import", "machines", "import_"),
    ("models", "listings", "models"),
    ("run", "run", "run_"),
    ("import-trace", "run", "import_trace"),
    ("apps", "listings", "apps"),
    ("schema", "listings", "schema"),
    ("demo", "predict", "demo"),
    ("datatypes", "datatype", "datatypes"),
    ("datatype", "datatype", "datatype"),
    ("calibrate-kernels", "datatype", "calibrate_kernels_cmd"),
    ("stencil", "stencil", "stencil"),
    ("study", "study", "study"),
    ("report", "study", "report"),
)


class LazyCommands(MutableMapping[str, Any]):
    """The group's commands by name, in COMMANDS' order; each is built (its module imported, its options read
    from its signature by typer) when first looked up. `contend simulate …` then imports and builds one
    command, not all of them: a third of the CLI's fixed cost. Listing the names builds nothing; `--help`
    builds every command it describes."""

    def __init__(self, built: dict[str, Any]) -> None:
        self._where = {name: (module, function) for name, module, function in COMMANDS}
        self._built = dict(built)
        # Commands registered on the app the usual way (none today) are listed too, after COMMANDS.
        for name in built:
            self._where.setdefault(name, ("", ""))

    def __getitem__(self, name: str) -> Any:
        if name not in self._built:
            module, function = self._where[name]  # KeyError: no such command
            fn = getattr(importlib.import_module(f"contend.cli.{module}"), function)
            # The same CommandInfo as `app.command(name)(…)` gives, made into a click command as typer's
            # group building does.
            scratch = typer.Typer()
            scratch.command(name)(user_errors(fn))
            self._built[name] = get_command_from_info(
                scratch.registered_commands[0], pretty_exceptions_short=app.pretty_exceptions_short,
                rich_markup_mode=app.rich_markup_mode)
        return self._built[name]

    def __setitem__(self, name: str, command: Any) -> None:
        self._built[name] = command
        self._where.setdefault(name, ("", ""))

    def __delitem__(self, name: str) -> None:
        del self._where[name]
        self._built.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        return iter(self._where)

    def __len__(self) -> int:
        return len(self._where)

    def __contains__(self, name: object) -> bool:
        return name in self._where


class OneLineErrors(TyperGroup):
    """typer's group, but a mistake on the command line (an unknown option, a missing argument, a value out of
    its range) is one line on stderr and exit code 2, like every other user error. Its commands are COMMANDS,
    built when looked up (LazyCommands)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.commands = LazyCommands(dict(self.commands))

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None, complete_var: str | None = None,
             standalone_mode: bool = True, windows_expand_args: bool = True, **extra: Any) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, False, windows_expand_args, **extra)
        try:
            code = super().main(args, prog_name, complete_var, False, windows_expand_args, **extra)
        except InputError as e:  # an option's own check (Count), before the command runs
            err().print(styled(("error:", "bold red"), " ", one_line(str(e))), soft_wrap=True)
            sys.exit(2)
        except click_errors.NoArgsIsHelpError as e:
            e.show()
            sys.exit(e.exit_code)
        except click_errors.ClickException as e:
            ctx = getattr(e, "ctx", None)
            where = f"{ctx.command_path}: " if ctx is not None else ""
            hint = f"; see {ctx.command_path} --help" if ctx is not None else ""
            message = one_line(e.format_message()).rstrip(".")
            err().print(styled(("error:", "bold red"), f" {where}{message}{hint}"), soft_wrap=True)
            sys.exit(e.exit_code)
        except Abort:
            err().print("aborted")
            sys.exit(1)
        sys.exit(code if isinstance(code, int) else 0)


def _version(value: bool) -> None:
    if value:
        from contend import __version__

        sys.stdout.write(f"contend {__version__}\n")
        raise typer.Exit()


app = typer.Typer(
    cls=OneLineErrors,
    help="Predict, explain and optimise data movement on multi-GPU machines.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


@app.callback()
def _main(
    version: bool = typer.Option(
        False, "--version", "-V", callback=_version, is_eager=True, help="Print contend's version and exit."
    ),
) -> None:
    """Predict, explain and optimise data movement on multi-GPU machines."""


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


def user_errors(fn: Callable) -> Callable:
    """A user's mistake is one line on stderr and exit code 2, never a traceback; so is an output that cannot
    be written. A failure of the engine is one line and exit code 1."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        global _REPORT_ON_STDERR
        _REPORT_ON_STDERR = False
        try:
            return fn(*args, **kwargs)
        except InputError as e:
            err().print(styled(("error:", "bold red"), " ", one_line(str(e))), soft_wrap=True)
            raise typer.Exit(2) from None
        except ContendError as e:
            err().print(styled(("failed:", "bold red"), " ", one_line(str(e))), soft_wrap=True)
            raise typer.Exit(1) from None
        except BrokenPipeError:
            # `contend … | head`: the reader has gone; nothing left to say to it.
            sys.stderr.flush()
            raise typer.Exit(0) from None
        finally:
            _REPORT_ON_STDERR = False

    return wrapper


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
    the run reads, never an existing file unless ``force``; ``suffixes`` where the format follows the name."""
    return output.check(path, flag, inputs=inputs, force=force, suffixes=suffixes)


def picture_path(path: Path | str | None, inputs: list[str], flag: str, force: bool = False) -> Target | None:
    """A picture's target: its name ends in .png, .svg or .pdf (the format follows it)."""
    return output_path(path, inputs, flag, force, output.PICTURE)


def new_file(path: Path | str | None, inputs: list[str], force: bool = False, flag: str = "--output") -> Target | None:
    """A file of the user's work (machine, transfers, program): ``-`` writes it to standard output, and the
    command's report then goes to stderr."""
    target = output.check(path, flag, inputs=inputs, force=force, stdout=True)
    if target is not None and target.stdout:
        report_on_stderr()
    return target


def written(target: Target, what: str, hint: str = "") -> None:
    """The note that an output was written (nothing when it went to standard output)."""
    if not target.stdout:
        err().print(f"{what} written to {target}{hint}")


def Count(default: int | None, *names: str, lo: int, hi: int | None = None, help: str) -> Any:  # noqa: N802
    """An integer option checked where it enters: outside ``lo`` … ``hi`` it is one line naming the option and
    its range (never an overflow deep in the engine: its counts are unsigned 64-bit or narrower)."""
    flag = names[0]
    top = min(hi, 2**64 - 1) if hi is not None else 2**64 - 1

    def check(value: int | None) -> int | None:
        if value is not None and not lo <= value <= top:
            span = f"{lo} to {top}" if hi is not None else f"{lo} or more"
            raise InputError(f"--{flag.lstrip('-')}: is {value}; give {span}")
        return value

    return typer.Option(default, *names, callback=check, help=help)


# Default bounds on outputs that grow with the number of transfers squared; --max-rows raises them. At these
# bounds --phases needs about 0.3 GB, explain about 0.3 GB and a trace file about 50 MB (measured: about 115
# bytes a phase row, 1.2 kB an explain row, 100 bytes a trace event).
PHASE_ROWS = 2_000_000
EXPLAIN_ROWS = 250_000
TRACE_ROWS = 500_000
# generate and transfers files: the engine holds about 1 kB per transfer (a file of them is read whole).
GENERATE_TRANSFERS = 1_000_000
# The shortest line a transfer takes in a file ("  - {src: GPU0, dst: GPU1, size: 1MiB}"): a file's size over
# it bounds the transfers it holds.
TRANSFER_LINE_BYTES = 40

MaxRowsOpt = Count(
    None, "--max-rows", lo=1,
    help=f"Allow an output of up to N rows: --phases and --nics (default {PHASE_ROWS:,}), explain "
    f"({EXPLAIN_ROWS:,}), --trace ({TRACE_ROWS:,} events), generate ({GENERATE_TRANSFERS:,} transfers).",
)


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


ForceOpt = typer.Option(False, "--force", "-f", help="Overwrite output files that exist (never one the run reads).")
MachineArg = typer.Argument(..., help="A preset (see `contend machines`) or a machine file (YAML/JSON).")
TransfersArg = typer.Argument(..., help="A transfers file (YAML/JSON), or the built-in `sc16-example`.")
ModelOpt = typer.Option("sc16", "--model", "-m", help="Model to predict with (see `contend models`).")
ParamOpt = typer.Option(None, "--param", "-p", help="Model parameter key=value, e.g. tau=0.2 or bandwidth=11.6GiB/s.")
# Kernel cost terms (launch, pack throughput, …): one name wherever a command takes them.
KernelOpt = typer.Option(
    None, "--kernel", "-k", help="Kernel cost term key=value, e.g. launch=3us (see `contend datatypes`)."
)
TimelineOpt = typer.Option(
    None, "--timeline", help="Write a Gantt chart of the transfers (PNG, or .svg/.pdf by the name)."
)
TraceOpt = typer.Option(None, "--trace", help="Write a Chrome/Perfetto trace (JSON) for ui.perfetto.dev.")


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
        raise InputError(f"<stdin>: the {what} on standard input is not UTF-8 text (byte {e.start}); "
                         "give a YAML or JSON file") from None


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
        size = os.path.getsize(source)
        bound("TRANSFERS", size // TRANSFER_LINE_BYTES, GENERATE_TRANSFERS, max_rows,
              f"transfers ({size / 1e6:,.0f} MB at about {TRANSFER_LINE_BYTES} bytes each)",
              f"split {source}")
    return api.Transfers.load(source)


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
