"""sudden-skies: every rule on hand-built states, invariants over random games, the contract.

Expected values come from the rulebook and RULINGS.md (worked by hand in the comments), never
from the kernel's own output.
"""
from __future__ import annotations

import numba
import numpy as np
import pytest

from kernels import layout, rng
from kernels import sudden_skies as ss
from kernels.cards import mask_cards, mask_of, parse_card
from tests.helpers import rule_params
from tests.reference import prng

R, H = ss.P_RANDOM, ss.P_HEURISTIC


def params(**rules) -> np.ndarray:
    return rule_params(ss, **rules)


def cards(*names) -> list[int]:
    return [parse_card(n) for n in names]


def hand(*names) -> int:
    return mask_of(cards(*names))


def seats_of(*pols) -> np.ndarray:
    s = np.zeros((len(pols), 4), dtype=np.int64)
    s[:, 0] = pols
    return s


class Table:
    """A hand-built state and everything take_turn needs."""

    def __init__(self, P, hands, pile=(), pols=None, seed=1, game=0, **rules):
        self.P = P
        self.seats = seats_of(*(pols or [R] * P))
        self.st = ss.new_state(params(**rules), self.seats)
        for s, h in enumerate(hands):
            self.st[ss.ST_HAND + s] = hand(*h) if h else 0
        for i, c in enumerate(cards(*pile)):
            self.st[ss.ST_PILE + i] = c
        self.st[ss.ST_PILE_N] = len(pile)
        self.keys = np.array([rng.stream_key(seed, game, rng.SEAT, s) for s in range(P)] + [0],
                             dtype=np.uint64)
        self.ctrs = np.zeros(P + 1, dtype=np.int64)
        self.ev = np.zeros((256, layout.EVENT_WIDTH), dtype=np.int64)
        self.ev_n = np.zeros(1, dtype=np.int64)

    def hand(self, s) -> set[int]:
        return set(mask_cards(int(self.st[ss.ST_HAND + s])))

    def pile(self) -> list[int]:
        top, n = int(self.st[ss.ST_PILE_TOP]), int(self.st[ss.ST_PILE_N])
        return [int(self.st[ss.ST_PILE + (top + i) % 52]) for i in range(n)]

    def turn(self, s):
        """Seat s takes one turn; returns the events it recorded."""
        n0 = int(self.ev_n[0])
        # play_from with the turn cap set to this one turn (reuses the bulk kernel's compiled
        # turn loop: take_turn then record_turn), then lift the cap again
        cap = int(self.st[ss.ST_RULES + ss.R_TURN_CAP])
        self.st[ss.ST_RULES + ss.R_TURN_CAP] = self.st[ss.ST_TURN] + 1
        ss.play_from(self.st, s, self.keys, self.ctrs, self.ev, self.ev_n)
        self.st[ss.ST_RULES + ss.R_TURN_CAP] = cap
        if self.st[ss.ST_END] == ss.END_TIMEOUT:
            self.st[ss.ST_END] = ss.END_RUNNING
        return [tuple(int(x) for x in self.ev[i, :6]) for i in range(n0, int(self.ev_n[0]))]

    def wind(self, *passes):
        """Everyone passes at once: passes[p] is a card name or None."""
        for p in range(4):
            c = passes[p] if p < len(passes) else None
            self.st[ss.ST_PASS + p] = parse_card(c) if c else -1
        ss.apply_wind(self.st)
        return [int(self.st[ss.ST_PASS_TO + p]) for p in range(self.P)]

    def ctr(self, i) -> int:
        return int(self.st[ss.ST_CTR + i])

    def mark(self, base, s) -> int:
        return int(self.st[base + s])


# ---- setup ------------------------------------------------------------------------------------
@pytest.mark.parametrize("P", [2, 3, 4])
def test_deal_is_the_documented_shuffle_one_card_at_a_time(P):
    st = ss.new_state(params(), seats_of(*[R] * P))
    keys = np.array([rng.stream_key(9, 4, rng.DEAL, 0)], dtype=np.uint64)
    ctrs = np.zeros(1, dtype=np.int64)
    ss.deal(st, np.zeros(52, dtype=np.int64), keys, ctrs, 0)
    deck = list(range(52))
    prng.Stream(9, 4, prng.DEAL, 0).shuffle(deck)
    for s in range(P):
        assert mask_cards(int(st[ss.ST_HAND + s])) == sorted(deck[s:5 * P:P])
    assert int(st[ss.ST_PILE_N]) == 52 - 5 * P
    assert [int(st[ss.ST_PILE + i]) for i in range(52 - 5 * P)] == deck[5 * P:]


# ---- reveal -----------------------------------------------------------------------------------
def test_flush_needs_five_cards_of_one_suit():
    assert ss.is_flush(hand("2H", "5H", "9H", "JH", "AH"))
    assert not ss.is_flush(hand("2H", "5H", "9H", "JH", "AS"))
    assert not ss.is_flush(hand("2H", "5H", "9H", "JH"))       # four cards are not a flush
    assert not ss.is_flush(0)


