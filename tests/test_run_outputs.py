"""`contend run`'s outputs beyond the job table: overlap, the busiest links, Parquet, progress and the
API's DataFrames, in-process."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from contend import api
from test_run import scenario

STENCIL = "  jobs:\n    - {app: stencil4d, ranks: 16, params: {iterations: 2}}\n"
# Rank 1 computes 1 us while rank 0's eager message is on its way (0 to 960 ns): the job overlaps 480 ns.
OVERLAPPING = """ranks:
  - [{send: {peer: 1, size: 1000B}}]
  - [{irecv: {peer: 0, size: 1000B, req: a}}, {compute: 1us}, {wait: a}]
"""


def test_json_and_csv_carry_overlap_and_the_busiest_links(cli, tmp_path):
    prog = tmp_path / "overlap.yaml"
    prog.write_text(OVERLAPPING)
    s = scenario(tmp_path, f"  jobs:\n    - program: {prog}\n")
    j = json.loads(cli("run", s, "--json").stdout)
    assert abs(j["jobs"]["overlap_s"][0] - 480e-9) < 1e-15
    assert abs(j["jobs"]["comm_s"][0] - (1e-6 - 0.5e-6)) < 1e-15
    # The message's four links, each busy 100 ns of the 1 us run.
    assert j["summary"]["links"] == 4 and len(j["links"]["name"]) == 4
    assert all(abs(x - 0.1) < 1e-12 for x in j["links"]["busy_share"])
    header = cli("run", s, "--csv").stdout.splitlines()[0].split(",")
    assert "overlap_s" in header and "comm_s" in header


def test_links_are_bounded_and_detail_lists_every_one(cli, tmp_path):
    s = scenario(tmp_path, STENCIL)
    text = cli("run", s, "--links", "3")
    assert text.returncode == 0 and "links, busiest first (3 of" in text.stdout
    j = json.loads(cli("run", s, "--json", "--links", "3").stdout)
    assert len(j["links"]["name"]) == 3 < j["summary"]["links"]
    assert j["links"]["busy_s"] == sorted(j["links"]["busy_s"], reverse=True)
    full = json.loads(cli("run", s, "--json", "--detail").stdout)
    assert len(full["links"]["name"]) == full["summary"]["links"] and "operations" in full
    assert full["links"]["name"][:3] == j["links"]["name"]
    # A trace keeps every operation, not every link.
    traced = json.loads(cli("run", s, "--json", "--links", "3", "--trace", tmp_path / "t.json").stdout)
    assert len(traced["links"]["name"]) == 3 and "operations" in traced
    for bad in ("1001", "-1"):
        r = cli("run", s, "--links", bad)
        assert r.returncode == 2 and "--links" in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_parquet_writes_each_table_and_never_overwrites_unasked(cli, tmp_path):
    s = scenario(tmp_path, STENCIL)
    out = tmp_path / "tables"
    r = cli("run", s, "--parquet", out)
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in out.iterdir()) == ["jobs.parquet", "links.parquet"]
    jobs = pq.read_table(out / "jobs.parquet").to_pandas()
    j = json.loads(cli("run", s, "--json").stdout)
    assert list(jobs["run_time_s"]) == j["jobs"]["run_time_s"] and "overlap_s" in jobs
    assert len(pq.read_table(out / "links.parquet")) == 10
    meta = json.loads(pq.read_schema(out / "jobs.parquet").metadata[b"contend.run"])
    assert meta["model"] == "maxmin" and meta["summary"]["ranks"] == 16
    # A second run refuses before running, in one line; --force overwrites (--replace, its old name, too).
    r = cli("run", s, "--parquet", out)
    assert r.returncode == 2 and "jobs.parquet" in r.stderr and "--force" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    r = cli("run", s, "--parquet", out, "--force", "--detail")
    assert r.returncode == 0, r.stderr
    ops = pq.read_table(out / "operations.parquet").to_pandas()
    # stencil4d's eager sends: the sender's CPU cost is "overhead", apart from its computations.
    assert set(ops["kind"]) == {"compute", "message", "overhead"} and len(ops) == j["summary"]["operations"]
    assert len(pq.read_table(out / "links.parquet")) == j["summary"]["links"]
    # Replacing with a run without operations leaves no stale operations table behind.
    assert cli("run", s, "--parquet", out, "--replace").returncode == 0
    assert not (out / "operations.parquet").exists()
    # A file where the folder should be, or a folder in a missing one: one line, exit 2.
    (tmp_path / "afile").write_text("x")
    for bad, words in ((tmp_path / "afile", "is a file"), (tmp_path / "no" / "dir", "does not exist")):
        r = cli("run", s, "--parquet", bad)
        assert r.returncode == 2 and words in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_api_gives_dataframes_and_progress(tmp_path):
    s = scenario(tmp_path, STENCIL)
    seen: list[tuple[int, int]] = []
    r = api.run(s, links=5, progress=lambda done, total: seen.append((done, total)))
    messages = r.summary["messages"]
    assert seen[0] == (0, messages) and seen[-1] == (messages, messages)
    assert list(r.jobs.columns[:3]) == ["job", "app", "ranks"] and (r.jobs["overlap_s"] <= r.jobs["compute_s"]).all()
    assert len(r.links) == 5 and "busy_share" in r.links
    with pytest.raises(ValueError, match="detail=True"):
        r.operations  # noqa: B018
    d = api.run(s, detail=True, links=None)
    assert len(d.links) == d.summary["links"] > 5
    assert len(d.operations) == d.summary["operations"]
    assert (d.operations["finish_s"] >= d.operations["start_s"]).all()
