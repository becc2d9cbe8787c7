"""OTF2 trace replay: traces written with otf2's own writer, imported as rank programs, run."""

from __future__ import annotations

import json

import otf2
import pytest
from otf2.enums import CollectiveOp, GroupFlag, GroupType, LocationGroupType, LocationType, Paradigm, RegionRole

from conftest import SMALL_CLUSTER
from contend import api


def _world(trace, ranks):
    """A trace's definitions of `ranks` MPI processes, one thread each, on MPI_COMM_WORLD: their locations and
    the communicator."""
    node = trace.definitions.system_tree_node("node")
    locs = []
    for r in range(ranks):
        g = trace.definitions.location_group(f"rank {r}", system_tree_parent=node,
                                             location_group_type=LocationGroupType.PROCESS)
        locs.append(trace.definitions.location("main", type=LocationType.CPU_THREAD, group=g))
    mpi = {"paradigm": Paradigm.MPI, "group_flags": GroupFlag.NONE, "members": locs}
    trace.definitions.group("MPI locations", group_type=GroupType.COMM_LOCATIONS, **mpi)
    world = trace.definitions.group("world", group_type=GroupType.COMM_GROUP, **mpi)
    return locs, trace.definitions.comm("MPI_COMM_WORLD", group=world)


def write_trace(path) -> None:
    """Two ranks, times in ns: a blocking send/recv of 1000 B, 10 us of compute on each, then
    an isend/irecv pair completed by waits, then an 8 B allreduce."""
    with otf2.writer.open(str(path), timer_resolution=1_000_000_000) as trace:
        locs, comm = _world(trace, 2)

        def region(name, role):
            return trace.definitions.region(name, region_role=role, paradigm=Paradigm.MPI)

        send, recv = region("MPI_Send", RegionRole.POINT2POINT), region("MPI_Recv", RegionRole.POINT2POINT)
        isend, irecv = region("MPI_Isend", RegionRole.POINT2POINT), region("MPI_Irecv", RegionRole.POINT2POINT)
        wait, allr = region("MPI_Wait", RegionRole.POINT2POINT), region("MPI_Allreduce", RegionRole.COLL_ALL2ALL)
        w0, w1 = (trace.event_writer_from_location(loc) for loc in locs)
        w0.enter(0, send), w0.mpi_send(100, 1, comm, 5, 1000), w0.leave(1000, send)
        w1.enter(0, recv), w1.mpi_recv(1500, 0, comm, 5, 1000), w1.leave(2000, recv)
        # 10 us of compute on each, then a nonblocking pair of 100 kB (rendezvous).
        w0.enter(11000, isend), w0.mpi_isend(11100, 1, comm, 7, 100000, 42), w0.leave(11500, isend)
        w1.enter(12000, irecv), w1.mpi_irecv_request(12100, 43), w1.leave(12500, irecv)
        w0.enter(11600, wait), w0.mpi_isend_complete(30000, 42), w0.leave(30100, wait)
        w1.enter(12600, wait), w1.mpi_irecv(30000, 0, comm, 7, 100000, 43), w1.leave(30200, wait)
        # Score-P counts an allreduce of 8 B on 2 ranks as 2 x 8 B sent and received (scorep_mpi_coll.inc.c).
        for w, t in ((w0, 40100), (w1, 40200)):
            w.enter(t, allr), w.mpi_collective_begin(t)
            w.mpi_collective_end(t + 500, CollectiveOp.ALLREDUCE, comm, 0xFFFFFFFF, 16, 16), w.leave(t + 1000, allr)


