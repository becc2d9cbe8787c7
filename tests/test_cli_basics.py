"""What users reach for first: --version, -h, completion, - for standard input and output, --force, the
size bounds, text for --phases, contend p2p's output read back by contend calibrate, one name per option, and
every I/O error one line naming the path."""

import errno
import json
import os
import re
from pathlib import Path

import pytest

import contend
from conftest import EXAMPLE, run_cli


def one_line(p, *needles):
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in p.stderr, p.stderr
    for n in needles:
        assert n in lines[0], lines[0]
    return lines[0]


def test_version_help_and_completion():
    for flag in ("--version", "-V"):
        p = run_cli(flag)
        assert p.returncode == 0 and p.stdout.strip() == f"contend {contend.__version__}"
    p = run_cli("simulate", "-h")
    assert p.returncode == 0 and "--max-rows" in p.stdout and "--force" in p.stdout
    assert "--install-completion" in run_cli("--help").stdout


def test_usage_mistakes_are_one_line():
    one_line(run_cli("simulate", "cs-storm-socket"), "Missing argument", "contend simulate --help")
    one_line(run_cli("simulate", "cs-storm-socket", "sc16-example", "--colour"), "--colour")
    one_line(run_cli("teleport"), "teleport")
    # generate names the option the user typed, and a GPU named twice is a mistake, not four copies.
    one_line(run_cli("generate", "permutation", "dgx-a100", "--gpus", "GPU0"), "--gpus", "at least two")
    one_line(run_cli("generate", "all-to-all", "dgx-a100", "--gpus", "GPU0,GPU0,GPU1"), "--gpus", "GPU0", "twice")
    # `-b 4 MiB`: the shell splits the unit off; "unexpected extra argument (MiB)" alone did not say so.
    one_line(run_cli("nccl-tests", "dgx-a100", "-b", "4", "MiB"), "(MiB)", "one word", "4MiB, not 4 MiB")
    one_line(run_cli("schedule", "typical-8gpu", "--halo", "2d", "--alpha", "2", "us"), "one word", "4us")
    line = one_line(run_cli("nccl-tests", "dgx-a100", "-b", "4", "foo"), "(foo)", "contend nccl-tests --help")
    assert "one word" not in line, line


def test_dash_is_standard_output_and_input(tmp_path):
    p = run_cli("generate", "random", "cs-storm-socket", "--count", "3", "-o", "-", cwd=tmp_path)
    assert p.returncode == 0 and p.stdout.count("src:") == 3 and not (tmp_path / "-").exists()
    from typer.testing import CliRunner

    from contend.cli import app

    r = CliRunner().invoke(app, ["simulate", "cs-storm-socket", "-", "--json"], input=EXAMPLE)
    assert r.exit_code == 0, r.stderr
    assert len(json.loads(r.stdout)["transfers"]["name"]) == 4
    # -o - with a table: the file goes to stdout, the table to stderr.
    p = run_cli("schedule", "cs-storm-socket", "--halo", "2d", "-o", "-")
    assert p.returncode == 0 and p.stdout.startswith("transfers:") and "best order" in p.stderr


def test_force_overwrites_but_never_an_input(tmp_path, example_file):
    trace = tmp_path / "t.json"
    trace.write_text("mine")
    one_line(run_cli("simulate", "cs-storm-socket", example_file, "--trace", trace), "exists", "--force")
    assert trace.read_text() == "mine"
    assert run_cli("simulate", "cs-storm-socket", example_file, "--trace", trace, "--force").returncode == 0
    assert json.loads(trace.read_text())["traceEvents"]
    assert not list(tmp_path.glob(".*tmp*")), "no temporary file is left behind"
    one_line(run_cli("simulate", "cs-storm-socket", example_file, "--trace", example_file, "--force"),
             "is an input of this command")


def test_an_output_over_a_file_the_scenario_reads_is_refused_before_running(tmp_path, monkeypatch):
    def never(*args, **kwargs):
        raise AssertionError("the scenario ran before its outputs were checked")

    monkeypatch.setattr(contend.api, "run", never)
    (tmp_path / "programs").mkdir()
    examples = Path(__file__).parent.parent / "examples"
    (tmp_path / "programs" / "pingpong.yaml").write_text((examples / "programs" / "pingpong.yaml").read_text())
    (tmp_path / "s.yaml").write_text((examples / "scenarios" / "halo-program.yaml").read_text()
                                     .replace("../programs/", "programs/"))
    before = (tmp_path / "programs" / "pingpong.yaml").read_bytes()
    p = run_cli("run", tmp_path / "s.yaml", "--trace", tmp_path / "programs" / "pingpong.yaml", "--force")
    one_line(p, "pingpong.yaml", "a file the run reads", "s.yaml")
    assert (tmp_path / "programs" / "pingpong.yaml").read_bytes() == before


