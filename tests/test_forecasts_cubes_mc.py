"""The search player (mc) in forecasts-cubes: strength on paired deals, no peeking, determinism."""
from __future__ import annotations

import numba
import numpy as np
import pytest

from kernels import forecasts_cubes as fc
from kernels import layout, rng
from simcli.config import jobs as cfg
from simcli.engine import runner
from tests.helpers import hand_mask as _hand


def _choice(hands, seed=3):
    """mc's card choice for seat 0 leading trick 0 of a round, with hands as given."""
    P = 4
    keys = np.zeros(2 * P + 1, dtype=np.uint64)
    ctrs = np.zeros(2 * P + 1, dtype=np.int64)
    keys[P + 1] = rng.stream_key(seed, 0, rng.SEARCH, 0)
    legal = hands[0]
    options = np.array([c for c in range(52) if (int(legal) >> c) & 1] + [0] * 3, dtype=np.int64)
    n = bin(int(legal)).count("1")
    i = fc._mc_choose(1, 0, options, n, hands, np.array([4, 1, 4], dtype=np.int64),
                      np.array([fc.F_HOT, 1, 1, 1], dtype=np.int64), np.zeros(P, np.int64), False, P, 0, 10, 0,
                      np.zeros(P, np.int64), 0, -1, -1, np.zeros(P, np.int64), np.zeros(P, np.int64), False,
                      16, fc.P_HEURISTIC, keys, ctrs, P + 1, np.zeros(2, np.int64), 0, fc.KNOB_DEFAULTS, 0, 0,
                      np.zeros(P, np.int64), np.zeros(P, np.int64), False)
    return int(options[i])


def test_mc_choice_does_not_depend_on_hidden_cards():
    me = _hand("AH", "10H", "2H", "9D", "5D", "3S", "4S", "7C", "8C", "2C")
    rest = [c for c in range(52) if (c % 13) not in (9, 10, 11) and not (int(me) >> c) & 1]
    rs = np.random.default_rng(0)
    choices = set()
    for _ in range(6):
        perm = rs.permutation(rest)
        hands = np.array([me] + [_hand(*[]) | np.int64(sum(1 << int(c) for c in perm[i * 10:(i + 1) * 10]))
                                 for i in range(3)], dtype=np.int64)
        choices.add(_choice(hands))
    assert len(choices) == 1, "only the hidden cards changed, so the choice must not"


def test_mc_results_are_identical_across_threads_and_chunks():
    job = cfg.resolve("forecasts-cubes", seats="mc:4:random,heuristic,random,mc:3:heuristic")
    width = layout.out_width(4, fc.N_COUNTERS)
    a = np.zeros((24, width), np.int64)
    job.module.play_games_serial(job.params, job.seats, 9, 0, a)
    numba.set_num_threads(1)
    b1 = runner.play_chunk(job, 9, 0, 10).copy()
    runner.set_threads(None)
    b2 = runner.play_chunk(job, 9, 10, 24).copy()
    assert np.array_equal(a, np.vstack([b1, b2]))
    assert a[:, layout.col_counter(4, fc.C_MC_ROLLOUTS)].min() > 0


def test_mc_never_misses_a_winning_last_move():
    # the traced-game checker of the rules tests also asserts that the game's last cube move
    # gives the mover the largest win share available (RULINGS: a game-winning action is taken)
    from tests.test_forecasts_cubes_rules import _check_game, _params, trace
    seats = np.zeros((4, 4), dtype=np.int64)
    seats[:, 0] = [fc.P_MC, fc.P_HEURISTIC, fc.P_MC, fc.P_RANDOM]
    seats[0, 1:3] = (2, fc.P_RANDOM)
    seats[2, 1:3] = (2, fc.P_HEURISTIC)
    for g in range(12):
        row, events = trace(_params(True), seats, 8, g)
        _check_game(4, True, 10, None, row, events)


