"""The Python API: machines, transfers and predictions as pandas DataFrames.

All computation happens in the Rust engine (``contend._core``); this module only converts.
"""

from __future__ import annotations

import functools
import json
import numbers
import os
from collections.abc import Iterable, Mapping, Sequence

from contend import _core
from contend.errors import InputError

# typing's TYPE_CHECKING, without importing typing at run time (a twentieth of `simulate --json`'s start-up).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import IO, Any, TypeAlias

    import pandas as pd  # imported where used: `import contend` and the CLI start without them
    import pyarrow as pa

    MachineLike: TypeAlias = "Machine | str | os.PathLike[str]"
    TransfersLike: TypeAlias = "Transfers | str | os.PathLike[str]"

# Built-in transfer sets that can be named wherever a transfers file is expected.
BUILTIN_TRANSFERS = {"sc16-example": "sc16-example.yaml"}


def preset_rows() -> list[dict[str, Any]]:
    """Machine presets as rows: name, description, gpus and source (no pandas: the CLI lists them fast)."""
    return json.loads(_core.presets())


def presets() -> pd.DataFrame:
    """Machine presets: name, description, GPU count and source."""
    import pandas as pd

    return pd.DataFrame(preset_rows())


def schema(which: str) -> str:
    """A JSON Schema: machine, transfers, halo, report, scenario, datatype (``_core.schemas()`` lists them)."""
    return _core.schema(which)


def program_from_trace(records: list[Any], ranks: int, iterations: int, origin: str) -> str:
    """A rank program's YAML from a trace's MPI records (contend.otf2_records.read)."""
    return _core.program_from_trace(json.dumps(records), ranks, iterations, origin)


def models() -> list[dict[str, Any]]:
    """Available models with their parameters."""
    return json.loads(_core.models())


def model_default_rule() -> str:
    """Which model runs where none is named, in words: the registry's rule (sc16 on a PCIe-tree node, …)."""
    return _core.model_default_rule()


class Machine:
    """A validated machine description (devices and dual-simplex links), built once by the engine and held there."""

    def __init__(self, held: _core.Machine) -> None:
        self.held = held

    @classmethod
    def load(cls, source: str | os.PathLike) -> Machine:
        """A preset name (see ``presets()``) or a YAML/JSON file."""
        return cls(_core.Machine.load(os.fspath(source)))

    @classmethod
    def from_dict(cls, spec: Mapping[str, Any], origin: str = "<dict>") -> Machine:
        return cls(_core.Machine.parse(json.dumps(spec), origin))

    @classmethod
    def parse(cls, text: str, origin: str = "<text>") -> Machine:
        """From YAML or JSON text, as in a machine file."""
        return cls(_core.Machine.parse(text, origin))

    @property
    def origin(self) -> str:
        return self.held.origin

    @functools.cached_property
    def spec_json(self) -> str:
        """The machine's description as JSON (`contend schema machine`)."""
        return self.held.to_json()

    @functools.cached_property
    def spec(self) -> dict[str, Any]:
        return json.loads(self.spec_json)

    @property
    def name(self) -> str:
        return self.held.name

    @property
    def gpus(self) -> list[str]:
        return [d["name"] for d in self.spec["devices"] if d["kind"] == "gpu"]

    def graph(self) -> dict[str, Any]:
        """Devices and links with resolved bandwidths (bytes/s) and latencies (s)."""
        return json.loads(_core.machine_graph(self.held))

    def tree(self) -> str:
        """The machine as an indented text tree."""
        return _core.render_machine(self.held)


