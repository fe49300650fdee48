"""The search player (mc) in forecasts-cubes: strength on paired deals, no peeking, determinism."""
from __future__ import annotations

import numba
import numpy as np
import pytest

from kernels import forecasts_cubes as fc
from kernels import layout, rng
from simcli.config import jobs as cfg
from simcli.engine import runner
from tests.helpers import hand_mask as _hand


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
                      16, fc.P_HEURISTIC, keys, ctrs, P + 1, np.zeros(2, np.int64), 0, fc.KNOB_DEFAULTS, 0, 0,
                      np.zeros(P, np.int64), np.zeros(P, np.int64), False)
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


# ---- the objective (mc:B:ROLLOUT:OBJECTIVE, session 22) ----------------------------------------
# The last trick of the game's last round, every card played: seat 0 (Hot, diamonds) has won with
# a red card and holds its Weather Advisory; seat 1 (hearts: Hot) has 20 points like seat 0, the
# same correct forecasts, no Advisory; seats 2 and 3 (spades, clubs: Cold) have 5. Cubes Hot 4,
# Neutral 2, Cold 3. By the rulebook's scoring (a cube in the forecast bucket 1 point, +1 when that
# bucket holds more than the opposite one), with Hot / Cold points after each move:
#   2 = C->N (H4 N3 C2): 5 / 2      3 = N->H (H5 N1 C3): 6 / 3
#   4 = 2 x C->N (H4 N4 C1): 5 / 1   5 = 2 x N->H (H6 N0 C3): 7 / 3
# Own points pick 5; 3 x own minus the others' (Hot, Cold, Cold) is 6, 6, 8, 8, so the mean
# objective picks 4 (the earlier of two equal); a single move keeps the Advisory, the third
# tie-break, so only a single move wins the game outright (a double ties with seat 1).
_LAST_PLAYED = tuple(_hand(*[f"{r}{s}" for r in ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10")])
                     for s in ("D", "H", "S", "C"))


def _last_move(objective, last_round=True):
    from tests.helpers import cubes_search
    pick, _ = cubes_search(fc.P_MC, 2, [2, 3, 4, 5], [0, 0, 0, 0], (4, 2, 3), 9, 0, _LAST_PLAYED,
                           True, 4, explore=objective, adv_left=(1, 0, 0, 0), advisory=True,
                           score=(20, 20, 5, 5), correct=(3, 3, 0, 0), last_round=last_round)
    return pick


def test_the_position_s_forecasts_are_what_the_comment_says():
    kn = fc.KNOB_DEFAULTS
    got = [fc.knob_forecast(h, kn[fc.K_FC_BIAS], kn[fc.K_FC_MIN], kn[fc.K_FC_COUNT]) for h in _LAST_PLAYED]
    assert got[1:] == [fc.F_HOT, fc.F_COLD, fc.F_COLD]


def test_own_points_objective_takes_the_most_points():
    assert _last_move(fc.OBJ_OWN) == 5


def test_mean_objective_weighs_the_other_seats_points():
    assert _last_move(fc.OBJ_MEAN) == 4
    assert _last_move(fc.OBJ_WIN, last_round=False) == 4, "before the last round: as the mean"


def test_win_objective_keeps_the_advisory_that_breaks_the_tie():
    assert _last_move(fc.OBJ_WIN) == 2


def test_objective_0_is_mc_as_before_and_an_unknown_one_is_refused():
    width = layout.out_width(4, fc.N_COUNTERS)
    rows = []
    for seats in ("mc:3:tuned,heuristic,mc:2:heuristic,random",
                  "mc:3:tuned:0,heuristic,mc:2:heuristic:0,random",
                  "mc:3:tuned:2,heuristic,mc:2:heuristic:1,random"):
        job = cfg.resolve("forecasts-cubes", seats=seats)
        a = np.zeros((6, width), np.int64)
        job.module.play_games_serial(job.params, job.seats, 4, 0, a)
        rows.append(a)
    assert np.array_equal(rows[0], rows[1])
    assert cfg.resolve("forecasts-cubes", seats="mc:3:tuned,heuristic,heuristic,heuristic").seats[0, 3] \
        == fc.OBJ_OWN, "the default objective is own round points"
    # the argument reaches the search: another objective plays other games on the same deals
    assert not np.array_equal(rows[0], rows[2])
    with pytest.raises(ValueError, match="objective"):
        cfg.resolve("forecasts-cubes", seats="mc:3:tuned:3,heuristic,heuristic,heuristic")


def test_objective_seats_play_by_the_rules_and_take_a_winning_last_move():
    from tests.test_forecasts_cubes_rules import _check_game, _params, trace
    seats = np.zeros((4, 4), dtype=np.int64)
    seats[:, 0] = [fc.P_MC, fc.P_HEURISTIC, fc.P_MC, fc.P_MC]
    seats[0, 1:4] = (2, fc.P_HEURISTIC, fc.OBJ_WIN)
    seats[2, 1:4] = (2, fc.P_TUNED, fc.OBJ_MEAN)
    seats[3, 1:4] = (2, fc.P_RANDOM, fc.OBJ_WIN)
    for g in range(8):
        row, events = trace(_params(True), seats, 5, g)
        _check_game(4, True, 10, None, row, events)
