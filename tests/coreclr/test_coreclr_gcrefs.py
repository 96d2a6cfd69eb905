"""The runtime's EnumGcRefs over x86 GC info: what a frame reports at a code offset."""

from __future__ import annotations

import importlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gctoy.coreclr.gcrefs import (
    GCRef,
    code_region,
    gc_refs_at,
    initial_esp,
    localloc_sp_offset,
    pushed_arg_size,
    return_address_slot,
    stack_size,
)
from gctoy.coreclr.header import InfoHdr
from gctoy.coreclr.info_tables import Lifetime, UntrackedSlot
from gctoy.coreclr.method import MethodGCInfo, decode, encode
from gctoy.errors import GCToyError

full = importlib.import_module("gctoy.coreclr.ptrtab_full")
ebp_tab = importlib.import_module("gctoy.coreclr.ptrtab_ebp")
esp_tab = importlib.import_module("gctoy.coreclr.ptrtab_esp")

SOS_SAMPLE = bytes.fromhex("36 D48CC7AA93F34005 14100C0844 F17972838B939B564A0E10E0F03138FF")
EBP = 0x8000


def _where(refs: list[GCRef]) -> list[str]:
    return [r.location for r in refs]


# ----------------------------------------------------------------------------- the SOS sample


def test_sos_sample_active_frame_inside_the_call_sequence():
    refs = gc_refs_at(SOS_SAMPLE, 0x27, active_frame=True, legacy=True, ebp=EBP)
    assert _where(refs) == ["ECX", "EDX", "ESI", "EDI",
                            "[EBP-10H]", "[EBP-14H]", "[EBP-18H]", "[EBP-1CH]",  # stackSize 16: first arg
                            "[EBP+14H]", "[EBP+10H]", "[EBP+0CH]", "[EBP+08H]", "[EBP-04H]"]
    assert [r.kind for r in refs[3:5]] == ["register", "pushed-arg"]
    assert refs[4].address == EBP - 0x10 and refs[-1].address == EBP - 4


def test_sos_sample_caller_frame_uses_offset_minus_one_and_no_scratch_registers():
    # ECX becomes live at 0x27: a caller frame at 0x27 looks at 0x26, and EDX is scratch.
    refs = gc_refs_at(SOS_SAMPLE, 0x27, active_frame=False, legacy=True, ebp=EBP)
    assert _where(refs)[:2] == ["ESI", "EDI"]
    assert sum(r.kind == "pushed-arg" for r in refs) == 4


@pytest.mark.parametrize(("offset", "region"), [
    (0, ("prolog", 0)), (0x12, ("prolog", 0x12)), (0x13, ("body", 0)),
    (0x2E, ("body", 0)),  # an epilog's first byte is body for the runtime
    (0x2F, ("epilog", 1)), (0x35, ("epilog", 7)),
])
def test_prolog_and_epilog_report_nothing(offset, region):
    info = decode(SOS_SAMPLE, legacy=True)
    assert code_region(info, offset) == region
    refs = gc_refs_at(SOS_SAMPLE, offset, active_frame=True, legacy=True)
    assert (refs == []) is (region[0] != "body")


def test_addresses_need_the_frame_registers():
    refs = gc_refs_at(SOS_SAMPLE, 0x16, active_frame=True, legacy=True)
    assert all(r.address is None for r in refs)
    memory = {EBP - 0x10: 0x1234, EBP + 0x14: 0x5678}
    refs = gc_refs_at(SOS_SAMPLE, 0x16, active_frame=True, legacy=True, regs={"EBP": EBP, "ESI": 0x99},
                      read_dword=lambda a: memory.get(a, 0))
    assert refs[0] == GCRef("register", "ESI", None, False, False, 0x99)
    assert refs[2].value == 0x1234 and refs[3].value == 0x5678


# ----------------------------------------------------------------------------- lifetimes


def _ebp_method(lifetimes=(), untracked=(), table=None, **hdr) -> MethodGCInfo:
    header = InfoHdr(prolog_size=3, ebp_frame=True, ebp_saved=True, **hdr)
    return MethodGCInfo.create(0x60, header, lifetimes=lifetimes, untracked=untracked, pointer_table=table)


