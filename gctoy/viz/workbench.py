"""HTML for the workbench's panes: the problem at its line, the IR stages with their diffs, the machine
code linked to the stack-map records, the run, and the assembly playground's steps.

Plain functions from :mod:`gctoy.workbench` results to HTML strings, so that what a reader sees
can be tested without a browser. Colours work on light and dark backgrounds (they only tint).
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from gctoy.workbench import AsmResult, CodeLine, Problem, RecordLink, RunOutcome, Stage, summary_text

__all__ = ["problem_html", "stages_html", "code_html", "records_html", "run_html", "asm_html", "summary_text", "STYLE"]

STYLE = """<style>
.gctoy-wb { font-family: var(--jp-code-font-family, monospace); font-size: 12px; }
.gctoy-wb table { border-collapse: collapse; }
.gctoy-wb td, .gctoy-wb th { padding: 1px 8px; text-align: left; vertical-align: top; white-space: pre; }
.gctoy-wb .add { background: rgba(40, 180, 60, 0.18); }
.gctoy-wb .del { background: rgba(220, 50, 50, 0.18); text-decoration: line-through; }
.gctoy-wb .call { background: rgba(60, 120, 230, 0.15); }
.gctoy-wb .hot { background: rgba(240, 180, 0, 0.35); font-weight: bold; }
.gctoy-wb .problem { border-left: 4px solid #d33; padding: 4px 8px; background: rgba(220, 50, 50, 0.10);
                     white-space: pre-wrap; }
