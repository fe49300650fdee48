"""The ``sift`` search player (forecasts-bid, kernels/race.py ``prune_sift``, issue #26 session 16):
race's search by schedule k; the default drops no option for being equal so far, looks from the
16th sample and, in a round that can end the game, drops only an option beaten by the same amount
on every sample; reproducible like every policy."""
from __future__ import annotations

import math

import numpy as np
import pytest

from kernels import forecasts_bid as fb
from kernels import layout, race
from simcli.config import jobs as cfg
from simcli.errors import SimError
from tests.helpers import reproducible_rows
from tests.helpers import hand_mask as _hand


def _sift(rows, k, final=False):
    """Feed the per-sample values ``rows`` (one row per sample, one column per option) to a sift
    race of schedule ``k`` as sift_search does; returns (alive after each sample, pick)."""
    n = len(rows[0])
    alive, total, _, _ = race.new_race(n)
    H = np.zeros((len(rows), n), dtype=np.int64)
    seen = []
    for m, row in enumerate(rows, start=1):
        if race.running(alive, n) > 1:
            race.record_sample(np.asarray(row, dtype=np.int64), alive, total, H, m - 1, n)
            race.prune_sift(alive, total, H, n, m, k, final)
        seen.append(alive.copy())
    return seen, int(race.leader(alive, total, n))


def test_every_schedule_has_every_column():
    n = len(race.SIFT_FIRST)
    assert all(len(col) == n for col in (race.SIFT_Z, race.SIFT_EQ, race.SIFT_C, race.SIFT_NZ,
                                         race.SIFT_FINAL, race.SIFT_DISTINCT))


def test_the_default_drops_a_clearly_worse_option_at_its_first_look_only():
    """Option 1 better by 2 on every sample: dropped at sample 16 (the first look of schedule 0),
    never before; race's own rule would drop it at sample 4."""
    seen, pick = _sift([[3, 5, 4]] * 64, 0)
    assert pick == 1
    assert all(a.tolist() == [1, 1, 1] for a in seen[:15])
    assert seen[15].tolist() == [0, 1, 0]


def test_the_default_never_drops_options_equal_so_far():
    """Equal on every sample: the default keeps both for the whole budget (the equivalence drop
    lost to mc:64); schedule 1 (race's rule at 16) drops the later one at its 16th sample."""
    seen, pick = _sift([[2, 2]] * 64, 0)
    assert pick == 0 and seen[-1].tolist() == [1, 1]
    seen, pick = _sift([[2, 2]] * 64, 1)
    assert pick == 0 and seen[15].tolist() == [1, 0] and seen[14].tolist() == [1, 1]


def test_an_option_equal_for_16_samples_and_better_later_is_found():
    """The case the equivalence drop gets wrong: option 1 equals option 0 on the first 40 samples
    and is better by 9 on the rest; the default picks it, schedule 1 has dropped it."""
    rows = [[2, 2]] * 40 + [[2, 11]] * 24
    assert _sift(rows, 0)[1] == 1
    assert _sift(rows, 1)[1] == 0


def test_in_a_round_that_can_end_the_game_the_default_drops_only_a_constant_loser():
    """Leader ahead by 4 or 6 on alternate samples: dropped at the first look (16) outside such a
    round, kept for the whole budget in it; ahead by the same amount on every sample: dropped
    at 16 in it too (no z test there: NO_Z x se is 0 only when se is)."""
    rows = [[0, 4], [0, 6]] * 32
    assert _sift(rows, 0)[0][15].tolist() == [0, 1]
    seen, pick = _sift(rows, 0, final=True)
    assert pick == 1 and seen[-1].tolist() == [1, 1]
    seen, pick = _sift([[3, 5 + race.STRIDE, 4]] * 64, 0, final=True)
    assert pick == 1 and seen[14].tolist() == [1, 1, 1] and seen[15].tolist() == [0, 1, 0]


