"""Clusters through the CLI and the Python API, as a user would."""

import json

import pytest

import contend

SMALL = """name: small-ft
fabric:
  fat_tree: {radix: 8, pods: 2}
link: {bandwidth: 10GB/s, latency: 100ns, router_delay: 50ns}
nodes: {gpus: 2}
network: {routing: spray, nic_scheduling: rr}
"""


def test_show_a_cluster_preset(cli):
    p = cli("show", "dragonfly-2048x1")
    assert p.returncode == 0, p.stderr
    assert "1D dragonfly: 16 groups of 16 routers" in p.stdout
    assert "8 to 9 global links per group pair" in p.stdout
    assert "node n0:" in p.stdout


def test_simulate_a_cluster_under_both_network_models(cli, tmp_path):
    machine = tmp_path / "small.yaml"
    machine.write_text(SMALL)
    transfers = tmp_path / "perm.yaml"
    p = cli("generate", "permutation", str(machine), "--size", "4MiB", "--seed", "2", "-o", str(transfers))
    assert p.returncode == 0, p.stderr
    def makespan(machine_file, model):
        p = cli("simulate", str(machine_file), str(transfers), "--model", model, "--json")
        assert p.returncode == 0, p.stderr
        r = json.loads(p.stdout)
        assert r["summary"]["transfers"] == 64
        return r["summary"]["makespan_s"]

    # Spraying on a full-bisection tree: the two GPUs of a node share its NIC's 10 GB/s.
    assert abs(makespan(machine, "maxmin") - 2 * 4 * 2**20 / 10e9) / makespan(machine, "maxmin") < 0.02
    # On the same paths (ECMP per message: the packet model does not spray), the models agree.
    ecmp = tmp_path / "ecmp.yaml"
    ecmp.write_text(SMALL.replace("routing: spray", "routing: ecmp"))
    flow, packets = makespan(ecmp, "maxmin"), makespan(ecmp, "packet")
    assert abs(packets - flow) / flow < 0.05, (flow, packets)


def test_group_shift_and_neighbours_generators():
    m = contend.Machine.load("dragonfly-256x8")
    t = contend.Transfers.generate("group-shift", m, "1MiB")
    assert len(t) == 2048
    assert all(r["src"].split(".")[0] != r["dst"].split(".")[0] for r in t.records[:5])
    t = contend.Transfers.generate("neighbours", m, "1MiB", grid="16x16x8")
    assert len(t) == 2 * (15 * 16 * 8 + 16 * 15 * 8 + 16 * 16 * 7)


def test_bad_cluster_gets_one_line(cli, tmp_path):
    machine = tmp_path / "bad.yaml"
    machine.write_text(SMALL.replace("pods: 2", "pods: 2, leaves_per_pod: 2, aggregates_per_pod: 8"))
    p = cli("show", str(machine))
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1
    assert "fabric.fat_tree.radix" in p.stderr


def test_fabric_pictures(cli, tmp_path):
    png = tmp_path / "ft.png"
    p = cli("show", "fat-tree-512x4", "--png", str(png))
    assert p.returncode == 0, p.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    machine = tmp_path / "small.yaml"
    machine.write_text(SMALL)
    transfers = tmp_path / "t.yaml"
    p = cli("generate", "incast", str(machine), "--root", "n0.GPU0", "--size", "1MiB", "-o", str(transfers))
    assert p.returncode == 0, p.stderr
    fabric = tmp_path / "fabric.png"
    p = cli("simulate", str(machine), str(transfers), "--model", "maxmin", "--fabric", str(fabric))
    assert p.returncode == 0, p.stderr
    assert fabric.exists()
    p = cli("simulate", "cs-storm-socket", "sc16-example", "--fabric", str(tmp_path / "x.png"))
    assert p.returncode == 2 and "not a cluster" in p.stderr


