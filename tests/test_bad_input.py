"""Every user mistake: one line on stderr naming the file, the field and the fix; exit code 2."""

import json

import pytest


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def assert_one_line(p, *needles):
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1, p.stderr
    assert "Traceback" not in p.stderr
    for n in needles:
        assert n in lines[0], lines[0]


def test_unknown_preset(cli, example_file):
    p = cli("simulate", "cs-strom", example_file)
    assert_one_line(p, "cs-strom", "neither a preset nor a file", "cs-storm-socket")


def test_unknown_device(cli, tmp_path):
    f = write(tmp_path, "t.yaml", "transfers:\n  - {src: GPU0, dst: GPU9, size: 1MiB}\n")
    assert_one_line(cli("simulate", "cs-storm-socket", f), f, "transfers[0].dst", "GPU9", "GPUs are GPU0 .. GPU7")


def test_transfer_to_itself(cli, tmp_path):
    f = write(tmp_path, "t.yaml", "transfers:\n  - {src: GPU3, dst: GPU3, size: 1MiB}\n")
    assert_one_line(cli("simulate", "cs-storm-socket", f), "transfers[0].dst", "equals src")


@pytest.mark.parametrize("size,needle", [("0MiB", "is zero"), ("-5MiB", "negative")])
def test_zero_or_negative_size(cli, tmp_path, size, needle):
    f = write(tmp_path, "t.yaml", f"transfers:\n  - {{src: GPU0, dst: GPU1, size: {size}}}\n")
    assert_one_line(cli("simulate", "cs-storm-socket", f), "transfers[0].size", needle)


def test_quantity_without_unit(cli, tmp_path):
    f = write(tmp_path, "t.yaml", "transfers:\n  - {src: GPU0, dst: GPU1, size: 300}\n")
    assert_one_line(cli("simulate", "cs-storm-socket", f), "transfers[0].size", "no unit", '"300MiB"')


def test_parameter_without_unit(cli, example_file):
    p = cli("simulate", "cs-storm-socket", example_file, "-p", "bandwidth=11.6")
    assert_one_line(p, "--param", "bandwidth", "no unit")


def test_unknown_parameter(cli, example_file):
    assert_one_line(cli("simulate", "cs-storm-socket", example_file, "-p", "speed=3"), "speed", "known: bandwidth")


def test_not_a_tree_for_sc16(cli, tmp_path):
    machine = write(
        tmp_path,
        "ring.yaml",
        "name: ring\ndevices:\n  - {name: RC0, kind: root_complex}\n  - {name: S1, kind: pcie_switch}\n"
        "  - {name: S2, kind: pcie_switch}\n  - {name: GPU0, kind: gpu}\n  - {name: GPU1, kind: gpu}\n"
        "links:\n  - {a: RC0, b: S1, kind: pcie, gen: 3, lanes: 16}\n"
        "  - {a: RC0, b: S2, kind: pcie, gen: 3, lanes: 16}\n"
        "  - {a: S1, b: S2, kind: pcie, gen: 3, lanes: 16}\n  - {a: S1, b: GPU0, kind: pcie, gen: 3, lanes: 16}\n"
        "  - {a: S2, b: GPU1, kind: pcie, gen: 3, lanes: 16}\n",
    )
    f = write(tmp_path, "t.yaml", "transfers:\n  - {src: GPU0, dst: GPU1, size: 1MiB}\n")
    assert_one_line(cli("simulate", machine, f, "--model", "sc16"), "sc16 does not apply", "not a tree", "maxmin")
    # Where none is named, a PCIe cycle is no tree sc16 takes: the default there is maxmin, and the copy runs.
    p = cli("simulate", machine, f, "--json")
    assert p.returncode == 0 and json.loads(p.stdout)["model"] == "maxmin", p.stderr


def test_two_sockets_refused_by_sc16(cli, tmp_path):
    f = write(tmp_path, "t.yaml", "transfers:\n  - {src: GPU0, dst: GPU8, size: 1MiB}\n")
    assert_one_line(cli("simulate", "cs-storm", f), "sc16 does not apply", "not in one PCIe tree", "maxmin")


def test_a_host_copy_under_the_default_sc16_says_it_is_one(cli, tmp_path):
    """typical-8gpu runs sc16 by default; a copy to host memory is refused for the memory link sc16 does not model,
    naming maxmin, not as a path that leaves PCIe; with --model maxmin it runs."""
    f = write(tmp_path, "t.yaml", "transfers:\n  - {name: h, src: GPU0, dst: MEM0, size: 1MiB}\n")
    assert_one_line(cli("simulate", "typical-8gpu", f), "sc16 does not apply: transfer h copies to host memory MEM0",
                    "memory link", "--model maxmin")
    assert "not in one PCIe tree" not in cli("simulate", "typical-8gpu", f).stderr
    assert cli("simulate", "typical-8gpu", f, "--model", "maxmin").returncode == 0


