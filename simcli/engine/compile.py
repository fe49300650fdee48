"""First-run compile: which compiled builds a run needs, which of them Numba's disk cache lacks,
and compiling those concurrently, one process per core, before the run starts.

A game's kernels compile on their first call (10-60 s of CPU each) and Numba caches the
machine code on disk (``cache=True``, kernels/_jit.py), so this happens once per machine and
source version. A run needs, per game, the build ``play_games`` picks for its seats (with or
without the search player, kernels/builds.py) and the tally fold (kernels/tally.py).

Cache detection (no compile, no subprocess): for each needed jitted function and argument
types we compute the key Numba's ``FunctionCache`` would look up (``_cache._index_key(sig,
codegen)``: signature, CPU, hash of the bytecode) and look for it in the function's cache index
(``*.nbi``, read with ``_cache._cache_file._load_index()``, which also checks the source file's
stamp). Reading a few small index files costs milliseconds, so a warm run is not slower. These
are Numba internals (checked with Numba 0.68); if they are missing the build counts as
"unknown" and is left to compile in-process, as before.

Compiling: one spawned process per core (at most one per game), each playing one game of every
cold build of its games (the same entry point a run calls), which fills the disk cache; the
parent then loads the machine code from the cache on its first call. A game is handed to a
process only when that process is free, so a game's compile clock starts when it does.

A run (``start_compiling``, issue #26) does not wait for the whole compile: the games are handed
out in the order the run first plays them (the tally fold with the first), and the run plays
each job as soon as its game is compiled, on a thread pool at the lowest CPU priority
(``kernels.builds.background``), so its kernels take only the CPU the compile processes leave
free: the core of a process that has no game left to compile, while the other still compiles.
``simcli compile`` (``compile_jobs``) waits for the whole compile and hands games out costliest
first (``COMPILE_COST``), so the cheaper ones fill in beside the costliest.
"""
from __future__ import annotations

import importlib.util
import multiprocessing
import os
import sys
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from simcli.errors import SimError

SEARCH_POLICY = "mc"   # the policy whose seats need the search build (kernels/builds.py)
SEARCH_POLICIES = ("mc", "race", "ismcts", "halve", "sift", "solver")   # every policy that plays in the search build
# (daily-weather's solver too: kernels/daily_weather.py SEARCH_CODES)


@dataclass(frozen=True)
class Build:
    """One compiled build a run needs: a game's ``play_games`` with or without the search player."""
    game: str
    search: bool

    def label(self) -> str:
        return f"{self.game} (search build)" if self.search else self.game


def _has_search(job) -> bool:
    codes = tuple(job.module.POLICIES[p] for p in SEARCH_POLICIES if p in job.module.POLICIES)
    from kernels import builds
    return bool(codes) and builds.has_seat(job.seats, codes)


def builds_for(jobs) -> list[Build]:
    """The builds a job list needs, in first-use order, each once."""
    return list(dict.fromkeys(Build(j.game, _has_search(j)) for j in jobs))


def _sample_args(job):
    """The arguments ``job.module.play_games`` passes its jitted driver for a one-game chunk."""
    from kernels import layout
    mod = job.module
    params = mod.kernel_params(job.params) if hasattr(mod, "kernel_params") else job.params
    seats = np.asarray(job.seats, dtype=np.int64)
    out = np.zeros((1, layout.out_width(seats.shape[0], len(mod.COUNTERS))), dtype=np.int64)
    return [np.asarray(params, dtype=np.int64), seats, np.int64(0), np.int64(0), out]


def driver_calls(job) -> list:
    """[(jitted function, argument tuple)] that a run of ``job`` compiles: the game's build
    (one of the three entry-point patterns in docs/architecture.md) and the tally fold.
    Raises LookupError for a module whose pattern is not known here."""
    from numba.core.registry import CPUDispatcher

    from kernels import builds
    mod = job.module
    args = _sample_args(job)
    search = _has_search(job)
    driver = builds.run_driver(mod)   # the serial driver, run on a thread pool (kernels/builds.py)
    if isinstance(driver, CPUDispatcher):  # `search` None or an array
        call = (driver, (*args, builds._SEARCH if search else None))
    else:
        raise LookupError(f"{job.game}: play_games pattern not known to simcli.compile")
    from simcli.engine.runner import accumulators_for
    return [call, *accumulators_for(job).fold_calls(args[4], bool(mod.LOWER_IS_BETTER))]


