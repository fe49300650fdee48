"""forecasts-bid: whole games. The 52 cards stay accounted for at every step, every play is
legal, the result rows keep the game's invariants at every player count and variant, serial ==
parallel == other chunkings, trace == run, the plain-Python statement agrees game by game, and
the random policy's bids are uniform."""
from __future__ import annotations

import numpy as np
import pytest

from kernels import forecasts_bid as fb
from kernels import layout, rng
from kernels.cards import mask_cards
from tests.reference import forecasts_bid_ref as ref
from tests.helpers import without_arc

FULL = (1 << 52) - 1
SEARCH = np.zeros(1, dtype=np.int64)    # any array selects the build with the search player
SEED = 20261129
VARIANTS = [(4, True), (3, True), (2, True), (4, False), (3, False), (2, False)]


def params_of(market=True, round_cap=6, rival_check="round5"):
    params = np.zeros(len(fb.RULES), dtype=np.int64)
    params[fb.R_MARKET] = fb.MARKET_RULED if market else fb.MARKET_OFF
    params[fb.R_ROUND_CAP] = round_cap
    params[fb.R_RIVAL_CHECK] = ("round5", "final").index(rival_check)
    return params


def seats_of(players, policies):
    S = fb.n_seats(players, None)
    seats = np.zeros((S, 4), dtype=np.int64)
    for s, p in enumerate(policies):
        seats[s, 0] = fb.POLICIES[p]
    if players == 2:
        seats[2, 0] = fb.POLICIES["rival"]
    return seats


def run(players, policies, market=True, n=400, first=0, seed=SEED, serial=False, round_cap=6,
        rival_check="round5"):
    seats = seats_of(players, policies)
    S = seats.shape[0]
    out = np.zeros((n, layout.out_width(S, fb.N_COUNTERS)), dtype=np.int64)
    fn = fb.play_games_serial if serial else fb.play_games
    fn(params_of(market, round_cap, rival_check), seats, np.int64(seed), np.int64(first), out)
    return out


def counter(out, S, i):
    return out[:, layout.col_counter(S, i)]


# ---- step by step: 52 cards accounted for, every play legal ---------------------------------------
def census(st):
    """Every card in exactly one place: hands, Draw Deck, Market, completed tricks, the trick on
    the table, Rival Deck, scrap pile, set aside."""
    S = int(st[fb.S_SEATS])
    places = [int(st[fb.S_HAND + s]) for s in range(S)]
    places.append(int(fb.draw_deck_mask(st)))
    places.append(int(st[fb.S_MARKET]))
    places.append(int(st[fb.S_WON_PILE]))
    table = 0
    for s in range(S):
        if st[fb.S_PLAYED + s] >= 0:
            table |= 1 << int(st[fb.S_PLAYED + s])
    places.append(table & ~int(st[fb.S_WON_PILE]))
    rival_deck = 0
    for i in range(int(st[fb.S_RIVAL_TOP]), int(st[fb.S_RIVAL_END])):
        rival_deck |= 1 << int(st[fb.S_RIVAL_DECK + i])
    places.append(rival_deck)
    places.append(int(st[fb.S_SCRAP]))
    places.append(int(st[fb.S_SET_ASIDE]))
    assert sum(len(mask_cards(m)) for m in places) == 52, [mask_cards(m) for m in places]
    union = 0
    for m in places:
        union |= m
    assert union == FULL


