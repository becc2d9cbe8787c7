"""Non-contiguous messages through the CLI and the Python API: `contend datatype`, its sweep and chart,
datatype methods in simulate and schedule, and bad input in one line."""

import json
from pathlib import Path

import pytest

import contend
from test_bad_input import assert_one_line, write

EXAMPLES = Path(__file__).parent.parent / "examples"


@pytest.mark.parametrize("machine,src,dst", [("dgx1-p100", "GPU0", "GPU1"), ("dgx-a100", "GPU0", "GPU5"),
                                             ("cs-storm", "GPU0", "GPU1"),
                                             # across nodes: GPUDirect RDMA sends the packed buffer NIC to NIC
                                             ("superpod-h100-su", "n0.GPU0", "n1.GPU0")])
@pytest.mark.parametrize("ty", ["milc-zdown", "cosmo-halo-ew", "jacobi-column", "jacobi-row"])
def test_datatype_answers_for_presets(cli, machine, src, dst, ty):
    p = cli("datatype", machine, src, dst, ty, "--json")
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    times = {m["method"]: m["simulated_s"] for m in r["methods"]}
    assert set(times) == {"pack", "zero-copy", "staged"}
    assert times[r["winner"]] == min(t for t in times.values() if t is not None)


def test_datatype_table_names_the_winner(cli):
    p = cli("datatype", "dgx1-p100", "GPU0", "GPU1", "milc-zdown", "--count", "2")
    assert p.returncode == 0, p.stderr
    assert "winner: zero-copy" in p.stdout
    assert "192KiB in 63 blocks" in p.stdout


def test_where_cuda_stages_the_pair_pack_is_the_staged_copy(cli):
    # DGX-1's GPU0 and GPU5 have no peer access (no NVLink between them, P2P off across QPI): pack's copy is the
    # staged one, so the two rows are one copy and the table says so on pack's row.
    p = cli("datatype", "dgx1-p100", "GPU0", "GPU5", "cosmo-halo-ew", "--json")
    assert p.returncode == 0, p.stderr
    est = {e["method"]: e for e in json.loads(p.stdout)["methods"]}
    assert est["pack"]["total_s"] == est["staged"]["total_s"] and "staged" in est["pack"]["note"]
    assert "note" not in est["staged"] and est["zero-copy"]["total_s"] is None
    p = cli("datatype", "dgx1-p100", "GPU0", "GPU5", "cosmo-halo-ew")
    assert "the staged copy: CUDA stages this pair" in p.stdout and "winner: staged" in p.stdout


def test_sweep_draws_the_crossover_chart(cli, tmp_path):
    png = tmp_path / "x.png"
    p = cli("datatype", "cs-storm", "GPU0", "GPU1", "milc-zdown", "--sweep", "6", "--plot", png)
    assert p.returncode == 0, p.stderr
    assert png.stat().st_size > 10_000
    # On PCIe, zero-copy wins the smallest message and pack the largest.
    rows = [line for line in p.stdout.splitlines() if "KiB" in line or "MiB" in line]
    assert "zero-copy" in rows[-6] and "pack" in rows[-1]


def test_python_api_matches_the_cli(cli):
    m = contend.Machine.load("dgx-a100")
    r = contend.datatype(m, "jacobi-column", "GPU0", "GPU1", count=2, kernels={"launch": "3us"})
    assert r["kernels"]["launch"] == "3us"
    s = contend.datatype_sweep(m, "jacobi-column", "GPU0", "GPU1", points=3)
    assert s["count"] == [1, 2, 4]
    assert {p["name"] for p in contend.datatype_presets()} >= {"milc-zdown", "jacobi-column", "cosmo-halo-ew"}
    assert any(p["name"] == "ls_eff_nvlink" for p in contend.kernel_params())


def test_simulate_shows_the_decisions(cli, tmp_path):
    f = write(tmp_path, "t.yaml", "transfers:\n  - {src: GPU0, dst: GPU1, size: 96KiB, datatype: milc-zdown}\n"
                                  "  - {src: GPU2, dst: GPU3, size: 32KiB, datatype: jacobi-column, method: pack}\n")
    p = cli("simulate", "dgx1-p100", f, "--model", "maxmin")
    assert p.returncode == 0, p.stderr
    assert "datatype methods" in p.stdout and "zero-copy" in p.stdout
    r = json.loads(cli("simulate", "dgx1-p100", f, "--model", "maxmin", "--json").stdout)
    assert r["methods"]["chosen"] == ["zero-copy", "pack"]
    assert r["methods"]["margin_s"][0] > 0


def test_schedule_with_datatypes_round_trips(cli, tmp_path):
    halo = write(tmp_path, "h.yaml", "grid: [2, 4]\ndatatypes: [jacobi-row, jacobi-column]\nmethod: adaptive\n")
    best = tmp_path / "best.yaml"
    p = cli("schedule", "dgx1-p100", "--halo", halo, "--model", "maxmin", "--search", "anneal", "--iterations", "50",
            "--output", best, "--json")
    assert p.returncode == 0, p.stderr
    s = json.loads(p.stdout)
    r = json.loads(cli("simulate", "dgx1-p100", best, "--model", "maxmin", "--json").stdout)
    assert r["summary"]["makespan_s"] == pytest.approx(s["best_s"], rel=1e-9)
    assert "zero-copy" in r["methods"]["chosen"]