def test_reveal_wins_at_the_start_of_a_turn():
    t = Table(2, [["2C", "5C", "9C", "JC", "AC"], ["2H", "3H", "4D", "5S", "6S"]], pile=["7D"])
    assert ss.legal_turn(t.st, 0) == ss.K_REVEAL | ss.K_DRAW | ss.K_WEATHER
    ev = t.turn(0)
    assert ev[0][0] == ss.E_REVEAL and int(t.st[ss.ST_WINNER]) == 0
    assert ss.game_over(t.st)


def test_no_reveal_on_the_turn_the_fifth_card_arrives():
    # seat 0 holds four Hearts and a Spade; the top card is the fifth Heart. The heuristic draws
    # it and discards the Spade: a flush, but the turn is over. Next turn it reveals.
    t = Table(2, [["2H", "5H", "9H", "JH", "3S"], ["2C", "3C", "4C", "5C", "6S"]],
              pile=["AH", "7D", "8D"], pols=[H, H])
    ev = t.turn(0)
    assert ev[0][:4] == (ss.E_DRAW_DISCARD, 0, 1, parse_card("AH"))
    assert t.hand(0) == set(cards("2H", "5H", "9H", "JH", "AH"))
    assert int(t.st[ss.ST_WINNER]) == -1 and not ss.game_over(t.st)
    t.turn(1)
    ev = t.turn(0)
    assert ev[0][0] == ss.E_REVEAL and int(t.st[ss.ST_WINNER]) == 0
    assert int(t.st[ss.ST_TURN]) == 3          # the winning reveal counts as a turn


def test_no_reveal_on_the_forced_draw_that_brings_the_fifth_card():
    # seat 0 owes a draw after a weather card: it draws the fifth Heart and keeps it, nothing else
    t = Table(2, [["2H", "5H", "9H", "JH"], ["2C", "3C", "4C", "5C", "6S"]], pile=["AH", "7D"],
              pols=[H, H])
    t.st[ss.ST_OWE + 0] = 1
    ev = t.turn(0)
    assert ev == [(ss.E_FORCED_DRAW, 0, 1, parse_card("AH"), 0, 0)]
    assert int(t.st[ss.ST_WINNER]) == -1 and t.mark(ss.ST_OWE, 0) == 0
    t.turn(1)
    assert t.turn(0)[0][0] == ss.E_REVEAL


def test_without_take_win_reveal_is_one_more_offered_action():
    # take_win = false: the random policy draws uniformly over {Reveal, Draw, Weather}
    revealed = 0
    for seed in range(300):
        t = Table(2, [["2C", "5C", "9C", "JC", "AC"], ["2H", "3H", "4D", "5S", "6S"]],
                  pile=["7D"], seed=seed, take_win=False)
        if t.turn(0)[0][0] == ss.E_REVEAL:
            revealed += 1
    assert 60 <= revealed <= 140                # 1/3 of 300; 3.5 sigma is about 29


# ---- draw and discard ------------------------------------------------------------------------
def test_draw_and_discard_goes_under_the_pile():
    t = Table(2, [["2H", "5H", "9H", "JH", "3S"], ["2C", "3C", "4D", "5D", "6C"]],
              pile=["AD", "7D", "8D"], pols=[H, H])
    ev = t.turn(0)
    # the heuristic keeps Hearts: of {2H 5H 9H JH 3S AD} it discards a non-Heart, the lowest code
    # among the least wanted suits (Spades and Diamonds both hold one card): 3S (code 1)
    assert ev[0][:5] == (ss.E_DRAW_DISCARD, 0, 1, parse_card("AD"), parse_card("3S"))
    assert t.pile() == cards("7D", "8D", "3S")
    assert len(t.hand(0)) == 5


def test_the_drawn_card_may_be_discarded_at_once():
    t = Table(2, [["2H", "5H", "9H", "JH", "3S"], ["2C", "3C", "4D", "5D", "6C"]], pile=["AD", "7D"])
    opts = ss.legal_discards(t.st, 0, parse_card("AD"))
    assert set(mask_cards(int(opts))) == set(cards("2H", "5H", "9H", "JH", "3S", "AD"))


def test_empty_pile_offers_no_draw_and_a_forced_draw_passes():
    t = Table(3, [["2H", "5H", "9H", "JH", "3S"], ["2C", "3C"], []], pile=[])
    assert ss.legal_turn(t.st, 0) == ss.K_WEATHER
    assert ss.legal_turn(t.st, 2) == 0
    t.st[ss.ST_OWE + 1] = 1
    assert t.turn(1) == [(ss.E_PASS, 1, 1, ss.PASS_NO_DRAW, 0, 0)]
    assert t.hand(1) == set(cards("2C", "3C")) and t.mark(ss.ST_OWE, 1) == 0
    assert t.turn(2) == [(ss.E_PASS, 2, 2, ss.PASS_NO_ACTION, 0, 0)]
    # seat 0 can only play weather (the random policy has one kind to choose from)
    ev = t.turn(0)
    assert ev[0][0] == ss.E_WEATHER and len(t.hand(0)) == 4
    assert t.ctr(ss.C_PASSES) == 2


