"""forecasts-bid: each rule on hand-built states, expected values derived from the rulebook
(forecasts-bid.txt) and RULINGS.md by hand."""
from __future__ import annotations

import numpy as np
import pytest

from kernels import forecasts_bid as fb
from kernels import layout, rng
from kernels.cards import mask_cards, mask_of, parse_card


def cards(*names):
    return [parse_card(n) for n in names]


def hand(*names):
    return np.int64(mask_of(cards(*names)))


def new_state(players, market=True):
    st = np.empty(fb.ST_SIZE, dtype=np.int64)
    fb.init_game(st, players, 1 if market else 0)
    for s in range(fb.MAX_SEATS):       # the heuristic's knob rows, as the game driver loads them
        st[fb.S_KNOB + fb.NK * s:fb.S_KNOB + fb.NK * (s + 1)] = fb.KNOB_DEFAULTS
    return st


def set_knob(st, s, k, v):
    st[fb.S_KNOB + fb.NK * s + k] = v


def streams(players, seed=1, game=0):
    S = fb.n_seats(players, None)
    keys = np.zeros(S + 2, dtype=np.uint64)
    ctrs = np.zeros(S + 2, dtype=np.int64)
    for s in range(S):
        keys[s] = rng.stream_key(seed, game, rng.SEAT, s)
    return keys, ctrs


NO_EV = np.zeros((0, layout.EVENT_WIDTH), dtype=np.int64)
NO_EV_N = np.zeros(1, dtype=np.int64)


# ---- Phase 6: the rulebook's six worked examples, then the other classes -----------------------
@pytest.mark.parametrize("bid,won,points", [
    (3, 3, 3),     # "Bid 3 and win 3 tricks: gain +3 Reputation."
    (3, 5, -4),    # "Bid 3 and win 5 tricks: miss by 2 and lose 4 Reputation."
    (5, 5, 10),    # "Bid 5 and win 5 tricks: gain +10 Reputation."
    (5, 4, -4),    # "Bid 5 and win 4 tricks: miss by 1 and lose 4 Reputation."
    (0, 0, 5),     # "Bid 0 and win 0 tricks: gain +5 Reputation."
    (0, 2, -4),    # "Bid 0 and win 2 tricks: lose 4 Reputation."
])
def test_the_six_worked_examples(bid, won, points):
    assert fb.round_points(bid, won) == points


@pytest.mark.parametrize("bid,won,points", [
    (7, 7, 14), (7, 4, -12), (7, 10, -12),   # Extended: +2 x bid, -4 per trick off
    (5, 0, -20),
    (1, 1, 1), (10, 10, 10), (13, 13, 13),   # Standard hit: + bid
    (10, 0, -20), (1, 13, -24),              # Standard miss: -2 per trick off
    (4, 6, -4), (6, 5, -2),
    (0, 1, -2), (0, 13, -26),                # Clear Skies miss: -2 per trick won
])
def test_scoring_by_class(bid, won, points):
    assert fb.round_points(bid, won) == points


def test_bid_classes():
    assert fb.bid_class(0) == fb.CLASS_CLEAR
    assert fb.bid_class(5) == fb.bid_class(7) == fb.CLASS_EXTENDED
    for b in (1, 2, 3, 4, 6, 8, 9, 10, 11, 12, 13):
        assert fb.bid_class(b) == fb.CLASS_STANDARD


def test_reputation_is_capped_at_60_with_no_floor():
    assert fb.add_reputation(55, 10) == 60
    assert fb.add_reputation(60, 3) == 60
    assert fb.add_reputation(50, 10) == 60
    assert fb.add_reputation(49, 10) == 59
    assert fb.add_reputation(-3, -8) == -11
    assert fb.add_reputation(60, -4) == 56


def test_scoring_phase_caps_and_counts():
    st = new_state(4)
    S = 4
    for s, (rep, bid, won) in enumerate([(57, 5, 5), (0, 0, 2), (10, 3, 3), (-5, 7, 6)]):
        st[fb.S_REP + s], st[fb.S_BID + s], st[fb.S_WON + s] = rep, bid, won
    fb.scoring_phase(st, NO_EV, NO_EV_N)
    assert [st[fb.S_REP + s] for s in range(4)] == [60, -4, 13, -9]
    c = lambda i: st[fb.S_COUNT + i]  # noqa: E731
    assert c(fb.C_EXT_HIT) == 1 and c(fb.C_EXT_MISS) == 1
    assert c(fb.C_EXT_GAIN) == 10 and c(fb.C_EXT_LOSS) == 4     # the points as ruled, before the cap
    assert c(fb.C_CLR_MISS) == 1 and c(fb.C_CLR_LOSS) == 4 and c(fb.C_CLR_HIT) == 0
    assert c(fb.C_STD_HIT) == 1 and c(fb.C_STD_GAIN) == 3


