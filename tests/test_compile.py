"""First-run compile (simcli/compile.py): which builds a job list needs, cache detection on a fresh
Numba cache (cold), after compiling (warm, loaded from disk in a new process), and the spawn path.

Kept cheap: one build (forecasts-cubes without search) compiled once into a fresh NUMBA_CACHE_DIR;
Numba reads that variable at import, so each stage runs in its own Python process.
"""
from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from simcli.engine import compile as cc
from simcli.config import jobs as cfg
from simcli.errors import SimError

ROOT = Path(__file__).resolve().parent.parent


def test_builds_for_a_job_list_by_hand():
    jobs = [cfg.resolve("forecasts-cubes", policy="random"),
            cfg.resolve("forecasts-cubes", seats="mc:4,random,random,random"),
            cfg.resolve("forecasts-cubes", "advisory", 3, policy="heuristic"),   # same build as the first
            cfg.resolve("pgc", policy="heuristic"),
            cfg.resolve("forecasts-bid", seats="random,mc,random,random")]
    assert cc.builds_for(jobs) == [cc.Build("forecasts-cubes", False), cc.Build("forecasts-cubes", True),
                                   cc.Build("pgc", False), cc.Build("forecasts-bid", True)]


@pytest.mark.parametrize("game", cfg.known_games())
def test_every_game_entry_point_pattern_is_known(game):
    """compile.py finds the jitted driver of both builds of every game (no compile happens)."""
    jobs = cc.compile_jobs_for_games([game])
    assert [cc.Build(j.game, cc._has_search(j)) for j in jobs] == [cc.Build(game, False), cc.Build(game, True)]
    for job in jobs:
        calls = cc.driver_calls(job)
        # the game's driver (the serial one, run on a thread pool: kernels/builds.py) and the
        # tally fold (fold_part: the rows and, in a game with opponents, their arc blocks)
        assert len(calls) == 2
        assert calls[0][0] is job.module._play_games_serial
        for fn, args in calls:
            assert hasattr(fn, "_cache")
            assert cc.is_cached(fn, args) in (True, False)
            sig = tuple(fn.typeof_pyval(a) for a in args)
            assert len(sig) == fn.py_func.__code__.co_argcount  # the call matches the function


def test_compile_command_refuses_an_unknown_game():
    with pytest.raises(SimError, match="unknown game 'nope'; valid games: "):
        cc.compile_command(["nope"], echo=lambda line: None)


_STAGE = """
import json, sys
from simcli.engine import compile as cc
from simcli.config import jobs as cfg
from simcli.engine import runner
job = cfg.resolve("forecasts-cubes", policy="random")
lines = []
cold, folders = cc.cold_builds([job])
res = {"cold_before": [j.describe() for j in cold], "folders": folders}
if sys.argv[1] == "compile":
    res["wall"] = cc.ensure_compiled([job], lines.append)
else:
    res["wall"] = cc.ensure_compiled([job], lines.append)   # warm: nothing to do, nothing said
    (driver, args) = cc.driver_calls(job)[0]
    runner.play_chunk(job, 1, 0, 3)                          # the run's first call
    sig = tuple(driver.typeof_pyval(a) for a in args)
    res["hits"], res["misses"] = driver.stats.cache_hits[sig], driver.stats.cache_misses[sig]
res["lines"] = lines
print(json.dumps(res))
"""


def _stage(cache: Path, what: str) -> dict:
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), PYTHONPATH=str(ROOT))
    p = subprocess.run([sys.executable, "-c", _STAGE, what], capture_output=True, text=True, env=env,
                       cwd=ROOT, timeout=900)
    assert p.returncode == 0, p.stderr[-2000:]
    return json.loads(p.stdout.strip().splitlines()[-1])


def test_fresh_cache_is_cold_compiled_is_warm_and_loaded_from_disk(tmp_path):
    cache = tmp_path / "numba-cache"
    first = _stage(cache, "compile")
    assert first["cold_before"] == ["forecasts-cubes/base/4p [random,random,random,random]"]
    assert first["folders"] and first["folders"][0].startswith(str(cache))
    # the announcement, one line per game as it finishes (progress), the total
    assert len(first["lines"]) == 3 and first["lines"][0].startswith("compiling the kernels of forecasts-cubes (once per machine")
    assert first["lines"][1].startswith("  compiled forecasts-cubes in ") and first["lines"][1].endswith("(1 of 1)")
    assert str(cache) in first["lines"][0] and first["lines"][2].startswith("compiled in ")
    second = _stage(cache, "run")
    assert second["cold_before"] == [] and second["lines"] == [] and second["wall"] == 0.0
    assert second["hits"] == 1 and second["misses"] == 0, "the run loaded the build from the disk cache"


