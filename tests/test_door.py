"""The door: transfers in as columns, reports out as Arrow buffers, sessions instead of process-wide caches."""

import io
import json
import os
import time

import numpy as np
import pandas as pd
import pytest

import contend
from conftest import SMALL_CLUSTER
from contend import _core

MACHINE = "cs-storm-socket"
YAML = """transfers:
  - {src: GPU0, dst: GPU2, size: 300MiB}
  - {src: GPU1, dst: GPU4, size: 300MiB, start: 2ms}
  - {name: late, src: GPU3, dst: GPU2, size: 100MiB, start: 5ms, overhead: 7us}
"""


def finish(r: contend.Result) -> list[float]:
    return r.arrow("transfers").column("finish_s").to_pylist()


def test_columns_records_dataframe_and_yaml_are_the_same_transfers():
    m = contend.Machine.load(MACHINE)
    by_file = contend.simulate(m, contend.Transfers.parse(YAML), model="maxmin")
    src, dst = ["GPU0", "GPU1", "GPU3"], ["GPU2", "GPU4", "GPU2"]
    size = np.array([300 << 20, 300 << 20, 100 << 20], dtype=np.uint64)
    start = np.array([0.0, 2e-3, 5e-3])
    overhead = [None, None, "7us"]
    columns = contend.Transfers.from_columns(src, dst, size, start=start, overhead=overhead,
                                             name=[None, None, "late"])
    records = contend.Transfers.from_records([
        {"src": "GPU0", "dst": "GPU2", "size": "300MiB"},
        {"src": "GPU1", "dst": "GPU4", "size": 300 << 20, "start": 2e-3},
        {"name": "late", "src": "GPU3", "dst": "GPU2", "size": "100MiB", "start": "5ms", "overhead": 7e-6},
    ])
    frame = contend.Transfers.from_dataframe(pd.DataFrame({
        "src": src, "dst": dst, "size": size, "start": start, "overhead": [np.nan, np.nan, 7e-6],
        "name": [None, None, "late"]}))
    for t in (columns, records, frame):
        assert finish(contend.simulate(m, t, model="maxmin")) == finish(by_file)
    assert records.records == json.loads(contend.Transfers.parse(YAML).spec_json)["transfers"]


def test_records_with_other_fields_take_the_file_path():
    t = contend.Transfers.from_records([{"src": "GPU0", "dst": "GPU2", "size": "1MiB"},
                                        {"src": "GPU1", "dst": "GPU2", "size": "1MiB", "after": [0]}])
    assert t.records[1]["after"] == [0]


def test_bare_numbers_mean_bytes_and_seconds_on_the_file_path_too():
    # A record with a field beyond the columns' takes the file's path, which wants units: a bare number there
    # is still bytes (size) or seconds (start, overhead), as the docstring promises.
    plain = contend.Transfers.from_records([{"src": "GPU0", "dst": "GPU2", "size": 1 << 20, "start": 2e-6}])
    other = contend.Transfers.from_records([{"src": "GPU0", "dst": "GPU2", "size": 1 << 20, "start": 2e-6,
                                             "mechanism": "p2p"}])
    assert other.records[0]["size"] == plain.records[0]["size"]
    assert other.records[0]["start"] == plain.records[0]["start"]
    with pytest.raises(contend.InputError, match="did you mean `start`"):
        contend.Transfers.from_records([{"src": "GPU0", "dst": "GPU2", "size": 1 << 20, "strat": 1}])
    numpy = contend.Transfers.from_records([{"src": "GPU0", "dst": "GPU2", "size": np.int64(1 << 20),
                                             "start": np.float64(2e-6), "mechanism": "p2p"}])
    assert numpy.records == other.records
    with pytest.raises(contend.InputError, match="whole number of bytes"):  # as the columns refuse 1.5
        contend.Transfers.from_records([{"src": "GPU0", "dst": "GPU2", "size": 1.5, "mechanism": "p2p"}])


