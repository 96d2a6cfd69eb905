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

A frame of the register lowering (``RegisterFrame``) has no saved rbp: the callee-saved registers
it uses are pushed below the return address, its spilled values have slots, and the values in
registers are listed under the picture, with the Register locations that name them. A spill slot
that several values take in turn (a value, then its relocated copies) is named after the first,
with the count of the others (``%a +2``). Here
``compile_module(..., gc_registers=1)``, which keeps ``%obj`` in rbx across the call)::

    rsp + 8   | return address         |
    rsp + 0   | saved rbx              |
              +------------------------+  <- rsp at the call
    in registers (each holds these values, at different times):
      rbx  %obj %obj.relocated  <- #4 pair 0 base (Register), #5 pair 0 derived (Register)
"""

from __future__ import annotations

from ..codegen.frame import DWARF, SLOT_SIZE, Frame
from ..codegen.frame_ra import RegisterFrame
from ..ir import instructions as I
from ..stackmap import LocationKind, StackMapRecord
from .stackmap import statepoint_roles

_DWARF_RSP = 7


def frame_rows(frame: Frame | RegisterFrame) -> list[tuple[int, int, str]]:
    """(rsp offset, size, what) for every part of the frame, highest address first."""
    rows: list[tuple[int, int, str]] = [(frame.stack_size, SLOT_SIZE, "return address")]
    if isinstance(frame, RegisterFrame):
        cfa = frame.stack_size + SLOT_SIZE
        rows += [(cfa + frame.save_offset(r), SLOT_SIZE, f"saved {r}") for r in frame.saved]
        rows += [(off, SLOT_SIZE, "deopt spill slot") for off in frame.spill_slots]
        shared: dict[int, list[str]] = {}
        for v in frame.values:
            shared.setdefault(frame.slot(v), []).append(f"%{v.name}")
        rows += [
            (off, SLOT_SIZE, f"{names[0]} (spilled)" if len(names) == 1 else f"{names[0]} +{len(names) - 1} (spilled)")
            for off, names in shared.items()
        ]
    else:
        rows.append((frame.size, SLOT_SIZE, "saved rbp"))
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


def _alloca_size(frame: Frame | RegisterFrame, alloca: I.Alloca) -> int:
    """Bytes from an alloca's offset to the next thing above it in the frame."""
    start = frame.alloca(alloca)
    above = [frame.alloca(a) for a in frame.allocas if frame.alloca(a) > start]
    above += [frame.slot(v) for v in frame.values]
    return min(above, default=frame.size) - start


def frame_diagram(frame: Frame | RegisterFrame, record: StackMapRecord | None = None, width: int = 26) -> str:
    """The frame as an ASCII picture; with a statepoint ``record``, its RSP-based locations beside their slots
    (and, for a register frame, its Register locations beside the registers listed under the picture)."""
    marks: dict[int, list[str]] = {}
    in_registers: dict[int, list[str]] = {}
    if record is not None:
        roles = statepoint_roles(record)
        for n, (loc, role) in enumerate(zip(record.locations, roles), start=1):
            if loc.kind in (LocationKind.INDIRECT, LocationKind.DIRECT) and loc.dwarf_reg == _DWARF_RSP:
                kind = "Direct" if loc.kind is LocationKind.DIRECT else "Indirect"
                marks.setdefault(loc.offset, []).append(f"#{n} {role} ({kind})")
            elif loc.kind is LocationKind.REGISTER:
                in_registers.setdefault(loc.dwarf_reg, []).append(f"#{n} {role} (Register)")
    lines = [
        f"frame of @{frame.function.name} at a call (stack size {frame.stack_size})",
        f"{'':10}{'higher addresses':^{width + 2}}".rstrip(),
    ]
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
    if isinstance(frame, RegisterFrame):
        lines += _register_lines(frame, in_registers)
    return "\n".join(lines)


def _register_lines(frame: RegisterFrame, marks: dict[int, list[str]]) -> list[str]:
    """The values the allocation keeps in registers, one register per line, with the locations naming it."""
    holders: dict[str, list[str]] = {}
    for v in frame.allocation.values:
        reg = frame.allocation.register(v)
        if reg is not None:
            holders.setdefault(reg, []).append(f"%{v.name}")
    if not holders:
        return []
    lines = ["in registers (each holds these values, at different times):"]
    for reg, names in holders.items():
        note = ", ".join(marks.get(DWARF[reg], []))
        lines.append(f"  {reg:<4} {' '.join(names)}" + (f"  <- {note}" if note else ""))
    return lines