def is_cached(dispatcher, args) -> bool | None:
    """Whether Numba has ``dispatcher`` compiled for these argument types, in this process or
    in its disk cache; None when this Numba's cache internals are not as expected."""
    try:
        sig = tuple(dispatcher.typeof_pyval(a) for a in args)
        if sig in dispatcher.overloads:
            return True
        cache = dispatcher._cache
        key = cache._index_key(sig, dispatcher.targetctx.codegen())
        return key in cache._cache_file._load_index()
    except (AttributeError, TypeError):
        return None


def cache_folder(dispatcher) -> str:
    """Where Numba keeps this function's machine code (NUMBA_CACHE_DIR or __pycache__)."""
    try:
        return str(dispatcher._cache.cache_path)
    except AttributeError:
        return "Numba's cache folder"


def cold_builds(jobs) -> tuple[list, list[str]]:
    """(jobs to compile, one per cold build; the cache folders involved)."""
    cold, folders, seen = [], [], set()
    for job in jobs:
        b = Build(job.game, _has_search(job))
        if b in seen:
            continue
        seen.add(b)
        try:
            calls = driver_calls(job)
        except LookupError:
            continue  # unknown pattern: it compiles in-process on first use, as before
        missing = [d for d, a in calls if is_cached(d, a) is False]
        if missing:
            cold.append(job)
            folders += [cache_folder(d) for d in missing]
    return cold, list(dict.fromkeys(folders))


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _compile_in_child(jobs, fold: bool = True) -> float:
    """(Spawned process) play one game of each job's build, filling the disk cache, and fold it
    when ``fold`` (the tally fold is one function for every game: one process compiles it).
    Returns CPU seconds. CPython's frame chunks come from malloc here (``pyarena``): the
    compile's deep recursion otherwise maps and unmaps one 16 KiB chunk per swing."""
    from simcli.engine import pyarena, runner
    pyarena.install()
    t = time.process_time()
    for job in jobs:
        buf = runner.play_chunk(job, 0, 0, 1)
        if fold:   # every call of the fold (one part, and the parts on the threads)
            for fn, args in runner.accumulators_for(job).fold_calls(buf, bool(job.module.LOWER_IS_BETTER)):
                fn(*args)
    return time.process_time() - t


# Compile cost of each game's plain build, measured: CPU seconds of one cold compile in its own
# process, the suite's seats, empty cache (Numba 0.68, kernels/_jit.py's inliner patch, a shared
# 2-core machine, 2026-12-03). Only the order of the compile tasks depends on it: the costliest
# first, so the others fill in around it.
COMPILE_COST = {"pgc": 32.1, "forecasts-bid": 30.4, "daily-weather": 29.5, "sudden-skies": 24.2,
                "forecasts-cubes": 20.8}
COST_PER_KB = 20.8 / 60  # a game not measured above: its source size, at forecasts-cubes' rate


def _cost(game: str) -> float:
    if game in COMPILE_COST:
        return COMPILE_COST[game]
    import kernels
    spec = importlib.util.find_spec(kernels.GAMES[game])
    return COST_PER_KB * os.path.getsize(spec.origin) / 1000 if spec and spec.origin else 0.0


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def compile_jobs(jobs, echo, force_message: bool = False) -> float:
    """Compile the cold builds of ``jobs`` concurrently; returns wall seconds (0 if all warm)."""
    cold, folders = cold_builds(jobs)
    if not cold:
        if force_message:
            echo(f"already compiled: {', '.join(b.label() for b in builds_for(jobs))}")
        return 0.0
    by_game = _by_game(cold)
    order = sorted(by_game, key=lambda g: -_cost(g) * len(by_game[g]))  # costliest first
    procs = min(_cores(), len(order))
    t0 = time.perf_counter()
    watch = _announce(cold, order, procs, folders, echo)
    if procs == 1:  # one game, or one core: compile here, no process to spawn
        for i, g in enumerate(order):
            watch.started(g)
            _compile_in_child(by_game[g], fold=i == 0)
            watch.finished(g)
    else:
        # the fold is one function for all games: the last (smallest) task compiles it
        c = Compiling(order, by_game, procs, watch, fold_game=order[-1]).start()
        try:
            c.wait_all()
        except BaseException:   # Ctrl-C, SIGTERM, a failed build: stop the compiles now
            c.cancel()
            raise
    return _done(t0, watch, echo)


