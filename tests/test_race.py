"""The raced search player (``race``, kernels/race.py, issue #26): reproducible, no search where
there is nothing to choose, and the clearly best option taken after a few samples."""
from __future__ import annotations

import numpy as np
import pytest

from kernels import forecasts_bid as fb
from kernels import forecasts_cubes as fc
from kernels import layout, race
from kernels.cards import parse_card
from simcli.config import jobs as cfg
from tests.helpers import cubes_search, reproducible_rows
from tests.helpers import hand_mask as _hand


# ---- the race itself, on hand-made sample values ---------------------------------------------
def _race(rows):
    """Feed the per-sample values ``rows`` (one row per sample, one column per option) to a race
    as the kernels do; returns (alive after each sample, pick)."""
    n = len(rows[0])
    alive, total, S, Q = race.new_race(n)
    seen = []
    for m, row in enumerate(rows, start=1):
        race.record(np.asarray(row, dtype=np.int64), alive, total, S, Q, n)
        race.prune(alive, total, S, Q, n, m, len(rows))
        seen.append(alive.copy())
    return seen, int(race.leader(alive, total, n))


def test_an_option_better_on_every_sample_wins_after_the_minimum():
    seen, pick = _race([[3, 5, 4]] * 10)
    assert pick == 1
    assert all(a.tolist() == [1, 1, 1] for a in seen[:race.RACE_MIN - 1])
    assert seen[race.RACE_MIN - 1].tolist() == [0, 1, 0]


def test_options_equal_on_every_sample_keep_the_earlier_after_race_eq():
    seen, pick = _race([[2, 2]] * race.RACE_EQ)
    assert pick == 0 and seen[-1].tolist() == [1, 0]
    assert seen[race.RACE_EQ - 2].tolist() == [1, 1]
    seen, _ = _race([[2, 2]] * 64)      # a quarter of the budget first
    assert seen[15].tolist() == [1, 0] and seen[14].tolist() == [1, 1]


def test_the_race_compares_at_growing_intervals():
    assert [m for m in range(1, 70) if race.looks_at(m)] == [4, 6, 8, 12, 16, 24, 32, 48, 64]


def test_a_noisy_small_lead_is_not_dropped():
    # option 1 leads by 1 on average, but the per-sample differences swing by +-5: z << 2.5
    rows = [[0, 6], [5, 0], [0, 6], [5, 0], [0, 6], [5, 0], [0, 6], [5, 0]]
    seen, pick = _race(rows)
    assert seen[-1].tolist() == [1, 1] and pick == 1


# ---- forecasts-cubes: hand-built decisions ----------------------------------------------------
def _cubes_choose(kind, options, hands, cubes, t, k, round_played, red, budget, seed=3):
    """(pick, rollouts) of the race player's decision for seat 0 (tests/helpers.cubes_search)."""
    return cubes_search(fc.P_RACE, kind, options, hands, cubes, t, k, round_played, red, budget, seed)


def test_cubes_last_move_of_a_round_takes_the_cube_that_scores():
    """Seat 0 forecast Hot and won the round's last trick, led in Hearts (red): its move is
    Cold -> Neutral (option 0) or Neutral -> Hot (option 1), and the round ends at once. From
    Hot 4, Neutral 1, Cold 4 the rulebook's scoring gives Hot 5 > Cold 4: 5 + 1 = 6 points
    against Hot 4 > Cold 3: 4 + 1 = 5, on every sample: the race takes Neutral -> Hot after
    RACE_MIN samples of each option (the flat search would play 2 x 64)."""
    played = np.full(4, 0, np.int64)
    allc = int(fc.DECK_MASK)
    played[0] = allc                   # every card has been played (who played it is immaterial)
    pick, rollouts = _cubes_choose(2, [1 * 2 + 0, 1 * 2 + 1], [0, 0, 0, 0], [4, 1, 4], 9, 0,
                                   played, True, 64)
    assert pick == 1 * 2 + 1
    assert rollouts == 2 * race.RACE_MIN


