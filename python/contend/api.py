"""The Python API: machines, transfers and predictions as pandas DataFrames.

All computation happens in the Rust engine (``contend._core``); this module only converts.
"""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from contend import _core
from contend.errors import InputError

if TYPE_CHECKING:
    import pandas as pd  # imported where used: `import contend` and the CLI start without it

# Built-in transfer sets that can be named wherever a transfers file is expected.
BUILTIN_TRANSFERS = {"sc16-example": "sc16-example.yaml"}


def presets() -> pd.DataFrame:
    """Machine presets: name, description, GPU count and source."""
    import pandas as pd

    return pd.DataFrame(json.loads(_core.presets()))


def models() -> list[dict[str, Any]]:
    """Available models with their parameters."""
    return json.loads(_core.models())


@dataclass(frozen=True)
class Machine:
    """A validated machine description (devices and dual-simplex links)."""

    spec_json: str
    origin: str

    @classmethod
    def load(cls, source: str | os.PathLike) -> Machine:
        """A preset name (see ``presets()``) or a YAML/JSON file."""
        spec, origin = _core.load_machine(os.fspath(source))
        return cls(spec, origin)

    @classmethod
    def from_dict(cls, spec: Mapping[str, Any], origin: str = "<dict>") -> Machine:
        return cls(_core.parse_machine(json.dumps(spec), origin), origin)

    @property
    def spec(self) -> dict[str, Any]:
        return json.loads(self.spec_json)

    @property
    def name(self) -> str:
        return self.spec["name"]

    @property
    def gpus(self) -> list[str]:
        return [d["name"] for d in self.spec["devices"] if d["kind"] == "gpu"]

    def graph(self) -> dict[str, Any]:
        """Devices and links with resolved bandwidths (bytes/s) and latencies (s)."""
        return json.loads(_core.machine_graph(self.spec_json, self.origin))

    def tree(self) -> str:
        """The machine as an indented text tree."""
        return _core.render_machine(self.spec_json, self.origin)


@dataclass(frozen=True)
class Transfers:
    """A set of transfers: src, dst, size, optional start and dependencies."""

    spec_json: str
    origin: str

    @classmethod
    def load(cls, path: str | os.PathLike) -> Transfers:
        """A YAML/JSON transfers file, or a built-in set such as ``sc16-example``."""
        path = os.fspath(path)
        if path in BUILTIN_TRANSFERS and not os.path.exists(path):
            text = resources.files("contend.data").joinpath(BUILTIN_TRANSFERS[path]).read_text()
            return cls(_core.parse_transfers(text, path), path)
        return cls(_core.load_transfers(path), path)

    @classmethod
    def example(cls) -> Transfers:
        """The SC16 worked example: 0→2, 1→4, 3→2, 6→4, 300 MiB each."""
        return cls.load("sc16-example")

    @classmethod
    def from_records(cls, records: Iterable[Mapping[str, Any]], origin: str = "<records>") -> Transfers:
        """From dicts like ``{"src": "GPU0", "dst": "GPU2", "size": "300MiB"}``."""
        return cls(_core.parse_transfers(json.dumps({"transfers": list(records)}), origin), origin)

    @classmethod
    def generate(
        cls,
        pattern: str,
        machine: Machine,
        size: str,
        peers: list[str] | None = None,
        root: str | None = None,
        count: int = 32,
        seed: int = 0,
        gap: str | None = None,
        grid: str | None = None,
        periodic: bool = False,
    ) -> Transfers:
        """A pattern among ``peers`` (default: every GPU of ``machine``): ``scatter``/``gather``/``incast``
        (need ``root``), ``all-to-all``, seeded ``random`` with ``count`` pairs (distinct while any are left,
        then repeating), ``permutation``, ``neighbours`` on a rank ``grid`` such as ``"16x16x8"``, or
        ``group-shift``; ``gap`` (e.g. ``"2us"``) issues transfer k at k × gap."""
        text = _core.generate(machine.spec_json, machine.origin, pattern, peers, size, root, count, seed, gap, grid,
                              periodic)
        return cls(text, f"<{pattern}>")

    @property
    def records(self) -> list[dict[str, Any]]:
        return json.loads(self.spec_json)["transfers"]

    def check(self, machine: Machine) -> None:
        """Raise InputError if a transfer names a device the machine lacks, or has a bad dependency."""
        _core.check_transfers(machine.spec_json, machine.origin, self.spec_json, self.origin)

    def to_yaml(self) -> str:
        return _core.transfers_yaml(self.spec_json)

    def __len__(self) -> int:
        return len(self.records)


