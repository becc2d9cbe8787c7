"""Held-out check of `contend nccl-tests` (issue 25, round 22): public nccl-tests tables the project was never tuned
on, found by round 22's tester after every default was set, each run on its machine as the source states it with
maxmin's shipped defaults. Nothing is fitted here.

Scored as bench/nccl_validation.py scores its set, with its own helpers (`within`, `saturation_check`,
`measured_rows`): each row of at least 1 MiB (out-of-place busbw) within ±15%, the saturation size (first size at 90%
of the largest busbw) within one doubling where a table starts at or below 1 MiB, a stated plateau against the largest
busbw predicted over the sizes its source names. Each measured number and NCCL setting is read from its stored source
under bench/validation/data/heldout (PROVENANCE.txt says where each comes from); the script refuses to run if a quoted
number or setting is not there.

Which tables count is the validation's inclusion rule (docs/validation.md, round 9 second part; its clauses as round 16
numbers them), applied unchanged: a table that fails a clause is printed with its rows and its own score, and left out
of the total with the clause named.

Round 23's tester added eleven more sources (ROUND23 below), found the same way after round 22's fixes; round 24's
added six more (ROUND24 and PLATEAUS24: eighteen tables and two stated plateaus); round 25's three more (ROUND25: four
tables). The script prints each round's set and the totals over each, over rounds 22 and 23, over 22 to 24 and over all
four.

Usage: python bench/nccl_heldout.py   (prints the blocks of docs/validation.md, "Held out (round 22)", "(round 23)",
"(round 24)" and "(round 25)")
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from nccl_validation import measured_rows, nccl_version, quoted, require, saturation_check, within

from contend import api

HELDOUT = Path(__file__).parent / "validation" / "data" / "heldout"
MACHINES = Path(__file__).parent / "validation" / "machines"

# The validation's inclusion rule (docs/validation.md, round 16's numbering).
CLAUSES = {
    1: "a public nccl-tests table, its *_perf rows as printed",
    2: "its machine a preset or a machine file from public facts",
    3: "at least four rows of >= 1 MiB",
    4: "the collective stated, the NCCL settings stated or NCCL's defaults",
    5: "the NIC rate stated where the table spans nodes",
}


@dataclass(frozen=True)
class Table:
    """A held-out nccl-tests table: `request` is contend.nccl_tests' keywords (the op among them), `settings` the
    quotes (file, text) that give each setting the request carries, `left_out` the clauses it fails and why."""

    label: str
    machine: str
    request: dict
    file: str
    settings: list[tuple[str, str]] = field(default_factory=list)
    left_out: tuple[tuple[int, ...], str] | None = None


@dataclass(frozen=True)
class Plateau:
    """A source's statement of a plateau: `text` quotes it, `measured` is the busbw it gives (GB/s)."""

    label: str
    machine: str
    request: dict
    file: str
    text: str
    measured: float


# The NCCL release each table names, and the restated release it runs under (nccl_validation.VERSIONS' form). Tables
# naming none run under the default (2.30).
VERSIONS = {
    "a100-docker-all_reduce-g2.txt": ("2.20", "a100-docker-all_reduce-g2.txt", "NCCL version 2.20.5+cuda12.4"),
    "a100-docker-all_reduce-g4.txt": ("2.20", "a100-docker-all_reduce-g4.txt", "NCCL version 2.20.5+cuda12.4"),
    "a100-docker-sendrecv-g2.txt": ("2.20", "a100-docker-sendrecv-g2.txt", "NCCL version 2.20.5+cuda12.4"),
    "alps-gh200-2x1-sarus.txt": ("2.30", "alps-gh200-2x1-sarus.txt", "nccl-library=23007"),
    "b200-2node-gke-a4-all_gather.txt": ("2.26", "b200-2node-gke-a4-all_gather.txt", "NCCL version 2.26.6+cuda12.8"),
    "h200-2node-oci-bm-gpu-h200-8.txt": ("2.27", "h200-2node-oci-bm-gpu-h200-8.txt", "NCCL version 2.27.5+cuda12.8"),
    "h800x8-nf5688m7-broadcast.txt": ("2.18", "h800x8-nf5688m7-broadcast.txt", "NCCL version 2.18.3+cuda12.2"),
    # NCCL 2.4.8 is older than any release contend models: it runs under the oldest, 2.18 (the stated
    # NCCL_TREE_THRESHOLD=0 is 2.4's way of ruling out the tree: the request gives NCCL_ALGO=Ring).
    "v100-2node-p3dn-aws-efa.txt": ("2.18", "v100-2node-p3dn-aws-efa.txt", "NCCL version 2.4.8+cuda10.0"),
    "a100-2node-p4d-aws-efa.txt": ("2.23", "a100-2node-p4d-aws-efa.txt", "NCCL version 2.23.4+cuda12.5"),
    "rtx5090x4-genoa-nccl-tests-287.txt": ("2.26", "rtx5090x4-genoa-nccl-tests-287.txt",
                                           "NCCL 2.26.2 has been released"),
    "rtx5090x8-turin-p2p-all_reduce.txt": ("2.29", "rtx5090x8-turin-p2p-all_reduce.txt", "nccl-library=22907"),
    "b200x2-gke-a4-dranet-all_gather.txt": ("2.26", "b200x2-gke-a4-dranet-all_gather.txt",
                                            "NCCL version 2.26.6+cuda12.8"),
    # Built from NCCL's v2.17.1-1 tag, older than any release contend models: it runs under the oldest, 2.18.
    "a100-2node-p4de-aws-hpc-tutorials.txt": ("2.18", "a100-2node-p4de-aws-hpc-tutorials.txt",
                                              "git clone -b v2.17.1-1 https://github.com/NVIDIA/nccl.git"),
    "h100-2node-xe9680-nccl-tests-309.txt": ("2.26", "h100-2node-xe9680-nccl-tests-309.txt",
                                             "NCCL version 2.26.2+cuda12.8"),
    # A 2019-09 post: nccl-tests before 2.0 (no "agg iters" in its header), NCCL 2.4 or older; the oldest modelled.
    "v100x8-cube-mesh-2019-all_reduce.txt": ("2.18", "v100x8-cube-mesh-2019-all_reduce.txt",
                                             "date: 2019-09-26 12:25:39"),
    "gh200-2x4-olivia-all_reduce.txt": ("2.30", "gh200-2x4-olivia-all_reduce.txt", "nccl-library=23004"),
    "a100pcie-2x1-r7525-hdr-gdr-sys-nccl-tests-293.txt": ("2.21", "a100pcie-2x1-r7525-hdr-gdr-sys-nccl-tests-293.txt",
                                                          "NCCL version 2.21.5+cuda12.4"),
    "a100pcie-2x1-r7525-hdr-nps4-nccl-tests-293.txt": ("2.21", "a100pcie-2x1-r7525-hdr-nps4-nccl-tests-293.txt",
                                                       "NCCL version 2.21.5+cuda12.4"),
}

