"""`contend models`, `apps` and `schema`: what the engine knows, listed from its own tables."""

from __future__ import annotations

import sys

import typer

from contend import api
from contend.cli.shared import out, styled


def models() -> None:
    """List the models: what each assumes, where it comes from, and its parameters."""
    for m in api.models():
        out().print(styled((m["name"], "bold"), f" ({m['kind']} model): {m['summary']}"))
        out().print(f"  applies to: {m['applies_to']}")
        if m["default_on"]:
            out().print(f"  default on: {m['default_on']} (where no --model is given)")
        for a in m["assumptions"]:
            out().print(f"  assumes: {a}")
        out().print(f"  source: {m['citation']}")
        for p in m["params"]:
            out().print(f"  --param {p['name']}=…  {p['help']} ({p['kind']}; default {p['default']})")


def apps() -> None:
    """List the application skeletons a scenario's jobs can run, with their parameters and defaults."""
    for a in api.apps():
        out().print(styled((a["name"], "bold"), f": {a['summary']}"))
        for p in a["params"]:
            out().print(f"  {p['name']}: {p['help']} ({p['kind']}; default {p['default']})")


def schema(
    which: str = typer.Argument(
        "machine", help="machine, cluster, transfers, halo, report, scenario, program or datatype"
    ),
) -> None:
    """Print the JSON Schema of machine, cluster, transfers, halo, scenario, program or datatype files, or of a
    report."""
    sys.stdout.write(api.schema(which) + "\n")
