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

import numpy as np
from numba import prange

from . import arc
from ._jit import jit, pjit
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
        per-deal squares are folded separately (``fold_deals``), once per deal."""
        seen = (self.arc_start.copy(), self.arc_end.copy())
        for fn, args in self.fold_calls(out, lower_is_better, game_is_deal):
            fn(*args)
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

    def fold_calls(self, out: np.ndarray, lower_is_better: bool, game_is_deal: bool = True) -> list:
        """The jitted calls ``fold`` makes, as (function, arguments): one list for folding and for
        simcli.compile's check of what the disk cache holds. One call: ``fold_all`` folds the rows
        and (a game with opponents) their arc blocks in one pass, its parts on Numba's threads."""
        S = self.n_seats
        row = RowLayout(S, self.n_counters)
        arc_base = row.arc.start if S > 1 else -1   # a solo game's rows have no arc block
        return [(fold_all, (out, S, self.n_counters, self.score_lo, self.len_lo, bool(lower_is_better),
                            bool(game_is_deal), arc_base, self.win_units, self.win_sq,
                            self.place_counts, self.score_hist, self.len_hist, self.counters,
                            self.misc, self.arc_misc, self.arc_start, self.arc_end))]

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
    """Fold result rows into the accumulators (``fold_all`` calls it on blocks of rows that fit in
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


# fold_all: rows per part (a work item of the parallel fold) and per block inside a part (the
# arc pass reads a block's rows right after fold_chunk did, while they are in cache)
FOLD_PART_ROWS = 4096
FOLD_MAX_PARTS = 32
FOLD_BLOCK_ROWS = 256


@jit
def fold_part(out, lo, hi, S, C, score_lo, len_lo, lower_better, game_is_deal, arc_base,
              win_units, win_sq, place_counts, score_hist, len_hist, counters, misc, arc_misc,
              arc_start, arc_end):
    """Rows [lo, hi) of ``out`` folded, block by block, into fresh accumulators shaped like the
    arguments, added into them at the end (one part of ``fold_all``: the accumulators it is given
    are its own row of fold_all's per-part arrays). Allocating here, in a called function, keeps
    Numba from hoisting the allocations out of fold_all's prange (each part must have its own)."""
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


@pjit
def fold_parts(out, S, C, score_lo, len_lo, lower_better, game_is_deal, arc_base, p_win_units,
               p_win_sq, p_place, p_score, p_len, p_counters, p_misc, p_arc_misc, p_arc_start,
               p_arc_end):
    """``fold_part`` for each part of ``out`` (the leading axis of the per-part accumulators), on
    Numba's threads. Nothing else here: in a ``parallel=True`` function an array expression or an
    ``np.zeros`` is a parallel region of its own, each a wake-up of the other threads."""
    n = out.shape[0]
    parts = p_misc.shape[0]
    for p in prange(parts):
        fold_part(out, p * n // parts, (p + 1) * n // parts, S, C, score_lo, len_lo, lower_better,
                  game_is_deal, arc_base, p_win_units[p], p_win_sq[p], p_place[p], p_score[p],
                  p_len[p], p_counters[p], p_misc[p], p_arc_misc[p], p_arc_start[p], p_arc_end[p])


@jit
def fold_all(out, S, C, score_lo, len_lo, lower_better, game_is_deal, arc_base, win_units, win_sq,
             place_counts, score_hist, len_hist, counters, misc, arc_misc, arc_start, arc_end):
    """``fold_chunk`` and (``arc_base`` >= 0) ``arc.fold_rows`` over every row of ``out``, in
    parts on Numba's threads (``fold_parts``): each part folds its rows block by block into
    accumulators of its own (``fold_part``: no cache line shared with another part), then the
    parts are added in order. Every accumulator is an integer sum, so the totals are those of one
    serial pass whatever the parts or threads."""
    n = out.shape[0]
    parts = max(1, min(FOLD_MAX_PARTS, n // FOLD_PART_ROWS))
    p_win_units = np.zeros((parts,) + win_units.shape, dtype=np.int64)
    p_win_sq = np.zeros((parts,) + win_sq.shape, dtype=np.int64)
    p_place = np.zeros((parts,) + place_counts.shape, dtype=np.int64)
    p_score = np.zeros((parts,) + score_hist.shape, dtype=np.int64)
    p_len = np.zeros((parts,) + len_hist.shape, dtype=np.int64)
    p_counters = np.zeros((parts,) + counters.shape, dtype=np.int64)
    p_misc = np.zeros((parts,) + misc.shape, dtype=np.int64)
    p_arc_misc = np.zeros((parts,) + arc_misc.shape, dtype=np.int64)
    p_arc_start = np.zeros((parts,) + arc_start.shape, dtype=np.int64)
    p_arc_end = np.zeros((parts,) + arc_end.shape, dtype=np.int64)
    if parts == 1:      # one part: no parallel region (no wake-up of the other threads)
        fold_part(out, 0, n, S, C, score_lo, len_lo, lower_better, game_is_deal, arc_base,
                  p_win_units[0], p_win_sq[0], p_place[0], p_score[0], p_len[0], p_counters[0],
                  p_misc[0], p_arc_misc[0], p_arc_start[0], p_arc_end[0])
    else:
        fold_parts(out, S, C, score_lo, len_lo, lower_better, game_is_deal, arc_base, p_win_units,
                   p_win_sq, p_place, p_score, p_len, p_counters, p_misc, p_arc_misc, p_arc_start,
                   p_arc_end)
    for p in range(parts):
        win_units += p_win_units[p]
        win_sq += p_win_sq[p]
        place_counts += p_place[p]
        score_hist += p_score[p]
        len_hist += p_len[p]
        counters += p_counters[p]
        misc += p_misc[p]
        arc_misc += p_arc_misc[p]
        arc_start += p_arc_start[p]
        arc_end += p_arc_end[p]


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

