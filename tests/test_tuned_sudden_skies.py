"""sudden-skies' ``tuned`` policy (issue #24): the heuristic's weather thresholds and suit weights
as knobs.

* ``tuned`` with the default knobs plays exactly the heuristic (whole result arrays at 2-4
  players and every rule switch, restricted seats, narrow seat arrays, mc rollouts);
* each knob moves play the way its help says, on hand-built tables (the positions of the
  heuristic's own tests in tests/test_sudden_skies.py, with the expected change worked out from
  the heuristic's rule in docs/games/sudden-skies.md and docs/search.md "tuned: knobs");
* knobs anywhere in their bounds play legal games (every trace replays through the rules
  checker of tests/test_sudden_skies.py: legal plays, the 52 cards conserved);
* results are the same for any threads and chunks.
"""
from __future__ import annotations

import numba
import numpy as np
import pytest

from kernels import layout
from kernels import sudden_skies as ss
from kernels.cards import HEARTS, SPADES, mask_of, parse_card
from kernels.spec import MAX_KNOBS, SEAT_FORBID, SEAT_WIDTH
from tests import helpers
from tests.test_sudden_skies import H, Table, _replay_and_check, cards, params

DEFAULTS = {k.name: k.default for k in ss.KNOBS}


def knob_row(**over):
    return helpers.knob_row(ss, **over)


def seats_of(policies, knobs=None, forbid=None, width=SEAT_WIDTH):
    return helpers.tuned_seats(ss, policies, knobs, forbid, width)


def knob_vectors(seed, n):
    return helpers.knob_vectors(ss, seed, n)


RULE_CASES = [{}, {"cloud_self": True, "wind_empty": "skip"}, {"take_win": False}]


def run(seats, n, rules=None, seed=2026, first=500, serial=True):
    out = np.full((n, layout.out_width(seats.shape[0], ss.N_COUNTERS)), -7, dtype=np.int64)
    (ss.play_games_serial if serial else ss.play_games)(params(**(rules or {})), seats, seed, first, out)
    return out


def test_declarations():
    assert ss.POLICIES["tuned"] == ss.P_TUNED and ss.P_TUNED not in (ss.P_RANDOM, ss.P_HEURISTIC, ss.P_MC)
    assert len(ss.KNOBS) <= MAX_KNOBS
    assert sorted(k.index for k in ss.KNOBS) == list(range(len(ss.KNOBS)))
    for k in ss.KNOBS:
        assert k.lo <= k.default <= k.hi and k.help
    # the suit weights can never outweigh a live suit (W_LIVE) nor the Wind's avoid key
    hi = {k.name: k.hi for k in ss.KNOBS}
    assert 6 * hi["w_held"] + 13 * hi["w_avail"] < ss.W_LIVE and ss.W_LIVE * 2 < ss.W_AVOID


# ---- default knobs are the heuristic --------------------------------------------------------
@pytest.mark.parametrize("P", [2, 3, 4])
@pytest.mark.parametrize("rules", RULE_CASES)
def test_default_knobs_play_exactly_the_heuristic(P, rules):
    heur = run(seats_of(["heuristic"] * P), 150, rules)
    assert (run(seats_of(["tuned"] * P, [DEFAULTS] * P), 150, rules) == heur).all()
    mixed = ["heuristic", "random", "random", "heuristic"][:P]
    tuned = ["tuned" if x == "heuristic" else x for x in mixed]
    assert (run(seats_of(tuned, [DEFAULTS] * P), 150, rules) == run(seats_of(mixed), 150, rules)).all()


@pytest.mark.parametrize("width", [4, 6])
def test_narrow_seat_arrays_play_tuned_as_the_heuristic(width):
    heur = run(seats_of(["heuristic", "random", "heuristic"], width=width), 120)
    assert (run(seats_of(["tuned", "random", "tuned"], width=width), 120) == heur).all()


