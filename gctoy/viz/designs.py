"""The three designs on one program, side by side: instructions per call and metadata bytes, as the
number of pointers live across the call grows.

:func:`design_pages` measures each design (Unicorn's instruction counts of gctoy's own lowering,
see :mod:`gctoy.runtime.designs`) for each count of live pointers and draws one page per count;
chapter 17 pages through them with a slider (precomputed, so the static book has them too).
"""

from __future__ import annotations

import html
from dataclasses import dataclass

from gctoy.runtime.designs import DESIGNS, caller_loop, executed

from .html import INK

__all__ = ["DesignPoint", "measure_designs", "points_from_rows", "design_pages"]

_COLOURS = {
    "statepoint": "rgba(60,120,230,0.55)",
    "shadow-stack": "rgba(220,120,40,0.55)",
    "x86-gcinfo": "rgba(40,160,80,0.55)",
}


@dataclass(frozen=True)
class DesignPoint:
    design: str
    live: int
    per_call: float  # instructions per loop iteration (one call), from two run lengths
    code_bytes: int
    metadata_bytes: int


def measure_designs(live_counts=(0, 2, 4, 8), n: int = 4, program=caller_loop) -> list[DesignPoint]:
    """Every design at every count of live pointers: per-call instructions and static sizes."""
    points = []
    for k in live_counts:
        for design in DESIGNS:
            small, large = design.build(program(n, k)), design.build(program(2 * n, k))
            per_call = (executed(large)[0] - executed(small)[0]) / n
            points.append(DesignPoint(design.name, k, per_call, small.code_bytes, small.metadata_bytes))
    return points


def points_from_rows(rows, program=caller_loop, n: int = 4) -> list[DesignPoint]:
    """DesignPoints from per-call figures measured already (``[(k, [per design, in DESIGNS order]), ...]``),
    with the static sizes of ``program(n, k)`` built for each design."""
    points = []
    for k, row in rows:
        for design, per_call in zip(DESIGNS, row):
            built = design.build(program(n, k))
            points.append(DesignPoint(design.name, k, per_call, built.code_bytes, built.metadata_bytes))
    return points


def design_pages(points: list[DesignPoint]) -> list[str]:
    """One page per count of live pointers: a bar per design (instructions per call) and the sizes."""
    counts = sorted({p.live for p in points})
    top = max(p.per_call for p in points) or 1
    pages = []
    for k in counts:
        rows = []
        for p in (p for p in points if p.live == k):
            width = int(360 * p.per_call / top)
            bar = (
                f'<div style="background:{_COLOURS.get(p.design, "#999")}; color:{INK}; width:{width}px; height:14px; '
                f'display:inline-block"></div>'
            )
            rows.append(
                f"<tr><td>{html.escape(p.design)}</td><td>{bar} {p.per_call:g}</td>"
                f"<td>{p.code_bytes}</td><td>{p.metadata_bytes}</td></tr>"
            )
        pages.append(
            f'<div style="font-family: var(--jp-code-font-family, monospace); font-size: 12px">'
            f"<div><b>{k} pointer{'s' if k != 1 else ''} live across the call</b></div>"
            f'<table><tr><th style="text-align:left">design</th><th style="text-align:left">instructions per call'
            f"</th><th>code bytes</th><th>metadata bytes</th></tr>{''.join(rows)}</table></div>"
        )
    return pages