def test_spawned_compile_process_plays_a_job_from_pickled_input():
    """The pool path: a spawned process gets pickled jobs, imports the kernels and plays them
    (with a warm cache this only loads; the test is about the process plumbing)."""
    jobs = [cfg.resolve("forecasts-cubes", policy="random")]
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=1, mp_context=ctx) as pool:
        assert pool.submit(cc._compile_in_child, jobs).result(timeout=900) >= 0.0


def test_a_kernels_cache_stamp_covers_the_shared_modules():
    """A game's cached code is keyed on its own file and on every shared kernels module (a
    constant such as spec.MAX_KNOBS is compiled into the game's code; session 9 found stale
    sudden-skies code read from the cache after MAX_KNOBS changed)."""
    from kernels import _jit, daily_weather, forecasts_bid, forecasts_cubes, pgc, sudden_skies
    for mod in (daily_weather, forecasts_bid, forecasts_cubes, pgc, sudden_skies):
        stamp = mod.play_one._cache._impl.locator.get_source_stamp()
        assert isinstance(stamp, tuple) and stamp[1] == _jit.shared_digest(), mod.GAME_ID


def test_the_shared_digest_follows_shared_modules_not_game_modules(tmp_path):
    import shutil
    from pathlib import Path

    from kernels import _jit
    src = Path(_jit.__file__).parent
    d = tmp_path / "k"
    d.mkdir()
    for f in src.glob("*.py"):
        shutil.copy(f, d / f.name)
    base = _jit.shared_digest.__wrapped__(str(d))
    assert base == _jit.shared_digest()          # the same files: the same digest
    game = d / "pgc.py"
    game.write_text(game.read_text() + "\n# a change to one game\n")
    assert _jit.shared_digest.__wrapped__(str(d)) == base
    spec = d / "spec.py"
    spec.write_text(spec.read_text().replace("MAX_KNOBS = 32", "MAX_KNOBS = 33"))
    assert _jit.shared_digest.__wrapped__(str(d)) != base


# ---- a first run plays the compiled games while the others compile (issue #26) ----------------

class _Job:
    def __init__(self, game):
        self.game = game


def _waiter(compiling, game):
    """wait_for(game) on a thread; returns (thread, box) where box gets 'ok' when it returns."""
    import threading
    box = []

    def wait():
        try:
            compiling.wait_for(_Job(game))
            box.append("ok")
        except SimError as e:
            box.append(str(e))
    t = threading.Thread(target=wait, daemon=True)
    t.start()
    return t, box


def _mark_done(compiling, game):
    with compiling._cond:
        compiling.done.add(game)
        compiling._cond.notify_all()


def test_a_job_waits_for_its_own_game_and_the_fold_and_for_nothing_else():
    """Games a, b, c compile (the fold with a). A job of b may start once a (the fold) and b are
    compiled, whatever c is doing; a job of a warm game w waits only for the fold."""
    watch = cc.CompileProgress(["a", "b", "c"], 2, [], lambda line: None)
    c = cc.Compiling(["a", "b", "c"], {"a": [], "b": [], "c": []}, 2, watch, fold_game="a")
    tb, box_b = _waiter(c, "b")
    tw, box_w = _waiter(c, "w")
    _mark_done(c, "b")
    tb.join(0.3)
    assert box_b == [] and box_w == []           # b is compiled, the fold (with a) is not
    _mark_done(c, "a")
    tb.join(5)
    tw.join(5)
    assert box_b == ["ok"] and box_w == ["ok"]   # c still compiling: nobody waits for it
    tc, box_c = _waiter(c, "c")
    tc.join(0.3)
    assert box_c == []
    c.cancel()                                   # a stopped compile: the waiter gets an error
    tc.join(5)
    assert box_c == ["the compile was stopped before this build was ready"]


def test_with_the_fold_already_cached_a_job_waits_only_for_its_game():
    watch = cc.CompileProgress(["a", "b"], 2, [], lambda line: None)
    c = cc.Compiling(["a", "b"], {"a": [], "b": []}, 2, watch, fold_game="a", fold_cold=False)
    tb, box = _waiter(c, "b")
    _mark_done(c, "b")
    tb.join(5)
    assert box == ["ok"]


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="nice per thread is Linux's")
def test_background_kernels_run_at_the_lowest_priority_and_play_the_same_rows():
    """While a first run compiles, its kernels run on threads at nice 19 (they take only the CPU
    the compile processes leave free); this thread and the normal pool keep their priority, and
    the rows are the same as a serial call's."""
    import numpy as np

    from kernels import builds
    from simcli.engine import runner
    here = os.getpriority(os.PRIO_PROCESS, 0)
    job = cfg.resolve("forecasts-cubes", policy="random")
    serial = np.zeros_like(runner.play_chunk(job, 7, 0, 300))
    job.module.play_games_serial(job.params, job.seats, np.int64(7), np.int64(0), serial)

    def nice_of_a_pool_thread():
        import threading
        return builds.thread_pool().submit(
            lambda: os.getpriority(os.PRIO_PROCESS, threading.get_native_id())).result()

    builds.background(True)
    try:
        assert nice_of_a_pool_thread() == 19
        rows = runner.play_chunk(job, 7, 0, 300).copy()
    finally:
        builds.background(False)
    assert os.getpriority(os.PRIO_PROCESS, 0) == here
    assert nice_of_a_pool_thread() == here
    assert np.array_equal(rows, serial)


