"""The search player (mc) in pgc: strength on paired deals, no peeking, determinism."""
from __future__ import annotations

import numba
import numpy as np
import pytest

from kernels import layout, pgc, rng
from kernels.spec import MAX_KNOBS
from simcli.config import jobs as cfg
from simcli.engine import runner
from tests.helpers import rule_params

RANK = pgc.RANK_OF_NUMBER


# ---- no peeking: states equal in everything seat 0 observes, hidden cards different ------------
def _params(**rules):
    return rule_params(pgc, **rules)


def _state(P, mine, played, central, sizes, hidden_perm, reserve_size=0):
    """Seat 0 to act onto ``central`` (last played by seat P-1) holding ``mine``; ``played`` are
    the numbers played this round (the Central Meld included). The unseen cards, in the order
    ``hidden_perm``, fill the other hands at ``sizes`` and (2p) both second hands."""
    st = pgc.new_state(P)
    copies = int(pgc.COPIES[P])
    for n in mine:
        st[pgc.HAND + RANK[n]] += 1
    st[pgc.N_HELD + 0] = len(mine)
    for n in played:
        st[pgc.PLAYED + RANK[n]] += 1
    unseen = [r for r in range(pgc.N_RANKS)
              for _ in range(copies - st[pgc.HAND + r] - st[pgc.PLAYED + r])]
    unseen = [unseen[i] for i in hidden_perm]
    k = 0
    for s in range(1, P):
        for r in unseen[k:k + sizes[s - 1]]:
            st[pgc.HAND + s * pgc.N_RANKS + r] += 1
        st[pgc.N_HELD + s] = sizes[s - 1]
        k += sizes[s - 1]
    if reserve_size:
        for s in range(P):
            for r in unseen[k:k + reserve_size]:
                st[pgc.RESERVE + s * pgc.N_RANKS + r] += 1
            st[pgc.RESERVE_ON + s] = 1
            k += reserve_size
    st[pgc.S_C_KIND] = pgc.K_SINGLE if len(central) == 1 else (
        pgc.K_SET if len(set(central)) == 1 else pgc.K_RUN)
    st[pgc.S_C_LOW] = RANK[min(central)]
    st[pgc.S_C_SIZE] = len(central)
    st[pgc.S_LAST] = P - 1
    st[pgc.S_TO_ACT] = 0
    st[pgc.SCORE + 1] = 4
    return st, len(unseen)


def _decide(st, P, p, budget=16, rollout=pgc.P_HEURISTIC, seed=3):
    keys = np.zeros(2 * P + 1, dtype=np.uint64)
    ctrs = np.zeros(2 * P + 1, dtype=np.int64)
    keys[P + 1] = rng.stream_key(seed, 0, rng.SEARCH, 0)
    acts = np.zeros(pgc.MAX_ACTIONS, dtype=np.int64)
    n = pgc.legal_actions(st, p, acts)
    stat = np.zeros(2, dtype=np.int64)
    i = pgc.mc_choose(st, p, acts, n, budget, rollout, keys, ctrs, P + 1, 0, p[pgc.R_TARGET], stat)
    assert n > 2 and stat[0] == budget * n and stat[1] > 0
    return int(acts[i])


def _sample(st, P, seed=3):
    keys = np.zeros(1, dtype=np.uint64)
    ctrs = np.zeros(1, dtype=np.int64)
    keys[0] = rng.stream_key(seed, 0, rng.SEARCH, 0)
    dst = np.empty(pgc.STATE_SIZE, dtype=np.int64)
    pgc.determinize(st, 0, keys, ctrs, 0, dst, np.empty(pgc.MAX_DECK, dtype=np.int64))
    return dst


