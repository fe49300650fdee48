"""Fold a chunk of result rows (kernels/layout.py) into integer accumulators.

Everything here is an integer sum or count, so folding chunks in any order, on any number of
threads or machines, gives identical totals. Reports turn them into floats at the very end.

``misc`` slots are the M_* constants below.

The unit of independence for intervals is the *deal*: ``win_sq[s]`` is the sum over deals of
(seat s's win units in that deal)^2, where a deal's units are summed over all the games that
replay it (the rotations of a ``--rotate`` run; one game otherwise), and ``misc[M_DEALS]``
counts deals. With ``win_units`` they give the per-deal variance of each seat's share, so a
shared win's smaller variance and the correlation of a deal's rotations are both accounted for.

The arc sums (``arc_misc``, ``arc_start``, ``arc_end``) are kernels/arc.py's fold of the rows'
arc blocks (games with opponents only).
"""
from __future__ import annotations

import numba
import numpy as np

from . import arc, builds
from ._jit import jit
from .layout import (FLAG_TIMEOUT, SHARE_UNIT, RowLayout, col_counter, col_decisions, col_flags, col_length,
                     col_place, col_winners)

M_GAMES, M_TIES, M_TIMEOUTS, M_GAP_SUM, M_GAP_GAMES, M_DECISIONS, M_OUT_OF_RANGE, M_DEALS = range(8)
N_MISC = 8
# every accumulator array, merged by adding (the Dask backend ships them by these names)
ACC_FIELDS = ("win_units", "win_sq", "place_counts", "score_hist", "len_hist", "counters", "misc",
              "arc_misc", "arc_start", "arc_end", "arc_deal")
# ``arc_deal[slot]``: sums over deals of r, h, r^2, h^2, h*r, where r and h are a deal's games
# reaching the arc checkpoint ``slot`` and those in which a leader there won (kernels/arc.py),
# and D_N: the number of deals with r > 0 (the interval's unit count when the deals show no spread)
D_R, D_H, D_RR, D_HH, D_HR, D_N = range(6)
N_DEAL_SUMS = 6


