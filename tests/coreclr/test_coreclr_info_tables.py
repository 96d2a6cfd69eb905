"""The epilog, no-GC region, untracked and lifetime tables of a method's x86 GC info."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gctoy.coreclr.codecs import GCInfoEncodeError
from gctoy.coreclr.header import InfoHdr
from gctoy.coreclr.info_tables import (
    Lifetime,
    NoGCRegion,
    UntrackedSlot,
    decode_epilog_table,
    decode_lifetimes,
    decode_no_gc_regions,
    decode_untracked,
    encode_epilog_table,
    encode_lifetimes,
    encode_no_gc_regions,
    encode_untracked,
    epilog_table_present,
)
from gctoy.errors import DecodeError

EBP = InfoHdr(ebp_frame=True, ebp_saved=True)
ESP = InfoHdr()

# ----------------------------------------------------------------------------- epilog table


@pytest.mark.parametrize(("count", "at_end", "present"), [
    (0, False, False), (0, True, False), (1, True, False), (1, False, True), (2, False, True),
    (2, True, True), (4, True, True),
])
def test_epilog_table_presence_rule(count, at_end, present):
    assert epilog_table_present(InfoHdr(epilog_count=count, epilog_at_end=at_end)) is present


def test_epilog_starts_are_udeltas_from_the_previous_start():
    data = encode_epilog_table((0x10, 0x30, 0x130))
    assert data == bytes([0x10, 0x20, 0x82, 0x00])  # 0x100 = 2 << 7
    starts, entries, end = decode_epilog_table(data + b"\xff", 0, 3)
    assert starts == (0x10, 0x30, 0x130) and end == 4
    assert [e.text for e in entries] == ["    epilog # 0    at   0010", "    epilog # 1    at   0030",
                                         "    epilog # 2    at   0130"]
    assert [(e.start, e.end) for e in entries] == [(0, 1), (1, 2), (2, 4)]


def test_epilog_starts_must_not_decrease():
    with pytest.raises(GCInfoEncodeError, match="before epilog #0"):
        encode_epilog_table((0x20, 0x10))


def test_epilog_table_truncated():
    with pytest.raises(DecodeError) as e:
        decode_epilog_table(bytes([0x10, 0x81]), 0, 2)
    assert e.value.offset == 2


# ----------------------------------------------------------------------------- no-GC regions


def test_no_gc_regions_are_absolute_pairs_with_gcdump_text():
    regions = (NoGCRegion(3, 4), NoGCRegion(0x90, 2))
    data = encode_no_gc_regions(regions)
    assert data == bytes([3, 4, 0x81, 0x10, 2])
    got, entries, end = decode_no_gc_regions(data, 0, 2)
    assert got == regions and end == len(data)
    assert [e.text for e in entries] == ["[0003-0007) no GC region", "[0090-0092) no GC region"]
    assert regions[1].end == 0x92


def test_no_gc_regions_must_be_sorted():
    with pytest.raises(GCInfoEncodeError, match="out of order"):
        encode_no_gc_regions((NoGCRegion(9, 1), NoGCRegion(3, 1)))
    with pytest.raises(DecodeError) as e:
        decode_no_gc_regions(bytes([9, 1, 3, 1]), 0, 2)
    assert e.value.offset == 2


# ----------------------------------------------------------------------------- untracked


def test_untracked_entries_are_deltas_previous_minus_current():
    """Seed: the untracked table's entries are "offsets"; in fact each is `previous - current`."""
    slots = (UntrackedSlot(-8, interior=True), UntrackedSlot(12), UntrackedSlot(12, pinned=True))
    data = encode_untracked(slots)
    # -8|1 = -7 -> Signed(0 - -7) = 07; 12 -> Signed(-7 - 12) = -19 = 53; 12|2 = 14 -> Signed(-2) = 42
    assert data == bytes([0x07, 0x53, 0x42])
    got, entries, end = decode_untracked(data, 0, 3, EBP)
    assert got == slots and end == 3
    assert [e.text for e in entries] == [
        "            [EBP-08H] an untracked byref local",
        "            [EBP+0CH] an untracked  local",
        "            [EBP+0CH] an untracked pinned  local",
    ]


