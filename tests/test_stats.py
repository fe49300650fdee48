"""The statistics module against values derived independently (closed forms, tables)."""
import math

import numpy as np
import pytest

from simcli import stats


def test_wilson_matches_the_textbook_example():
    # Wilson (1927) / Newcombe (1998) example: 81 of 263 -> 0.2553 .. 0.3662 (95%)
    lo, hi = stats.wilson(81 / 263, 263)
    assert lo == pytest.approx(0.2553, abs=1e-4) and hi == pytest.approx(0.3662, abs=1e-4)


def test_chi2_tail_matches_tables():
    # standard table values: P(chi2_1 > 3.841) = 0.05, P(chi2_5 > 11.070) = 0.05, P(chi2_10 > 23.209) = 0.01
    assert stats.chi2_sf(3.841459, 1) == pytest.approx(0.05, rel=1e-5)
    assert stats.chi2_sf(11.0705, 5) == pytest.approx(0.05, rel=1e-4)
    assert stats.chi2_sf(23.2093, 10) == pytest.approx(0.01, rel=1e-4)
    # df = 2 has the closed form exp(-x/2)
    for x in (0.5, 3.0, 40.0):
        assert stats.chi2_sf(x, 2) == pytest.approx(math.exp(-x / 2), rel=1e-10)


def test_two_proportion_and_welch_closed_forms():
    z, p = stats.two_proportion(60, 100, 40, 100)
    assert z == pytest.approx(0.2 / math.sqrt(0.25 * 0.02))
    assert p == pytest.approx(math.erfc(abs(z) / math.sqrt(2)))
    t, _ = stats.welch(10, 2, 50, 9, 3, 80)
    assert t == pytest.approx(1 / math.sqrt(4 / 50 + 9 / 80))


def test_chi2_homogeneity_flags_shifted_samples_and_not_equal_ones():
    rng = np.random.default_rng(0)
    a = np.bincount(rng.binomial(20, 0.5, 5000), minlength=21)
    b = np.bincount(rng.binomial(20, 0.5, 5000), minlength=21)
    c = np.bincount(rng.binomial(20, 0.55, 5000), minlength=21)
    h = lambda x: {i: int(v) for i, v in enumerate(x) if v}
    assert stats.chi2_homogeneity(h(a), h(b))[2] > 0.001
    assert stats.chi2_homogeneity(h(a), h(c))[2] < 1e-10


def test_holm_step_down():
    assert stats.holm([0.01, 0.04, 0.03, 0.5], 0.05) == [True, False, False, False]
    assert stats.holm([0.001, 0.012, 0.02, 0.5], 0.05) == [True, True, True, False]


def test_reseeded_equal_distributions_are_rarely_flagged():
    """Under the null, chi-square p-values are about uniform: ~5% below 0.05 (binomial bound)."""
    rng = np.random.default_rng(1)
    hits = 0
    for _ in range(400):
        a = np.bincount(rng.poisson(6, 800), minlength=30)
        b = np.bincount(rng.poisson(6, 800), minlength=30)
        p = stats.chi2_homogeneity({i: int(v) for i, v in enumerate(a) if v},
                                   {i: int(v) for i, v in enumerate(b) if v})[2]
        hits += p < 0.05
    assert 5 <= hits <= 40  # 400 * 0.05 = 20; 99.9% binomial range is about 6..37


def test_bernoulli_deals_give_wilson_with_n_minus_one():
    # 81 wins of 263 one-game deals: u = 60 or 0, so sum u = 81*60 and sum u^2 = 81*3600.
    # sample variance = 81*182 / (263*262) and p(1-p) = 81*182 / 263^2, so n_eff = 262 exactly
    r = stats.share_interval(81 * 60, 81 * 3600, 263, 60)
    assert r["mean"] == pytest.approx(81 / 263)
    assert r["n_eff"] == pytest.approx(262)
    lo, hi = stats.wilson(81 / 263, 262)
    assert (r["low"], r["high"]) == (pytest.approx(lo), pytest.approx(hi))
    assert r["se"] == pytest.approx(math.sqrt(81 * 182 / (263 * 262) / 263))


