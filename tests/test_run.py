"""`contend run`: scenarios of rank programs and application skeletons, in-process."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import SMALL_CLUSTER
from contend import api

PINGPONG = """ranks:
  - [{send: {peer: 1, size: 1000B}}]
  - [{recv: {peer: 0, size: 1000B}}]
"""



def scenario(tmp_path: Path, workload: str, extra: str = "") -> Path:
    (tmp_path / "ft.yaml").write_text(SMALL_CLUSTER)
    (tmp_path / "p.yaml").write_text(PINGPONG)
    s = tmp_path / "s.yaml"
    s.write_text(f"cluster: {tmp_path / 'ft.yaml'}\n{extra}workload:\n{workload}")
    return s


def test_run_reports_jobs_as_table_json_csv_and_chart(cli, tmp_path):
    s = scenario(
        tmp_path,
        f"  jobs:\n    - program: {tmp_path / 'p.yaml'}\n"
        "    - {app: stencil4d, ranks: 16, params: {iterations: 2}}\n",
    )
    r = cli("run", str(s))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "stencil4d" in (r.stdout + r.stderr) and "makespan" in (r.stdout + r.stderr)
    j = json.loads(cli("run", str(s), "--json").stdout)
    assert j["jobs"]["ranks"] == [2, 16]
    # Eager: 610 ns of MPI costs, 200 ns of NIC links, the leaf's 50 ns router delay, 100 ns of bytes.
    assert abs(j["jobs"]["run_time_s"][0] - 960e-9) < 1e-15
    csv = cli("run", str(s), "--csv").stdout.splitlines()
    assert csv[0].startswith("job,app,ranks") and len(csv) == 3
    trace = tmp_path / "run.json"
    assert cli("run", str(s), "--trace", str(trace)).returncode == 0
    events = json.loads(trace.read_text())["traceEvents"]
    names = {e["args"]["name"] for e in events if e.get("name") == "thread_name"}
    assert {"rank 0", "rank 15"} <= names
    sends = [e for e in events if e.get("ph") == "X" and e["name"].startswith("message")]
    assert len(sends) == j["jobs"]["messages"][0] + j["jobs"]["messages"][1]
    assert sum(e["ph"] == "s" for e in events) == sum(e["ph"] == "f" for e in events) > 0
    png = tmp_path / "jobs.png"
    assert cli("run", str(s), "--plot", str(png)).returncode == 0 and png.stat().st_size > 10_000


def test_run_api_gives_a_dataframe(tmp_path):
    s = scenario(tmp_path, "  jobs:\n    - {app: ring, ranks: 8, params: {iterations: 3}}\n", "model: packet\n")
    jobs = api.run(s).jobs
    assert list(jobs["app"]) == ["ring"] and jobs["run_time_s"][0] > 0


def test_run_takes_another_model_and_parameters_without_editing_the_file(cli, tmp_path):
    s = scenario(tmp_path, "  jobs:\n    - {app: ring, ranks: 8, params: {iterations: 3}}\n")
    maxmin = json.loads(cli("run", str(s), "--json").stdout)
    packet = json.loads(cli("run", str(s), "--json", "--model", "packet").stdout)
    assert (maxmin["model"], packet["model"]) == ("maxmin", "packet")
    assert packet["jobs"] == api.run(s, model="packet").raw["jobs"]
    # A parameter over the file's own: a 50 us quantum rounds every event later.
    q = json.loads(cli("run", str(s), "--json", "-p", "quantum=50us").stdout)
    assert q["jobs"]["run_time_s"][0] > maxmin["jobs"]["run_time_s"][0]
    r = cli("run", str(s), "--model", "sc16x")
    assert r.returncode == 2 and "is not a model" in r.stderr
    r = cli("run", str(s), "--model", "packet", "-p", "quantum=1us")
    assert r.returncode == 2 and "quantum" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_bad_scenarios_get_one_line_and_exit_2(cli, tmp_path):
    cases = [
        ("  jobs:\n    - {app: warp, ranks: 4}\n", "warp"),
        ("  jobs:\n    - {app: ring, ranks: 400}\n", "needs 400 ranks"),
        ("  jobs:\n    - {app: ring, ranks: 4, params: {size: 3 parsecs}}\n", "size"),
        ("  mix: {seed: 1}\n  jobs:\n    - {app: ring, ranks: 4}\n", "either"),
        ("  jobs:\n    - {app: ring, ranks: 0}\n", "jobs[0].ranks: is 0"),
    ]
    for workload, words in cases:
        r = cli("run", str(scenario(tmp_path, workload)))
        assert r.returncode == 2, r.stdout + r.stderr
        assert words in (r.stdout + r.stderr) and "Traceback" not in (r.stdout + r.stderr)
        assert len((r.stdout + r.stderr).strip().splitlines()) == 1, r.stdout + r.stderr
    r = cli("run", str(scenario(tmp_path, "  jobs:\n    - {app: ring, ranks: 4}\n", "model: warp\n")))
    assert r.returncode == 2 and "s.yaml: model:" in r.stderr and "maxmin" in r.stderr
    dead = tmp_path / "dead.yaml"
    dead.write_text(
        "ranks:\n"
        "  - [{recv: {peer: 1, size: 1MB}}, {send: {peer: 1, size: 1MB}}]\n"
        "  - [{recv: {peer: 0, size: 1MB}}, {send: {peer: 0, size: 1MB}}]\n"
    )
    r = cli("run", str(scenario(tmp_path, f"  jobs:\n    - program: {dead}\n")))
    assert r.returncode == 2 and "deadlock" in (r.stdout + r.stderr) and "rank 1 at op 0" in (r.stdout + r.stderr)


def test_a_mix_on_a_cluster_below_seed_003s_smallest_job_is_refused_by_run_and_check(cli, tmp_path):
    # 16 GPUs: seed 003's jobs have 32 to 512 ranks, so the mix drew none; --check passed it and
    # the run said "workload: does nothing: no job has an operation" (round 25, ux25b).
    (tmp_path / "small.yaml").write_text(SMALL_CLUSTER.replace("pods: 2", "pods: 1"))
    s = tmp_path / "mix.yaml"
    s.write_text(f"cluster: {tmp_path / 'small.yaml'}\nworkload:\n  mix: {{seed: 1}}\n")
    for extra in ([], ["--check"]):
        r = cli("run", str(s), *extra)
        out = (r.stdout + r.stderr).strip()
        assert r.returncode == 2 and "mix.yaml: workload.mix:" in out and "16 GPUs" in out, out
        assert len(out.splitlines()) == 1 and "Traceback" not in out, out


def test_apps_lists_every_skeleton(cli):
    r = cli("apps")
    for name in ("stencil4d", "subcomm3d", "kripke", "laghos", "amg", "sw4lite", "ring", "jacobi2d", "cosmo"):
        assert name in (r.stdout + r.stderr)
