"""The trainer's fitness (``simcli/analyses/train.py``): how wins, shared victories and timeouts
count, and the ``self`` pool entry (the candidate's own table).

What is checked, and why it is not the code checking itself:
- ``win_units`` on hand-written WINNERS columns: RULINGS "a shared victory among k players counts
  1/k of a win to each", and a game with no winner (a timeout) gives nothing to any seat.
- a table that always times out (sudden-skies with a 3-turn cap; the test checks from the FLAGS
  column that no game of these deals was won) has fitness 0 for every pool entry, ``self`` included: a timeout is a loss for everyone.
- at a 25-turn cap (some games time out, some do not), the ``self`` share equals (1 - timeout rate) / P, where the timeout rate is
  read from the FLAGS column of a separate ``play_games`` call on the same deals.
- a contrary forecast (negative forecast_min_strength) on a hand worked by hand.
- ``--exploit-penalty``: the fitness subtracts the weight x the sum, or x the largest, of the
  positive exploit gains the same call reports (on a rule where two restrictions gain).
- the forecasts-cubes forecast knobs cannot freeze the forecast: at every corner of the knob box
  the forecast still depends on the hand (between 30% and 70% Hot over random hands). A rule that
  ignores the hand makes every all-tuned game a shared victory (issue #24: tie rate 1.00).
- ``forecast_flip``: from traces, the share of rounds whose forecast differs from the knob rule
  applied to the dealt hand (recomputed here from the deal event) is the knob's percentage,
  within 4 binomial standard deviations, and exactly 0 at 0.
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from kernels import forecasts_cubes as fc
from kernels import layout
from kernels import sudden_skies as ss
from simcli.analyses import train as tr

U = layout.SHARE_UNIT


def test_win_units_split_shared_victories_and_give_timeouts_nothing():
    # games: seat 0 alone; seats 1 and 2 share; nobody (a timeout); all three share
    units = tr.win_units(np.array([0b001, 0b110, 0, 0b111]), 3)
    assert units.tolist() == [U + U // 3, U // 2 + U // 3, U // 2 + U // 3]
    assert tr.win_units(np.array([0, 0, 0]), 4).tolist() == [0, 0, 0, 0]


def _trainer(cap, pool):
    t = tr.Trainer(tr.Settings(game="sudden-skies", players=3, seed=3, generations=1, candidates=1,
                               games=50, finalists=1, final_games=50, pool=pool, exploits=[]))
    params = t.arena.job.params.copy()
    params[ss.R_TURN_CAP] = cap
    t.arena.job.params = params
    return t


def test_timeouts_are_losses_for_every_seat_in_the_fitness():
    t = _trainer(3, ["heuristic", "incumbent", "self"])
    a = t.arena
    out = np.zeros((50, layout.out_width(a.S, len(ss.COUNTERS))), dtype=np.int64)
    ss.play_games(a.job.params, np.ascontiguousarray(a.job.seats), t.s.seed, 0, out)
    assert (out[:, layout.col_flags(a.S)] & layout.FLAG_TIMEOUT).all()   # the premise: no winner
    assert t.pool_share(t.incumbent, 0, 50) == 0.0
    fit, share, gains = t.fitness_of(t.incumbent, 0)
    assert fit == 0.0 and share == 0.0


def test_self_share_is_one_minus_the_timeout_rate_over_p():
    t = _trainer(25, ["self"])
    n = 400
    share = t.pool_share(t.incumbent, 0, n)
    a = t.arena
    seats = a.seats(a.row(t.incumbent), a.row(t.incumbent), 0)
    out = np.zeros((n, layout.out_width(a.S, len(ss.COUNTERS))), dtype=np.int64)
    ss.play_games(a.job.params, np.ascontiguousarray(seats), t.s.seed, 0, out)
    timeouts = int((out[:, layout.col_flags(a.S)] & layout.FLAG_TIMEOUT).sum())
    assert 0 < timeouts < n            # the 25-turn cap makes some, not all, games time out
    assert share * 3 == pytest.approx((n - timeouts) / n, abs=1e-12)


def _hot_share(players, bias, min_strength, card_weight, n=4000):
    rng = np.random.default_rng(5)
    hand_size = fc.HAND_SIZE[players]
    hot = 0
    for _ in range(n):
        cards = rng.choice(fc.DECK, size=hand_size, replace=False)
        hand = np.int64(0)
        for c in cards:
            hand |= np.int64(1) << np.int64(c)
        hot += fc.knob_forecast(hand, bias, min_strength, card_weight) == fc.F_HOT
    return hot / n


def test_cubes_forecast_knobs_cannot_freeze_the_forecast():
    ks = {k.name: k for k in fc.KNOBS}
    box = [(ks[name].lo, ks[name].hi) for name in
           ("forecast_bias", "forecast_min_strength", "forecast_card_weight")]
    for players in fc.PLAYER_COUNTS:
        for b, m, w in itertools.product(*box):
            assert 0.3 < _hot_share(players, b, m, w) < 0.7, (players, b, m, w)


def _hand(*cards):
    h = np.int64(0)
    for suit, rank in cards:
        h |= np.int64(1) << np.int64(suit * 13 + rank)
    return h


def test_contrary_forecast_is_the_colour_the_hand_weighs_less_in():
    """A negative forecast_min_strength forecasts the colour the hand is weaker in (worked by hand:
    red A and 10 weigh 10 + 9 = 19, black 2 3 4 5 weigh 1 + 2 + 3 + 4 = 10)."""
    from kernels.cards import CLUBS, HEARTS, RANK_10, RANK_A, SPADES
    hand = _hand((HEARTS, RANK_A), (HEARTS, RANK_10), (SPADES, 0), (SPADES, 1), (CLUBS, 2), (CLUBS, 3))
    assert fc.knob_forecast(hand, 0, 1, 0) == fc.F_HOT        # red 19 >= black 10
    assert fc.knob_forecast(hand, 0, -1, 0) == fc.F_COLD      # contrary: black weighs less
    assert fc.knob_forecast(hand, 0, -5, 0) == fc.F_COLD      # only 5+ weighs: red 19, black 0
    # a weight of 10 per card: red 19 + 20 = 39, black 10 + 40 = 50
    assert fc.knob_forecast(hand, 0, 1, 10) == fc.F_COLD
    assert fc.knob_forecast(hand, 0, -1, 10) == fc.F_HOT
    assert fc.knob_forecast(hand, 6, 1, 10) == fc.F_COLD      # red 39 + 6 = 45 < black 50
    assert fc.knob_forecast(hand, -6, -1, 10) == fc.F_HOT     # 50 - 6 = 44 > 39
    assert fc.knob_forecast(hand, -6, -1, 0) == fc.F_COLD     # black 10 - 6 = 4 < red 19


def test_exploit_penalty_sum_or_max_of_the_positive_gains():
    s = dict(game="forecasts-cubes", players=3, seed=2, generations=1, candidates=1, games=60,
             finalists=1, final_games=60, pool=["heuristic"], exploit_weight=1.5)
    values = {"forecast_min_strength": -1}   # a contrary forecaster: hot-only and cold-only gain
    fits = {}
    for pen in ("sum", "max"):
        t = tr.Trainer(tr.Settings(**s, exploit_penalty=pen))
        fit, share, g = t.fitness_of(dict(t.incumbent, **values), 0)
        pos = sorted(max(0.0, v) for v in g.values())
        assert pos[-1] > 0 and pos[-2] > 0          # two restrictions gain: sum and max differ
        fits[pen] = fit
        assert fit == pytest.approx(share - 1.5 * (sum(pos) if pen == "sum" else pos[-1]))
    assert fits["max"] > fits["sum"]
    with pytest.raises(tr.SimError, match="exploit-penalty"):
        tr.Trainer(tr.Settings(**s, exploit_penalty="mean"))


def _forecast_flips(flip, games=300, players=4, seed=3):
    """(rounds, rounds whose forecast differs from the knob rule on the dealt hand) for seat 0
    playing ``tuned`` with forecast_flip = ``flip`` among heuristic seats, from traces."""
    from tests.helpers import knob_row, rule_params, tuned_seats
    seats = tuned_seats(fc, ["tuned"] + ["heuristic"] * (players - 1),
                        knobs=[knob_row(fc, forecast_flip=flip)] + [None] * (players - 1))
    params = rule_params(fc)
    width = layout.out_width(players, len(fc.COUNTERS))
    rounds = flipped = 0
    for g in range(games):
        o = np.zeros((1, width), np.int64)
        ev = np.zeros((8192, layout.EVENT_WIDTH), np.int64)
        ev_n = np.zeros(1, np.int64)
        fc.trace_game(params, seats, np.int64(seed), np.int64(g), o, ev, ev_n)
        ev = ev[:ev_n[0]]
        mine = ev[ev[:, 1] == 0]
        hands = {int(e[2]): e[3] for e in mine[mine[:, 0] == fc.E_DEAL]}
        for e in mine[mine[:, 0] == fc.E_FORECAST]:
            rule = fc.knob_forecast(np.int64(hands[int(e[2])]), 0, 1, 0)   # the heuristic's rule
            rounds += 1
            flipped += int(e[3] != rule)
    return rounds, flipped


@pytest.mark.parametrize("flip", [0, 30])
def test_forecast_flip_forecasts_the_other_colour_in_that_share_of_rounds(flip):
    rounds, flipped = _forecast_flips(flip)
    assert rounds == 300 * 4
    if flip == 0:
        assert flipped == 0                      # the rule itself, every round
    else:                                        # binomial(1200, 0.3): sd 0.013; 4 sd either side
        assert abs(flipped / rounds - 0.30) < 0.053, flipped / rounds


def test_horizon_gives_games_longer_than_it_to_nobody():
    # hand-written columns: seat 0 wins in 10 turns, seats 1 and 2 share in 30, seat 2 wins in 31
    winners, length = np.array([0b001, 0b110, 0b100]), np.array([10, 30, 31])
    assert tr.win_units(winners, 3, length, 0).tolist() == [U, U // 2, U // 2 + U]
    assert tr.win_units(winners, 3, length, 30).tolist() == [U, U // 2, U // 2]   # 31 > 30: nobody's
    assert tr.win_units(winners, 3, length, 9).tolist() == [0, 0, 0]


def test_horizon_in_the_fitness_counts_long_games_as_losses_for_every_seat():
    """With a horizon, the ``self`` share is the share of games *won within it* over P: checked
    against the WINNERS and LENGTH columns of a separate ``play_games`` call on the same deals."""
    n, horizon = 400, 18
    t = tr.Trainer(tr.Settings(game="sudden-skies", players=3, seed=3, generations=1, candidates=1,
                               games=n, finalists=1, final_games=n, pool=["self"], exploits=[],
                               horizon=horizon))
    a = t.arena
    seats = a.seats(a.row(t.incumbent), a.row(t.incumbent), 0)
    out = np.zeros((n, layout.out_width(a.S, len(ss.COUNTERS))), dtype=np.int64)
    ss.play_games(a.job.params, np.ascontiguousarray(seats), t.s.seed, 0, out)
    won = out[:, layout.col_winners(a.S)] != 0
    late = out[:, layout.col_length(a.S)] > horizon
    assert (won & late).any() and (won & ~late).any()     # the premise: the horizon cuts some wins
    assert t.pool_share(t.incumbent, 0, n) * 3 == pytest.approx((won & ~late).sum() / n, abs=1e-12)
    with pytest.raises(tr.SimError, match="horizon"):
        tr.Trainer(tr.Settings(game="sudden-skies", players=3, horizon=-1))


def test_no_win_weight_subtracts_the_own_tables_no_win_share():
    """fitness = pool share - exploit penalty - W x (share of the candidate's own table's games
    with no winner); the no-winner count read from the FLAGS column of a separate call."""
    n = 400
    fits = {}
    for w in (0.0, 2.5):
        t = _trainer(25, ["self"])
        t.s.final_games, t.s.no_win_weight = n, w
        fits[w] = t.fitness_of(t.incumbent, 0)
    a = t.arena
    seats = a.seats(a.row(t.incumbent), a.row(t.incumbent), 0)
    out = np.zeros((n, layout.out_width(a.S, len(ss.COUNTERS))), dtype=np.int64)
    ss.play_games(a.job.params, np.ascontiguousarray(seats), t.s.seed, 0, out)
    no_win = int(((out[:, layout.col_flags(a.S)] & layout.FLAG_TIMEOUT) != 0).sum())
    assert 0 < no_win < n
    assert fits[2.5][1] == fits[0.0][1]                         # the pool share is unchanged
    assert fits[0.0][0] == pytest.approx(fits[0.0][1], abs=1e-12)   # no exploits, no weight
    assert fits[2.5][0] == pytest.approx(fits[0.0][0] - 2.5 * no_win / n, abs=1e-12)
    with pytest.raises(tr.SimError, match="no-win-weight"):
        tr.Trainer(tr.Settings(game="sudden-skies", players=3, no_win_weight=-1.0))