# ---- Phase 5: following suit and Diamonds as trumps ---------------------------------------------
def test_follow_suit_when_able():
    h = hand("2S", "KS", "AD", "5H")
    assert mask_cards(fb.legal_plays(h, 0)) == cards("2S", "KS")          # Spades led


def test_void_may_sluff_or_trump():
    h = hand("2S", "KS", "AD", "5H")
    assert mask_cards(fb.legal_plays(h, 3)) == sorted(cards("2S", "KS", "AD", "5H"))   # Clubs led


def test_diamonds_may_be_led_at_any_time():
    h = hand("2S", "AD")
    assert mask_cards(fb.legal_plays(h, -1)) == sorted(cards("2S", "AD"))


def test_a_diamond_may_not_be_played_while_holding_the_led_suit():
    h = hand("3H", "AD")
    assert mask_cards(fb.legal_plays(h, 1)) == cards("3H")


def trick(players, leader, plays):
    """Play cards in order from ``leader``; returns the seat holding the trick."""
    st = new_state(players)
    S = st[fb.S_SEATS]
    for s in range(S):
        st[fb.S_HAND + s] = 0
    fb.start_trick(st, leader)
    for j, name in enumerate(plays):
        s = (leader + j) % S
        c = parse_card(name)
        st[fb.S_HAND + s] |= np.int64(1) << np.int64(c)
        fb.apply_play(st, s, c)
    return st[fb.S_BEST_SEAT]


@pytest.mark.parametrize("leader,plays,winner", [
    (0, ["5S", "KS", "AH", "2S"], 1),       # no Diamond: highest of the led suit; an off-suit Ace loses
    (0, ["AS", "2D", "KS", "QS"], 1),       # any Diamond beats any non-trump card
    (2, ["3S", "4D", "QD", "KS"], 0),       # the highest Diamond wins (seat 2 leads: 2, 3, 0, 1)
    (1, ["2D", "AS", "3D", "AC"], 3),       # Diamonds led: the highest Diamond
    (3, ["9C", "10C", "JC", "2C"], 1),      # 9C by 3, 10C by 0, JC by 1, 2C by 2
])
def test_trick_winner(leader, plays, winner):
    assert trick(4, leader, plays) == winner


def test_trick_winner_three_players():
    assert trick(3, 2, ["7H", "AH", "8D"]) == 1           # seats 2, 0, 1: the Diamond by seat 1


# ---- Phase 1: Investment ------------------------------------------------------------------------
def test_investment_requirements():
    st = new_state(4)
    st[fb.S_REP + 0], st[fb.S_SPEND + 0] = 1, 2
    assert fb.legal_invest(st, 0)
    fb.apply_invest(st, 0)
    assert st[fb.S_REP + 0] == 0 and st[fb.S_SPEND + 0] == 3
    assert not fb.legal_invest(st, 0)                     # Reputation 0: cannot convert
    st[fb.S_REP + 1], st[fb.S_SPEND + 1] = 10, 3
    assert not fb.legal_invest(st, 1)                     # Market Spend can never exceed 3
    st[fb.S_REP + 2], st[fb.S_SPEND + 2] = -4, 0
    assert not fb.legal_invest(st, 2)                     # negative Reputation cannot pay
    st[fb.S_REP + 3], st[fb.S_SPEND + 3] = 5, 0
    assert fb.legal_invest(st, 3)


def test_the_rival_never_invests():
    st = new_state(2)
    st[fb.S_SPEND + 2] = 0
    assert st[fb.S_REP + 2] == 20
    assert not fb.legal_invest(st, 2)


def test_setup():
    st = new_state(4)
    assert [st[fb.S_SPEND + s] for s in range(4)] == [3] * 4
    assert [st[fb.S_REP + s] for s in range(4)] == [0] * 4
    st = new_state(2)
    assert [st[fb.S_REP + s] for s in range(3)] == [0, 0, 20]
    assert st[fb.S_RIVAL] == 2 and st[fb.S_SEATS] == 3


@pytest.mark.parametrize("players", [2, 3, 4])
def test_setup_writes_every_word(players):
    """init_game leaves nothing of an earlier game in the state: every word is written, and the
    fields that mean "none" before the first deal are -1 (a game reuses its state buffer)."""
    st = np.full(fb.ST_SIZE, 7777, dtype=np.int64)
    fb.init_game(st, players, 1)
    assert not np.any(st == 7777)
    for f in (fb.S_LEADER, fb.S_TRICK, fb.S_LED_SUIT, fb.S_BEST_SEAT, fb.S_FLIP_FIRST,
              fb.S_FLIP_SECOND):
        assert st[f] == -1
    for s in range(fb.MAX_SEATS):
        assert st[fb.S_BID + s] == -1 and st[fb.S_PLAYED + s] == -1
        assert st[fb.S_WON + s] == 0 and st[fb.S_FORBID + s] == 0
    assert np.all(st[fb.S_COUNT:fb.S_COUNT + fb.N_COUNTERS] == 0)


