"""gcdump text of whole methods: header lines, the bytes column, tables, DumpPtrsInFrame."""

from __future__ import annotations

import importlib

import pytest

from gctoy.coreclr.gcdump import bytes_column, classify_offset, entry_lines, gcdump
from gctoy.coreclr.header import InfoHdr
from gctoy.coreclr.info_tables import Lifetime, NoGCRegion, UntrackedSlot
from gctoy.coreclr.method import MethodGCInfo, decode, encode
from gctoy.coreclr.entries import TableEntry
from gctoy.errors import DecodeError

# The legacy blob of test_coreclr_method.py: header bytes from the sample in SOS's `!gcinfo`
# documentation, tables reconstructed by gctoy to match it (see there).
SOS_SAMPLE = bytes.fromhex("36 D48CC7AA93F34005 14100C0844 F17972838B939B564A0E10E0F03138FF")

# gcdump text for the blob, read with the old rules (absolute untracked offsets, no argTabOffset),
# in the format of CoreCLR's gcdump (facts.md §12). Lines end with the spaces gcdump prints.
SOS_DUMP = """\
Method info block:
    method      size   = 0036
    prolog      size   = 19 \n\
    epilog      size   =  8 \n\
    epilog     count   =  1 \n\
    epilog      end    = yes  \n\
    callee-saved regs  = EDI ESI EBP \n\
    ebp frame          = yes  \n\
    fully interruptible= yes  \n\
    double align       = no  \n\
    arguments size     =  4 DWORDs
    stack frame size   =  1 DWORDs
    untracked count    =  5 \n\
    var ptr tab count  =  0 \n\
    epilog        at   002E
36 D4 8C C7 AA | \n\
93 F3 40 05    | \n\
Pointer table:
14             |             [EBP+14H] an untracked  local
10             |             [EBP+10H] an untracked  local
0C             |             [EBP+0CH] an untracked  local
08             |             [EBP+08H] an untracked  local
44             |             [EBP-04H] an untracked  local
F1 79          | 0011        reg EDI becoming live
72             | 0013        reg ESI becoming live
83             | 0016        push ptr  0
8B             | 0019        push ptr  1
93             | 001C        push ptr  2
9B             | 001F        push ptr  3
56             | 0025        reg EDX becoming live
4A             | 0027        reg ECX becoming live
0E             | 002D        reg ECX becoming dead
10             | 002D        reg EDX becoming dead
E0             | 002D        pop  4 ptrs
F0 31          | 0036        reg ESI becoming dead
38             | 0036        reg EDI becoming dead
FF             | \n\
"""


def test_sos_sample_dump():
    assert gcdump(SOS_SAMPLE, legacy=True) == SOS_DUMP


def test_sos_sample_modern_dump_differs_only_where_the_format_did():
    modern = gcdump(encode(decode(SOS_SAMPLE, legacy=True)))
    lines = modern.splitlines()
    assert "    argTabOffset = 5  " in lines
    assert "36 D4 8C C7 AA | " in lines and "93 F3 40 05 05 | " in lines
    assert "54             |             [EBP+14H] an untracked  local" in lines
    assert "0C             |             [EBP-04H] an untracked  local" in lines
    assert lines[-1] == "FF             | "


@pytest.mark.parametrize(("chunk", "text"), [
    (b"", "               | "),
    (b"\x01", "01             | "),
    (b"\x01\x02\x03\x04\x05", "01 02 03 04 05 | "),
    (b"\x01\x02\x03\x04\x05\x06", "01 02 03 04 ...| "),
    (bytes(range(12)), "00 01 02 03 ...| "),
])
def test_bytes_column(chunk, text):
    assert bytes_column(chunk) == text


def test_entries_without_text_carry_their_bytes():
    data = bytes([0xB8, 0x81, 0x00, 0x41, 0xF0, 0x79, 0xFF])
    entries = [TableEntry(0, 3, 128, "skip", None), TableEntry(3, 4, 129, "reg-live", "A"),
               TableEntry(4, 5, 137, "skip", None), TableEntry(5, 6, 138, "reg-live", "B"),
               TableEntry(6, 7, 138, "end", None)]
    assert entry_lines(entries, data, final=True) == [
        "B8 81 00 41    | A", "F0 79          | B", "FF             | "]


