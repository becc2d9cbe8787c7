"""Study files: expansion into points, and every mistake refused with one line and exit 2 before anything runs."""

import shutil
from pathlib import Path

import pytest

from contend import study

BASE = """name: t
base:
  cluster: "{fabric}-{nodes}x{gpus_per_node}"
  model: maxmin
  workload: {mix: {seed: 1}, placement: linear}
"""
GOOD = BASE + """axes:
  fabric: [fat-tree, dragonfly]
  bandwidth_scale: [0.5, 1, 2]
zip:
  gpus_per_node: [1, 4]
  nodes: [2048, 512]
repetitions: 2
baseline: {gpus_per_node: 1, bandwidth_scale: 1}
"""


def test_grid_zip_and_repetitions_expand_into_points():
    s = study.parse(GOOD, "s.yaml")
    assert len(s.points) == 2 * 3 * 2 * 2
    p = s.points[-1]
    assert p.values == {"fabric": "dragonfly", "bandwidth_scale": 2.0, "gpus_per_node": 4, "nodes": 512,
                        "repetition": 1}
    assert p.scenario["cluster"] == "dragonfly-512x4"
    assert p.scenario["bandwidth_scale"] == 2.0
    assert p.scenario["workload"]["mix"]["seed"] == 2  # the base seed plus the repetition
    assert len({q.hash for q in s.points}) == len(s.points)
    # A zip member in the baseline fixes its partners; numbers compare as numbers (1 is 1.0).
    assert s.baseline == {"gpus_per_node": 1, "nodes": 2048, "bandwidth_scale": 1.0}


def test_hash_depends_on_the_scenario_not_the_file_order():
    reordered = GOOD.replace("  fabric: [fat-tree, dragonfly]\n  bandwidth_scale: [0.5, 1, 2]\n",
                             "  bandwidth_scale: [0.5, 1, 2]\n  fabric: [fat-tree, dragonfly]\n")
    a = {p.hash for p in study.parse(GOOD, "a.yaml").points}
    b = {p.hash for p in study.parse(reordered, "b.yaml").points}
    assert a == b


def test_base_scenario_from_a_file(tmp_path):
    (tmp_path / "scenario.yaml").write_text("cluster: fat-tree-2048x1\nworkload: {mix: {seed: 3}}\n")
    (tmp_path / "s.yaml").write_text("base: scenario.yaml\naxes: {nic_scheduling: [fcfs, rr]}\n")
    s = study.load(tmp_path / "s.yaml")
    assert [p.scenario["nic_scheduling"] for p in s.points] == ["fcfs", "rr"]
    assert s.points[0].scenario["cluster"] == "fat-tree-2048x1"


def test_a_base_file_elsewhere_resolves_its_own_relative_paths(tmp_path):
    # The example scenario names its cluster and program relative to its own folder
    # (../clusters, ../programs), not the study's.
    shutil.copytree(Path(__file__).parent.parent / "examples", tmp_path / "examples")
    (tmp_path / "studies").mkdir()
    (tmp_path / "studies" / "st.yaml").write_text(
        "base: ../examples/scenarios/nccl-training-step.yaml\naxes: {nic_scheduling: [fcfs, rr]}\n")
    s = study.load(tmp_path / "studies" / "st.yaml")  # checks every point through the engine
    assert len(s.points) == 2
    origin = study.spec.origin_of(s, s.points[0])
    assert origin.startswith(str(tmp_path / "studies" / "../examples/scenarios/nccl-training-step.yaml (study "))
    # An axis value is written in the study: a file it names starts at the study's folder.
    shutil.copy(tmp_path / "examples" / "clusters" / "dgx-a100-x2.yaml", tmp_path / "studies" / "mine.yaml")
    (tmp_path / "studies" / "st2.yaml").write_text(
        "base: ../examples/scenarios/nccl-training-step.yaml\naxes: {cluster: [mine.yaml]}\n")
    assert len(study.load(tmp_path / "studies" / "st2.yaml").points) == 1


