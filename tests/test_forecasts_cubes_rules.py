"""forecasts-cubes: one hand-built test per rule, plus invariants checked on traced games.

Every expected value below is worked out by hand from the rulebook (forecasts-cubes.txt),
RULINGS.md and docs/games/forecasts-cubes.md; none is copied from the kernel's output.
Cards are written as in a trace (``10H``, ``AS``) and parsed with kernels.cards.parse_card.
"""
from __future__ import annotations

from collections import defaultdict

import numpy as np
import pytest

from kernels import forecasts_cubes as fc, layout
from kernels.cards import card_name, mask_cards, mask_of, parse_card

HOT, NEUTRAL, COLD = 0, 1, 2
F_HOT, F_COLD = 0, 1
S, Hs, D, C = 0, 1, 2, 3  # suits: Spades, Hearts, Diamonds, Clubs


def c(name: str) -> int:
    return parse_card(name)


def hand(*names: str) -> np.int64:
    return np.int64(mask_of(c(n) for n in names))


def cards_of(mask) -> set[str]:
    return {card_name(x) for x in mask_cards(int(mask))}


def cubes(h: int, n: int, k: int) -> np.ndarray:
    return np.array([h, n, k], dtype=np.int64)


# ============================================================== follow suit
def test_must_follow_suit_when_able():
    h = hand("AS", "2S", "5H", "10D")
    assert cards_of(fc.legal_plays(h, S)) == {"AS", "2S"}
    assert cards_of(fc.legal_plays(h, Hs)) == {"5H"}


def test_void_player_may_play_any_card():
    h = hand("5H", "10D", "3C")
    assert cards_of(fc.legal_plays(h, S)) == {"5H", "10D", "3C"}


def test_leader_may_lead_any_card():
    h = hand("AS", "2S", "5H", "10D", "3C")
    assert cards_of(fc.legal_plays(h, -1)) == {"AS", "2S", "5H", "10D", "3C"}


# ============================================================== trick winner
def _winner(plays: dict[int, str], leader: int, players: int) -> int:
    arr = np.zeros(players, dtype=np.int64)
    for seat, name in plays.items():
        arr[seat] = c(name)
    return fc.trick_winner(arr, leader, players)


def test_highest_card_of_led_suit_wins():
    # seat 1 leads 5H; 9H (seat 2) is the highest heart
    assert _winner({1: "5H", 2: "9H", 3: "2H", 0: "7H"}, 1, 4) == 2


def test_off_suit_higher_card_loses():
    # Clubs led with 3C: the off-suit Aces cannot win; 2C is lower, so the leader wins
    assert _winner({0: "3C", 1: "AS", 2: "AH", 3: "2C"}, 0, 4) == 0
    # a trump-like Diamond does not win either (there are no trumps)
    assert _winner({2: "4S", 0: "AD", 1: "10D"}, 2, 3) == 2


def test_ace_beats_ten():
    assert _winner({3: "10D", 0: "AD", 1: "9D", 2: "2S"}, 3, 4) == 0
    assert _winner({0: "AC", 1: "10C", 2: "9C"}, 0, 3) == 0


def test_winner_found_after_wrap_around():
    # 3 players, seat 2 leads, seats 0 and 1 follow; seat 1's 8S is the highest spade
    assert _winner({2: "6S", 0: "7S", 1: "8S"}, 2, 3) == 1


# ============================================================== cube moves
def test_move_directions():
    # red (toward Hot): option 0 Cold -> Neutral, option 1 Neutral -> Hot
    assert (fc.move_source(True, 0), fc.move_dest(True, 0)) == (COLD, NEUTRAL)
    assert (fc.move_source(True, 1), fc.move_dest(True, 1)) == (NEUTRAL, HOT)
    # black (toward Cold): option 0 Hot -> Neutral, option 1 Neutral -> Cold
    assert (fc.move_source(False, 0), fc.move_dest(False, 0)) == (HOT, NEUTRAL)
    assert (fc.move_source(False, 1), fc.move_dest(False, 1)) == (NEUTRAL, COLD)


@pytest.mark.parametrize("red,size,option,expected", [
    # rulebook "Cube Movement", from Hot 4 / Neutral 1 / Cold 4
    (True, 1, 0, (4, 2, 3)),     # red: 1 cube Cold -> Neutral
    (True, 1, 1, (5, 0, 4)),     # red: 1 cube Neutral -> Hot
    (False, 1, 0, (3, 2, 4)),    # black: 1 cube Hot -> Neutral
    (False, 1, 1, (4, 0, 5)),    # black: 1 cube Neutral -> Cold
    # Weather Advisory: two cubes from one bucket to the same bucket
    (True, 2, 0, (4, 3, 2)),     # red: 2 from Cold to Neutral
    (False, 2, 0, (2, 3, 4)),    # black: 2 from Hot to Neutral
])
def test_apply_cube_move(red, size, option, expected):
    assert fc.apply_cube_move(4, 1, 4, red, size, option) == expected