def _by_game(cold) -> dict[str, list]:
    by_game: dict[str, list] = {}
    for job in cold:
        by_game.setdefault(job.game, []).append(job)
    return by_game


def _announce(cold, order, procs, folders, echo) -> "CompileProgress":
    names = ", ".join(b.label() for b in builds_for(cold))
    echo(f"compiling the kernels of {names} (once per machine: Numba caches them in "
         f"{', '.join(folders)}; {procs} process{'es' if procs > 1 else ''}) ...")
    return CompileProgress(order, procs, folders, echo)


def _done(t0: float, watch: "CompileProgress", echo) -> float:
    wall = time.perf_counter() - t0
    watch.save()
    echo(f"compiled in {wall:.0f} s (next runs start warm)")
    return wall


def start_compiling(jobs, echo) -> "Compiling | None":
    """Start compiling the cold builds of ``jobs`` in the background and return at once, so that a
    run plays the jobs of a game whose build is ready while the others still compile
    (``Compiling.wait_for(job)`` before each job). None when there is nothing to wait for: every
    build warm, or a single compile process (one cold game, or one core), which has then already
    compiled here, as ``compile_jobs`` does.

    The games go to the processes in the order the run first uses them, and the first task also
    compiles the tally fold, which every job needs: the first jobs can start as soon as the
    first game is compiled, and the run's own play fills the core that the last compile leaves
    free (the costliest-first order of ``compile_jobs`` would keep the first job waiting for
    the longest compile)."""
    cold, folders = cold_builds(jobs)
    if not cold:
        return None
    by_game = _by_game(cold)
    order = list(by_game)   # first use: cold_builds keeps the jobs' order
    procs = min(_cores(), len(order))
    if procs == 1:
        compile_jobs(jobs, echo)
        return None
    watch = _announce(cold, order, procs, folders, echo)
    return Compiling(order, by_game, procs, watch, fold_game=order[0], echo=echo,
                     background=True, fold_cold=_fold_cold(cold[0])).start()


def _fold_cold(job) -> bool:
    """Whether the tally fold (one function for every game) is missing from the disk cache."""
    try:
        calls = driver_calls(job)[1:]
    except LookupError:
        return True
    return any(is_cached(d, a) is not True for d, a in calls)


