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


@pytest.mark.parametrize("routing,noted", [("valiant", True), ("ugal", True), ("adaptive", True), ("minimal", False),
                                           ("spray", False)])
def test_a_routing_chosen_per_message_and_per_packet_is_noted(cli, tmp_path, routing, noted):
    # A dragonfly (2 nodes, 4 routers a group, 2 global links each, 5 groups): valiant, ugal and adaptive choose
    # a message's way once under maxmin and every packet's under packet; minimal keeps one path under both and
    # spray splits a message evenly at flow level as packets spread.
    machine = tmp_path / "df.yaml"
    machine.write_text("name: df\nfabric:\n  dragonfly: {p: 2, a: 4, h: 2, groups: 5}\n"
                       "link: {bandwidth: 10GB/s, latency: 200ns}\nnodes: {gpus: 1}\n"
                       f"network: {{routing: {routing}}}\n")
    transfers = tmp_path / "t.yaml"
    transfers.write_text("transfers:\n  - {src: n0.GPU0, dst: n39.GPU0, size: 1MiB}\n")
    p = cli("compare", machine, transfers, "--json")
    assert p.returncode == 0, p.stderr
    notes = json.loads(p.stdout)["notes"]
    assert (len(notes) == 1 and f"routing {routing}" in notes[0] and "packet decides at every packet" in notes[0]
            if noted else notes == []), notes
    p = cli("compare", machine, transfers)
    assert ("note: routing" in p.stdout and "routes per message" in p.stdout) == noted, p.stdout
