"""Validation of `contend nccl-tests` (issue 25) against public nccl-tests results on machines whose topology is
known: for each case the measured busbw per size (sizes >= 1 MiB), or the plateau a source states, beside the
prediction of the machine as written (maxmin's defaults), the error, and the share of rows within +-15%. One
constant is fitted, nccl_call_net (what a call across nodes takes beyond NCCL's model, docs/nccl.md "Latency"), on
rows the score does not use; its leave-one-machine-out is printed after the table. Where a source gives a whole
table starting at 1 MiB or below, the size where busbw saturates (first size reaching 90% of the largest) is compared
too, within one doubling.

Every measured number is read from its stored source under bench/validation/data/nccl (PROVENANCE.txt says where each
comes from); a case names the text it quotes, a table the text that gives each NCCL setting it runs with, and the
script refuses to run if the text is not there.

Usage: python bench/nccl_validation.py   (prints the markdown table of docs/validation.md, issue 25)
"""

import math
import os
import re
import statistics
import tempfile
from pathlib import Path

from contend import api

DATA = Path(__file__).parent / "validation" / "data" / "nccl"
MACHINES = Path(__file__).parent / "validation" / "machines"
TOLERANCE = 0.15

# (label, machine, nccl-tests request, source file, quoted text giving the number, measured busbw GB/s)
# A stated plateau is compared with the largest busbw predicted over the sizes the source names.
CASES = [
    ("8 x H100 SXM, NVSwitch, all_reduce (NVLS)", "hgx-h100", dict(min_bytes="1G", max_bytes="8G"),
     "h100-sjeaugey.txt", "peak busBw of ~480GB/s", 480.0),
    ("8 x H100 SXM, NVSwitch, all_reduce, NCCL_ALGO=RING", "hgx-h100",
     dict(min_bytes="1G", max_bytes="8G", algo="ring"), "h100-sjeaugey.txt",
     "effective NVLink bandwidth of 370GB/s", 370.0),
    ("8 x H800 SXM, NVSwitch (8 NVLink 4 links), all_reduce (NVLS)", str(MACHINES / "h800x8.yaml"),
     dict(min_bytes="1G", max_bytes="8G"), "h800-yupatrick22.txt", "allreduce budBW is 215 GB/s", 215.0),
    ("2 x A100 SXM4, NV12, all_reduce", "dgx-a100", dict(min_bytes="1G", max_bytes="8G", gpus=["GPU0", "GPU1"]),
     "a100-pair-arul-lm.txt", "Bus_BW: 208 GBps", 208.0),
]


# Whole tables: (label, machine, nodes, network bandwidth per NIC, nccl-tests request, source file, settings). Rows of
# at least 1 MiB are compared size by size (out-of-place busbw). `settings` are the quotes (file, text) that give each
# NCCL setting the request carries (NCCL_ALGO, NCCL_PROTO, NCCL_BUFFSIZE): the script refuses to run without them.
# Round 17: `ngpus` is nccl-tests' -g where the source ran one process driving several GPUs (its command line or the
# `nThread 1 nGpus N` header, quoted); runs under mpirun (-g 1) and the A100 pair's `-g 1 -t 2` (a thread per GPU)
# leave it unset: a process per GPU.
# aws-ofi-nccl's platform table (src/platform-aws.c): the latency it reports to NCCL on each instance type.
P4DE_LATENCY = ('.name = "p4de.24xlarge",\n\t\t.topology = "p4de-24xl-topo.xml",\n\t\t.default_dup_conns = 0,\n'
                '\t\t.latency = 75.0,')
P5_LATENCY = ('.name = "p5.48xlarge",\n\t\t.topology = "p5.48xl-topo.xml",\n\t\t.default_dup_conns = 0,\n'
              '\t\t.latency = 75.0,')
