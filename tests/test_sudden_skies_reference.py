"""The sudden-skies kernel agrees with the plain-Python reference, game by game.

The reference (tests/reference/sudden_skies_ref.py) is written from the rulebook, RULINGS.md and
docs/games/sudden-skies.md (rules, draw protocol, heuristic), so agreement on the whole result
row (scores, places, winners, length, flags, decisions, every counter) checks the rules, both
policies and the random draw protocol at once, at every player count and rule switch.
"""
from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from kernels import layout
from kernels import sudden_skies as ss
from tests.reference import sudden_skies_ref as ref
from tests.helpers import without_arc, rule_params

R, H = "random", "heuristic"

# (players, seat policies, rules, seed, games)
CASES = [
    (4, [R, R, R, R], {}, 20261129, 500),
    (3, [R, R, R], {}, 7, 400),
    (2, [R, R], {}, 2**40 + 3, 400),
    (4, [H, H, H, H], {}, 11, 300),
    (3, [H, H, H], {}, 12, 300),
    (2, [H, H], {}, 13, 300),
    (4, [R, H, R, H], {}, 14, 250),
    (3, [H, R, R], {}, 15, 200),
    (2, [R, H], {}, 16, 200),
    # every switch away from its default
    (4, [R, R, R, R], {"cloud_self": True}, 21, 200),
    (3, [H, R, H], {"cloud_self": True}, 22, 150),
    (3, [R, R, R], {"take_win": False}, 23, 200),
    (2, [H, R], {"take_win": False}, 24, 150),
    (4, [R, R, R, R], {"wind_empty": "skip"}, 25, 300),
    (3, [R, H, R], {"wind_empty": "skip"}, 26, 150),
    (4, [R, R, H, R], {"turn_cap": 50}, 27, 200),
    (2, [R, R], {"turn_cap": 7, "cloud_self": True, "take_win": False, "wind_empty": "skip"}, 28, 150),
]

SEEN = Counter()


def _params(rules: dict) -> np.ndarray:
    return rule_params(ss, **rules)


@pytest.mark.parametrize("players,pols,rules,seed,games", CASES)
def test_kernel_matches_reference(players, pols, rules, seed, games):
    seats = np.zeros((players, 4), dtype=np.int64)
    seats[:, 0] = [ss.POLICIES[p] for p in pols]
    out = np.zeros((games, layout.out_width(players, ss.N_COUNTERS)), dtype=np.int64)
    first = 1000
    ss.play_games(_params(rules), seats, seed, first, out)
    for i in range(games):
        g = ref.Game(players, pols, seed, first + i, ref.Rules(**rules)).play()
        assert g.card_count() == 52
        assert without_arc(out[i], ss.N_COUNTERS).tolist() == g.result_row(), (players, pols, rules, first + i)
        SEEN.update(g.seen)
        SEEN[g.end] += 1


def test_the_comparison_covered_the_rare_paths():
    # runs after the cases above (pytest keeps file order): every rare situation came up
    if not SEEN:
        pytest.skip("run with the comparison cases")
    for k in ("wind_with_empty_hand", "cloud_on_self", "reveal_declined",
              "forced_draw_on_empty_pile", "second_mark", "win", "stalemate", "timeout",
              "h_thunder", "h_cloud", "h_sun", "h_wind"):
        assert SEEN[k] > 0, k
