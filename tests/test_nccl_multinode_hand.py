"""Multi-node nccl-tests answers against figures computed by hand (round 26, qa26; docs/validation.md, "Round 26").

Every expected value here comes from the machine's link rates and NCCL's or nccl-tests' own definitions, not from an
earlier run of contend: a NIC at its line rate (ConnectX-7 400 Gb/s = 50 GB/s), nccl-tests' busbw factors (src/*.cu
`getBw`), NCCL 2.30.7's cost model (src/graph/tuning.cc `ncclTopoTuneModel`: baseLatencies, hwLatencies, the ring's
`netOverhead`, the tree's `log2i(nNodes)`) and its p2p channels (src/graph/paths.cc `ncclTopoComputeP2pChannels`).
"""

import math
from pathlib import Path

import pytest

from contend import api

PRESET = Path(__file__).resolve().parents[1] / "crates" / "contend-core" / "presets" / "hgx-h100.yaml"
GIB = 1 << 30


def row(machine, op, size, nodes, **kw):
    rep = api.nccl_tests(machine, op, size, size, 2, nodes=nodes, env={}, **kw)
    return rep["rows"][0]


@pytest.mark.parametrize("nodes", [2, 4])
def test_alltoall_busbw_is_each_nodes_nics_over_the_bytes_that_leave_it(nodes):
    # A rank sends S/n to each of n peers; n - 8 of them are on other nodes, so a node's 8 x 50 GB/s of NICs carry
    # 8 S (n - 8) / n: algbw = 400 n / (8 (n - 8)), busbw = algbw (n - 1) / n.
    n = 8 * nodes
    r = row("hgx-h100", "alltoall", GIB, nodes)
    assert r["busbw"] == pytest.approx(400 * (n - 1) / (8 * (n - 8)), rel=0.015)


@pytest.mark.parametrize("nodes,channels", [(2, 4), (8, 2), (16, 1)])
def test_sendrecv_channels_halve_with_the_ranks_as_nccl_sizes_p2p(nodes, channels):
    # paths.cc: per peer ceil(50 / 14) = 4 channels (NCCL_P2P_PER_CHANNEL_NET_BW), halved while that times
    # ceil(ranks / 8) exceeds the communicator's 16 p2p channels. busbw = algbw = min(NIC 50, channels x a block's
    # send 23.5 GB/s): every pair, those inside a node too, runs on that many channels.
    r = row("hgx-h100", "sendrecv", GIB, nodes)
    assert r["channels"] == channels
    assert r["busbw"] == pytest.approx(min(50.0, channels * 23.5), rel=0.01)


@pytest.mark.parametrize("nodes", [2, 3, 4, 8])
def test_small_calls_take_nccls_latency_formula(nodes):
    # Intel hosts (netOverhead 1 us): tree LL all-reduce base 6.8 + 2 (7 x 0.6 NVLink + log2i(nodes) x 5.0 NET);
    # ring LL all-gather base 6.6 + (n - nodes) steps at max(0.6, 1.0) + (nodes - 1) NET steps at 2.7.
    n = 8 * nodes
    r = row("hgx-h100", "all_reduce", 8, nodes)
    assert (r["algo"], r["proto"]) == ("tree", "LL")
    assert r["nccl_model_us"] == pytest.approx(6.8 + 2 * (7 * 0.6 + math.floor(math.log2(nodes)) * 5.0), abs=0.01)
    r = row("hgx-h100", "all_gather", 8 * n, nodes)
    assert (r["algo"], r["proto"]) == ("ring", "LL")
    assert r["nccl_model_us"] == pytest.approx(6.6 + (n - nodes) * 1.0 + (nodes - 1) * 2.7, abs=0.05)


def test_a_three_node_tree_is_as_deep_as_a_four_node_one():
    # trees.cc: on 3 nodes node 0 has child 2, and node 1 hangs under 2 (a chain of two network hops); the mirror
    # is 1 <- 0 <- 2. NCCL's model counts log2i(3) = 1 hop (as on 2 nodes); the lowered call crosses two, as on 4.
    two, three, four = (row("hgx-h100", "all_reduce", 8, k) for k in (2, 3, 4))
    assert three["nccl_model_us"] == pytest.approx(two["nccl_model_us"], abs=0.01)
    assert three["time_us"] == pytest.approx(four["time_us"], rel=0.01)
    assert three["time_us"] > two["time_us"] + 5


