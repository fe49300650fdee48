"""Every game's players are ordered by strength, and every search policy refuses bad arguments
the same way (the all-games versions of what each game's test file used to repeat).

Strength is measured on paired, seat-rotated deals (``helpers.paired_match``): the stronger policy
in seat 0, the weaker elsewhere, every deal replayed once per rotation. The deal counts are the
ones each game's tests were calibrated with (z about 4 or more at the measured edge), so a
failure means the ordering broke, not bad luck. daily-weather is solo: its ladder (mc beats
greedy beats random) is in tests/test_daily_weather_mc.py, measured on the puzzle's own score.
"""
from __future__ import annotations

import pytest

from simcli.config import jobs as cfg
from simcli.errors import SimError
from tests.helpers import paired_match

# game, players, stronger, weaker, deals, largest p-value
LADDER = [
    ("forecasts-cubes", 4, "mc:8:heuristic", "heuristic", 60, 0.001),
    ("forecasts-cubes", 4, "heuristic", "random", 300, 0.001),
    ("forecasts-bid", 4, "mc:8:heuristic", "heuristic", 40, 0.001),
    ("forecasts-bid", 4, "heuristic", "random", 300, 0.001),
    ("pgc", 4, "mc:8:heuristic", "heuristic", 60, 0.001),
    # 2 players: both second hands (its own too) are hidden until picked up
    ("pgc", 2, "mc:8:heuristic", "heuristic", 80, 0.001),
    ("pgc", 4, "heuristic", "random", 300, 0.001),
    ("sudden-skies", 4, "mc:8:heuristic", "random", 40, 0.001),
    ("sudden-skies", 4, "heuristic", "random", 200, 0.001),
    # the measured edge is small (+0.05): 300 deals x 4 rotations give z ~ 4
    ("sudden-skies", 4, "mc:16:heuristic", "heuristic", 300, 0.01),
]


def _is_search(policy: str) -> bool:
    return policy.startswith("mc")


@pytest.mark.parametrize("game,players,strong,weak,deals,p_max", [
    pytest.param(*row, id=f"{row[0]}-{row[1]}p-{row[2]}-over-{row[3]}",
                 marks=[pytest.mark.slow] if _is_search(row[2]) else [])
    for row in LADDER])
def test_the_stronger_policy_wins_more_on_paired_deals(game, players, strong, weak, deals, p_max):
    seats = ",".join([strong] + [weak] * (players - 1))
    pt, d = paired_match(game, seats, deals, players=players)
    assert pt.names == [strong, weak]
    assert d["ci_low"] > 0 and d["p_value"] < p_max, d


def _search_games():
    out = []
    for game in cfg.known_games():
        mod = cfg.game_module(game)
        if "mc" in getattr(mod, "POLICY_ARGS", {}):
            out.append(game)
    return out


ROLLOUTS = {"daily-weather": "random, greedy"}          # every other game: random, heuristic
EXTRA = {"forecasts-bid": ["mc:8:rival"], "daily-weather": ["mc:8:solver"]}  # policies that are not rollouts


def _bad_cases():
    for game in _search_games():
        roll = ROLLOUTS.get(game, "random, heuristic")
        first = roll.split(", ")[-1]
        n = len(cfg.game_module(game).POLICY_ARGS["mc"])    # forecasts-bid: a third, the objective
        too_many = ":".join(["mc", "8", first] + ["0"] * (n - 2) + ["1"])
        cases = [("mc:0", "outside 1..4096"), ("mc:5000", "outside 1..4096"), ("mc:x", "not a whole number"),
                 ("mc:8:mc", f"is not one of {roll}"), (too_many, f"at most {n} argument")]
        cases += [(spec, f"is not one of {roll}") for spec in EXTRA.get(game, [])]
        for spec, needle in cases:
            yield pytest.param(game, spec, needle, id=f"{game}-{spec}")


def test_every_game_with_search_is_covered():
    assert set(_search_games()) == {"forecasts-cubes", "forecasts-bid", "pgc", "sudden-skies", "daily-weather"}


@pytest.mark.parametrize("game,spec,needle", list(_bad_cases()))
def test_bad_search_arguments_are_refused_in_one_line(game, spec, needle):
    with pytest.raises(SimError, match=needle) as e:
        cfg.resolve(game, policy=spec)
    assert "\n" not in str(e.value)