def test_cyclic_dependencies(cli, tmp_path):
    f = write(
        tmp_path,
        "t.yaml",
        "transfers:\n  - {name: a, src: GPU0, dst: GPU1, size: 1MiB, after: [b]}\n"
        "  - {name: b, src: GPU1, dst: GPU0, size: 1MiB, after: [a]}\n",
    )
    assert_one_line(cli("simulate", "cs-storm-socket", f), "transfers[0].after", "cycle")


def test_unreadable_file(cli, tmp_path):
    assert_one_line(cli("simulate", "cs-storm-socket", str(tmp_path / "missing.yaml")), "missing.yaml", "no such file")


def test_file_that_is_not_yaml(cli, tmp_path):
    f = write(tmp_path, "t.yaml", "transfers: [ {src: GPU0\n")
    assert_one_line(cli("simulate", "cs-storm-socket", f), f)


def test_bad_machine_file_names_the_field(cli, tmp_path, example_file):
    machine = write(
        tmp_path,
        "m.yaml",
        "name: m\ndevices:\n  - {name: RC0, kind: root_complex}\n  - {name: GPU0, kind: gpu}\n"
        "links:\n  - {a: RC0, b: GPU0, kind: pcie, bandwidth: 12}\n",
    )
    assert_one_line(cli("simulate", machine, example_file), "m.yaml", "links[0].bandwidth", "no unit")


def test_malformed_param(cli, example_file):
    assert_one_line(cli("simulate", "cs-storm-socket", example_file, "-p", "tau"), "--param", "key=value")


def test_generate_never_overwrites(cli, tmp_path, example_file):
    before = open(example_file).read()
    assert_one_line(cli("generate", "scatter", "cs-storm-socket", "--root", "GPU0", "-o", example_file), "exists")
    assert open(example_file).read() == before


def test_output_over_an_input_is_refused(cli, example_file):
    before = open(example_file).read()
    assert_one_line(cli("simulate", "cs-storm-socket", example_file, "--trace", example_file), "--trace", "input")
    assert open(example_file).read() == before


@pytest.mark.parametrize("args,needles", [
    (["schedule", "cs-storm-socket", "--threads", "100000"], ["--threads", "100000", "4 per core"]),
    (["schedule", "cs-storm-socket", "--search", "greedy"], ["--search", "greedy", "exhaustive, bnb or anneal"]),
    (["schedule", "cs-storm-socket", "--search", "anneal", "--iterations", "0"], ["--iterations", "1 to"]),
    (["schedule", "cs-storm-socket", "--alpha", "5"], ["--alpha", "no unit"]),
    (["generate", "random", "cs-storm", "--count", "0"], ["--count", "1 to 10000000"]),
    (["generate", "random", "cs-storm", "--count", "20000000"], ["--count", "1 to 10000000"]),
    (["generate", "random", "cs-storm", "--gap", "2"], ["--gap", "no unit"]),
    (["schema", "circuit"], ["circuit", "machine, cluster, transfers, halo, report"]),
    (["simulate", "cs-storm-socket", "sc16-example", "--model", "packets"], ["--model", "packets", "sc16, maxmin"]),
])
def test_options_out_of_bounds(cli, args, needles):
    assert_one_line(cli(*args), *needles)


def test_explain_needs_a_model_with_steps(cli, example_file):
    p = cli("explain", "cs-storm-socket", example_file, "--model", "maxmin")
    assert_one_line(p, "maxmin", "no steps to explain", "--model sc16")


def test_explain_on_a_machine_sc16_refuses_does_not_send_the_user_round(cli, tmp_path):
    # sc16's usual advice (use --model maxmin) would lead to the refusal above: explain points to simulate.
    t = write(tmp_path, "t.yaml", "transfers:\n  - {src: GPU0, dst: GPU1, size: 1GiB}\n")
    p = cli("explain", "hgx-h100", t, "--model", "sc16")
    assert_one_line(p, "sc16", "explain shows sc16's steps only", "contend simulate")
    assert "use --model maxmin" not in p.stderr
    # None named: the NVLink node's default is maxmin (round 25), which has no steps; the line says so, and does
    # not blame a --model maxmin the user never gave.
    p = cli("explain", "hgx-h100", t)
    assert_one_line(p, "none given", "hgx-h100 runs maxmin by default", "--model sc16", "contend simulate")
    assert "use --model maxmin" not in p.stderr


def test_random_graphs_repeat_pairs_beyond_the_distinct_ones(cli, tmp_path):
    out = tmp_path / "r.yaml"
    p = cli("generate", "random", "cs-storm-socket", "--count", "100", "--gap", "1us", "-o", str(out))
    assert p.returncode == 0, p.stderr
    text = out.read_text()
    assert text.count("src:") == 100  # 56 distinct pairs among 8 GPUs, then repeats
    assert "start: 99us" in text