@pytest.mark.parametrize("kwargs, field", [
    ({"size": [1024, 0]}, "size[1]"),
    ({"size": np.array([1024.0, 1.5])}, "size[1]"),
    ({"size": [1024, "3 parsecs"]}, "size[1]"),
    ({"size": [1, 1], "start": [0.0, -1.0]}, "start[1]"),
    ({"size": [1, 1], "start": np.array([0.0, np.inf])}, "start[1]"),
    ({"size": [1]}, "size: has 1 entries where src has 2"),
])
def test_a_bad_cell_is_one_line_naming_its_column_and_row(kwargs, field):
    with pytest.raises(contend.InputError) as e:
        contend.Transfers.from_columns(["GPU0", "GPU1"], ["GPU2", "GPU3"], **kwargs)
    assert field in str(e.value) and "\n" not in str(e.value)


def test_an_empty_device_cell_is_one_line_naming_its_column_and_row():
    # pandas keeps an empty cell NaN through astype(str): the binding raised a bare TypeError.
    df = pd.DataFrame({"src": ["GPU0", None], "dst": ["GPU2", "GPU3"], "size": [1024, 1024]})
    with pytest.raises(contend.InputError, match=r'^<dataframe>: src\[1\]: is missing; give a device name'):
        contend.Transfers.from_dataframe(df.assign(src=pd.Series(["GPU0", np.nan], dtype=object)))
    with pytest.raises(contend.InputError, match=r"dst\[0\]: is 3, not a name"):
        contend.Transfers.from_columns(["GPU0"], [3], [1024])


def test_a_nan_start_is_none_on_both_paths():
    # NaN (pandas' empty cell) means no start on the columns' path; a record that takes the file's path (here
    # for its mechanism) read it as the time "nans".
    plain = contend.Transfers.from_records([{"src": "GPU0", "dst": "GPU2", "size": 1024, "start": float("nan")}])
    other = contend.Transfers.from_records([{"src": "GPU0", "dst": "GPU2", "size": 1024, "start": float("nan"),
                                             "overhead": np.float64("nan"), "mechanism": "p2p"}])
    assert "start" not in plain.records[0] and "start" not in other.records[0] and "overhead" not in other.records[0]


def test_a_nan_name_is_no_name_on_both_paths():
    # pandas' empty cell through to_dict("records"): the columns' path raised the binding's bare TypeError, the
    # file's path (here for its mechanism) named the transfer "NaN".
    plain = contend.Transfers.from_records([{"src": "GPU0", "dst": "GPU2", "size": 1024, "name": float("nan")}])
    other = contend.Transfers.from_records([{"src": "GPU0", "dst": "GPU2", "size": 1024, "name": np.float64("nan"),
                                             "mechanism": "p2p"}])
    assert "name" not in plain.records[0] and "name" not in other.records[0]


def test_a_dataframe_with_unknown_columns_is_refused_not_silently_dropped():
    df = pd.DataFrame({"src": ["GPU0"], "dst": ["GPU2"], "size": [1024], "mechanism": ["staged"]})
    with pytest.raises(contend.InputError, match="mechanism"):
        contend.Transfers.from_dataframe(df)


def test_report_tables_cross_as_arrow_and_agree_with_the_json_and_csv():
    m = contend.Machine.load(MACHINE)
    r = contend.simulate(m, contend.Transfers.example(), model="maxmin")
    raw = json.loads(r.to_json())
    for table, cols in (("transfers", raw["transfers"]), ("links", raw["links"]),
                        ("devices", raw["summary"]["devices"])):
        arrow = r.arrow(table)
        assert arrow.column_names == list(cols)
        for name, values in cols.items():
            assert arrow.column(name).to_pylist() == values, (table, name)
    csv = pd.read_csv(io.StringIO(r.csv("transfers")))
    assert csv["finish_s"].tolist() == raw["transfers"]["finish_s"]
    assert r.makespan_s == raw["summary"]["makespan_s"]
    assert r.column("finish_s").tolist() == raw["transfers"]["finish_s"]
    assert r.column("size_bytes").dtype == np.uint64 and r.column("src") == raw["transfers"]["src"]
    with pytest.raises(contend.InputError, match="no column"):
        r.column("nope")
    with pytest.raises(contend.InputError, match="not a report table"):
        r.csv("phases")


def test_held_objects_are_what_the_binding_takes():
    m = contend.Machine.load(MACHINE)
    t = contend.Transfers.example()
    assert isinstance(m.held, _core.Machine) and isinstance(t.held, _core.Transfers)
    assert isinstance(_core.simulate(m.held, t.held, "sc16", []), _core.Report)
    assert m.name == MACHINE and len(t) == 4


