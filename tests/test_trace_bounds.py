"""A run's Perfetto trace is bounded whatever the run's size (issue 26): past the bound it is aggregated, never
refused after the work. The aggregated trace is what Perfetto's legacy JSON importer reads (a ``traceEvents``
array, every event with its ``ph``, ``pid``, ``ts`` where the phase needs one), its counters are exact at their
sample times, and it shows whole ranks."""

from __future__ import annotations

import json

from contend.trace import SAMPLES, run_trace_events, write_run_trace
from test_run import scenario

STENCIL = "  jobs:\n    - {app: stencil4d, ranks: 16, params: {iterations: 2}}\n"


def ring(ranks: int, rounds: int) -> dict:
    """Job 0: in round k (k us to k+1 us) every rank computes for the first half and sends 1 kB to its right-hand
    neighbour in the second half. Job 1: one rank computing all along."""
    cols: dict[str, list] = {k: [] for k in ("job", "rank", "kind", "peer", "bytes", "start_s", "finish_s")}

    def op(job, rank, kind, peer, nbytes, start, finish):
        for k, v in zip(cols, (job, rank, kind, peer, nbytes, start, finish), strict=True):
            cols[k].append(v)

    for k in range(rounds):
        for r in range(ranks):
            op(0, r, "compute", r, 0, k * 1e-6, (k + 0.5) * 1e-6)
            op(0, r, "send", (r + 1) % ranks, 1000, (k + 0.5) * 1e-6, (k + 1) * 1e-6)
    op(1, 0, "compute", 0, 0, 0.0, rounds * 1e-6)
    return {"operations": cols, "jobs": {"app": ["ring", "solo"]}}


def valid_for_perfetto(doc: dict) -> None:
    assert isinstance(doc["traceEvents"], list)
    for e in doc["traceEvents"]:
        assert e["ph"] in ("M", "X", "C", "s", "f"), e
        assert isinstance(e["pid"], int) and isinstance(e["name"], str)
        if e["ph"] != "M":
            assert isinstance(e["ts"], float | int)
        if e["ph"] == "X":
            assert e["dur"] >= 0 and "tid" in e
        if e["ph"] in ("s", "f"):
            assert "id" in e and "tid" in e


def test_a_small_run_is_traced_whole():
    raw = ring(4, 3)
    events = run_trace_events(raw)
    # 4 ranks × 3 rounds × (a compute, a send and its two arrow ends) + job 1's computation.
    assert sum(e["ph"] == "X" for e in events) == 4 * 3 * 2 + 1
    assert sum(e["ph"] in "sf" for e in events) == 4 * 3 * 2
    assert not any(e["ph"] == "C" for e in events)


def test_a_large_run_is_aggregated_under_its_bound(tmp_path):
    ranks, rounds = 200, 50  # 30,001 events whole
    raw = ring(ranks, rounds)
    bound = 2 * SAMPLES * 2 + 3_000  # both jobs' counters, and room for some ranks
    path = tmp_path / "t.json"
    write_run_trace(raw, path, bound)
    doc = json.loads(path.read_text())
    valid_for_perfetto(doc)
    events = doc["traceEvents"]
    assert len(events) <= bound
    assert "ranks are shown" in doc["otherData"]["aggregated"]
    # Whole ranks: rank 0 of both jobs first, then rank 1, …; each shown rank has all its 2 × 50 slices.
    shown = {(e["pid"] - 1, e["tid"]) for e in events if e["name"] == "thread_name"}
    assert (1, 0) in shown and (0, 0) in shown
    kept = sorted(r for j, r in shown if j == 0)
    assert kept == list(range(len(kept))) and 0 < len(kept) < ranks
    for j, r in shown:
        slices = sum(e["ph"] == "X" and e["pid"] == j + 1 and e["tid"] == r for e in events)
        assert slices == (2 * rounds if j == 0 else 1)
    # Arrows only between shown tracks.
    assert all((e["pid"] - 1, e["tid"]) in shown for e in events if e["ph"] in "sf")
    # Counters: SAMPLES per job, exact from the definition: at a time inside the first half of a round every rank
    # of job 0 computes and none sends; inside the second half, the reverse (ends are exclusive).
    counters = [e for e in events if e["ph"] == "C" and e["pid"] == 1]
    assert len(counters) == SAMPLES
    for c in counters:
        phase = (c["ts"] / 1.0) % 1.0  # ts in microseconds: one round per microsecond
        if 0.05 < phase < 0.45 and c["ts"] < rounds - 0.05:
            assert c["args"] == {"messages": 0, "computing": ranks}, c
        elif 0.55 < phase < 0.95:
            assert c["args"] == {"messages": ranks, "computing": 0}, c
    solo = [e for e in events if e["ph"] == "C" and e["pid"] == 2]
    assert all(c["args"] == {"messages": 0, "computing": 1} for c in solo[:-1])


def test_the_cli_aggregates_instead_of_refusing_after_the_run(cli, tmp_path):
    s = scenario(tmp_path, STENCIL)
    whole = json.loads(cli("run", s, "--json", "--detail").stdout)
    ops = len(whole["operations"]["job"])
    out = tmp_path / "t.json"
    r = cli("run", s, "--trace", out, "--max-rows", "400")
    assert r.returncode == 0, r.stderr
    doc = json.loads(out.read_text())
    valid_for_perfetto(doc)
    assert len(doc["traceEvents"]) <= 400 < ops
    assert "aggregated" in doc["otherData"]