def test_untracked_legacy_entries_are_plain_offsets():
    slots = (UntrackedSlot(0x14), UntrackedSlot(-4))
    assert encode_untracked(slots, legacy=True) == bytes([0x14, 0x44])
    assert decode_untracked(bytes([0x14, 0x44]), 0, 2, EBP, legacy=True)[0] == slots
    # The same bytes read the modern way are deltas: -0x14, then -0x14 - -4 = -0x10.
    assert decode_untracked(bytes([0x14, 0x44]), 0, 2, EBP)[0] == (UntrackedSlot(-0x14), UntrackedSlot(-0x10))


def test_untracked_flags_pinned_and_interior():
    """Seed: bit 0 = interior, bit 1 = pinned, 11 = pinned interior (the code agrees)."""
    slot = UntrackedSlot(16, interior=True, pinned=True)
    data = encode_untracked((slot,))
    assert data == bytes([0x40 | 19])  # -(16|3) = -19
    got, entries, _ = decode_untracked(data, 0, 1, ESP)
    assert got == (slot,)
    assert entries[0].text == "            [ESP+10H] an untracked pinned byref local"


def test_untracked_ebp_frames_can_list_incoming_args():
    """Seed: "for an EBP frame it is not possible to refer to the pushed arguments area"; it is."""
    got, entries, _ = decode_untracked(encode_untracked((UntrackedSlot(8),)), 0, 1, EBP)
    assert got == (UntrackedSlot(8),)
    assert "[EBP+08H]" in entries[0].text


def test_untracked_double_align_remaps_args_to_ebp():
    """Seed: double-aligned frames cannot refer to the pushed args; they can, remapped to EBP."""
    hdr = InfoHdr(double_align=True, ebp_saved=True, edi_saved=True, frame_size=2)
    boundary = 4 * (2 + 1)  # gcdump: frameSize + saved EDI/ESI/EBX
    slots = (UntrackedSlot(4), UntrackedSlot(boundary + 8))
    _, entries, _ = decode_untracked(encode_untracked(slots), 0, 2, hdr)
    assert entries[0].text == "            [ESP+04H] an untracked  local"
    assert entries[1].text == "            [EBP+08H] an untracked  local"


def test_untracked_offset_must_be_a_multiple_of_four():
    with pytest.raises(GCInfoEncodeError, match="multiple of 4"):
        encode_untracked((UntrackedSlot(6),))


def test_untracked_delta_overflow_is_a_decode_error():
    # 0x7FFFFFFC, then the delta -16: the second offset 0x8000000C is not an int32.
    data = encode_untracked((UntrackedSlot(0x7FFFFFFC),)) + bytes([0x50])
    with pytest.raises(DecodeError) as e:
        decode_untracked(data, 0, 2, ESP)
    assert e.value.offset == len(data) - 1


# ----------------------------------------------------------------------------- lifetimes


def test_lifetime_layout_offset_begin_delta_length():
    lives = (Lifetime(8, 5, 0x20), Lifetime(0xC, 0x10, 0x12, interior=True), Lifetime(4, 0x10, 0x200, pinned=True))
    data = encode_lifetimes(lives)
    assert data == bytes([0x08, 0x05, 0x1B, 0x0D, 0x0B, 0x02, 0x06, 0x00, 0x83, 0x70])
    got, entries, end = decode_lifetimes(data, 0, 3, EBP)
    assert got == lives and end == len(data)
    assert [e.text for e in entries] == [
        "0005..0020  [EBP-08H] a  pointer",
        "0010..0012  [EBP-0CH] a byref  pointer",
        "0010..0200  [EBP-04H] a pinned pointer",
    ]
    assert [e.code_offset for e in entries] == [5, 0x10, 0x10]


def test_lifetime_bit1_is_pinned_not_this():
    """Seed: bit 1 of a lifetime entry marks the `this` pointer and tracked slots cannot be pinned.

    Funclet-era CoreCLR reads bit 1 as pinned (filter-split lifetimes); `legacy` shows the
    classic reading.
    """
    data = encode_lifetimes((Lifetime(8, 0, 4, interior=True, pinned=True),))
    assert data[0] == 0x0B
    _, modern, _ = decode_lifetimes(data, 0, 1, ESP)
    _, classic, _ = decode_lifetimes(data, 0, 1, ESP, legacy=True)
    assert modern[0].text == "0000..0004  [ESP+08H] a byref pinned pointer"
    assert classic[0].text == "0000..0004  [ESP+08H] a byref this pointer"