ALPS = str(MACHINES / "alps-gh200.yaml")
TABLES = [
    Table("2 x H100 SXM of a DigitalOcean HGX H100 node, all_reduce, one process (-g 2)", "hgx-h100",
          dict(op="all_reduce", min_bytes="1K", max_bytes="1G", ngpus=2), "h100x2-digitalocean.txt",
          [("h100x2-digitalocean.txt", "# nThread 1 nGpus 2 minBytes 1024 maxBytes 1073741824")]),
    # CSCS's NCCL environment, which the container engine's NCCL hook sets (NCCL_PROTO=^LL128 among it).
    Table("2 x 4 GH200 (CSCS Alps, a Slingshot-11 NIC per GH200), all_reduce, CSCS's NCCL settings", ALPS,
          dict(op="all_reduce", min_bytes="8", max_bytes="128M", nodes=2, proto="^LL128"), "alps-gh200-2x4-cscs.txt",
          [("alps-gh200-2x4-cscs.txt", "--ntasks-per-node=4 --environment=nccl-test-ompi"),
           ("alps-cscs-nccl-hook.txt", "While the container engine sets these automatically when using the NCCL hook"),
           ("alps-cscs-nccl-hook.txt", 'com.hooks.aws_ofi_nccl.enabled = "true"'),
           ("alps-cscs-nccl-env.txt", "export NCCL_PROTO=^LL128")]),
    Table("2 x 1 GH200 (CSCS Alps, one GPU a node), all_reduce, NCCL 2.30.7", ALPS,
          dict(op="all_reduce", min_bytes="1M", max_bytes="128M", nodes=2, gpus=["GPU0"]), "alps-gh200-2x1-sarus.txt",
          [("alps-gh200-2x1-sarus.txt", "#  Rank  1 Group  0 Pid  24926 on  nid007109 device  0")]),
    Table("2 x 8 B200 (GKE A4, 8 x 400 Gb/s RoCE a node, Google's gIB plugin), all_gather, NCCL 2.26.6", "hgx-b200",
          dict(op="all_gather", min_bytes="1K", max_bytes="8G", nodes=2), "b200-2node-gke-a4-all_gather.txt",
          [("b200-2node-gke-a4-all_gather.txt", "run_nccl_tests.sh -t all_gather -b 1K -e 8G")],
          ((4,), "gIB's set_nccl_env.sh points NCCL at a tuner configuration (tuner_config_a4.txtpb) that is not "
                 "public and sets no NCCL_ALGO/NCCL_PROTO: every row's algorithm, protocol and channels are the "
                 "tuner's, neither stated nor NCCL's defaults")),
    Table("2 x A100-SXM4-80GB of an NVSwitch node (a docker container), all_reduce, one process (-g 2)", "dgx-a100",
          dict(op="all_reduce", min_bytes="128M", max_bytes="512M", ngpus=2), "a100-docker-all_reduce-g2.txt",
          [("a100-docker-all_reduce-g2.txt", "all_reduce_perf -b 128M -e 512M -f 2 -g 2")],
          ((3,), "three rows of >= 1 MiB (128-512 MiB)")),
    Table("4 x A100-SXM4-80GB of the same container, all_reduce, one process (-g 4)", "dgx-a100",
          dict(op="all_reduce", min_bytes="128M", max_bytes="512M", ngpus=4), "a100-docker-all_reduce-g4.txt",
          [("a100-docker-all_reduce-g4.txt", "all_reduce_perf -b 128M -e 512M -f 2 -g 4")],
          ((3,), "three rows of >= 1 MiB (128-512 MiB)")),
    Table("2 x A100-SXM4-80GB of the same container, sendrecv, one process (-g 2)", "dgx-a100",
          dict(op="sendrecv", min_bytes="128M", max_bytes="512M", ngpus=2), "a100-docker-sendrecv-g2.txt",
          [("a100-docker-sendrecv-g2.txt", "sendrecv_perf -b 128M -e 512M -f 2 -g 2")],
          ((3,), "three rows of >= 1 MiB (128-512 MiB)")),
    Table("2 x 8 H200 (8 x 400 Gb/s RoCE a node; NVIDIA/nccl-tests 256, bare metal), all_reduce", "hgx-h200",
          dict(op="all_reduce", min_bytes="1G", max_bytes="16G", factor=3, nodes=2), "h200-2node-nccl-tests-256.txt",
          [("h200-2node-nccl-tests-256.txt", "mpirun -np 16 -H 20.0.8.1:8,20.0.8.2:8")],
          ((3,), "three rows (1, 3, 9 GiB)")),
    Table("2 x Tesla T4 of a Kaggle VM (no peer access: SHM), all_reduce, one process (-g 2)",
          str(MACHINES / "kaggle-t4x2.yaml"), dict(op="all_reduce", min_bytes="8", max_bytes="128M", ngpus=2),
          "t4x2-kaggle.txt", [],
          ((2, 3), "the VM hides the PCIe tree the answer turns on (kaggle-t4x2-sw.yaml is the other reading), and "
                   "the excerpt has two rows of >= 1 MiB")),
    Table("4 x A100 80GB PCIe (Azure NC96ads_A100_v4, NV12 pairs), all_gather 32 MiB, one process (-g 4)",
          str(MACHINES / "azure-nc96ads-a100-v4.yaml"),
          dict(op="all_gather", min_bytes="32M", max_bytes="32M", ngpus=4), "a100pcie-x4-azure-nc96.txt",
          [("a100pcie-x4-azure-nc96.txt", "# nThread 1 nGpus 4 minBytes 33554432 maxBytes 33554432")],
          ((3,), "one row")),
]

