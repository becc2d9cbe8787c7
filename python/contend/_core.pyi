"""Type stub of the Rust binding (crates/contend-py): one function per function of contend_core::api.
Machines, transfers and reports are held by the engine between calls (classes below); report tables cross as
Arrow buffers; descriptions and other reports as JSON text. Checked against the built module by mypy's stubtest
in CI."""

from collections.abc import Callable, Sequence
from typing import Any, final

class ContendError(Exception): ...
class InputError(ContendError): ...
class UnsupportedError(InputError): ...

@final
class Machine:
    @staticmethod
    def load(source: str) -> Machine: ...
    @staticmethod
    def parse(text: str, origin: str) -> Machine: ...
    @property
    def name(self) -> str: ...
    @property
    def origin(self) -> str: ...
    def to_json(self) -> str: ...

@final
class Transfers:
    @staticmethod
    def load(path: str) -> Transfers: ...
    @staticmethod
    def parse(text: str, origin: str) -> Transfers: ...
    @staticmethod
    def from_columns(
        src: Sequence[str],
        dst: Sequence[str],
        size: Any,
        origin: str,
        name: Sequence[str | None] | None = None,
        start: Any = None,
        overhead: Any = None,
    ) -> Transfers: ...
    @property
    def origin(self) -> str: ...
    def to_json(self) -> str: ...
    def to_yaml(self) -> str: ...
    def check(self, machine: Machine) -> None: ...
    def __len__(self) -> int: ...

@final
class Report:
    def to_json(self) -> bytes: ...
    def csv(self, table: str) -> bytes: ...
    @property
    def makespan_s(self) -> float: ...
    def table(self, table: str) -> list[tuple[str, str, list[bytes]]]: ...

def presets() -> str: ...
def machine_graph(machine: Machine) -> str: ...
def render_machine(machine: Machine) -> str: ...
def simulate(
    machine: Machine,
    transfers: Transfers,
    model: str | None = None,
    params: list[tuple[str, str]] = ...,
    phases: bool = False,
    nics: bool = False,
) -> Report: ...
def explain(machine: Machine, transfers: Transfers, model: str | None, params: list[tuple[str, str]]) -> str: ...
def schedule(
    machine: Machine,
    halo: str,
    semantics: str,
    search: str,
    model: str | None,
    params: list[tuple[str, str]],
    alpha: str,
    seed: int,
    iterations: int,
    threads: int,
    keep_times: bool,
    progress: Callable[[int, int], object] | None = None,
) -> tuple[str, str]: ...
def import_machine(path: str, name: str, numa_per_socket: int) -> str: ...
def p2p(machine: Machine, params: list[tuple[str, str]]) -> str: ...
def nvbandwidth(machine: Machine, params: list[tuple[str, str]]) -> tuple[str, str]: ...
def calibrate(
    machine: Machine, measurements: str, params: list[tuple[str, str]], hold_out: bool, machine_out: bool = False,
    network_bandwidth: str | None = None, algo: str | None = None, proto: str | None = None,
    env: list[tuple[str, str]] = ...,
) -> str: ...
def halo_presets() -> str: ...
def patterns() -> str: ...
def generate(
    machine: Machine,
    pattern: str,
    peers: list[str] | None,
    size: str | int,
    root: str | None = None,
    count: int = 32,
    seed: int = 0,
    gap: str | None = None,
    grid: str | None = None,
    periodic: bool = False,
) -> str: ...
def schema(which: str) -> str: ...
def schemas() -> str: ...
def models() -> str: ...
def model_default_rule() -> str: ...
@final
class Session:
    def __init__(self) -> None: ...

def run(
    text: str,
    origin: str,
    detail: bool,
    links: int | None = 10,
    progress: Callable[[int, int], object] | None = None,
    session: Session | None = None,
    model: str | None = None,
    params: Sequence[tuple[str, str]] = ...,
    env: Sequence[tuple[str, str]] = ...,
) -> str: ...
def check_scenario(
    text: str, origin: str, session: Session, model: str | None = None, params: Sequence[tuple[str, str]] = ...
) -> None: ...
def lowering_group(text: str, origin: str) -> str: ...
def apps() -> str: ...
def program_from_trace(records_json: str, ranks: int, iterations: int, origin: str) -> str: ...
def datatype(
    machine: Machine,
    source: str,
    src: str,
    dst: str,
    count: int,
    model: str,
    params: list[tuple[str, str]],
    kernels: list[tuple[str, str]],
) -> str: ...
def datatype_sweep(
    machine: Machine,
    source: str,
    src: str,
    dst: str,
    model: str,
    params: list[tuple[str, str]],
    kernels: list[tuple[str, str]],
    points: int,
) -> str: ...
def datatype_presets() -> str: ...
def kernel_params() -> str: ...
def stencil(lattices: list[int], params: list[tuple[str, str]]) -> str: ...
def stencil_params() -> str: ...
def calibrate_kernels(machine: Machine, src: str, dst: str, measurements: str) -> str: ...
def compare(
    machine: Machine,
    transfers: Transfers,
    models: list[str],
    params: list[tuple[str, str, str]],
) -> str: ...
def nccl_tests(
    machine: str,
    op: str,
    min_bytes: str,
    max_bytes: str,
    factor: int,
    ngpus: int | None = None,
    gpus: list[str] | None = None,
    dtype: str = "float",
    root: int = 0,
    algo: str | None = None,
    proto: str | None = None,
    channels: int | None = None,
    model: str = "maxmin",
    params: list[tuple[str, str]] = ...,
    explain: bool = False,
    nodes: int = 1,
    network_bandwidth: str | None = None,
    tuner: str | None = None,
    env: Sequence[tuple[str, str]] = ...,
    iters: int | None = None,
) -> str: ...
