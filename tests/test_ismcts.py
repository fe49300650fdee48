"""Information-set MCTS (``ismcts``, kernels/ismcts.py; forecasts-cubes and forecasts-bid): the
tree's steps on hand-made nodes, hand-built decisions, no peeking, restrictions, reproducibility,
strength."""
from __future__ import annotations

import math

import numpy as np
import pytest

from kernels import forecasts_cubes as fc
from kernels import ismcts, layout, rng
from simcli.config import jobs as cfg
from simcli.errors import SimError
from tests.helpers import cubes_search, paired_match, reproducible_rows
from tests.helpers import hand_mask as _hand

T = ismcts


def _stream(seed=3):
    keys = np.zeros(1, np.uint64)
    keys[0] = rng.stream_key(seed, 0, rng.SEARCH, 0)
    return keys, np.zeros(1, np.int64)


def _children(tree, node):
    out, c = [], tree[node, T.CHILD]
    while c >= 0:
        out.append(int(c))
        c = tree[c, T.SIB]
    return out


# ---- the tree's steps ----------------------------------------------------------------------------
def test_select_adds_only_legal_untried_actions_then_uses_ucb():
    tree = T.new_tree(10)
    keys, ctrs = _stream()
    legal = (1 << 3) | (1 << 7)
    n = 1
    made = []
    for _ in range(2):                      # two untried legal actions: both are added first
        c, n, new = T.select(tree, n, T.ROOT, legal, 0, 0.7, 10.0, keys, ctrs, 0)
        assert new
        made.append(int(tree[c, T.ACT]))
        T.backup(tree, np.array([c]), 1, np.array([5 if tree[c, T.ACT] == 3 else 2]))
    assert sorted(made) == [3, 7] and n == 3
    c, n2, new = T.select(tree, n, T.ROOT, legal, 0, 0.7, 10.0, keys, ctrs, 0)
    assert not new and n2 == n and tree[c, T.ACT] == 3      # 0.5 + bonus beats 0.2 + the same bonus
    # an action illegal in this determinisation is neither chosen nor counted available
    before = {int(tree[k, T.ACT]): int(tree[k, T.AVAIL]) for k in _children(tree, T.ROOT)}
    c, n, new = T.select(tree, n, T.ROOT, 1 << 7, 0, 0.7, 10.0, keys, ctrs, 0)
    assert tree[c, T.ACT] == 7 and not new
    after = {int(tree[k, T.ACT]): int(tree[k, T.AVAIL]) for k in _children(tree, T.ROOT)}
    assert after[7] == before[7] + 1 and after[3] == before[3]


def test_the_rollout_policys_choice_is_expanded_first():
    tree = T.new_tree(6)
    keys, ctrs = _stream()
    legal = (1 << 2) | (1 << 5) | (1 << 9)
    c, n, new = T.select(tree, 1, T.ROOT, legal, 1, 0.7, 10.0, keys, ctrs, 0, 5)
    assert new and tree[c, T.ACT] == 5 and tree[c, T.MOVER] == 1 and ctrs[0] == 0   # no draw
    c, n, new = T.select(tree, n, T.ROOT, legal, 1, 0.7, 10.0, keys, ctrs, 0, 5)
    assert new and tree[c, T.ACT] in (2, 9) and ctrs[0] == 1    # 5 is tried: a uniform draw
    c, n, new = T.select(tree, n, T.ROOT, legal, 1, 0.7, 10.0, keys, ctrs, 0, 11)   # 11 not legal
    assert new and sorted(int(tree[k, T.ACT]) for k in _children(tree, T.ROOT)) == [2, 5, 9]


def test_ucb_counts_availability_not_parent_visits():
    tree = T.new_tree(4)
    tree[1, [T.ACT, T.VISITS, T.AVAIL, T.REWARD]] = (0, 2, 4, 6)
    # 6 / (2 * 10) + 0.7 * sqrt(ln 4 / 2)
    assert T.ucb(tree, 1, 0.7, 10.0) == pytest.approx(0.3 + 0.7 * math.sqrt(math.log(4) / 2))


