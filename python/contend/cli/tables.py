"""The tables the commands print: rich tables on stdout, one function per report."""

from __future__ import annotations

from fractions import Fraction
from typing import TYPE_CHECKING, Any

from contend import api
from contend.cli.shared import new_table, out, styled
from contend.units import time_unit

if TYPE_CHECKING:
    from contend import results


def fmt_factor(x: float) -> str:
    f = Fraction(x).limit_denominator(100)
    if abs(float(f) - x) < 1e-9 and f.denominator > 1:
        return f"{f.numerator}/{f.denominator}"
    if abs(x - round(x)) < 1e-12:
        return str(int(round(x)))
    return f"{x:.4f}"


TABLE_ROWS = 50


def print_transfers(r: api.Result, given: dict[str, Any] | None = None) -> None:
    """The transfer table; its title names the parameters in force, or only those ``given`` on the
    command line where a caller passes them (maxmin has about 40: the JSON report lists them all)."""
    raw = r.raw
    shown = r.params if given is None else given
    params = ", ".join(f"{k}={v}" for k, v in shown.items()) if shown else "default parameters; --json lists them"
    table = new_table(title=f"{raw['machine']} — {raw['model']} ({params})")
    unit, scale = time_unit(r.makespan_s)
    for col in ("transfer", "src→dst", "size", f"start {unit}", f"finish {unit}", f"duration {unit}", "GB/s", "GiB/s"):
        table.add_column(col, justify="left" if col in ("transfer", "src→dst") else "right")
    t = raw["transfers"]
    n = len(t["name"])
    for i in range(min(n, TABLE_ROWS)):
        table.add_row(
            t["name"][i],
            f"{t['src'][i]}→{t['dst'][i]}",
            human_bytes(t["size_bytes"][i]),
            f"{t['start_s'][i] * scale:.2f}",
            f"{t['finish_s'][i] * scale:.2f}",
            f"{t['duration_s'][i] * scale:.2f}",
            f"{t['bandwidth_bps'][i] / 1e9:.2f}",
            f"{t['bandwidth_bps'][i] / 2**30:.2f}",
        )
    out().print(table)
    if n > TABLE_ROWS:
        out().print(f"… and {n - TABLE_ROWS:,} more transfers (--csv or --json lists every one)")
    print_links(raw)
    print_methods(raw)
    phases = raw.get("phases")
    over = f" over {len(phases['start_s'])} phases" if phases else ""
    out().print(f"makespan {r.makespan_s * scale:.2f} {unit}{over}; {n:,} transfers, "
                f"{human_bytes(raw['summary']['bytes'])}")


def print_phases(raw: dict[str, Any]) -> None:
    """--phases in text: each phase's span, its moving transfers and loaded links, and the slowest share."""
    ph = raw.get("phases")
    if not ph or not ph["start_s"]:
        return
    n = len(ph["start_s"])
    unit, scale = time_unit(max(ph["end_s"]) or 1.0)
    table = new_table(title=f"phases ({n:,}; --json lists every rate and link load)", title_justify="left")
    for col in ("phase", f"start {unit}", f"end {unit}", "moving", "links loaded", "lowest share"):
        table.add_column(col, justify="right")
    for p in range(min(n, TABLE_ROWS)):
        a, b = ph["offset"][p], ph["offset"][p + 1]
        shares = ph["share"][a:b]
        table.add_row(str(p + 1), f"{ph['start_s'][p] * scale:.2f}", f"{ph['end_s'][p] * scale:.2f}", f"{b - a:,}",
                      f"{ph['link_offset'][p + 1] - ph['link_offset'][p]:,}",
                      f"{min(shares):.3f}" if shares else "-")
    out().print(table)
    if n > TABLE_ROWS:
        out().print(f"… and {n - TABLE_ROWS:,} more phases (--json lists every one)")


