"""The bad-input corpus: every command and every input format, each mistake one line on stderr naming what to
fix, exit code 2, no traceback, and no file changed (issue 26). In-process and fast (conftest's run_cli).

Cases are (command line, words the line must hold). Files are written into one folder per test, every case
runs there, and the folder is compared byte for byte before and after. Words in braces are the case's own
file names. A property test damages every example file at random and asserts the same of whatever a command
makes of it; a last group checks that no output may be written over an input, before any work.
"""

from __future__ import annotations

import hashlib
import random
import shutil
from pathlib import Path

import pytest

from conftest import run_cli

EXAMPLES = Path(__file__).parent.parent / "examples"

GOOD_MACHINE = """name: two
devices:
  - {name: RC, kind: root_complex}
  - {name: GPU0, kind: gpu}
  - {name: GPU1, kind: gpu}
links:
  - {a: RC, b: GPU0, kind: pcie, gen: 3, lanes: 16}
  - {a: RC, b: GPU1, kind: pcie, gen: 3, lanes: 16}
"""
GOOD_TRANSFERS = "transfers:\n  - {src: GPU0, dst: GPU1, size: 1MiB}\n"
GOOD_SCENARIO = """name: tiny
cluster: dgx-a100
model: maxmin
workload:
  jobs:
    - program: prog.yaml
"""
GOOD_PROGRAM = (EXAMPLES / "programs" / "pingpong.yaml").read_text()
GOOD_STUDY = """name: s
base: scenario.yaml
axes:
  bandwidth_scale: [1, 2]
baseline: {bandwidth_scale: 1}
"""

# Ways a YAML or JSON file goes wrong, whatever it describes.
ANY_FILE = {
    "binary.yaml": bytes(range(256)) * 4,
    "latin1.yaml": "name: caf\xe9\n".encode("latin-1"),
    "utf16.yaml": "name: x\n".encode("utf-16"),
    "empty.yaml": b"",
    "blank.yaml": b"\n\n   \n",
    "syntax.yaml": b"name: [unclosed\n",
    "tabs.yaml": b"name: x\n\tdevices: []\n",
    "scalar.yaml": b"42\n",
    "list.yaml": b"- a\n- b\n",
    "nul.yaml": b"name: x\x00\n",
    "bomb.yaml": (b"a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
                  b"c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
                  b"e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]\n"),
    "deep.yaml": b"a: " + b"[" * 150 + b"]" * 150 + b"\n",
    # 100,000 brackets deep (libyaml alone took minutes on it), 10,000 entries deep in block style, and the
    # billion laughs (10^10 values from ten lines): each refused in one line before the parser does the work.
    "deep-flow.yaml": b"a: " + b"[" * 100_000 + b"]" * 100_000 + b"\n",
    "deep-block.yaml": b"a:\n" + b"- " * 10_000 + b"x\n",
    "laughs.yaml": b"l0: &l0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + b"".join(
        b"l%d: &l%d [%s]\n" % (i, i, b", ".join([b"*l%d" % (i - 1)] * 10)) for i in range(1, 10)),
    "badjson.json": b'{"name": "x", "devices": [}\n',
    "folder.yaml": None,  # a folder, not a file
}

BAD_MACHINES = {
    **ANY_FILE,
    "m-unknown-key.yaml": GOOD_MACHINE + "colour: blue\n",
    "m-no-devices.yaml": "name: x\nlinks: []\n",
    "m-unknown-device.yaml": GOOD_MACHINE + "  - {a: RC, b: GPU7, kind: pcie, gen: 3, lanes: 16}\n",
    "m-bad-kind.yaml": GOOD_MACHINE.replace("kind: gpu}", "kind: tpu}", 1),
    "m-negative-bw.yaml": GOOD_MACHINE.replace("gen: 3, lanes: 16}", "bandwidth: -5GB/s}", 1),
    "m-zero-lanes.yaml": GOOD_MACHINE.replace("lanes: 16}", "lanes: 0}", 1),
    "m-bandwidth-no-unit.yaml": GOOD_MACHINE.replace("gen: 3, lanes: 16}", "bandwidth: 12}", 1),
    "m-duplicate.yaml": GOOD_MACHINE.replace("  - {name: GPU1, kind: gpu}", "  - {name: GPU0, kind: gpu}"),
    "m-self-link.yaml": GOOD_MACHINE + "  - {a: GPU0, b: GPU0, kind: nvlink, bandwidth: 20GB/s}\n",
    "m-huge-latency.yaml": GOOD_MACHINE.replace("lanes: 16}", "lanes: 16, latency: 1e12s}", 1),
}
# Commands that read a machine, with the arguments that follow it (good ones).
MACHINE_COMMANDS = [
    ("simulate", "{M}", "t.yaml"),
    ("explain", "{M}", "t.yaml"),
    ("show", "{M}"),
    ("schedule", "{M}"),
    ("p2p", "{M}"),
    ("generate", "all-to-all", "{M}"),
    ("calibrate", "{M}", "sc16-measured.csv"),
    ("datatype", "{M}", "GPU0", "GPU1", "jacobi-row"),
]