def test_advisory_double_from_neutral():
    # "move 2 from Neutral to Hot" / "2 from Neutral to Cold", Neutral holding 3
    assert fc.apply_cube_move(3, 3, 3, True, 2, 1) == (5, 1, 3)
    assert fc.apply_cube_move(3, 3, 3, False, 2, 1) == (3, 1, 5)


def test_beats_only_a_higher_card_of_the_led_suit():
    hearts, diamonds = c("2H") // 13, c("2D") // 13      # a card is suit * 13 + rank
    assert fc.beats(c("9H"), c("5H"), hearts)            # a higher heart, hearts led
    assert not fc.beats(c("4H"), c("5H"), hearts)        # a lower heart
    assert not fc.beats(c("AS"), c("5H"), hearts)        # off suit, however high
    assert fc.beats(c("AD"), c("10D"), diamonds)         # the Ace ranks above the 10


@pytest.mark.parametrize("red,state,expected", [
    # red win: sources are Cold (option 0) and Neutral (option 1)
    (True, (4, 1, 4), 0b11),
    (True, (8, 1, 0), 0b10),   # Cold empty: only Neutral -> Hot
    (True, (4, 0, 5), 0b01),   # Neutral empty: only Cold -> Neutral
    (True, (0, 5, 4), 0b11),   # Hot empty: Hot is a destination only, both legal
    (True, (0, 0, 9), 0b01),   # everything in Cold
    (True, (9, 0, 0), 0b00),   # all nine in Hot: no legal move
    # black win: sources are Hot (option 0) and Neutral (option 1)
    (False, (4, 1, 4), 0b11),
    (False, (0, 1, 8), 0b10),  # Hot empty: only Neutral -> Cold
    (False, (5, 0, 4), 0b01),  # Neutral empty: only Hot -> Neutral
    (False, (4, 5, 0), 0b11),  # Cold empty: a destination only, both legal
    (False, (9, 0, 0), 0b01),  # everything in Hot
    (False, (0, 0, 9), 0b00),  # all nine in Cold: no legal move
    (False, (0, 9, 0), 0b10),  # all nine in Neutral: only Neutral -> Cold
    (True, (0, 9, 0), 0b10),   # ... and only Neutral -> Hot
])
def test_single_moves(red, state, expected):
    assert fc.legal_cube_moves_in(cubes(*state), red, 1) == expected


@pytest.mark.parametrize("red,state,expected", [
    # the Advisory double: both cubes from one bucket, which must hold at least 2
    (True, (4, 1, 4), 0b01),   # Neutral holds 1: only 2 x Cold -> Neutral
    (True, (3, 2, 4), 0b11),
    (True, (6, 2, 1), 0b10),   # Cold holds 1: only 2 x Neutral -> Hot
    (True, (8, 0, 1), 0b00),   # no bucket can give two (a single Cold -> Neutral exists)
    (False, (4, 1, 4), 0b01),  # only 2 x Hot -> Neutral
    (False, (1, 2, 6), 0b10),  # Hot holds 1: only 2 x Neutral -> Cold
    (False, (1, 1, 7), 0b00),
])
def test_double_moves_need_two_in_the_source(red, state, expected):
    assert fc.legal_cube_moves_in(cubes(*state), red, 2) == expected


# ============================================================== round scoring
@pytest.mark.parametrize("state,forecast,points,correct", [
    ((6, 1, 2), F_HOT, 7, 1),    # 6 in Hot, Hot > Cold: +1 bonus
    ((6, 1, 2), F_COLD, 2, 0),   # 2 in Cold, no bonus
    ((2, 0, 7), F_COLD, 8, 1),
    ((2, 0, 7), F_HOT, 2, 0),
    ((4, 1, 4), F_HOT, 4, 0),    # Hot = Cold: nobody gets the bonus
    ((4, 1, 4), F_COLD, 4, 0),
    ((3, 3, 3), F_COLD, 3, 0),
    ((0, 9, 0), F_HOT, 0, 0),    # Neutral scores nothing
    ((0, 0, 9), F_COLD, 10, 1),
    ((1, 8, 0), F_HOT, 2, 1),    # 1 > 0 earns the bonus
])
def test_round_points(state, forecast, points, correct):
    pts, ok = fc.round_points(cubes(*state), forecast)
    assert (pts, ok) == (points, correct)


