"""The search player (mc) in daily-weather: strength on paired deals, no peeking at the hidden
deck, against the (bounded) clairvoyant solver, determinism, argument checks.

One seat, so "paired deals" = the same game indices and seed for both policies: the deal is a
pure function of (seed, game), whatever the policy decides."""
from __future__ import annotations

import numba
import numpy as np
import pytest

from kernels import daily_weather as dw
from simcli.config import cards
from kernels import layout, rng
from kernels.spec import MAX_KNOBS
from simcli.config import jobs as cfg
from simcli.engine import runner
from simcli.stats import mean_ci

S = 1
WIN = layout.col_winners(S)


def _rows(policy: str, deals: int, seed: int = 5, first: int = 0, **rules):
    job = cfg.resolve("daily-weather", policy=policy, rules=rules or None)
    return runner.play_chunk(job, seed, first, first + deals).copy()


def _paired_wins(a: np.ndarray, b: np.ndarray):
    """Per-deal win difference a - b: (mean, 95% low, 95% high)."""
    d = (a[:, WIN] - b[:, WIN]).astype(float)
    return mean_ci(d.sum(), (d * d).sum(), len(d))


@pytest.fixture(scope="module")
def mc_rows():
    return _rows("mc:4", 40)


def test_mc_beats_greedy_on_paired_deals(mc_rows):
    greedy = _rows("greedy", 40)
    m, lo, hi = _paired_wins(mc_rows, greedy)
    assert lo > 0, (m, lo, hi)
    assert mc_rows[:, layout.col_counter(S, dw.C_MC_ROLLOUTS)].min() > 0


def test_greedy_beats_random_on_paired_deals():
    greedy = _rows("greedy", 200)
    rand = _rows("random", 200)
    m, lo, hi = _paired_wins(greedy, rand)
    assert lo > 0, (m, lo, hi)


def test_mc_is_not_below_the_bounded_solver(mc_rows):
    """A finding, pinned: the solver sees the shuffle but is bounded (5000 placements tried by
    default, rarely a finished search), so it is no true ceiling: mc:4, which never sees the
    shuffle, wins at least as often on the same deals (and more on DEC 23 in measurements)."""
    solver = _rows("solver", 40)
    m, lo, hi = _paired_wins(mc_rows, solver)
    assert m >= 0, (m, lo, hi)


def _state(seed, game, placements):
    """A real game state after ``placements`` greedy placements (kernel setup and rules)."""
    p = cards.with_cards(dw.default_params())
    st = np.zeros(dw.ST_LEN, dtype=np.int64)
    top = np.empty(dw.H * dw.W, dtype=np.int64)
    tm = np.zeros((dw.N_TYPES, dw.H), dtype=np.int64)
    pat = np.zeros((dw.N_SYMMETRIES, 2 * dw.MAX_PATTERN), dtype=np.int64)
    dw.new_game(p, seed, game, st, top, tm, pat)
    keys, ctrs = rng.new_streams(1)
    opts = np.empty(dw.MAX_OPTIONS, dtype=np.int64)
    wins = np.empty(dw.MAX_OPTIONS, dtype=np.int64)
    cand = np.zeros(dw.H, dtype=np.int64)
    undo = np.empty(dw.FACE_CELLS + dw.ST_LEN, dtype=np.int64)
    rows = np.zeros(dw.H, dtype=np.int64)
    work = np.zeros((dw.N_WORK, dw.WORK_LEN), dtype=np.int64)
    ok = np.zeros(dw.N_REQ, dtype=np.int64)
    for _ in range(placements):
        n = dw.legal_placements(p, st, tm, opts, cand)
        assert n > 0
        o = dw.choose_greedy(p, st, top, tm, pat, opts, n, wins, keys, ctrs, undo, rows, work, ok, False)
        dw.apply_placement(p, st, top, tm, o, undo)
    return p, st, top, tm, pat


def _mc_choice(p, st, top, tm, pat, seed=3, budget=6):
    """mc's placement and work counters from this state, on a fixed SEARCH stream."""
    opts = np.empty(dw.MAX_OPTIONS, dtype=np.int64)
    n = dw.legal_placements(p, st, tm, opts, np.zeros(dw.H, dtype=np.int64))
    assert n > 1
    keys, ctrs = rng.new_streams(1)
    keys[0] = rng.stream_key(seed, 0, rng.SEARCH, 0)
    stat = np.zeros(2, dtype=np.int64)
    o = dw.mc_choose(p, st.copy(), top.copy(), tm.copy(), pat, opts, n, budget, dw.P_GREEDY, keys, ctrs, stat)
    return int(o), tuple(stat), int(ctrs[0])


@pytest.mark.parametrize("game,placements", [(0, 0), (1, 0), (2, 1), (3, 2)])
def test_mc_choice_does_not_depend_on_hidden_cards(game, placements):
    """Same map, hand, drawn cards and face-up top card; only the order and faces of the cards
    under the top card differ: the choice (and every draw it made) must not change."""
    p, st, top, tm, pat = _state(4, game, placements)
    first = int(st[dw.S_NEXT]) + 1          # deck positions below the face-up top card
    hidden = [int(c) for c in st[dw.S_DECK0 + first:dw.S_DECK0 + dw.N_WEATHER]]
    assert len(hidden) >= 1
    base = _mc_choice(p, st, top, tm, pat)
    rs = np.random.default_rng(game)
    variants = 0
    for _ in range(4):
        alt = st.copy()
        perm = rs.permutation(len(hidden))
        flips = rs.integers(0, 2, len(hidden))
        new = [(hidden[perm[i]] // 2) * 2 + int(flips[i]) for i in range(len(hidden))]
        variants += new != hidden
        alt[dw.S_DECK0 + first:dw.S_DECK0 + dw.N_WEATHER] = new
        assert _mc_choice(p, alt, top, tm, pat) == base
    assert variants > 0


def test_mc_results_are_identical_across_threads_and_chunks():
    for spec in ("mc:3", "mc:2:random"):
        job = cfg.resolve("daily-weather", policy=spec, rules={"stuck": "discard"})
        a = runner.play_chunk(job, 9, 0, 10).copy()        # every thread, one chunk
        numba.set_num_threads(1)
        try:
            b1 = runner.play_chunk(job, 9, 0, 4).copy()
        finally:
            runner.set_threads(None)
        b2 = runner.play_chunk(job, 9, 4, 10).copy()
        assert np.array_equal(a, np.vstack([b1, b2])), spec
        assert a[:, layout.col_counter(S, dw.C_MC_ROLLOUTS)].min() > 0
        assert (a[:, layout.col_counter(S, dw.C_MC_PLAYS)]
                >= a[:, layout.col_counter(S, dw.C_MC_ROLLOUTS)]).all()


def test_mc_policy_spec_and_counters():
    job = cfg.resolve("daily-weather", policy="mc")
    assert job.seats[0].tolist() == [dw.P_MC, 64, dw.P_GREEDY, 0, 0, 0] + [0] * MAX_KNOBS   # no knobs: not tuned
    names = [c.name for c in dw.COUNTERS]
    assert names[-4:] == ["mc_rollouts", "mc_rollout_plays", "restriction_forbidden", "restriction_yielded"]
    assert names.index("measure") == dw.C_MEASURE

