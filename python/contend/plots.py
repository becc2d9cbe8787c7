"""Pictures: the transfer timeline (Gantt chart) and the machine diagram."""

from __future__ import annotations

import math
import os
import re
import textwrap
from collections.abc import Iterable
from typing import Any

import matplotlib

matplotlib.use("Agg")  # files only; never needs a display
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import FancyBboxPatch  # noqa: E402

from contend.output import replacing  # noqa: E402
from contend.units import time_unit  # noqa: E402

KIND_COLOURS = {
    "gpu": "#76b900",
    "pcie_switch": "#4e79a7",
    "root_complex": "#e15759",
    "nic": "#f28e2b",
    "host_memory": "#9c755f",
    "nvswitch": "#b07aa1",
}


def save(fig: Any, path: str | os.PathLike, **kwargs: Any) -> None:
    """Save a figure whole or not at all (``contend.output.replacing``); the format follows the name."""
    with replacing(path) as tmp:
        fig.savefig(tmp, **kwargs)


# How far a link outside the trees bends: its control point lies ARC_BEND of its length off its
# middle, so its apex ARC_BEND / 2.
ARC_BEND = 0.25
# A PCIe link closing a cycle (switch partitions): its own colour, not a device's.
CYCLE_COLOUR = "#59a14f"
# Links drawn as tree edges in the machine diagram: colour and width.
LINK_STYLES = {"pcie": ("0.45", 1.5), "memory": ("#9c755f", 1.0), "fabric": ("#e15759", 1.0)}


def timeline(raw: dict[str, Any], path: str | os.PathLike, title: str | None = None) -> None:
    """One bar per transfer, split into its phases, shaded and labelled by its share of the bandwidth."""
    from contend.api import phase_rows

    if not raw.get("phases"):
        raise ValueError("timeline needs every phase: simulate with phases=True (the CLI's --timeline does)")
    transfers = raw["transfers"]
    n = len(transfers["name"])
    makespan = raw["summary"]["makespan_s"]
    fig, ax = plt.subplots(figsize=(10, 1.2 + 0.45 * n))
    cmap = plt.get_cmap("viridis")
    unit, scale = time_unit(makespan)
    for x in sorted(set(raw["phases"]["start_s"])):
        ax.axvline(x * scale, color="0.8", lw=0.8, ls="--", zorder=0)
    rows = phase_rows(raw)
    for t, t0, t1, share in zip(rows["transfer"], rows["start_s"], rows["end_s"], rows["share"], strict=True):
        x0, x1 = t0 * scale, t1 * scale
        ax.barh(t, x1 - x0, left=x0, height=0.6, color=cmap(0.15 + 0.8 * min(share, 1.0)), edgecolor="white", lw=0.6)
        if (x1 - x0) > 0.06 * makespan * scale:
            ax.text((x0 + x1) / 2, t, f"{share:.3g}", ha="center", va="center", fontsize=8,
                    color="white" if share < 0.6 else "black")
    for t, finish in enumerate(transfers["finish_s"]):
        ax.text(finish * scale, t, f"  {finish * scale:.4g} {unit}", va="center", fontsize=8)
    labels = [transfer_label({k: transfers[k][t] for k in ("name", "src", "dst")}) for t in range(n)]
    ax.set_yticks(range(n))
    ax.set_yticklabels(labels)
    ax.invert_yaxis()
    ax.set_xlabel(f"time ({unit})")
    ax.set_xlim(0, makespan * scale * 1.15)
    # sc16's two parameters, where they are the model's; maxmin and packet have neither (their title read "()").
    params = ", ".join(f"{k}={v}" for k, v in raw["params"].items() if k in ("tau", "bandwidth"))
    model = f"{raw['model']} ({params})" if params else raw["model"]
    ax.set_title(title or f"{raw['machine']} — model {model}; labels: share of bandwidth per phase", fontsize=10)
    ax.grid(axis="x", color="0.92")
    ax.set_axisbelow(True)
    fig.tight_layout()
    save(fig, path, dpi=130)
    plt.close(fig)


