import json
import os
import subprocess
import sys

import pytest

EXAMPLE = """transfers:
  - {src: GPU0, dst: GPU2, size: 300MiB}
  - {src: GPU1, dst: GPU4, size: 300MiB}
  - {src: GPU3, dst: GPU2, size: 300MiB}
  - {src: GPU6, dst: GPU4, size: 300MiB}
"""


def run_cli(*args, cwd=None):
    """Run the installed console command as a user would."""
    env = dict(os.environ, COLUMNS="200")
    return subprocess.run(
        [sys.executable, "-m", "contend.cli", *args], capture_output=True, text=True, cwd=cwd, env=env
    )


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