BAD_TRANSFERS = {
    **ANY_FILE,
    "t-unknown-gpu.yaml": "transfers:\n  - {src: GPU0, dst: GPU9, size: 1MiB}\n",
    "t-self.yaml": "transfers:\n  - {src: GPU1, dst: GPU1, size: 1MiB}\n",
    "t-zero.yaml": "transfers:\n  - {src: GPU0, dst: GPU1, size: 0B}\n",
    "t-negative.yaml": "transfers:\n  - {src: GPU0, dst: GPU1, size: -1MiB}\n",
    "t-no-unit.yaml": "transfers:\n  - {src: GPU0, dst: GPU1, size: 100}\n",
    "t-bits.yaml": "transfers:\n  - {src: GPU0, dst: GPU1, size: 8Mb}\n",
    "t-2-to-64.yaml": "transfers:\n  - {src: GPU0, dst: GPU1, size: 16777216TiB}\n",
    "t-1e30.yaml": "transfers:\n  - {src: GPU0, dst: GPU1, size: 1e30B}\n",
    "t-inf.yaml": "transfers:\n  - {src: GPU0, dst: GPU1, size: infB}\n",
    "t-start-negative.yaml": "transfers:\n  - {src: GPU0, dst: GPU1, size: 1MiB, start: -1us}\n",
    "t-start-huge.yaml": "transfers:\n  - {src: GPU0, dst: GPU1, size: 1MiB, start: 1e9s}\n",
    "t-cycle.yaml": ("transfers:\n  - {name: a, src: GPU0, dst: GPU1, size: 1MiB, after: [b]}\n"
                     "  - {name: b, src: GPU1, dst: GPU0, size: 1MiB, after: [a]}\n"),
    "t-after-unknown.yaml": "transfers:\n  - {name: a, src: GPU0, dst: GPU1, size: 1MiB, after: [zz]}\n",
    "t-duplicate-name.yaml": ("transfers:\n  - {name: a, src: GPU0, dst: GPU1, size: 1MiB}\n"
                              "  - {name: a, src: GPU1, dst: GPU0, size: 1MiB}\n"),
    "t-unknown-key.yaml": "transfers:\n  - {src: GPU0, dst: GPU1, size: 1MiB, colour: red}\n",
    "t-not-a-list.yaml": "transfers: 3\n",
    "t-unknown-datatype.yaml": "transfers:\n  - {src: GPU0, dst: GPU1, size: 1MiB, datatype: nosuchtype}\n",
    "t-datatype-size.yaml": "transfers:\n  - {src: GPU0, dst: GPU1, size: 1001B, datatype: jacobi-row}\n",
    "t-bad-method.yaml": "transfers:\n  - {src: GPU0, dst: GPU1, size: 1MiB, method: teleport}\n",
}

BAD_SCENARIOS = {
    **ANY_FILE,
    "s-unknown-key.yaml": GOOD_SCENARIO + "colour: red\n",
    "s-no-cluster.yaml": GOOD_SCENARIO.replace("cluster: dgx-a100\n", ""),
    "s-unknown-cluster.yaml": GOOD_SCENARIO.replace("dgx-a100", "dgx-z9000"),
    "s-missing-program.yaml": GOOD_SCENARIO.replace("prog.yaml", "nowhere.yaml"),
    "s-binary-program.yaml": GOOD_SCENARIO.replace("prog.yaml", "binary.yaml"),
    "s-unknown-model.yaml": GOOD_SCENARIO.replace("maxmin", "magic"),
    "s-unknown-app.yaml": GOOD_SCENARIO.replace("program: prog.yaml", "{app: nosuchapp, ranks: 4}"),
    "s-zero-ranks.yaml": GOOD_SCENARIO.replace("program: prog.yaml", "{app: stencil4d, ranks: 0}"),
    "s-huge-ranks.yaml": GOOD_SCENARIO.replace("program: prog.yaml", "{app: stencil4d, ranks: 99999999999}"),
    "s-negative-ranks.yaml": GOOD_SCENARIO.replace("program: prog.yaml", "{app: stencil4d, ranks: -4}"),
    "s-bad-param.yaml": GOOD_SCENARIO.replace("program: prog.yaml",
                                              "{app: stencil4d, ranks: 4, params: {flavour: x}}"),
    "s-no-jobs.yaml": "name: x\ncluster: dgx-a100\nworkload: {jobs: []}\n",
}

