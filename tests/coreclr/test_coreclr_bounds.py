"""What the encoder accepts, the decoder reads back: epilogs and pointer-table entries inside the
method, and the registers a call site reports."""

from __future__ import annotations

import importlib

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gctoy.coreclr.codecs import GCInfoEncodeError
from gctoy.coreclr.spec import info_from_spec
from gctoy.coreclr.gcrefs import gc_refs_at
from gctoy.coreclr.header import InfoHdr
from gctoy.coreclr.method import MethodGCInfo, decode, encode
from gctoy.errors import DecodeError, GCToyError

full = importlib.import_module("gctoy.coreclr.ptrtab_full")
ebp_tab = importlib.import_module("gctoy.coreclr.ptrtab_ebp")
esp_tab = importlib.import_module("gctoy.coreclr.ptrtab_esp")


# ----------------------------------------------------------------------------- epilogs


def test_epilog_larger_than_the_method_is_refused_by_the_encoder():
    # 20-byte method, one 40-byte epilog "at the end" (starting at -20): the decoder refuses
    # the bytes such a description would give (14 81 A7 78 FF), so the encoder must too.
    with pytest.raises(GCToyError, match="epilog #0 at -0x14 \\(40 bytes\\) does not lie within"):
        info_from_spec({"method_size": 20, "header": {"epilog_size": 40}, "epilogs": [-20]})
    with pytest.raises(DecodeError, match="larger than the method"):
        decode(bytes.fromhex("14 81 A7 78 FF"))


@pytest.mark.parametrize("epilogs", [[0x3C], [0x10, 0x3D], [-1, 0x10]])
def test_epilogs_must_lie_within_the_method(epilogs):
    with pytest.raises(GCInfoEncodeError, match="does not lie within the method"):
        MethodGCInfo.create(0x40, InfoHdr(epilog_size=5), epilogs=epilogs)


def test_epilog_table_past_the_method_is_a_decode_error():
    good = encode(MethodGCInfo.create(0x40, InfoHdr(epilog_size=5), epilogs=[0x10, 0x20]))
    decode(good)
    bad = bytes([0x18]) + good[1:]  # the method shrinks to 24 bytes: the epilog at 0x20 lies past it
    with pytest.raises(DecodeError, match="epilog #1 at 0x20"):
        decode(bad)


# ----------------------------------------------------------------------------- pointer-table offsets


ECX_PAST_END = {"method_size": 16, "header": {"interruptible": True},
                "pointer_table": {"events": [{"type": "RegLive", "offset": 0x90, "reg": "ECX"}]}}


def test_full_table_entry_past_the_end_is_refused_by_encode_with_its_byte_offset():
    info = info_from_spec(ECX_PAST_END)
    with pytest.raises(GCInfoEncodeError, match=r"byte offset 0x5\): pointer-table entry at code offset 0x90 "
                                                r"lies past the method's end \(0x10 bytes\)"):
        encode(info)


def test_full_table_entry_past_the_end_is_refused_by_decode_with_its_byte_offset():
    # The bytes an unchecked encoder gave for ECX_PAST_END: 'gcinfo-x86 dump --at 0x90' answered
    # "body" and a live ECX.
    with pytest.raises(DecodeError) as caught:
        decode(bytes.fromhex("10 80 AD A2 40 B8 81 10 48 FF"))
    assert caught.value.offset == 5 and "code offset 0x90 lies past the method's end" in str(caught.value)


@pytest.mark.parametrize(("header", "table"), [
    (InfoHdr(ebp_frame=True, ebp_saved=True), ebp_tab.EbpTable(None, (ebp_tab.CallSite(0x50, ("EDI",), (), 0, 0),))),
    (InfoHdr(), esp_tab.EspTable((esp_tab.Call(0x50, 0, ("ESI",)),))),
    (InfoHdr(interruptible=True), full.FullTable((full.RegLive(0x41, "EBX", False, False),))),
])
def test_every_encoding_refuses_entries_past_the_end_and_accepts_the_end_itself(header, table):
    with pytest.raises(GCInfoEncodeError, match="past the method's end"):
        encode(MethodGCInfo.create(0x40, header, pointer_table=table))
    at_end = MethodGCInfo.create(0x50 if header.interruptible is False else 0x41, header, pointer_table=table)
    assert decode(encode(at_end)) == at_end  # an entry at the method's last offset is fine


# ----------------------------------------------------------------------------- encode/decode law