class Compiling:
    """Cold builds compiling in spawned processes, one per core, driven by a background thread:
    a game is handed to a process only when that process is free (so its compile clock starts
    when it does), a status line every ``PROGRESS_EVERY_S`` seconds. ``wait_for(job)`` blocks until
    the job's game (and the fold, compiled with ``fold_game``) is in the disk cache."""

    def __init__(self, order: list[str], by_game: dict, procs: int, watch: "CompileProgress",
                 fold_game: str, echo=None, background: bool = False, fold_cold: bool = True):
        self.order, self.by_game, self.procs, self.watch = list(order), by_game, procs, watch
        self.fold_game, self.echo = fold_game, echo
        self.t0 = time.perf_counter()
        self.done: set[str] = set()
        self.error: BaseException | None = None
        self.finished = False
        self.waited = 0.0          # seconds a caller spent in wait_for / wait_all
        self._cond = threading.Condition()
        self._pool = None
        self._thread = None
        self._cancelled = False
        self._stopped: list = []   # the compile processes cancel() terminated
        self.background = background
        self.fold_cold = fold_cold   # else a job waits only for its own game

    def start(self) -> "Compiling":
        if self.background:   # the run's kernels on the CPU the compiles leave free, not theirs
            from kernels import builds
            builds.background(True)
        ctx = multiprocessing.get_context("spawn")
        self._pool = ProcessPoolExecutor(max_workers=self.procs, mp_context=ctx)
        self._thread = threading.Thread(target=self._drive, name="simcli-compile", daemon=True)
        self._thread.start()
        return self

    def _drive(self) -> None:
        from concurrent.futures import FIRST_COMPLETED, wait
        pool, queue, futures = self._pool, list(self.order), {}

        def hand_out():   # the next game to a process that is free now: nothing waits behind a compile
            g = queue.pop(0)
            futures[pool.submit(_compile_in_child, self.by_game[g], g == self.fold_game)] = g
            self.watch.started(g)

        try:
            for _ in range(min(self.procs, len(queue))):
                hand_out()
            pending = set(futures)
            while pending:
                done, pending = wait(pending, timeout=PROGRESS_EVERY_S, return_when=FIRST_COMPLETED)
                for f in done:
                    f.result()
                    g = futures[f]
                    self.watch.finished(g)
                    with self._cond:
                        self.done.add(g)
                        self._cond.notify_all()
                    if queue:
                        hand_out()
                pending |= {f for f in futures if not f.done()}
                self.watch.report()
        except BaseException as e:   # a failed build: stop the other compiles now, not at their end
            with self._cond:
                self.error = e if not self._cancelled else None
                self._cond.notify_all()
            self.cancel()
            return
        self._foreground()
        with self._cond:
            self.finished = True
            self._cond.notify_all()
        if self.echo is not None:
            _done(self.t0, self.watch, self.echo)
        pool.shutdown()   # the processes exit here, in the background of the run

    def _foreground(self) -> None:
        if self.background:
            from kernels import builds
            builds.background(False)

    def _wait(self, ready) -> None:
        t = time.perf_counter()
        with self._cond:
            while not ready() and self.error is None and not self._cancelled:
                self._cond.wait(0.5)
            err, stopped = self.error, self._cancelled and not ready()
        self.waited += time.perf_counter() - t
        if err is not None:
            raise err
        if stopped:
            raise SimError("the compile was stopped before this build was ready")

    def wait_for(self, job) -> None:
        """Block until ``job`` can run: its game's build and the fold are compiled."""
        need = ({self.fold_game} if self.fold_cold else set()) | (
            {job.game} if job.game in self.by_game else set())
        self._wait(lambda: need <= self.done)

    def wait_all(self) -> None:
        """Block until every game is compiled."""
        self._wait(lambda: self.finished)

    def cancel(self) -> None:
        """Stop the compile processes now (Ctrl-C, SIGTERM, a failed build or run)."""
        with self._cond:
            if self.finished:
                return
            self._cancelled = True
            self._cond.notify_all()
        self._foreground()
        pool = self._pool
        procs_alive = list((getattr(pool, "_processes", None) or {}).values()) if pool else []
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)
        for p in procs_alive:
            p.terminate()
        self._stopped = procs_alive

    def stop_for_exit(self) -> None:
        """(Ctrl-C or SIGTERM, just before the process exits without its exit handlers) stop the
        compile processes, let them go, and release the pool's named semaphores the way a normal
        exit would: otherwise Python's resource tracker prints a "leaked semaphore" warning
        under the interrupt line."""
        self.cancel()
        for p in self._stopped:
            p.join(1.0)
        # the pool's manager thread notices the ended processes and releases its queues (a
        # semaphore unlinked there but not yet unregistered when the process exits is "leaked")
        manager = getattr(self._pool, "_executor_manager_thread", None)
        if manager is not None:
            manager.join(2.0)
        from multiprocessing import util
        util._run_finalizers(0)   # what multiprocessing runs at exit (os._exit skips it)


PROGRESS_EVERY_S = 10.0          # a compile status line at least this often
TIMES_FILE = "simcli-compile-seconds.json"   # beside Numba's cache: this machine's compile times