# ---- Phase 2: The Deal ----------------------------------------------------------------------------
@pytest.mark.parametrize("players,size,draw,aside", [(4, 10, 12, 0), (3, 13, 13, 0), (2, 10, 12, 10)])
def test_deal_sizes(players, size, draw, aside):
    st = new_state(players)
    keys, ctrs = streams(players)
    S = st[fb.S_SEATS]
    keys[S] = rng.stream_key(1, 0, rng.DEAL, 0)
    fb.deal(st, keys, ctrs, S)
    deck = st[fb.S_DECK:fb.S_DECK + 52].copy()      # the shuffled deck, in dealing order
    hands = [int(st[fb.S_HAND + s]) for s in range(S)]
    assert [len(mask_cards(h)) for h in hands] == [size] * S
    assert fb.draw_deck_size(st) == draw
    assert len(mask_cards(int(st[fb.S_SET_ASIDE]))) == aside
    assert st[fb.S_MARKET] == 0
    union = 0
    for m in hands + [int(fb.draw_deck_mask(st)), int(st[fb.S_SET_ASIDE])]:
        assert union & m == 0
        union |= m
    assert union == (1 << 52) - 1


def test_deal_is_the_documented_shuffle():
    # docs: the deal of round r is a Fisher-Yates shuffle on the DEAL stream r (tests/reference/prng)
    from tests.reference import prng
    for seed, game, rnd in ((1, 0, 0), (7, 12345, 3), (2**40, 9, 5)):
        st = new_state(4)
        keys, ctrs = streams(4)
        keys[4] = rng.stream_key(seed, game, rng.DEAL, rnd)
        fb.deal(st, keys, ctrs, 4)
        deck = list(range(52))
        prng.Stream(seed, game, rng.DEAL, rnd).shuffle(deck)
        assert st[fb.S_DECK:fb.S_DECK + 52].tolist() == deck
        assert ctrs[4] == 51
        # clockwise from the dealer's (seat 0's) left, one card at a time
        assert [int(st[fb.S_HAND + s]) for s in range(4)] == [
            mask_of(deck[(s - 1) % 4:40:4]) for s in range(4)]


@pytest.mark.parametrize("players,size", [(3, 13), (4, 10)])
def test_deal_from_every_dealer(players, size):
    # rulebook Phase 2: cards dealt one at a time clockwise from the dealer's left, the next ones
    # the Draw Deck (top first); the deck is the documented shuffle (tests/reference/prng). 3 and
    # 4 players are dealt as the shuffle fixes each card (deal_fixed), so every dealer is checked
    from tests.reference import prng
    S = players
    for dealer in range(S):
        for seed, game, rnd in ((3, 5, 0), (11, 777, 2), (2**50, 1, 4)):
            st = new_state(players)
            st[fb.S_DEALER] = dealer
            keys, ctrs = streams(players)
            keys[S] = rng.stream_key(seed, game, rng.DEAL, rnd)
            fb.deal(st, keys, ctrs, S)
            deck = list(range(52))
            prng.Stream(seed, game, rng.DEAL, rnd).shuffle(deck)
            assert st[fb.S_DECK:fb.S_DECK + 52].tolist() == deck
            assert ctrs[S] == 51
            for s in range(S):
                first = (s - dealer - 1) % S        # the dealer's left takes card 0
                assert int(st[fb.S_HAND + s]) == mask_of(deck[first:S * size:S])
            assert [int(st[fb.S_DRAW_DECK + j]) for j in range(52 - S * size)] == deck[S * size:]
            assert st[fb.S_DECK_TOP] == 0 and st[fb.S_DECK_END] == 52 - S * size
            assert st[fb.S_SET_ASIDE] == 0


# ---- Phase 4: The Market --------------------------------------------------------------------------
def market_state(spend, deck_cards, market_cards, players=4):
    st = new_state(players)
    st[fb.S_SPEND + 0] = spend
    for j, c in enumerate(cards(*deck_cards)):
        st[fb.S_DRAW_DECK + j] = c
    st[fb.S_DECK_TOP] = 0
    st[fb.S_DECK_END] = len(deck_cards)
    st[fb.S_MARKET] = hand(*market_cards) if market_cards else 0
    return st


def offered(st, s=0):
    m = fb.legal_market(st, s)
    return {a for a, name in enumerate(("pass", "draw", "buy")) if (m >> a) & 1}


def test_market_offers():
    P, D, B = fb.A_PASS, fb.A_DRAW, fb.A_BUY
    assert offered(market_state(3, ["2S"], [])) == {P, D}          # empty Market: no Buy
    assert offered(market_state(3, ["2S"], ["4H"])) == {P, D, B}
    assert offered(market_state(0, ["2S"], ["4H"])) == {P}          # no Market Spend: only Pass
    assert offered(market_state(2, [], ["4H"])) == {P, B}           # empty Draw Deck: no Draw
    assert offered(market_state(1, [], [])) == {P}                  # nothing could be taken


