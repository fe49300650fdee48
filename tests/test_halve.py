"""Successive halving on common samples (the ``halve`` search player, kernels/race.py, issue #26):
the schedule, the better half kept, reproducible, and a clearly best option taken."""
from __future__ import annotations

import numpy as np
import pytest

from kernels import forecasts_bid as fb
from kernels import layout, race
from simcli.config import jobs as cfg
from tests.helpers import reproducible_rows


def _alive(n, dead=()):
    a = np.ones(n, dtype=np.int64)
    for i in dead:
        a[i] = 0
    return a


def test_rounds_are_ceil_log2():
    assert [int(race.halving_rounds(n)) for n in (1, 2, 3, 4, 5, 8, 9, 11, 13)] == [0, 1, 2, 2, 3, 3, 4, 4, 4]


def test_the_better_half_stays_rounded_up():
    total = np.array([5, 9, 1, 7, 3], dtype=np.int64)
    alive = _alive(5)
    assert race.halve(alive, total, 5) == 3
    assert alive.tolist() == [1, 1, 0, 1, 0]          # 9, 7, 5 stay; 3 and 1 go
    assert race.halve(alive, total, 5) == 2
    assert alive.tolist() == [0, 1, 0, 1, 0]
    assert race.halve(alive, total, 5) == 1
    assert alive.tolist() == [0, 1, 0, 0, 0]


def test_ties_keep_the_earlier_option_and_dropped_options_are_not_counted():
    total = np.array([4, 100, 4, 4, 4], dtype=np.int64)
    alive = _alive(5, dead=(1,))                      # option 1 was dropped earlier: its total is stale
    assert race.halve(alive, total, 5) == 2
    assert alive.tolist() == [1, 0, 1, 0, 0]


def test_the_schedule_spends_about_the_flat_budget():
    """B = 16 and 11 options (a 4p bid): 4 rounds of 44 rollouts: 4, 7, 14, 22 new samples, the
    last two options compared on 47 common samples, 176 rollouts in all = 16 x 11. Two options:
    the flat search (B samples each)."""
    n, B = 11, 16
    R = race.halving_rounds(n)
    left, m, rollouts, per_round = n, 0, 0, []
    while left > 1:
        t = int(race.halving_samples(B, n, left, R))
        per_round.append(t)
        m += t
        rollouts += t * left
        left = (left + 1) // 2
    assert per_round == [4, 7, 14, 22] and m == 47 and rollouts == 11 * 4 + 6 * 7 + 3 * 14 + 2 * 22 <= B * n
    assert int(race.halving_samples(B, 2, 2, race.halving_rounds(2))) == B
    assert int(race.halving_samples(1, 13, 13, race.halving_rounds(13))) == 1     # at least 1


def _halve_seat(st, seat):
    st[fb.S_RACE + seat] = fb.SEARCH_HALVE


def test_halve_takes_the_card_that_wins_the_game():
    """The game-winning card of tests/test_forecasts_bid_mc.py (AD wins the game, 2C loses it):
    two options, so the flat search's B samples of each, and AD on every seed."""
    from tests.test_forecasts_bid_mc import MC_SEAT, search_card, winning_card_position
    st, c = winning_card_position(8)
    S = 4
    for seed in range(3):
        card, s2, c2 = search_card(st, seed, fb.SEARCH_HALVE)
        assert card == c["AD"]
        assert s2[fb.S_COUNT + fb.C_MC_ROLLOUTS] == 2 * 8
        assert c2[S + 2 + MC_SEAT] == 8 * race.STRIDE     # sample m at base + m x STRIDE


def test_halve_plays_for_the_lead_with_a_win_objective():
    """Two rounds before the end the same position is no longer decided by the game's end: the old
    objective plays 2C, the win chance and the margin AD (as mc and race do)."""
    from tests.test_forecasts_bid_mc import search_card, winning_card_position
    for obj, card in ((fb.OBJ_MEAN, "2C"), (fb.OBJ_LEAD, "AD"), (fb.OBJ_WIN, "AD")):
        st, c = winning_card_position(16, rounds_left=2, objective=obj)
        assert search_card(st, 1, fb.SEARCH_HALVE)[0] == c[card]


def test_halve_bid_spends_no_more_than_the_flat_search():
    """A real 4p bid (11 options): the halving seat plays at most B x 11 rollouts, in 4 rounds."""
    from tests.test_forecasts_bid_mc import MC_SEAT, _position
    st, keys, ctrs = _position(4, -1, seed=5, budget=16)
    _halve_seat(st, MC_SEAT)
    b = int(fb.mc_bid(st, keys, ctrs, MC_SEAT, 3))
    assert 0 <= b <= fb.max_bid(st)
    r = int(st[fb.S_COUNT + fb.C_MC_ROLLOUTS])
    assert r == 11 * 4 + 6 * 7 + 3 * 14 + 2 * 22


