"""Single-node answers against figures computed by hand (round 27, qa27; docs/validation.md, "Round 27").

Every expected value comes from the machine file's link rates and the sources' definitions, not from an earlier run
of contend: PCIe GenN x16 after 128b/130b encoding (Gen4 31.508 GB/s a direction) times the project's efficiency
(docs/models.md: eff_pcie4 0.835, duplex_pcie 0.06), NVLink per link from the data sheets (A100 12 x 25, H100 18 x 25,
B200 18 x 50 GB/s) times eff_nvlink*, NCCL's own per-link NVLink figures for its kernels (src/graph/topo.h: SM80 20,
SM90 20.6 GB/s), NCCL 2.30.7's cost model (src/graph/tuning.cc `ncclTopoTuneModel`: baseLatencies, hwLatencies,
llMaxBws, nvlsEfficiency), its ring search speeds (src/graph/search.cc speedArrayIntra, sm90SpeedArrayIntra) and
nccl-tests' busbw factors (src/*.cu `getBw`).
"""

from pathlib import Path

import pytest

from contend import api

GIB = 1 << 30
GEN4 = 16e9 * 128 / 130 * 16 / 8 / 1e9  # 31.508 GB/s a direction
GEN4_EFF = GEN4 * 0.835  # 26.309: eff_pcie4
GEN4_BOTH = GEN4_EFF / 1.06  # 24.820: a GPU link carrying its sends up while its receives come down (duplex_pcie)

# 4 x RTX 6000 Ada (data sheet: PCIe Gen4 x16, no NVLink) behind one Gen4 switch, one Intel socket: every pair PIX.
ADA_SWITCH = Path(__file__).resolve().parents[1] / "crates/contend-core/tests/fixtures/rtx6000ada-x4-sw.yaml"


@pytest.fixture(scope="module")
def ada():
    return str(ADA_SWITCH)


def row(machine, op, size, **kw):
    return api.nccl_tests(machine, op, size, size, 2, env=kw.pop("env", {}), **kw)["rows"][0]


def test_p2p_matrices_are_the_link_rates():
    # p2pBandwidthLatencyTest: one copy alone runs at its narrowest link x efficiency; both ways each direction pays
    # duplex_pcie (1.06) or duplex_nvlink (1.065 for NVLink 3/1); the rest is the copy engine's few us a copy.
    ws = api.p2p("pcie-8gpu-ws")
    assert ws["unidirectional_p2p_gbps"][0][1] == pytest.approx(GEN4_EFF, rel=1e-3)  # same switch, Gen4 x16
    assert ws["bidirectional_p2p_gbps"][0][1] == pytest.approx(2 * GEN4_BOTH, rel=1e-3)
    assert ws["unidirectional_p2p_gbps"][0][4] == pytest.approx(22.0, rel=0.005)  # across the sockets: staged, UPI 22
    assert api.p2p("dgx-a100")["unidirectional_p2p_gbps"][0][1] == pytest.approx(300 * 0.92, rel=0.01)
    assert api.p2p("hgx-h100")["unidirectional_p2p_gbps"][0][1] == pytest.approx(450 * 0.872, rel=0.01)
    assert api.p2p("hgx-b200")["unidirectional_p2p_gbps"][0][1] == pytest.approx(900 * 0.853, rel=0.02)
    p100 = api.p2p("dgx1-p100")
    assert p100["unidirectional_p2p_gbps"][0][1] == pytest.approx(20 * 0.92, rel=1e-3)  # one NVLink 1
    assert p100["bidirectional_p2p_gbps"][0][1] == pytest.approx(2 * 20 * 0.92 / 1.065, rel=1e-3)
    gen3 = 8e9 * 128 / 130 * 16 / 8 / 1e9 * 0.79  # 12.446: GPU0 -> GPU5 is no peer pair, staged over Gen3 x16
    assert p100["unidirectional_p2p_gbps"][0][5] == pytest.approx(gen3, rel=0.005)


def test_small_all_reduce_takes_nccls_latency():
    # Ring/LL on 8 ranks: baseLatencies 6.6 + 2 (n - 1) steps of hwLatencies, NVLink 0.6 or PCI 1.0 by the ring's
    # worst path (tuning.cc `intraHw`); the run adds only its hops (a process per GPU: no one-process floor).
    for machine, step in (("hgx-h100", 0.6), ("dgx-a100", 0.6), ("pcie-8gpu-ws", 1.0)):
        r = row(machine, "all_reduce", 8)
        assert (r["algo"], r["proto"]) == ("ring", "LL")
        assert r["nccl_model_us"] == pytest.approx(6.6 + 14 * step, abs=0.01)
        assert r["nccl_model_us"] < r["time_us"] < r["nccl_model_us"] + 3.5