# Round 19: Google's GPUDirect-TCPXO plugin (A3 Mega) reports 0, as NCCL's own IB transport does (nccl_shim.cc
# GetProperties, every open release v1.0.12-v1.0.17; the open release replaces the closed one the table's image ran).
TCPXO_LATENCY = "  props.maxComms = 65536;\n  props.latency = 0;\n  props.maxRecvs = 1;"
TABLES = [
    ("2 x 8 H100 (GCP A3 Mega: 8 x 200 Gb/s GPUDirect-TCPXO NICs per node), all_reduce, Google's NCCL settings",
     "hgx-h100", 2, "25GB/s", dict(min_bytes="1M", max_bytes="8G", algo="ring,tree", proto="simple",
                                   nccl_buffsize="8MiB", nccl_net_latency="0us"), "a3mega-2node-ztan.txt",
     [("a3mega-image-ztan.txt", "source /var/lib/tcpxo/lib64/nccl-env-profile.sh"),
      ("tcpxo-plugin-properties.txt", TCPXO_LATENCY),
      ("tcpxo-plugin-properties.txt", "drop-in replacements for the previous\n    closed-source releases"),
      ("a3mega-nccl-env-cluster-toolkit.txt", "NCCL_ALGO=Ring,Tree"),
      ("a3mega-nccl-env-cluster-toolkit.txt", "NCCL_PROTO=Simple"),
      ("a3mega-nccl-env-cluster-toolkit.txt", "NCCL_BUFFSIZE=8388608")]),
    ("2 x 8 H100 (8 x 400 Gb/s InfiniBand NICs per node), all_reduce, NCCL_ALGO=Ring", "hgx-h100", 2, "50GB/s",
     dict(min_bytes="512M", max_bytes="8G", algo="ring"), "h100-2node-ib-wutz.txt",
     [("h100-2node-ib-wutz-command.txt", "-x NCCL_ALGO=Ring"), ("h100-2node-ib-wutz-command.txt", "-np 16")]),
    ("2 x 8 A100 SXM4 (OCI BM.GPU4.8: 8 x 2 x 100 Gb/s RoCE per node), all_reduce", str(MACHINES / "bm-gpu4-8.yaml"), 2,
     "25GB/s",
     dict(min_bytes="1M", max_bytes="8G"), "a100-2node-oci-oke.txt",
     [("a100-2node-oci-oke-command.txt", "-np 16 -npernode 8"),
      ("a100-2node-oci-oke-command.txt", "all_reduce_perf -b 8 -f 2 -g 1 -e 8G")]),
    ("2 x 8 H200 (Dell XE9680: 8 x 400 Gb/s Spectrum-X RoCE rails per node), all_reduce", "hgx-h200", 2, "50GB/s",
     dict(min_bytes="1M", max_bytes="16G"), "h200-2node-spx-float.txt",
     [("h200-2node-spx-float.txt", "NCCL version 2.30.4"), ("h200-2node-spx-float.txt", "--datatype float")]),
    ("2 x 8 H200 (Dell XE9680), all_reduce of int8 (NCCL runs no NVLS reduction on 8-bit types)", "hgx-h200", 2,
     "50GB/s", dict(min_bytes="10G", max_bytes="40G", dtype="int8"), "h200-2node-spx-int8.txt",
     [("h200-2node-spx-int8.txt", "NCCL version 2.30.4")]),
    ("4 of 8 A100 SXM4 (DGX A100, NVSwitch), all_reduce", "dgx-a100", 1, None,
     dict(min_bytes="1G", max_bytes="8G", gpus=["GPU4", "GPU5", "GPU6", "GPU7"], ngpus=4),
     "dgx-a100-4gpu-eugenesiow.txt",
     [("dgx-a100-4gpu-eugenesiow.txt", "--gpus='\"device=4,5,6,7\"'"),
      ("dgx-a100-4gpu-eugenesiow.txt", "./build/all_reduce_perf -b 1G -e 10G -f 2 -g 4")]),
    ("2 x A40 joined by an NVLink bridge (NV4), all_reduce", str(MACHINES / "a40x8-nv4.yaml"), 1, None,
     dict(min_bytes="1G", max_bytes="8G", gpus=["GPU0", "GPU1"], ngpus=2), "a40-pair-eugenesiow.txt",
     [("a40-pair-eugenesiow.txt", "CUDA_VISIBLE_DEVICES=0,1 ./build/all_reduce_perf -b 1G -e 10G -f 2 -g 2")]),
    ("8 x A100 SXM4 (NVSwitch), sendrecv", "dgx-a100", 1, None,
     dict(op="sendrecv", min_bytes="128M", max_bytes="1G", ngpus=8), "a100x8-sendrecv-li-plus.txt",
     [("a100x8-sendrecv-li-plus.txt", "./build/sendrecv_perf -b 128M -e 1G -f 2 -g 8")]),
    # Round 9 (second part), by the inclusion rule of docs/validation.md: AWS's own example runs
    # (aws-samples/awsome-distributed-training), EFA through aws-ofi-nccl. Round 11: the latency aws-ofi-nccl reports
    # to NCCL on these instances (its platform table, `nccl_net_latency`), which NCCL's model adds to network steps.
    # Round 12: aws-ofi-nccl sets NCCL_PROTO=simple where the EFA endpoint lacks 128-byte ordered delivery, which it
    # asks for on the send/recv transport (p4de: 8 GPUs on 4 EFA, so not the RDMA one) and a p4d log shows lacking;
    # p5 on RDMA skips the check, so NCCL may run LL128 there. The plugin also sets NCCL_NVLSTREE_MAX_CHUNKSIZE to
    # 512 KiB, which NCCL reads from 2.20.3 (the p5 Slurm run's NVLS-tree chunks; 1.7.3, on EKS, does not set it).
    ("2 x 8 A100 SXM4 (AWS p4de.24xlarge: 4 x 100 Gb/s EFA per node), all_reduce", str(MACHINES / "p4de-24xl.yaml"),
     2, "12.5GB/s", dict(min_bytes="1M", max_bytes="2G", proto="simple", nccl_buffsize="8MiB", nccl_net_latency="75us"),
     "a100-2node-p4de-aws.txt",
     [("a100-2node-p4de-aws.txt", "on 2x p4de.24xlarg"), ("aws-ofi-nccl-platform-latency.txt", P4DE_LATENCY),
      ("aws-nccl-tests-dockerfile.txt", "ARG AWS_OFI_NCCL_VERSION=1.8.1"),
      ("aws-ofi-nccl-proto.txt", "num_accelerators < ofi_ndevices &&"),
      ("aws-ofi-nccl-proto.txt", 'ret = setenv("NCCL_PROTO", "simple", 0);'),
      ("aws-ofi-nccl-proto.txt", "p4d.24xlarge platform"),
      ("aws-ofi-nccl-proto.txt", "SENDRECV_IN_ORDER_ALIGNED_128_BYTES not supported."),
      ("aws-nccl-tests-sbatch.txt", "#SBATCH --ntasks-per-node 8"),
      ("aws-nccl-tests-sbatch.txt", "export NCCL_BUFFSIZE=8388608")]),
    ("2 x 8 H100 (AWS p5.48xlarge: 32 x 100 Gb/s EFA per node, 4 per GPU), all_reduce",
     str(MACHINES / "p5-48xl.yaml"), 2, "50GB/s",
     dict(min_bytes="1M", max_bytes="16G", nccl_buffsize="8MiB", nccl_net_latency="75us",
          nccl_nvlstree_max_chunksize="512KiB"), "h100-2node-p5-aws.txt",
     [("h100-2node-p5-aws.txt", "on 2x p5.48xlarge"), ("aws-ofi-nccl-platform-latency.txt", P5_LATENCY),
      ("aws-nccl-tests-dockerfile.txt", "ARG AWS_OFI_NCCL_VERSION=1.8.1"),
      ("aws-ofi-nccl-proto.txt", "Skipping NCCL_PROTO checks on P5 + RDMA"),
      ("aws-ofi-nccl-nvlstree-chunk.txt", 'ret = setenv("NCCL_NVLSTREE_MAX_CHUNKSIZE", "524288", 0);'),
      ("aws-nccl-tests-sbatch.txt", "#SBATCH --ntasks-per-node 8"),
      ("aws-nccl-tests-sbatch.txt", "export NCCL_BUFFSIZE=8388608"),
      ("aws-ofi-nccl-round-robin.txt", '"ROUND_ROBIN_THRESHOLD", (256 * 1024)')]),
    ("2 x 8 H100 (AWS p5.48xlarge on EKS), all_reduce", str(MACHINES / "p5-48xl.yaml"), 2, "50GB/s",
     dict(min_bytes="64M", max_bytes="2G", nccl_net_latency="75us"), "h100-2node-p5-eks-aws.txt",
     [("h100-2node-p5-eks-aws.txt", "two p5.48xlarge instances"), ("aws-ofi-nccl-platform-latency.txt", P5_LATENCY),
      ("aws-nccl-tests-eks-dockerfile.txt", "ARG AWS_OFI_NCCL_VERSION=v1.7.3-aws"),
      ("h100-2node-p5-eks-aws-command.txt", "- \"16\""),
      ("h100-2node-p5-eks-aws-command.txt", "NCCL_NVLS_ENABLE=1"),
      ("aws-ofi-nccl-round-robin.txt", '"ROUND_ROBIN_THRESHOLD", 8192')]),
    # Round 16, by the same inclusion rule (docs/validation.md, "Round 16"): every table a second, wider search found
    # that meets it. Each names its run as the source printed it; NCCL settings are the defaults unless quoted.
    ("8 x RTX 4090 (2 x EPYC 7542, a root complex each, stock driver: no peer access), all_reduce",
     str(MACHINES / "rtx4090x8-rome.yaml"), 1, None, dict(min_bytes="1M", max_bytes="128M", ngpus=8),
     "rtx4090x8-rome-stock-chlc.txt",
     [("rtx4090x8-rome-stock-chlc.txt", "# ./build/all_reduce_perf -b 8 -e 128M -f 2 -g 8")]),
    ("8 x RTX 4090 (the same box, tinygrad's P2P kernel modules: peer access on), all_reduce",
     str(MACHINES / "rtx4090x8-rome-p2p.yaml"), 1, None, dict(min_bytes="1M", max_bytes="128M", ngpus=8),
     "rtx4090x8-rome-p2p-chlc.txt",
     [("rtx4090x8-rome-p2p-chlc.txt", "nThread 1 nGpus 8 minBytes 8 maxBytes 134217728"),
      ("rtx4090x8-rome-p2p-chlc-connectivity.txt", "     7       1     1     1     1     1     1     1     1")]),
    ("8 x A100 SXM4 80GB (12 NVLinks of 25 GB/s each, one process), all_reduce", "dgx-a100", 1, None,
     dict(min_bytes="1M", max_bytes="4G", ngpus=8), "a100x8-thanos-g8.txt",
     [("a100x8-thanos-g8.txt", "./build/all_reduce_perf -b 8 -e 4G -f 2 -g 8"),
      ("a100x8-thanos-g8.txt", "Link 11: 25 GB/s")]),
    ("8 x A100 SXM4 80GB (the same node, 8 MPI ranks), all_reduce", "dgx-a100", 1, None,
     dict(min_bytes="1M", max_bytes="4G"), "a100x8-thanos-mpirun.txt",
     [("a100x8-thanos-mpirun.txt", "-np 8 -N 8 -host localhost ./build/all_reduce_perf -b 8 -e 4G -f 2 -g 1")]),
    ("8 x A100 SXM4 80GB (another node), all_reduce", "dgx-a100", 1, None,
     dict(min_bytes="1M", max_bytes="128M", ngpus=8), "a100x8-dkh.txt",
     [("a100x8-dkh.txt", "./build/all_reduce_perf -b 8 -e 128M -f 2 -g 8")]),
    ("8 x H100 SXM (HBM3 80GB, one node), all_reduce", "hgx-h100", 1, None,
     dict(min_bytes="128M", max_bytes="4G", ngpus=8), "h100x8-nccl-tests-290.txt",
     [("h100x8-nccl-tests-290.txt", "nThread 1 nGpus 8 minBytes 134217728 maxBytes 4294967296")]),
    ("2 x 8 H100 (OCI BM.GPU.H100.8: 8 x 2 x 200 Gb/s RoCE per node), all_reduce", str(MACHINES / "bm-gpu-h100-8.yaml"),
     2, "50GB/s", dict(min_bytes="1G", max_bytes="16G"), "h100-2node-oci-bm-gpu-h100-8-run.txt",
     [("h100-2node-oci-bm-gpu-h100-8-run.txt", "-n 16 -H inst-xxxxx-h100-ol89:8,inst-yyyyy-h100-ol89:8"),
      ("h100-2node-oci-bm-gpu-h100-8-run.txt", "全16ポートのRDMAインタフェース"),
      ("h100-2node-oci-bm-gpu-h100-8.txt", "**BM.GPU.H100.8**")]),
    ("2 x 8 A100 SXM4 (OCI BM.GPU4.8, another cluster: OCI's tutorial), all_reduce", str(MACHINES / "bm-gpu4-8.yaml"),
     2, "25GB/s", dict(min_bytes="1M", max_bytes="1G"), "a100-2node-oci-ocitutorials.txt",
     [("a100-2node-oci-ocitutorials.txt", "mpirun -n 16 -npernode 8"),
      ("a100-2node-oci-ocitutorials.txt", "inst-edjui-gpu4")]),
]
# Round 16, continued: the five 2-GPU tables of one AutoDL container (2 x RTX 2080 Ti under one PCIe switch, no peer
# access), each collective as the post ran it (`<op>_perf -b 8 -e 1024M -f 2 -g2`), defaults.
TABLES += [
    (f"2 x RTX 2080 Ti (one PCIe Gen3 switch, no peer access: staged through host memory), {op}",
     str(MACHINES / "autodl-2080ti-x2.yaml"), 1, None, dict(op=op, min_bytes="1M", max_bytes="1G", ngpus=2),
     f"autodl-2080ti-x2-{op}.txt",
     [(f"autodl-2080ti-x2-{op}.txt", f"./build/{op}_perf -b 8 -e 1024M -f 2 -g"),
      (f"autodl-2080ti-x2-{op}.txt", "# nThread 1 nGpus 2 minBytes 8"),
      ("autodl-2080ti-x2-topo.txt", " GPU0   X       NS")])
    for op in ("all_reduce", "all_gather", "broadcast", "reduce", "alltoall")
]
# The tables added in round 16: the score is printed for the earlier set and for the widened one.
ROUND16 = {"rtx4090x8-rome-stock-chlc.txt", "rtx4090x8-rome-p2p-chlc.txt", "a100x8-thanos-g8.txt",
           "a100x8-thanos-mpirun.txt", "a100x8-dkh.txt", "h100x8-nccl-tests-290.txt",
           "h100-2node-oci-bm-gpu-h100-8-run.txt", "a100-2node-oci-ocitutorials.txt"} | {
    f"autodl-2080ti-x2-{op}.txt" for op in ("all_reduce", "all_gather", "broadcast", "reduce", "alltoall")}