def test_lifetime_query_offset_rule():
    """A leaf frame asks at offset, a caller at offset - 1 ("inside the call")."""
    info = _ebp_method(lifetimes=(Lifetime(8, 0x10, 0x20),), table=ebp_tab.EbpTable())
    live = {o: bool(gc_refs_at(info, o, active_frame=True)) for o in (0x0F, 0x10, 0x1F, 0x20)}
    assert live == {0x0F: False, 0x10: True, 0x1F: True, 0x20: False}
    live = {o: bool(gc_refs_at(info, o, active_frame=False)) for o in (0x10, 0x11, 0x20, 0x21)}
    assert live == {0x10: False, 0x11: True, 0x20: True, 0x21: False}
    # An aborted frame asks at the offset itself (modern runtime).
    assert gc_refs_at(info, 0x20, active_frame=False, execution_aborted=True) == []


def test_lifetime_flags_modern_and_classic():
    info = _ebp_method(lifetimes=(Lifetime(0xC, 4, 8, interior=True, pinned=True),), table=ebp_tab.EbpTable())
    (ref,) = gc_refs_at(info, 5, active_frame=True, ebp=EBP)
    assert (ref.location, ref.address, ref.interior, ref.pinned) == ("[EBP-0CH]", EBP - 12, True, True)
    data = encode(info, legacy=True)
    (ref,) = gc_refs_at(data, 5, active_frame=True, legacy=True)
    assert ref.interior and not ref.pinned  # the classic runtime passes only the byref bit


@st.composite
def lifetime_cases(draw):
    lives, begin = [], 0
    for _ in range(draw(st.integers(0, 6))):
        begin += draw(st.integers(0, 20))
        lives.append(Lifetime(4 * draw(st.integers(1, 30)), begin, begin + draw(st.integers(0, 25))))
    return tuple(lives), draw(st.integers(3, 0x5F)), draw(st.booleans())


@settings(max_examples=150, deadline=None)
@given(lifetime_cases())
def test_lifetimes_match_their_ranges(case):
    lives, offset, active = case
    info = _ebp_method(lifetimes=lives, table=ebp_tab.EbpTable())
    query = offset if active else offset - 1
    expected = [f"[EBP-{life.offset:02X}H]" for life in lives if life.begin <= query < life.end]
    assert _where(gc_refs_at(info, offset, active_frame=active)) == expected


# ----------------------------------------------------------------------------- untracked slots


def test_untracked_slots_are_reported_everywhere_in_the_body():
    info = _ebp_method(untracked=(UntrackedSlot(-8, pinned=True), UntrackedSlot(12, interior=True)),
                       table=ebp_tab.EbpTable())
    refs = gc_refs_at(info, 0x40, active_frame=False, ebp=EBP)
    assert [(r.location, r.address, r.interior, r.pinned) for r in refs] == [
        ("[EBP-08H]", EBP - 8, False, True), ("[EBP+0CH]", EBP + 12, True, False)]


def test_double_align_remaps_incoming_args_to_ebp():
    """Double-aligned frames list stack args as if ESP-based, one DWORD smaller (seed: impossible)."""
    hdr = InfoHdr(prolog_size=2, double_align=True, ebp_saved=True, edi_saved=True, frame_size=2)
    assert stack_size(hdr) == 16
    info = MethodGCInfo.create(0x40, hdr, untracked=(UntrackedSlot(4), UntrackedSlot(12 + 8)))
    esp = 0x7000
    refs = gc_refs_at(info, 0x10, active_frame=True, esp=esp, ebp=EBP)
    assert [(r.location, r.address) for r in refs] == [("[ESP+04H]", esp + 4), ("[EBP+08H]", EBP + 8)]


# ----------------------------------------------------------------------------- EBP-less frames


def _esp_method() -> MethodGCInfo:
    table = esp_tab.EspTable((esp_tab.Push(0x10, gc=True), esp_tab.Push(0x11),
                              esp_tab.Call(0x20, 0, ("EBX",)), esp_tab.Pop(0x22, 2)))
    hdr = InfoHdr(prolog_size=4, ebx_saved=True, frame_size=3)
    return MethodGCInfo.create(0x40, hdr, untracked=(UntrackedSlot(4),), lifetimes=(Lifetime(8, 0x10, 0x30),),
                               pointer_table=table)


def test_esp_frame_call_site_with_pending_args():
    info = _esp_method()
    esp = 0x6000
    refs = gc_refs_at(info, 0x20, active_frame=False, esp=esp)
    # Pending: [ESP+0] non-pointer (pushed last), [ESP+4] pointer; argBase = ESP + 8.
    assert [(r.kind, r.location, r.address) for r in refs] == [
        ("register", "EBX", None),
        ("pushed-arg", "[ESP+04H]", esp + 4),
        ("untracked", "[ESP+0CH]", esp + 12),
        ("lifetime", "[ESP+10H]", esp + 16),
    ]
    assert pushed_arg_size(info, 0x20) == 8
    assert initial_esp(info, 0x20, esp=esp) == esp + 8
    assert return_address_slot(info, 0x20, esp=esp) == esp + 8 + stack_size(info.header)
    assert stack_size(info.header) == 16


