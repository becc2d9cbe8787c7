"""The results of a study: a folder of Parquet files, one per finished point, named by the scenario's hash.

A point's file is written under a temporary name and renamed into place, so a run killed at any moment
leaves only whole files; a rerun skips the points whose file exists. The study's axes and baseline travel
in every file's metadata, so a report needs the Parquet files alone.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from contend.errors import InputError

if TYPE_CHECKING:
    import pandas as pd

META_KEY = b"contend.study"
# Per-job columns of a RunReport, in the order rows carry them.
JOB_COLUMNS = ["job", "app", "ranks", "start_s", "finish_s", "run_time_s", "comm_s", "compute_s"]


def open_folder(folder: str | os.PathLike, meta: dict[str, Any]) -> set[str]:
    """Create the folder or check that it holds the same study; the hashes of the points already finished."""
    folder = Path(folder)
    done = finished(folder, meta)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        from contend.output import io_error

        raise io_error(folder, e, "--output") from None
    for stale in folder.glob(".*.tmp"):  # left by a run that was killed while writing; never renamed, never read
        stale.unlink(missing_ok=True)
    return done


# What makes two studies one: a folder's points are read back as one study (its name in the report's title,
# its baseline for the speed-ups), so a study whose points would mix with them differently is refused.
# Axes may grow between runs (a new bandwidth value reuses the points already there).
SAME_STUDY = ("baseline", "zips", "repetitions", "seed_key", "base", "name")


def finished(folder: Path, meta: dict[str, Any]) -> set[str]:
    """The hashes of the points of this study already in ``folder`` (none where it does not exist yet); a folder
    holding another study's results is refused. Writes nothing, so ``--dry-run`` checks the same."""
    if folder.exists() and not folder.is_dir():
        raise InputError(f"--output: {folder} is a file; give a folder for the study's results")
    if not folder.exists():
        return set()
    # A point whose file cannot be read (cut short by a full disk, damaged since) is not done: it is run
    # again and its file replaced whole.
    done = {p.stem for p in folder.glob("*.parquet") if _readable(p)}
    if done:
        old = read_meta(folder / f"{min(done)}.parquet")
        for key in SAME_STUDY:
            if key in old and old.get(key) != meta.get(key):  # a folder from before a key was kept lacks it
                what = f"study {old['name']!r}" if key == "name" else f"a study with another {_WORDS.get(key, key)}"
                raise InputError(f"--output: {folder} holds the results of {what}; "
                                 "give a new folder, or the study file that wrote it")
    return done


_WORDS = {"base": "base scenario", "zips": "set of zipped axes", "seed_key": "repetition seed key"}


def rows(values: dict[str, Any], hash_: str, version: str, report: dict[str, Any]) -> dict[str, list[Any]]:
    """One row per job of a point's RunReport, each with every axis value and the point's identity."""
    jobs = report["jobs"]
    n = len(jobs["job"])
    scenario = report.get("scenario", {})
    summary = report.get("summary", {})
    cols: dict[str, list[Any]] = {k: [v] * n for k, v in values.items()}
    cols["scenario_hash"] = [hash_] * n
    cols["contend_version"] = [version] * n
    for key in ("cluster", "model"):
        cols[f"scenario.{key}"] = [str(scenario.get(key, ""))] * n
    cols["makespan_s"] = [float(summary.get("makespan_s", float("nan")))] * n
    for key in JOB_COLUMNS:
        cols[key] = list(jobs[key])
    return cols


def write_point(folder: str | os.PathLike, hash_: str, cols: dict[str, list[Any]], meta: dict[str, Any]) -> Path:
    """Write one point's rows atomically: a reader or a later run sees the whole file or none."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table(cols).replace_schema_metadata({META_KEY: json.dumps(meta, sort_keys=True).encode()})
    final = Path(folder) / f"{hash_}.parquet"
    tmp = Path(folder) / f".{hash_}.{os.getpid()}.tmp"
    with open(tmp, "wb") as f:
        pq.write_table(table, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, final)
    return final


def _readable(path: Path) -> bool:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        pq.read_metadata(path)
    except (pa.ArrowException, OSError):
        return False
    return True


def _corrupt(path: str | os.PathLike, e: Exception) -> InputError:
    why = " ".join(str(e).split())[:200]
    return InputError(f"{path}: not a readable Parquet file ({why}); delete it and run `contend study` again "
                      "to re-run its point")


def read_meta(path: str | os.PathLike) -> dict[str, Any]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        meta = pq.read_schema(path).metadata or {}
    except (pa.ArrowException, OSError) as e:
        raise _corrupt(path, e) from None
    try:
        m = json.loads(meta[META_KEY]) if META_KEY in meta else None
    except ValueError:
        m = None
    if not isinstance(m, dict):
        raise InputError(f"{path}: not a point of a contend study (no study metadata); remove it or use another folder")
    return m


def read(folder: str | os.PathLike) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Every finished point's rows, sorted so that the frame depends on the points only, and the study's metadata.

    Axis values are unioned over the files, so a study extended with more values reads as one.
    """
    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = Path(folder)
    files = sorted(folder.glob("*.parquet")) if folder.is_dir() else []
    if not files:
        raise InputError(f"{folder}: no study results here (no .parquet files); run `contend study` first")
    frames = []
    meta: dict[str, Any] = {}
    for f in files:
        try:
            table = pq.read_table(f)
        except (pa.ArrowException, OSError) as e:
            raise _corrupt(f, e) from None
        try:
            m = json.loads((table.schema.metadata or {}).get(META_KEY, b"null"))
        except ValueError:
            m = None
        if not isinstance(m, dict) or not isinstance(m.get("axes"), dict):
            raise InputError(f"{f}: not a point of a contend study (no study metadata); remove it")
        if not meta:
            meta = m
        for axis, values in m["axes"].items():
            known = meta["axes"].setdefault(axis, [])
            known.extend(v for v in values if v not in known)
        frames.append(table.to_pandas())
    df = pd.concat(frames, ignore_index=True)
    keys = [c for c in meta["axes"] if c in df.columns] + ["repetition", "job"]
    return df.sort_values(keys, kind="stable").reset_index(drop=True), meta
