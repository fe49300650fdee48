"""pgc rules on hand-built states: every expected value below is derived by hand from the
rulebook (pgc.txt) and RULINGS.md, not from the kernel's output."""
import numpy as np
import pytest

from kernels import layout, pgc
from tests.helpers import rule_params

RANK = pgc.RANK_OF_NUMBER
KIND = {"single": pgc.K_SINGLE, "set": pgc.K_SET, "run": pgc.K_RUN}
TYPE = {"lead": pgc.A_LEAD, "overwrite": pgc.A_OVERWRITE, "add": pgc.A_ADD}


def params(**rules):
    return rule_params(pgc, **rules)


def kind_of(numbers):
    if len(numbers) == 1:
        return "single"
    return "set" if len(set(numbers)) == 1 else "run"


def state(players, hands, central=(), to_act=0, last=None, passed=(), reserve=None, scores=None):
    """A mid-trick state: hands are lists of numbers; ``central`` the Central Meld's numbers."""
    st = pgc.new_state(players)
    for s, cards in enumerate(hands):
        for n in cards:
            st[pgc.HAND + s * pgc.N_RANKS + RANK[n]] += 1
        st[pgc.N_HELD + s] = len(cards)
    if reserve is not None:
        for s, cards in enumerate(reserve):
            if cards is None:
                continue
            for n in cards:
                st[pgc.RESERVE + s * pgc.N_RANKS + RANK[n]] += 1
            st[pgc.RESERVE_ON + s] = 1
    if central:
        st[pgc.S_C_KIND] = KIND[kind_of(central)]
        st[pgc.S_C_LOW] = RANK[min(central)]
        st[pgc.S_C_SIZE] = len(central)
        st[pgc.S_LAST] = (to_act - 1) % players if last is None else last
    for s in passed:
        st[pgc.PASSED + s] = 1
        st[pgc.S_N_PASSED] += 1
    if scores is not None:
        for s, v in enumerate(scores):
            st[pgc.SCORE + s] = v
    st[pgc.S_TO_ACT] = to_act
    return st


def action(typ, numbers=()):
    """``numbers`` is the meld played (Lead/Overwrite) or the Central Meld after an Add."""
    if typ == "pass":
        return pgc.A_PASS
    numbers = sorted(numbers)
    return pgc.pack_action(TYPE[typ], KIND[kind_of(numbers)], RANK[numbers[0]], len(numbers))


def decode(a):
    if pgc.act_type(a) == pgc.A_PASS:
        return ("pass",)
    kind, low, size = pgc.act_kind(a), pgc.act_low(a), pgc.act_size(a)
    if kind == pgc.K_RUN:
        nums = tuple(int(pgc.NUMBER[r]) for r in range(low, low + size))
    else:
        nums = (int(pgc.NUMBER[low]),) * size
    return (pgc.ACTION_NAMES[pgc.act_type(a)], nums)


def legal(st, p):
    acts = np.zeros(pgc.MAX_ACTIONS, dtype=np.int64)
    n = pgc.legal_actions(st, p, acts)
    return [decode(a) for a in acts[:n]]


def hand_of(st, seat):
    return sorted(int(pgc.NUMBER[r]) for r in range(pgc.N_RANKS)
                  for _ in range(st[pgc.HAND + seat * pgc.N_RANKS + r]))


P0 = params()


# ---- melds and the Lead -----------------------------------------------------------------------
def test_lead_offers_every_single_set_and_run_and_no_run_across_6_or_10():
    st = state(4, [[1, 1, 2, 3, 5, 7, 8, 9, 11], [4], [4], [4]])
    got = legal(st, P0)
    singles = [("lead", (n,)) for n in (1, 2, 3, 5, 7, 8, 9, 11)]
    sets = [("lead", (1, 1))]
    runs = [("lead", m) for m in [(1, 2), (1, 2, 3), (2, 3), (7, 8), (7, 8, 9), (8, 9)]]
    assert got == singles + sets + runs          # canonical order: kind, low, size
    assert ("lead", (5, 7)) not in got and ("lead", (9, 11)) not in got
    assert ("pass",) not in got                  # a leader never passes


def test_lead_sets_of_two_and_three_but_never_four():
    st = state(4, [[4, 4, 4, 4], [1], [1], [1]])
    assert legal(st, P0) == [("lead", (4,)), ("lead", (4, 4)), ("lead", (4, 4, 4))]