PLATEAUS = [
    Plateau("8 x H100 SXM (NVSwitch), all_gather plateau (NVIDIA/nccl-tests 326, confirmed by its maintainer)",
            "hgx-h100", dict(op="all_gather", min_bytes="128M", max_bytes="16384M", ngpus=8),
            "h100x8-nccl-tests-326.txt", "the bandwidth is saturated at ~360 GB/s for busbw", 360.0),
]


# Round 23's tester's sources (bench/validation/data/PROVENANCE.txt, "twenty-third round").
GIB = ("gIB's set_nccl_env.sh, which the pod sources, points NCCL at a tuner configuration (tuner_config_a4.txtpb) "
       "that is not public and sets no NCCL_ALGO/NCCL_PROTO: each row's algorithm, protocol and channels are the "
       "tuner's")
ROUND23 = [
    Table("2 x 8 H200 (OCI BM.GPU.H200.8, 8 x 400 Gb/s RoCE a node), all_reduce, NCCL 2.27.5", "hgx-h200",
          dict(op="all_reduce", min_bytes="1G", max_bytes="16G", nodes=2), "h200-2node-oci-bm-gpu-h200-8.txt",
          [("h200-2node-oci-bm-gpu-h200-8.txt", "Running /opt/oci-hpc/nccl-test/build/all_reduce_perf test on 2 nodes"),
           ("oci-hpc-nccl-run-allreduce-h100-200-sbatch.txt", 'var_NCCL_IB_HCA="=mlx5_0,mlx5_3,mlx5_4,mlx5_5,mlx5_6'),
           ("oci-hpc-nccl-run-allreduce-h100-200-sbatch.txt", "-b 1G -e 16G -f 2 -g 1 -n 50")]),
    Table("8 x H800 (Inspur NF5688M7, NVSwitch), broadcast, one process (-g 8), NCCL 2.18.3",
          str(MACHINES / "h800x8.yaml"), dict(op="broadcast", min_bytes="4", max_bytes="2G", ngpus=8, iters=100),
          "h800x8-nf5688m7-broadcast.txt",
          [("h800x8-nf5688m7-broadcast.txt", "# nThread 1 nGpus 8 minBytes 4 maxBytes 2147483648"),
           ("h800x8-nf5688m7-broadcast.txt", "warmup iters: 50 iters: 100")]),
    Table("8 x H20 (NVSwitch; NVIDIA/nccl-tests 306), all_reduce, one process (-g 8)", str(MACHINES / "h20x8.yaml"),
          dict(op="all_reduce", min_bytes="1M", max_bytes="2G", ngpus=8), "h20x8-nccl-tests-306.txt",
          [("h20x8-nccl-tests-306.txt", "# nThread 1 nGpus 8 minBytes 1048576 maxBytes 2147483648")]),
    Table("4 x A100 40GB PCIe (sm02: two sockets, no NVLink), all_reduce, one process (-g 4)",
          str(MACHINES / "a100pcie-x4-sm02.yaml"), dict(op="all_reduce", min_bytes="8", max_bytes="128M", ngpus=4),
          "a100pcie-x4-sm02-all_reduce.txt",
          [("a100pcie-x4-sm02-all_reduce.txt", "$ all_reduce_perf -b 8 -e 128M -f 2 -g 4")]),
    Table("2 x 8 V100 (AWS p3dn.24xlarge, one 100 Gb/s EFA a node), all_reduce, NCCL 2.4.8, NCCL_TREE_THRESHOLD=0",
          str(MACHINES / "p3dn-24xl.yaml"),
          dict(op="all_reduce", min_bytes="8", max_bytes="1G", nodes=2, algo="Ring", env={"NCCL_NET_GDR_LEVEL": "LOC"}),
          "v100-2node-p3dn-aws-efa.txt",
          [("v100-2node-p3dn-aws-efa-command.txt", "-x NCCL_TREE_THRESHOLD=0"),
           ("v100-2node-p3dn-aws-efa-command.txt", "-n 16 -N 8"),
           ("v100-2node-p3dn-aws-efa.txt", "NET/OFI Forcing AWS OFI ndev 4")]),
    Table("2 x 8 A100-SXM4-40GB (AWS p4d.24xlarge, 4 x 100 Gb/s EFA a node), all_reduce, NCCL 2.23.4",
          str(MACHINES / "p4d-24xl.yaml"), dict(op="all_reduce", min_bytes="8", max_bytes="1G", nodes=2),
          "a100-2node-p4d-aws-efa.txt",
          [("a100-2node-p4d-aws-efa-command.txt", "mpirun -n 16 -N 8"),
           ("a100-2node-p4d-aws-efa.txt", "Running on p4d.24xlarge platform")]),
    Table("4 x RTX 5090 (GENOA-01, no peer access; NVIDIA/nccl-tests 287), all_reduce, one process (-g 4), NCCL 2.26.2",
          str(MACHINES / "rtx5090x4-genoa.yaml"), dict(op="all_reduce", min_bytes="8", max_bytes="128M", ngpus=4),
          "rtx5090x4-genoa-nccl-tests-287.txt",
          [("rtx5090x4-genoa-nccl-tests-287.txt", "sudo ./build/all_reduce_perf -b 8 -e 128M -f 2 -g 4")]),
    Table("8 x RTX 5090 (2 x EPYC 9575F, P2P-enabled driver), all_reduce, one process (-g 8), NCCL 2.29.7, "
          "NCCL_P2P_LEVEL=SYS", str(MACHINES / "rtx5090x8-turin-p2p.yaml"),
          dict(op="all_reduce", min_bytes="8", max_bytes="128M", ngpus=8, env={"NCCL_P2P_LEVEL": "SYS"}),
          "rtx5090x8-turin-p2p-all_reduce.txt",
          [("rtx5090x8-turin-p2p-all_reduce.txt", "NCCL_P2P_LEVEL=SYS ./build/all_reduce_perf -b 8 -e 128M -f 2")]),
    Table("2 x 2 V100 (NIG Apollo 6500, one 100 Gb/s EDR a node), alltoall, a process per node (-g 2)",
          str(MACHINES / "nig-apollo6500-v100x4.yaml"),
          dict(op="alltoall", min_bytes="2", max_bytes="128M", ngpus=2, nodes=2), "nig-v100-2node-alltoall.txt",
          [("nig-v100-2node-alltoall.txt", "mpirun ./alltoall_perf -b 2 -e 128M -f 2 -g 2"),
           ("nig-v100-2node-alltoall.txt", "#$ -pe mpi 2"),
           ("nig-apollo6500-hardware.txt", "InfiniBand 4xEDR")]),
    Table("2 x B200 of a GKE A4 node (gIB image), all_gather, a process per GPU, NCCL 2.26.6", "hgx-b200",
          dict(op="all_gather", min_bytes="1K", max_bytes="8G", gpus=["GPU0", "GPU1"]),
          "b200x2-gke-a4-dranet-all_gather.txt",
          [("b200x2-gke-a4-dranet-all_gather.txt", "run_nccl_tests.sh   -t all_gather -b 1K -e 8G   nccl-gib-test-0")],
          ((4,), GIB)),
]


