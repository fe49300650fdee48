"""The chunk fold (kernels/tally.py ``fold_all``): in parts on Numba's threads, the same integer
totals as numpy's sums over the rows, whatever the threads or how the rows are split."""
from __future__ import annotations

import numba
import numpy as np
import pytest

from kernels import layout, tally
from simcli.config.jobs import resolve
from simcli.engine import runner

# enough rows for several parts (tally.FOLD_PART_ROWS each) and a ragged last block
GAMES = 2 * tally.FOLD_PART_ROWS + 777
CASES = [("forecasts-bid", 4, "random"), ("forecasts-cubes", 3, "random"), ("pgc", 4, "random"),
         ("sudden-skies", 4, "random"), ("daily-weather", 1, None)]


def folded(job, rows, threads, splits=()):
    """Accumulators of ``rows`` folded at ``threads`` threads, in pieces cut at ``splits``."""
    before = numba.get_num_threads()
    numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    try:
        acc = runner.accumulators_for(job)
        for a, b in zip((0, *splits), (*splits, rows.shape[0])):
            acc.fold(rows[a:b], bool(job.module.LOWER_IS_BETTER))
        return acc
    finally:
        numba.set_num_threads(before)


@pytest.mark.parametrize("game,players,policy", CASES)
def test_fold_is_numpy_sums_for_any_threads_and_split(game, players, policy):
    job = resolve(game, players=players, policy=policy)
    rows = runner.play_chunk(job, 17, 1000, 1000 + GAMES).copy()
    row = job.row
    S = row.S
    acc = folded(job, rows, 1)
    # what numpy says the sums are (independent of fold_chunk's loops)
    assert acc.misc[tally.M_GAMES] == GAMES == acc.misc[tally.M_DEALS]
    assert acc.misc[tally.M_DECISIONS] == rows[:, row.decisions].sum()
    assert acc.misc[tally.M_TIMEOUTS] == ((rows[:, row.flags] & layout.FLAG_TIMEOUT) != 0).sum()
    np.testing.assert_array_equal(acc.counters, rows[:, row.counters].sum(axis=0))
    bits = (rows[:, row.winners][:, None] >> np.arange(S)[None, :]) & 1
    k = bits.sum(axis=1)
    units = bits * (layout.SHARE_UNIT // np.maximum(k, 1))[:, None]
    np.testing.assert_array_equal(acc.win_units, units.sum(axis=0))
    np.testing.assert_array_equal(acc.win_sq, (units * units).sum(axis=0))
    assert acc.misc[tally.M_TIES] == (k > 1).sum()
    np.testing.assert_array_equal(
        acc.len_hist, np.bincount(rows[:, row.length] - acc.len_lo, minlength=acc.len_hist.shape[0]))
    for s in range(S):
        np.testing.assert_array_equal(
            acc.score_hist[s], np.bincount(rows[:, s] - acc.score_lo, minlength=acc.score_hist.shape[1]))
        np.testing.assert_array_equal(
            acc.place_counts[s], np.bincount(rows[:, S + s], minlength=S + 1))
    if S > 1:
        K = rows[:, row.arc.start]          # arc.A_K: checkpoints of each game
        played = (K > 0) & (rows[:, row.winners] != 0) & ((rows[:, row.flags] & layout.FLAG_TIMEOUT) == 0)
        assert acc.arc_misc[0] == played.sum()   # arc.X_GAMES
    # the same totals at 2 threads and folded in uneven pieces
    for other in (folded(job, rows, 2), folded(job, rows, 2, (5, tally.FOLD_PART_ROWS + 3, GAMES - 1))):
        for name in tally.ACC_FIELDS:
            np.testing.assert_array_equal(getattr(other, name), getattr(acc, name), err_msg=name)