@pytest.mark.parametrize("P,mine,played,central,sizes,reserve", [
    # 4p: seat 0 played 2 cards, the others 3, 2, 1 (the 4 is the Central Meld); 4 undealt
    (4, [1, 2, 3, 3, 7, 8, 9, 9, 12, 14], [2, 5, 5, 11, 1, 1, 3, 4], [4], [9, 10, 11], 0),
    # 2p: two cards played each; both second hands (12 each) still set aside; 4 undealt
    (2, [3, 4, 5, 5, 9, 11, 12, 13, 15, 15], [1, 2, 5, 7], [7], [10], 12),
])
def test_mc_choice_does_not_depend_on_hidden_cards(P, mine, played, central, sizes, reserve):
    p = _params()
    rs = np.random.default_rng(0)
    choices = set()
    samples = []
    # the number of unseen cards is the deck minus seat 0's hand minus the cards played
    n_unseen = int(pgc.COPIES[P]) * pgc.N_RANKS - len(mine) - len(played)
    for _ in range(5):
        st, _ = _state(P, mine, played, central, sizes, list(rs.permutation(n_unseen)), reserve)
        choices.add(_decide(st, P, p))
        s = _sample(st, P)
        samples.append(s)
    assert len(choices) == 1, "only the hidden cards changed, so the choice must not"
    # stronger: the re-dealt state itself is the same whatever the hidden cards were
    assert all(np.array_equal(samples[0], s) for s in samples[1:])
    # and it is a proper re-deal: sizes kept, cards conserved
    s = samples[0]
    cards = s[pgc.HAND:pgc.HAND + P * pgc.N_RANKS].reshape(P, -1).sum(axis=0) + \
        s[pgc.RESERVE:pgc.RESERVE + P * pgc.N_RANKS].reshape(P, -1).sum(axis=0) + s[pgc.PLAYED:pgc.STATE_SIZE]
    assert (cards <= pgc.COPIES[P]).all() and cards.sum() == pgc.COPIES[P] * pgc.N_RANKS - 4  # 4 undealt
    for o in range(1, P):
        assert s[pgc.HAND + o * pgc.N_RANKS:pgc.HAND + (o + 1) * pgc.N_RANKS].sum() == sizes[o - 1]
        if reserve:
            assert s[pgc.RESERVE + o * pgc.N_RANKS:pgc.RESERVE + (o + 1) * pgc.N_RANKS].sum() == reserve
    if reserve:   # its own second hand is re-dealt too (set aside unseen)
        assert s[pgc.RESERVE:pgc.RESERVE + pgc.N_RANKS].sum() == reserve
    # the sample does follow the SEARCH stream (another seed, another re-deal)
    assert not np.array_equal(_sample(st, P, seed=4), s)
    assert list(s[pgc.HAND:pgc.HAND + pgc.N_RANKS]) == list(st[pgc.HAND:pgc.HAND + pgc.N_RANKS])


def test_mc_takes_a_going_out_play_without_searching():
    from tests.test_pgc_rules import state
    p = _params()
    # onto a single 9 seat 0 may Add one 9, Add both (going out) or Pass: it goes out
    st = state(4, [[9, 9], [1, 2], [3, 4], [5]], central=[9], to_act=0)
    keys = np.zeros(9, dtype=np.uint64)
    ctrs = np.zeros(9, dtype=np.int64)
    acts = np.zeros(pgc.MAX_ACTIONS, dtype=np.int64)
    n = pgc.legal_actions(st, p, acts)
    assert n == 3
    stat = np.zeros(2, dtype=np.int64)
    i = pgc.mc_choose(st, p, acts, n, 8, pgc.P_HEURISTIC, keys, ctrs, 5, 0, 20, stat)
    assert i == 1 and pgc.goes_out(st, acts[i]) and stat[0] == 0 and ctrs[5] == 0


def test_mc_results_are_identical_across_threads_and_chunks():
    for P, seats in ((4, "mc:4:random,heuristic,random,mc:3:heuristic"), (2, "mc:3:heuristic,mc:2:random")):
        job = cfg.resolve("pgc", players=P, seats=seats)
        width = layout.out_width(P, pgc.N_COUNTERS)
        a = np.zeros((16, width), np.int64)
        job.module.play_games_serial(job.params, job.seats, 9, 0, a)
        numba.set_num_threads(1)
        try:
            b1 = runner.play_chunk(job, 9, 0, 7).copy()
        finally:
            runner.set_threads(None)
        b2 = runner.play_chunk(job, 9, 7, 16).copy()
        assert np.array_equal(a, np.vstack([b1, b2]))
        assert a[:, layout.col_counter(P, pgc.C_MC_ROLLOUTS)].min() > 0
        assert a[:, layout.col_counter(P, pgc.C_MC_PLAYS)].min() > 0