# Round 24's tester's sources (bench/validation/data/PROVENANCE.txt, "twenty-fourth round"). NVIDIA/nccl-tests issue
# 309's second poster (gj-aion) runs 2, 4 and 8 of the same 8 nodes of 8 H100 on "IB 400G" with "the 400 GB/s IB
# limit" a node: hgx-h100's 8 x 400 Gb/s NICs. NCCL_MIN_CTAS is passed as the run set it: it floors the ring count
# beside NCCL_MIN_NCHANNELS (src/graph/connect.cc, ncclTopoPostset: max(ncclMinNchannels(), comm->config.minCTAs)) and,
# unlike it, NVLS's and NVLS-tree's count too (src/transport/nvls.cc: max(minCTAs, min(maxCTAs, nvlsChannels))).
GJ = ("h100-4node-gj-aion-nccl-tests-309.txt", "yes, we are.")
ROUND24 = [
    Table("2 x 8 A100-SXM4-80GB (AWS p4de.24xlarge, 4 x 100 Gb/s EFA a node; aws-hpc-tutorials), all_reduce, "
          "NCCL 2.17.1, NCCL_PROTO=simple", str(MACHINES / "p4de-24xl.yaml"),
          dict(op="all_reduce", min_bytes="8", max_bytes="1G", nodes=2, proto="Simple", iters=100),
          "a100-2node-p4de-aws-hpc-tutorials.txt",
          [("a100-2node-p4de-aws-hpc-tutorials.txt", "export NCCL_PROTO=simple"),
           ("a100-2node-p4de-aws-hpc-tutorials.txt", "all_reduce_perf -b 8 -e 9G -f 2 -g 1 -c 1 -n 100"),
           ("a100-2node-p4de-aws-hpc-tutorials.txt", "#SBATCH -N 2"),
           ("a100-2node-p4de-aws-hpc-tutorials.txt", "Selected Provider is efa (found 4 nics)")]),
    Table("2 x 8 H100 (Dell XE9680, 8 x 400 Gb/s CX-7 IB a node; NVIDIA/nccl-tests 309), all_reduce, NCCL 2.26.2, "
          "NCCL_NET_GDR_LEVEL=1, NCCL_P2P_LEVEL=NVL", "hgx-h100",
          dict(op="all_reduce", min_bytes="8", max_bytes="16G", nodes=2,
               env={"NCCL_NET_GDR_LEVEL": "1", "NCCL_P2P_LEVEL": "NVL"}),
          "h100-2node-xe9680-nccl-tests-309.txt",
          [("h100-2node-xe9680-nccl-tests-309.txt", "Server: Dell HGX XE9680 with 8xH100 and 8x CX-7 IB 400Gbps"),
           ("h100-2node-xe9680-nccl-tests-309.txt", "--np 16 -H bm-h100-01:8,bm-h100-02:8"),
           ("h100-2node-xe9680-nccl-tests-309.txt", "-x NCCL_NET_GDR_LEVEL=1"),
           ("h100-2node-xe9680-nccl-tests-309.txt", "-x NCCL_P2P_LEVEL=NVL")]),
    Table("2 x 8 H100 (a cluster on 400 Gb/s IB; NVIDIA/nccl-tests 309, gj-aion), all_reduce", "hgx-h100",
          dict(op="all_reduce", min_bytes="1M", max_bytes="8G", nodes=2), "h100-2node-gj-aion-nccl-tests-309.txt",
          [GJ, ("h100-2node-gj-aion-nccl-tests-309.txt", "when we do the same for 2 out of 8 nodes")]),
    Table("2 x 8 H100 (the same cluster), all_reduce, NCCL_ALGO=Ring, NCCL_MIN_CTAS=24", "hgx-h100",
          dict(op="all_reduce", min_bytes="1M", max_bytes="8G", nodes=2, algo="Ring",
               env={"NCCL_MIN_CTAS": "24"}), "h100-2node-gj-aion-ring-nccl-tests-309.txt",
          [GJ, ("h100-2node-gj-aion-ring-nccl-tests-309.txt", "-x NCCL_ALGO=Ring -x NCCL_MIN_CTAS=24")]),
    Table("4 x 8 H100 (the same cluster), all_reduce", "hgx-h100",
          dict(op="all_reduce", min_bytes="1M", max_bytes="8G", nodes=4), "h100-4node-gj-aion-nccl-tests-309.txt",
          [GJ, ("h100-4node-gj-aion-nccl-tests-309.txt", "mpirun -np 32 -N 8")]),
    Table("8 x 8 H100 (the same cluster), all_reduce", "hgx-h100",
          dict(op="all_reduce", min_bytes="1M", max_bytes="8G", nodes=8), "h100-8node-gj-aion-nccl-tests-309.txt",
          [GJ, ("h100-8node-gj-aion-nccl-tests-309.txt", "our 8 node cluster achieves")]),
    Table("8 x 8 H100 (the same cluster), all_reduce, NCCL_MIN_CTAS=24", "hgx-h100",
          dict(op="all_reduce", min_bytes="1M", max_bytes="8G", nodes=8, env={"NCCL_MIN_CTAS": "24"}),
          "h100-8node-gj-aion-tuned-nccl-tests-309.txt",
          [GJ, ("h100-8node-gj-aion-tuned-nccl-tests-309.txt", "mpirun -np 64 -N 8 --hostfile /tmp/8hosts.txt -x "
                                                                 "LD_LIBRARY_PATH -x NCCL_MIN_CTAS=24")]),
]
# The Vultr HGX B200 report (8 x 400 Gb/s NDR a node; no release, command or NCCL setting printed: the defaults).
VULTR = ("b200x8-vultr-all_reduce.txt", "8× NDR")
for _op, _dtype in (("all_reduce", "float"), ("all_gather", "float"), ("reduce_scatter", "float"),
                    ("alltoall", "uint8"), ("sendrecv", "uint8")):
    for _nodes in (1, 2):
        _file = f"b200x8-vultr-{_op}.txt" if _nodes == 1 else f"b200-2node-vultr-{_op}.txt"
        _ranks = "8" if _nodes == 1 else "16"
        ROUND24.append(Table(
            f"{'8' if _nodes == 1 else '2 x 8'} B200 (Vultr HGX B200, 8 x 400 Gb/s NDR a node), {_op}, {_dtype}",
            "hgx-b200", dict(op=_op, min_bytes="1M", max_bytes="16G", nodes=_nodes, dtype=_dtype), _file,
            [VULTR, (_file, f"**{_op}  ranks={_ranks}  ({'intra' if _nodes == 1 else 'inter'}-node)**")]))
