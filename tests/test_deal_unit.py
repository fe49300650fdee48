"""The deal as the unit (issue #19): per-deal integer tallies, checked against per-game rows,
identical for any chunking; the lazy chunk plan; --until-ci checkpoints independent of --chunk."""
from __future__ import annotations

import numpy as np
import pytest

from kernels import arc, layout
from kernels.tally import D_H, D_HH, D_HR, D_N, D_R, D_RR, M_DEALS, M_GAMES
from simcli.config import jobs as cfg
from simcli.report import tables as report
from simcli.engine import runner

GAME = "forecasts-cubes"
SEATS = "heuristic,random,heuristic,random"


def _units(rows: np.ndarray, S: int) -> np.ndarray:
    """Win units per game and seat, from the winners bit mask (written independently of runner)."""
    out = np.zeros((rows.shape[0], S), dtype=np.int64)
    for i, w in enumerate(rows[:, layout.col_winners(S)]):
        seats = [s for s in range(S) if (int(w) >> s) & 1]
        for s in seats:
            out[i, s] = layout.SHARE_UNIT // len(seats)
    return out


def test_unrotated_squares_are_per_game_squares():
    job = cfg.resolve(GAME, "base", 4, seats=SEATS)
    (res,) = runner.run_jobs([job], 3000, 4, chunk=700, progress=False)
    u = _units(runner.play_chunk(job, 4, 0, 3000), 4)
    assert np.array_equal(res.acc.win_units, u.sum(axis=0))
    assert np.array_equal(res.acc.win_sq, (u * u).sum(axis=0))
    assert res.acc.misc[M_DEALS] == res.acc.misc[M_GAMES] == 3000


def test_rotated_squares_sum_a_deals_rotations_first():
    job = cfg.resolve(GAME, "base", 4, seats=SEATS)
    (res,) = runner.run_jobs([job], 2000, 4, chunk=333, progress=False, rotate=True)
    per_deal = np.zeros((2000, 4), dtype=np.int64)
    for rj in runner.rotated_jobs(job):
        per_deal += _units(runner.play_chunk(rj, 4, 0, 2000), 4)
    assert np.array_equal(res.acc.win_sq, (per_deal * per_deal).sum(axis=0))
    assert res.acc.misc[M_DEALS] == 2000 and res.acc.misc[M_GAMES] == 8000
    # the reported interval uses deals: it is wider than Wilson with n = games would be
    seats = report.build_tables([res])["seats"]
    assert seats["deals"].to_list() == [2000] * 4
    from simcli.stats import wilson
    for row in seats.iter_rows(named=True):
        lo, hi = wilson(row["win_share"], 8000)
        assert row["win_ci_high"] - row["win_ci_low"] > hi - lo


def _deal_sums(hits: np.ndarray) -> np.ndarray:
    """The arc's per-deal sums (slots x D_*) from per-deal hits, with numpy (not kernels.tally)."""
    r, h = hits[:, :, arc.H_REACHED], hits[:, :, arc.H_LEADER_WINS]
    out = np.zeros((arc.N_SLOTS, 6), dtype=np.int64)
    for col, v in ((D_R, r), (D_H, h), (D_RR, r * r), (D_HH, h * h), (D_HR, h * r), (D_N, r > 0)):
        out[:, col] = v.sum(axis=0)
    return out


def _hits(job, rows: np.ndarray) -> np.ndarray:
    row = layout.RowLayout(job.seats.shape[0], len(job.module.COUNTERS))
    hits = np.zeros((rows.shape[0], arc.N_SLOTS, 2), dtype=np.int64)
    arc.game_hits(rows, row.arc.start, row.S, row.winners, row.flags, hits)
    return hits


