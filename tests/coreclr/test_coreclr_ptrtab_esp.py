"""The EBP-less partially interruptible pointer table: JIT encoder choices, decoder, gcdump text, VM scan."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gctoy.coreclr.codecs import GCInfoEncodeError
from gctoy.coreclr.entries import PtrTableState, PushedArg
from gctoy.coreclr.header import InfoHdr
from gctoy.coreclr.ptrtab_esp import (
    CALLEE_SAVED,
    Call,
    EspTable,
    Kill,
    Pop,
    Push,
    ThisReg,
    canonical,
    decode_table,
    encode_table,
    scan,
)
from gctoy.coreclr.tables import CALL_PATTERN_TABLE
from gctoy.errors import DecodeError

HDR = InfoHdr()


def enc(*events) -> bytes:
    return encode_table(EspTable(tuple(events)), HDR)


def dec(data: bytes) -> EspTable:
    table, _, end = decode_table(data, 0, HDR)
    assert end == len(data)
    return table


def dw(value: int) -> bytes:
    return value.to_bytes(4, "little")


def texts(data: bytes) -> list[str | None]:
    return [e.text for e in decode_table(data, 0, HDR)[1]]


# --------------------------------------------------------------------------- an independent model


def oracle(table: EspTable, q: int) -> PtrTableState:
    """What should be live at return address `q`, straight from the description's meaning."""
    stack: list[int] = []  # 0 not a pointer, 1 pointer, 2 interior; last = [ESP]
    site = None
    this = None
    for e in table.events:
        if e.offset > q:
            break
        if isinstance(e, Push):
            stack.append(2 if e.interior else int(e.gc))
            site = None
        elif isinstance(e, Pop):
            del stack[len(stack) - e.count:]
            site = None
        elif isinstance(e, Kill):
            n = e.count
            for i in reversed(range(len(stack))):
                if n and stack[i]:
                    stack[i], n = 0, n - 1
        elif isinstance(e, ThisReg):
            this = e.reg
        else:
            del stack[len(stack) - e.arg_cnt:]
            args = [(i, k == 2) for i, k in enumerate(reversed(stack)) if k]
            if e.regs or args or e.arg_cnt >= 4:
                site = (e.offset, e.regs, e.interior_regs, args)
            elif e.arg_cnt:
                site = None
    if site is None or site[0] != q:
        return PtrTableState(pushed_bytes=4 * len(stack), this_reg=this)
    _, regs, iregs, args = site
    return PtrTableState(frozenset(regs), frozenset(iregs), tuple(PushedArg("ESP", 4 * i, x) for i, x in args),
                         4 * len(stack), this)


@st.composite
def tables(draw) -> EspTable:
    """JIT-like descriptions: deltas from 0 to large, shallow stacks with interior pointers, or
    (rarely) stacks deeper than 32 DWORDs whose interior pointers sit above the 34th DWORD."""
    deep = draw(st.integers(0, 9)) == 0
    cap = 44 if deep else 20
    events: list = []
    stack: list[int] = []
    off = 0
    for _ in range(draw(st.integers(33, 40)) if deep else 0):  # a call with many arguments
        off += draw(st.integers(0, 3))
        gc = draw(st.booleans())
        stack.append(2 if gc and len(stack) >= 34 and draw(st.booleans()) else int(gc))
        events.append(Push(off, gc, stack[-1] == 2))
    for _ in range(draw(st.integers(0, 25))):
        off += draw(st.one_of(st.integers(0, 40), st.integers(0, 300), st.just(0x12345)))
        kind = draw(st.sampled_from(["push", "push", "push", "pop", "kill", "call", "call", "this"]))
        if kind == "push" and len(stack) < cap:
            gc = draw(st.booleans())
            interior = gc and draw(st.booleans()) and (not deep or len(stack) >= 34)
            stack.append(2 if interior else int(gc))
            events.append(Push(off, gc, interior))
        elif kind == "pop" and stack:
            n = draw(st.integers(1, min(3, len(stack))))
            del stack[len(stack) - n:]
            events.append(Pop(off, n))
        elif kind == "kill" and any(stack):
            n = draw(st.integers(1, sum(1 for k in stack if k)))
            events.append(Kill(off, n))
            for i in reversed(range(len(stack))):
                if n and stack[i]:
                    stack[i], n = 0, n - 1
        elif kind == "this" and (not events or isinstance(events[-1], (Push, Pop))):
            reg = draw(st.sampled_from(CALLEE_SAVED))
            events.append(ThisReg(events[-1].offset if events else 0, reg))
        elif kind == "call":
            arg_cnt = draw(st.one_of(st.integers(0, min(2, len(stack))), st.integers(0, len(stack))))
            regs = tuple(sorted(draw(st.sets(st.sampled_from(CALLEE_SAVED))), key=CALLEE_SAVED.index))
            iregs = tuple(r for r in regs if draw(st.booleans()) and draw(st.booleans()))
            del stack[len(stack) - arg_cnt:]
            events.append(Call(off, arg_cnt, regs, iregs))
    return EspTable(tuple(events))


