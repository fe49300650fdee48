from hypothesis import given, strategies as st

from kernels import cards

masks = st.integers(min_value=1, max_value=(1 << 62) - 1)


@given(masks)
def test_bit_helpers_agree_with_python(x):
    bits = [i for i in range(63) if (x >> i) & 1]
    assert cards.popcount(x) == len(bits) == cards.popcount_swar(x)
    assert cards.lowest_bit(x) == bits[0]
    assert cards.highest_bit(x) == bits[-1]
    for k, b in enumerate(bits[:8]):
        assert cards.nth_bit(x, k) == b
    assert cards.nth_bit(x, len(bits)) == -1


def test_card_names_round_trip():
    assert cards.card_name(cards.parse_card("10H")) == "10H"
    assert cards.card_name(0) == "2S" and cards.card_name(12) == "AS"
    assert cards.parse_card("AC") == 3 * 13 + 12
    for c in range(52):
        assert cards.parse_card(cards.card_name(c)) == c


@given(st.integers(min_value=1, max_value=(1 << 52) - 1), st.integers(min_value=0, max_value=51))
def test_select_card_is_the_kth_lowest_card(mask, k):
    bits = [i for i in range(52) if (mask >> i) & 1]
    k %= len(bits)
    assert cards.select_card(mask, k) == bits[k] == cards.nth_bit(mask, k)


def _kth_bit(mask, k):
    return [i for i in range(64) if (mask >> i) & 1][k]


@given(st.integers(min_value=1, max_value=(1 << 52) - 1), st.integers(min_value=0, max_value=51))
def test_select_card_portable_and_bmi2_agree(mask, k):
    # select_card is the PDEP version on a BMI2 CPU (this machine's), the table version otherwise:
    # both (and select_bit) must give Python's k-th set bit
    k %= bin(mask).count("1")
    want = _kth_bit(mask, k)
    assert cards.select_card_portable(mask, k) == want
    assert cards.select_card(mask, k) == want
    assert cards.select_bit(mask, k) == want
    if cards.HAS_BMI2:
        assert cards._select_bit_bmi2(mask, k) == want
    assert cards._select_bit_portable(mask, k) == want


@given(st.integers(min_value=-(1 << 63), max_value=(1 << 63) - 1).filter(lambda x: x != 0),
       st.integers(min_value=0, max_value=63))
def test_select_bit_on_any_64_bit_mask(x, k):
    u = x & ((1 << 64) - 1)                 # the int64's two's-complement bits
    k %= bin(u).count("1")
    assert cards.select_bit(x, k) == _kth_bit(u, k) == cards._select_bit_portable(x, k)
    assert cards.lowest_bit(x) == _kth_bit(u, 0)


def test_select_card_edge_cases():
    full = (1 << 52) - 1
    cases = [(1, 0, 0), (full, 0, 0), (full, 51, 51), (1 << 51, 0, 51),
             ((1 << 51) | 1, 1, 51), ((1 << 51) | 1, 0, 0),
             (0b1010_0000_0000_0000_1, 2, 16), (0x1FFF << 39, 12, 51), (0x1FFF << 39, 0, 39)]
    for mask, k, want in cases:
        assert cards.select_card(mask, k) == want, (mask, k)
        assert cards.select_card_portable(mask, k) == want, (mask, k)
    # the top bit of the 64: select_bit is not limited to 52 cards
    assert cards.select_bit(-(1 << 63), 0) == 63
    assert cards.select_bit(-1, 63) == 63 and cards.select_bit(-1, 0) == 0
    assert cards.lowest_bit(0) == 64 and cards.lowest_bit(-(1 << 63)) == 63
