"""A whole method's x86 GC info: region order, argTabOffset, derived counts, and the two laws."""

from __future__ import annotations

import dataclasses
import importlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gctoy.coreclr.codecs import GCInfoEncodeError
from gctoy.coreclr.header import VERSIONS, InfoHdr, encode_header
from gctoy.coreclr.info_tables import Lifetime, NoGCRegion, UntrackedSlot
from gctoy.coreclr.method import (
    MethodGCInfo,
    arg_tab_offset_present,
    decode,
    decode_with_entries,
    empty_pointer_table,
    encode,
    pointer_table_kind,
)
from gctoy.errors import DecodeError

# A legacy (.NET Framework era) blob modelled on the x86 method of SOS's `!gcinfo` documentation:
# the methodSize and header bytes `36 D4 8C C7 AA 93 F3 40 05` are the sample's (facts.md §4); the
# tables after them are gctoy's reconstruction, consistent with that header (an EBP frame, fully
# interruptible, four incoming arguments and one local as 5 untracked slots written as plain
# offsets, no argTabOffset) and with the gcdump line facts.md §12 quotes (`F1 79 | 0011 reg EDI
# becoming live`). Only the header part is checked against a published source.
SOS_SAMPLE = bytes.fromhex("36 D48CC7AA93F34005 14100C0844 F17972838B939B564A0E10E0F03138FF")


def _table_module(kind: str):
    return importlib.import_module(f"gctoy.coreclr.ptrtab_{kind}")


# ----------------------------------------------------------------------------- the SOS sample


def test_sos_sample_is_not_a_modern_blob():
    """Modern decoders read an argTabOffset after the header; the sample has none (facts §2)."""
    with pytest.raises(DecodeError) as e:
        decode(SOS_SAMPLE)
    assert e.value.offset == 9  # the first untracked byte 0x14 is taken for argTabOffset = 20
    assert "argTabOffset is 20" in str(e.value)


@pytest.mark.parametrize("version", VERSIONS)
def test_sos_sample_decodes_with_the_legacy_rules(version):
    info = decode(SOS_SAMPLE, version, legacy=True)
    assert info.method_size == 0x36 and info.epilogs == (0x2E,)
    assert info.untracked == tuple(UntrackedSlot(o) for o in (0x14, 0x10, 0x0C, 0x08, -4))
    assert pointer_table_kind(info.header) == "full"
    assert len(info.pointer_table.events) == 13
    assert encode(info, version, legacy=True) == SOS_SAMPLE


def test_sos_sample_in_the_modern_format():
    """The same method written today: argTabOffset 5 and delta-encoded untracked offsets."""
    info = decode(SOS_SAMPLE, legacy=True)
    modern = encode(info)
    # argTabOffset 5, then the untracked deltas: -20, then +4 +4 +4 +12.
    assert modern == SOS_SAMPLE[:9] + bytes([5, 0x54, 0x04, 0x04, 0x04, 0x0C]) + SOS_SAMPLE[14:]
    assert decode(modern) == info


# ----------------------------------------------------------------------------- region order


def _everything(version: int = 5) -> MethodGCInfo:
    hdr = InfoHdr(prolog_size=6, epilog_size=3, ebp_frame=True, ebp_saved=True, esi_saved=True,
                  frame_size=4, arg_count=2, gs_cookie_offset=8, sync_start_offset=1, sync_end_offset=1)
    return MethodGCInfo.create(
        0x80, hdr, epilogs=(0x40, 0x7D),
        no_gc_regions=(NoGCRegion(0x20, 4), NoGCRegion(0x30, 2)) if version >= 4 else (),
        untracked=tuple(UntrackedSlot(-4 * i) for i in range(1, 6)) + (UntrackedSlot(8, interior=True),),
        lifetimes=(Lifetime(8, 0x10, 0x20), Lifetime(0xC, 0x12, 0x30, pinned=True)))


@pytest.mark.parametrize("version", VERSIONS)
def test_region_order_and_arg_tab_offset(version):
    info = _everything(version)
    data = encode(info, version)
    h = info.header
    assert h.untracked_cnt == 6 and h.var_ptr_table_size == 2 and h.epilog_count == 2
    assert not h.epilog_at_end and h.no_gc_region_cnt == (2 if version >= 4 else 0)
    head = bytes([0x81, 0x00]) + encode_header(h, version)  # methodSize 0x80 = 1 << 7
    epilogs = bytes([0x40, 0x3D])
    no_gc = bytes([0x20, 4, 0x30, 2]) if version >= 4 else b""
    untracked = bytes([0x04, 0x04, 0x04, 0x04, 0x04, 0x40 | 29])  # -4,-8,...,-20, then 9 = -20 - 29
    lifetimes = bytes([0x08, 0x10, 0x10, 0x0E, 0x02, 0x1E])
    tables = no_gc + untracked + lifetimes
    assert data == head + epilogs + bytes([len(tables)]) + tables + b"\xff"
    regions = decode_with_entries(data, version).regions
    names = [r.name for r in regions]
    assert names == ["method size", "header", "epilogs", "argTabOffset"] + (
        ["no-GC regions"] if version >= 4 else []) + ["untracked", "lifetimes", "pointer table"]
    assert regions[0].start == 0 and regions[-1].end == len(data)
    assert all(a.end == b.start for a, b in zip(regions, regions[1:]))
    for region in regions:
        assert b"".join(data[e.start:e.end] for e in region.entries) == data[region.start:region.end]