def test_backup_credits_each_node_with_its_movers_result():
    tree = T.new_tree(4)
    tree[1, T.MOVER], tree[2, T.MOVER], tree[3, T.MOVER] = 0, 2, 0
    T.backup(tree, np.array([1, 2, 3, 0]), 3, np.array([4, 9, 1, 0]))
    assert tree[1:4, T.REWARD].tolist() == [4, 1, 4] and tree[1:4, T.VISITS].tolist() == [1, 1, 1]


def test_most_visited_breaks_ties_by_reward_then_age():
    tree = T.new_tree(4)
    for node, act, visits, reward in ((1, 10, 5, 2), (2, 11, 5, 3), (3, 12, 4, 9)):
        tree[node, [T.ACT, T.VISITS, T.REWARD]] = (act, visits, reward)
    tree[T.ROOT, T.CHILD], tree[3, T.SIB], tree[2, T.SIB], tree[1, T.SIB] = 3, 2, 1, -1
    assert T.most_visited(tree) == 11
    tree[2, T.REWARD] = 2                   # now 10 and 11 tie: the earlier created (10)
    assert T.most_visited(tree) == 10


# ---- forecasts-cubes decisions -------------------------------------------------------------------
def _choose(kind, options, hands, cubes, t, k, round_played, red, iterations, explore=70, seed=3):
    """(pick, rollouts) of the ismcts player's decision for seat 0 (tests/helpers.cubes_search)."""
    return cubes_search(fc.P_ISMCTS, kind, options, hands, cubes, t, k, round_played, red, iterations,
                        seed, explore)


@pytest.mark.parametrize("explore", [0, 70, 200])
def test_last_move_of_a_round_takes_the_cube_that_scores(explore):
    """Seat 0 forecast Hot and won the round's last trick, led in Hearts: Cold -> Neutral
    (option 0) or Neutral -> Hot (option 1), and the round ends. From Hot 4, Neutral 1, Cold 4
    the rulebook's scoring gives 5 + 1 = 6 points for Neutral -> Hot against 4 + 1 = 5: the root
    plays both options on each of the 64 samples, and the better reward wins at any exploration
    constant."""
    played = np.zeros(4, np.int64)
    played[0] = int(fc.DECK_MASK)
    pick, rollouts = _choose(2, [1 * 2 + 0, 1 * 2 + 1], [0, 0, 0, 0], [4, 1, 4], 9, 0, played, True,
                             64, explore)
    assert pick == 1 * 2 + 1 and rollouts == 64 * 2


def test_the_forecast_that_the_round_forces_is_taken():
    """Last trick of the round, seat 0 leads its last card, 2S (black): whoever wins moves a cube
    toward Cold (Hot 4, Neutral 1, Cold 4 -> Cold gains one whatever the move), so a Cold forecast
    scores 5 + 1 and a Hot one at most 4: at the root the forecast is the decision (kind 0)."""
    played = np.zeros(4, np.int64)
    played[1] = int(fc.DECK_MASK) & ~_hand("2S", "3S", "4S", "5S")
    hands = [_hand("2S"), _hand("3S"), _hand("4S"), _hand("5S")]
    pick, _ = _choose(0, [fc.F_HOT, fc.F_COLD], hands, [4, 1, 4], 9, 0, played, False, 32)
    assert pick == fc.F_COLD


def test_ismcts_choice_does_not_depend_on_hidden_cards():
    me = _hand("AH", "10H", "2H", "9D", "5D", "3S", "4S", "7C", "8C", "2C")
    rest = [c for c in range(52) if (c % 13) not in (9, 10, 11) and not (me >> c) & 1]
    rs = np.random.default_rng(0)
    choices = set()
    for _ in range(6):
        perm = rs.permutation(rest)
        hands = [me] + [sum(1 << int(c) for c in perm[i * 10:(i + 1) * 10]) for i in range(3)]
        options = [c for c in range(52) if (me >> c) & 1]
        choices.add(_choose(1, options, hands, [4, 1, 4], 0, 0, np.zeros(4, np.int64), False, 48))
    assert len(choices) == 1, "only the hidden cards changed, so the choice must not"


