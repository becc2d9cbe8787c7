"""The installed console command in a real process, as a user runs it; other CLI tests run in-process (conftest)."""

import json
import os
import subprocess
import sys
from pathlib import Path

# The console script next to this interpreter (pip puts it there); `python -m contend.cli` where there is none.
SCRIPT = Path(sys.executable).with_name("contend")
CONTEND = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "contend.cli"]


def contend(*args, **kwargs):
    env = dict(os.environ, COLUMNS="200")
    return subprocess.run([*CONTEND, *args], capture_output=True, text=True, env=env, timeout=120, **kwargs)


def test_help_lists_the_commands():
    p = contend("--help")
    assert p.returncode == 0, p.stderr
    for command in ("simulate", "explain", "schedule", "machines", "models"):
        assert command in p.stdout


def test_simulate_example_json(example_file):
    p = contend("simulate", "cs-storm-socket", example_file, "--param", "tau=0.2", "--json")
    assert p.returncode == 0, p.stderr
    finish = [round(f * 1e3, 2) for f in json.loads(p.stdout)["transfers"]["finish_s"]]
    assert finish == [64.94, 64.94, 36.08, 36.08]


def test_bad_input_is_one_line_and_exit_code_2(tmp_path):
    f = tmp_path / "t.yaml"
    f.write_text("transfers:\n  - {src: GPU0, dst: GPU9, size: 1MiB}\n")
    p = contend("simulate", "cs-storm-socket", str(f))
    assert p.returncode == 2, (p.stdout, p.stderr)
    assert p.stderr.strip().splitlines() == [p.stderr.strip()]
    assert "transfers[0].dst" in p.stderr and "Traceback" not in p.stderr


def test_start_up_imports_no_pandas_numpy_or_matplotlib():
    """`contend --help` and the listing commands start in well under a second: see bench/cli_startup.sh."""
    code = "import sys, contend.cli; print(sorted(m for m in ('pandas', 'numpy', 'matplotlib') if m in sys.modules))"
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "[]"