def test_the_rival_always_passes():
    st = market_state(3, ["2S"], ["4H"], players=2)
    assert offered(st, 2) == {fb.A_PASS}


def test_resource_limits():
    st = market_state(3, ["2S", "3S"], ["4H"])
    assert fb.cards_taken(st, fb.A_DRAW, 3) == 2      # asks 3, the Draw Deck holds 2
    assert fb.cards_taken(st, fb.A_DRAW, 1) == 1
    assert fb.cards_taken(st, fb.A_BUY, 2) == 1       # the Market holds 1


def test_draw_buy_discard_move_cards_and_cost_spend():
    st = market_state(3, ["2S", "3S"], ["4H", "5H"])
    st[fb.S_HAND + 0] = hand("AS", "KD")
    assert fb.apply_draw(st, 0) == parse_card("2S")      # the top card first
    assert st[fb.S_SPEND + 0] == 2 and fb.draw_deck_size(st) == 1
    fb.apply_buy(st, 0, parse_card("5H"))
    assert st[fb.S_SPEND + 0] == 1 and st[fb.S_MARKET] == hand("4H")
    fb.apply_discard(st, 0, parse_card("AS"))
    fb.apply_discard(st, 0, parse_card("KD"))
    assert st[fb.S_HAND + 0] == hand("2S", "5H")
    assert st[fb.S_MARKET] == hand("4H", "AS", "KD")


@pytest.mark.parametrize("seed", range(40))
def test_a_random_market_turn_keeps_the_hand_size_and_pays_per_card(seed):
    deck_cards = ["2S", "3S"]                       # fewer than Market Spend 3 may ask
    market_cards = ["4H"]
    st = market_state(3, deck_cards, market_cards)
    h = hand("AS", "KS", "QS", "JS", "10S", "9S", "8S", "7S", "6S", "5S")
    st[fb.S_HAND + 0] = h
    keys, ctrs = streams(4, seed=seed)
    ev = np.zeros((8, layout.EVENT_WIDTH), dtype=np.int64)
    ev_n = np.zeros(1, dtype=np.int64)
    fb.market_turn(st, keys, ctrs, 0, ev, ev_n)
    e = ev[0]
    assert e[0] == fb.E_MARKET and e[1] == 0
    action, asked, taken, discarded, spend = e[3], e[4], int(e[5]), int(e[6]), e[7]
    n = len(mask_cards(taken))
    assert len(mask_cards(discarded)) == n
    assert len(mask_cards(int(st[fb.S_HAND + 0]))) == 10
    assert spend == 3 - n == st[fb.S_SPEND + 0]
    if action == fb.A_PASS:
        assert n == 0 and asked == 0
    elif action == fb.A_DRAW:
        assert 1 <= asked <= 3 and n == min(asked, 2)
        assert mask_cards(taken) == sorted(cards(*deck_cards)[:n])    # from the top
    else:
        assert 1 <= asked <= 3 and n == 1 and taken == hand("4H")
    # the Market ends with what was left plus the discards
    before = hand(*market_cards)
    if action == fb.A_BUY:
        before &= ~taken
    assert st[fb.S_MARKET] == before | discarded


def test_random_market_turns_cover_every_action():
    seen = set()
    for seed in range(40):
        st = market_state(3, ["2S", "3S"], ["4H"])
        st[fb.S_HAND + 0] = hand("AS", "KS", "QS", "JS", "10S", "9S", "8S", "7S", "6S", "5S")
        keys, ctrs = streams(4, seed=seed)
        ev = np.zeros((8, layout.EVENT_WIDTH), dtype=np.int64)
        ev_n = np.zeros(1, dtype=np.int64)
        fb.market_turn(st, keys, ctrs, 0, ev, ev_n)
        seen.add(int(ev[0, 3]))
    assert seen == {fb.A_PASS, fb.A_DRAW, fb.A_BUY}


def test_a_random_market_turn_is_uniform_over_the_distinct_actions():
    """Draw Deck 2 cards, Market 1 card, Market Spend 3: Draw 3 takes what Draw 2 takes and Buy 2
    or 3 what Buy 1 takes (resource limits), so the distinct actions are Pass, Draw 1, Draw 2,
    Buy 1 (RULINGS: random = uniform over the legal options, one draw): 1/4 each."""
    tally = {}
    n = 4000
    for seed in range(n):
        st = market_state(3, ["2S", "3S"], ["4H"])
        st[fb.S_HAND + 0] = hand("AS", "KS", "QS", "JS", "10S", "9S", "8S", "7S", "6S", "5S")
        keys, ctrs = streams(4, seed=seed)
        ev = np.zeros((8, layout.EVENT_WIDTH), dtype=np.int64)
        ev_n = np.zeros(1, dtype=np.int64)
        fb.market_turn(st, keys, ctrs, 0, ev, ev_n)
        key = (int(ev[0, 3]), int(ev[0, 4]))
        tally[key] = tally.get(key, 0) + 1
    assert set(tally) == {(fb.A_PASS, 0), (fb.A_DRAW, 1), (fb.A_DRAW, 2), (fb.A_BUY, 1)}
    counts = np.array(list(tally.values()), dtype=float)
    chi2 = ((counts - n / 4) ** 2 / (n / 4)).sum()
    assert chi2 < 21.11          # the 1e-4 upper critical value of chi-square at 3 df


