"""What keeps the cold first run short (issue #26): each play_one compiled for one row type, the
daily-weather solver only in the search build, Numba's inliner copying an inlined function's IR
once (kernels/_jit.py), and the machine code the same with and without that patch."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from kernels import _jit, builds
from kernels import daily_weather as dw
from simcli.engine import compile as cc
from tests.test_golden import GOLDEN, _same

ROOT = Path(__file__).resolve().parents[1]


def _python(code: str, env: dict, timeout: float = 1200) -> str:
    full = {**os.environ, "PYTHONPATH": str(ROOT), **env}
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=ROOT, env=full,
                       capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0, r.stderr[-3000:]
    return r.stdout


def test_the_inline_copy_patch_is_installed_here():
    from numba.core.inline_closurecall import InlineWorker
    assert _jit.inline_copy_patched
    assert getattr(InlineWorker.inline_ir, "_simcli_shared_copy", False)


def test_the_patch_is_off_with_the_environment_switch_and_on_unknown_numba_source():
    out = _python("""
        import json
        import kernels._jit as j
        from numba.core.inline_closurecall import InlineWorker
        off = (j.inline_copy_patched, hasattr(InlineWorker.inline_ir, "_simcli_shared_copy"))
        import os
        del os.environ[j.INLINE_COPY_ENV]
        stock = InlineWorker.inline_ir
        j._STOCK_COPY = "        def copy_ir(the_ir):  # not Numba's text\\n"
        changed = j._patch_inline_copy()        # Numba's loop not as expected: stock behaviour
        print(json.dumps([off, changed, InlineWorker.inline_ir is stock]))
    """, {_jit.INLINE_COPY_ENV: "numba"})
    off, changed, same = json.loads(out.strip().splitlines()[-1])
    assert off == [False, False]
    assert changed is False and same is True


def test_solver_and_mc_seats_pick_the_search_build_greedy_and_random_do_not():
    for policy, search in (("random", False), ("greedy", False), ("solver", True), ("mc", True)):
        seats = np.zeros((1, 4), dtype=np.int64)
        seats[0, 0] = dw.POLICIES[policy]
        assert (builds.search_arg(seats, dw.SEARCH_CODES) is not None) is search, policy
    from simcli.config import jobs as cfg
    for seat, search in (("greedy", False), ("solver", True), ("mc", True)):
        job = cfg.resolve("daily-weather", seats=seat)
        assert cc.builds_for([job]) == [cc.Build("daily-weather", search)], seat


def _row_types(fn) -> set:
    """The row argument's type in every signature of ``fn`` in its disk cache index."""
    index = fn._cache._cache_file._load_index()
    return {str(key[0][5]) for key in index}


@pytest.mark.parametrize("game", ["pgc", "sudden-skies", "daily-weather"])
def test_play_one_is_compiled_for_one_row_type(game):
    from simcli.config import jobs as cfg
    from simcli.engine import runner
    job = cfg.resolve(game)
    runner.play_chunk(job, 0, 0, 2)                                   # parallel driver
    out = np.zeros_like(runner.play_chunk(job, 0, 0, 1))
    job.module.play_games_serial(job.params, job.seats, 1, 0, out)   # serial driver
    mod = job.module
    if game == "sudden-skies":
        # its drivers play blocks of games through play_one_in (its working arrays allocated once
        # per block); play_one is its per-game wrapper (trace)
        assert _row_types(mod.play_one_in) == {"uint64"}
    else:
        # pgc's and daily-weather's play_one is inlined into each driver (kernels/builds.py: a
        # compiled level is a whole-game O3 and codegen again): never compiled on its own
        assert mod.play_one.signatures == []