def test_trailing_header_fields_and_arg_tab_offset_in_order():
    """Seed: only the untracked count and the var-ptr table size follow the header, then the epilog
    table. Today the GS cookie offset, the sync pair, the reverse-P/Invoke offset and the no-GC
    count follow too, and argTabOffset comes after the epilog table; the no-GC table (v4+) is the
    first of the tables."""
    hdr = InfoHdr(ebp_frame=True, ebp_saved=True, gs_cookie_offset=0x0C, sync_start_offset=3, sync_end_offset=9,
                  rev_pinvoke_offset=0x14)
    regions = tuple(NoGCRegion(o, 1) for o in range(10, 16))
    info = MethodGCInfo.create(0x40, hdr, epilogs=(0x20, 0x30), no_gc_regions=regions,
                               untracked=(UntrackedSlot(-4),) * 4, lifetimes=(Lifetime(8, 1, 2),))
    data = encode(info, 5)
    codes = encode_header(info.header, 5)
    trailing = bytes([4, 1, 0x0C, 3, 9, 0x14, 6])  # untracked, var ptr, GS, sync x2, rev-P/Invoke, no-GC
    assert codes.endswith(trailing)
    tables = bytes(b for o in range(10, 16) for b in (o, 1)) + bytes([0x04, 0, 0, 0]) + bytes([8, 1, 1])
    assert data == bytes([0x40]) + codes + bytes([0x20, 0x10]) + bytes([len(tables)]) + tables + b"\xff"
    assert decode(data) == info


@pytest.mark.parametrize(("fields", "present"), [
    ({}, False),
    ({"untracked": tuple(UntrackedSlot(-4 * i) for i in range(1, 4))}, False),
    ({"untracked": tuple(UntrackedSlot(-4 * i) for i in range(1, 5))}, True),
    ({"lifetimes": (Lifetime(4, 1, 2),)}, True),
    ({"no_gc_regions": (NoGCRegion(1, 1),)}, True),
])
def test_arg_tab_offset_presence(fields, present):
    info = MethodGCInfo.create(0x10, InfoHdr(ebp_frame=True), **fields)
    assert arg_tab_offset_present(info.header) is present
    decoded = decode_with_entries(encode(info))
    assert (decoded.arg_tab_offset is not None) is present
    assert decoded.info == info


def test_argtaboffset_follows_the_placeholder_not_the_count():
    """Like the runtime, a header that used the untracked placeholder for a count of 2 has argTabOffset."""
    # methodSize 0x10; row 0x4F (EBP frame) + FFFF_UNTRACKED_CNT; count 2; argTabOffset 2; -4, -8; FF.
    odd = bytes([0x10, 0xCF, 0x47, 0x02, 0x02, 0x04, 0x04, 0xFF])
    decoded = decode_with_entries(odd)
    assert decoded.arg_tab_offset == 2
    info = decoded.info
    assert info.untracked == (UntrackedSlot(-4), UntrackedSlot(-8))
    canonical = encode(info)  # the JIT writes a count of 2 into the header itself
    assert decode_with_entries(canonical).arg_tab_offset is None
    assert canonical != odd and decode(canonical) == info
    with pytest.raises(DecodeError) as e:  # drop argTabOffset: 04 is read as one, FF as a Signed
        decode(odd[:4] + odd[5:])
    assert e.value.offset == 7 and "runs past the end" in e.value.message


# ----------------------------------------------------------------------------- construction


def test_create_derives_counts_and_epilog_at_end():
    info = MethodGCInfo.create(0x40, InfoHdr(epilog_size=5), epilogs=(0x3B,))
    assert info.header.epilog_count == 1 and info.header.epilog_at_end
    assert "epilogs" not in [r.name for r in decode_with_entries(encode(info)).regions]
    info = MethodGCInfo.create(0x40, InfoHdr(epilog_size=5), epilogs=(0x30,))
    assert not info.header.epilog_at_end
    assert decode(encode(info)) == info