def last_offset(table: EspTable) -> int:
    return max((e.offset for e in table.events), default=0)


@settings(max_examples=250, deadline=None)
@given(tables())
def test_round_trip_and_scan_match_the_description(table):
    data = encode_table(table, HDR)
    decoded, entries, end = decode_table(data, 0, HDR)
    assert end == len(data) and data[-1] == 0xFF
    assert decoded == canonical(table)
    assert encode_table(decoded, HDR) == data
    assert canonical(decoded) == decoded
    assert [e.start for e in entries[1:]] == [e.end for e in entries[:-1]] and entries[-1].end == len(data)
    top = last_offset(table)
    probes = range(top + 3) if top < 400 else sorted({e.offset + d for e in table.events for d in (-1, 0, 1)})
    for q in probes:
        if q >= 0:
            assert scan(data, 0, HDR, q) == oracle(table, q), q
            assert scan(data, 0, HDR, q) == oracle(decoded, q), q


@settings(max_examples=150, deadline=None)
@given(tables(), st.binary(max_size=3))
def test_decoding_at_an_offset_inside_a_blob(table, prefix):
    data = prefix + encode_table(table, HDR) + b"\x99"
    decoded, entries, end = decode_table(data, len(prefix), HDR)
    assert decoded == canonical(table) and end == len(data) - 1 and entries[0].start == len(prefix)


# --------------------------------------------------------------------------- pushes, pops, skips


def test_push_and_pop_forms():
    assert enc(Push(3), Pop(5)) == bytes([0x03, 0x52, 0xFF])
    assert enc(Push(31), Push(63), Pop(78), Pop(94)) == bytes(
        [0x1F, 0x40, 0x01, 0x1F, 0x5F, 0x40, 0x01, 0x5F, 0xFF])
    # pops at one offset (add esp, 8) are one entry each; the decoder gathers them again
    assert enc(Push(1), Push(2), Pop(4, 2)) == bytes([0x01, 0x01, 0x52, 0x50, 0xFF])
    assert dec(bytes([0x01, 0x01, 0x52, 0x50, 0xFF])) == EspTable((Push(1), Push(2), Pop(4, 2)))
    assert texts(bytes([0x01, 0x40, 0x81, 0x00, 0x1F, 0x52, 0x50, 0xFF])) == [
        "0001        push", None, "00A0        push", "00A2        pop 1", "00A2        pop 1", None]


