"""A statepoint's operands laid out one per row: position, meaning, value, and the index ``gc.relocate`` uses.

For the two older forms the relocate index of a GC pointer *is* its argument
position, so everything in front of it (the header, call arguments, transition
and deopt values with their counts) shifts it.  In the modern form GC pointers
live in the ``"gc-live"`` bundle and the relocate index is the position there::

    middle form, no call args, no deopt        modern form
    arg 0  ID                                  arg 0  ID
    arg 1  #patch bytes                        ...
    arg 2  target                              arg 5  #transition args (0)
    arg 3  #call args                          arg 6  #deopt args (0)
    arg 4  flags                               "gc-live"[0]  GC pointer  -> relocate index 0
    arg 5  #transition args
    arg 6  #deopt args
    arg 7  GC pointer   -> relocate index 7
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ir.printer import print_operand
from ..ir.statepoint import Statepoint, StatepointForm
from ..ir.values import ConstantInt

_HEADER = {
    StatepointForm.OLDEST: ["target", "#call args", "<unused>"],  # seed 001: "i64 <unused>", later the flags
    StatepointForm.MIDDLE: ["ID", "#patch bytes", "target", "#call args", "flags"],
    StatepointForm.MODERN: ["ID", "#patch bytes", "target", "#call args", "flags"],
}

_BUNDLE_ROLE = {"gc-live": "GC pointer", "deopt": "deopt value", "gc-transition": "transition value"}


@dataclass(frozen=True)
class OperandSlot:
    """One operand of a statepoint: where it sits, what it means, and how ``gc.relocate`` names it."""

    #: ``arg 7`` for a call argument, ``"gc-live"[0]`` for a bundle operand.
    where: str
    #: The argument index, or None for a bundle operand.
    index: int | None
    role: str
    operand: str
    #: The index a ``gc.relocate`` uses for this operand (GC pointers only).
    relocate_index: int | None = None


def statepoint_layout(sp: Statepoint, *, opaque: bool = False) -> list[OperandSlot]:
    """Every operand of the statepoint, arguments first, then operand bundles, in order."""
    args = sp.call.args
    rows: list[OperandSlot] = []
    gc_seen = 0

    def add(k: int, role: str, relocate: int | None = None) -> None:
        rows.append(OperandSlot(f"arg {k}", k, role, print_operand(args[k], opaque=opaque), relocate))

    header = _HEADER[sp.form]
    for k, role in enumerate(header):
        add(k, role)
    k = len(header)
    for j in range(len(sp.call_args)):
        add(k, f"call arg {j}")
        k += 1
    sections = (
        [("deopt", "deopt value")]
        if sp.form is StatepointForm.OLDEST
        else [("transition", "transition value"), ("deopt", "deopt value")]
    )
    for what, role in sections:
        count_operand = args[k]
        assert isinstance(count_operand, ConstantInt), "a verified statepoint's argument counts are constants"
        count = count_operand.value
        suffix = " (always 0)" if sp.form is StatepointForm.MODERN and count == 0 else ""
        add(k, f"#{what} args{suffix}")
        k += 1
        for j in range(count):
            add(k, f"{role} {j}")
            k += 1
    while k < len(args):
        add(k, "GC pointer", sp.relocate_index(gc_seen))
        gc_seen += 1
        k += 1
    for bundle in sp.call.bundles:
        role = _BUNDLE_ROLE.get(bundle.tag, f"{bundle.tag} operand")
        for j, value in enumerate(bundle.inputs):
            relocate = None
            if bundle.tag == "gc-live":
                relocate = sp.relocate_index(gc_seen)
                gc_seen += 1
            rows.append(OperandSlot(f'"{bundle.tag}"[{j}]', None, role, print_operand(value, opaque=opaque), relocate))
    return rows


def layout_text(sp: Statepoint, *, opaque: bool = False) -> str:
    """:func:`statepoint_layout` as a fixed-width table (one operand per line)."""
    rows = statepoint_layout(sp, opaque=opaque)
    head = ("position", "role", "operand", "relocate index")
    cells = [(r.where, r.role, r.operand, "" if r.relocate_index is None else str(r.relocate_index)) for r in rows]
    widths = [max(len(head[c]), *(len(row[c]) for row in cells)) for c in range(3)]
    lines = [f"{head[0]:<{widths[0]}}  {head[1]:<{widths[1]}}  {head[2]:<{widths[2]}}  {head[3]}"]
    lines.append("  ".join("-" * w for w in widths) + "  " + "-" * len(head[3]))
    for row in cells:
        line = f"{row[0]:<{widths[0]}}  {row[1]:<{widths[1]}}  {row[2]:<{widths[2]}}  {row[3]}"
        lines.append(line.rstrip())
    return "\n".join(lines)