BAD = [
    ("axes: {bandwidth_scale: []}\n", "axes.bandwidth_scale: empty"),
    ("axes: {bandwidth_scale: 1}\n", "axes.bandwidth_scale: give the values as a list"),
    ("axes: {bandwidth_scale: [1, 1.0]}\n", "appears twice"),
    ("axes: {bandwidth_scale: [1, fast]}\n", "mixes strings"),
    ("axes: {bandwidth_scale: [{a: 1}]}\n", "is not a number, string or boolean"),
    ("axes: {fabric: [fat-tree]}\nzip: {gpus_per_node: [1, 2], nodes: [2048]}\n", "zip: lists of different lengths"),
    ("axes: {fabric: [fat-tree], gpus_per_node: [1], nodes: [2048]}\nbaseline: {bandwidth_scale: 1}\n",
     "baseline.bandwidth_scale: is not an axis"),
    ("axes: {fabric: [fat-tree], gpus_per_node: [1], nodes: [2048]}\nbaseline: {gpus_per_node: 2}\n",
     "baseline.gpus_per_node: 2 is not among the axis values"),
    ("axes: {fabric: [fat-tree], gpus_per_node: [1]}\n", "base: {nodes} names no axis"),
    ("axes: {fabric: [fat-tree], gpus_per_node: [1], nodes: [2048]}\nrepetitions: 0\n", "repetitions: give a whole"),
    ("axes: {fabric: [fat-tree], gpus_per_node: [1], nodes: [2048]}\nrepeats: 2\n", "repeats: unknown key"),
    ("axes: {fabric: [fat-tree], gpus_per_node: [1], nodes: [2048], repetition: [1]}\n",
     "axes.repetition: not an axis"),
]


@pytest.mark.parametrize("tail,message", BAD)
def test_bad_study_file_is_one_line_and_exit_2(cli, tmp_path, tail, message):
    path = tmp_path / "bad.yaml"
    path.write_text(BASE + tail)
    r = cli("study", path, "-o", tmp_path / "out")
    assert r.returncode == 2, r.stderr
    assert message in r.stderr and str(path) in r.stderr
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
    assert not (tmp_path / "out").exists()  # refused before anything ran or was written


def test_not_yaml_and_missing_file(cli, tmp_path):
    path = tmp_path / "bad.yaml"
    path.write_text("axes: [unclosed\n")
    r = cli("study", path)
    assert r.returncode == 2 and "not valid YAML" in r.stderr
    r = cli("study", tmp_path / "missing.yaml")
    assert r.returncode == 2 and "cannot read the study file" in r.stderr


@pytest.mark.parametrize("workers", ["0", "100000"])
def test_absurd_worker_counts_are_refused_before_anything_starts(cli, tmp_path, workers):
    path = tmp_path / "s.yaml"
    path.write_text(BASE + "axes: {fabric: [fat-tree], gpus_per_node: [1], nodes: [2048]}\n")
    r = cli("study", path, "-o", tmp_path / "out", "--workers", workers)
    assert r.returncode == 2 and f"--workers: is {workers}; give 1 to" in r.stderr, r.stderr
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
    assert not (tmp_path / "out").exists()


def test_a_bandwidth_scale_outside_x16_either_way_is_refused_by_a_dry_run(tmp_path):
    """README: bandwidth_scale runs from x/16 to 16x; 400 (round 17's tester) stops the dry run in one line that
    names the study file and the axis."""
    from conftest import run_cli

    f = tmp_path / "wide.yaml"
    f.write_text(GOOD.replace("bandwidth_scale: [0.5, 1, 2]", "bandwidth_scale: [1, 400]"))
    p = run_cli("study", f, "--dry-run")
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert "wide.yaml" in p.stderr and "bandwidth_scale" in p.stderr and "[0.0625, 16]" in p.stderr, p.stderr
    f.write_text(GOOD.replace("bandwidth_scale: [0.5, 1, 2]", "bandwidth_scale: [0.0625, 1, 16]"))
    assert run_cli("study", f, "--dry-run").returncode == 0