def test_rulebook_example_sonny_leads_run_2_3_4():
    st = state(4, [[2, 3, 4, 9], [1], [1], [1]])
    cause = pgc.apply_action(st, P0, action("lead", [2, 3, 4]))
    assert cause == pgc.T_ON
    assert (st[pgc.S_C_KIND], st[pgc.S_C_LOW], st[pgc.S_C_SIZE]) == (pgc.K_RUN, RANK[2], 3)
    assert hand_of(st, 0) == [9]
    assert st[pgc.S_TO_ACT] == 1


# ---- strength and Overwrite -------------------------------------------------------------------
def overwrites(st, p):
    return [a for a in legal(st, p) if a[0] == "overwrite"]


def test_single_and_set_overwrite_needs_a_higher_number():
    st = state(4, [[4, 5, 7, 15], [1], [1], [1]], central=[5], to_act=0)
    assert overwrites(st, P0) == [("overwrite", (7,)), ("overwrite", (15,))]
    st = state(4, [[2, 2, 3, 3, 9, 9], [1], [1], [1]], central=[3, 3])
    assert overwrites(st, P0) == [("overwrite", (9, 9))]


def test_the_lower_run_is_stronger_and_switch_reverses_it():
    hand = [1, 2, 3, 4, 5, 12, 13, 14]
    st = state(4, [hand, [1], [1], [1]], central=[3, 4, 5])
    assert overwrites(st, P0) == [("overwrite", (1, 2, 3)), ("overwrite", (2, 3, 4))]
    st = state(4, [hand, [1], [1], [1]], central=[3, 4, 5])
    assert overwrites(st, params(run_order="high")) == [("overwrite", (12, 13, 14))]


def test_overwrite_is_same_type_and_equal_size_only_in_the_base_game():
    hand = [2, 3, 4, 7, 7, 7, 8, 15]
    st = state(4, [hand, [1], [1], [1]], central=[1, 1])
    # a run of 2 does not beat a set of 2; 3 cards do not beat 2; (7,7) does
    assert overwrites(st, P0) == [("overwrite", (7, 7))]


def test_rulebook_example_autumn_pgc_overwrite_run_onto_a_pair():
    hand = [2, 3, 4, 9]
    st = state(4, [hand, [1], [1], [1]], central=[1, 1])
    p = params(overwrite_up=True)
    assert ("overwrite", (2, 3, 4)) in overwrites(st, p)
    cause = pgc.apply_action(st, p, action("overwrite", [2, 3, 4]))
    assert cause == pgc.T_ON
    assert (st[pgc.S_C_KIND], st[pgc.S_C_LOW], st[pgc.S_C_SIZE]) == (pgc.K_RUN, RANK[2], 3)


def test_pgc_overwrite_any_larger_meld_beats_a_single_but_smaller_never():
    hand = [1, 1, 2, 9]
    st = state(4, [hand, [1], [1], [1]], central=[15])
    got = overwrites(st, params(overwrite_up=True))
    assert got == [("overwrite", (1, 1)), ("overwrite", (1, 2))]   # no single beats 15
    st = state(4, [[12, 13, 14, 15], [1], [1], [1]], central=[1, 1, 1])
    assert overwrites(st, params(overwrite_up=True)) == []        # 3 -> 3 must be a stronger set


def test_no_overwrite_onto_four_or_more_cards():
    # 5 players: a set of 4 made by Adds stays in play (a set ends at 5 there)
    st = state(5, [[9, 9, 9, 9, 7], [1], [1], [1], [1]], central=[5, 5, 5, 5])
    got = legal(st, params(overwrite_up=True))
    assert [a for a in got if a[0] == "overwrite"] == []
    assert got == [("pass",)]
    st = state(4, [[2, 3, 4, 5, 9], [1], [1], [1]], central=[1, 2, 3, 4])
    got = legal(st, params(overwrite_up=True))
    assert got == [("add", (1, 2, 3, 4, 5)), ("pass",)]


# ---- Add ------------------------------------------------------------------------------------
def adds(st, p=P0):
    return [a for a in legal(st, p) if a[0] == "add"]


def test_add_a_single_onto_a_set_and_a_set_onto_a_single():
    st = state(4, [[5, 9], [1], [1], [1]], central=[5, 5])
    assert adds(st) == [("add", (5, 5, 5))]
    st = state(4, [[7, 7, 2], [1], [1], [1]], central=[7])
    # 7,7 onto 7 -> set of 3; one 7 -> set of 2; 7 alone cannot make a run with 8 or 5
    assert adds(st) == [("add", (7, 7)), ("add", (7, 7, 7))]