def test_stalemate_when_the_pile_and_every_hand_are_empty():
    # seat 0 holds one card, the pile is empty: it must play it as weather (a Spade: Thunder on
    # seat 1, who has nothing anyway); then nobody holds a card: stalemate, no winner.
    t = Table(2, [["3S"], []], pile=[])
    out = np.zeros((1, layout.out_width(2, ss.N_COUNTERS)), dtype=np.int64)
    ss.play_from(t.st, 0, t.keys, t.ctrs, t.ev, t.ev_n)
    ss.finish(t.st, out, 0, t.ev, t.ev_n)
    assert int(t.st[ss.ST_END]) == ss.END_STALEMATE
    S = 2
    assert out[0, layout.col_winners(S)] == 0
    assert out[0, layout.col_flags(S)] == layout.FLAG_TIMEOUT
    assert out[0, layout.col_length(S)] == 1
    assert out[0, layout.col_counter(S, ss.C_STALEMATES)] == 1
    assert out[0, layout.col_counter(S, ss.C_TIMEOUTS)] == 0
    row = layout.RowLayout(S, len(ss.COUNTERS))
    assert list(out[0, row.scores]) + list(out[0, row.places]) == [0, 0, 1, 1]


def test_turn_cap_ends_in_a_timeout():
    P = 4
    out = np.zeros((300, layout.out_width(P, ss.N_COUNTERS)), dtype=np.int64)
    ss.play_games(params(turn_cap=6), seats_of(R, R, R, R), 3, 0, out)
    length = out[:, layout.col_length(P)]
    won = out[:, layout.col_winners(P)] != 0
    assert (length <= 6).all()
    # with random play almost nobody holds a flush within 6 turns: most games time out at 6
    assert (length[~won] == 6).all() and (~won).sum() > 250
    assert (out[~won, layout.col_counter(P, ss.C_TIMEOUTS)] == 1).all()
    assert (out[~won, layout.col_flags(P)] == layout.FLAG_TIMEOUT).all()
    assert (out[won, layout.col_counter(P, ss.C_TIMEOUTS)] == 0).all()


# ---- weather --------------------------------------------------------------------------------
def test_weather_card_leaves_the_game_and_the_next_turn_is_draw_and_keep():
    t = Table(2, [["2H", "5H", "9H", "JH", "3S"], ["2C", "3C", "4D", "5D", "6C"]],
              pile=["AD", "7D"], pols=[H, H])
    ss.apply_weather_card(t.st, 0, parse_card("3S"))
    assert int(t.st[ss.ST_GONE]) == hand("3S") and len(t.hand(0)) == 4
    assert t.mark(ss.ST_OWE, 0) == 1
    # the forced turn: draw AD and keep it even though it is off-suit; no discard
    assert t.turn(0)[0][:4] == (ss.E_FORCED_DRAW, 0, 1, parse_card("AD"))
    assert t.hand(0) == set(cards("2H", "5H", "9H", "JH", "AD")) and t.pile() == cards("7D")
    assert t.ctr(ss.C_WEATHER_DRAWS) == 1


def test_thunder_skips_the_next_turn_which_still_counts():
    t = Table(3, [["3S", "2H", "5H", "9H", "JH"], ["2C", "3C", "4D", "5D", "6C"],
                  ["2D", "3D", "5C", "6D", "7D"]], pile=["AD", "7H", "8H", "9D"], pols=[R, H, H])
    ss.apply_weather_card(t.st, 0, parse_card("3S"))
    assert ss.apply_thunder(t.st, 1) == 1
    assert ss.apply_thunder(t.st, 1) == 0      # marks do not stack
    assert t.turn(1) == [(ss.E_SKIP, 1, 1, 0, 0, 0)]
    assert t.mark(ss.ST_SKIP, 1) == 0 and int(t.st[ss.ST_TURNS + 1]) == 1
    assert int(t.st[ss.ST_TURN]) == 1 and t.ctr(ss.C_SKIPS) == 1
    # the second Thunder added nothing: the following turn is a normal one
    assert t.turn(1)[0][0] != ss.E_SKIP


def test_a_skip_does_not_lift_the_forced_draw():
    t = Table(2, [["2H", "5H", "9H", "JH"], ["2C", "3C", "4D", "5D", "6C"]], pile=["AD", "7D"])
    t.st[ss.ST_OWE + 0] = 1
    t.st[ss.ST_SKIP + 0] = 1
    assert t.turn(0)[0][0] == ss.E_SKIP
    assert t.mark(ss.ST_OWE, 0) == 1
    assert t.turn(0)[0][:4] == (ss.E_FORCED_DRAW, 0, 2, parse_card("AD"))


def test_cloud_forces_keeping_the_drawn_card():
    # under a Cloud the discard comes from the five earlier cards; whatever the random policy
    # picks, the drawn card stays (over many seeds)
    earlier = ["2H", "5H", "9H", "JH", "3S"]
    for seed in range(60):
        t = Table(2, [earlier, ["2C", "3C", "4D", "5D", "6C"]], pile=["AD", "7D"], seed=seed)
        t.st[ss.ST_CLOUD + 0] = 1
        opts = ss.legal_discards(t.st, 0, parse_card("AD"))
        assert set(mask_cards(int(opts))) == set(cards(*earlier))
        # drive the Draw-and-Discard directly (take_turn would first draw the kind at random)
        drawn = ss.pile_draw(t.st)
        d = ss.choose_discard(t.st, 0, drawn, opts, t.keys, t.ctrs)
        ss.apply_draw_discard(t.st, 0, drawn, d)
        assert parse_card("AD") in t.hand(0) and d in cards(*earlier)
        assert t.mark(ss.ST_CLOUD, 0) == 0 and t.pile() == [parse_card("7D"), d]


