"""Every registered game keeps the module contract (docs/architecture.md).

Runs over each game with a config, each variant and each player count: the result rows are
well-formed, serial == parallel == other chunkings == other thread counts, and the trace of
game i is game i of a run.
"""
from __future__ import annotations

import numba
import numpy as np
import pytest

from kernels import layout
from simcli.config import jobs as cfg
from simcli.engine import runner
from simcli.analyses.trace import trace_rows

N = 300  # games per job; small: invariants here, statistics elsewhere


def all_jobs():
    jobs = []
    for game in cfg.known_games():
        _, variants = cfg.variants_of(game)
        for v, d in variants.items():
            for p in d["players"]:
                jobs.append(pytest.param(game, v, p, id=f"{game}-{v}-{p}p"))
    return jobs


def _rows(job, first, n, serial=False):
    mod = job.module
    out = np.zeros((n, layout.out_width(job.seats.shape[0], len(mod.COUNTERS))), dtype=np.int64)
    fn = mod.play_games_serial if serial else mod.play_games
    fn(job.params, job.seats, np.int64(7), np.int64(first), out)
    return out


def _policy_mixes(game, variant, players):
    job = cfg.resolve(game, variant, players)
    # parameterised (search) policies at a tiny budget: the contract, not their strength
    args = getattr(job.module, "POLICY_ARGS", {})
    names = [f"{n}:2" if n in args else n for n in cfg.user_policies(job.module, players, job.params)]
    mixes = [None] + [",".join(names[(s + k) % len(names)] for s in range(players)) for k in range(len(names))]
    return [cfg.resolve(game, variant, players, seats=m) if m else job for m in mixes]


@pytest.mark.parametrize("game,variant,players", all_jobs())
def test_result_rows_are_well_formed(game, variant, players):
    for job in _policy_mixes(game, variant, players):
        mod = job.module
        row = job.row
        S = row.S
        out = _rows(job, 0, N)
        assert out.shape[1] == row.width
        lo, hi = mod.score_range(players, job.params)
        llo, lhi = mod.length_range(players, job.params)
        scores = out[:, row.scores]
        places = out[:, row.places]
        winners = out[:, row.winners]
        timeout = (out[:, row.flags] & layout.FLAG_TIMEOUT) != 0
        length = out[:, row.length]
        assert ((scores >= lo) & (scores <= hi)).all(), "score outside score_range"
        assert ((length >= llo) & (length <= lhi)).all(), "length outside length_range"
        assert (out[:, row.decisions] > 0).all(), "every game takes decisions"
        if getattr(mod, "SOLO", False):
            # a solo puzzle: winners 0 is a lost attempt; a timeout never has a winner
            assert (winners[timeout] == 0).all()
        else:
            assert ((winners == 0) == timeout).all(), "no winner exactly when timed out"
        assert (winners < (1 << S)).all()
        for i in range(N):
            if timeout[i] or winners[i] == 0:
                continue
            won = [(winners[i] >> s) & 1 for s in range(S)]
            # winners hold place 1 and nobody else does
            assert all((places[i, s] == 1) == bool(won[s]) for s in range(S)), (i, places[i], won)
            assert all(1 <= places[i, s] <= S for s in range(S))
            # places are competition-ranked: place p means p-1 seats ranked strictly better
            for s in range(S):
                assert places[i, s] == 1 + sum(places[i, t] < places[i, s] for t in range(S))
        assert (out[:, row.counters] >= 0).all(), "counters are non-negative sums"


@pytest.mark.parametrize("game,variant,players", all_jobs())
def test_serial_parallel_chunks_and_threads_agree(game, variant, players):
    job = cfg.resolve(game, variant, players)
    whole = _rows(job, 100, N, serial=True)
    assert np.array_equal(whole, _rows(job, 100, N))
    split = np.vstack([_rows(job, 100, 37), _rows(job, 137, N - 37)])
    assert np.array_equal(whole, split)
    numba.set_num_threads(1)
    try:
        assert np.array_equal(whole, _rows(job, 100, N))
    finally:
        runner.set_threads(None)


@pytest.mark.parametrize("game,variant,players", all_jobs())
def test_rows_are_fully_written_even_in_a_dirty_buffer(game, variant, players):
    job = cfg.resolve(game, variant, players)
    clean = _rows(job, 0, 20)
    dirty = np.full_like(clean, 7)
    job.module.play_games(job.params, job.seats, np.int64(7), np.int64(0), dirty)
    assert np.array_equal(clean, dirty)


@pytest.mark.parametrize("game,variant,players", all_jobs())
def test_trace_is_the_simulated_game(game, variant, players):
    for job in _policy_mixes(game, variant, players)[:2]:
        rows = _rows(job, 0, 5)
        for g in (0, 3):
            out, events = trace_rows(job, 7, g)
            assert np.array_equal(out, rows[g])
            assert len(events) > 0
            known = {e.code for e in job.module.EVENTS}
            assert set(events[:, 0].tolist()) <= known


@pytest.mark.parametrize("game,variant,players", all_jobs())
def test_run_totals_do_not_depend_on_chunk_size(game, variant, players):
    job = cfg.resolve(game, variant, players)
    a = runner.run_jobs([job], 200, 11, chunk=200, progress=False)[0].acc
    b = runner.run_jobs([job], 200, 11, chunk=33, progress=False)[0].acc
    for k, v in a.arrays().items():
        assert np.array_equal(v, b.arrays()[k]), k
    assert a.misc[6] == 0, "a score or length fell outside the declared histogram range"


def test_every_game_declares_the_contract():
    for game in cfg.known_games():
        mod = cfg.game_module(game)
        for name in ("GAME_ID", "VERSION", "PLAYER_COUNTS", "RULES", "POLICIES", "COUNTERS",
                     "EVENTS", "LOWER_IS_BETTER", "LENGTH_UNIT", "n_seats", "extra_seats",
                     "score_range", "length_range", "check", "play_games", "play_games_serial",
                     "trace_game", "format_card", "derived_metrics"):
            assert hasattr(mod, name), f"{game} lacks {name}"
        assert mod.GAME_ID == game
        assert sorted(r.index for r in mod.RULES) == list(range(len(mod.RULES)))
        assert len({e.code for e in mod.EVENTS}) == len(mod.EVENTS)
        for r in mod.RULES:
            assert r.decode(r.encode(r.default)) == r.default, r.name