BAD_STUDIES = {
    **ANY_FILE,
    "st-unknown-key.yaml": GOOD_STUDY + "colour: red\n",
    "st-no-base.yaml": GOOD_STUDY.replace("base: scenario.yaml\n", ""),
    "st-missing-base.yaml": GOOD_STUDY.replace("scenario.yaml", "nowhere.yaml"),
    "st-binary-base.yaml": GOOD_STUDY.replace("scenario.yaml", "binary.yaml"),
    "st-bomb-base.yaml": GOOD_STUDY.replace("scenario.yaml", "bomb.yaml"),
    "st-empty-axis.yaml": GOOD_STUDY.replace("[1, 2]", "[]"),
    "st-bad-baseline.yaml": GOOD_STUDY.replace("{bandwidth_scale: 1}", "{bandwidth_scale: 7}"),
    "st-placeholder.yaml": GOOD_STUDY.replace("base: scenario.yaml", "base: {cluster: '{nowhere}'}"),
    "st-negative-repetitions.yaml": GOOD_STUDY + "repetitions: -3\n",
}

BAD_HALOS = {
    **ANY_FILE,
    "h-unknown-key.yaml": "grid: [2, 4]\ncolour: red\n",
    "h-zero-grid.yaml": "grid: [0, 4]\n",
    "h-huge-grid.yaml": "grid: [99999999999, 99999999999]\n",
    "h-unknown-datatype.yaml": "grid: [2, 4]\ndatatypes: [nosuch, nosuch]\n",
}

BAD_DATATYPES = {
    **ANY_FILE,
    "d-unknown-kind.yaml": "type: {teleport: {count: 2, of: double}}\n",
    "d-overlap.yaml": "type: {hvector: {count: 2, blocklength: 2, stride_bytes: 4, of: double}}\n",
    "d-huge.yaml": "type: {contiguous: {count: 1099511627776, of: {contiguous: {count: 1099511627776, of: double}}}}\n",
    "d-negative-count.yaml": "type: {contiguous: {count: -2, of: double}}\n",
    "d-mismatch.yaml": "type: {indexed: {blocklengths: [1, 2], displacements: [0], of: int}}\n",
    "d-subarray-outside.yaml": "type: {subarray: {sizes: [4], subsizes: [3], starts: [2], of: int}}\n",
}

BAD_MEASUREMENTS = {
    "binary.txt": bytes(range(256)) * 4,
    "empty.csv": b"",
    "header-only.csv": b"graph,src,dst,size,time\n",
    "c-unknown-gpu.csv": b"graph,src,dst,size,time\nlone,GPU0,GPU99,300MiB,25ms\n",
    "c-negative-time.csv": b"graph,src,dst,size,time\nlone,GPU1,GPU6,300MiB,-25ms\n",
    "c-no-unit.csv": b"graph,src,dst,size,time\nlone,GPU1,GPU6,300MiB,25\n",
    "c-short-row.csv": b"graph,src,dst,size,time\nlone,GPU1,GPU6\n",
    "p2p-devices-only.txt": b"Device: 0, X, pciBusID: 0\nDevice: 1, Y, pciBusID: 0\n",
    "p2p-cut.txt": (b"Device: 0, X\nDevice: 1, Y\nUnidirectional P2P=Disabled Bandwidth Matrix (GB/s)\n"
                    b"   D\\D     0      1\n     0 1.0 2.0\n"),
    "p2p-nan.txt": (b"Device: 0, X\nDevice: 1, Y\nUnidirectional P2P=Disabled Bandwidth Matrix (GB/s)\n"
                    b"   D\\D     0      1\n     0 1.0 nan\n     1 2.0 1.0\n"),
}

BAD_KERNEL_CSV = {
    "k-empty.csv": b"",
    "k-unknown-kernel.csv": b"kernel,block,bytes,time\nsqueeze,8B,1MiB,3us\n",
    "k-negative.csv": b"kernel,block,bytes,time\npack,8B,1MiB,-3us\npack,8B,2MiB,5us\n",
    "k-binary.csv": bytes(range(256)),
}

BAD_DUMPS = {
    "dump-binary.txt": bytes(range(256)) * 4,
    "dump-empty.txt": b"",
    "dump-prose.txt": b"Dear diary, today the GPUs were fast.\n",
    "dump-xml.xml": b"<system><cpu></system>\n",
}