def test_add_a_run_onto_a_single_at_most_three_cards():
    st = state(4, [[1, 2, 4, 5], [1], [1], [1]], central=[3])
    expected = [(2, 3), (1, 2, 3), (2, 3, 4), (1, 2, 3, 4), (2, 3, 4, 5), (3, 4), (3, 4, 5)]
    # ordered by lowest number then size; (1,2,3,4,5) would add 4 cards: refused
    expected = sorted(expected, key=lambda m: (m[0], len(m)))
    assert adds(st) == [("add", m) for m in expected]


def test_add_onto_a_run_at_either_end_or_both_at_once():
    st = state(4, [[1, 5], [1], [1], [1]], central=[2, 3, 4])
    assert adds(st) == [("add", (1, 2, 3, 4)), ("add", (1, 2, 3, 4, 5)), ("add", (2, 3, 4, 5))]
    cause = pgc.apply_action(st, P0, action("add", [1, 2, 3, 4, 5]))
    assert cause == pgc.T_FULL_RUN
    assert hand_of(st, 0) == []


def test_run_onto_a_set_and_set_onto_a_run_are_refused():
    st = state(4, [[4, 5, 9], [1], [1], [1]], central=[4, 4])
    assert adds(st) == [("add", (4, 4, 4))]       # not 4,4 + 4,5
    st = state(4, [[4, 4, 9], [1], [1], [1]], central=[2, 3])
    assert adds(st) == [("add", (2, 3, 4))]       # not 2,3 + 4,4


def test_no_add_across_the_missing_6_and_10():
    st = state(4, [[7, 3], [1], [1], [1]], central=[4, 5])
    assert adds(st) == [("add", (3, 4, 5))]
    st = state(4, [[11], [1], [1], [1]], central=[8, 9])
    assert adds(st, params(eight_rule="none")) == []


# ---- the four trick endings and who leads next -------------------------------------------------
def test_all_but_one_passing_ends_the_trick_and_the_last_player_leads():
    st = state(4, [[3, 9], [1, 15], [5, 12], [2, 13]])
    p = P0
    pgc.apply_action(st, p, action("lead", [3]))
    assert pgc.apply_action(st, p, pgc.A_PASS) == pgc.T_ON           # seat 1 passes
    assert pgc.apply_action(st, p, action("overwrite", [5])) == pgc.T_ON   # seat 2
    assert pgc.apply_action(st, p, pgc.A_PASS) == pgc.T_ON           # seat 3
    assert st[pgc.S_TO_ACT] == 0
    assert pgc.apply_action(st, p, pgc.A_PASS) == pgc.T_PASSES       # seat 0: 3 of 4 passed
    assert st[pgc.S_TO_ACT] == 2 and st[pgc.S_C_SIZE] == 0
    assert all(st[pgc.PASSED + s] == 0 for s in range(4))


def test_a_passed_player_is_skipped_until_the_trick_ends():
    st = state(4, [[3, 9, 14], [1, 15], [5, 12], [7, 13]])
    p = P0
    pgc.apply_action(st, p, action("lead", [3]))
    pgc.apply_action(st, p, pgc.A_PASS)                              # seat 1 passes
    pgc.apply_action(st, p, action("overwrite", [5]))                # seat 2
    pgc.apply_action(st, p, action("overwrite", [7]))                # seat 3
    pgc.apply_action(st, p, action("overwrite", [9]))                # seat 0
    assert st[pgc.S_TO_ACT] == 2                                     # seat 1 skipped
    got = legal(st, p)
    assert got == [("overwrite", (12,)), ("pass",)]
    # without the lock-out, seat 1 may come back in
    st = state(4, [[3, 9, 14], [1, 15], [5, 12], [7, 13]])
    q = params(pass_locks_out=False)
    pgc.apply_action(st, q, action("lead", [3]))
    pgc.apply_action(st, q, pgc.A_PASS)
    pgc.apply_action(st, q, action("overwrite", [5]))
    pgc.apply_action(st, q, action("overwrite", [7]))
    pgc.apply_action(st, q, action("overwrite", [9]))
    assert st[pgc.S_TO_ACT] == 1
    assert ("overwrite", (15,)) in legal(st, q)


