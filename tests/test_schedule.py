"""Schedule search against a brute force written plainly in Python over the generic simulator."""

import itertools
import json
import statistics

import pytest

import contend
from conftest import run_cli

MACHINE = contend.Machine.load("cs-storm-socket")


def neighbours(grid):
    """Row-major ranks, last dimension fastest; non-periodic."""
    ranks = list(itertools.product(*(range(n) for n in grid)))
    index = {r: i for i, r in enumerate(ranks)}
    out = []
    for r in ranks:
        nb = []
        for d in range(len(grid)):
            for step in (-1, 1):
                q = list(r)
                q[d] += step
                if 0 <= q[d] < grid[d]:
                    nb.append(index[tuple(q)])
        out.append(nb)
    return out


def makespan(order, semantics, size):
    """Simulate one order with the generic phase engine via plain transfer records."""
    records = []
    for g, dests in enumerate(order):
        for k, d in enumerate(dests):
            rec = {"name": f"{g}.{k}", "src": f"GPU{g}", "dst": f"GPU{d}", "size": size}
            if k > 0:
                if semantics == "sequential":
                    rec["after"] = [f"{g}.{k - 1}"]
                else:
                    rec["after"] = [f"{h}.{k - 1}" for h, o in enumerate(order) if len(o) >= k]
            records.append(rec)
    return contend.simulate(MACHINE, contend.Transfers.from_records(records)).makespan_s


@pytest.mark.parametrize("grid", [[2, 2], [2, 3]])
@pytest.mark.parametrize("semantics", ["sequential", "rounds"])
def test_exhaustive_agrees_with_a_plain_brute_force(tmp_path, grid, semantics):
    nb = neighbours(grid)
    times = sorted(
        makespan(order, semantics, "1MiB") for order in itertools.product(*(itertools.permutations(n) for n in nb))
    )
    halo = tmp_path / "halo.yaml"
    gpus = ", ".join(f"GPU{i}" for i in range(len(nb)))
    halo.write_text(f"grid: {grid}\nsize: 1MiB\ngpus: [{gpus}]\n")
    s = contend.schedule(MACHINE, halo, semantics=semantics)
    assert s.orders_total == len(times)
    assert s.best_s == pytest.approx(times[0], rel=1e-9)
    assert s.worst_s == pytest.approx(times[-1], rel=1e-9)
    assert s.median_s == pytest.approx(statistics.median(times), rel=1e-9)
    assert s.times.tolist() == pytest.approx(times, rel=1e-9)
    bnb = contend.schedule(MACHINE, halo, semantics=semantics, search="bnb")
    assert bnb.proven_optimal and bnb.best_s == pytest.approx(times[0], rel=1e-9)


def test_cosmo_2d_golden_and_best_schedule_replays(tmp_path):
    out = tmp_path / "best.yaml"
    p = run_cli("schedule", "cs-storm-socket", "--halo", "2d", "--json", "-o", str(out))
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert r["orders_total"] == 20736
    assert r["orders_evaluated"] <= 20736
    t = r["t_msg_s"]
    assert (round(r["best_s"] / t, 2), round(r["median_s"] / t, 2), round(r["worst_s"] / t, 2)) == (4.0, 6.93, 9.21)
    assert set(r["best_order"]) == {f"GPU{i}" for i in range(8)}
    replay = contend.simulate(MACHINE, contend.Transfers.load(out))
    assert replay.makespan_s == pytest.approx(r["best_s"], rel=1e-12)


def test_cosmo_3d_order_count_by_branch_and_bound():
    s = contend.schedule(MACHINE, "3d", search="bnb")
    assert s.orders_total == 1_679_616 and s.proven_optimal


def test_schedule_plot(tmp_path):
    png = tmp_path / "s.png"
    p = run_cli("schedule", "cs-storm-socket", "--halo", "2d", "--semantics", "rounds", "--plot", str(png))
    assert p.returncode == 0, p.stderr
    assert png.read_bytes()[:4] == b"\x89PNG"
    assert "best order" in p.stdout


def test_anneal_reports_a_gap():
    s = contend.schedule(MACHINE, "2d", search="anneal", seed=3, iterations=2000)
    assert s.lower_bound_s <= s.best_s * (1 + 1e-12)
    assert s.gap >= 0


@pytest.mark.parametrize(
    "args,needle",
    [
        (["--halo", "2d", "--search", "bnb", "--plot", "x.png"], "--search exhaustive"),
        (["--halo", "4d"], "4d"),
        (["--halo", "2d", "--semantics", "parallel"], "sequential or rounds"),
        (["--halo", "2d", "--alpha", "5"], "no unit"),
    ],
)
def test_schedule_bad_input(tmp_path, args, needle):
    p = run_cli("schedule", "cs-storm-socket", *args, cwd=tmp_path)
    assert p.returncode == 2, p.stderr
    assert len(p.stderr.strip().splitlines()) == 1 and needle in p.stderr