def test_constructor_checks_counts_and_epilogs():
    with pytest.raises(GCInfoEncodeError, match="untracked_cnt is 0 but there are 1"):
        MethodGCInfo(0x10, InfoHdr(), untracked=(UntrackedSlot(4),))
    with pytest.raises(GCInfoEncodeError, match="starts at method_size - epilog_size"):
        MethodGCInfo(0x10, InfoHdr(epilog_count=1, epilog_at_end=True, epilog_size=2), epilogs=(3,))
    with pytest.raises(GCInfoEncodeError, match="at most 4 epilogs"):
        MethodGCInfo.create(0x100, InfoHdr(), epilogs=(1, 2, 3, 4, 5))
    with pytest.raises(GCInfoEncodeError, match="'ebp' pointer-table encoding"):
        MethodGCInfo.create(0x10, InfoHdr(ebp_frame=True),
                            pointer_table=empty_pointer_table(InfoHdr(interruptible=True)))


def test_empty_pointer_table_is_one_ff_byte_for_every_encoding():
    for hdr in (InfoHdr(interruptible=True), InfoHdr(ebp_frame=True), InfoHdr()):
        info = MethodGCInfo.create(4, hdr)
        assert encode(info) == bytes([4]) + encode_header(info.header) + b"\xff"
        assert decode(encode(info)) == info


def test_no_gc_regions_need_version_4():
    info = MethodGCInfo.create(0x10, InfoHdr(interruptible=True), no_gc_regions=(NoGCRegion(2, 2),))
    with pytest.raises(GCInfoEncodeError, match="version 4"):
        encode(info, 3)
    assert decode(encode(info, 4), 4) == info


# ----------------------------------------------------------------------------- decode errors


# Row 0x4F: an EBP frame without epilogs, untracked slots or lifetimes; row 0 has one epilog
# that is not at the end, so an epilog table follows its header.
@pytest.mark.parametrize(("data", "offset", "message"), [
    (b"", 0, "past the end"),
    (bytes([0x10]), 1, "header runs past"),
    (bytes([0x10, 0x4F]), 2, "pointer table is missing"),
    (bytes([0x10, 0x4F, 0xFF, 0x00]), 3, "1 byte(s) after the pointer table"),
    (bytes([0x10, 0x00]), 2, "runs past the end"),
    (bytes([0x10, 0x00, 0x05]), 3, "pointer table is missing"),
])
def test_decode_errors(data, offset, message):
    with pytest.raises(DecodeError) as e:
        decode(data)
    assert e.value.offset == offset
    assert message in str(e.value)


def test_epilog_larger_than_method_is_a_decode_error():
    # Row 1 has one epilog of 1 byte at the end; the method has 0 bytes.
    with pytest.raises(DecodeError, match="larger than the method"):
        decode(bytes([0x00, 0x01, 0xFF]))


# ----------------------------------------------------------------------------- properties

REGS = ("EAX", "ECX", "EDX", "EBX", "EBP", "ESI", "EDI")


@st.composite
def full_tables(draw, ebp_frame: bool):
    full = _table_module("full")
    events, live, depth, offset = [], set(), 0, 0
    for _ in range(draw(st.integers(0, 12))):
        offset += draw(st.integers(1, 90))
        choice = draw(st.integers(0, 4))
        if choice == 0 and len(live) < len(REGS):
            reg = draw(st.sampled_from([r for r in REGS if r not in live]))
            live.add(reg)
            events.append(full.RegLive(offset, reg, draw(st.booleans()), False))
        elif choice == 1 and live:
            reg = draw(st.sampled_from(sorted(live)))
            live.remove(reg)
            events.append(full.RegDead(offset, reg))
        elif choice == 2:
            events.append(full.PushPtr(offset, depth, draw(st.booleans()), False))
            depth += 1
        elif choice == 3 and not ebp_frame:
            events.append(full.PushNonPtr(offset, 1))
            depth += 1
        elif depth:
            n = draw(st.integers(1, depth))
            events.append(full.Pop(offset, n))
            depth -= n
    return full.FullTable(tuple(events)), offset


@st.composite
def ebp_tables(draw):
    ebp = _table_module("ebp")
    calls, offset = [], 0
    for _ in range(draw(st.integers(0, 6))):
        offset += draw(st.integers(1, 300))
        regs = tuple(r for r in ("EDI", "ESI", "EBX") if draw(st.booleans()))
        byref = tuple(r for r in regs if draw(st.booleans()))
        mask = draw(st.integers(0, 0xFFF))
        calls.append(ebp.CallSite(offset, regs, byref, mask, mask & draw(st.integers(0, 0x1F))))
    this = draw(st.sampled_from([None, "EDI", "ESI", "EBX"]))
    return ebp.canonical(ebp.EbpTable(this, tuple(calls))), offset


