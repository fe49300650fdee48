"""The search player (mc) in forecasts-bid: strength on paired deals, no peeking, determinism."""
from __future__ import annotations

import numpy as np
import pytest

from kernels import forecasts_bid as fb
from kernels import layout, rng
from kernels.cards import SUIT_MASK
from simcli.config import jobs as cfg
from tests.helpers import reproducible_rows


# ---- no peeking: a position reached with the kernel's phase functions, then only hidden cards
# ---- changed; the sample and the choice must not change ---------------------------------------
MC_SEAT = 0
SEARCH = np.zeros(1, dtype=np.int64)    # any array selects the phases' search branches


def _ev():
    return np.zeros((0, layout.EVENT_WIDTH), dtype=np.int64), np.zeros(1, dtype=np.int64)


def _check_tracking(st):
    """The observations are sound: shown voids are real, known cards are held."""
    for o in range(int(st[fb.S_SEATS])):
        if o == st[fb.S_RIVAL]:
            continue
        hand = int(st[fb.S_HAND + o])
        for su in range(4):
            if (int(st[fb.S_VOID + o]) >> su) & 1:
                assert hand & int(SUIT_MASK[su]) == 0
        assert int(st[fb.S_KNOWN + o]) & ~hand == 0


def _position(players, tricks_before, seed, budget=6, others=fb.P_HEURISTIC):
    """(st, keys, ctrs): round 0 of game ``seed`` with seat 0 on mc:budget:heuristic, the others
    on ``others`` (random seats buy often: cards known to be held), played on to seat 0's card in trick ``tricks_before`` (-1: its bid)."""
    S = fb.n_seats(players, None)
    st = np.empty(fb.ST_SIZE, dtype=np.int64)
    fb.init_game(st, players, 1)
    keys = np.zeros(2 * S + 2, dtype=np.uint64)
    ctrs = np.zeros(2 * S + 2, dtype=np.int64)
    for s in range(S):
        keys[s] = rng.stream_key(seed, 0, rng.SEAT, s)
        if s != st[fb.S_RIVAL]:
            st[fb.S_POLICY + s] = others
    st[fb.S_POLICY + MC_SEAT] = fb.P_MC
    st[fb.S_MCARG + 2 * MC_SEAT] = budget
    st[fb.S_MCARG + 2 * MC_SEAT + 1] = fb.P_HEURISTIC
    keys[S + 2 + MC_SEAT] = rng.stream_key(seed, 0, rng.SEARCH, MC_SEAT)
    ev, ev_n = _ev()
    st[fb.S_DEALER] = 0
    keys[S] = rng.stream_key(seed, 0, rng.DEAL, 0)
    fb.deal(st, keys, ctrs, S)
    fb.reset_tracking(st)
    if tricks_before < 0:
        for j in range(S - 1):                # seat 0 bids last (seat 0 deals round 0)
            s = int(fb.seat_from_left(st, j))
            b = fb.RIVAL_BID if s == st[fb.S_RIVAL] else int(fb.bid_choice(st, keys, ctrs, s))
            fb.apply_bid(st, s, b)
        return st, keys, ctrs
    fb.bid_phase(st, keys, ctrs, ev, ev_n, 0, SEARCH)
    fb.market_phase(st, keys, ctrs, ev, ev_n, 0, SEARCH)
    _check_tracking(st)
    if st[fb.S_RIVAL] >= 0:
        keys[S + 1] = rng.stream_key(seed, 0, rng.AUX, 0)
        st[fb.S_MKT_BUILT] = st[fb.S_MARKET]
        fb.build_rival_deck(st, keys, ctrs, S + 1)
    leader = int(fb.next_seat(st, 0))
    st[fb.S_TRICK] = 0
    for t in range(tricks_before + 1):
        fb.start_trick(st, leader)
        s = leader
        for j in range(S):
            if t == tricks_before and s == MC_SEAT:
                return st, keys, ctrs
            c = fb.mc_play(st, keys, ctrs, s) if s == MC_SEAT else fb.seat_play(st, keys, ctrs, s)
            led = int(st[fb.S_LED_SUIT])
            fb.apply_play(st, s, c)
            fb.note_play(st, s, c, j, led)
            _check_tracking(st)
            s = int(fb.next_seat(st, s))
        fb.finish_trick(st)
        leader = int(st[fb.S_BEST_SEAT])
    raise AssertionError("unreachable")