def test_header_lines_with_every_optional_field():
    hdr = InfoHdr(prolog_size=7, epilog_size=3, ebp_frame=True, ebp_saved=True, ebx_saved=True,
                  security=True, handlers=True, localloc=True, edit_n_continue=True, prof_callbacks=True,
                  varargs=True, gs_cookie_offset=12, sync_start_offset=0x10, sync_end_offset=0x20,
                  arg_count=3, frame_size=0x12, interruptible=True)
    info = MethodGCInfo.create(0x140, hdr, epilogs=(0x20, 0x130), no_gc_regions=(NoGCRegion(0x40, 6),),
                               lifetimes=(Lifetime(8, 0x30, 0x50),))
    text = gcdump(info, 4)
    data = encode(info, 4)
    lines = text.splitlines()
    at = lines.index("    var ptr tab count  =  1 ")
    assert lines[at + 1:at + 13] == [
        "    security check obj = yes",
        "    exception handlers = yes",
        "    localloc           = yes",
        "    edit & continue    = yes",
        "    profiler callbacks = yes",
        "    varargs            = yes",
        "    GuardStack cookie  = [EBP-12]",
        "    Sync region = [16,32] ([0x10,0x20])",
        "    no GC region count =  1 ",
        "    epilog # 0    at   0020",
        "    epilog # 1    at   0130",
        "    argTabOffset = 5  ",
    ]
    assert "    callee-saved regs  = EBX EBP " in lines
    assert "    arguments size     =  3 DWORDs" in lines and "    stack frame size   = 18 DWORDs" in lines
    header_end = len(data) - 6  # argTabOffset 5 covers the 5 table bytes; then FF
    assert lines[at + 13:at + 13 + (header_end + 4) // 5] == [
        bytes_column(data[i:min(i + 5, header_end)]) for i in range(0, header_end, 5)]
    assert "No GC regions and pointer table:" in lines and "Pointer table:" not in lines
    # The no-GC region is printed without bytes; the lifetime with its three.
    assert "[0040-0046) no GC region" in lines
    assert "08 30 20       | 0030..0050  [EBP-08H] a  pointer" in lines


def test_gs_cookie_of_esp_frames_and_no_headings():
    info = MethodGCInfo.create(0x20, InfoHdr(gs_cookie_offset=8))
    text = gcdump(info, headings=False)
    assert "    GuardStack cookie  = [ESP+8]" in text.splitlines()
    assert "Method info block:" not in text and "Pointer table:" not in text


def test_untracked_and_lifetime_lines_in_esp_frames():
    # 4|2 = 6 is stored as -6 (46); 0xC|1 = 0D, begin 2, length 4.
    info = MethodGCInfo.create(0x20, InfoHdr(frame_size=4), untracked=(UntrackedSlot(4, pinned=True),),
                               lifetimes=(Lifetime(0xC, 2, 6, interior=True),))
    lines = gcdump(info).splitlines()
    assert "46             |             [ESP+04H] an untracked pinned  local" in lines[-4:]
    assert "0D 02 04       | 0002..0006  [ESP+0CH] a byref  pointer" in lines[-4:]


def test_partially_interruptible_tables_are_printed_by_their_modules():
    ebp = importlib.import_module("gctoy.coreclr.ptrtab_ebp")
    table = ebp.EbpTable(None, (ebp.CallSite(0x10, ("EDI",)), ebp.CallSite(0x400, ("ESI",), (), 0x3, 0)))
    info = MethodGCInfo.create(0x500, InfoHdr(ebp_frame=True, ebp_saved=True), pointer_table=table)
    lines = gcdump(info).splitlines()
    ptr = lines[lines.index("Pointer table:") + 1:]
    assert ptr == [
        "90 20          | 0010        call [ EDI ] argMask=00",  # small form: delta 0x10, EDI
        "FE 02 F0 03 ...| 0400        call [ ESI ] argMask=03",  # large form: 10 bytes, 4 shown
        "FF             | ",
    ]


def test_malformed_blob_raises_decode_error():
    with pytest.raises(DecodeError):
        gcdump(SOS_SAMPLE)  # a legacy blob read the modern way


# ----------------------------------------------------------------------------- DumpPtrsInFrame


@pytest.mark.parametrize(("offset", "where"), [
    (0, "prolog"), (0x12, "prolog"), (0x13, "body"), (0x2D, "body"),
    (0x2E, "epilog (00 bytes into it)"), (0x35, "epilog (07 bytes into it)"), (0x36, "body"),
])
def test_classify_offset_sos_sample(offset, where):
    """gcdump counts an epilog's first byte as epilog (the runtime does not)."""
    assert classify_offset(SOS_SAMPLE, offset, legacy=True) == f"    Offset {offset:04X} is within the method's {where}"


def test_classify_offset_reads_epilog_deltas_as_gcdump_does():
    """gcdump's DumpPtrsInFrame never adds the UDeltas up: epilogs at 4 and 14 are looked for at 4 and 10."""
    info = MethodGCInfo.create(0x20, InfoHdr(epilog_size=2), epilogs=(4, 14))
    assert classify_offset(info, 10) == "    Offset 000A is within the method's epilog (00 bytes into it)"
    assert classify_offset(info, 14) == "    Offset 000E is within the method's body"
    assert classify_offset(info, 14, accumulate=True) == \
        "    Offset 000E is within the method's epilog (00 bytes into it)"
    assert classify_offset(encode(info), 5) == "    Offset 0005 is within the method's epilog (01 bytes into it)"
