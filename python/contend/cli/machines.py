"""`contend machines`, `show` and `import`: the machine presets, a machine's trees, and machine files from
topology dumps."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer
from rich.markup import escape
from rich.table import Table

from contend import _core, api
from contend.cli.shared import MachineArg, err, new_file, out, output_path


def machines() -> None:
    """List the machine presets."""
    table = Table(title="machine presets")
    for col in ("name", "GPUs", "description"):
        table.add_column(col)
    for row in json.loads(_core.presets()):  # not api.presets(): listing needs no pandas
        table.add_row(row["name"], str(row["gpus"]), row["description"])
    out().print(table)


def show(
    machine: str = MachineArg,
    png: Path | None = typer.Option(None, "--png", help="Also draw the machine (PNG)."),
) -> None:
    """Print a machine's PCIe trees and other links."""
    m = api.Machine.load(machine)
    out().print(m.tree(), end="")
    target = output_path(png, [machine], "--png")
    if target:
        from contend.plots import fabric_diagram, machine_diagram

        draw = fabric_diagram if m.spec.get("network") else machine_diagram
        draw(m.graph(), target)
        err().print(f"diagram written to {target}")


def import_(
    dump: Path = typer.Argument(
        ...,
        help="Output of `nvidia-smi topo -m`, an NCCL topology XML (NCCL_TOPO_DUMP_FILE), or `sudo lspci -vvv`.",
    ),
    name: str | None = typer.Option(None, "--name", help="Machine name (default: the file's name)."),
    output: Path | None = typer.Option(None, "--output", "-o", help="Write the machine file here; never overwrites."),
    numa_per_socket: int = typer.Option(
        1, "--numa-per-socket",
        help="NUMA nodes per CPU socket, where the BIOS splits sockets (AMD NPS2/NPS4: 2/4, Intel SNC2/SNC4: 2/4); "
        "the dumps show NUMA nodes, not sockets.",
    ),
) -> None:
    """Turn a topology dump into a machine file, stating every assumption made."""
    new_file(output, [str(dump)])
    yaml, assumptions = api.import_machine(dump, name, numa_per_socket)
    err().print(
        f"[bold]{len(assumptions)} assumptions[/] (also written as comments in the file; check and refine them):"
    )
    for a in assumptions:
        err().print(f"  - {escape(a)}", soft_wrap=True)
    if output is None:
        sys.stdout.write(yaml)
    else:
        output.write_text(yaml)
        err().print(f"machine written to {output} (try: contend show {output})")