def test_a_trace_replays_as_a_rank_program(cli, tmp_path):
    write_trace(tmp_path / "trace")
    program = tmp_path / "program.yaml"
    r = cli("import-trace", tmp_path / "trace" / "traces.otf2", "-o", program, "--iterations", "3")
    assert r.returncode == 0, r.stderr
    text = program.read_text()
    ops = text.split("  -\n")[1:]
    # Rank 0: send, compute 10 us, isend, compute 100 ns, wait, compute 10 us, allreduce; three times.
    first = ops[0].splitlines()[:7]
    assert "send: {peer: 1, size: 1000B, tag: 5}" in first[0]
    assert "compute: 10000ns" in first[1] and "isend: {peer: 1, size: 100000B, tag: 7, req: q42}" in first[2]
    assert "wait: q42" in first[4] and "allreduce: {size: 8B, group: [0, 1]}" in first[6]
    assert "irecv: {peer: 0, size: 100000B, tag: 7, req: q43}" in ops[1]
    assert text.count("allreduce") == 6
    (tmp_path / "ft.yaml").write_text(SMALL_CLUSTER)
    scenario = tmp_path / "s.yaml"
    scenario.write_text(f"cluster: {tmp_path / 'ft.yaml'}\nworkload:\n  jobs:\n    - program: {program}\n")
    jobs = json.loads(cli("run", scenario, "--json").stdout)["jobs"]
    # Three iterations of 20.1 us of compute (rank 0) at least, and messages on top.
    assert jobs["ranks"] == [2] and jobs["run_time_s"][0] > 3 * 20.1e-6
    # Each rank computes 10 + 0.1 + 10 us per iteration (the gaps between its MPI calls).
    assert abs(jobs["compute_s"][0] - 3 * 20.1e-6) < 1e-12
    assert api.run(scenario).jobs["messages"][0] > 0
    # The folder Score-P wrote is taken too: its one anchor file is the trace.
    r = cli("import-trace", tmp_path / "trace", "-o", tmp_path / "p2.yaml", "--iterations", "3")
    assert r.returncode == 0 and (tmp_path / "p2.yaml").read_text() == text, r.stderr


def test_a_file_that_is_not_a_trace_gets_one_line(cli, tmp_path):
    bad = tmp_path / "traces.otf2"
    bad.write_text("not a trace")
    r = cli("import-trace", bad, "-o", tmp_path / "p.yaml")
    assert r.returncode == 2 and "is not an OTF2 trace" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    r = cli("import-trace", tmp_path / "missing.otf2", "-o", tmp_path / "p.yaml")
    assert r.returncode == 2 and r.stderr.strip().endswith("does not exist; give the .otf2 anchor file Score-P wrote")
    assert len(r.stderr.strip().splitlines()) == 1
    r = cli("import-trace", tmp_path, "-o", tmp_path / "p.yaml")  # a folder: its anchor file is traces.otf2
    assert r.returncode == 2 and "is not an OTF2 trace" in r.stderr
    (tmp_path / "empty").mkdir()
    r = cli("import-trace", tmp_path / "empty", "-o", tmp_path / "p.yaml")
    assert r.returncode == 2 and r.stderr.strip().endswith("a folder with no .otf2 file; give the .otf2 anchor file "
                                                           "Score-P wrote")


def write_4_ranks(path, calls) -> None:
    """A trace of 4 ranks on MPI_COMM_WORLD, times in ns; calls(trace, comm, writer, rank) writes each rank's events."""
    with otf2.writer.open(str(path), timer_resolution=1_000_000_000) as trace:
        locs, comm = _world(trace, 4)
        for r, loc in enumerate(locs):
            calls(trace, comm, trace.event_writer_from_location(loc), r)


@pytest.mark.parametrize("call", ["MPI_Sendrecv", "MPI_Sendrecv_replace"])
def test_a_sendrecv_ring_sends_and_receives_at_once(cli, tmp_path, call):
    # Each rank sends 1 MiB to the next and receives 1 MiB from the previous in one call. Score-P writes the
    # send event then the receive event inside the call's region; MPI's send and receive of one call proceed
    # concurrently (MPI 4.1 §3.10), so the ring runs, where a blocking send then a blocking receive deadlock.
    size = 1 << 20

    def ring(trace, comm, w, r):
        region = trace.definitions.region(call, region_role=RegionRole.POINT2POINT, paradigm=Paradigm.MPI)
        w.enter(0, region), w.mpi_send(100, (r + 1) % 4, comm, 1, size)
        w.mpi_recv(900, (r - 1) % 4, comm, 1, size), w.leave(1000, region)

    write_4_ranks(tmp_path / "trace", ring)
    program = tmp_path / "p.yaml"
    r = cli("import-trace", tmp_path / "trace", "-o", program)
    assert r.returncode == 0, r.stderr
    rank0 = program.read_text().split("  -\n")[1].splitlines()
    assert [line.split(":")[0].strip(" -{") for line in rank0] == ["isend", "irecv", "wait", "wait"], rank0
    (tmp_path / "ft.yaml").write_text(SMALL_CLUSTER)
    scenario = tmp_path / "s.yaml"
    scenario.write_text(f"cluster: {tmp_path / 'ft.yaml'}\nworkload:\n  jobs:\n    - program: {program}\n")
    r = cli("run", scenario, "--json")
    assert r.returncode == 0, r.stderr
    t = json.loads(r.stdout)["jobs"]["run_time_s"][0]
    # One 1 MiB exchange: the four messages move at once, each over its own host links at 10 GB/s, plus
    # the rendezvous' fixed costs (docs/workloads.md: 2 soft_delay + 2 nic_delay + rdma_delay, 2.2 us,
    # and two paths' latency, 2 x 250 ns), far from the 2 x 104.9 us of a send then a receive.
    data = size / 10e9
    assert data < t < data + 3e-6, t


