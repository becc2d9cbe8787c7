"""What `contend calibrate` says of the NCCL release a paste does not name (round 25, calrel25), on every nccl-tests
paste of bench/nccl_calibrate.py's cases (bench/nccl_validation.py's and bench/nccl_heldout.py's tables), each given
as a user would paste it with every line that prints its release removed (nccl-tests' `nccl-library=`, NCCL's
`NCCL version`) and no `nccl_version` given: the release classes' rms over its rows of 1 MiB and more before fitting
(the default, 2.30, and the best other), the class named (at most half the default's rms, the default's above 15%),
and, where the table's source states the release that ran (`nccl_version(file)`), whether the class named or the best
holds it. Whole tables, no hold-out: the report is of unfitted predictions and does not depend on the fit.

Usage: python bench/nccl_release.py   (prints the table of docs/validation.md, "Round 25: the release a paste does not
name")
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

from nccl_calibrate import as_pasted, cases
from nccl_heldout import HELDOUT

from contend import api
from contend.errors import InputError

RELEASE_LINE = re.compile(r"nccl-library=|NCCL version ")
# Round 25's held-out santis (qa25), which names no release: the case the report is for.
SANTIS = ("2 x 4 GH200 (CSCS santis, CXI container, nccl-tests 2.16.4), all_reduce, release not printed",
          str(HELDOUT.parent.parent / "machines" / "alps-gh200.yaml"), HELDOUT / "gh200-2x4-santis-cxi-all_reduce.txt",
          2, None, {}, {"op": "all_reduce"})


def holds(releases: str, version: str) -> bool:
    """Whether a class ("2.23-2.26" or "2.30") holds a release ("2.26")."""
    key = [tuple(int(x) for x in r.split(".")) for r in releases.split("-")]
    v = tuple(int(x) for x in version.split(".")[:2])
    return key[0] <= v <= key[-1]


def main() -> None:
    print("| table | ran | default's rms | best other (rms) | named | the release that ran is in |")
    print("|---|---|---|---|---|---|")
    scratch = Path(tempfile.mkdtemp())
    counts = {"named": 0, "named right": 0, "known": 0}
    for label, machine, paste, nodes, nic, params, request in [*cases(), SANTIS]:
        ran = params.pop("nccl_version", None)
        try:
            pasted = as_pasted(paste, machine, nodes, nic, params, request, scratch)
            pasted.write_text("".join(line for line in pasted.read_text().splitlines(keepends=True)
                                      if not RELEASE_LINE.search(line)))
            fit = api.calibrate(machine, pasted, network_bandwidth=nic if nodes > 1 else None,
                                algo=request.get("algo"), proto=request.get("proto"), env=request.get("env", {}),
                                **params)
        except InputError as e:
            print(f"| {label} | {ran or '?'} | refused: {e} | | | |")
            continue
        u = fit["unnamed_release"]
        own = next(c for c in u["classes"] if holds(c["releases"], u["fitted_under"]))
        others = sorted((c for c in u["classes"] if c is not own), key=lambda c: c["rms_relative_error"])
        best = f"{others[0]['releases']} ({others[0]['rms_relative_error']:.0%})" if others else "-"
        named = next((c["releases"] for c in u["classes"] if c["newest"] == u["suggested"]), "-")
        if ran:
            counts["known"] += 1
            where = [c["releases"] for c in u["classes"] if holds(c["releases"], ran)]
            verdict = f"{where[0] if where else 'refused'}" + (" (named)" if named in where else "")
            if named != "-":
                counts["named right"] += named in where
        else:
            verdict = "not stated"
        counts["named"] += named != "-"
        print(f"| {label} | {ran or '?'} | {own['releases']} {own['rms_relative_error']:.0%} "
              f"({u['rows_scored']} rows) | {best} | {named} | {verdict} |")
    print(f"\nA release named for {counts['named']} pastes; of those whose release is stated ({counts['known']}), "
          f"the named class holds it for {counts['named right']}.")


if __name__ == "__main__":
    main()