@pytest.mark.parametrize("nodes", [2, 4])
def test_a_ring_stays_under_its_nics(nodes):
    # Ring all-reduce busbw is each rank's send rate; across nodes every channel crosses by one NIC: 8 x 50 GB/s.
    r = row("hgx-h100", "all_reduce", GIB, nodes, algo="ring")
    assert 0.9 * 400 < r["busbw"] <= 400


def few_nics(tmp_path, keep, rate):
    """hgx-h100 with only the NICs `keep` (one a PCIe switch, or one a socket) at `rate`."""
    out = []
    for line in PRESET.read_text().splitlines():
        if any(f"name: NIC{k}," in line or f"b: NIC{k}," in line for k in range(8) if k not in keep):
            continue
        out.append(line.replace("400Gb/s", rate).replace("400 Gb/s", rate))
    p = tmp_path / "few-nics.yaml"
    p.write_text("\n".join(out) + "\n")
    return str(p)


def test_four_200g_nics_for_eight_gpus_bound_every_collective(tmp_path):
    # 4 x 25 GB/s a node. Ring all-reduce and all-gather busbw <= 100; alltoall 100 x 15 / 64 on 2 nodes;
    # sendrecv one NIC, 25 (ceil(25 / 14) = 2 channels of 23.5 do not bind).
    m = few_nics(tmp_path, [0, 2, 4, 6], "200Gb/s")
    assert row(m, "all_reduce", GIB, 2, algo="ring")["busbw"] == pytest.approx(100, rel=0.01)
    assert row(m, "all_gather", GIB, 2)["busbw"] == pytest.approx(100, rel=0.01)
    assert row(m, "alltoall", GIB, 2)["busbw"] == pytest.approx(100 * 15 / 64, rel=0.01)
    assert row(m, "sendrecv", GIB, 2)["busbw"] == pytest.approx(25, rel=0.01)


def test_two_nics_a_node_reach_both_through_pxn(tmp_path):
    # NIC0 under SW0 and NIC4 under SW2 at 50 GB/s: ring all-reduce and all-gather busbw <= 100 (each channel enters
    # at its NIC's GPU and leaves from the GPU beside it); alltoall 100 x 15 / 64 on 2 nodes.
    m = few_nics(tmp_path, [0, 4], "400Gb/s")
    assert row(m, "all_reduce", GIB, 2, algo="ring")["busbw"] == pytest.approx(100, rel=0.01)
    assert row(m, "all_gather", GIB, 2)["busbw"] == pytest.approx(100, rel=0.01)
    assert row(m, "alltoall", GIB, 2)["busbw"] == pytest.approx(100 * 15 / 64, rel=0.01)


def test_fewer_nics_than_gpus_give_nvls_tree_a_head_per_nic(tmp_path):
    # Round 27 (nvlstree27): NCCL's NVLS graph across nodes heads a channel per NIC, at its local GPU, at a speed no NIC
    # exceeds (search.cc ncclTopoSearchRecNet). 4 x 200 Gb/s: 4 heads at 24 GB/s, NVLS-tree algbw 4 x min(24 x 0.85 x
    # 3/4 x 2, 48, 57.7) x 16/30 = 65.3 against the tree's 4 x min(48 x 0.92, 41.4) / 2 = 82.8 (tuning.cc): NCCL's model
    # picks the tree at 32 MiB (LL128) and 1 GiB (Simple), no longer NVLS-tree.
    m = few_nics(tmp_path, [0, 2, 4, 6], "200Gb/s")
    assert (row(m, "all_reduce", 32 << 20, 2)["algo"], row(m, "all_reduce", 32 << 20, 2)["proto"]) == ("tree", "LL128")
    assert (row(m, "all_reduce", GIB, 2)["algo"], row(m, "all_reduce", GIB, 2)["proto"]) == ("tree", "Simple")
    # Forced, NVLS-tree is NIC-bound as before: 4 heads x 25 GB/s each way carry a quarter of the buffer each.
    assert row(m, "all_reduce", GIB, 2, algo="nvlstree")["busbw"] < 100 * 30 / 16