# Round 12b: aws-ofi-nccl sends a message of at most OFI_NCCL_ROUND_ROBIN_THRESHOLD bytes over one of a GPU's four EFA
# rails (`stripe_threshold` of p5-48xl.yaml's NICs: 256 KiB, v1.7.4-aws onwards). The EKS image's v1.7.3-aws has 8 KiB:
# that table runs on the machine with its NICs' threshold replaced by the quoted default (file, text, value).
STRIPE_THRESHOLD = {
    "h100-2node-p5-eks-aws.txt": ("aws-ofi-nccl-round-robin.txt", '"ROUND_ROBIN_THRESHOLD", 8192', "8KiB"),
}
SCRATCH = tempfile.TemporaryDirectory()


def machine_for(machine: str, file: str) -> str:
    """The table's machine, with its NICs' stripe_threshold as the table's plugin release sets it."""
    if file not in STRIPE_THRESHOLD:
        return machine
    source, text, value = STRIPE_THRESHOLD[file]
    require(source, text, "the stripe threshold")
    body = Path(machine).read_text()
    if "stripe_threshold: 256KiB" not in body:
        raise SystemExit(f"{machine}: no stripe_threshold of 256KiB to replace")
    path = Path(SCRATCH.name) / Path(machine).name
    path.write_text(body.replace("stripe_threshold: 256KiB", f"stripe_threshold: {value}"))
    return str(path)