@st.composite
def descriptions(draw):
    """Arbitrary JSON method descriptions, most of them invalid in some way."""
    kind = draw(st.sampled_from(["full", "ebp", "esp"]))
    header = {"interruptible": kind == "full", "ebp_frame": kind == "ebp", "ebp_saved": kind == "ebp"}
    for name, top in (("prolog_size", 300), ("epilog_size", 300), ("arg_count", 70000), ("frame_size", 70000)):
        if draw(st.booleans()):
            header[name] = draw(st.integers(-2, top))
    if draw(st.booleans()):
        header["epilog_at_end"] = draw(st.booleans())
    size = draw(st.one_of(st.integers(0, 0x120), st.integers(0, 0x20), st.integers(-2, 2**32)))
    offsets = st.integers(-3, 0x140)
    spec = {"method_size": size, "header": header,
            "epilogs": draw(st.lists(offsets, max_size=5)),
            "untracked": [{"offset": 4 * draw(st.integers(-40, 40))} for _ in range(draw(st.integers(0, 5)))],
            "lifetimes": [{"offset": 4 * draw(st.integers(0, 40)), "begin": b, "end": b + draw(st.integers(-2, 60))}
                          for b in sorted(draw(st.lists(offsets, max_size=4)))]}
    if draw(st.booleans()):  # one epilog that ends the method exactly, however large it is
        spec["epilogs"] = [size - header.get("epilog_size", 0)]
    if kind == "full":
        events = []
        for at in sorted(draw(st.lists(offsets, max_size=6))):
            events.append(draw(st.sampled_from([
                {"type": "RegLive", "offset": at, "reg": draw(st.sampled_from(["EAX", "ECX", "EBX", "EDI"]))},
                {"type": "RegDead", "offset": at, "reg": draw(st.sampled_from(["EAX", "EBX"]))},
                {"type": "PushPtr", "offset": at, "slot": draw(st.integers(0, 3))},
                {"type": "Pop", "offset": at, "count": draw(st.integers(1, 3))}])))
        spec["pointer_table"] = {"events": events}
    elif kind == "ebp":
        spec["pointer_table"] = {"this": None, "calls": [
            {"offset": at, "regs": draw(st.lists(st.sampled_from(["EDI", "ESI", "EBX"]), unique=True)),
             "byref": [], "arg_mask": draw(st.integers(0, 7)), "iarg_mask": 0}
            for at in sorted(draw(st.lists(offsets, max_size=4)))]}
    else:
        events = []
        for at in sorted(draw(st.lists(offsets, max_size=6))):
            events.append(draw(st.sampled_from([
                {"type": "Push", "offset": at, "gc": draw(st.booleans())},
                {"type": "Pop", "offset": at, "count": draw(st.integers(1, 2))},
                {"type": "Call", "offset": at, "arg_count": draw(st.integers(0, 2)),
                 "regs": draw(st.lists(st.sampled_from(["EDI", "ESI", "EBX", "EBP"]), unique=True))}])))
        spec["pointer_table"] = {"events": events}
    return spec


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(descriptions())
def test_every_accepted_description_round_trips(spec):
    """encode raises a GCToyError or decode(encode(m)) == m."""
    try:
        info = info_from_spec(spec)
        data = encode(info)
    except GCToyError:
        return
    assert decode(data) == info


def test_the_description_strategy_reaches_both_outcomes():
    """The property above is not vacuous: some descriptions encode, some are refused."""
    outcomes = set()

    @settings(max_examples=200, deadline=None, database=None)
    @given(descriptions())
    def probe(spec):
        try:
            encode(info_from_spec(spec))
            outcomes.add("accepted")
        except GCToyError:
            outcomes.add("refused")

    probe()
    assert outcomes == {"accepted", "refused"}


# ----------------------------------------------------------------------------- call-site registers


def test_partially_interruptible_frames_report_callee_saved_registers_edi_esi_ebx_ebp():
    # Seed 002: a call site's RegMask bits name callee-saved registers (p=EBP, b=EBX, s=ESI,
    # d=EDI); the runtime reports them EDI, ESI, EBX, EBP (facts §9, "Not interruptible").
    esp_table = esp_tab.EspTable((esp_tab.Call(0x20, 0, ("EBX", "EBP", "ESI", "EDI")),))
    info = MethodGCInfo.create(0x40, InfoHdr(prolog_size=4), pointer_table=esp_table)
    refs = gc_refs_at(info, 0x20, active_frame=False, esp=0x6000)
    assert [r.location for r in refs if r.kind == "register"] == ["EDI", "ESI", "EBX", "EBP"]
    ebp_table = ebp_tab.EbpTable(None, (ebp_tab.CallSite(0x20, ("EBX", "ESI", "EDI"), (), 0, 0),))
    info = MethodGCInfo.create(0x40, InfoHdr(prolog_size=4, ebp_frame=True, ebp_saved=True), pointer_table=ebp_table)
    refs = gc_refs_at(info, 0x20, active_frame=True, ebp=0x8000)
    assert [r.location for r in refs if r.kind == "register"] == ["EDI", "ESI", "EBX"]


def test_fully_interruptible_frames_keep_the_runtime_order_and_scratch_rule():
    table = full.FullTable((full.RegLive(5, "EDI", False, False), full.RegLive(6, "EAX", False, False),
                            full.RegLive(7, "EBX", False, False)))
    info = MethodGCInfo.create(0x40, InfoHdr(interruptible=True, prolog_size=2), pointer_table=table)
    assert [r.location for r in gc_refs_at(info, 0x10, active_frame=True)] == ["EAX", "EBX", "EDI"]
    assert [r.location for r in gc_refs_at(info, 0x10, active_frame=False)] == ["EBX", "EDI"]
