"""`contend compare`: the fidelity ladder on a user's own traffic — the same transfers under
maxmin, packet (and sc16 where it applies), each compared message by message with the most
detailed model that ran."""

from __future__ import annotations

import sys

import typer
from rich.table import Table

from contend import api
from contend.cli import MachineArg, TransfersArg, app, human_bytes, out, user_errors
from contend.errors import InputError
from contend.units import time_unit


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


@app.command()
@user_errors
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
    m, t = api.Machine.load(machine), api.Transfers.load(transfers)
    c = api.compare(m, t, models=model or [], params=params)
    if as_json:
        sys.stdout.write(c.text + "\n")
        return
    print_comparison(c)


def print_comparison(c: api.Comparison) -> None:
    raw = c.raw
    table = Table(title=f"{raw['machine']} — {raw['transfers']:,} transfers under each model")
    for col in ("model", "wall s", "makespan", "note"):
        table.add_column(col, justify="left" if col in ("model", "note") else "right")
    for m in raw["models"]:
        if m["ran"]:
            unit, scale = time_unit(m["makespan_s"])
            note = "reference" if m["model"] == raw["reference"] else ""
            table.add_row(m["model"], f"{m['wall_s']:.3f}", f"{m['makespan_s'] * scale:.4g} {unit}", note)
        else:
            table.add_row(m["model"], "—", "—", f"does not apply: {m['refused']}")
    out().print(table)
    for d in raw["differences"]:
        t = Table(title=f"{d['model']} against {d['reference']}: {d['compared']:,} transfers compared")
        for col in ("median |Δ|", "p90 |Δ|", "max |Δ|", "mean Δ", "makespan Δ"):
            t.add_column(col, justify="right")
        t.add_row(*(f"{d[k]:+.2f}%" if k in ("mean_signed_pct", "makespan_diff_pct") else f"{d[k]:.2f}%"
                    for k in ("median_pct", "p90_pct", "max_pct", "mean_signed_pct", "makespan_diff_pct")))
        out().print(t)
        if not d["worst"]:
            continue
        unit, scale = time_unit(max(w["reference_duration_s"] for w in d["worst"]))
        w = Table(title=f"worst {len(d['worst'])}: {d['model']} against {d['reference']}")
        for col in ("transfer", "src→dst", "size", f"{d['model']} {unit}", f"{d['reference']} {unit}", "Δ"):
            w.add_column(col, justify="left" if col in ("transfer", "src→dst") else "right")
        for x in d["worst"]:
            w.add_row(x["name"], f"{x['src']}→{x['dst']}", human_bytes(x["size_bytes"]),
                      f"{x['duration_s'] * scale:.4g}", f"{x['reference_duration_s'] * scale:.4g}",
                      f"{x['diff_pct']:+.2f}%")
        out().print(w)