def test_esp_frame_boring_call_site_reports_only_frame_slots():
    refs = gc_refs_at(_esp_method(), 0x30, active_frame=False, esp=0x6000)
    assert [r.kind for r in refs] == ["untracked", "lifetime"]
    assert refs[0].address == 0x6000 + 4  # nothing pushed after the pop at 0x22


def test_frame_helpers_need_registers():
    with pytest.raises(GCToyError, match="needs esp"):
        initial_esp(_esp_method(), 0x20)
    with pytest.raises(GCToyError, match="needs ebp"):
        return_address_slot(SOS_SAMPLE, 0x20, legacy=True)
    assert return_address_slot(SOS_SAMPLE, 0x20, legacy=True, ebp=EBP) == EBP + 4
    assert initial_esp(SOS_SAMPLE, 0x20, legacy=True, ebp=EBP) == EBP - 12


# ----------------------------------------------------------------------------- partially interruptible EBP


def test_ebp_frame_call_site_args_are_esp_relative():
    table = ebp_tab.EbpTable("ESI", (ebp_tab.CallSite(0x18, ("ESI", "EDI"), ("EDI",), 0b101, 0b100),))
    info = _ebp_method(table=table)
    esp = 0x5000
    refs = gc_refs_at(info, 0x18, active_frame=False, esp=esp, ebp=EBP)
    assert [(r.location, r.address, r.interior) for r in refs] == [  # call-site registers: EDI, ESI, EBX, EBP
        ("EDI", None, True), ("ESI", None, False), ("[ESP+00H]", esp, False), ("[ESP+08H]", esp + 8, True)]
    assert gc_refs_at(info, 0x19, active_frame=False) == []  # not a call site: a boring offset
    aborted = gc_refs_at(info, 0x18, active_frame=False, execution_aborted=True)
    assert _where(aborted) == ["ESI"]  # only `this`


# ----------------------------------------------------------------------------- fully interruptible


def test_full_esp_frame_pending_args_and_this_when_aborted():
    table = full.FullTable((full.RegLive(5, "EAX", False, True), full.RegLive(6, "EBX", True, False),
                            full.PushNonPtr(7, 1), full.PushPtr(8, 1, False, False), full.Pop(0x10, 2)))
    info = MethodGCInfo.create(0x20, InfoHdr(prolog_size=2, interruptible=True), pointer_table=table)
    esp = 0x4000
    refs = gc_refs_at(info, 8, active_frame=True, esp=esp)
    # Two DWORDs pushed: slot 1 (the pointer) is the last pushed, at first - 4 = ESP + 8 - 4 - 4.
    assert [(r.location, r.address, r.interior) for r in refs] == [
        ("EAX", None, False), ("EBX", None, True), ("[ESP+00H]", esp, False)]
    assert pushed_arg_size(info, 8) == 8 and pushed_arg_size(info, 0x10) == 0
    assert _where(gc_refs_at(info, 9, active_frame=False)) == ["EBX", "[ESP+00H]"]  # EAX is scratch
    assert _where(gc_refs_at(info, 9, active_frame=True, execution_aborted=True)) == ["EAX"]


def test_full_ebp_localloc_args_hang_off_the_saved_esp():
    table = full.FullTable((full.PushPtr(8, 0, False, False),))
    hdr = InfoHdr(prolog_size=2, interruptible=True, ebp_frame=True, ebp_saved=True, esi_saved=True,
                  localloc=True)
    info = MethodGCInfo.create(0x20, hdr, pointer_table=table)
    assert localloc_sp_offset(hdr) == 8
    saved = 0x3000
    refs = gc_refs_at(info, 9, active_frame=True, ebp=EBP, read_dword=lambda a: saved if a == EBP - 8 else 0)
    assert [(r.location, r.address) for r in refs] == [("[SP0-04H]", saved - 4)]


@pytest.mark.parametrize("offset", [-1, 1.5, True])
def test_code_offset_must_be_a_natural_number(offset):
    with pytest.raises(GCToyError, match="code_offset must be a non-negative integer"):
        gc_refs_at(SOS_SAMPLE, offset, active_frame=True, legacy=True)
