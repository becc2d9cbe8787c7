"""Speed-ups against a study's baseline, as seed 003 reports them, and its Table II.

A job's speed-up at a point is its run time at the baseline point (the same point with the baseline's
axis values, so the same workload and job) over its run time here. Seed 003 reports "the average across
all occurrences of an application and a given job size in the 20 workloads": the mean of the jobs'
speed-ups over every job of that application and size in every repetition.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from contend.errors import InputError

if TYPE_CHECKING:
    import pandas as pd

# Seed 003's axes, when a study names them so: the figures and Table II are drawn for these.
GPN, BANDWIDTH, NIC = "gpus_per_node", "bandwidth_scale", "nic_scheduling"
TARGET = 0.9  # Table II: the bandwidth reaching 90% of the baseline's performance


def groups(meta: dict[str, Any]) -> list[list[str]]:
    return [g for g in meta["zips"] if g]


def facets(meta: dict[str, Any]) -> list[str]:
    """Axes the baseline keeps (fabric, say): every figure and table is drawn once per combination of them."""
    return [g[0] for g in groups(meta) if not any(k in meta["baseline"] for k in g)]


def speedups(df: pd.DataFrame, meta: dict[str, Any]) -> pd.DataFrame:
    """Every row with its baseline run time and speed-up."""
    base = meta["baseline"]
    if not base:
        raise InputError("report: the study has no baseline, so there is nothing to normalise against; "
                         "add `baseline:` to the study file and rerun it (finished points are kept)")
    axes = [k for g in groups(meta) for k in g]
    keys = [k for k in axes if k not in base] + ["repetition", "job", "app", "ranks"]
    mask = True
    for k, v in base.items():
        mask = mask & (df[k] == v)
    ref = df.loc[mask, keys + ["run_time_s"]].rename(columns={"run_time_s": "baseline_run_time_s"})
    if ref.empty:
        raise InputError(f"report: no baseline point ({', '.join(f'{k}={v}' for k, v in base.items())}) "
                         "has finished; rerun the study to finish it")
    merged = df.merge(ref, on=keys, how="inner", validate="many_to_one")
    merged["speedup"] = merged["baseline_run_time_s"] / merged["run_time_s"]
    return merged


def at_baseline_except(sp: pd.DataFrame, meta: dict[str, Any], free: list[str]) -> pd.DataFrame:
    """The rows whose baseline axes are at their baseline values, but for the groups of the axes in ``free``."""
    loose = {k for g in groups(meta) if any(f in g for f in free) for k in g}
    mask = True
    for k, v in meta["baseline"].items():
        if k not in loose:
            mask = mask & (sp[k] == v)
    return sp.loc[mask] if mask is not True else sp


def mean_speedup(sp: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Mean speed-up per application, job size and ``by``, with how many jobs it averages."""
    g = sp.groupby(by + ["app", "ranks"], sort=True)["speedup"]
    return g.agg(speedup="mean", jobs="count").reset_index()


def min_bandwidth(sp: pd.DataFrame, meta: dict[str, Any]) -> pd.DataFrame:
    """Table II: per facet, application, job size and GPUs per node, the smallest bandwidth from which on
    every larger bandwidth swept reaches 90% of the baseline's performance (NaN: none does)."""
    import numpy as np
    import pandas as pd

    by = facets(meta) + [GPN]
    m = mean_speedup(at_baseline_except(sp, meta, [GPN, BANDWIDTH]), by + [BANDWIDTH])
    out = []
    for key, g in m.groupby(by + ["app", "ranks"], sort=True):
        g = g.sort_values(BANDWIDTH)
        ok = (g["speedup"] >= TARGET).to_numpy()
        # Seed 003 reads the smallest sufficient bandwidth; a bump above 90% below a dip is not one.
        tail = np.logical_and.accumulate(ok[::-1])[::-1]
        need = g[BANDWIDTH].to_numpy()[tail][0] if tail.any() else float("nan")
        out.append(dict(zip(by + ["app", "ranks"], key, strict=True), min_bandwidth_scale=need,
                        swept_max=g[BANDWIDTH].max()))
    return pd.DataFrame(out)


def bandwidth_label(scale: float, swept_max: float | None = None) -> str:
    """Seed 003's notation: x/16 … x … 16x; above the sweep, '> 16x'."""
    import math

    if scale != scale:  # NaN: no swept bandwidth reaches the target
        return f"> {bandwidth_label(swept_max)}" if swept_max is not None else "none"
    if scale == 1:
        return "x"
    if scale < 1 and abs(1 / scale - round(1 / scale)) < 1e-9:
        return f"x/{round(1 / scale)}"
    return f"{scale:g}x" if not math.isclose(scale, round(scale)) else f"{round(scale)}x"