def test_cloud_through_take_turn_counts_a_forced_keep():
    hits = 0
    for seed in range(40):
        t = Table(2, [["2H", "5H", "9H", "JH", "3S"], ["2C", "3C", "4D", "5D", "6C"]],
                  pile=["AD", "7D"], seed=seed)
        t.st[ss.ST_CLOUD + 0] = 1
        ev = t.turn(0)
        if ev[0][0] == ss.E_DRAW_DISCARD:
            hits += 1
            assert ev[0][2:6] == (1, parse_card("AD"), ev[0][4], 1)
            assert ev[0][4] != parse_card("AD") and parse_card("AD") in t.hand(0)
            assert t.ctr(ss.C_FORCED_KEEPS) == 1 and t.mark(ss.ST_CLOUD, 0) == 0
        else:                                     # weather: the mark waits for the next draw
            assert t.mark(ss.ST_CLOUD, 0) == 1 and t.ctr(ss.C_FORCED_KEEPS) == 0
    assert 0 < hits < 40


def test_cloud_mark_is_spent_by_the_forced_draw_after_weather():
    t = Table(2, [["2H", "5H", "9H", "JH"], ["2C", "3C", "4D", "5D", "6C"]], pile=["AD", "7D"])
    t.st[ss.ST_OWE + 0] = 1
    t.st[ss.ST_CLOUD + 0] = 1
    assert t.turn(0)[0] == (ss.E_FORCED_DRAW, 0, 1, parse_card("AD"), 1, 0)
    assert t.mark(ss.ST_CLOUD, 0) == 0 and t.ctr(ss.C_FORCED_KEEPS) == 1


def test_cloud_and_thunder_on_the_same_player():
    # seat 1 is Thundered and Clouded: its next turn is lost, the Cloud waits for its next draw
    t = Table(2, [["2H", "5H", "9H", "JH", "QS"], ["2C", "3C", "4C", "5C", "6D"]],
              pile=["7D", "8D"], pols=[H, H])
    assert ss.apply_thunder(t.st, 1) == 1 and ss.apply_cloud(t.st, 1) == 1
    assert ss.apply_cloud(t.st, 1) == 0        # no stacking
    assert t.turn(1)[0][0] == ss.E_SKIP
    assert t.mark(ss.ST_CLOUD, 1) == 1 and t.mark(ss.ST_SKIP, 1) == 0
    ev = t.turn(1)
    # the heuristic would throw 7D back at once, but the Cloud makes it keep 7D: it discards 6D
    assert ev[0][:6] == (ss.E_DRAW_DISCARD, 1, 2, parse_card("7D"), parse_card("6D"), 1)
    assert t.mark(ss.ST_CLOUD, 1) == 0


@pytest.mark.parametrize("cloud_self,expect", [(False, [1, 2, 3]), (True, [1, 2, 3, 0])])
def test_targets_are_the_others_clockwise_then_self_for_cloud(cloud_self, expect):
    t = Table(4, [["2H"], ["3H"], ["4H"], ["5H"]], cloud_self=cloud_self)
    n = ss.n_targets(t.st, 0, ss.CLOUD)
    assert [ss.target_at(t.st, 0, k) for k in range(n)] == expect
    for eff in (ss.SUN, ss.THUNDER):
        assert ss.n_targets(t.st, 0, eff) == 3     # Sun and Thunder: another player only
    assert [ss.target_at(t.st, 2, k) for k in range(3)] == [3, 0, 1]


def test_sun_shows_a_hand_and_changes_nothing_else():
    t = Table(3, [["2H", "5H", "9H", "JH"], ["2C", "3C", "4C", "5C", "6D"], ["2D"]], pile=["7D"])
    before = t.st.copy()
    ss.apply_sun(t.st, 0, 1)
    assert int(t.st[ss.ST_KNOW + 0 * 4 + 1]) == hand("2C", "3C", "4C", "5C", "6D")
    changed = np.nonzero(before != t.st)[0].tolist()
    assert changed == [ss.ST_KNOW + 1, ss.ST_SEEN + 1]   # what seat 0 knows, and when it looked
    assert int(t.st[ss.ST_SEEN + 1]) == 0


def test_wind_everyone_passes_left_at_once_with_someone_on_four_cards():
    # 4 players; seat 0 just played its Wind card and holds four cards; seat 2 also holds four
    t = Table(4, [["2H", "3H", "4H", "5H"], ["2C", "3C", "4C", "5C", "6C"],
                  ["2D", "3D", "4D", "5D"], ["2S", "3S", "4S", "5S", "6S"]])
    assert t.wind("3H", "6C", "2D", "4S") == [1, 2, 3, 0]
    assert t.hand(0) == set(cards("2H", "4H", "5H", "4S"))
    assert t.hand(1) == set(cards("2C", "3C", "4C", "5C", "3H"))
    assert t.hand(2) == set(cards("3D", "4D", "5D", "6C"))
    assert t.hand(3) == set(cards("2S", "3S", "5S", "6S", "2D"))
    # the passer remembers what it passed
    assert int(t.st[ss.ST_KNOW + 0 * 4 + 1]) == hand("3H")


