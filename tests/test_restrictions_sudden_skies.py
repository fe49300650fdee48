"""sudden-skies restrictions (issue #15): no-wind, no-sun, no-thunder, no-cloud, no-weather.

A restriction forbids playing weather cards of its suits (no-weather: every suit) on a free
turn; Draw-and-Discard and Reveal stay. With nothing left (an empty draw pile) it yields.
"""
from __future__ import annotations

import numpy as np
import pytest

from kernels import layout, rng
from kernels import sudden_skies as ss
from kernels.cards import SUIT_MASK, nth_bit, popcount
from kernels.spec import SEAT_FORBID, SEAT_WATCH
from simcli.analyses import ablate
from simcli.config import jobs as cfg
from simcli.analyses.trace import trace_rows

GAME = "sudden-skies"
SUIT_OF = {"no-wind": (ss.WIND,), "no-sun": (ss.SUN,), "no-thunder": (ss.THUNDER,),
           "no-cloud": (ss.CLOUD,), "no-weather": (ss.WIND, ss.SUN, ss.THUNDER, ss.CLOUD)}


def _col(job, name):
    return layout.col_counter(job.seats.shape[0], [c.name for c in job.module.COUNTERS].index(name))


def _weather_suits(ev, seat):
    """Suits of the weather cards ``seat`` played (trace event 'weather': turn, card, ...)."""
    return [int(c) // 13 for c in ev[(ev[:, 0] == ss.E_WEATHER) & (ev[:, 1] == seat)][:, 3]]


@pytest.mark.parametrize("policy,players,games", [("random", 4, 25), ("heuristic", 4, 25), ("mc:1", 2, 2)])
def test_traces_obey_each_restriction(policy, players, games):
    """Seat 0 plays a forbidden weather card only when the restriction yields (counted)."""
    for r, suits in SUIT_OF.items():
        job = cfg.resolve(GAME, players=players, seats=",".join([f"{policy}+{r}"] + [policy] * (players - 1)))
        base = cfg.resolve(GAME, players=players, policy=policy)
        forbidden_plays = yields = base_plays = 0
        for g in range(games):
            out, ev = trace_rows(job, 4, g)
            bad = sum(1 for u in _weather_suits(ev, 0) if u in suits)
            forbidden_plays += bad
            yields += int(out[_col(job, "restriction_yielded")])
            # each forbidden play is a yield (the only action: the draw pile was empty)
            assert bad <= out[_col(job, "restriction_yielded")]
            if policy != "heuristic" and g < 6:
                _, bev = trace_rows(base, 4, g)
                base_plays += sum(1 for u in _weather_suits(bev, 0) if u in suits)
        if policy == "random":      # unrestricted random plays these suits: the check can fail
            assert base_plays > 0, r
        assert forbidden_plays <= yields


def test_zero_masks_equal_narrow_rows_and_watch_counts_exactly_the_watched_plays():
    job = cfg.resolve(GAME, players=3, seats="random,heuristic,random")
    n = 40
    width = layout.out_width(3, ss.N_COUNTERS)
    wide = np.zeros((n, width), dtype=np.int64)
    narrow = np.zeros((n, width), dtype=np.int64)
    ss.play_games(job.params, job.seats, np.int64(9), np.int64(0), wide)
    ss.play_games(job.params, job.seats[:, :4].copy(), np.int64(9), np.int64(0), narrow)
    np.testing.assert_array_equal(wide, narrow)
    seats = job.seats.copy()
    seats[0, SEAT_WATCH] = 1 << ss.RX_NO_WIND
    seats[2, SEAT_WATCH] = (1 << ss.RX_NO_SUN) | (1 << ss.RX_NO_CLOUD)
    watched = cfg.Job(**{**job.__dict__, "seats": seats})
    fcol = _col(job, "restriction_forbidden")
    total = 0
    for g in range(n):
        out, ev = trace_rows(watched, 9, g)
        rest = [c for c in range(width) if c != fcol]
        assert out[rest].tolist() == wide[g, rest].tolist()      # watching never changes play
        want = sum(1 for u in _weather_suits(ev, 0) if u == ss.WIND) + \
            sum(1 for u in _weather_suits(ev, 2) if u in (ss.SUN, ss.CLOUD))
        assert out[fcol] == want
        total += want
    assert total > 0


def _state(hand, pile_n, forbid, policy=ss.P_RANDOM):
    seats = np.zeros((2, 6), dtype=np.int64)
    seats[:, 0] = policy
    seats[0, SEAT_FORBID] = forbid
    params = np.array([r.encode(r.default) for r in ss.RULES], dtype=np.int64)
    st = ss.new_state(params, seats)
    st[ss.ST_HAND] = hand
    st[ss.ST_HAND + 1] = 0b11111 << 13
    st[ss.ST_PILE_N] = pile_n
    return st


def _cards(*names):
    from kernels.cards import card_name
    code = {card_name(c): c for c in range(52)}
    m = 0
    for n in names:
        m |= 1 << code[n]
    return np.int64(m)


def test_random_restricted_is_one_uniform_draw_over_what_is_left():
    hand = _cards("2D", "9D", "3S", "KC", "AH")
    for seed in range(40):
        st = _state(hand, 10, 1 << ss.RX_NO_WIND)
        kinds = ss.legal_turn(st, 0)
        left, allowed = ss.restrict_turn(st, 0, kinds)
        assert left == kinds == ss.K_DRAW | ss.K_WEATHER
        assert allowed == hand & ~SUIT_MASK[ss.WIND]
        keys = np.array([rng.stream_key(seed, 0, rng.SEAT, 0)], dtype=np.uint64)
        ctrs = np.zeros(1, dtype=np.int64)
        kind, card = ss.choose_action(st, 0, left, allowed, keys, ctrs)
        # expected: the kind by one draw over the 2 kinds, then one draw over the 3 allowed cards
        k2, c2 = keys.copy(), np.zeros(1, dtype=np.int64)
        want_kind = nth_bit(int(left), rng.below(k2, c2, 0, 2))
        assert kind == want_kind
        if kind == ss.KIND_WEATHER:
            assert card == nth_bit(int(allowed), rng.below(k2, c2, 0, 3))
            assert card // 13 != ss.WIND
        assert ctrs[0] == c2[0]


def test_only_draw_left_takes_no_draw_and_nothing_left_yields():
    hand = _cards("2D", "3D", "4S", "5C", "6H")
    st = _state(hand, 10, 1 << ss.RX_NO_WEATHER)
    left, allowed = ss.restrict_turn(st, 0, ss.legal_turn(st, 0))
    assert left == ss.K_DRAW and allowed == 0
    keys = np.array([rng.stream_key(1, 0, rng.SEAT, 0)], dtype=np.uint64)
    ctrs = np.zeros(1, dtype=np.int64)
    assert ss.choose_action(st, 0, left, allowed, keys, ctrs)[0] == ss.KIND_DRAW
    assert ctrs[0] == 0                                   # one option: no draw
    assert st[ss.ST_CTR + ss.C_RX_YIELDED] == 0
    st = _state(hand, 0, 1 << ss.RX_NO_WEATHER)           # empty draw pile: weather is forced
    left, allowed = ss.restrict_turn(st, 0, ss.legal_turn(st, 0))
    assert left == ss.K_WEATHER and allowed == hand
    assert st[ss.ST_CTR + ss.C_RX_YIELDED] == 1


def test_heuristic_restricted_takes_its_best_remaining_plan():
    """With an empty pile the heuristic plays its least useful card; no-cloud moves it on to the
    least useful card that is not a Club (collecting Spades, the lone Club is least useful)."""
    hand = _cards("2S", "3S", "4S", "KC", "9H")
    st = _state(hand, 0, 0, ss.P_HEURISTIC)
    kinds = ss.legal_turn(st, 0)
    assert ss.heuristic_plan(st, 0, kinds, hand)[0] == ss.KIND_WEATHER
    free = ss.heuristic_plan(st, 0, kinds, hand)[1]
    st = _state(hand, 0, 1 << (ss.RX_NO_CLOUD if free // 13 == ss.CLOUD else ss.RX_NO_SUN), ss.P_HEURISTIC)
    left, allowed = ss.restrict_turn(st, 0, kinds)
    kind, card = ss.heuristic_plan(st, 0, left, allowed)
    assert kind == ss.KIND_WEATHER and card != free and (allowed >> card) & 1
    assert card == ss.h_least_useful(st, 0, hand, allowed)


def test_no_weather_helps_a_random_seat():
    """Clearly one-sided: a random seat spends about half its free turns throwing away cards as
    weather; the same seat that only draws (weather only when forced) collects a flush sooner."""
    job = ablate.resolve_job(GAME, None, 4, "random", {})
    (ab,) = ablate.run_ablations(ablate.ablations_for(job, ["no-weather"]), 300, 5)
    row = ablate.ablations_table([ab]).row(0, named=True)
    assert row["diff"] > 0 and row["ci_low"] > 0, row
    assert row["forbidden_per_game"] > 1          # the base random seat does play weather