@pytest.mark.slow
def test_a_cold_plain_run_compiles_one_driver_and_no_solver():
    out = _python("""
        import json
        from simcli.config import jobs as cfg
        from simcli.engine import runner
        from kernels import daily_weather as dw
        runner.play_chunk(cfg.resolve("daily-weather", seats="greedy"), 0, 0, 2)
        print(json.dumps([len(dw._play_games_serial.signatures), len(dw.play_one.signatures),
                          len(dw.solve.signatures), len(dw.choose_solver.signatures)]))
    """, {"NUMBA_CACHE_DIR": _fresh_dir("dw")})
    # one driver compile; play_one inlined into it (kernels/builds.py), the solver not compiled
    assert json.loads(out.strip().splitlines()[-1]) == [1, 0, 0, 0]


def _fresh_dir(tag: str) -> str:
    import tempfile
    return tempfile.mkdtemp(prefix=f"simcli-cold-{tag}-")


@pytest.mark.slow
def test_golden_suite_bit_identical_without_the_patch(tmp_path):
    """Numba's own inliner (the patch switched off) compiles every kernel of the suite from an
    empty cache in its own process and plays the golden suite's tables. The patched build is
    what every other test runs (test_the_inline_copy_patch_is_installed_here), and
    test_golden.py's ``suite`` checks its tables against the same golden files; so the two
    builds agree without compiling the patched one a second time from an empty cache."""
    env = {"NUMBA_CACHE_DIR": str(tmp_path / "cache"), _jit.INLINE_COPY_ENV: "numba"}
    out = tmp_path / "out"
    _python(f"""
        import sys
        import kernels._jit as j
        assert j.inline_copy_patched is False
        import runpy
        sys.argv = ["simcli", "run", "--games", "3000", "--no-progress", "--out", {str(out)!r}]
        try:
            runpy.run_module("simcli.cli", run_name="__main__")
        except SystemExit as e:
            assert not e.code, e.code
    """, env, timeout=2400)
    _same(GOLDEN / "suite", out)



@pytest.mark.parametrize("threads,rows", [(1, 5), (2, 1), (2, 7), (2, 64), (2, 1001)])
def test_the_thread_pool_driver_gives_every_row_its_own_game_once(threads, rows, monkeypatch):
    """play_parallel hands row ranges to the serial driver: row i is game first_game + i."""
    import numba
    monkeypatch.setattr(numba, "get_num_threads", lambda: threads)
    calls = []

    def serial(params, seats, seed, first_game, out, search):
        calls.append(out.shape[0])
        for i in range(out.shape[0]):
            out[i, 0] = first_game + i
            out[i, 1] += 1

    out = np.zeros((rows, 2), dtype=np.int64)
    builds.play_parallel(serial, None, None, np.int64(3), np.int64(100), out, None)
    assert out[:, 0].tolist() == list(range(100, 100 + rows))
    assert out[:, 1].tolist() == [1] * rows
    assert sum(calls) == rows
    assert len(calls) == (1 if threads == 1 or rows == 1 else min(rows, builds.PIECES_PER_THREAD * threads))


@pytest.mark.slow
@pytest.mark.parametrize("game", ["forecasts-cubes", "daily-weather"])
def test_the_prange_fallback_plays_the_same_rows(game, monkeypatch):
    """SIMCLI_DRIVER=prange (the old driver, kept for measurements) fills the same rows as the
    default thread-pool driver at 2 threads: a game is a function of (seed, game index), not of
    the split. daily-weather has its own play_games; the others go through builds.entry_points."""
    import numba

    from kernels import layout
    from simcli.config import jobs as cfg
    job = cfg.resolve(game)
    mod = job.module
    numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
    outs = []
    try:
        for driver in ("", "prange"):
            monkeypatch.setenv(builds.DRIVER_ENV, driver)
            out = np.full((300, layout.out_width(job.seats.shape[0], len(mod.COUNTERS))), 7,
                          dtype=np.int64)
            mod.play_games(job.params, job.seats, np.int64(7), np.int64(0), out)
            outs.append(out)
    finally:
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    assert builds.run_driver(mod) is mod._play_games       # the prange driver did run
    assert np.array_equal(outs[0], outs[1])