def transfer_label(t: dict[str, Any]) -> str:
    pair = f"{t['src']}→{t['dst']}"
    return pair if t["name"].replace("->", "→").startswith(pair) else f"{t['name']}: {pair}"


SOCKET_LINKS = ("qpi", "upi", "xgmi")
# Links drawn as arcs above the trees: a socket link must not look like NVLink (a tester read a
# two-socket PCIe box's UPI as a GPU link).
ARC_GROUPS = {**{k: "socket" for k in SOCKET_LINKS}, "nvlink": "nvlink"}
ARC_STYLES = {"socket": ("#1f9eaa", "-", 2.2), "nvlink": ("#b07aa1", "--", 1.5), "other": ("0.35", ":", 1.5)}
ARC_NAMES = {"socket": "socket link (QPI/UPI/xGMI)", "nvlink": "NVLink", "other": "other links"}


def arc_style(kind: str) -> tuple[str, str, float]:
    """Colour, line style and width of a link drawn as an arc, by its kind's group."""
    return ARC_STYLES[ARC_GROUPS.get(kind, "other")]


def socket_roots(graph: dict[str, Any], kind: dict[str, str]) -> list[str]:
    """The root complex at the top of each group joined by the socket fabric: the group's centre
    (a socket hub above its NUMA nodes, a socket above its host bridges), one on a socket link
    where several are."""
    fabric: dict[str, list[str]] = {d: [] for d, k in kind.items() if k == "root_complex"}
    for l in graph["links"]:
        if l["kind"] == "fabric" and l["a"] in fabric and l["b"] in fabric:
            fabric[l["a"]].append(l["b"])
            fabric[l["b"]].append(l["a"])
    socket = {e for l in graph["links"] if l["kind"] in SOCKET_LINKS for e in (l["a"], l["b"])}

    def distances(start: str) -> dict[str, int]:
        far, queue = {start: 0}, [start]
        for v in queue:  # breadth first: the list grows as it is read
            for w in fabric[v]:
                if w not in far:
                    far[w] = far[v] + 1
                    queue.append(w)
        return far

    roots, seen = [], set()
    for d in fabric:
        if d in seen:
            continue
        group = distances(d)
        seen.update(group)
        roots.append(min(group, key=lambda v: (max(distances(v).values()), v not in socket)))
    return roots


