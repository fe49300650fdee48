"""A test-only toy game whose seat verdict reverses with skill (not a real game).

The toy game's contract (tests/toygame) with a third policy, ``strong``, and a seat effect that
depends on who sits where: seat s scores 2 c_s + e_s + b_s, c_s a card 0..3 from its DEAL
stream (the same whatever the policies), e_s a fair bit for ``random`` and 1 otherwise, and a
bonus b_s = 1 for a ``random`` seat 0 or a ``strong`` last seat (0 otherwise). So with every
seat at one level, seat 0 has an edge at ``random``, none at ``heuristic`` (all seats alike)
and a deficit at ``strong``: its verdict reverses. Ties are rarer at ``random`` (the bit
separates equal cards). ``exact`` enumerates every outcome.
"""
from __future__ import annotations

import itertools
import sys
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from kernels import layout, spec
from simcli.config.jobs import Job
from . import (CARDS, COUNTERS, DEAL_KIND, EVENTS, LENGTH_UNIT, LOWER_IS_BETTER,  # noqa: F401
               PLAYER_COUNTS, RULES, SEAT_KIND, _stream, check, derived_metrics, extra_seats,
               length_range, n_seats)

GAME_ID = "toy-skill"
VERSION = 1
POLICIES = {"random": 0, "heuristic": 1, "strong": 2}


def score_range(players, params):
    return 0, 2 * (CARDS - 1) + 2


def _score(card, bit, code, s, P):
    bonus = 1 if (s == 0 and code == 0) or (s == P - 1 and code == 2) else 0
    return 2 * card + (bit if code == 0 else 1) + bonus


def play_games(params, seats, seed, first_game, out):
    n, S = out.shape[0], seats.shape[0]
    g = np.arange(int(first_game), int(first_game) + n, dtype=np.int64)
    score = np.zeros((n, S), dtype=np.int64)
    for s in range(S):
        card = (_stream(int(seed), g, DEAL_KIND, s) & np.uint64(CARDS - 1)).astype(np.int64)
        bit = (_stream(int(seed), g, SEAT_KIND, s) & np.uint64(1)).astype(np.int64)
        score[:, s] = _score(card, bit, int(seats[s, 0]), s, S)
    best = score.max(axis=1)
    out[:] = 0
    out[:, :S] = score
    out[:, S:2 * S] = 1 + (score[:, None, :] > score[:, :, None]).sum(axis=2)
    out[:, layout.col_winners(S)] = ((score == best[:, None]) << np.arange(S)[None, :]).sum(axis=1)
    out[:, layout.col_length(S)] = 1
    out[:, layout.col_decisions(S)] = S


play_games_serial = play_games


def exact(code: int, P: int) -> dict:
    """Exact seat-0 win share and tie rate with every seat at policy ``code``."""
    share0, ties, n = Fraction(0), Fraction(0), 0
    for cards in itertools.product(range(CARDS), repeat=P):
        for bits in itertools.product((0, 1), repeat=P):
            sc = [_score(cards[s], bits[s], code, s, P) for s in range(P)]
            win = [s for s in range(P) if sc[s] == max(sc)]
            share0 += Fraction(1, len(win)) if 0 in win else 0
            ties += len(win) > 1
            n += 1
    return {"seat0_share": share0 / n, "tie_rate": ties / n}


@dataclass
class SkillToyJob(Job):
    @property
    def module(self):
        return sys.modules[__name__]


def job(players: int, policy: str = "random") -> SkillToyJob:
    seats = np.zeros((players, spec.SEAT_WIDTH), dtype=np.int64)
    seats[:, 0] = POLICIES[policy]
    return SkillToyJob(GAME_ID, "base", players, {}, np.zeros(0, dtype=np.int64), [policy] * players, seats)
