"""Shapes shared by every table decoder of the x86 GC info: decoded entries and live states.

Each decoder returns, besides its high-level description, the list of `TableEntry` it read:
where the entry's bytes are in the blob, the running code offset after it, and the text gcdump
prints for it (``None`` for entries gcdump prints nothing for: skips, prefixes, non-pointer push
counts; their bytes are shown on the next printed line). The gcdump printer and the byte-explorer
widget are built on these entries only, so a decoder is the single source of what a byte means.

A pointer table answers "what is live at code offset N" with a `PtrTableState`: the registers
holding GC pointers, the pushed arguments holding GC pointers and how many bytes are pushed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

#: x86 register numbers as the fully interruptible table writes them (RRR), ESP never used.
REG_NAMES = ("EAX", "ECX", "EDX", "EBX", "ESP", "EBP", "ESI", "EDI")
REG_NUMBERS = {name: i for i, name in enumerate(REG_NAMES)}

#: what a decoded entry is: pointer-table entries (all three encodings), the header's bytes and the info
#: tables' (epilogs, no-GC regions, untracked slots, frame-variable lifetimes)
EntryKind = Literal[
    "reg-live",
    "reg-dead",
    "push",
    "push-non-ptr",
    "pop",
    "kill",
    "skip",
    "prefix",
    "end",
    "call",
    "this",
    "iptr",
    "shortcut",
    "fixup",
    "fixup2",
    "trailing",
    "method-size",
    "arg-tab-offset",
    "epilog",
    "no-gc-region",
    "untracked",
    "lifetime",
]


@dataclass(frozen=True)
class TableEntry:
    """One decoded entry: its bytes ``data[start:end]``, the code offset after it, its meaning."""

    start: int  # byte offset of the entry's first byte in the blob
    end: int  # byte offset just past the entry
    code_offset: int | None  # running code offset once the entry is applied (None: no code offset)
    kind: EntryKind
    text: str | None  # what gcdump prints after the bytes column; None = printed with the next line


@dataclass(frozen=True)
class PushedArg:
    """A pushed outgoing argument that holds a GC pointer at the queried offset.

    ``base`` says what ``offset`` counts from: ``"ESP"`` (partially interruptible tables:
    ``[ESP + offset]``) or ``"PENDING"`` (fully interruptible tables: slot ``offset`` counted
    from the first pushed argument, address ``pPendingArgFirst - 4*offset``).
    """

    base: str
    offset: int
    interior: bool = False


@dataclass(frozen=True)
class PtrTableState:
    """What a pointer table says at one code offset (the VM's scanArgRegTable(I) result)."""

    live_regs: frozenset[str] = frozenset()  # register names holding GC pointers
    interior_regs: frozenset[str] = frozenset()  # subset of live_regs holding interior pointers
    pushed_args: tuple[PushedArg, ...] = ()
    pushed_bytes: int = 0  # bytes pushed at this offset (ESP = initial ESP - pushed_bytes)
    this_reg: str | None = None  # register known to hold `this`, if the table says so
