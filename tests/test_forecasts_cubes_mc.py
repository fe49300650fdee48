"""The search player (mc) in forecasts-cubes: strength on paired deals, no peeking, determinism."""
from __future__ import annotations

import numba
import numpy as np
import pytest

from kernels import forecasts_cubes as fc
from kernels import layout, rng
from kernels.cards import parse_card
from simcli.config import jobs as cfg
from simcli.engine import runner


def _hand(*names):
    m = 0
    for n in names:
        m |= 1 << parse_card(n)
    return np.int64(m)


def _choice(hands, seed=3):
    """mc's card choice for seat 0 leading trick 0 of a round, with hands as given."""
    P = 4
    keys = np.zeros(2 * P + 1, dtype=np.uint64)
    ctrs = np.zeros(2 * P + 1, dtype=np.int64)
    keys[P + 1] = rng.stream_key(seed, 0, rng.SEARCH, 0)
    legal = hands[0]
    options = np.array([c for c in range(52) if (int(legal) >> c) & 1] + [0] * 3, dtype=np.int64)
    n = bin(int(legal)).count("1")
    i = fc._mc_choose(1, 0, options, n, hands, np.array([4, 1, 4], dtype=np.int64),
                      np.array([fc.F_HOT, 1, 1, 1], dtype=np.int64), np.zeros(P, np.int64), False, P, 0, 10, 0,
                      np.zeros(P, np.int64), 0, -1, -1, np.zeros(P, np.int64), np.zeros(P, np.int64), False,
                      16, fc.P_HEURISTIC, keys, ctrs, P + 1, np.zeros(2, np.int64), 0, fc.KNOB_DEFAULTS, 0, 0)
    return int(options[i])


def test_mc_choice_does_not_depend_on_hidden_cards():
    me = _hand("AH", "10H", "2H", "9D", "5D", "3S", "4S", "7C", "8C", "2C")
    rest = [c for c in range(52) if (c % 13) not in (9, 10, 11) and not (int(me) >> c) & 1]
    rs = np.random.default_rng(0)
    choices = set()
    for _ in range(6):
        perm = rs.permutation(rest)
        hands = np.array([me] + [_hand(*[]) | np.int64(sum(1 << int(c) for c in perm[i * 10:(i + 1) * 10]))
                                 for i in range(3)], dtype=np.int64)
        choices.add(_choice(hands))
    assert len(choices) == 1, "only the hidden cards changed, so the choice must not"


def test_mc_results_are_identical_across_threads_and_chunks():
    job = cfg.resolve("forecasts-cubes", seats="mc:4:random,heuristic,random,mc:3:heuristic")
    width = layout.out_width(4, fc.N_COUNTERS)
    a = np.zeros((24, width), np.int64)
    job.module.play_games_serial(job.params, job.seats, 9, 0, a)
    numba.set_num_threads(1)
    b1 = runner.play_chunk(job, 9, 0, 10).copy()
    runner.set_threads(None)
    b2 = runner.play_chunk(job, 9, 10, 24).copy()
    assert np.array_equal(a, np.vstack([b1, b2]))
    assert a[:, layout.col_counter(4, fc.C_MC_ROLLOUTS)].min() > 0


def test_mc_never_misses_a_winning_last_move():
    # the traced-game checker of the rules tests also asserts that the game's last cube move
    # gives the mover the largest win share available (RULINGS: a game-winning action is taken)
    from tests.test_forecasts_cubes_rules import _check_game, _params, trace
    seats = np.zeros((4, 4), dtype=np.int64)
    seats[:, 0] = [fc.P_MC, fc.P_HEURISTIC, fc.P_MC, fc.P_RANDOM]
    seats[0, 1:3] = (2, fc.P_RANDOM)
    seats[2, 1:3] = (2, fc.P_HEURISTIC)
    for g in range(12):
        row, events = trace(_params(True), seats, 8, g)
        _check_game(4, True, 10, None, row, events)
