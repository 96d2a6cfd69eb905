"""Call frame information (CFI) from ``.eh_frame``: where each frame keeps its caller's registers.

A function compiled by llc describes its prologue in DWARF CFI. For every code offset the
rules say where the Canonical Frame Address is (the caller's ``rsp`` before the ``call``
pushed the return address) and where each callee-saved register of the caller was saved::

    higher addresses
    | caller's frame ...      |
    +-------------------------+  <- CFA = rsp + 32 inside the body below
    | return address          |     RIP = [CFA - 8]
    | caller's r15            |     r15 = [CFA - 16]   (push %r15)
    | caller's r14            |     r14 = [CFA - 24]   (push %r14)
    | caller's rbx            |     rbx = [CFA - 32]   (push %rbx)
    +-------------------------+  <- rsp at a call in the body

A register without a rule keeps its value ("same value"): the function never touched it,
so the caller's value is wherever the function's own value is.

In a relocatable object the start address of each FDE (Frame Description Entry) is a
PC-relative field with a relocation against a section symbol; the loader resolves it to the
placed function address and hands it here, so rows carry absolute addresses.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from dataclasses import dataclass

from gctoy.errors import DecodeError

EH_FRAME = ".eh_frame"
DWARF_RSP = 7
DWARF_RBP = 6
# SysV x86-64: the registers a callee must preserve (DWARF numbers -> names).
CALLEE_SAVED = {3: "rbx", 6: "rbp", 12: "r12", 13: "r13", 14: "r14", 15: "r15"}


@dataclass(frozen=True)
class UnwindRow:
    """The CFI rules in force from ``start`` (absolute) to the next row or the function's end."""

    start: int
    cfa_register: int | None  # DWARF number; None when the CFA is a DWARF expression
    cfa_offset: int
    saved: tuple[tuple[int, int], ...]  # (DWARF register, offset from the CFA of its save slot)
    unfollowable: tuple[int, ...] = ()  # callee-saved registers whose rule is not "saved at CFA+n"


@dataclass(frozen=True)
class FunctionUnwind:
    """The CFI rows of one function (one FDE), covering ``[start, end)``."""

    start: int
    end: int
    rows: tuple[UnwindRow, ...]

    def row_at(self, pc: int) -> UnwindRow:
        """The row in force at ``pc`` (which must lie in the function)."""
        index = bisect.bisect_right([r.start for r in self.rows], pc) - 1
        return self.rows[max(index, 0)]


@dataclass(frozen=True)
class UnwindTable:
    """Every function's CFI, sorted by address: code address -> the rules in force there."""

    functions: tuple[FunctionUnwind, ...]

    def function_at(self, pc: int) -> FunctionUnwind | None:
        """The function whose FDE covers ``pc``, if any."""
        index = bisect.bisect_right([f.start for f in self.functions], pc) - 1
        if index >= 0 and pc < self.functions[index].end:
            return self.functions[index]
        return None

    def lookup(self, pc: int) -> UnwindRow | None:
        """The row in force at ``pc``, or None when no FDE covers it."""
        fn = self.function_at(pc)
        return None if fn is None else fn.row_at(pc)


def _row(decoded_row: dict, start: int) -> UnwindRow:
    """One pyelftools table row (offsets relative to the FDE) as an absolute UnwindRow."""
    cfa = decoded_row["cfa"]
    saved: list[tuple[int, int]] = []
    unfollowable: list[int] = []
    for reg, rule in decoded_row.items():
        if not isinstance(reg, int) or reg not in CALLEE_SAVED:
            continue
        if rule.type == "OFFSET":
            saved.append((reg, rule.arg))
        elif rule.type != "SAME_VALUE":
            unfollowable.append(reg)
    return UnwindRow(
        start=start,
        cfa_register=None if cfa.expr is not None else cfa.reg,
        cfa_offset=cfa.offset or 0,
        saved=tuple(sorted(saved)),
        unfollowable=tuple(sorted(unfollowable)),
    )


def read_unwind_table(elf, fde_start: Callable[[int], int | None]) -> UnwindTable | None:
    """The ``.eh_frame`` of an ELF object as an UnwindTable; None when it has none.

    ``fde_start(offset)`` is the absolute start address of the FDE whose PC-begin field sits
    at ``offset`` in ``.eh_frame`` (resolved through the section's relocation), or None if no
    relocation names it.
    """
    from elftools.dwarf.callframe import FDE

    if elf.get_section_by_name(EH_FRAME) is None:
        return None
    # pyelftools reports malformed CFI through many exception types (its own, construct's,
    # ValueError, OverflowError...): each becomes one DecodeError.
    try:
        entries = list(elf.get_dwarf_info().EH_CFI_entries())
    except Exception as e:  # noqa: BLE001 - see above
        raise DecodeError(0, f"{EH_FRAME}: cannot parse the call frame information: {e}") from None
    functions: list[FunctionUnwind] = []
    for entry in entries:
        if not isinstance(entry, FDE):
            continue
        # An FDE: length (4 bytes), CIE pointer (4 bytes), then the PC-begin field.
        field_offset = entry.offset + 8
        start = fde_start(field_offset)
        if start is None:
            raise DecodeError(field_offset, f"{EH_FRAME}: FDE start address has no relocation")
        origin = entry.header["initial_location"]
        try:
            rows = tuple(_row(r, start + r["pc"] - origin) for r in entry.get_decoded().table)
        except Exception as e:  # noqa: BLE001 - as above
            raise DecodeError(entry.offset, f"{EH_FRAME}: cannot decode the FDE's instructions: {e}") from None
        if not rows:
            raise DecodeError(entry.offset, f"{EH_FRAME}: FDE without rules")
        functions.append(FunctionUnwind(start, start + entry.header["address_range"], rows))
    functions.sort(key=lambda f: f.start)
    return UnwindTable(tuple(functions))


def format_unwind_table(table: UnwindTable, names: dict[int, str] | None = None) -> str:
    """A readable listing: one line per row, like ``0x401005 build: CFA=rsp+32 rbx=[CFA-32]``."""
    names = names or {}
    lines = []
    for fn in table.functions:
        label = names.get(fn.start, f"{fn.start:#x}")
        for row in fn.rows:
            reg = row.cfa_register
            base = CALLEE_SAVED.get(reg, "rsp" if reg == DWARF_RSP else f"r#{reg}") if reg is not None else ""
            cfa = "expr" if reg is None else f"{base}+{row.cfa_offset}"
            saves = " ".join(f"{CALLEE_SAVED[r]}=[CFA{o:+d}]" for r, o in row.saved)
            lines.append(f"{row.start:#x} {label}+{row.start - fn.start:#x}: CFA={cfa}{' ' + saves if saves else ''}")
    return "\n".join(lines)