def import_machine(
    path: str | os.PathLike, name: str | None = None, numa_per_socket: int = 1
) -> tuple[str, list[str]]:
    """A machine file (YAML text) from an ``nvidia-smi topo -m``, NCCL topology XML or ``sudo lspci -vvv`` dump, and
    its assumptions. ``numa_per_socket`` NUMA nodes make one socket (AMD NPS4, Intel SNC4: 4)."""
    path = os.fspath(path)
    name = name or os.path.splitext(os.path.basename(path))[0]
    r = json.loads(_core.import_machine(path, name, numa_per_socket))
    return r["yaml"], r["assumptions"]


def p2p(machine: Machine, **params: Any) -> dict[str, Any]:
    """Predicted p2pBandwidthLatencyTest matrices (GB/s, µs), indexed by the machine's GPUs."""
    return json.loads(_core.p2p(machine.spec_json, machine.origin, _params(params)))


def nvbandwidth(machine: Machine, **params: Any) -> dict[str, Any]:
    """Predicted nvbandwidth copy-engine testcases (GB/s); ``["text"]`` is the output as nvbandwidth prints it."""
    report, text = _core.nvbandwidth(machine.spec_json, machine.origin, _params(params))
    return {**json.loads(report), "text": text}


def p2p_frames(report: dict[str, Any]) -> dict[str, pd.DataFrame]:
    """Each matrix of a p2p report as a DataFrame with GPU names on both axes."""
    import pandas as pd

    gpus = report["gpus"]
    return {k: pd.DataFrame(v, index=gpus, columns=gpus, dtype=float) for k, v in report.items()
            if k.endswith(("_gbps", "_us"))}


def calibrate(
    machine: Machine, measurements: str | os.PathLike, hold_out: bool = False, **params: Any
) -> dict[str, Any]:
    """Fit link parameters to p2pBandwidthLatencyTest or nvbandwidth output; ``["yaml"]`` is the calibrated machine.

    A CSV of measured patterns (header pattern,src,dst,size,time or bandwidth[,access]) fits every parameter the
    data identifies and lists the others under ``["unidentified"]``; a CSV of measured transfer graphs (header
    graph,src,dst,size,time) fits sc16's B and tau instead. ``hold_out=True`` fits p2p outputs on single-pair data
    only and scores the rest (``["scores"]``).
    """
    return json.loads(_core.calibrate(machine.spec_json, machine.origin, os.fspath(measurements), _params(params),
                                      hold_out))


def _params(params: Mapping[str, Any]) -> list[tuple[str, str]]:
    return [(k, str(v)) for k, v in params.items()]


def phase_rows(raw: dict[str, Any]) -> dict[str, list[Any]]:
    """The report's phases (compressed rows) as one column per field, a row per (phase, transfer)."""
    ph = raw.get("phases") or {"start_s": [], "end_s": [], "offset": [0], "transfer": [], "rate_bps": [], "share": []}
    off = ph["offset"]
    phase = [k for k in range(len(ph["start_s"])) for _ in range(off[k], off[k + 1])]
    names = raw["transfers"]["name"]
    return {
        "phase": phase,
        "start_s": [ph["start_s"][k] for k in phase],
        "end_s": [ph["end_s"][k] for k in phase],
        "transfer": ph["transfer"],
        "name": [names[i] for i in ph["transfer"]],
        "rate_bps": ph["rate_bps"],
        "share": ph["share"],
    }


def link_load_rows(raw: dict[str, Any]) -> dict[str, list[Any]]:
    """Every phase's loaded links, a row per (phase, link): bytes/s carried and utilisation."""
    ph = raw.get("phases") or {"start_s": [], "end_s": [], "link_offset": [0], "link": [], "load_bps": []}
    off = ph["link_offset"]
    phase = [k for k in range(len(ph["start_s"])) for _ in range(off[k], off[k + 1])]
    links = raw["links"]
    return {
        "phase": phase,
        "start_s": [ph["start_s"][k] for k in phase],
        "end_s": [ph["end_s"][k] for k in phase],
        "link": [links["name"][i] for i in ph["link"]],
        "load_bps": ph["load_bps"],
        "utilisation": [b / links["capacity_bps"][i] for b, i in zip(ph["load_bps"], ph["link"], strict=True)],
    }