def machine_diagram(graph: dict[str, Any], path: str | os.PathLike) -> None:
    """The PCIe trees drawn top-down from each socket (a socket's host bridges, NUMA nodes and
    memory hang under it on the socket fabric); links outside the trees dashed."""
    devices = [d["name"] for d in graph["devices"]]
    kind = {d["name"]: d["kind"] for d in graph["devices"]}
    acs = {d["name"] for d in graph["devices"] if d.get("acs_redirect")}
    tree_kinds = ("pcie", "memory", "fabric")
    tree = [l for l in graph["links"] if l["kind"] in tree_kinds and not l["closes_cycle"]]
    cycle = [l for l in graph["links"] if l["closes_cycle"]]
    adj: dict[str, list[str]] = {d: [] for d in devices}
    for l in tree:
        adj[l["a"]].append(l["b"])
        adj[l["b"]].append(l["a"])
    roots = socket_roots(graph, kind)
    roots += [d for d in devices if kind[d] == "root_complex" and d not in roots]
    roots += [d for d in devices if not adj[d] and kind[d] != "root_complex"]
    pos: dict[str, tuple[float, float]] = {}
    children: dict[str, list[str]] = {}
    seen: set[str] = set()
    # Then any part of the machine no root reaches (devices joined only to each other).
    roots += [d for d in devices if d not in roots]
    for r in roots:
        if r in seen:
            continue
        seen.add(r)
        stack = [r]
        while stack:
            v = stack.pop()
            children[v] = [w for w in adj[v] if w not in seen]
            seen.update(children[v])
            stack.extend(children[v])
    next_x = [0.0]

    def place(v: str, depth: int) -> float:
        kids = children.get(v, [])
        if not kids:
            x = next_x[0]
            next_x[0] += 1.0
        else:
            xs = [place(w, depth + 1) for w in kids]
            x = sum(xs) / len(xs)
        pos[v] = (x, -depth)
        return x

    for r in roots:
        if r not in pos:
            place(r, 0)
            next_x[0] += 0.5
    # A tree link is one the layout used; the others (a fabric ring, say) are drawn dashed.
    used = {frozenset((v, w)) for v, kids in children.items() for w in kids}

    def in_tree(l: dict[str, Any]) -> bool:
        return l["kind"] in tree_kinds and (l["kind"] != "fabric" or frozenset((l["a"], l["b"])) in used)

    other = [l for l in graph["links"] if not in_tree(l) and not l["closes_cycle"]]
    width = max(6.0, 0.9 * next_x[0])
    depth = max(1, int(-min(y for _, y in pos.values())) + 1)

    def arc(l: dict[str, Any]) -> tuple[list[float], list[float]]:
        """A quadratic Bézier in data units from the left end, bulging up (a vertical link: to the
        left), clear of the trees below and the legend."""
        (xa, ya), (xb, yb) = sorted((pos[l["a"]], pos[l["b"]]))
        cx, cy = (xa + xb) / 2 - ARC_BEND * (yb - ya), (ya + yb) / 2 + ARC_BEND * (xb - xa)
        ts = [k / 24 for k in range(25)]
        return ([(1 - t) ** 2 * xa + 2 * t * (1 - t) * cx + t * t * xb for t in ts],
                [(1 - t) ** 2 * ya + 2 * t * (1 - t) * cy + t * t * yb for t in ts])

    arcs = [(l, *arc(l)) for l in other]
    top = max([0.9] + [max(ys) + 0.45 for _, _, ys in arcs])
    bottom = -depth + 0.4
    fig, ax = plt.subplots(figsize=(width, 0.55 + 1.3 * (top - bottom)))
    for l in filter(in_tree, tree):
        (xa, ya), (xb, yb) = pos[l["a"]], pos[l["b"]]
        colour, lw = LINK_STYLES[l["kind"]]
        ax.plot([xa, xb], [ya, yb], color=colour, lw=lw, zorder=1)
    for l in cycle:  # PCIe links the tree layout does not use: drawn, and marked as closing a cycle
        (xa, ya), (xb, yb) = pos[l["a"]], pos[l["b"]]
        ax.annotate("", xy=(xb, yb), xytext=(xa, ya),
                    arrowprops=dict(arrowstyle="-", ls=":", color=CYCLE_COLOUR, lw=1.8, connectionstyle="arc3,rad=0.3"))
        ax.text((xa + xb) / 2, (ya + yb) / 2 - 0.3, f"⟲ {l['label']}", ha="center", fontsize=7, color=CYCLE_COLOUR)
    labelled: set[str] = set()
    for l, xs, ys in arcs:
        colour, ls, lw = arc_style(l["kind"])
        ax.plot(xs, ys, ls=ls, color=colour, lw=lw, zorder=1)
        text = f"{l['label']} {l['bandwidth_bps'] / 1e9:.1f} GB/s"
        if text not in labelled:  # a mesh or a switch star repeats one label many times
            labelled.add(text)
            # On a white ground above the lines: the label sits at its arc's apex, where other arcs cross.
            ax.text(xs[12], ys[12] + 0.06, text, ha="center", fontsize=7, color=colour, zorder=3,
                    bbox={"fc": "white", "ec": "none", "pad": 0.5, "alpha": 0.85})
    for v, (x, y) in pos.items():
        box = FancyBboxPatch((x - 0.4, y - 0.18), 0.8, 0.36, boxstyle="round,pad=0.02",
                             fc=KIND_COLOURS.get(kind[v], "0.7"), ec="black", lw=0.6, zorder=2)
        ax.add_patch(box)
        ax.text(x, y, v, ha="center", va="center", fontsize=7, color="white", zorder=3, weight="bold")
        if v in acs:  # peer traffic through this switch goes up to the root complex and back
            ax.text(x, y + 0.27, "ACS redirect ↑", ha="center", fontsize=6, color="#e15759", zorder=3)
    ax.set_xlim(-0.7, next_x[0])
    ax.set_ylim(bottom, top)
    ax.axis("off")
    title = f"{graph['name']}: {graph['description']}" if graph["description"] else graph["name"]
    ax.set_title(textwrap.fill(title, width=int(14 * width)), fontsize=9)
    handles = [plt.Rectangle((0, 0), 1, 1, fc=c) for c in KIND_COLOURS.values()]
    names = ["GPU", "PCIe switch", "root complex", "NIC", "host memory", "NVSwitch"]
    for k, name in (("pcie", "PCIe"), ("memory", "memory"), ("fabric", "socket fabric")):
        handles.append(plt.Line2D([], [], color=LINK_STYLES[k][0], lw=LINK_STYLES[k][1]))
        names.append(name)
    for group in dict.fromkeys(ARC_GROUPS.get(l["kind"], "other") for l, _, _ in arcs):
        colour, ls, lw = ARC_STYLES[group]
        handles.append(plt.Line2D([], [], color=colour, lw=lw, ls=ls))
        names.append(ARC_NAMES[group])
    ax.legend(handles, names, loc="upper center", fontsize=7, ncol=10 if width > 16 else 5 if width > 9 else 3,
              frameon=False, bbox_to_anchor=(0.5, 0.0))
    fig.tight_layout()
    save(fig, path, dpi=130)
    plt.close(fig)


