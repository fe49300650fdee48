import numpy as np
from hypothesis import given, settings, strategies as st

from kernels import rng
from tests.reference import prng

u63 = st.integers(min_value=0, max_value=2**63 - 1)


@settings(max_examples=200, deadline=None)
@given(u63, u63, st.integers(1, 4), st.integers(0, 10**6), st.integers(1, 1000))
def test_kernel_streams_match_the_plain_statement(seed, game, kind, index, n):
    keys = np.array([rng.stream_key(seed, game, kind, index)], dtype=np.uint64)
    ctrs = np.zeros(1, dtype=np.int64)
    ref = prng.Stream(seed, game, kind, index)
    assert int(keys[0]) == ref.key
    for _ in range(5):
        assert rng.below(keys, ctrs, 0, n) == ref.below(n)


def test_shuffle_matches_and_is_a_permutation():
    keys = np.array([rng.stream_key(7, 3, rng.DEAL, 0)], dtype=np.uint64)
    ctrs = np.zeros(1, dtype=np.int64)
    arr = np.arange(52, dtype=np.int64)
    rng.shuffle(arr, 52, keys, ctrs, 0)
    ref = list(range(52))
    prng.Stream(7, 3, rng.DEAL, 0).shuffle(ref)
    assert arr.tolist() == ref
    assert sorted(ref) == list(range(52))


@settings(max_examples=100, deadline=None)
@given(u63, u63, st.integers(1, 52), st.integers(0, 5))
def test_batched_shuffle_is_the_plain_shuffle(seed, game, n, used):
    """shuffle_batched: the reference's permutation from wherever the counter stands, and the
    counter moved past the same n - 1 draws."""
    keys = np.array([rng.stream_key(seed, game, rng.DEAL, 0)], dtype=np.uint64)
    ctrs = np.array([used], dtype=np.int64)
    arr = np.arange(n, dtype=np.int64) * 3
    rng.shuffle_batched(arr, n, keys, ctrs, 0, np.zeros(52, dtype=np.int64))
    ref = prng.Stream(seed, game, rng.DEAL, 0)
    for _ in range(used):
        ref.below(2)
    expected = [3 * i for i in range(n)]
    ref.shuffle(expected)
    assert arr.tolist() == expected
    assert ctrs[0] == used + max(n - 1, 0)


def test_stream_key_in_stages_is_stream_key():
    g = rng.game_key(11, 2**40)
    assert rng.index_key(rng.kind_key(g, rng.SEAT), 3) == rng.stream_key(11, 2**40, rng.SEAT, 3)
    assert rng.index_key(rng.kind_key(g, rng.DEAL), 0) == rng.stream_key(11, 2**40, rng.DEAL, 0)


def test_below_is_uniform_enough():
    # chi-square on 60k draws of below(6); 25.74 is the 1e-4 upper critical value at 5 df
    keys = np.array([rng.stream_key(1, 0, rng.SEAT, 0)], dtype=np.uint64)
    ctrs = np.zeros(1, dtype=np.int64)
    counts = np.zeros(6)
    for _ in range(60000):
        counts[rng.below(keys, ctrs, 0, 6)] += 1
    expected = counts.sum() / 6
    assert ((counts - expected) ** 2 / expected).sum() < 25.74


def test_streams_differ_by_every_key_part():
    base = rng.stream_key(1, 2, 3, 4)
    assert len({base, rng.stream_key(2, 2, 3, 4), rng.stream_key(1, 3, 3, 4),
                rng.stream_key(1, 2, 4, 4), rng.stream_key(1, 2, 3, 5)}) == 5