@pytest.mark.parametrize("bits", [1 << ss.RX_NO_SUN, 1 << ss.RX_NO_WEATHER, 1 << ss.RX_NO_WIND | 1 << ss.RX_NO_CLOUD])
def test_default_knobs_restricted_play_the_restricted_heuristic(bits):
    forbid = [bits, 0, bits, 0]
    heur = run(seats_of(["heuristic", "random", "heuristic", "heuristic"], forbid=forbid), 120)
    tuned = run(seats_of(["tuned", "random", "tuned", "heuristic"], [DEFAULTS] * 4, forbid=forbid), 120)
    assert (tuned == heur).all()


def test_mc_with_tuned_rollouts_at_default_knobs_is_mc_with_heuristic_rollouts():
    a = run(seats_of(["mc:2:heuristic", "heuristic", "heuristic"]), 6)
    b = run(seats_of(["mc:2:tuned", "heuristic", "heuristic"], [DEFAULTS, None, None]), 6)
    assert (a == b).all()
    c = run(seats_of(["mc:2:tuned", "heuristic", "heuristic"],
                     [dict(thunder_level=0, cloud_level=0, wind_min_off=0, wind_needs_pay=0), None, None]), 6)
    assert not (c == a).all()


def test_a_sample_gives_every_seat_the_searching_seats_knob_row():
    mine = knob_row(thunder_level=1, w_avail=40)
    seats = seats_of(["mc:4:tuned", "tuned", "heuristic"], [mine, dict(sun_relook=7), None])
    st = ss.new_state(params(), seats)
    rows = lambda s: s[ss.ST_KNOB:ss.ST_KNOB + 4 * MAX_KNOBS].reshape(4, MAX_KNOBS)
    assert (rows(st)[0] == mine).all() and rows(st)[1, ss.K_SUN_RELOOK] == 7
    assert (rows(st)[2] == ss.KNOB_DEFAULTS).all()
    dst = np.empty(ss.STATE_SIZE, dtype=np.int64)
    keys = np.zeros(1, dtype=np.uint64)
    ss._determinize(st, 0, np.int64(0), ss.P_TUNED, dst, *[np.empty(52, dtype=np.int64) for _ in range(4)],
                    np.empty(5, dtype=np.int64), np.empty((3, 5), dtype=np.int64), keys,
                    np.zeros(1, dtype=np.int64), 0)
    assert (rows(dst)[:3] == mine).all()
    st = ss.new_state(params(), seats_of(["mc:4:heuristic", "tuned", "heuristic"], [mine] * 3))
    assert (rows(st)[0] == ss.KNOB_DEFAULTS).all() and (rows(st)[1] == mine).all()


# ---- each knob moves play the way its help says ---------------------------------------------
def table(P, hands, pile=("AD", "KD"), **knobs):
    """A hand-built table: seat 0 tuned with these knob overrides, the others heuristic."""
    t = Table(P, hands, pile=list(pile), pols=[H] * P)
    t.st[ss.ST_POLICY] = ss.P_TUNED
    t.st[ss.ST_KNOB:ss.ST_KNOB + MAX_KNOBS] = knob_row(**knobs)
    return t


def first_event(t):
    return t.turn(0)[0]


SPADE_HAND = [["2H", "3H", "4H", "QS", "5D"], ["2D", "3S", "9C", "4D", "5S"], ["2C", "3C", "4C", "5C", "6D"]]
CLUB_HAND = [["2H", "3H", "4H", "QC", "5D"], ["2D", "3S", "9C", "4D", "5S"], ["2S", "3S", "4S", "5D", "6D"]]


def test_thunder_level():
    # Collecting Hearts with an off-suit Spade, knowing nothing of the others (level 0 < 4): draws.
    assert first_event(table(3, SPADE_HAND))[0] == ss.E_DRAW_DISCARD
    # thunder_level 0: any unmarked opponent will do, the nearest clockwise (seat 1)
    e = first_event(table(3, SPADE_HAND, thunder_level=0))
    assert e[:6] == (ss.E_WEATHER, 0, 1, parse_card("QS"), ss.THUNDER, 1)


