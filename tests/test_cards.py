from hypothesis import given, strategies as st

from kernels import cards

masks = st.integers(min_value=1, max_value=(1 << 62) - 1)


@given(masks)
def test_bit_helpers_agree_with_python(x):
    bits = [i for i in range(63) if (x >> i) & 1]
    assert cards.popcount(x) == len(bits)
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
