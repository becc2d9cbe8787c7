"""Chrome/Perfetto trace export: open the file in ui.perfetto.dev or chrome://tracing.

Each sending GPU is a process whose threads are its transfers, sliced per phase (so the
congestion factor of every phase is visible); each loaded link is a counter track.
"""

from __future__ import annotations

import json
from typing import Any

US = 1e6  # trace timestamps are microseconds


def trace_events(raw: dict[str, Any]) -> list[dict[str, Any]]:
    transfers = raw["transfers"]
    links = raw["links"]
    gpus = sorted({t["src"] for t in transfers} | {t["dst"] for t in transfers}, key=_natural)
    pid = {g: i + 1 for i, g in enumerate(gpus)}
    links_pid = len(gpus) + 1
    phases_pid = len(gpus) + 2
    events: list[dict[str, Any]] = []
    for g, p in pid.items():
        events.append({"ph": "M", "pid": p, "name": "process_name", "args": {"name": g}})
        events.append({"ph": "M", "pid": p, "name": "process_sort_index", "args": {"sort_index": p}})
    events.append({"ph": "M", "pid": links_pid, "name": "process_name", "args": {"name": "Links (load / capacity)"}})
    events.append({"ph": "M", "pid": phases_pid, "name": "process_name", "args": {"name": "Phases"}})
    for i, t in enumerate(transfers):
        p = pid[t["src"]]
        events.append({"ph": "M", "pid": p, "tid": i, "name": "thread_name", "args": {"name": f"{t['name']} → {t['dst']}"}})
    for k, ph in enumerate(raw["phases"]):
        ts, dur = ph["start_s"] * US, (ph["end_s"] - ph["start_s"]) * US
        events.append({"ph": "X", "pid": phases_pid, "tid": 0, "ts": ts, "dur": dur, "name": f"phase {k + 1}",
                       "args": {"active": len(ph["transfers"])}})
        load: dict[int, float] = {}
        for t, rate in zip(ph["transfers"], ph["rates_bps"]):
            tr = transfers[t]
            cap = links[tr["route"][0]]["capacity_bps"] if tr["route"] else 0.0
            events.append({
                "ph": "X", "pid": pid[tr["src"]], "tid": t, "ts": ts, "dur": dur,
                "name": f"{tr['src']}→{tr['dst']}",
                "args": {"rate_GBps": rate / 1e9, "factor": rate / cap if cap else None, "size_bytes": tr["size_bytes"]},
            })
            for link in tr["route"]:
                load[link] = load.get(link, 0.0) + rate
        for link, bps in load.items():
            cap = links[link]["capacity_bps"]
            events.append({"ph": "C", "pid": links_pid, "ts": ts, "name": links[link]["name"],
                           "args": {"load": bps / cap if cap else 0.0}})
        # Links that fall idle at the next phase drop to zero explicitly.
        nxt = raw["phases"][k + 1] if k + 1 < len(raw["phases"]) else None
        still = set()
        if nxt:
            for t in nxt["transfers"]:
                still.update(transfers[t]["route"])
        for link in load:
            if link not in still:
                events.append({"ph": "C", "pid": links_pid, "ts": ph["end_s"] * US, "name": links[link]["name"],
                               "args": {"load": 0.0}})
    return events


def write_trace(raw: dict[str, Any], path: str) -> None:
    with open(path, "w") as f:
        json.dump({"traceEvents": trace_events(raw), "displayTimeUnit": "ms",
                   "otherData": {"machine": raw["machine"], "model": raw["model"], "params": raw["params"]}}, f)


def _natural(name: str) -> tuple:
    head = name.rstrip("0123456789")
    tail = name[len(head):]
    return (head, int(tail) if tail else -1)