@pytest.mark.parametrize("text,needles", [
    ("type: {hvector: {count: 3, blocklength: 2, stride_bytes: -8, of: double}}\n",
     ["type.hvector.stride_bytes", "negative stride -8 overlaps"]),
    ("type: {subarray: {sizes: [4, 5], subsizes: [2, 3], starts: [3, 1], of: int}}\n",
     ["type.subarray.subsizes[0]", "outside the array"]),
    ("type: {struct: {blocklengths: [1, 1], displacements_bytes: [0], types: [int, int]}}\n",
     ["type.struct", "differ in length"]),
])
def test_bad_datatypes_one_line(cli, tmp_path, text, needles):
    f = write(tmp_path, "d.yaml", text)
    assert_one_line(cli("datatype", "dgx1-p100", "GPU0", "GPU1", f), f, *needles)


def test_unknown_method_one_line(cli, tmp_path):
    f = write(tmp_path, "t.yaml", "transfers:\n  - {src: GPU0, dst: GPU1, size: 1MiB, method: teleport}\n")
    assert_one_line(cli("simulate", "dgx1-p100", f, "--model", "maxmin"), "transfers[0].method", "teleport")


def test_unknown_kernel_term_one_line(cli):
    assert_one_line(cli("datatype", "dgx1-p100", "GPU0", "GPU1", "milc-zdown", "--kernel", "lunch=3us"),
                    "--kernel", "lunch", "launch")


def test_calibrate_kernels_fits_and_reports_residuals(cli, tmp_path):
    # Times of a pack kernel at 300 GB/s with 40 extra bytes per block and 6 µs of launch + sync.
    rows = ["kernel,block,bytes,time"]
    for block in (8, 64, 4096):
        for size in (2**16, 2**20, 2**24):
            t = 6e-6 + (size + size / block * 40) / 300e9
            rows.append(f"pack,{block}B,{size}B,{t * 1e12:.0f}ps")
    f = write(tmp_path, "m.csv", "\n".join(rows) + "\n")
    p = cli("calibrate-kernels", "dgx1-p100", "GPU0", "GPU1", f, "--json")
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert len(r["residuals"]) == 9 and r["rms_relative_error"] < 1e-3
    assert r["kernels"]["pack_block"] == "40B" and r["kernels"]["pack_bw"].startswith("300")
    text = cli("calibrate-kernels", "dgx1-p100", "GPU0", "GPU1", f).stdout
    assert "kernels: {launch:" in text and "--kernel pack_bw=" in text


def test_calibrate_kernels_bad_row_is_one_line(cli, tmp_path):
    f = write(tmp_path, "m.csv", "kernel,block,bytes,time\nsqueeze,8B,1MiB,3us\npack,8B,1MiB,3us\npack,8B,2MiB,5us\n")
    assert_one_line(cli("calibrate-kernels", "dgx1-p100", "GPU0", "GPU1", f), "m.csv", "line 2", "squeeze")


def test_explain_shows_the_decisions_under_sc16(cli, tmp_path):
    f = write(tmp_path, "t.yaml", "transfers:\n  - {src: GPU0, dst: GPU2, size: 960KiB, datatype: cosmo-halo-ew}\n"
                                  "  - {src: GPU1, dst: GPU4, size: 96KiB, datatype: milc-zdown, method: pack}\n")
    p = cli("explain", "cs-storm-socket", f)
    assert p.returncode == 0, p.stderr
    assert "datatype methods" in p.stdout and "adaptive" in p.stdout
    # sc16 cannot cap a transfer: zero-copy is refused in one line.
    z = write(tmp_path, "z.yaml",
              "transfers:\n  - {src: GPU0, dst: GPU2, size: 96KiB, datatype: milc-zdown, method: zero-copy}\n")
    assert_one_line(cli("explain", "cs-storm-socket", z), "zero-copy", "--model maxmin")


def test_examples_run(cli):
    p = cli("simulate", "dgx1-p100", EXAMPLES / "datatypes.yaml", "--model", "maxmin", "--json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["methods"]["chosen"] == ["zero-copy", "pack", "staged", "pack"]
    s = cli("schedule", "dgx-a100", "--halo", EXAMPLES / "jacobi-halo.yaml", "--model", "maxmin", "--search", "anneal",
            "--iterations", "20", "--json")
    assert s.returncode == 0, s.stderr


def test_schema_of_datatype_files(cli):
    p = cli("schema", "datatype")
    assert p.returncode == 0 and "subarray" in p.stdout and "stride_bytes" in p.stdout


@pytest.mark.parametrize("args,needle", [(["--count", "-3"], "--count"), (["--count", "0"], "--count"),
                                         (["--sweep", "100"], "--sweep"), (["-k", "launch=5"], "no unit")])
def test_bad_options_one_line(cli, args, needle):
    assert_one_line(cli("datatype", "dgx1-p100", "GPU0", "GPU1", "milc-zdown", *args), needle)