# The NCCL release each table ran, quoted from its stored source, and the restated release (`nccl_version`, whose cost
# model chooses; crates/contend-core/src/nccl/versions.rs) it runs under. Tables whose source names no release, and
# 2.16.2 (whose tuning.cc is not restated: A40 and A100 pairs), run under the default (2.30). AWS's Slurm runs
# (round 12) under 2.20.3, the release the image their README builds names; its p5 run on EKS (round 12c) under 2.18.5.
# The A100 sendrecv table (round 13) names none, but its file was committed on 2023-10-19 (PROVENANCE.txt), before
# NCCL 2.20.3 (2024-02-13): every release from 2.14 to 2.19 caps one operation's channels on a node (the quoted line,
# which 2.20.3 drops), so it runs under 2.19, the newest release then (2.18 prints the same rows). Round 16: the A100
# node "dkh" under 2.19 (nccl-tests prints nccl-library=21903, 2.19.3), OCI's BM.GPU.H100.8 run under 2.21 (its page
# names NCCL 2.21.5, the NGC container's).
VERSIONS = {
    "a100-2node-p4de-aws.txt": ("2.20", "aws-nccl-tests-dockerfile.txt", "ARG NCCL_VERSION=2.20.3"),
    "h100-2node-p5-aws.txt": ("2.20", "aws-nccl-tests-dockerfile.txt", "ARG NCCL_VERSION=2.20.3"),
    "h100-2node-p5-eks-aws.txt": ("2.18", "aws-nccl-tests-eks-dockerfile.txt", "ARG NCCL_VERSION=2.18.5"),
    "a100-2node-oci-oke.txt": ("2.19", "a100-2node-oci-oke-command.txt", "nccl-2.19.3-1"),
    "a3mega-2node-ztan.txt": ("2.21", "a3mega-image-ztan.txt", "libnccl.so.2.21.5"),
    "h200-2node-spx-float.txt": ("2.30", "h200-2node-spx-float.txt", "NCCL version 2.30.4"),
    "h200-2node-spx-int8.txt": ("2.30", "h200-2node-spx-int8.txt", "NCCL version 2.30.4"),
    "a100x8-dkh.txt": ("2.19", "a100x8-dkh.txt", "nccl-library=21903"),
    "h100-2node-oci-bm-gpu-h100-8-run.txt": ("2.21", "h100-2node-oci-bm-gpu-h100-8.txt", "**NCCL** ： 2.21.5"),
    "a100x8-sendrecv-li-plus.txt": ("2.19", "nccl-p2p-channels.txt",
                                    "while (nChannelsMax*nRanks > comm->p2pnChannels*4 && nChannelsMax > 1)"),
}