def test_shared_wins_have_less_variance_than_coin_flips():
    # 2 players, 100 deals: 50 shared wins (u = 30 each) and 25 outright wins, 25 losses for seat 0.
    # Its share is 0.5 either way, but the per-deal variance is (25*0.25 + 25*0.25) / 99, half a coin's
    total, total_sq = 50 * 30 + 25 * 60, 50 * 900 + 25 * 3600
    r = stats.share_interval(total, total_sq, 100, 60)
    assert r["mean"] == pytest.approx(0.5)
    assert r["n_eff"] == pytest.approx(100 * 0.25 / (12.5 / 99))
    coin = stats.wilson(0.5, 100)
    assert (r["high"] - r["low"]) < (coin[1] - coin[0]) / math.sqrt(1.9)


def test_degenerate_shares():
    # every deal a two-way shared win: the share is exactly 1/2, nothing is uncertain
    assert stats.share_interval(30 * 40, 900 * 40, 40, 60)["low"] == pytest.approx(0.5)
    assert stats.share_interval(30 * 40, 900 * 40, 40, 60)["high"] == pytest.approx(0.5)
    # never won in 40 deals: Wilson's interval for 0 of 40, upper bound z^2 / (n + z^2)
    r = stats.share_interval(0, 0, 40, 60)
    assert r["low"] == 0 and r["high"] == pytest.approx(stats.Z95**2 / (40 + stats.Z95**2))
    assert math.isnan(stats.share_interval(0, 0, 0, 60)["mean"])


def test_two_means_z():
    z, p = stats.two_means(0.30, 0.01, 0.27, 0.0075)
    assert z == pytest.approx(0.03 / 0.0125) and p == pytest.approx(math.erfc(2.4 / math.sqrt(2)))
    assert stats.two_means(0.2, 0.0, 0.2, 0.0) == (0.0, 1.0)


def _check_tables(share: float, se):
    import polars as pl
    key = {"game": ["g"], "variant": ["v"], "players": [2], "policies": ["random,random"]}
    seats = {**{k: v * 1 for k, v in key.items()}, "seat": [0], "win_share": [share], "score_sd": [None]}
    if se is not None:
        seats["win_se"] = [se]
    return {"variants": pl.DataFrame({**key, "games": [10000], "tie_rate": [0.1], "timeout_rate": [0.0],
                                      "length_mean": [5.0]}),
            "seats": pl.DataFrame(seats),
            "scores": pl.DataFrame({**{k: [] for k in key}, "seat": [], "score": [], "count": []},
                                   schema={"game": pl.String, "variant": pl.String, "players": pl.Int64,
                                           "policies": pl.String, "seat": pl.Int64, "score": pl.Int64,
                                           "count": pl.Int64}),
            "lengths": pl.DataFrame({"game": [], "variant": [], "players": [], "policies": [], "length": [],
                                     "count": []},
                                    schema={"game": pl.String, "variant": pl.String, "players": pl.Int64,
                                            "policies": pl.String, "length": pl.Int64, "count": pl.Int64})}


def test_check_tests_win_share_with_the_per_deal_standard_errors():
    from simcli.analyses import check
    base, new = _check_tables(0.28, 0.003), _check_tables(0.30, 0.004)
    row = check.compare(base, new, 0.01).filter(metric="win_share").row(0, named=True)
    # z = 0.02 / sqrt(0.003^2 + 0.004^2) = 4 exactly
    assert row["p_value"] == pytest.approx(math.erfc(4 / math.sqrt(2)))
    # a baseline without win_se (written before #19) falls back to the two-proportion test
    row = check.compare(_check_tables(0.28, None), new, 0.01).filter(metric="win_share").row(0, named=True)
    assert row["p_value"] == pytest.approx(stats.two_proportion(3000, 10000, 2800, 10000)[1])


