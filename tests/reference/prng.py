"""The keyed random streams of kernels/rng.py restated in plain Python integers.

Written from the specification in kernels/rng.py's docstring, not by calling the kernel, so a
test comparing the two checks both.
"""
from __future__ import annotations

MASK = (1 << 64) - 1
GOLDEN = 0x9E3779B97F4A7C15
DEAL, SEAT, AUX, SEARCH = 1, 2, 3, 4


def mix64(z: int) -> int:
    z &= MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def stream_key(seed: int, game: int, kind: int, index: int) -> int:
    k = mix64(seed + GOLDEN)
    k = mix64(k + game + GOLDEN)
    k = mix64(k + kind + GOLDEN)
    return mix64(k + index + GOLDEN)


class Stream:
    """One stream: ``below(n)`` is uniform on [0, n) and advances the counter by one."""

    def __init__(self, seed: int, game: int, kind: int, index: int):
        self.key = stream_key(seed, game, kind, index)
        self.counter = 0

    def bits(self) -> int:
        r = mix64(self.key + (self.counter + 1) * GOLDEN)
        self.counter += 1
        return r

    def below(self, n: int) -> int:
        return ((self.bits() >> 32) * n) >> 32

    def shuffle(self, items: list) -> None:
        """Fisher-Yates: for i = n-1 down to 1, swap items[i] with items[below(i+1)]."""
        for i in range(len(items) - 1, 0, -1):
            j = self.below(i + 1)
            items[i], items[j] = items[j], items[i]
