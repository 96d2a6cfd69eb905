"""One page per unrelocated use the safepoint verifier finds: the function, with the path from the
statepoint to the use tinted, the statepoint and the use marked, and the verifier's sentence.

Chapter 06's widget shows these pages with one button per use (precomputed, so the static book
has them too).
"""

from __future__ import annotations

import html

from gctoy.ir.analysis.numbering import LocalNames
from gctoy.ir.printer import print_instruction
from gctoy.viz.html import PRE_STYLE as _PRE
from gctoy.ir.types import VOID
from gctoy.ir.values import Function
from gctoy.passes.verify_safepoints import UnrelocatedUse, find_unrelocated_uses

__all__ = ["use_label", "use_page_html", "unrelocated_pages"]

_STYLE = """<style>
.gctoy-uv { font-family: var(--jp-code-font-family, monospace); font-size: 12px; }
.gctoy-uv pre { margin: 0; white-space: pre; word-break: normal; }
.gctoy-uv .path { background: rgba(60, 120, 230, 0.12); }
.gctoy-uv .sp { background: rgba(240, 180, 0, 0.40); }
.gctoy-uv .use { background: rgba(220, 50, 50, 0.30); font-weight: bold; }
.gctoy-uv .msg { border-left: 4px solid #d33; padding: 4px 8px; margin-bottom: 6px; }
</style>"""


def use_label(use: UnrelocatedUse, names: LocalNames) -> str:
    """A short name for the button: the value and the instruction that uses it."""
    inst = use.instruction.opcode if use.instruction.type == VOID else names(use.instruction)
    return f"{names(use.value)} in {inst}"


def use_page_html(fn: Function, use: UnrelocatedUse) -> str:
    """The function with ``use``'s path, statepoint and use marked."""
    names = LocalNames(fn)
    on_path = set(use.path)
    lines = [f'<pre style="{_PRE}">define @{html.escape(fn.name)}(...) {{</pre>']
    for block in fn.blocks:
        label = names(block)
        cls = "path" if label in on_path else ""
        lines.append(f'<pre class="{cls}">{html.escape(label.lstrip("%"))}:</pre>')
        for inst in block.instructions:
            mark = cls
            if inst is use.statepoint:
                mark = "sp"
            if inst is use.instruction:
                mark = "use"
            lines.append(f'<pre class="{mark}">  {html.escape(print_instruction(inst))}</pre>')
    lines.append(f'<pre style="{_PRE}">}}</pre>')
    path = " → ".join(use.path)
    kind = "poisoned (relocated on some paths only)" if use.poisoned else "unrelocated"
    head = f'<div class="msg">{html.escape(use.message)}<br>{kind}; path: {html.escape(path)}</div>'
    return f'{_STYLE}<div class="gctoy-uv">{head}{"".join(lines)}</div>'


def unrelocated_pages(fn: Function) -> dict[str, str]:
    """Button label -> page, one per unrelocated use of ``fn`` (labels made unique with a counter)."""
    names = LocalNames(fn)
    pages: dict[str, str] = {}
    for n, use in enumerate(find_unrelocated_uses(fn), start=1):
        pages[f"{n}. {use_label(use, names)}"] = use_page_html(fn, use)
    return pages
