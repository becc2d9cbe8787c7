"""`contend compare` and `contend.compare`: the fidelity ladder on a user's own traffic."""

import json

import pytest

import contend
from contend import api
from contend.errors import InputError

SMALL = """name: small-ft
fabric:
  fat_tree: {radix: 8, pods: 2}
link: {bandwidth: 10GB/s, latency: 100ns, router_delay: 50ns}
nodes: {gpus: 1}
network: {routing: spray, nic_scheduling: rr}
"""


@pytest.fixture
def cluster(tmp_path, cli):
    machine = tmp_path / "small.yaml"
    machine.write_text(SMALL)
    transfers = tmp_path / "perm.yaml"
    p = cli("generate", "permutation", str(machine), "--size", "1MiB", "--seed", "3", "-o", str(transfers))
    assert p.returncode == 0, p.stderr
    return machine, transfers


def test_compare_runs_every_model_and_names_the_one_that_does_not_apply(cli, cluster):
    machine, transfers = cluster
    p = cli("compare", machine, transfers, "--json", "--param", "packet.buffer=16")
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert r["reference"] == "packet" and r["transfers"] == 32
    runs = {m["model"]: m for m in r["models"]}
    assert set(runs) == {"sc16", "maxmin", "packet"}
    assert not runs["sc16"]["ran"] and runs["sc16"]["refused"] and "\n" not in runs["sc16"]["refused"]
    assert runs["packet"]["params"]["buffer"] == "16"
    assert runs["maxmin"]["wall_s"] > 0 and runs["packet"]["wall_s"] > 0
    (d,) = r["differences"]
    assert d["model"] == "maxmin" and d["compared"] == 32 and len(d["worst"]) == 10
    # Spraying on a full-bisection tree: both models give every message the injection bandwidth.
    assert d["median_pct"] < 5 and abs(d["makespan_diff_pct"]) < 5
    assert d["median_pct"] <= d["p90_pct"] <= d["max_pct"] == abs(d["worst"][0]["diff_pct"])

    p = cli("compare", machine, transfers)
    assert p.returncode == 0, p.stderr
    assert "maxmin against packet" in p.stdout and "does not apply" in p.stdout


def test_compare_mistakes_are_one_line(cli, cluster):
    machine, transfers = cluster
    for args, needle in [
        (["--param", "buffer=16"], "MODEL.NAME=VALUE"),
        (["--param", "pakcet.buffer=16"], "pakcet.buffer"),
        (["--model", "maxmin", "--param", "packet.buffer=16"], "--model packet"),
        (["--model", "maxmn"], "maxmn"),
    ]:
        p = cli("compare", machine, transfers, *args)
        assert p.returncode == 2 and needle in p.stderr and len(p.stderr.strip().splitlines()) == 1, (args, p.stderr)


def test_compare_from_python(cluster):
    machine, transfers = cluster
    c = contend.compare(api.Machine.load(machine), api.Transfers.load(transfers), models=["maxmin", "packet"])
    assert c.reference == "packet"
    assert list(c.models["model"]) == ["maxmin", "packet"]
    assert c.differences.loc[0, "model"] == "maxmin"
    assert len(c.worst("maxmin")) == 10
    with pytest.raises(InputError):
        c.worst("sc16")
