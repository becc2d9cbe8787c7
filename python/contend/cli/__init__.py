"""The ``contend`` command line: thin over the Python API, which is thin over the Rust engine.

One module per command group; what they share (the app, consoles, errors, options, output paths, progress)
is in ``shared``, the tables they print in ``tables``. To add a command: write it as a plain function in
its group's module (or a new ``cli/<group>.py``) and add one line to ``shared.COMMANDS``, in the order
``contend --help`` lists them; every command is wrapped in ``user_errors`` (a user's mistake is one line and
exit code 2) when the group first looks it up (``shared.LazyCommands``).
"""

from __future__ import annotations

from contend.cli import shared
from contend.cli.shared import app

COMMANDS = shared.COMMANDS


def main() -> None:
    app()


__all__ = ["COMMANDS", "app", "main"]
