"""The README's YAML and Python snippets run as written."""

import re
from pathlib import Path

import contend

README = (Path(__file__).parent.parent / "README.md").read_text()


def blocks(lang):
    return re.findall(rf"```{lang}\n(.*?)```", README, re.S)


def test_yaml_snippets(tmp_path):
    transfers, cluster, scenario, datatypes, halo = blocks("yaml")
    c = tmp_path / "c.yaml"
    c.write_text(cluster)
    m = contend.Machine.load(c)
    assert len(m.gpus) == 2048 and "n511.GPU3" in m.gpus
    t = tmp_path / "t.yaml"
    t.write_text(transfers)
    r = contend.simulate(contend.Machine.load("cs-storm-socket"), contend.Transfers.load(t))
    late = r.transfers.set_index("name").loc["late"]
    assert late.start_s == 0.005
    h = tmp_path / "h.yaml"
    h.write_text(halo)
    s = contend.schedule(contend.Machine.load("cs-storm-socket"), h, search="bnb")
    assert s.proven_optimal
    d = tmp_path / "d.yaml"
    d.write_text(datatypes)
    r = contend.simulate(contend.Machine.load("dgx1-p100"), contend.Transfers.load(d), model="maxmin")
    assert r.raw["methods"]["chosen"] == ["zero-copy", "zero-copy"]
    # Files a scenario names are relative to its folder, as the snippet's program is.
    (tmp_path / "programs").mkdir()
    example = Path(__file__).parent.parent / "examples" / "programs" / "pingpong.yaml"
    (tmp_path / "programs" / "pingpong.yaml").write_text(example.read_text())
    sc = tmp_path / "s.yaml"
    sc.write_text(scenario.replace("iterations: 10", "iterations: 1"))
    assert list(contend.api.run(sc).jobs["ranks"]) == [512, 4]


def test_python_snippet():
    (code,) = blocks("python")
    exec(compile(code, "README.md", "exec"), {})
