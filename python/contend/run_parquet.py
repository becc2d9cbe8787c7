"""`contend run --parquet DIR`: a run's tables as Parquet files, one per table, each carrying the run's
machine, model, scenario and summary as schema metadata. pyarrow is imported only when they are written."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from contend.errors import InputError
from contend.output import io_error, reads, replacing

META_KEY = b"contend.run"
TABLES = ("jobs", "links", "operations")


def targets(folder: Path, operations: bool, force: bool, inputs: Sequence[str] = ()) -> dict[str, Path]:
    """The files a run will write in `folder`, checked before it runs: the folder is a folder (or can be
    made in an existing one) that can be written, and no file is replaced unless the user said so."""
    if str(folder) == "-":
        raise InputError("--parquet: cannot write tables to standard output; give a folder name")
    if folder.exists() and not folder.is_dir():
        raise InputError(f"--parquet: {folder} is a file; give a folder for jobs.parquet and links.parquet")
    if not folder.exists() and not folder.parent.is_dir():
        raise InputError(f"--parquet: folder {folder.parent} does not exist; create it or choose another path")
    files = {t: folder / f"{t}.parquet" for t in TABLES if operations or t != "operations"}
    for path in (folder / f"{t}.parquet" for t in TABLES):
        what = reads(path, inputs) if path.exists() else None
        if what:
            raise InputError(f"--parquet: {path} is {what}; write the tables to another folder")
    if not force:
        taken = [f"{t}.parquet" for t in TABLES if (folder / f"{t}.parquet").exists()]
        if taken:
            raise InputError(f"--parquet: {folder} already holds {', '.join(taken)}; "
                             "choose another folder, or add --force to overwrite them")
    where = folder if folder.exists() else folder.parent
    if not os.access(where, os.W_OK | os.X_OK):
        raise InputError(f"--parquet: cannot write in folder {where} (permission denied); "
                         "choose a folder you can write to")
    return files


def write(raw: dict[str, Any], files: dict[str, Path]) -> list[Path]:
    """Write each table of the run's report to its file. An earlier run's operations.parquet (only with
    --replace can one be there) is removed when this run has none, so that the folder holds one run."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    folder = next(iter(files.values())).parent
    try:
        folder.mkdir(exist_ok=True)
    except OSError as e:
        raise io_error(folder, e, "--parquet") from None
    meta = {META_KEY: json.dumps({k: raw[k] for k in ("machine", "model", "scenario", "summary")},
                                 sort_keys=True).encode()}
    written = []
    for name, path in files.items():
        with replacing(path, "--parquet") as tmp:
            pq.write_table(pa.table(raw[name]).replace_schema_metadata(meta), tmp)
        written.append(path)
    if "operations" not in files:
        (folder / "operations.parquet").unlink(missing_ok=True)
    return written