def drive(players, policies, market, seed, g):
    """Play game g phase by phase with the kernel's rule functions, checking as it goes."""
    seats = seats_of(players, policies)
    S = seats.shape[0]
    st = np.empty(fb.ST_SIZE, dtype=np.int64)
    fb.init_game(st, players, 1 if market else 0)
    keys = np.zeros(S + 2, dtype=np.uint64)
    ctrs = np.zeros(S + 2, dtype=np.int64)
    for s in range(S):
        keys[s] = rng.stream_key(seed, g, rng.SEAT, s)
    for s in range(S):
        st[fb.S_POLICY + s] = seats[s, 0]
    ev = np.zeros((0, layout.EVENT_WIDTH), dtype=np.int64)
    ev_n = np.zeros(1, dtype=np.int64)
    rival = int(st[fb.S_RIVAL])
    h = int(st[fb.S_HAND_SIZE])
    while True:
        rnd = int(st[fb.S_ROUND])
        dealer = rnd % S
        st[fb.S_DEALER] = dealer
        fb.invest_phase(st, keys, ctrs, ev, ev_n, 0, None)
        for s in range(S):
            assert 0 <= st[fb.S_SPEND + s] <= fb.SPEND_MAX
        keys[S] = rng.stream_key(seed, g, rng.DEAL, rnd)
        ctrs[S] = 0
        fb.deal(st, keys, ctrs, S)
        census(st)
        fb.bid_phase(st, keys, ctrs, ev, ev_n, 0, None)
        for s in range(S):
            assert 0 <= st[fb.S_BID + s] <= h
        if rival >= 0:
            assert st[fb.S_BID + rival] == fb.RIVAL_BID
        if market:
            for j in range(S):
                s = (dealer + 1 + j) % S
                if s == rival:
                    continue
                spend = int(st[fb.S_SPEND + s])
                fb.market_turn(st, keys, ctrs, s, ev, ev_n)
                census(st)
                assert len(mask_cards(int(st[fb.S_HAND + s]))) == h        # hand count balance
                assert 0 <= st[fb.S_SPEND + s] <= spend
        if rival >= 0:
            keys[S + 1] = rng.stream_key(seed, g, rng.AUX, rnd)
            ctrs[S + 1] = 0
            fb.build_rival_deck(st, keys, ctrs, S + 1)
            assert st[fb.S_RIVAL_END] == fb.RIVAL_DECK_SIZE
            census(st)
        leader = (dealer + 1) % S
        st[fb.S_TRICK] = 0
        for _ in range(h):
            fb.start_trick(st, leader)
            for j in range(S):
                s = (leader + j) % S
                if s != rival:
                    legal = int(fb.legal_plays(st[fb.S_HAND + s], st[fb.S_LED_SUIT]))
                c = int(fb.seat_play(st, keys, ctrs, s))
                if s != rival:
                    assert (legal >> c) & 1, "illegal play"
                fb.apply_play(st, s, c)
                census(st)
            fb.finish_trick(st)
            census(st)
            leader = int(st[fb.S_BEST_SEAT])
        assert sum(int(st[fb.S_WON + s]) for s in range(S)) == h
        fb.scoring_phase(st, ev, ev_n)
        st[fb.S_ROUND] += 1
        if st[fb.S_ROUND] < st[fb.S_ROUNDS]:
            continue
        winners, sudden = fb.outcome(st)
        if not sudden:
            break
        st[fb.S_SUDDEN] = 1
        st[fb.S_CONTENDERS] = winners
    return ([int(st[fb.S_REP + s]) for s in range(S)], int(winners), int(st[fb.S_TRICKS_PLAYED]),
            st[fb.S_COUNT:fb.S_COUNT + fb.N_COUNTERS].tolist())


@pytest.mark.parametrize("players,market", VARIANTS)
@pytest.mark.parametrize("policy", ["random", "heuristic"])
def test_every_card_accounted_for_and_every_play_legal(players, market, policy):
    policies = [policy] * players
    out = run(players, policies, market, n=6)
    S = fb.n_seats(players, None)
    for g in range(6):
        reps, winners, length, counts = drive(players, policies, market, SEED, g)
        # the step-by-step game is the game play_games simulates
        assert reps == out[g, :S].tolist()
        assert winners == out[g, layout.col_winners(S)]
        assert length == out[g, layout.col_length(S)]
        kernel_counts = out[g, layout.col_counter(S, 0):layout.col_arc(S, fb.N_COUNTERS)].tolist()
        for i in range(fb.N_COUNTERS):
            if i not in (fb.C_SUDDEN, fb.C_SHARED):       # set by play_one at the end
                assert counts[i] == kernel_counts[i], fb.COUNTERS[i].name


