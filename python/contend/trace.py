"""Chrome/Perfetto trace export: open the file in ui.perfetto.dev or chrome://tracing.

Each sending GPU is a process whose threads are its transfers, sliced per phase (so the
congestion factor of every phase is visible); each loaded link is a counter track.
"""

from __future__ import annotations

import json
import os
from typing import Any

from contend.output import replacing

US = 1e6  # trace timestamps are microseconds


def trace_events(raw: dict[str, Any]) -> list[dict[str, Any]]:
    transfers = raw["transfers"]
    links = raw["links"]
    phases = raw["phases"]
    src, dst, names = transfers["src"], transfers["dst"], transfers["name"]
    gpus = sorted(set(src) | set(dst), key=_natural)
    pid = {g: i + 1 for i, g in enumerate(gpus)}
    links_pid = len(gpus) + 1
    phases_pid = len(gpus) + 2
    events: list[dict[str, Any]] = []
    for g, p in pid.items():
        events.append({"ph": "M", "pid": p, "name": "process_name", "args": {"name": g}})
        events.append({"ph": "M", "pid": p, "name": "process_sort_index", "args": {"sort_index": p}})
    events.append({"ph": "M", "pid": links_pid, "name": "process_name", "args": {"name": "Links (load / capacity)"}})
    events.append({"ph": "M", "pid": phases_pid, "name": "process_name", "args": {"name": "Phases"}})
    for i in range(len(names)):
        events.append({"ph": "M", "pid": pid[src[i]], "tid": i, "name": "thread_name",
                       "args": {"name": f"{names[i]} → {dst[i]}"}})
    count = len(phases["start_s"])
    for k in range(count):
        start, end = phases["start_s"][k], phases["end_s"][k]
        ts, dur = start * US, (end - start) * US
        lo, hi = phases["offset"][k], phases["offset"][k + 1]
        events.append({"ph": "X", "pid": phases_pid, "tid": 0, "ts": ts, "dur": dur, "name": f"phase {k + 1}",
                       "args": {"active": hi - lo}})
        for j in range(lo, hi):
            t = phases["transfer"][j]
            events.append({
                "ph": "X", "pid": pid[src[t]], "tid": t, "ts": ts, "dur": dur, "name": f"{src[t]}→{dst[t]}",
                "args": {"rate_GBps": phases["rate_bps"][j] / 1e9, "factor": phases["share"][j],
                         "size_bytes": transfers["size_bytes"][t]},
            })
        loaded = phases["link"][phases["link_offset"][k]:phases["link_offset"][k + 1]]
        loads = phases["load_bps"][phases["link_offset"][k]:phases["link_offset"][k + 1]]
        for link, bps in zip(loaded, loads, strict=True):
            events.append({"ph": "C", "pid": links_pid, "ts": ts, "name": links["name"][link],
                           "args": {"load": bps / links["capacity_bps"][link]}})
        # Links that fall idle at the next phase drop to zero explicitly.
        still = set()
        if k + 1 < count:
            still = set(phases["link"][phases["link_offset"][k + 1]:phases["link_offset"][k + 2]])
        for link in loaded:
            if link not in still:
                events.append({"ph": "C", "pid": links_pid, "ts": end * US, "name": links["name"][link],
                               "args": {"load": 0.0}})
    # A cluster's NICs: one counter track each, the messages at it (waiting or in the network).
    nics = raw.get("nics")
    if nics:
        nics_pid = len(gpus) + 3
        events.append({"ph": "M", "pid": nics_pid, "name": "process_name",
                       "args": {"name": f"NIC queues ({nics['scheduling']})"}})
        for k, name in enumerate(nics["name"]):
            for j in range(nics["offset"][k], nics["offset"][k + 1]):
                events.append({"ph": "C", "pid": nics_pid, "ts": nics["time_s"][j] * US, "name": name,
                               "args": {"messages": nics["queued"][j]}})
    return events


def write_trace(raw: dict[str, Any], path: str | os.PathLike) -> None:
    with replacing(path) as tmp, open(tmp, "w") as f:
        json.dump({"traceEvents": trace_events(raw), "displayTimeUnit": "ms",
                   "otherData": {"machine": raw["machine"], "model": raw["model"], "params": raw["params"]}}, f)


def _natural(name: str) -> tuple:
    head = name.rstrip("0123456789")
    tail = name[len(head):]
    return (head, int(tail) if tail else -1)


def run_trace_events(raw: dict[str, Any]) -> list[dict[str, Any]]:
    """`contend run`'s operations: a process per job, a track per rank with its computations
    and the messages it sends as slices, and an arrow from each message to its receiver."""
    ops = raw["operations"]
    apps = raw["jobs"]["app"]
    events: list[dict[str, Any]] = []
    for job, app in enumerate(apps):
        events.append({"ph": "M", "pid": job + 1, "name": "process_name", "args": {"name": f"job {job}: {app}"}})
        events.append({"ph": "M", "pid": job + 1, "name": "process_sort_index", "args": {"sort_index": job + 1}})
    ranks = sorted(set(zip(ops["job"], ops["rank"], strict=True)))
    for job, rank in ranks:
        events.append({"ph": "M", "pid": job + 1, "tid": rank, "name": "thread_name", "args": {"name": f"rank {rank}"}})
    columns = (ops[k] for k in ("job", "rank", "kind", "peer", "bytes", "start_s", "finish_s"))
    for i, (job, rank, kind, peer, nbytes, start, finish) in enumerate(zip(*columns, strict=True)):
        ts, dur = start * US, max(finish - start, 0.0) * US
        if kind in ("compute", "overhead"):
            # overhead: an eager send's CPU cost (MPI's software), on the sender's track.
            name = "compute" if kind == "compute" else "send overhead"
            events.append({"ph": "X", "pid": job + 1, "tid": rank, "ts": ts, "dur": dur, "name": name, "cat": kind})
            continue
        name = f"{kind} → rank {peer}"
        events.append({"ph": "X", "pid": job + 1, "tid": rank, "ts": ts, "dur": dur, "name": name, "cat": kind,
                       "args": {"bytes": nbytes}})
        # A flow arrow from the send to the receiver's track at arrival.
        events.append({"ph": "s", "pid": job + 1, "tid": rank, "ts": ts, "id": i, "name": kind, "cat": kind})
        events.append({"ph": "f", "bp": "e", "pid": job + 1, "tid": peer, "ts": ts + dur, "id": i, "name": kind,
                       "cat": kind})
    return events


def write_run_trace(raw: dict[str, Any], path: str | os.PathLike) -> None:
    with replacing(path) as tmp, open(tmp, "w") as f:
        json.dump({"traceEvents": run_trace_events(raw), "displayTimeUnit": "ns"}, f)