def test_uninteresting_calls_use_the_pop_encoding():
    # nothing live and fewer than 4 DWORDs popped: 01CCDDDD with CC = argCnt
    assert enc(Push(1), Push(2), Push(3), Call(8, 3)) == bytes([0x01, 0x01, 0x01, 0x75, 0xFF])
    assert enc(Push(1), Push(2), Call(8, 2)) == bytes([0x01, 0x01, 0x66, 0xFF])
    assert enc(Push(1), Call(30, 1)) == bytes([0x01, 0x40, 0x0E, 0x5F, 0xFF])
    # nothing popped: a bare small skip, or nothing at all without a delta
    assert enc(Push(1), Call(6)) == bytes([0x01, 0x45, 0xFF])
    assert enc(Push(1), Call(1)) == bytes([0x01, 0xFF])
    # a one-DWORD uninteresting call reads back as the pop it looks like; 2 and 3 stay calls
    assert dec(bytes([0x01, 0x5F, 0xFF])) == EspTable((Push(1), Pop(16)))
    assert dec(bytes([0x01, 0x01, 0x66, 0xFF])) == EspTable((Push(1), Push(2), Call(8, 2)))
    assert dec(bytes([0x01, 0x45, 0xFF])) == EspTable((Push(1), Call(6)))
    assert texts(bytes([0x01, 0x01, 0x66, 0x45, 0xFF])) == ["0001        push", "0002        push",
                                                            "0008        pop 2", None, None]


def test_four_popped_dwords_make_a_call_entry_even_with_nothing_live():
    data = enc(*(Push(i) for i in range(4)), Call(10, 4))
    assert data == bytes([0x00, 0x01, 0x01, 0x01, 0x41, 0xD0, 0x20, 0xFF])  # skip 1, DD=0 (delta 6), CCC=4
    assert texts(data)[-2] == "000A        call 4 [ ]"


# --------------------------------------------------------------------------- call patterns


@pytest.mark.parametrize("row", range(80))
def test_every_call_pattern_is_written_for_its_exact_values(row):
    value = CALL_PATTERN_TABLE[row]
    arg_cnt, regs, delta = value & 0xFF, value >> 8 & 0xFF, value >> 24
    names = tuple(n for i, n in enumerate(CALLEE_SAVED) if regs >> i & 1)
    pushes = tuple(Push(0) for i in range(arg_cnt))
    data = enc(*pushes, Call(delta, arg_cnt, names))
    assert data == bytes([0] * arg_cnt + [0x80 | row, 0xFF])
    assert dec(data) == EspTable(pushes + (Call(delta, arg_cnt, names),))
    assert texts(data)[-2] == f"{delta:04X}        call {arg_cnt} [ " + "".join(
        n + " " for n in names) + "]"


def test_near_pattern_skips_the_smallest_remainder():
    # ESI, no args: the largest table delta is 35 (row 25); 40 = skip 5 + row 25
    assert enc(Call(40, 0, ("ESI",))) == bytes([0x45, 0x99, 0xFF])
    # remainder >= 16 uses the long skip; rows with deltas 7..35 exist, so 100 = 65 + 35
    assert enc(Call(100, 0, ("ESI",))) == bytes([0x40, 65, 0x99, 0xFF])
    # all four registers, argCnt 0 has one row (row 69, delta 12): 13 = skip 1 + row 69
    assert enc(Call(13, 0, ("EDI", "ESI", "EBX", "EBP"))) == bytes([0x41, 0x80 | 69, 0xFF])
    # below every row's delta there is no pattern: the E0 form after a small skip
    assert enc(Call(5, 0, ("ESI",))) == bytes([0x45, 0xE2, 0x00, 0x00, 0xFF])
    # a remainder of 255 or more is too far for a pattern: D0 form
    assert enc(Call(35 + 255, 0, ("ESI",)))[-3:] == bytes([0xD2, 0xC0, 0xFF])


