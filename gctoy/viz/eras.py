"""One statepoint laid out in each historical form, side by side: where every kind of operand sits.

Each row is a kind of operand, each column a form; a cell says where the
operands of that kind sit (argument positions, or a bundle and the positions in
it) and, for a single constant, its value::

    operands            oldest            middle             modern
    ------------------  ----------------  -----------------  -------------------
    ID                  -                 arg 0 = 7          arg 0 = 7
    #patch bytes        -                 arg 1 = 0          arg 1 = 0
    target              arg 0 = @g        arg 2 = @g         arg 2 = @g
    #call args          arg 1 = 2         arg 3 = 2          arg 3 = 2
    flags               arg 2 = 0         arg 4 = 0          arg 4 = 0
    call args           arg 3..4          arg 5..6           arg 5..6
    #transition args    -                 arg 7 = 0          arg 7 = 0
    transition values   -                 (none)             (none)
    #deopt args         arg 5 = 3         arg 8 = 3          arg 8 = 0
    deopt values        arg 6..8          arg 9..11          "deopt"[0..2]
    GC pointers         arg 9..10         arg 12..13         "gc-live"[0..1]

``-`` means the form has no such operand, ``(none)`` that it has the section but
this call puts nothing in it.  The relocate index of a GC pointer is its
position in the last row (an argument index, or an index into ``"gc-live"``).
A form that cannot say what the call says (the oldest form has no transition
values, patch bytes or invokes) gets a column of ``-`` and the reason.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

from ..errors import VerifyError
from ..ir import Module, parse_module, print_module
from ..ir.statepoint import Statepoint, StatepointForm, convert_statepoints, statepoints
from .statepoint import OperandSlot, statepoint_layout

#: The kinds of operand, in the order a statepoint lists them.
OPERAND_KINDS: tuple[str, ...] = (
    "ID",
    "#patch bytes",
    "target",
    "#call args",
    "flags",
    "call args",
    "#transition args",
    "transition values",
    "#deopt args",
    "deopt values",
    "GC pointers",
)

#: The kinds each form has (the oldest has no ID, patch bytes or transition section).
FORM_KINDS: dict[StatepointForm, frozenset[str]] = {
    StatepointForm.OLDEST: frozenset(OPERAND_KINDS) - {"ID", "#patch bytes", "#transition args", "transition values"},
    StatepointForm.MIDDLE: frozenset(OPERAND_KINDS),
    StatepointForm.MODERN: frozenset(OPERAND_KINDS),
}

_SINGLE = {"ID", "#patch bytes", "target", "#call args", "flags", "#transition args", "#deopt args"}
_ABSENT = "-"
_EMPTY = "(none)"


def operand_kind(slot: OperandSlot) -> str | None:
    """The row of :data:`OPERAND_KINDS` an operand belongs to (None for a bundle gctoy does not know)."""
    role = slot.role
    if role == "<unused>":  # the oldest form's third operand, which later became the flags
        return "flags"
    if role.startswith("#transition args"):
        return "#transition args"
    if role.startswith("#deopt args"):
        return "#deopt args"
    for prefix, kind in (
        ("call arg ", "call args"),
        ("transition value", "transition values"),
        ("deopt value", "deopt values"),
        ("GC pointer", "GC pointers"),
    ):
        if role.startswith(prefix):
            return kind
    return role if role in _SINGLE else None


def _span(slots: list[OperandSlot]) -> str:
    """``arg 5``, ``arg 5..6``, ``"deopt"[0..2]``: where a run of operands sits."""
    first, last = slots[0].where, slots[-1].where
    if first == last:
        return first
    if slots[0].index is not None:
        return f"{first}..{slots[-1].index}"
    tag = first[: first.index("[")]
    return f"{tag}[{first[first.index('[') + 1 : -1]}..{last[last.index('[') + 1 : -1]}]"


def _continues(prev: OperandSlot, slot: OperandSlot) -> bool:
    """True when ``slot`` directly follows ``prev``: the next argument, or the next operand of one bundle."""
    if prev.index is not None or slot.index is not None:
        return prev.index is not None and slot.index == prev.index + 1
    return prev.where.split("[")[0] == slot.where.split("[")[0]


def _value(operand: str) -> str:
    """The value part of a printed operand: ``i32 3`` -> ``3``, ``void ()* @foo`` -> ``@foo``."""
    return operand.rsplit(" ", 1)[-1]


def operand_cells(sp: Statepoint) -> dict[str, str]:
    """For one statepoint, each operand kind -> where its operands sit (see the module docstring)."""
    groups: dict[str, list[OperandSlot]] = {}
    for slot in statepoint_layout(sp):
        kind = operand_kind(slot)
        if kind is not None:
            groups.setdefault(kind, []).append(slot)
    cells = {}
    for kind in OPERAND_KINDS:
        if kind not in FORM_KINDS[sp.form]:
            cells[kind] = _ABSENT
            continue
        slots = groups.get(kind, [])
        if not slots:
            cells[kind] = _EMPTY
        elif kind in _SINGLE and len(slots) == 1:
            cells[kind] = f"{slots[0].where} = {_value(slots[0].operand)}"
        else:
            # arguments and bundle operands of one kind are listed separately (a mixed form shows both)
            runs: list[list[OperandSlot]] = []
            for slot in slots:
                if runs and _continues(runs[-1][-1], slot):
                    runs[-1].append(slot)
                else:
                    runs.append([slot])
            cells[kind] = ", ".join(_span(run) for run in runs)
    return cells


@dataclass(frozen=True)
class EraColumn:
    """One form's column: the cells, or why the form cannot express the call."""

    form: StatepointForm
    cells: dict[str, str]
    refused: str | None = None


