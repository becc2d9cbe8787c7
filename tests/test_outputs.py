"""Pictures, traces, generators, schemas and the listing commands."""

import json
from pathlib import Path

import contend
from conftest import run_cli


def test_timeline_and_trace(tmp_path, example_file):
    png, trace = tmp_path / "t.png", tmp_path / "t.json"
    p = run_cli("simulate", "cs-storm-socket", example_file, "--timeline", str(png), "--trace", str(trace))
    assert p.returncode == 0, p.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    events = json.loads(trace.read_text())["traceEvents"]
    phases = [e for e in events if e.get("pid") and e["ph"] == "X" and e["name"].startswith("phase")]
    assert [e["name"] for e in phases] == ["phase 1", "phase 2"]
    names = {e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
    assert {"GPU0", "GPU1", "GPU3", "GPU6"} <= names
    counters = {e["name"] for e in events if e["ph"] == "C"}
    assert "K0→SWA" in counters and "SWB→K2" in counters
    assert all(0 <= e["args"]["load"] <= 1 + 1e-9 for e in events if e["ph"] == "C")


def test_show_draws_the_machine(tmp_path):
    png = tmp_path / "m.png"
    p = run_cli("show", "cs-storm", "--png", str(png))
    assert p.returncode == 0, p.stderr
    assert "RC1 (root_complex)" in p.stdout and "QPI" in p.stdout
    assert png.stat().st_size > 10_000


PARTITIONS = """name: parts
devices:
  - {name: RC, kind: root_complex}
  - {name: P0, kind: pcie_switch}
  - {name: P1, kind: pcie_switch}
  - {name: GPU0, kind: gpu}
  - {name: GPU1, kind: gpu}
links:
  - {a: RC, b: P0, kind: pcie, gen: 4, lanes: 16}
  - {a: RC, b: P1, kind: pcie, gen: 4, lanes: 16}
  - {a: P0, b: P1, kind: pcie, bandwidth: 64GB/s}
  - {a: P0, b: GPU0, kind: pcie, gen: 4, lanes: 16}
  - {a: P1, b: GPU1, kind: pcie, gen: 4, lanes: 16}
"""


def test_show_draws_and_marks_links_closing_a_cycle(tmp_path):
    m, png = tmp_path / "parts.yaml", tmp_path / "parts.png"
    m.write_text(PARTITIONS)
    p = run_cli("show", str(m), "--png", str(png))
    assert p.returncode == 0, p.stderr
    assert "⟲ P0 ↔ P1" in p.stdout
    assert png.stat().st_size > 5_000


def test_the_machine_diagram_hangs_numa_nodes_under_their_socket(tmp_path):
    from contend.plots import socket_roots

    fixtures = Path(__file__).parent.parent / "crates" / "contend-core" / "tests" / "fixtures"
    yaml, _ = contend.import_machine(fixtures / "lspci-constructed-8xh100-pcie.txt", numa_per_socket=2)
    (tmp_path / "m.yaml").write_text(yaml)
    graph = contend.Machine.load(tmp_path / "m.yaml").graph()
    kind = {d["name"]: d["kind"] for d in graph["devices"]}
    # SOCKET0 joins the two NUMA nodes' root complexes, each above its host bridges.
    assert socket_roots(graph, kind) == ["SOCKET0"]
    storm = contend.Machine.load("cs-storm").graph()
    assert socket_roots(storm, {d["name"]: d["kind"] for d in storm["devices"]}) == ["RC0", "RC1"]
    png = tmp_path / "m.png"
    assert run_cli("show", str(tmp_path / "m.yaml"), "--png", str(png)).returncode == 0
    assert png.stat().st_size > 10_000
    # Devices joined only to each other (by the fabric) are drawn too, apart.
    apart = "  - {name: GPU2, kind: gpu}\n  - {name: GPU3, kind: gpu}\nlinks:"
    (tmp_path / "f.yaml").write_text(PARTITIONS.replace("links:", apart)
                                     + "  - {a: GPU2, b: GPU3, kind: fabric, bandwidth: 100GB/s}\n")
    p = run_cli("show", str(tmp_path / "f.yaml"), "--png", str(png), "--force")
    assert p.returncode == 0, p.stderr


def test_the_machine_diagram_tells_a_socket_link_from_nvlink():
    from contend.plots import ARC_NAMES, arc_style

    # dgx-a100 has both: UPI between the sockets, NVLink to the NVSwitch.
    kinds = {link["kind"] for link in contend.Machine.load("dgx-a100").graph()["links"]}
    assert {"upi", "nvlink"} <= kinds
    assert arc_style("upi") == arc_style("qpi") == arc_style("xgmi") != arc_style("nvlink")
    assert len(set(ARC_NAMES.values())) == len(ARC_NAMES)


def test_machines_lists_every_preset():
    p = run_cli("machines")
    assert p.returncode == 0
    for name in ("cs-storm-socket", "cs-storm", "typical-8gpu", "gb5470-2ib", "gb5470-1ib"):
        assert name in p.stdout


def test_schema_is_json_schema():
    p = run_cli("schema", "machine")
    s = json.loads(p.stdout)
    assert "devices" in s["properties"] and "links" in s["properties"]
    s = json.loads(run_cli("schema", "transfers").stdout)
    assert "transfers" in s["properties"]


def test_generators_round_trip(tmp_path):
    m = contend.Machine.load("cs-storm-socket")
    for pattern, n in (("scatter", 7), ("gather", 7), ("all-to-all", 56), ("random", 32)):
        t = contend.Transfers.generate(pattern, m, "1MiB", root="GPU0", count=32, seed=3)
        assert len(t) == n
        path = tmp_path / f"{pattern}.yaml"
        path.write_text(t.to_yaml())
        r = contend.simulate(m, contend.Transfers.load(path))
        assert len(r.transfers) == n
    out = tmp_path / "g.yaml"
    p = run_cli("generate", "random", "cs-storm-socket", "--count", "5", "--seed", "1", "-o", str(out))
    assert p.returncode == 0, p.stderr
    assert out.read_text().count("src:") == 5


def test_dataframes():
    m = contend.Machine.load("cs-storm-socket")
    r = contend.simulate(m, contend.Transfers.example(), tau=0.2, phases=True)
    assert list(r.transfers.columns[:5]) == ["name", "src", "dst", "size_bytes", "start_s"]
    loads = r.link_loads()
    k0 = loads[(loads.link == "K0→SWA") & (loads.phase == 0)]
    assert abs(k0.utilisation.iloc[0] - 0.6) < 1e-12  # 0→2 and 1→4 at 3/10 each
    assert set(r.phases.phase) == {0, 1}