def test_io_errors_are_one_line_naming_the_path(tmp_path, example_file, monkeypatch):
    # A folder the kernel will not let anyone write in (root included).
    one_line(run_cli("simulate", "cs-storm-socket", example_file, "--trace", "/proc/contend-trace.json"),
             "/proc/contend-trace.json")
    # A full disk while the file is written: nothing is left, neither the file nor its temporary.
    real = os.replace

    def full(src, dst):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "replace", full)
    out = tmp_path / "g.yaml"
    line = one_line(run_cli("generate", "all-to-all", "cs-storm-socket", "-o", out), str(out), "No space left",
                    "free some space")
    assert "--output" in line
    monkeypatch.setattr(os, "replace", real)
    assert list(tmp_path.iterdir()) == [Path(example_file)]


def test_pictures_are_named_for_their_format(tmp_path, example_file):
    one_line(run_cli("simulate", "cs-storm-socket", example_file, "--timeline", tmp_path / "t.txt"), ".png")
    svg = tmp_path / "t.svg"
    assert run_cli("simulate", "cs-storm-socket", example_file, "--timeline", svg).returncode == 0
    assert svg.read_text().lstrip().startswith("<?xml")
    assert "model sc16 (bandwidth=11.6GiB/s, tau=0.1735)" in svg.read_text()
    # maxmin has neither of sc16's parameters the title names: its title read "model maxmin ()".
    assert run_cli("simulate", "cs-storm-socket", example_file, "--model", "maxmin", "--timeline", svg,
                   "--force").returncode == 0
    assert "<!-- cs-storm-socket — model maxmin; labels" in svg.read_text()


def test_size_bounds_refuse_before_running(tmp_path):
    big = tmp_path / "big.yaml"
    assert run_cli("generate", "random", "cs-storm-socket", "--count", "1200", "-o", big).returncode == 0
    line = one_line(run_cli("simulate", "cs-storm-socket", big, "--phases"), "--phases", "2,000,000", "--max-rows")
    assert "2880000" in line  # 2 × 1200² rows, the number to give
    one_line(run_cli("explain", "cs-storm-socket", big), "explain", "--max-rows")
    one_line(run_cli("simulate", "cs-storm-socket", big, "--trace", tmp_path / "t.json"), "--trace", "--max-rows")
    one_line(run_cli("generate", "random", "cs-storm", "--count", "5000000"), "--count", "--max-rows 5000000")
    one_line(run_cli("generate", "all-to-all", "fat-tree-2048x1"), "all-to-all among 2,048 GPUs", "--gpus")
    # A transfers file too big to hold is refused by its size, before it is read (a sparse file: no disk used).
    huge = tmp_path / "huge.yaml"
    with open(huge, "wb") as f:
        f.truncate(500_000_000)
    one_line(run_cli("simulate", "cs-storm-socket", huge), "TRANSFERS", "12,500,000 transfers", "split")
    # One past the bound by its size alone, not by much, has its transfers counted: its 1,200 (about 41 bytes
    # each) are taken under a bound just below what its size says, and refused under 1,100.
    limit = big.stat().st_size // 40 - 1
    assert limit >= 1200
    assert run_cli("simulate", "cs-storm-socket", big, "--max-rows", str(limit), "--json").returncode == 0
    one_line(run_cli("simulate", "cs-storm-socket", big, "--max-rows", "1100"), "TRANSFERS", "1,200 transfers",
             "counted by their src fields")
    assert not (tmp_path / "t.json").exists()
    p = run_cli("simulate", "cs-storm-socket", big, "--phases", "--max-rows", "3000000", "--json")
    assert p.returncode == 0 and json.loads(p.stdout)["phases"]


def test_a_transfers_csv_reads_as_its_yaml(tmp_path, example_file):
    # What a spreadsheet saves (Excel's "CSV UTF-8": a byte-order mark, CRLF): read as the YAML of the same
    # transfers, from a file and from standard input; it was one line of YAML's "invalid type: string".
    rows = [line.strip(" -{}").split(", ") for line in EXAMPLE.splitlines()[1:]]
    csv = "\ufeffsrc,dst,size\r\n" + "".join(",".join(f.split(": ")[1] for f in r) + "\r\n" for r in rows)
    path = tmp_path / "t.csv"
    path.write_bytes(csv.encode())
    want = run_cli("simulate", "cs-storm-socket", example_file, "--json").stdout
    got = run_cli("simulate", "cs-storm-socket", path, "--json")
    assert got.returncode == 0, got.stderr
    assert json.loads(got.stdout)["transfers"] == json.loads(want)["transfers"]
    from typer.testing import CliRunner

    from contend.cli import app

    # The byte-order mark travels on standard input too: it was read as YAML ("invalid type: string").
    r = CliRunner().invoke(app, ["simulate", "cs-storm-socket", "-", "--json"], input=csv.encode())
    assert r.exit_code == 0 and json.loads(r.stdout)["transfers"] == json.loads(want)["transfers"], r.stderr
    path.write_text("src,dst,size\nGPU0,GPU2,4 Mib\n")
    one_line(run_cli("simulate", "cs-storm-socket", path), "t.csv: line 2: size:", "Mib")
    # Its size bound counts a CSV's short rows (a line each), not YAML's 40 bytes a transfer.
    path.write_text("src,dst,size\n" + "GPU0,GPU2,1MiB\n" * 1200)
    one_line(run_cli("simulate", "cs-storm-socket", path, "--max-rows", "1100"), "TRANSFERS", "counted by lines")


