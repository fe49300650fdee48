"""Runner-facing entry points that choose a compiled build: with or without the search player.

A game whose ``play_one`` takes a ``search`` argument (None, or any array when a seat plays
``mc``) is compiled once per build; Numba prunes every ``search is not None`` branch from the
build without it, so random and heuristic play carry no search code and a run compiles only the
build it uses (docs/architecture.md). ``entry_points`` wraps a module's three jitted drivers,
each taking ``search`` as its last argument, into the contract's ``play_games``,
``play_games_serial`` and ``trace_game``. Plain Python closures: nothing here is compiled.

``play_games`` runs in parallel by handing row ranges of ``out`` to the game's *serial* driver
on a pool of Python threads (the drivers release the GIL: ``nogil``, kernels/_jit.py), as many
as ``numba.get_num_threads()`` (``--threads``). Each game is a pure function of (seed, game
index), so the rows are the same whatever the split. The game's ``prange`` driver is not
compiled: its parfor lowering compiled and optimised the whole game four more times (the
gufunc, its two wrappers, the driver), 4-7 s of CPU of a game's 25-35 s cold compile (issue
#26). ``SIMCLI_DRIVER=prange`` runs the ``prange`` driver instead (measurements, fallback).

Each jitted level above the game costs a whole-game compile again: Numba links a callee's
optimised module into its caller's and runs the module optimiser (O3) and code generation over
the result. So the row-range loop (cubes, bid and sudden-skies' ``_play_range``; pgc and
daily-weather's ``play_one``, whose drivers loop themselves) is ``inline='always'``: inlined into
each driver instead of compiled as a level of its own (pgc: O3 + codegen 6.3 -> 4.5 s of CPU, one
cold compile). cubes' and bid's ``play_one`` stays a level: it is compiled without reference
counting (``jit_borrowing``), which an inlined copy would lose.
"""
from __future__ import annotations

import os
import threading

import numba
import numpy as np

_SEARCH = np.zeros(1, dtype=np.int64)


def has_seat(seats, code) -> bool:
    """Whether some seat row's policy code is ``code`` (e.g. a game's ``P_MC``), or one of the
    codes of a tuple (a game's search players: ``(P_MC, P_RACE)``)."""
    return bool(np.isin(np.asarray(seats)[:, 0], np.asarray(code)).any())


def search_arg(seats, mc_code):
    """``None`` unless some seat row's policy code is ``mc_code`` (an int or a tuple of codes)."""
    return _SEARCH if has_seat(seats, mc_code) else None


DRIVER_ENV = "SIMCLI_DRIVER"
PIECES_PER_THREAD = 4   # row ranges per thread: a range of slow games does not hold up the rest
_pool = None
_pool_lock = threading.Lock()


def use_prange() -> bool:
    """Whether ``play_games`` runs the game's ``prange`` driver (``SIMCLI_DRIVER=prange``)."""
    return os.environ.get(DRIVER_ENV, "") == "prange"


def run_driver(mod):
    """The jitted driver ``play_games`` compiles and calls for ``mod`` (compile.py's cache check)."""
    return mod._play_games if use_prange() else mod._play_games_serial


_background = None   # the low-priority pool while a first run still compiles (below)


def thread_pool():
    """The process's one pool of Python threads for GIL-free kernels (play ranges here, the
    fold's parts in kernels/tally.py), NUMBA_NUM_THREADS of them, made on first use; the
    low-priority pool instead while ``background(True)`` is in effect."""
    global _pool
    with _pool_lock:
        if _background is not None:
            return _background
        if _pool is None:
            from concurrent.futures import ThreadPoolExecutor
            _pool = ThreadPoolExecutor(max_workers=numba.config.NUMBA_NUM_THREADS,
                                       thread_name_prefix="simcli-kernel")
        return _pool


def _lowest_priority() -> None:
    """(A pool thread's initializer) this thread at nice 19: Linux keeps a nice value per thread,
    so the rest of the process, and threads made later by other threads, keep theirs."""
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)
    except (AttributeError, OSError):   # not Linux: the pool runs at normal priority
        pass


def background(on: bool) -> None:
    """While ``on``, kernels run on a pool of threads at the lowest CPU priority (nice 19): a
    first run plays the jobs of compiled games on whatever CPU its compile processes leave free,
    without slowing them (simcli/engine/compile.py). Off again, the normal pool is used from the
    next call on; the low-priority pool's threads finish what they were given and then exit.
    Nothing computed depends on which pool plays a range."""
    global _background
    with _pool_lock:
        if on and _background is None:
            from concurrent.futures import ThreadPoolExecutor
            _background = ThreadPoolExecutor(max_workers=numba.config.NUMBA_NUM_THREADS,
                                             thread_name_prefix="simcli-kernel-bg",
                                             initializer=_lowest_priority)
        elif not on:
            _background = None   # not shut down: a caller may hold it for one more submit


def play_parallel(serial, params, seats, seed, first_game, out, search):
    """``serial(params, seats, seed, first_game, out, search)`` over row ranges of ``out`` on
    ``numba.get_num_threads()`` threads: rows [lo, hi) are games ``first_game + lo ..``."""
    n = out.shape[0]
    t = min(numba.get_num_threads(), n)
    if t <= 1:
        if _background is not None:   # one thread, at low priority too
            thread_pool().submit(serial, params, seats, seed, first_game, out, search).result()
        else:
            serial(params, seats, seed, first_game, out, search)
        return
    k = min(n, PIECES_PER_THREAD * t)
    cuts = [n * i // k for i in range(k + 1)]
    jobs = [thread_pool().submit(serial, params, seats, seed, np.int64(first_game + lo), out[lo:hi],
                              search) for lo, hi in zip(cuts, cuts[1:])]
    try:
        for j in jobs:
            j.result()
    except BaseException:   # Ctrl-C, SIGTERM, a failed range: the ranges not started are dropped
        for j in jobs:
            j.cancel()
        raise


def play(prange_driver, serial_driver, params, seats, seed, first_game, out, search):
    """Games into the rows of ``out`` in parallel: the serial driver on the thread pool, or the
    ``prange`` driver with ``SIMCLI_DRIVER=prange``."""
    if use_prange():
        prange_driver(params, seats, seed, first_game, out, search)
    else:
        play_parallel(serial_driver, params, seats, seed, first_game, out, search)


def entry_points(play_games, play_games_serial, trace_game, mc_code):
    def _play_games(params, seats, seed, first_game, out):
        """Play games ``first_game .. first_game + len(out) - 1``, one row each, in parallel."""
        play(play_games, play_games_serial, params, seats, seed, first_game, out,
             search_arg(seats, mc_code))

    def _play_games_serial(params, seats, seed, first_game, out):
        """``play_games`` without prange (tests: serial == parallel)."""
        play_games_serial(params, seats, seed, first_game, out, search_arg(seats, mc_code))

    def _trace_game(params, seats, seed, game_index, out, ev, ev_n):
        """Play game ``game_index`` into ``out[0]``, recording events."""
        trace_game(params, seats, seed, game_index, out, ev, ev_n, search_arg(seats, mc_code))

    return _play_games, _play_games_serial, _trace_game