def test_stall_turns():
    # From turn stall_turns on, Thunder needs no known threat (as thunder_level 0); before, the
    # heuristic's rule: it draws. The turn taken here is turn 31.
    def at_turn_31(**knobs):
        t = table(3, SPADE_HAND, **knobs)
        t.st[ss.ST_TURN] = 30
        return first_event(t)

    assert at_turn_31()[0] == ss.E_DRAW_DISCARD
    assert at_turn_31(stall_turns=32)[0] == ss.E_DRAW_DISCARD
    assert at_turn_31(stall_turns=31)[:6] == (ss.E_WEATHER, 0, 31, parse_card("QS"), ss.THUNDER, 1)
    assert first_event(table(3, CLUB_HAND, stall_turns=1))[:6] == (ss.E_WEATHER, 0, 1, parse_card("QC"), ss.CLOUD, 1)


SUN_WIND_HAND = [["2S", "3S", "4S", "QH", "5D"], ["2D", "3C", "9C", "4D", "5S"], ["2C", "3C", "4C", "5C", "6D"]]
WIND_HAND = [["2S", "3S", "4S", "5S", "5D"], ["2D", "3C", "9C", "4D", "5H"], ["2C", "3C", "4C", "5C", "6D"]]


def test_stall_any():
    # Collecting Spades with only a Heart and a Diamond off-suit; Sun never by choice
    # (sun_min_held 6), and Wind's own rule unmet (the neighbour's hand is unknown). stall_turns
    # alone frees only Thunder and Cloud, so the seat draws; with stall_any, from turn stall_turns
    # on, Sun comes first (the Heart is played), and a lone off-suit Diamond is played as Wind.
    def first(hands, turn, **knobs):
        t = table(3, hands, sun_min_held=6, **knobs)
        t.st[ss.ST_TURN] = turn - 1
        return first_event(t)

    assert first(SUN_WIND_HAND, 31, stall_turns=31)[0] == ss.E_DRAW_DISCARD
    assert first(SUN_WIND_HAND, 31, stall_any=1)[0] == ss.E_DRAW_DISCARD          # stall_turns 0: off
    assert first(SUN_WIND_HAND, 30, stall_turns=31, stall_any=1)[0] == ss.E_DRAW_DISCARD   # not yet
    e = first(SUN_WIND_HAND, 31, stall_turns=31, stall_any=1)
    assert (e[0], e[1], e[3], e[4]) == (ss.E_WEATHER, 0, parse_card("QH"), ss.SUN)
    assert first(WIND_HAND, 31, stall_turns=31)[0] == ss.E_DRAW_DISCARD
    e = first(WIND_HAND, 31, stall_turns=31, stall_any=1)
    assert (e[0], e[1], e[3], e[4]) == (ss.E_WEATHER, 0, parse_card("5D"), ss.WIND)


def test_stall_counts_turns_since_the_last_weather_card():
    # The stall clock restarts at every weather card: a Cloud played on turn 20 means that on
    # turn 40, 20 turns have passed without weather (stall_turns 21: draw; 20: Thunder, Sun).
    def at_turn_40(hands, **knobs):
        t = table(3, hands, **knobs)
        t.st[ss.ST_TURN] = 39
        t.st[ss.ST_LAST_WX] = 20
        return first_event(t)

    assert at_turn_40(SPADE_HAND, stall_turns=21)[0] == ss.E_DRAW_DISCARD
    assert at_turn_40(SPADE_HAND, stall_turns=20)[:6] == (ss.E_WEATHER, 0, 40, parse_card("QS"), ss.THUNDER, 1)
    assert at_turn_40(SUN_WIND_HAND, sun_min_held=6, stall_turns=21, stall_any=1)[0] == ss.E_DRAW_DISCARD
    assert at_turn_40(SUN_WIND_HAND, sun_min_held=6, stall_turns=20, stall_any=1)[4] == ss.SUN
    # playing a weather card sets the clock to that turn
    t = table(3, SPADE_HAND, thunder_level=0)
    t.st[ss.ST_TURN] = 29
    assert first_event(t)[:5] == (ss.E_WEATHER, 0, 30, parse_card("QS"), ss.THUNDER)
    assert t.st[ss.ST_LAST_WX] == 30