def test_every_schema_prints(cli):
    for which in ("machine", "transfers", "halo", "report"):
        p = cli("schema", which)
        assert p.returncode == 0 and '"$schema"' in p.stdout, which


def test_timeline_of_too_many_transfers(cli, tmp_path):
    f = tmp_path / "many.yaml"
    assert cli("generate", "random", "cs-storm", "--count", "300", "-o", str(f)).returncode == 0
    p = cli("simulate", "cs-storm", str(f), "--model", "maxmin", "--timeline", str(tmp_path / "t.png"))
    assert_one_line(p, "--timeline", "300 transfers", "--trace")


def test_p2p_of_a_cluster(cli):
    assert_one_line(cli("p2p", "fat-tree-256x8"), "2048 GPUs", "give one node")
    assert_one_line(cli("p2p", "fat-tree-256x8", "--tool", "nvbandwidth"), "2048 GPUs", "give one node")


def test_import_with_too_many_numa_nodes_per_socket(cli, tmp_path):
    dump = tmp_path / "topo.txt"
    dump.write_text("\tGPU0\tGPU1\nGPU0\t X \tNV1\nGPU1\tNV1\t X \n")
    for k in ("64", "-1", "5000000000", "99999999999999999999"):
        assert_one_line(cli("import", str(dump), "--numa-per-socket", k), "--numa-per-socket", "give 1 to 8")


def test_a_number_too_large_for_the_engine_is_one_line(cli):
    # Integers the binding cannot hold (u64, usize) are refused where they enter, naming the option and its range,
    # instead of a traceback (or the binding's argument name).
    for flag, span in (("-f", "give 2 to 18446744073709551615"), ("-g", "give 1 to 18446744073709551615"),
                       ("--nodes", "give 1 to 1024"), ("--root", "give 0 to 18446744073709551615")):
        assert_one_line(cli("nccl-tests", "dgx-a100", flag, "99999999999999999999"), f"{flag}: is 99999999999999999999",
                        span)


def test_p2p_of_an_unknown_tool(cli):
    assert_one_line(cli("p2p", "dgx-a100", "--tool", "nccl-tests"), "--tool", "nvbandwidth")


@pytest.mark.parametrize("fabric,needle", [
    ("fat_tree: {radix: 1024, pods: 4096}", "fabric.fat_tree"),
    ("dragonfly: {p: 8, a: 1024, h: 8, groups: 4096}", "fabric.dragonfly"),
])
def test_absurd_clusters_are_refused_before_they_are_built(cli, tmp_path, fabric, needle):
    text = f"name: big\nfabric:\n  {fabric}\nlink: {{bandwidth: 10GB/s}}\nnodes: {{gpus: 8}}\n"
    f = write(tmp_path, "big.yaml", text)
    assert_one_line(cli("show", f), needle, "describe a smaller")


def test_absurd_packet_runs_are_refused(cli, tmp_path):
    f = write(tmp_path, "t.yaml", "transfers:\n  - {src: n0.GPU1, dst: n1.GPU0, size: 100TB}\n")
    assert_one_line(cli("simulate", "dragonfly-512x4", f, "--model", "packet"), "packets", "--model maxmin")
    f = write(tmp_path, "s.yaml", "transfers:\n  - {src: n0.GPU1, dst: n1.GPU0, size: 1MiB}\n")
    p = cli("simulate", "dragonfly-512x4", f, "--model", "packet", "-p", "buffer=100000000")
    assert_one_line(p, "buffer", "1 to")


def mutated(text: str, rng) -> str:
    """A real file damaged as files get damaged: lines cut, lost or repeated, cells replaced."""
    lines = text.split("\n")
    for _ in range(rng.randint(1, 5)):
        i = rng.randrange(len(lines))
        op = rng.randrange(4)
        if op == 0:
            del lines[i]
        elif op == 1:
            lines.insert(i, lines[rng.randrange(len(lines))])
        elif op == 2:
            lines[i] = lines[i][: rng.randrange(len(lines[i]) + 1)]
        elif (cells := lines[i].split()) and op == 3:
            damage = ["inf", "nan", "-1", "x", "N/A", "-", "1e308", "99999999999999999999"]
            cells[rng.randrange(len(cells))] = rng.choice(damage)
            lines[i] = " ".join(cells)
        if len(lines) < 2:
            break
    return "\n".join(lines)


