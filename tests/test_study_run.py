"""Studies run for real on Dask: the same data on 1 and 2 workers and twice, a SIGKILLed run resumed into the
uninterrupted dataset, mistakes refused before anything runs, and the report drawn from the Parquet files."""

import os
import signal
import subprocess
import sys
import time

import pandas as pd
import pytest

from contend import study

# Small jobs on seed 003's 2,048-GPU fabrics: tens of milliseconds a point.
STUDY = """name: small
base:
  cluster: "fat-tree-{nodes}x{gpus_per_node}"
  workload:
    placement: random
    seed: 1
    jobs:
      - {app: stencil4d, ranks: 16, params: {iterations: "1"}}
      - {app: kripke, ranks: 16, params: {iterations: "1"}}
      - {app: subcomm3d, ranks: 32, params: {iterations: "1"}}
axes:
  bandwidth_scale: [0.5, 1, 2]
  nic_scheduling: [fcfs, rr]
zip:
  gpus_per_node: [1, 8]
  nodes: [2048, 256]
repetitions: {count: 2, seed: workload.seed}
baseline: {gpus_per_node: 1, bandwidth_scale: 1, nic_scheduling: fcfs}
"""
POINTS = 3 * 2 * 2 * 2


def files(folder):
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The study run once without interruption, on 2 workers."""
    d = tmp_path_factory.mktemp("study")
    (d / "s.yaml").write_text(STUDY)
    from conftest import run_cli

    r = run_cli("study", d / "s.yaml", "-o", d / "ref", "--workers", "2")
    assert r.returncode == 0, r.stderr
    assert f"{POINTS} points run, 0 already done" in r.stderr
    return d


def test_one_row_per_job_per_point_with_every_axis(reference):
    df, meta = study.read(reference / "ref")
    assert len(df) == POINTS * 3 and df["scenario_hash"].nunique() == POINTS
    assert set(df.columns) >= {"bandwidth_scale", "nic_scheduling", "gpus_per_node", "nodes", "repetition",
                               "scenario_hash", "contend_version", "app", "ranks", "run_time_s", "comm_s"}
    assert not df.duplicated(["scenario_hash", "job"]).any()
    assert (df["run_time_s"] > 0).all() and set(df["app"]) == {"stencil4d", "kripke", "subcomm3d"}
    assert meta["baseline"] == {"gpus_per_node": 1, "nodes": 2048, "bandwidth_scale": 1.0, "nic_scheduling": "fcfs"}
    # Random placement differs between the repetitions' seeds, so the rows do too.
    a, b = (df[df["repetition"] == r]["run_time_s"].to_numpy() for r in (0, 1))
    assert (a != b).any()


def test_same_dataset_on_one_worker_and_when_run_again(cli, reference, tmp_path):
    r = cli("study", reference / "s.yaml", "-o", tmp_path / "one", "--workers", "1")
    assert r.returncode == 0, r.stderr
    assert files(tmp_path / "one") == files(reference / "ref")  # byte for byte
    before = {p.name: p.stat().st_mtime_ns for p in (reference / "ref").iterdir()}
    r = cli("study", reference / "s.yaml", "-o", reference / "ref", "--workers", "1")
    assert r.returncode == 0 and f"0 points run, {POINTS} already done" in r.stderr
    assert {p.name: p.stat().st_mtime_ns for p in (reference / "ref").iterdir()} == before


def test_sigkill_part_way_then_resume_gives_the_uninterrupted_dataset(cli, reference, tmp_path):
    out = tmp_path / "killed"
    cmd = [sys.executable, "-m", "contend.cli", "study", str(reference / "s.yaml"), "-o", str(out), "--workers", "1"]
    proc = subprocess.Popen(cmd, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None and len(list(out.glob("*.parquet"))) < 2:
            time.sleep(0.005)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # the client, the scheduler and the worker, at once
        proc.wait()
    done = list(out.glob("*.parquet"))
    assert 2 <= len(done) < POINTS, f"{len(done)} points finished before the kill"
    (out / ".0123.999.tmp").write_bytes(b"half a file")  # what a kill during a write leaves
    r = cli("study", reference / "s.yaml", "-o", out, "--workers", "2")
    assert r.returncode == 0, r.stderr
    assert f"{POINTS - len(done)} points run, {len(done)} already done" in r.stderr
    assert files(out) == files(reference / "ref")  # the temporary is gone, nothing is twice, nothing differs


def _interrupted(study, out, ready, timeout):
    """Run `contend study STUDY -o OUT` on one worker, send Ctrl-C to its process group once `ready(proc)`, and
    give its exit code and standard error. A shell without job control starts background jobs with SIGINT
    ignored, and a child inherits that (CI ran the suite so, and the study never saw the signal): the study
    starts as a terminal's would."""
    cmd = [sys.executable, "-m", "contend.cli", "study", str(study), "-o", str(out), "--workers", "1"]
    proc = subprocess.Popen(cmd, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and proc.poll() is None and not ready(proc):
            time.sleep(0.005)
        os.killpg(proc.pid, signal.SIGINT)
        _, stderr = proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return proc.returncode, stderr


def test_ctrl_c_is_one_line_without_the_workers_tracebacks(reference, tmp_path):
    # Ctrl-C reaches the whole process group: the workers ignore it, the parent stops them and says what to do
    # (each worker printed a 30-line KeyboardInterrupt traceback before the useful line).
    # 600 points of tens of milliseconds: still running when its first points are written, on a fast machine too.
    out = tmp_path / "interrupted"
    long = tmp_path / "long.yaml"
    long.write_text(STUDY.replace("repetitions: {count: 2,", "repetitions: {count: 50,"))
    code, stderr = _interrupted(long, out, lambda proc: bool(list(out.glob("*.parquet"))), 60)
    assert code == 130, stderr
    assert "KeyboardInterrupt" not in stderr and "Traceback" not in stderr, stderr
    assert "interrupted: the points finished are kept in" in stderr


def test_ctrl_c_while_the_workers_start_stops_the_study_once_they_are_up(tmp_path):
    # The signal is sent once the parent has started its worker process, whose start (importing Dask and
    # contend) takes a second or more, so it arrives while LocalCluster() starts however loaded the machine.
    # It used to be ignored there and dropped: the study ran every point and ended 0.
    psutil = pytest.importorskip("psutil")  # a dependency of Dask's
    (tmp_path / "s.yaml").write_text(STUDY)
    out = tmp_path / "interrupted"

    def worker_started(proc) -> bool:
        try:
            started = any("spawn_main" in " ".join(c.cmdline()) for c in psutil.Process(proc.pid).children())
        except psutil.Error:  # a child that ended between the listing and the look
            return False
        assert not (started and list(out.glob("*.parquet"))), "a point finished before the workers were seen starting"
        return started

    code, stderr = _interrupted(tmp_path / "s.yaml", out, worker_started, 120)
    assert code == 130, stderr
    assert stderr.strip().splitlines() == [f"interrupted: the points finished are kept in {out}; run the same "
                                           "command again to resume"], stderr
    assert len(list(out.glob("*.parquet"))) < POINTS


def test_a_folder_of_another_study_is_refused(cli, reference):
    other = STUDY.replace("nic_scheduling: fcfs}", "nic_scheduling: rr}")
    (reference / "other.yaml").write_text(other)
    r = cli("study", reference / "other.yaml", "-o", reference / "ref")
    assert r.returncode == 2 and "another baseline" in r.stderr


def test_a_folder_of_another_base_or_name_is_refused_and_a_dry_run_checks_the_folder(cli, reference):
    # Another base scenario or another study's name would mix two studies' points in one report.
    changed = {"base": STUDY.replace("seed: 1", "seed: 2"), "name": STUDY.replace("name: small", "name: x")}
    for name, text in changed.items():
        (reference / f"{name}.yaml").write_text(text)
        for dry in ((), ("--dry-run",)):
            r = cli("study", reference / f"{name}.yaml", "-o", reference / "ref", *dry)
            assert r.returncode == 2, r.stderr
            assert ("another base scenario" if name == "base" else "study 'small'") in r.stderr
    r = cli("study", reference / "s.yaml", "-o", reference / "ref", "--dry-run")
    assert r.returncode == 0 and f"({POINTS} already done there)" in r.stdout, r.stderr


@pytest.mark.parametrize("change,message", [
    (("  bandwidth_scale: [0.5, 1, 2]\n", "  bandwith_scale: [0.5, 1, 2]\n"), "unknown field `bandwith_scale`"),
    (("nic_scheduling: [fcfs, rr]", "nic_scheduling: [fcfs, rr-x]"), 'nic_scheduling: "rr-x" is not'),
    (("app: kripke", "app: kripkee"), '"kripkee" is not an application'),
    (("bandwidth_scale: [0.5, 1, 2]", "bandwidth_scale: [-1, 1, 2]"), "bandwidth_scale: is -1"),
])
def test_unknown_axis_or_bad_value_is_refused_by_the_engine_before_running(cli, tmp_path, change, message):
    text = STUDY.replace(*change)
    if "bandwith" in change[1]:
        text = text.replace("bandwidth_scale: 1, ", "")
    (tmp_path / "bad.yaml").write_text(text)
    r = cli("study", tmp_path / "bad.yaml", "-o", tmp_path / "out")
    assert r.returncode == 2, r.stderr
    assert message in r.stderr and "bad.yaml (point " in r.stderr, r.stderr
    assert r.stderr.count("\n") == 1
    assert not (tmp_path / "out").exists()


def test_report_from_the_parquet_files(cli, reference, tmp_path):
    r = cli("report", reference / "ref", "-o", tmp_path / "rep")
    assert r.returncode == 0, r.stderr
    names = {p.name for p in (tmp_path / "rep").iterdir()}
    assert {"report.md", "speedups.csv", "table-ii-all.csv", "table-ii-all.png", "nic-all.png",
            "bandwidth-all-8gpn.png", "speedup-gpus_per_node-all.png"} <= names
    sp = pd.read_csv(tmp_path / "rep" / "speedups.csv")
    at_base = sp[(sp.gpus_per_node == 1) & (sp.bandwidth_scale == 1) & (sp.nic_scheduling == "fcfs")]
    assert len(at_base) == 3 and (at_base["speedup"] == 1).all()
    t2 = pd.read_csv(tmp_path / "rep" / "table-ii-all.csv")
    assert set(t2["gpus_per_node"]) == {8} and set(t2["app"]) == {"stencil4d", "kripke", "subcomm3d"}
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "## Table II" in md and "| kripke |" in md
    # Every chart's numbers are in the Markdown too, for any study (not only seed 003's Table II and NIC study).
    assert "## Speed-up against gpus_per_node (other axes at the baseline)" in md and "| gpus_per_node = 1 |" in md


def test_a_bad_parameter_value_names_the_point_before_any_runs(cli, reference, tmp_path):
    # Parameter values are read by kind when the study checks its points: exit 2 before the first one runs.
    axis = '  params.eff_network: ["1", "most"]\n'
    text = STUDY.replace("  nic_scheduling: [fcfs, rr]\n", "  nic_scheduling: [fcfs, rr]\n" + axis)
    (tmp_path / "bad.yaml").write_text(text)
    r = cli("study", tmp_path / "bad.yaml", "-o", tmp_path / "out", "--workers", "1")
    assert r.returncode == 2, r.stderr
    assert "bad.yaml (point " in r.stderr and "params.eff_network=most" in r.stderr and "(0, 1]" in r.stderr
    assert r.stderr.count("\n") == 1
    assert not list((tmp_path / "out").glob("*.parquet"))


def test_an_unreachable_scheduler_is_one_line(cli, reference, tmp_path):
    import dask

    with dask.config.set({"distributed.comm.timeouts.connect": "1s"}):
        r = cli("study", reference / "s.yaml", "-o", tmp_path / "out", "--scheduler", "tcp://127.0.0.1:9")
    assert r.returncode == 2 and "--scheduler: cannot reach" in r.stderr, r.stderr


def test_each_worker_works_through_a_group_then_an_untouched_one_then_helps_the_biggest():
    from contend.study.groups import Groups

    g = Groups(["a1", "a2", "a3", "b1", "b2", "c1"], lambda p: p[0])
    assert [g.next("w1"), g.next("w2")] == ["a1", "b1"]
    assert [g.next("w2"), g.next("w2")] == ["b2", "c1"]  # b is done: c, which nobody started
    assert g.next("w2") == "a2"  # nothing untouched: the group with the most points left
    assert [g.next("w1"), g.next("w1"), g.next("w2"), len(g)] == ["a3", None, None, 0]


def test_the_default_report_folder_leaves_the_dataset_readable(cli, reference, tmp_path):
    # docs/studies.md promises `pd.read_parquet(RESULTS)` and `contend.study.read(RESULTS)` after `contend report`.
    import shutil

    results = tmp_path / "ref"
    shutil.copytree(reference / "ref", results)
    before = pd.read_parquet(results)
    r = cli("report", results)
    assert r.returncode == 0, r.stderr
    assert (results / "_report" / "report.md").is_file()
    assert len(pd.read_parquet(results)) == len(before)
    code = f"import contend; print(len(contend.study.read({str(results)!r})[0]))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert int(out.stdout) == len(before)