def test_wind_at_two_players_is_a_swap():
    t = Table(2, [["2H", "3H", "4H", "5H"], ["2C", "3C", "4C", "5C", "6C"]])
    assert t.wind("2H", "6C") == [1, 0]
    assert t.hand(0) == set(cards("3H", "4H", "5H", "6C"))
    assert t.hand(1) == set(cards("2C", "3C", "4C", "5C", "2H"))


def test_wind_through_take_turn_moves_one_card_per_player():
    # empty pile: seat 0 can only play weather, and holds only Diamonds: a Wind. Seat 0 keeps
    # one card and passes it; everyone passes left and keeps their hand size.
    for seed in range(20):
        t = Table(3, [["6D", "7D"], ["2C", "3C", "4C", "5C", "6C"], ["2S", "3S", "4S", "5S", "7H"]],
                  seed=seed)
        before = [t.hand(s) for s in range(3)]
        ev = t.turn(0)
        assert ev[0][0] == ss.E_WEATHER and ev[0][4] == ss.WIND
        played = ev[0][3]
        before[0].discard(played)
        passes = {e[1]: (e[3], e[4]) for e in ev[1:]}
        assert [e[0] for e in ev[1:]] == [ss.E_WIND_PASS] * 3 and sorted(passes) == [0, 1, 2]
        for p, (c, r) in passes.items():
            assert c in before[p] and r == (p + 1) % 3
        for s in range(3):
            assert t.hand(s) == (before[s] - {passes[s][0]}) | {passes[(s - 1) % 3][0]}
        assert t.ctr(ss.C_WIND) == 1 and t.mark(ss.ST_OWE, 0) == 1


@pytest.mark.parametrize("mode,expect", [
    # receive: seat 1 (empty) passes nothing but gets seat 0's card; seat 2 gets nothing from
    # seat 1 and still passes 2C to seat 0
    ("receive", [{"3H", "2C"}, {"2H"}, {"3C"}]),
    # skip: seat 1 is left out; seat 0 passes to seat 2, seat 2 to seat 0
    ("skip", [{"3H", "2C"}, set(), {"3C", "2H"}]),
])
def test_wind_with_an_empty_handed_player(mode, expect):
    t = Table(3, [["2H", "3H"], [], ["2C", "3C"]], wind_empty=mode)
    who = ss.wind_passers(t.st)
    assert who == 0b101
    t.wind("2H", None, "2C")
    for s in range(3):
        assert t.hand(s) == set(cards(*expect[s])), s


def test_wind_skip_mode_with_one_holder_passes_nothing():
    t = Table(3, [["2H", "3H"], [], []], wind_empty="skip")
    assert ss.wind_passers(t.st) == 0
    t2 = Table(3, [["2H", "3H"], [], []])
    assert ss.wind_passers(t2.st) == 0b001


# ---- heuristic ------------------------------------------------------------------------------
def test_heuristic_thunders_the_known_threat_with_an_off_suit_spade():
    # seat 0 collects Hearts, holds an off-suit Spade; it once saw seat 2 hold four Clubs
    t = Table(3, [["2H", "3H", "4H", "QS", "5D"], ["2D", "3S", "9C", "4D", "5S"],
                  ["2C", "3C", "4C", "5C", "6D"]], pile=["AD", "KD"], pols=[H, H, H])
    t.st[ss.ST_TURN] = 1
    ss.apply_sun(t.st, 0, 2)
    ev = t.turn(0)
    assert ev[0][:6] == (ss.E_WEATHER, 0, 2, parse_card("QS"), ss.THUNDER, 2)
    assert t.mark(ss.ST_SKIP, 2) == 1


def test_heuristic_looks_with_sun_when_it_knows_nothing():
    t = Table(3, [["2S", "3S", "4S", "QH", "5D"], ["2D", "3H", "9C", "4D", "5S"],
                  ["2C", "3C", "4C", "5C", "6D"]], pile=["AD", "KD"], pols=[H, H, H])
    ev = t.turn(0)
    # Sun on the nearest clockwise of the equally unknown opponents: seat 1
    assert ev[0][:6] == (ss.E_WEATHER, 0, 1, parse_card("QH"), ss.SUN, 1)
    assert int(t.st[ss.ST_KNOW + 1]) == hand("2D", "3H", "9C", "4D", "5S")


def test_heuristic_clouds_the_threat_when_it_has_no_off_suit_spade():
    t = Table(3, [["2H", "3H", "4H", "QC", "5D"], ["2D", "3S", "9C", "4D", "5S"],
                  ["2S", "3S", "4S", "5S", "6D"]], pile=["AD", "KD"], pols=[H, H, H])
    t.st[ss.ST_HAND + 2] = hand("2S", "7S", "4S", "5S", "6D")
    ss.apply_sun(t.st, 0, 2)                     # seat 0 saw four Spades at seat 2
    ev = t.turn(0)
    assert ev[0][:6] == (ss.E_WEATHER, 0, 1, parse_card("QC"), ss.CLOUD, 2)
    # a known level of 3 is no threat: it draws instead
    t = Table(3, [["2H", "3H", "4H", "QC", "5D"], ["2D", "3S", "9C", "4D", "5S"],
                  ["2S", "3S", "4S", "5D", "6D"]], pile=["AD", "KD"], pols=[H, H, H])
    ss.apply_sun(t.st, 0, 2)
    assert t.turn(0)[0][0] == ss.E_DRAW_DISCARD