def schedule_times(report: dict[str, Any], path: str | os.PathLike) -> None:
    """The sorted makespans of every order (the slides' "congestion graphs sorted by elapsed time")
    and their histogram."""
    times = report.get("times_s")
    if not times:
        raise ValueError("schedule_times needs the makespan of every order: run an exhaustive search")
    unit, scale = time_unit(report["best_s"])
    t = [x * scale for x in times]
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2), gridspec_kw={"width_ratios": [3, 2]})
    left.plot(range(len(t)), t, color="#4e79a7", lw=1.4)
    marks = (("best", report["best_s"], "#59a14f"), ("median", report.get("median_s"), "#f28e2b"),
             ("identity order", report["identity_s"], "#e15759"))
    for label, value, colour in marks:
        if value is not None:
            left.axhline(value * scale, color=colour, ls="--", lw=1, label=f"{label} {value * scale:.4g} {unit}")
            right.axvline(value * scale, color=colour, ls="--", lw=1)
    left.set_xlabel(f"orders, sorted by predicted time (all {len(t):,})")
    left.set_ylabel(f"makespan ({unit})")
    left.legend(fontsize=8, loc="upper left")
    left.grid(color="0.92")
    left.set_axisbelow(True)
    right.hist(t, bins=min(60, max(10, len(set(t)))), color="#4e79a7", edgecolor="white")
    right.set_xlabel(f"makespan ({unit})")
    right.set_ylabel("orders")
    right.grid(color="0.92")
    right.set_axisbelow(True)
    fig.suptitle(
        f"{report['machine']}: {report['messages']} halo messages, {report['semantics']} semantics, "
        f"model {report['model']} (T_msg = {report['t_msg_s'] * scale:.4g} {unit})",
        fontsize=10,
    )
    fig.tight_layout()
    save(fig, path, dpi=130)
    plt.close(fig)


def _tier(name: str, kind: str) -> str:
    """Where a device belongs in a cluster picture: its node, or its kind of switch."""
    if re.match(r"n\d+\.", name):
        return "nodes"
    m = re.match(r"g(\d+)r\d+$", name)
    if m:
        return f"group {m.group(1)}"
    return re.sub(r"\d+$", "", name) or kind


