"""The StackMap v3 codec: exact layout, round trips, and a DecodeError for every malformed input."""

from __future__ import annotations

import random
import struct
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent))

from stackmap_strategies import stackmaps  # noqa: E402

from gctoy.errors import DecodeError, GCToyError  # noqa: E402
from gctoy.stackmap import (  # noqa: E402
    LiveOut,
    Location,
    LocationKind,
    StackMap,
    StackMapEncodeError,
    StackMapRecord,
    StkSizeRecord,
    emit,
    format_stackmap,
    parse,
)
from gctoy.stackmap.format import record_size  # noqa: E402

SAMPLE = StackMap(
    version=3,
    functions=(StkSizeRecord(0x1000, 24, 1), StkSizeRecord(0x2000, 2**64 - 1, 1)),
    constants=(4294967296,),
    records=(
        StackMapRecord(11, 16, 0, (
            Location(LocationKind.REGISTER, 8, 0, 0),
            Location(LocationKind.DIRECT, 8, 6, -8),
            Location(LocationKind.CONSTANT_INDEX, 8, 0, 0),
        )),
        StackMapRecord(12, 12, 0, (Location(LocationKind.INDIRECT, 8, 7, 16),),
                       (LiveOut(0, 8), LiveOut(5, 8), LiveOut(7, 8))),
    ),
)


def test_sample_layout_byte_by_byte():
    """Header, function table, pool, and both records with their padding, at the documented offsets."""
    data = emit(SAMPLE)
    assert data[:16] == struct.pack("<BBHIII", 3, 0, 0, 2, 1, 2)
    assert struct.unpack_from("<QQQ", data, 16) == (0x1000, 24, 1)
    assert struct.unpack_from("<QQQ", data, 40) == (0x2000, 2**64 - 1, 1)
    assert struct.unpack_from("<Q", data, 64) == (4294967296,)
    rec = 72
    assert struct.unpack_from("<QIHH", data, rec) == (11, 16, 0, 3)
    assert struct.unpack_from("<BBHHHi", data, rec + 16 + 12) == (2, 0, 8, 6, 0, -8)
    # 3 locations end at +52: 4 bytes of padding, then u16 padding + u16 NumLiveOuts = 0, then 4 more.
    assert data[rec + 52:rec + 56] == bytes(4)
    assert struct.unpack_from("<HH", data, rec + 56) == (0, 0)
    assert data[rec + 60:rec + 64] == bytes(4)
    rec2 = rec + 64
    assert record_size(3, 0) == 64
    assert struct.unpack_from("<QIHH", data, rec2) == (12, 12, 0, 1)
    # 1 location ends at +28 (pad to 32); live-out header at +32; 3 live-outs end at +48: no padding.
    assert struct.unpack_from("<HH", data, rec2 + 32) == (0, 3)
    assert struct.unpack_from("<HBB", data, rec2 + 36) == (0, 0, 8)
    assert struct.unpack_from("<HBB", data, rec2 + 44) == (7, 0, 8)
    assert len(data) == rec2 + 48 == rec2 + record_size(1, 3)
    assert parse(data) == SAMPLE


def test_sample_readobj_text():
    """The printer's conventions: unsigned small constants, `+ -8`, 0-based ConstantIndex, live-outs."""
    sm = StackMap(3, (StkSizeRecord(0, 8, 1),), (7, 2**64 - 1), (
        StackMapRecord(2882400000, 5, 0, (
            Location(LocationKind.CONSTANT, 8, 0, -1),
            Location(LocationKind.CONSTANT_INDEX, 8, 0, 1),
            Location(LocationKind.DIRECT, 8, 7, -16),
            Location(LocationKind.INDIRECT, 8, 6, -8),
            Location(LocationKind.REGISTER, 16, 17, 0),
        ), (LiveOut(3, 8),)),
    ))
    assert format_stackmap(sm) == (
        "LLVM StackMap Version: 3\n"
        "Num Functions: 1\n"
        "  Function address: 0, stack size: 8, callsite record count: 1\n"
        "Num Constants: 2\n"
        "  #1: 7\n"
        "  #2: 18446744073709551615\n"
        "Num Records: 1\n"
        "  Record ID: 2882400000, instruction offset: 5\n"
        "    5 locations:\n"
        "      #1: Constant 4294967295, size: 8\n"
        "      #2: ConstantIndex #1 (18446744073709551615), size: 8\n"
        "      #3: Direct R#7 + -16, size: 8\n"
        "      #4: Indirect [R#6 + -8], size: 8\n"
        "      #5: Register R#17, size: 16\n"
        "    1 live-outs: [ R#3 (8-bytes) ]\n"
    )