# ============================================================== end of game
def _finish(score, correct, adv_left, used_adv, advisory_on):
    P = len(score)
    out = np.zeros((1, layout.out_width(P, fc.N_COUNTERS)), dtype=np.int64)
    ev = np.zeros((0, layout.EVENT_WIDTH), dtype=np.int64)
    ev_n = np.zeros(1, dtype=np.int64)
    a = [np.array(x, dtype=np.int64) for x in (score, correct, adv_left, used_adv)]
    fc._finish(a[0], a[1], a[2], a[3], advisory_on, P, out, 0, ev, ev_n)
    row = out[0]
    places = [int(row[layout.col_place(P, s)]) for s in range(P)]
    winners = {s for s in range(P) if (int(row[layout.col_winners(P)]) >> s) & 1}
    ctr = {cn.name: int(row[layout.col_counter(P, i)]) for i, cn in enumerate(fc.COUNTERS)}
    return [int(x) for x in row[:P]], places, winners, ctr


def test_highest_total_wins_with_competition_places():
    scores, places, winners, _ = _finish([10, 20, 20, 5], [3, 0, 0, 1], [0] * 4, [0] * 4, False)
    assert scores == [10, 20, 20, 5]
    # seats 1 and 2 tie on score and correct forecasts: shared victory, place 1 each
    assert places == [3, 1, 1, 4]
    assert winners == {1, 2}


def test_tiebreak_1_most_correct_forecasts():
    _, places, winners, _ = _finish([20, 20, 15, 20], [2, 3, 4, 1], [0] * 4, [0] * 4, False)
    assert winners == {1}
    assert places == [2, 1, 4, 3]


def test_tiebreak_2_unused_advisory_only_with_the_option():
    score, correct = [20, 20, 20, 5], [2, 2, 1, 0]
    adv_left, used = [0, 1, 1, 1], [1, 0, 0, 0]
    _, places, winners, ctr = _finish(score, correct, adv_left, used, True)
    assert winners == {1}             # same score and correct forecasts; seat 1 kept its Advisory
    assert places == [2, 1, 3, 4]     # correct forecasts still rank above the Advisory
    assert ctr["advisory_user_seats"] == 1 and ctr["advisory_user_share"] == 0
    # without the option the Advisory is no tie-breaker: seats 0 and 1 share the victory
    _, places, winners, _ = _finish(score, correct, [0] * 4, [0] * 4, False)
    assert winners == {0, 1}
    assert places == [1, 1, 3, 4]


def test_tiebreak_2_ignores_advisory_arrays_when_the_option_is_off():
    _, places, winners, _ = _finish([20, 20, 20, 5], [2, 2, 1, 0], [0, 1, 1, 1], [0] * 4, False)
    assert winners == {0, 1}
    assert places == [1, 1, 3, 4]