def test_a_restricted_seat_never_plays_the_advisory_inside_or_outside_the_tree():
    job = cfg.resolve("forecasts-cubes", variant="advisory",
                      seats="ismcts:6:heuristic+no-advisory,ismcts:6:random+no-advisory,"
                            "ismcts:5:heuristic:0+no-advisory,ismcts:4:heuristic:300+no-advisory")
    rows = reproducible_rows(job, games=8)
    assert rows[:, layout.col_counter(4, fc.C_ADV_USES)].sum() == 0
    assert rows[:, layout.col_counter(4, fc.C_MC_ROLLOUTS)].min() > 0


@pytest.mark.parametrize("variant,players,seats", [
    ("base", 4, "ismcts:6:random,heuristic,ismcts:5:heuristic:30,mc:3:heuristic"),
    ("advisory", 3, "ismcts:8:tuned,race:4,ismcts:5:heuristic:150")])
def test_ismcts_results_are_identical_across_threads_and_chunks(variant, players, seats):
    job = cfg.resolve("forecasts-cubes", variant=variant, players=players, seats=seats)
    rows = reproducible_rows(job)
    assert rows[:, layout.col_counter(players, fc.C_MC_ROLLOUTS)].min() > 0


def test_ismcts_never_misses_a_winning_last_move():
    from tests.test_forecasts_cubes_rules import _check_game, _params, trace
    seats = np.zeros((4, 4), dtype=np.int64)
    seats[:, 0] = [fc.P_ISMCTS, fc.P_HEURISTIC, fc.P_ISMCTS, fc.P_RANDOM]
    seats[0, 1:4] = (4, fc.P_RANDOM, 70)
    seats[2, 1:4] = (6, fc.P_HEURISTIC, 30)
    for g in range(8):
        row, events = trace(_params(True), seats, 8, g)
        _check_game(4, True, 10, None, row, events)


def test_ismcts_beats_the_heuristic_on_paired_deals():
    _, d = paired_match("forecasts-cubes", "ismcts:24,heuristic,heuristic,heuristic", 60, seed=11)
    assert d["ci_low"] > 0


def test_policy_text_names_every_argument_and_refuses_bad_ones():
    job = cfg.resolve("forecasts-cubes", seats="ismcts,ismcts:32:tuned:0,heuristic,heuristic")
    assert list(job.policies[:2]) == ["ismcts:64:heuristic:30", "ismcts:32:tuned:0"]
    for bad in ("ismcts:0", "ismcts:16:mc", "ismcts:16:heuristic:-1"):
        with pytest.raises(SimError):
            cfg.resolve("forecasts-cubes", seats=f"{bad},heuristic,heuristic,heuristic")


# ---- forecasts-bid (forecasts_bid.ismcts_search) -------------------------------------------------
def _bid_ismcts(explore=30):
    """S_RACE of a forecasts-bid ismcts seat with UCB constant ``explore`` / 100."""
    from kernels import forecasts_bid as fb
    return -1 - explore


@pytest.mark.parametrize("explore", [0, 30, 150])
def test_bid_ismcts_takes_the_card_that_wins_the_game(explore):
    """The hand-built position of tests/test_forecasts_bid_mc.py (its docstring works both lines
    out by hand): in the last round AD wins the game in every sample, 2C gains more over the
    others' mean; two rounds before the end no sample ends the game and the round's value (S - 1)
    x own change minus the others' prefers 2C (+8 against -4)."""
    from tests.test_forecasts_bid_mc import search_card, winning_card_position
    for rounds_left, want in ((0, "AD"), (2, "2C")):
        st, c = winning_card_position(24, rounds_left=rounds_left)
        for seed in range(3):
            assert search_card(st, seed, search=_bid_ismcts(explore))[0] == c[want]