def test_cloud_level():
    assert first_event(table(3, CLUB_HAND))[0] == ss.E_DRAW_DISCARD
    e = first_event(table(3, CLUB_HAND, cloud_level=0))
    assert e[:6] == (ss.E_WEATHER, 0, 1, parse_card("QC"), ss.CLOUD, 1)
    # seen three Clubs... of Spades at seat 2: level 3 meets cloud_level 3, not the default 4
    t = table(3, CLUB_HAND, cloud_level=3)
    ss.apply_sun(t.st, 0, 2)
    assert first_event(t)[:6] == (ss.E_WEATHER, 0, 1, parse_card("QC"), ss.CLOUD, 2)


def test_sun_min_held():
    # Holding three Spades and an off-suit Heart, knowing nothing: the heuristic looks (Sun).
    hands = [["2S", "3S", "4S", "QH", "5D"], ["2D", "3H", "9C", "4D", "5S"], ["2C", "3C", "4C", "5C", "6D"]]
    assert first_event(table(3, hands))[4] == ss.SUN
    assert first_event(table(3, hands, sun_min_held=4))[0] == ss.E_DRAW_DISCARD   # needs 4 Spades
    assert first_event(table(3, hands, sun_min_held=6))[0] == ss.E_DRAW_DISCARD   # never


def test_sun_relook():
    # Seat 0 looked at both others at turn 1; at turn 10 (looks 9 turns old) nobody is unseen, so
    # the heuristic draws
    # (its Diamond cannot Wind: its right neighbour, seat 2, holds no Spade)
    hands = [["2S", "3S", "4S", "QH", "5D"], ["2D", "3H", "9C", "4D", "5S"], ["2C", "3C", "4C", "5C", "6D"]]

    def looked(**knobs):
        t = table(3, hands, **knobs)
        t.st[ss.ST_TURN] = 1
        ss.apply_sun(t.st, 0, 1)
        ss.apply_sun(t.st, 0, 2)
        t.st[ss.ST_TURN] = 9                    # the turn taken is turn 10
        return first_event(t)

    assert looked()[0] == ss.E_DRAW_DISCARD
    assert looked(sun_relook=9)[0] == ss.E_DRAW_DISCARD          # looks 9 turns old: not older
    # older than 5 turns: look again, at the stale opponent known to hold most of one suit (seat 2)
    assert looked(sun_relook=5)[:6] == (ss.E_WEATHER, 0, 10, parse_card("QH"), ss.SUN, 2)


WIND_HANDS = [["2H", "3H", "4H", "2D", "5S"], ["3D", "4D", "5D", "6D", "8S"], ["2C", "3C", "4C", "9H", "6S"]]


def test_wind_needs_pay_and_wind_min_off():
    # Without knowing its right neighbour's hand the heuristic does not Wind ...
    assert first_event(table(3, WIND_HANDS))[0] == ss.E_DRAW_DISCARD
    assert first_event(table(3, WIND_HANDS, wind_needs_pay=0))[:5] == (ss.E_WEATHER, 0, 1, parse_card("2D"), ss.WIND)
    # ... and knowing it (seat 2 holds 9H, collects Clubs) it does, with two off-suit cards
    t = table(3, WIND_HANDS)
    ss.apply_sun(t.st, 0, 2)
    assert first_event(t)[4] == ss.WIND
    t = table(3, WIND_HANDS, wind_min_off=3)                  # 2D and 5S: two off-suit cards
    ss.apply_sun(t.st, 0, 2)
    assert first_event(t)[0] == ss.E_DRAW_DISCARD