class Transfers:
    """A set of transfers: src, dst, size, optional start and dependencies. Held by the engine: building one from a
    file, a DataFrame or records and simulating it never turns it into JSON."""

    def __init__(self, held: _core.Transfers) -> None:
        self.held = held

    @property
    def origin(self) -> str:
        return self.held.origin

    @classmethod
    def load(cls, path: str | os.PathLike) -> Transfers:
        """A YAML, JSON or CSV transfers file, or a built-in set such as ``sc16-example``."""
        path = os.fspath(path)
        if path in BUILTIN_TRANSFERS and not os.path.exists(path):
            from importlib import resources  # here, not at start-up: a few milliseconds of every command's

            text = resources.files("contend.data").joinpath(BUILTIN_TRANSFERS[path]).read_text()
            return cls(_core.Transfers.parse(text, path))
        return cls(_core.Transfers.load(path))

    @classmethod
    def parse(cls, text: str, origin: str = "<text>") -> Transfers:
        """From YAML, JSON or CSV text, as in a transfers file (CSV: a header naming src, dst and size)."""
        return cls(_core.Transfers.parse(text, origin))

    @classmethod
    def example(cls) -> Transfers:
        """The SC16 worked example: 0→2, 1→4, 3→2, 6→4, 300 MiB each."""
        return cls.load("sc16-example")

    @classmethod
    def from_columns(
        cls, src: Sequence[str], dst: Sequence[str], size: Any, start: Any = None, overhead: Any = None,
        name: Sequence[str | None] | None = None, origin: str = "<columns>",
    ) -> Transfers:
        """From columns: ``size`` in bytes (integers, or strings with a unit such as ``"300MiB"``), ``start`` and
        ``overhead`` in seconds (numbers; NaN or None: none) or strings with a unit. NumPy arrays cross to the engine
        as whole buffers."""
        for column, values in (("src", src), ("dst", dst)):
            if isinstance(values, str):
                raise InputError(f'{origin}: {column}: is one string; give one device name per transfer, e.g. ["GPU0"]')
        src, dst = list(src), list(dst)
        try:
            return cls(_core.Transfers.from_columns(src, dst, _column(size), origin, name=_names(name),
                                                    start=_column(start), overhead=_column(overhead)))
        except TypeError:
            # A cell that is not a name (None, pandas' NaN for an empty cell) was the binding's TypeError "'float'
            # object is not an instance of 'str'", naming neither the row nor the fix. Looked for only on failure.
            for column, values in (("src", src), ("dst", dst)):
                row = next((i for i, v in enumerate(values) if not isinstance(v, str)), None)
                if row is not None:
                    v = values[row]
                    what = "is missing" if v is None or (isinstance(v, float) and v != v) else f"is {v!r}, not a name"
                    raise InputError(f'{origin}: {column}[{row}]: {what}; give a device name such as "GPU0"') from None
            raise

    @classmethod
    def from_dataframe(cls, df: pd.DataFrame, origin: str = "<dataframe>") -> Transfers:
        """From a DataFrame with columns ``src``, ``dst``, ``size`` (bytes) and optionally ``start``, ``overhead``
        (seconds) and ``name``; other columns are refused, since they would be silently dropped."""
        known = {"src", "dst", "size", "start", "overhead", "name"}
        extra = [c for c in df.columns if c not in known]
        if extra or not {"src", "dst", "size"} <= set(df.columns):
            raise InputError(f"{origin}: columns: needs src, dst and size (optional start, overhead, name); "
                             f"{'not ' + ', '.join(map(str, extra)) if extra else 'some are missing'}. For after, "
                             "mechanism, via, datatype, method or access use from_records or a transfers file")
        col = df.get
        return cls.from_columns(df["src"].astype(str).tolist(), df["dst"].astype(str).tolist(), df["size"].to_numpy(),
                                start=None if col("start") is None else df["start"].to_numpy(),
                                overhead=None if col("overhead") is None else df["overhead"].to_numpy(),
                                name=None if col("name") is None else df["name"].tolist(), origin=origin)

    @classmethod
    def from_records(cls, records: Iterable[Mapping[str, Any]], origin: str = "<records>") -> Transfers:
        """From dicts like ``{"src": "GPU0", "dst": "GPU2", "size": "300MiB"}`` (a bare number is bytes, or seconds
        for ``start`` and ``overhead``). Records that use only src, dst, size, start, overhead and name cross as
        columns; any other field (after, mechanism, via, ...) takes the transfers file's path."""
        records = list(records)
        simple = {"src", "dst", "size", "start", "overhead", "name"}
        if not all(isinstance(r, Mapping) and r.keys() <= simple and "src" in r and "dst" in r and "size" in r
                   for r in records):
            return cls(_core.Transfers.parse(json.dumps({"transfers": [_with_units(r) for r in records]}, default=str),
                                             origin))

        def column(key: str) -> list[Any] | None:
            return [r.get(key) for r in records] if any(key in r for r in records) else None

        return cls(_core.Transfers.from_columns([str(r["src"]) for r in records], [str(r["dst"]) for r in records],
                                                [r["size"] for r in records], origin, name=_names(column("name")),
                                                start=column("start"), overhead=column("overhead")))

    @classmethod
    def generate(
        cls,
        pattern: str,
        machine: MachineLike,
        size: str | int,
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
        ``group-shift``; ``gap`` (e.g. ``"2us"``) issues transfer k at k × gap. ``size``: text with a unit
        (``"1MiB"``) or an int of bytes."""
        text = _core.generate(_machine(machine), pattern, peers, size, root, count, seed, gap, grid,
                              periodic)
        return cls(_core.Transfers.parse(text, f"<{pattern}>"))

    @functools.cached_property
    def spec_json(self) -> str:
        """The transfers as JSON (`contend schema transfers`)."""
        return self.held.to_json()

    @property
    def records(self) -> list[dict[str, Any]]:
        return json.loads(self.spec_json)["transfers"]

    def check(self, machine: MachineLike) -> None:
        """Raise InputError if a transfer names a device the machine lacks, or has a bad dependency."""
        self.held.check(_machine(machine))

    def to_yaml(self) -> str:
        return self.held.to_yaml()

    def __len__(self) -> int:
        return len(self.held)


def _with_units(record: Any) -> Any:
    """A record's bare numbers written with their unit (bytes for size, seconds for start and overhead), as the
    transfers file's path wants them, so a record reads the same whichever path it takes (NumPy scalars too)."""
    if not isinstance(record, Mapping):
        return record
    units = {"size": "B", "start": "s", "overhead": "s"}
    out = dict(record)
    name = out.get("name")
    if isinstance(name, numbers.Real) and name != name:
        del out["name"]  # NaN, pandas' empty cell, is no name, as on the columns' path (it was the name "NaN" here)
    for key, unit in units.items():
        v = out.get(key)
        if key != "size" and isinstance(v, numbers.Real) and v != v:
            # NaN, pandas' empty cell, is "none" for start and overhead, as on the columns' path (it was "nans" here).
            del out[key]
        elif isinstance(v, numbers.Real) and not isinstance(v, bool):
            # A whole float is written as an integer: "1048576.0B" would read the same, but a size's text is
            # what the file path's messages quote. A fractional byte count stays fractional and is refused there.
            out[key] = f"{int(v)}{unit}" if unit == "B" and float(v).is_integer() else f"{float(v)!r}{unit}"
    return out


def _machine(machine: MachineLike) -> _core.Machine:
    """The engine's machine for a Machine, a preset name or a machine file: every function that takes a machine
    takes any of the three, as ``Session.simulate`` does."""
    if isinstance(machine, Machine):
        return machine.held
    if isinstance(machine, (str, os.PathLike)):
        return Machine.load(machine).held
    raise TypeError(f"machine: a contend.Machine, a preset name or a machine file, not {type(machine).__name__}")


def _transfers(transfers: TransfersLike) -> _core.Transfers:
    """The engine's transfers for a Transfers or a transfers file (or built-in set such as ``sc16-example``)."""
    if isinstance(transfers, Transfers):
        return transfers.held
    if isinstance(transfers, (str, os.PathLike)):
        return Transfers.load(transfers).held
    raise TypeError(f"transfers: a contend.Transfers or a transfers file, not {type(transfers).__name__}; build one "
                    "with Transfers.from_records, from_dataframe or from_columns")


def _column(values: Any) -> Any:
    """A column as the engine reads it: a NumPy array of numbers as one contiguous buffer, else a list."""
    if values is None:
        return None
    dtype = getattr(values, "dtype", None)
    if dtype is not None and dtype.kind in "iufm":
        import numpy as np

        if dtype.kind == "m":  # timedelta64 (a pandas Timedelta column): seconds, NaT as none
            values = np.asarray(values) / np.timedelta64(1, "s")
            dtype = values.dtype
        return np.ascontiguousarray(values, dtype={"i": np.int64, "u": np.uint64, "f": np.float64}[dtype.kind])
    return list(values)


def _names(values: Sequence[Any] | None) -> list[str | None] | None:
    return None if values is None else [None if v is None or v != v else str(v) for v in values]


def import_machine(
    path: str | os.PathLike, name: str | None = None, numa_per_socket: int = 1
) -> tuple[str, list[str]]:
    """A machine file (YAML text) from an ``nvidia-smi topo -m``, NCCL topology XML or ``sudo lspci -vvv`` dump, and
    its assumptions. ``numa_per_socket`` NUMA nodes make one socket (AMD NPS4, Intel SNC4: 4)."""
    path = os.fspath(path)
    name = name or os.path.splitext(os.path.basename(path))[0]
    r = json.loads(_core.import_machine(path, name, numa_per_socket))
    return r["yaml"], r["assumptions"]


def p2p(machine: MachineLike, **params: Any) -> dict[str, Any]:
    """Predicted p2pBandwidthLatencyTest matrices (GB/s, µs), indexed by the machine's GPUs."""
    return json.loads(_core.p2p(_machine(machine), _params(params)))


def nvbandwidth(machine: MachineLike, **params: Any) -> dict[str, Any]:
    """Predicted nvbandwidth copy-engine testcases (GB/s); ``["text"]`` is the output as nvbandwidth prints it."""
    report, text = _core.nvbandwidth(_machine(machine), _params(params))
    return {**json.loads(report), "text": text}


def p2p_frames(report: dict[str, Any]) -> dict[str, pd.DataFrame]:
    """Each matrix of a p2p report as a DataFrame with GPU names on both axes."""
    import pandas as pd

    gpus = report["gpus"]
    return {k: pd.DataFrame(v, index=gpus, columns=gpus, dtype=float) for k, v in report.items()
            if k.endswith(("_gbps", "_us"))}


def calibrate(
    machine: MachineLike, measurements: str | os.PathLike, hold_out: bool = False, machine_out: bool = False,
    network_bandwidth: str | None = None, algo: str | None = None, proto: str | None = None,
    env: Mapping[str, str] | None = None, **params: Any,
) -> dict[str, Any]:
    """Fit link parameters to p2pBandwidthLatencyTest or nvbandwidth output; ``["yaml"]`` is the calibrated machine.

    A CSV of measured patterns (header pattern,src,dst,size,time or bandwidth[,access]) fits every parameter the
    data identifies and lists the others under ``["unidentified"]``; a CSV of measured transfer graphs (header
    graph,src,dst,size,time) fits sc16's bandwidth and tau instead. ``hold_out=True`` fits p2p outputs on
    single-pair data only and scores the rest (``["scores"]``). ``machine_out=True`` (a machine file is wanted)
    refuses, before fitting, measurements whose fit gives no machine (transfer graphs, nccl-tests output).
    ``network_bandwidth``: each NIC's rate of an nccl-tests run on several hosts; ``algo`` and ``proto``: the
    NCCL_ALGO and NCCL_PROTO it ran with (as ``nccl_tests`` takes them). ``env``: NCCL's variables each nccl-tests
    run ran with, read as ``nccl_tests`` reads them (``None``: this process's environment's NCCL_*, ``{}`` none);
    the NCCL_* assignments a run's pasted command line shows (``NCCL_X=v ./all_reduce_perf``, ``mpirun -x``,
    ``export``, NCCL's ``set by environment`` log) win over them, and ``algo``/``proto``/params over both. Each run
    is fitted at the timed calls it ran (nccl-tests' ``-n``: its header's ``iters:``, else its command line's).
    Where an nccl-tests paste names no NCCL release and no ``nccl_version`` is given, ``["unnamed_release"]`` holds
    each release class's rms over its rows of at least 1 MiB before fitting and the class those rows look like
    (``suggested``, at most half the default's rms); it is ``None`` otherwise and changes nothing fitted.
    """
    return json.loads(_core.calibrate(_machine(machine), os.fspath(measurements), _params(params),
                                      hold_out, machine_out, network_bandwidth, algo, proto, _nccl_env(env)))


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


def _write(stream: IO[str], data: bytes, newline: bool = True) -> None:
    """UTF-8 ``data`` (and a newline) to a text stream: straight to its byte buffer where it has one, without
    a str in between (a 100,000-transfer report is about 10 MB, which a str would copy, decode and encode again)."""
    buffer = getattr(stream, "buffer", None)
    if buffer is None:
        stream.write(data.decode() + ("\n" if newline else ""))
        return
    stream.flush()
    buffer.write(data)
    if newline:
        buffer.write(b"\n")
    buffer.flush()


class Result:
    """A prediction: the engine's report (``contend schema report``). Its tables cross from the engine as Arrow
    buffers (``arrow``); the JSON text is made only when asked (``text``, ``raw``, ``to_json``)."""

    def __init__(self, held: _core.Report | None = None, text: str | None = None) -> None:
        self.held = held
        self._text = text

    @functools.cached_property
    def text(self) -> str:
        return self._text if self._text is not None else self.held.to_json().decode()  # type: ignore[union-attr]

    def write_json(self, stream: IO[str]) -> None:
        """Write the JSON report and a newline to ``stream`` (standard output, a file)."""
        _write(stream, self.held.to_json() if self.held is not None and self._text is None else self.text.encode())

    @functools.cached_property
    def raw(self) -> dict[str, Any]:
        return json.loads(self.text)

    def arrow(self, table: str = "transfers") -> pa.Table:
        """A table (transfers, links or devices) as a pyarrow Table over the engine's buffers."""
        import pyarrow as pa

        if self.held is None:
            raw = self.raw if table != "devices" else self.raw["summary"]
            return pa.table(raw["devices" if table == "devices" else table])
        kinds = {"f64": pa.float64(), "u64": pa.uint64()}
        arrays = {}
        for name, kind, bufs in self.held.table(table):
            if kind == "str":
                n = len(bufs[0]) // 8 - 1
                arrays[name] = pa.Array.from_buffers(pa.large_string(), n, [None, pa.py_buffer(bufs[0]),
                                                                           pa.py_buffer(bufs[1])])
            else:
                arrays[name] = pa.Array.from_buffers(kinds[kind], len(bufs[0]) // 8, [None, pa.py_buffer(bufs[0])])
        # Not pa.table(dict), which imports pandas to ask whether the dict is a DataFrame (half a second).
        return pa.Table.from_arrays(list(arrays.values()), names=list(arrays))

    def column(self, name: str, table: str = "transfers") -> Any:
        """One numeric column as a NumPy array over the engine's buffer (no copy; no pandas import, which
        pyarrow's to_numpy makes), or a text column as a list."""
        import numpy as np

        if self.held is None:
            values = self.raw["summary"]["devices"][name] if table == "devices" else self.raw[table][name]
            return values if values and isinstance(values[0], str) else np.asarray(values)
        for col, kind, bufs in self.held.table(table):
            if col == name:
                if kind == "str":
                    return self.arrow(table).column(name).to_pylist()
                return np.frombuffer(bufs[0], dtype=np.float64 if kind == "f64" else np.uint64)
        raise InputError(f"column: {table} has no column \"{name}\"")

    def csv(self, table: str = "transfers") -> str:
        """A table as CSV text, written by the engine in one pass."""
        if self.held is None:
            return self.arrow(table).to_pandas().to_csv(index=False)
        return self.held.csv(table).decode()

    def write_csv(self, stream: IO[str], table: str = "transfers") -> None:
        """Write a table as CSV to ``stream``."""
        _write(stream, self.held.csv(table) if self.held is not None else self.csv(table).encode(), newline=False)

    @property
    def transfers(self) -> pd.DataFrame:
        """One row per transfer: name, src, dst, size_bytes, start_s, finish_s, duration_s, bandwidth_bps."""
        return self.arrow("transfers").to_pandas()

    @property
    def links(self) -> pd.DataFrame:
        """One row per link that carried bytes: capacity, bytes, busy time and peak utilisation."""
        return self.arrow("links").to_pandas()

    @property
    def devices(self) -> pd.DataFrame:
        """Bytes each device sent and received."""
        return self.arrow("devices").to_pandas()

    def _kept(self, key: str, what: str) -> None:
        """Refuse a detail the run did not keep, rather than answer with an empty table."""
        if self.raw.get(key) is None:
            raise InputError(f"{what}: this result was simulated without {key}=True; simulate(..., {key}=True) keeps "
                             f"them (or --{key} on the command line)")

    @property
    def phases(self) -> pd.DataFrame:
        """One row per (phase, moving transfer): its rate and share of its narrowest link (needs phases=True)."""
        import pandas as pd

        self._kept("phases", "phases")
        return pd.DataFrame(phase_rows(self.raw))

    def nic_queues(self) -> pd.DataFrame:
        """One row per change of a NIC's queue: time and messages at it (needs nics=True)."""
        import pandas as pd

        self._kept("nics", "nic_queues")
        n = self.raw["nics"]
        off = n["offset"]
        names = [n["name"][k] for k in range(len(n["name"])) for _ in range(off[k], off[k + 1])]
        return pd.DataFrame({"nic": names, "time_s": n["time_s"], "queued": n["queued"]})

    def link_loads(self) -> pd.DataFrame:
        """One row per (phase, loaded link): bytes/s carried and utilisation (needs phases=True)."""
        import pandas as pd

        self._kept("phases", "link_loads")
        return pd.DataFrame(link_load_rows(self.raw))

    @property
    def makespan_s(self) -> float:
        return self.held.makespan_s if self.held is not None else self.raw["summary"]["makespan_s"]

    @property
    def params(self) -> dict[str, str]:
        return self.raw["params"]

    def to_json(self) -> str:
        return self.text


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
    machine: MachineLike, transfers: TransfersLike, model: str | None = None, phases: bool = False,
    nics: bool = False, **params: Any
) -> Result:
    """Predict each transfer's start and finish under ``model``; None: the machine's default (sc16 on a node
    whose GPUs copy over PCIe trees alone, maxmin on any other machine: ``model_default_rule()``; the report's
    ``model`` says which ran). ``params`` are model parameters, e.g. ``tau=0.2``;
    ``phases=True`` also keeps every phase's rates and link loads (their size grows with the transfers squared);
    ``nics=True`` every NIC's queue over time (clusters)."""
    return Result(_core.simulate(_machine(machine), _transfers(transfers), model, _params(params), phases, nics))


def explain(machine: MachineLike, transfers: TransfersLike, model: str | None = None, **params: Any) -> Explanation:
    """Like ``simulate`` with the sc16 steps of every phase (``model`` None: the machine's default, as there)."""
    return Explanation(text=_core.explain(_machine(machine), _transfers(transfers), model, _params(params)))


def halo_presets() -> list[tuple[str, str]]:
    """Halo-exchange presets: (name, description)."""
    return [tuple(x) for x in json.loads(_core.halo_presets())]


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

    @property
    def notes(self) -> list[str]:
        """What the NCCL_* variables did to the rank programs' NCCL calls (empty where nothing)."""
        return self.raw.get("notes", [])


def run(
    scenario: str | os.PathLike, detail: bool = False, links: int | None = 10, progress: Any = None,
    session: Session | None = None, model: str | None = None, env: Mapping[str, str] | None = None, **params: Any,
) -> RunResult:
    """Run a scenario file (``contend schema scenario``): every job's time, compute, communication and
    their overlap, and the ``links`` busiest links (0 to 1000; ``None``: every link); ``detail=True`` also
    keeps every operation. ``progress(delivered, messages)`` is called now and then while it runs. With a
    ``session``, runs of the same jobs on the same cluster (another bandwidth, NIC policy or model) share
    their lowering. ``model`` runs it under another model than the file names, ``params`` over the file's.
    ``env``: the NCCL_* variables the rank programs' NCCL calls read as NCCL does (NCCL_ALGO, NCCL_PROTO,
    NCCL_MIN/MAX_NCHANNELS, NCCL_MIN/MAX_CTAS, NCCL_BUFFSIZE, NCCL_PXN_DISABLE, NCCL_CROSS_NIC,
    NCCL_PAT_ENABLE, NCCL_P2P_DISABLE/LEVEL, NCCL_NET_GDR_LEVEL/READ, NCCL_NVLSTREE_MAX_CHUNKSIZE,
    NCCL_NVLS_ENABLE; a call's own algo/proto and the params win);
    ``None`` reads this process's environment, ``{}`` none. ``notes`` of the result say which applied."""
    path, text = _scenario_text(scenario)
    return RunResult(_core.run(text, path, detail, links, progress, session.held if session else None, model,
                               _params(params), _nccl_env(env)))


def _nccl_env(env: Mapping[str, str] | None) -> list[tuple[str, str]]:
    """The NCCL_* variables a call reads, as (name, value) pairs: ``env`` as given, or this process's environment's
    NCCL_* entries where it is None. Reading the environment is this door's job; what a variable means is the
    core's (``nccl::environment``, docs/nccl.md "NCCL's environment variables")."""
    if env is None:
        return [(k, v) for k, v in os.environ.items() if k.startswith("NCCL_")]
    if not isinstance(env, Mapping) or not all(isinstance(k, str) and isinstance(v, str) for k, v in env.items()):
        raise TypeError(f"env: a mapping of variable names to values (str to str), or None for this process's "
                        f"environment, not {type(env).__name__}")
    return list(env.items())


def check(scenario: str | os.PathLike, session: Session | None = None, model: str | None = None,
          **params: Any) -> None:
    """Check a scenario file without running it (milliseconds): its cluster, knobs, jobs and model (``model``
    and ``params`` as ``run`` takes them); raises InputError naming the first mistake."""
    path, text = _scenario_text(scenario)
    _core.check_scenario(text, path, (session or Session()).held, model, _params(params))


def _scenario_text(scenario: str | os.PathLike) -> tuple[str, str]:
    """A scenario file's path and text; a file that cannot be read or is not UTF-8 is one line."""
    path = os.fspath(scenario)
    try:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    except UnicodeDecodeError as e:
        raise InputError(f"{path}: not UTF-8 text (byte {e.start}); give a scenario YAML file") from None
    except OSError as e:
        raise InputError(f"{path}: cannot be read ({e.strerror}); give a scenario YAML file") from None
    return path, text


class Session:
    """What a notebook, a sweep or a study worker shares across calls: machines built once per source (a file
    is built again when it changes), and the last scenario run's lowered jobs and prepared model, which the
    next run of the same jobs on the same cluster takes. Nothing is shared between sessions or kept by the
    process; dropping the session frees it all."""

    def __init__(self) -> None:
        self.held = _core.Session()
        self._machines: dict[tuple[str, float | None], Machine] = {}

    def machine(self, source: str | os.PathLike) -> Machine:
        """A preset or machine file, built on first use (and again after the file changes)."""
        source = os.fspath(source)
        key = (source, os.path.getmtime(source) if os.path.isfile(source) else None)
        if key not in self._machines:
            self._machines = {k: v for k, v in self._machines.items() if k[0] != source}
            self._machines[key] = Machine.load(source)
        return self._machines[key]

    def simulate(self, machine: Machine | str | os.PathLike, transfers: Transfers, model: str | None = None,
                 phases: bool = False, nics: bool = False, **params: Any) -> Result:
        """``simulate`` with the machine taken from this session when named by its source."""
        m = machine if isinstance(machine, Machine) else self.machine(machine)
        return simulate(m, transfers, model, phases, nics, **params)

    def run(self, scenario: str | os.PathLike, detail: bool = False, links: int | None = 10,
            progress: Any = None, model: str | None = None, env: Mapping[str, str] | None = None,
            **params: Any) -> RunResult:
        """``run`` in this session."""
        return run(scenario, detail, links, progress, self, model, env, **params)


def apps() -> list[dict[str, Any]]:
    """The application skeletons a scenario's jobs can run, with their parameters."""
    return json.loads(_core.apps())


def nccl_tests(
    machine: MachineLike,
    op: str = "all_reduce",
    min_bytes: str | int = "8",
    max_bytes: str | int = "128M",
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
    tuner: str | None = None,
    env: Mapping[str, str] | None = None,
    iters: int | None = None,
    **params: Any,
) -> dict[str, Any]:
    """What nccl-tests' ``<op>_perf -b MIN -e MAX -f FACTOR`` would print on ``machine`` (a preset, a machine file,
    or a Machine loaded from either). ``min_bytes``/``max_bytes``: bytes, or text as nccl-tests reads it (``"8M"``).

    Each size runs NCCL's own pick of algorithm and protocol (``algo``/``proto``: NCCL_ALGO/NCCL_PROTO lists),
    lowered to point-to-point transfers on the rings NCCL's search would build, under ``model``. ``["rows"]`` holds
    size, count, time (us), algbw and busbw (GB/s) for out-of-place and in-place; ``["table"]`` the text nccl-tests
    prints; with ``explain=True`` every row has the alternatives run, the latency share and each channel's
    bottleneck, and ``["explain"]`` says it in words. ``nodes`` > 1 puts that many copies of the machine on one
    non-blocking switch with ``network_bandwidth`` per NIC (default: each NIC at
    its own ``port_bandwidth`` × ``ports``; 25 GB/s where the machine gives none). ``tuner``: the CSV file of
    NCCL's example tuner plugin (``NCCL_TUNER_CONFIG_FILE``): its first applicable line picks before NCCL's model.
    ``ngpus`` is nccl-tests' ``-g``: one process drives the node's first N GPUs, its thread launching each in turn,
    so an iteration takes at least N launches (``nccl_launch_host``); unset, every GPU is a process of its own.
    ``env``: NCCL's variables read as NCCL reads them where the arguments leave the setting unset (NCCL_ALGO,
    NCCL_PROTO, NCCL_MIN/MAX_NCHANNELS, NCCL_MIN/MAX_CTAS, NCCL_BUFFSIZE, NCCL_PXN_DISABLE, NCCL_CROSS_NIC,
    NCCL_PAT_ENABLE, NCCL_P2P_DISABLE/LEVEL, NCCL_NET_GDR_LEVEL/READ, NCCL_NVLSTREE_MAX_CHUNKSIZE,
    NCCL_NVLS_ENABLE);
    ``None`` reads this process's environment, ``{}`` none. The report's ``notes`` and ``caveats`` say which applied.
    ``iters`` is nccl-tests' ``-n``: the timed calls, enqueued back to back, over which a row's time is the mean (a
    broadcast or reduce pays its chain's fill once over them; docs/nccl.md, "Back-to-back iterations"); None:
    nccl-tests' default.
    """
    return json.loads(_core.nccl_tests(
        _machine_source(machine), op, str(min_bytes), str(max_bytes), factor, ngpus=ngpus, gpus=gpus, dtype=dtype,
        root=root, algo=algo, proto=proto, channels=channels, model=model, params=_params(params), explain=explain,
        nodes=nodes, network_bandwidth=network_bandwidth, tuner=tuner, env=_nccl_env(env), iters=iters,
    ))


def _machine_source(machine: MachineLike) -> str:
    """The preset name or file a machine was loaded from: nccl-tests builds its nodes' copies from it."""
    if isinstance(machine, (str, os.PathLike)):
        return os.fspath(machine)
    if not isinstance(machine, Machine):
        _machine(machine)  # the same TypeError as every other function
    origin = machine.origin
    if origin.startswith("preset "):
        return origin.removeprefix("preset ")
    if os.path.exists(origin):
        return origin
    raise InputError(f"nccl_tests: machine: {origin} is neither a preset nor a file here; nccl-tests builds its nodes "
                     "from one: pass the preset's name or the file's path (a Machine built in memory: write "
                     "machine.spec_json to a .json file)")


def nccl_tests_frame(report: dict[str, Any]) -> pd.DataFrame:
    """The rows of an ``nccl_tests`` report as a DataFrame (explanations left out)."""
    import pandas as pd

    if not (isinstance(report, dict) and isinstance(report.get("rows"), list)):
        raise InputError(f"nccl_tests_frame: report: {type(report).__name__} is not an nccl_tests report; give the "
                         "dict contend.nccl_tests returns")

    return pd.DataFrame([{k: v for k, v in r.items() if k != "explain"} for r in report["rows"]])
