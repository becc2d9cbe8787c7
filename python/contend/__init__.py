"""contend: how long data movement takes on dense multi-GPU servers, why, and how to make it faster.

    >>> import contend
    >>> m = contend.Machine.load("cs-storm-socket")
    >>> t = contend.Transfers.example()
    >>> r = contend.simulate(m, t, tau=0.2)
    >>> r.transfers[["src", "dst", "finish_s"]]
"""

# Each name is imported from its module when first asked for (``contend.simulate``, ``from contend import
# Machine``), so that `import contend.cli` and `contend simulate` import only what they use: the datatype and
# stencil modules, for one, cost `simulate --json` a few milliseconds of start-up for nothing.
_WHERE = {
    **dict.fromkeys(["Explanation", "Machine", "Result", "Schedule", "Session", "Transfers", "calibrate", "explain",
                     "halo_presets", "import_machine", "models", "nvbandwidth", "p2p", "p2p_frames", "presets",
                     "schedule", "simulate"], "api"),
    **dict.fromkeys(["calibrate_kernels", "datatype", "datatype_presets", "datatype_sweep", "kernel_params"],
                    "datatype"),
    **dict.fromkeys(["ContendError", "InputError", "UnsupportedError"], "errors"),
    **dict.fromkeys(["stencil", "stencil_params"], "stencil"),
}
# The modules `import contend` used to import, still found as its attributes (``contend.api.run``).
_MODULES = ("api", "datatype", "errors", "stencil")


def __getattr__(name: str) -> object:
    import importlib

    if name in _WHERE:
        value = getattr(importlib.import_module(f"contend.{_WHERE[name]}"), name)
    elif name in _MODULES:
        value = importlib.import_module(f"contend.{name}")
    else:
        raise AttributeError(f"module 'contend' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_WHERE, *_MODULES})


__all__ = [
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
    "datatype",
    "datatype_presets",
    "datatype_sweep",
    "explain",
    "halo_presets",
    "import_machine",
    "kernel_params",
    "models",
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
