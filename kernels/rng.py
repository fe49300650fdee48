"""Counter-based, keyed random streams.

A draw is a pure function of ``(seed, game index, stream kind, stream index, counter)``:

    key    = stream_key(seed, game, kind, index)          # four rounds of splitmix64 finalising
    bits_i = mix64(key + (i + 1) * GOLDEN)                # the splitmix64 sequence from key

Nothing depends on thread count, chunking or execution order, and because each kind of
randomness has its own stream, the cards dealt never depend on anyone's decisions:

* ``DEAL``  index = round number (sudden-death rounds included): shuffles and deals.
* ``SEAT``  index = seat: that seat's policy decisions (random choices, tie-breaks).
* ``AUX``   index = round number: automata and shuffles of cards whose *content* depends on
            play (e.g. the Rival Deck, a reshuffled pile); the permutation is still keyed.
* ``SEARCH`` index = seat: determinisations and rollouts of search players.

``below(keys, ctrs, s, n)`` returns an integer uniform on ``[0, n)`` from stream slot ``s``
(``keys[s]`` its key, ``ctrs[s]`` its counter, advanced by one). It uses the top 32 bits times
``n``, shifted: the bias is at most ``n / 2**32`` (< 1e-8 for any ``n`` a card game needs).
The same arithmetic is restated in plain Python in ``tests/reference/prng.py``.
"""
from __future__ import annotations

import numpy as np

from ._jit import jit

GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_S32 = np.uint64(32)

# Stream kinds.
DEAL = 1
SEAT = 2
AUX = 3
SEARCH = 4


@jit
def mix64(z):
    """splitmix64's finaliser: a bijection on 64-bit words with full avalanche."""
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@jit
def stream_key(seed, game, kind, index):
    """The key of one stream; all arguments are non-negative integers below 2**63."""
    return index_key(kind_key(game_key(seed, game), kind), index)


# stream_key in stages, for a kernel that derives many keys of one game: the (seed, game) and
# (seed, game, kind) prefixes are computed once instead of once per stream (same keys).
@jit
def game_key(seed, game):
    return mix64(mix64(np.uint64(seed) + GOLDEN) + np.uint64(game) + GOLDEN)


@jit
def kind_key(gkey, kind):
    return mix64(np.uint64(gkey) + np.uint64(kind) + GOLDEN)


@jit
def index_key(kkey, index):
    return mix64(np.uint64(kkey) + np.uint64(index) + GOLDEN)


@jit
def bits(key, counter):
    """The ``counter``-th 64-bit word of the stream with this key."""
    return mix64(key + np.uint64(counter + 1) * GOLDEN)


@jit
def below(keys, ctrs, s, n):
    """Uniform integer in ``[0, n)`` from stream slot ``s``; advances its counter."""
    c = ctrs[s]
    ctrs[s] = c + 1
    r = bits(keys[s], c) >> _S32
    return np.int64((r * np.uint64(n)) >> _S32)


@jit
def shuffle(arr, n, keys, ctrs, s):
    """Fisher-Yates on ``arr[:n]`` in place: for i = n-1 .. 1 swap arr[i], arr[below(i+1)]."""
    for i in range(n - 1, 0, -1):
        j = below(keys, ctrs, s, i + 1)
        t = arr[i]
        arr[i] = arr[j]
        arr[j] = t


@jit
def shuffle_batched(arr, n, keys, ctrs, s, draws):
    """``shuffle`` with its ``n - 1`` draws computed first into ``draws`` (they do not depend on
    the array, so the hash computations run side by side): the same permutation, the same
    counter afterwards."""
    key = keys[s]
    c0 = ctrs[s]
    for d in range(n - 1):
        r = bits(key, c0 + d) >> _S32
        draws[d] = np.int64((r * np.uint64(n - d)) >> _S32)
    ctrs[s] = c0 + n - 1
    for d in range(n - 1):      # indices as unsigned: no wraparound check (kernels/cards.ix)
        i = np.uint64(n - 1 - d)
        j = np.uint64(draws[d])
        t = arr[i]
        arr[i] = arr[j]
        arr[j] = t


@jit
def new_streams(n):
    """Key and counter arrays for ``n`` stream slots (keys filled by the caller)."""
    return np.zeros(n, dtype=np.uint64), np.zeros(n, dtype=np.int64)