def test_a_csvs_header_is_not_counted_as_a_transfer(tmp_path):
    # 1,100 transfers run under --max-rows 1100 (they were counted 1,101 and refused); 1,101 without a last
    # newline are still counted 1,101.
    path = tmp_path / "t.csv"
    path.write_text("src,dst,size\n" + "GPU0,GPU2,1MiB\n" * 1100)
    p = run_cli("simulate", "cs-storm-socket", path, "--max-rows", "1100")
    assert p.returncode == 0, p.stderr
    path.write_text("src,dst,size\n" + "GPU0,GPU2,1MiB\n" * 1100 + "GPU0,GPU2,1MiB")
    one_line(run_cli("simulate", "cs-storm-socket", path, "--max-rows", "1100"), "TRANSFERS", "1,101")


def test_generate_refuses_a_csv_output_it_would_fill_with_yaml(tmp_path):
    # It wrote YAML to gen.csv, which simulate then read as CSV: "line 2: has 3 fields for 1 columns".
    out = tmp_path / "gen.csv"
    one_line(run_cli("generate", "random", "cs-storm-socket", "-o", out), "--output", "gen.csv", "YAML", ".yaml")
    assert not out.exists()


def test_links_busy_as_long_list_the_one_carrying_bytes_first(tmp_path):
    # GPU1 -> GPU0 over NVLink: the reverse direction GPU0 -> GPU1 is busy as long with the duplex overhead and
    # no bytes; it was listed first, being first in the machine's order.
    machine = tmp_path / "m.yaml"
    machine.write_text("name: m\ndevices:\n  - {name: GPU0, kind: gpu}\n  - {name: GPU1, kind: gpu}\n"
                       "links:\n  - {a: GPU0, b: GPU1, kind: nvlink, bandwidth: 25GB/s}\n")
    t = tmp_path / "t.yaml"
    t.write_text("transfers:\n  - {src: GPU1, dst: GPU0, size: 1GiB}\n")
    p = run_cli("simulate", machine, t, "--model", "maxmin")
    assert p.returncode == 0, p.stderr
    rows = [line for line in p.stdout.splitlines() if "GPU0→GPU1" in line or "GPU1→GPU0" in line]
    assert "GPU1→GPU0" in rows[-2] and "1GiB" in rows[-2] and "0B" in rows[-1], rows


def test_phases_and_nics_in_text(example_file):
    p = run_cli("simulate", "cs-storm-socket", example_file, "--phases")
    assert p.returncode == 0 and "phases (2;" in p.stdout and "lowest share" in p.stdout
    t = "transfers:\n  - {src: n0.GPU0, dst: n1.GPU0, size: 1MiB}\n  - {src: n0.GPU0, dst: n2.GPU0, size: 1MiB}\n"
    p = run_cli("simulate", "fat-tree-2048x1", "-", "--model", "maxmin", "--nics", "--json")
    assert p.returncode == 2 or p.returncode == 0  # standard input is empty here: refused in one line or read
    from typer.testing import CliRunner

    from contend.cli import app

    r = CliRunner().invoke(app, ["simulate", "fat-tree-2048x1", "-", "--model", "maxmin", "--nics"], input=t)
    assert r.exit_code == 0, r.stderr
    assert "NIC queues" in r.stdout and "peak messages" in r.stdout


def test_user_text_is_never_markup_or_emoji(tmp_path):
    f = tmp_path / "t.yaml"
    f.write_text('transfers:\n  - {name: "a[/]b :ab: [bold]x", src: GPU0, dst: GPU1, size: 1MiB}\n')
    p = run_cli("simulate", "cs-storm-socket", f)
    assert p.returncode == 0, p.stderr
    assert "a[/]b :ab: [bold]x" in p.stdout and "🆎" not in p.stdout