def test_without_lock_out_the_trick_ends_after_everyone_else_passes_in_a_row():
    st = state(3, [[3, 9], [1, 15], [5, 12]])
    q = params(pass_locks_out=False)
    pgc.apply_action(st, q, action("lead", [3]))
    pgc.apply_action(st, q, pgc.A_PASS)                              # seat 1
    pgc.apply_action(st, q, action("overwrite", [5]))                # seat 2
    assert pgc.apply_action(st, q, pgc.A_PASS) == pgc.T_ON           # seat 0
    assert pgc.apply_action(st, q, pgc.A_PASS) == pgc.T_PASSES       # seat 1: 2 in a row
    assert st[pgc.S_TO_ACT] == 2


@pytest.mark.parametrize("players,full", [(2, 4), (3, 4), (4, 4), (5, 5), (6, 5)])
def test_an_add_completing_the_set_ends_the_trick_and_the_adder_leads(players, full):
    hands = [[9, 9, 9, 12]] + [[1, 2]] * (players - 1)
    central = [9] * (full - 3)                 # adding three 9s completes the set
    st = state(players, hands, central=central, to_act=0, last=1)
    cause = pgc.apply_action(st, P0, action("add", [9] * full))
    assert cause == pgc.T_FULL_SET
    assert st[pgc.S_TO_ACT] == 0 and st[pgc.S_C_SIZE] == 0
    if full == 5:                              # at 5-6 players a set of 4 goes on
        st = state(players, hands, central=[9], to_act=0, last=1)
        assert pgc.apply_action(st, P0, action("add", [9, 9, 9, 9])) == pgc.T_ON
        assert st[pgc.S_C_SIZE] == 4 and st[pgc.S_TO_ACT] == 1


def test_an_add_completing_a_five_card_run_ends_the_trick():
    st = state(4, [[15, 2], [1], [1], [1]], central=[11, 12, 13, 14], last=3)
    assert pgc.apply_action(st, P0, action("add", [11, 12, 13, 14, 15])) == pgc.T_FULL_RUN
    assert st[pgc.S_TO_ACT] == 0
    st = state(4, [[5, 2], [1], [1], [1]], central=[2, 3, 4], last=3)
    assert pgc.apply_action(st, P0, action("add", [2, 3, 4, 5])) == pgc.T_ON


@pytest.mark.parametrize("typ,central,play", [
    ("lead", [], [8]),
    ("lead", [], [7, 8]),
    ("overwrite", [7], [8]),
    ("overwrite", [3, 4], [7, 8]),             # with run_order = high
    ("add", [7], [7, 8]),
])
def test_rule_of_eights_ends_the_trick_and_the_player_leads(typ, central, play):
    p = params(run_order="high") if central == [3, 4] else P0
    st = state(4, [[7, 8, 12], [1], [1], [1]], central=central, last=2)
    cause = pgc.apply_action(st, p, action(typ, play))
    assert cause == pgc.T_EIGHT
    assert st[pgc.S_TO_ACT] == 0 and st[pgc.S_C_SIZE] == 0
    st = state(4, [[7, 8, 12], [1], [1], [1]], central=central, last=2)
    q = p.copy()
    q[pgc.R_EIGHT] = pgc.EIGHT_NONE
    assert pgc.apply_action(st, q, action(typ, play)) == pgc.T_ON
    assert st[pgc.S_TO_ACT] == 1


# ---- going out, the 2-player pickup, scoring, game end -----------------------------------------
def test_going_out_ends_the_round():
    st = state(3, [[4], [1, 2], [3, 15]])
    assert pgc.apply_action(st, P0, action("lead", [4])) == pgc.T_OUT
    assert st[pgc.S_OUT] == 0
    # stand-in points: 1, 2 -> 1 + 1; 3, 15 -> 1 + 3
    assert pgc.points_held(st, P0, 1) == 2 and pgc.points_held(st, P0, 2) == 4
    assert pgc.points_held(st, params(points="face"), 2) == 18
    assert pgc.points_held(st, params(points="flat"), 2) == 2