@st.composite
def esp_tables(draw):
    esp = _table_module("esp")
    events, depth, offset = [], 0, 0
    for _ in range(draw(st.integers(0, 10))):
        offset += draw(st.integers(1, 120))
        choice = draw(st.integers(0, 3))
        if choice == 0:
            gc = draw(st.booleans())
            events.append(esp.Push(offset, gc, gc and draw(st.booleans())))
            depth += 1
        elif choice == 1 and depth:
            events.append(esp.Pop(offset, 1))
            depth -= 1
        else:
            n = draw(st.integers(0, depth))
            regs = tuple(r for r in ("EDI", "ESI", "EBX", "EBP") if draw(st.booleans()))
            events.append(esp.Call(offset, n, regs, tuple(r for r in regs if draw(st.booleans()))))
            depth -= n
    return esp.canonical(esp.EspTable(tuple(events))), offset


@st.composite
def methods(draw, version: int):
    kind = draw(st.sampled_from(["full-ebp", "full-esp", "ebp", "esp"]))
    hdr = InfoHdr(
        prolog_size=draw(st.integers(0, 40)), epilog_size=draw(st.integers(0, 12)),
        ebp_frame=kind in ("full-ebp", "ebp"), ebp_saved=kind in ("full-ebp", "ebp"),
        interruptible=kind.startswith("full"),
        edi_saved=draw(st.booleans()), esi_saved=draw(st.booleans()), frame_size=draw(st.integers(0, 300)),
        arg_count=draw(st.integers(0, 40)), gs_cookie_offset=draw(st.sampled_from([0, 12])),
        return_kind=draw(st.integers(0, 3)) if version >= 2 else 0)
    if kind == "ebp":
        table, last = draw(ebp_tables())
    elif kind == "esp":
        table, last = draw(esp_tables())
    else:
        table, last = draw(full_tables(kind == "full-ebp"))
    size = last + draw(st.integers(0, 200)) + hdr.epilog_size
    epilogs = sorted(draw(st.lists(st.integers(0, size - hdr.epilog_size), max_size=4)))  # within the method
    lives, begin = [], 0
    for _ in range(draw(st.integers(0, 5))):
        begin += draw(st.integers(0, 50))
        lives.append(Lifetime(4 * draw(st.integers(1, 100)), begin, begin + draw(st.integers(0, 50)),
                              draw(st.booleans()), draw(st.booleans())))
    untracked = [UntrackedSlot(4 * draw(st.integers(-200, 200)), draw(st.booleans()), draw(st.booleans()))
                 for _ in range(draw(st.integers(0, 6)))]
    regions = sorted(draw(st.lists(st.tuples(st.integers(0, size), st.integers(1, 20)), max_size=3))) \
        if version >= 4 else []
    return MethodGCInfo.create(size, hdr, epilogs=epilogs, untracked=untracked, lifetimes=lives,
                               no_gc_regions=[NoGCRegion(o, s) for o, s in regions], pointer_table=table)


@settings(max_examples=120, deadline=None)
@given(st.sampled_from(VERSIONS).flatmap(lambda v: st.tuples(st.just(v), methods(v))), st.booleans())
def test_decode_encode_round_trip(version_info, legacy):
    version, info = version_info
    if legacy and info.no_gc_regions:
        info = dataclasses.replace(info, no_gc_regions=(),
                                   header=dataclasses.replace(info.header, no_gc_region_cnt=0))
    data = encode(info, version, legacy=legacy)
    assert decode(data, version, legacy=legacy) == info
    assert encode(decode(data, version, legacy=legacy), version, legacy=legacy) == data


@settings(max_examples=60, deadline=None)
@given(methods(5), st.integers(0, 40), st.integers(0, 255))
def test_decodable_mutants_keep_their_meaning(info, position, value):
    """A blob no JIT wrote decodes to a description whose canonical bytes decode to the same."""
    data = bytearray(encode(info))
    data[position % len(data)] = value
    try:
        decoded = decode(bytes(data))
    except DecodeError:
        return
    assert decode(encode(decoded)) == decoded


def test_header_that_cannot_be_meant_is_a_decode_error():
    # Row 0x4F + FLIP_SYNC: start 0 (= not synchronized) but end 5.
    with pytest.raises(DecodeError) as e:
        decode(bytes([0x10, 0xCF, 0x4B, 0x00, 0x05, 0xFF]))
    assert e.value.offset == 1 and "sync_end_offset is set but sync_start_offset is 0" in e.value.message


def test_create_puts_the_pointer_table_in_canonical_form():
    ebp = _table_module("ebp")
    messy = ebp.EbpTable(None, (ebp.CallSite(8, ("EBX", "EDI")),))
    info = MethodGCInfo.create(0x10, InfoHdr(ebp_frame=True, ebp_saved=True), pointer_table=messy)
    assert info.pointer_table.calls[0].regs == ("EDI", "EBX")
    assert decode(encode(info)) == info
