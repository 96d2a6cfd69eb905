"""The GC-info byte explorer: rows in byte order, gaps shown, highlights, HTML tooltips."""

from __future__ import annotations

from gctoy.coreclr.entries import TableEntry
from gctoy.coreclr.header_explain import explain_header
from gctoy.viz.gcinfo import UNEXPLAINED, Region, byte_rows, explorer_html, explorer_text

SOS_HEADER = bytes.fromhex("D48CC7AA93F34005")


def _regions(data):
    _, entries, _ = explain_header(data, 5, 1)
    return [Region("method size", (TableEntry(0, 1, None, "size", "methodSize = 54"),)),
            Region("header", tuple(entries))]


def test_rows_cover_every_byte_in_order():
    data = b"\x36" + SOS_HEADER + b"\xAB\xCD"
    rows = byte_rows(data, _regions(data))
    assert rows[0].region == "method size" and rows[1].region == "header"
    assert all(a.end == b.start for a, b in zip(rows, rows[1:]))
    assert rows[-1].end == len(data)
    assert rows[-1].region == UNEXPLAINED and rows[-1].start == 1 + len(SOS_HEADER)


def test_text_marks_highlighted_rows_and_shows_bytes():
    data = b"\x36" + SOS_HEADER
    text = explorer_text(data, _regions(data), highlight=frozenset({6}))
    lines = text.splitlines()
    marked = [line for line in lines if line.startswith(">")]
    assert len(marked) == 1 and "F3" in marked[0] and "NEXT_THREE_PROLOGSIZE" in marked[0]
    assert any("D4" in line and "shortcut row 0x54" in line for line in lines)


def test_html_escapes_and_tooltips():
    data = b"\x01\x02"
    regions = [Region("pointer table", (TableEntry(0, 1, 3, "call", "call [ EDI ] <a>"),))]
    page = explorer_html(data, regions, highlight=frozenset({0}))
    assert "&lt;a&gt;" in page and "<a>" not in page
    assert 'title="call [ EDI ] &lt;a&gt;"' in page
    assert "outline" in page and UNEXPLAINED in page and "0003" in page


def _method_blob():
    from gctoy.coreclr import InfoHdr, Lifetime, MethodGCInfo, UntrackedSlot, encode
    from gctoy.coreclr.ptrtab_ebp import CallSite, EbpTable

    hdr = InfoHdr(prolog_size=6, epilog_size=4, ebp_frame=True, ebp_saved=True, esi_saved=True, frame_size=3)
    return encode(MethodGCInfo.create(
        0x30, hdr, epilogs=(0x2C,), untracked=(UntrackedSlot(-8),), lifetimes=(Lifetime(12, 0x0A, 0x14),),
        pointer_table=EbpTable(calls=(CallSite(0x14, regs=("ESI",)),))))


def test_offset_pages_follow_the_runtime():
    from gctoy.coreclr.method import decode_with_entries
    from gctoy.viz.gcinfo import offset_page_html, offset_pages

    blob = _method_blob()
    pages = offset_pages(blob)
    assert len(pages) == 0x31 and [p.offset for p in pages] == list(range(0x31))
    assert pages[2].where == "prolog" and pages[2].refs == () and pages[2].highlight == frozenset()
    assert pages[0x10].refs == ("[EBP-08H]", "[EBP-0CH]")
    # at the call's return address: the lifetime has ended for the leaf, not for a caller
    assert pages[0x14].refs == ("ESI", "[EBP-08H]")
    assert pages[0x14].caller_refs == ("ESI", "[EBP-08H]", "[EBP-0CH]")
    regions = {r.name: r for r in decode_with_entries(blob).regions}
    call = regions["pointer table"].entries[0]
    assert call.start in pages[0x14].highlight and call.start not in pages[0x13].highlight
    life = regions["lifetimes"].entries[0]
    assert life.start in pages[0x0A].highlight and life.start not in pages[0x14].highlight
    page = offset_page_html(blob, pages[0x14], regions.values())
    assert "code offset 0014" in page and "[EBP-0CH]" in page



def test_cells_have_room_and_rows_their_own_text_colour():
    """Values must not run together (padding on every cell), and a dark theme's light text must not land
    on a row's light colour (each row sets its own dark text)."""
    import re

    data = _method_blob()
    from gctoy.coreclr.method import decode_with_entries

    page = explorer_html(data, list(decode_with_entries(data).regions))
    assert 'class="gctoy-gcinfo"' in page
    assert re.search(r"table\.gctoy-gcinfo td,table\.gctoy-gcinfo th\{padding:2px 10px", page)
    rows = re.findall(r"<tr style=\"([^\"]*)\"", page)
    assert rows and all("background:" in r and "color:#1a1a1a" in r for r in rows)