# Options out of range or malformed: (command line, words the line must hold).
BAD_OPTIONS = [
    (["generate", "random", "cs-storm", "--count", "-1"], ["--count", "-1"]),
    (["generate", "random", "cs-storm", "--count", "0"], ["--count"]),
    (["generate", "random", "cs-storm", "--count", "99999999999999999999999"], ["--count"]),
    (["generate", "random", "cs-storm", "--count", "2000000"], ["--count", "--max-rows"]),
    (["generate", "random", "cs-storm", "--count", "lots"], ["--count"]),
    (["generate", "random", "cs-storm", "--seed", "-5"], ["--seed"]),
    (["generate", "random", "cs-storm", "--size", "1e30B"], ["2^64"]),
    (["generate", "random", "cs-storm", "--size", "3"], ["no unit"]),
    (["generate", "random", "cs-storm", "--gap", "-2us"], ["--gap"]),
    (["generate", "scatter", "cs-storm"], ["root"]),
    (["generate", "teleport", "cs-storm"], ["teleport"]),
    (["generate", "neighbours", "cs-storm", "--grid", "axb"], ["--grid"]),
    (["schedule", "cs-storm-socket", "--threads", "-1"], ["--threads", "-1"]),
    (["schedule", "cs-storm-socket", "--threads", "100000"], ["--threads"]),
    (["schedule", "cs-storm-socket", "--search", "anneal", "--iterations", "-1"], ["--iterations", "-1"]),
    (["schedule", "cs-storm-socket", "--search", "anneal", "--iterations", "0"], ["--iterations"]),
    (["schedule", "cs-storm-socket", "--search", "anneal", "--seed", "-1"], ["--seed"]),
    (["schedule", "cs-storm-socket", "--search", "guess"], ["--search"]),
    (["schedule", "cs-storm-socket", "--semantics", "chaos"], ["--semantics"]),
    (["schedule", "cs-storm-socket", "--alpha", "5"], ["--alpha"]),
    (["schedule", "cs-storm-socket", "--halo", "7d"], ["7d"]),
    (["schedule", "cs-storm-socket", "--search", "bnb", "--plot", "p.png"], ["--plot"]),
    (["simulate", "cs-storm-socket", "t.yaml", "--model", "magic"], ["magic"]),
    (["simulate", "cs-storm-socket", "t.yaml", "-p", "tau"], ["--param", "key=value"]),
    (["simulate", "cs-storm-socket", "t.yaml", "-p", "tau=-1"], ["tau"]),
    (["simulate", "cs-storm-socket", "t.yaml", "-p", "bandwidth=0GB/s"], ["bandwidth"]),
    (["simulate", "cs-storm-socket", "t.yaml", "--max-rows", "0"], ["--max-rows"]),
    (["simulate", "cs-storm-socket", "t.yaml", "--colour"], ["--colour"]),
    (["simulate", "cs-storm-socket"], ["TRANSFERS"]),
    (["simulate", "-", "-"], ["standard input"]),
    (["simulate", "cs-storm-socket", "t.yaml", "--fabric", "f.png"], ["--fabric", "cluster"]),
    (["explain", "cs-storm-socket", "t.yaml", "--model", "maxmin"], ["explain"]),
    (["datatype", "dgx1-p100", "GPU0", "GPU1", "jacobi-row", "--count", "-1"], ["--count"]),
    (["datatype", "dgx1-p100", "GPU0", "GPU1", "jacobi-row", "--count", "0"], ["--count"]),
    (["datatype", "dgx1-p100", "GPU0", "GPU1", "jacobi-row", "--count", "18446744073709551615"], ["--count"]),
    (["datatype", "dgx1-p100", "GPU0", "GPU1", "jacobi-row", "--sweep", "-3"], ["--sweep"]),
    (["datatype", "dgx1-p100", "GPU0", "GPU1", "jacobi-row", "--sweep", "41"], ["--sweep"]),
    (["datatype", "dgx1-p100", "GPU0", "GPU0", "jacobi-row"], ["DST"]),
    (["datatype", "dgx1-p100", "GPU0", "GPU1", "jacobi-row", "-k", "launch"], ["--kernel"]),
    (["datatype", "dgx1-p100", "GPU0", "GPU1", "jacobi-row", "-k", "warp=9"], ["warp"]),
    (["datatype", "dgx1-p100", "GPU0", "GPU1", "nosuchtype"], ["nosuchtype"]),
    (["calibrate-kernels", "dgx1-p100", "GPU0", "GPU0", "k-negative.csv"], ["DST", "SRC"]),
    (["stencil", "--lattice", "1"], ["--lattice"]),
    (["stencil", "--lattice", "-8"], ["--lattice"]),
    (["stencil", "--lattice", "99999999999999999999999"], ["--lattice"]),
    (["stencil", "-k", "launch=-3us"], ["launch"]),
    (["stencil", "-p", "launch"], ["--kernel"]),
    (["run", "scenario.yaml", "--links", "-1"], ["--links", "-1"]),
    (["run", "scenario.yaml", "--links", "5000"], ["--links"]),
    (["import", "dump-prose.txt", "--numa-per-socket", "-1"], ["--numa-per-socket"]),
    (["import", "dump-prose.txt", "--numa-per-socket", "99999999999999999999999"], ["--numa-per-socket"]),
    (["import-trace", "binary.yaml", "-o", "p.yaml", "--iterations", "-1"], ["--iterations"]),
    (["import-trace", "binary.yaml", "-o", "p.yaml", "--iterations", "0"], ["--iterations"]),
    (["import-trace", "nowhere.otf2", "-o", "p.yaml"], ["nowhere.otf2"]),
    (["study", "study.yaml", "--workers", "0"], ["--workers"]),
    (["study", "study.yaml", "--workers", "-2"], ["--workers"]),
    (["study", "nowhere.yaml"], ["nowhere.yaml"]),
    (["report", "nowhere"], ["nowhere"]),
    (["report", "results-corrupt"], ["results-corrupt", "bad.parquet"]),
    (["report", "results-foreign"], ["results-foreign"]),
    (["p2p", "cs-storm-socket", "--tool", "nccl-tests"], ["--tool"]),
    (["schema", "circuit"], ["circuit"]),
    (["teleport"], ["teleport"]),
    (["calibrate", "cs-storm-socket", "sc16-measured.csv", "-o", "cal.yaml"], ["--output", "sc16"]),
    (["calibrate", "cs-storm-socket", "sc16-measured.csv", "--json", "-o", "-"], ["--output", "--json"]),
    (["schedule", "cs-storm-socket", "--json", "-o", "-"], ["--output", "--json"]),
    (["show", "-"], ["<stdin>"]),
    (["demo", "--out", "t.yaml"], ["--out", "is a file"]),
    (["run", "scenario.yaml", "--parquet", "-"], ["--parquet", "folder"]),
    (["report", "results-corrupt", "-o", "-"], ["--output", "folder"]),
    (["simulate", "cs-storm-socket", "t.yaml", "--timeline", "-"], ["--timeline", "standard output"]),
    (["demo", "--out", "nowhere/deeper"], ["--out", "does not exist"]),
    (["machines", "extra"], ["extra"]),
    (["models", "--verbose"], ["--verbose"]),
    (["apps", "extra"], ["extra"]),
    (["datatypes", "--all"], ["--all"]),
    (["schema", "machine", "transfers"], ["transfers"]),
]