class CompileProgress:
    """Which game is compiling, the elapsed time and, once this machine has compiled a game
    before (its seconds are kept beside Numba's cache), an estimate of the time left."""

    def __init__(self, order: list[str], procs: int, folders: list[str], echo):
        self.order, self.procs, self.echo = order, procs, echo
        self.path = Path(folders[0]) / TIMES_FILE if folders else None
        self.known = self._load()
        self.t0 = time.perf_counter()
        self.start: dict[str, float] = {}
        self.took: dict[str, float] = {}
        self.last = 0.0

    def _load(self) -> dict:
        import json
        try:
            data = json.loads(self.path.read_text()) if self.path else {}
            return {k: float(v) for k, v in data.items()}
        except (OSError, ValueError, AttributeError, TypeError):
            return {}

    def started(self, game: str) -> None:
        self.start.setdefault(game, time.perf_counter())

    def finished(self, game: str) -> None:
        self.started(game)
        self.took[game] = time.perf_counter() - self.start[game]
        self.echo(f"  compiled {game} in {self.took[game]:.0f} s ({len(self.took)} of {len(self.order)})")

    def estimate_left(self) -> float | None:
        """Seconds left, from this machine's earlier compile times (None: never measured)."""
        if not all(g in self.known for g in self.order):
            return None
        now = time.perf_counter()
        lanes = sorted(max(self.known[g] - (now - self.start[g]), 0.0)
                       for g in self.start if g not in self.took)
        lanes += [0.0] * (self.procs - len(lanes))
        for g in self.order:   # queued games go to the lane that frees first
            if g not in self.start:
                lanes.sort()
                lanes[0] += self.known[g]
        return max(lanes) if lanes else 0.0

    def report(self) -> None:
        now = time.perf_counter()
        if now - self.last < PROGRESS_EVERY_S * 0.9:
            return
        self.last = now
        running = [g for g in self.start if g not in self.took]
        left = self.estimate_left()
        tail = (f", about {left:.0f} s left (this machine's last compile times)" if left is not None
                else ", no estimate yet (the first compile on this machine)")
        self.echo(f"  compiling {', '.join(running) or '...'}: {now - self.t0:.0f} s elapsed, "
                  f"{len(self.took)} of {len(self.order)} games done{tail}")

    def save(self) -> None:
        import json
        if self.path is None:
            return
        try:
            self.path.write_text(json.dumps({**self.known, **self.took}, indent=1))
        except OSError:
            pass   # a read-only cache: no estimate next time, nothing else lost


def ensure_compiled(jobs, echo) -> float:
    """Before simulating ``jobs``: compile whatever builds the Numba disk cache lacks,
    concurrently, telling the user on ``echo`` (one line before, one after). Nothing is
    printed or spawned when every build is cached. Returns the wall seconds spent."""
    return compile_jobs(jobs, echo)


def compile_jobs_for_games(games: list[str]) -> list:
    """One job per build of each game: its plain build and its search build."""
    from simcli.config import jobs as cfg
    known = cfg.known_games()
    for g in games:
        if g not in known:
            raise SimError(f"unknown game {g!r}; valid games: {', '.join(known)}")
    jobs = []
    for g in games or known:
        job = cfg.resolve(g)                       # default variant and player count, random seats
        jobs.append(job)
        mod = job.module
        if SEARCH_POLICY in mod.POLICIES:          # one cheap search seat: the same compiled build
            lo = mod.POLICY_ARGS[SEARCH_POLICY][0][2] if SEARCH_POLICY in getattr(mod, "POLICY_ARGS", {}) else ""
            seat = f"{SEARCH_POLICY}:{lo}" if lo != "" else SEARCH_POLICY
            if job.players == 1:
                jobs.append(cfg.resolve(g, job.variant, job.players, seats=seat))
            else:
                jobs.append(cfg.resolve(g, job.variant, job.players,
                                        seats=",".join([seat] + ["random"] * (job.players - 1))))
    return jobs


def compile_command(games: list[str], echo=_stderr) -> float:
    """``simcli compile [GAME ...]``: fill the Numba cache for every build of the games (all
    games when none is named), e.g. in a Docker image or a CI cache step."""
    return compile_jobs(compile_jobs_for_games(games), echo, force_message=True)
