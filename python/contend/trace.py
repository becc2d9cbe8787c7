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


# A run trace holds at most this many events (about 130 bytes each in the file: some 30 MB). Past it the trace is
# aggregated (`run_trace_events`): Perfetto's JSON importer holds every event in memory, and seed 003's mix written
# whole was 176 MB.
RUN_EVENTS = 250_000
# Times at which an aggregated trace samples each job's counters (fewer where the bound is small).
SAMPLES = 2_000


def run_trace_events(raw: dict[str, Any], max_events: int = RUN_EVENTS) -> list[dict[str, Any]]:
    """`contend run`'s operations: a process per job, a track per rank with its computations
    and the messages it sends as slices, and an arrow from each message to its receiver.

    A run whose operations would make more than ``max_events`` events is aggregated instead: per job, counters
    of the messages in flight and the ranks computing, sampled from every operation at ``SAMPLES`` times; and
    the slices and arrows of whole ranks, taken in turn from each job (rank 0 of every job, then rank 1, …),
    as many as fit in the rest of the bound. The trace's ``otherData`` says which ranks are shown."""
    ops = raw["operations"]
    apps = raw["jobs"]["app"]
    events: list[dict[str, Any]] = []
    for job, app in enumerate(apps):
        events.append({"ph": "M", "pid": job + 1, "name": "process_name", "args": {"name": f"job {job}: {app}"}})
        events.append({"ph": "M", "pid": job + 1, "name": "process_sort_index", "args": {"sort_index": job + 1}})
    keep = None
    if _run_events(ops) > max_events:
        # Counters take at most half the bound, whole ranks the rest.
        samples = max(2, min(SAMPLES, max_events // 2 // max(len(apps), 1)))
        counters = _run_counters(ops, len(apps), samples)
        keep = _ranks_that_fit(ops, max_events - len(events) - len(counters) - 2 * len(apps))
        events += counters
    ranks = sorted(set(zip(ops["job"], ops["rank"], strict=True)))
    for job, rank in ranks:
        if keep is None or (job, rank) in keep:
            events.append({"ph": "M", "pid": job + 1, "tid": rank, "name": "thread_name",
                           "args": {"name": f"rank {rank}"}})
    columns = (ops[k] for k in ("job", "rank", "kind", "peer", "bytes", "start_s", "finish_s"))
    for i, (job, rank, kind, peer, nbytes, start, finish) in enumerate(zip(*columns, strict=True)):
        if keep is not None and (job, rank) not in keep:
            continue
        ts, dur = start * US, max(finish - start, 0.0) * US
        if kind in ("compute", "overhead"):
            # overhead: an eager send's CPU cost (MPI's software), on the sender's track.
            name = "compute" if kind == "compute" else "send overhead"
            events.append({"ph": "X", "pid": job + 1, "tid": rank, "ts": ts, "dur": dur, "name": name, "cat": kind})
            continue
        # peer -1: an NCCL NVLS message, between the rank's GPU and the NVSwitch (no rank's track).
        name = f"{kind} → rank {peer}" if peer >= 0 else f"{kind} via NVSwitch (NVLS)"
        events.append({"ph": "X", "pid": job + 1, "tid": rank, "ts": ts, "dur": dur, "name": name, "cat": kind,
                       "args": {"bytes": nbytes}})
        # A flow arrow from the send to the receiver's track at arrival (where the receiver's track is shown).
        if peer >= 0 and (keep is None or (job, peer) in keep):
            events.append({"ph": "s", "pid": job + 1, "tid": rank, "ts": ts, "id": i, "name": kind, "cat": kind})
            events.append({"ph": "f", "bp": "e", "pid": job + 1, "tid": peer, "ts": ts + dur, "id": i, "name": kind,
                           "cat": kind})
    return events


def _is_message(kind: str) -> bool:
    return kind not in ("compute", "overhead")


def _run_events(ops: dict[str, Any]) -> int:
    """Events a whole run trace would hold: a slice per operation and two arrow ends per message."""
    return sum(3 if _is_message(k) else 1 for k in ops["kind"])


def _ranks_that_fit(ops: dict[str, Any], budget: int) -> set[tuple[int, int]]:
    """Whole ranks, rank 0 of every job first, then rank 1, …, while their events fit in ``budget``."""
    cost: dict[tuple[int, int], int] = {}
    for job, rank, kind in zip(ops["job"], ops["rank"], ops["kind"], strict=True):
        cost[(job, rank)] = cost.get((job, rank), 1) + (3 if _is_message(kind) else 1)
    keep: set[tuple[int, int]] = set()
    for job, rank in sorted(cost, key=lambda jr: (jr[1], jr[0])):
        if cost[(job, rank)] > budget:
            break
        budget -= cost[(job, rank)]
        keep.add((job, rank))
    return keep


def _run_counters(ops: dict[str, Any], jobs: int, samples: int) -> list[dict[str, Any]]:
    """Per job, at ``samples`` evenly spaced times over the run: the messages in flight and the operations
    computing (counted from every operation: started at or before the time, not finished by it)."""
    import numpy as np

    job = np.asarray(ops["job"])
    start = np.asarray(ops["start_s"], dtype=float)
    finish = np.maximum(np.asarray(ops["finish_s"], dtype=float), start)
    message = np.fromiter((_is_message(k) for k in ops["kind"]), dtype=bool, count=len(job))
    if len(job) == 0:
        return []
    times = np.linspace(start.min(), finish.max(), samples)
    events: list[dict[str, Any]] = []
    for j in range(jobs):
        counts = []
        for kind in (message, ~message):
            sel = (job == j) & kind
            begun = np.searchsorted(np.sort(start[sel]), times, side="right")
            ended = np.searchsorted(np.sort(finish[sel]), times, side="right")
            counts.append(begun - ended)
        for t, moving, computing in zip(times, counts[0], counts[1], strict=True):
            events.append({"ph": "C", "pid": j + 1, "ts": float(t) * US, "name": "in progress",
                           "args": {"messages": int(moving), "computing": int(computing)}})
    return events


def write_run_trace(raw: dict[str, Any], path: str | os.PathLike, max_events: int = RUN_EVENTS) -> None:
    events = run_trace_events(raw, max_events)
    other: dict[str, Any] = {}
    shown = {(e["pid"], e["tid"]) for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
    ranks = len(set(zip(raw["operations"]["job"], raw["operations"]["rank"], strict=True)))
    if len(shown) < ranks:
        other["aggregated"] = (f"{len(raw['operations']['job']):,} operations would make more than {max_events:,} "
                               "events: each job's counters are sampled at evenly spaced times from all of them, and "
                               f"the slices of {len(shown):,} of {ranks:,} ranks are shown (rank 0 of every job first; "
                               "raise the bound with --max-rows)")
    with replacing(path) as tmp, open(tmp, "w") as f:
        json.dump({"traceEvents": events, "displayTimeUnit": "ns", "otherData": other}, f)
