"""Seed 003's charts from mean speed-ups (contend.study.speedup): bars per application and job size.

Figures 5–6: speed-up against one axis (GPUs per node), a panel per application, a bar per job size.
Figure 7: a bandwidth sweep at a given GPUs per node, a line per application, a panel per job size.
Figures 8–11: NIC policies, a bar per policy, grouped by GPUs per node, a panel per application and job size.
Table II: the minimum bandwidth per application (rows) and job size × GPUs per node (columns).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd


def save(fig: Any, path: str, **kwargs: Any) -> None:
    from contend.plots import save as whole

    whole(fig, path, **kwargs)


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _grid(n: int, cols: int):
    plt = _plt()
    rows = math.ceil(n / cols)
    fig, axes = plt.subplots(rows, cols, figsize=(4.2 * cols + 1.2, 3.0 * rows), squeeze=False, layout="constrained")
    for ax in axes.flat[n:]:
        ax.set_visible(False)
    return fig, list(axes.flat)


def _finish(fig, title: str, path: str, legend_title: str | None = None) -> None:
    # One legend for every panel, beside them: the same colours mean the same thing in each.
    handles, labels = fig.axes[0].get_legend_handles_labels()
    # Beside the panels, halfway down: at the top, a title of two lines ran under it.
    fig.legend(handles, labels, title=legend_title, loc="outside right center", fontsize="small")
    fig.suptitle(title)
    save(fig, path, dpi=110)
    _plt().close(fig)


def _unity(ax) -> None:
    ax.axhline(1.0, color="grey", linewidth=0.8, linestyle="--")
    ax.set_ylabel("speed-up")


def bars_per_axis(m: pd.DataFrame, axis: str, title: str, path: str) -> None:
    """A panel per application: groups of bars along ``axis``, a bar per job size."""
    apps = sorted(m["app"].unique())
    sizes = sorted(m["ranks"].unique())
    xs = sorted(m[axis].unique(), key=policy_order)
    fig, axes = _grid(len(apps), min(3, len(apps)))
    width = 0.8 / max(1, len(sizes))
    for ax, app in zip(axes, apps, strict=False):
        d = m[m["app"] == app]
        for j, size in enumerate(sizes):
            s = d[d["ranks"] == size].set_index(axis)["speedup"]
            ax.bar([i + j * width for i in range(len(xs))], [s.get(x, math.nan) for x in xs], width,
                   label=str(size), color=f"C{j}")
        middles = [i + width * (len(sizes) - 1) / 2 for i in range(len(xs))]
        _group_ticks(ax, middles, [_value_label(axis, x) for x in xs])
        ax.set_xlabel(axis)
        ax.set_title(app)
        _unity(ax)
    _finish(fig, title, path, "ranks")


def _value_label(axis: str, x: Any) -> str:
    """An axis value under its bars: bandwidth in seed 003's notation (x/16 … 16x), as the bandwidth charts
    write it; a number without a trailing .0."""
    from contend.study.speedup import bandwidth_label

    if axis == "bandwidth_scale":
        return bandwidth_label(float(x))
    return f"{x:g}" if isinstance(x, float) else str(x)


def _group_ticks(ax, positions: list[float], labels: list[str]) -> None:
    """Labels under groups of bars, slanted where side by side they would run together (about six characters
    fit under each of nine groups of a 4.2-inch panel)."""
    crowded = len(labels) * max((len(label) for label in labels), default=0) > 54
    ax.set_xticks(positions, labels, rotation=30 if crowded else 0, ha="right" if crowded else "center")


def bandwidth_lines(m: pd.DataFrame, axis: str, title: str, path: str) -> None:
    """A panel per job size: speed-up against bandwidth (log scale), a line per application."""
    from contend.study.speedup import bandwidth_label

    sizes = sorted(m["ranks"].unique())
    fig, axes = _grid(len(sizes), min(3, len(sizes)))
    xs = sorted(m[axis].unique())
    colour = {app: f"C{i}" for i, app in enumerate(sorted(m["app"].unique()))}  # one colour per app in every panel
    for ax, size in zip(axes, sizes, strict=False):
        d = m[m["ranks"] == size]
        for app, g in d.groupby("app", sort=True):
            g = g.sort_values(axis)
            ax.plot(g[axis], g["speedup"], marker="o", color=colour[app])
        ax.set_xscale("log", base=2)
        ax.set_xticks(xs, [bandwidth_label(x) for x in xs], fontsize="small")
        ax.set_xlabel("link bandwidth")
        ax.set_title(f"{size} ranks")
        _unity(ax)
    for app, c in colour.items():  # legend entries in the first panel, whichever apps it shows
        axes[0].plot([], [], marker="o", color=c, label=app)
    _finish(fig, title, path)


def nic_bars(m: pd.DataFrame, policy: str, group: str, title: str, path: str) -> None:
    """A panel per application and job size: bars per NIC policy, grouped by ``group`` (GPUs per node)."""
    pairs = sorted({(a, r) for a, r in zip(m["app"], m["ranks"], strict=True)})
    policies = sorted(m[policy].unique(), key=policy_order)
    gs = sorted(m[group].unique())
    fig, axes = _grid(len(pairs), 4 if len(pairs) >= 4 else len(pairs))
    width = 0.8 / max(1, len(policies))
    for ax, (app, size) in zip(axes, pairs, strict=False):
        d = m[(m["app"] == app) & (m["ranks"] == size)]
        for j, pol in enumerate(policies):
            s = d[d[policy] == pol].set_index(group)["speedup"]
            ax.bar([i + j * width for i in range(len(gs))], [s.get(g, math.nan) for g in gs], width,
                   label=str(pol), color=f"C{j}")
        ax.set_xticks([i + width * (len(policies) - 1) / 2 for i in range(len(gs))], [f"{g} GPU/node" for g in gs])
        ax.set_title(f"{app}, {size} ranks")
        _unity(ax)
    _finish(fig, title, path, "NIC")


def table_image(table: pd.DataFrame, title: str, path: str) -> None:
    """A rendered table (rows: applications), so that Table II reads as a picture too."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(max(7.0, 1.6 + 1.2 * len(table.columns)), 1.0 + 0.3 * (len(table) + 2)))
    ax.axis("off")
    labels = [str(c).replace(", ", "\n") for c in table.columns]
    t = ax.table(cellText=table.to_numpy(), rowLabels=list(table.index), colLabels=labels, loc="center",
                 cellLoc="center")
    t.auto_set_font_size(False)
    t.set_fontsize(9)
    for (row, _), cell in t.get_celld().items():
        if row == 0:
            cell.set_height(cell.get_height() * 2)  # two-line column labels
    fig.suptitle(title, fontsize=10)
    save(fig, path, dpi=110, bbox_inches="tight")
    plt.close(fig)


def policy_order(v):
    """Numbers by value; NIC policies as seed 003 lists them (fcfs, rr-2, rr-4, …, rr); other strings by name."""
    if isinstance(v, str):
        if v == "fcfs":
            return (0, 0, v)
        if v.startswith("rr-") and v[3:].isdigit():
            return (1, int(v[3:]), v)
        if v == "rr":
            return (2, 0, v)
        return (3, 0, v)
    return (0, float(v), "")
