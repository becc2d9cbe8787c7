"""nccl-tests output as users paste it into `contend calibrate`, and NCCL's settings as they give them to `contend
nccl-tests` and `contend run` (round 21's tester: B2, R1-R6, R15-R17)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import run_cli

VALIDATION = Path(__file__).resolve().parent.parent / "bench" / "validation"
DATA = VALIDATION / "data" / "nccl"


def _dkh(tmp_path: Path, lo: int = 1 << 20, hi: int = 16 << 20) -> Path:
    """dkh's 8 x A100 table (NCCL 2.19.3: `nccl-library=21903`) cut to sizes lo..hi, as pasted."""
    keep = []
    for line in (DATA / "a100x8-dkh.txt").read_text().splitlines():
        first = line.split()[0] if line.split() else ""
        if not first.isdigit() or lo <= int(first) <= hi:
            keep.append(line)
    path = tmp_path / "dkh.txt"
    path.write_text("\n".join(keep) + "\n")
    return path


def _uses(stdout: str) -> list[list[str]]:
    return [line.split()[4:] for line in stdout.splitlines() if line.startswith("use: contend nccl-tests dgx-a100 ")]


@pytest.mark.parametrize("given", [[], ["-p", "nccl_version=2.19"]])
def test_the_printed_use_line_reproduces_the_fit(tmp_path, given):
    """B2: the `use:` line ran NCCL 2.30's choice after a fit under 2.19 (+41% at 4 MiB). The release is read from
    the paste (and said), and the printed command, run as printed, gives the fit's own predictions."""
    table = _dkh(tmp_path)
    r = run_cli("calibrate", "dgx-a100", table, *given)
    assert r.returncode == 0, r.stderr
    assert "fitted under NCCL 2.19's choice" in r.stdout
    if not given:
        assert "NCCL 2.19.3 read from its output (nccl-library=21903)" in r.stdout
    [use] = _uses(r.stdout)
    assert "--nccl-version" in use and use[use.index("--nccl-version") + 1] == "2.19"
    fit = json.loads(run_cli("calibrate", "dgx-a100", table, *given, "--json").stdout)
    printed = run_cli("nccl-tests", "dgx-a100", *use, "--json")
    assert printed.returncode == 0, printed.stderr
    rows = {row["size"]: row["busbw"] for row in json.loads(printed.stdout)["rows"]}
    for res in fit["residuals"]:
        assert rows[int(res["src"].split()[0])] == pytest.approx(res["predicted"], rel=1e-9), res


def test_pasted_runs_read_as_users_paste_them(tmp_path):
    """R1: AWS's published p5 example is a bare table under `srun -l` labels: read as nccl-tests (then refused as a
    run whose ranks it does not say), not as p2pBandwidthLatencyTest. R2: `srun -l` and pdsh labels read to the
    clean file's fit. R16: runs pasted from one terminal are each their command line's collective."""
    r = run_cli("calibrate", "hgx-h100", DATA / "h100-2node-p5-aws.txt")
    assert r.returncode == 2 and "p2pBandwidthLatencyTest" not in r.stderr and "Rank N" in r.stderr, r.stderr
    table = _dkh(tmp_path)
    clean = json.loads(run_cli("calibrate", "dgx-a100", table, "--json").stdout)["fitted"]
    for label in ("0: ", "dkh: "):
        labelled = tmp_path / "labelled.txt"
        labelled.write_text("".join(label + line + "\n" for line in table.read_text().splitlines()))
        r = run_cli("calibrate", "dgx-a100", labelled, "--json")
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout)["fitted"] == clean, label
    session = tmp_path / "session.txt"
    session.write_text("".join((DATA / f"autodl-2080ti-x2-{op}.txt").read_text()
                               for op in ("all_reduce", "all_gather", "alltoall")))
    r = run_cli("calibrate", VALIDATION / "machines" / "autodl-2080ti-x2.yaml", session)
    ops = re.findall(r"^read (\w+) \((named|from busbw/algbw)\)", r.stdout, re.M)
    assert ops[:3] == [("all_reduce", "named"), ("all_gather", "named"), ("alltoall", "named")], r.stdout + r.stderr