def test_heuristic_buys_a_strong_card_when_short_of_its_bid():
    st = market_state(3, ["2S"], ["AD", "3C"])
    st[fb.S_HAND + 0] = hand("2H", "3H", "4H", "5H", "6H", "7H", "8H", "9H", "10H", "JH")
    st[fb.S_BID + 0] = 1                                # estimate 0 < bid 1
    keys, ctrs = streams(4)
    st[fb.S_POLICY + 0] = fb.P_HEURISTIC
    fb.market_turn(st, keys, ctrs, 0, NO_EV, NO_EV_N)
    assert st[fb.S_HAND + 0] == hand("AD", "3H", "4H", "5H", "6H", "7H", "8H", "9H", "10H", "JH")
    assert st[fb.S_MARKET] == hand("3C", "2H") and st[fb.S_SPEND + 0] == 2


# ---- the Rival Station ---------------------------------------------------------------------------
@pytest.mark.parametrize("first,second,led,played", [
    ("4S", "JS", 0, "JS"),    # both match the led suit: the higher
    ("JS", "4S", 0, "JS"),
    ("KH", "3S", 0, "3S"),    # one matches: that one, however low
    ("3S", "KH", 0, "3S"),
    ("AH", "2D", 0, "2D"),    # neither matches, one Diamond: trump
    ("3D", "9D", 0, "9D"),    # two Diamonds: the higher
    ("9H", "QC", 0, "QC"),    # none: the higher card (sluff)
    ("9H", "9C", 0, "9H"),    # equal ranks: the first flipped
    ("9C", "9H", 0, "9C"),
    ("5D", "AS", 2, "5D"),    # Diamonds led: the Diamond matches the led suit
])
def test_rival_follow_priority(first, second, led, played):
    assert fb.rival_choose(parse_card(first), parse_card(second), led) == parse_card(played)


def test_rival_deck_is_its_hand_then_the_rest_shuffled():
    st = new_state(2)
    keys, ctrs = streams(2)
    S = 3
    keys[S] = rng.stream_key(1, 0, rng.DEAL, 0)
    fb.deal(st, keys, ctrs, S)
    deck = st[fb.S_DECK:fb.S_DECK + 52].copy()      # the shuffled deck, in dealing order
    rival_hand = int(st[fb.S_HAND + 2])
    # the Rival is dealt cards 1, 4, 7, ... (dealer 0: seat 1 gets the first card)
    assert [st[fb.S_RIVAL_DECK + i] for i in range(10)] == [deck[3 * i + 1] for i in range(10)]
    # a Market with 2 cards, a Draw Deck with 10 left
    st[fb.S_DECK_TOP] = 2
    st[fb.S_MARKET] = np.int64(1 << int(deck[30])) | np.int64(1 << int(deck[31]))
    rest = set(int(deck[30 + j]) for j in range(12))
    keys[S + 1] = rng.stream_key(1, 0, rng.AUX, 0)
    fb.build_rival_deck(st, keys, ctrs, S + 1)
    assert st[fb.S_RIVAL_END] == 22
    assert set(fb.rival_deck_at(st, i) for i in range(10)) == set(mask_cards(rival_hand))
    assert set(fb.rival_deck_at(st, i) for i in range(10, 22)) == rest
    assert fb.rival_deck_at(st, 22) == -1
    assert st[fb.S_MARKET] == 0 and fb.draw_deck_size(st) == 0 and st[fb.S_HAND + 2] == 0


def rival_trick_state(deck_cards):
    st = new_state(2)
    for i, c in enumerate(cards(*deck_cards)):
        st[fb.S_RIVAL_DECK + i] = c
    st[fb.S_RIVAL_TOP] = 0
    st[fb.S_RIVAL_END] = len(deck_cards)
    st[fb.S_SCRAP] = 0
    return st


def test_rival_leads_by_flipping_the_top_card():
    st = rival_trick_state(["7H", "AD", "2C"])
    keys, ctrs = streams(2)
    fb.start_trick(st, 2)
    c = fb.seat_play(st, keys, ctrs, 2)
    assert c == parse_card("7H")
    assert st[fb.S_RIVAL_TOP] == 1 and st[fb.S_SCRAP] == 0