def test_a_call_with_nothing_to_report_can_hide_in_the_next_calls_skip():
    # Call(5) reports nothing and pops nothing: its bytes are the small skip 0x45. The call at 40
    # is then row 25 (delta 35) exactly -- the same bytes as a lone call at 40 (skip 5 + row 25),
    # so the canonical description drops the empty call.
    with_empty = EspTable((Push(0), Call(5), Call(40, 0, ("ESI",))))
    assert encode_table(with_empty, HDR) == enc(Push(0), Call(40, 0, ("ESI",))) == bytes([0x00, 0x45, 0x99, 0xFF])
    assert canonical(with_empty) == dec(bytes([0x00, 0x45, 0x99, 0xFF])) == EspTable((Push(0), Call(40, 0, ("ESI",))))
    # where the lone call would be written differently, the empty call stays
    kept = EspTable((Push(0), Call(5), Call(15, 0, ("ESI",))))
    assert encode_table(kept, HDR) == bytes([0x00, 0x45, 0x80, 0xFF]) != enc(Push(0), Call(15, 0, ("ESI",)))
    assert dec(bytes([0x00, 0x45, 0x80, 0xFF])) == canonical(kept) == kept


# --------------------------------------------------------------------------- D0 and E0 forms


def d0(delta: int) -> bytes:
    return enc(Push(1, True), Call(1 + delta, 0, ("EBX",)))[1:]  # EBX + argMask 1: no pattern


@pytest.mark.parametrize("delta,expected", [
    (6, [0xD4, 0x01]), (8, [0xD4, 0x41]), (10, [0xD4, 0x81]), (12, [0xD4, 0xC1]),
    (7, [0x41, 0xD4, 0x01]), (9, [0x43, 0xD4, 0x01]), (11, [0x45, 0xD4, 0x01]),
    (13, [0x41, 0xD4, 0xC1]), (27, [0x4F, 0xD4, 0xC1]), (28, [0x40, 16, 0xD4, 0xC1]),
    (3, [0x43, 0xE4, 0x00, 0x01]), (0, [0xE4, 0x00, 0x01]),
])
def test_d0_form_and_its_skips(delta, expected):
    data = d0(delta)
    assert data == bytes(expected + [0xFF])
    table = dec(b"\x01" + data)
    assert table == EspTable((Push(1, True), Call(1 + delta, 0, ("EBX",))))
    assert texts(b"\x01" + data)[-2] == f"{1 + delta:04X}        call 0 [ EBX ] argMask=01"


def test_e0_form_for_large_masks_and_counts():
    pushes = tuple(Push(i, i == 0) for i in range(9))
    # argMask 0x100 > 7 (the pointer is 9th from the top): E0 with a long skip of the whole delta
    assert enc(*pushes, Call(8 + 20, 0, ("EDI",))) == bytes([0] + [1] * 8 + [0x40, 20, 0xE1, 0x00, 0x82, 0x00, 0xFF])
    # argCnt 8 > 7
    data = enc(*pushes, Call(8 + 8, 8, ()))
    assert data == bytes([0] + [1] * 8 + [0x48, 0xE0, 0x08, 0x01, 0xFF])
    assert texts(data)[-2] == "0010        call 8 [ ] argMask=01"
    assert dec(data) == EspTable(pushes + (Call(16, 8),))


# --------------------------------------------------------------------------- pending arguments


def test_args_pushed_for_a_call_and_popped_by_it_are_not_reported_at_its_return():
    data = enc(Push(2, True), Push(4, True), Call(14, 2, ("ESI",)))
    assert data == bytes([0x02, 0x02, 0xD2, 0x90, 0xFF])  # no pattern for (2, ESI, 10): D0, DD=2, CCC=2
    assert scan(data, 0, HDR, 14) == PtrTableState(frozenset({"ESI"}))


