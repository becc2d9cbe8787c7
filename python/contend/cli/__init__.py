"""The ``contend`` command line: thin over the Python API, which is thin over the Rust engine.

One module per command group; what they share with typer (the app, options, errors) is in ``shared``, what
needs no typer (consoles, output paths, inputs) in ``base``, the tables they print in ``tables``. To add a
command: write it as a plain function in its group's module (or a new ``cli/<group>.py``) and add one line to
``shared.COMMANDS``, in the order ``contend --help`` lists them; every command is wrapped in ``user_errors`` (a
user's mistake is one line and exit code 2) when the group first looks it up (``shared.LazyCommands``).

``main`` (the ``contend`` command) runs a plain `contend simulate` line without typer (``direct``); ``app`` (typer's
app) and ``COMMANDS`` are imported when first asked for, so that that path never imports typer.
"""

from __future__ import annotations

import sys


def main() -> None:
    from contend.cli import direct

    if not direct.run(sys.argv[1:]):
        from contend.cli.shared import app

        app()


def __getattr__(name: str) -> object:
    if name in ("app", "COMMANDS"):
        from contend.cli import shared

        return getattr(shared, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["COMMANDS", "app", "main"]
