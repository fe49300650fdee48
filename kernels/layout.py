"""The one per-game result record, shared by every game.

``out`` is an int64 matrix, one row per game, ``out_width(S, C)`` columns, with S seat rows
(players, plus the Rival in forecasts-bid's Rival Station) and C game counters:

    [0, S)        score of each seat (final, in the game's own points)
    [S, 2S)       finishing place of each seat, 1 = best; ties share the better place
    2S            WINNERS: bit mask of winning seats (0 = no winner, i.e. a timeout)
    2S+1          LENGTH: game length in the game's declared unit (tricks, turns, ...)
    2S+2          FLAGS: bit 0 = timeout (hit the safety cap or a stalemate)
    2S+3          DECISIONS: number of decisions taken by all seats (for decisions/s)
    [2S+4, +C)    the game's counters, in the order of its COUNTERS declaration
    [2S+4+C, +A)  the arc block (kernels/arc.py): checkpoint standings folded per game,
                  A = ARC_FIXED + S columns (none when S = 1, a solo game)

A trace event is an int64 row of ``EVENT_WIDTH`` fields: ``[code, seat, v0, v1, ...]``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._jit import jit

FLAG_TIMEOUT = 1
N_FIXED = 4
EVENT_WIDTH = 24
ARC_FIXED = 8       # arc block columns before its one-per-seat part (kernels/arc.py)
SHARE_UNIT = 60  # a k-way shared victory adds SHARE_UNIT // k; 60 divides by every k <= 6


@jit
def col_place(S, s):
    return S + s


@jit
def col_winners(S):
    return 2 * S


@jit
def col_length(S):
    return 2 * S + 1


@jit
def col_flags(S):
    return 2 * S + 2


@jit
def col_decisions(S):
    return 2 * S + 3


@jit
def col_counter(S, i):
    return 2 * S + N_FIXED + i


@jit
def col_arc(S, C):
    """First column of the arc block, after the C counters."""
    return 2 * S + N_FIXED + C


@dataclass(frozen=True)
class RowLayout:
    """The columns of a result row for ``S`` seat rows and ``C`` counters, by name (Python side;
    the kernels use the ``col_*`` functions above, which this mirrors)."""
    S: int
    C: int

    @property
    def scores(self) -> slice:
        return slice(0, self.S)

    @property
    def places(self) -> slice:
        return slice(self.S, 2 * self.S)

    @property
    def winners(self) -> int:
        return 2 * self.S

    @property
    def length(self) -> int:
        return 2 * self.S + 1

    @property
    def flags(self) -> int:
        return 2 * self.S + 2

    @property
    def decisions(self) -> int:
        return 2 * self.S + 3

    def counter(self, i: int) -> int:
        return 2 * self.S + N_FIXED + i

    @property
    def counters(self) -> slice:
        return slice(2 * self.S + N_FIXED, 2 * self.S + N_FIXED + self.C)

    @property
    def arc(self) -> slice:
        start = 2 * self.S + N_FIXED + self.C
        return slice(start, start + arc_width(self.S))

    @property
    def width(self) -> int:
        return out_width(self.S, self.C)

    @classmethod
    def of(cls, seats, counters) -> "RowLayout":
        """From a seats array (its rows) and a game's ``COUNTERS`` (or their number)."""
        n = counters if isinstance(counters, int) else len(counters)
        return cls(int(seats.shape[0]) if hasattr(seats, "shape") else int(seats), n)

    @classmethod
    def of_width(cls, width: int, n_counters: int) -> "RowLayout":
        """From a row's width and the number of counters (a game with opponents: width = 3S + 12 + C)."""
        S = (width - N_FIXED - n_counters - ARC_FIXED) // 3
        if S < 2:  # a solo game has no arc block
            S = (width - N_FIXED - n_counters) // 2
        return cls(S, n_counters)


def arc_width(n_seats: int) -> int:
    """Columns of the arc block: none for a solo game (no one to lead)."""
    return ARC_FIXED + n_seats if n_seats > 1 else 0


def out_width(n_seats: int, n_counters: int) -> int:
    return 2 * n_seats + N_FIXED + n_counters + arc_width(n_seats)


GAME_BLOCK = 64  # games per work item of a game's parallel play_games: one set of working arrays each


@jit
def game_blocks(n):
    """(block size, block count) for a parallel driver over ``n`` games: blocks of GAME_BLOCK,
    smaller when there are few games (a search player's chunk: at least 16 blocks, so every
    thread gets work). Blocking never changes a result: game g is row g whatever the block."""
    bs = min(GAME_BLOCK, max(1, n // 16))
    return bs, (n + bs - 1) // bs


@jit
def no_events():
    """An empty event buffer and its count, for bulk play (nothing is traced). A parallel driver
    takes them from here instead of allocating them itself: in a ``parallel=True`` function each
    ``np.zeros`` outside the prange is a parallel region of its own, i.e. one more wake-up of
    every thread per chunk (costly when the other core is busy)."""
    return np.zeros((0, EVENT_WIDTH), dtype=np.int64), np.zeros(1, dtype=np.int64)


@jit
def record_event(ev, ev_n, code, seat, v0=0, v1=0, v2=0, v3=0, v4=0, v5=0, v6=0, v7=0):
    """Append one event row if recording (``ev`` has rows); ``ev_n[0]`` counts rows written.

    Rows past the buffer are counted but dropped, so the caller can detect overflow.
    """
    n = ev_n[0]
    if n < ev.shape[0]:
        ev[n, 0] = code
        ev[n, 1] = seat
        ev[n, 2] = v0
        ev[n, 3] = v1
        ev[n, 4] = v2
        ev[n, 5] = v3
        ev[n, 6] = v4
        ev[n, 7] = v5
        ev[n, 8] = v6
        ev[n, 9] = v7
    ev_n[0] = n + 1


@jit
def places_from_keys(keys, S, row, out):
    """Write competition-style places (1 = best, ties share) for seats by descending ``keys``."""
    for s in range(S):
        better = 0
        for t in range(S):
            if keys[t] > keys[s]:
                better += 1
        out[row, S + s] = better + 1
