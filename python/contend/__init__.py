"""contend: how long data movement takes on dense multi-GPU servers, why, and how to make it faster.

    >>> import contend
    >>> m = contend.Machine.load("cs-storm-socket")
    >>> t = contend.Transfers.example()
    >>> r = contend.simulate(m, t, tau=0.2)
    >>> r.transfers[["src", "dst", "finish_s"]]
"""

from contend.api import (
    Explanation,
    Machine,
    Result,
    Session,
    Transfers,
    calibrate,
    explain,
    halo_presets,
    import_machine,
    models,
    nccl_tests,
    nccl_tests_frame,
    nvbandwidth,
    p2p,
    p2p_frames,
    presets,
    simulate,
)
from contend.datatype import calibrate_kernels, datatype, datatype_presets, datatype_sweep, kernel_params
from contend.errors import ContendError, InputError, UnsupportedError
from contend.stencil import stencil, stencil_params


def __getattr__(name: str) -> object:
    # A schedule search's and a comparison's results are frozen dataclasses (contend.results, which builds on
    # contend.api): imported when first asked for, so that `import contend` does not import dataclasses.
    if name in ("Comparison", "Schedule", "compare", "schedule"):
        from contend import results

        return getattr(results, name)
    # `contend.study` (studies, their datasets and reports; it imports pandas and pyarrow) is imported when first
    # used, so that `import contend; contend.study.read(RESULTS)` works as docs/studies.md writes it.
    if name == "study":
        import importlib

        return importlib.import_module("contend.study")
    raise AttributeError(f"module 'contend' has no attribute {name!r}")


__all__ = [
    "Comparison",
    "ContendError",
    "Explanation",
    "InputError",
    "Machine",
    "Result",
    "Schedule",
    "Session",
    "Transfers",
    "UnsupportedError",
    "calibrate",
    "calibrate_kernels",
    "compare",
    "datatype",
    "datatype_presets",
    "datatype_sweep",
    "explain",
    "halo_presets",
    "import_machine",
    "kernel_params",
    "models",
    "nccl_tests",
    "nccl_tests_frame",
    "nvbandwidth",
    "p2p",
    "p2p_frames",
    "presets",
    "schedule",
    "simulate",
    "stencil",
    "stencil_params",
]
__version__ = "0.1.0"


def __dir__() -> list[str]:
    # The lazily found names are listed too, for introspection and tab completion.
    return sorted(set(globals()) | set(__all__))
