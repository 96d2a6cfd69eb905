"""The fully interruptible pointer table of CoreCLR's x86 GC info (header bit `interruptible`).

A fully interruptible method must say what is live at *every* instruction, so its table is a
stream of small state changes, each moving a running code offset forward by a few bytes and
changing one thing: a register starts or stops holding a GC pointer, an outgoing argument is
pushed or popped, or the pushed pointers of a caller-pop call die. The running offset starts at 0;
the table ends with 0xFF.

    byte            meaning                                              delta
    00RRRDDD        register RRR stops holding a GC pointer              DDD
    01RRRDDD        register RRR starts holding a GC pointer             DDD
    10SSSDDD        push a GC pointer into argument slot SSS (0..5)      DDD
    10110DDD  B0    push one non-pointer DWORD                           DDD
    10111000  B8 u  skip u code bytes                                    u
    10111100  BC    prefix: the next reg-live / push is `this`
    10111111  BF    prefix: the next reg-live / push is an interior pointer (byref)
    11000DDD  C0    little skip                                          DDD
    11CCCDDD        pop CCC (1..5) argument DWORDs                       DDD
    11110BBB  F0    bigger skip of (BBB+1)*8 bytes (8..64)               8..64
    F8 u            push a GC pointer into argument slot u (u >= 6)
    F9 u            u non-pointer pushes (read by every decoder, written by no JIT)
    FC u            pop u argument DWORDs (u >= 6)
    FD u            kill: the top u pushed *pointers* die but stay on the stack
    FF              end
    B9-BB BD BE FA FB FE   invalid

Registers RRR: EAX 0, ECX 1, EDX 2, EBX 3, (ESP 4 is reserved), EBP 5, ESI 6, EDI 7.

Argument slots count DWORDs from the bottom of the outgoing argument area: slot 0 is the first
DWORD pushed, so a push's slot is the stack depth before it. With *full argument info* (modern
CoreCLR, every frame type) every push and pop is recorded and a pop of n removes the top n
DWORDs. With *partial argument info* (classic Windows x86 EBP frames) only pointer pushes were
recorded and a pop of n removes the top n *pointers*; `scan` supports both via a keyword.

`encode_table` writes the bytes CoreCLR's JIT writes: per event it first turns a code delta of
8..71 into one bigger skip (keeping the low 3 bits), a delta above 71 into a B8 skip, then uses
the short form when the count or slot is below 6; kills and large pushes/pops get their delta
from a C0 little skip. At one offset, registers going dead come first, then registers going live,
each in register-number order; only the first byte of such a run carries the delta. gcdump text
follows gcdumpx86.cpp: EBP frames print ``pop  n ptrs`` and ESP frames ``pop  n args (depth)``.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import DecodeError
from .codecs import U32_MAX, GCInfoEncodeError, encode_unsigned
from .entries import REG_NAMES, REG_NUMBERS, TableEntry
from .header import InfoHdr
from .ptrtab_full_ops import ESP_NUMBER, MAX_PTRARG_OFS, InvalidTable, read_ops, register_number
from .ptrtab_full_scan import scan

# --------------------------------------------------------------------------- description


@dataclass(frozen=True)
class RegLive:
    """At `offset`, register `reg` starts holding a GC pointer (interior: a byref; this: `this`)."""

    offset: int
    reg: str
    interior: bool = False
    this: bool = False


@dataclass(frozen=True)
class RegDead:
    """At `offset`, register `reg` stops holding a GC pointer."""

    offset: int
    reg: str


@dataclass(frozen=True)
class PushPtr:
    """At `offset` a GC pointer has been pushed into outgoing argument slot `slot`.

    `this` is written as a 0xBC prefix and printed by gcdump, but the VM ignores it for pushes
    and the JIT only marks registers with it.
    """

    offset: int
    slot: int
    interior: bool = False
    this: bool = False


@dataclass(frozen=True)
class PushNonPtr:
    """At `offset` `count` non-pointer DWORDs have been pushed (the JIT records one at a time)."""

    offset: int
    count: int = 1


@dataclass(frozen=True)
class Pop:
    """At `offset` `count` argument DWORDs (full arg info) or pointers (partial) were popped."""

    offset: int
    count: int


@dataclass(frozen=True)
class Kill:
    """At `offset` the top `count` pushed pointers die but stay on the stack (caller-pop call)."""

    offset: int
    count: int


FullEvent = RegLive | RegDead | PushPtr | PushNonPtr | Pop | Kill
_REG_EVENTS = (RegLive, RegDead)
_EVENT_TYPES = (RegLive, RegDead, PushPtr, PushNonPtr, Pop, Kill)


@dataclass(frozen=True)
class FullTable:
    """A fully interruptible pointer table: its state changes in code-offset order."""

    events: tuple[FullEvent, ...] = ()


def canonical(table: FullTable) -> FullTable:
    """The table with each same-offset run of register events in the encoder's order.

    Dead registers come first, then live ones, each by register number, which is the order the
    JIT writes and `decode_table` returns for encoder-produced bytes.
    """
    out: list[FullEvent] = []
    run: list[FullEvent] = []

    def flush() -> None:
        run.sort(key=lambda e: (isinstance(e, RegLive), REG_NUMBERS.get(getattr(e, "reg", ""), 99)))
        out.extend(run)
        run.clear()

    for event in table.events:
        if isinstance(event, _REG_EVENTS) and (not run or run[0].offset == event.offset):
            run.append(event)
            continue
        flush()
        if isinstance(event, _REG_EVENTS):
            run.append(event)
        else:
            out.append(event)
    flush()
    return FullTable(tuple(out))


def _canonical_if_same_meaning(table: FullTable) -> FullTable:
    """`canonical(table)` unless a same-offset run names one register twice (live, then dead at the
    same offset: the order matters there, and the JIT never writes it), in which case byte order.

    Registers changing at one offset are independent of each other, so sorting such a run keeps the
    table's meaning; decoding to the canonical order makes ``decode(encode(decode(b)))`` equal
    ``decode(b)`` for bytes the JIT would not have ordered that way."""
    run_regs: list[str] = []
    run_at: int | None = None
    for event in table.events:
        if isinstance(event, _REG_EVENTS):
            if event.offset != run_at:
                run_regs, run_at = [], event.offset
            if event.reg in run_regs:
                return table
            run_regs.append(event.reg)
        else:
            run_regs, run_at = [], None
    return canonical(table)


# --------------------------------------------------------------------------- consistency


class _Checker:
    """The mode-independent rules every table must keep (the VM asserts them).

    Registers must alternate live/dead; slots stay below MAX_PTRARG_OFS; kills and pops name at
    least one item. ESP frames always have full argument info, so there a push must land on the
    current depth and a pop cannot remove more than is pushed.
    """

    def __init__(self, ebp_frame: bool) -> None:
        self.ebp_frame = ebp_frame
        self.live = 0
        self.depth = 0

    def reg(self, regnum: int, live: bool) -> None:
        bit = 1 << regnum
        name = REG_NAMES[regnum]
        if regnum == ESP_NUMBER:
            raise InvalidTable("register ESP (RRR=100) is reserved")
        if live and self.live & bit:
            raise InvalidTable(f"register {name} becomes live but already holds a GC pointer")
        if not live and not self.live & bit:
            raise InvalidTable(f"register {name} becomes dead but holds no GC pointer")
        self.live ^= bit

    def push(self, slot: int) -> None:
        if slot + 1 >= MAX_PTRARG_OFS:
            raise InvalidTable(f"argument slot {slot} is deeper than the VM's {MAX_PTRARG_OFS}-slot limit")
        if not self.ebp_frame:
            if slot != self.depth:
                raise InvalidTable(f"push into slot {slot} but {self.depth} DWORDs are pushed (ESP frame)")
            self.depth = slot + 1

    def push_non_ptr(self, count: int) -> None:
        if count < 1:
            raise InvalidTable("non-pointer push of zero DWORDs")
        if not self.ebp_frame:
            self.depth += count
            if self.depth >= MAX_PTRARG_OFS:
                raise InvalidTable(f"{self.depth} pushed DWORDs exceed the VM's {MAX_PTRARG_OFS}-slot limit")

    def pop(self, count: int) -> None:
        if count < 1:
            raise InvalidTable("pop of zero items")
        if not self.ebp_frame:
            if count > self.depth:
                raise InvalidTable(f"pop of {count} DWORDs but only {self.depth} are pushed (ESP frame)")
            self.depth -= count

    def kill(self, count: int) -> None:
        if count < 1:
            raise InvalidTable("kill of zero pointers")


# --------------------------------------------------------------------------- encode


def _check_count(value: int, what: str) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= U32_MAX:
        raise GCInfoEncodeError(f"{what} must be an integer in 0..0xFFFFFFFF, got {value!r}")


def encode_table(table: FullTable, hdr: InfoHdr) -> bytes:
    """The bytes CoreCLR's JIT writes for `table` (canonicalised), terminated by 0xFF."""
    if not isinstance(table, FullTable):
        raise GCInfoEncodeError(f"expected a FullTable, got {type(table).__name__}")
    for index, event in enumerate(table.events):
        if not isinstance(event, _EVENT_TYPES):
            raise GCInfoEncodeError(f"event {index}: not a fully interruptible table event: {event!r}")
    out = bytearray()
    last = 0
    checker = _Checker(hdr.ebp_frame)
    for index, event in enumerate(canonical(table).events):
        where = f"event {index} ({type(event).__name__} at offset {getattr(event, 'offset', '?')})"
        _check_count(event.offset, f"{where}: offset")
        if event.offset < last:
            raise GCInfoEncodeError(f"{where}: offsets must not decrease (previous {last:#x})")
        try:
            _encode_event(out, event, event.offset - last, checker)
        except InvalidTable as e:
            raise GCInfoEncodeError(f"{where}: {e}") from None
        last = event.offset
    out.append(0xFF)
    return bytes(out)


