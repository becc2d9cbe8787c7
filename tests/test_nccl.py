"""`contend nccl-tests`: nccl-tests' table, its busbw definitions, JSON, --explain, and one-line errors."""

import inspect
import json
import math
import os
import re
from pathlib import Path

import pytest

from conftest import run_cli
from contend import api


def test_table_has_nccl_tests_columns_and_busbw_factor():
    r = run_cli("nccl-tests", "dgx-a100", "-b", "8", "-e", "64M", "-f", "4")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert any("out-of-place" in x and "in-place" in x for x in lines)
    header = next(x for x in lines if "#wrong" in x).split()
    assert header[1:9] == ["size", "count", "type", "redop", "root", "time", "algbw", "busbw"]
    rows = [x.split() for x in lines if x and not x.startswith("#")]
    assert [int(x[0]) for x in rows] == [8 * 4**k for k in range(12)]
    for size, count, dtype, redop, root, t, algbw, busbw, wrong, *_ in rows:
        assert (int(count), dtype, redop, root, wrong) == (int(size) // 4, "float", "sum", "-1", "0")
        # nccl-tests: algbw = bytes / time (GB/s), busbw = algbw x 2(n-1)/n for all_reduce on 8 ranks.
        assert float(algbw) == pytest.approx(int(size) / float(t) / 1e3, rel=0.02, abs=0.015)
        assert float(busbw) == pytest.approx(float(algbw) * 14 / 8, rel=0.02, abs=0.015)
    assert any(x.startswith("# Avg bus bandwidth") for x in lines)


@pytest.mark.parametrize("op,factor", [("all_gather", 7 / 8), ("reduce_scatter", 7 / 8), ("alltoall", 7 / 8),
                                       ("broadcast", 1.0), ("reduce", 1.0)])
def test_busbw_factors(op, factor):
    rep = api.nccl_tests("dgx-a100", op, "1M", "16M", 4)
    for row in rep["rows"]:
        assert row["busbw"] == pytest.approx(row["algbw"] * factor)
        assert row["size"] % (8 * 4 if op in ("all_gather", "reduce_scatter", "alltoall") else 4) == 0
        # nccl-tests prints the count it gives NCCL: one rank's share for these three (rev21 finding 9).
        assert row["count"] == row["size"] // 4 // (8 if op in ("all_gather", "reduce_scatter", "alltoall") else 1)


# nccl-tests' own C format strings, as printf-style formats (hence noqa UP031): the test is that they are the same.
def _float_str(value, width):
    """nccl-tests' getFloatStr (src/util.cu): two decimals where they fit the width, then one, none, an exponent."""
    for precision in (2, 1, 0):
        text = "%*.*f" % (width, precision, value)  # noqa: UP031
        if len(text) <= width:
            return text
    return "%*.1e" % (width, value) if width >= 7 else "%*.0e" % (width, value)  # noqa: UP031


@pytest.mark.parametrize("op,dtype", [("all_reduce", "float"), ("all_gather", "half"), ("reduce_scatter", "double"),
                                      ("alltoall", "int8"), ("broadcast", "float"), ("reduce", "bfloat16"),
                                      ("sendrecv", "float")])
def test_rows_are_nccl_tests_printf(op, dtype):
    # Every row is nccl-tests' printf of its values (src/util.cu writeBenchmarkLinePreamble: "%12li  %12li  %8s  %6s
    # %6s" with the root as "%6i"; writeBenchmarkLineBody: "  %7s  %6s  %6s  %6g" out-of-place, then in-place), on
    # 6 GPUs from 8 B: the per-rank count of all_gather, reduce_scatter and alltoall is rounded down to 16 bytes
    # ((count/nranks) & -(16/eltSize), src/all_gather.cu etc.; 0 under 16 bytes a rank).
    r = run_cli("nccl-tests", "dgx-a100", "--gpus", "0,1,2,3,4,5", "-b", "8", "-e", "4M", "-f", "8", "-d", dtype,
                "-o", op, "--json")
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    word = {"float": 4, "half": 2, "double": 8, "int8": 1, "bfloat16": 2}[dtype]
    lines = [x for x in rep["table"].splitlines() if x and not x.startswith("#")]
    assert len(lines) == len(rep["rows"]) == 7
    for k, (line, row) in enumerate(zip(lines, rep["rows"], strict=True)):
        count = 8 ** (k + 1) // word
        if op in ("all_gather", "reduce_scatter", "alltoall"):
            count = (count // 6) & -(16 // word)
        assert (row["count"], row["size"]) == (count, count * word * (6 if op in ("all_gather", "reduce_scatter",
                                                                                   "alltoall") else 1))
        want = "%12li  %12li  %8s  %6s  %6s" % (row["size"], row["count"], dtype, row["redop"], "%6i" % row["root"])  # noqa: UP031
        for t, a, b in ((row["time_us"], row["algbw"], row["busbw"]),
                        (row["in_place_time_us"], row["in_place_algbw"], row["in_place_busbw"])):
            want += "  %7s  %6s  %6s  %6g" % (_float_str(t, 7), _float_str(a, 6), _float_str(b, 6), 0)  # noqa: UP031
        assert line == want, (line, want)


def test_json_explain_and_overrides():
    r = run_cli("nccl-tests", "dgx-a100", "-b", "64M", "-e", "64M", "--json", "--explain")
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    row = rep["rows"][0]
    assert (rep["ranks"], rep["search"]["channels"], row["channels"]) == (8, 24, 24)
    assert {(a["algo"], a["proto"]) for a in row["explain"]["alternatives"]} >= {("ring", "Simple"), ("tree", "LL")}
    assert "ring: GPU0" in rep["explain"]
    forced = api.nccl_tests("dgx-a100", "all_reduce", "64M", "64M", 2, algo="tree", proto="LL", channels=4)
    assert (forced["rows"][0]["algo"], forced["rows"][0]["proto"], forced["rows"][0]["channels"]) == ("tree", "LL", 4)
    four = api.nccl_tests("dgx-a100", "all_reduce", "8", "8", 2, ngpus=4)
    assert four["gpus"] == ["GPU0", "GPU1", "GPU2", "GPU3"]
    # -g is nccl-tests' one process: its thread launches 4 GPUs' calls an iteration (nccl_launch_host each).
    assert four["rows"][0]["time_us"] >= 4 * 4.9 - 1e-6
    slow = api.nccl_tests("dgx-a100", "all_reduce", "8", "8", 2, ngpus=4, nccl_launch_host="10us")
    assert slow["rows"][0]["time_us"] == pytest.approx(40.0)
    ranks = api.nccl_tests("dgx-a100", "all_reduce", "8", "8", 2, gpus=["GPU0", "GPU1", "GPU2", "GPU3"])
    assert ranks["rows"][0]["time_us"] < 40.0


def test_nccl_version_names_the_release_that_chooses():
    # 2 x 8 A100 at 2 x 100 Gb/s per NIC, 512 MiB: NCCL 2.30.7's model picks tree/Simple, 2.19.3's tree/LL128
    # (tree/Simple's latency 448 us there, 92.4 us in 2.30.7; crates/contend-core/src/nccl/versions_tests.rs).
    args = ["nccl-tests", "bench/validation/machines/bm-gpu4-8.yaml", "-N", "2", "-b", "512M", "-e", "512M", "--json"]
    picks = {}
    for version in (None, "2.19"):
        r = run_cli(*args, *(["--nccl-version", version] if version else []))
        assert r.returncode == 0, r.stderr
        rep = json.loads(r.stdout)
        picks[rep["nccl_version"]] = rep["rows"][0]["proto"]
    assert picks == {"2.30.7": "Simple", "2.19.3": "LL128"}


def test_nccl_version_latest_runs_the_newest_modelled_and_says_so():
    # qa26's rough edge: "latest" was refused; it is the newest release contend restates, named in a caveat.
    r = run_cli("nccl-tests", "hgx-h100", "-b", "1M", "-e", "1M", "--nccl-version", "latest", "--json")
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    assert rep["nccl_version"] == "2.30.7"
    assert any(c.startswith("NCCL latest is run as 2.30") for c in rep["caveats"]), rep["caveats"]


def test_a_refusal_nccl_algo_caused_names_the_variable(monkeypatch):
    # qa26's rough edge: NVLS across nodes set by NCCL_ALGO alone was labelled "--algo/--proto".
    monkeypatch.setenv("NCCL_ALGO", "NVLS")
    r = run_cli("nccl-tests", "hgx-h100", "-N", "2", "-b", "1M", "-e", "1M")
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert "NCCL_ALGO (environment)" in r.stderr and not r.stderr.startswith("error: --algo/--proto"), r.stderr


def test_nvls_tree_chunk_follows_the_release_and_its_maximum():
    # 2 x 8 H100 on NVLS-tree (16 channels x 8 heads), NCCL_BUFFSIZE 8 MiB: 2.20.3 starts from a Simple step
    # (1 MiB), 2.30.7 from NCCL_NVLS_CHUNKSIZE's 128 KiB whatever the maximum (nvls_tests.rs). At 512 MiB 2.20.3
    # runs 256 KiB chunks with or without aws-ofi-nccl's 512 KiB maximum; at 2 GiB 512 KiB with it, 256 KiB without.
    def time_us(version, size="512M", **params):
        rep = api.nccl_tests("hgx-h100", "all_reduce", size, size, 2, nodes=2, algo="nvlstree",
                             nccl_buffsize="8MiB", nccl_version=version, **params)
        assert rep["rows"][0]["algo"] == "nvls_tree"
        return rep["rows"][0]["time_us"]

    cap = dict(nccl_nvlstree_max_chunksize="512KiB")
    assert time_us("2.30", **cap) == time_us("2.30")
    assert time_us("2.21", **cap) == time_us("2.30")
    assert time_us("2.20", **cap) == time_us("2.20") != time_us("2.30")
    assert time_us("2.20", "2G") != time_us("2.20", "2G", **cap)
    # 2.18.5 reads no maximum (enqueue.cc): a Simple step, as 2.20.3 without one.
    assert time_us("2.18", "2G", **cap) == time_us("2.20", "2G")


@pytest.mark.parametrize("nodes", [8, 64])
def test_a_1g_tree_all_reduce_across_many_nodes_runs_at_nccls_double_tree_bound(nodes):
    # By hand, from NCCL's trees (trees.cc ncclGetBtree/ncclGetDtree, connect.cc connectTrees): dgx-a100 runs
    # 16 channels, graph channel c and its copy c + 8 on NIC c, one tree each; a node interior in one tree (3
    # channel shares each way) is a leaf in the other (1), so a NIC carries 4 of 16 shares each way:
    # 2^30 / 4 / 25 GB/s = 10.74 ms, the floor. Before round 18 both copies of a graph channel ran one tree, and a
    # node interior in it carried 6 of 16 shares on that NIC: 2^30 x 6/16 / 25 GB/s = 16.1 ms at least (18.8 and
    # 21.6 ms on 8 and 64 nodes). NCCL's structure is below that; the time left above the floor is the fill and
    # the tree pipeline's idle NICs (docs/nccl.md, "Trees across nodes"). 4 nodes: nccl/dtree_tests.rs's counts.
    rep = api.nccl_tests("dgx-a100", "all_reduce", "1G", "1G", 2, nodes=nodes, algo="tree", proto="simple")
    t = rep["rows"][0]["time_us"]
    assert 10.74e3 < t < 16.1e3, t


@pytest.mark.parametrize("args,needle", [
    (["--op", "scan"], "--op"),
    (["-f", "1"], "-f"),
    (["-g", "9"], "-g"),
    (["-g", "1"], "-g: 1: one rank"),
    (["--gpus", "GPU0,GPU42"], "--gpus"),
    (["--gpus", "GPU4,GPU5", "-g", "3"], "-g: 3: --gpus lists 2 GPUs; give -g 2"),
    # --gpus takes a list: `--gpus 4` is the one GPU 4 (one rank, refused), and the hint names the count's forms.
    (["--gpus", "4"], "--gpus 4 names the one GPU 4: for 4 GPUs give -g 4 or --gpus 0,1,2,3"),
    (["--proto", "fast"], "--proto"),
    (["--algo", "nvls"], "--algo"),
    (["--op", "all_gather", "--algo", "tree"], "all_gather has ring"),
    (["--model", "sc16"], "sc16"),
    (["--nodes", "0"], "--nodes"),
    (["--nodes", "-3"], "--nodes: is -3; give 1 to 1024"),
    (["--nodes", "99999999999999999999999"], "give 1 to 1024"),
    (["-g", "-1"], "-g: is -1; give 1 or more"),
    (["-f", "-2"], "-f: is -2; give 2 or more"),
    (["--root", "-1"], "--root: is -1; give 0 or more"),
    (["--channels", "-1"], "--channels: is -1; give 1 to 64"),
    (["--nccl-version", "2.17"], "--nccl-version"),
    # rev23 finding 7: -n's bound and default are the core's alone (nccl_tests::MAX_ITERS, ITERS).
    (["-n", "0"], "-n: 0: is not a number of timed iterations; give 1 to 1000000 (nccl-tests' default is 20)"),
    (["-n", "1000001"], "give 1 to 1000000"),
    (["-n", "-1"], "iters: -1 is negative"),
    (["--op", "all_reduce", "--op", "alltoall", "--plot", "busbw.png"], "--plot: draws one collective"),
])
def test_bad_input_is_one_line_exit_2(args, needle):
    r = run_cli("nccl-tests", "dgx-a100", "-b", "8", "-e", "64", *args)
    assert r.returncode == 2, r.stdout
    msg = r.stderr.strip()
    assert needle in msg and "\n" not in msg and "Traceback" not in msg, msg


def test_iterations_pay_a_broadcast_chains_fill_once():
    # nccl-tests' -n: a broadcast's chain fills once per timed loop (docs/nccl.md, "Back-to-back iterations"), so
    # more iterations take less per call, -n 1 being the call alone; an all-reduce has nothing to overlap.
    def time_us(op, n):
        r = run_cli("nccl-tests", "dgx-a100", "--op", op, "-b", "64M", "-e", "64M", "-n", str(n), "--json")
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)["rows"][0]["time_us"]
    one, twenty, hundred = time_us("broadcast", 1), time_us("broadcast", 20), time_us("broadcast", 100)
    assert hundred < twenty < 0.6 * one, (one, twenty, hundred)
    assert api.nccl_tests("dgx-a100", "broadcast", "64M", "64M", iters=20)["rows"][0]["time_us"] == twenty
    # rev23 finding 7: unset, -n is the core's default (nccl-tests' 20), written once, in Rust.
    assert inspect.signature(api.nccl_tests).parameters["iters"].default is None
    assert api.nccl_tests("dgx-a100", "broadcast", "64M", "64M")["rows"][0]["time_us"] == twenty
    assert time_us("all_reduce", 1) == time_us("all_reduce", 100)


def test_the_gpus_hint_only_where_both_forms_run():
    # No GPU 9 on an 8-GPU node: the refusal says so, and no hint offers 9 GPUs the node does not have.
    r = run_cli("nccl-tests", "dgx-a100", "-b", "8", "-e", "64", "--gpus", "9")
    assert r.returncode == 2 and "9" in r.stderr and "not a GPU" in r.stderr, r.stderr
    assert "-g 9" not in r.stderr and "names the one GPU" not in r.stderr, r.stderr


def test_each_op_given_runs_in_turn():
    # nccl-tests has one binary per collective; --op given twice runs both, in order, as the binaries one by one.
    r = run_cli("nccl-tests", "dgx-a100", "-b", "1M", "-e", "1M", "--op", "all_gather", "--op", "all_reduce")
    assert r.returncode == 0, r.stderr
    titles = [line.split(" of nccl-tests ")[1].split()[0] for line in r.stdout.splitlines() if "of nccl-tests" in line]
    assert titles == ["all_gather_perf", "all_reduce_perf"]
    r = run_cli("nccl-tests", "dgx-a100", "-b", "1M", "-e", "1M", "-o", "alltoall", "-o", "broadcast", "--json")
    reports = json.loads(r.stdout)
    single = api.nccl_tests("dgx-a100", "broadcast", "1M", "1M", 2)
    assert [rep["op"] for rep in reports] == ["alltoall", "broadcast"]
    assert reports[1]["rows"] == single["rows"]


def _closed_form_table(path, efficiency=0.8):
    """A ring all-reduce table on dgx-a100 whose kernels reach `efficiency` of each GPU port
    (12 links x NCCL's SM80_NVLINK_BW, 20 GB/s each way), 2(n-1)/n S over it plus its latency (NCCL's
    base, then on each of the 14 steps of every loop of 2 MiB chunks of each rank's share of 24 channels
    two slices' handshakes at 3.4 us and two NVLink hops: docs/nccl.md), printed as nccl-tests prints it."""
    port = 12 * 20e9
    lines = ["# Collective test starting: all_reduce_perf"]
    lines += [f"#  Rank  {k} Group  0 Pid  1 on host device  {k} [0x07] NVIDIA A100-SXM4-80GB" for k in range(8)]
    for e in range(30, 34):
        s = 2**e
        loops = math.ceil(s / (24 * 8) / 2**21)
        us = (8.4e-6 + loops * 14 * (2 * 3.4e-6 + 0.1e-6) + 1.75 * s / (efficiency * port)) * 1e6
        algbw = s / us / 1e3
        lines.append(f"{s:>12} {s // 4:>12} float sum -1 {us:.1f} {algbw:.2f} {algbw * 1.75:.2f} 0 "
                     f"{us:.1f} {algbw:.2f} {algbw * 1.75:.2f} 0")
    path.write_text("\n".join(lines) + "\n")
    return path


def test_calibrate_from_nccl_tests_output_fits_and_feeds_back(tmp_path):
    table = _closed_form_table(tmp_path / "all_reduce_perf.txt")
    r = run_cli("calibrate", "dgx-a100", str(table), "--json")
    assert r.returncode == 0, r.stderr
    fit = json.loads(r.stdout)
    assert float(fit["fitted"]["nccl_eff_simple"]) == pytest.approx(0.8, abs=0.01)
    # The fitted constants given back to nccl-tests predict the measured busbw.
    params = [x for p in fit["params"] for x in ("--param", p)]
    r = run_cli("nccl-tests", "dgx-a100", "-b", "1G", "-e", "1G", "--json", *params)
    assert r.returncode == 0, r.stderr
    measured = fit["residuals"][0]["measured"]
    assert json.loads(r.stdout)["rows"][0]["busbw"] == pytest.approx(measured, rel=0.01)
    # A machine file cannot be written from it: one line says what to do instead, before any fitting (the
    # README: outputs are checked first), found by the core's own reading of what the file is.
    r = run_cli("calibrate", "dgx-a100", str(table), "-o", str(tmp_path / "m.yaml"))
    assert r.returncode == 2 and "--param" in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert r.stderr.startswith("error: --output:") and "nccl-tests output" in r.stderr
    assert "no --output" in r.stderr
    assert r.stdout == "" and not (tmp_path / "m.yaml").exists()
    with pytest.raises(api.InputError, match="--output"):
        api.calibrate("dgx-a100", table, machine_out=True)



def test_a_powershell_paste_in_utf16_fits_as_the_utf8_file_does(tmp_path):
    """Round 19's tester: nccl-tests output redirected by Windows PowerShell (`>` writes UTF-16 with a mark) was
    refused as a binary file. It is text: read as such, with or without the mark, the fit is the UTF-8 file's."""
    table = _closed_form_table(tmp_path / "all_reduce_perf.txt")
    text = table.read_text().replace("\n", "\r\n")
    (tmp_path / "ps.txt").write_bytes(text.encode("utf-16"))
    (tmp_path / "ps-bare.txt").write_bytes(text.encode("utf-16-le"))
    fits = [json.loads(run_cli("calibrate", "dgx-a100", str(tmp_path / f), "--json").stdout)["fitted"]
            for f in ("all_reduce_perf.txt", "ps.txt", "ps-bare.txt")]
    assert fits[1] == fits[0] and fits[2] == fits[0]
    # An empty paste says it is empty and what to give, not that it lacks p2pBandwidthLatencyTest's lines.
    (tmp_path / "empty.txt").write_text("\n \n")
    r = run_cli("calibrate", "dgx-a100", str(tmp_path / "empty.txt"))
    assert r.returncode == 2 and "empty.txt: is empty; give the output of nccl-tests" in r.stderr, r.stderr


def test_a_pasted_mpirun_line_gives_the_ranks_the_rank_lines_would(tmp_path):
    """Round 17's tester: `mpirun -np 8 ... -g 1` above the table and no Rank lines was refused "ranks unknown";
    the launcher's 8 processes of one GPU each are the 8 Rank lines' ranks, so the fit is the same."""
    full = _closed_form_table(tmp_path / "all_reduce_perf.txt")
    lines = [x for x in full.read_text().splitlines() if "Rank" not in x]
    pasted = tmp_path / "pasted.txt"
    pasted.write_text("$ mpirun -np 8 -x NCCL_DEBUG=WARN ./build/all_reduce_perf -b 1G -e 8G -f 2 -g 1\n"
                      + "\n".join(lines) + "\n")
    fits = [json.loads(run_cli("calibrate", "dgx-a100", str(f), "--json").stdout) for f in (full, pasted)]
    assert fits[1]["fitted"] == fits[0]["fitted"]
    assert [(r["ranks"], r["nodes"]) for r in fits[1]["runs"]] == [(8, 1)]
    # Hosts from a hostfile are not on the line: one line asks for the Rank lines.
    pasted.write_text("mpirun -np 8 --hostfile hosts ./build/all_reduce_perf -g 1\n" + "\n".join(lines) + "\n")
    r = run_cli("calibrate", "dgx-a100", str(pasted))
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1 and "Rank N" in r.stderr, r.stderr


def test_a_table_pasted_from_a_coloured_terminal_reads_as_the_plain_one(tmp_path):
    plain = _closed_form_table(tmp_path / "all_reduce_perf.txt")
    lines = plain.read_text().splitlines()
    # Colour codes before a row and in its middle, a window title, CRLF line ends.
    lines[9] = "\x1b[0m" + lines[9]
    lines[10] = lines[10].replace(" float ", " \x1b[1mfloat\x1b[0m ")
    lines.insert(0, "\x1b]0;user@gpu59: ~/nccl-tests\x07\x1b[32m$ ./build/all_reduce_perf -g 8\x1b[0m")
    coloured = tmp_path / "coloured.txt"
    coloured.write_bytes("\r\n".join(lines).encode() + b"\r\n")
    fits = [json.loads(run_cli("calibrate", "dgx-a100", str(f), "--json").stdout) for f in (plain, coloured)]
    assert len(fits[1]["residuals"]) == len(fits[0]["residuals"]) == 4  # sizes 1, 2, 4 and 8 GiB
    assert fits[1]["fitted"] == fits[0]["fitted"]


def test_a_cluster_preset_says_how_many_of_its_nodes_ran():
    first = run_cli("nccl-tests", "superpod-h100-su", "-b", "1M", "-e", "1M").stdout.splitlines()[0]
    assert "8 ranks, 1 node(s) of its 32: --nodes 32 runs them all" in first, first
    first = run_cli("nccl-tests", "hgx-h100", "-b", "1M", "-e", "1M", "--nodes", "2").stdout.splitlines()[0]
    assert "2 node(s)," in first and "of its" not in first, first

def test_nccl_calls_in_a_rank_program_run_under_contend_run():
    r = run_cli("run", "examples/scenarios/nccl-training-step.yaml", "--json")
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    assert rep["jobs"]["ranks"] == [16] and rep["jobs"]["run_time_s"][0] > 600e-6


def test_plot_writes_a_picture_and_never_overwrites(tmp_path):
    png = tmp_path / "busbw.png"
    r = run_cli("nccl-tests", "dgx-a100", "-b", "1M", "-e", "64M", "-f", "4", "--plot", str(png))
    assert r.returncode == 0, r.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    before = png.stat().st_mtime_ns
    r = run_cli("nccl-tests", "dgx-a100", "-b", "1M", "-e", "1M", "--plot", str(png))
    assert r.returncode == 2 and "--force" in r.stderr and png.stat().st_mtime_ns == before
    r = run_cli("nccl-tests", "dgx-a100", "-b", "1M", "-e", "1M", "--plot", str(png), "--force")
    assert r.returncode == 0, r.stderr


def test_one_name_per_algorithm_in_json_and_plot_legend(monkeypatch, tmp_path):
    # JSON: snake-case ids, "p2p" for all-to-all (NCCL runs it peer-to-peer, not as a ring); the legend:
    # NCCL's names from the report's algo_names (docs/nccl.md, "Algorithm names").
    from contend import plots
    rep = api.nccl_tests("dgx-a100", "alltoall", "1M", "1M", 2)
    assert rep["rows"][0]["algo"] == "p2p" and rep["algo_names"]["p2p"] == "P2P"
    assert rep["algo_names"]["nvls_tree"] == "NVLSTree"
    labels = []
    real = plots.plt.Axes.scatter
    def scatter(self, *a, **k):
        labels.append(k.get("label"))
        return real(self, *a, **k)

    monkeypatch.setattr(plots.plt.Axes, "scatter", scatter)
    plots.nccl_busbw(rep, tmp_path / "p.png")
    assert "NCCL picks: P2P/Simple" in labels, labels


def test_plot_draws_the_fastest_line_only_where_a_size_differs_from_nccls_pick(monkeypatch, tmp_path):
    # qa27: the legend said "fastest contend ran" where every size's fastest was NCCL's pick (the dashed line
    # hid under the pick's). Reports are built by hand here: whether the line is drawn is the plot's rule alone.
    from contend import plots
    labels = []
    real = plots.plt.Axes.plot
    def plot(self, *a, **k):
        labels.append(k.get("label"))
        return real(self, *a, **k)

    monkeypatch.setattr(plots.plt.Axes, "plot", plot)

    def report(fastest: str) -> dict:
        alts = [{"algo": "ring", "proto": "Simple", "time_us": 100.0}]
        if fastest != "ring":
            alts.append({"algo": fastest, "proto": "Simple", "time_us": 80.0})
        explain = {"alternatives": alts, "pick_slower_pct": 25.0 if len(alts) > 1 else 0.0}
        row = {"size": 1 << 20, "time_us": 100.0, "algbw": 10.0, "busbw": 17.5, "algo": "ring", "proto": "Simple",
               "explain": explain}
        return {"rows": [row], "ranks": 8, "op": "all_reduce", "machine": "m", "nodes": 1, "model": "maxmin",
                "nccl_version": "2.30.7"}

    plots.nccl_busbw(report("ring"), tmp_path / "same.png")
    assert "fastest contend ran" not in labels, labels
    plots.nccl_busbw(report("tree"), tmp_path / "differs.png")
    assert "fastest contend ran" in labels, labels


def test_tuner_file_picks_and_bad_lines_are_one_line_exit_2(tmp_path):
    # NCCL's example tuner CSV: all-reduce of 1 KiB to 1 MiB on ring/LL with 2 channels; above,
    # NCCL's own pick. The table's rows say which line picked.
    conf = tmp_path / "tuner.conf"
    conf.write_text("# collective,min,max,algo,proto,channels,nNodes,nRanks\nallreduce,1024,1048576,ring,ll,2,-1,8\n")
    r = run_cli("nccl-tests", "dgx-a100", "-b", "1K", "-e", "4M", "-f", "4", "--tuner", conf, "--json")
    assert r.returncode == 0, r.stderr
    rows = json.loads(r.stdout)["rows"]
    assert [(x["size"], x["algo"], x["proto"], x["channels"], x.get("tuner_line")) for x in rows[:3]] == [
        (1024, "ring", "LL", 2, 2), (4096, "ring", "LL", 2, 2), (16384, "ring", "LL", 2, 2)]
    assert rows[-1]["size"] == 4 << 20 and "tuner_line" not in rows[-1]
    conf.write_text("allreduce,0,1024,ring,ll,2,-1\n")
    r = run_cli("nccl-tests", "dgx-a100", "-b", "8", "-e", "64", "--tuner", conf)
    msg = r.stderr.strip()
    assert r.returncode == 2 and "line 1" in msg and "8 to 10" in msg and "\n" not in msg, msg


def test_table_mode_says_its_notes_on_stderr_and_keeps_stdout_the_table():
    # --algo does not govern all-to-all: one "note:" line on stderr; stdout is the table alone, as nccl-tests
    # prints it.
    r = run_cli("nccl-tests", "dgx-a100", "--op", "alltoall", "--algo", "tree", "-b", "1M", "-e", "1M")
    assert r.returncode == 0, r.stderr
    notes = [line for line in r.stderr.splitlines() if line.startswith("note:")]
    assert any("--algo (NCCL_ALGO) does not apply to alltoall" in n for n in notes), r.stderr
    assert not any("in-place and out-of-place" in n for n in notes) and "note:" not in r.stdout


def test_an_assumed_compute_capability_is_a_note(tmp_path):
    # A GPU model that names no generation runs NCCL's Ampere tables: said on stderr, once, with the model.
    from pathlib import Path

    preset = Path(__file__).resolve().parents[1] / "crates" / "contend-core" / "presets" / "dgx-a100.yaml"
    text = preset.read_text().replace("A100-SXM4-40GB", "Mystery GPU")
    path = tmp_path / "m.yaml"
    path.write_text(text)
    r = run_cli("nccl-tests", str(path), "-b", "1M", "-e", "1M")
    assert r.returncode == 0, r.stderr
    notes = [line for line in r.stderr.splitlines() if line.startswith("note: compute capability 8.0")]
    assert len(notes) == 1 and "Mystery GPU" in notes[0], r.stderr
    assert "compute capability 8.0" not in run_cli("nccl-tests", "dgx-a100", "-b", "1M", "-e", "1M").stderr


def _rows(*args, env=None):
    r = run_cli("nccl-tests", "dgx-a100", "-b", "1M", "-e", "4M", "--json", *args)
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    return [(x["algo"], x["proto"], x["channels"], x["time_us"]) for x in rep["rows"]], rep


def test_nccl_environment_variables_are_read_where_no_flag_is_given(monkeypatch):
    # NCCL_ALGO / NCCL_PROTO as nccl-tests users set them run as --algo / --proto, and the report says so.
    flags, _ = _rows("--algo", "tree", "--proto", "LL")
    monkeypatch.setenv("NCCL_ALGO", "Tree")
    monkeypatch.setenv("NCCL_PROTO", "LL")
    env, rep = _rows()
    assert env == flags and {r[:2] for r in env} == {("tree", "LL")}
    assert any("NCCL_ALGO=Tree" in n and "NCCL_PROTO=LL" in n for n in rep["caveats"]), rep["caveats"]
    # A flag given wins over its variable (and the variable is not named as applied).
    ring, rep = _rows("--algo", "ring")
    assert {r[:2] for r in ring} == {("ring", "LL")}
    assert not any("NCCL_ALGO" in n for n in rep["caveats"]) and any("NCCL_PROTO=LL" in n for n in rep["caveats"])
    # The table's caveat line on stderr names them.
    r = run_cli("nccl-tests", "dgx-a100", "-b", "1M", "-e", "1M")
    assert r.returncode == 0 and "NCCL_ALGO=Tree" in r.stderr, r.stderr
    # NCCL_MIN_NCHANNELS = NCCL_MAX_NCHANNELS is --channels.
    monkeypatch.delenv("NCCL_ALGO")
    monkeypatch.delenv("NCCL_PROTO")
    monkeypatch.setenv("NCCL_MIN_NCHANNELS", "4")
    monkeypatch.setenv("NCCL_MAX_NCHANNELS", "4")
    env, _ = _rows()
    assert env == _rows("--channels", "4")[0] and {r[2] for r in env} == {4}
    # NCCL_MIN_CTAS / NCCL_MAX_CTAS bound it beside them (connect.cc ncclTopoPostset): the larger floor, the
    # smaller ceiling, so 4 and 4 of either kind are --channels 4 too.
    monkeypatch.delenv("NCCL_MIN_NCHANNELS")
    monkeypatch.setenv("NCCL_MIN_CTAS", "4")
    ctas, rep = _rows()
    assert ctas == env and any("NCCL_MIN_CTAS=4" in n for n in rep["caveats"]), rep["caveats"]


@pytest.mark.parametrize("env,args,needles", [
    ({"NCCL_ALGO": "bogus"}, [], ["NCCL_ALGO (environment)", "bogus", "unset NCCL_ALGO"]),
    ({"NCCL_PROTO": "LL256"}, [], ["NCCL_PROTO (environment)", "ll256"]),
    ({}, ["-o", "sum"], ["--op: sum is nccl-tests' -o", "give the collective with --op"]),
    ({}, ["-o", "avg"], ["--op: avg", "reduction"]),
    ({}, ["-t", "2", "-g", "4"], ["-t: 2", "not both"]),
    ({}, ["-t", "x"], ["-t: x"]),
])
def test_nccl_tests_habits_are_one_line(monkeypatch, env, args, needles):
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    r = run_cli("nccl-tests", "dgx-a100", "-b", "1M", "-e", "1M", *args)
    assert r.returncode == 2, (r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and all(n in lines[0] for n in needles), lines


@pytest.mark.parametrize("env,most", [
    ({"NCCL_MAX_NCHANNELS": "8"}, 8),
    ({"NCCL_MIN_NCHANNELS": "2", "NCCL_MAX_NCHANNELS": "8"}, 8),
    ({"NCCL_MAX_CTAS": "4"}, 4),
])
def test_channel_bounds_from_the_shell_bound_nccls_count(monkeypatch, env, most):
    # A ceiling on NCCL's own count (connect.cc ncclTopoPostset) lowers the channels every row runs (qa27: it was
    # noted as ignored), and the caveat names it as applied.
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    r = run_cli("nccl-tests", "dgx-a100", "-b", "64M", "-e", "1G", "-f", "4", "--json")
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    assert all(row["channels"] <= most for row in rep["rows"]), rep["rows"]
    assert any(f"{k}={v}" in n for n in rep["caveats"] for k, v in env.items()), rep["caveats"]
    assert not any("ignored" in n for n in rep["caveats"]), rep["caveats"]


@pytest.mark.parametrize("env,needle", [
    ({"NCCL_MIN_NCHANNELS": "x", "NCCL_MAX_NCHANNELS": "x"}, "not a channel count"),
    ({"NCCL_MIN_NCHANNELS": "65"}, "not a channel count"),
])
def test_a_shell_set_up_for_real_runs_still_runs(monkeypatch, env, needle):
    # Forms contend does not read yet run NCCL's own choice, with a note naming what was ignored: a shell
    # exported for real jobs must not stop every contend nccl-tests.
    plain = run_cli("nccl-tests", "dgx-a100", "-b", "1M", "-e", "1M").stdout
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    r = run_cli("nccl-tests", "dgx-a100", "-b", "1M", "-e", "1M")
    assert r.returncode == 0 and needle in r.stderr and "ignored from the environment" in r.stderr, r.stderr
    assert r.stdout == plain


def _json_rows(*args):
    r = run_cli("nccl-tests", "hgx-h100", "-b", "1G", "-e", "1G", "--json", *args)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)["rows"]


def test_nccl_exclusion_form_is_every_other_choice(monkeypatch):
    # NCCL's "^" (src/graph/tuning.cc parseList: a list starting with ^ unsets what it names and sets the rest):
    # ^NVLS on one node is ring and tree (NVLS-tree needs several nodes), so NCCL's model picks among those, as
    # --algo ring,tree asks; at 1 GiB on hgx-h100 NVLS is NCCL's own pick, so the exclusion changes the row.
    own = _json_rows()
    assert own[0]["algo"] == "nvls"
    excluded = _json_rows("--algo", "^NVLS")
    assert excluded == _json_rows("--algo", "ring,tree") and excluded[0]["algo"] != "nvls"
    assert _json_rows("--proto", "^LL128") == _json_rows("--proto", "LL,Simple")
    monkeypatch.setenv("NCCL_ALGO", "^nvls")
    r = run_cli("nccl-tests", "hgx-h100", "-b", "1G", "-e", "1G", "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["rows"] == excluded, r.stderr
    assert "NCCL_ALGO=^nvls" in r.stderr or "NCCL_ALGO=^nvls" in r.stdout


def _door(door, scenario):
    """What `door` runs for a 16 MiB all-reduce on hgx-h100 under this process's environment (the CLI's, and the
    API's env=None): (what it picked or took, its notes on the environment), or (2, the one-line error)."""
    if door.startswith("cli"):
        args = ("nccl-tests", "hgx-h100", "-b", "16M", "-e", "16M") if door == "cli nccl-tests" else ("run", scenario)
        r = run_cli(*args, "--json")
        if r.returncode:
            return r.returncode, r.stderr
        rep = json.loads(r.stdout)
        took, notes = (rep["rows"][0]["algo"] if "rows" in rep else rep["jobs"]["run_time_s"][0]), rep.get("notes", [])
    else:
        try:
            if door == "api nccl_tests":
                rep = api.nccl_tests("hgx-h100", min_bytes="16M", max_bytes="16M")
                took, notes = rep["rows"][0]["algo"], rep["notes"]
            else:
                run = api.run(scenario)
                took, notes = run.raw["jobs"]["run_time_s"][0], run.notes
        except api.InputError as e:
            return 2, f"error: {e}\n"
    return took, [n for n in notes if "environment" in n]


@pytest.mark.parametrize("door", ["cli nccl-tests", "cli run", "api nccl_tests", "api run"])
def test_every_door_reads_nccls_environment(door, tmp_path, monkeypatch):
    # Issue 25: NCCL_ALGO exported for the real job reaches every door, read by the core as NCCL reads it. At
    # 16 MiB on hgx-h100 NCCL's own pick is NVLS; NCCL_ALGO=Ring changes the pick (and a program's run time),
    # the notes name it, and a bad value is one line (exit code 2 at the CLI).
    prog = tmp_path / "ar.yaml"
    prog.write_text("ranks:\n" + "  - [{nccl_allreduce: {size: 16MiB}}]\n" * 8)
    scenario = tmp_path / "s.yaml"
    scenario.write_text(f"cluster: hgx-h100\nworkload:\n  jobs:\n    - program: {prog}\n")
    own, notes = _door(door, scenario)
    assert not notes and own != 2, notes
    monkeypatch.setenv("NCCL_ALGO", "Ring")
    ring, notes = _door(door, scenario)
    assert ring != own and (door.endswith("run") or (own, ring) == ("nvls", "ring")), (own, ring)
    assert len(notes) == 1 and notes[0].startswith("from the environment, as NCCL reads it: NCCL_ALGO=Ring"), notes
    if door.startswith("api"):
        # The API's env= is explicit: {} reads nothing, a mapping reads it whatever this process exports.
        call = (lambda **kw: api.nccl_tests("hgx-h100", min_bytes="16M", max_bytes="16M", **kw)["rows"][0]["algo"]) \
            if door == "api nccl_tests" else (lambda **kw: api.run(scenario, **kw).raw["jobs"]["run_time_s"][0])
        assert call(env={}) == own and call(env={"NCCL_ALGO": "ring"}) == ring
        monkeypatch.delenv("NCCL_ALGO")
        assert call(env={"NCCL_ALGO": "Ring", "PATH": "/nowhere"}) == ring and call() == own
        with pytest.raises(TypeError, match="env: a mapping"):
            call(env=[("NCCL_ALGO", "ring")])
    monkeypatch.setenv("NCCL_ALGO", "bogus")
    code, err = _door(door, scenario)
    assert code == 2 and err.count("\n") == 1 and err.startswith("error: NCCL_ALGO (environment): bogus:"), err
    assert "unset NCCL_ALGO" in err and ("give --algo" in err) == ("nccl" in door), err
    if door == "cli run":
        # The table's run prints the notes on stderr, its stdout as before.
        monkeypatch.setenv("NCCL_ALGO", "Ring")
        r = run_cli("run", scenario)
        assert r.returncode == 0 and "note: from the environment, as NCCL reads it: NCCL_ALGO=Ring" in r.stderr


def test_threads_of_one_gpu_each_are_ranks():
    # nccl-tests -t 4 (-g 1): four threads, one GPU each, each launching its own: the node's first four GPUs
    # as ranks, as --gpus 0,1,2,3 runs them; -t 1 is nccl-tests' default and changes nothing.
    four = run_cli("nccl-tests", "dgx-a100", "-b", "1M", "-e", "1M", "-t", "4", "--json")
    assert four.returncode == 0, four.stderr
    assert json.loads(four.stdout)["rows"] == json.loads(
        run_cli("nccl-tests", "dgx-a100", "-b", "1M", "-e", "1M", "--gpus", "0,1,2,3", "--json").stdout)["rows"]
    one = run_cli("nccl-tests", "dgx-a100", "-b", "1M", "-e", "1M", "-t", "1", "-g", "2").stdout
    assert one == run_cli("nccl-tests", "dgx-a100", "-b", "1M", "-e", "1M", "-g", "2").stdout


def test_a_ring_across_the_rome_sockets_runs_at_their_peer_forwarding_rate():
    # rtx4090x8-rome-p2p: the post's p2pBandwidthLatencyTest moves 38.93-41.93 GB/s both ways for each pair across
    # the sockets (median 41.59, 20.8 a direction: the machine's peer_bandwidth) and 49.75-50.66 within one socket.
    rome = Path(__file__).resolve().parents[1] / "bench" / "validation" / "machines" / "rtx4090x8-rome-p2p.yaml"
    r = api.p2p(api.Machine.load(str(rome)))
    both = r["bidirectional_p2p_gbps"]
    g = r["gpus"]
    across, within = both[g.index("GPU0")][g.index("GPU4")], both[g.index("GPU0")][g.index("GPU1")]
    assert across == pytest.approx(2 * 20.8, rel=0.005)
    assert 38.93 <= across <= 41.93 and 49.75 * 0.98 <= within <= 50.66
    # A ring all-reduce's busbw is each rank's send rate (nccl-tests' 2(n-1)/n factor), which its slowest hop sets:
    # the ring crosses the sockets both ways at once, each crossing at the peer rate; at 128 MiB the fill and the
    # Simple slices' handshakes (docs/nccl.md) take a few percent. Without the cap it ran at 24.6 GB/s. NCCL connects
    # these pairs P2P before 2.23.4 (its P2P level on AMD hosts was SYS; the post's run is at this rate, so it ran
    # such a release or NCCL_P2P_LEVEL): run as 2.21.
    rep = api.nccl_tests(str(rome), "all_reduce", "128M", "128M", ngpus=8, nccl_version="2.21")
    assert 0.95 * 20.8 < rep["rows"][0]["busbw"] <= 20.8
    # From 2.23.4 NCCL's P2P level on an AMD host of more than two GPUs is PXB (graph/paths.cc ncclTopoCheckP2p):
    # every pair here is beyond it (each GPU on a root port of its own), so the ring goes through host memory as on
    # the stock driver, whatever peer access allows, and the report says why.
    new = api.nccl_tests(str(rome), "all_reduce", "128M", "128M", ngpus=8)
    stock = api.nccl_tests(str(rome.with_name("rtx4090x8-rome.yaml")), "all_reduce", "128M", "128M", ngpus=8)
    assert new["rows"][0]["busbw"] == pytest.approx(stock["rows"][0]["busbw"], rel=0.01)
    assert any("P2P level on AMD hosts with 8 GPUs a node is PXB" in c for c in new["caveats"])


def test_nccl_net_gdr_level_and_read_from_the_shell(monkeypatch):
    # typical-8gpu's HCA hangs off socket 0's root complex: GPU0 reaches it through the host bridge (PHB), beyond
    # NCCL_NET_GDR_LEVEL's default, so its network steps go through host memory (graph/paths.cc ncclTopoCheckGdr);
    # SYS with NCCL_NET_GDR_READ=1 (a K40 reads GPU memory for sends only when told) moves them straight.
    for k in [k for k in os.environ if k.startswith("NCCL_")]:
        monkeypatch.delenv(k)

    def run(*flags):
        r = run_cli("nccl-tests", "typical-8gpu", "--nodes", "2", "--gpus", "0", "-b", "1M", "-e", "1M", "--json",
                    *flags)
        assert r.returncode == 0, r.stderr
        out = json.loads(r.stdout)
        return out["rows"][0]["time_us"], out["notes"], " ".join(out["caveats"])

    staged, _, caveats = run()
    want = "moves the network data of n0.GPU0 through host memory, not by GPUDirect RDMA (1 sending, 1 receiving)"
    assert want in caveats, caveats
    param, _, _ = run("--param", "nccl_net_gdr_level=SYS", "--param", "nccl_net_gdr_read=1")
    monkeypatch.setenv("NCCL_NET_GDR_LEVEL", "SYS")
    monkeypatch.setenv("NCCL_NET_GDR_READ", "1")
    gdr, notes, caveats = run()
    assert gdr == param < staged, (staged, param, gdr)
    assert "GPUDirect" not in caveats, caveats
    assert any("as NCCL reads it: NCCL_NET_GDR_LEVEL=SYS, NCCL_NET_GDR_READ=1" in n for n in notes), notes
    # The old numbers read as NCCL maps them (levelsOldToNew: 4 is SYS); a parameter given wins over the variable.
    monkeypatch.setenv("NCCL_NET_GDR_LEVEL", "4")
    assert run()[0] == gdr
    assert run("--param", "nccl_net_gdr_level=PXB")[0] == staged
    monkeypatch.setenv("NCCL_NET_GDR_LEVEL", "phb")
    r = run_cli("nccl-tests", "typical-8gpu", "--nodes", "2", "-b", "1M", "-e", "1M")
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert r.stderr.startswith("error: NCCL_NET_GDR_LEVEL (environment): phb: is not a level NCCL reads"), r.stderr
    monkeypatch.delenv("NCCL_NET_GDR_LEVEL")
    monkeypatch.setenv("NCCL_NET_GDR_READ", "-2")
    assert run()[0] == staged


def test_nccl_p2p_level_and_disable_from_the_shell(monkeypatch):
    # NCCL_P2P_LEVEL overrides NCCL's default level (graph/paths.cc ncclGetUserP2pLevel): at SYS the rome-p2p box's
    # ring runs P2P under 2.30 as under 2.21's default (SYS on AMD), at its peer rate, not through host memory.
    rome = str(Path(__file__).resolve().parents[1] / "bench" / "validation" / "machines" / "rtx4090x8-rome-p2p.yaml")
    for k in [k for k in os.environ if k.startswith("NCCL_")]:
        monkeypatch.delenv(k)

    def busbw(*flags):
        r = run_cli("nccl-tests", rome, "-b", "128M", "-e", "128M", "-g", "8", "--json", *flags)
        assert r.returncode == 0, r.stderr
        out = json.loads(r.stdout)
        return out["rows"][0]["busbw"], out["notes"]

    default, _ = busbw()
    old, _ = busbw("--nccl-version", "2.21")
    monkeypatch.setenv("NCCL_P2P_LEVEL", "SYS")
    monkeypatch.setenv("NCCL_IB_QPS_PER_CONNECTION", "2")
    monkeypatch.setenv("NCCL_DEBUG", "INFO")
    sys_level, notes = busbw()
    assert sys_level == old and sys_level > 1.3 * default, (default, old, sys_level)
    assert any("as NCCL reads it: NCCL_P2P_LEVEL=SYS" in n for n in notes), notes
    assert "not modelled, NCCL's default assumed: NCCL_IB_QPS_PER_CONNECTION" in notes, notes
    # The old numbers read as NCCL maps them (levelsOldToNew: 4 is SYS, 2 PXB).
    monkeypatch.setenv("NCCL_P2P_LEVEL", "4")
    assert busbw()[0] == sys_level
    monkeypatch.setenv("NCCL_P2P_LEVEL", "2")
    assert busbw()[0] == default
    # NCCL compares the words case-sensitively: `sys` would be ignored by NCCL; contend says so in one line.
    monkeypatch.setenv("NCCL_P2P_LEVEL", "sys")
    r = run_cli("nccl-tests", rome, "-b", "128M", "-e", "128M", "-g", "8")
    assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
    assert r.stderr.startswith("error: NCCL_P2P_LEVEL (environment): sys:"), r.stderr
    # NCCL_P2P_DISABLE=1 takes NVLink pairs off P2P too: NCCL routes every pair through the receiver's CPU in its
    # graph (paths.cc addInterStep) and searches its rings there. On dgx-a100 a ring stores both GPUs' steps of a
    # PCIe switch up its Gen4 x16 uplink: one ring at NCCL's 24 / 2 = 12 GB/s (SYS: it crosses the sockets), and the
    # bus bandwidth is at most the uplink's rate over 2 (31.5 GB/s at the link's efficiency, 26.3: 13.15 GB/s).
    monkeypatch.delenv("NCCL_P2P_LEVEL")
    monkeypatch.setenv("NCCL_P2P_DISABLE", "1")
    for model in ["maxmin", "packet"]:
        r = run_cli("nccl-tests", "dgx-a100", "-b", "128M", "-e", "128M", "--model", model, "--json")
        assert r.returncode == 0, r.stderr
        out = json.loads(r.stdout)
        assert 0.8 * 13.15 <= out["rows"][0]["busbw"] <= 13.15, (model, out["rows"][0]["busbw"])
        assert "# Rings: 2 channels at 12 GB/s per channel (SYS)" in out["table"], out["table"]


def _named(text: str) -> set[str]:
    """The NCCL_* variables a text names, shorthands spelled out (NCCL_P2P_DISABLE/LEVEL, NCCL_MIN/MAX_NCHANNELS)."""
    out: set[str] = set()
    for token in re.findall(r"NCCL_[A-Z0-9_/]+[A-Z0-9]", text):
        first, *rest = token.split("/")
        if rest and "_" in rest[-1]:
            tail = rest[-1].split("_", 1)[1]
            out |= {f"{first}_{tail}", *(f"NCCL_{r}" for r in rest)}
        else:
            out |= {first, *(f"{first.rsplit('_', 1)[0]}_{r}" for r in rest)}
    return out


def test_help_names_every_variable_read():
    """rev23 finding 6: the lists of variables read name every one the core reads (environment.rs VARIABLES)."""
    from contend.cli import nccl as cli_nccl

    rs = (Path(__file__).resolve().parent.parent / "crates/contend-core/src/nccl/environment.rs").read_text()
    block = rs.split("pub const VARIABLES", 1)[1].split("];", 1)[0]
    read = set(re.findall(r'"(NCCL_[A-Z0-9_]+)"', block))
    assert {"NCCL_NET_GDR_LEVEL", "NCCL_NET_GDR_READ"} <= read
    for where, doc in [("cli nccl-tests", cli_nccl.nccl_tests.__doc__), ("api.nccl_tests", api.nccl_tests.__doc__),
                       ("api.run", api.run.__doc__)]:
        assert read <= _named(doc), (where, sorted(read - _named(doc)))