@pytest.mark.parametrize("game", ["forecasts-cubes", "pgc", "sudden-skies"])
def test_arc_deal_sums_are_the_squares_of_each_deals_hits(game):
    """Unrotated, each game is a deal (the runner folds rows without a hits array); rotated, a
    deal's rotations add their hits first. Both against numpy on arc.game_hits of the rows."""
    job = cfg.resolve(game, None, 4)
    (res,) = runner.run_jobs([job], 1200, 3, chunk=500, progress=False)
    assert res.acc.arc_deal.any()
    assert np.array_equal(res.acc.arc_deal, _deal_sums(_hits(job, runner.play_chunk(job, 3, 0, 1200))))
    (rot,) = runner.run_jobs([job], 300, 3, chunk=128, progress=False, rotate=True)
    hits = sum(_hits(rj, runner.play_chunk(rj, 3, 0, 300)) for rj in runner.rotated_jobs(job))
    assert np.array_equal(rot.acc.arc_deal, _deal_sums(hits))


@pytest.mark.parametrize("rotate", [False, True])
def test_tallies_identical_for_any_chunk_and_threads(rotate):
    job = cfg.resolve(GAME, "base", 4, seats=SEATS)
    a = runner.run_jobs([job], 1500, 8, chunk=1500, threads=1, progress=False, rotate=rotate)[0]
    b = runner.run_jobs([job], 1500, 8, chunk=97, progress=False, rotate=rotate)[0]
    for k, v in a.acc.arrays().items():
        assert np.array_equal(v, b.acc.arrays()[k]), k


def test_chunk_plan_is_lazy_and_exact():
    plan = runner.plan_chunks(5, 10**18, 1 << 16)
    assert len(plan) == -(-10**18 // (1 << 16))
    assert plan[0] == (5, 5 + (1 << 16)) and plan[-1] == (5 + (len(plan) - 1) * (1 << 16), 5 + 10**18)
    assert list(runner.plan_chunks(0, 10, 4)) == [(0, 4), (4, 8), (8, 10)]
    # checkpoints every 4096 deals: chunks of 1000 restart at each one
    seg = runner.plan_chunks(100, 10_000, 1000, 4096)
    ranges = list(seg)
    assert ranges[:6] == [(100, 1100), (1100, 2100), (2100, 3100), (3100, 4100), (4100, 4196), (4196, 5196)]
    assert ranges[-1][1] == 10_100 and all(a[1] == b[0] for a, b in zip(ranges, ranges[1:]))
    ends = [r[1] - 100 for i, r in enumerate(ranges) if seg.at_checkpoint(i)]
    assert ends == [4096, 8192, 10_000]


def test_until_ci_stops_at_the_same_deal_for_any_chunk():
    job = cfg.resolve(GAME, "base", 4, seats=SEATS)
    kw = dict(progress=False, rotate=True, until_ci=0.012)
    runs = [runner.run_jobs([job], 200_000, 2, chunk=c, **kw)[0] for c in (1000, runner.DEFAULT_CHUNK)]
    assert runs[0].games == runs[1].games and runs[0].games % runner.UNTIL_CI_STEP == 0
    assert runner.UNTIL_CI_STEP < runs[0].games < 200_000
    t = [report.build_tables([r]) for r in runs]
    for name in ("seats", "policies", "paired", "scores"):
        assert t[0][name].equals(t[1][name]), name
    distributed = pytest.importorskip("distributed")  # noqa: F841
    from simcli.engine import dask_backend as db
    with db.dask_client(workers=1) as client:
        d = db.run_jobs_on(client, [job], 200_000, 2, chunk=1000, progress=False, rotate=True,
                           until_ci=0.012, numba_threads=1)[0]
    assert d.games == runs[0].games
    for name in ("seats", "policies", "paired", "scores"):
        assert report.build_tables([d])[name].equals(t[0][name]), name


def test_a_huge_game_count_costs_no_memory_until_it_stops():
    # --games 10**18: the plan is lazy and the buffer is one chunk, so this stops at a checkpoint
    job = cfg.resolve(GAME, "base", 4)
    (res,) = runner.run_jobs([job], 10**18, 3, chunk=1000, progress=False, until_ci=0.05)
    assert res.games == runner.UNTIL_CI_STEP