def test_nested_call_reports_the_outer_calls_pending_args():
    # push a (ptr), push 5, call g (nothing popped), push r (ptr), call f popping all 3
    table = EspTable((Push(2, True), Push(4), Call(10), Push(12, True), Call(20, 3)))
    data = encode_table(table, HDR)
    # g: argMask 0b10 -> D0 (delta 6); f: pops 3 with nothing left to report -> pop encoding 0x78
    assert data == bytes([0x02, 0x02, 0xD0, 0x02, 0x02, 0x78, 0xFF])
    assert scan(data, 0, HDR, 10) == PtrTableState(pushed_args=(PushedArg("ESP", 4),), pushed_bytes=8)
    assert scan(data, 0, HDR, 12).pushed_bytes == 12 and scan(data, 0, HDR, 20).pushed_bytes == 0
    # no call ever reports r, so the bytes cannot tell it was a pointer
    assert dec(data) == EspTable((Push(2, True), Push(4), Call(10), Push(12), Call(20, 3)))


def test_kill_after_a_caller_pop_call():
    # cdecl: the callee leaves its two pointer args on the stack; the caller kills, later pops them
    table = EspTable((Push(1, True), Push(2, True), Call(10, 0, ("EDI",)), Kill(10, 2),
                      Call(20, 0, ("EDI",)), Pop(25, 2)))
    data = encode_table(table, HDR)
    assert scan(data, 0, HDR, 10).pushed_args == (PushedArg("ESP", 0), PushedArg("ESP", 4))
    assert scan(data, 0, HDR, 20) == PtrTableState(frozenset({"EDI"}), pushed_bytes=8)
    # the decoder puts a kill right after the last call that still reported the pointers
    assert dec(data) == table
    later = EspTable((Push(1, True), Push(2, True), Call(10, 0, ("EDI",)), Push(12), Kill(15, 2),
                      Call(20, 0, ("EDI",)), Pop(25, 3)))
    assert dec(encode_table(later, HDR)) == EspTable(later.events[:3] + (Kill(10, 2), Push(12)) + later.events[5:])


def test_kill_takes_the_most_recent_pointers_only():
    table = EspTable((Push(1, True), Push(2), Push(3, True), Kill(4, 1), Call(10, 0, ("ESI",))))
    assert scan(encode_table(table, HDR), 0, HDR, 10).pushed_args == (PushedArg("ESP", 8),)
    with pytest.raises(DecodeError, match="kill only takes the most recently pushed"):
        dec(bytes([0x01, 0x01, 0x01, 0xD2, 0x05, 0x40, 0x04, 0xD2, 0x01, 0xFF]))


def test_fat_form_beyond_32_pending_dwords():
    # 34 pending DWORDs: the first pushed (now [ESP+0x84]) and the 32nd (interior, [ESP+8])
    pushes = (Push(1, True),) + tuple(Push(2 + i, i == 30, i == 30) for i in range(33))
    data = enc(*pushes, Call(50, 0, ("EDI", "EBP"), ("EBP",)))
    fat = (bytes([0xF8, 0x89]) + (50 - 34).to_bytes(4, "little") + (0).to_bytes(4, "little")
           + (2).to_bytes(4, "little") + (3).to_bytes(4, "little") + bytes([0x09, 0x81, 0x04]))
    assert data == bytes([1] * 34) + fat + b"\xFF"
    assert texts(data)[-2] == "0032        call 0 [ EDI EBP'] argOffs(2) =    9   84"
    state = scan(data, 0, HDR, 50)
    assert state.pushed_args == (PushedArg("ESP", 8, True), PushedArg("ESP", 0x84))
    assert state.live_regs == {"EDI", "EBP"} and state.interior_regs == {"EBP"} and state.pushed_bytes == 34 * 4
    assert dec(data) == EspTable(pushes + (Call(50, 0, ("EDI", "EBP"), ("EBP",)),))


def test_deep_stack_without_pointers_keeps_the_mask_forms():
    pushes = tuple(Push(1) for _ in range(40))
    assert enc(*pushes, Call(11, 0, ("ESI",))) == bytes([1] + [0] * 39 + [0x80, 0xFF])


# --------------------------------------------------------------------------- interior pointers and this