def _bits(m):
    return [c for c in range(52) if (int(m) >> c) & 1]


def _rehide(st, rs, swaps=300):
    """A copy of st with the cards seat 0 cannot see moved around at random (swaps that keep
    every observation true: hand sizes, shown voids, known bought cards, the Market cards in
    the Rival Deck's lower part); returns the copy and the number of swaps made."""
    st2 = st.copy()
    S, r, H = int(st[fb.S_SEATS]), int(st[fb.S_RIVAL]), int(st[fb.S_HAND_SIZE])
    slots = []          # (kind, where, player or -1)
    for o in range(S):
        if o not in (MC_SEAT, r):
            for c in _bits(st[fb.S_HAND + o] & ~st[fb.S_KNOWN + o]):
                slots.append(("hand", c, o))
    for i in range(int(st[fb.S_DECK_TOP]), int(st[fb.S_DECK_END])):
        slots.append(("draw", i, -1))
    for c in _bits(st[fb.S_SET_ASIDE]):
        slots.append(("aside", c, -1))
    built = int(st[fb.S_MKT_BUILT])
    if r >= 0 and st[fb.S_RIVAL_END] > 0:
        for i in range(int(st[fb.S_RIVAL_TOP]), int(st[fb.S_RIVAL_END])):
            if not (built >> int(st[fb.S_RIVAL_DECK + i])) & 1:
                slots.append(("rdeck", i, -1))
    elif r >= 0:
        for i in range(H):
            slots.append(("rdeck", i, -1))
    card = {}
    for k, (kind, w, _) in enumerate(slots):
        card[k] = w if kind in ("hand", "aside") else int(st[(fb.S_DRAW_DECK if kind == "draw" else fb.S_RIVAL_DECK) + w])
    done = 0
    for _ in range(swaps):
        a, b = rs.integers(len(slots), size=2)
        ca, cb = card[a], card[b]
        pa, pb = slots[a][2], slots[b][2]
        if pa >= 0 and (int(st[fb.S_VOID + pa]) >> (cb // 13)) & 1:
            continue
        if pb >= 0 and (int(st[fb.S_VOID + pb]) >> (ca // 13)) & 1:
            continue
        card[a], card[b] = cb, ca
        done += a != b and pa != pb
    for o in range(S):
        if o not in (MC_SEAT, r):
            st2[fb.S_HAND + o] = st[fb.S_KNOWN + o]
    st2[fb.S_SET_ASIDE] = 0
    if r >= 0 and st[fb.S_RIVAL_END] == 0:
        st2[fb.S_HAND + r] = 0
    for k, (kind, w, o) in enumerate(slots):
        c = card[k]
        if kind == "hand":
            st2[fb.S_HAND + o] |= 1 << c
        elif kind == "aside":
            st2[fb.S_SET_ASIDE] |= 1 << c
        elif kind == "draw":
            st2[fb.S_DRAW_DECK + w] = c
        else:
            st2[fb.S_RIVAL_DECK + w] = c
            if st[fb.S_RIVAL_END] == 0:
                st2[fb.S_HAND + r] |= 1 << c
    st2[fb.S_DECK:fb.S_DECK + 52] = np.random.default_rng(done).permutation(52)
    return st2, done


def _sample(st, keys, ctrs):
    S = int(st[fb.S_SEATS])
    det = np.empty(fb.ST_SIZE, dtype=np.int64)
    # as a search builds its samples: the blocks determinize leaves (the Deal's scratch, the
    # knob rows) set once per decision (init_search), then determinize
    fb.init_search(st, MC_SEAT, det, np.empty(fb.ST_SIZE, dtype=np.int64))
    scratch = ([np.empty(52, dtype=np.int64) for _ in range(3)]
               + [np.zeros(fb.CAP_SIZE, dtype=np.int64), np.empty(fb.N_LOC, dtype=np.int64)])
    fb.determinize(st, MC_SEAT, det, *scratch, keys.copy(), ctrs.copy(), S + 2 + MC_SEAT)
    return det


@pytest.mark.parametrize("players,tricks_before,others,seed", [
    (4, -1, fb.P_HEURISTIC, 30), (4, 0, fb.P_HEURISTIC, 31), (4, 6, fb.P_HEURISTIC, 37),
    (3, 4, fb.P_HEURISTIC, 35), (2, -1, fb.P_HEURISTIC, 30), (2, 5, fb.P_HEURISTIC, 36),
    # positions with shown voids and cards known to be held (bought, not yet played)
    (4, 2, fb.P_RANDOM, 3), (3, 6, fb.P_RANDOM, 3), (2, 3, fb.P_RANDOM, 3)])
def test_mc_does_not_see_hidden_cards(players, tricks_before, others, seed):
    rs = np.random.default_rng(players * 10 + tricks_before)
    st, keys, ctrs = _position(players, tricks_before, seed=seed, others=others)
    if others == fb.P_RANDOM:
        assert st[fb.S_KNOWN:fb.S_KNOWN + 4].any() and st[fb.S_VOID:fb.S_VOID + 4].any()
    legal = fb.legal_plays(st[fb.S_HAND + MC_SEAT], st[fb.S_LED_SUIT])
    assert tricks_before < 0 or bin(int(legal)).count("1") > 1, "a real choice"
    S = int(st[fb.S_SEATS])
    choices = set()
    samples = []
    for _ in range(4):
        st2, moved = _rehide(st, rs)
        assert moved > 0 and not np.array_equal(st2, st)
        samples.append(_sample(st2, keys, ctrs))
        if tricks_before < 0:
            choices.add(int(fb.mc_bid(st2.copy(), keys.copy(), ctrs.copy(), MC_SEAT, S - 1)))
        else:
            choices.add(int(fb.mc_play(st2.copy(), keys.copy(), ctrs.copy(), MC_SEAT)))
    # the sample re-deals exactly what seat 0 cannot see: it is the same whatever the hidden cards
    for det in samples[1:]:
        assert np.array_equal(det, samples[0])
    assert len(choices) == 1, "only hidden cards changed, so the choice must not"


def test_samples_keep_every_card_and_every_observation():
    for players, tricks_before, others in [(4, 3, fb.P_HEURISTIC), (3, 8, fb.P_RANDOM),
                                           (2, 2, fb.P_RANDOM), (2, -1, fb.P_HEURISTIC)]:
        st, keys, ctrs = _position(players, tricks_before, seed=7, others=others)
        for k in range(8):
            ctrs2 = ctrs.copy()
            ctrs2[int(st[fb.S_SEATS]) + 2] = 1000 * k
            det = _sample(st, keys, ctrs2)
            _check_tracking(det)
            S = int(st[fb.S_SEATS])
            for o in range(S):
                assert bin(int(det[fb.S_HAND + o])).count("1") == bin(int(st[fb.S_HAND + o])).count("1")
            assert det[fb.S_HAND + MC_SEAT] == st[fb.S_HAND + MC_SEAT]
            places = [int(det[fb.S_HAND + o]) for o in range(S)]
            places += [1 << int(det[fb.S_DRAW_DECK + i]) for i in range(int(det[fb.S_DECK_TOP]), int(det[fb.S_DECK_END]))]
            places += [int(det[fb.S_MARKET]), int(det[fb.S_WON_PILE]), int(det[fb.S_SCRAP]), int(det[fb.S_SET_ASIDE])]
            places += [1 << int(det[fb.S_PLAYED + o]) for o in range(S) if det[fb.S_PLAYED + o] >= 0]
            places += [1 << int(det[fb.S_RIVAL_DECK + i]) for i in range(int(det[fb.S_RIVAL_TOP]), int(det[fb.S_RIVAL_END]))]
            allc = 0
            for p in places:
                assert allc & p == 0
                allc |= p
            assert allc == (1 << 52) - 1


# ---- determinism ---------------------------------------------------------------------------------
@pytest.mark.parametrize("players,seats", [(4, "mc:3:random,heuristic,random,mc:2:heuristic"),
                                           (2, "mc:2:heuristic,mc:2:random")])
def test_mc_results_are_identical_across_threads_and_chunks(players, seats):
    job = cfg.resolve("forecasts-bid", players=players, seats=seats)
    S = job.seats.shape[0]
    a = reproducible_rows(job)   # also: trace == run with search seats too
    assert a[:, layout.col_counter(S, fb.C_MC_ROLLOUTS)].min() > 0
    assert a[:, layout.col_counter(S, fb.C_MC_PLAYS)].min() > 0


# ---- an immediate game-winning action (RULINGS conventions: every policy takes one) -----------
def test_mc_takes_the_card_that_wins_the_game_over_a_better_round():
    """4p, the last regular round, trick 9 of 10 (index 8): seat 1 led KH, seats 2 and 3 followed
    2H, 3H; seat 0 (mc, void in Hearts) holds AD and 2C. Every other card still in a hand is known
    (bought from the Market): seat 1 holds 3C, seat 2 AC, seat 3 4C, so the rest is forced:
    - AD: seat 0 takes this trick, leads 2C, seat 2's AC takes the last: tricks 0: 3 (bid 3, +3),
      1: 2 (bid 3, -2), 2: 5 (bid 5, +10), 3: 0 (bid 0, +5); Reputation 33, 29, 10, 5: seat 0 wins.
    - 2C: seat 1 takes this trick, seat 0's AD trumps the last: 0: 3 (+3), 1: 3 (+3), 2: 4 (-4),
      3: 0 (+5); Reputation 33, 34, -4, 5: seat 1 wins.
    The round objective ((S-1) x own change - the others' changes) prefers 2C (12 - 4 = 8 against
    12 - 13 = -1); AD wins the game in every sample, so mc must play it, whatever its objective."""
    for obj in (fb.OBJ_MEAN, fb.OBJ_LEAD, fb.OBJ_WIN):
        st, c = winning_card_position(8, objective=obj)
        for seed in range(3):
            assert search_card(st, seed)[0] == c["AD"]


# ---- the objective (mc:B:ROLLOUT:OBJECTIVE, issue #24): a seat plays to win the game ----------
@pytest.mark.parametrize("objective", [fb.OBJ_LEAD, fb.OBJ_WIN])
def test_mc_plays_for_the_lead_not_for_a_gain_over_the_mean(objective):
    """The position above two rounds before the end (round 3 of 5: two rounds follow), so no
    sample ends the game and the wins cannot decide. AD leaves Reputation 33, 29, 10, 5 (seat 0
    leads by 4); 2C leaves 33, 34, -4, 5 (seat 0 trails seat 1 by 1) but gains more over the
    others' mean (8 against -1): the old objective plays 2C, a seat that plays to win the game
    plays AD (margin over the strongest other +4 against -1; win chance under the model about
    0.64 against 0.46)."""
    for seed in range(3):
        picks = {}
        for obj in (fb.OBJ_MEAN, objective):
            st, c = winning_card_position(4, rounds_left=2, objective=obj)
            picks[obj] = search_card(st, seed)[0]
        assert picks[fb.OBJ_MEAN] == c["2C"], "the position tells the objectives apart"
        assert picks[objective] == c["AD"]


def test_objective_is_a_third_argument_and_old_labels_stay():
    """``mc:B:ROLLOUT`` keeps its label and row (objective 0, the old search); ``:1`` / ``:2``
    select the margin and win-chance objectives, for ``race`` too; 3 is the game horizon
    (test_forecasts_bid_horizon.py); a number past the last objective is refused."""
    from simcli.errors import SimError
    valid, args = fb.POLICIES, fb.POLICY_ARGS
    label, row = cfg.parse_policy("mc:16", valid, args)
    assert label == "mc:16:heuristic" and row[3] == fb.OBJ_MEAN
    label, row = cfg.parse_policy("mc:16:heuristic:0", valid, args)
    assert label == "mc:16:heuristic" and row[3] == fb.OBJ_MEAN
    label, row = cfg.parse_policy("mc:16:heuristic:2", valid, args)
    assert label == "mc:16:heuristic:2" and row[3] == fb.OBJ_WIN
    label, row = cfg.parse_policy("race:8::1", valid, args)
    assert label == "race:8:heuristic:1" and row[3] == fb.OBJ_LEAD
    with pytest.raises(SimError):
        cfg.parse_policy(f"mc:16:heuristic:{args['mc'][2][3] + 1}", valid, args)
    job = cfg.resolve("forecasts-bid", players=4, seats="mc:2:heuristic:2,heuristic,heuristic,heuristic")
    assert job.seats[0, 3] == fb.OBJ_WIN


def test_win_chance_model():
    """The win-chance value: a fair share when level, more for a larger lead, less for more
    rivals, nearer 1 / S the more rounds are left, and the Rival counts as a rival."""
    st = np.zeros(fb.ST_SIZE, dtype=np.int64)

    def chance(players, reps, k, me=0):
        fb.init_game(st, players, 1)
        for s, r in enumerate(reps):
            st[fb.S_REP + s] = r
        return fb.win_chance(st, me, k) / fb.WIN_SCALE

    assert abs(chance(4, (0, 0, 0, 0), 1) - 0.25) < 0.005
    assert abs(chance(3, (7, 7, 7), 3) - 1 / 3) < 0.005
    assert chance(4, (10, 5, 5, 5), 1) > chance(4, (10, 5, 5, 5), 4) > 0.25
    assert chance(4, (0, 10, 0, 0), 1) < chance(4, (0, 10, 0, 0), 4) < 0.25
    assert chance(4, (12, 10, 0, 0), 2) > chance(4, (12, 10, 10, 0), 2) > chance(4, (12, 10, 10, 10), 2)
    assert chance(2, (25, 0, 30), 1) < chance(2, (25, 0, 20), 1) < chance(2, (25, 0, 0), 1)
    assert chance(4, (60, -20, -20, -20), 1) > 0.999


def winning_card_position(budget, rounds_left=0, objective=0):
    """(st, card codes) of the position above, seat 0 on mc:budget:heuristic:objective, in the
    round with ``rounds_left`` regular rounds after it (0: the last)."""
    from kernels.cards import parse_card
    c = {n: parse_card(n) for n in ("KH", "2H", "3H", "AD", "2C", "3C", "AC", "4C")}
    st = np.empty(fb.ST_SIZE, dtype=np.int64)
    fb.init_game(st, 4, 1)
    S = 4
    st[fb.S_ROUND] = fb.ROUNDS[4] - 1 - rounds_left
    st[fb.S_DEALER] = st[fb.S_ROUND] % S
    st[fb.S_TRICK] = 8
    st[fb.S_TRICKS_PLAYED] = 48
    for s, (rep, bid, won) in enumerate([(30, 3, 2), (31, 3, 2), (0, 5, 4), (0, 0, 0)]):
        st[fb.S_REP + s] = rep
        st[fb.S_BID + s] = bid
        st[fb.S_WON + s] = won
        st[fb.S_POLICY + s] = fb.P_HEURISTIC
        st[fb.S_PLAYED + s] = -1
    st[fb.S_POLICY + MC_SEAT] = fb.P_MC
    st[fb.S_MCARG + 2 * MC_SEAT] = budget
    st[fb.S_MCARG + 2 * MC_SEAT + 1] = fb.P_HEURISTIC
    st[fb.S_MCOBJ + MC_SEAT] = objective
    st[fb.S_HAND + 0] = (1 << c["AD"]) | (1 << c["2C"])
    for s, n in ((1, "3C"), (2, "AC"), (3, "4C")):
        st[fb.S_HAND + s] = 1 << c[n]
        st[fb.S_KNOWN + s] = 1 << c[n]
    fb.start_trick(st, 1)
    st[fb.S_HAND + 1] |= 1 << c["KH"]
    st[fb.S_HAND + 2] |= 1 << c["2H"]
    st[fb.S_HAND + 3] |= 1 << c["3H"]
    for s, n in ((1, "KH"), (2, "2H"), (3, "3H")):
        fb.apply_play(st, s, c[n])
    # the 32 cards of the first 8 tricks and the 12 of the Draw Deck (hidden from seat 0)
    rest = [x for x in range(52) if x not in c.values()]
    won = 0
    for x in rest[:32]:
        won |= 1 << x
    st[fb.S_WON_PILE] = won
    for i, x in enumerate(rest[32:]):
        st[fb.S_DRAW_DECK + i] = x
    st[fb.S_DECK_TOP] = 0
    st[fb.S_DECK_END] = 12
    st[fb.S_MARKET] = 0
    return st, c


def search_card(st, seed, search=0):
    """Seat MC_SEAT's card in ``st`` (a copy) on its SEARCH stream of ``seed``, its search spent
    as ``search`` (S_RACE: 0 flat, fb.SEARCH_RACE, fb.SEARCH_HALVE): (card, the state after, the
    stream counters after)."""
    S = 4
    keys = np.zeros(2 * S + 2, dtype=np.uint64)
    ctrs = np.zeros(2 * S + 2, dtype=np.int64)
    keys[S + 2 + MC_SEAT] = rng.stream_key(seed, 0, rng.SEARCH, MC_SEAT)
    st = st.copy()
    st[fb.S_RACE + MC_SEAT] = search
    return int(fb.mc_play(st, keys, ctrs, MC_SEAT)), st, ctrs