def test_suit_weights_choose_what_to_collect():
    # Two Hearts held, one Spade; seven Hearts already on the weather pile, so 6 Hearts and 13
    # Spades are still to be had (both live). Default key: held*32 + avail: Hearts 64 + 6 = 70 >
    # Spades 32 + 13 = 45: Hearts. With w_avail 32: Hearts 64 + 192 < Spades 32 + 416: Spades.
    t = table(2, [["2H", "3H", "4S", "5D", "6C"], ["7D", "8D", "9C", "10C", "JC"]])
    t.st[ss.ST_GONE] = mask_of(cards("5H", "6H", "7H", "8H", "9H", "10H", "JH"))
    hand = int(t.st[ss.ST_HAND])
    assert ss.h_target_suit(t.st, 0, hand) == HEARTS
    t.st[ss.ST_KNOB + ss.K_W_AVAIL] = 32
    assert ss.h_target_suit(t.st, 0, hand) == SPADES
    t.st[ss.ST_KNOB + ss.K_W_AVAIL] = 1
    t.st[ss.ST_KNOB + ss.K_W_HELD] = 0                       # held cards count for nothing
    assert ss.h_target_suit(t.st, 0, hand) == SPADES
    # and the discard follows. Drawing the AH: by default Hearts (3 held) are wanted most and
    # Spades, Diamonds, Clubs (1 held, 13 to be had) tie for least: the lowest code goes, 4S.
    # With w_avail 32 Hearts are the least wanted (1024 + 96 + 192 < 1024 + 32 + 416): a Heart goes.
    def discard(**knobs):
        t = table(2, [["2H", "3H", "4S", "5D", "6C"], ["7D", "8D", "9C", "10C", "JC"]], pile=("AH",), **knobs)
        t.st[ss.ST_GONE] = mask_of(cards("5H", "6H", "7H", "8H", "9H", "10H", "JH"))
        e = first_event(t)
        assert e[0] == ss.E_DRAW_DISCARD and e[3] == parse_card("AH")
        return e[4]

    assert discard() == parse_card("4S")
    assert discard(w_avail=32) // 13 == HEARTS


# ---- any knobs play legal games ---------------------------------------------------------------
@pytest.mark.parametrize("P", [2, 3, 4])
@pytest.mark.parametrize("rules", [{}, {"cloud_self": True}])
def test_knobs_in_bounds_play_legal_games(P, rules):
    rows = knob_vectors(P, 4)
    ev = np.zeros((6000, layout.EVENT_WIDTH), dtype=np.int64)
    ev_n = np.zeros(1, dtype=np.int64)
    out = np.zeros((1, layout.out_width(P, ss.N_COUNTERS)), dtype=np.int64)
    weather = 0
    for g in range(24):
        seats = seats_of(["tuned"] * P, [rows[(g + s) % len(rows)] for s in range(P)])
        if g % 4 == 3:
            seats[0, SEAT_FORBID] = 1 << ss.RX_NO_THUNDER
        ev_n[0] = 0
        ss.trace_game(params(**rules), seats, 17, g, out, ev, ev_n)
        assert ev_n[0] <= ev.shape[0]
        n = _replay_and_check(P, ev[:ev_n[0]], rules)
        assert n == sum(out[0, layout.col_counter(P, ss.C_WEATHER_BY_SUIT + u)] for u in range(4))
        weather += n
        if g % 4 == 3:
            assert not any(e[0] == ss.E_WEATHER and e[1] == 0 and e[4] == ss.THUNDER for e in ev[:ev_n[0]])
    assert weather > 0            # the lo vectors (every threshold 0) do play weather


# ---- determinism ----------------------------------------------------------------------------------
def test_threads_chunks_and_serial_agree():
    seats = seats_of(["tuned"] * 4, knob_vectors(11, 2)[:4])
    ref = run(seats, 300, serial=True)
    threads = numba.get_num_threads()
    try:
        for th in sorted({1, min(2, numba.config.NUMBA_NUM_THREADS)}):
            numba.set_num_threads(th)
            assert (run(seats, 300, serial=False) == ref).all()
    finally:
        numba.set_num_threads(threads)
    assert (np.vstack([run(seats, 130, first=500), run(seats, 170, first=630)]) == ref).all()