def test_iptr_mask_precedes_the_call_and_is_positional():
    data = enc(Push(1, True, True), Push(2, True), Call(12, 0, ("EDI", "ESI"), ("ESI",)))
    # argMask 0b11, iargMask 0b10 -> mask (0b10 << 4) | ESI(2) = 0x22
    assert data == bytes([0x01, 0x01, 0xF0, 0x22, 0xD3, 0x83, 0xFF])  # D0: DD=2 (delta 10), MMM=3
    assert texts(data)[-3:-1] == ["            iptrMask = 22", "000C        call 0 [ EDI ESI']"
                                  " argMask=03 (iargs=02)"]
    state = scan(data, 0, HDR, 12)
    assert state.pushed_args == (PushedArg("ESP", 0), PushedArg("ESP", 4, True)) and state.interior_regs == {"ESI"}


def test_seed_iptr_mask_reading_is_not_what_the_vm_does():
    """The seed (002, "Interior Pointer Mask") says the iptr mask is read bit by bit over the GC
    pointers the call mentions (EDI, ESI, EBP, 1st pushed, 2nd pushed, in that order). The VM
    reads it by position: bits 0-3 are EDI/ESI/EBX/EBP, bit 4+i is the argument at [ESP+4*i]."""
    data = bytes([0x01, 0x01, 0xF0, 0x13, 0xDB, 0x03, 0xFF])  # the seed's example: mask 10011, regs 1011
    state = scan(data, 0, HDR, 8)
    assert state.live_regs == {"EDI", "ESI", "EBP"} and state.interior_regs == {"EDI", "ESI"}
    # sequential reading would make EBP normal and the 2nd pushed pointer ([ESP+4]) interior;
    # positional reading makes [ESP+0] interior
    assert state.pushed_args == (PushedArg("ESP", 0, True), PushedArg("ESP", 4))
    assert dec(data).events[-1] == Call(8, 0, ("EDI", "ESI", "EBP"), ("EDI", "ESI"))


def test_seed_interior_pointer_limit_only_binds_the_mask_forms():
    """The seed (002, "Interior Pointer Mask") says an interior pointer beyond the 28th argument
    forces a fully interruptible or EBP-based method. With more than 32 DWORDs pending the JIT uses
    the fat form, whose offsets carry the interior bit, so deep interior pointers encode fine."""
    pushes = (Push(0, True, True),) + tuple(Push(0) for _ in range(39))
    data = enc(*pushes, Call(20, 0, ("ESI",)))
    assert data[40] == 0xF8
    assert scan(data, 0, HDR, 20).pushed_args == (PushedArg("ESP", 39 * 4, True),)
    assert dec(data) == EspTable(pushes + (Call(20, 0, ("ESI",)),))


def test_interior_pointer_past_the_28th_dword_cannot_be_masked():
    pushes = (Push(1, True, True),) + tuple(Push(1) for _ in range(29))
    with pytest.raises(GCInfoEncodeError, match="iptr mask"):
        enc(*pushes, Call(9, 0, ("ESI",)))


@pytest.mark.parametrize("index,reg", list(enumerate(CALLEE_SAVED)))
def test_this_register(index, reg):
    data = enc(Push(1), ThisReg(1, reg), Call(11, 1, ("ESI",)))
    assert data == bytes([0x01, 0xF4 + index, 0x90, 0xFF])  # row 16: argCnt 1, ESI, delta 10
    assert texts(data)[1] == f"            thisptr in {reg}"
    assert dec(data) == EspTable((Push(1), ThisReg(1, reg), Call(11, 1, ("ESI",))))
    assert scan(data, 0, HDR, 0).this_reg is None and scan(data, 0, HDR, 1).this_reg == reg


def test_this_takes_the_offset_of_the_entry_before_it():
    assert canonical(EspTable((Push(4), ThisReg(9, "EBX")))) == EspTable((Push(4), ThisReg(4, "EBX")))


