"""A conservative scan and an accurate one over the same stopped stack, word by word.

Page ``i`` shows the stack words from the stack pointer up, the ``i``-th marked, and for each word
seen so far both verdicts: the conservative scan's ("points into object X", "interior", or "not a
heap address") and the stack map's ("a GC slot" or nothing). Chapter 10's widget pages through
them with a slider (precomputed, so the static book has them too).
"""

from __future__ import annotations

import html
from dataclasses import dataclass

from gctoy.runtime.conservative import heap_objects

__all__ = ["ScanRow", "scan_rows", "scan_pages"]

_STYLE = """<style>
.gctoy-scan { font-family: var(--jp-code-font-family, monospace); font-size: 12px; }
.gctoy-scan td, .gctoy-scan th { padding: 1px 8px; white-space: pre; text-align: left; }
.gctoy-scan tr.now { background: rgba(240, 180, 0, 0.40); }
.gctoy-scan td.ptr { background: rgba(60, 120, 230, 0.18); }
.gctoy-scan td.false { background: rgba(220, 50, 50, 0.22); }
</style>"""


@dataclass(frozen=True)
class ScanRow:
    address: int
    value: int
    conservative: str  # what a conservative scan concludes of the word
    accurate: str  # what the stack map says of the slot
    disagree: bool  # the conservative scan keeps an object the stack map does not name here


def scan_rows(machine, heap, exact_slots, sp: int | None = None, limit: int = 48) -> list[ScanRow]:
    """The first ``limit`` stack words from ``sp`` up, each with both verdicts."""
    index = heap.index()
    starts = {start for start, _ in heap_objects(heap)}
    exact = {s for s in exact_slots if isinstance(s, int)}
    low = (machine.sp if sp is None else sp) & ~7
    rows = []
    for n in range(limit):
        address = low + 8 * n
        try:
            value = machine.read_u64(address)
        except Exception:  # noqa: BLE001 - past the stack's top
            break
        obj = index.containing(value) if heap.space.base <= value < heap.top else None
        if obj is None:
            conservative = "not a heap address"
        elif value in starts:
            conservative = f"object at {obj:#x}: keep it, pin it"
        else:
            conservative = f"interior of {obj:#x}: keep it, pin it"
        accurate = "GC slot: relocate it" if address in exact else ""
        rows.append(ScanRow(address, value, conservative, accurate, obj is not None and address not in exact))
    return rows


def scan_pages(rows: list[ScanRow]) -> list[str]:
    """One page per word: the table up to that word, the word marked."""
    pages = []
    for i in range(len(rows)):
        body = []
        for j, row in enumerate(rows[: i + 1]):
            cls = "now" if j == i else ""
            ccls = "false" if row.disagree else ("ptr" if row.conservative.startswith(("object", "interior")) else "")
            acls = "ptr" if row.accurate else ""
            body.append(
                f'<tr class="{cls}"><td>{row.address:#x}</td><td>{row.value:#018x}</td>'
                f'<td class="{ccls}">{html.escape(row.conservative)}</td>'
                f'<td class="{acls}">{html.escape(row.accurate)}</td></tr>'
            )
        kept = sum(1 for r in rows[: i + 1] if r.conservative.startswith(("object", "interior")))
        named = sum(1 for r in rows[: i + 1] if r.accurate)
        head = (
            f"<div>word {i + 1} of {len(rows)}: the conservative scan has kept {kept} word(s) as roots, "
            f"the stack map names {named} slot(s)</div>"
        )
        pages.append(
            f'{_STYLE}<div class="gctoy-scan">{head}<table><tr><th>address</th><th>word</th>'
            f"<th>conservative scan</th><th>stack map</th></tr>{''.join(body)}</table></div>"
        )
    return pages