# ---- the objective (mc:B:ROLLOUT:OBJECTIVE, session 22) ----------------------------------------
# The last trick of the game's last round, every card played: seat 0 (Hot, diamonds) has won with
# a red card and holds its Weather Advisory; seat 1 (hearts: Hot) has 20 points like seat 0, the
# same correct forecasts, no Advisory; seats 2 and 3 (spades, clubs: Cold) have 5. Cubes Hot 4,
# Neutral 2, Cold 3. By the rulebook's scoring (a cube in the forecast bucket 1 point, +1 when that
# bucket holds more than the opposite one), with Hot / Cold points after each move:
#   2 = C->N (H4 N3 C2): 5 / 2      3 = N->H (H5 N1 C3): 6 / 3
#   4 = 2 x C->N (H4 N4 C1): 5 / 1   5 = 2 x N->H (H6 N0 C3): 7 / 3
# Own points pick 5; 3 x own minus the others' (Hot, Cold, Cold) is 6, 6, 8, 8, so the mean
# objective picks 4 (the earlier of two equal); a single move keeps the Advisory, the third
# tie-break, so only a single move wins the game outright (a double ties with seat 1).
_LAST_PLAYED = tuple(_hand(*[f"{r}{s}" for r in ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10")])
                     for s in ("D", "H", "S", "C"))


def _last_move(objective, last_round=True):
    from tests.helpers import cubes_search
    pick, _ = cubes_search(fc.P_MC, 2, [2, 3, 4, 5], [0, 0, 0, 0], (4, 2, 3), 9, 0, _LAST_PLAYED,
                           True, 4, explore=objective, adv_left=(1, 0, 0, 0), advisory=True,
                           score=(20, 20, 5, 5), correct=(3, 3, 0, 0), last_round=last_round)
    return pick


def test_the_position_s_forecasts_are_what_the_comment_says():
    kn = fc.KNOB_DEFAULTS
    got = [fc.knob_forecast(h, kn[fc.K_FC_BIAS], kn[fc.K_FC_MIN], kn[fc.K_FC_COUNT]) for h in _LAST_PLAYED]
    assert got[1:] == [fc.F_HOT, fc.F_COLD, fc.F_COLD]


def test_own_points_objective_takes_the_most_points():
    assert _last_move(fc.OBJ_OWN) == 5


def test_mean_objective_weighs_the_other_seats_points():
    assert _last_move(fc.OBJ_MEAN) == 4
    assert _last_move(fc.OBJ_WIN, last_round=False) == 4, "before the last round: as the mean"


def test_win_objective_keeps_the_advisory_that_breaks_the_tie():
    assert _last_move(fc.OBJ_WIN) == 2


def test_objective_0_is_mc_as_before_and_an_unknown_one_is_refused():
    width = layout.out_width(4, fc.N_COUNTERS)
    rows = []
    for seats in ("mc:3:tuned,heuristic,mc:2:heuristic,random",
                  "mc:3:tuned:0,heuristic,mc:2:heuristic:0,random",
                  "mc:3:tuned:2,heuristic,mc:2:heuristic:1,random"):
        job = cfg.resolve("forecasts-cubes", seats=seats)
        a = np.zeros((6, width), np.int64)
        job.module.play_games_serial(job.params, job.seats, 4, 0, a)
        rows.append(a)
    assert np.array_equal(rows[0], rows[1])
    assert cfg.resolve("forecasts-cubes", seats="mc:3:tuned,heuristic,heuristic,heuristic").seats[0, 3] \
        == fc.OBJ_OWN, "the default objective is own round points"
    # the argument reaches the search: another objective plays other games on the same deals
    assert not np.array_equal(rows[0], rows[2])
    with pytest.raises(ValueError, match="objective"):
        cfg.resolve("forecasts-cubes", seats="mc:3:tuned:3,heuristic,heuristic,heuristic")


def test_objective_seats_play_by_the_rules_and_take_a_winning_last_move():
    from tests.test_forecasts_cubes_rules import _check_game, _params, trace
    seats = np.zeros((4, 4), dtype=np.int64)
    seats[:, 0] = [fc.P_MC, fc.P_HEURISTIC, fc.P_MC, fc.P_MC]
    seats[0, 1:4] = (2, fc.P_HEURISTIC, fc.OBJ_WIN)
    seats[2, 1:4] = (2, fc.P_TUNED, fc.OBJ_MEAN)
    seats[3, 1:4] = (2, fc.P_RANDOM, fc.OBJ_WIN)
    for g in range(8):
        row, events = trace(_params(True), seats, 5, g)
        _check_game(4, True, 10, None, row, events)


# ---- the search's fast paths (session 24): the same answers, or the same distribution -----------
def test_knob_move_fast_is_knob_move_n_in_every_position():
    # every cube position, colour, forecast, knob setting and legal-move set a seat can face,
    # including the ones a restriction leaves (restrict_moves never leaves no single and no double)
    for hot in range(fc.N_CUBES + 1):
        for cold in range(fc.N_CUBES + 1 - hot):
            neutral = fc.N_CUBES - hot - cold
            for red in (False, True):
                all1 = fc.legal_cube_moves(hot, neutral, cold, red, 1)
                all2 = fc.legal_cube_moves(hot, neutral, cold, red, 2)
                for singles in {all1, all1 & 1, all1 & 2, 0}:
                    for doubles in {0, all2, all2 & 1, all2 & 2}:
                        if singles == 0 and doubles == 0:
                            continue
                        for forecast in (fc.F_HOT, fc.F_COLD):
                            for gain in (-4, 0, 1, 2, 99):
                                for tiebreak in (0, 1):
                                    args = (hot, neutral, cold, red, forecast, singles, doubles, gain,
                                            tiebreak)
                                    assert fc.knob_move_fast(*args) == fc.knob_move_n(*args), args


def test_knob_forecast_by_bit_planes_is_the_card_by_card_rule():
    from hypothesis import given, settings, strategies as st

    @settings(max_examples=400, deadline=None)
    @given(st.lists(st.sampled_from([int(c) for c in fc.DECK]), max_size=13, unique=True),
           st.integers(-6, 6), st.integers(-8, 8), st.integers(0, 10))
    def check(cards, bias, min_strength, card_weight):
        hand = np.int64(sum(1 << c for c in cards))
        assert fc.knob_forecast(hand, bias, min_strength, card_weight) == \
            fc.knob_forecast_by_card(hand, bias, min_strength, card_weight)
    check()
    # and by hand: 10H 9H (strengths 9, 8) against AS (10) and 2C (1)
    hand = _hand("10H", "9H", "AS", "2C")
    assert fc.knob_forecast(hand, 0, 1, 0) == fc.F_HOT            # red 17 >= black 11
    assert fc.knob_forecast(hand, 0, 10, 0) == fc.F_COLD          # only the A weighs: 0 < 10
    assert fc.knob_forecast(hand, 0, 1, 5) == fc.F_HOT            # 27 >= 21


def _chi2_ok(counts, n_cells, draws):
    """Pearson's statistic against equal cells, below its 0.9999 quantile (Wilson-Hilferty)."""
    e = draws / n_cells
    stat = sum((c - e) ** 2 / e for c in counts) + (n_cells - len(counts)) * e
    df = n_cells - 1
    z = 3.719   # the normal's 0.9999 quantile
    return stat < df * (1 - 2 / (9 * df) + z * (2 / (9 * df)) ** 0.5) ** 3, stat


def test_determinize_without_voids_deals_every_split_alike():
    # 4 players, trick 9 of 10 dealt in their hands: seat 0 holds 2 cards, the other 6 unseen
    # cards go 2 + 2 + 2 (90 splits); at 3 players 5 unseen cards go 2 + 2 with one left undealt
    # (5 x 6 = 30 splits). With no void shown, every split must come equally often, and no
    # seat gets a card seat 0 holds.
    from math import comb
    deck = [int(c) for c in fc.DECK]
    for P, mine, sizes in ((4, deck[:2], (2, 2, 2)), (3, deck[:2], (2, 2))):
        others = deck[2:2 + sum(sizes) + (P == 3)]
        hands = np.zeros(P, dtype=np.int64)
        hands[0] = np.int64(sum(1 << c for c in mine))
        full = fc.DECK_MASK & ~hands[0]
        k = 0
        for o in range(1, P):
            hands[o] = np.int64(sum(1 << c for c in others[k:k + sizes[o - 1]]))
            k += sizes[o - 1]
        seen = np.int64(int(full) & ~sum(1 << c for c in others))   # the rest: played this round
        keys = np.zeros(1, dtype=np.uint64)
        ctrs = np.zeros(1, dtype=np.int64)
        keys[0] = rng.stream_key(7, P, rng.SEARCH, 0)
        out = np.zeros(P, dtype=np.int64)
        scratch = np.zeros(2 * fc.DECK_SIZE + P, dtype=np.int64)
        counts = {}
        draws = 9000
        for _ in range(draws):
            fc._determinize(0, hands, seen, np.zeros(P, dtype=np.int64), P, keys, ctrs, 0, out, scratch)
            assert out[0] == hands[0]
            for o in range(1, P):
                assert bin(int(out[o])).count("1") == sizes[o - 1]
                assert int(out[o]) & ~sum(1 << c for c in others) == 0
            key = tuple(int(x) for x in out[1:])
            counts[key] = counts.get(key, 0) + 1
        n_cells = comb(6, 2) * comb(4, 2) if P == 4 else comb(5, 2) * comb(3, 2)
        assert len(counts) == n_cells
        ok, stat = _chi2_ok(list(counts.values()), n_cells, draws)
        assert ok, (P, stat)


def test_determinize_keeps_shown_voids():
    # seat 1 has shown void in spades and hearts: the re-dealt hands never give it one
    from kernels.cards import HEARTS, SPADES
    P = 4
    hands = np.zeros(P, dtype=np.int64)
    hands[0] = _hand("2C", "3C")
    unseen = [_hand(n) for n in ("4C", "5C", "AS", "2H", "3D", "4D")]
    for o, cs in ((1, unseen[:2]), (2, unseen[2:4]), (3, unseen[4:])):
        hands[o] = np.int64(int(cs[0]) | int(cs[1]))
    others = sum(int(x) for x in unseen)
    seen = np.int64(int(fc.DECK_MASK) & ~int(hands[0]) & ~others)
    voids = np.zeros(P, dtype=np.int64)
    voids[1] = (1 << SPADES) | (1 << HEARTS)
    keys = np.zeros(1, dtype=np.uint64)
    ctrs = np.zeros(1, dtype=np.int64)
    keys[0] = rng.stream_key(8, 0, rng.SEARCH, 0)
    out = np.zeros(P, dtype=np.int64)
    scratch = np.zeros(2 * fc.DECK_SIZE + P, dtype=np.int64)
    no_sh = ~(int(fc.SUIT_MASK[SPADES]) | int(fc.SUIT_MASK[HEARTS]))
    seen_two = set()
    for _ in range(300):
        fc._determinize(0, hands, seen, voids, P, keys, ctrs, 0, out, scratch)
        assert int(out[1]) & ~no_sh == 0, "seat 1 got a spade or a heart"
        assert sorted(bin(int(x)).count("1") for x in out[1:]) == [2, 2, 2]
        assert int(out[1]) | int(out[2]) | int(out[3]) == others
        seen_two.add(int(out[1]))
    assert len(seen_two) == 6, "seat 1 gets any two of 4C 5C 3D 4D"


def test_highest_and_lowest_rank_pick_by_rank_then_lowest_suit():
    from hypothesis import given, settings, strategies as st

    @settings(max_examples=400, deadline=None)
    @given(st.lists(st.integers(0, 51), min_size=1, max_size=20, unique=True))
    def check(cards):
        mask = np.int64(sum(1 << c for c in cards))
        by_rank = sorted(cards, key=lambda c: (c % 13, c // 13))       # rank, then suit index
        top_rank = max(c % 13 for c in cards)
        assert fc._lowest_rank(mask) == by_rank[0]
        assert fc._highest_rank(mask) == min(c for c in cards if c % 13 == top_rank)
    check()
    # by hand: AS (12) and AH (25) tie on rank, spades is suit 0; 2C (39) is the lowest rank
    m = _hand("AS", "AH", "2C", "10D")
    assert fc._highest_rank(m) == 12 and fc._lowest_rank(m) == 39


def test_move_table_is_knob_move_n_without_a_double():
    n_checked = 0
    for tiebreak in (0, 1):
        for forecast in (fc.F_HOT, fc.F_COLD):
            for red in (0, 1):
                for hot in range(fc.N_CUBES + 1):
                    for cold in range(fc.N_CUBES + 1 - hot):
                        neutral = fc.N_CUBES - hot - cold
                        e = int(fc.MOVE_NEXT[((tiebreak * 2 + forecast) * 2 + red) * 100 + hot * 10 + cold])
                        singles = fc.legal_cube_moves(hot, neutral, cold, bool(red), 1)
                        if singles == 0:
                            assert e == hot * 16 + cold
                            continue
                        size, option = fc.knob_move_n(hot, neutral, cold, bool(red), forecast, singles, 0,
                                                      1, tiebreak)
                        h, _, c = fc.apply_cube_move(hot, neutral, cold, bool(red), size, option)
                        assert e == h * 16 + c, (tiebreak, forecast, red, hot, cold)
                        n_checked += 1
    assert n_checked > 300
    # by hand: Hot forecaster, red win, H4 N1 C4: Neutral -> Hot (H5 beats C4: 6 points) over
    # Cold -> Neutral (H4 N2 C3: 4 + 1 = 5)
    assert int(fc.MOVE_NEXT[((0 * 2 + fc.F_HOT) * 2 + 1) * 100 + 4 * 10 + 4]) == 5 * 16 + 4