# ---- invariants of the result rows ----------------------------------------------------------------
@pytest.mark.parametrize("players,market", VARIANTS)
@pytest.mark.parametrize("policy", ["random", "heuristic", "mixed"])
def test_result_invariants(players, market, policy):
    policies = (["random", "heuristic"] * 2)[:players] if policy == "mixed" else [policy] * players
    n = 600
    out = run(players, policies, market, n=n)
    S = fb.n_seats(players, None)
    params = params_of(market)
    lo, hi = fb.score_range(players, params)
    scores = out[:, :S]
    assert (scores >= lo).all() and (scores <= hi).all()
    h = fb.HAND_SIZE[players]
    length = out[:, layout.col_length(S)]
    rounds = length // h
    assert (length % h == 0).all()
    sudden = counter(out, S, fb.C_SUDDEN)
    assert np.array_equal(rounds, fb.ROUNDS[players] + sudden)       # one sudden-death round at most
    assert (out[:, layout.col_flags(S)] == 0).all()
    winners = out[:, layout.col_winners(S)]
    assert (winners > 0).all()
    shared = counter(out, S, fb.C_SHARED)
    popc = np.array([bin(int(w)).count("1") for w in winners])
    assert np.array_equal(shared, (popc > 1).astype(np.int64))
    bids = sum(counter(out, S, fb.C_BID + b) for b in range(fb.MAX_BID + 1))
    assert np.array_equal(bids, players * rounds)                    # the Rival's bid is not counted
    for b in range(h + 1, fb.MAX_BID + 1):                            # bids run 0 .. tricks
        assert (counter(out, S, fb.C_BID + b) == 0).all()
    classes = sum(counter(out, S, base + k) for base in fb.CLASS_BASE for k in (fb.HIT, fb.MISS))
    assert np.array_equal(classes, bids)
    # a Clear Skies hit is worth 5, an Extended hit 10 or 14
    clr_hits = counter(out, S, fb.C_CLR_HIT)
    assert np.array_equal(counter(out, S, fb.C_CLR_GAIN), 5 * clr_hits)
    ext_gain = counter(out, S, fb.C_EXT_GAIN)
    ext_hits = counter(out, S, fb.C_EXT_HIT)
    assert ((ext_gain >= 10 * ext_hits) & (ext_gain <= 14 * ext_hits)).all()
    assert (counter(out, S, fb.C_EXT_LOSS) >= 4 * counter(out, S, fb.C_EXT_MISS)).all()
    assert (counter(out, S, fb.C_STD_LOSS) >= 2 * counter(out, S, fb.C_STD_MISS)).all()
    actions = counter(out, S, fb.C_PASS) + counter(out, S, fb.C_DRAW) + counter(out, S, fb.C_BUY)
    if market:
        assert np.array_equal(actions, players * rounds)
        assert (counter(out, S, fb.C_DRAWN) >= counter(out, S, fb.C_DRAW)).all()
        assert (counter(out, S, fb.C_DRAWN) <= 3 * counter(out, S, fb.C_DRAW)).all()
        assert (counter(out, S, fb.C_BOUGHT) >= counter(out, S, fb.C_BUY)).all()
        assert (counter(out, S, fb.C_BOUGHT) <= 3 * counter(out, S, fb.C_BUY)).all()
    else:
        assert (actions == 0).all()
        # without the Market, Market Spend is never spent, so Investment is never allowed
        assert (counter(out, S, fb.C_INVEST_CHANCES) == 0).all()
    assert (counter(out, S, fb.C_INVEST) <= counter(out, S, fb.C_INVEST_CHANCES)).all()
    if players == 2:
        assert np.array_equal(counter(out, S, fb.C_RIVAL_ROUNDS), rounds)
        assert (counter(out, S, fb.C_RIVAL_HIT) <= rounds).all()
        # the Rival wins unless a player finishes strictly above it (rival_check "round5": a
        # sudden death is only played between players above the Rival, and one of them wins)
        best_player = scores[:, :2].max(axis=1)
        rival_won = (winners >> 2) & 1
        regular = sudden == 0
        assert np.array_equal(rival_won[regular] == 1, best_player[regular] <= scores[regular, 2])
        assert (rival_won[~regular] == 0).all()
    else:
        assert (counter(out, S, fb.C_RIVAL_ROUNDS) == 0).all()
    for i in range(n):
        won = [s for s in range(S) if (winners[i] >> s) & 1]
        if sudden[i] == 0 and (players != 2 or 2 not in won):
            # no sudden death: the one highest Reputation
            assert len(won) == 1 and scores[i, won[0]] == scores[i, :players].max()
            assert (scores[i, :players] == scores[i, won[0]]).sum() == 1