# (threads and chunks, labels and validation: the race's tests in tests/test_race.py cover halve too)


# ---- cards that play alike are one option ------------------------------------------------------
def _cards(*names):
    from kernels.cards import parse_card
    m = 0
    for n in names:
        m |= 1 << parse_card(n)
    return m


def _trick_state(players=4):
    st = np.empty(fb.ST_SIZE, dtype=np.int64)
    fb.init_game(st, players, 1)
    for o in range(int(st[fb.S_SEATS])):
        st[fb.S_PLAYED + o] = -1
    return st


def test_distinct_plays_keeps_the_lowest_of_each_run():
    """7H 8H 10H with 9H out of play (a completed trick): one run, 7H kept; with 9H unseen, 10H
    can win a trick 7H cannot: two options. Other suits are never merged (2C, 3S)."""
    st = _trick_state()
    hand = _cards("7H", "8H", "10H", "2C", "3S")
    st[fb.S_HAND] = hand
    assert fb.distinct_plays(st, 0, hand) == _cards("7H", "10H", "2C", "3S")
    st[fb.S_WON_PILE] = _cards("9H")
    assert fb.distinct_plays(st, 0, hand) == _cards("7H", "2C", "3S")


def test_distinct_plays_counts_the_current_trick_scrap_and_market_as_out_of_play():
    from kernels.cards import parse_card
    st = _trick_state()
    legal = _cards("QD", "AD")
    st[fb.S_HAND] = legal
    assert fb.distinct_plays(st, 0, legal) == legal            # KD unseen
    st[fb.S_PLAYED + 2] = parse_card("KD")                       # KD in the current trick
    assert fb.distinct_plays(st, 0, legal) == _cards("QD")
    st[fb.S_PLAYED + 2] = -1
    st[fb.S_MARKET] = _cards("KD")                               # no Rival at 4p: out of play
    assert fb.distinct_plays(st, 0, legal) == _cards("QD")
    st2 = _trick_state(players=2)                                # the Market goes to the Rival Deck
    st2[fb.S_HAND] = legal
    st2[fb.S_MARKET] = _cards("KD")
    assert fb.distinct_plays(st2, 0, legal) == legal
    st2[fb.S_SCRAP] = _cards("KD")                               # scrapped by the Rival: out of play
    assert fb.distinct_plays(st2, 0, legal) == _cards("QD")


def test_a_halve_seat_plays_one_of_two_alike_cards_without_search():
    """The position of tests/test_forecasts_bid_mc.py (Hearts led, seat 0 void in Hearts) with
    seat 0 holding 8C and 9C: adjacent, so alike: 8C with no rollout; a mc seat searches them."""
    from kernels.cards import parse_card
    from tests.test_forecasts_bid_mc import MC_SEAT, search_card
    for halve in (True, False):
        st = alike_cards_position(MC_SEAT)
        pick, st, _ = search_card(st, 1, fb.SEARCH_HALVE if halve else 0)
        if halve:
            assert pick == parse_card("8C") and st[fb.S_COUNT + fb.C_MC_ROLLOUTS] == 0
        else:
            assert st[fb.S_COUNT + fb.C_MC_ROLLOUTS] == 2 * 16


def alike_cards_position(seat, **position):
    """``winning_card_position(16, **position)`` with ``seat`` holding 8C and 9C, adjacent and so
    alike (AD and 2C swapped in where 8C and 9C were, in the won pile or the Draw Deck)."""
    from kernels.cards import parse_card
    from tests.test_forecasts_bid_mc import winning_card_position
    st, _ = winning_card_position(16, **position)
    for old, new in (("AD", "8C"), ("2C", "9C")):     # swap: the old cards go where the new were
        o, n = parse_card(old), parse_card(new)
        if (int(st[fb.S_WON_PILE]) >> n) & 1:
            st[fb.S_WON_PILE] = (int(st[fb.S_WON_PILE]) & ~(1 << n)) | (1 << o)
        else:
            i = [int(x) for x in st[fb.S_DRAW_DECK:fb.S_DRAW_DECK + 12]].index(n)
            st[fb.S_DRAW_DECK + i] = o
    st[fb.S_HAND + seat] = _cards("8C", "9C")
    return st
