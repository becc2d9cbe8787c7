"""Non-contiguous messages in Python: every method's predicted time for a datatype (pack-copy-unpack,
zero-copy load-store, host-staged), its parts and the winner; all computed by the engine."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping

from contend import _core
from contend.api import Machine, _params

# typing's TYPE_CHECKING, without importing typing at run time (see contend.api).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def datatype_presets() -> list[dict[str, Any]]:
    """Datatype presets: name, description, bytes and blocks of one instance."""
    keys = ("name", "description", "bytes", "blocks")
    return [dict(zip(keys, row, strict=True)) for row in json.loads(_core.datatype_presets())]


def kernel_params() -> list[dict[str, str]]:
    """The kernel and load-store cost parameters of the methods: name, default, help."""
    return json.loads(_core.kernel_params())


def datatype(
    machine: Machine, source: str | os.PathLike, src: str, dst: str, count: int = 1, model: str = "maxmin",
    kernels: Mapping[str, Any] | None = None, **params: Any,
) -> dict[str, Any]:
    """Each method's time for ``count`` instances of the datatype ``source`` (a preset or a file) from
    ``src`` to ``dst``, with its parts; ``kernels`` overrides cost terms (e.g. ``{"launch": "3us"}``),
    ``params`` are the model's."""
    return json.loads(_core.datatype(machine.held, os.fspath(source), src, dst, count, model,
                                     _params(params), _params(kernels or {})))


def datatype_sweep(
    machine: Machine, source: str | os.PathLike, src: str, dst: str, points: int = 16, model: str = "maxmin",
    kernels: Mapping[str, Any] | None = None, **params: Any,
) -> dict[str, Any]:
    """The methods' times over ``points`` message sizes, 1, 2, 4, … instances (the crossover chart's data)."""
    return json.loads(_core.datatype_sweep(machine.held, os.fspath(source), src, dst, model,
                                           _params(params), _params(kernels or {}), points))


def calibrate_kernels(machine: Machine, src: str, dst: str, measurements: str | os.PathLike) -> dict[str, Any]:
    """Fit the methods' kernel terms to a CSV (kernel, block, bytes, time); load-store rows were measured from
    ``src`` to ``dst``. ``["kernels"]`` holds every term with its unit, ``["residuals"]`` one row per point."""
    return json.loads(_core.calibrate_kernels(machine.held, src, dst, os.fspath(measurements)))