@pytest.mark.parametrize("seed", range(3))
def test_damaged_measurements_and_dumps_never_raise_anything_but_input_errors(tmp_path, seed):
    import random
    from pathlib import Path

    import contend
    from contend.errors import InputError

    root = Path(__file__).parent.parent
    fixtures = root / "crates" / "contend-core" / "tests" / "fixtures"
    machines = root / "bench" / "validation" / "machines"
    measured = [("a100-pcie-x4", "p2pBandwidthLatencyTest-4xa100-pcie.txt"),
                ("rtx-a6000x6", "nvbandwidth-6xa6000-read-ce.txt"), ("h100-host", "hostlink-h100-emr.csv")]
    dumps = ["nvidia-smi-dgx1-v100.txt", "nccl-azure-ndv4.xml", "lspci-vvnn-esc8000g4-8x2080ti.txt",
             "nvidia-smi-topo-8x4090-epyc7542-nps4.txt"]
    rng = random.Random(seed)
    for k in range(12):
        machine, name = measured[k % len(measured)]
        f = tmp_path / f"m{k}{Path(name).suffix}"
        f.write_text(mutated((fixtures / name).read_text(), rng))
        try:
            contend.calibrate(contend.Machine.load(machines / f"{machine}.yaml"), f, hold_out=bool(k % 2))
        except InputError:
            pass
        dump = tmp_path / f"d{k}{Path(dumps[k % len(dumps)]).suffix}"
        dump.write_text(mutated((fixtures / dumps[k % len(dumps)]).read_text(), rng))
        try:
            contend.import_machine(dump, numa_per_socket=rng.choice([1, 2, 4]))
        except InputError:
            pass


def test_a_link_under_a_megabyte_a_second_names_its_field(cli, tmp_path):
    # 1e-30GB/s once printed a makespan of 1e29 s: links under 1 MB/s are refused on input (units.rs).
    m = write(tmp_path, "c.yaml", "name: c\nfabric:\n  fat_tree: {radix: 8, pods: 3, leaves_per_pod: 4, "
              "aggregates_per_pod: 4, nodes_per_leaf: 4}\nlink: {bandwidth: 1e-30GB/s, latency: 200ns}\n"
              "nodes: {gpus: 1}\n")
    t = write(tmp_path, "t.yaml", "transfers:\n  - {src: n0.GPU0, dst: n47.GPU0, size: 100MB}\n")
    assert_one_line(cli("simulate", m, t, "--model", "maxmin"), "c.yaml", "link.bandwidth", "below 1 MB/s")


def test_a_packet_run_past_its_bound_is_refused_before_it_starts(cli, tmp_path):
    # 100 MB in 1 B packets over a fat-tree: 10^8 packets of 8 links each ran for minutes without a word.
    m = write(tmp_path, "c.yaml", "name: c\nfabric:\n  fat_tree: {radix: 8, pods: 3, leaves_per_pod: 4, "
              "aggregates_per_pod: 4, nodes_per_leaf: 4}\nlink: {bandwidth: 10GB/s, latency: 200ns}\n"
              "nodes: {gpus: 1}\n")
    t = write(tmp_path, "t.yaml", "transfers:\n  - {src: n0.GPU0, dst: n47.GPU0, size: 100MB}\n")
    p = cli("simulate", m, t, "--model", "packet", "-p", "packet=1B")
    assert_one_line(p, "packet-hops", "packets of 1B", "--param packet=")


@pytest.mark.parametrize("call,needles", [
    (lambda c: c.Transfers.generate("random", "hgx-h100", "1MiB", count=-3), ["count", "-3", "negative"]),
    (lambda c: c.Transfers.generate("random", "hgx-h100", "1MiB", count=2.5), ["count", "2.5", "whole"]),
    (lambda c: c.Transfers.generate("permutation", "hgx-h100", True), ["size", "True", "not a size"]),
    (lambda c: c.nccl_tests("hgx-h100", nodes=-1), ["nodes", "-1", "negative", "1 or more"]),
    (lambda c: c.nccl_tests("hgx-h100", nodes="2"), ["nodes", "'2'", "whole number"]),
    (lambda c: c.nccl_tests("hgx-h100", factor=1.5), ["factor", "1.5", "whole number"]),
    (lambda c: c.nccl_tests("hgx-h100", root=True), ["root", "True", "bool"]),
    (lambda c: c.nccl_tests_frame(None), ["nccl_tests_frame", "report", "NoneType", "contend.nccl_tests"]),
])
def test_python_arguments_of_the_wrong_type_are_one_input_error(call, needles):
    # PyO3's own conversions raised a bare OverflowError or TypeError naming no argument; the binding converts
    # each one itself and says which argument and what it takes.
    import contend

    with pytest.raises(contend.InputError) as e:
        call(contend)
    message = str(e.value)
    assert "\n" not in message and all(n in message for n in needles), message


def test_python_sizes_may_be_bytes_as_an_int():
    import contend

    m = contend.Machine.load("hgx-h100")
    as_int = contend.Transfers.generate("permutation", m, 1024)
    assert as_int.records == contend.Transfers.generate("permutation", m, "1024B").records
