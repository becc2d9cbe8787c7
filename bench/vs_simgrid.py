"""contend against a real peer, SimGrid 4.1, on identical workloads through both Python APIs.

The machine is bench_maxmin's 64-GPU PCIe tree (a root complex, 4 switches, 4 switches under each, 4 GPUs under
each of those; every link Gen3 x16, 15.754 GB/s each way). Both engines run plain max-min sharing: no latency,
efficiency 1, no duplex loss (contend: maxmin with eff_pcie=1, duplex_pcie=0 and zero link latency; SimGrid: the
CM02 network model, which is max-min without TCP factors, cross-traffic off, split-duplex links). Transfers are
random GPU pairs with sizes uniform in 256 KiB..64 MiB (seed 1), all at once or staggered (Poisson, mean gap 2 ms).

Each engine is timed in a forked child from building the machine (platform) to holding every finish time, the
two alternating, median of 3 (imports are done before the clock starts); every finish time must agree to 1e-9
relative. Needs bench/peers/simgrid.sh first (not part of CI).

    python bench/vs_simgrid.py            # the four workloads
    python bench/vs_simgrid.py 1000 0     # one: count, mean gap in seconds (0: all at once)
"""

from __future__ import annotations

import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
SIMGRID_PYTHON = HERE / "peers" / ".simgrid-venv" / "bin" / "python"
GEN3_X16 = 8e9 * 128 / 130 * 16 / 8  # bytes/s each way: 8 GT/s, 128b/130b, 16 lanes
WORKLOADS = [(1000, 0.0), (1000, 2e-3), (10000, 0.0), (10000, 2e-3)]
RUNS = 3


def tree() -> tuple[list[str], list[tuple[str, str]]]:
    """Devices (root first) and links (parent, child) of the 64-GPU tree."""
    devices, links = ["RC"], []
    for a in range(4):
        devices.append(f"S{a}")
        links.append(("RC", f"S{a}"))
        for b in range(4):
            devices.append(f"S{a}{b}")
            links.append((f"S{a}", f"S{a}{b}"))
            for c in range(4):
                g = f"GPU{16 * a + 4 * b + c}"
                devices.append(g)
                links.append((f"S{a}{b}", g))
    return devices, links


def tree_spec() -> dict:
    """The tree as a contend machine description: zero latency on every link and device (a GPU's copy engine
    included), so that sharing alone sets the times."""
    devices, links = tree()

    def kind(d: str) -> str:
        return "root_complex" if d == "RC" else "gpu" if d.startswith("GPU") else "pcie_switch"

    return {"name": "tree64", "devices": [{"name": d, "kind": kind(d), "latency": "0s"} for d in devices],
            "links": [{"a": a, "b": b, "kind": "pcie", "gen": 3, "lanes": 16, "latency": "0s"} for a, b in links]}


def workload(n: int, gap: float) -> dict[str, list]:
    rng = random.Random(1)
    t, src, dst, size, start = 0.0, [], [], [], []
    for _ in range(n):
        s = rng.randrange(64)
        d = rng.randrange(63)
        d += d >= s
        if gap:
            t += rng.expovariate(1 / gap)
        src.append(f"GPU{s}")
        dst.append(f"GPU{d}")
        size.append(rng.randint(256 * 1024, 64 * 1024 * 1024))
        start.append(t)
    return {"src": src, "dst": dst, "size": size, "start": start}


CONTEND = r"""
import json, sys, time
import numpy as np
import pyarrow  # noqa: F401  (imported before the clock, as SimGrid's module is)
import contend
spec, w = json.load(sys.stdin)
size, start = np.array(w["size"], dtype=np.uint64), np.array(w["start"])
t0 = time.perf_counter()
m = contend.Machine.from_dict(spec)
t = contend.Transfers.from_columns(w["src"], w["dst"], size, start=start)
r = contend.simulate(m, t, model="maxmin", eff_pcie=1, duplex_pcie=0)
finish = r.column("finish_s")
wall = time.perf_counter() - t0
json.dump({"wall": wall, "finish": finish.tolist()}, sys.stdout)
"""

SIMGRID = r"""
import json, sys, time
from simgrid import Comm, Engine, LinkInRoute, this_actor
devices, links, w, bw = json.load(sys.stdin)
t0 = time.perf_counter()
e = Engine(["vs_simgrid", "--cfg=network/model:CM02", "--cfg=network/crosstraffic:0", "--cfg=network/TCP-gamma:0",
            "--log=root.thres:critical"])
zone = e.netzone_root
parent = {b: a for a, b in links}
hosts = {d: zone.add_host(d, "1Gf") for d in devices if d.startswith("GPU")}
link = {b: zone.add_split_duplex_link(f"{a}-{b}", bw).set_latency(0).seal() for a, b in links}
def up(d):
    path = []
    while d in parent:
        path.append(d)
        d = parent[d]
    return path
for s in hosts:
    for d in hosts:
        if s != d:
            a, b = up(s), up(d)
            while a and b and a[-1] == b[-1]:
                a.pop(); b.pop()
            route = [LinkInRoute(link[x], LinkInRoute.Direction.UP) for x in a]
            route += [LinkInRoute(link[x], LinkInRoute.Direction.DOWN) for x in reversed(b)]
            zone.add_route(hosts[s], hosts[d], route, False)
zone.seal()
finish = [0.0] * len(w["src"])
def transfer(i):
    def act():
        this_actor.sleep_until(w["start"][i])
        Comm.sendto(hosts[w["src"][i]], hosts[w["dst"][i]], w["size"][i])
        finish[i] = e.clock
    return act
for i in range(len(w["src"])):
    hosts[w["src"][i]].add_actor(f"t{i}", transfer(i))
e.run()
wall = time.perf_counter() - t0
json.dump({"wall": wall, "finish": finish}, sys.stdout)
"""


def child(python: str, code: str, payload: list) -> dict:
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(code)
    try:
        out = subprocess.run([python, f.name], input=json.dumps(payload), capture_output=True, text=True, check=True)
    finally:
        os.unlink(f.name)
    return json.loads(out.stdout)


def main() -> None:
    if not SIMGRID_PYTHON.exists() or subprocess.run([str(SIMGRID_PYTHON), "-c", "import simgrid"],
                                                      capture_output=True).returncode != 0:
        sys.exit("vs_simgrid.py: SimGrid is not installed; run bash bench/peers/simgrid.sh first (about 20 minutes)")
    cases = [(int(sys.argv[1]), float(sys.argv[2]))] if len(sys.argv) == 3 else WORKLOADS
    devices, links = tree()
    print(f"{'workload':<28} {'contend s':>10} {'SimGrid s':>10} {'SimGrid/contend':>16} {'max rel diff':>13}")
    for n, gap in cases:
        w = workload(n, gap)
        ours, theirs = [], []
        for _ in range(RUNS):
            a = child(sys.executable, CONTEND, [tree_spec(), w])
            b = child(str(SIMGRID_PYTHON), SIMGRID, [devices, links, w, GEN3_X16])
            ours.append(a["wall"])
            theirs.append(b["wall"])
        diff = max(abs(x - y) / max(abs(x), abs(y)) for x, y in zip(a["finish"], b["finish"], strict=True))
        label = f"{n:,} {'at once' if gap == 0 else f'staggered ({gap * 1e3:g} ms)'}"
        mo, mt = statistics.median(ours), statistics.median(theirs)
        print(f"{label:<28} {mo:>10.3f} {mt:>10.3f} {mt / mo:>15.1f}x {diff:>13.1e}", flush=True)


if __name__ == "__main__":
    main()