def test_rival_follows_by_flipping_two_and_scraps_the_other():
    st = rival_trick_state(["7H", "AD", "2C", "3C"])
    keys, ctrs = streams(2)
    fb.start_trick(st, 0)
    st[fb.S_HAND + 0] = hand("KS")
    fb.apply_play(st, 0, parse_card("KS"))
    st[fb.S_HAND + 1] = hand("AS")
    fb.apply_play(st, 1, parse_card("AS"))
    c = fb.seat_play(st, keys, ctrs, 2)
    assert c == parse_card("AD")                    # void in Spades: the Diamond
    fb.apply_play(st, 2, c)
    assert st[fb.S_SCRAP] == hand("7H") and st[fb.S_RIVAL_TOP] == 2
    assert st[fb.S_BEST_SEAT] == 2


# ---- the end of the game --------------------------------------------------------------------------
def end_state(players, reps, sudden=False, contenders=None):
    st = new_state(players)
    for s, r in enumerate(reps):
        st[fb.S_REP + s] = r
    st[fb.S_SUDDEN] = 1 if sudden else 0
    if contenders is not None:
        st[fb.S_CONTENDERS] = contenders
    return st


def test_a_tie_for_the_lead_plays_sudden_death():
    winners, sudden = fb.outcome(end_state(4, [10, 10, 3, -2]))
    assert sudden and winners == 0b0011


def test_a_tie_below_the_lead_does_not():
    winners, sudden = fb.outcome(end_state(4, [12, 10, 10, -2]))
    assert not sudden and winners == 0b0001


def test_after_sudden_death_only_the_tied_can_win():
    # seat 2 overtook them in the sudden-death round but was not tied for the lead
    winners, sudden = fb.outcome(end_state(4, [14, 12, 30, 0], True, 0b0011))
    assert not sudden and winners == 0b0001


def test_still_tied_after_sudden_death_shares_the_victory():
    winners, sudden = fb.outcome(end_state(3, [12, 12, 30], True, 0b011))
    assert not sudden and winners == 0b011


@pytest.mark.parametrize("reps,winners,sudden", [
    ([17, 10, 16], 0b001, False),   # strictly above the Rival
    ([16, 10, 16], 0b100, False),   # level with the Rival: the Rival wins
    ([15, 15, 15], 0b100, False),
    ([-3, 4, 20], 0b100, False),
    ([15, 15, 14], 0b011, True),    # the players tie above the Rival: sudden death
])
def test_the_players_must_finish_strictly_above_the_rival(reps, winners, sudden):
    w, sd = fb.outcome(end_state(2, reps))
    assert (w, sd) == (winners, sudden)


def test_after_sudden_death_the_rival_is_checked_only_with_rival_check_final():
    # rival_check = "round5" (default): the tied players beat the Rival in round 5
    w, sd = fb.outcome(end_state(2, [18, 18, 18], True, 0b011))
    assert (w, sd) == (0b011, False)
    w, sd = fb.outcome(end_state(2, [17, 19, 30], True, 0b011))
    assert (w, sd) == (0b010, False)
    # rival_check = "final": they must also finish strictly above it
    st = end_state(2, [18, 18, 18], True, 0b011)
    st[fb.S_RIVAL_FINAL] = 1
    assert fb.outcome(st) == (0b100, False)
    st = end_state(2, [19, 18, 18], True, 0b011)
    st[fb.S_RIVAL_FINAL] = 1
    assert fb.outcome(st) == (0b001, False)


# ---- heuristic pieces ----------------------------------------------------------------------------
def test_heuristic_estimate_and_extended_only_when_firm():
    # sure: AD KD QD AS AH = 5 (10 halves); 2D 3D: 2 halves; KC guarded by 2C: 1 half -> 13
    h = hand("AD", "KD", "QD", "AS", "AH", "2D", "3D", "KC", "2C", "4S")
    assert fb.estimate(h) == (13, 5)
    assert fb.heuristic_bid(h, 10) == 6           # 6.5 rounds up to 7: Extended, not firm -> 6
    h5 = hand("AD", "KD", "QD", "AS", "AH", "4S", "5S", "6S", "7S", "8S")
    assert fb.estimate(h5) == (10, 5) and fb.heuristic_bid(h5, 10) == 5     # firm: Extended
    soft = hand("AD", "KD", "QD", "AS", "2D", "3D", "4S", "5S", "6S", "7S")
    assert fb.estimate(soft) == (10, 4) and fb.heuristic_bid(soft, 10) == 4  # not firm: one less
    assert fb.estimate(hand("AS", "2D", "KH", "3C")) == (3, 1)              # lone KH: no half
    assert fb.heuristic_bid(hand("AS", "2D", "KH", "3C"), 10) == 2
    assert fb.heuristic_bid(hand("2S", "3H", "4C", "5S"), 10) == 0         # Clear Skies