@dataclass(frozen=True)
class EraTable:
    """A statepoint's operand layout in several forms (rows: :data:`OPERAND_KINDS`)."""

    columns: tuple[EraColumn, ...]

    def rows(self) -> list[tuple[str, tuple[str, ...]]]:
        """``(kind, cells)`` per operand kind, one cell per column."""
        return [(kind, tuple(c.cells[kind] for c in self.columns)) for kind in OPERAND_KINDS]

    def text(self) -> str:
        """A fixed-width table; refusals follow it, one line per refusing form."""
        head = ("operands", *(c.form.value for c in self.columns))
        body = [(kind, *cells) for kind, cells in self.rows()]
        widths = [max(len(r[k]) for r in [head, *body]) for k in range(len(head))]
        lines = ["  ".join(f"{cell:<{w}}" for cell, w in zip(row, widths)).rstrip() for row in [head]]
        lines.append("  ".join("-" * w for w in widths))
        lines += ["  ".join(f"{cell:<{w}}" for cell, w in zip(row, widths)).rstrip() for row in body]
        for c in self.columns:
            if c.refused:
                lines.append(f"{c.form.value}: cannot express this call: {c.refused}")
        return "\n".join(lines)

    def html(self) -> str:
        """An HTML table (refusals as a caption line under it)."""
        th = "".join(
            f'<th style="text-align:left;padding:2px 10px">{html.escape(c.form.value)}</th>' for c in self.columns
        )
        trs = []
        for kind, cells in self.rows():
            tds = "".join(
                f'<td style="text-align:left;padding:2px 10px;font-family:monospace">{html.escape(x)}</td>'
                for x in cells
            )
            trs.append(f'<tr><td style="text-align:left;padding:2px 10px"><b>{html.escape(kind)}</b></td>{tds}</tr>')
        notes = "".join(
            f"<div><b>{html.escape(c.form.value)}</b>: cannot express this call: {html.escape(c.refused)}</div>"
            for c in self.columns
            if c.refused
        )
        return (
            f'<table><tr><th style="text-align:left;padding:2px 10px">operands</th>{th}</tr>'
            + "".join(trs)
            + "</table>"
            + notes
        )

    def _repr_html_(self) -> str:
        return self.html()

    def __str__(self) -> str:
        return self.text()


def era_table(
    source: str | Module,
    *,
    function: str | None = None,
    index: int = 0,
    forms: tuple[StatepointForm, ...] = (StatepointForm.OLDEST, StatepointForm.MIDDLE, StatepointForm.MODERN),
    filename: str = "<example>",
) -> EraTable:
    """The ``index``-th statepoint of ``function`` (default: the first definition) converted into each form.

    ``source`` is IR text or a module (left untouched: each form starts from a fresh parse).
    """
    text = source if isinstance(source, str) else print_module(source)
    columns = []
    for form in forms:
        module = parse_module(text, filename, implicit_declarations=True, fix_numbering=True)
        fn = module.get_function(function) if function else next(iter(module.definitions()), None)
        if fn is None:
            raise KeyError(f"no function @{function} in the module" if function else "the module defines no function")
        try:
            convert_statepoints(module, form)
        except VerifyError as err:
            columns.append(EraColumn(form, {k: _ABSENT for k in OPERAND_KINDS}, err.message))
            continue
        columns.append(EraColumn(form, operand_cells(statepoints(fn)[index])))
    return EraTable(tuple(columns))
