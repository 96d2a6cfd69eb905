"""A byte explorer for x86 GC info: every byte of a blob next to the meaning its decoder gave it.

The input is the blob and its regions, each a list of `TableEntry` produced by a decoder (header
explanation, info tables, pointer table). The output is a table, as text (for tests and plain
output) or HTML (for the book), with one row per entry::

    offset  bytes        region         code   meaning
    0x0000  36           method size           methodSize = 54
    0x0001  D4           header                shortcut row 0x54 (...)
    ...
    0x0012  F1 79        pointer table  0011   reg EDI becoming live

Rows can be highlighted (the entries a query at some code offset has applied), and bytes no
decoder explained show up as their own rows, so a gap in a decoder cannot hide.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from ..coreclr.entries import EntryKind, TableEntry

if TYPE_CHECKING:
    from ..coreclr.gcrefs import CodeRegion

#: Background colour of each region name (others get grey).
REGION_COLOURS = {
    "method size": "#eceff1",
    "header": "#e3f2fd",
    "epilogs": "#fff3e0",
    "argTabOffset": "#f3e5f5",
    "no-GC regions": "#fce4ec",
    "untracked": "#e8f5e9",
    "lifetimes": "#fffde7",
    "pointer table": "#ede7f6",
}
UNEXPLAINED = "(not explained)"


@dataclass(frozen=True)
class Region:
    """A named part of a blob and the entries its decoder read (anything with ``name`` and
    ``entries`` will do, e.g. the regions of `gctoy.coreclr.method.decode_with_entries`)."""

    name: str
    entries: tuple[TableEntry, ...]


@dataclass(frozen=True)
class ByteRow:
    """One row of the explorer: an entry's bytes and meaning, or a run of unexplained bytes."""

    start: int
    end: int
    region: str
    code_offset: int | None
    kind: EntryKind | Literal["gap"]  # "gap": bytes no entry explains
    text: str


def byte_rows(data: bytes, regions: list[Region]) -> list[ByteRow]:
    """Rows for every entry of every region, in byte order, with gaps shown as unexplained rows."""
    rows = [ByteRow(e.start, e.end, r.name, e.code_offset, e.kind, e.text or "") for r in regions for e in r.entries]
    rows.sort(key=lambda row: (row.start, row.end))
    out: list[ByteRow] = []
    pos = 0
    for row in rows:
        if row.start > pos:
            out.append(ByteRow(pos, row.start, UNEXPLAINED, None, "gap", ""))
        out.append(row)
        pos = max(pos, row.end)
    if pos < len(data):
        out.append(ByteRow(pos, len(data), UNEXPLAINED, None, "gap", ""))
    return out


def _hex(data: bytes, row: ByteRow) -> str:
    return " ".join(f"{b:02X}" for b in data[row.start : row.end])


def explorer_text(
    data: bytes, regions: list[Region], *, highlight: frozenset[int] = frozenset(), max_bytes: int = 8
) -> str:
    """The explorer as plain text; rows whose start is in ``highlight`` are marked with ``>``."""
    lines = [f"  {'offset':<7} {'bytes':<{3 * max_bytes}} {'region':<17} {'code':<5} meaning"]
    for row in byte_rows(data, regions):
        shown = _hex(data, row)
        if len(shown) > 3 * max_bytes - 1:
            shown = shown[: 3 * max_bytes - 5] + " ..."
        code = f"{row.code_offset:04X}" if row.code_offset is not None else ""
        mark = ">" if row.start in highlight else " "
        lines.append(f"{mark} {row.start:#06x}  {shown:<{3 * max_bytes}} {row.region:<17} {code:<5} {row.text}")
    return "\n".join(lines)


