"""The ``tuned`` policy's knob rows (docs/architecture.md, ``KNOBS``): one loader for every game.

A seat row carries its knob values in the columns ``spec.SEAT_KNOBS + index``. A game resolves
each seat's row once per game: a ``tuned`` seat's own columns (also an ``mc`` seat's whose
rollouts play ``tuned``), every other seat's the game's defaults (the heuristic exactly), and
the defaults for a row too narrow to hold the knobs (hand-built ``(S, 4)`` seat arrays).
"""
from __future__ import annotations

from ._jit import jit
from .spec import SEAT_KNOBS


@jit(inline='always')
def own_knob_row(seats, s, n, p_tuned, p_mc):
    """Does seat ``s`` play with its own row of ``n`` knobs (a tuned seat, or an mc seat whose
    rollouts are tuned)? Otherwise load_knob_row gives it the defaults."""
    if s < seats.shape[0] and seats.shape[1] >= SEAT_KNOBS + n:
        pol = seats[s, 0]
        return pol == p_tuned or (pol == p_mc and seats[s, 2] == p_tuned)
    return False


@jit(inline='always')
def load_own_knob_row(seats, s, n, p_tuned, p_mc, out, at):
    """Seat ``s``'s own row of ``n`` knobs into ``out[at:at + n]`` when it has one (own_knob_row);
    otherwise ``out`` keeps what it holds: the defaults, written once (fill_knob_defaults). For
    kernels that reset their knob rows to the defaults apart from the seats (no call, no copy for
    a seat without its own row)."""
    if own_knob_row(seats, s, n, p_tuned, p_mc):
        for k in range(n):
            out[at + k] = seats[s, SEAT_KNOBS + k]


@jit(inline='always')
def fill_knob_defaults(out, at, defaults, rows, stride):
    """``rows`` knob rows, ``stride`` words apart from ``out[at]``, each set to ``defaults``."""
    n = defaults.shape[0]
    for s in range(rows):
        for k in range(n):
            out[at + stride * s + k] = defaults[k]


@jit
def load_knob_row(seats, s, defaults, p_tuned, p_mc, out, at):
    """Seat ``s``'s knob row into ``out[at:at + len(defaults)]``. A seat ``s`` beyond the seat
    rows gets the defaults; ``p_mc`` = -1 reads no mc seat's knobs (a build without search)."""
    n = defaults.shape[0]
    own = own_knob_row(seats, s, n, p_tuned, p_mc)
    for k in range(n):
        out[at + k] = seats[s, SEAT_KNOBS + k] if own else defaults[k]