def test_empty_stackmap():
    """No functions, constants or records: just the 16-byte header."""
    empty = StackMap(3, (), (), ())
    assert emit(empty) == bytes([3]) + bytes(15)
    assert parse(emit(empty)) == empty


@pytest.mark.parametrize("size", [0, 1, 15])
def test_truncated_header(size):
    """Fewer than 16 bytes is a truncated header, reported at the end of the data."""
    with pytest.raises(DecodeError) as info:
        parse(emit(SAMPLE)[:size])
    assert info.value.offset == size


def _corrupt(offset: int, value: bytes) -> bytes:
    """SAMPLE's bytes with `value` written at `offset`."""
    data = bytearray(emit(SAMPLE))
    data[offset:offset + len(value)] = value
    return bytes(data)


@pytest.mark.parametrize(("data", "offset", "words"), [
    (_corrupt(0, b"\x02"), 0, "version 2"),
    (_corrupt(1, b"\x01"), 1, "reserved"),
    (_corrupt(2, b"\x00\x01"), 2, "reserved"),
    (_corrupt(4, struct.pack("<I", 1000)), 4, "NumFunctions"),
    (_corrupt(8, struct.pack("<I", 2**32 - 1)), 8, "NumConstants"),
    (_corrupt(12, struct.pack("<I", 50)), 12, "NumRecords"),
    (_corrupt(12, struct.pack("<I", 1)), 12, "add up to 2"),
    (_corrupt(72 + 14, struct.pack("<H", 40)), 72 + 14, "NumLocations"),
    (_corrupt(72 + 16, b"\x06"), 72 + 16, "bad location kind 6"),
    (_corrupt(72 + 16, b"\x00"), 72 + 16, "bad location kind 0"),
    (_corrupt(72 + 17, b"\x01"), 72 + 17, "reserved location byte"),
    (_corrupt(72 + 22, b"\x01"), 72 + 22, "reserved location field"),
    (_corrupt(72 + 40 + 8, struct.pack("<i", 1)), 72 + 40 + 8, "ConstantIndex #1"),
    (_corrupt(72 + 53, b"\x01"), 72 + 53, "location padding"),
    (_corrupt(72 + 56, b"\x01"), 72 + 56, "padding before NumLiveOuts"),
    (_corrupt(72 + 58, struct.pack("<H", 40)), 72 + 58, "NumLiveOuts"),
    (_corrupt(72 + 62, b"\x01"), 72 + 62, "record padding"),
    (_corrupt(136 + 38, b"\x01"), 136 + 38, "reserved live-out"),
    (emit(SAMPLE) + bytes(8), 184, "unexpected bytes"),
    (emit(SAMPLE)[:72 + 62], 72 + 60, "truncated record padding"),
    (emit(SAMPLE)[:136 + 8], 136, "truncated record header"),
])
def test_each_malformation_is_reported_where_it_is(data, offset, words):
    """Every kind of bad input raises DecodeError at the offending byte with a message that names it."""
    with pytest.raises(DecodeError) as info:
        parse(data)
    assert info.value.offset == offset
    assert words in info.value.message


