"""Restricted play (issue #15): the POLICY+RESTRICTION syntax and forecasts-cubes' restrictions.

A restriction only removes options (docs/balance.md): a restricted seat never takes a forbidden
option (checked on traces), a restriction that forbids nothing offered changes nothing, watch
bits only count, and a random restricted seat draws once, uniformly, over what is left.
"""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from kernels import forecasts_cubes as fc
from kernels import layout
from kernels.spec import SEAT_FORBID, SEAT_WATCH, SEAT_WIDTH
from simcli.config import jobs as cfg
from simcli.errors import SimError
from simcli.analyses.trace import trace_rows
from tests.helpers import invoke

CUBES = "forecasts-cubes"


def _rows(job, games=60, seed=3, first=0):
    out = np.zeros((games, layout.out_width(job.seats.shape[0], len(job.module.COUNTERS))), dtype=np.int64)
    job.module.play_games(job.params, job.seats, np.int64(seed), np.int64(first), out)
    return out


def _col(job, name):
    return layout.col_counter(job.seats.shape[0], [c.name for c in job.module.COUNTERS].index(name))


# ---- the policy text ---------------------------------------------------------------------------
def test_parse_policy_restrictions_bits_and_canonical_label():
    mod = fc
    valid = cfg.user_policies(mod, 4, np.zeros(3, dtype=np.int64))
    label, row = cfg.parse_policy(" Heuristic+cold-only+no-advisory ", valid, mod.POLICY_ARGS, mod.RESTRICTIONS)
    assert label == "heuristic+no-advisory+cold-only"            # declaration order
    assert row.shape == (SEAT_WIDTH,)
    assert row[0] == fc.P_HEURISTIC
    assert row[SEAT_FORBID] == (1 << fc.RX_NO_ADVISORY) | (1 << fc.RX_COLD_ONLY)
    assert row[SEAT_WATCH] == 0
    label, row = cfg.parse_policy("mc:8+hot-only", valid, mod.POLICY_ARGS, mod.RESTRICTIONS)
    assert label == "mc:8:heuristic+hot-only" and row[1] == 8 and row[SEAT_FORBID] == 1 << fc.RX_HOT_ONLY
    label, row = cfg.parse_policy("random", valid, mod.POLICY_ARGS, mod.RESTRICTIONS)
    assert label == "random" and row[SEAT_FORBID] == 0


def test_unknown_restriction_is_one_line_naming_the_valid_ones():
    valid = cfg.user_policies(fc, 4, np.zeros(3, dtype=np.int64))
    with pytest.raises(SimError, match="no-advisory, always-advisory, hot-only, cold-only"):
        cfg.parse_policy("heuristic+no-wind", valid, fc.POLICY_ARGS, fc.RESTRICTIONS)
    r = invoke("run", CUBES, "--policy", "random+bogus", "--games", "10")
    assert r.exit_code == 2
    assert r.output.strip().count("\n") == 0 and "unknown restriction 'bogus'" in r.output


def test_list_shows_restrictions():
    r = invoke("list", "--json")
    assert r.exit_code == 0, r.output
    info = {g["game"]: g for g in json.loads(r.output)}
    assert [x["name"] for x in info[CUBES]["restrictions"]] == ["no-advisory", "always-advisory", "hot-only", "cold-only"]
    assert [x["name"] for x in info["sudden-skies"]["restrictions"]] == [
        "no-wind", "no-sun", "no-thunder", "no-cloud", "no-weather"]
    text = invoke("list").output
    assert "restrictions (POLICY+NAME" in text and "always-advisory" in text


def test_restriction_counters_are_last_and_say_what_they_count():
    for mod in (fc, __import__("kernels.sudden_skies", fromlist=["x"])):
        names = [c.name for c in mod.COUNTERS]
        assert names[-2:] == ["restriction_forbidden", "restriction_yielded"]
        assert "watch bit" in mod.COUNTERS[-2].help and "every legal option forbidden" in mod.COUNTERS[-1].help
        assert [r.bit for r in mod.RESTRICTIONS] == list(range(len(mod.RESTRICTIONS)))


