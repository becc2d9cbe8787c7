"""The ``contend`` command line: thin over the Python API, which is thin over the Rust engine.

One module per command group; what they share (the app, consoles, errors, options, output paths, progress)
is in ``shared``, the tables they print in ``tables``. To add a command: write it as a plain function in
its group's module (or a new ``cli/<group>.py``) and add one line to ``COMMANDS`` below; every command is
registered there, wrapped in ``user_errors`` (a user's mistake is one line and exit code 2), in the order
``contend --help`` lists them.
"""

from __future__ import annotations

from contend.cli import (
    calibrate,
    compare,
    datatype,
    listings,
    machines,
    nccl,
    predict,
    run,
    schedule,
    stencil,
    study,
)
from contend.cli.shared import app, user_errors

COMMANDS = (
    ("machines", machines.machines),
    ("show", machines.show),
    ("simulate", predict.simulate),
    ("explain", predict.explain),
    ("compare", compare.compare),
    ("generate", predict.generate),
    ("schedule", schedule.schedule),
    ("p2p", calibrate.p2p),
    ("nccl-tests", nccl.nccl_tests),
    ("calibrate", calibrate.calibrate),
    ("import", machines.import_),
    ("models", listings.models),
    ("run", run.run_),
    ("import-trace", run.import_trace),
    ("apps", listings.apps),
    ("schema", listings.schema),
    ("demo", predict.demo),
    ("datatypes", datatype.datatypes),
    ("datatype", datatype.datatype),
    ("calibrate-kernels", datatype.calibrate_kernels_cmd),
    ("stencil", stencil.stencil),
    ("study", study.study),
    ("report", study.report),
)

for _name, _fn in COMMANDS:
    app.command(_name)(user_errors(_fn))


def main() -> None:
    app()


__all__ = ["COMMANDS", "app", "main"]