def test_heuristic_winds_when_its_right_neighbour_holds_its_suit():
    # 3 players: seat 2 passes to seat 0. Seat 0 collects Hearts and saw seat 2 hold 9H while
    # collecting Clubs: a Wind may bring it that Heart. It plays 2D and passes its other
    # off-suit card 5S. Seat 2 (heuristic, Clubs, knowing nothing) passes its least useful
    # card: Hearts and Spades are equally unwanted, so the lower code, 6S.
    t = Table(3, [["2H", "3H", "4H", "2D", "5S"], ["3D", "4D", "5D", "6D", "8S"],
                  ["2C", "3C", "4C", "9H", "6S"]], pile=["AD", "KD"], pols=[H, H, H])
    ss.apply_sun(t.st, 0, 2)
    ev = t.turn(0)
    assert ev[0][:5] == (ss.E_WEATHER, 0, 1, parse_card("2D"), ss.WIND)
    passes = {e[1]: e[3] for e in ev[1:]}
    assert passes == {0: parse_card("5S"), 1: parse_card("8S"), 2: parse_card("6S")}  # 1: off-suit 8S
    # without that knowledge it just draws
    t = Table(3, [["2H", "3H", "4H", "2D", "5S"], ["3D", "4D", "5D", "6D", "8S"],
                  ["2C", "3C", "4C", "9H", "6S"]], pile=["AD", "KD"], pols=[H, H, H])
    assert t.turn(0)[0][0] == ss.E_DRAW_DISCARD


def test_heuristic_draws_when_no_weather_helps():
    t = Table(2, [["2S", "3S", "4S", "9S", "5C"], ["2D", "3H", "9C", "4D", "5S"]],
              pile=["AD", "KD"], pols=[H, H])
    ev = t.turn(0)
    # only off-suit card is a Club and nobody is a known threat: draw AD, throw it back
    assert ev[0][:5] == (ss.E_DRAW_DISCARD, 0, 1, parse_card("AD"), parse_card("AD"))