def test_nccl_version_takes_patch_releases_and_names_its_flag():
    """R4: `--nccl-version 2.30.7` (the table header's own spelling) runs as 2.30 with a note; a release contend
    does not model is refused naming --nccl-version and the nearest release it models."""
    args = ("nccl-tests", "dgx-a100", "-b", "1M", "-e", "1M", "--json")
    plain = json.loads(run_cli(*args, "--nccl-version", "2.19").stdout)
    patch = json.loads(run_cli(*args, "--nccl-version", "2.19.4").stdout)
    assert patch["rows"] == plain["rows"]
    assert any("NCCL 2.19.4 is run as 2.19" in n for n in patch["notes"])
    # rev22 finding 8: printed beside the table (stderr), as the other caveats, not only in --json.
    text = run_cli(*args[:-1], "--nccl-version", "2.19.4")
    assert "note: NCCL 2.19.4 is run as 2.19" in text.stderr and "is run as" not in text.stdout, text.stderr
    assert json.loads(run_cli(*args, "--nccl-version", "2.30.7").stdout)["rows"][0]["busbw"] > 0
    # qa22 rough edge 6: the releases PyTorch 2.7-2.8 ship (2.26.2, 2.27.x) and 2.22-2.29 are modelled.
    for given, minor in (("2.25", "2.25"), ("2.26.2", "2.26"), ("2.27", "2.27"), ("2.29.2", "2.29")):
        report = json.loads(run_cli(*args, "--nccl-version", given).stdout)
        assert report["rows"][0]["busbw"] > 0 and report["nccl_version"].startswith(minor + "."), report["nccl_version"]
    r = run_cli(*args, "--nccl-version", "2.31")
    assert r.returncode == 2 and r.stderr.startswith("error: --nccl-version:"), r.stderr
    assert "nearest it models is 2.30" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_run_takes_nccl_settings(tmp_path):
    """R5: `contend run -p nccl_pxn_disable=1` and a scenario's `params: {nccl_version: ...}` were refused as not
    parameters of maxmin; they reach the rank programs' NCCL calls (the closed form is the core's test)."""
    prog = tmp_path / "ar.yaml"
    prog.write_text("ranks:\n" + "  - [{nccl_allreduce: {size: 64MiB}}]\n" * 8)
    s = tmp_path / "s.yaml"
    s.write_text(f"cluster: dgx-a100\nparams: {{nccl_version: '2.19.3'}}\nworkload:\n  jobs:\n    - program: {prog}\n")
    times = {}
    for extra in ([], ["-p", "nccl_pxn_disable=1"], ["-p", "nccl_eff_simple=0.5", "-p", "nccl_eff_ll128=0.3"]):
        r = run_cli("run", s, "--json", *extra)
        assert r.returncode == 0, r.stderr
        times[len(extra)] = json.loads(r.stdout)["jobs"]["run_time_s"][0]
    assert times[4] > 1.5 * times[0] and times[2] == pytest.approx(times[0])
    # rev21 finding 6: PXN does nothing on one node, so the assertion above holds even if the setting never reached
    # the programs. The release moves 8 ranks' 4 MiB all-reduce on dgx-a100 (114.7 us under 2.19, 83.4 under 2.30:
    # each release's own choice), and NCCL_PXN_DISABLE moves two superpod-h100-su nodes' all-to-all (with PXN a
    # message to another device number changes rail over NVLink; without, it crosses a spine: 2.3 us later).
    prog.write_text("ranks:\n" + "  - [{nccl_allreduce: {size: 4MiB}}]\n" * 8)
    at = {}
    for v in ("2.19", "2.30"):
        r = run_cli("run", s, "--json", "-p", f"nccl_version={v}")
        assert r.returncode == 0, r.stderr
        at[v] = json.loads(r.stdout)["jobs"]["run_time_s"][0]
    assert at["2.19"] > 1.2 * at["2.30"], at
    a2a = tmp_path / "a2a.yaml"
    a2a.write_text("ranks:\n" + "  - [{nccl_alltoall: {size: 64MiB}}]\n" * 16)
    pod = tmp_path / "pod.yaml"
    pod.write_text(f"cluster: superpod-h100-su\nworkload:\n  jobs:\n    - program: {a2a}\n")
    pxn = {}
    for off in ("0", "1"):
        r = run_cli("run", pod, "--json", "-p", f"nccl_pxn_disable={off}")
        assert r.returncode == 0, r.stderr
        pxn[off] = json.loads(r.stdout)["jobs"]["run_time_s"][0]
    # Each NIC carries the same bytes either way: the time moves by the route's latency, as contend nccl-tests --nodes 2
    # moves it (the relay's NVLink step costs more than the spine's switches). Until round 24 the cluster's FCFS NICs
    # held NCCL's messages back in the program (not in nccl-tests), and without PXN ran 2.3 us over with.
    assert abs(pxn["1"] - pxn["0"]) > 1e-6, pxn
    for off in ("0", "1"):
        r = run_cli("nccl-tests", "superpod-h100-su", "--op", "alltoall", "-b", "1G", "-e", "1G", "--nodes", "2",
                    "-n", "1", "-p", f"nccl_pxn_disable={off}", "--json")
        assert r.returncode == 0, r.stderr
        assert json.loads(r.stdout)["rows"][0]["time_us"] * 1e-6 == pytest.approx(pxn[off], rel=1e-9), (off, pxn)
    r = run_cli("run", s, "-p", "nccl_version=2.31")
    assert r.returncode == 2 and "nccl_version" in r.stderr and "2.30" in r.stderr, r.stderr