def test_expected_loss_matches_a_numerical_integral():
    """E[max(0, -X)], X ~ N(mean, se^2), against a midpoint sum over +-12 standard deviations."""
    for mean, se in ((0.0, 1.0), (0.5, 0.567), (2.0, 0.7), (0.1, 3.0)):
        x = mean + se * (np.arange(-240000, 240000) + 0.5) / 20000.0
        dens = np.exp(-0.5 * ((x - mean) / se) ** 2) / (se * math.sqrt(2 * math.pi))
        want = float(np.sum(np.maximum(0.0, -x) * dens) * se / 20000.0)
        assert abs(race.expected_loss(mean, se) - want) < 1e-9
    assert abs(race.expected_loss(0.0, 1.0) - 1 / math.sqrt(2 * math.pi)) < 1e-15


@pytest.mark.parametrize("k", [10, 36])
def test_expected_loss_drops_only_with_enough_differing_samples(k):
    """Schedule 10 (EOC 0.25, at least 8 differing samples; 36 is 10 with distinct cards, the same
    drop rule): at sample 8 the leader is ahead by
    0.5 on average with differences +2 / -1 (t = 0.88: no z drop) and an expected loss of 0.059
    (computed by hand: 0.567 x (phi(0.88) - 0.88 x (1 - Phi(0.88))) < 0.25: dropped; with one
    of the -1 samples a 0 instead (7 differing samples) it is kept."""
    d = [2, -1, 2, -1, 2, -1, 2, -1]
    mean = 0.5
    se = math.sqrt((sum(x * x for x in d) / 8 - mean * mean) * 8 / 7 / 8)
    assert abs(race.expected_loss(mean, se) - 0.059) < 0.001
    seen, pick = _sift([[10 + x, 10] for x in d], k)
    assert pick == 0 and seen[-1].tolist() == [1, 0]
    d7 = [2, -1, 2, -1, 2, -1, 2, 0]
    seen, _ = _sift([[10 + x, 10] for x in d7], k)
    assert seen[-1].tolist() == [1, 1]


def test_schedule_39_drops_in_a_round_that_can_end_the_game_too():
    """The sample values of the test above in a round that can end the game: schedule 39 (36's
    rules in every round) drops the worse option at sample 8 by its expected loss, 36 (and 10)
    keep it for the whole budget there, since the differences are not the same on every sample;
    a win unit on one sample (WIN_WEIGHT in the value) makes se about WIN_WEIGHT / 8 and the
    expected loss far above 0.25: 39 keeps that option too."""
    d = [2, -1, 2, -1, 2, -1, 2, -1] * 8
    rows = [[10 + x, 10] for x in d]
    seen, pick = _sift(rows, 39, final=True)
    assert pick == 0 and seen[7].tolist() == [1, 0] and seen[6].tolist() == [1, 1]
    for k in (36, 10):
        seen, pick = _sift(rows, k, final=True)
        assert pick == 0 and seen[-1].tolist() == [1, 1]
    rows_win = [[10 + fb.WIN_WEIGHT, 10]] + rows[1:]
    seen, pick = _sift(rows_win, 39, final=True)
    assert pick == 0 and seen[7].tolist() == [1, 1]


# ---- forecasts-bid: the game-winning card of tests/test_forecasts_bid_mc.py ------------------
def test_sift_takes_the_card_that_wins_the_game():
    """AD wins the game, 2C loses it, on every sample (the last round): the default drops 2C at
    its first look (sample 16), schedule 1 at sample 8; the stream counter ends at base + B x
    STRIDE whatever was dropped."""
    from tests.test_forecasts_bid_mc import MC_SEAT, search_card, winning_card_position
    st, c = winning_card_position(64)
    for seed in range(2):
        card, s2, c2 = search_card(st, seed, fb.SEARCH_SIFT)
        assert card == c["AD"] and s2[fb.S_COUNT + fb.C_MC_ROLLOUTS] == 2 * 16
        assert c2[4 + 2 + MC_SEAT] == 64 * race.STRIDE
        card, s2, _ = search_card(st, seed, fb.SEARCH_SIFT + 1)
        assert card == c["AD"] and s2[fb.S_COUNT + fb.C_MC_ROLLOUTS] == 2 * 8


