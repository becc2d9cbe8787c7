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
def import_machine(path: str, name: str) -> str: ...
def p2p(machine_json: str, machine_origin: str, params: list[tuple[str, str]]) -> str: ...
def calibrate(machine_json: str, machine_origin: str, measurements: str, params: list[tuple[str, str]]) -> str: ...
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
