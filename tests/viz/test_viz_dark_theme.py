"""Every light background gctoy paints also sets its text colour.

JupyterLab's dark theme draws light text; on a light background gctoy chose (the current line of the
disassembly, a GC slot, an object's colour) that text vanishes. So an element whose style sets an
opaque background must set ``color`` too. A translucent tint (``rgba(..., a)`` with a <= 0.5) only
shades the theme's own background and keeps the theme's text colour, so it needs none.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from gctoy.codegen import compile_module
from gctoy.ir import parse_module
from gctoy.passes import run
from gctoy.passes.lower_barriers import CARD_COUNT, CARD_DIRTY
from gctoy.runtime.trace import LIST3, record_trace
from gctoy.strategy import BUILTIN_STRATEGIES
from gctoy.viz import gcmap as V
from gctoy.viz.designs import design_pages, points_from_rows
from gctoy.viz.html import ir_html
from gctoy.viz.machine import trace_pages

REPO_ROOT = Path(__file__).resolve().parents[2]
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"

_DECLARATION = re.compile(r"([\w-]+)\s*:\s*([^;]+)")
_TINT = re.compile(r"rgba\(\s*[\d.]+\s*,\s*[\d.]+\s*,\s*[\d.]+\s*,\s*([\d.]+)\s*\)")


def _declarations(style: str) -> dict[str, str]:
    return {m.group(1).strip().lower(): m.group(2).strip().lower() for m in _DECLARATION.finditer(style)}


def _paints(value: str) -> bool:
    """Whether a background value paints an opaque colour (not none, not a light tint)."""
    if value in ("", "none", "transparent", "inherit", "initial", "unset"):
        return False
    tint = _TINT.fullmatch(value)
    return not (tint and float(tint.group(1)) <= 0.5)


def _unreadable(style: str) -> bool:
    found = _declarations(style)
    background = found.get("background-color", found.get("background", ""))
    return _paints(background) and "color" not in found


class _BackgroundFinder(HTMLParser):
    """Collects the elements (inline ``style``) and CSS rules (``<style>``) with a background and no colour."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []
        self.in_style = False

    def handle_starttag(self, tag, attrs) -> None:
        self.in_style = tag == "style"
        style = dict(attrs).get("style") or ""
        if _unreadable(style):
            self.found.append(f'<{tag} style="{style}">')

    def handle_endtag(self, tag) -> None:
        self.in_style = False

    def handle_data(self, data) -> None:
        if self.in_style:
            for selector, body in re.findall(r"([^{}]+)\{([^}]*)\}", data):
                if _unreadable(body):
                    self.found.append(f"{selector.strip()} {{{body.strip()}}}")


def backgrounds_without_colour(text: str) -> list[str]:
    """The elements and CSS rules of ``text`` that paint an opaque background but set no text colour."""
    finder = _BackgroundFinder()
    finder.feed(text)
    finder.close()
    return finder.found


def test_the_check_finds_a_background_without_a_colour():
    assert backgrounds_without_colour('<span style="background:#bbdefb;font-weight:bold">x</span>') == [
        '<span style="background:#bbdefb;font-weight:bold">'
    ]
    assert backgrounds_without_colour("<style>.a td { background-color: #fff3cd }</style>") == [
        ".a td {background-color: #fff3cd}"
    ]
    assert backgrounds_without_colour('<div style="background:rgba(1,2,3,0.9)"></div>')
    assert not backgrounds_without_colour('<span style="background:#bbdefb;color:#1a1a1a">x</span>')
    assert not backgrounds_without_colour('<span style="background:rgba(240,180,0,0.35)">x</span>')
    assert not backgrounds_without_colour('<span style="color:#888">x</span><td style="">y</td>')


@pytest.fixture(scope="module")
def trace():
    return record_trace(LIST3)


def test_the_machine_pages_set_a_colour_on_every_background(trace):
    """The disassembly's current and caller lines, the GC slots, the objects, the stale words."""
    pages = trace_pages(trace)
    text = "".join(pages)
    for shade in ("#bbdefb", "#ffe0b2", "#ffe9a8", "#cfe8ff"):
        assert f"background:{shade}" in text, shade  # the check below has something to check
    assert [b for page in pages for b in backgrounds_without_colour(page)] == []


LOOP = """declare void @llvm.gcroot(i8**, i8*)
declare void @use(i8*)
define void @f(i8* %p) gc "gctoy-gcmap" {
entry:
  %root = alloca i8*
  call void @llvm.gcroot(i8** %root, i8* null)
  store i8* %p, i8** %root
  br label %loop
loop:
  %q = load i8*, i8** %root
  call void @use(i8* %q)
  br label %loop
}
"""


def test_the_other_views_set_a_colour_on_every_background():
    module = parse_module(LOOP, "loop.ll")
    run(module, "verify,lower-gc-barriers,verify")
    kinds = V.kind_pages(compile_module(module), "f")
    table = bytearray(CARD_COUNT + 1)
    table[1] = CARD_DIRTY
    statepoint = "define void @f() {\n  %t = call token @llvm.experimental.gc.statepoint.p0(i64 0)\n  ret void\n}\n"
    views = {
        "safe point listing": "".join(k.html() for k in kinds),
        "card grid": V.card_grid_html(bytes(table), 0, 8),
        "strategy table": V.strategy_table_html(BUILTIN_STRATEGIES),
        "IR": ir_html(statepoint),
        "designs": "".join(design_pages(points_from_rows([(0, [39.0, 39.0, 75.0])], n=2))),
    }
    assert "background:#fde4a6" in views["IR"] and "background:#eceff1" in views["card grid"]
    assert "background:" in views["safe point listing"] and "background:" in views["designs"]
    assert {name: backgrounds_without_colour(page) for name, page in views.items()} == {n: [] for n in views}


def _notebook_html(path: Path) -> list[str]:
    """The HTML a saved notebook shows: its text/html outputs and its saved widgets' HTML values."""
    notebook = json.loads(path.read_text())
    found = []
    for cell in notebook["cells"]:
        for output in cell.get("outputs", []):
            text = output.get("data", {}).get("text/html")
            if text:
                found.append("".join(text) if isinstance(text, list) else text)
    models = notebook.get("metadata", {}).get("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
    found += [m["state"]["value"] for m in models.values() if isinstance(m.get("state", {}).get("value"), str)]
    return found


@pytest.mark.parametrize("path", sorted((REPO_ROOT / "notebooks").glob("*.ipynb")), ids=lambda p: p.stem[:2])
def test_every_saved_chapter_sets_a_colour_on_every_background(path):
    """What the book and JupyterLab show before anything runs: the saved outputs and widget states."""
    found = sorted({b for page in _notebook_html(path) for b in backgrounds_without_colour(page)})
    assert found == [], f"{path.name}: {found[:5]}"
