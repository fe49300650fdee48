"""Game arcs: running standings at checkpoints, kept as integers (issue #16).

A game with opponents calls ``checkpoint`` once per checkpoint (forecasts-cubes, forecasts-bid
and pgc after every round; sudden-skies after every full turn of the table and at the end) with
each seat's running standing. The leaders are the seats with the best standing (highest, or
lowest where fewest points win); a seat is strictly last when every other seat stands better.
``checkpoint`` keeps a small block of integers per game (``arc block``, ``width(S)`` columns,
stored after the counters of the result row, see kernels/layout.py; a solo game has none):

    A_K           checkpoints so far (K at the end of the game)
    A_CHANGES     checkpoints after the first whose leader set differs from the previous one's
    A_LAST_OR     OR of the strictly-last masks of the checkpoints before the latest
    A_LAST_NOW    strictly-last mask of the latest checkpoint
    A_FIRST+w     leader masks of checkpoints 1..STORED (MASK_BITS bits each, PER_WORD a word)
    A_END+w       leader masks of the last STORED checkpoints, the newest in the lowest bits
    A_NOT_LEAD+s  the latest checkpoint at which seat s was not a leader (0: always a leader)

Every word stays non-negative (PER_WORD * MASK_BITS < 63). ``fold_arc`` turns the blocks of a
chunk of result rows into integer sums; simcli/report.py makes the floats. Games without a
winner (timeouts) or without checkpoints are excluded from the sums and counted.
"""
from __future__ import annotations

from ._jit import jit, jit_borrowing
from .cards import ix
from .layout import ARC_FIXED, FLAG_TIMEOUT, record_event
from .spec import Event

MASK_BITS = 7            # bits per leader mask: at most 7 seat rows
PER_WORD = 9             # masks per int64 word (63 bits used: the word stays non-negative)
N_WORDS = 2
STORED = PER_WORD * N_WORDS   # leader masks kept from each end of the game (18)
DEPTH = 16               # checkpoints reported from each end (the end needs one more mask)
LOW_MASK = (1 << MASK_BITS) - 1
WORD_MASK = (1 << (MASK_BITS * PER_WORD)) - 1
A_K, A_CHANGES, A_LAST_OR, A_LAST_NOW = 0, 1, 2, 3
A_FIRST = 4
A_END = A_FIRST + N_WORDS
A_NOT_LEAD = A_END + N_WORDS
N_ARC_FIXED = A_NOT_LEAD
assert N_ARC_FIXED == ARC_FIXED, "kernels/layout.py sizes the arc block"
# decided_at = k / K is summed in units of 1 / DECIDED_UNIT, rounded to nearest: exact for every
# K <= 12 (27720 = lcm(1..12)), within 1.8e-5 per game otherwise; its square stays far from
# int64 overflow (7.7e8 per game)
DECIDED_UNIT = 27720

# fold_arc's sums (``misc`` slots)
(X_GAMES, X_EXCLUDED, X_CHECKPOINTS, X_CHANGES, X_CHANGES_SQ, X_COMEBACKS, X_DECIDED,
 X_DECIDED_SQ, X_SWINGS) = range(9)
N_X = 9
# per checkpoint from the start (row c-1 = checkpoint c) and from the end (row j = K - j)
T_GAMES, T_LEADER_WINS, T_CHANGE_GAMES, T_CHANGES = range(4)
N_T = 4


@jit
def width(S):
    """Columns of the arc block for S seat rows."""
    return N_ARC_FIXED + S


def checkpoint_event(code: int) -> Event:
    """The trace event ``checkpoint`` records: one per seat and checkpoint."""
    return Event(code, "checkpoint", ("checkpoint", "standing", "leader", "strictly_last"))