def test_nccl_tests_settings_named_as_given(monkeypatch):
    """R6: NCCL_BUFFSIZE in the environment is read as NCCL reads it, and said. R15: nccl-tests' gather is named as
    a test contend does not predict yet. R17: a cluster's GPU named in full is refused without listing it."""
    args = ("nccl-tests", "hgx-h100", "--nodes", "2", "-b", "1G", "-e", "1G", "--algo", "ring", "--json")
    plain = json.loads(run_cli(*args).stdout)
    monkeypatch.setenv("NCCL_BUFFSIZE", "8388608")
    env = json.loads(run_cli(*args).stdout)
    flag = json.loads(run_cli(*args, "-p", "nccl_buffsize=8MiB").stdout)
    monkeypatch.delenv("NCCL_BUFFSIZE")
    assert env["rows"] == flag["rows"] != plain["rows"]
    assert any("NCCL_BUFFSIZE=8388608" in n for n in env["notes"])
    # rev21 finding 8: NCCL reads int64 parameters with strtoll base 0 (hex 0x800000 = 8 MiB, octal 040000000 too),
    # and NCCL_PXN_DISABLE=1 disables PXN. Round 22: 2 is refused, not read as 1 — NCCL's routes keep PXN for every
    # value but 1 (src/graph/paths.cc `!= 1`) while its proxies drop it for every value but 0 (src/init.cc `== 0`).
    for text in ("0x800000", "040000000"):
        monkeypatch.setenv("NCCL_BUFFSIZE", text)
        r = run_cli(*args)
        assert r.returncode == 0 and json.loads(r.stdout)["rows"] == flag["rows"], (text, r.stderr)
    monkeypatch.delenv("NCCL_BUFFSIZE")
    monkeypatch.setenv("NCCL_PXN_DISABLE", "1")
    one = run_cli(*args)
    monkeypatch.setenv("NCCL_PXN_DISABLE", "2")
    two = run_cli(*args)
    monkeypatch.delenv("NCCL_PXN_DISABLE")
    off = json.loads(run_cli(*args, "-p", "nccl_pxn_disable=1").stdout)
    assert one.returncode == 0 and json.loads(one.stdout)["rows"] == off["rows"], one.stderr
    assert two.returncode == 2 and two.stderr.startswith("error: NCCL_PXN_DISABLE (environment): 2: is neither 0 nor 1")
    assert len(two.stderr.strip().splitlines()) == 1, two.stderr
    r = run_cli("nccl-tests", "dgx-a100", "--op", "gather")
    assert r.returncode == 2 and "does not predict yet" in r.stderr, r.stderr
    r = run_cli("nccl-tests", "superpod-h100-su", "--nodes", "2", "--gpus", "n1.GPU0,n1.GPU1")
    assert r.returncode == 2 and "GPU0 .. GPU7" in r.stderr and "n0.GPU0" not in r.stderr, r.stderr