# --------------------------------------------------------------------------- decoder-only codes


def test_push_count_0x20_is_read_but_never_written():
    data = bytes([0x05, 0x20, 0x03, 0x43, 0xD0, 0x20, 0xFF])  # 4 pushed, then a call popping 4
    assert texts(data) == ["0005        push", "0005       push 3", None, "000E        call 4 [ ]", None]
    assert dec(data) == EspTable(tuple(Push(5) for _ in range(4)) + (Call(14, 4),))
    assert scan(data, 0, HDR, 5).pushed_bytes == 16 and scan(data, 0, HDR, 14).pushed_bytes == 0


@pytest.mark.parametrize("code", [0x21, 0x2F, 0x30, 0x3F])
def test_reserved_push_codes(code):
    """The seed (002, EBP-less table) lists ``0011xxxx`` as reserved and ``00100000 [pushCount]``
    as the multi-push. The VM's release build reads every ``001xxxxx`` as a multi-push (its debug
    build asserts the byte is 0x20), so `scan` does too; `decode_table` and ``strict`` reject them."""
    data = bytes([0x05, code, 0x03, 0xFF])
    with pytest.raises(DecodeError, match="reserved") as e:
        dec(data)
    assert e.value.offset == 1
    with pytest.raises(DecodeError, match="reserved"):
        scan(data, 0, HDR, 9, strict=True)
    assert scan(data, 0, HDR, 9).pushed_bytes == 16  # the release VM reads it like 0x20


@pytest.mark.parametrize("code", [0xF1, 0xF2, 0xF3, 0xF9, 0xFA, 0xFB, 0xFC, 0xFD, 0xFE])
def test_reserved_special_codes(code):
    with pytest.raises(DecodeError, match="reserved"):
        dec(bytes([0x01, code, 0x00, 0xFF]))
    with pytest.raises(DecodeError, match="reserved"):
        scan(bytes([code, 0x01, 0xD1, 0x00, 0xFF]), 0, HDR, 6, strict=True)


def test_vm_reading_of_reserved_special_codes():
    # 0xF1-0xF3 act as the interior mask, 0xF9-0xFB as the fat call, 0xFC-0xFE end the table
    iptr = bytes([0x01, 0xF2, 0x10, 0xDC, 0x01, 0xFF])
    assert scan(iptr, 0, HDR, 7).pushed_args == (PushedArg("ESP", 0, True),)
    fat = bytes([0x01, 0xFA, 0x02]) + (5).to_bytes(4, "little") + bytes(4) + (1).to_bytes(4, "little") * 2 + b"\x00\xFF"
    state = scan(fat, 0, HDR, 6)
    assert state.live_regs == {"ESI"} and state.pushed_args == (PushedArg("ESP", 0),)
    assert scan(bytes([0x01, 0xFC, 0x01]), 0, HDR, 9).pushed_bytes == 4


# --------------------------------------------------------------------------- scan details


def test_scan_at_offsets_around_entries():
    data = enc(Push(3, True), Call(13, 0, ("ESI",)), Push(15), Pop(20), Call(40, 1, ("EDI",)))
    pushed = [scan(data, 0, HDR, q).pushed_bytes for q in (0, 2, 3, 12, 13, 14, 15, 19, 20)]
    assert pushed == [0, 0, 4, 4, 4, 4, 8, 8, 4]
    assert scan(data, 0, HDR, 13).live_regs == {"ESI"} and scan(data, 0, HDR, 12).live_regs == set()
    assert scan(data, 0, HDR, 40) == PtrTableState(frozenset({"EDI"}))
    assert scan(data, 0, HDR, 39).pushed_bytes == 4 and scan(data, 0, HDR, 41) == PtrTableState()