def test_tiebreak_3_shared_victory():
    # all three tied on score, correct forecasts and (with the option) unused Advisory
    _, places, winners, ctr = _finish([17, 17, 17], [2, 2, 2], [0, 0, 0], [1, 1, 1], True)
    assert winners == {0, 1, 2}
    assert places == [1, 1, 1]
    assert ctr["advisory_user_seats"] == 3
    assert ctr["advisory_user_share"] == 3 * (60 // 3)
    # two of four share: each Advisory user among the winners gets 60 // 2
    _, places, winners, ctr = _finish([9, 30, 30, 12], [1, 2, 2, 1], [1, 0, 1, 1],
                                      [0, 1, 0, 0], True)
    assert winners == {2}             # seat 2 kept its Advisory, seat 1 used it
    assert places == [4, 2, 1, 3]
    _, places, winners, ctr = _finish([9, 30, 30, 12], [1, 2, 2, 1], [1, 0, 0, 1],
                                      [0, 1, 1, 0], True)
    assert winners == {1, 2} and places == [4, 1, 1, 3]
    assert ctr["advisory_user_share"] == 60 and ctr["advisory_user_seats"] == 2


# ============================================================== heuristic policy
def test_heuristic_forecast_compares_colour_strengths():
    # red: AH (10) + 2D (1) = 11; black: 10S (9) + 3C (2) = 11 -> tie goes Hot
    assert fc.heuristic_forecast(hand("AH", "2D", "10S", "3C")) == F_HOT
    # red: 9H (8) = 8; black: 5S (4) + 6C (5) = 9 -> Cold
    assert fc.heuristic_forecast(hand("9H", "5S", "6C")) == F_COLD
    assert fc.heuristic_forecast(hand("2H")) == F_HOT
    assert fc.heuristic_forecast(hand("2C")) == F_COLD


def _hcard(h, led_suit, best, forecast):
    legal = fc.legal_plays(h, led_suit)
    card = fc.heuristic_card(h, legal, led_suit, c(best) if best else -1, forecast)
    return card_name(card)


def test_heuristic_leads_highest_rank_of_its_colour():
    h = hand("AS", "9H", "10D", "3C")
    assert _hcard(h, -1, None, F_HOT) == "10D"     # 10 outranks 9
    assert _hcard(hand("AH", "5D", "2S"), -1, None, F_HOT) == "AH"  # by rank, not by card code
    assert _hcard(h, -1, None, F_COLD) == "AS"     # the black Ace over the 3 of clubs
    assert _hcard(hand("AS", "2H"), -1, None, F_COLD) == "AS"
    assert _hcard(hand("7H", "7D", "2S"), -1, None, F_HOT) == "7H"  # equal ranks: suit order S H D C


def test_heuristic_leads_lowest_rank_without_its_colour():
    assert _hcard(hand("AS", "4C", "9S"), -1, None, F_HOT) == "4C"
    assert _hcard(hand("AH", "7D", "10H"), -1, None, F_COLD) == "7D"


def test_heuristic_follows_its_colour_to_win():
    h = hand("AH", "3H", "2S")
    assert _hcard(h, Hs, "9H", F_HOT) == "AH"              # can beat 9H
    assert _hcard(hand("10H", "3H"), Hs, "AH", F_HOT) == "3H"  # cannot: lowest of the suit


def test_heuristic_follows_the_other_colour_to_lose():
    h = hand("10S", "8S", "2S", "AH")
    assert _hcard(h, S, "9S", F_HOT) == "8S"               # highest spade below 9S
    assert _hcard(hand("10S", "AS", "2H"), S, "9S", F_HOT) == "10S"  # none below: lowest
    assert _hcard(hand("5D", "4D", "AD"), D, "6D", F_COLD) == "5D"


def test_heuristic_discards_when_void():
    # Hot forecast, void in Clubs: lowest-rank black card (the other colour)
    assert _hcard(hand("AH", "5S", "3D", "7S"), C, "9C", F_HOT) == "5S"
    # only cards of its own colour: the lowest rank
    assert _hcard(hand("AH", "3D", "10H"), C, "9C", F_HOT) == "3D"
    # Cold forecast, void in Hearts: the lowest card of the other colour, which is red
    assert _hcard(hand("2S", "9D", "6D", "AC"), Hs, "4H", F_COLD) == "6D"


@pytest.mark.parametrize("state,red,forecast,can_double,expected", [
    # Hot forecast, red win at 4/1/4: Cold->Neutral gives 4+1 = 5, Neutral->Hot 5+1 = 6
    ((4, 1, 4), True, F_HOT, False, (1, 1)),
    # Hot forecast, black win: Hot->Neutral gives 3, Neutral->Cold gives 4 (no bonus)
    ((4, 1, 4), False, F_HOT, False, (1, 1)),
    # only option 0 is legal
    ((4, 0, 5), True, F_HOT, False, (1, 0)),
    ((5, 0, 4), False, F_COLD, False, (1, 0)),
    # Advisory: singles give 3 / 4, doubles 2xCold->N: 3+1 = 4, 2xN->Hot: 5+1 = 6 -> double
    ((3, 2, 4), True, F_HOT, True, (2, 1)),
    # Advisory offered but no double beats the best single (6): keep it
    ((4, 1, 4), False, F_COLD, True, (1, 1)),
    # best single 5+1 = 6 (N->C) ties best double 2xN->C: 5+1 = 6 -> single first
    ((5, 2, 2), False, F_HOT, True, (1, 1)),
])
def test_heuristic_cube_move(state, red, forecast, can_double, expected):
    cb = cubes(*state)
    assert tuple(int(x) for x in fc.heuristic_move(cb, red, forecast, can_double)) == expected
    assert cb.tolist() == list(state)  # the heuristic does not move anything itself


# ============================================================== traced games
NAMES = {e.code: e for e in fc.EVENTS}


def _params(advisory: bool, tricks: int = 10, rounds: int = 4) -> np.ndarray:
    params = np.array([r.default for r in fc.RULES], dtype=np.int64)
    params[fc.R_ADVISORY] = int(advisory)
    params[fc.R_TRICKS] = tricks
    params[fc.R_ROUNDS] = rounds
    return params


def _seats(codes) -> np.ndarray:
    seats = np.zeros((len(codes), 4), dtype=np.int64)
    seats[:, 0] = codes
    return seats


def trace(params, seats, seed, g):
    P = seats.shape[0]
    out = np.zeros((1, layout.out_width(P, fc.N_COUNTERS)), dtype=np.int64)
    ev = np.zeros((20000, layout.EVENT_WIDTH), dtype=np.int64)
    ev_n = np.zeros(1, dtype=np.int64)
    fc.trace_game(params, seats, np.int64(seed), np.int64(g), out, ev, ev_n)
    n = int(ev_n[0])
    assert n <= ev.shape[0]
    events = []
    for i in range(n):
        e = NAMES[int(ev[i, 0])]
        d = {"event": e.name, "seat": int(ev[i, 1])}
        for j, f in enumerate(e.fields):
            d[f] = int(ev[i, 2 + j])
        events.append(d)
    return out[0], events


RP = fc.P_RANDOM
HP = fc.P_HEURISTIC
CONFIGS = [
    # players, advisory, tricks_per_round, seat policies, games
    (4, False, 10, [RP] * 4, 60),
    (4, True, 10, [RP] * 4, 80),
    (4, True, 10, [HP, RP, HP, RP], 40),
    (3, False, 10, [RP] * 3, 60),
    (3, True, 10, [RP] * 3, 80),
    (3, False, 13, [RP] * 3, 60),
    (3, True, 13, [RP, HP, RP], 60),
    (4, True, 10, [HP] * 4, 20),
]


def _colour_red(card: int) -> bool:
    return card // 13 in (1, 2)


def _share_after(state, move, red, w, totals, correct, forecast, adv_used, advisory):
    """Seat ``w``'s win share (in 60ths) if the game ends after moving ``move`` = (cubes, from)."""
    size, src = move
    after = list(state)
    after[src] -= size
    after[{COLD: NEUTRAL, HOT: NEUTRAL, NEUTRAL: HOT if red else COLD}[src]] += size
    keys = []
    for s in range(len(totals)):
        mine = after[HOT] if forecast[s] == F_HOT else after[COLD]
        other = after[COLD] if forecast[s] == F_HOT else after[HOT]
        ok = int(mine > other)
        unused = 1 - (adv_used[s] or (s == w and size == 2)) if advisory else 0
        keys.append((totals[s] + mine + ok, correct[s] + ok, unused))
    top = max(keys)
    return 60 // keys.count(top) if keys[w] == top else 0


def _check_game(P, advisory, tricks, policies, row, events):
    """Every rule that can be seen from outside, replayed from the events alone."""
    H = 10 if P == 4 else 13
    adv_used = [0] * P
    decisions = 0
    totals = [0] * P
    correct = [0] * P
    i = 0
    n_rounds = 0
    no_move = 0
    while i < len(events) and events[i]["event"] == "deal":
        rnd = events[i]["round"]
        assert rnd == n_rounds
        # ---- deal
        dealt = {}
        for s in range(P):
            e = events[i + s]
            assert e["event"] == "deal" and e["seat"] == s and e["round"] == rnd
            assert e["leader"] == rnd % P                  # first lead rotates clockwise
            dealt[s] = set(mask_cards(e["hand"]))
            assert len(dealt[s]) == H
            assert all(x % 13 <= 8 or x % 13 == 12 for x in dealt[s])  # no J, Q, K
        assert len(set().union(*dealt.values())) == P * H    # disjoint hands
        i += P
        held = {s: set(dealt[s]) for s in range(P)}
        # ---- forecasts, seats in order
        forecast = {}
        for s in range(P):
            e = events[i]
            assert e["event"] == "forecast" and e["seat"] == s and e["forecast"] in (0, 1)
            forecast[s] = e["forecast"]
            decisions += 1
            i += 1
        state = [4, 1, 4]                                    # reset every round
        leader = rnd % P
        for t in range(tricks):
            plays = []
            for k in range(P):
                e = events[i]
                i += 1
                s = (leader + k) % P                        # clockwise from the leader
                assert e["event"] == "play" and e["seat"] == s
                assert (e["round"], e["trick"]) == (rnd, t)
                card = e["card"]
                assert card in held[s], "played a card not in hand (or twice)"
                if plays:
                    led = plays[0][1] // 13
                    if any(x // 13 == led for x in held[s]):
                        assert card // 13 == led, "did not follow suit"
                held[s].remove(card)
                plays.append((s, card))
                decisions += 1
            led = plays[0][1] // 13
            w, wc = plays[0]
            for s, x in plays:
                if x // 13 == led and x % 13 > wc % 13:
                    w, wc = s, x
            e = events[i]
            i += 1
            assert e["event"] == "trick" and e["seat"] == w and e["card"] == wc
            red = _colour_red(wc)
            src_opts = (COLD, NEUTRAL) if red else (HOT, NEUTRAL)
            dests = {COLD: NEUTRAL, HOT: NEUTRAL, NEUTRAL: HOT if red else COLD}
            can_single = any(state[b] >= 1 for b in src_opts)
            can_double = any(state[b] >= 2 for b in src_opts)
            offer = advisory and not adv_used[w] and can_double
            e = events[i]
            i += 1
            if not can_single:
                assert e["event"] == "no_cube_move" and e["seat"] == w
                no_move += 1
            else:
                use = 0
                if offer:
                    assert e["event"] == "advisory_choice" and e["seat"] == w
                    assert (e["round"], e["trick"]) == (rnd, t)
                    use = e["use"]
                    e = events[i]
                    i += 1
                assert e["event"] == "cube_move" and e["seat"] == w, "must move when able"
                assert (e["round"], e["trick"]) == (rnd, t)
                assert e["from"] in src_opts and e["to"] == dests[e["from"]]   # one step
                assert e["cubes"] == (2 if use else 1)
                assert e["advisory"] == use
                assert state[e["from"]] >= e["cubes"]
                if e["cubes"] == 2:
                    assert offer
                    adv_used[w] += 1
                if rnd == 3 and t == tricks - 1:
                    # the game's last move: no legal move may give the mover a larger win share
                    moves = [(size, b) for size in (1, 2) for b in src_opts
                             if state[b] >= size and (size == 1 or offer)]
                    shares = {m: _share_after(state, m, red, w, totals, correct, forecast, adv_used,
                                              advisory) for m in moves}
                    assert shares[(e["cubes"], e["from"])] == max(shares.values()), "missed a win"
                state[e["from"]] -= e["cubes"]
                state[e["to"]] += e["cubes"]
                assert (e["hot"], e["neutral"]) == (state[HOT], state[NEUTRAL])
                decisions += 1
            assert sum(state) == 9 and min(state) >= 0
            leader = w
        # ---- round scoring
        for s in range(P):
            e = events[i]
            i += 1
            assert e["event"] == "round_score" and e["seat"] == s
            mine = state[HOT] if forecast[s] == F_HOT else state[COLD]
            other = state[COLD] if forecast[s] == F_HOT else state[HOT]
            ok = int(mine > other)
            assert (e["forecast"], e["points"], e["correct"]) == (forecast[s], mine + ok, ok)
            totals[s] += mine + ok
            correct[s] += ok
            assert e["total"] == totals[s]
        e = events[i]
        i += 1
        assert e["event"] == "cubes" and [e["hot"], e["neutral"], e["cold"]] == state
        for s in range(P):   # the game arc's checkpoint (kernels/arc.py): the running totals
            e = events[i]
            i += 1
            assert e["event"] == "checkpoint" and e["seat"] == s
            assert (e["checkpoint"], e["standing"]) == (n_rounds + 1, totals[s])
        n_rounds += 1
    assert n_rounds == 4
    assert all(u <= 1 for u in adv_used), "an Advisory was used twice"
    if not advisory:
        assert sum(adv_used) == 0
    # ---- final
    keys = [(totals[s], correct[s], (1 - adv_used[s]) if advisory else 0) for s in range(P)]
    top = max(keys)
    for s in range(P):
        e = events[i]
        i += 1
        assert e["event"] == "final" and e["seat"] == s
        place = 1 + sum(1 for k in keys if k > keys[s])
        assert (e["score"], e["place"], e["correct"]) == (totals[s], place, correct[s])
        assert e["winner"] == int(keys[s] == top)
        assert row[s] == totals[s] and row[layout.col_place(P, s)] == place
    assert i == len(events)
    assert row[layout.col_decisions(P)] == decisions
    assert row[layout.col_length(P)] == 4 * tricks
    assert row[layout.col_flags(P)] == 0
    ctr = {cn.name: int(row[layout.col_counter(P, j)]) for j, cn in enumerate(fc.COUNTERS)}
    assert ctr["advisory_uses"] == sum(adv_used)
    assert ctr["no_move_tricks"] == no_move
    assert ctr["rounds"] == 4
    assert ctr["correct_forecasts"] == sum(correct)
    assert sum(ctr[f"final_hot_{k}"] for k in range(10)) == 4
    assert ctr["round_hot"] + ctr["round_neutral"] + ctr["round_cold"] == 36
    return sum(adv_used), no_move


@pytest.mark.parametrize("players,advisory,tricks,policies,games", CONFIGS)
def test_traced_games_keep_every_rule(players, advisory, tricks, policies, games):
    params = _params(advisory, tricks)
    seats = _seats(policies)
    uses = 0
    for g in range(games):
        row, events = trace(params, seats, 99, g)
        u, _ = _check_game(players, advisory, tricks, policies, row, events)
        uses += u
    if advisory and RP in policies:
        assert uses > 0  # the Advisory really was exercised


def test_trace_is_the_simulated_game():
    params = _params(True)
    seats = _seats([RP, HP, RP, RP])
    out = np.zeros((30, layout.out_width(4, fc.N_COUNTERS)), dtype=np.int64)
    fc.play_games_serial(params, seats, np.int64(4), np.int64(0), out)
    for g in range(30):
        row, _ = trace(params, seats, 4, g)
        assert row.tolist() == out[g].tolist()


def test_no_move_trick_happens_and_is_counted():
    """Heuristic tables drive all nine cubes to one side; a further win of that colour then
    moves nothing (red with 9 in Hot, black with 9 in Cold), and it is counted."""
    params = _params(False)
    seats = _seats([HP] * 4)
    found = 0
    for g in range(60):
        row, events = trace(params, seats, 3, g)
        _, n = _check_game(4, False, 10, [HP] * 4, row, events)  # no_cube_move iff no legal move
        found += n
    assert found > 0


def test_advisory_is_offered_only_to_the_trick_winner_once_per_game():
    params = _params(True)
    seats = _seats([RP] * 3)
    per_seat = defaultdict(int)
    for g in range(100):
        _, events = trace(params, seats, 17, g)
        used = defaultdict(int)
        for j, e in enumerate(events):
            if e["event"] == "advisory_choice":
                assert used[e["seat"]] == 0
                if e["use"]:
                    used[e["seat"]] += 1
                    per_seat[e["seat"]] += 1
                # the choice is made by the trick winner just recorded
                assert events[j - 1]["event"] == "trick" and events[j - 1]["seat"] == e["seat"]
            if e["event"] == "cube_move" and e["cubes"] == 2:
                assert e["advisory"] == 1
    assert len(per_seat) == 3


def test_check_rejects_more_tricks_than_cards():
    fc.check(3, _params(False, 13))
    fc.check(4, _params(False, 10))
    with pytest.raises(ValueError):
        fc.check(4, _params(False, 11))


# ============================================================== one draw per decision, winning moves
def test_random_cube_move_is_one_draw_over_singles_and_doubles():
    """RULINGS: random = uniform over the legal options, one draw per decision. With two single
    moves and one double legal (one source holds 1 cube, the other 2 or more), the Advisory is
    one option in three: its share is 1/3 (two draws, Advisory first, gave 1/2)."""
    params = _params(True)
    seats = _seats([RP] * 4)
    offered = used = 0
    for g in range(600):
        _, events = trace(params, seats, 1, g)
        state = [4, 1, 4]
        red = False
        for j, e in enumerate(events):
            if e["event"] == "deal":
                state = [4, 1, 4]
            elif e["event"] == "trick":
                red = _colour_red(e["card"])
            elif e["event"] == "advisory_choice" and not (e["round"] == 3 and e["trick"] == 9):
                far = state[COLD] if red else state[HOT]
                singles = (far >= 1) + (state[NEUTRAL] >= 1)
                doubles = (far >= 2) + (state[NEUTRAL] >= 2)
                if singles == 2 and doubles == 1:
                    offered += 1
                    used += e["use"]
            elif e["event"] == "cube_move":
                state[e["from"]] -= e["cubes"]
                state[e["to"]] += e["cubes"]
    # binomial(n, 1/3): 4.5 standard deviations either side; 1/2 is ~15 standard deviations out
    assert offered > 1000
    sd = (offered * (1 / 3) * (2 / 3)) ** 0.5
    assert abs(used - offered / 3) < 4.5 * sd, (used, offered)


def _winning(state, red, w, score, correct, adv_left, forecast, advisory=True):
    cb = cubes(*state)
    singles = fc.legal_cube_moves_in(cb, red, 1)
    doubles = fc.legal_cube_moves_in(cb, red, 2) if adv_left[w] else 0
    a = [np.array(x, dtype=np.int64) for x in (score, correct, adv_left, forecast)]
    return tuple(int(x) for x in fc.winning_moves(*state, red, singles, doubles, w, *a, advisory,
                                                  len(score)))


def test_last_move_keeps_only_the_winning_moves():
    # Seat 1 wins a red trick on the game's last move at Hot 0 / Neutral 2 / Cold 7; every seat
    # forecast Hot, so every seat gains the same: single Cold->N +0, single N->Hot +1, double
    # 2xCold->N +0, double 2xN->Hot +2 (Hot 2 < Cold 7: no bonus). Totals before the round
    # 18 / 20 / 20, correct 2 each.
    # (a) seat 2 still holds its Advisory: a single leaves seats 1 and 2 tied on score, correct
    # and unused Advisory (a shared win); the double leaves seat 1 behind seat 2 on the
    # Advisory tie-break (a loss). Both singles are kept, no double.
    assert _winning((0, 2, 7), True, 1, [18, 20, 20], [2, 2, 2], [1, 1, 1], [F_HOT] * 3) == (3, 0)
    # (b) seat 2 has used its Advisory: a single is a sole win for seat 1, the double a shared one.
    assert _winning((0, 2, 7), True, 1, [18, 20, 20], [2, 2, 2], [1, 1, 0], [F_HOT] * 3) == (3, 0)
    # (c) seat 1 far ahead (30): every move wins alone, so nothing is cut.
    assert _winning((0, 2, 7), True, 1, [18, 30, 20], [2, 2, 2], [1, 1, 1], [F_HOT] * 3) == (3, 3)
    # (d) seat 1 far behind (10): no move wins, so nothing is cut.
    assert _winning((0, 2, 7), True, 1, [18, 10, 20], [2, 2, 2], [1, 1, 1], [F_HOT] * 3) == (3, 3)
    # (e) only a double wins: seat 1 (Hot, 20) against seat 0 (Cold, 21) at Hot 3 / Neutral 2 /
    # Cold 4 after a red trick. Single Cold->N (3/3/3): 23 v 24; single N->Hot (4/1/4): 24 v 25;
    # double 2xCold->N (3/4/2): 24 v 23, a sole win; double 2xN->Hot (5/0/4): 26 v 25, a sole win.
    assert _winning((3, 2, 4), True, 1, [21, 20], [1, 1], [1, 1], [F_COLD, F_HOT]) == (0, 3)


def test_heuristic_takes_the_winning_last_move():
    # the heuristic's own choice at (a) would be the double (+2 points beats +1) and lose
    assert tuple(int(x) for x in fc.heuristic_move(cubes(0, 2, 7), True, F_HOT, True)) == (2, 1)
    assert tuple(int(x) for x in fc.heuristic_move_n(0, 2, 7, True, F_HOT, 3, 0)) == (1, 1)


def test_issue_18_heuristic_game_228_wins_on_its_last_move():
    """Issue 18's reproduction (seed 1, advisory, 4 heuristic seats, game 228). Before the last
    move seats 0 and 1 both forecast Hot, both have 21 points, 3 correct forecasts and an unused
    Advisory; cubes Hot 4 / Neutral 0 / Cold 5; seat 1 wins a red trick. The single Cold->Neutral
    (4/1/4) gives both +4: tied on every key, a shared win. The double (4/2/3) gives both +5 and
    a correct forecast, and seat 0 wins alone on the unused Advisory: the heuristic took it
    (+5 > +4) and lost. Now it takes the single and shares the win with seat 0."""
    row, events = trace(_params(True), _seats([HP] * 4), 1, 228)
    last = [e for e in events if e["event"] == "cube_move"][-1]
    assert last["seat"] == 1 and last["cubes"] == 1 and (last["hot"], last["neutral"]) == (4, 1)
    assert row[layout.col_winners(4)] == (1 << 0) | (1 << 1)
    _check_game(4, True, 10, [HP] * 4, row, events)


@pytest.mark.parametrize("players,game", [(3, 88), (3, 115), (4, 135), (4, 228)])
def test_issue_18_heuristic_games_take_the_best_last_move(players, game):
    """The issue's other reproductions (seed 1, advisory, all heuristic): the last move left the
    mover a smaller win share than another legal move (a double it did not use, or the double it
    used). The checker recomputes every legal last move's win share from the trace by hand."""
    row, events = trace(_params(True), _seats([HP] * players), 1, game)
    _check_game(players, True, 10, None, row, events)