def test_two_players_pick_up_the_second_hand_at_once():
    st = state(2, [[4], [1, 2]], reserve=[[7, 7, 13], [1, 1, 2, 3, 3, 4, 4, 5, 5, 5, 2, 3]])
    assert pgc.apply_action(st, P0, action("lead", [4])) == pgc.T_ON
    assert st[pgc.S_OUT] == -1
    assert hand_of(st, 0) == [7, 7, 13] and st[pgc.N_HELD] == 3 and st[pgc.RESERVE_ON] == 0
    assert st[pgc.S_TO_ACT] == 1
    # the other player scores what remains in both hands: 1, 2 and twelve Rainy cards -> 14
    assert pgc.points_held(st, P0, 1) == 14
    # emptying the second hand goes out
    st = state(2, [[13], [1, 2]], reserve=[None, [5] * 12])
    assert pgc.apply_action(st, P0, action("lead", [13])) == pgc.T_OUT
    assert st[pgc.S_OUT] == 0


def test_two_players_emptying_the_first_hand_with_an_eight_keeps_the_lead():
    st = state(2, [[8], [1, 2]], reserve=[[3, 4], [5]])
    assert pgc.apply_action(st, P0, action("lead", [8])) == pgc.T_EIGHT
    assert st[pgc.S_TO_ACT] == 0 and hand_of(st, 0) == [3, 4]


@pytest.mark.parametrize("rules,players,scores,rnd,over", [
    ({}, 4, [19, 0, 5, 12], 3, False),
    ({}, 4, [20, 0, 5, 12], 0, True),
    ({"target": 10}, 3, [9, 9, 9], 5, False),
    ({"target": 10}, 3, [3, 10, 9], 1, True),
    ({}, 2, [40, 30], 0, False),                    # two hands: only after the second round
    ({}, 2, [0, 1], 1, True),
    ({"two_player_end": "target"}, 2, [19, 3], 1, False),
    ({"two_player_end": "target"}, 2, [21, 3], 1, True),
])
def test_game_end_at_each_threshold(rules, players, scores, rnd, over):
    p = params(**rules)
    st = state(players, [[1]] * players, scores=scores)
    st[pgc.S_ROUND] = rnd
    fixed = 2 if players == 2 and p[pgc.R_TWO_P_END] == pgc.END_TWO_HANDS else 0
    assert pgc.game_over_after(st, p, fixed, p[pgc.R_TARGET], np.array(scores)) == over


def test_fewest_points_win_and_ties_share():
    P = 4
    st = state(P, [[1]] * P, scores=[22, 7, 7, 15])
    out = np.zeros((1, layout.out_width(P, pgc.N_COUNTERS)), dtype=np.int64)
    ev = np.zeros((0, layout.EVENT_WIDTH), dtype=np.int64)
    pgc._finish(st, P, False, out, 0, ev, np.zeros(1, dtype=np.int64))
    assert out[0, :P].tolist() == [22, 7, 7, 15]
    assert out[0, P:2 * P].tolist() == [4, 1, 1, 3]
    assert out[0, layout.col_winners(P)] == 0b0110
    pgc._finish(st, P, True, out, 0, ev, np.zeros(1, dtype=np.int64))
    assert out[0, layout.col_winners(P)] == 0 and out[0, layout.col_flags(P)] == layout.FLAG_TIMEOUT


# ---- the deal chart ---------------------------------------------------------------------------
@pytest.mark.parametrize("players,extra,copies,hand,undealt", [
    (2, False, 4, 12, 4), (3, False, 4, 13, 13), (3, True, 4, 16, 4),
    (4, False, 4, 12, 4), (5, False, 5, 12, 5), (6, False, 5, 10, 5),
])
def test_deal_chart(players, extra, copies, hand, undealt):
    p = params(extra_deal=extra)
    st = pgc.new_state(players)
    deck = np.zeros(pgc.MAX_DECK, dtype=np.int64)
    keys = np.zeros(1, dtype=np.uint64)
    ctrs = np.zeros(1, dtype=np.int64)
    pgc.deal_round(st, p, 5, 9, 0, deck, keys, ctrs, 0)
    dealt = np.zeros(pgc.N_RANKS, dtype=np.int64)
    for s in range(players):
        h = st[pgc.HAND + s * 13: pgc.HAND + (s + 1) * 13]
        assert h.sum() == hand == st[pgc.N_HELD + s]
        dealt += h
        if players == 2:
            r = st[pgc.RESERVE + s * 13: pgc.RESERVE + (s + 1) * 13]
            assert r.sum() == hand and st[pgc.RESERVE_ON + s] == 1
            dealt += r
    assert (dealt <= copies).all()
    assert copies * 13 - dealt.sum() == undealt


def test_check_refuses_extra_deal_outside_three_players():
    pgc.check(3, params(extra_deal=True))
    with pytest.raises(ValueError, match="extra_deal"):
        pgc.check(4, params(extra_deal=True))


