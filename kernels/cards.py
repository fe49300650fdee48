"""Card encodings shared by the games that use a French deck.

A French card is ``suit * 13 + rank``: suits 0..3 = Spades, Hearts, Diamonds, Clubs (the
order forecasts-cubes gives for tie-breaks), ranks 0..12 = 2, 3, ..., 10, J, Q, K, A.
A hand is a 64-bit mask with bit ``card`` set for each card held; ``SUIT_MASK[s]`` selects a suit.
Games with other cards (pgc numbers, daily-weather map cards) define their own encoding.
"""
from __future__ import annotations

import platform

import numba
import numpy as np
from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic

from ._jit import jit

N_SUITS = 4
N_RANKS = 13
N_CARDS = 52
SPADES, HEARTS, DIAMONDS, CLUBS = 0, 1, 2, 3
RANK_10, RANK_J, RANK_Q, RANK_K, RANK_A = 8, 9, 10, 11, 12

SUIT_CHARS = "SHDC"
RANK_NAMES = ("2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A")

SUIT_MASK = np.array([((1 << 13) - 1) << (13 * s) for s in range(4)], dtype=np.int64)
ONE = np.int64(1)
# FOLLOW_MASK[led_suit + 1]: the cards that follow a trick led in ``led_suit``; index 0 (led_suit
# -1, nobody has led yet) is empty, so "follow if able, else any card" needs no branch on leading
FOLLOW_MASK = np.concatenate((np.zeros(1, dtype=np.int64), SUIT_MASK))


@jit
def ix(i):
    """An index known to be >= 0 as an unsigned integer: Numba indexes an array by a signed
    integer with a wraparound for negative values (a compare and a conditional move per access:
    measured ~20 instructions per card in forecasts-bid's trick loop), by an unsigned one without."""
    return np.uint64(i)


@jit(inline='always')
def follow_or_any(hand, follow):
    """The legal plays of ``hand`` given ``follow``, the led suit's cards (0 before the lead):
    the cards that follow if it holds any, else the whole hand (legal_plays with the led suit's
    mask taken once per trick)."""
    legal = hand & follow
    return legal if legal != 0 else hand


@jit
def suit_of(card):
    return card // N_RANKS


@jit
def rank_of(card):
    return card % N_RANKS


@jit
def is_red(card):
    s = card // N_RANKS
    return s == HEARTS or s == DIAMONDS


@jit
def popcount(x):
    """Number of set bits of a non-negative int64: one POPCNT (llvm.ctpop, below), the same
    answer as ``popcount_swar`` for every non-negative int64."""
    return _ctpop64(x)


@jit
def popcount_swar(x):
    """popcount without the instruction (SWAR, no loop): the reference ``popcount`` is tested
    against, and what it was until session 24."""
    x = x - ((x >> 1) & 0x5555555555555555)
    x = (x & 0x3333333333333333) + ((x >> 2) & 0x3333333333333333)
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0F
    return ((x * 0x0101010101010101) >> 56) & 0xFF


@jit
def lowest_bit(x):
    """Index of the lowest set bit of ``x`` (``x`` > 0; 64 for 0): one TZCNT/BSF (llvm.cttz,
    below), the same answer as popcount((x & -x) - 1) for every int64."""
    return _cttz64(x)


@jit
def highest_bit(x):
    """Index of the highest set bit of a non-negative ``x`` (``x`` > 0): one LZCNT/BSR (llvm.ctlz,
    below), the same answer as the smear popcount(x | x >> 1 | ... | x >> 32) - 1 for every int64
    (-1 for 0, 63 for a negative x); measured: the smear was a sixth of a forecasts-bid rollout's
    card loop (its heuristic's strongest card)."""
    return 63 - _ctlz64(x)


@jit
def nth_bit(x, k):
    """Index of the k-th (0-based, from the lowest) set bit of ``x``; -1 if there is none."""
    for _ in range(k):
        x &= x - 1
    if x == 0:
        return -1
    return lowest_bit(x)


# k-th card of a hand, without a data-dependent loop: count the first three suits, pick the
# suit arithmetically, then read the position inside its 13 bits from a table
# (SELECT13[m * 13 + k] = the k-th set bit of the 13-bit suit pattern m). Measured 2-4x faster
# than nth_bit for random k (no branch misses); the same answer for any 52-card mask.
_select13 = np.zeros((1 << N_RANKS) * N_RANKS, dtype=np.int8)
for _m in range(1 << N_RANKS):
    _k = 0
    for _b in range(N_RANKS):
        if (_m >> _b) & 1:
            _select13[_m * N_RANKS + _k] = _b
            _k += 1
SELECT13 = _select13
SUIT_BITS = np.int64((1 << N_RANKS) - 1)