@pytest.mark.parametrize("players,rival_check", [(4, "round5"), (3, "round5"), (2, "round5"),
                                                 (2, "final")])
def test_sudden_death_games(players, rival_check):
    """Every sudden-death game: the winners were tied for the lead before it and are the highest
    of those after it; some games stay shared, some are decided. Rival Station: the Rival is
    checked again after it only with rival_check = "final"."""
    policies = ["heuristic"] * players
    n = 3000
    out = run(players, policies, True, n=n, rival_check=rival_check)
    S = fb.n_seats(players, None)
    idx = np.nonzero(counter(out, S, fb.C_SUDDEN))[0]
    assert len(idx) > 0
    seats = seats_of(players, policies)
    decided = shared = 0
    for g in idx[:40]:
        o = np.zeros((1, out.shape[1]), dtype=np.int64)
        ev = np.zeros((4096, layout.EVENT_WIDTH), dtype=np.int64)
        ev_n = np.zeros(1, dtype=np.int64)
        fb.trace_game(params_of(True, rival_check=rival_check), seats, np.int64(SEED), np.int64(g),
                      o, ev, ev_n)
        assert np.array_equal(o[0], out[g])
        ev = ev[: ev_n[0]]
        rounds = ev[ev[:, 0] == fb.E_ROUND]
        assert len(rounds) == fb.ROUNDS[players] + 1 and rounds[-1, 3] == 1
        # Reputation after the last regular round, from the round scores
        scores = ev[ev[:, 0] == fb.E_SCORE]
        before = {int(r[1]): int(r[6]) for r in scores if r[2] == fb.ROUNDS[players] - 1}
        players_only = [s for s in range(players)]
        top = max(before[s] for s in players_only)
        tied = [s for s in players_only if before[s] == top]
        assert len(tied) >= 2
        contenders = int(ev[ev[:, 0] == fb.E_SUDDEN][0, 2])
        assert contenders == sum(1 << s for s in tied)
        won = [s for s in range(S) if (out[g, layout.col_winners(S)] >> s) & 1]
        final = out[g, :S]
        if players == 2:
            rival_wins = rival_check == "final" and max(final[s] for s in tied) <= final[2]
            assert (won == [2]) == rival_wins
            if rival_wins:
                continue
        best = max(final[s] for s in tied)
        assert won == [s for s in tied if final[s] == best]
        if len(won) > 1:
            shared += 1
        else:
            decided += 1
    if players != 2:
        assert decided > 0 and shared > 0


def test_round_cap_ends_the_game_as_a_timeout():
    out = run(4, ["random"] * 4, True, n=50, round_cap=3)
    S = 4
    assert (out[:, layout.col_flags(S)] == layout.FLAG_TIMEOUT).all()
    assert (out[:, layout.col_winners(S)] == 0).all()
    assert (out[:, layout.col_length(S)] == 30).all()


@pytest.mark.parametrize("players,policy", [(4, "random"), (3, "random"),
                                            (4, "heuristic"), (2, "heuristic")])