def test_random_and_heuristic_seats_do_no_search():
    job = cfg.resolve("pgc", seats="heuristic,random,random,heuristic")
    out = runner.play_chunk(job, 9, 0, 20)
    assert (out[:, layout.col_counter(4, pgc.C_MC_ROLLOUTS)] == 0).all()
    assert (out[:, layout.col_counter(4, pgc.C_MC_PLAYS)] == 0).all()


def test_mc_counters_come_last():
    names = [c.name for c in pgc.COUNTERS]
    # the search counters come last but for the restricted-play pair (issue #15)
    assert names[-4:] == ["mc_rollouts", "mc_rollout_plays", "restriction_forbidden", "restriction_yielded"]
    assert names.index("mc_rollouts") == pgc.C_MC_ROLLOUTS and names.index("mc_rollout_plays") == pgc.C_MC_PLAYS


def test_mc_policy_label_and_seat_row():
    job = cfg.resolve("pgc", players=3, seats="mc,mc:16:random,heuristic")
    knobs = [0] * MAX_KNOBS                     # not a tuned seat: knob columns stay zero
    assert job.seats[0].tolist() == [pgc.P_MC, 64, pgc.P_HEURISTIC, 0, 0, 0] + knobs
    assert job.seats[1].tolist() == [pgc.P_MC, 16, pgc.P_RANDOM, 0, 0, 0] + knobs


# ---- mc:BUDGET:ROLLOUT:SCOPE (issue #24, session 25) -------------------------------------------
def test_mc_scope_label_seat_row_and_bad_value():
    from simcli.errors import SimError
    job = cfg.resolve("pgc", players=2, seats="mc:16:tuned:1,mc:16:tuned:0")
    assert job.policies == ["mc:16:tuned:1", "mc:16:tuned"]     # scope 0 is the default: left out
    assert job.seats[0, :4].tolist() == [pgc.P_MC, 16, pgc.P_TUNED, pgc.SCOPE_LAST_HAND]
    assert job.seats[1, :4].tolist() == [pgc.P_MC, 16, pgc.P_TUNED, pgc.SCOPE_ALL]
    with pytest.raises(SimError, match=r"scope 2 is outside 0\.\.1 \(0 every turn, 1 the last hand only\)"):
        cfg.resolve("pgc", players=2, seats="mc:16:tuned:2,tuned")


def _events_before_first_pickup(job, g):
    from tests.test_restrictions_pgc import trace
    _, ev = trace(job.params, job.seats, 5, g)
    first = next(i for i in range(len(ev)) if ev[i, 0] == pgc.E_PICKUP)
    return ev, first


@pytest.mark.parametrize("rollout", ["tuned", "random"])
def test_mc_scope_1_plays_its_rollout_policy_until_its_last_hand(rollout):
    # 2 players: until the first second hand is picked up, a table of mc:4:R:1 plays exactly as a
    # table of R (the same deal, the same seat streams); after it the seat that picked up searches
    searched = cfg.resolve("pgc", players=2, policy=f"mc:4:{rollout}:1")
    plain = cfg.resolve("pgc", players=2, policy=rollout)
    differ = 0
    for g in range(12):
        a, ia = _events_before_first_pickup(searched, g)
        b, ib = _events_before_first_pickup(plain, g)
        assert ia == ib and np.array_equal(a[:ia], b[:ib])
        differ += not np.array_equal(a, b) if len(a) == len(b) else 1
    assert differ > 0
    out = runner.play_chunk(searched, 5, 0, 12)
    assert out[:, layout.col_counter(2, pgc.C_MC_ROLLOUTS)].min() > 0


def test_mc_scope_1_is_scope_0_when_every_hand_is_the_last():
    # 3-6 players have no second hand: scope 1 searches every turn, as scope 0
    for P in (3, 4):
        one = cfg.resolve("pgc", players=P, seats=",".join(["mc:3:tuned:1"] + ["tuned"] * (P - 1)))
        zero = cfg.resolve("pgc", players=P, seats=",".join(["mc:3:tuned"] + ["tuned"] * (P - 1)))
        assert np.array_equal(runner.play_chunk(one, 4, 0, 10), runner.play_chunk(zero, 4, 0, 10))