def _encode_event(out: bytearray, event: FullEvent, delta: int, checker: _Checker) -> None:
    """Append one event's bytes; `delta` is its distance from the previous event."""
    if isinstance(event, PushNonPtr) and event.count != 1:
        raise InvalidTable("the JIT records one non-pointer push per event (0xF9 multi-pushes are never written)")
    if 8 <= delta <= 71:
        bigger = delta - (delta & 7)
        out.append(0xF0 | ((bigger - 8) >> 3))
        delta &= 7
    elif delta > 7:
        out.append(0xB8)
        out += encode_unsigned(delta)
        delta = 0

    def prefixes(interior: bool, this: bool) -> None:
        if interior:
            out.append(0xBF)
        if this:
            out.append(0xBC)

    if isinstance(event, (RegLive, RegDead)):
        regnum = register_number(event.reg)
        live = isinstance(event, RegLive)
        checker.reg(regnum, live)
        if isinstance(event, RegLive):
            prefixes(event.interior, event.this)
        out.append((0x40 if live else 0x00) | regnum << 3 | delta)
    elif isinstance(event, PushNonPtr):
        checker.push_non_ptr(1)
        out.append(0xB0 | delta)
    elif isinstance(event, Kill):
        _check_count(event.count, "kill count")
        checker.kill(event.count)
        if delta:
            out.append(0xC0 | delta)
        out.append(0xFD)
        out += encode_unsigned(event.count)
    elif isinstance(event, (PushPtr, Pop)):
        push = isinstance(event, PushPtr)
        n = event.slot if isinstance(event, PushPtr) else event.count
        _check_count(n, "push slot" if push else "pop count")
        if push:
            checker.push(n)
        else:
            checker.pop(n)
        interior, this = (event.interior, event.this) if isinstance(event, PushPtr) else (False, False)
        if n < 6:
            prefixes(interior, this)
            out.append(0x80 | (0 if push else 0x40) | n << 3 | delta)
        else:
            if delta:
                out.append(0xC0 | delta)
            prefixes(interior, this)
            out.append(0xF8 if push else 0xFC)
            out += encode_unsigned(n)
    else:
        raise InvalidTable(f"not a fully interruptible table event: {event!r}")


