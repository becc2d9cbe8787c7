"""Golden numbers from the SC16 slides, through the Python API and the CLI."""

import json

import pytest

import contend
from conftest import run_cli


def test_worked_example_tau_02_factors_per_step():
    m = contend.Machine.load("cs-storm-socket")
    e = contend.explain(m, contend.Transfers.example(), tau=0.2)
    f = e.factors
    phase1 = f[f.phase == 0].set_index(["src", "dst"])
    expected = {
        ("GPU0", "GPU2"): (1, 0.5, 0.5, 0.3, 0.3),
        ("GPU1", "GPU4"): (1, 0.5, 0.3, 0.3, 0.3),
        ("GPU3", "GPU2"): (1, 1, 0.5, 0.5, 0.7),
        ("GPU6", "GPU4"): (1, 1, 0.7, 0.7, 0.7),
    }
    for key, values in expected.items():
        row = phase1.loc[key]
        assert tuple(row[c] for c in ("A", "B", "C", "D", "final")) == pytest.approx(values, abs=1e-12)
    phase2 = f[f.phase == 1]
    assert list(phase2["final"]) == pytest.approx([0.5, 0.5])


@pytest.mark.parametrize("tau,fast,slow", [(0.2, 36.08, 64.94), (0.1735, 37.50, 63.52)])
def test_worked_example_finish_times(tau, fast, slow):
    r = contend.simulate(contend.Machine.load("cs-storm-socket"), contend.Transfers.example(), tau=tau)
    finish = (r.transfers["finish_s"] * 1e3).round(2).tolist()
    assert finish == [slow, slow, fast, fast]


def test_cli_json_has_the_documented_fields(example_file):
    p = run_cli("simulate", "cs-storm-socket", example_file, "--param", "tau=0.2", "--json")
    assert p.returncode == 0, p.stderr
    data = json.loads(p.stdout)
    t = data["transfers"]
    for field in ("name", "src", "dst", "size_bytes", "start_s", "finish_s", "duration_s", "bandwidth_bps"):
        assert len(t[field]) == 4
    assert t["size_bytes"][0] == 300 * 2**20
    assert round(t["finish_s"][0] * 1e3, 2) == 64.94
    assert round(data["summary"]["makespan_s"] * 1e3, 2) == 64.94
    assert "phases" not in data  # only with --phases
    links = data["links"]
    k0 = links["name"].index("K0→SWA")
    # Phase 1: 3/10 + 3/10 of B; phase 2: 1/2 + 1/2.
    assert links["bytes"][k0] == 2 * 300 * 2**20 and links["peak_utilisation"][k0] == pytest.approx(1.0)
    p = run_cli("simulate", "cs-storm-socket", example_file, "--param", "tau=0.2", "--json", "--phases")
    assert len(json.loads(p.stdout)["phases"]["start_s"]) == 2


def test_cli_csv(example_file):
    p = run_cli("simulate", "cs-storm-socket", example_file, "--csv")
    assert p.returncode == 0, p.stderr
    lines = p.stdout.strip().splitlines()
    assert lines[0].split(",")[:5] == ["name", "src", "dst", "size_bytes", "start_s"]
    assert len(lines) == 5


def test_cli_explain_reproduces_the_slides_table(example_file):
    p = run_cli("explain", "cs-storm-socket", example_file, "--param", "tau=0.2")
    assert p.returncode == 0, p.stderr
    rows = [l for l in p.stdout.splitlines() if l.startswith("│ t")]
    cells = [[c.strip() for c in r.strip("│").split("│")] for r in rows[:4]]
    assert cells[0] == ["t0 GPU0→GPU2", "1", "1/2", "1/2", "3/10", "3/10"]
    assert cells[1] == ["t1 GPU1→GPU4", "1", "1/2", "3/10", "3/10", "3/10"]
    assert cells[2] == ["t2 GPU3→GPU2", "1", "1", "1/2", "1/2", "7/10"]
    assert cells[3] == ["t3 GPU6→GPU4", "1", "1", "7/10", "7/10", "7/10"]
    assert "upstream port of K0" in p.stdout
    assert "port of SWB towards K2: round-robin with root-complex penalty τ" in p.stdout
    assert "head-of-line blocking in the FIFO of K0→SWA behind GPU1→GPU4" in p.stdout
    assert "port of K1 towards GPU2: picks up capacity freed" in p.stdout


def test_lone_transfer_is_size_over_b():
    m = contend.Machine.load("cs-storm-socket")
    t = contend.Transfers.from_records([{"src": "GPU1", "dst": "GPU6", "size": "300MiB"}])
    r = contend.simulate(m, t, bandwidth="11.6GiB/s")
    assert r.transfers["duration_s"][0] == pytest.approx(300 / (11.6 * 1024), rel=1e-12)