def test_regs_offs_is_accepted_and_ignored():
    data = enc(Call(10, 0, ("ESI",)))
    assert scan(data, 0, HDR, 10, regs_offs=9) == scan(data, 0, HDR, 10) != PtrTableState()


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize("events,message", [
    ((Pop(1),), "only 0 are pending"),
    ((Push(1), Call(9, 2)), "only 1 are pending"),
    ((Push(1), Kill(2, 1)), "only 0 are pending"),
    ((Push(5), Push(4)), "must not decrease"),
    ((Push(1, False, True),), "interior push must also be gc"),
    ((Call(9, 0, ("EAX",)),), "not a callee-saved register"),
    ((Call(9, 0, ("EDI",), ("ESI",)),), "subset of regs"),
    ((Call(9, 0, ["EDI"]),), "tuple of register names"),
    ((ThisReg(0, "ECX"),), "`this` can only be named"),
    ((Push(-1),), "offset must be an integer"),
    ((Pop(1, 0),), "count must be an integer in 1"),
    (("push",), "not an EBP-less pointer-table event"),
])
def test_encoder_rejects_bad_descriptions(events, message):
    with pytest.raises(GCInfoEncodeError, match=message):
        enc(*events)


def test_wrong_header_or_table_type():
    with pytest.raises(GCInfoEncodeError):
        encode_table(EspTable(), InfoHdr(ebp_frame=True))
    with pytest.raises(GCInfoEncodeError):
        encode_table((), HDR)
    for hdr in (InfoHdr(interruptible=True), InfoHdr(ebp_frame=True)):
        with pytest.raises(DecodeError):
            decode_table(b"\xFF", 0, hdr)
        with pytest.raises(DecodeError):
            scan(b"\xFF", 0, hdr, 0)
    for offset in (-1, 2):
        with pytest.raises(DecodeError, match="outside"):
            decode_table(b"\xFF", offset, HDR)
        with pytest.raises(DecodeError, match="outside"):
            scan(b"\xFF", offset, HDR, 0)


@pytest.mark.parametrize("data,offset,message", [
    (b"", 0, "no 0xFF"),
    (b"\x01\x02", 2, "no 0xFF"),
    (b"\x40", 1, "Unsigned"),
    (b"\xD1", 1, "no 0xFF"),
    (b"\x51\xFF", 0, "only 0 are pending"),
    (b"\xF0\x01\x05\xFF", 2, "must be followed by a call"),
    (b"\xF0\x01\xD0\x00\xFF", 0, "interior mask names"),
    (b"\x01\xD0\x02\xFF", 1, "beyond|only 1 DWORDs"),
    (b"\xE0\x05\x00\xFF", 0, "only 0 are pending"),
    (b"\xF8\x01\x00", 2, "DWORD"),
    (b"\x01\xF8\x01" + bytes(8) + dw(1) + dw(5) + b"\x00\xFF", 19, "do not fit"),
    (b"\x01\xF8\x01" + bytes(8) + dw(1) + dw(2) + b"\x00\x00\xFF", 20, "exactly"),
    (b"\x01\xF8\x01" + bytes(8) + dw(1) * 2 + b"\x02\xFF", 1, "bit 1"),
    (b"\x01\x01\xD1\x01\xD0\x02\xFF", 4, "an earlier call saw"),
    (b"\x40\x8F\xFF\xFF\xFF\x7F\x40\x01\xFF", 6, "passes 0xFFFFFFFF"),
])
def test_decoder_errors_name_the_bad_byte(data, offset, message):
    with pytest.raises(DecodeError, match=message) as e:
        dec(data)
    assert e.value.offset == offset


def test_scan_errors():
    with pytest.raises(DecodeError, match="no 0xFF"):
        scan(b"\x01\x02", 0, HDR, 100)
    with pytest.raises(DecodeError, match="only 0 are pending"):
        scan(b"\x61\xFF", 0, HDR, 5)
    assert scan(b"\x61\xFF", 0, HDR, 0) == PtrTableState()  # the bad pop is past the offset asked
