"""`contend simulate` read without typer (contend.cli.direct): a plain command line means what typer makes of it,
anything else goes to typer, and the console command gives the same bytes and exit codes either way."""

import inspect
import os
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from conftest import EXAMPLE
from contend.cli import app, direct, simulation

# Command lines after `contend`; {f} is a transfers file.
PLAIN = [
    ["simulate", "cs-storm", "{f}"],
    ["simulate", "cs-storm", "{f}", "--model", "maxmin", "--json"],
    ["simulate", "--json", "cs-storm", "-m", "maxmin", "{f}"],
    ["simulate", "cs-storm-socket", "-", "--csv", "-p", "tau=0.2", "--param", "bandwidth=10GB/s", "-f"],
    ["simulate", "cs-storm", "{f}", "--phases", "--nics", "--force", "--json", "--json"],
    ["simulate", "cs-storm", "{f}", "--model", ""],
    ["simulate", "", "{f}"],
]
# Left to typer: help, other commands and options, other forms of an option, a missing or odd value, a repeated
# single option, the wrong number of arguments, `--`.
TYPER = [
    [],
    ["--help"],
    ["simulate"],
    ["simulate", "-h"],
    ["simulate", "--help", "cs-storm", "{f}"],
    ["explain", "cs-storm", "{f}"],
    ["simulate", "cs-storm"],
    ["simulate", "cs-storm", "{f}", "extra"],
    ["simulate", "cs-storm", "{f}", "--model=maxmin"],
    ["simulate", "cs-storm", "{f}", "-mmaxmin"],
    ["simulate", "cs-storm", "{f}", "--model"],
    ["simulate", "cs-storm", "{f}", "--model", "--json"],
    ["simulate", "cs-storm", "{f}", "--model", "maxmin", "-m", "sc16"],
    ["simulate", "cs-storm", "{f}", "--timeline", "t.png"],
    ["simulate", "cs-storm", "{f}", "--trace", "t.json"],
    ["simulate", "cs-storm", "{f}", "--fabric", "f.png"],
    ["simulate", "cs-storm", "{f}", "--max-rows", "5"],
    ["simulate", "cs-storm", "{f}", "--colour"],
    ["simulate", "cs-storm", "{f}", "-fp", "tau=1"],
    ["simulate", "--", "cs-storm", "{f}"],
    ["--version", "simulate", "cs-storm", "{f}"],
]


def _fill(argv, f):
    return [a.replace("{f}", f) for a in argv]


def _called(monkeypatch, run):
    """The keyword arguments (defaults filled in) ``simulation.simulate`` is called with by ``run()``."""
    seen = []

    def record(*args, **kwargs):
        bound = inspect.signature(simulation.simulate.__wrapped__).bind(*args, **kwargs)
        bound.apply_defaults()
        seen.append(dict(bound.arguments))

    record.__wrapped__ = simulation.simulate
    monkeypatch.setattr(simulation, "simulate", record)
    run()
    monkeypatch.undo()
    return seen


@pytest.mark.parametrize("argv", PLAIN)
def test_a_plain_line_means_what_typer_makes_of_it(argv, example_file, monkeypatch):
    argv = _fill(argv, example_file)
    kwargs = direct.parse(argv)
    assert kwargs is not None
    (mine,) = _called(monkeypatch, lambda: simulation.simulate(**kwargs))
    (typers,) = _called(monkeypatch, lambda: CliRunner().invoke(app, argv, catch_exceptions=False))
    # typer gives no --param as None or an empty list; the command reads both as none.
    typers["param"] = typers["param"] or None
    assert mine == typers


@pytest.mark.parametrize("argv", TYPER)
def test_anything_else_goes_to_typer(argv, example_file):
    assert direct.parse(_fill(argv, example_file)) is None


def test_completion_goes_to_typer(example_file, monkeypatch):
    monkeypatch.setenv("_CONTEND_COMPLETE", "bash_complete")
    assert direct.parse(["simulate", "cs-storm", example_file]) is None


def _console(argv, how, stdin=None):
    """The console command's stdout, stderr and exit code, run directly or through typer's app."""
    code = ("from contend.cli import main; main()" if how == "direct" else "from contend.cli import app; app()")
    env = {**os.environ, "COLUMNS": "200"}
    p = subprocess.run([sys.executable, "-c", code, *argv], input=stdin, capture_output=True, env=env)
    return p.stdout, p.stderr, p.returncode


@pytest.mark.parametrize("argv", [
    ["simulate", "cs-storm-socket", "{f}", "--model", "maxmin", "--json"],
    ["simulate", "cs-storm-socket", "{f}", "--csv", "-p", "tau=0.2"],
    ["simulate", "cs-storm-socket", "{f}", "-p", "tau=0.2"],
    ["simulate", "cs-storm-socket", "-", "--json"],
    ["simulate", "cs-storm", "{f}"],
    ["simulate", "cs-storm-socket", "{f}", "--model", "nosuch", "--json"],
    ["simulate", "cs-storm-socket", "{f}", "-p", "tau"],
    ["simulate", "cs-storm-socket", "missing.yaml", "--json"],
])
def test_the_console_command_is_the_same_either_way(argv, example_file):
    argv = _fill(argv, example_file)
    assert direct.parse(argv) is not None
    stdin = EXAMPLE.encode() if "-" in argv else None
    direct_run, typer_run = _console(argv, "direct", stdin), _console(argv, "typer", stdin)
    assert direct_run == typer_run
    assert direct_run[2] in (0, 1, 2)


def test_the_direct_path_imports_neither_typer_nor_rich(example_file):
    code = ("import sys; from contend.cli import direct\n"
            "try:\n    direct.run(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('typer', 'rich', 'click', 'pandas')))")
    p = subprocess.run([sys.executable, "-c", code, "simulate", "cs-storm-socket", example_file, "--json"],
                       capture_output=True, text=True)
    assert p.stdout.strip().splitlines()[-1] == "[]", p.stderr
