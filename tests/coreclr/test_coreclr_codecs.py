"""Unsigned, Signed, UDelta and DWORD: the examples CoreCLR's encoder produces, round trips, errors."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gctoy.coreclr.codecs import (
    I32_MAX,
    I32_MIN,
    U32_MAX,
    GCInfoEncodeError,
    decode_dword,
    decode_signed,
    decode_udelta,
    decode_unsigned,
    encode_dword,
    encode_signed,
    encode_udelta,
    encode_unsigned,
)
from gctoy.errors import DecodeError

UNSIGNED_EXAMPLES = [
    (0, "00"), (127, "7f"), (128, "8100"), (0x123, "8223"), (0x1234, "a434"), (16383, "ff7f"),
    (16384, "818000"), (U32_MAX, "8fffffff7f"),
]

SIGNED_EXAMPLES = [
    (0, "00"), (8, "08"), (-4, "44"), (-17, "51"), (63, "3f"), (-63, "7f"), (64, "8040"),
    (-64, "c040"), (8191, "bf7f"), (-8191, "ff7f"), (8192, "80c000"), (I32_MAX, "87ffffff7f"),
    (I32_MIN, "c880808000"),
]


@pytest.mark.parametrize(("value", "hexbytes"), UNSIGNED_EXAMPLES)
def test_unsigned_examples(value, hexbytes):
    assert encode_unsigned(value).hex() == hexbytes
    assert decode_unsigned(bytes.fromhex(hexbytes) + b"\x99") == (value, len(hexbytes) // 2)


@pytest.mark.parametrize(("value", "hexbytes"), SIGNED_EXAMPLES)
def test_signed_examples(value, hexbytes):
    assert encode_signed(value).hex() == hexbytes
    assert decode_signed(bytes.fromhex(hexbytes)) == (value, len(hexbytes) // 2)


def test_signed_is_sign_magnitude_not_twos_complement():
    # The seed says the value is "two's complemented"; CoreCLR negates the magnitude: -1 is 0x41.
    assert encode_signed(-1) == b"\x41"
    assert decode_signed(b"\x41") == (-1, 1)
    assert decode_signed(b"\x40") == (0, 1)  # minus zero is accepted, as CoreCLR's decoder does


def test_decoders_accept_redundant_leading_groups():
    assert decode_unsigned(b"\x80\x80\x05") == (5, 3)
    assert decode_signed(b"\xc0\x80\x05") == (-5, 3)


@given(st.integers(0, U32_MAX), st.binary(max_size=3))
def test_unsigned_round_trip(value, tail):
    data = encode_unsigned(value)
    assert len(data) <= 5
    assert decode_unsigned(data + tail) == (value, len(data))


@given(st.integers(I32_MIN, I32_MAX), st.binary(max_size=3))
def test_signed_round_trip(value, tail):
    data = encode_signed(value)
    assert len(data) <= 5
    assert decode_signed(data + tail) == (value, len(data))
    assert (len(data) == 1) == (-63 <= value <= 63)


@given(st.integers(0, U32_MAX), st.integers(0, U32_MAX))
def test_udelta_round_trip(a, b):
    prev, value = min(a, b), max(a, b)
    data = encode_udelta(value, prev)
    assert data == encode_unsigned(value - prev)
    assert decode_udelta(b"\x00" + data, 1, prev) == (value, 1 + len(data))


@given(st.integers(0, U32_MAX))
def test_dword_round_trip(value):
    data = encode_dword(value)
    assert data == value.to_bytes(4, "little")
    assert decode_dword(b"\xaa" + data, 1) == (value, 5)


def test_truncation_reports_the_offset():
    with pytest.raises(DecodeError) as e:
        decode_unsigned(b"\x00\x81\x82", 1)
    assert e.value.offset == 3
    with pytest.raises(DecodeError) as e:
        decode_signed(b"", 0)
    assert e.value.offset == 0
    with pytest.raises(DecodeError) as e:
        decode_signed(b"\xc1", 0)
    assert e.value.offset == 1
    with pytest.raises(DecodeError) as e:
        decode_dword(b"\x01\x02\x03\x04\x05", 2)
    assert e.value.offset == 2


def test_overflow_reports_the_offset():
    with pytest.raises(DecodeError) as e:
        decode_unsigned(bytes.fromhex("9080808000"))  # 2**32
    assert e.value.offset == 4
    with pytest.raises(DecodeError):
        decode_signed(bytes.fromhex("8880808000"))  # +2**31 does not fit an int32
    with pytest.raises(DecodeError):
        decode_signed(bytes.fromhex("c880808001"))  # -(2**31 + 1)
    with pytest.raises(DecodeError) as e:
        decode_udelta(encode_unsigned(2), 0, U32_MAX - 1)
    assert e.value.offset == 0


@pytest.mark.parametrize("call", [
    lambda: encode_unsigned(-1), lambda: encode_unsigned(U32_MAX + 1), lambda: encode_unsigned(True),
    lambda: encode_signed(I32_MAX + 1), lambda: encode_signed(I32_MIN - 1),
    lambda: encode_udelta(1, 2), lambda: encode_dword(1 << 32),
])
def test_encoders_reject_out_of_range(call):
    with pytest.raises(GCInfoEncodeError):
        call()