def print_nics(raw: dict[str, Any]) -> None:
    """--nics in text: each NIC's most messages at once and how often its queue changed, fullest first."""
    nics = raw.get("nics")
    if not nics or not nics["name"]:
        return
    order = sorted(range(len(nics["name"])), key=lambda k: -nics["peak"][k])
    table = new_table(title=f"NIC queues ({nics['scheduling']}), fullest first", title_justify="left")
    for col in ("NIC", "peak messages", "changes"):
        table.add_column(col, justify="left" if col == "NIC" else "right")
    for k in order[:TABLE_ROWS]:
        table.add_row(nics["name"][k], f"{nics['peak'][k]:,}", f"{nics['offset'][k + 1] - nics['offset'][k]:,}")
    out().print(table)
    if len(order) > TABLE_ROWS:
        out().print(f"… and {len(order) - TABLE_ROWS:,} more NICs (--json lists every one)")


def print_links(raw: dict[str, Any]) -> None:
    """The busiest links: bytes, busy time and peak utilisation."""
    links = raw["links"]
    shown = len(links["name"]) if len(links["name"]) <= 12 else 10
    # Busy time alone ties whenever links carry one flow each, and a link busy only with the duplex overhead of
    # the other direction (0 bytes) is busy as long as it: bytes break the tie (a 0-byte link listed first, and
    # with more than 12 links the most loaded ones could be cut).
    order = sorted(range(len(links["name"])), key=lambda i: (-links["busy_s"][i], -links["bytes"][i]))[:shown]
    if not order:
        return
    unit, scale = time_unit(max(links["busy_s"]) or 1.0)
    table = new_table(title="links, busiest first", title_justify="left")
    for col in ("link", "bytes", f"busy {unit}", "peak load"):
        table.add_column(col, justify="left" if col == "link" else "right")
    for i in order:
        table.add_row(links["name"][i], human_bytes(int(links["bytes"][i])), f"{links['busy_s'][i] * scale:.2f}",
                      f"{links['peak_utilisation'][i]:.0%}")
    out().print(table)


def human_bytes(n: int) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            v = n / scale
            return f"{v:.0f}{unit}" if v == int(v) else f"{v:.2f}{unit}"
    return f"{n}B"


def print_explanation(e: api.Explanation) -> None:
    raw = e.raw
    params = ", ".join(f"{k}={v}" for k, v in raw["params"].items())
    out().print(styled((raw["machine"], "bold"), f" — sc16 congestion factors ({params})"))
    for i, ph in enumerate(raw["explain"]):
        unit, scale = time_unit(raw["summary"]["makespan_s"])
        title = f"phase {i + 1}: {ph['start_s'] * scale:.2f} – {ph['end_s'] * scale:.2f} {unit}"
        table = new_table(title=title, title_justify="left")
        for col in ("comm", "A", "B", "C", "D (HOL)", "final"):
            table.add_column(col, justify="left" if col == "comm" else "right")
        notes = []
        transfers = raw["transfers"]
        for row in ph["rows"]:
            i = row["transfer"]
            comm = f"{transfers['name'][i]} {transfers['src'][i]}→{transfers['dst'][i]}"
            table.add_row(comm, *(fmt_factor(row[k]) for k in ("a", "b", "c", "d", "final")))
            for step in ("B", "C", "D", "final"):
                for c in row["causes"].get(step, []):
                    notes.append(f"  {comm} [{step}] {c}")
        out().print(table)
        for n in notes:
            out().print(n)
    out().print()
    print_transfers(e)