# ---- invariants over random games -----------------------------------------------------------
def _replay_and_check(P, events, rules):
    """Replay a trace from its deal: every play is legal and the 52 cards are conserved."""
    hands = {}
    pile_n = 52 - 5 * P
    gone = set()
    owe = [False] * P
    cloud = [False] * P
    skip = [False] * P
    n_weather = 0
    for e in events:
        code, s = int(e[0]), int(e[1])
        v = [int(x) for x in e[2:10]]
        if code == ss.E_DEAL:
            hands[s] = set(mask_cards(v[0]))
            assert len(hands[s]) == 5
            continue
        if code in (ss.E_SKIP, ss.E_FORCED_DRAW, ss.E_PASS, ss.E_REVEAL, ss.E_DRAW_DISCARD):
            pass
        if code == ss.E_SKIP:
            assert skip[s]
            skip[s] = False
        elif code == ss.E_FORCED_DRAW:
            assert owe[s] and not skip[s]
            owe[s] = False
            assert v[1] not in gone and all(v[1] not in h for h in hands.values())
            hands[s].add(v[1])
            pile_n -= 1
            cloud[s] = False
        elif code == ss.E_PASS:
            assert not skip[s]
            if v[1] == ss.PASS_NO_DRAW:
                assert owe[s]
                owe[s] = False
            else:
                assert not hands[s]
            assert pile_n == 0
        elif code == ss.E_REVEAL:
            h = hands[s]
            assert len(h) == 5 and len({c // 13 for c in h}) == 1 and not owe[s] and not skip[s]
        elif code == ss.E_DRAW_DISCARD:
            assert not owe[s] and not skip[s] and pile_n > 0
            drawn, d, cl = v[1], v[2], v[3]
            assert cl == int(cloud[s])
            assert d in hands[s] or (d == drawn and not cloud[s])
            hands[s].add(drawn)
            hands[s].discard(d)
            cloud[s] = False
        elif code == ss.E_WEATHER:
            card, eff, tgt = v[1], v[2], v[3]
            assert not owe[s] and not skip[s] and card in hands[s] and eff == card // 13
            hands[s].discard(card)
            gone.add(card)
            owe[s] = True
            n_weather += 1
            if eff == ss.THUNDER:
                assert tgt != s
                skip[tgt] = True
            elif eff == ss.CLOUD:
                assert tgt != s or rules.get("cloud_self")
                cloud[tgt] = True
            elif eff == ss.SUN:
                assert tgt != s
            wind_passes = []
        elif code == ss.E_WIND_PASS:
            wind_passes.append((s, v[1], v[2]))
            if len(wind_passes) == sum(1 for h in hands.values() if h):
                for p, c, _ in wind_passes:
                    assert c in hands[p]
                for p, c, _ in wind_passes:
                    hands[p].discard(c)
                for p, c, r in wind_passes:
                    assert r == (p + 1) % P
                    hands[r].add(c)
        elif code == ss.E_SUN_VIEW:
            assert set(mask_cards(v[2])) == hands[v[1]]
        # conservation: hands + pile + weather pile = 52, no card twice
        held = [c for h in hands.values() for c in h]
        assert len(held) == len(set(held)) and not (set(held) & gone)
        assert len(held) + pile_n + len(gone) == 52
        assert all(len(h) <= 5 for h in hands.values())
    assert events[-1][0] == ss.E_RESULT
    return n_weather


@pytest.mark.parametrize("P", [2, 3, 4])
@pytest.mark.parametrize("pols", ["random", "heuristic", "mixed"])
def test_traces_replay_legally_and_conserve_cards(P, pols):
    seats = seats_of(*{"random": [R] * P, "heuristic": [H] * P, "mixed": [R, H, R, H][:P]}[pols])
    prm = params()
    ev = np.zeros((4000, layout.EVENT_WIDTH), dtype=np.int64)
    ev_n = np.zeros(1, dtype=np.int64)
    out = np.zeros((1, layout.out_width(P, ss.N_COUNTERS)), dtype=np.int64)
    for g in range(60):
        ev_n[0] = 0
        ss.trace_game(prm, seats, 17, g, out, ev, ev_n)
        assert ev_n[0] <= ev.shape[0]
        n_weather = _replay_and_check(P, ev[:ev_n[0]], {})
        S = P
        assert n_weather == sum(out[0, layout.col_counter(S, ss.C_WEATHER_BY_SUIT + u)] for u in range(4))


@pytest.mark.parametrize("P", [2, 3, 4])
def test_state_conserves_the_52_cards_after_every_turn(P):
    # the kernel's own state, turn by turn: hands, draw pile and weather pile are disjoint and
    # together hold every card once; hands never exceed five cards
    for g in range(12):
        t = Table(P, [[]] * P, pols=[R, H, R, H][:P], seed=3, game=g)
        deal_keys = np.array([rng.stream_key(3, g, rng.DEAL, 0)], dtype=np.uint64)
        ss.deal(t.st, np.zeros(52, dtype=np.int64), deal_keys, np.zeros(1, dtype=np.int64), 0)
        s = 0
        while int(t.st[ss.ST_END]) == ss.END_RUNNING and int(t.st[ss.ST_TURN]) < 400:
            t.turn(s)
            hands = [t.hand(p) for p in range(P)]
            pile = t.pile()
            gone = set(mask_cards(int(t.st[ss.ST_GONE])))
            everything = [c for h in hands for c in h] + pile + sorted(gone)
            assert sorted(everything) == list(range(52)), (g, int(t.st[ss.ST_TURN]))
            assert all(len(h) <= 5 for h in hands)
            s = (s + 1) % P


@pytest.mark.parametrize("P", [2, 3, 4])
def test_result_rows_hold_together(P):
    seats = seats_of(*([R] * P))
    out = np.zeros((2000, layout.out_width(P, ss.N_COUNTERS)), dtype=np.int64)
    ss.play_games(params(), seats, 5, 0, out)
    S = P
    winners = out[:, layout.col_winners(S)]
    won = winners != 0
    length = out[:, layout.col_length(S)]
    c = lambda i: out[:, layout.col_counter(S, i)]
    lo, hi = ss.score_range(P, params())
    assert ((out[:, :S] >= lo) & (out[:, :S] <= hi)).all()
    llo, lhi = ss.length_range(P, params())
    assert ((length >= llo) & (length <= lhi)).all()
    assert (out[:, layout.col_decisions(S)] > 0).all()
    assert (out[:, :S].sum(axis=1) == won).all()                 # one point for the winner
    assert ((winners & (winners - 1)) == 0).all()                 # never a shared win
    assert ((c(ss.C_TIMEOUTS) + c(ss.C_STALEMATES)) == ~won).all()
    assert ((c(ss.C_WINNER_TURNS) > 0) == won).all()
    # the winner took ceil-ish length / P turns: seat w took turns w+1, w+1+P, ...
    for i in np.nonzero(won)[0][:200]:
        w = int(winners[i]).bit_length() - 1
        assert c(ss.C_WINNER_TURNS)[i] == (length[i] - 1 - w) // P + 1
        assert (length[i] - 1) % P == w                            # the last turn was the winner's
    # every turn is exactly one of: skip, forced draw, pass, reveal, draw-discard, weather
    weather = sum(c(ss.C_WEATHER_BY_SUIT + u) for u in range(4))
    turns = (c(ss.C_SKIPS) + c(ss.C_WEATHER_DRAWS) + c(ss.C_PASSES) + won + c(ss.C_DRAW_DISCARDS)
             + weather)
    assert (turns == length).all()
    # stalemates need the pile used up: 52 - 5P weather plays at least... and every card gone
    st = c(ss.C_STALEMATES) == 1
    assert (weather[st] == 52).all()


def test_random_first_turn_is_uniform_over_kinds_cards_and_targets():
    # Seat 0's first turn (no dealt flush) offers Draw-and-Discard and Weather: half the games
    # open with a Draw. A weather card is uniform over the dealt hand, so by the deal's suit
    # symmetry its suit is uniform; a Sun/Thunder/Cloud target is uniform over the 3 others.
    P = 4
    ev = np.zeros((16, layout.EVENT_WIDTH), dtype=np.int64)
    ev_n = np.zeros(1, dtype=np.int64)
    out = np.zeros((1, layout.out_width(P, ss.N_COUNTERS)), dtype=np.int64)
    n = draws = 0
    suits = np.zeros(4)
    targets = np.zeros(4)
    for g in range(4000):
        ev_n[0] = 0
        ss.trace_game(params(turn_cap=1), seats_of(R, R, R, R), 2, g, out, ev, ev_n)
        code = int(ev[P, 0])
        if code == ss.E_REVEAL:
            continue
        n += 1
        draws += code == ss.E_DRAW_DISCARD
        if code == ss.E_WEATHER:
            suits[int(ev[P, 4])] += 1
            if int(ev[P, 4]) != ss.WIND:
                targets[int(ev[P, 5])] += 1
    assert abs(draws - n / 2) < 142                         # 4.5 sigma of 4000 halves
    e = suits.sum() / 4
    assert ((suits - e) ** 2 / e).sum() < 21.1              # chi-square 3 df, 1e-4
    assert targets[0] == 0
    e = targets.sum() / 3
    assert ((targets[1:] - e) ** 2 / e).sum() < 18.4        # chi-square 2 df, 1e-4


def test_heuristic_beats_random():
    # four seats, heuristic in seat 1 only: it should win far more than a quarter of the won games
    P = 4
    out = np.zeros((3000, layout.out_width(P, ss.N_COUNTERS)), dtype=np.int64)
    ss.play_games(params(), seats_of(R, H, R, R), 4, 0, out)
    w = out[:, layout.col_winners(P)]
    assert ((w >> 1) & 1).sum() > 0.8 * (w != 0).sum()


# ---- contract: chunking, threads, trace -------------------------------------------------------
@pytest.mark.parametrize("P", [2, 3, 4])
def test_serial_parallel_and_chunks_agree(P):
    seats = seats_of(*[R, H, R, H][:P])
    W = layout.out_width(P, ss.N_COUNTERS)
    a = np.zeros((400, W), dtype=np.int64)
    ss.play_games_serial(params(), seats, 21, 1000, a)
    b = np.zeros((400, W), dtype=np.int64)
    ss.play_games(params(), seats, 21, 1000, b)
    c1 = np.zeros((157, W), dtype=np.int64)
    c2 = np.zeros((243, W), dtype=np.int64)
    ss.play_games(params(), seats, 21, 1000, c1)
    ss.play_games(params(), seats, 21, 1157, c2)
    old = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        d = np.zeros((400, W), dtype=np.int64)
        ss.play_games(params(), seats, 21, 1000, d)
    finally:
        numba.set_num_threads(old)
    assert np.array_equal(a, b) and np.array_equal(a, np.vstack([c1, c2])) and np.array_equal(a, d)


@pytest.mark.parametrize("P", [2, 4])
def test_trace_row_is_the_played_row(P):
    seats = seats_of(*[H, R, R, H][:P])
    W = layout.out_width(P, ss.N_COUNTERS)
    rows = np.zeros((30, W), dtype=np.int64)
    ss.play_games(params(), seats, 5, 0, rows)
    ev = np.zeros((4000, layout.EVENT_WIDTH), dtype=np.int64)
    ev_n = np.zeros(1, dtype=np.int64)
    for g in range(30):
        out = np.zeros((1, W), dtype=np.int64)
        ev_n[0] = 0
        ss.trace_game(params(), seats, 5, g, out, ev, ev_n)
        assert np.array_equal(out[0], rows[g])
        assert int(ev[ev_n[0] - 1, 0]) == ss.E_RESULT


def test_declarations():
    assert [r.index for r in ss.RULES] == list(range(len(ss.RULES)))
    assert ss.POLICIES == {"random": 0, "heuristic": 1, "mc": 2, "tuned": 3}
    assert ss.score_range(4, params()) == (0, 1)
    assert ss.length_range(4, params(turn_cap=77)) == (1, 77)
    assert ss.format_card(parse_card("10H")) == "10H" and ss.format_card(-1) == "-"
    with pytest.raises(ValueError):
        ss.check(5, params())
    sums = {c.name: 0 for c in ss.COUNTERS}
    sums.update(timeouts=1, stalemates=1, winner_turns=16, weather_spades=4, weather_hearts=4)
    m = ss.derived_metrics(sums, 4, 4, params())
    assert m["win_rate"] == 0.5 and m["winner_turns_mean"] == 8 and m["thunder_share"] == 0.5


def test_trace_result_event_names_the_winner_or_minus_one():
    # docs: the `result` event's seat is the winner, -1 when nobody wins (stalemate, timeout).
    # Most 4-player random games stalemate (docs: ~89%), so a few games give both kinds.
    from simcli.config import jobs as cfg
    from simcli.analyses import trace
    job = cfg.resolve("sudden-skies", players=4, policy="random")
    ends = set()
    for g in range(60):
        ev = trace.trace_events(job, 1, g)
        (res,) = [e for e in ev if e["event"] == "result" and "end" in e]
        winners = ev[-1]["winners"]
        assert res["seat"] == (winners[0] if winners else -1), res
        ends.add(res["end"])
    assert "win" in ends and "stalemate" in ends, ends


def test_heuristic_reveals_even_when_take_win_is_false():
    # take_win = false lets only the random policy decline a Reveal (a sure win)
    t = Table(2, [["2C", "5C", "9C", "JC", "AC"], ["2H", "3H", "4D", "5S", "6S"]], pile=["7D"],
              pols=[H, H], take_win=False)
    assert t.turn(0)[0][0] == ss.E_REVEAL and int(t.st[ss.ST_WINNER]) == 0