@jit
def select_card_portable(mask, k):
    """The k-th lowest card (0-based) of a 52-card ``mask``; ``0 <= k < popcount(mask)``. The
    version for a CPU without BMI2 (and the reference select_card is tested against)."""
    c0 = popcount(mask & SUIT_BITS)
    c1 = popcount((mask >> N_RANKS) & SUIT_BITS)
    c2 = popcount((mask >> (2 * N_RANKS)) & SUIT_BITS)
    a0 = np.int64(k >= c0)
    a1 = np.int64(k >= c0 + c1)
    a2 = np.int64(k >= c0 + c1 + c2)
    su = a0 + a1 + a2
    k -= c0 * a0 + c1 * a1 + c2 * a2
    m = (mask >> (N_RANKS * su)) & SUIT_BITS
    return N_RANKS * su + np.int64(SELECT13[m * N_RANKS + k])


# With x86 BMI2 the k-th set bit is two instructions: PDEP deposits the single bit 1 << k onto the
# k-th set bit of ``mask``, TZCNT reads its index. Numba has no name for PDEP, so a small intrinsic
# calls LLVM's ``llvm.x86.bmi.pdep.64`` (it only compiles for a target with BMI2: which version
# the kernels use is decided once, at import, from the CPU Numba compiles for).
def _bmi2_target() -> bool:
    """Does Numba compile for a CPU with BMI2? (The host's features, unless NUMBA_CPU_NAME /
    NUMBA_CPU_FEATURES name another target.)"""
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return False
    feats = numba.config.CPU_FEATURES
    if feats:
        return "+bmi2" in feats.split(",")
    if numba.config.CPU_NAME not in (None, "host"):
        return False                    # a named generic target: assume the plain instruction set
    try:
        import llvmlite.binding as llvm
        return bool(llvm.get_host_cpu_features().get("bmi2", False))
    except Exception:                   # pragma: no cover - no feature query on this platform
        return False


HAS_BMI2 = _bmi2_target()


@intrinsic
def _pdep64(typingctx, src, mask):
    """PDEP: the low bits of ``src`` deposited, in order, at the set bits of ``mask`` (int64)."""
    if not isinstance(src, types.Integer) or not isinstance(mask, types.Integer):
        return None
    sig = types.int64(src, mask)

    def codegen(context, builder, signature, args):
        i64 = ir.IntType(64)
        a = context.cast(builder, args[0], signature.args[0], types.int64)
        b = context.cast(builder, args[1], signature.args[1], types.int64)
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(i64, [i64, i64]),
                                            "llvm.x86.bmi.pdep.64")
        return builder.call(fn, [a, b])
    return sig, codegen


@intrinsic
def _cttz64(typingctx, x):
    """Count of trailing zero bits of ``x`` as int64 (64 for 0): TZCNT/BSF."""
    if not isinstance(x, types.Integer):
        return None
    sig = types.int64(x)

    def codegen(context, builder, signature, args):
        v = context.cast(builder, args[0], signature.args[0], types.int64)
        return builder.cttz(v, ir.Constant(ir.IntType(1), 0))
    return sig, codegen


@intrinsic
def _ctpop64(typingctx, x):
    """Number of set bits of ``x`` as int64: POPCNT."""
    if not isinstance(x, types.Integer):
        return None
    sig = types.int64(x)

    def codegen(context, builder, signature, args):
        v = context.cast(builder, args[0], signature.args[0], types.int64)
        return builder.ctpop(v)
    return sig, codegen


@intrinsic
def _ctlz64(typingctx, x):
    """Count of leading zero bits of ``x`` as int64 (64 for 0): LZCNT/BSR."""
    if not isinstance(x, types.Integer):
        return None
    sig = types.int64(x)

    def codegen(context, builder, signature, args):
        v = context.cast(builder, args[0], signature.args[0], types.int64)
        return builder.ctlz(v, ir.Constant(ir.IntType(1), 0))
    return sig, codegen


@jit
def _select_bit_bmi2(mask, k):
    return _cttz64(_pdep64(np.int64(1) << np.int64(k), mask))


@jit
def _select_bit_portable(mask, k):
    x = np.int64(mask)
    for _ in range(k):
        x &= x - 1
    return lowest_bit(x)


if HAS_BMI2:
    select_card = _select_bit_bmi2
    select_bit = _select_bit_bmi2
else:
    select_card = select_card_portable
    select_bit = _select_bit_portable
# select_card(mask, k): the k-th lowest card (0-based) of a 52-card ``mask``, 0 <= k < popcount;
# select_bit(mask, k): the same for any 64-bit mask (unlike nth_bit, no -1 past the last bit).


def card_name(card: int) -> str:
    """``10H``, ``AS``: rank then suit letter."""
    return RANK_NAMES[card % 13] + SUIT_CHARS[card // 13]


def parse_card(name: str) -> int:
    name = name.strip().upper()
    rank, suit = name[:-1], name[-1]
    if suit not in SUIT_CHARS or rank not in RANK_NAMES:
        raise ValueError(f"not a card: {name!r} (expected rank 2-10/J/Q/K/A then suit S/H/D/C)")
    return SUIT_CHARS.index(suit) * 13 + RANK_NAMES.index(rank)


def mask_cards(mask: int) -> list[int]:
    return [c for c in range(64) if (mask >> c) & 1]


def mask_of(cards) -> int:
    m = 0
    for c in cards:
        m |= 1 << c
    return m