# ---- unrestricted play is unchanged --------------------------------------------------------------
@pytest.mark.parametrize("variant", ["base", "advisory"])
def test_no_bits_wide_rows_equal_narrow_rows_and_watch_only_counts(variant):
    job = cfg.resolve(CUBES, variant, 4, seats="random,heuristic,random,heuristic")
    wide = _rows(job)
    narrow = _rows(cfg.Job(**{**job.__dict__, "seats": job.seats[:, :4].copy()}))
    np.testing.assert_array_equal(wide, narrow)
    watched = job.seats.copy()
    watched[:, SEAT_WATCH] = (1 << len(fc.RESTRICTIONS)) - 1
    w = _rows(cfg.Job(**{**job.__dict__, "seats": watched}))
    fcol = _col(job, "restriction_forbidden")
    rest = [c for c in range(wide.shape[1]) if c != fcol]
    np.testing.assert_array_equal(w[:, rest], wide[:, rest])   # watching never changes play
    # every forecast is forbidden by hot-only or by cold-only: 4 rounds x 4 seats per game
    assert (w[:, fcol] >= 16).all()
    assert wide[:, fcol].sum() == 0


@pytest.mark.parametrize("policy", ["random", "heuristic"])
def test_restriction_never_offered_gives_the_same_games(policy):
    """No Advisory in the base variant: no-advisory and always-advisory forbid nothing offered."""
    base = _rows(cfg.resolve(CUBES, "base", 4, policy=policy), games=200)
    for r in ("no-advisory", "always-advisory"):
        seats = ",".join([f"{policy}+{r}"] + [policy] * 3)
        np.testing.assert_array_equal(_rows(cfg.resolve(CUBES, "base", 4, seats=seats), games=200), base)


def test_both_forecasts_forbidden_yields_every_forecast():
    base = _rows(cfg.resolve(CUBES, "base", 4, policy="heuristic"), games=100)
    job = cfg.resolve(CUBES, "base", 4, seats="heuristic+hot-only+cold-only,heuristic,heuristic,heuristic")
    rows = _rows(job, games=100)
    ycol = _col(job, "restriction_yielded")
    assert (rows[:, ycol] == 4).all()                    # one yield per round
    rows[:, ycol] = 0
    np.testing.assert_array_equal(rows, base)


# ---- a restricted seat never takes a forbidden option (traces) ------------------------------------
def _events(job, games, seed=11):
    for g in range(games):
        _, ev = trace_rows(job, seed, g)
        yield ev


@pytest.mark.parametrize("policy", ["random", "heuristic", "mc:2"])
def test_traces_obey_each_restriction(policy):
    games = 6 if policy.startswith("mc") else 40
    for r in ("no-advisory", "always-advisory", "hot-only", "cold-only"):
        job = cfg.resolve(CUBES, "advisory", 4, seats=",".join([f"{policy}+{r}"] + [policy] * 3))
        offered = used = forecasts = 0
        for ev in _events(job, games):
            mine = ev[ev[:, 1] == 0]
            choices = mine[mine[:, 0] == fc.E_ADVISORY_CHOICE][:, 4]   # use (0/1) when offered
            moves = mine[mine[:, 0] == fc.E_MOVE]
            fcs = mine[mine[:, 0] == fc.E_FORECAST][:, 3]
            offered += len(choices)
            used += int((moves[:, 6] == 2).sum())
            forecasts += len(fcs)
            if r == "no-advisory":
                assert (moves[:, 6] == 1).all() and (choices == 0).all()
            elif r == "always-advisory":
                assert len(choices) <= 1 and (choices == 1).all()   # the first offer is taken
            elif r == "hot-only":
                assert (fcs == fc.F_HOT).all()
            else:
                assert (fcs == fc.F_COLD).all()
        assert forecasts == 4 * games
        if r in ("no-advisory", "always-advisory"):
            assert offered > 0, "the Advisory was never offered: the check could not fail"
        if r == "always-advisory":
            assert used == offered


