"""`contend report`: the tables (Markdown, CSV) and charts (PNG) of a study, from its Parquet files alone."""

from __future__ import annotations

import itertools
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from contend.output import io_error, write_text
from contend.study import dataset, figures
from contend.study.speedup import (
    BANDWIDTH,
    GPN,
    NIC,
    at_baseline_except,
    bandwidth_label,
    facets,
    groups,
    mean_speedup,
    min_bandwidth,
    speedups,
)

if TYPE_CHECKING:
    import pandas as pd


def write_report(results: str | os.PathLike, out: str | os.PathLike) -> list[Path]:
    df, meta = dataset.read(results)
    sp = speedups(df, meta)
    out = Path(out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise io_error(out, e, "--output") from None
    written: list[Path] = []
    md = [f"# {meta['name']}: speed-ups against the baseline",
          "", "Baseline: " + ", ".join(f"{k} = {v}" for k, v in meta["baseline"].items()) + ".",
          f"{df['scenario_hash'].nunique()} points, {len(df)} job runs; a speed-up is the mean over every job "
          "of an application and size (all repetitions) of its baseline run time over its run time.", ""]
    fs = facets(meta)
    per_axis = [g[0] for g in groups(meta) if any(k in meta["baseline"] for k in g)]
    for facet_values, part in _by_facet(sp, fs):
        tag = "-".join(str(v) for v in facet_values) or "all"
        where = ", ".join(f"{k} = {v}" for k, v in zip(fs, facet_values, strict=True))
        for axis in per_axis:  # Figures 5-6 (and the same for every other baseline axis)
            m = mean_speedup(at_baseline_except(part, meta, [axis]), [axis])
            written.append(_png(out / f"speedup-{axis}-{tag}.png", figures.bars_per_axis, m, axis,
                                f"speed-up against {axis} ({_held(where)})"))
            md += _axis_table(m, axis, where)
        if GPN in per_axis and BANDWIDTH in per_axis:  # Figure 7 and Table II
            m = mean_speedup(at_baseline_except(part, meta, [GPN, BANDWIDTH]), [GPN, BANDWIDTH])
            for g, mg in m.groupby(GPN, sort=True):
                if g != meta["baseline"][GPN]:
                    written.append(_png(out / f"bandwidth-{tag}-{g}gpn.png", figures.bandwidth_lines, mg, BANDWIDTH,
                                        f"bandwidth sweep at {g} GPUs per node ({_held(where)})"))
            md += _table_ii(part, meta, out, tag, where, written)
        if GPN in per_axis and NIC in per_axis:  # Figures 8-11
            m = mean_speedup(at_baseline_except(part, meta, [GPN, NIC]), [GPN, NIC])
            written.append(_png(out / f"nic-{tag}.png", figures.nic_bars, m, NIC, GPN,
                                f"NIC scheduling ({_held(where)})"))
            md += _nic_table(m, where)
    all_means = mean_speedup(sp, [k for g in groups(meta) for k in g])
    written.append(_csv(all_means, out / "speedups.csv"))
    path = out / "report.md"
    write_text(path, "\n".join(md) + "\n")
    written.append(path)
    return written


def _held(where: str) -> str:
    """What a chart's points are: the swept axes vary, every other axis stays at its baseline value."""
    return "other axes at the baseline" + (f"; {where}" if where else "")


def _by_facet(sp: pd.DataFrame, fs: list[str]):
    if not fs:
        yield (), sp
        return
    for key, part in sp.groupby(fs, sort=True):
        yield (key if isinstance(key, tuple) else (key,)), part


def _png(path: Path, draw, *args: Any) -> Path:
    draw(*args, str(path))
    return path


def _csv(frame: pd.DataFrame, path: Path) -> Path:
    write_text(path, frame.to_csv(index=False, float_format="%.6g"))
    return path


def _table_ii(part: pd.DataFrame, meta: dict[str, Any], out: Path, tag: str, where: str,
              written: list[Path]) -> list[str]:
    t = min_bandwidth(part, meta)
    t = t[t[GPN] != meta["baseline"][GPN]]
    if t.empty:
        return []
    t = t.assign(label=[bandwidth_label(s, mx) for s, mx in zip(t["min_bandwidth_scale"], t["swept_max"],
                                                                 strict=True)])
    written.append(_csv(t, out / f"table-ii-{tag}.csv"))
    wide = t.pivot_table(index="app", columns=["ranks", GPN], values="label", aggfunc="first")
    wide.columns = [f"{r} ranks, {g} GPUs/node" for r, g in wide.columns]
    wide = wide.fillna("")
    title = f"Table II: minimum bandwidth reaching 90% of the baseline ({where or 'all points'})"
    written.append(_png(out / f"table-ii-{tag}.png", figures.table_image, wide, title))
    return [f"## {title}", "", _markdown(wide), ""]


def _axis_table(m: pd.DataFrame, axis: str, where: str) -> list[str]:
    """The numbers of a speed-up chart, for any study: a row per application and size, a column per value."""
    wide = m.pivot_table(index=["app", "ranks"], columns=axis, values="speedup", aggfunc="first")
    wide.columns = [f"{axis} = {v}" for v in wide.columns]
    wide.index = [f"{a}, {r}" for a, r in wide.index]
    wide = wide.map(lambda v: "" if v != v else f"{v:.3f}")
    return [f"## Speed-up against {axis} ({_held(where)})", "", _markdown(wide), ""]


def _nic_table(m: pd.DataFrame, where: str) -> list[str]:
    wide = m.pivot_table(index=["app", "ranks"], columns=[GPN, NIC], values="speedup", aggfunc="first")
    wide = wide[sorted(wide.columns, key=lambda c: (c[0], figures.policy_order(c[1])))]  # fcfs, rr-2, rr-4, rr
    wide.columns = [f"{g} GPU/node {p}" for g, p in wide.columns]
    wide.index = [f"{a}, {r}" for a, r in wide.index]
    wide = wide.map(lambda v: "" if v != v else f"{v:.2f}")
    return [f"## NIC scheduling speed-ups ({_held(where)})", "", _markdown(wide), ""]


def _markdown(wide: pd.DataFrame) -> str:
    head = "| | " + " | ".join(str(c) for c in wide.columns) + " |"
    rule = "|---" * (len(wide.columns) + 1) + "|"
    body = ["| " + " | ".join(itertools.chain([str(i)], (str(v) for v in row))) + " |"
            for i, row in zip(wide.index, wide.to_numpy(), strict=True)]
    return "\n".join([head, rule, *body])
