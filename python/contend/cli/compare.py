"""`contend compare`: the fidelity ladder on a user's own traffic — the same transfers under
maxmin, packet (and sc16 where it applies), each compared message by message with the most
detailed model that ran."""

from __future__ import annotations

import sys

import typer

from contend import results
from contend.cli.shared import MachineArg, TransfersArg, load_machine, load_transfers
from contend.cli.tables import print_model_comparison
from contend.errors import InputError


def parse_model_params(pairs: list[str] | None) -> dict[str, dict[str, str]]:
    """``MODEL.NAME=VALUE`` pairs, by model."""
    params: dict[str, dict[str, str]] = {}
    for p in pairs or []:
        key, sep, value = p.partition("=")
        model, dot, name = key.strip().partition(".")
        if not sep or not dot or not model or not name.strip() or not value.strip():
            raise InputError(f'--param: "{p}" is not MODEL.NAME=VALUE; write e.g. --param packet.buffer=16')
        params.setdefault(model, {})[name.strip()] = value.strip()
    return params


def compare(
    machine: str = MachineArg,
    transfers: str = TransfersArg,
    model: list[str] | None = typer.Option(
        None, "--model", "-m", help="A model to run (repeat; default every model: sc16, maxmin, packet)."
    ),
    param: list[str] | None = typer.Option(
        None, "--param", "-p", help="A model's parameter MODEL.NAME=VALUE, e.g. packet.buffer=16 (repeat)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the comparison as JSON."),
) -> None:
    """Run the same transfers under every model and compare each, message by message, with the most detailed
    one that ran (packet, else maxmin): per-message differences (median, p90, worst ten), the makespans and
    each model's wall time. Check the flow level on your own traffic before a study."""
    params = parse_model_params(param)
    m, t = load_machine(machine), load_transfers(transfers)
    c = results.compare(m, t, models=model or [], params=params)
    if as_json:
        sys.stdout.write(c.text + "\n")
        return
    print_model_comparison(c)