class Accumulators:
    """The integer state of one job: allocate once, fold every chunk into it, merge by adding."""

    FIELDS = ACC_FIELDS

    def __init__(self, n_seats: int, n_counters: int, score_lo: int, score_hi: int,
                 len_lo: int, len_hi: int):
        self.n_seats, self.n_counters = n_seats, n_counters
        self.score_lo, self.len_lo = score_lo, len_lo
        self.win_units = np.zeros(n_seats, dtype=np.int64)
        self.win_sq = np.zeros(n_seats, dtype=np.int64)
        self.place_counts = np.zeros((n_seats, n_seats + 1), dtype=np.int64)
        self.score_hist = np.zeros((n_seats, score_hi - score_lo + 1), dtype=np.int64)
        self.len_hist = np.zeros(len_hi - len_lo + 1, dtype=np.int64)
        self.counters = np.zeros(n_counters, dtype=np.int64)
        self.misc = np.zeros(N_MISC, dtype=np.int64)
        self.arc_misc = np.zeros(arc.N_X, dtype=np.int64)
        self.arc_start = np.zeros((arc.DEPTH, arc.N_T), dtype=np.int64)
        self.arc_end = np.zeros((arc.DEPTH, arc.N_T), dtype=np.int64)
        self.arc_deal = np.zeros((arc.N_SLOTS, N_DEAL_SUMS), dtype=np.int64)

    def fold(self, out: np.ndarray, lower_is_better: bool, game_is_deal: bool = True) -> None:
        """Fold result rows. ``game_is_deal`` False: the rows are one rotation of deals whose
        per-deal squares are folded separately (``fold_deals``), once per deal.

        With Numba set to several threads and enough rows, the rows are folded in parts at once
        (``fold_part`` runs without the GIL: this thread folds the first part, the kernels'
        thread pool the others, kernels/builds.py), each into its own row of the per-part arrays, which are then added in order.
        Every accumulator is an integer sum: the totals do not depend on the parts."""
        seen = (self.arc_start.copy(), self.arc_end.copy())
        n = out.shape[0]
        parts = fold_parts_of(n, numba.get_num_threads())
        partial = self._partial(parts)
        head = self._fold_head(lower_is_better, game_is_deal)
        calls = [(out, p * n // parts, (p + 1) * n // parts, *head, *[x[p] for x in partial])
                 for p in range(parts)]
        waits = [builds.thread_pool().submit(fold_part, *c) for c in calls[1:]]
        fold_part(*calls[0])
        for w in waits:
            w.result()
        for name, part in zip(FOLD_FIELDS, partial):
            getattr(self, name).__iadd__(part.sum(axis=0))   # the parts' sums, added in order
        if game_is_deal and self.n_seats > 1:   # rotated runs fold a deal's hits (fold_arc_deals)
            self._fold_game_deals(*seen)

    def arc_hits(self, out: np.ndarray, hits: np.ndarray | None = None) -> np.ndarray:
        """Per-row arc checkpoint hits (rows x arc.N_SLOTS x 2), added into ``hits`` if given
        (the rotations of one deal share a row)."""
        S = self.n_seats
        if hits is None:
            hits = np.zeros((out.shape[0], arc.N_SLOTS, 2), dtype=np.int64)
        row = RowLayout(S, self.n_counters)
        arc.game_hits(out, row.arc.start, S, row.winners, row.flags, hits)
        return hits

    def _fold_game_deals(self, start0: np.ndarray, end0: np.ndarray) -> None:
        """The arc's per-deal sums when every folded row is its own deal, from what ``arc.fold_rows``
        just added to ``arc_start`` / ``arc_end`` (whose values before were ``start0`` / ``end0``).

        A game reaches a slot at most once (r = 1) and its leader wins there at most once
        (h <= r), so r^2 = r, h^2 = h * r = h and the deals reaching a slot are the games reaching
        it; ``fold_rows`` counts those games (T_GAMES) and leader wins (T_LEADER_WINS) per slot
        with the same exclusions and masks as ``arc.game_hits``. Nothing per row is done again."""
        r = np.concatenate([self.arc_start[:, arc.T_GAMES] - start0[:, arc.T_GAMES],
                            self.arc_end[:, arc.T_GAMES] - end0[:, arc.T_GAMES]])
        h = np.concatenate([self.arc_start[:, arc.T_LEADER_WINS] - start0[:, arc.T_LEADER_WINS],
                            self.arc_end[:, arc.T_LEADER_WINS] - end0[:, arc.T_LEADER_WINS]])
        for col in (D_R, D_RR, D_N):
            self.arc_deal[:, col] += r
        for col in (D_H, D_HH, D_HR):
            self.arc_deal[:, col] += h

    def fold_arc_deals(self, hits: np.ndarray) -> None:
        """Per-deal sums for the arc intervals, from hits summed over each deal's games."""
        fold_hits(hits, self.arc_deal)

    def _partial(self, parts: int) -> list:
        """Per-part accumulators (FOLD_FIELDS), one row a part."""
        return [np.zeros((parts,) + getattr(self, name).shape, dtype=np.int64) for name in FOLD_FIELDS]

    def _fold_head(self, lower_is_better: bool, game_is_deal: bool) -> tuple:
        """``fold_part``'s arguments after the rows' range, before the accumulators."""
        S = self.n_seats
        arc_base = RowLayout(S, self.n_counters).arc.start if S > 1 else -1  # solo: no arc block
        return (S, self.n_counters, self.score_lo, self.len_lo, bool(lower_is_better), bool(game_is_deal),
                arc_base)

    def fold_calls(self, out: np.ndarray, lower_is_better: bool, game_is_deal: bool = True) -> list:
        """The jitted call ``fold`` makes (once per part), as (function, arguments), for
        simcli.compile's check of what the disk cache holds: ``fold_part`` over every row."""
        head = self._fold_head(lower_is_better, game_is_deal)
        return [(fold_part, (out, 0, out.shape[0], *head, *[x[0] for x in self._partial(1)]))]

    def fold_deals(self, units: np.ndarray) -> None:
        """Per-deal win units (deals x seats, summed over a deal's rotations): squares and count."""
        self.win_sq += (units * units).sum(axis=0)
        self.misc[M_DEALS] += units.shape[0]

    def merge(self, other: "Accumulators") -> None:
        for name in ACC_FIELDS:
            getattr(self, name).__iadd__(getattr(other, name))

    def arrays(self) -> dict:
        return {name: getattr(self, name) for name in ACC_FIELDS}


@jit
def fold_chunk(out, S, C, score_lo, len_lo, lower_better, game_is_deal, win_units, win_sq,
               place_counts, score_hist, len_hist, counters, misc):
    """Fold result rows into the accumulators (``fold_part`` calls it on blocks of rows that fit in
    cache). The misc sums are kept in local variables and added once."""
    n_score = score_hist.shape[1]
    n_len = len_hist.shape[0]
    c_winners, c_length, c_flags = col_winners(S), col_length(S), col_flags(S)
    c_decisions, c_counter0 = col_decisions(S), col_counter(S, 0)
    n = out.shape[0]
    decisions = 0
    timeouts = 0
    ties = 0
    out_of_range = 0
    gap_sum = 0
    gap_games = 0
    for i in range(n):
        winners = out[i, c_winners]
        decisions += out[i, c_decisions]
        if out[i, c_flags] & FLAG_TIMEOUT:
            timeouts += 1
        n_win = 0
        for s in range(S):
            n_win += (winners >> s) & 1
        if n_win > 1:
            ties += 1
        first_winner = -1
        for s in range(S):
            if (winners >> s) & 1:
                win_units[s] += SHARE_UNIT // n_win
                if game_is_deal:
                    win_sq[s] += (SHARE_UNIT // n_win) ** 2
                if first_winner < 0:
                    first_winner = s
            place = out[i, col_place(S, s)]
            if 1 <= place <= S:
                place_counts[s, place] += 1
            b = out[i, s] - score_lo
            if 0 <= b < n_score:
                score_hist[s, b] += 1
            else:
                out_of_range += 1
        b = out[i, c_length] - len_lo
        if 0 <= b < n_len:
            len_hist[b] += 1
        else:
            out_of_range += 1
        # leader gap: a winner's score against the best score among the other seats
        if first_winner >= 0 and n_win < S:
            best_other = 0
            found = False
            for s in range(S):
                if not (winners >> s) & 1:
                    v = out[i, s]
                    if not found or (v < best_other if lower_better else v > best_other):
                        best_other = v
                        found = True
            gap = out[i, first_winner] - best_other
            gap_sum += -gap if lower_better else gap
            gap_games += 1
        for c in range(C):
            counters[c] += out[i, c_counter0 + c]
    misc[M_GAMES] += n
    if game_is_deal:
        misc[M_DEALS] += n
    misc[M_DECISIONS] += decisions
    misc[M_TIMEOUTS] += timeouts
    misc[M_TIES] += ties
    misc[M_OUT_OF_RANGE] += out_of_range
    misc[M_GAP_SUM] += gap_sum
    misc[M_GAP_GAMES] += gap_games


# the fold in parts: at least this many rows per part, and rows per block inside a part (the
# arc pass reads a block's rows right after fold_chunk did, while they are in cache)
FOLD_PART_ROWS = 4096
FOLD_BLOCK_ROWS = 256
# the accumulators the row folds fill (the rest come from the per-deal folds)
FOLD_FIELDS = ("win_units", "win_sq", "place_counts", "score_hist", "len_hist", "counters", "misc",
               "arc_misc", "arc_start", "arc_end")


def fold_parts_of(n: int, threads: int) -> int:
    """Parts of a fold of n rows on ``threads`` threads: one per thread, each of FOLD_PART_ROWS
    rows or more."""
    return max(1, min(threads, n // FOLD_PART_ROWS))


@jit
def fold_part(out, lo, hi, S, C, score_lo, len_lo, lower_better, game_is_deal, arc_base,
              win_units, win_sq, place_counts, score_hist, len_hist, counters, misc, arc_misc,
              arc_start, arc_end):
    """Rows [lo, hi) of ``out`` folded, block by block, into fresh accumulators shaped like the
    arguments, added into them at the end (one part of ``Accumulators.fold``: the arguments are
    its row of the per-part arrays). Its own accumulators while it folds: no cache line shared
    with a part folded at the same time on another thread."""
    wu = np.zeros_like(win_units)
    wq = np.zeros_like(win_sq)
    pc = np.zeros_like(place_counts)
    sh = np.zeros_like(score_hist)
    lh = np.zeros_like(len_hist)
    co = np.zeros_like(counters)
    mi = np.zeros_like(misc)
    am = np.zeros_like(arc_misc)
    ast = np.zeros_like(arc_start)
    ae = np.zeros_like(arc_end)
    for b in range(lo, hi, FOLD_BLOCK_ROWS):
        rows = out[b:min(hi, b + FOLD_BLOCK_ROWS)]
        fold_chunk(rows, S, C, score_lo, len_lo, lower_better, game_is_deal, wu, wq, pc, sh, lh, co, mi)
        if arc_base >= 0:
            arc.fold_rows(rows, arc_base, S, col_winners(S), col_flags(S), am, ast, ae)
    win_units += wu
    win_sq += wq
    place_counts += pc
    score_hist += sh
    len_hist += lh
    counters += co
    misc += mi
    arc_misc += am
    arc_start += ast
    arc_end += ae


@jit
def fold_hits(hits, deal):
    """``arc_deal`` sums (D_*) from per-deal hits (deals x arc.N_SLOTS x 2): r, h, r^2, h^2, h*r
    and the deals with r > 0, per slot."""
    for i in range(hits.shape[0]):
        for k in range(hits.shape[1]):
            r = hits[i, k, arc.H_REACHED]
            h = hits[i, k, arc.H_LEADER_WINS]
            deal[k, D_R] += r
            deal[k, D_H] += h
            deal[k, D_RR] += r * r
            deal[k, D_HH] += h * h
            deal[k, D_HR] += h * r
            if r > 0:
                deal[k, D_N] += 1