def tier_order(tiers: Iterable[str], pairs: Iterable[tuple[str, str]]) -> list[str]:
    """A cluster's tiers top to bottom: by their hops from the nodes, farthest on top (fat-tree: core, aggregate,
    leaf; a rail-optimised fabric: spines, rails), whatever its switches are named; the nodes last."""
    pairs = list(pairs)
    hops = {"nodes": 0}
    while True:
        reached = {y for a, b in pairs for x, y in ((a, b), (b, a)) if x in hops and y not in hops}
        if not reached:
            break
        far = max(hops.values()) + 1
        hops.update({t: far for t in reached})
    return sorted((t for t in tiers if t != "nodes"), key=lambda t: (-hops.get(t, len(hops)), t)) + ["nodes"]


def fabric_diagram(graph: dict[str, Any], path: str | os.PathLike, utilisation: dict[str, float] | None = None) -> None:
    """A cluster drawn by tiers (fat-tree: core, aggregate, leaf, nodes) or by groups (dragonfly),
    readable at thousands of endpoints: one box per tier or group, one line per pair of them,
    as wide as their links are many, coloured by the busiest link's peak utilisation if given."""
    tier = {d["name"]: _tier(d["name"], d["kind"]) for d in graph["devices"]}
    members: dict[str, int] = {}
    for d in graph["devices"]:
        if d["kind"] == "switch":
            members[tier[d["name"]]] = members.get(tier[d["name"]], 0) + 1
    members["nodes"] = len({d["name"].split(".")[0] for d in graph["devices"] if tier[d["name"]] == "nodes"})
    # Nodes hanging off each tier or group (their NIC's switch).
    hosted: dict[str, set[str]] = {}
    for link in graph["links"]:
        ta, tb = tier[link["a"]], tier[link["b"]]
        if link["kind"] == "network" and (ta == "nodes") != (tb == "nodes"):
            node, switch_tier = (link["a"], tb) if ta == "nodes" else (link["b"], ta)
            hosted.setdefault(switch_tier, set()).add(node.split(".")[0])
    pairs: dict[tuple[str, str], list[Any]] = {}
    for link in graph["links"]:
        if link["kind"] != "network":
            continue
        a, b = sorted((tier[link["a"]], tier[link["b"]]))
        entry = pairs.setdefault((a, b), [0, 0.0, 0.0])
        entry[0] += 1
        entry[1] += link["bandwidth_bps"]
        if utilisation:
            for key in (f"{link['a']}→{link['b']}", f"{link['b']}→{link['a']}"):
                entry[2] = max(entry[2], utilisation.get(key, 0.0))
    groups = sorted((t for t in members if t.startswith("group ")), key=lambda t: int(t.split()[1]))
    fig, ax = plt.subplots(figsize=(9, 7))
    if groups:
        angle = {g: math.pi - 2 * math.pi * k / len(groups) for k, g in enumerate(groups)}
        pos = {g: (math.cos(a), math.sin(a)) for g, a in angle.items()}
    else:
        order = tier_order(members, pairs)
        pos = {t: (0.0, float(len(order) - 1 - k)) for k, t in enumerate(order)}
    cmap = plt.get_cmap("plasma")
    most = max((e[0] for e in pairs.values()), default=1)
    for (a, b), (count, bw, util) in sorted(pairs.items()):
        if a == b or (groups and "nodes" in (a, b)):
            continue
        (x0, y0), (x1, y1) = pos[a], pos[b]
        colour = cmap(util) if utilisation else "0.45"
        ax.plot([x0, x1], [y0, y1], color=colour, lw=0.8 + 5 * count / most, alpha=0.8, zorder=1)
        if not groups or len(groups) <= 4:
            label = f"{bw / 1e9:,.0f} GB/s each way" + (f", peak {util:.0%}" if utilisation else "")
            at = 0.5 if not groups else 0.35
            ax.text(x0 + at * (x1 - x0) + 0.04, y0 + at * (y1 - y0), label, fontsize=9, va="center")
    for t, (x, y) in pos.items():
        if groups and t == "nodes":
            continue
        what = "nodes" if t == "nodes" else "switches"
        n = members[t]
        inner = [u for (a, b), (_, _, u) in pairs.items() if a == b == t]
        extra = f", {len(hosted[t])} nodes" if groups and t in hosted else ""
        extra += f"\nlocal links: peak {max(inner):.0%}" if utilisation and inner else ""
        ax.text(x, y, f"{t}\n{n} {what}{extra}", ha="center", va="center", fontsize=9,
                bbox={"boxstyle": "round", "fc": "#eef3f8" if t != "nodes" else "#e8f5e1", "ec": "0.5"}, zorder=2)
    if utilisation:
        sm = plt.cm.ScalarMappable(cmap=cmap, norm=plt.Normalize(0, 1))
        fig.colorbar(sm, ax=ax, fraction=0.04, label="busiest link's peak utilisation")
    ax.set_axis_off()
    ax.margins(0.25)
    if not groups:
        # One column of tiers: a fixed width, so that a label's offset from its line is small on the page.
        ax.set_xlim(-1.0, 1.0)
    ax.set_title(textwrap.fill(f"{graph['name']}: {graph['description']}", width=110), fontsize=9)
    fig.tight_layout()
    save(fig, path, dpi=120)
    plt.close(fig)