def test_schedules_36_and_39_play_one_of_two_alike_cards_without_search():
    """tests/test_halve.py's position (Hearts led, seat 0 void in Hearts) with seat 0 holding 8C
    and 9C: adjacent, so they win the same tricks. Schedules 36 and 39 (distinct cards) play 8C with no rollout; schedule 10 samples both for the whole budget (they score the same
    on every sample, so se = 0 and neither the z test nor the expected-loss drop ends it)."""
    from kernels.cards import parse_card
    from tests.test_forecasts_bid_mc import search_card
    from tests.test_halve import alike_cards_position
    for k in (36, 39, 10):
        st = alike_cards_position(0, rounds_left=2)
        pick, st, _ = search_card(st, 1, fb.SEARCH_SIFT + k)
        assert pick == parse_card("8C")
        assert st[fb.S_COUNT + fb.C_MC_ROLLOUTS] == (0 if k in (36, 39) else 2 * 16)


# ---- reproducible, labelled, validated ---------------------------------------------------------
@pytest.mark.parametrize("players,seats", [
    (4, "sift:6:random,heuristic,sift:17:heuristic:102,mc:2:heuristic"),
    (2, "sift:5:heuristic:1,sift:18:tuned:141")])
def test_sift_results_are_identical_across_threads_and_chunks(players, seats):
    job = cfg.resolve("forecasts-bid", players=players, seats=seats)
    S = job.seats.shape[0]
    a = reproducible_rows(job)
    again = np.zeros_like(a)
    job.module.play_games_serial(job.params, job.seats, 9, 0, again)
    assert np.array_equal(a, again)
    assert a[:, layout.col_counter(S, job.module.C_MC_ROLLOUTS)].min() > 0


def test_sift_is_labelled_and_validated():
    job = cfg.resolve("forecasts-bid", seats="sift:16,heuristic,sift:64:tuned:102,heuristic")
    assert job.policies[0] == "sift:16:heuristic" and job.policies[2] == "sift:64:tuned:102"
    assert job.seats[2, 3] == 102
    with pytest.raises(SimError, match="outside 1..4096"):
        cfg.resolve("forecasts-bid", policy="sift:0")
    with pytest.raises(SimError, match="objective 105"):
        cfg.resolve("forecasts-bid", policy="sift:16:heuristic:105")
    with pytest.raises(SimError, match="outside"):
        cfg.resolve("forecasts-bid", policy=f"sift:16:heuristic:{10 * len(race.SIFT_FIRST)}")


def test_every_path_from_policy_text_checks_the_sift_schedule(tmp_path):
    """The game's own seat check runs for --skill levels and train's opponents too, not only for
    --policy / --seats: an objective whose last digit is not 0-4 is one error line and no
    output folder (exit 2, bad input, as for --policy)."""
    from tests.helpers import invoke
    bad = "sift:8:heuristic:105"
    for args in (["run", "forecasts-bid", "--skill", f"heuristic,{bad}", "--games", "10"],
                 ["train", "forecasts-bid", "--players", "4", "--pool", f"incumbent,{bad}",
                  "--games", "10"]):
        out = tmp_path / args[0]
        r = invoke(*args, "--out", out)
        assert r.exit_code == 2, r.output
        assert "objective 105" in r.output and "Traceback" not in r.output
        assert not out.exists()


# ---- forecasts-cubes' sift (session 21): race's hand-built decisions, by schedule ------------------
def _cubes_sift(k, kind, options, hands, cubes, t, round_played, red, budget):
    """(pick, rollouts) of a forecasts-cubes ``sift`` decision of schedule ``k`` for seat 0."""
    from kernels import forecasts_cubes as fc
    from tests.helpers import cubes_search
    return cubes_search(fc.P_SIFT, kind, options, hands, cubes, t, 0, round_played, red, budget,
                        explore=k)


