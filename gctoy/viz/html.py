"""IR text as HTML: a ``<pre>`` block with statepoints, relocations and results coloured like the CFG drawings."""

from __future__ import annotations

import html

from ..ir.intrinsics import RELOCATE, RESULT, STATEPOINT
from .cfg import DEFAULT_PALETTE, CFGPalette


def _line_style(line: str, palette: CFGPalette) -> str | None:
    if not line.startswith("  "):
        return None  # declarations and labels stay plain
    if f"@{STATEPOINT}" in line:
        return f"background:{palette.statepoint_bg};color:{INK}"
    if f"@{RELOCATE}" in line:
        return f"color:{palette.relocate_fg}"
    if f"@{RESULT}" in line:
        return f"color:{palette.result_fg}"
    return None


#: the text colour of everything gctoy paints on a light background: a dark theme (JupyterLab's) draws
#: light text, which would vanish on it; translucent tints (alpha <= 0.5) keep the theme's colour
INK = "#1a1a1a"

#: the style of every block of code gctoy shows as HTML: no wrapping, a scroll bar for long lines
PRE_STYLE = "font-size:12px;line-height:1.35;overflow-x:auto;white-space:pre;word-break:normal;overflow-wrap:normal"


def ir_html(text: str, *, caption: str | None = None, palette: CFGPalette = DEFAULT_PALETTE) -> str:
    """``text`` (printed IR) as an HTML fragment under an optional ``caption`` (HTML, not escaped).

    Instruction lines that call the GC intrinsics are coloured: statepoints on amber,
    relocations in green, results in purple.
    """
    lines = []
    for line in text.rstrip("\n").split("\n"):
        style = _line_style(line, palette)
        escaped = html.escape(line)
        lines.append(f'<span style="{style}">{escaped}</span>' if style else escaped)
    head = f"<div>{caption}</div>" if caption else ""
    # inline, so that JupyterLab's output styles (white-space: pre-wrap; word-break: break-all) cannot
    # wrap an instruction in the middle of a word: long lines scroll instead
    return head + (f'<pre style="{PRE_STYLE}">' + "\n".join(lines) + "</pre>")