def print_schedule(s: results.Schedule) -> None:
    r = s.raw
    params = ", ".join(f"{k}={v}" for k, v in r["params"].items())
    out().print(styled((f"halo exchange on {r['machine']}", "bold"),
                       f": {r['messages']} messages among {len(r['gpus'])} GPUs, {r['semantics']} semantics, "
                       f"model {r['model']} ({params}), alpha {r['alpha_s'] * 1e6:g} µs"))
    simulated = f"{r['orders_evaluated']:,} simulated " if "orders_evaluated" in r else ""
    out().print(f"orders: {r['orders_total']:,} in all; {simulated}({r['symmetries']} symmetries), "
                f"search {r['method']}")
    unit, scale = time_unit(r["best_s"])
    table = new_table()
    table.add_column("order")
    table.add_column(f"time ({unit})", justify="right")
    table.add_column("× T_msg", justify="right")
    table.add_column("", justify="left")
    rows = [("best", r["best_s"], f"{r['best_count']:,} orders" if r.get("best_count") else ""),
            ("median", r.get("median_s"), ""), ("worst", r.get("worst_s"), ""),
            ("identity", r["identity_s"], "each GPU sends in the generator's neighbour order"),
            ("lower bound", r["lower_bound_s"], "proven optimal" if r["proven_optimal"] else f"gap {r['gap']:.1%}")]
    for name, value, note in rows:
        if value is not None:
            table.add_row(name, f"{value * scale:.3f}", f"{value / r['t_msg_s']:.2f}", note)
    out().print(table)
    for name in ("median_s", "identity_s"):
        ref = r.get(name)
        if ref:
            out().print(f"the best takes {1 - r['best_s'] / ref:.1%} less time than the {name[:-2]} "
                      f"({ref / r['best_s']:.2f}× faster)")
    out().print("best order (each GPU's destinations, first first):")
    for gpu, to in s.best_order.items():
        out().print(f"  {gpu} → {', '.join(to)}")


MATRICES = (
    ("unidirectional_p2p_gbps", "Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)"),
    ("unidirectional_p2p_read_gbps", "Unidirectional P2P=Enabled Bandwidth (P2P Reads) Matrix (GB/s)"),
    ("unidirectional_staged_gbps", "Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)"),
    ("bidirectional_p2p_gbps", "Bidirectional P2P=Enabled Bandwidth Matrix (GB/s)"),
    ("bidirectional_staged_gbps", "Bidirectional P2P=Disabled Bandwidth Matrix (GB/s)"),
    ("latency_p2p_us", "P2P=Enabled Latency Matrix (us)"),
    ("latency_staged_us", "P2P=Disabled Latency Matrix (us)"),
)


def print_sc16_fit(c: dict[str, Any]) -> None:
    out().print(styled(("sc16 fit", "bold"), f": bandwidth={c['bandwidth']}  tau={c['tau']:.4f}   "
                       f"(use: --param bandwidth={c['bandwidth']} --param tau={c['tau']:.4f})"))
    out().print(f"rms relative error {c['rms_relative_error']:.1%}; {c['within_15_percent']:.1%} of "
              f"{len(c['residuals'])} transfers within ±15%")
    worst = sorted(c["residuals"], key=lambda r: -abs(r["relative_error"]))[:10]
    table = new_table(title="largest residuals", title_justify="left")
    for col in ("graph", "transfer", "measured", "predicted", "error"):
        table.add_column(col, justify="left" if col in ("graph", "transfer") else "right")
    for r in worst:
        unit, scale = time_unit(r["measured_s"])
        table.add_row(r["graph"], f"{r['src']}→{r['dst']}", f"{r['measured_s'] * scale:.3f} {unit}",
                      f"{r['predicted_s'] * scale:.3f} {unit}", f"{r['relative_error']:+.1%}")
    out().print(table)


JOB_COLUMNS = ("job", "app", "ranks", "run_time_s", "compute_s", "comm_s", "overlap_s", "messages", "bytes")


def print_jobs(r: api.RunResult) -> None:
    jobs, s = r.raw["jobs"], r.summary
    table = new_table("job", "app", "ranks", "run time", "compute", "communication", "overlap", "messages", "bytes")
    unit, scale = time_unit(max(jobs["run_time_s"], default=0.0))
    rows = list(zip(*(jobs[k] for k in JOB_COLUMNS), strict=True))
    for job, app_, ranks, run_t, comp, comm, over, msgs, nbytes in rows[:TABLE_ROWS]:
        share = f" ({comm / run_t:.0%})" if run_t > 0 else ""
        table.add_row(
            str(job),
            app_,
            str(ranks),
            f"{run_t * scale:.2f} {unit}",
            f"{comp * scale:.2f} {unit}",
            f"{comm * scale:.2f} {unit}{share}",
            f"{over * scale:.2f} {unit}",
            f"{msgs:,}",
            human_bytes(nbytes),
        )
    out().print(table)
    if len(rows) > TABLE_ROWS:
        out().print(f"… {len(rows) - TABLE_ROWS} more jobs: --json or --csv gives every one")
    out().print("communication: run time less compute (not hidden by computation); "
                "overlap: computing while a message of the rank is in flight (means over ranks)")
    out().print(
        f"{r.raw['machine']}, model {r.raw['model']}: makespan {s['makespan_s'] * scale:.2f} {unit}; "
        f"{s['jobs']} jobs, {s['ranks']:,} ranks, {s['messages']:,} messages, {human_bytes(s['bytes'])}"
    )


