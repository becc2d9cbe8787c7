"""Run a study's unfinished points on Dask and write each one's rows the moment it finishes.

Points are independent and deterministic: the engine computes each from its scenario text alone, so the
dataset is the same whichever worker ran a point and in whatever order they finished.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from contend.errors import ContendError, InputError
from contend.study import dataset
from contend.study.groups import Groups
from contend.study.spec import Point, Study, origin_of

_SESSION = None


def worker_session() -> Any:
    """The session of this worker process: created on its first point, kept for the points after it."""
    global _SESSION
    if _SESSION is None:
        from contend import _core

        _SESSION = _core.Session()
    return _SESSION


def run_point(text: str, origin: str) -> str:
    """What a worker does: one scenario through the engine, its RunReport as JSON, or its error as JSON
    (the engine's exception types do not survive pickling between processes by name). The worker's session
    keeps the point's lowered jobs and prepared model for its next point, which takes them if it is of the
    same group (see groups.py)."""
    from contend import _core
    from contend.errors import ContendError, InputError

    try:
        return _core.run(text, origin, False, 0, None, worker_session())
    except ContendError as e:
        return json.dumps({"error": str(e), "input": isinstance(e, InputError)})


@dataclass
class Outcome:
    points: int  # in the study
    skipped: int  # finished by an earlier run
    ran: int  # finished by this one


# Seconds between looks for workers that joined the cluster since the study started.
WORKERS_CHECK_S = 10.0

# A LocalCluster's worker processes at most per core: each runs one point at a time on one core, so more
# only share the cores and multiply the memory (a point of 2,048 GPUs holds hundreds of MiB).
WORKERS_PER_CORE = 4


def check_workers(workers: int | None, scheduler: str | None) -> None:
    """Refuse a worker count this machine cannot use, in one line, before anything starts."""
    if workers is None:
        return
    if scheduler:
        raise InputError("--workers: a --scheduler cluster has its own workers; give one of the two")
    most = WORKERS_PER_CORE * (os.cpu_count() or 1)
    if not 1 <= workers <= most:
        raise InputError(f"--workers: is {workers}; give 1 to {most} worker processes ({WORKERS_PER_CORE} per core of "
                         "this machine), or --scheduler for a bigger cluster")


def run(study: Study, folder: str | os.PathLike, workers: int | None = None, scheduler: str | None = None,
        client: Any = None, on_start: Callable[[int, int], None] | None = None,
        on_point: Callable[[], None] | None = None) -> Outcome:
    """Run the points not yet in ``folder``: on ``client`` if given, else on the Dask scheduler at ``scheduler``,
    else on a LocalCluster of ``workers`` single-threaded processes (default: one per core)."""
    from contend import __version__, _core

    check_workers(workers, scheduler)
    meta = study.meta()
    done = dataset.open_folder(folder, meta)
    todo = [p for p in study.points if p.hash not in done]
    skipped = len(study.points) - len(todo)
    if on_start:
        on_start(len(study.points), skipped)
    if not todo:
        return Outcome(len(study.points), skipped, 0)
    groups = Groups(todo, lambda p: _core.lowering_group(p.text, origin_of(study, p)))
    own = client is None
    if own:
        client = connect(workers, scheduler)
    from distributed import as_completed

    running: dict[Any, tuple[Point, str]] = {}
    finished = as_completed()

    def submit(worker: str) -> None:
        """The worker's next point, on that worker if it is still there (else on any)."""
        p = groups.next(worker)
        if p is not None:
            fut = client.submit(run_point, p.text, origin_of(study, p), key=f"contend-point-{p.hash}", pure=False,
                                workers=[worker], allow_other_workers=True)
            running[fut] = (p, worker)
            finished.add(fut)

    try:
        with _ctrl_c_noted() as ctrl_c:
            try:
                client.wait_for_workers(1)
                known: set[str] = set()

                def give_new_workers_work() -> None:
                    """Workers that joined (all at first; then those an adaptive cluster adds) start a group, two
                    points at a time: the next waits on the worker while the client takes in the last one."""
                    for worker in client.scheduler_info(n_workers=-1)["workers"]:
                        if worker not in known:
                            known.add(worker)
                            submit(worker)
                            submit(worker)

                give_new_workers_work()
                checked = time.monotonic()
                for fut in finished:
                    if ctrl_c:
                        raise KeyboardInterrupt
                    p, worker = running.pop(fut)
                    submit(worker)
                    report = _report(fut, origin_of(study, p))
                    dataset.write_point(folder, p.hash, dataset.rows(p.values, p.hash, __version__, report), meta)
                    if on_point:
                        on_point()
                    if time.monotonic() - checked > WORKERS_CHECK_S:
                        checked = time.monotonic()
                        give_new_workers_work()
            finally:  # a failed point stops the study; the ones finished so far are kept
                client.cancel(list(running))
    finally:
        if own:
            cluster = getattr(client, "cluster", None)
            client.close()
            if cluster is not None:
                cluster.close()
    return Outcome(len(study.points), skipped, len(todo))


def _report(fut: Any, origin: str) -> dict[str, Any]:
    """A point's report, or its error raised again here, naming the point (the engine names a bad
    parameter value by --param alone)."""
    from contend.errors import ContendError

    report = json.loads(fut.result())
    if "error" in report:
        message = report["error"] if origin in report["error"] else f"{origin}: {report['error']}"
        raise (InputError if report["input"] else ContendError)(message)
    return report


def connect(workers: int | None, scheduler: str | None) -> Any:
    from distributed import Client, LocalCluster

    if scheduler:
        try:
            return Client(scheduler)  # waits distributed.comm.timeouts.connect (Dask's config: 30 s)
        except (OSError, TimeoutError) as e:
            raise InputError(f"--scheduler: cannot reach a Dask scheduler at {scheduler} ({e}); "
                             "check the address and that the scheduler runs") from None
    # One single-threaded process per worker: a point holds one core for its whole run, and the engine's
    # memory is returned to the system when a worker ends. The scheduler's HTTP endpoints take any free
    # port (":0"), so that studies side by side do not fight over 8787.
    import multiprocessing

    import dask

    # Workers busy with one engine call each, on as many cores as there are workers: what Dask samples
    # for its dashboard (a stack profile every 10 ms, system metrics every 0.5 s, worker memory every
    # 0.1 s) would take cores from the points; memory is still watched, once a second.
    # Logs kept to the critical: a point's failure comes back through its future (the worker's error, or
    # KilledWorker), while a heartbeat cut by the cluster's own shutdown logged a CommClosedError traceback
    # after a study that had finished well.
    if getattr(multiprocessing.current_process(), "_inheriting", False):
        # A worker process re-imports the script that started it (multiprocessing's spawn, while it is
        # "inheriting"); an unguarded study.run there would start a cluster of its own. The worker ends quietly
        # and the parent says what to do.
        raise SystemExit(2)
    # Ctrl-C reaches the whole process group: the workers never take it, and the parent stops them and says what
    # to do in one line (each worker printed a 30-line KeyboardInterrupt traceback); one during the workers' start
    # stops the study once they are up (_sigint_held). multiprocessing starts its resource tracker with SIGINT
    # blocked, then unblocks it in that thread, which would let the workers started after it take SIGINT: started
    # here first, the tracker is there already. (Only the main thread may set a handler: a study started from
    # another thread leaves it as it is.)
    from multiprocessing import resource_tracker

    resource_tracker.ensure_running()
    cluster = None
    try:
        with _sigint_held():
            with dask.config.set(LOCAL_CLUSTER_CONFIG):
                try:
                    cluster = LocalCluster(n_workers=workers or os.cpu_count() or 1, threads_per_worker=1,
                                           processes=True, dashboard_address=":0", silence_logs=logging.CRITICAL)
                except RuntimeError as e:
                    raise ContendError(f"the study's worker processes did not start ({e}); from a script of your "
                                       "own, call contend.study.run under `if __name__ == \"__main__\":` (each "
                                       "worker re-imports the script), or pass client= a running Dask client") from None
    except BaseException:
        if cluster is not None:
            cluster.close()
        raise
    return Client(cluster)


@contextlib.contextmanager
def _sigint_held() -> Iterator[None]:
    """A Ctrl-C while the workers start, held until they are up and then delivered to the handler in place.

    SIGINT is blocked in the main thread meanwhile: the threads and processes started meanwhile inherit that
    (a process keeps its mask across exec; a handler is reset), so the workers never take a Ctrl-C, and after
    this only the main thread and threads that were there before take one. One sent meanwhile is noted by a
    handler (a thread that was there before, say OpenBLAS's, takes it) or stays pending; ignoring it instead,
    as before, lost it (the study ran to its end). Elsewhere than the main thread, or without pthread_sigmask
    (Windows), nothing changes."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "pthread_sigmask"):
        yield
        return
    noted: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: noted.append(signum))
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        yield
    finally:
        # `previous` is None where a handler not installed from Python was in place: it cannot be put back, and
        # SIGINT stays ignored (as a shell's background job starts).
        signal.signal(signal.SIGINT, signal.SIG_IGN if previous is None else previous)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})  # a pending SIGINT is delivered here
        if noted:
            signal.raise_signal(signal.SIGINT)


@contextlib.contextmanager
def _ctrl_c_noted() -> Iterator[list[int]]:
    """Ctrl-C while the points run raises KeyboardInterrupt where the main thread is, as Python's own handler
    does, and is noted too: raised inside a finalizer (a Dask future's __del__), Python printed it as an
    "Exception ignored" traceback and went on, and the study ran to its end. Such a one is kept quiet here, and
    the loop stops at the next point on the note. Only where Python's own handler is in place (in the main
    thread): another handler, or SIGINT ignored, is left as it is."""
    noted: list[int] = []
    if threading.current_thread() is not threading.main_thread() or (
            signal.getsignal(signal.SIGINT) is not signal.default_int_handler):
        yield noted
        return

    def handler(signum: int, frame: Any) -> None:
        noted.append(signum)
        raise KeyboardInterrupt

    def unraisable(u: Any) -> None:
        if not isinstance(u.exc_value, KeyboardInterrupt):
            previous_hook(u)

    previous_hook, sys.unraisablehook = sys.unraisablehook, unraisable
    signal.signal(signal.SIGINT, handler)
    try:
        yield noted
    finally:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        sys.unraisablehook = previous_hook


LOCAL_CLUSTER_CONFIG = {
    "distributed.worker.profile.enabled": False,
    "distributed.admin.system-monitor.interval": "5s",
    "distributed.worker.memory.monitor-interval": "1s",
}
