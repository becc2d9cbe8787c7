"""`contend simulate` without typer, where its command line is plain: two arguments and only the options below,
each written whole (``--model maxmin``, not ``--model=maxmin`` or ``-mmaxmin``). Importing typer and having it
build the command is about half of `simulate --json`'s start-up; the engine's work does not need it.

Anything else (help, another command, any other option or form, a value that looks like an option, a repeated
single option, too few or too many arguments, shell completion) goes to typer as before, which then gives its
own help or its one-line error. What the plain line means is what typer makes of it: the same keyword arguments
to ``simulation.simulate`` (a test checks this against typer on many command lines)."""

from __future__ import annotations

import os
import sys

# simulate's options read here: flags, options with one value, and options that may repeat (a list).
FLAGS = {"--json": "as_json", "--csv": "as_csv", "--phases": "phases", "--nics": "nics", "--force": "force",
         "-f": "force"}
VALUES = {"--model": "model", "-m": "model"}
LISTS = {"--param": "param", "-p": "param"}


def parse(argv: list[str]) -> dict[str, object] | None:
    """``simulation.simulate``'s keyword arguments for the command line ``argv`` (without the program's name),
    or None where it is not a plain `contend simulate` line."""
    if not argv or argv[0] != "simulate" or _completing():
        return None
    kwargs: dict[str, object] = {}
    arguments = []
    rest = iter(argv[1:])
    for token in rest:
        if token == "-" or not token.startswith("-"):
            arguments.append(token)
        elif token in FLAGS:
            kwargs[FLAGS[token]] = True
        elif token in VALUES or token in LISTS:
            value = next(rest, None)
            if value is None or value.startswith("-"):
                return None
            if token in LISTS:
                kwargs.setdefault(LISTS[token], []).append(value)
            elif VALUES[token] in kwargs:
                return None
            else:
                kwargs[VALUES[token]] = value
        else:
            return None
    if len(arguments) != 2:
        return None
    return {"machine": arguments[0], "transfers": arguments[1], **kwargs}


def _completing() -> bool:
    """Whether the shell asks for completions (typer's ``_<PROG>_COMPLETE``, whatever the program is called)."""
    return any(k.startswith("_") and k.endswith("_COMPLETE") and v for k, v in os.environ.items())


def run(argv: list[str]) -> bool:
    """Run ``argv`` if it is a plain `contend simulate` line and exit as typer would; False if it is not."""
    kwargs = parse(argv)
    if kwargs is None:
        return False
    from contend.cli import base, simulation

    try:
        _, code = base.run_command(lambda: simulation.simulate(**kwargs))
    except KeyboardInterrupt:
        sys.exit(130)  # as typer's group ends an interrupted command
    except EOFError:
        # As typer's group (typer.core._main, then shared.OneLineErrors): a new line, then "aborted".
        sys.stderr.write("\n")
        base.err().print("aborted")
        sys.exit(1)
    sys.exit(code or 0)