def print_run_links(r: api.RunResult) -> None:
    """The links the run reports (its busiest), with their busy share of the makespan."""
    links, total = r.raw["links"], r.summary["links"]
    if not links["name"]:
        return
    unit, scale = time_unit(max(links["busy_s"]) or 1.0)
    shown = len(links["name"])
    title = f"links, busiest first ({shown:,} of {total:,}{'' if shown == total else '; --links N or --detail'})"
    table = new_table(title=title, title_justify="left")
    for col in ("link", "bytes", f"busy {unit}", "busy share", "peak load"):
        table.add_column(col, justify="left" if col == "link" else "right")
    for name, nbytes, busy, share, peak in zip(
        *(links[k] for k in ("name", "bytes", "busy_s", "busy_share", "peak_utilisation")), strict=True
    ):
        table.add_row(name, human_bytes(int(nbytes)), f"{busy * scale:.2f}", f"{share:.0%}", f"{peak:.0%}")
    out().print(table)


def print_p2p(r: dict[str, Any]) -> None:
    """The predicted matrices as p2pBandwidthLatencyTest prints them (device lines, titles, rows by index), so
    that the text reads as the sample's and `contend calibrate` reads it back."""
    gpus = r["gpus"]
    params = ", ".join(f"{k}={v}" for k, v in r["params"].items())
    lines = [f"[P2P (Peer-to-Peer) GPU Bandwidth Latency Test] predicted by contend for {r['machine']} "
             f"(maxmin; {params})"]
    lines += [f"Device: {i}, {g}, pciBusID: 0, pciDeviceID: 0, pciDomainID:0" for i, g in enumerate(gpus)]
    for key, title in MATRICES:
        lines.append(title)
        corner = "GPU" if "Latency" in title else "D\\D"
        lines.append(f"{corner:>6} " + " ".join(f"{i:>6}" for i in range(len(gpus))))
        for i, row in enumerate(r[key]):
            lines.append(f"{i:>6} " + " ".join(f"{'-' if v is None else f'{v:.2f}':>6}" for v in row))
    lines += [f"note: {n}" for n in r["notes"]]
    out().print("\n".join(lines), soft_wrap=True)


def print_calibration(c: dict[str, Any]) -> None:
    """A link-level fit: fitted parameters, the residual per pair, the scores."""
    table = new_table(title="fitted parameters", title_justify="left")
    table.add_column("parameter")
    table.add_column("value", justify="right")
    for k, v in c["fitted"].items():
        table.add_row(k, v)
    out().print(table)
    table = new_table(title="residual per pair", title_justify="left")
    for col in ("matrix", "pair", "measured", "predicted", "error"):
        table.add_column(col, justify="left" if col in ("matrix", "pair") else "right")
    for r in c["residuals"]:
        err_ = r.get("relative_error")
        table.add_row(r["matrix"], f"{r['src']}→{r['dst']}", f"{r['measured']:.2f}",
                      "-" if r.get("predicted") is None else f"{r['predicted']:.2f}",
                      "-" if err_ is None else f"{err_:+.1%}")
    out().print(table)
    for k, v in c["rms_relative_error"].items():
        out().print(f"rms relative error, {k}: {v:.1%}")
    for k, s in c.get("scores", {}).items():
        out().print(f"{k}: median |error| {s['median_abs_relative_error']:.1%}, "
                    f"{s['within_10_percent']:.0%} of {s['count']} within ±10%")
    if "within_10_percent" in c:
        fitted = sum(not r.get("held_out") for r in c["residuals"])
        out().print(f"{c['within_10_percent']:.1%} of {fitted} fitted measurements within ±10%")
    for n in c["notes"]:
        out().print(f"note: {n}")