# Output paths that must be refused before any work (every output option of every command).
OUTPUTS = [
    # (command line without the output, output option)
    (["simulate", "cs-storm-socket", "t.yaml"], "--timeline", ".png"),
    (["simulate", "cs-storm-socket", "t.yaml"], "--trace", ".json"),
    (["explain", "cs-storm-socket", "t.yaml"], "--timeline", ".png"),
    (["explain", "cs-storm-socket", "t.yaml"], "--trace", ".json"),
    (["show", "cs-storm-socket"], "--png", ".png"),
    (["schedule", "cs-storm-socket"], "-o", ".yaml"),
    (["schedule", "cs-storm-socket"], "--plot", ".png"),
    (["generate", "all-to-all", "cs-storm-socket"], "-o", ".yaml"),
    (["import", "dump-nvsmi.txt"], "-o", ".yaml"),
    (["datatype", "dgx1-p100", "GPU0", "GPU1", "jacobi-row"], "--plot", ".png"),
    (["stencil", "--lattice", "64"], "--plot", ".png"),
    (["run", "scenario.yaml"], "--plot", ".png"),
    (["run", "scenario.yaml"], "--trace", ".json"),
    (["calibrate", "dgx1-p100", "p2p.txt"], "-o", ".yaml"),
]


def folder_state(folder: Path) -> dict[str, str]:
    """Every file under the folder and a hash of its bytes."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def assert_refused(p, needles, where: Path, before: dict[str, str]):
    assert "Traceback" not in p.stderr and "Traceback" not in p.stdout, p.stderr
    assert p.returncode == 2, (p.args, p.returncode, p.stdout[-500:], p.stderr)
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1, (p.args, p.stderr)
    for n in needles:
        assert n.lower() in lines[0].lower(), (p.args, n, lines[0])
    assert folder_state(where) == before, (p.args, "a file changed")


def write_files(folder: Path, files: dict[str, bytes | str | None]) -> None:
    for name, data in files.items():
        path = folder / name
        if data is None:
            path.mkdir(exist_ok=True)
        elif isinstance(data, str):
            path.write_text(data, encoding="utf-8")
        else:
            path.write_bytes(data)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    """One folder with every good and bad input the cases name."""
    d = tmp_path_factory.mktemp("corpus")
    write_files(d, {**BAD_MACHINES, **BAD_TRANSFERS, **BAD_SCENARIOS, **BAD_STUDIES, **BAD_HALOS, **BAD_DATATYPES,
                    **BAD_MEASUREMENTS, **BAD_KERNEL_CSV, **BAD_DUMPS})
    write_files(d, {"m.yaml": GOOD_MACHINE, "t.yaml": GOOD_TRANSFERS, "scenario.yaml": GOOD_SCENARIO,
                    "prog.yaml": GOOD_PROGRAM, "study.yaml": GOOD_STUDY})
    shutil.copy(EXAMPLES / "sc16-measured.csv", d)
    fixtures = Path(__file__).parent.parent / "crates" / "contend-core" / "tests" / "fixtures"
    shutil.copy(fixtures / "nvidia-smi-dgx1-v100.txt", d / "dump-nvsmi.txt")
    p2p = run_cli("p2p", "dgx1-p100")
    assert p2p.returncode == 0, p2p.stderr
    (d / "p2p.txt").write_text(p2p.stdout)
    (d / "results-corrupt").mkdir()
    (d / "results-corrupt" / "bad.parquet").write_bytes(b"PAR1 this is no parquet file")
    (d / "results-foreign").mkdir()
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"x": [1, 2]}), d / "results-foreign" / "other.parquet")
    return d


def run_in(folder: Path, args):
    before = folder_state(folder)
    return run_cli(*args, cwd=folder), before


def cases_for(files: dict, commands) -> list:
    return [pytest.param([a.replace("{M}", name).replace("{F}", name) for a in cmd], name, id=f"{cmd[0]}-{name}")
            for name in files for cmd in commands]


@pytest.mark.parametrize("args,name", cases_for(BAD_MACHINES, MACHINE_COMMANDS))
def test_bad_machine_files(corpus, args, name):
    p, before = run_in(corpus, args)
    assert_refused(p, [name], corpus, before)


@pytest.mark.parametrize("args,name", cases_for(BAD_TRANSFERS, [("simulate", "cs-storm-socket", "{F}"),
                                                                 ("explain", "cs-storm-socket", "{F}")]))
def test_bad_transfers_files(corpus, args, name):
    p, before = run_in(corpus, args)
    assert_refused(p, [name], corpus, before)


@pytest.mark.parametrize("args,name", cases_for(BAD_SCENARIOS, [("run", "{F}", "--check"), ("run", "{F}")]))
def test_bad_scenarios(corpus, args, name):
    p, before = run_in(corpus, args)
    # A scenario names its own mistakes, the file of its own it could not use, or the value to change.
    assert_refused(p, [], corpus, before)
    assert any(n in p.stderr for n in (name, "binary.yaml", "nowhere.yaml", "dgx-z9000")), p.stderr


@pytest.mark.parametrize("args,name", cases_for(BAD_STUDIES, [("study", "{F}", "--dry-run")]))
def test_bad_study_files(corpus, args, name):
    p, before = run_in(corpus, args)
    assert_refused(p, [], corpus, before)
    assert name in p.stderr or "binary.yaml" in p.stderr or "bomb.yaml" in p.stderr, p.stderr


def test_bad_studies_through_the_python_api(corpus):
    from contend import InputError, api, study

    for name in ("binary.yaml", "latin1.yaml", "bomb.yaml", "deep.yaml"):
        with pytest.raises(InputError, match=name.replace(".", r"\.")):
            study.load(corpus / name)
        with pytest.raises(InputError, match=name.replace(".", r"\.")):
            api.run(corpus / name)


def test_yaml_bounds_through_the_python_api(corpus):
    """The core's own bounds: each refusal is one line naming the file (and the line, where the scan found it)."""
    from contend import InputError, api

    for name in ("deep-flow.yaml", "deep-block.yaml", "laughs.yaml", "bomb.yaml"):
        for load in (api.Machine.load, api.Transfers.load, api.run):
            with pytest.raises(InputError, match=name.replace(".", r"\.")) as e:
                load(str(corpus / name))
            assert "\n" not in str(e.value)
    with pytest.raises(InputError, match="nested more than 64 levels deep"):
        api.Transfers.load(str(corpus / "deep-flow.yaml"))
    with pytest.raises(InputError, match=r"aliases \(\*name\) expand"):
        api.Machine.load(str(corpus / "laughs.yaml"))