def test_calibrate_reads_p2p_output(tmp_path):
    p = run_cli("p2p", "dgx1-p100")
    assert p.returncode == 0 and "Device: 0, GPU0" in p.stdout and "   D\\D" in p.stdout
    (tmp_path / "p.txt").write_text(p.stdout)
    c = run_cli("calibrate", "dgx1-p100", tmp_path / "p.txt", "--json")
    assert c.returncode == 0, c.stderr
    fit = json.loads(c.stdout)
    assert len(fit["scores"]) == 7  # every matrix read back
    assert all(s["median_abs_relative_error"] < 0.05 for s in fit["scores"].values()), fit["scores"]
    # The device lines alone measure nothing: refused, and no machine is written.
    (tmp_path / "d.txt").write_text("\n".join(p.stdout.splitlines()[:9]) + "\n")
    one_line(run_cli("calibrate", "dgx1-p100", tmp_path / "d.txt", "-o", tmp_path / "cal.yaml"), "nothing to fit")
    assert not (tmp_path / "cal.yaml").exists()


def test_kernel_terms_have_one_name():
    for flag in ("--kernel", "-k", "-p"):  # -p, the old spelling in stencil, still works (hidden)
        p = run_cli("stencil", "--lattice", "64", flag, "launch=3us", "--json")
        assert p.returncode == 0, p.stderr
        assert json.loads(p.stdout)["params"]["launch"] == "3us"
    assert not re.search(r"\s-p\s", run_cli("stencil", "-h").stdout)


def test_bnb_counts_are_not_results():
    p = run_cli("schedule", "cs-storm-socket", "--halo", "2d", "--search", "bnb", "--json", "--threads", "2")
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert "orders_evaluated" not in r and "nodes_visited" not in r and r["proven_optimal"]
    assert "vary with thread timing" in p.stderr
    again = run_cli("schedule", "cs-storm-socket", "--halo", "2d", "--search", "bnb", "--json", "--threads", "2")
    assert again.stdout == p.stdout


@pytest.mark.parametrize("size", ["16777216TiB", "1e30B"])
def test_sizes_past_2_to_64_bytes_are_refused(tmp_path, size):
    f = tmp_path / "t.yaml"
    f.write_text(f"transfers:\n  - {{src: GPU0, dst: GPU1, size: {size}}}\n")
    one_line(run_cli("simulate", "cs-storm-socket", f), "transfers[0].size", "2^64")


def test_byte_totals_do_not_wrap(tmp_path):
    f = tmp_path / "t.yaml"
    f.write_text("transfers:\n" + "".join(f"  - {{src: GPU{i}, dst: GPU{i + 1}, size: 15728640TiB}}\n"
                                           for i in range(0, 6, 2)))
    p = run_cli("simulate", "cs-storm-socket", f, "--model", "maxmin", "--json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["summary"]["bytes"] == 3 * 15 * 2**60


def test_report_folders_are_not_overwritten(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    (tmp_path / "r").mkdir()
    pq.write_table(pa.table({"x": [1]}), tmp_path / "r" / "p.parquet")
    (tmp_path / "r" / "_report").mkdir()
    (tmp_path / "r" / "_report" / "mine.md").write_text("mine")
    one_line(run_cli("report", tmp_path / "r"), "not empty", "--force")
    assert (tmp_path / "r" / "_report" / "mine.md").read_text() == "mine"


def test_simulate_titles_the_parameters_given_not_every_default(example_file):
    # maxmin has about 40 parameters; the title printed them all, nine lines above a one-row table.
    p = run_cli("simulate", "typical-8gpu", example_file, "--model", "maxmin")
    assert p.returncode == 0, p.stderr
    assert "maxmin (default parameters; --json lists them)" in p.stdout and "eff_pcie=" not in p.stdout, p.stdout
    p = run_cli("simulate", "typical-8gpu", example_file, "--model", "maxmin", "-p", "p2p=off")
    assert p.returncode == 0, p.stderr
    assert "maxmin (p2p=off)" in p.stdout and "eff_pcie=" not in p.stdout, p.stdout
    p = run_cli("simulate", "typical-8gpu", example_file, "--model", "maxmin", "--json")
    assert "eff_pcie" in json.loads(p.stdout)["params"]


def test_help_and_docstrings_say_a_transfers_file_may_be_csv():
    # They said YAML/JSON only, after CSV was read.
    from typer.testing import CliRunner

    from contend.cli import app

    assert "CSV" in contend.Transfers.load.__doc__ and "CSV" in contend.Transfers.parse.__doc__
    p = run_cli("simulate", "--help")
    assert p.returncode == 0 and "YAML/JSON/CSV" in p.stdout, p.stdout
    bad = CliRunner().invoke(app, ["simulate", "cs-storm-socket", "-"], input=b"\xff")
    assert bad.exit_code == 2 and "give a YAML, JSON or CSV file" in bad.stderr, bad.stderr