@jit_borrowing   # allocates nothing; no reference counts on its five array arguments per call
def checkpoint(a, r, base, S, standing, so, lower_better, ev, ev_n, code):
    """Record one checkpoint into the arc block ``a[r, base:base + width(S)]`` (a result row).

    ``standing[so + s]`` is seat s's running standing (an offset, not a slice: no view is made
    in kernels compiled without reference counting); with ``lower_better`` the lowest is best.
    When ``ev`` has rows, one ``code`` event per seat: checkpoint number (1-based), standing,
    leader (0/1), strictly last (0/1).
    """
    checkpoint_inline(a, r, base, S, standing, so, lower_better, ev, ev_n, code)


@jit(inline='always')
def checkpoint_inline(a, r, base, S, standing, so, lower_better, ev, ev_n, code):
    """``checkpoint``, inlined into its caller: a call passes each of its three arrays as 7 words
    (forecasts-bid: ~260 instructions a round for the call, measured; inlined, ``lower_better``
    is a constant and the indices unsigned). Every index is >= 0 (``ix``: no wraparound)."""
    ru = ix(r)
    # one pass: the leaders' and the last seats' masks (standings negated when lower is better)
    sign = -1 if lower_better else 1
    best = sign * standing[so]
    worst = best
    lead = 1
    last = 1
    for s in range(1, S):
        v = sign * standing[so + s]
        if v > best:
            best = v
            lead = 1 << s
        elif v == best:
            lead |= 1 << s
        if v < worst:
            worst = v
            last = 1 << s
        elif v == worst:
            last |= 1 << s
    if (last & (last - 1)) != 0 or S < 2:   # strictly last: one seat below every other
        last = 0
    k = a[ru, ix(base + A_K)] + 1
    a[ru, ix(base + A_K)] = k
    e0 = a[ru, ix(base + A_END)]
    if k > 1 and (e0 & LOW_MASK) != lead:
        a[ru, ix(base + A_CHANGES)] += 1
    a[ru, ix(base + A_LAST_OR)] |= a[ru, ix(base + A_LAST_NOW)]
    a[ru, ix(base + A_LAST_NOW)] = last
    if k <= STORED:
        i = k - 1
        a[ru, ix(base + A_FIRST + i // PER_WORD)] |= lead << (MASK_BITS * (i % PER_WORD))
    # the end window: shift every mask one slot older, the oldest drops out
    for w in range(N_WORDS - 1, 0, -1):
        older = a[ru, ix(base + A_END + w - 1)] >> (MASK_BITS * (PER_WORD - 1))
        a[ru, ix(base + A_END + w)] = ((a[ru, ix(base + A_END + w)] << MASK_BITS) | older) & WORD_MASK
    a[ru, ix(base + A_END)] = ((e0 << MASK_BITS) | lead) & WORD_MASK
    for s in range(S):
        if not (lead >> s) & 1:
            a[ru, ix(base + A_NOT_LEAD + s)] = k
    if ev.shape[0] > 0:
        for s in range(S):
            record_event(ev, ev_n, code, s, k, standing[so + s], (lead >> s) & 1, (last >> s) & 1)


@jit
def reset(out, row, base, S):
    """Zero the arc block of ``out[row]`` (for a kernel that does not zero its whole row)."""
    for i in range(N_ARC_FIXED + S):
        out[row, base + i] = 0


@jit
def copy_block(a, r, abase, out, row, base, S):
    """Copy an arc block kept outside the result row (``a[r, abase:]``) into ``out[row, base:]``."""
    for i in range(N_ARC_FIXED + S):
        out[row, base + i] = a[r, abase + i]


@jit
def first_mask(a, r, base, c):
    """Leader mask at checkpoint c (1-based, c <= STORED)."""
    i = c - 1
    return (a[r, base + A_FIRST + i // PER_WORD] >> (MASK_BITS * (i % PER_WORD))) & LOW_MASK


@jit
def end_mask(a, r, base, j):
    """Leader mask at checkpoint K - j (j = 0 the final one, j < STORED)."""
    return (a[r, base + A_END + j // PER_WORD] >> (MASK_BITS * (j % PER_WORD))) & LOW_MASK


@jit
def decided_checkpoint(a, r, base, S, winners):
    """k: the earliest checkpoint from which some final winner leads at every later one (K if none)."""
    K = a[r, base + A_K]
    k = K
    for s in range(S):
        if (winners >> s) & 1:
            k = min(k, a[r, base + A_NOT_LEAD + s] + 1)
    return k


@jit
def fold_rows(out, base, S, winners_col, flags_col, misc, start, end):
    """Fold the arc blocks of every row of ``out`` into ``misc`` (X_*) and the per-checkpoint
    tallies ``start`` / ``end`` (DEPTH x N_T): integer sums only."""
    for i in range(out.shape[0]):
        K = out[i, base + A_K]
        if K == 0:
            continue
        winners = out[i, winners_col]
        if winners == 0 or (out[i, flags_col] & FLAG_TIMEOUT):
            misc[X_EXCLUDED] += 1
            continue
        misc[X_GAMES] += 1
        misc[X_CHECKPOINTS] += K
        ch = out[i, base + A_CHANGES]
        misc[X_CHANGES] += ch
        misc[X_CHANGES_SQ] += ch * ch
        if out[i, base + A_LAST_OR] & winners:
            misc[X_COMEBACKS] += 1
        k = decided_checkpoint(out, i, base, S, winners)
        q = (2 * k * DECIDED_UNIT + K) // (2 * K)
        misc[X_DECIDED] += q
        misc[X_DECIDED_SQ] += q * q
        # before the first checkpoint every seat leads (all stand equal): a one-checkpoint
        # game has no swing
        if K >= 2 and (end_mask(out, i, base, 1) & winners) == 0:
            misc[X_SWINGS] += 1
        for c in range(1, min(K, DEPTH) + 1):
            m = first_mask(out, i, base, c)
            start[c - 1, T_GAMES] += 1
            if m & winners:
                start[c - 1, T_LEADER_WINS] += 1
            if c >= 2:
                start[c - 1, T_CHANGE_GAMES] += 1
                if m != first_mask(out, i, base, c - 1):
                    start[c - 1, T_CHANGES] += 1
        for j in range(min(K, DEPTH)):
            m = end_mask(out, i, base, j)
            end[j, T_GAMES] += 1
            if m & winners:
                end[j, T_LEADER_WINS] += 1
            if K - j >= 2:
                end[j, T_CHANGE_GAMES] += 1
                if m != end_mask(out, i, base, j + 1):
                    end[j, T_CHANGES] += 1


# Per-deal tallies for the arc table's intervals: for each stored checkpoint slot (from the start
# c = 1..DEPTH at slot c-1, from the end j = 0..DEPTH-1 at slot DEPTH + j) a game adds 1 to
# H_REACHED if it has a winner and reaches the checkpoint, and 1 to H_LEADER_WINS if also some
# leader there is a final winner. Rotations of one deal add into the same row, so the report can
# take the deal as the unit (simcli/report.py, a ratio estimator over deals).
H_REACHED, H_LEADER_WINS = 0, 1
N_SLOTS = 2 * DEPTH


@jit
def game_hits(out, base, S, winners_col, flags_col, hits):
    """Add each row's per-checkpoint (reached, leader wins) into ``hits[row]`` (N_SLOTS x 2)."""
    for i in range(out.shape[0]):
        K = out[i, base + A_K]
        winners = out[i, winners_col]
        if K == 0 or winners == 0 or (out[i, flags_col] & FLAG_TIMEOUT):
            continue
        for c in range(1, min(K, DEPTH) + 1):
            hits[i, c - 1, H_REACHED] += 1
            if first_mask(out, i, base, c) & winners:
                hits[i, c - 1, H_LEADER_WINS] += 1
        for j in range(min(K, DEPTH)):
            hits[i, DEPTH + j, H_REACHED] += 1
            if end_mask(out, i, base, j) & winners:
                hits[i, DEPTH + j, H_LEADER_WINS] += 1