def print_comparison(r: dict[str, Any]) -> None:
    msg, st = r["message"], r["stats"]
    out().print(styled((r["datatype"], "bold"), f" × {msg['count']:,}: {human_bytes(msg['bytes'])} "
                f"in {msg['blocks']:,} blocks (mean {msg['mean_block_bytes']:,.0f} B; "
                f"one instance: extent {st['extent_bytes']:,} B, "
                f"blocks {st['min_block_bytes']:,}–{st['max_block_bytes']:,} B)"))
    times = [m["simulated_s"] for m in r["methods"] if m["simulated_s"] is not None]
    unit, scale = time_unit(min(times))
    table = new_table(title=f"{r['src']}→{r['dst']} on {r['machine']} — {r['model']}", title_justify="left")
    for col in ("method", f"total {unit}", f"kernels before {unit}", f"latency {unit}", f"bytes moving {unit}",
                f"kernels after {unit}", "path GB/s", "note"):
        table.add_column(col, justify="left" if col in ("method", "note") else "right")
    for m in r["methods"]:
        if m["simulated_s"] is None:
            table.add_row(m["method"], "-", "", "", "", "", "", m.get("why_not") or "")
            continue
        best = "; ".join(x for x in ("winner" if m["method"] == r["winner"] else "", m.get("note") or "") if x)
        parts = (f"{m[k] * scale:.2f}" for k in ("simulated_s", "before_s", "latency_s", "moving_s", "after_s"))
        table.add_row(m["method"], *parts, f"{m['rate_bps'] / 1e9:.2f}", best)
    out().print(table)
    win = next(m["simulated_s"] for m in r["methods"] if m["method"] == r["winner"])
    if r["margin_s"] is None:
        out().print(f"winner: {r['winner']} (the only method this pair allows)")
    else:
        out().print(f"winner: {r['winner']}, {r['margin_s'] * scale:.2f} {unit} ahead of the next method "
                    f"({(win + r['margin_s']) / win:.2f}x)")


def print_sweep(s: dict[str, Any]) -> None:
    every = [t for col in s["times"].values() for t in col if t is not None]
    unit, scale = time_unit(min(every))
    table = new_table(title="sweep over message sizes", title_justify="left")
    methods = list(s["times"])
    for col in ("count", "size", "blocks", *(f"{m} {unit}" for m in methods), "winner"):
        table.add_column(col, justify="left" if col == "winner" else "right")
    for k, c in enumerate(s["count"]):
        cells = ["-" if s["times"][m][k] is None else f"{s['times'][m][k] * scale:.2f}" for m in methods]
        table.add_row(f"{c:,}", human_bytes(s["bytes"][k]), f"{s['blocks'][k]:,}", *cells, s["winner"][k])
    out().print(table)


def print_methods(raw: dict[str, Any]) -> None:
    """Simulate's and explain's decisions for transfers sent by a datatype method."""
    mt = raw.get("methods")
    if not mt:
        return
    names = raw["transfers"]["name"]
    every = [x for col in ("pack_s", "zero_copy_s", "staged_s") for x in mt[col] if x is not None]
    unit, scale = time_unit(min(every))
    table = new_table(title="datatype methods (estimates alone on the path)", title_justify="left")
    times = (f"margin {unit}", f"pack {unit}", f"zero-copy {unit}", f"staged {unit}")
    for col in ("transfer", "blocks", "asked", "chosen", *times):
        table.add_column(col, justify="right" if col == "blocks" or col in times else "left")
    fmt = lambda x: "-" if x is None else f"{x * scale:.2f}"  # noqa: E731
    for k, i in enumerate(mt["transfer"]):
        table.add_row(names[i], f"{mt['blocks'][k]:,}", mt["asked"][k], mt["chosen"][k], fmt(mt["margin_s"][k]),
                      fmt(mt["pack_s"][k]), fmt(mt["zero_copy_s"][k]), fmt(mt["staged_s"][k]))
    out().print(table)