def explorer_html(
    data: bytes,
    regions: list[Region],
    *,
    highlight: frozenset[int] = frozenset(),
    caption: str | None = None,
    footer: str | None = None,
) -> str:
    """The explorer as an HTML table; each byte carries its meaning as a tooltip."""
    cells = []
    for row in byte_rows(data, regions):
        colour = REGION_COLOURS.get(row.region, "#f5f5f5")
        weight = "font-weight:bold;outline:2px solid #b26a00;" if row.start in highlight else ""
        title = html.escape(row.text or row.region, quote=True)
        byte_spans = " ".join(f'<span title="{title}">{b:02X}</span>' for b in data[row.start : row.end])
        code = f"{row.code_offset:04X}" if row.code_offset is not None else ""
        # the row's own dark text on its light colour, so that a dark theme's light text cannot vanish on it
        cells.append(
            f'<tr style="background:{colour};color:#1a1a1a;{weight}"><td>{row.start:#06x}</td>'
            f'<td class="b">{byte_spans}</td><td>{html.escape(row.region)}</td>'
            f"<td>{code}</td><td>{html.escape(row.text)}</td></tr>"
        )
    head = f"<div style='margin-bottom:4px'>{caption}</div>" if caption else ""
    foot = f"<div style='margin-top:4px'>{footer}</div>" if footer else ""
    header = "".join(f"<th>{name}</th>" for name in ("offset", "bytes", "region", "code", "meaning"))
    return head + _TABLE_STYLE + f'<table class="gctoy-gcinfo"><tr>{header}</tr>' + "".join(cells) + "</table>" + foot


#: the explorer's table: room between the columns, so values never run together (a class selector of
#: our own outranks JupyterLab's and the book theme's table styles); each row sets its own text colour
_TABLE_STYLE = (
    "<style>table.gctoy-gcinfo{font-family:monospace;font-size:12px;border-collapse:collapse}"
    "table.gctoy-gcinfo td,table.gctoy-gcinfo th{padding:2px 10px 2px 6px;text-align:left}"
    "table.gctoy-gcinfo td.b{white-space:nowrap}</style>"
)


# --------------------------------------------------------------------------- per code offset


@dataclass(frozen=True)
class OffsetPage:
    """What the explorer shows for one code offset: the entries in force and the live references."""

    offset: int
    where: CodeRegion
    highlight: frozenset[int]  # start bytes of the entries that describe this offset
    refs: tuple[str, ...]  # live references, as the runtime would report them for the innermost frame
    caller_refs: tuple[str, ...]  # ... and for a frame whose return address is this offset


def _ref_text(ref) -> str:
    flags = [f for f, on in (("interior", ref.interior), ("pinned", ref.pinned)) if on]
    return ref.location + (f" ({', '.join(flags)})" if flags else "")


def offset_pages(blob: bytes, version: int = 5, offsets: range | None = None) -> list[OffsetPage]:
    """One page per code offset (default: every offset of the method) of a whole GC-info blob.

    Highlighted: the untracked entries (always in force in the body), the lifetime entries whose
    range holds the offset, and in the pointer table the entries applied so far (fully
    interruptible: every entry up to the offset) or the call site at exactly this offset
    (partially interruptible tables only describe call sites).
    """
    from ..coreclr.gcrefs import code_region, gc_refs_at
    from ..coreclr.method import decode_with_entries

    decoded = decode_with_entries(blob, version)
    info = decoded.info
    regions = {r.name: r for r in decoded.regions}
    full = info.header.interruptible
    pages = []
    for offset in offsets if offsets is not None else range(info.method_size + 1):
        where = code_region(info, offset)[0]
        marks: set[int] = set()
        if where == "body":
            if "untracked" in regions:
                marks |= {e.start for e in regions["untracked"].entries}
            if "lifetimes" in regions:
                marks |= {
                    e.start
                    for e, life in zip(regions["lifetimes"].entries, info.lifetimes)
                    if life.begin <= offset < life.end
                }
            for e in regions["pointer table"].entries:
                if e.code_offset is None or e.text is None:
                    continue
                if (full and e.code_offset <= offset) or (not full and e.code_offset == offset):
                    marks.add(e.start)
        refs = tuple(map(_ref_text, gc_refs_at(blob, offset, active_frame=True, version=version)))
        caller = tuple(map(_ref_text, gc_refs_at(blob, offset, active_frame=False, version=version)))
        pages.append(OffsetPage(offset, where, frozenset(marks), refs, caller))
    return pages


def offset_page_html(blob: bytes, page: OffsetPage, regions) -> str:
    """The explorer for one code offset, with the live references under it."""

    def refs(items: tuple[str, ...]) -> str:
        return html.escape(", ".join(items)) if items else "<i>nothing</i>"

    caption = (
        f"<b>code offset {page.offset:04X}</b> &middot; in the {page.where}"
        f"<br>live (innermost frame): {refs(page.refs)}"
        f"<br>live (a caller whose return address is here): {refs(page.caller_refs)}"
    )
    return explorer_html(blob, list(regions), highlight=page.highlight, caption=caption)
