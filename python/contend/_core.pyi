"""Type stub of the Rust binding (crates/contend-py): JSON text in and out, one function per
function of contend_core::api. Checked against the built module by mypy's stubtest in CI."""

from collections.abc import Callable

class ContendError(Exception): ...
class InputError(ContendError): ...
class UnsupportedError(InputError): ...

def presets() -> str: ...
def load_machine(source: str) -> tuple[str, str]: ...
def parse_machine(text: str, origin: str) -> str: ...
def machine_graph(spec_json: str, origin: str) -> str: ...
def render_machine(spec_json: str, origin: str) -> str: ...
def load_transfers(path: str) -> str: ...
def parse_transfers(text: str, origin: str) -> str: ...
def check_transfers(machine_json: str, machine_origin: str, transfers_json: str, transfers_origin: str) -> None: ...
def transfers_yaml(spec_json: str) -> str: ...
def simulate(
    machine_json: str,
    machine_origin: str,
    transfers_json: str,
    transfers_origin: str,
    model: str,
    params: list[tuple[str, str]],
    phases: bool = False,
    nics: bool = False,
) -> str: ...
def explain(
    machine_json: str,
    machine_origin: str,
    transfers_json: str,
    transfers_origin: str,
    model: str,
    params: list[tuple[str, str]],
) -> str: ...
def schedule(
    machine_json: str,
    machine_origin: str,
    halo: str,
    semantics: str,
    search: str,
    model: str,
    params: list[tuple[str, str]],
    alpha: str,
    seed: int,
    iterations: int,
    threads: int,
    keep_times: bool,
    progress: Callable[[int, int], object] | None = None,
) -> tuple[str, str]: ...
def import_machine(path: str, name: str, numa_per_socket: int) -> str: ...
def p2p(machine_json: str, machine_origin: str, params: list[tuple[str, str]]) -> str: ...
def nvbandwidth(machine_json: str, machine_origin: str, params: list[tuple[str, str]]) -> tuple[str, str]: ...
def calibrate(
    machine_json: str, machine_origin: str, measurements: str, params: list[tuple[str, str]], hold_out: bool
) -> str: ...
def halo_presets() -> str: ...
def patterns() -> str: ...
def generate(
    machine_json: str,
    machine_origin: str,
    pattern: str,
    peers: list[str] | None,
    size: str,
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
def run(
    text: str,
    origin: str,
    detail: bool,
    links: int | None = 10,
    progress: Callable[[int, int], object] | None = None,
    reuse_lowering: bool = False,
) -> str: ...
def check_scenario(text: str, origin: str) -> None: ...
def lowering_group(text: str, origin: str) -> str: ...
def apps() -> str: ...
def program_from_trace(records_json: str, ranks: int, iterations: int, origin: str) -> str: ...
def datatype(
    machine_json: str,
    machine_origin: str,
    source: str,
    src: str,
    dst: str,
    count: int,
    model: str,
    params: list[tuple[str, str]],
    kernels: list[tuple[str, str]],
) -> str: ...
def datatype_sweep(
    machine_json: str,
    machine_origin: str,
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
def calibrate_kernels(machine_json: str, machine_origin: str, src: str, dst: str, measurements: str) -> str: ...
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
) -> str: ...
