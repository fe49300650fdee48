"""Ctrl-C and SIGTERM stop a command within a second or two and leave nothing behind.

The command runs in a worker thread while the main thread waits on it in short slices, so a
signal is handled at once even while a Numba kernel (which releases the GIL but does not return
to Python for the length of a chunk) is busy. On a signal the main thread removes every staged
output (``simcli.report.output.abandon_all``), keeps the finished work of every journal
(``simcli.engine.journal``; the line then says how much and how to resume), closes anything
registered with ``on_interrupt`` (a Dask cluster this command started), prints one line and exits 130 (SIGINT) or 143 (SIGTERM) without
waiting for the kernel to return.
"""
from __future__ import annotations

import os
import signal
import sys
import threading
from typing import Callable

_CLEANUPS: list[Callable[[], None]] = []
CLEANUP_TIMEOUT_S = 3.0
EXIT_CODES = {signal.SIGINT: 130, signal.SIGTERM: 143}


def on_interrupt(fn: Callable[[], None]) -> Callable[[], None]:
    """Register a cleanup to run if the command is interrupted; returns a function that
    unregisters it (call it when the resource is closed normally)."""
    _CLEANUPS.append(fn)

    def forget():
        if fn in _CLEANUPS:
            _CLEANUPS.remove(fn)
    return forget


def _quietly(fn) -> None:
    try:
        fn()
    except Exception:
        pass


def _quietly_lines(fn) -> list[str]:
    try:
        return fn()
    except Exception:
        return []


class _Stop(Exception):
    def __init__(self, signum):
        self.signum = signum


def run_interruptibly(fn: Callable[[], int]) -> int:
    """Run ``fn`` in a worker thread; return its exit code, or handle SIGINT/SIGTERM."""
    if threading.current_thread() is not threading.main_thread():
        return fn()  # signals can only be caught in the main thread (e.g. inside a test runner)
    box: dict = {}

    def work():
        try:
            box["code"] = fn()
        except BaseException as e:  # re-raised in the main thread
            box["error"] = e

    def stop(signum, frame):
        raise _Stop(signum)

    old = {s: signal.signal(s, stop) for s in EXIT_CODES}
    worker = threading.Thread(target=work, name="simcli-command", daemon=True)
    try:
        worker.start()
        while worker.is_alive():
            worker.join(0.05)
    except (_Stop, KeyboardInterrupt) as e:
        signum = e.signum if isinstance(e, _Stop) else signal.SIGINT
        _stop_now(signum)
    finally:
        for s, h in old.items():
            signal.signal(s, h)
    if "error" in box:
        raise box["error"]
    return box.get("code", 0)


def _stop_now(signum) -> None:
    from simcli.report.output import abandon_all
    # ignore further signals while cleaning up: a second Ctrl-C must not leave a half-clean state
    for s in EXIT_CODES:
        signal.signal(s, signal.SIG_IGN)
    done = abandon_all()
    for fn in list(_CLEANUPS):  # each gets a few seconds: an interrupt must not hang
        t = threading.Thread(target=_quietly, args=(fn,), daemon=True)
        t.start()
        t.join(CLEANUP_TIMEOUT_S)
    abandon_all()  # again: scratch a closing cluster wrote meanwhile
    from simcli.engine.journal import interrupted_lines
    kept = [] if done else _quietly_lines(interrupted_lines)
    if done:
        msg = f"interrupted after the result was complete: {', '.join(map(str, done))}"
    elif kept:
        msg = "\n".join(kept)
    else:
        msg = "interrupted: nothing written"
    try:
        if sys.stderr.isatty():
            sys.stderr.write("\n")  # below a progress bar, not on it
        sys.stderr.write(msg + "\n")
        sys.stderr.flush()
        sys.stdout.flush()
    except Exception:
        pass
    os._exit(EXIT_CODES.get(signum, 130))