def nccl_version(file: str, versions: dict[str, tuple[str, str, str]] = VERSIONS, data: Path = DATA) -> dict[str, str]:
    """The request's nccl_version for a table's source, after checking the stored text names that release."""
    if file not in versions:
        return {}
    version, source, text = versions[file]
    require(source, text, "the table's NCCL release", data)
    return {"nccl_version": version}


def measured_rows(file: str, dtype: str | None = None, time: bool = False, data: Path = DATA) -> dict[int, float]:
    """Size -> out-of-place busbw (or time, us) of an nccl-tests table stored under `data` (the `root` column is
    absent before nccl-tests 2.11), of one datatype's rows where a run covers several."""
    rows, busbw_col = {}, 7
    for line in (data / file).read_text().splitlines():
        # A launcher's tag before each line (srun -l `0: `, mpirun --tag-output `[1,0]<stdout>:`) is not the table's.
        line = re.sub(r"^\s*(\d+: |\[\d+,\d+\]<stdout>:)", "", line).strip()
        if line.startswith("#") and "redop" in line and "busbw" in line:
            busbw_col = 7 if "root" in line else 6
        cols = line.split()
        if len(cols) > busbw_col and cols[0].isdigit() and cols[1].isdigit() and dtype in (None, cols[2]):
            rows[int(cols[0])] = float(cols[busbw_col - 2 if time else busbw_col])
    return rows


# nccl_call_net is fitted on the tables over RDMA (RoCE) that start below 1 KiB: each gives the median of measured minus
# predicted time from 1 to 4 KiB with the constant off (sizes the score does not use). Leave-one-machine-out scores each
# table's rows from 1 MiB with the mean of the other tables' figures; in-sample with its own. Named by source file: the
# fit set is round 6's (round 16's RoCE tables are scored with the shipped constant, never fitted on).
CALL_NET_TABLES = ("a100-2node-oci-oke.txt", "h200-2node-spx-float.txt")