ROUND24.append(Table(
    "8 x V100-SXM2-16GB (hybrid cube mesh as DGX-1's; a 2019 post), all_reduce, one process (-g 8)",
    str(MACHINES / "dgx1-v100.yaml"), dict(op="all_reduce", min_bytes="8", max_bytes="128M", ngpus=8),
    "v100x8-cube-mesh-2019-all_reduce.txt",
    [("v100x8-cube-mesh-2019-all_reduce.txt", "./build/all_reduce_perf -b 8 -e 128M -f 2 -g 8"),
     ("v100x8-cube-mesh-2019-all_reduce.txt", "GPU0\t X \tNV1\tNV1\tNV2\tSYS\tSYS\tNV2\tSYS\t0-95")]))

PLATEAUS24 = [
    Plateau("8 x H100 (Dell XE9680, one node), all_reduce plateau (NVIDIA/nccl-tests 309), NCCL 2.26.2", "hgx-h100",
            dict(op="all_reduce", min_bytes="8", max_bytes="16G", nccl_version="2.26"),
            "h100-2node-xe9680-nccl-tests-309.txt", "get up to 482.12 GB/s out-of-place Bus-BW", 482.12),
    Plateau("8 x H100 (the same node), all_reduce plateau with NCCL_NVLS_ENABLE=0 (NCCL_ALGO=Ring,Tree)", "hgx-h100",
            dict(op="all_reduce", min_bytes="8", max_bytes="16G", algo="Ring,Tree", nccl_version="2.26"),
            "h100-2node-xe9680-nccl-tests-309.txt", "Once I disable NVLS, i got 368.76 GB/s", 368.76),
]