def test_a_round_cap_before_the_sudden_death_is_a_timeout_without_it(players, policy):
    """round_cap = the regular rounds: a game tied for the lead after them would need a sixth
    (fifth at 3p) round, so it ends as a timeout, and no sudden-death round is ever played: the
    counter and the final events must not report one (issue #18)."""
    cap = fb.ROUNDS[players]
    n = 1500
    out = run(players, [policy] * players, True, n=n, round_cap=cap, seed=11)
    S = fb.n_seats(players, None)
    timeouts = out[:, layout.col_flags(S)] == layout.FLAG_TIMEOUT
    assert timeouts.any() and not timeouts.all()
    assert (counter(out, S, fb.C_SUDDEN) == 0).all()
    assert (out[:, layout.col_length(S)] == cap * fb.HAND_SIZE[players]).all()
    assert (out[timeouts, layout.col_winners(S)] == 0).all()
    assert (out[~timeouts, layout.col_winners(S)] > 0).all()
    seats = seats_of(players, [policy] * players)
    for g in np.nonzero(timeouts)[0][:5]:
        o = np.zeros((1, out.shape[1]), dtype=np.int64)
        ev = np.zeros((4096, layout.EVENT_WIDTH), dtype=np.int64)
        ev_n = np.zeros(1, dtype=np.int64)
        fb.trace_game(params_of(True, round_cap=cap), seats, np.int64(11), np.int64(g), o, ev,
                      ev_n)
        ev = ev[: ev_n[0]]
        assert not (ev[:, 0] == fb.E_SUDDEN).any()
        final = ev[ev[:, 0] == fb.E_RESULT]
        assert len(final) == S
        assert (final[:, 5] == 0).all() and (final[:, 6] == 1).all()   # sudden_death 0, timeout 1


# ---- seat order: the dealer rotates, bids and the first lead from the dealer's left ----------------
@pytest.mark.parametrize("players", [4, 3, 2])
def test_dealer_rotation_and_turn_order(players):
    seats = seats_of(players, ["random"] * players)
    S = seats.shape[0]
    o = np.zeros((1, layout.out_width(S, fb.N_COUNTERS)), dtype=np.int64)
    ev = np.zeros((4096, layout.EVENT_WIDTH), dtype=np.int64)
    ev_n = np.zeros(1, dtype=np.int64)
    fb.trace_game(params_of(True), seats, np.int64(SEED), np.int64(1), o, ev, ev_n)
    ev = ev[: ev_n[0]]
    for rnd in range(fb.ROUNDS[players]):
        dealer = rnd % S
        left = [(dealer + 1 + j) % S for j in range(S)]
        bids = ev[(ev[:, 0] == fb.E_BID) & (ev[:, 2] == rnd)]
        assert bids[:, 1].tolist() == left
        market = ev[(ev[:, 0] == fb.E_MARKET) & (ev[:, 2] == rnd)]
        assert market[:, 1].tolist() == [s for s in left if s != 2 or players != 2]
        plays = ev[(ev[:, 0] == fb.E_PLAY) & (ev[:, 2] == rnd)]
        assert plays[0, 1] == left[0]                               # the dealer's left leads
        tricks = ev[(ev[:, 0] == fb.E_TRICK) & (ev[:, 2] == rnd)]
        for t in range(1, len(tricks)):
            first = plays[plays[:, 3] == t][0, 1]
            assert first == tricks[t - 1, 1]                        # the winner leads next


def test_rival_trace_shows_its_deck_and_flips():
    seats = seats_of(2, ["random"] * 2)
    o = np.zeros((1, layout.out_width(3, fb.N_COUNTERS)), dtype=np.int64)
    ev = np.zeros((4096, layout.EVENT_WIDTH), dtype=np.int64)
    ev_n = np.zeros(1, dtype=np.int64)
    fb.trace_game(params_of(True), seats, np.int64(SEED), np.int64(2), o, ev, ev_n)
    ev = ev[: ev_n[0]]
    for rnd in range(5):
        deck = ev[(ev[:, 0] == fb.E_RIVAL_DECK) & (ev[:, 2] == rnd)]
        assert len(deck) == 1 and deck[0, 4] == 22
        order = ev[(ev[:, 0] == fb.E_RIVAL_ORDER) & (ev[:, 2] == rnd)]
        listed = [int(c) for c in order[:, 4:10].ravel() if c >= 0]
        assert len(listed) == 22 and sum(1 << c for c in listed) == deck[0, 3]
        flips = ev[(ev[:, 0] == fb.E_RIVAL_FLIP) & (ev[:, 2] == rnd)]
        assert len(flips) == 10
        pos = 0
        for f in flips:
            first, second, played, scrapped = (int(x) for x in f[4:8])
            assert first == listed[pos]
            pos += 1
            if second >= 0:
                assert second == listed[pos]
                pos += 1
                assert {played, scrapped} == {first, second}
            else:
                assert played == first and scrapped == -1


