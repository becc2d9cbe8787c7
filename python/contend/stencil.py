"""Stream-ordered against CPU-posted communication in Python: seed 004's 2D stencil, one iteration per
local lattice, computed by the engine."""

from __future__ import annotations

import json
from collections.abc import Iterable

from contend import _core
from contend.api import _params

# typing's TYPE_CHECKING, without importing typing at run time (see contend.api).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def stencil(lattices: Iterable[int] = tuple(2**k for k in range(3, 14)), **params: Any) -> dict[str, Any]:
    """Each local lattice's iteration time CPU-posted and stream-ordered, the gain, and the kernel mix;
    ``params`` override the model's terms (``contend stencil --help``; e.g. ``launch="3us"``)."""
    return json.loads(_core.stencil(list(lattices), _params(params)))


def stencil_params() -> list[dict[str, str]]:
    """The stencil model's terms: name, default, help."""
    return json.loads(_core.stencil_params())