@dataclass(frozen=True)
class Result:
    """A prediction: the engine's report (``contend schema report``) and its JSON text."""

    text: str

    @functools.cached_property
    def raw(self) -> dict[str, Any]:
        return json.loads(self.text)

    @property
    def transfers(self) -> pd.DataFrame:
        """One row per transfer: name, src, dst, size_bytes, start_s, finish_s, duration_s, bandwidth_bps."""
        import pandas as pd

        return pd.DataFrame(self.raw["transfers"])

    @property
    def links(self) -> pd.DataFrame:
        """One row per link that carried bytes: capacity, bytes, busy time and peak utilisation."""
        import pandas as pd

        return pd.DataFrame(self.raw["links"])

    @property
    def devices(self) -> pd.DataFrame:
        """Bytes each device sent and received."""
        import pandas as pd

        return pd.DataFrame(self.raw["summary"]["devices"])

    @property
    def phases(self) -> pd.DataFrame:
        """One row per (phase, moving transfer): its rate and share of its narrowest link (needs phases=True)."""
        import pandas as pd

        return pd.DataFrame(phase_rows(self.raw))

    def nic_queues(self) -> pd.DataFrame:
        """One row per change of a NIC's queue: time and messages at it (needs nics=True)."""
        import pandas as pd

        n = self.raw.get("nics") or {"name": [], "offset": [0], "time_s": [], "queued": []}
        off = n["offset"]
        names = [n["name"][k] for k in range(len(n["name"])) for _ in range(off[k], off[k + 1])]
        return pd.DataFrame({"nic": names, "time_s": n["time_s"], "queued": n["queued"]})

    def link_loads(self) -> pd.DataFrame:
        """One row per (phase, loaded link): bytes/s carried and utilisation (needs phases=True)."""
        import pandas as pd

        return pd.DataFrame(link_load_rows(self.raw))

    @property
    def makespan_s(self) -> float:
        return self.raw["summary"]["makespan_s"]

    @property
    def params(self) -> dict[str, str]:
        return self.raw["params"]

    def to_json(self) -> str:
        return self.text


@dataclass(frozen=True)
class Explanation(Result):
    """A sc16 prediction with every transfer's factor after steps A-D, per phase, and the causes."""

    @property
    def factors(self) -> pd.DataFrame:
        import pandas as pd

        transfers = self.raw["transfers"]
        rows = []
        for i, p in enumerate(self.raw["explain"]):
            for r in p["rows"]:
                t = r["transfer"]
                rows.append({
                    "phase": i, "start_s": p["start_s"], "end_s": p["end_s"], "transfer": t,
                    "src": transfers["src"][t], "dst": transfers["dst"][t],
                    "A": r["a"], "B": r["b"], "C": r["c"], "D": r["d"], "final": r["final"], "causes": r["causes"],
                })
        return pd.DataFrame(rows)


def simulate(
    machine: Machine, transfers: Transfers, model: str = "sc16", phases: bool = False, nics: bool = False,
    **params: Any
) -> Result:
    """Predict each transfer's start and finish. ``params`` are model parameters, e.g. ``tau=0.2``;
    ``phases=True`` also keeps every phase's rates and link loads (their size grows with the transfers squared);
    ``nics=True`` every NIC's queue over time (clusters)."""
    return Result(_core.simulate(machine.spec_json, machine.origin, transfers.spec_json, transfers.origin, model,
                                 _params(params), phases, nics))


def explain(machine: Machine, transfers: Transfers, model: str = "sc16", **params: Any) -> Explanation:
    """Like ``simulate`` with the sc16 steps of every phase."""
    return Explanation(_core.explain(machine.spec_json, machine.origin, transfers.spec_json, transfers.origin, model,
                                     _params(params)))


def halo_presets() -> list[tuple[str, str]]:
    """Halo-exchange presets: (name, description)."""
    return [tuple(x) for x in json.loads(_core.halo_presets())]


@dataclass(frozen=True)
class Schedule:
    """The result of a schedule search, and the best schedule as transfers."""

    raw: dict[str, Any]
    best: Transfers

    @property
    def best_order(self) -> dict[str, list[str]]:
        """Per GPU, the destinations in the order of the best schedule."""
        return {o["gpu"]: o["to"] for o in self.raw["best_order"]}

    @property
    def times(self) -> pd.Series:
        """Makespan of every order, ascending (exhaustive search only)."""
        import pandas as pd

        return pd.Series(self.raw.get("times_s") or [], name="makespan_s", dtype=float)

    def __getattr__(self, name: str) -> Any:
        # best_s, median_s, orders_total, ... straight from the report
        try:
            return self.raw[name]
        except KeyError:
            raise AttributeError(name) from None


