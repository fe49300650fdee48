"""A test-only toy game whose win probabilities are known exactly (not a real game).

It implements the parts of the kernel contract the runner and reports use, in plain numpy,
so the statistics can be checked against exact truth (benchmarks/interval_coverage.py, tests):

- each seat s gets a card c_s in 0..3 from its DEAL stream (a pure function of seed, game, s),
  so every rotation of a deal replays the same cards;
- its score is 2 c_s + e_s + seat bonus: a ``random`` seat's e_s is a fair bit from its SEAT
  stream, a ``heuristic`` seat always has e_s = 1, and seat 0 gets ``SEAT0_BONUS``;
- the highest score wins; equal highest scores share the win (1/k each), which is common.

``exact_shares(policy_codes)`` enumerates all 4^P x 2^P equally likely outcomes.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from kernels import layout
from simcli.config.jobs import Job

GAME_ID = "toy"
VERSION = 1
PLAYER_COUNTS = (2, 3, 4)
RULES = ()
POLICIES = {"random": 0, "heuristic": 1}
COUNTERS = ()
EVENTS = ()
LOWER_IS_BETTER = False
LENGTH_UNIT = "rounds"
CARDS = 4          # card values 0..3: a power of two, so `hash & 3` is exactly uniform
SEAT0_BONUS = 1    # the seat effect
DEAL_KIND, SEAT_KIND = 1, 2
_M = np.uint64(0xFFFFFFFFFFFFFFFF)


def n_seats(players, params):
    return players


def extra_seats(players, params):
    return ()


def score_range(players, params):
    return 0, 2 * (CARDS - 1) + 1 + SEAT0_BONUS


def length_range(players, params):
    return 1, 1


def check(players, params):
    return None


def derived_metrics(sums, games, players, params):
    return {}


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser on uint64 arrays."""
    with np.errstate(over="ignore"):
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return x ^ (x >> np.uint64(31))


def _stream(seed: int, games: np.ndarray, kind: int, index: int) -> np.ndarray:
    with np.errstate(over="ignore"):
        h = _mix(np.full(games.shape, np.uint64(seed), dtype=np.uint64) + np.uint64(0x9E3779B97F4A7C15))
        h = _mix(h ^ games.astype(np.uint64))
        return _mix(h ^ np.uint64((kind << 16) | index))


def play_games(params, seats, seed, first_game, out):
    """Row i of ``out`` = game first_game + i (the layout.py record; no counters)."""
    n, S = out.shape[0], seats.shape[0]
    g = np.arange(int(first_game), int(first_game) + n, dtype=np.int64)
    score = np.zeros((n, S), dtype=np.int64)
    for s in range(S):
        card = (_stream(int(seed), g, DEAL_KIND, s) & np.uint64(CARDS - 1)).astype(np.int64)
        bit = (_stream(int(seed), g, SEAT_KIND, s) & np.uint64(1)).astype(np.int64)
        e = bit if seats[s, 0] == POLICIES["random"] else np.ones(n, dtype=np.int64)
        score[:, s] = 2 * card + e + (SEAT0_BONUS if s == 0 else 0)
    best = score.max(axis=1)
    out[:] = 0
    out[:, :S] = score
    out[:, S:2 * S] = 1 + (score[:, None, :] > score[:, :, None]).sum(axis=2)
    out[:, 2 * S] = ((score == best[:, None]) << np.arange(S)[None, :]).sum(axis=1)
    out[:, 2 * S + 1] = 1
    out[:, 2 * S + 3] = S


play_games_serial = play_games


def exact_shares(codes: list[int]) -> list[Fraction]:
    """Each seat's exact expected win share for policy codes per seat (enumeration)."""
    P = len(codes)
    total = [Fraction(0)] * P
    outcomes = 0
    for cards in itertools.product(range(CARDS), repeat=P):
        for bits in itertools.product((0, 1), repeat=P):
            sc = [2 * cards[s] + (bits[s] if codes[s] == 0 else 1) + (SEAT0_BONUS if s == 0 else 0)
                  for s in range(P)]
            best = max(sc)
            win = [s for s in range(P) if sc[s] == best]
            for s in win:
                total[s] += Fraction(1, len(win))
            outcomes += 1
    return [t / outcomes for t in total]


@dataclass
class ToyJob(Job):
    """A Job whose module is this toy game (the registry in kernels/ knows only real games)."""

    @property
    def module(self):
        import sys
        return sys.modules[__name__]


def job(policies: list[str]) -> ToyJob:
    """A toy job with these seat policies."""
    seats = np.zeros((len(policies), 4), dtype=np.int64)
    seats[:, 0] = [POLICIES[p] for p in policies]
    return ToyJob(GAME_ID, "base", len(policies), {}, np.zeros(0, dtype=np.int64), list(policies), seats)


def truth(policies: list[str], rotate: bool) -> dict:
    """Exact values every reported interval estimates, for this seating (rotated or not).

    ``seats``: each seat row's win share; ``policies``: name -> share per seat held;
    ``paired``: (a, b) -> share of a minus share of b (names in first-seen order).
    """
    P = len(policies)
    codes = [POLICIES[p] for p in policies]
    rots = [[codes[(s + r) % P] for s in range(P)] for r in range(P)] if rotate else [codes]
    names = list(dict.fromkeys(policies))
    seat = [Fraction(0)] * P
    pol = {q: Fraction(0) for q in names}
    for rc in rots:
        sh = exact_shares(rc)
        for s in range(P):
            seat[s] += sh[s] / len(rots)
            q = next(n for n in names if POLICIES[n] == rc[s])
            pol[q] += sh[s] / len(rots) / policies.count(q)
    paired = {(a, b): pol[a] - pol[b] for i, a in enumerate(names) for b in names[i + 1:]}
    return {"seats": seat, "policies": pol, "paired": paired}
