"""`contend p2p` and `contend calibrate`: what the benchmarks would print, and a machine fitted to what they did."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from contend import api
from contend.cli.shared import ForceOpt, MachineArg, ParamOpt, load_machine, new_file, out, parse_params, written
from contend.cli.tables import print_calibration, print_p2p, print_sc16_fit
from contend.errors import InputError
from contend.output import write_text


def p2p(
    machine: str = MachineArg,
    param: list[str] | None = ParamOpt,
    tool: str = typer.Option(
        "p2pBandwidthLatencyTest", "--tool", "-t",
        help="Whose output to predict: p2pBandwidthLatencyTest (CUDA's sample) or nvbandwidth "
        "(its copy-engine testcases, printed as nvbandwidth prints them).",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the matrices as JSON."),
) -> None:
    """Predict what CUDA's p2pBandwidthLatencyTest or NVIDIA's nvbandwidth prints on this machine (maxmin model)."""
    params = parse_params(param)
    if tool.lower() == "nvbandwidth":
        r = api.nvbandwidth(load_machine(machine), **params)
        text = r.pop("text")
        sys.stdout.write(json.dumps(r, indent=2) + "\n" if as_json else text)
        return
    if tool.lower() != "p2pbandwidthlatencytest":
        raise InputError(f'--tool: "{tool}" is not a tool contend predicts; '
                         "write p2pBandwidthLatencyTest or nvbandwidth")
    r = api.p2p(load_machine(machine), **params)
    if as_json:
        sys.stdout.write(json.dumps(r, indent=2) + "\n")
        return
    print_p2p(r)


def calibrate(
    machine: str = MachineArg,
    measurements: Path = typer.Argument(
        ...,
        help="Output of CUDA's p2pBandwidthLatencyTest or of nvbandwidth as they print it (nvbandwidth -j JSON too); "
        "nccl-tests output (<op>_perf tables, as printed or pasted; runs on several hosts too) to fit NCCL's "
        "per-step latency, kernel efficiency and per-call network cost; "
        "a CSV of measured patterns (pattern,src,dst,size,time or bandwidth[,access]) to fit every "
        "parameter the data identifies; or a CSV of transfer graphs (graph,src,dst,size,time) to fit "
        "sc16's bandwidth and tau.",
    ),
    param: list[str] | None = ParamOpt,
    output: Path | None = typer.Option(
        None, "--output", "-o", help="Write the calibrated machine file here (- for standard output)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print fitted values and residuals as JSON."),
    hold_out: bool = typer.Option(
        False, "--hold-out",
        help=(
            "Fit on single-pair data only (unidirectional, latencies of pairs i<j, one GPU's host copies "
            "both ways; of measured patterns, those of one copy or one each way between two ends); score the "
            "rest as held out."
        ),
    ),
    network_bandwidth: str | None = typer.Option(
        None, "--network-bandwidth",
        help="nccl-tests output of a run on several hosts: each NIC's rate between them, as contend nccl-tests "
        "takes it (default: the NICs' own port_bandwidth × ports; 25GB/s where none is given).",
    ),
    algo: str | None = typer.Option(
        None, "--algo",
        help="nccl-tests output: the NCCL_ALGO it ran with (ring, tree, nvls, nvlstree, pat, a comma list).",
    ),
    proto: str | None = typer.Option(
        None, "--proto", help="nccl-tests output: the NCCL_PROTO it ran with (LL, LL128, Simple, a comma list)."
    ),
    force: bool = ForceOpt,
) -> None:
    """Fit bandwidth efficiency and latency per link kind to measurements; report the residual per pair."""
    params = parse_params(param)
    target = new_file(output, [machine, str(measurements)], force)
    if target is not None and target.stdout and as_json:
        raise InputError("--output: - and --json would both write to standard output; write one of them to a file")
    # The core refuses --output before fitting where the measurements' fit gives no machine.
    try:
        c = api.calibrate(load_machine(machine), measurements, hold_out=hold_out, machine_out=target is not None,
                          network_bandwidth=network_bandwidth, algo=algo, proto=proto, **params)
    except InputError as e:
        # The core names the machine it was asked to write; here that is --output.
        if str(e).startswith("machine output:"):
            raise InputError("--output:" + str(e)[len("machine output:"):]) from None
        raise
    if "tau" in c:
        if as_json:
            sys.stdout.write(json.dumps(c, indent=2) + "\n")
        else:
            print_sc16_fit(c)
        return
    if "runs" in c:
        # nccl-tests output: NCCL's constants, given back to `contend nccl-tests` as --param.
        if as_json:
            sys.stdout.write(json.dumps(c, indent=2) + "\n")
        else:
            for r in c["runs"]:
                out().print(f"read {r['op']} ({r['op_from']}): {r['rows']} rows, {r['ranks']} ranks on "
                            f"{r['nodes']} node(s)" + (f", {r['gpu']}" if r.get("gpu") else "")
                            + (f", one process of -g {r['ngpus']}" if r.get("ngpus") else "")
                            + f", fitted under NCCL {r['nccl_version']}'s choice")
            if c.get("unnamed_release"):
                out().print(c["unnamed_release"]["line"], soft_wrap=True, markup=False, highlight=False)
            print_calibration(c)
            # One command per run, printed whole (not wrapped): each reproduces the run's rows as fitted.
            for command in c["commands"]:
                out().print(f"use: contend nccl-tests {machine} {command}", soft_wrap=True, markup=False,
                            highlight=False)
        return
    if as_json:
        sys.stdout.write(json.dumps({k: v for k, v in c.items() if k not in ("yaml", "spec")}, indent=2) + "\n")
    else:
        print_calibration(c)
    if target is not None:
        write_text(target, c["yaml"])
        written(target, "calibrated machine")