@pytest.mark.parametrize("args,name", cases_for(BAD_HALOS, [("schedule", "cs-storm-socket", "--halo", "{F}")]))
def test_bad_halo_files(corpus, args, name):
    p, before = run_in(corpus, args)
    assert_refused(p, [name], corpus, before)


@pytest.mark.parametrize("args,name", cases_for(BAD_DATATYPES, [("datatype", "dgx1-p100", "GPU0", "GPU1", "{F}")]))
def test_bad_datatype_files(corpus, args, name):
    p, before = run_in(corpus, args)
    assert_refused(p, [name], corpus, before)


@pytest.mark.parametrize("args,name", cases_for(BAD_MEASUREMENTS, [("calibrate", "dgx1-p100", "{F}")]))
def test_bad_measurements(corpus, args, name):
    p, before = run_in(corpus, args)
    assert_refused(p, [name], corpus, before)


@pytest.mark.parametrize("args,name", cases_for(BAD_KERNEL_CSV, [("calibrate-kernels", "dgx1-p100", "GPU0", "GPU1",
                                                                  "{F}")]))
def test_bad_kernel_measurements(corpus, args, name):
    p, before = run_in(corpus, args)
    assert_refused(p, [name], corpus, before)


@pytest.mark.parametrize("args,name", cases_for(BAD_DUMPS, [("import", "{F}")]))
def test_bad_topology_dumps(corpus, args, name):
    p, before = run_in(corpus, args)
    assert_refused(p, [name], corpus, before)
    if name == "dump-binary.txt":
        assert "is a binary file, not text; give the output of `nvidia-smi topo -m`" in p.stderr, p.stderr