def test_ratio_interval_is_wilson_over_trials_with_one_trial_per_deal():
    # r = 1 per deal, h = 1 in 300 of 1000: the ratio estimator's effective n is (n - 1)/n x 1000
    from simcli.stats import ratio_interval, wilson
    n, k = 1000, 300
    R, lo, hi = ratio_interval(n, k, n, k, k, n, n)
    assert R == 0.3
    assert (lo, hi) == pytest.approx(wilson(0.3, (n - 1) / n * n), abs=1e-12)


def test_ratio_interval_counts_a_deal_whose_rotations_agree_once():
    # every deal replayed 4 times with the same outcome (h = 0 or 4 of r = 4): 4000 games but only
    # 1000 independent deals, so the interval is Wilson over ~1000, not 4000
    from simcli.stats import ratio_interval, wilson
    n, k = 1000, 300
    R, lo, hi = ratio_interval(4 * n, 4 * k, 16 * n, 16 * k, 16 * k, n, n)
    assert (lo, hi) == pytest.approx(wilson(0.3, (n - 1) / n * n), abs=1e-12)
    wide = hi - lo
    _, lo4, hi4 = ratio_interval(4 * n, 4 * k, 4 * n, 4 * k, 4 * k, 4 * n, 4 * n)   # 4000 independent games
    assert hi4 - lo4 < 0.6 * wide


# Wilson's interval at p = 1 over n trials is [n / (n + z^2), 1], and at p = 0 it is
# [0, z^2 / (n + z^2)] (the score interval's closed form at the boundary), independently of
# stats.wilson's general formula.
Z2 = 1.959963984540054 ** 2


@pytest.mark.parametrize("games, deals, low", [
    (8, 2000, 8 / (8 + Z2)),        # issue 23: pgc 4p seed 5, checkpoint 7 from the start: [0.676, 1]
    (200, 2000, 200 / (200 + Z2)),  # sudden-skies 4p seed 5, end 0 reached by 200 games: [0.9812, 1]
])
def test_a_leader_who_always_wins_gets_wilson_over_the_games_that_reach_the_point(games, deals, low):
    # one game per deal (no --rotate): r = h = 1 on the `games` deals that reach the checkpoint,
    # r = h = 0 on the others; the interval must not count the deals that never got there
    from simcli.stats import ratio_interval
    R, lo, hi = ratio_interval(games, games, games, games, games, games, deals)
    assert R == 1.0 and hi == 1.0
    assert lo == pytest.approx(low, abs=1e-12)
    assert round(lo, 3) == {8: 0.676, 200: 0.981}[games]   # the figures


def test_a_leader_who_never_wins_at_a_point_one_game_reached():
    # issue 23: pgc base 4p in the default suite, games = 1, leader_wins = 0: was [0, 0.000192]
    from simcli.stats import ratio_interval
    R, lo, hi = ratio_interval(1, 0, 1, 0, 0, 1, 20000)
    assert (R, lo) == (0.0, 0.0)
    assert hi == pytest.approx(Z2 / (1 + Z2), abs=1e-12)   # 0.7935


def test_with_rotate_a_deal_whose_rotations_all_reach_and_agree_counts_once():
    # 3 deals reach the point in all 4 rotations and the leader always wins: Wilson over 3 deals
    from simcli.stats import ratio_interval
    R, lo, hi = ratio_interval(12, 12, 48, 48, 48, 3, 500)
    assert (R, hi) == (1.0, 1.0)
    assert lo == pytest.approx(3 / (3 + Z2), abs=1e-12)


def test_a_point_no_game_reaches_has_no_estimate_and_no_interval():
    from simcli.stats import ratio_interval
    assert all(math.isnan(v) for v in ratio_interval(0, 0, 0, 0, 0, 0, 1000))