# Round 25's tester's sources (bench/validation/data/PROVENANCE.txt, "twenty-fifth round"). Olivia (Sigma2) is an HPE
# Cray EX system of 4 GH200 a node on Slingshot, as CSCS's Alps: alps-gh200.yaml [ASSUMPTION: Olivia's GH200 nodes are
# the same EX254n blade, a 200 Gb/s Slingshot NIC per GH200; the page names four NICs, hsn0-hsn3]. Its NCCL modules
# set NCCL_CROSS_NIC=1 (contend refused it until round 25's crossnic25, when the table ran at NCCL's default 2) and
# NCCL_NET_GDR_LEVEL=PHB: the table runs with both. NVIDIA/nccl-tests 293's two runs are one GPU on each of two Dell
# R7525, NIC and GPU on different sockets (topo -m: SYS); NCCL_SHM_DISABLE (one GPU a node: no SHM path) is not read.
OLIVIA = ("olivia-hardware.txt", "76 nodes with 304 NVIDIA GH200 superchips")
R7525 = str(MACHINES / "r7525-a100pcie-hdr.yaml")
ROUND25 = [
    Table("2 x 4 GH200 (Sigma2 Olivia, HPE Slingshot), all_reduce int8, NCCL 2.30.4, the modules' NCCL settings "
          "(NCCL_CROSS_NIC=1, NCCL_NET_GDR_LEVEL=PHB)", ALPS,
          dict(op="all_reduce", min_bytes="1", max_bytes="128M", nodes=2, dtype="int8",
               env={"NCCL_NET_GDR_LEVEL": "PHB", "NCCL_CROSS_NIC": "1"}), "gh200-2x4-olivia-all_reduce.txt",
          [OLIVIA, ("olivia-hardware.txt", "200 Gbit/s simplex bandwidth"),
           ("gh200-2x4-olivia-all_reduce.txt", "--gpus-per-node=4 --ntasks-per-node=4"),
           ("gh200-2x4-olivia-all_reduce.txt", "sbatch --nodes=2 --partition=accel"),
           ("gh200-2x4-olivia-all_reduce.txt", "module load NCCL/2.30.4-GCCcore-14.3.0-CUDA-13.0.0"),
           ("olivia-nccl-env.txt", "export NCCL_NET_GDR_LEVEL=PHB"),
           ("olivia-nccl-env.txt", "export NCCL_CROSS_NIC=1"),
           ("olivia-nccl-env.txt", "export NCCL_SOCKET_IFNAME=hsn0,hsn1,hsn2,hsn3")]),
    Table("2 x 4 GH200 (CSCS santis, Alps; nccl-tests 2.16.4 CXI image), all_reduce, defaults", ALPS,
          dict(op="all_reduce", min_bytes="8", max_bytes="128M", nodes=2), "gh200-2x4-santis-cxi-all_reduce.txt",
          [("gh200-2x4-santis-cxi-all_reduce.txt", "srun -N2 --ntasks-per-node=4 --mpi=pmix"),
           ("gh200-2x4-santis-cxi-all_reduce.txt", "does not require hooks to inject a custom CXI stack")]),
    Table("2 x 1 A100 PCIe (Dell R7525, one HDR IB a node on the other socket; NVIDIA/nccl-tests 293), all_reduce, "
          "NCCL 2.21.5, NCCL_NET_GDR_LEVEL=SYS (NPS=1)", R7525,
          dict(op="all_reduce", min_bytes="8", max_bytes="1G", nodes=2, gpus=["GPU0"],
               env={"NCCL_NET_GDR_LEVEL": "SYS"}), "a100pcie-2x1-r7525-hdr-gdr-sys-nccl-tests-293.txt",
          [("a100pcie-2x1-r7525-hdr-gdr-sys-nccl-tests-293.txt", "-np 2 -H 192.168.160.111:1,192.168.160.112:1"),
           ("a100pcie-2x1-r7525-hdr-gdr-sys-nccl-tests-293.txt", "-x NCCL_NET_GDR_LEVEL=SYS"),
           ("a100pcie-2x1-r7525-hdr-gdr-sys-nccl-tests-293.txt", "Compute Network : ConnectX6 HDR Infiniband")]),
    Table("2 x 1 A100 PCIe (the same pair), all_reduce, NCCL 2.21.5, NCCL_NET_GDR_LEVEL=2 (PXB: no GPUDirect "
          "RDMA across the sockets), after NPS=4", R7525,
          dict(op="all_reduce", min_bytes="8", max_bytes="1G", nodes=2, gpus=["GPU0"],
               env={"NCCL_NET_GDR_LEVEL": "PXB"}), "a100pcie-2x1-r7525-hdr-nps4-nccl-tests-293.txt",
          [("a100pcie-2x1-r7525-hdr-nps4-nccl-tests-293.txt", "-x NCCL_NET_GDR_LEVEL=2"),
           ("a100pcie-2x1-r7525-hdr-nps4-nccl-tests-293.txt", "NCCL_NET_GDR_LEVEL set by environment to PXB"),
           ("a100pcie-2x1-r7525-hdr-nps4-nccl-tests-293.txt", "When I set NUMA Nodes Per Socket to 4")]),
]