def test_a_scenario_names_its_unknown_cluster_by_its_field(corpus):
    p, before = run_in(corpus, ["run", "s-unknown-cluster.yaml", "--check"])
    assert_refused(p, ['s-unknown-cluster.yaml: cluster: "dgx-z9000" is neither a preset nor a file'], corpus, before)


def test_a_binary_file_is_said_to_be_binary_and_latin1_not_utf8(corpus):
    p, _ = run_in(corpus, ["show", "binary.yaml"])
    assert "binary.yaml: is a binary file, not text; give a YAML or JSON file" in p.stderr, p.stderr
    p, _ = run_in(corpus, ["show", "latin1.yaml"])
    assert "latin1.yaml: is not UTF-8 text (byte 9); save it as UTF-8" in p.stderr, p.stderr


@pytest.mark.parametrize("args,needles", BAD_OPTIONS, ids=[" ".join(a)[:60] for a, _ in BAD_OPTIONS])
def test_bad_options(corpus, args, needles):
    p, before = run_in(corpus, args)
    assert_refused(p, needles, corpus, before)


# Every output option: an existing file without --force, a folder, a missing folder, an input, a picture
# with the wrong extension. Each is refused before any work, and nothing is written.
def output_cases():
    cases = []
    for cmd, flag, ext in OUTPUTS:
        tag = f"{cmd[0]}{flag}"
        cases.append(pytest.param(cmd, flag, f"exists{ext}", ["exists", "--force"], id=f"{tag}-exists"))
        cases.append(pytest.param(cmd, flag, "folder.yaml", ["folder"], id=f"{tag}-folder"))
        cases.append(pytest.param(cmd, flag, f"nowhere/x{ext}", ["nowhere", "does not exist"], id=f"{tag}-missing"))
        if ext == ".png":
            cases.append(pytest.param(cmd, flag, "picture.txt", [".png"], id=f"{tag}-extension"))
    return cases


@pytest.mark.parametrize("cmd,flag,target,needles", output_cases())
def test_outputs_refused_before_any_work(corpus, cmd, flag, target, needles):
    for ext in (".png", ".json", ".yaml"):
        if not (corpus / f"exists{ext}").exists():
            (corpus / f"exists{ext}").write_text("the user's own file\n")
    p, before = run_in(corpus, [*cmd, flag, target])
    assert_refused(p, [flag.lstrip("-")[:1], *needles], corpus, before)


@pytest.mark.parametrize("cmd,flag,inp", [
    (["simulate", "cs-storm-socket", "t.yaml"], "--trace", "t.yaml"),
    (["simulate", "m.yaml", "t.yaml"], "--timeline", "m.yaml"),
    (["explain", "cs-storm-socket", "t.yaml"], "--trace", "t.yaml"),
    (["schedule", "cs-storm-socket", "--halo", "h-zero-grid.yaml"], "-o", "h-zero-grid.yaml"),
    (["generate", "all-to-all", "m.yaml"], "-o", "m.yaml"),
    (["calibrate", "dgx1-p100", "p2p.txt"], "-o", "p2p.txt"),
    (["run", "scenario.yaml"], "--trace", "scenario.yaml"),
    # Files the run reads because its inputs name them: a scenario's rank program, a study's base.
    (["run", "scenario.yaml"], "--trace", "prog.yaml"),
    (["run", "scenario.yaml"], "--plot", "prog.yaml"),
    (["import", "dump-nvsmi.txt"], "-o", "dump-nvsmi.txt"),
], ids=lambda v: v if isinstance(v, str) else None)
def test_an_output_over_an_input_is_refused_even_with_force(corpus, cmd, flag, inp):
    p, before = run_in(corpus, [*cmd, flag, inp, "--force"])
    assert_refused(p, [inp], corpus, before)
    assert "is an input of this command" in p.stderr or "is a file the run reads" in p.stderr, p.stderr


def test_a_damaged_point_is_run_again_on_resume(tmp_path):
    from contend.study import dataset

    meta = {"axes": {"x": [1]}, "baseline": {"x": 1}, "zips": [], "repetitions": 1, "seed_key": None}
    dataset.write_point(tmp_path, "good", {"x": [1], "job": [0]}, meta)
    (tmp_path / "cut.parquet").write_bytes(b"PAR1 cut short by a full disk")
    assert dataset.open_folder(tmp_path, meta) == {"good"}
    assert (tmp_path / "cut.parquet").exists()  # kept until its point is written again, whole


def test_the_corpus_is_large():
    n = (len(BAD_MACHINES) * len(MACHINE_COMMANDS) + 2 * len(BAD_TRANSFERS) + 2 * len(BAD_SCENARIOS)
         + len(BAD_STUDIES) + len(BAD_HALOS) + len(BAD_DATATYPES) + len(BAD_MEASUREMENTS) + len(BAD_KERNEL_CSV)
         + len(BAD_DUMPS) + len(BAD_OPTIONS) + len(output_cases()))
    assert n >= 200, n


