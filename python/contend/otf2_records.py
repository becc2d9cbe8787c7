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

# MPI calls that send and receive at once. Score-P writes the send event, then the receive event, inside
# the call's region (its MPI_Sendrecv wrapper, src/adapters/mpi/SCOREP_Mpi_P2p.c: "enter region
# 'MPI_Sendrecv', MPI send event, MPI receive event, exit region"), but the two proceed concurrently
# (MPI 4.1 §3.10): read as a blocking send then a blocking receive, a ring of them deadlocks where the
# traced program ran. They become an isend and an irecv, both completed where the call ends.
SEND_AND_RECEIVE = {"MPI_Sendrecv", "MPI_Sendrecv_replace"}


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


def read(path: str, in_place: bool = False) -> tuple[list[dict[str, Any]], int, int]:
    """The trace's MPI records in time order, its number of ranks, and how many collective records could be in
    place or not (`call_size`; read as `in_place` says)."""
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
        # Per rank inside a call of SEND_AND_RECEIVE: the completions to write where the call ends.
        pending: dict[int, list[dict[str, Any]]] = {}
        ambiguous = 0
        for location, event in trace.events:
            kind = KINDS.get(type(event).__name__)
            if kind is None or location not in rank_of:
                continue
            if kind in ("enter", "leave") and not _is_mpi(event.region):
                continue
            rank = rank_of[location]
            rec: dict[str, Any] = {"rank": rank, "t": (event.time - start) / resolution, "kind": kind}
            ambiguous += _fields(event, kind, rec, rank_of, len(world), in_place)
            if kind == "enter" and str(event.region.name) in SEND_AND_RECEIVE:
                pending[rank] = []
            elif kind == "leave" and rank in pending:
                records.extend(dict(c, t=rec["t"]) for c in pending.pop(rank))
            elif kind in ("send", "recv") and rank in pending:
                rec, done = _nonblocking(rec)
                pending[rank].append(done)
            records.append(rec)
    _number_requests(records)
    return records, len(world), ambiguous


def _nonblocking(rec: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """A send or receive of a SEND_AND_RECEIVE call as the start of a nonblocking one and its completion;
    the request is numbered by _number_requests."""
    if rec["kind"] == "send":
        return dict(rec, kind="isend", request=None), {"rank": rec["rank"], "kind": "isend_complete", "request": None}
    # An irecv's source, tag and size are on its completion, as Score-P writes them for MPI_Irecv.
    start = {"rank": rec["rank"], "t": rec["t"], "kind": "irecv_request", "request": None}
    return start, dict(rec, kind="irecv", request=None)


def _number_requests(records: list[dict[str, Any]]) -> None:
    """Requests of _nonblocking numbered past the trace's own, in pairs (start, completion) per rank."""
    next_id = 1 + max((r["request"] for r in records if r.get("request") is not None), default=-1)
    started: dict[tuple[int, str], list[int]] = {}
    for r in records:
        if "request" not in r or r["request"] is not None:
            continue
        if r["kind"] in ("isend", "irecv_request"):
            r["request"] = next_id
            started.setdefault((r["rank"], r["kind"]), []).append(next_id)
            next_id += 1
        else:  # the completion of the oldest start of its kind on its rank (one call's two are in order)
            r["request"] = started[(r["rank"], "isend" if r["kind"] == "isend_complete" else "irecv_request")].pop(0)


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


def _fields(event: Any, kind: str, rec: dict[str, Any], rank_of: dict[Any, int], world: int, in_place: bool) -> bool:
    """Fill `rec` from the event; whether its size could be read in place or not (`call_size`)."""
    if kind in ("send", "isend", "recv", "irecv"):
        peer = event.receiver if kind in ("send", "isend") else event.sender
        rec.update(peer=_world_rank(event.communicator, peer, rank_of), tag=event.msg_tag, size=event.msg_length)
    if kind in ("isend", "isend_complete", "irecv_request", "irecv"):
        rec["request"] = event.request_id
    if kind != "collective":
        return False
    members = [rank_of[m] for m in event.communicator.group.members if m in rank_of]
    op = str(event.collective_op).rsplit(".", 1)[-1]
    ranks = len(members) or world
    size, either = call_size(op, event.size_sent, event.size_received, ranks, in_place)
    rec.update(op=op, size=size, group=members)
    if event.root != 0xFFFFFFFF:
        rec["root"] = event.root
    return either


def _world_rank(comm: Any, rank: int, rank_of: dict[Any, int]) -> int:
    """A rank of `comm` as a rank of MPI_COMM_WORLD."""
    members = list(comm.group.members)
    return rank_of.get(members[rank], rank) if rank < len(members) else rank


def call_size(op: str, sent: int, received: int, ranks: int, in_place: bool = False) -> tuple[int, bool]:
    """The size of a program's call of collective `op` (docs/workloads.md: an allreduce's or a reduce's
    vector, an alltoall's message to each peer, an allgather's or a gather's block per rank, a bcast's
    message) from the bytes Score-P recorded on one rank of a communicator of `ranks` ranks, and whether
    the bytes fit a call in place as well as one not in place.

    Score-P 8, src/adapters/mpi/scorep_mpi_coll.inc.c, for a block (vector, message) of B bytes:
    bcast: every rank received B (the root sent ranks × B); reduce, gather(v): every rank sent B (an
    in-place root sent 0 and received (ranks - 1) × B); allreduce, alltoall(v/w), allgather(v): each
    rank sent ranks × B, or (ranks - 1) × B in place (its own block not moved). In place is not in the
    trace: a total that only one of ranks and ranks - 1 divides says which; one both divide (with ranks
    a power of two, every in-place call of a B that ranks divides) is read as `in_place` says, and is
    counted so the import can say so. Calls whose ranks still differ (a root in place, the V forms) take
    the largest over their ranks in the engine.
    """
    if op == "BCAST":
        return max(received or sent // max(ranks, 1), 1), False
    if op in ("REDUCE", "GATHER", "GATHERV"):
        return max(sent or received // max(ranks - 1, 1), 1), False
    if op in ("ALLREDUCE", "ALLTOALL", "ALLTOALLV", "ALLTOALLW", "ALLGATHER", "ALLGATHERV"):
        total = sent if op == "ALLGATHERV" else max(sent, received)
        if ranks < 2:
            return max(total, 1), False
        whole, less_own = total % ranks == 0, total % (ranks - 1) == 0
        either = whole and less_own and total > 0
        if less_own and (in_place or not whole):
            return max(total // (ranks - 1), 1), either
        return max(total // ranks, 1), either
    return max(sent, received, 1), False  # a barrier moves none; the others are refused by the engine
