"""What every command shares with typer: the app and its commands, a command's failures as one line and an exit
code (``base.run_command``), and the options several commands take. What needs no typer (consoles, output
paths, bounds, inputs, progress) is in ``base``; the names used by the command modules are here too."""

from __future__ import annotations

import functools
import importlib
import re
import sys
from collections.abc import Callable, Iterator, MutableMapping, Sequence
from typing import Any

import typer
from typer._click import exceptions as click_errors  # typer vendors click; its exceptions are the ones raised
from typer.core import Abort, TyperGroup
from typer.main import get_command_from_info

from contend import api
from contend.cli.base import (
    EXPLAIN_ROWS,
    GENERATE_TRANSFERS,
    PHASE_ROWS,
    TIMELINE_BARS,
    TRACE_ROWS,
    TRANSFER_LINE_BYTES,
    bound,
    err,
    load_machine,
    load_transfers,
    new_file,
    new_table,
    one_line,
    out,
    output_path,
    parse_params,
    phase_rows,
    picture_path,
    prepare,
    read_stdin,
    report_on_stderr,
    run_command,
    run_with_progress,
    styled,
    write_pictures,
    written,
)
from contend.errors import InputError

# The names the command modules take from here, typer's and base's alike.
__all__ = [
    "COMMANDS", "EXPLAIN_ROWS", "GENERATE_TRANSFERS", "PHASE_ROWS", "TIMELINE_BARS", "TRACE_ROWS",
    "TRANSFER_LINE_BYTES", "Count", "ForceOpt", "KernelOpt", "MachineArg", "MaxRowsOpt", "ModelOpt", "ParamOpt",
    "TimelineOpt", "TraceOpt", "TransfersArg", "app", "bound", "err", "load_machine", "load_transfers", "new_file",
    "new_table", "one_line", "out", "output_path", "parse_params", "phase_rows", "picture_path", "prepare",
    "read_stdin", "report_on_stderr", "run_with_progress", "styled", "user_errors", "write_pictures", "written",
]


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
            message = one_line(e.format_message()).rstrip(".")
            hint = unit_hint(message) or (f"; see {ctx.command_path} --help" if ctx is not None else "")
            err().print(styled(("error:", "bold red"), f" {where}{message}{hint}"), soft_wrap=True)
            sys.exit(e.exit_code)
        except Abort:
            err().print("aborted")
            sys.exit(1)
        sys.exit(code if isinstance(code, int) else 0)


# A unit standing alone: what the shell leaves of `-b 4 MiB`, `--alpha 2 us` or `-p x=10 GB/s`.
_UNIT = re.compile(r"(?:[kmgtp]i?)?(?:b|bit)(?:/s)?|[munp]?s|[kmgt]?bps", re.IGNORECASE)


def unit_hint(message: str) -> str:
    """For click's "Got unexpected extra argument(s) (MiB)" where the extra words are units: the fix, since the shell
    split a value from its unit."""
    m = re.search(r"unexpected extra argument(?:\(s\)|s)? \((.*)\)", message)
    if m is None or not all(_UNIT.fullmatch(w) for w in m.group(1).split()):
        return ""
    unit = m.group(1).split()[0]
    return f"; the shell split a value from its unit: write them as one word, e.g. 4{unit}, not 4 {unit}"


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


def user_errors(fn: Callable) -> Callable:
    """The command ``fn`` as typer runs it: a failure is one line and its exit code (``base.run_command``)."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        value, code = run_command(lambda: fn(*args, **kwargs))
        if code is not None:
            raise typer.Exit(code)
        return value

    return wrapper


def Count(default: int | None, *names: str, lo: int, hi: int | None = None, help: str) -> Any:  # noqa: N802
    """An integer option checked where it enters: outside ``lo`` … ``hi`` it is one line naming the option and
    its range (never an overflow deep in the engine: its counts are unsigned 64-bit or narrower), by the first of
    ``names`` (``-f`` where nccl-tests users know it so)."""
    flag = names[0]
    top = min(hi, 2**64 - 1) if hi is not None else 2**64 - 1

    def check(value: int | None) -> int | None:
        if value is not None and not lo <= value <= top:
            span = f"{lo} to {top}" if hi is not None or value > top else f"{lo} or more"
            raise InputError(f"{flag}: is {value}; give {span}")
        return value

    return typer.Option(default, *names, callback=check, help=help)


MaxRowsOpt = Count(
    None, "--max-rows", lo=1,
    help=f"Allow an output of up to N rows: --phases and --nics (default {PHASE_ROWS:,}), explain "
    f"({EXPLAIN_ROWS:,}), --trace ({TRACE_ROWS:,} events), generate ({GENERATE_TRANSFERS:,} transfers).",
)


ForceOpt = typer.Option(False, "--force", "-f", help="Overwrite output files that exist (never one the run reads).")
MachineArg = typer.Argument(..., help="A preset (see `contend machines`) or a machine file (YAML/JSON).")
TransfersArg = typer.Argument(..., help="A transfers file (YAML/JSON/CSV), or the built-in `sc16-example`.")


# No default here: the engine's registry picks by machine (`contend models`' default_on) and says the rule.
MODEL_DEFAULT_RULE = api.model_default_rule()
ModelOpt = typer.Option(
    None, "--model", "-m", help=f"Model to predict with (see `contend models`); default: {MODEL_DEFAULT_RULE}."
)
ParamOpt = typer.Option(None, "--param", "-p", help="Model parameter key=value, e.g. tau=0.2 or bandwidth=11.6GiB/s.")
# Kernel cost terms (launch, pack throughput, …): one name wherever a command takes them.
KernelOpt = typer.Option(
    None, "--kernel", "-k", help="Kernel cost term key=value, e.g. launch=3us (see `contend datatypes`)."
)
TimelineOpt = typer.Option(
    None, "--timeline", help="Write a Gantt chart of the transfers (PNG, or .svg/.pdf by the name)."
)
TraceOpt = typer.Option(None, "--trace", help="Write a Chrome/Perfetto trace (JSON) for ui.perfetto.dev.")