def test_a_two_node_paste_fits_and_its_use_line_reproduces_it(tmp_path):
    """Round 22 (calib): a run on two hosts is fitted on two copies of the machine (their NICs at the rate given as
    `contend nccl-tests --network-bandwidth` takes it), and the `use:` line it prints carries `--nodes 2
    --network-bandwidth 50GB/s` and gives the fit's own predictions. The paste is contend's own table of 2 x 8 H100
    at 50 GB/s a NIC, whose first line states its ranks and hosts."""
    table = run_cli("nccl-tests", "hgx-h100", "-b", "1M", "-e", "1G", "-f", "4", "--nodes", "2",
                    "--network-bandwidth", "50GB/s", "--param", "nccl_call_net=40us").stdout
    paste = tmp_path / "all_reduce_perf.txt"
    paste.write_text(table)
    r = run_cli("calibrate", "hgx-h100", paste, "--network-bandwidth", "50GB/s")
    assert r.returncode == 0, r.stderr
    assert "16 ranks on 2 node(s)" in r.stdout
    [use] = [line.split()[4:] for line in r.stdout.splitlines() if line.startswith("use: contend nccl-tests hgx-h100 ")]
    assert use[use.index("--nodes") + 1] == "2" and use[use.index("--network-bandwidth") + 1] == "50GB/s"
    fit = json.loads(run_cli("calibrate", "hgx-h100", paste, "--network-bandwidth", "50GB/s", "--json").stdout)
    printed = run_cli("nccl-tests", "hgx-h100", *use, "--json")
    assert printed.returncode == 0, printed.stderr
    rows = {row["size"]: row["busbw"] for row in json.loads(printed.stdout)["rows"]}
    for res in fit["residuals"]:
        assert rows[int(res["src"].split()[0])] == pytest.approx(res["predicted"], rel=1e-9), res
    # A NIC rate for a file that is not nccl-tests output: one line naming the flag.
    csv = tmp_path / "p.csv"
    csv.write_text("pattern,src,dst,size,time\ncopy,GPU0,GPU1,1048576,10us\n")
    for flag, value in (("--network-bandwidth", "50GB/s"), ("--proto", "simple")):
        r = run_cli("calibrate", "hgx-h100", csv, flag, value)
        assert r.returncode == 2 and r.stderr.startswith(f"error: {flag}") and len(r.stderr.splitlines()) == 1
    # Told the run's NCCL_PROTO, the fit runs every row under it and its use: line says so.
    r = run_cli("calibrate", "hgx-h100", paste, "--network-bandwidth", "50GB/s", "--proto", "simple", "--json")
    fit = json.loads(r.stdout)
    assert all(res["dst"].endswith("/Simple") for res in fit["residuals"]), fit["residuals"]
    assert "--proto simple" in fit["commands"][0]


HELDOUT = VALIDATION / "data" / "heldout"


def test_calibrate_runs_the_paste_as_nccl_tests_would(tmp_path, monkeypatch):
    """Round 23's tester (W2): `NCCL_P2P_LEVEL=SYS ./build/all_reduce_perf … -g 8` on 8 x RTX 5090 was fitted with P2P
    off (host memory) and each rank its own process, and its `use:` line dropped both. The paste's command line is
    read (its NCCL_P2P_LEVEL wins over the shell's, as it did when the run was typed), the header's `nGpus 8` is
    `-g 8`, and the `use:` line, run as printed, gives every row of the fit."""
    machine = VALIDATION / "machines" / "rtx5090x8-turin-p2p.yaml"
    paste = HELDOUT / "rtx5090x8-turin-p2p-all_reduce.txt"
    monkeypatch.setenv("NCCL_P2P_LEVEL", "LOC")
    r = run_cli("calibrate", machine, paste)
    assert r.returncode == 0, r.stderr
    assert "NCCL_P2P_LEVEL=SYS (the paste's line 1)" in r.stdout, r.stdout
    assert "NCCL_P2P_LEVEL=LOC of the environment is overridden by the paste's NCCL_P2P_LEVEL=SYS" in r.stdout
    assert "one process of -g 8" in r.stdout
    prefix = f"use: contend nccl-tests {machine} "
    [use] = [line.split()[4:] for line in r.stdout.splitlines() if line.startswith(prefix)]
    assert use[use.index("-g") + 1] == "8" and "nccl_p2p_level=SYS" in use and "--gpus" not in use, use
    fit = json.loads(run_cli("calibrate", machine, paste, "--json").stdout)
    # Its 8 B-2 KiB rows (24.5-25.5 us) are the thread's 8 launches: 24.52 us / 8, where the default 4.9 us would
    # hold every row at 39.2 us or more.
    assert fit["fitted"]["nccl_launch_host"] == "3.065us", fit["fitted"]
    assert "nccl_launch_host=3.065us" in use
    monkeypatch.delenv("NCCL_P2P_LEVEL")
    printed = run_cli("nccl-tests", machine, *use, "--json")
    assert printed.returncode == 0, printed.stderr
    rows = {row["size"]: row["busbw"] for row in json.loads(printed.stdout)["rows"]}
    assert len(rows) == len(fit["residuals"]) == 25
    for res in fit["residuals"]:
        assert rows[int(res["src"].split()[0])] == pytest.approx(res["predicted"], rel=1e-9), res
    # NCCL's variable given as a parameter names the shell and the parameter standing for it.
    e = run_cli("calibrate", machine, paste, "-p", "NCCL_P2P_LEVEL=SYS")
    assert e.returncode == 2 and "--param nccl_p2p_level=SYS" in e.stderr and "NCCL's environment variable" in e.stderr