@pytest.mark.parametrize("players,tricks_before,seed", [(4, -1, 30), (4, 6, 37), (3, 4, 35),
                                                         (2, -1, 30), (2, 5, 36)])
def test_bid_ismcts_choice_does_not_depend_on_hidden_cards(players, tricks_before, seed):
    """Only cards the seat cannot see are moved (tests/test_forecasts_bid_mc._rehide): the samples
    are the same, so the tree and its choice must be."""
    from kernels import forecasts_bid as fb
    from tests.test_forecasts_bid_mc import MC_SEAT, _position, _rehide
    rs = np.random.default_rng(players * 10 + tricks_before)
    st, keys, ctrs = _position(players, tricks_before, seed=seed, budget=40)
    st[fb.S_RACE + MC_SEAT] = _bid_ismcts()
    S = int(st[fb.S_SEATS])
    if tricks_before < 0:
        n_opt = int(fb.max_bid(st)) + 1
    else:
        n_opt = bin(int(fb.legal_plays(st[fb.S_HAND + MC_SEAT], st[fb.S_LED_SUIT]))).count("1")
    assert n_opt > 1, "a real choice"
    choices, counts = set(), set()
    for _ in range(4):
        st2, moved = _rehide(st, rs)
        assert moved > 0
        st2 = st2.copy()
        before = int(st2[fb.S_COUNT + fb.C_MC_ROLLOUTS])
        if tricks_before < 0:
            choices.add(int(fb.mc_bid(st2, keys.copy(), ctrs.copy(), MC_SEAT, S - 1)))
        else:
            choices.add(int(fb.mc_play(st2, keys.copy(), ctrs.copy(), MC_SEAT)))
        counts.add(int(st2[fb.S_COUNT + fb.C_MC_ROLLOUTS]) - before)
    assert counts == {40 * n_opt}, "every option played once on each of the 40 samples"
    assert len(choices) == 1


@pytest.mark.parametrize("players,seats", [
    (4, "ismcts:6:random,heuristic,ismcts:5:heuristic:150,mc:3:heuristic"),
    (3, "ismcts:8:tuned,sift:4,ismcts:5:heuristic:0"),
    (2, "ismcts:6:heuristic,ismcts:4:tuned:30")])
def test_bid_ismcts_results_are_identical_across_threads_and_chunks(players, seats):
    from kernels import forecasts_bid as fb
    job = cfg.resolve("forecasts-bid", players=players, seats=seats)
    rows = reproducible_rows(job)
    S = job.seats.shape[0]
    assert rows[:, layout.col_counter(S, fb.C_MC_ROLLOUTS)].min() > 0


def test_bid_ismcts_beats_the_heuristic_on_paired_deals():
    for players in (4, 2):
        seats = ",".join(["ismcts:8"] + ["heuristic"] * (players - 1))
        _, d = paired_match("forecasts-bid", seats, 40, seed=11, players=players)
        assert d["ci_low"] > 0, players


def test_bid_ismcts_policy_text():
    from kernels import forecasts_bid as fb
    job = cfg.resolve("forecasts-bid", seats="ismcts,ismcts:32:tuned:0,heuristic,heuristic")
    assert list(job.policies[:2]) == ["ismcts:64:heuristic:30", "ismcts:32:tuned:0"]
    assert job.seats[1, 0] == fb.P_ISMCTS and job.seats[1, 3] == 0
    for bad in ("ismcts:0", "ismcts:16:mc", "ismcts:16:heuristic:-1", "ismcts:16:rival"):
        with pytest.raises(SimError):
            cfg.resolve("forecasts-bid", seats=f"{bad},heuristic,heuristic,heuristic")