# Seed 004's kernel profiles (K40m, boundary 16, ghost 1), percent of GPU time.
SEED_MIX = {
    1024: {"interior": 84.7, "boundary_y": 9.2, "pack_y": 1.7, "boundary_x": 1.3, "unpack_y": 1.3, "pack_x": 1.0,
           "unpack_x": 0.8},
    128: {"interior": 27.1, "boundary_y": 24.3, "boundary_x": 11.5, "pack_y": 11.1, "unpack_y": 10.9, "unpack_x": 7.8,
          "pack_x": 7.3},
}


def print_iterations(r: dict) -> None:
    table = new_table(title="2D stencil, one iteration per GPU (4 neighbours)", title_justify="left")
    for col in ("lattice", "halo message", "CPU-posted µs", "stream-ordered µs", "gain", "stream-ordered bound by"):
        table.add_column(col, justify="left" if col.startswith("stream-ordered bound") else "right")
    for it in r["iterations"]:
        table.add_row(f"{it['lattice']:,}²", human_bytes(it["message_bytes"][0]), f"{it['cpu_posted_s'] * 1e6:.2f}",
                      f"{it['stream_ordered_s'] * 1e6:.2f}", f"{it['gain']:.1%}",
                      "CPU enqueueing" if it["cpu_bound"] else "GPU")
    out().print(table)
    for it in r["iterations"]:
        seed = SEED_MIX.get(it["lattice"])
        if seed is None:
            continue
        total = sum(it["kernels"].values())
        mix = new_table(title=f"kernel mix at {it['lattice']}² (share of GPU time)", title_justify="left")
        for col in ("kernel", "model", "seed 004 (K40m)"):
            mix.add_column(col, justify="left" if col == "kernel" else "right")
        for k, v in sorted(it["kernels"].items(), key=lambda kv: -kv[1]):
            mix.add_row(k, f"{v / total:.1%}", f"{seed[k]:.1f}%")
        out().print(mix)
    out().print("parameters: " + ", ".join(f"{k}={v}" for k, v in r["params"].items()))


def print_model_comparison(c: results.Comparison) -> None:
    raw = c.raw
    table = new_table(title=f"{raw['machine']} — {raw['transfers']:,} transfers under each model")
    for col in ("model", "wall s", "makespan", "note"):
        table.add_column(col, justify="left" if col in ("model", "note") else "right")
    for m in raw["models"]:
        if m["ran"]:
            unit, scale = time_unit(m["makespan_s"])
            note = "reference" if m["model"] == raw["reference"] else ""
            if raw.get("notes") and m["model"] != "packet":
                note = "; ".join(x for x in (note, "routes per message (note below)") if x)
            table.add_row(m["model"], f"{m['wall_s']:.3f}", f"{m['makespan_s'] * scale:.4g} {unit}", note)
        else:
            table.add_row(m["model"], "—", "—", f"does not apply: {m['refused']}")
    out().print(table)
    for n in raw.get("notes", []):
        out().print(f"note: {n}", soft_wrap=True, highlight=False)
    for d in raw["differences"]:
        t = new_table(title=f"{d['model']} against {d['reference']}: {d['compared']:,} transfers compared")
        for col in ("median |Δ|", "p90 |Δ|", "max |Δ|", "mean Δ", "makespan Δ"):
            t.add_column(col, justify="right")
        t.add_row(*(f"{d[k]:+.2f}%" if k in ("mean_signed_pct", "makespan_diff_pct") else f"{d[k]:.2f}%"
                    for k in ("median_pct", "p90_pct", "max_pct", "mean_signed_pct", "makespan_diff_pct")))
        out().print(t)
        if not d["worst"]:
            continue
        unit, scale = time_unit(max(w["reference_duration_s"] for w in d["worst"]))
        w = new_table(title=f"worst {len(d['worst'])}: {d['model']} against {d['reference']}")
        for col in ("transfer", "src→dst", "size", f"{d['model']} {unit}", f"{d['reference']} {unit}", "Δ"):
            w.add_column(col, justify="left" if col in ("transfer", "src→dst") else "right")
        for x in d["worst"]:
            w.add_row(x["name"], f"{x['src']}→{x['dst']}", human_bytes(x["size_bytes"]),
                      f"{x['duration_s'] * scale:.4g}", f"{x['reference_duration_s'] * scale:.4g}",
                      f"{x['diff_pct']:+.2f}%")
        out().print(w)
