"""The partially interruptible EBP-frame pointer table: every form, gcdump text, the VM's scan, laws."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gctoy.coreclr.codecs import GCInfoEncodeError
from gctoy.coreclr.entries import PtrTableState, PushedArg
from gctoy.coreclr.header import InfoHdr
from gctoy.coreclr.ptrtab_ebp import (
    ArgOffset, CallSite, EbpTable, call_text, canonical, decode_table, encode_table, scan,
)
from gctoy.errors import DecodeError, GCToyError

HDR = InfoHdr(ebp_frame=True, ebp_saved=True)


def enc(*calls, this_reg=None) -> str:
    return encode_table(EbpTable(this_reg, tuple(calls)), HDR).hex(" ")


# --------------------------------------------------------------------------- every form


def test_this_byte_and_tiny_form():
    assert enc(CallSite(5, ("EDI", "EBX")), this_reg="ESI") == "20 55 ff"
    assert enc(CallSite(15)) == "0f ff"


def test_small_form():
    # delta 16 or any pushed pointer leaves the tiny form; the limit is delta 0x78, mask 0x1F.
    assert enc(CallSite(16, ("ESI",))) == "90 40 ff"
    assert enc(CallSite(3, (), (), 0x1F)) == "83 1f ff"
    assert enc(CallSite(0x78, ("EBX",), (), 1)) == "f8 81 ff"


def test_medium_form_splits_delta_and_mask_across_three_bytes():
    # delta 0x1A5 = dddd 0x5, DDDDD 0x1A; argMask 0xABC = aaaaaaaa 0xBC, AAAA 0xA.
    assert enc(CallSite(0x1A5, ("EDI",), (), 0xABC)) == "fd bc a5 3a ff"
    assert enc(CallSite(0x79)) == "fd 00 09 07 ff"


def test_medium_form_with_byrefs():
    call = CallSite(0xFF, ("EDI", "EBX"), ("EBX",), 0x13, 0x02)
    assert enc(call) == "f9 ff b3 82 ff"


def test_large_forms_use_little_endian_dwords():
    assert enc(CallSite(0x200, ("ESI",), (), 0x1000)) == "fe 02 00 02 00 00 00 10 00 00 ff"
    assert enc(CallSite(0x100, ("ESI",), ("ESI",), 0x20, 0x20)) == (
        "fa 22 00 01 00 00 20 00 00 00 20 00 00 00 ff")
    assert enc(CallSite(3, (), (), 0x1_0000_0000 - 1)) == "fe 00 03 00 00 00 ff ff ff ff ff"


def test_huge_form_whenever_an_argument_list_is_given():
    call = CallSite(7, ("EDI",), ("EDI",), arg_offsets=(ArgOffset(8), ArgOffset(0x100, True)))
    assert enc(call) == "fb 11 07 00 00 00 02 00 00 00 03 00 00 00 08 82 01 ff"


def test_encoder_order_prefers_the_first_form_that_fits():
    forms = {}
    for call in [CallSite(5), CallSite(20, (), (), 3), CallSite(200, (), (), 0x100), CallSite(100, (), (), 1, 1),
                 CallSite(600, (), (), 1), CallSite(650, (), (), 1, 1),
                 CallSite(7, (), (), arg_offsets=(ArgOffset(4),))]:
        data = encode_table(EbpTable(None, (call,)), HDR)
        forms[data[0] if data[0] >= 0xF9 else ("tiny" if data[0] < 0x80 else "small")] = call
    assert set(forms) == {"tiny", "small", 0xFD, 0xF9, 0xFA, 0xFE, 0xFB}


# --------------------------------------------------------------------------- decode and gcdump text


def test_gcdump_text():
    table = EbpTable("EBX", (
        CallSite(4, ("EDI", "ESI")), CallSite(40, ("ESI",), ("ESI",), 0x05, 0x04),
        CallSite(0x300, (), (), 0x81),
        CallSite(0x310, ("EBX",), (), arg_offsets=(ArgOffset(8), ArgOffset(12, True))),
    ))
    data = encode_table(table, HDR)
    decoded, entries, end = decode_table(data, 0, HDR)
    assert decoded == table and end == len(data)
    assert [e.text for e in entries] == [
        "            thisptr in EBX",
        "0004        call [ EDI ESI ] argMask=00",
        "0028        call [ ESI'] argMask=05 (iargs=04)",
        "0300        call [ ] argMask=81",
        "0310        call [ EBX ] ptrArgs=[8 12i]",
        None,
    ]
    assert [e.kind for e in entries] == ["this", "call", "call", "call", "call", "end"]
    assert [e.code_offset for e in entries] == [None, 4, 40, 0x300, 0x310, 0x310]


def test_huge_offset_is_a_delta_although_gcdump_reads_it_as_absolute():
    """The FB DWORD is a delta (JIT writes it so, the VM adds it); CoreCLR's gcdump assigns it.

    gcdump would print the second call below at 0004; we print 000A, where the VM finds it.
    """
    data = bytes.fromhex("06 fb 00 04 00 00 00 01 00 00 00 01 00 00 00 04 ff")
    table, entries, _ = decode_table(data, 0, HDR)
    assert table.calls[1].offset == 10
    assert entries[1].text == "000A        call [ ] ptrArgs=[4]"
    assert scan(data, 0, HDR, 10).pushed_args == (PushedArg("ESP", 4),)
    assert scan(data, 0, HDR, 4) == PtrTableState()


def test_large_form_layout_is_regs_then_delta_then_mask():
    """FE/FA are [0BSD0bsd] [DWORD delta] [DWORD argMask] ([DWORD byrefMask]).

    The seed describes FE as [32-bit argMask] [24-bit code delta] [bsd] [5-bit high code delta];
    read that way these bytes would be a different call. Pinned: the modern layout.
    """
    data = bytes.fromhex("fe 05 34 12 00 00 03 00 00 00 ff")
    table, _, _ = decode_table(data, 0, HDR)
    assert table.calls == (CallSite(0x1234, ("EDI", "EBX"), (), 3),)


@pytest.mark.parametrize(("hexdata", "at"), [
    ("", 0), ("05", 1), ("00 ff", 0), ("30 ff", 0), ("05 10 ff", 1), ("fc 00 ff", 0), ("80 01 ff", 0),
    ("85", 1), ("fd 01 02", 3), ("f9 01 20", 3), ("f9 01 20 40 ff", 0), ("fe 08 01 00 00 00 00 00 00 00 ff", 1),
    ("fe 80 01 00 00 00 00 00 00 00 ff", 1), ("fe 00 01 00 00", 2), ("fa 10 01 00 00 00 00 00 00 00 00 00 00 00 ff", 0),
    ("fb 00 01 00 00 00 00 00 00 00 00 00 00 00 ff", 0), ("fb 00 01 00 00 00 02 00 00 00 01 00 00 00 04 ff", 14),
    ("fb 00 01 00 00 00 01 00 00 00 02 00 00 00 06 00 ff", 14), ("fb 00 01 00 00 00 01 00 00 00 02 00 00 00 04 ff", 15),
    ("fb 00 01 00 00 00 01 00 00 00 09 00 00 00 04 ff", 14), ("fe 00 ff ff ff ff 00 00 00 00 05 ff", 10),
    ("fb 00 01 00 00 00 01 00 00 00 01 00 00 00 84 ff", 15),
])
def test_malformed_bytes_raise_decode_error_at_the_bad_byte(hexdata, at):
    with pytest.raises(DecodeError) as info:
        decode_table(bytes.fromhex(hexdata), 0, HDR)
    assert info.value.offset == at


def test_negative_offsets_and_offsets_past_the_end():
    for offset, at in [(-1, 0), (5, 5)]:
        with pytest.raises(DecodeError) as info:
            decode_table(b"\xff", offset, HDR)
        assert info.value.offset == at


def test_encoder_rejects_what_cannot_be_written():
    bad = [
        EbpTable("EAX"), EbpTable(None, (CallSite(0),)), EbpTable(None, (CallSite(5), CallSite(5))),
        EbpTable(None, (CallSite(5, ("EBP",)),)), EbpTable(None, (CallSite(5, ("EDI",), ("ESI",)),)),
        EbpTable(None, (CallSite(5, (), (), 1, 2),)), EbpTable(None, (CallSite(5, (), (), 1 << 32),)),
        EbpTable(None, (CallSite(5, arg_offsets=()),)), EbpTable(None, (CallSite(5, arg_offsets=(ArgOffset(6),)),)),
        EbpTable(None, (CallSite(5, (), (), 1, arg_offsets=(ArgOffset(4),)),)), EbpTable(None, ("call",)),
        EbpTable(None, (CallSite(5, arg_offsets=(4,)),)),
    ]
    for table in bad:
        with pytest.raises(GCInfoEncodeError):
            encode_table(table, HDR)
    with pytest.raises(GCInfoEncodeError):
        encode_table("nope", HDR)


# --------------------------------------------------------------------------- scan


def test_scan_hits_only_listed_call_sites():
    data = encode_table(EbpTable("EDI", (CallSite(6, ("EDI",)), CallSite(30, ("ESI",), ("ESI",), 6, 4)),), HDR)
    assert scan(data, 0, HDR, 0) == PtrTableState()  # nothing is read at offset 0
    assert scan(data, 0, HDR, 5) == PtrTableState(this_reg="EDI")
    assert scan(data, 0, HDR, 6) == PtrTableState(frozenset({"EDI"}), this_reg="EDI")
    assert scan(data, 0, HDR, 30) == PtrTableState(
        frozenset({"ESI"}), frozenset({"ESI"}), (PushedArg("ESP", 4), PushedArg("ESP", 8, True)), 0, "EDI")
    assert scan(data, 0, HDR, 31) == PtrTableState(this_reg="EDI")
    # Registers too are read at the return address, even for a caller frame.
    assert scan(data, 0, HDR, 6, regs_offs=5) == scan(data, 0, HDR, 6)
    with pytest.raises(GCToyError):
        scan(data, 0, HDR, -1)


def test_scan_reads_only_what_it_needs():
    assert scan(bytes.fromhex("05 fc"), 0, HDR, 5).live_regs == frozenset()
    with pytest.raises(DecodeError) as info:
        scan(bytes.fromhex("05 fc"), 0, HDR, 6)
    assert info.value.offset == 1


# --------------------------------------------------------------------------- laws

DELTAS = st.one_of(st.integers(1, 15), st.integers(16, 0x78), st.integers(0x79, 0x1FF), st.integers(0x200, 0x20000))
MASKS = st.one_of(st.just(0), st.integers(0, 0x1F), st.integers(0, 0xFFF), st.integers(0, 0xFFFF_FFFF))
REGSETS = st.integers(0, 7)


@st.composite
def call_sites(draw, offset: int):
    regs = draw(REGSETS)
    byref_regs = regs & draw(REGSETS) if draw(st.booleans()) else 0
    if draw(st.integers(0, 9)) == 0:
        args = draw(st.lists(st.builds(ArgOffset, st.integers(0, 4000).map(lambda v: v * 4), st.booleans()),
                             min_size=1, max_size=6))
        return CallSite(offset, _names(regs), _names(byref_regs), arg_offsets=tuple(args))
    mask = draw(MASKS)
    byref_mask = mask & draw(MASKS) if draw(st.booleans()) else 0
    return CallSite(offset, _names(regs), _names(byref_regs), mask, byref_mask)


def _names(mask: int) -> tuple[str, ...]:
    return tuple(name for i, name in enumerate(("EDI", "ESI", "EBX")) if mask >> i & 1)


@st.composite
def tables(draw):
    offset = 0
    calls = []
    for _ in range(draw(st.integers(0, 12))):
        offset += draw(DELTAS)
        calls.append(draw(call_sites(offset)))
    return EbpTable(draw(st.sampled_from([None, "EDI", "ESI", "EBX"])), tuple(calls))


def evaluate(table: EbpTable, cur: int) -> PtrTableState:
    """A direct reading of the description at code offset `cur`."""
    this = table.this_reg if cur > 0 else None
    for call in table.calls:
        if call.offset == cur:
            if call.arg_offsets is not None:
                args = tuple(PushedArg("ESP", a.offset, a.interior) for a in call.arg_offsets)
            else:
                args = tuple(PushedArg("ESP", 4 * i, bool(call.byref_arg_mask >> i & 1))
                             for i in range(32) if call.arg_mask >> i & 1)
            return PtrTableState(frozenset(call.regs), frozenset(call.byref_regs), args, 0, this)
    return PtrTableState(this_reg=this)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tables())
def test_law_decode_encode_roundtrip(table):
    data = encode_table(table, HDR)
    decoded, entries, end = decode_table(data, 0, HDR)
    assert decoded == canonical(table) == table
    assert end == len(data) and len(entries) == len(table.calls) + (table.this_reg is not None) + 1
    assert encode_table(decoded, HDR) == data
    assert all(e.text == f"{c.offset:04X}        {call_text(c)}"
               for e, c in zip([e for e in entries if e.kind == "call"], table.calls))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tables())
def test_law_scan_equals_semantic_evaluation(table):
    data = encode_table(table, HDR)
    offsets = {0, 1}
    for call in table.calls:
        offsets |= {call.offset - 1, call.offset, call.offset + 1}
    if not table.calls or table.calls[-1].offset < 600:
        offsets |= set(range((table.calls[-1].offset if table.calls else 0) + 3))
    for cur in sorted(offsets):
        assert scan(data, 0, HDR, cur) == evaluate(table, cur), cur


def test_canonical_orders_registers():
    table = EbpTable(None, (CallSite(3, ("EBX", "EDI"), ("EBX",)),))
    assert canonical(table).calls[0].regs == ("EDI", "EBX")
    assert decode_table(encode_table(table, HDR), 0, HDR)[0] == canonical(table)
