"""`contend nccl-tests`: what NVIDIA's nccl-tests would print on a machine (docs/nccl.md)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import typer

from contend import api
from contend.cli.shared import Count, err, out, parse_params, picture_path
from contend.errors import InputError


def nccl_tests(
    machine: str = typer.Argument(..., help="A node preset (see `contend machines`) or a machine file."),
    ops: list[str] | None = typer.Option(
        None, "--op", "-o", help="all_reduce (default), all_gather, reduce_scatter, broadcast, reduce, alltoall or "
        "sendrecv (nccl-tests' binary without _perf); repeat it to run several in turn, as the binaries one by one."),
    min_bytes: str = typer.Option("8", "--minbytes", "-b", help="Smallest size, as nccl-tests reads it "
                                  "(8, 64K, 1.5M: K, M and G are powers of 1024)."),
    max_bytes: str = typer.Option("128M", "--maxbytes", "-e", help="Largest size (e.g. 8G)."),
    factor: int = Count(2, "-f", "--stepfactor", lo=2, help="Multiply the size by this from one row to the next."),
    ngpus: int | None = Count(None, "-g", "--ngpus", lo=1, help="nccl-tests' -g: one process drives the node's "
                              "first N GPUs, launching each in turn (default: every GPU, a process each, as "
                              "mpirun -np N ... -g 1)."),
    # Its default and bound are the core's (nccl_tests::ITERS, MAX_ITERS), which refuses out of range in one line.
    iters: int | None = typer.Option(None, "-n", "--iters", help="nccl-tests' -n: timed iterations, enqueued back to "
                                     "back (a broadcast or reduce pays its chain's fill once over them); default "
                                     "nccl-tests' own."),
    gpus: str | None = typer.Option(
        None, "--gpus", help="Use these GPUs of the node in rank order, comma-separated: names (GPU0) or indices (0); "
        "with -g of their count, one process drives them."
    ),
    # The bound is api.rs's (`api::nccl_tests`), checked here first so that a negative count is one line too.
    nodes: int = Count(1, "--nodes", "-N", lo=1, hi=1024, help="Copies of the node on one non-blocking switch "
                       "(1 to 1024; a ring or all-to-all call of more than 8 M transfers is refused)."),
    network_bandwidth: str | None = typer.Option(
        None, "--network-bandwidth",
        help="Per NIC between nodes (default: the NICs' own port_bandwidth × ports; 25GB/s where none is given)."),
    dtype: str = typer.Option("float", "--datatype", "-d", help="nccl-tests' datatype (float, half, bfloat16, ...)."),
    root: int = Count(0, "--root", "-r", lo=0, help="Root rank of broadcast and reduce."),
    algo: str | None = typer.Option(
        None, "--algo", help="NCCL_ALGO: ring, tree, nvls, nvlstree, pat or a comma list (default: NCCL's pick)."
    ),
    proto: str | None = typer.Option(None, "--proto", help="NCCL_PROTO: LL, LL128, Simple or a comma list."),
    channels: int | None = Count(None, "--channels", lo=1, hi=64,
                                 help="Channels (NCCL_MIN_NCHANNELS = NCCL_MAX_NCHANNELS; at most 64; 32 to 2.21)."),
    tuner: Path | None = typer.Option(
        None, "--tuner", help="An NCCL tuner plugin's CSV (NCCL_TUNER_CONFIG_FILE of NCCL's example plugin): "
        "collective,min_bytes,max_bytes,algorithm,protocol,channels,nNodes,nRanks[,numPipeOps,regBuff]; its first "
        "applicable line picks before NCCL's model."),
    model: str = typer.Option("maxmin", "--model", "-m", help="maxmin (default) or packet; sc16 does not apply."),
    nccl_version: str | None = typer.Option(
        None, "--nccl-version", help="NCCL release whose cost model picks the algorithm and protocol: any minor "
        "from 2.18 to 2.30 (default 2.30; the parameter nccl_version); a patch release (2.26.2, as NCCL prints it) "
        "reads as its minor."),
    param: list[str] | None = typer.Option(
        None, "--param", "-p", help="Model parameter key=value, or NCCL's constants (nccl_step_simple=3us, "
        "nccl_eff_simple=0.85: what `contend calibrate` fits from nccl-tests output)."),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
    explain: bool = typer.Option(False, "--explain", help="Rings, each channel's bottleneck link, latency vs "
                                 "bandwidth, and where NCCL's pick is more than 10% slower than another choice."),
    plot: Path | None = typer.Option(
        None, "--plot", help="Draw busbw against the size (PNG, SVG or PDF), NCCL's algorithm/protocol per size "
        "marked and the fastest choice contend ran beside it (runs every alternative, as --explain does)."),
    # -f is nccl-tests' step factor here: --force has no short form.
    force: bool = typer.Option(False, "--force", help="Overwrite the --plot file if it exists."),
    # nccl-tests' -t (threads per process, each driving -g GPUs): -t T with one GPU a thread is T ranks each
    # launching its own, as contend's ranks run; T threads of several GPUs each is refused in one line.
    threads: str | None = typer.Option(None, "-t", "--nthreads", hidden=True),
) -> None:
    """Predict the table NVIDIA's nccl-tests prints (<op>_perf -b -e -f -g) on this machine, by running NCCL's
    collectives as point-to-point transfers on the rings NCCL's search would build. NCCL_ALGO, NCCL_PROTO,
    NCCL_MIN/MAX_NCHANNELS, NCCL_MIN/MAX_CTAS, NCCL_BUFFSIZE, NCCL_PXN_DISABLE, NCCL_CROSS_NIC, NCCL_PAT_ENABLE,
    NCCL_P2P_DISABLE, NCCL_P2P_LEVEL, NCCL_NET_GDR_LEVEL, NCCL_NET_GDR_READ, NCCL_NVLSTREE_MAX_CHUNKSIZE and
    NCCL_NVLS_ENABLE in the environment are read as NCCL reads them where no flag sets the same; other NCCL_*
    variables are named as not modelled (docs/nccl.md)."""
    if threads is not None and threads.strip() != "1":
        t = int(threads) if threads.strip().isdigit() else 0
        if not 1 <= t <= 1024 or ngpus not in (None, 1):
            raise InputError(f"-t: {threads} is nccl-tests' threads per process; contend runs -t T of one GPU a "
                             "thread (T ranks, each launching its own) or -g N (one thread of N GPUs), not both: "
                             "give -t T alone, or -g N, or --gpus")
        # T threads of one GPU each: the node's first T GPUs, each rank launching its own kernel.
        ngpus, gpus = None, gpus if gpus is not None else ",".join(str(i) for i in range(t))
    for op in ops or []:
        if op.strip().lower() in _REDOPS:
            raise InputError(f"--op: {op} is nccl-tests' -o, the reduction operator; contend's -o is --op, the "
                             "collective, and the reduction does not change the time (the same bytes move): "
                             "give the collective with --op (e.g. --op all_reduce) and leave the reduction out")
    gpu_list = None
    if gpus is not None:
        gpu_list = [g.strip() for g in gpus.split(",") if g.strip()]
        if not gpu_list:
            raise InputError('--gpus: is empty; list GPUs such as "GPU0,GPU1"')
    ops = ops or ["all_reduce"]
    if plot is not None and len(ops) > 1:
        raise InputError(f"--plot: draws one collective and --op is given {len(ops)} times ({', '.join(ops)}); "
                         "give one --op per --plot")
    target = picture_path(plot, [machine], "--plot", force)
    params = parse_params(param)
    if nccl_version is not None and "nccl_version" in params:
        raise InputError("--nccl-version: and --param nccl_version= are both given; give one")
    version = {} if nccl_version is None else {"nccl_version": nccl_version}
    try:
        # NCCL's variables (NCCL_ALGO, ...) are read from this shell, where a flag does not set the same
        # (api.nccl_tests's env=None; the core reads them as NCCL does and names them in the notes).
        reports = [
            api.nccl_tests(
                machine, op, min_bytes, max_bytes, factor, ngpus=ngpus, gpus=gpu_list, dtype=dtype, root=root,
                algo=algo, proto=proto, channels=channels, model=model, explain=explain or target is not None,
                nodes=nodes, network_bandwidth=network_bandwidth, tuner=None if tuner is None else str(tuner),
                iters=iters, **params | version,
            )
            for op in ops
        ]
    except InputError as e:
        # The release given as --nccl-version is named by that flag, not by the parameter it sets.
        if version and str(e).startswith("--param: nccl_version:"):
            raise InputError("--nccl-version:" + str(e)[len("--param: nccl_version:"):]) from None
        if str(e).startswith("--gpus:") and "one rank:" in str(e) and gpu_list and len(gpu_list) == 1 \
                and gpu_list[0].isdigit() and int(gpu_list[0]) > 1:
            # --gpus takes a list and -g a count: `--gpus 4` is the one GPU 4, where 4 GPUs were likely meant. Only
            # on the one-rank refusal: GPU n exists there, so the node has more than n GPUs and both forms run.
            n = int(gpu_list[0])
            raise InputError(f"{e}; --gpus {n} names the one GPU {n}: for {n} GPUs give -g {n} or --gpus "
                             f"{','.join(str(i) for i in range(n))}") from None
        raise
    if target is not None:
        from contend.plots import nccl_busbw

        nccl_busbw(reports[0], target)
        err().print(f"busbw chart written to {target}")
    if as_json:
        # One collective prints its report, as before; several print the list in --op's order.
        sys.stdout.write(json.dumps(reports[0] if len(reports) == 1 else reports, indent=2) + "\n")
        return
    for i, r in enumerate(reports):
        if i:
            sys.stdout.write("\n")
        _print_table(r, explain)


def _print_table(r: dict, explain: bool) -> None:
    sys.stdout.write(r["table"])
    if not explain:
        # What the table cannot say (the core's caveats: an assumed GPU generation, --algo ignored for
        # all-to-all, a tuner's lines) goes to stderr, one line each, leaving the table on stdout as
        # nccl-tests prints it; the other notes are left to --explain and --json.
        for note in r["caveats"]:
            err().print(f"note: {note}", soft_wrap=True, highlight=False)
    if explain:
        out().print()
        sys.stdout.write(r["explain"])
        for note in r["notes"]:
            sys.stdout.write(f"note: {note}\n")


# nccl-tests' -o names (common.cu's test_opNames, and "all"): contend's -o is the collective.
_REDOPS = ("sum", "prod", "max", "min", "avg", "mulsum", "all")