# Random damage to every example file: whatever a command makes of it, it works (exit 0) or says what is wrong
# in one line (exit 2); never a traceback, never a changed file.
def damage(data: bytes, rng: random.Random) -> bytes:
    kind = rng.randrange(6)
    if not data:
        return b"\xff"
    i = rng.randrange(len(data))
    if kind == 0:  # cut short
        return data[:i]
    if kind == 1:  # flip bytes
        b = bytearray(data)
        for _ in range(rng.randint(1, 8)):
            b[rng.randrange(len(b))] = rng.randrange(256)
        return bytes(b)
    if kind == 2:  # insert junk
        return data[:i] + bytes(rng.randrange(256) for _ in range(rng.randint(1, 16))) + data[i:]
    lines = data.splitlines(keepends=True)
    k = rng.randrange(len(lines))
    if kind == 3:  # drop a line
        return b"".join(lines[:k] + lines[k + 1:])
    if kind == 4:  # repeat a line
        return b"".join(lines[:k + 1] + lines[k:])
    # a number made huge or negative
    digits = [j for j, c in enumerate(data) if chr(c).isdigit()]
    if not digits:
        return data + b"\n:"
    j = rng.choice(digits)
    return data[:j] + rng.choice([b"99999999999999999999999", b"-", b"1e308", b"0"]) + data[j:]


EXAMPLE_COMMANDS = {
    "sc16-example.yaml": ["simulate", "cs-storm-socket", "{F}"],
    "datatypes.yaml": ["simulate", "dgx1-p100", "{F}", "--model", "maxmin"],
    "jacobi-halo.yaml": ["schedule", "dgx-a100", "--halo", "{F}", "--model", "maxmin", "--search", "anneal",
                         "--iterations", "20"],
    "sc16-measured.csv": ["calibrate", "cs-storm-socket", "{F}"],
    "scenarios/halo-program.yaml": ["run", "{F}", "--check"],
    "scenarios/seed003-mix.yaml": ["run", "{F}", "--check"],
    "scenarios/stencil4d-rr.yaml": ["run", "{F}", "--check"],
    "programs/pingpong.yaml": ["run", "scenarios/halo-program.yaml", "--check"],
    "scenarios/nccl-training-step.yaml": ["run", "{F}"],
    "programs/nccl-training-step.yaml": ["run", "scenarios/nccl-training-step.yaml"],
    "clusters/dgx-a100-x2.yaml": ["run", "scenarios/nccl-training-step.yaml"],
    "scenarios/nccl-calls.yaml": ["run", "{F}"],
    "programs/nccl-calls.yaml": ["run", "scenarios/nccl-calls.yaml"],
    "scenarios/nccl-nvls.yaml": ["run", "{F}"],
    "programs/nccl-nvls.yaml": ["run", "scenarios/nccl-nvls.yaml"],
    "scenarios/nccl-nvls-two-nodes.yaml": ["run", "{F}"],
    "programs/nccl-nvls-two-nodes.yaml": ["run", "scenarios/nccl-nvls-two-nodes.yaml"],
    "clusters/hgx-h100-rails-x2.yaml": ["run", "scenarios/nccl-nvls-two-nodes.yaml"],
    "scenarios/nccl-tree-two-nodes.yaml": ["run", "{F}"],
    "programs/nccl-tree-two-nodes.yaml": ["run", "scenarios/nccl-tree-two-nodes.yaml"],
    "studies/seed003-reduced.yaml": ["study", "{F}", "--dry-run"],
    "studies/seed003-nic.yaml": ["study", "{F}", "--dry-run"],
}


def test_every_example_file_is_covered():
    files = {str(p.relative_to(EXAMPLES)) for p in EXAMPLES.rglob("*") if p.is_file() and p.suffix != ".py"}
    assert files - set(EXAMPLE_COMMANDS) <= {"studies/seed003-full.yaml", "studies/seed003-table2.yaml"}


@pytest.mark.parametrize("name", sorted(EXAMPLE_COMMANDS))
@pytest.mark.parametrize("seed", range(4))
def test_random_damage_to_example_files(tmp_path, name, seed):
    shutil.copytree(EXAMPLES, tmp_path / "examples")
    folder = tmp_path / "examples"
    rng = random.Random(f"{name}-{seed}")
    path = folder / name
    path.write_bytes(damage(path.read_bytes(), rng))
    before = folder_state(folder)
    p = run_cli(*[a.replace("{F}", name) for a in EXAMPLE_COMMANDS[name]], cwd=folder)
    assert "Traceback" not in p.stderr, p.stderr
    assert p.returncode in (0, 2), (p.returncode, p.stderr)
    if p.returncode == 2:
        assert len(p.stderr.strip().splitlines()) == 1, p.stderr
    assert folder_state(folder) == before