def test_calibrate_names_why_it_refuses_or_reads_a_paste():
    """Round 23's tester: two single-host runs of 8 ranks printed interleaved (NVIDIA/nccl-tests 306) were "8 ranks on
    2 hosts"; the gIB wrapper's `run_nccl_tests.sh -t all_gather` paste was "does not say its collective"."""
    r = run_cli("calibrate", VALIDATION / "machines" / "h20x8.yaml", HELDOUT / "h20x8-nccl-tests-306.txt")
    assert r.returncode == 2 and "2 runs of 8 ranks each printed interleaved" in r.stderr, r.stderr
    assert "paste one run's output" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    r = run_cli("calibrate", "hgx-b200", HELDOUT / "b200x2-gke-a4-dranet-all_gather.txt")
    assert r.returncode == 0, r.stderr
    assert re.search(r"^read all_gather \(named\): \d+ rows, 2 ranks on 1 node", r.stdout, re.M), r.stdout


def test_calibrate_says_which_release_a_paste_that_names_none_looks_like():
    """Round 25 (calrel25): santis' paste names no NCCL release; it is fitted under 2.30's choice as before, and one
    line above the fit (the `--json` field `unnamed_release`) names 2.23-2.26, whose choice (tree/Simple from 1 MiB;
    2.30: tree/LL128) predicts its 8 rows of 1 MiB and more at rms 18.5% against 2.30's 77.0%. A paste printing its
    release (nccl-library=23007) gets no such line and the field is null."""
    machine = VALIDATION / "machines" / "alps-gh200.yaml"
    santis = HELDOUT / "gh200-2x4-santis-cxi-all_reduce.txt"
    r = run_cli("calibrate", machine, santis)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    [k] = [i for i, line in enumerate(lines) if line.startswith("the paste names no NCCL release")]
    assert k == 1 and lines[k].endswith("if one of 2.23-2.26 ran, give --param nccl_version=2.26"), lines[k]
    fit = json.loads(run_cli("calibrate", machine, santis, "--json").stdout)
    u = fit["unnamed_release"]
    assert (u["fitted_under"], u["suggested"], u["rows_scored"]) == ("2.30", "2.26", 8), u
    rms = {c["releases"]: c["rms_relative_error"] for c in u["classes"]}
    assert rms["2.23-2.26"] == pytest.approx(0.185, abs=0.005) and rms["2.28-2.30"] == pytest.approx(0.770, abs=0.005)
    assert fit["runs"][0]["nccl_version"] == "2.30"
    printed = run_cli("calibrate", machine, HELDOUT / "alps-gh200-2x1-sarus.txt", "--json")
    assert printed.returncode == 0, printed.stderr
    assert json.loads(printed.stdout)["unnamed_release"] is None
    assert "names no NCCL release" not in run_cli("calibrate", machine, HELDOUT / "alps-gh200-2x1-sarus.txt").stdout