.gctoy-wb .ok { border-left: 4px solid #3a3; padding: 4px 8px; }
.gctoy-wb pre { margin: 0; white-space: pre; }
</style>"""


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def problem_html(problem: Problem | None, source: str = "") -> str:
    """The problem with the reader's line under it and a caret at the column (or 'no problems')."""
    if problem is None:
        return f'{STYLE}<div class="gctoy-wb"><div class="ok">no problems</div></div>'
    parts = [f"<b>{_e(problem.stage)}</b>: {_e(problem.message)}"]
    lines = source.splitlines()
    if problem.line and 1 <= problem.line <= len(lines):
        text = lines[problem.line - 1]
        parts.append(f"\nline {problem.line}: {_e(text)}")
        if problem.column:
            parts.append("\n" + " " * (len(f"line {problem.line}: ") + problem.column - 1) + "^")
    return f'{STYLE}<div class="gctoy-wb"><div class="problem">{"".join(parts)}</div></div>'


def stages_html(stages: list[Stage], which: int | None = None) -> str:
    """One stage (the last by default) as a diff against the stage before: added lines green, removed red."""
    if not stages:
        return f'{STYLE}<div class="gctoy-wb">(nothing ran)</div>'
    stage = stages[-1 if which is None else which]
    rows = []
    for tag, line in stage.diff:
        cls = {"+": "add", "-": "del"}.get(tag, "")
        rows.append(f'<tr class="{cls}"><td>{_e(tag)}</td><td>{_e(line)}</td></tr>')
    note = "" if stage.changed or stage.name == "input" else " (no change)"
    return (
        f'{STYLE}<div class="gctoy-wb"><div><b>after {_e(stage.name)}</b>{note}</div>'
        f"<table>{''.join(rows)}</table></div>"
    )


def code_html(
    code: list[CodeLine], records: Sequence[RecordLink] = (), highlight: int | None = None, current: int | None = None
) -> str:
    """The machine code: address, bytes, instruction; calls with a record are tinted, ``highlight``'s call
    (a record index) and the instruction at ``current`` (an address) stand out."""
    hot_call = next((r.call_address for r in records if r.index == highlight), None)
    with_source = any(line.source for line in code)
    rows = []
    if with_source:
        rows.append(
            "<tr><th></th><th>gctoy's assembly</th><th>address</th><th>Keystone's bytes</th>"
            "<th>Capstone's reading</th><th></th></tr>"
        )
    for line in code:
        classes = []
        if line.record is not None:
            classes.append("call")
        if (hot_call is not None and line.address == hot_call) or (current is not None and line.address == current):
            classes.append("hot")
        label = f"<td>{_e(line.label)}:</td>" if line.label else "<td></td>"
        link = f"<td>&larr; record {line.record}</td>" if line.record is not None else "<td></td>"
        source = f"<td>{line.source_line}</td>" if line.source_line is not None else ""
        asm = f"<td>{_e(line.source)}</td>" if with_source else ""
        rows.append(
            f'<tr class="{" ".join(classes)}" data-address="{line.address:#x}">{source}{label}{asm}'
            f"<td>{line.address:#x}</td><td>{_e(line.data.hex(' '))}</td><td>{_e(line.text)}</td>{link}</tr>"
        )
    return f'{STYLE}<div class="gctoy-wb"><table>{"".join(rows)}</table></div>'


def records_html(
    records: Sequence[RecordLink], highlight: int | None = None, frame_maps: Sequence[tuple[str, str]] = ()
) -> str:
    """The stack-map records (or GC-info call sites), each with its call's address and its locations; after
    a shadow-stack lowering, each function's FrameMap (NumRoots, NumMeta, the metadata) instead."""
    if frame_maps:
        maps = "".join(f"<tr><td>@{_e(fn)}</td><td>{_e(text)}</td></tr>" for fn, text in frame_maps)
        return (
            f'{STYLE}<div class="gctoy-wb"><div>shadow stack: no stack map; the collector walks the '
            f"chain of StackEntry records, each pointing at its function's FrameMap "
            f"({{NumRoots, NumMeta}}, then the metadata)</div><table>{maps}</table></div>"
        )
    if not records:
        return f'{STYLE}<div class="gctoy-wb">(no stack-map records: the program has no safepoints)</div>'
    rows = []
    for r in records:
        cls = "hot" if r.index == highlight else ""
        call = f"{r.call_address:#x}" if r.call_address is not None else "?"
        rows.append(
            f'<tr class="{cls}"><td>{_e(r.summary)}</td><td>@{_e(r.function)}</td><td>call at {call}</td>'
            f"<td>returns to {r.return_address:#x}</td></tr>"
        )
        for n, loc in enumerate(r.locations, start=1):
            rows.append(f'<tr class="{cls}"><td></td><td colspan="3">#{n}: {_e(loc)}</td></tr>')
    return f'{STYLE}<div class="gctoy-wb"><table>{"".join(rows)}</table></div>'


def run_html(run: RunOutcome | None) -> str:
    if run is None:
        return f'{STYLE}<div class="gctoy-wb">(not run)</div>'
    printed = ", ".join(map(str, run.printed)) or "nothing"
    result = "—" if run.result is None else str(run.result)
    return (
        f'{STYLE}<div class="gctoy-wb"><div>printed: {_e(printed)}</div><div>@main returned: {_e(result)}</div>'
        f"<div>collections: {run.collections}</div><div>{_e(run.stats)}</div></div>"
    )


def asm_html(result: AsmResult, step: int | None = None) -> str:
    """The playground after ``step`` instructions: the code with the next instruction marked, and the registers."""
    current = None
    index = 0
    registers: dict[str, int] = {}
    changed: tuple[str, ...] = ()
    if result.steps:
        index = len(result.steps) - 1 if step is None else max(0, min(step, len(result.steps) - 1))
        s = result.steps[index]
        registers, changed = s.registers, s.changed
        current = result.steps[index + 1].address if index + 1 < len(result.steps) else None
    regs = "".join(
        f'<tr class="{"hot" if name in changed else ""}"><td>{_e(name)}</td><td>{value:#x}</td></tr>'
        for name, value in registers.items()
    )
    stack = result.steps[index].stack if result.steps else ()
    words = "".join(f"<tr><td>{address:#x}</td><td>{value:#x}</td></tr>" for address, value in stack)
    memory = f"<div><b>stack</b> (from the stack pointer up)</div><table>{words}</table>" if words else ""
    return (
        f'{STYLE}<div class="gctoy-wb" style="display:flex; gap:16px; flex-wrap:wrap">'
        f"<div>{code_html(result.code, current=current)}</div><div><table>{regs}</table>"
        f"<div>{_e(result.stopped)}</div></div><div>{memory}</div></div>"
    )