def call_net_lomo() -> None:
    fits = {}
    for label, machine, nodes, nic, request, file, _ in TABLES:
        if file in CALL_NET_TABLES:
            times = measured_rows(file, time=True)
            report = api.nccl_tests(machine, "all_reduce", min_bytes="1K", max_bytes="4K", nodes=nodes,
                                    network_bandwidth=nic, nccl_call_net="0s", **nccl_version(file))
            fit = statistics.median(times[r["size"]] - r["time_us"] for r in report["rows"])
            fits[label] = (fit, machine, nodes, nic, request, file)
    print("\nLeave-one-machine-out of nccl_call_net (fitted on each table's 1-4 KiB rows):")
    for label, (own, machine, nodes, nic, request, file) in fits.items():
        others = statistics.mean(f[0] for k, f in fits.items() if k != label)
        measured = {size: b for size, b in measured_rows(file).items() if size >= 1 << 20}
        counts = []
        for value in (others, own, 0.0):
            report = api.nccl_tests(machine, "all_reduce", **request, nodes=nodes, network_bandwidth=nic,
                                    nccl_call_net=f"{value:.3f}us", **nccl_version(file))
            predicted = {r["size"]: r["busbw"] for r in report["rows"]}
            counts.append(sum(within(predicted[s], measured[s]) for s in measured))
        print(f"- {label}: own {own:.1f} us, others' {others:.1f} us; rows within ±{TOLERANCE:.0%}: {counts[0]} "
              f"of {len(measured)} with the others' (leave-one-machine-out), {counts[1]} with its own, "
              f"{counts[2]} without")


# nccl_launch_host is fitted on the one-process 8-GPU tables that start at 8 B: each gives the median of its 8 B-4 KiB
# rows' measured time over its GPUs (sizes the score does not use). Leave-one-machine-out scores each table with the
# mean of the other machines' figures (the RTX 4090 box's two tables are one machine); in-sample with its own machine's.
# Source file -> the machine (host) it ran on.
LAUNCH_TABLES = {"a100x8-thanos-g8.txt": "thanos", "a100x8-dkh.txt": "dkh", "rtx4090x8-rome-stock-chlc.txt": "rome",
                 "rtx4090x8-rome-p2p-chlc.txt": "rome"}


def launch_host_lomo() -> None:
    def fit(file: str, g: int) -> float:
        times = measured_rows(file, time=True)
        return statistics.median(t for size, t in times.items() if 8 <= size <= 4096) / g

    tables = [t for t in TABLES if t[5] in LAUNCH_TABLES]
    figures = {t[5]: fit(t[5], t[4]["ngpus"]) for t in tables}
    by_machine: dict[str, list[float]] = {}
    for t in tables:
        by_machine.setdefault(LAUNCH_TABLES[t[5]], []).append(figures[t[5]])
    machine_fit = {m: statistics.mean(v) for m, v in by_machine.items()}
    print(f"\nLeave-one-machine-out of nccl_launch_host (fitted on each one-process table's 8 B-4 KiB rows; mean of "
          f"the machines' figures {statistics.mean(machine_fit.values()):.2f} us):")
    for label, machine, _nodes, _nic, request, file, _ in tables:
        host = LAUNCH_TABLES[file]
        own = machine_fit[host]
        others = statistics.mean(v for m, v in machine_fit.items() if m != host)
        times = measured_rows(file, time=True)
        measured = {size: b for size, b in measured_rows(file).items() if size >= 1 << 20}
        small = {size: t for size, t in times.items() if 8 <= size < 1 << 20}
        counts, small_counts = [], []
        for value in (others, own, 0.0):
            report = api.nccl_tests(machine, "all_reduce", min_bytes="8", max_bytes=request["max_bytes"],
                                    ngpus=request["ngpus"], nccl_launch_host=f"{value:.3f}us", **nccl_version(file))
            busbw = {r["size"]: r["busbw"] for r in report["rows"]}
            time = {r["size"]: r["time_us"] for r in report["rows"]}
            counts.append(sum(within(busbw[s], measured[s]) for s in measured))
            small_counts.append(sum(within(time[s], small[s]) for s in small))
        print(f"- {label}: own {own:.2f} us, others' {others:.2f} us; rows from 1 MiB within ±{TOLERANCE:.0%}: "
              f"{counts[0]} of {len(measured)} with the others' (leave-one-machine-out), {counts[1]} with its own, "
              f"{counts[2]} without; rows of 8 B-512 KiB (time within ±{TOLERANCE:.0%}, not scored): "
              f"{small_counts[0]}, {small_counts[1]}, {small_counts[2]} of {len(small)}")