def test_heuristic_draws_toward_a_half_trick_short_bid():
    # AS + 2D = 3 halves, bid 2 (4 halves): short, an empty Market -> Draw 1, drop the weakest
    st = market_state(3, ["9C", "5H"], [])
    st[fb.S_HAND + 0] = hand("AS", "2D", "3H", "4H", "5S", "6S", "7S", "8S", "9S", "10S")
    st[fb.S_BID + 0] = 2
    st[fb.S_POLICY + 0] = fb.P_HEURISTIC
    keys, ctrs = streams(4)
    fb.market_turn(st, keys, ctrs, 0, NO_EV, NO_EV_N)
    assert st[fb.S_HAND + 0] == hand("AS", "2D", "9C", "4H", "5S", "6S", "7S", "8S", "9S", "10S")
    assert st[fb.S_MARKET] == hand("3H") and st[fb.S_SPEND + 0] == 2


def test_weakest_and_strongest_follow_the_heuristic_card_order():
    # the heuristic's order: any Diamond above any other card, then by rank, the suit (S, H, D, C
    # = 0..3) breaking ties; written out here card by card
    def order(c):
        return (c // 13 == 2, c % 13, c // 13)

    r = np.random.default_rng(5)
    masks = [0, hand("2D"), hand("2S"), hand("AS", "AH", "AC"), hand("2S", "2H", "2C", "3D"),
             hand("KD", "AS"), (1 << 52) - 1]
    masks += [int(m) & ((1 << 52) - 1) for m in r.integers(0, 2**62, size=300)]
    masks += [int(mask_of(r.choice(52, size=k, replace=False))) for k in (1, 2, 3, 5) for _ in range(100)]
    for m in masks:
        cs = mask_cards(int(m))
        assert fb.weakest(np.int64(m)) == (min(cs, key=order) if cs else -1)
        assert fb.strongest(np.int64(m)) == (max(cs, key=order) if cs else -1)


def test_heuristic_card_wins_until_the_bid_then_ducks():
    st = new_state(4)
    fb.start_trick(st, 0)
    st[fb.S_HAND + 0] = hand("9S")
    fb.apply_play(st, 0, parse_card("9S"))
    st[fb.S_BID + 1], st[fb.S_WON + 1] = 2, 0
    legal = hand("2S", "10S", "AS")
    assert fb.heuristic_card(st, 1, legal) == parse_card("10S")     # the lowest winning card
    st[fb.S_WON + 1] = 2
    assert fb.heuristic_card(st, 1, legal) == parse_card("2S")      # has its bid: the highest loser
    legal = hand("10S", "AS")
    assert fb.heuristic_card(st, 1, legal) == parse_card("10S")     # must win: as low as it can


# ---- tuned's card-play and bidding knobs (defaults: the heuristic above) ------------------------
def nine_of_spades_led(bid0, won0):
    """Trick 0 of a 4-player round: seat 0 led the 9 of Spades, with bid0 / won0 so far."""
    st = new_state(4)
    fb.start_trick(st, 0)
    st[fb.S_TRICK] = 0
    st[fb.S_HAND + 0] = hand("9S")
    fb.apply_play(st, 0, parse_card("9S"))
    st[fb.S_BID + 0], st[fb.S_WON + 0] = bid0, won0
    return st


def test_spoil_slack_lets_a_holder_on_its_bid_take_the_trick():
    legal = hand("2S", "10S", "AS")
    st = nine_of_spades_led(0, 0)            # seat 0 bid Clear Skies: this trick would break it
    st[fb.S_BID + 1], st[fb.S_WON + 1] = 2, 0
    assert fb.heuristic_card(st, 1, legal) == parse_card("10S")     # heuristic: win it
    set_knob(st, 1, fb.K_SPOIL, 2)           # needs 2 <= 9 tricks after this - 2: give it away
    assert fb.heuristic_card(st, 1, legal) == parse_card("2S")
    set_knob(st, 1, fb.K_SPOIL, 4)           # 2 <= 9 - 4: still
    assert fb.heuristic_card(st, 1, legal) == parse_card("2S")
    st[fb.S_BID + 1] = 6                     # needs 6 > 9 - 4: cannot afford to
    assert fb.heuristic_card(st, 1, legal) == parse_card("10S")
    st = nine_of_spades_led(1, 0)            # the holder still wants a trick: no spoiling
    st[fb.S_BID + 1], st[fb.S_WON + 1] = 2, 0
    set_knob(st, 1, fb.K_SPOIL, 0)
    assert fb.heuristic_card(st, 1, legal) == parse_card("10S")
    st = nine_of_spades_led(0, 0)            # no losing card: it must win anyway
    st[fb.S_BID + 1], st[fb.S_WON + 1] = 2, 0
    set_knob(st, 1, fb.K_SPOIL, 0)
    assert fb.heuristic_card(st, 1, hand("10S", "AS")) == parse_card("10S")


def test_want_high_wins_with_the_highest_card_unless_last_to_play():
    legal = hand("2S", "10S", "AS")
    st = nine_of_spades_led(3, 0)
    st[fb.S_BID + 1], st[fb.S_WON + 1] = 2, 0
    set_knob(st, 1, fb.K_WANT_HIGH, 1)
    assert fb.heuristic_card(st, 1, legal) == parse_card("AS")      # seats 2 and 3 still to play
    st[fb.S_LEADER] = 2                      # seat 1 plays last to a trick led by seat 2
    assert fb.heuristic_card(st, 1, legal) == parse_card("10S")


def test_forced_win_strongest_two_sheds_the_high_card_only_when_last():
    legal = hand("10S", "AS")                # every legal card beats the 9
    st = nine_of_spades_led(3, 0)
    st[fb.S_BID + 1], st[fb.S_WON + 1] = 0, 0       # Clear Skies: ducking
    assert fb.heuristic_card(st, 1, legal) == parse_card("10S")     # heuristic: the weakest
    set_knob(st, 1, fb.K_FORCED_WIN, 2)
    assert fb.heuristic_card(st, 1, legal) == parse_card("10S")     # seats 2, 3 may overtake
    st[fb.S_LEADER] = 2
    assert fb.heuristic_card(st, 1, legal) == parse_card("AS")      # last: the trick is its own
    set_knob(st, 1, fb.K_FORCED_WIN, 1)
    st[fb.S_LEADER] = 0
    assert fb.heuristic_card(st, 1, legal) == parse_card("AS")


def test_lead_side_aces_cashes_an_ace_before_trumps():
    st = new_state(4)
    fb.start_trick(st, 0)
    st[fb.S_BID + 0], st[fb.S_WON + 0] = 3, 0
    legal = hand("AD", "AS", "2C")
    assert fb.heuristic_card(st, 0, legal) == parse_card("AD")      # heuristic: strongest
    set_knob(st, 0, fb.K_LEAD_ACES, 1)
    assert fb.heuristic_card(st, 0, legal) == parse_card("AS")
    st[fb.S_WON + 0] = 3                     # has its bid: leads low whatever the knob
    assert fb.heuristic_card(st, 0, legal) == parse_card("2C")


def test_clear_seen_halves_counts_the_clear_skies_bids_already_placed():
    # estimate: the Ace of Spades is 2 halves, nothing else counts: Clear Skies at clear_halves 2
    st = new_state(4)
    st[fb.S_HAND + 2] = hand("AS", "2S", "3S", "4H", "5H", "6H", "7C", "8C", "9C", "3D")
    set_knob(st, 2, fb.K_CLEAR_HALVES, 3)
    assert fb.seat_bid(st, 2, 10) == 0       # 2 + 1 (the low Diamond) halves <= 3
    st[fb.S_BID + 0], st[fb.S_BID + 1] = 0, 0        # two seats already bid Clear Skies
    assert fb.seat_bid(st, 2, 10) == 0       # the knob is 0: they do not count
    set_knob(st, 2, fb.K_CLEAR_SEEN, 1)      # 3 + 2 x 1 = 5 halves > 3: bid (5 + 1) // 2 = 3
    assert fb.seat_bid(st, 2, 10) == 3
    st[fb.S_BID + 1] = 2                     # one Clear Skies bid: 4 halves, bid 2
    assert fb.seat_bid(st, 2, 10) == 2


def test_extended_slack_lets_an_estimate_of_five_or_seven_be_bid_without_all_sure_tricks():
    # the knob's rule (KNOBS): an Extended bid (5, 7) needs sure tricks >= bid - extended_slack,
    # else one less. The heuristic (slack 0) bids 5 or 7 only when every trick of it is sure.
    st = new_state(3)
    # 3p hand of 13: AD KD QD AS = 4 sure (8 halves), 2D 3D = 2 halves -> 10; (10 + 1) // 2 = 5
    st[fb.S_HAND + 1] = hand("AD", "KD", "QD", "AS", "2D", "3D",
                             "4S", "5S", "6S", "4H", "5H", "4C", "5C")
    assert fb.seat_bid(st, 1, 13) == 4       # 4 sure < 5: one less (the heuristic)
    set_knob(st, 1, fb.K_EXT_SLACK, 1)       # 4 >= 5 - 1: the Extended 5
    assert fb.seat_bid(st, 1, 13) == 5
    # AD KD QD = 3 sure (6 halves), 2D..8D = 7 halves -> 13; (13 + 1) // 2 = 7, 3 sure
    st[fb.S_HAND + 2] = hand("AD", "KD", "QD", "2D", "3D", "4D", "5D", "6D", "7D", "8D",
                             "2S", "3S", "4S")
    for slack, bid in ((0, 6), (3, 6), (4, 7), (7, 7)):      # needs 3 >= 7 - slack
        set_knob(st, 2, fb.K_EXT_SLACK, slack)
        assert fb.seat_bid(st, 2, 13) == bid
    # a Standard estimate is never moved: 6 stays 6 whatever the slack (12 halves: drop 8D)
    st[fb.S_HAND + 2] = hand("AD", "KD", "QD", "2D", "3D", "4D", "5D", "6D", "7D", "9S",
                             "2S", "3S", "4S")
    assert fb.seat_bid(st, 2, 13) == 6
