"""A text picture of one frame of gctoy's x86-64 lowering, with the stack map locations that name its slots.

For a function with one GC pointer ``%obj`` live across a call, at that call::

    rsp + 24  | return address         |
    rsp + 16  | saved rbp              |  <- rbp
    rsp + 8   | %obj.relocated         |
    rsp + 0   | %obj                   |  <- #4 pair 0 base, #5 pair 0 derived
              +------------------------+  <- rsp at the call

Each Direct or Indirect location based on RSP is drawn next to the slot it names, with its
number in the record (``#4``, as `llvm-readobj` counts) and its role (see
`gctoy.viz.stackmap.statepoint_roles`).
"""

from __future__ import annotations

from ..codegen.frame import SLOT_SIZE, Frame
from ..ir import instructions as I
from ..stackmap import LocationKind, StackMapRecord
from .stackmap import statepoint_roles

_DWARF_RSP = 7


def frame_rows(frame: Frame) -> list[tuple[int, int, str]]:
    """(rsp offset, size, what) for every part of the frame, highest address first."""
    rows: list[tuple[int, int, str]] = [
        (frame.stack_size, SLOT_SIZE, "return address"),
        (frame.size, SLOT_SIZE, "saved rbp"),
    ]
    for v in frame.values:
        if isinstance(v, I.Phi):
            rows.append((frame.shadow(v), SLOT_SIZE, f"shadow of %{v.name}"))
    for v in frame.values:
        rows.append((frame.slot(v), SLOT_SIZE, f"%{v.name}"))
    for a in frame.allocas:
        rows.append((frame.alloca(a), _alloca_size(frame, a), f"alloca %{a.name}"))
    if frame.outgoing_size:
        rows.append((0, frame.outgoing_size, "outgoing stack arguments"))
    used = {off for off, _, _ in rows}
    for off in range(0, frame.size, SLOT_SIZE):
        if off not in used and not any(o < off < o + s for o, s, _ in rows):
            rows.append((off, SLOT_SIZE, "(padding)"))
    return sorted(rows, key=lambda r: -r[0])


def _alloca_size(frame: Frame, alloca: I.Alloca) -> int:
    """Bytes from an alloca's offset to the next thing above it in the frame."""
    start = frame.alloca(alloca)
    above = [frame.alloca(a) for a in frame.allocas if frame.alloca(a) > start]
    above += [frame.slot(v) for v in frame.values]
    return min(above, default=frame.size) - start


def frame_diagram(frame: Frame, record: StackMapRecord | None = None, width: int = 26) -> str:
    """The frame as an ASCII picture; with a statepoint ``record``, its RSP-based locations beside their slots."""
    marks: dict[int, list[str]] = {}
    if record is not None:
        roles = statepoint_roles(record)
        for n, (loc, role) in enumerate(zip(record.locations, roles), start=1):
            if loc.kind in (LocationKind.INDIRECT, LocationKind.DIRECT) and loc.dwarf_reg == _DWARF_RSP:
                kind = "Direct" if loc.kind is LocationKind.DIRECT else "Indirect"
                marks.setdefault(loc.offset, []).append(f"#{n} {role} ({kind})")
    lines = [f"frame of @{frame.function.name} at a call (stack size {frame.stack_size})",
             f"{'':10}{'higher addresses':^{width + 2}}".rstrip()]
    for off, size, what in frame_rows(frame):
        note = ""
        if what == "saved rbp":
            note = "<- rbp"
        if off in marks:
            note = "<- " + ", ".join(marks[off])
        where = f"rsp + {off}"
        if size > SLOT_SIZE:
            where = f"rsp + {off}.."
        lines.append(f"{where:<10}| {what:<{width}} |  {note}".rstrip())
    lines.append(f"{'':10}+{'-' * (width + 2)}+  <- rsp at the call")
    return "\n".join(lines)
