"""`contend machines`, `show` and `import`: the machine presets, a machine's trees, and machine files from
topology dumps."""

from __future__ import annotations

from pathlib import Path

import typer

from contend import api
from contend.cli.shared import (
    ForceOpt,
    MachineArg,
    err,
    load_machine,
    new_file,
    new_table,
    out,
    picture_path,
    styled,
    written,
)
from contend.output import Target, write_text


def machines() -> None:
    """List the machine presets."""
    table = new_table(title="machine presets")
    for col in ("name", "GPUs", "description"):
        table.add_column(col)
    for row in api.preset_rows():
        table.add_row(row["name"], str(row["gpus"]), row["description"])
    out().print(table)


def show(
    machine: str = MachineArg,
    png: Path | None = typer.Option(None, "--png", help="Also draw the machine (PNG, or .svg/.pdf by the name)."),
    force: bool = ForceOpt,
) -> None:
    """Print a machine's PCIe trees and other links."""
    target = picture_path(png, [machine], "--png", force)
    m = load_machine(machine)
    out().print(m.tree(), end="")
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
    output: Path | None = typer.Option(
        None, "--output", "-o", help="Write the machine file here (- for standard output) instead of printing it."
    ),
    numa_per_socket: int = typer.Option(
        1, "--numa-per-socket",
        help="NUMA nodes per CPU socket, where the BIOS splits sockets (AMD NPS2/NPS4: 2/4, Intel SNC2/SNC4: 2/4); "
        "the dumps show NUMA nodes, not sockets.",
    ),
    force: bool = ForceOpt,
) -> None:
    """Turn a topology dump into a machine file, stating every assumption made."""
    target = new_file(output, [str(dump)], force) or Target(None, "--output")
    yaml, assumptions = api.import_machine(dump, name, numa_per_socket)
    err().print(styled((f"{len(assumptions)} assumptions", "bold"),
                       " (also written as comments in the file; check and refine them):"))
    for a in assumptions:
        err().print(f"  - {a}", soft_wrap=True)
    write_text(target, yaml)
    written(target, "machine", f" (try: contend show {target})")
