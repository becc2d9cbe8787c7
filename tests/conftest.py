import json
import os
import subprocess

import pytest
from typer.testing import CliRunner

from contend.cli import app

EXAMPLE = """transfers:
  - {src: GPU0, dst: GPU2, size: 300MiB}
  - {src: GPU1, dst: GPU4, size: 300MiB}
  - {src: GPU3, dst: GPU2, size: 300MiB}
  - {src: GPU6, dst: GPU4, size: 300MiB}
"""


@pytest.fixture(autouse=True)
def _no_nccl_environment(monkeypatch):
    """`contend nccl-tests` reads NCCL_ALGO, NCCL_PROTO and NCCL_MIN/MAX_NCHANNELS as NCCL does: a GPU node's
    shell exports them, which must not change what the suite expects."""
    for k in [k for k in os.environ if k.startswith("NCCL_")]:
        monkeypatch.delenv(k)


# A 32-node, 1-GPU-per-node fat-tree of radix-8 switches, for scenario tests.
SMALL_CLUSTER = """name: ft
fabric:
  fat_tree: {radix: 8, pods: 2}
link: {bandwidth: 10GB/s, latency: 100ns, router_delay: 50ns}
nodes: {gpus: 1}
network: {routing: ecmp, nic_scheduling: rr}
"""


def run_cli(*args, cwd=None):
    """Run the CLI in this process, as `contend ARGS` would from `cwd`: exit code, stdout and stderr apart.

    Returns a CompletedProcess like ``subprocess.run(..., capture_output=True, text=True)``. An exception
    the CLI does not turn into an exit code propagates, so the test shows its traceback.
    tests/test_end_to_end.py runs the real console command in a subprocess.
    """
    args = [str(a) for a in args]
    old = os.getcwd()
    if cwd is not None:
        os.chdir(cwd)
    try:
        r = CliRunner().invoke(app, args, env={"COLUMNS": "200"}, catch_exceptions=False, prog_name="contend")
    finally:
        os.chdir(old)
    return subprocess.CompletedProcess(["contend", *args], r.exit_code, r.stdout, r.stderr)


@pytest.fixture
def example_file(tmp_path):
    p = tmp_path / "example.yaml"
    p.write_text(EXAMPLE)
    return str(p)


@pytest.fixture
def cli():
    return run_cli


def load_json(text):
    return json.loads(text)