def test_collective_sizes_follow_each_operation_from_score_p_bytes(cli, tmp_path):
    # Score-P 8's bytes per rank (src/adapters/mpi/scorep_mpi_coll.inc.c) on 4 ranks, for a block (vector,
    # message) of B bytes, and the program's size of each call (docs/workloads.md).
    b = 4096
    recorded = {  # op, root, per rank (sent, received)
        "BCAST": (2, [(0, b), (0, b), (4 * b, b), (0, b)]),  # the root sends B to each of 4 (itself too)
        "ALLTOALL": (None, [(4 * b, 4 * b)] * 4),  # B to each of 4
        "ALLREDUCE": (None, [(4 * b, 4 * b)] * 4),  # counted as an alltoall of the vector
        "ALLGATHER": (None, [(4 * b, 4 * b)] * 4),
        "REDUCE": (1, [(b, 0), (b, 4 * b), (b, 0), (b, 0)]),
        "GATHER": (0, [(0, 3 * b), (b, 0), (b, 0), (b, 0)]),  # the root in place: 3 blocks move
    }
    ops = {"BCAST": "bcast", "ALLTOALL": "alltoall", "ALLREDUCE": "allreduce", "ALLGATHER": "allgather",
           "REDUCE": "allreduce", "GATHER": "allgather"}

    def collectives(trace, comm, w, r):
        region = trace.definitions.region("MPI_Coll", region_role=RegionRole.COLL_ALL2ALL, paradigm=Paradigm.MPI)
        for k, (op, (root, sizes)) in enumerate(recorded.items()):
            t = 1000 * k
            w.enter(t, region), w.mpi_collective_begin(t)
            sent, received = sizes[r]
            w.mpi_collective_end(t + 500, getattr(CollectiveOp, op), comm, 0xFFFFFFFF if root is None else root,
                                 sent, received)
            w.leave(t + 500, region)

    write_4_ranks(tmp_path / "trace", collectives)
    program = tmp_path / "p.yaml"
    r = cli("import-trace", tmp_path / "trace", "-o", program)
    assert r.returncode == 0, r.stderr
    for rank in program.read_text().split("  -\n")[1:]:
        calls = [line for line in rank.splitlines() if "size:" in line]
        assert [c.split(":")[0].strip(" -{") for c in calls] == [ops[op] for op in recorded], calls
        assert all(f"size: {b}B" in c for c in calls), calls


def test_a_collective_that_fits_in_place_and_not_is_counted_and_read_as_asked(cli, tmp_path):
    # Score-P writes (N - 1) x B for an in-place allreduce (scorep_mpi_coll.inc.c) and no flag. With N = 4 and
    # B = 4096, 3 x 4096 = 12,288 is also 4 x 3,072: both forms fit. With B = 4098, 12,294 is not a multiple of 4.
    from contend.otf2_records import call_size

    assert call_size("ALLREDUCE", 3 * 4096, 3 * 4096, 4) == (3072, True)
    assert call_size("ALLREDUCE", 3 * 4096, 3 * 4096, 4, in_place=True) == (4096, True)
    assert call_size("ALLREDUCE", 3 * 4098, 3 * 4098, 4) == (4098, False)
    assert call_size("ALLGATHER", 7 * 8192, 7 * 8192, 8, in_place=True) == (8192, True)
    assert call_size("ALLTOALL", 4 * 4097, 4 * 4097, 4) == (4097, False)

    def collectives(trace, comm, w, r):
        region = trace.definitions.region("MPI_Allreduce", region_role=RegionRole.COLL_ALL2ALL, paradigm=Paradigm.MPI)
        w.enter(0, region), w.mpi_collective_begin(0)
        w.mpi_collective_end(500, CollectiveOp.ALLREDUCE, comm, 0xFFFFFFFF, 3 * 4096, 3 * 4096)
        w.leave(500, region)

    write_4_ranks(tmp_path / "trace", collectives)
    for flag, size in (([], 3072), (["--in-place"], 4096)):
        program = tmp_path / f"p{size}.yaml"
        r = cli("import-trace", tmp_path / "trace", "-o", program, *flag)
        assert r.returncode == 0, r.stderr
        assert "4 collective record(s) fit a call in place as well as one not in place" in r.stderr, r.stderr
        assert f"size: {size}B" in program.read_text()