# nccl_eff_ll128 (round 21) is fitted on the tables with rows contend runs on LL128 (NCCL's pick under the table's
# release, sizes from 1 MiB): per machine, the efficiency that minimises the squared log error of busbw over its LL128
# rows (golden-section search on 0.3-1, rounded to 0.01), where at least one of them is bandwidth-bound (its time grows
# by more than a quarter with the efficiency halved, calibrate's test); a machine without one (the H200 pair's 1-2 MiB
# rows) tells nothing and is scored with the mean. The OCI tutorial cluster is left out of the fit: its rows from 4 MiB
# are 37-194% above measured, Simple as well as LL128, so its links do not run at their rate and no kernel efficiency
# describes them; it is scored with the mean too. Leave-one-machine-out scores each machine's tables (every row from
# 1 MiB) with the mean of the other machines' fits; in-sample with the mean of all. Source file -> machine.
LL128_TABLES = {"a100x8-thanos-g8.txt": "thanos", "a100x8-thanos-mpirun.txt": "thanos", "a100x8-dkh.txt": "dkh",
                "a100-2node-oci-oke.txt": "oci", "h100-2node-p5-aws.txt": "p5", "h200-2node-spx-float.txt": "h200",
                "a100-2node-oci-ocitutorials.txt": None}


def ll128_lomo() -> tuple[int, int]:
    """Prints the fit's leave-one-machine-out; returns how many rows of the set before round 16 and of the widened
    set the score would gain (or lose, negative) if each fitted machine ran at the others' figure."""
    tables = [t for t in TABLES if t[5] in LL128_TABLES]
    measured = {t[5]: {s: b for s, b in measured_rows(t[5], t[4].get("dtype")).items() if s >= 1 << 20} for t in tables}
    runs: dict[tuple[str, float], dict[int, tuple[float, str]]] = {}

    def predicted(t, eff: float) -> dict[int, tuple[float, str]]:
        key = (t[5], round(eff, 4))
        if key not in runs:
            label, machine, nodes, nic, request, file, _ = t
            request = dict(request)
            op = request.pop("op", "all_reduce")
            net = dict(nodes=nodes, network_bandwidth=nic) if nodes > 1 else {}
            report = api.nccl_tests(machine_for(machine, file), op, **net, **request, **nccl_version(file),
                                    nccl_eff_ll128=f"{eff:.4f}")
            runs[key] = {r["size"]: (r["busbw"], r["proto"]) for r in report["rows"]}
        return runs[key]

    def cost(group: list, eff: float) -> float:
        return sum(math.log(predicted(t, eff)[s][0] / b) ** 2 for t in group for s, b in measured[t[5]].items()
                   if predicted(t, eff)[s][1] == "LL128")

    def fit(group: list) -> float:
        lo, hi, g = 0.3, 1.0, (math.sqrt(5) - 1) / 2
        while hi - lo > 0.002:
            a, b = hi - g * (hi - lo), lo + g * (hi - lo)
            lo, hi = (lo, b) if cost(group, a) <= cost(group, b) else (a, hi)
        return round((lo + hi) / 2, 2)

    def bandwidth_bound(group: list) -> bool:
        return any(predicted(t, 1.0)[s][1] == "LL128" and predicted(t, 1.0)[s][0] > 1.25 * predicted(t, 0.5)[s][0]
                   for t in group for s in measured[t[5]])

    def inside(group: list, eff: float) -> int:
        return sum(within(predicted(t, eff)[s][0], b) for t in group for s, b in measured[t[5]].items())

    def inside_old(group: list, eff: float) -> int:
        return inside([t for t in group if t[5] not in ROUND16], eff)

    machines: dict[str | None, list] = {}
    for t in tables:
        machines.setdefault(LL128_TABLES[t[5]], []).append(t)
    fits = {m: fit(group) for m, group in machines.items() if m is not None and bandwidth_bound(group)}
    mean = statistics.mean(fits.values())
    delta_old = delta_all = 0
    print(f"\nLeave-one-machine-out of nccl_eff_ll128 (fitted on each machine's LL128 rows from 1 MiB; mean of the "
          f"machines' figures {mean:.2f}):")
    for m, group in machines.items():
        rows = sum(len(measured[t[5]]) for t in group)
        names = "; ".join(t[0] for t in group)
        if m not in fits:
            why = "left out of the fit" if m is None else "no LL128 row bandwidth-bound, not fitted"
            print(f"- {names}: {why}; rows from 1 MiB within ±{TOLERANCE:.0%}: {inside(group, mean)} of "
                  f"{rows} with the mean, {inside(group, 1.0)} with 1")
            continue
        others = statistics.mean(f for k, f in fits.items() if k != m)
        delta_old += inside_old(group, others) - inside_old(group, mean)
        delta_all += inside(group, others) - inside(group, mean)
        print(f"- {names}: own {fits[m]:.2f}, others' {others:.2f}; rows from 1 MiB within ±{TOLERANCE:.0%}: "
              f"{inside(group, others)} of {rows} with the others' (leave-one-machine-out), "
              f"{inside(group, fits[m])} with its own, {inside(group, mean)} with the mean, "
              f"{inside(group, 1.0)} with 1")
    return delta_old, delta_all


def within(predicted: float, measured: float) -> bool:
    """The score's one test of a row: the prediction within ±TOLERANCE of the measurement."""
    return abs(predicted / measured - 1) <= TOLERANCE


def saturation(rows: dict[int, float]) -> int:
    """The first size reaching 90% of the largest busbw."""
    top = max(rows.values())
    return min(size for size, b in rows.items() if b >= 0.9 * top)