# ---- serial == parallel == other chunkings; trace == run -------------------------------------------
@pytest.mark.parametrize("players", [4, 3, 2])
def test_serial_parallel_and_chunks_agree(players):
    pol = (["random", "heuristic"] * 2)[:players]
    whole = run(players, pol, True, n=300, first=1000, serial=True)
    assert np.array_equal(whole, run(players, pol, True, n=300, first=1000))
    split = np.vstack([run(players, pol, True, n=111, first=1000),
                       run(players, pol, True, n=189, first=1111)])
    assert np.array_equal(whole, split)


@pytest.mark.parametrize("players", [4, 3, 2])
def test_trace_is_the_run(players):
    pol = (["heuristic", "random"] * 2)[:players]
    out = run(players, pol, True, n=8)
    seats = seats_of(players, pol)
    for g in range(8):
        o = np.zeros((1, out.shape[1]), dtype=np.int64)
        ev = np.zeros((4096, layout.EVENT_WIDTH), dtype=np.int64)
        ev_n = np.zeros(1, dtype=np.int64)
        fb.trace_game(params_of(True), seats, np.int64(SEED), np.int64(g), o, ev, ev_n)
        assert np.array_equal(o[0], out[g])
        assert 0 < ev_n[0] <= 4096
        assert set(ev[: ev_n[0], 0].tolist()) <= {e.code for e in fb.EVENTS}


@pytest.mark.parametrize("players,market", VARIANTS)
def test_both_builds_play_the_same_games_without_search_seats(players, market):
    # play_games compiles play_one without the search player for a job without mc seats
    # (search None); the build with it must play the same games, event for event
    seats = seats_of(players, (["random", "heuristic"] * 2)[:players])
    prm = params_of(market, round_cap=6)
    width = layout.out_width(seats.shape[0], fb.N_COUNTERS)
    a = np.zeros((200, width), dtype=np.int64)
    b = np.zeros((200, width), dtype=np.int64)
    fb._play_games_serial(prm, seats, np.int64(SEED), np.int64(300), a, None)
    fb._play_games_serial(prm, seats, np.int64(SEED), np.int64(300), b, SEARCH)
    assert np.array_equal(a, b)
    for g in (300, 301, 302):
        evs = []
        for search in (None, SEARCH):
            o = np.zeros((1, width), dtype=np.int64)
            ev = np.zeros((4096, layout.EVENT_WIDTH), dtype=np.int64)
            ev_n = np.zeros(1, dtype=np.int64)
            fb._trace_game(prm, seats, np.int64(SEED), np.int64(g), o, ev, ev_n, search)
            assert np.array_equal(o[0], a[g - 300])
            evs.append(ev[: ev_n[0]].copy())
        assert np.array_equal(evs[0], evs[1])


# ---- the plain-Python statement agrees game by game -------------------------------------------------
@pytest.mark.parametrize("players,market", VARIANTS)
@pytest.mark.parametrize("policy,n", [("random", 500), ("heuristic", 150), ("mixed", 150)])
def test_kernel_agrees_with_the_plain_statement(players, market, policy, n):
    policies = (["random", "heuristic"] * 2)[:players] if policy == "mixed" else [policy] * players
    first = 5000
    out = run(players, policies, market, n=n, first=first, seed=97)
    for i in range(n):
        row = ref.play_game(97, first + i, players, policies, market)
        assert row == without_arc(out[i], fb.N_COUNTERS).tolist(), f"game {first + i}"


