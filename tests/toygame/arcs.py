"""A test-only toy game with game arcs whose leader-win rates are known exactly (not a real game).

It is the toy game's contract (tests/toygame) with one winner per game and an arc block
(kernels/arc.py) written in numpy. Everything is decided by the deal's own stream (a pure
function of seed and game index), so every rotation of a deal replays the same game: the
rotations of a deal agree perfectly, the case in which counting them as games would overstate
the evidence most.

- The winner is seat ``w``, uniform over the seats (S a power of two).
- Most games have one checkpoint (the final standing: its leader is the winner). One game in
  ``RARE`` has four, so checkpoints 2, 3, 4 from the start (1, 2, 3 from the end) are reached
  rarely: at checkpoint 4 (the final one) the leader always wins; at checkpoint 3 the leader is
  the winner with probability 15/16; at checkpoint 2 with probability 1/16; at checkpoint 1 the
  leader is another seat, so a leader there never wins.

``TRUTH`` maps (counted, checkpoint) of the arc table to the exact leader_wins of those points.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from kernels import arc, layout
from simcli.config.jobs import Job
from . import (COUNTERS, EVENTS, LENGTH_UNIT, LOWER_IS_BETTER,  # noqa: F401 (the contract)
               PLAYER_COUNTS, POLICIES, RULES, _stream, check, derived_metrics,
               extra_seats, length_range, n_seats)

GAME_ID = "toy-arcs"
VERSION = 1
RARE = 64             # one game in RARE has four checkpoints
ARC_KIND = 3          # the stream kind of the arc draws (the toy's deal and seat kinds are 1, 2)
TRUTH = {("start", 2): Fraction(1, 16), ("start", 3): Fraction(15, 16), ("start", 4): Fraction(1),
         ("end", 1): Fraction(15, 16), ("end", 2): Fraction(1, 16), ("end", 3): Fraction(0)}


def score_range(players, params):
    return 0, 1


def _pack(masks: np.ndarray) -> np.ndarray:
    """Leader masks (games x checkpoints, oldest first) packed MASK_BITS apart, the first lowest."""
    shifts = arc.MASK_BITS * np.arange(masks.shape[1], dtype=np.int64)
    return (masks << shifts[None, :]).sum(axis=1)


def play_games(params, seats, seed, first_game, out):
    """Row i of ``out`` = game first_game + i: one winner, and its arc block."""
    n, S = out.shape[0], seats.shape[0]
    assert S & (S - 1) == 0, "the winner is uniform over a power-of-two number of seats"
    g = np.arange(int(first_game), int(first_game) + n, dtype=np.int64)
    h = _stream(int(seed), g, ARC_KIND, 0)
    long_game = (h & np.uint64(RARE - 1)) == 0
    w = ((h >> np.uint64(8)) & np.uint64(S - 1)).astype(np.int64)
    cp3_wins = ((h >> np.uint64(12)) & np.uint64(15)) != 0          # 15/16
    cp2_wins = ((h >> np.uint64(16)) & np.uint64(15)) == 0          # 1/16
    win, other = np.int64(1) << w, np.int64(1) << ((w + 1) % S)
    out[:] = 0
    out[np.arange(n), w] = 1                                        # scores
    out[:, S:2 * S] = 2
    out[np.arange(n), S + w] = 1                                    # places
    out[:, layout.col_winners(S)] = win
    out[:, layout.col_length(S)] = 1
    out[:, layout.col_decisions(S)] = S
    masks = np.stack([other, np.where(cp2_wins, win, other), np.where(cp3_wins, win, other), win], axis=1)
    K = np.where(long_game, 4, 1)
    first = np.where(long_game, _pack(masks), win)
    end = np.where(long_game, _pack(masks[:, ::-1]), win)
    changes = np.where(long_game, (masks[:, 1:] != masks[:, :-1]).sum(axis=1), 0)
    base = layout.col_arc(S, len(COUNTERS))
    out[:, base + arc.A_K] = K
    out[:, base + arc.A_CHANGES] = changes
    out[:, base + arc.A_FIRST] = first
    out[:, base + arc.A_END] = end
    for s in range(S):   # the latest checkpoint at which seat s did not lead
        led = (masks >> s) & 1
        last_not = np.where(led[:, ::-1] == 0, np.arange(4, 0, -1)[None, :], 0).max(axis=1)
        out[:, base + arc.A_NOT_LEAD + s] = np.where(long_game, last_not, np.where(w == s, 0, 1))


play_games_serial = play_games


@dataclass
class ArcToyJob(Job):
    """A Job whose module is this game (the registry in kernels/ knows only real games)."""

    @property
    def module(self):
        return sys.modules[__name__]


def job(players: int = 4, policy: str = "random") -> ArcToyJob:
    seats = np.zeros((players, 4), dtype=np.int64)
    seats[:, 0] = POLICIES[policy]
    return ArcToyJob(GAME_ID, "base", players, {}, np.zeros(0, dtype=np.int64), [policy] * players, seats)