def command(machine: str, request: dict) -> str:
    """The `contend nccl-tests` command line of a request (machine files by their path from the repository root)."""
    flags = {"op": "--op", "min_bytes": "-b", "max_bytes": "-e", "factor": "-f", "ngpus": "-g", "nodes": "--nodes",
             "algo": "--algo", "proto": "--proto", "nccl_version": "--nccl-version", "iters": "-n", "dtype": "-d"}
    name = str(Path(machine).relative_to(Path(__file__).parent.parent)) if "/" in machine else machine
    words = [f"{k}={v}" for k, v in request.get("env", {}).items()] + ["contend nccl-tests", name]
    for key, value in request.items():
        if key == "env":
            continue
        words += ["--gpus", ",".join(value)] if key == "gpus" else [flags[key], str(value)]
    return " ".join(words)


def score(table: Table) -> tuple[int, int, str]:
    """Prints a table's rows (markdown); returns the rows within ±15%, the rows scored, and the saturation cell."""
    for source, text in table.settings:
        require(source, text, "the table's settings", HELDOUT)
    request = dict(table.request, **nccl_version(table.file, VERSIONS, HELDOUT))
    report = api.nccl_tests(table.machine, **request)
    predicted = {r["size"]: r for r in report["rows"]}
    measured_all = measured_rows(table.file, data=HELDOUT)
    measured = {size: b for size, b in measured_all.items() if size >= 1 << 20}
    print(f"`{command(table.machine, request)}` (NCCL {report['nccl_version']}'s choice)\n")
    print("| size | measured busbw | predicted busbw | algo/proto | error | within ±15% |")
    print("|---|---|---|---|---|---|")
    inside = 0
    for size in sorted(measured):
        row = predicted[size]
        ok = within(row["busbw"], measured[size])
        inside += ok
        cells = [f"{size >> 20} MiB", f"{measured[size]:.2f}", f"{row['busbw']:.2f}", f"{row['algo']}/{row['proto']}",
                 f"{row['busbw'] / measured[size] - 1:+.1%}", "yes" if ok else "no"]
        print("| " + " | ".join(cells) + " |")
    saturation = "-"
    # A saturation size is told only by a table that starts at or below 1 MiB.
    if any(0 < size <= 1 << 20 for size in measured_all):
        m, p, ratio, ok = saturation_check(measured, {s: predicted[s]["busbw"] for s in measured})
        saturation = f"×{ratio:g} ({'yes' if ok else 'no'})"
        print(f"| saturation (90% of largest) | {m >> 20} MiB | {p >> 20} MiB | | ×{ratio:g} | "
              f"{'yes' if ok else 'no'} (one doubling) |")
    print(f"\n{inside} of {len(measured)} rows within ±15%.\n")
    return inside, len(measured), saturation


