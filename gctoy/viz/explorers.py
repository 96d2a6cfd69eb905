"""HTML pages for two byte-level explorers: a stack-map section field by field, and a CoreCLR method
header as the fields chosen make it (shortcut row and fixup bytes).

Each page is a plain string, so the widgets in :mod:`gctoy.widgets.explorers` can precompute them
(the stack-map explorer works in the static HTML book) and tests can read them.
"""

from __future__ import annotations

import html

from gctoy.coreclr.header import CURRENT_VERSION, InfoHdr, check_header, choose_shortcut, encode_header
from gctoy.coreclr.header_explain import explain_header
from gctoy.errors import GCToyError
from gctoy.viz.stackmap import HexRow, annotated_hexdump

__all__ = ["STYLE", "stackmap_pages", "stackmap_page_html", "header_html"]

STYLE = """<style>
.gctoy-x { font-family: var(--jp-code-font-family, monospace); font-size: 12px; }
.gctoy-x .bytes { max-width: 52em; line-height: 1.7; }
.gctoy-x .bytes span { padding: 1px 3px; margin: 0 2px 0 0; border-radius: 2px; }
.gctoy-x .bytes span.sel { background: rgba(240, 180, 0, 0.45); font-weight: bold; }
.gctoy-x .bytes span.same { background: rgba(60, 120, 230, 0.15); }
.gctoy-x table { border-collapse: collapse; }
.gctoy-x td, .gctoy-x th { padding: 2px 10px; text-align: left; white-space: pre; }
.gctoy-x .err { border-left: 4px solid #d33; padding: 4px 8px; background: rgba(220, 50, 50, 0.10); }
</style>"""


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _group(field: str) -> str:
    """The structure a field belongs to: 'rec[0].loc#3', 'rec[1]', 'fn[0]' or 'header'."""
    parts = field.split(".")
    if parts[0].startswith(("rec[", "fn[", "constant[")):
        return ".".join(p for p in parts[:-1] if p) or parts[0]
    return "header"


def stackmap_page_html(data: bytes, rows: list[HexRow], selected: int) -> str:
    """Every byte of the section, the selected field's bytes marked and its structure's bytes tinted;
    under it the field's name, byte offset, size and decoded value."""
    row = rows[selected]
    group = _group(row.field)
    spans = []
    for i, r in enumerate(rows):
        cls = "sel" if i == selected else ("same" if _group(r.field) == group and group != "header" else "")
        attr = f' class="{cls}"' if cls else ""
        spans.append(f"<span{attr}>{r.data.hex(' ')}</span>")
    detail = (
        f"<table><tr><th>field</th><td>{_e(row.field)}</td></tr>"
        f"<tr><th>bytes</th><td>{row.offset:#06x}–{row.offset + len(row.data) - 1:#06x} "
        f"({len(row.data)} byte{'s' if len(row.data) != 1 else ''}: {_e(row.data.hex(' '))})</td></tr>"
        f"<tr><th>value</th><td>{_e(row.value)}</td></tr>"
        f"<tr><th>part of</th><td>{_e(group)}</td></tr></table>"
    )
    return f'{STYLE}<div class="gctoy-x"><div class="bytes">{"".join(spans)}</div>{detail}</div>'


def stackmap_pages(data: bytes) -> tuple[list[HexRow], list[str]]:
    """The fields of a v3 section and one page per field."""
    rows = annotated_hexdump(data)
    return rows, [stackmap_page_html(data, rows, i) for i in range(len(rows))]


def header_html(hdr: InfoHdr, version: int = CURRENT_VERSION) -> str:
    """How CoreCLR writes ``hdr``: the shortcut row it starts from, then each fixup byte and its meaning."""
    try:
        check_header(hdr, version)
        data = encode_header(hdr, version)
        row, exact = choose_shortcut(hdr, version)
        _, entries, _ = explain_header(data, version)
    except GCToyError as error:
        return f'{STYLE}<div class="gctoy-x"><div class="err">this header cannot be written: {_e(error)}</div></div>'
    lines = [f"<tr><td>{_e(data[e.start : e.end].hex(' '))}</td><td>{_e(e.text or '')}</td></tr>" for e in entries]
    verdict = (
        "the row matches exactly: one byte"
        if exact and len(data) == 1
        else f"row {row:#04x} is the closest; {len(data) - 1} fixup byte{'s' if len(data) != 2 else ''} follow"
    )
    return (
        f'{STYLE}<div class="gctoy-x"><div><b>{len(data)} byte{"s" if len(data) != 1 else ""}:</b> '
        f"{_e(data.hex(' '))} — {_e(verdict)}</div><table>{''.join(lines)}</table></div>"
    )