# ---- policies ---------------------------------------------------------------------------------
def choose_random(st, p, seed):
    from kernels import rng
    acts = np.zeros(pgc.MAX_ACTIONS, dtype=np.int64)
    n = pgc.legal_actions(st, p, acts)
    keys = np.array([rng.stream_key(seed, 0, rng.SEAT, s) for s in range(6)], dtype=np.uint64)
    ctrs = np.zeros(6, dtype=np.int64)
    fixed = 0
    i = pgc.random_choice(st, p, acts, n, keys, ctrs, fixed, p[pgc.R_TARGET],
                          np.zeros(6, dtype=np.int64))
    assert ctrs.sum() == 1                       # exactly one draw per decision
    return decode(acts[i])


def test_random_takes_a_game_winning_go_out():
    # seat 0 on 5 points goes out with 3,4; the others reach 20+ and hold more: game won
    hands = [[3, 4], [15, 15, 15, 15, 1], [14, 14, 14, 14, 2], [13, 13, 13, 13, 2]]
    seen = {choose_random(state(4, hands, central=[2], scores=[5, 8, 8, 8]), P0, seed)
            for seed in range(40)}
    # Add 2,3,4 goes out; nothing else is ever chosen
    assert seen == {("add", (2, 3, 4))}


def test_random_stays_uniform_when_going_out_does_not_win_the_game():
    hands = [[3, 4], [1], [2], [5]]
    seen = {choose_random(state(4, hands, central=[2], scores=[5, 8, 8, 8]), P0, seed)
            for seed in range(200)}
    assert ("add", (2, 3, 4)) in seen and ("pass",) in seen and len(seen) >= 3
    seen = {choose_random(state(4, hands, central=[2], scores=[5, 8, 8, 8]),
                          params(random_win="round"), seed) for seed in range(40)}
    assert seen == {("add", (2, 3, 4))}


def heuristic(st, p=P0):
    acts = np.zeros(pgc.MAX_ACTIONS, dtype=np.int64)
    n = pgc.legal_actions(st, p, acts)
    return decode(acts[pgc.heuristic_choice(st, p, acts, n)])


def test_heuristic_goes_out_when_it_can():
    # 2,3,4 goes out; a lone 3 or 4 would be the cheaper climb otherwise
    assert heuristic(state(4, [[3, 4], [1], [1], [1]], central=[2])) == ("add", (2, 3, 4))
    assert heuristic(state(4, [[13, 14, 15], [1], [1], [1]])) == ("lead", (13, 14, 15))


def test_heuristic_leads_a_long_low_meld_and_keeps_strong_cards():
    assert heuristic(state(4, [[1, 2, 3, 4, 15, 15], [1], [1], [1]])) == ("lead", (1, 2, 3))


def test_heuristic_ends_a_trick_with_an_add_and_does_not_break_a_set():
    st = state(4, [[9, 9, 1, 2, 12, 13, 14, 15], [1], [1], [1]], central=[9, 9])
    assert heuristic(st) == ("add", (9, 9, 9, 9))
    # overwriting a single 5 with one of a pair of 9s would split the pair, and 14 or 15
    # are kept with 4 cards left: it passes
    st = state(4, [[9, 9, 1, 14, 15], [1], [1], [1]], central=[5])
    assert heuristic(st) == ("pass",)
    # it will not spend a 14 to climb over a 12 while holding many cards
    st = state(4, [[1, 2, 3, 14, 7, 7], [1], [1], [1]], central=[12])
    assert heuristic(st) == ("pass",)


# ---- trace encoding ---------------------------------------------------------------------------
def test_trace_cards_are_written_as_their_numbers():
    assert [pgc.format_card(r * 4 + c) for r in range(13) for c in (0, 3)] == [
        str(n) for n in (1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 7, 7, 8, 8, 9, 9, 11, 11, 12, 12, 13, 13,
                         14, 14, 15, 15)]
    # five 15s (5-6 players): four in the mask, the fifth in its own mask
    st = state(5, [[15, 15, 15, 15, 15, 1]])
    m, fifth = pgc.multiset_masks(st, pgc.HAND)
    assert [pgc.format_card(b) for b in range(64) if (m >> b) & 1] == ["1"] + ["15"] * 4
    assert [pgc.format_card(b) for b in range(64) if (fifth >> b) & 1] == ["15"]