@pytest.mark.parametrize("bad", [
    StackMap(2, (), (), ()),
    StackMap(3, (StkSizeRecord(0, 0, 2),), (), (StackMapRecord(1, 0, 0, ()),)),
    StackMap(3, (StkSizeRecord(2**64, 0, 0),), (), ()),
    StackMap(3, (StkSizeRecord(0, 0, 1),), (), (StackMapRecord(1, 0, 0, (Location(LocationKind.CONSTANT, 8, 0, 2**31),)),)),
    StackMap(3, (StkSizeRecord(0, 0, 1),), (), (StackMapRecord(1, 0, 0, (Location(LocationKind.CONSTANT_INDEX, 8, 0, 0),)),)),
    StackMap(3, (StkSizeRecord(0, 0, 1),), (), (StackMapRecord(1, 0, 0, (Location(9, 8, 0, 0),)),)),
    StackMap(3, (StkSizeRecord(0, 0, 1),), (), (StackMapRecord(1, 0, 0, (), (LiveOut(0, 256),)),)),
])
def test_emit_refuses_values_the_format_cannot_hold(bad):
    """Out-of-range fields are a StackMapEncodeError (a GCToyError), never wrong bytes."""
    with pytest.raises(StackMapEncodeError):
        emit(bad)
    assert issubclass(StackMapEncodeError, GCToyError)


@settings(max_examples=250)
@given(stackmaps())
def test_parse_emit_round_trip(sm):
    """parse(emit(x)) == x, and the size is what the layout says."""
    data = emit(sm)
    assert parse(data) == sm
    assert len(data) == 16 + 24 * len(sm.functions) + 8 * len(sm.constants) + sum(
        record_size(len(r.locations), len(r.live_outs)) for r in sm.records)
    assert len(data) % 8 == 0


@settings(max_examples=150)
@given(stackmaps())
def test_emit_parse_round_trip_on_bytes(sm):
    """emit(parse(b)) == b for well-formed bytes b; the printer handles any parsed value."""
    data = emit(sm)
    assert emit(parse(data)) == data
    assert format_stackmap(parse(data)).startswith("LLVM StackMap Version: 3\n")


@settings(max_examples=150)
@given(stackmaps(), st.data())
def test_every_truncation_is_a_decode_error(sm, data):
    """Cutting a well-formed section anywhere before its end is reported, never accepted."""
    full = emit(sm)
    cut = data.draw(st.integers(0, len(full) - 1))
    with pytest.raises(DecodeError) as info:
        parse(full[:cut])
    assert 0 <= info.value.offset <= len(full)


def _mutants(rng: random.Random, seeds: list[bytes], count: int):
    """`count` inputs: bit flips, byte overwrites, truncations, splices, insertions and random bytes."""
    for _ in range(count):
        base = bytearray(rng.choice(seeds))
        how = rng.randrange(6)
        if how == 0 and base:
            for _ in range(rng.randint(1, 4)):
                i = rng.randrange(len(base))
                base[i] ^= 1 << rng.randrange(8)
        elif how == 1 and base:
            for _ in range(rng.randint(1, 3)):
                base[rng.randrange(len(base))] = rng.choice([0, 1, 3, 5, 6, 0x7F, 0x80, 0xFF])
        elif how == 2:
            base = base[:rng.randrange(len(base) + 1)]
        elif how == 3:
            other = rng.choice(seeds)
            base = base[:rng.randrange(len(base) + 1)] + other[rng.randrange(len(other) + 1):]
        elif how == 4:
            i = rng.randrange(len(base) + 1)
            base[i:i] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 12)))
        else:
            base = bytearray([3]) + bytearray(rng.randrange(256) for _ in range(rng.randrange(120)))
        yield bytes(base)


def test_fuzz_only_decode_errors():
    """25,000 mutated, truncated and random inputs: each parses or raises DecodeError, nothing else."""
    rng = random.Random(20240611)
    seeds = [emit(SAMPLE), emit(StackMap(3, (), (), ()))]
    for n in range(1, 6):
        seeds.append(emit(StackMap(3, (StkSizeRecord(0, 16 * n, n),), tuple(range(2**40, 2**40 + n)), tuple(
            StackMapRecord(2882400000 + i, 10 * i, 0,
                           tuple(Location(LocationKind((i + j) % 5 + 1), 8, j, j % n) for j in range(i + n)),
                           tuple(LiveOut(j, 8) for j in range(i % 3)))
            for i in range(n)))))
    parsed = errors = 0
    for data in _mutants(rng, seeds, 25_000):
        try:
            sm = parse(data)
        except DecodeError as e:
            assert 0 <= e.offset <= len(data)
            errors += 1
        else:
            assert emit(sm) == data
            format_stackmap(sm)
            parsed += 1
    assert errors > 10_000 and parsed > 100
