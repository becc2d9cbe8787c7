"""Ctrl-C stops a long run at once, through the CLI and the Python API, and leaves the process ready for the next call.

While a core call runs, a SIGINT handler chained before Python's asks the executor to stop at its next instant
(contend_core::interrupt, contend-py's sigint.rs). Before, SIGINT was seen only once the whole run had
finished: minutes for seed 003's mix under packet. The runs below would take minutes; the bounds allow for a slow
machine and still fail if the run goes on to its end."""

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

import contend
from contend import api


@contextlib.contextmanager
def sigint_after(seconds: float):
    """SIGINT to this process after ``seconds``, as a terminal's Ctrl-C would send it; withdrawn on leaving."""
    timer = threading.Timer(seconds, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    try:
        yield
    finally:
        timer.cancel()


@pytest.fixture(autouse=True)
def python_handles_sigint():
    """These tests are about Ctrl-C at a terminal, where Python has its own SIGINT handler. A launcher that ignores
    SIGINT (a shell's background job without job control) leaves Python without it, and contend then rightly leaves
    the signal ignored: give Python its handler for the test, and the previous one back after."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def as_at_a_terminal():
    """In a child process: SIGINT's default action, so that Python installs its handler (not an inherited SIG_IGN)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


LONG = "cluster: fat-tree-256x8\nmodel: packet\nnic_scheduling: fcfs\nworkload:\n  mix: {seed: 1}\n"


def test_ctrl_c_stops_contend_run_with_the_usual_code(tmp_path):
    scenario = tmp_path / "mix.yaml"
    scenario.write_text(LONG)
    p = subprocess.Popen([sys.executable, "-m", "contend.cli", "run", str(scenario), "--json"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, preexec_fn=as_at_a_terminal)
    time.sleep(4)  # the command's start and the mix's lowering: the signal lands in the core or just before it
    sent = time.monotonic()
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=120)
    assert p.returncode == 130, err
    assert time.monotonic() - sent < 30, "the run went on after Ctrl-C"
    assert "Traceback" not in err, err


@pytest.mark.skipif(threading.current_thread() is not threading.main_thread(), reason="signals reach the main thread")
def test_ctrl_c_stops_the_python_api_and_the_next_call_runs(tmp_path):
    scenario = tmp_path / "mix.yaml"
    scenario.write_text(LONG)
    start = time.monotonic()
    with sigint_after(2.0), pytest.raises(KeyboardInterrupt):
        api.run(scenario)
    assert time.monotonic() - start < 30, "the run went on after Ctrl-C"
    # The stop was withdrawn: the next call runs to its end.
    r = contend.simulate("dgx-a100", contend.Transfers.parse("transfers:\n  - {src: GPU0, dst: GPU1, size: 1MiB}\n"),
                         model="maxmin")
    assert r.transfers["finish_s"].iloc[0] > 0


def test_ctrl_c_stops_packet_inside_an_instant(tmp_path):
    """packet runs every packet until the next transfer finishes inside one of the executor's instants (its own event
    loop), so the stop is checked there too: a 64 MiB permutation on 2,048 GPUs takes minutes and its first finish is
    most of the run."""
    perm = tmp_path / "perm.yaml"
    subprocess.run([sys.executable, "-m", "contend.cli", "generate", "permutation", "fat-tree-512x4", "--size", "64MiB",
                    "-o", str(perm)], check=True, capture_output=True)
    p = subprocess.Popen([sys.executable, "-m", "contend.cli", "simulate", "fat-tree-512x4", str(perm), "--model",
                          "packet"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         preexec_fn=as_at_a_terminal)
    time.sleep(4)
    sent = time.monotonic()
    p.send_signal(signal.SIGINT)
    _, err = p.communicate(timeout=120)
    assert p.returncode == 130, err
    assert time.monotonic() - sent < 30, "packet went on after Ctrl-C"


def test_ctrl_c_stops_the_main_threads_call_only(tmp_path):
    """Python raises KeyboardInterrupt on the main thread alone: another thread's contend calls meanwhile give their
    results (the stop is the main thread's call's)."""
    scenario = tmp_path / "mix.yaml"
    scenario.write_text(LONG)
    machine = contend.Machine.load("dgx-a100")
    copy = contend.Transfers.parse("transfers:\n  - {src: GPU0, dst: GPU1, size: 1MiB}\n")
    results, errors, done = [], [], threading.Event()

    def calls():
        while not done.is_set():
            try:
                results.append(contend.simulate(machine, copy, model="maxmin").transfers["finish_s"].iloc[0])
            except BaseException as e:  # noqa: BLE001 - the test counts every exception
                errors.append(e)

    worker = threading.Thread(target=calls)
    worker.start()
    try:
        with sigint_after(2.0), pytest.raises(KeyboardInterrupt):
            api.run(scenario)
    finally:
        done.set()
        worker.join()
    assert not errors, errors[:3]
    assert results and len(set(results)) == 1


def test_a_program_handling_sigint_itself_keeps_its_call(tmp_path):
    """A SIGINT handler of the program's own (not Python's KeyboardInterrupt) is left to decide: the call runs on."""
    scenario = tmp_path / "mix.yaml"
    scenario.write_text(LONG.replace("model: packet", "model: maxmin"))
    hits = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: hits.append(signum))
    try:
        with sigint_after(0.5):
            report = api.run(scenario)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert hits == [signal.SIGINT]
    assert report.raw["summary"]["messages"] > 0