def test_cubes_only_one_option_plays_no_rollout():
    pick, rollouts = _cubes_choose(1, [parse_card("7H")], [_hand("7H"), _hand("2S"), _hand("3S"), _hand("4S")],
                                   [4, 1, 4], 9, 0, np.zeros(4, np.int64), False, 16)
    assert pick == parse_card("7H") and rollouts == 0


def test_cubes_interchangeable_cards_are_one_option():
    """Holding 7H and 9H with 8H already played, nobody can tell the two apart in a trick: one
    option, no rollout; with 8H still out they differ and the race samples them."""
    hands = [_hand("7H", "9H"), _hand("2S", "3S"), _hand("4S", "5S"), _hand("6S", "7S")]
    played = np.array([0, _hand("8H"), 0, 0], np.int64)
    opts = [parse_card("7H"), parse_card("9H")]
    pick, rollouts = _cubes_choose(1, opts, hands, [4, 1, 4], 8, 0, played, False, 16)
    assert pick == parse_card("7H") and rollouts == 0
    hands[1] = _hand("8H", "3S")
    _, rollouts = _cubes_choose(1, opts, hands, [4, 1, 4], 8, 0, np.zeros(4, np.int64), False, 16)
    assert rollouts >= 2 * race.RACE_MIN


# ---- forecasts-bid: the game-winning card of tests/test_forecasts_bid_mc.py ------------------
def test_bid_race_takes_the_card_that_wins_the_game_after_a_few_samples():
    from tests.test_forecasts_bid_mc import search_card, winning_card_position
    st, c = winning_card_position(64)
    for seed in range(3):
        card, s2, _ = search_card(st, seed, fb.SEARCH_RACE)
        assert card == c["AD"]
        assert s2[fb.S_COUNT + fb.C_MC_ROLLOUTS] == 2 * race.RACE_MIN   # not 2 x 64


# ---- reproducible: same seed, any threads and chunks; trace == run ---------------------------
@pytest.mark.parametrize("game,players,seats", [
    ("forecasts-cubes", 4, "race:6:random,heuristic,race:5:heuristic,mc:3:heuristic"),
    ("forecasts-bid", 4, "race:6:random,heuristic,race:5:heuristic,mc:2:heuristic"),
    ("forecasts-bid", 2, "race:5:heuristic,race:4:random"),
    ("forecasts-bid", 4, "halve:6:random,heuristic,halve:5:tuned:2,mc:2:heuristic"),
    ("forecasts-bid", 2, "halve:5:heuristic,race:4:random")])
def test_race_results_are_identical_across_threads_and_chunks(game, players, seats):
    job = cfg.resolve(game, players=players, seats=seats)
    mod = job.module
    S = job.seats.shape[0]
    a = reproducible_rows(job)
    again = np.zeros_like(a)
    mod.play_games_serial(job.params, job.seats, 9, 0, again)
    assert np.array_equal(a, again)
    assert a[:, layout.col_counter(S, mod.C_MC_ROLLOUTS)].min() > 0


@pytest.mark.parametrize("game,policy", [("forecasts-cubes", "race"), ("forecasts-bid", "halve")])
def test_race_is_labelled_and_validated_like_mc(game, policy):
    job = cfg.resolve(game, seats=f"{policy}:16,heuristic,heuristic,heuristic")
    assert job.policies[0] == f"{policy}:16:heuristic"
    from simcli.errors import SimError
    with pytest.raises(SimError, match="outside 1..4096"):
        cfg.resolve("forecasts-bid", policy=f"{policy}:0")


def test_bid_race_plays_for_the_lead_with_a_win_objective():
    """The same position two rounds before the end (tests/test_forecasts_bid_mc.py): a raced seat
    with the win-chance or margin objective plays AD, with the old objective 2C."""
    from tests.test_forecasts_bid_mc import search_card, winning_card_position
    for obj, card in ((fb.OBJ_MEAN, "2C"), (fb.OBJ_LEAD, "AD"), (fb.OBJ_WIN, "AD")):
        st, c = winning_card_position(16, rounds_left=2, objective=obj)
        assert search_card(st, 1, fb.SEARCH_RACE)[0] == c[card]
