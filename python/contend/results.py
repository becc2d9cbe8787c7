"""Results of the API that are frozen records (dataclasses): a schedule search and a comparison of models.

Apart from ``contend.api``, which gives them by name, so that importing it (every command, and `contend
simulate` first of all) does not import dataclasses, about a twelfth of `simulate --json`'s start-up."""

from __future__ import annotations

import functools
import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from contend import _core
from contend.api import Transfers, _machine, _params, _transfers
from contend.errors import InputError

if TYPE_CHECKING:
    import pandas as pd

    from contend.api import MachineLike, TransfersLike


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
    machine: MachineLike,
    halo: str | os.PathLike = "cosmo-2d",
    semantics: str = "sequential",
    search: str = "exhaustive",
    model: str | None = None,
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
        _machine(machine), halo, semantics, search, model,
        _params(params), alpha, seed, iterations, threads, keep_times, progress,
    )
    return Schedule(json.loads(report), Transfers(_core.Transfers.parse(best, "<best schedule>")))


@dataclass(frozen=True)
class Comparison:
    """The same transfers under several models, each against the most detailed one that ran
    (``contend compare``): the engine's report and its JSON text."""

    text: str

    @functools.cached_property
    def raw(self) -> dict[str, Any]:
        return json.loads(self.text)

    @property
    def reference(self) -> str:
        return self.raw["reference"]

    @property
    def models(self) -> pd.DataFrame:
        """One row per model: whether it ran (else why not), wall time and makespan."""
        import pandas as pd

        rows = [{k: m.get(k) for k in ("model", "ran", "refused", "wall_s", "makespan_s")} for m in self.raw["models"]]
        return pd.DataFrame(rows)

    @property
    def differences(self) -> pd.DataFrame:
        """One row per model against the reference: per-message median, p90 and worst
        differences (percent of the reference's durations) and the makespans."""
        import pandas as pd

        return pd.DataFrame([{k: v for k, v in d.items() if k != "worst"} for d in self.raw["differences"]])

    def worst(self, model: str) -> pd.DataFrame:
        """The transfers whose durations differ most between ``model`` and the reference."""
        import pandas as pd

        for d in self.raw["differences"]:
            if d["model"] == model:
                return pd.DataFrame(d["worst"])
        ran = [d["model"] for d in self.raw["differences"]]
        raise InputError(f"model: {model!r} was not compared with the reference; "
                         f"choose one of {', '.join(ran) or 'none'}")


def compare(
    machine: MachineLike,
    transfers: TransfersLike,
    models: Iterable[str] = (),
    params: Mapping[str, Mapping[str, Any]] | None = None,
) -> Comparison:
    """Run the same transfers under every model (or ``models``) and compare each, message by
    message, with the most detailed one that ran (packet, else maxmin). ``params`` maps a model
    to its parameters, e.g. ``{"packet": {"buffer": 16}}``; a model that does not apply to the
    machine or transfers is listed with its reason."""
    triples = [(model, k, str(v)) for model, ps in (params or {}).items() for k, v in ps.items()]
    return Comparison(_core.compare(_machine(machine), _transfers(transfers), list(models), triples))