@pytest.mark.slow
def test_a_cold_first_run_plays_while_compiling_and_writes_the_golden_suite(tmp_path):
    """The whole suite from an empty Numba cache (jobs played while later games compile, on the
    low-priority pool) gives the golden tables of tests/golden/suite bit for bit. Slow: it
    compiles every game (~1 minute on 2 cores)."""
    from tests.test_golden import GOLDEN, _same
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "nc"), PYTHONPATH=str(ROOT))
    p = subprocess.run([sys.executable, "-m", "simcli.cli", "run", "--games", "3000", "--no-progress",
                        "--out", str(tmp_path / "o")], capture_output=True, text=True, env=env,
                       cwd=ROOT, timeout=1800)
    assert p.returncode == 0, p.stderr[-2000:]
    assert "compiling the kernels of" in p.stderr and "compiled in" in p.stderr
    _same(GOLDEN / "suite", tmp_path / "o")


_STOP_SCRIPT = r"""
import os, sys, time
from simcli.engine import compile as cc
from simcli.config import jobs as cfg
job = cfg.resolve("forecasts-cubes", policy="random")
watch = cc.CompileProgress(["forecasts-cubes"], 1, [], lambda line: None)
c = cc.Compiling(["forecasts-cubes"], {"forecasts-cubes": [job]}, 1, watch,
                 fold_game="forecasts-cubes").start()
time.sleep(1.5)                      # the child is compiling (an empty Numba cache)
assert not c.finished
procs = list(c._pool._processes.values())
getattr(c, sys.argv[1])()            # what an interrupt registers (or, to compare, plain cancel)
print(" ".join(str(p.pid) for p in procs), flush=True)
os._exit(130)                        # as simcli.engine.interrupt does: no exit handlers
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="spawned compile processes")
def test_an_interrupt_stops_the_compile_processes_and_leaves_no_semaphore_warning(tmp_path):
    """Ctrl-C during a first run's compile: the interrupt's cleanup (``stop_for_exit``) ends the
    compile processes and releases the pool's named semaphores before the process exits with
    os._exit, so Python's resource tracker has nothing to print under "interrupted: nothing
    written" (plain ``cancel`` leaves its "leaked semaphore objects" warning: the control)."""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "nc"), PYTHONPATH=str(ROOT))

    def interrupted(how):
        r = subprocess.run([sys.executable, "-c", _STOP_SCRIPT, how], env=env, cwd=ROOT,
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 130, r.stderr
        return r

    # three tries: a finalizer still running on another thread at os._exit can leave one name
    # behind now and then (a rare line, not a hang); two clean tries of three show the fix works
    tries = [interrupted("stop_for_exit") for _ in range(3)]
    warned = [r.stderr for r in tries if "leaked semaphore" in r.stderr]
    assert len(warned) <= 1, warned
    assert "leaked semaphore" in interrupted("cancel").stderr   # the control: the check can fail
    for r in tries:
        for pid in r.stdout.split():
            assert not Path(f"/proc/{pid}").exists() or \
                Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"


# The loops that run once a turn or once a rollout are compiled without reference counting
# (docs/architecture.md, "An allocating shell around a borrowing body"): with counting, every
# call they make counts each array argument up and down with an atomic instruction, which made
# these games' play and search 1.6-2.8x slower (benchmarks/RESULTS.md, session 22) while every
# test still passed. No timing here: the check is that the decorator says so.
_BORROWING_BODIES = {
    "forecasts_cubes": ("play_one", "_mc_samples", "_race_samples", "_ismcts_iterations",
                        "_option_value", "_rollout", "_determinize", "_sample_hidden"),
    "forecasts_bid": ("play_one", "game_rest"),
    "pgc": ("_play_game", "_mc_samples", "rollout", "determinize"),
    "sudden_skies": ("play_one_in", "_mc_samples", "_rollout", "_determinize", "_play_option"),
    "daily_weather": ("_play_game", "_mc_samples", "mc_rollout", "mc_determinize"),
}


@pytest.mark.parametrize("module", sorted(_BORROWING_BODIES))
def test_hot_loops_are_compiled_without_reference_counting(module):
    import importlib
    mod = importlib.import_module(f"kernels.{module}")
    counting = [name for name in _BORROWING_BODIES[module]
                if getattr(mod, name).targetoptions.get("_nrt", True) is not False]
    assert not counting, f"{module}: {counting} count references (use _jit.jit_borrowing)"