def schedule(
    machine: Machine,
    halo: str | os.PathLike = "cosmo-2d",
    semantics: str = "sequential",
    search: str = "exhaustive",
    model: str = "sc16",
    alpha: str = "0s",
    seed: int = 0,
    iterations: int = 20_000,
    threads: int = 0,
    keep_times: bool = True,
    progress: Any = None,
    **params: Any,
) -> Schedule:
    """Search the fastest order of a halo exchange.

    ``halo``: ``2d``/``3d`` (the COSMO presets), a preset name or a halo file. ``semantics``:
    ``sequential`` or ``rounds``. ``search``: ``exhaustive``, ``bnb`` or ``anneal``. ``alpha``:
    per-message overhead with unit, e.g. ``"5us"``. ``progress(done, total)`` is called now and then.
    """
    halo = os.fspath(halo)
    report, best = _core.schedule(
        machine.spec_json, machine.origin, halo, semantics, search, model,
        _params(params), alpha, seed, iterations, threads, keep_times, progress,
    )
    return Schedule(json.loads(report), Transfers(best, "<best schedule>"))


class RunResult:
    """What ``contend run`` reports: the scenario, a summary, one row per job, the busiest links,
    and with ``detail=True`` every operation."""

    def __init__(self, raw_json: str) -> None:
        self.json = raw_json
        self.raw: dict[str, Any] = json.loads(raw_json)

    @property
    def summary(self) -> dict[str, Any]:
        return self.raw["summary"]

    @property
    def jobs(self) -> pd.DataFrame:
        """One row per job: ranks, start, finish, run time, compute, comm (not overlapped), overlap,
        messages, bytes."""
        import pandas as pd

        return pd.DataFrame(self.raw["jobs"])

    @property
    def links(self) -> pd.DataFrame:
        """The busiest links, busiest first (every link with ``links=None``): capacity, bytes, busy
        time, peak utilisation and busy share of the makespan."""
        import pandas as pd

        return pd.DataFrame(self.raw["links"])

    @property
    def operations(self) -> pd.DataFrame:
        """One row per operation (computation, message, rendezvous control message) with its job,
        rank, peer, bytes, start and finish; needs ``detail=True``."""
        import pandas as pd

        ops = self.raw.get("operations")
        if ops is None:
            raise ValueError("operations: run the scenario with detail=True to keep every operation")
        return pd.DataFrame(ops)


def run(
    scenario: str | os.PathLike, detail: bool = False, links: int | None = 10, progress: Any = None
) -> RunResult:
    """Run a scenario file (``contend schema scenario``): every job's time, compute, communication and
    their overlap, and the ``links`` busiest links (0 to 1000; ``None``: every link); ``detail=True`` also
    keeps every operation. ``progress(delivered, messages)`` is called now and then while it runs."""
    path = os.fspath(scenario)
    try:
        text = Path(path).read_text()
    except OSError as e:
        raise InputError(f"{path}: cannot be read ({e.strerror}); give a scenario YAML file") from None
    return RunResult(_core.run(text, path, detail, links, progress))


def apps() -> list[dict[str, Any]]:
    """The application skeletons a scenario's jobs can run, with their parameters."""
    return json.loads(_core.apps())


def nccl_tests(
    machine: str,
    op: str = "all_reduce",
    min_bytes: str = "8",
    max_bytes: str = "128M",
    factor: int = 2,
    *,
    ngpus: int | None = None,
    gpus: list[str] | None = None,
    dtype: str = "float",
    root: int = 0,
    algo: str | None = None,
    proto: str | None = None,
    channels: int | None = None,
    model: str = "maxmin",
    explain: bool = False,
    nodes: int = 1,
    network_bandwidth: str | None = None,
    **params: Any,
) -> dict[str, Any]:
    """What nccl-tests' ``<op>_perf -b MIN -e MAX -f FACTOR`` would print on ``machine`` (a preset or file).

    Each size runs NCCL's own pick of algorithm and protocol (``algo``/``proto``: NCCL_ALGO/NCCL_PROTO lists),
    lowered to point-to-point transfers on the rings NCCL's search would build, under ``model``. ``["rows"]`` holds
    size, count, time (us), algbw and busbw (GB/s) for out-of-place and in-place; ``["table"]`` the text nccl-tests
    prints; with ``explain=True`` every row has the alternatives run, the latency share and each channel's
    bottleneck, and ``["explain"]`` says it in words. ``nodes`` > 1 puts that many copies of the machine on one
    non-blocking switch with ``network_bandwidth`` per NIC (default 25 GB/s).
    """
    return json.loads(_core.nccl_tests(
        machine, op, min_bytes, max_bytes, factor, ngpus=ngpus, gpus=gpus, dtype=dtype, root=root, algo=algo,
        proto=proto, channels=channels, model=model, params=_params(params), explain=explain, nodes=nodes,
        network_bandwidth=network_bandwidth,
    ))


def nccl_tests_frame(report: dict[str, Any]) -> pd.DataFrame:
    """The rows of an ``nccl_tests`` report as a DataFrame (explanations left out)."""
    import pandas as pd

    return pd.DataFrame([{k: v for k, v in r.items() if k != "explain"} for r in report["rows"]])
