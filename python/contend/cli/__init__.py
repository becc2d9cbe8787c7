"""The ``contend`` command line: thin over the Python API, which is thin over the Rust engine.

One module per command group; what they share (the app, consoles, errors, options, output paths, progress)
is in ``shared``, the tables they print in ``tables``. To add a command: write it as a plain function in
its group's module (or a new ``cli/<group>.py``) and add one line to ``COMMANDS`` below, in the order
``contend --help`` lists them; every command is wrapped in ``user_errors`` (a user's mistake is one line and
exit code 2) when the group first looks it up (``shared.LazyCommands``).
"""

from __future__ import annotations

from contend.cli import shared
from contend.cli.shared import app

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
shared.COMMANDS[:] = COMMANDS


def main() -> None:
    app()


__all__ = ["COMMANDS", "app", "main"]