def test_a_session_builds_each_machine_once_and_again_after_its_file_changes(tmp_path):
    s = contend.Session()
    assert s.machine(MACHINE) is s.machine(MACHINE)
    f = tmp_path / "m.yaml"
    f.write_text(contend.Machine.load(MACHINE).spec_json)
    first = s.machine(f)
    assert s.machine(f) is first
    time.sleep(0.01)
    f.write_text(contend.Machine.load("cs-storm").spec_json)
    os.utime(f, (time.time() + 5, time.time() + 5))
    assert s.machine(f) is not first and len(s.machine(f).gpus) == 16
    t = contend.Transfers.example()
    alone = contend.simulate(contend.Machine.load(MACHINE), t, tau=0.2)
    assert finish(s.simulate(MACHINE, t, tau=0.2)) == finish(alone)


def test_runs_in_a_session_equal_runs_without_one(tmp_path):
    (tmp_path / "ft.yaml").write_text(SMALL_CLUSTER)
    scenario = tmp_path / "s.yaml"
    scenario.write_text(f"cluster: {tmp_path / 'ft.yaml'}\nworkload:\n  jobs:\n"
                        "    - {app: stencil4d, ranks: 16, params: {iterations: 2}}\n")
    alone = contend.api.run(scenario).raw
    s = contend.Session()
    assert s.run(scenario).raw == alone
    assert s.run(scenario).raw == alone  # the second run takes the kept lowering


def test_every_function_takes_a_machine_its_name_or_its_file_and_refuses_anything_else(tmp_path):
    m = contend.Machine.load(MACHINE)
    t = contend.Transfers.parse(YAML)
    path = tmp_path / "t.yaml"
    path.write_text(YAML)
    want = finish(contend.simulate(m, t, model="maxmin"))
    assert finish(contend.simulate(MACHINE, t, model="maxmin")) == want
    assert finish(contend.simulate(MACHINE, path, model="maxmin")) == want
    assert contend.explain(MACHINE, t).factors.equals(contend.explain(m, t).factors)
    best = contend.schedule(m, "2d", semantics="rounds").best_s
    assert contend.schedule(MACHINE, "2d", semantics="rounds").best_s == best
    with pytest.raises(TypeError, match="a contend.Machine, a preset name or a machine file, not int"):
        contend.simulate(42, t)
    with pytest.raises(TypeError, match="from_records"):
        contend.simulate(m, [{"src": "GPU0", "dst": "GPU2", "size": 1}])


def test_nccl_tests_takes_a_loaded_machine_and_sizes_as_numbers():
    by_name = contend.nccl_tests("hgx-h100", min_bytes="1M", max_bytes="1M")
    by_machine = contend.nccl_tests(contend.Machine.load("hgx-h100"), min_bytes=1 << 20, max_bytes=1 << 20)
    assert by_machine["rows"] == by_name["rows"]
    assert list(contend.nccl_tests_frame(by_name)["size"]) == [1 << 20]
    in_memory = contend.Machine.from_dict(contend.Machine.load("hgx-h100").spec)
    with pytest.raises(contend.InputError, match="neither a preset nor a file"):
        contend.nccl_tests(in_memory)


def test_a_timedelta_start_column_is_seconds_and_missing_detail_is_said_not_empty():
    df = pd.DataFrame({"src": ["GPU0", "GPU1"], "dst": ["GPU2", "GPU4"], "size": [1 << 20, 1 << 20],
                       "start": pd.to_timedelta([0, 250], unit="us")})
    by_seconds = df.assign(start=[0.0, 250e-6])
    got, want = (contend.simulate(MACHINE, contend.Transfers.from_dataframe(d), model="maxmin")
                 for d in (df, by_seconds))
    assert finish(got) == finish(want)
    for detail in (lambda r: r.phases, lambda r: r.link_loads(), lambda r: r.nic_queues()):
        with pytest.raises(contend.InputError, match="=True"):
            detail(got)
    kept = contend.simulate(MACHINE, contend.Transfers.from_dataframe(df), model="maxmin", phases=True, nics=True)
    assert len(kept.link_loads()) > 0 and len(kept.phases) > 0 and kept.nic_queues().empty  # no NIC on this machine
