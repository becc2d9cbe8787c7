"""The model that runs where none is named follows the machine (round 25): sc16 on a node whose GPUs copy to each
other over PCIe trees alone, maxmin on any other machine, so a new user's first copy runs on every node preset."""

import json

import pytest

import contend
from conftest import run_cli

COPY = "transfers:\n  - {src: GPU0, dst: GPU1, size: 64MiB}\n"


def _pcie_tree_node(preset: str) -> bool:
    """From the topology, not by hand: no network link (one node), every link at a GPU is PCIe, and no PCIe switch
    sends peer copies up to its root complex (ACS redirect)."""
    g = contend.Machine.load(preset).graph()
    gpus = {d["name"] for d in g["devices"] if d["kind"] == "gpu"}
    at_gpu = [lk["kind"] for lk in g["links"] if lk["a"] in gpus or lk["b"] in gpus]
    return (all(lk["kind"] != "network" for lk in g["links"]) and all(k == "pcie" for k in at_gpu)
            and not any(d["acs_redirect"] for d in g["devices"]))


NODES = [p["name"] for p in contend.presets().to_dict("records")
         if all(lk["kind"] != "network" for lk in contend.Machine.load(p["name"]).graph()["links"])]


def test_the_presets_split_both_ways():
    trees = [p for p in NODES if _pcie_tree_node(p)]
    assert {"cs-storm-socket", "cs-storm", "typical-8gpu", "pcie-8gpu-ws"} <= set(trees), trees
    assert {"dgx1-p100", "nvlink-cpu-quad", "dgx-a100", "hgx-h100", "hgx-h200", "hgx-b200",
            "pcie-8gpu-ws-acs"}.isdisjoint(trees), trees


@pytest.mark.parametrize("preset", NODES)
def test_a_first_copy_runs_on_every_node_preset_without_a_model(preset, tmp_path):
    t = tmp_path / "t.yaml"
    t.write_text(COPY)
    p = run_cli("simulate", preset, str(t), "--json")
    assert p.returncode == 0, p.stderr
    expected = "sc16" if _pcie_tree_node(preset) else "maxmin"
    assert json.loads(p.stdout)["model"] == expected
    # The Python API takes the same default, and the table names the model that ran.
    assert contend.simulate(preset, contend.Transfers.parse(COPY)).raw["model"] == expected
    assert f" — {expected} (" in run_cli("simulate", preset, str(t)).stdout


def test_a_lone_nvlink_copy_on_dgx_a100_takes_the_data_sheet_rate(tmp_path):
    """64 MiB GPU0 -> GPU1 through the NVSwitch: A100's 12 NVLink 3 links of 25 GB/s each way (A100 data sheet:
    600 GB/s both ways) at maxmin's NVLink 3 efficiency 0.92 (eff_nvlink), after the copy engine's 2.2 us (Ampere),
    two NVLink hops of 0.05 us and the NVSwitch's 1 us (topology/default_latency.rs)."""
    t = tmp_path / "t.yaml"
    t.write_text(COPY)
    p = run_cli("simulate", "dgx-a100", str(t), "--json")
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert r["model"] == "maxmin"
    expected = 2.2e-6 + 2 * 0.05e-6 + 1.0e-6 + 64 * 2**20 / (12 * 25e9 * 0.92)  # 246.45 us
    assert r["summary"]["makespan_s"] == pytest.approx(expected, rel=1e-9)


def test_a_named_sc16_still_refuses_an_nvlink_copy_in_one_line(tmp_path):
    t = tmp_path / "t.yaml"
    t.write_text(COPY)
    p = run_cli("simulate", "dgx-a100", str(t), "--model", "sc16")
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert "model sc16 does not apply" in p.stderr and "--model maxmin" in p.stderr


def test_a_parameter_of_sc16_names_sc16_only_where_sc16_applies(tmp_path):
    """A user who read of sc16's tau passes it where maxmin runs: one line. On dgx-a100 (NVSwitch), which sc16 refuses,
    it says so and lists maxmin's own parameters, rather than sending the user to sc16's refusal and back; on
    typical-8gpu (a PCIe tree node sc16 takes) with --model maxmin it names the model to use."""
    t = tmp_path / "t.yaml"
    t.write_text(COPY)
    p = run_cli("simulate", "dgx-a100", str(t), "-p", "tau=0.2")
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert "tau: is a parameter of sc16, which does not apply to dgx-a100" in p.stderr, p.stderr
    assert "maxmin, the model that runs here, has no such parameter; known: " in p.stderr, p.stderr
    assert "--model sc16" not in p.stderr, p.stderr
    p = run_cli("simulate", "typical-8gpu", str(t), "--model", "maxmin", "-p", "tau=0.2")
    assert p.returncode == 2 and len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert "tau: is a parameter of sc16, not of maxmin, the model that runs here; use --model sc16" in p.stderr
    # The advice works: sc16 takes tau there.
    assert run_cli("simulate", "typical-8gpu", str(t), "--model", "sc16", "-p", "tau=0.2").returncode == 0
    # A name no model has still lists the running model's own.
    p = run_cli("simulate", "dgx-a100", str(t), "-p", "taux=0.2")
    assert p.returncode == 2 and "is not a parameter of maxmin; known: " in p.stderr, p.stderr