def test_nic_queues_and_their_trace(cli, tmp_path):
    machine = tmp_path / "fcfs.yaml"
    machine.write_text(SMALL.replace("nic_scheduling: rr", "nic_scheduling: fcfs"))
    m = contend.Machine.load(machine)
    t = contend.Transfers.from_records([
        {"src": "n0.GPU0", "dst": "n5.GPU0", "size": "8MiB"},
        {"src": "n0.GPU1", "dst": "n9.GPU1", "size": "8MiB"},
        {"src": "n0.GPU0", "dst": "n12.GPU0", "size": "8MiB"},
    ])
    r = contend.simulate(m, t, model="maxmin", nics=True)
    q = r.nic_queues()
    n0 = q[q.nic == "n0.NIC0"]
    assert list(n0.queued) == [1, 2, 3, 2, 1, 0]  # all three queue at once, FCFS sends one at a time
    finish = sorted(r.transfers.finish_s)
    assert finish[1] > 1.9 * finish[0] and finish[2] > 2.9 * finish[0] * 0.99
    trace = tmp_path / "trace.json"
    transfers = tmp_path / "t.yaml"
    transfers.write_text(t.to_yaml())
    p = cli("simulate", str(machine), str(transfers), "--model", "maxmin", "--trace", str(trace))
    assert p.returncode == 0, p.stderr
    events = json.loads(trace.read_text())["traceEvents"]
    assert any(e.get("name") == "n0.NIC0" and e["ph"] == "C" for e in events)


@pytest.mark.parametrize("preset,top_down", [
    ("fat-tree-512x4", ["core", "agg", "leaf", "nodes"]),
    # Rail switches hold the nodes' NICs, spines join the rails: spines on top whatever their letters.
    ("superpod-h100-su", ["S", "R", "nodes"]),
])
def test_fabric_pictures_stack_tiers_by_hops_from_the_nodes(preset, top_down):
    from contend.plots import _tier, tier_order

    g = contend.Machine.load(preset).graph()
    tier = {d["name"]: _tier(d["name"], d["kind"]) for d in g["devices"]}
    pairs = {(tier[lk["a"]], tier[lk["b"]]) for lk in g["links"] if lk["kind"] == "network"}
    assert tier_order(set(tier.values()) - {"nodes"}, pairs) == top_down


def test_the_default_model_follows_the_machine(cli, tmp_path, example_file):
    """No --model: maxmin on a cluster (sc16 takes no network), sc16 on a PCIe-tree node, as the registry declares;
    the values are those of the same model named, and the report says which ran (round 17's tester)."""
    machine = tmp_path / "small.yaml"
    machine.write_text(SMALL)
    transfers = tmp_path / "perm.yaml"
    assert cli("generate", "permutation", str(machine), "--size", "1MiB", "-o", str(transfers)).returncode == 0
    for m, t, model in [(str(machine), str(transfers), "maxmin"), ("cs-storm-socket", example_file, "sc16")]:
        plain = cli("simulate", m, t, "--json")
        assert plain.returncode == 0, plain.stderr
        named = cli("simulate", m, t, "--model", model, "--json")
        assert json.loads(plain.stdout) == json.loads(named.stdout)
        assert json.loads(plain.stdout)["model"] == model
        table = cli("simulate", m, t)
        assert f" — {model} (" in table.stdout, table.stdout
        api = contend.simulate(m, t)
        assert api.raw["model"] == model and api.raw["summary"] == json.loads(named.stdout)["summary"]
    # --model still wins, and sc16 on a cluster is still refused in one line.
    p = cli("simulate", str(machine), str(transfers), "--model", "sc16")
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1 and "sc16" in p.stderr
    # The registry declares the rule; `--help`, `contend models` and the docs say it.
    from contend.cli.shared import MODEL_DEFAULT_RULE

    defaults = {m["name"]: m["default_on"] for m in contend.models() if m["default_on"]}
    assert list(defaults) == ["sc16", "maxmin"]
    assert MODEL_DEFAULT_RULE == ", ".join(f"{name} on {where}" for name, where in defaults.items())
    for command in ("simulate", "schedule", "explain"):
        # The rule as the help prints it, wrapped in its box.
        assert MODEL_DEFAULT_RULE in " ".join(cli(command, "--help").stdout.replace("│", " ").split()), command
    assert f"default on: {defaults['maxmin']}" in cli("models").stdout


def test_schedule_takes_the_machines_default_model():
    """A schedule search without a model runs the machine's default (sc16 on one PCIe tree)."""
    s = contend.schedule("cs-storm-socket", search="exhaustive")
    named = contend.schedule("cs-storm-socket", search="exhaustive", model="sc16")
    assert s.raw["model"] == "sc16" and s.raw["best_s"] == named.raw["best_s"]


def test_the_cluster_schema_is_printed_and_lists_every_key(cli):
    p = cli("schema", "cluster")
    assert p.returncode == 0, p.stderr
    s = json.loads(p.stdout)
    assert {"name", "fabric", "link", "nodes"} <= set(s["required"]) and "network" in s["properties"]
    assert "cluster" in " ".join(cli("schema", "--help").stdout.split())