# --------------------------------------------------------------------------- decode


def _s32(value: int) -> int:
    """`value` as C's ``%d`` prints an unsigned 32-bit counter."""
    value &= U32_MAX
    return value - (1 << 32) if value & 0x8000_0000 else value


def decode_table(data: bytes, offset: int, hdr: InfoHdr) -> tuple[FullTable, list[TableEntry], int]:
    """Decode the table at `offset` up to its 0xFF: description, entries with gcdump text, end."""
    events: list[FullEvent] = []
    entries: list[TableEntry] = []
    checker = _Checker(hdr.ebp_frame)
    shown = 0  # gcdump's running argument count (printed for ESP frames and non-pointer pushes)
    end = offset
    for op in read_ops(data, offset):
        at = op.after
        text: str | None = None
        head = f"{at:04X}        "
        marks = (" 'this'" if op.this else "") + (" (iptr)" if op.interior else "")
        try:
            if op.kind in ("reg-live", "reg-dead"):
                live = op.kind == "reg-live"
                checker.reg(op.value, live)
                name = REG_NAMES[op.value]
                events.append(RegLive(at, name, op.interior, op.this) if live else RegDead(at, name))
                text = f"{head}reg {name} becoming {'live' if live else 'dead'}{marks}"
            elif op.kind == "push":
                checker.push(op.value)
                events.append(PushPtr(at, op.value, op.interior, op.this))
                text = f"{head}push ptr {op.value:2d}"
                if not hdr.ebp_frame:
                    shown = op.value + 1
                    text += f"  ({_s32(shown)})"
                text += marks
            elif op.kind == "push-non-ptr":
                checker.push_non_ptr(op.value)
                events.append(PushNonPtr(at, op.value))
                shown += op.value
                if op.value == 1 and data[op.start] != 0xF9:
                    text = f"{head}push non-ptr ({_s32(shown)})"
            elif op.kind == "pop":
                checker.pop(op.value)
                events.append(Pop(at, op.value))
                if hdr.ebp_frame:
                    text = f"{head}pop {op.value:2d} ptrs"
                else:
                    shown -= op.value
                    text = f"{head}pop {op.value:2d} args ({_s32(shown)})"
            elif op.kind == "kill":
                checker.kill(op.value)
                events.append(Kill(at, op.value))
                text = f"{head}kill args {op.value:2d}"
        except InvalidTable as e:
            raise DecodeError(op.start, str(e)) from None
        entries.append(TableEntry(op.start, op.end, at, op.kind, text))
        end = op.end
    return _canonical_if_same_meaning(FullTable(tuple(events))), entries, end


__all__ = [
    "MAX_PTRARG_OFS",
    "FullEvent",
    "FullTable",
    "Kill",
    "Pop",
    "PushNonPtr",
    "PushPtr",
    "RegDead",
    "RegLive",
    "canonical",
    "decode_table",
    "encode_table",
    "scan",
]