def test_hgx_h100_all_reduce_moves_from_ring_ll_to_nvls_between_1_and_2_mib():
    # Ring/LL: busBw min(llMaxBws Hopper 141, 12 rings x 30 x 0.5) = 141, algbw 141 x 8/14 = 80.57 GB/s, latency 15.0.
    # NVLS: 8 heads x min(40 x nvlsEfficiency 0.85 x 7/8 x 2, 60) = 476 GB/s bus, algbw 272, latency 25 (hwLatencies).
    # 1 MiB: 15 + 13.01 = 28.01 against 25 + 3.86; 2 MiB: 15 + 26.03 against 25 + 7.71 = 32.71.
    one, two = (row("hgx-h100", "all_reduce", s) for s in (1 << 20, 2 << 20))
    assert (one["algo"], one["proto"]) == ("ring", "LL")
    assert one["nccl_model_us"] == pytest.approx(15.0 + (1 << 20) / 80.571e3, abs=0.02)
    assert two["algo"] == "nvls"
    assert two["nccl_model_us"] == pytest.approx(25.0 + (2 << 20) / 272.0e3, abs=0.02)
    big = row("hgx-h100", "all_reduce", GIB)
    assert big["nccl_model_us"] == pytest.approx(25.0 + GIB / 272.0e3, rel=1e-4)


def test_nvswitch_boxes_move_at_nccls_nvlink_figure():
    # NCCL's kernels at topo.h's per-link figure: H100 18 x 20.6 = 370.8, A100 12 x 20 = 240 GB/s a GPU port.
    # alltoall: a rank sends and receives 7/8 S through its port; broadcast: every port carries S in and out.
    for machine, port in (("hgx-h100", 370.8), ("dgx-a100", 240.0)):
        a2a = row(machine, "alltoall", GIB)
        assert a2a["time_us"] == pytest.approx(7 / 8 * GIB / port / 1e3, rel=0.01)
        bcast = row(machine, "broadcast", GIB)
        assert GIB / port / 1e3 < bcast["time_us"] < 1.015 * GIB / port / 1e3
    # Ring/LL forced: llMaxBws Hopper 141 GB/s of busbw caps the call: 2 (n - 1)/n S / 141.
    ll = row("hgx-h100", "all_reduce", GIB, algo="ring", proto="LL")
    assert ll["time_us"] == pytest.approx(14 / 8 * GIB / 141 / 1e3, rel=0.005)
    # A one-node tree is a chain: each middle GPU's port takes the reduce from its child and the broadcast from its
    # parent, 2 S in (and 2 S out): at least 2 S / 370.8.
    tree = row("hgx-h100", "all_reduce", GIB, algo="tree", proto="Simple")
    assert 2 * GIB / 370.8 / 1e3 < tree["time_us"] < 1.1 * 2 * GIB / 370.8 / 1e3


def test_one_switch_workstation_runs_at_its_gpu_links(ada):
    # Ring search (sm89 speedArrayIntra): PIX paths at NCCL's Gen4 24 GB/s; 2 rings at 12 (24) beat 1 at 20;
    # connectRings doubles them: 4 channels. Each GPU link carries its ring sends up while its receives come down.
    # Simple slices: 2 MiB chunks of 2 slices, each slice paying hwLatencies PCI ring Simple 5.7 us (round 18).
    r = row(ada, "all_reduce", GIB)
    assert (r["algo"], r["proto"], r["channels"]) == ("ring", "Simple", 4)
    loops = GIB // (4 * 4 * (2 << 20))  # 32
    assert r["time_us"] == pytest.approx(1.5 * GIB / GEN4_BOTH / 1e3 + loops * 6 * 2 * 5.7, rel=0.002)
    ag = row(ada, "all_gather", GIB)
    assert ag["time_us"] == pytest.approx(0.75 * GIB / GEN4_BOTH / 1e3 + loops * 3 * 2 * 5.7, rel=0.002)
    for op in ("broadcast", "alltoall", "sendrecv"):  # busbw: S, 3/4 S and S a GPU link each way
        assert row(ada, op, GIB)["busbw"] == pytest.approx(GEN4_BOTH, rel=0.002), op
    # NCCL's broadcast model: busBw 2 x 12, ratio nRanks / nsteps = 1, sameChannels: base 8.4 + one 5.7 step.
    assert row(ada, "broadcast", GIB)["nccl_model_us"] == pytest.approx(8.4 + 5.7 + GIB / 24e3, abs=0.05)


def test_ring_search_speeds_are_the_generations():
    # sm89 has no 11 GB/s speed (speedArrayIntra 20, 18, 15, 12, 10, ...): on pcie-8gpu-ws the socket link (22) takes
    # one ring at 20 (two at 12 need 24). sm90 has 11: with NCCL_P2P_DISABLE=1 hgx-h100's pairs go through the CPUs,
    # and two rings at 11 (22 over the 22 GB/s socket link) beat one at 20.
    ws = api.nccl_tests("pcie-8gpu-ws", "all_reduce", GIB, GIB, 2, env={})["search"]
    assert (len(ws["rings"]), ws["bw_per_channel"], ws["channels"]) == (1, 20.0, 2)
    h = api.nccl_tests("hgx-h100", "broadcast", GIB, GIB, 2, env={"NCCL_P2P_DISABLE": "1"})
    assert (len(h["search"]["rings"]), h["search"]["bw_per_channel"]) == (2, 11.0)
    # broadcast's chain crosses the 22 GB/s socket link once, one way: busbw at it.
    assert h["rows"][0]["busbw"] == pytest.approx(22.0, rel=0.005)
