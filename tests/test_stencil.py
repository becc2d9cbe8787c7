"""`contend stencil`: seed 004's 2D stencil, CPU-posted against stream-ordered communication."""

import json

import contend


def test_sweep_shows_the_gain_curve(cli, tmp_path):
    png = tmp_path / "gain.png"
    p = cli("stencil", "--plot", png, "--json")
    assert p.returncode == 0, p.stderr
    its = json.loads(p.stdout)["iterations"]
    assert [i["lattice"] for i in its] == [2**k for k in range(3, 14)]
    assert its[0]["gain"] > 0.2 > its[-1]["gain"]
    assert png.stat().st_size > 10_000


def test_table_has_the_seed_kernel_mix(cli):
    p = cli("stencil", "--lattice", "1024", "--lattice", "128")
    assert p.returncode == 0, p.stderr
    assert "kernel mix at 1024²" in p.stdout and "84.7%" in p.stdout


def test_python_api_and_parameters():
    r = contend.stencil([64], launch="0s", sync="0s", post="0s", enqueue="0s", trigger="0s")
    it = r["iterations"][0]
    assert abs(it["cpu_posted_s"] - it["stream_ordered_s"]) < 1e-12
    assert any(p["name"] == "enqueue" for p in contend.stencil_params())


def test_bad_parameter_is_one_line(cli):
    p = cli("stencil", "-p", "lunch=1us")
    assert p.returncode == 2
    assert len(p.stderr.strip().splitlines()) == 1 and "lunch" in p.stderr


def test_negative_lattice_is_one_line(cli):
    p = cli("stencil", "-l", "-5")
    assert p.returncode == 2 and "--lattice" in p.stderr and len(p.stderr.strip().splitlines()) == 1