@pytest.mark.parametrize("k", [0, 10])
def test_cubes_sift_drops_the_move_that_scores_less_at_its_first_look(k):
    """tests/test_race.py's last move of a round (Hot 4, Neutral 1, Cold 4; seat 0 forecast Hot
    and must move a cube after a red win): Neutral -> Hot scores 5 + 1 = 6 points and Cold ->
    Neutral 4 + 1 = 5 on every sample (the rulebook's scoring). The difference is the same on
    every sample (se 0), so the schedule drops the loser at its first look: sample 16 for the
    default (SIFT_FIRST[0]), sample 8 for schedule 10, not after 64."""
    from kernels import forecasts_cubes as fc
    played = np.zeros(4, np.int64)
    played[0] = int(fc.DECK_MASK)
    pick, rollouts = _cubes_sift(k, 2, [1 * 2 + 0, 1 * 2 + 1], [0, 0, 0, 0], [4, 1, 4], 9,
                                 played, True, 64)
    assert pick == 1 * 2 + 1
    assert rollouts == 2 * race.SIFT_FIRST[k]


def test_cubes_sift_plays_interchangeable_cards_only_where_its_schedule_says():
    """Holding 7H and 9H with 8H played, the two cards take the same tricks. race plays them as
    one option; sift does so only under a schedule with SIFT_DISTINCT (3: no drop at all, one
    option, no rollout); the default (no distinct cards, no equivalence drop) samples both for
    the whole budget (every sample equal: never dropped) and keeps the earlier (7H)."""
    from kernels.cards import parse_card
    hands = [_hand("7H", "9H"), _hand("2S", "3S"), _hand("4S", "5S"), _hand("6S", "7S")]
    played = np.array([0, _hand("8H"), 0, 0], np.int64)
    opts = [parse_card("7H"), parse_card("9H")]
    assert race.SIFT_DISTINCT[3] == 1 and race.SIFT_DISTINCT[0] == 0
    assert _cubes_sift(3, 1, opts, hands, [4, 1, 4], 8, played, False, 16) == (parse_card("7H"), 0)
    pick, rollouts = _cubes_sift(0, 1, opts, hands, [4, 1, 4], 8, played, False, 16)
    assert pick == parse_card("7H") and rollouts == 2 * 16


def test_cubes_sift_is_reproducible_labelled_and_validated():
    job = cfg.resolve("forecasts-cubes", seats="sift:6:random,heuristic,sift:7:tuned:10,mc:3:heuristic")
    assert job.policies[0] == "sift:6:random" and job.policies[2] == "sift:7:tuned:10"
    assert job.seats[2, 3] == 10
    a = reproducible_rows(job)
    again = np.zeros_like(a)
    job.module.play_games_serial(job.params, job.seats, 9, 0, again)
    assert np.array_equal(a, again)
    assert a[:, layout.col_counter(4, job.module.C_MC_ROLLOUTS)].min() > 0
    with pytest.raises(SimError, match="outside"):
        cfg.resolve("forecasts-cubes", policy=f"sift:16:heuristic:{len(race.SIFT_FIRST)}")


def test_pair_stats_are_the_running_pair_sums():
    """A look's sums from the sample rows (``record_sample``, ``pair_stats``) equal the running
    sums over the samples both options ran: sum of d, of d^2, and the samples with d != 0."""
    rng = np.random.default_rng(5)
    vals = rng.integers(-3, 4, size=(40, 5)).astype(np.int64)
    alive, total, _, _ = race.new_race(5)
    H = np.zeros((40, 5), dtype=np.int64)
    for m in range(40):
        race.record_sample(vals[m], alive, total, H, m, 5)
    assert total.tolist() == vals.sum(axis=0).tolist()
    for a in range(5):
        for b in range(5):
            d = vals[:29, a] - vals[:29, b]
            assert race.pair_stats(H, 29, a, b) == (d.sum(), (d * d).sum(), (d != 0).sum())