@pytest.mark.parametrize(("lives", "message"), [
    ((Lifetime(8, 9, 10), Lifetime(8, 3, 4)), "sorted by begin"),
    ((Lifetime(8, 9, 3),), "before it begins"),
    ((Lifetime(6, 1, 3),), "multiple of 4"),
    ((Lifetime(-4, 1, 3),), "offset must be an integer"),
])
def test_lifetime_encoder_refuses(lives, message):
    with pytest.raises(GCInfoEncodeError, match=message):
        encode_lifetimes(lives)


def test_lifetime_end_overflow_is_a_decode_error():
    data = bytes([0x08]) + bytes.fromhex("8FFFFFFF7F") + bytes.fromhex("01")
    with pytest.raises(DecodeError) as e:
        decode_lifetimes(data, 0, 1, ESP)
    assert e.value.offset == 6


# ----------------------------------------------------------------------------- properties

offsets4 = st.integers(-(1 << 20), 1 << 20).map(lambda v: v * 4)
untracked_slots = st.lists(st.builds(UntrackedSlot, offsets4, st.booleans(), st.booleans()), max_size=8)


@st.composite
def lifetime_lists(draw):
    out, begin = [], 0
    for _ in range(draw(st.integers(0, 8))):
        begin += draw(st.integers(0, 300))
        end = begin + draw(st.integers(0, 300))
        out.append(Lifetime(draw(st.integers(0, 1 << 16)) * 4, begin, end, draw(st.booleans()), draw(st.booleans())))
    return tuple(out)


@settings(max_examples=150, deadline=None)
@given(untracked_slots, st.booleans(), st.booleans())
def test_untracked_round_trip(slots, legacy, ebp):
    data = encode_untracked(tuple(slots), legacy=legacy)
    got, entries, end = decode_untracked(data, 0, len(slots), EBP if ebp else ESP, legacy=legacy)
    assert got == tuple(slots) and end == len(data)
    assert b"".join(data[e.start:e.end] for e in entries) == data


@settings(max_examples=150, deadline=None)
@given(lifetime_lists())
def test_lifetimes_round_trip(lives):
    data = encode_lifetimes(lives)
    got, entries, end = decode_lifetimes(data, 0, len(lives), ESP)
    assert got == lives and end == len(data)
    assert encode_lifetimes(got) == data


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 5000), max_size=4).map(sorted),
       st.lists(st.tuples(st.integers(0, 5000), st.integers(0, 300)), max_size=6).map(sorted))
def test_epilogs_and_no_gc_round_trip(starts, pairs):
    data = encode_epilog_table(tuple(starts))
    assert decode_epilog_table(data, 0, len(starts))[0] == tuple(starts)
    regions = tuple(NoGCRegion(o, s) for o, s in pairs)
    data = encode_no_gc_regions(regions)
    assert decode_no_gc_regions(data, 0, len(regions))[0] == regions


# ----------------------------------------------------------------------------- the seed's low-bit lists


@pytest.mark.parametrize(("bits", "interior", "pinned"), [(0, False, False), (1, True, False),
                                                           (2, False, True), (3, True, True)])
def test_low_bits_of_both_tables(bits, interior, pinned):
    """Seed lists: untracked 00 normal, 01 interior, 10 pinned, 11 pinned interior; lifetime 00
    normal, 01 interior, 10 `this`, 11 interior `this`. The values hold; lifetime bit 1 is pinned today."""
    assert encode_untracked((UntrackedSlot(-16, interior, pinned),)) == bytes([16 - bits])
    assert encode_lifetimes((Lifetime(16, 0, 1, interior, pinned),)) == bytes([16 | bits, 0, 1])


def test_seed_example_0x11_holds_for_lifetimes_not_for_untracked_deltas():
    """Seed: "an encoded value of 0x11 refers to the local at offset 0x10 and is an interior pointer"."""
    (life,), _, _ = decode_lifetimes(bytes([0x11, 0, 4]), 0, 1, EBP)
    assert (life.offset, life.interior, life.pinned) == (0x10, True, False)
    # As the first untracked entry, 0x11 = +17 is a delta: the offset is -17, i.e. -20 with both bits set.
    (slot,), _, _ = decode_untracked(bytes([0x11]), 0, 1, EBP)
    assert slot == UntrackedSlot(-20, interior=True, pinned=True)
