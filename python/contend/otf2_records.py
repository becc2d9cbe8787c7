"""Score-P OTF2 traces of MPI programs as flat records for the engine (`contend import-trace`).

Only reading happens here: every MPI event becomes one record (rank, time in seconds, kind and
its fields); the engine turns records into a rank program (gaps into compute, requests into
waits) in `workload::program::trace`.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from typing import Any

from contend.errors import InputError

# OTF2 event classes and the record kind each becomes.
KINDS = {
    "Enter": "enter",
    "Leave": "leave",
    "MpiSend": "send",
    "MpiIsend": "isend",
    "MpiIsendComplete": "isend_complete",
    "MpiRecv": "recv",
    "MpiIrecvRequest": "irecv_request",
    "MpiIrecv": "irecv",
    "MpiCollectiveEnd": "collective",
}


def anchor(path: str) -> str:
    """The trace's .otf2 anchor file: ``path`` itself, or the one anchor in a folder (Score-P writes
    ``traces.otf2`` beside ``traces/`` in its ``scorep-*`` folder, and users give the folder)."""
    if os.path.isdir(path):
        found = sorted(f for f in os.listdir(path) if f.endswith(".otf2") and os.path.isfile(os.path.join(path, f)))
        if len(found) != 1:
            what = "no .otf2 file" if not found else f"{len(found)} .otf2 files ({', '.join(found)})"
            raise InputError(f"{path}: a folder with {what}; give the .otf2 anchor file Score-P wrote")
        return os.path.join(path, found[0])
    if not os.path.isfile(path):
        raise InputError(f"{path}: does not exist; give the .otf2 anchor file Score-P wrote")
    return path


def read(path: str) -> tuple[list[dict[str, Any]], int]:
    """The trace's MPI records in time order, and its number of ranks."""
    try:
        import otf2
    except ImportError:  # pragma: no cover - a dependency of the package
        raise InputError("reading OTF2 traces needs the otf2 package: pip install otf2") from None
    path = anchor(path)
    try:
        with _quiet_stderr():  # the C library prints its own diagnostics before raising
            reader = otf2.reader.open(path)
    except Exception as e:  # the library raises its own error types for a bad anchor file
        raise InputError(f"{path}: is not an OTF2 trace ({e}); give the .otf2 anchor file Score-P wrote") from None
    with reader as trace:
        resolution = float(trace.definitions.clock_properties.timer_resolution)
        start = trace.definitions.clock_properties.global_offset
        world = _world(trace)
        rank_of = {loc: r for r, loc in enumerate(world)}
        records: list[dict[str, Any]] = []
        for location, event in trace.events:
            kind = KINDS.get(type(event).__name__)
            if kind is None or location not in rank_of:
                continue
            if kind in ("enter", "leave") and not _is_mpi(event.region):
                continue
            rec: dict[str, Any] = {"rank": rank_of[location], "t": (event.time - start) / resolution, "kind": kind}
            _fields(event, kind, rec, rank_of)
            records.append(rec)
    return records, len(world)


@contextlib.contextmanager
def _quiet_stderr() -> Iterator[None]:
    """File descriptor 2 sent to /dev/null for a while: C code writes there, not to sys.stderr."""
    sys.stderr.flush()
    saved = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(devnull)
        os.close(saved)


def _world(trace: Any) -> list[Any]:
    """The locations of the MPI ranks, in rank order: MPI_COMM_WORLD's group if the trace
    defines it, else every location in definition order."""
    for comm in trace.definitions.comms:
        if comm.name == "MPI_COMM_WORLD" or comm.parent is None:
            return list(comm.group.members)
    return list(trace.definitions.locations)


def _is_mpi(region: Any) -> bool:
    return str(getattr(region, "name", "")).startswith("MPI_")


def _fields(event: Any, kind: str, rec: dict[str, Any], rank_of: dict[Any, int]) -> None:
    if kind in ("send", "isend", "recv", "irecv"):
        peer = event.receiver if kind in ("send", "isend") else event.sender
        rec.update(peer=_world_rank(event.communicator, peer, rank_of), tag=event.msg_tag, size=event.msg_length)
    if kind in ("isend", "isend_complete", "irecv_request", "irecv"):
        rec["request"] = event.request_id
    if kind == "collective":
        members = [rank_of[m] for m in event.communicator.group.members if m in rank_of]
        op = str(event.collective_op).rsplit(".", 1)[-1]
        rec.update(op=op, size=max(event.size_sent, event.size_received, 1), group=members)
        if event.root != 0xFFFFFFFF:
            rec["root"] = event.root


def _world_rank(comm: Any, rank: int, rank_of: dict[Any, int]) -> int:
    """A rank of `comm` as a rank of MPI_COMM_WORLD."""
    members = list(comm.group.members)
    return rank_of.get(members[rank], rank) if rank < len(members) else rank