@pytest.mark.parametrize("policy", ["random", "heuristic"])
def test_plain_statement_agrees_with_rival_check_final(policy):
    out = run(2, [policy] * 2, True, n=300, seed=11, rival_check="final")
    for g in range(300):
        assert ref.play_game(11, g, 2, [policy] * 2, True, rival_check="final") == without_arc(out[g], fb.N_COUNTERS).tolist()


@pytest.mark.parametrize("players,round_cap", [(3, 2), (4, 5), (3, 4), (2, 5)])
def test_plain_statement_agrees_on_a_round_cap(players, round_cap):
    pol = ["random"] * players
    out = run(players, pol, True, n=60, round_cap=round_cap, seed=3)
    for g in range(60):
        assert ref.play_game(3, g, players, pol, True, round_cap=round_cap) == without_arc(out[g], fb.N_COUNTERS).tolist()


# ---- statistics ----------------------------------------------------------------------------------
def test_random_bids_are_uniform():
    out = run(4, ["random"] * 4, True, n=2000)
    counts = np.array([counter(out, 4, fb.C_BID + b).sum() for b in range(11)], dtype=float)
    expected = counts.sum() / 11
    chi2 = ((counts - expected) ** 2 / expected).sum()
    assert chi2 < 35.56          # the 1e-4 upper critical value of chi-square at 10 df


def test_random_market_actions_are_uniform_over_the_distinct_actions():
    """The first player to act sees an empty Market, a Draw Deck of 12 and holds Market Spend 3:
    Pass, Draw 1, Draw 2, Draw 3, a quarter each (one draw over the distinct actions)."""
    seats = seats_of(4, ["random"] * 4)
    tally = np.zeros(4)
    n = 400
    for g in range(n):
        o = np.zeros((1, layout.out_width(4, fb.N_COUNTERS)), dtype=np.int64)
        ev = np.zeros((4096, layout.EVENT_WIDTH), dtype=np.int64)
        ev_n = np.zeros(1, dtype=np.int64)
        fb.trace_game(params_of(True), seats, np.int64(SEED), np.int64(g), o, ev, ev_n)
        m = ev[: ev_n[0]]
        m = m[(m[:, 0] == fb.E_MARKET) & (m[:, 2] == 0)]
        assert m[0, 3] != fb.A_BUY
        tally[0 if m[0, 3] == fb.A_PASS else int(m[0, 4])] += 1
    chi2 = ((tally - n / 4) ** 2 / (n / 4)).sum()
    assert chi2 < 21.11          # the 1e-4 upper critical value of chi-square at 3 df


def test_heuristic_hits_its_bid_more_often_than_random():
    S = 4
    rates = {}
    for pol in ("random", "heuristic"):
        out = run(4, [pol] * 4, True, n=1000)
        hits = sum(counter(out, S, base + fb.HIT).sum() for base in fb.CLASS_BASE)
        bids = sum(counter(out, S, base + k).sum() for base in fb.CLASS_BASE for k in (fb.HIT, fb.MISS))
        rates[pol] = hits / bids
    # 20000 bids each: a standard error under 0.004
    assert rates["heuristic"] > rates["random"] + 0.05


def test_derived_metrics():
    out = run(2, ["random", "heuristic"], True, n=500)
    S = 3
    sums = {c.name: int(out[:, layout.col_counter(S, i)].sum()) for i, c in enumerate(fb.COUNTERS)}
    m = fb.derived_metrics(sums, 500, 2, params_of(True))
    for k in ("standard_hit_rate", "extended_hit_rate", "clear_hit_rate",
              "standard_mean_rep_change", "market_pass_rate", "market_draw_rate",
              "market_buy_rate", "investment_rate", "sudden_death_rate", "rival_hit_rate"):
        assert k in m
    assert abs(m["market_pass_rate"] + m["market_draw_rate"] + m["market_buy_rate"] - 1) < 1e-12
    assert m["rival_hit_rate"] == sums["rival_hits"] / sums["rival_rounds"]
    assert m["clear_mean_rep_change"] == (sums["clear_gain"] - sums["clear_loss"]) / (
        sums["clear_hits"] + sums["clear_misses"])
    assert 0 <= m["investment_rate"] <= 1