def job_bars(jobs: dict[str, list[Any]], path: str | os.PathLike, title: str) -> None:
    """Each job's run time as a bar: its mean computation per rank (hatched: the part during which
    messages of the rank were in flight), and the rest (communication and waiting)."""
    n = len(jobs["job"])
    unit, scale = time_unit(max(jobs["run_time_s"], default=0.0))
    labels = [f"{j}: {a} ({r})" for j, a, r in zip(jobs["job"], jobs["app"], jobs["ranks"], strict=True)]
    compute = [c * scale for c in jobs["compute_s"]]
    overlap = [o * scale for o in jobs["overlap_s"]]
    alone = [c - o for c, o in zip(compute, overlap, strict=True)]
    comm = [c * scale for c in jobs["comm_s"]]
    fig, ax = plt.subplots(figsize=(8, max(2.5, 0.35 * n + 1.5)))
    ax.barh(range(n), alone, color="#76b900", label="computation (mean per rank)")
    if any(o > 0 for o in overlap):  # a legend entry only for what the chart shows
        ax.barh(range(n), overlap, left=alone, color="#76b900", hatch="///", edgecolor="white", lw=0,
                label="of which with messages in flight")
    ax.barh(range(n), comm, left=compute, color="#4e79a7", label="communication and waiting")
    # Each run time written at its bar's end: a job of a few µs beside one of 200 ms has no visible bar.
    for k, (c, m) in enumerate(zip(compute, comm, strict=True)):
        ax.text(c + m, k, f" {c + m:.3g} {unit}", va="center", fontsize=7)
    ax.set_yticks(range(n), labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel(f"run time ({unit})")
    # Two columns: long job labels push the axes right, and three entries would run off the page.
    ax.legend(fontsize=8, loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=2, frameon=False)
    ax.grid(axis="x", color="0.92")
    ax.set_axisbelow(True)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    save(fig, path, dpi=130, bbox_inches="tight")
    plt.close(fig)


METHOD_COLOURS = {"pack": "#4e79a7", "zero-copy": "#59a14f", "staged": "#e15759"}


def crossover(sweep: dict[str, Any], title: str, path: str | os.PathLike) -> None:
    """Each method's predicted time against the message size (log-log), the winner's band shaded below."""
    fig, ax = plt.subplots(figsize=(8, 4.6))
    sizes = sweep["bytes"]
    every = [t for col in sweep["times"].values() for t in col if t is not None]
    unit, scale = time_unit(min(every))
    for method, col in sweep["times"].items():
        pts = [(s, t * scale) for s, t in zip(sizes, col, strict=True) if t is not None]
        if pts:
            ax.plot(*zip(*pts, strict=True), marker="o", ms=3, lw=1.6, color=METHOD_COLOURS.get(method), label=method)
    # Where the winner changes: a vertical mark between the two sizes.
    for k in range(1, len(sizes)):
        if sweep["winner"][k] != sweep["winner"][k - 1]:
            x = math.sqrt(sizes[k] * sizes[k - 1])
            ax.axvline(x, color="0.5", ls=":", lw=1)
            ax.annotate(f"{sweep['winner'][k - 1]} wins  |  {sweep['winner'][k]} wins", (x, 0.96),
                        xycoords=("data", "axes fraction"), fontsize=7, ha="center", va="top",
                        bbox={"fc": "white", "ec": "0.7", "lw": 0.5, "alpha": 0.9})
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("message size (bytes)")
    ax.set_ylabel(f"predicted time ({unit})")
    ax.grid(color="0.92", which="both")
    ax.set_axisbelow(True)
    ax.legend(fontsize=8, loc="lower right")
    ax.set_title(f"{title}: each method alone on the path", fontsize=9)
    fig.tight_layout()
    save(fig, path, dpi=130)
    plt.close(fig)


def stencil_gain(report: dict[str, Any], path: str | os.PathLike) -> None:
    """Seed 004's weak-scaling picture: the gain of stream-ordered communication against the local lattice,
    and both iteration times."""
    its = report["iterations"]
    lat = [i["lattice"] for i in its]
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    left.plot(lat, [i["gain"] * 100 for i in its], marker="o", color="#59a14f")
    left.set_xscale("log", base=2)
    left.set_xlabel("local lattice (points per side)")
    left.set_ylabel("gain of stream-ordered (%)")
    left.grid(color="0.92")
    right.plot(lat, [i["cpu_posted_s"] * 1e6 for i in its], marker="o", color="#e15759", label="CPU-posted")
    right.plot(lat, [i["stream_ordered_s"] * 1e6 for i in its], marker="o", color="#4e79a7", label="stream-ordered")
    right.set_xscale("log", base=2)
    right.set_yscale("log")
    right.set_xlabel("local lattice (points per side)")
    right.set_ylabel("one iteration (µs)")
    right.legend(fontsize=8)
    right.grid(color="0.92", which="both")
    fig.suptitle("2D stencil, weak scaling: CPU-posted MPI against stream-ordered communication (seed 004)",
                 fontsize=10)
    fig.tight_layout()
    save(fig, path, dpi=130)
    plt.close(fig)


# NCCL's algorithm/protocol pairs: one colour per protocol, one marker per algorithm.
PROTO_COLOURS = {"LL": "#e15759", "LL128": "#f28e2b", "Simple": "#4e79a7"}
ALGO_MARKERS = {"ring": "o", "tree": "^", "nvls": "D", "nvls_tree": "v", "pat": "P", "p2p": "s"}


def nccl_busbw(report: dict[str, Any], path: str | os.PathLike) -> None:
    """busbw against the size (log x): NCCL's pick per size, marked by its algorithm and protocol, and the fastest
    choice contend ran beside it (from the report's explain: every algorithm and protocol run on the executor).
    Below it the time per call on log axes, where the small sizes a linear busbw axis flattens show their latency."""
    rows = [r for r in report["rows"] if r["time_us"] > 0]
    if not rows:
        raise ValueError("nothing to plot: every row has time 0")
    n = report["ranks"]
    factor = rows[0]["busbw"] / rows[0]["algbw"] if rows[0]["algbw"] > 0 else 1.0
    fig, (ax, at) = plt.subplots(2, 1, figsize=(9, 7.2), sharex=True, gridspec_kw={"height_ratios": [3, 2]})
    sizes = [r["size"] for r in rows]
    ax.plot(sizes, [r["busbw"] for r in rows], color="0.35", lw=1.4, zorder=1, label="NCCL's pick")
    at.plot(sizes, [r["time_us"] for r in rows], color="0.35", lw=1.4, zorder=1)
    seen: set[tuple[str, str, str]] = set()
    names = report.get("algo_names", {})  # NCCL's name of each algorithm id, from the report

    def mark(x: float, y: float, t: float, algo: str, proto: str, who: str, filled: bool) -> None:
        key = (who, algo, proto)
        label = f"{who}: {names.get(algo, algo)}/{proto}" if key not in seen else None
        seen.add(key)
        colour = PROTO_COLOURS.get(proto, "0.5")
        style = dict(marker=ALGO_MARKERS.get(algo, "s"), s=38 if filled else 70, zorder=3 if filled else 2,
                     facecolors=colour if filled else "none", edgecolors=colour, linewidths=1.4)
        ax.scatter([x], [y], label=label, **style)
        at.scatter([x], [t], **style)

    best_x, best_y, best_t = [], [], []
    differs = False  # whether any size's fastest is not NCCL's pick: else the dashed line would only hide under it
    for r in rows:
        mark(r["size"], r["busbw"], r["time_us"], r["algo"], r["proto"], "NCCL picks", True)
        e = r.get("explain")
        if e:
            fastest = min(e["alternatives"], key=lambda a: a["time_us"])
            y = r["size"] / (fastest["time_us"] * 1e3) * factor
            best_x.append(r["size"])
            best_y.append(y)
            best_t.append(fastest["time_us"])
            if (fastest["algo"], fastest["proto"]) != (r["algo"], r["proto"]):
                differs = True
                mark(r["size"], y, fastest["time_us"], fastest["algo"], fastest["proto"], "fastest contend ran", False)
            if e["pick_slower_pct"] > 10:
                # Upright above the higher of the two markers, so neighbouring sizes' labels do not overlap.
                ax.annotate(f"★ {e['pick_slower_pct']:.0f}%", (r["size"], max(y, r["busbw"])),
                            textcoords="offset points", xytext=(0, 8), fontsize=7, ha="center", va="bottom",
                            rotation=90, color="0.25")
    if differs:
        ax.plot(best_x, best_y, color="0.6", lw=1, ls="--", zorder=0, label="fastest contend ran")
        at.plot(best_x, best_t, color="0.6", lw=1, ls="--", zorder=0)
    at.set_xscale("log", base=2)
    units = ["B", "KiB", "MiB", "GiB", "TiB"]
    ticks = [k for k in range(0, 50, 5) if sizes[0] <= 1 << k <= sizes[-1]]
    if len(ticks) < 2:  # a short range (-b 64M -e 512M) holds at most one of those: every power of 2
        ticks = [k for k in range(0, 50) if sizes[0] <= 1 << k <= sizes[-1]]
    at.set_xticks([1 << k for k in ticks], [f"{1 << (k % 10)} {units[k // 10]}" for k in ticks])
    at.set_xlabel("size")
    at.set_yscale("log")
    at.set_ylabel("time per call (µs)")
    ax.set_ylabel("busbw (GB/s)")
    ax.set_ylim(0, max(max(r["busbw"] for r in rows), max(best_y, default=0.0)) * 1.18)  # room for the ★ labels
    for a in (ax, at):
        a.grid(color="0.92", which="both")
        a.set_axisbelow(True)
    ax.legend(fontsize=7, loc="upper left")
    ax.set_title(f"{report['op']}_perf on {report['machine']}: {n} ranks, {report['nodes']} node(s), "
                 f"model {report['model']} (NCCL {report['nccl_version']}'s choice); ★ pick >10% slower", fontsize=9)
    fig.tight_layout()
    save(fig, path, dpi=130)
    plt.close(fig)