def test_mc_restricted_rollouts_obey_the_restriction():
    """The search seat's own rollout moves obey its restriction (_rollout's ``me``, ``forbid``).

    One trick of spades, seat 3 wins it (5S) with cubes Hot 4 / Neutral 3 / Cold 2 and its
    Advisory unused. Forecast Cold: Neutral->Cold x2 leaves 4 Cold cubes (4 points) against 3 for
    the best single move, so the heuristic doubles. Forecast Hot: the single Neutral->Cold keeps
    Hot ahead (4 + 1) and beats every double (at most 4), so it does not.
    """
    from kernels import rng
    hands = np.array([0b1, 0b10, 0b100, 0b1000], dtype=np.int64)   # 2S, 3S, 4S, 5S
    cases = ((0, fc.F_COLD, 0), (0, fc.F_HOT, 1),                    # unrestricted: doubles / not
             (1 << fc.RX_NO_ADVISORY, fc.F_COLD, 1), (1 << fc.RX_ALWAYS_ADVISORY, fc.F_HOT, 0))
    for forbid, fcast, adv_left in cases:
        cubes = np.array([4, 3, 2], dtype=np.int64)
        adv = np.ones(4, dtype=np.int64)
        keys = np.array([rng.stream_key(1, 0, rng.SEARCH, 0)], dtype=np.uint64)
        ctrs = np.zeros(1, dtype=np.int64)
        played = np.zeros(4, dtype=np.int64)
        forecast = np.array([fcast] * 4, dtype=np.int64)
        fc._rollout(hands.copy(), cubes, forecast, adv, True, 4, 0, 1, 0, played, 0, -1, -1,
                    fc.P_HEURISTIC, keys, ctrs, 0, 3, forbid, fc.KNOB_DEFAULTS, 0, 0)
        assert adv[3] == adv_left, (forbid, fcast, adv, cubes)


# ---- random restricted = one uniform draw over what is left ---------------------------------------
def test_random_always_advisory_picks_uniformly_among_double_moves():
    job = cfg.resolve(CUBES, "advisory", 4, seats="random+always-advisory,random,random,random")
    both = opt1 = 0
    for ev in _events(job, 1500, seed=23):
        for row in ev[(ev[:, 0] == fc.E_MOVE) & (ev[:, 1] == 0) & (ev[:, 6] == 2)]:
            src, dst, hot, neutral = row[4], row[5], row[8], row[9]
            red = dst == fc.HOT or src == fc.COLD
            h, n = hot, neutral                      # cubes before the move
            h += 2 if src == fc.HOT else (-2 if dst == fc.HOT else 0)
            n += 2 if src == fc.NEUTRAL else (-2 if dst == fc.NEUTRAL else 0)
            c = 9 - h - n
            far = c if red else h
            if far >= 2 and n >= 2:                  # both double moves were open
                both += 1
                opt1 += src == fc.NEUTRAL
    assert both > 60
    z = (opt1 - both / 2) / math.sqrt(both / 4)
    assert abs(z) < 3.5, (opt1, both)


def test_random_forced_forecast_takes_no_draw():
    """hot-only leaves one forecast, so seat 0 draws nothing for it: leading round 0's first trick
    from its whole hand (10 cards) it uses its SEAT stream's draw 0; unrestricted, draw 1."""
    from kernels import rng
    for pol, ctr in (("random+hot-only", 0), ("random", 1)):
        job = cfg.resolve(CUBES, "base", 4, seats=f"{pol},random,random,random")
        for g in range(20):
            _, ev = trace_rows(job, 11, g)
            hand = ev[(ev[:, 0] == fc.E_DEAL) & (ev[:, 1] == 0) & (ev[:, 2] == 0)][0, 3]
            first = ev[ev[:, 0] == fc.E_PLAY][0]      # code, seat, round, trick, card
            assert first[1:4].tolist() == [0, 0, 0]
            keys = np.array([rng.stream_key(11, g, rng.SEAT, 0)], dtype=np.uint64)
            k = rng.below(keys, np.array([ctr], dtype=np.int64), 0, 10)
            assert first[4] == [c for c in range(52) if (int(hand) >> c) & 1][k], (pol, g)


def test_a_restriction_name_ending_in_plus_parses_alone_and_in_a_list():
    # pgc's `no-sets-of-4+` (the name) ends in the separator itself
    bit = {r.name: r.bit for r in cfg.game_module("pgc").RESTRICTIONS}
    for text, names in (("heuristic+no-sets-of-4+", ["no-sets-of-4+"]),
                        ("heuristic+no-sets-of-4++no-runs", ["no-runs", "no-sets-of-4+"]),
                        ("random+no-runs+no-sets-of-4+", ["no-runs", "no-sets-of-4+"])):
        job = cfg.resolve("pgc", players=4, policy=text)
        assert int(job.seats[0, SEAT_FORBID]) == sum(1 << bit[n] for n in names)
        assert job.policies[0] == "+".join([text.split("+")[0], *names])
    with pytest.raises(SimError, match="unknown restriction 'no-sets-of-4'"):
        cfg.resolve("pgc", players=4, policy="heuristic+no-sets-of-4")
