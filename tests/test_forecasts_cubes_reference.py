"""The forecasts-cubes kernel agrees with the plain-Python reference, game by game.

The reference (tests/reference/forecasts_cubes_ref.py) is written from the rulebook, RULINGS.md
and docs/games/forecasts-cubes.md, so agreement on the whole result row (scores, places,
winners, length, flags, decisions, every counter) checks the rules, both policies and the
random draw protocol at once.
"""
from __future__ import annotations

import numpy as np
import pytest

from kernels import forecasts_cubes as fc, layout
from tests.reference import forecasts_cubes_ref as ref
from tests.helpers import without_arc

R, H = "random", "heuristic"

# (players, advisory, tricks_per_round, rounds, seat policies, seed, games)
CASES = [
    (4, False, 10, 4, [R, R, R, R], 20261129, 400),
    (4, True, 10, 4, [R, R, R, R], 7, 400),
    (4, False, 10, 4, [H, H, H, H], 11, 150),
    (4, True, 10, 4, [H, H, H, H], 12, 150),
    (4, True, 10, 4, [R, H, R, H], 13, 250),
    (4, False, 10, 4, [H, R, R, H], 14, 150),
    (3, False, 10, 4, [R, R, R], 2**40 + 3, 300),
    (3, True, 10, 4, [R, R, R], 21, 300),
    (3, False, 13, 4, [R, R, R], 22, 250),
    (3, True, 13, 4, [R, R, R], 23, 250),
    (3, True, 13, 4, [H, H, H], 24, 120),
    (3, False, 10, 4, [H, H, H], 25, 120),
    (3, True, 10, 4, [H, R, R], 26, 200),
    (3, False, 13, 4, [R, H, H], 27, 150),
    # other switch values: short rounds, one round, the longest game
    (4, True, 1, 4, [R, R, H, R], 31, 100),
    (3, True, 7, 1, [R, R, R], 32, 100),
    (4, True, 10, 12, [R, H, R, R], 33, 60),
]


def _params(advisory: bool, tricks: int, rounds: int) -> np.ndarray:
    params = np.array([r.default for r in fc.RULES], dtype=np.int64)
    params[fc.R_ADVISORY] = int(advisory)
    params[fc.R_TRICKS] = tricks
    params[fc.R_ROUNDS] = rounds
    return params


def _seats(policies) -> np.ndarray:
    seats = np.zeros((len(policies), 4), dtype=np.int64)
    for s, p in enumerate(policies):
        seats[s, 0] = fc.P_RANDOM if p == R else fc.P_HEURISTIC
    return seats


def _row(P: int, game: dict) -> list[int]:
    """The reference's result in the layout of kernels/layout.py."""
    row = [0] * layout.col_arc(P, fc.N_COUNTERS)   # the arc block: tests/test_arc.py
    for s in range(P):
        row[s] = game["scores"][s]
        row[layout.col_place(P, s)] = game["places"][s]
    row[layout.col_winners(P)] = sum(1 << s for s in game["winners"])
    row[layout.col_length(P)] = game["length"]
    row[layout.col_flags(P)] = game["flags"]
    row[layout.col_decisions(P)] = game["decisions"]
    for i, c in enumerate(fc.COUNTERS):
        row[layout.col_counter(P, i)] = game["counters"][c.name]
    return row


def test_counter_names_are_the_documented_ones():
    assert [c.name for c in fc.COUNTERS] == list(ref.COUNTER_NAMES)


@pytest.mark.parametrize("players,advisory,tricks,rounds,policies,seed,games", CASES)
def test_kernel_matches_reference(players, advisory, tricks, rounds, policies, seed, games):
    params = _params(advisory, tricks, rounds)
    seats = _seats(policies)
    fc.check(players, params)
    width = layout.out_width(players, fc.N_COUNTERS)
    first = 1000 + seed % 997
    serial = np.zeros((games, width), dtype=np.int64)
    fc.play_games_serial(params, seats, np.int64(seed), np.int64(first), serial)
    parallel = np.zeros((games, width), dtype=np.int64)
    fc.play_games(params, seats, np.int64(seed), np.int64(first), parallel)
    np.testing.assert_array_equal(serial, parallel)

    for i in range(games):
        g = ref.play_game(players, advisory, tricks, rounds, policies, seed, first + i)
        expected = _row(players, g)
        assert without_arc(serial[i], fc.N_COUNTERS).tolist() == expected, f"game {first + i}"


def test_reference_batches_exercise_the_interesting_cases():
    """The compared batches really contain ties, no-move tricks and Advisory use."""
    seen = {"shared": 0, "no_move": 0, "advisory": 0, "tiebreak": 0}
    for players, advisory, tricks, rounds, policies, seed, games in CASES[:8]:
        first = 1000 + seed % 997
        for i in range(min(games, 150)):
            g = ref.play_game(players, advisory, tricks, rounds, policies, seed, first + i)
            seen["shared"] += len(g["winners"]) > 1
            seen["no_move"] += g["counters"]["no_move_tricks"]
            seen["advisory"] += g["counters"]["advisory_uses"]
            top = max(g["scores"])
            seen["tiebreak"] += (sum(1 for x in g["scores"] if x == top) > 1
                                 and len(g["winners"]) == 1)
    assert all(v > 0 for v in seen.values()), seen


def test_same_deal_whatever_the_policies():
    """Deals come only from DEAL streams: every round's hands are the reference's deal."""
    params = _params(True, 10, 4)
    for pols in ([R, R, R, R], [H, H, H, H], [H, R, H, R]):
        out = np.zeros((1, layout.out_width(4, fc.N_COUNTERS)), dtype=np.int64)
        ev = np.zeros((20000, layout.EVENT_WIDTH), dtype=np.int64)
        ev_n = np.zeros(1, dtype=np.int64)
        fc.trace_game(params, _seats(pols), np.int64(5), np.int64(9), out, ev, ev_n)
        dealt = [(int(ev[i, 2]), int(ev[i, 1]), int(ev[i, 3])) for i in range(int(ev_n[0]))
                 if ev[i, 0] == fc.E_DEAL]
        expected = [(r, s, sum(1 << c for c in hand))
                    for r in range(4) for s, hand in enumerate(ref.deal(4, 5, 9, r))]
        assert dealt == expected