def saturation_check(measured: dict[int, float], predicted: dict[int, float]) -> tuple[int, int, float, bool]:
    """Measured and predicted saturation sizes, their ratio, and whether they are within one doubling."""
    m, p = saturation(measured), saturation(predicted)
    ratio = max(m, p) / min(m, p)
    return m, p, ratio, ratio <= 2


def require(source: str, text: str, what: str, data: Path = DATA) -> None:
    """Refuses to run unless the stored source under `data` says `text` (what a table or case quotes it for)."""
    if text not in (data / source).read_text():
        raise SystemExit(f"{source}: {what} quotes {text!r}, which the stored source does not say")


def quoted(file: str, text: str, value: float, data: Path = DATA) -> None:
    body = (data / file).read_text()
    if text not in body or not re.search(rf"(?<![\d.]){value:g}(?![\d.])", text):
        raise SystemExit(f"{file}: the case quotes {text!r} for {value:g} GB/s, which the stored source does not say")


def main() -> None:
    print("| case | machine (contend) | measured busbw | predicted busbw | error | within ±15% |")
    print("|---|---|---|---|---|---|")
    inside = 0
    for label, machine, request, file, text, measured in CASES:
        quoted(file, text, measured)
        report = api.nccl_tests(machine, "all_reduce", **request)
        predicted = max(r["busbw"] for r in report["rows"])
        error = predicted / measured - 1
        ok = within(predicted, measured)
        inside += ok
        name = Path(machine).stem
        algo = sorted({r["algo"] for r in report["rows"]})
        cells = [label, f"`{name}` ({', '.join(algo)})", f"{measured:g} GB/s", f"{predicted:.1f} GB/s", f"{error:+.1%}"]
        print("| " + " | ".join(cells + ["yes" if ok else "no"]) + " |")
    total = len(CASES)
    new_inside = new_total = 0
    for label, machine, nodes, nic, request, file, settings in TABLES:
        for source, text in settings:
            require(source, text, "the table's settings")
        measured_all = measured_rows(file, request.get("dtype"))
        measured = {size: b for size, b in measured_all.items() if size >= 1 << 20}
        request = dict(request)
        op = request.pop("op", "all_reduce")
        net = dict(nodes=nodes, network_bandwidth=nic) if nodes > 1 else {}
        report = api.nccl_tests(machine_for(machine, file), op, **net, **request, **nccl_version(file))
        predicted = {r["size"]: r["busbw"] for r in report["rows"]}
        where = f"`{Path(machine).stem}`" + (f" × {nodes} at {nic}" if nodes > 1 else "")
        where += f", NCCL {report['nccl_version']}" if file in VERSIONS else ""
        for size in sorted(measured):
            error = predicted[size] / measured[size] - 1
            ok = within(predicted[size], measured[size])
            if file in ROUND16:
                new_inside += ok
                new_total += 1
            else:
                inside += ok
                total += 1
            algo = next(f"{r['algo']}/{r['proto']}" for r in report["rows"] if r["size"] == size)
            cells = [f"{label}, {size >> 20} MiB", f"{where} ({algo})",
                     f"{measured[size]:g} GB/s", f"{predicted[size]:.1f} GB/s", f"{error:+.1%}"]
            print("| " + " | ".join(cells + ["yes" if ok else "no"]) + " |")
        # A saturation size is told only by a table that starts below it.
        if any(0 < size <= 1 << 20 for size in measured_all):
            m, p, ratio, ok = saturation_check(measured, predicted)
            cells = [f"{label}: saturation size", "", f"{m >> 20} MiB", f"{p >> 20} MiB", f"×{ratio:g}"]
            print("| " + " | ".join(cells + [("yes" if ok else "no") + " (one doubling)"]) + " |")
    print(f"\n{inside} of {total} rows within ±{TOLERANCE:.0%} ({inside / total:.0%}): the set before round 16.")
    both, rows = inside + new_inside, total + new_total
    print(f"{both} of {rows} rows within ±{TOLERANCE:.0%} ({both / rows:.0%}): widened by round 16's tables "
          f"({new_inside} of {new_total} of theirs).")
    call_net_lomo()
    launch_host_lomo()
    delta_old, delta_all = ll128_lomo()
    # The score above runs nccl_eff_ll128 at the mean of the machines' fits, in-sample for the machines fitted; this
    # is the score each of those machines gets at the figure fitted without it (its saturation size as shipped).
    print(f"\nThe scores with each fitted machine at nccl_eff_ll128's leave-one-machine-out figure: "
          f"{inside + delta_old} of {total} ({(inside + delta_old) / total:.0%}) before round 16, "
          f"{both + delta_all} of {rows} ({(both + delta_all) / rows:.0%}) widened.")


if __name__ == "__main__":
    # Each table's NCCL settings are its request's own (quoted above): none comes from this shell's NCCL_* variables,
    # which api.nccl_tests reads where its env is not given (round 22).
    for name in [k for k in os.environ if k.startswith("NCCL_")]:
        del os.environ[name]
    main()