def plateau(case: Plateau) -> tuple[int, int, str]:
    """Prints a stated plateau against the largest busbw predicted over the sizes the source names."""
    quoted(case.file, case.text, case.measured, HELDOUT)
    report = api.nccl_tests(case.machine, **case.request)
    top = max(report["rows"], key=lambda r: r["busbw"])
    ok = within(top["busbw"], case.measured)
    print(f"`{command(case.machine, case.request)}` (NCCL {report['nccl_version']}'s choice)\n")
    print("| statement | measured busbw | predicted busbw (largest) | algo/proto | error | within ±15% |")
    print("|---|---|---|---|---|---|")
    print(f"| \"{case.text}\" | {case.measured:g} | {top['busbw']:.2f} | {top['algo']}/{top['proto']} | "
          f"{top['busbw'] / case.measured - 1:+.1%} | {'yes' if ok else 'no'} |")
    print(f"\n{int(ok)} of 1 rows within ±15%.\n")
    return int(ok), 1, "-"


def section(items: list) -> list[tuple]:
    """Prints each table or plateau of a round and the round's summary table; returns the summary rows."""
    summary = []
    for item in items:
        print(f"#### {item.label}\n")
        inside, rows, saturation = plateau(item) if isinstance(item, Plateau) else score(item)
        out = getattr(item, "left_out", None)
        if out:
            clauses, why = out
            print(f"Left out of the total by clause{'s' * (len(clauses) > 1)} {', '.join(map(str, clauses))} "
                  f"({'; '.join(CLAUSES[c] for c in clauses)}): {why}.\n")
        summary.append((item.label, inside, rows, saturation, out))
    print("| table | rows within ±15% | saturation | counted |")
    print("|---|---|---|---|")
    for label, inside, rows, saturation, out in summary:
        counted = "yes" if out is None else f"no (clause{'s' * (len(out[0]) > 1)} {', '.join(map(str, out[0]))})"
        print(f"| {label} | {inside} of {rows} | {saturation} | {counted} |")
    return summary


def totals(summary: list[tuple], what: str) -> None:
    """Prints the rows within ±15% over the counted tables of `summary`, and over every table."""
    counted = [s for s in summary if s[4] is None]
    inside, rows = sum(s[1] for s in counted), sum(s[2] for s in counted)
    every, every_rows = sum(s[1] for s in summary), sum(s[2] for s in summary)
    plateaus = sum(1 for s in counted if s[0] in {p.label for p in PLATEAUS + PLATEAUS24})
    stated = f" and {plateaus} stated plateau{'s' * (plateaus != 1)}." if plateaus else "."
    print(f"\n{what}: {inside} of {rows} rows within ±15% ({inside / rows:.0%}): the {len(counted) - plateaus} "
          f"tables the inclusion rule admits" + stated)
    left = len(summary) - len(counted)
    print(f"With the {left} table{'s' * (left != 1)} it leaves out (shown above): {every} of {every_rows} "
          f"({every / every_rows:.0%}).")


def main() -> None:
    round22 = section(TABLES + PLATEAUS)
    totals(round22, "held out")
    print("\n### Round 23 tables\n")
    round23 = section(ROUND23)
    totals(round23, "held out, round 23's tables alone")
    totals(round22 + round23, "held out, rounds 22 and 23 together")
    print("\n### Round 24 tables\n")
    round24 = section(ROUND24 + PLATEAUS24)
    totals(round24, "held out, round 24's tables alone")
    totals(round22 + round23 + round24, "held out, rounds 22 to 24 together")
    print("\n### Round 25 tables\n")
    round25 = section(ROUND25)
    totals(round25, "held out, round 25's tables alone")
    totals(round22 + round23 + round24 + round25, "held out, rounds 22 to 25 together")


if __name__ == "__main__":
    main()
