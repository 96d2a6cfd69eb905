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
from typing import Iterator, Union

from ..errors import DecodeError, GCToyError
from .codecs import U32_MAX, GCInfoEncodeError, decode_unsigned, encode_unsigned
from .entries import REG_NAMES, REG_NUMBERS, PtrTableState, PushedArg, TableEntry
from .header import InfoHdr

#: The VM keeps pushed-argument bits in a 1024-bit vector; deeper stacks are fatal there.
MAX_PTRARG_OFS = 1024

_ESP = 4
_INVALID = frozenset({0xB9, 0xBA, 0xBB, 0xBD, 0xBE, 0xFA, 0xFB, 0xFE})


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


FullEvent = Union[RegLive, RegDead, PushPtr, PushNonPtr, Pop, Kill]
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
        run.sort(key=lambda e: (isinstance(e, RegLive), REG_NUMBERS.get(e.reg, 99)))
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


class _Invalid(Exception):
    """A rule of the format is broken; the caller turns it into DecodeError/GCInfoEncodeError."""


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
        if regnum == _ESP:
            raise _Invalid("register ESP (RRR=100) is reserved")
        if live and self.live & bit:
            raise _Invalid(f"register {name} becomes live but already holds a GC pointer")
        if not live and not self.live & bit:
            raise _Invalid(f"register {name} becomes dead but holds no GC pointer")
        self.live ^= bit

    def push(self, slot: int) -> None:
        if slot + 1 >= MAX_PTRARG_OFS:
            raise _Invalid(f"argument slot {slot} is deeper than the VM's {MAX_PTRARG_OFS}-slot limit")
        if not self.ebp_frame:
            if slot != self.depth:
                raise _Invalid(f"push into slot {slot} but {self.depth} DWORDs are pushed (ESP frame)")
            self.depth = slot + 1

    def push_non_ptr(self, count: int) -> None:
        if count < 1:
            raise _Invalid("non-pointer push of zero DWORDs")
        if not self.ebp_frame:
            self.depth += count
            if self.depth >= MAX_PTRARG_OFS:
                raise _Invalid(f"{self.depth} pushed DWORDs exceed the VM's {MAX_PTRARG_OFS}-slot limit")

    def pop(self, count: int) -> None:
        if count < 1:
            raise _Invalid("pop of zero items")
        if not self.ebp_frame:
            if count > self.depth:
                raise _Invalid(f"pop of {count} DWORDs but only {self.depth} are pushed (ESP frame)")
            self.depth -= count

    def kill(self, count: int) -> None:
        if count < 1:
            raise _Invalid("kill of zero pointers")


# --------------------------------------------------------------------------- byte stream


@dataclass(frozen=True)
class _Op:
    """One entry of the byte stream after prefixes were attached to their target."""

    start: int
    end: int
    before: int  # running code offset before the entry's delta
    after: int  # running code offset after it
    kind: str  # reg-live reg-dead push push-non-ptr pop kill skip prefix end
    value: int = 0  # register number, slot or count
    interior: bool = False
    this: bool = False


def _ops(data: bytes, offset: int) -> Iterator[_Op]:
    """Read entries lazily from `offset`, validating prefixes and opcodes; stops after 0xFF."""
    if offset < 0:
        raise DecodeError(0, f"pointer table offset {offset} is negative")
    pos = offset
    code = 0
    prefix_this = prefix_iptr = False
    prefix_start = -1
    while True:
        if pos >= len(data):
            raise DecodeError(pos, "pointer table runs past the end of the data (no 0xFF terminator)")
        start = pos
        b = data[pos]
        pos += 1
        value = 0
        delta = 0
        if b in _INVALID:
            raise DecodeError(start, f"invalid fully interruptible table opcode {b:#04x}")
        if b < 0x80:
            regnum = (b >> 3) & 7
            if regnum == _ESP:
                raise DecodeError(start, f"byte {b:#04x} names ESP (RRR=100), which is reserved")
            kind, value, delta = ("reg-live" if b & 0x40 else "reg-dead"), regnum, b & 7
        elif b == 0xFF:
            kind = "end"
        elif b in (0xBC, 0xBF):
            if (b == 0xBC and prefix_this) or (b == 0xBF and prefix_iptr):
                raise DecodeError(start, f"prefix {b:#04x} repeated")
            prefix_this |= b == 0xBC
            prefix_iptr |= b == 0xBF
            prefix_start = start if prefix_start < 0 else prefix_start
            yield _Op(start, pos, code, code, "prefix")
            continue
        elif b == 0xB8:
            delta, pos = decode_unsigned(data, pos)
            kind = "skip"
        elif 0xF0 <= b <= 0xF7:
            kind, delta = "skip", ((b & 7) + 1) * 8
        elif b in (0xF8, 0xF9, 0xFC, 0xFD):
            value, pos = decode_unsigned(data, pos)
            kind = {0xF8: "push", 0xF9: "push-non-ptr", 0xFC: "pop", 0xFD: "kill"}[b]
            if b == 0xFC and value == 0:
                kind = "skip"
            if b in (0xF9, 0xFD) and value == 0:
                raise DecodeError(start, f"{b:#04x} with a count of zero")
        else:
            slot, delta = (b >> 3) & 7, b & 7
            if b & 0x40:
                kind, value = ("pop", slot) if slot else ("skip", 0)
            elif slot == 6:
                kind, value = "push-non-ptr", 1
            else:
                kind, value = "push", slot
        if prefix_this or prefix_iptr:
            if kind not in ("reg-live", "push"):
                raise DecodeError(start, f"prefix at {prefix_start:#x} must precede a register going live or a pointer push")
        if code + delta > U32_MAX:
            raise DecodeError(start, "running code offset does not fit in 32 bits")
        yield _Op(start, pos, code, code + delta, kind, value, prefix_iptr, prefix_this)
        code += delta
        prefix_this = prefix_iptr = False
        prefix_start = -1
        if kind == "end":
            return


# --------------------------------------------------------------------------- encode


def _reg_number(reg: str) -> int:
    number = REG_NUMBERS.get(reg)
    if number is None or number == _ESP:
        raise GCInfoEncodeError(f"register {reg!r} cannot hold a tracked GC pointer (use one of EAX ECX EDX EBX EBP ESI EDI)")
    return number


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
        except _Invalid as e:
            raise GCInfoEncodeError(f"{where}: {e}") from None
        last = event.offset
    out.append(0xFF)
    return bytes(out)


def _encode_event(out: bytearray, event: FullEvent, delta: int, checker: _Checker) -> None:
    """Append one event's bytes; `delta` is its distance from the previous event."""
    if isinstance(event, PushNonPtr) and event.count != 1:
        raise _Invalid("the JIT records one non-pointer push per event (0xF9 multi-pushes are never written)")
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
        regnum = _reg_number(event.reg)
        live = isinstance(event, RegLive)
        checker.reg(regnum, live)
        if live:
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
        n = event.slot if push else event.count
        _check_count(n, "push slot" if push else "pop count")
        if push:
            checker.push(n)
        else:
            checker.pop(n)
        interior, this = (event.interior, event.this) if push else (False, False)
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
        raise _Invalid(f"not a fully interruptible table event: {event!r}")


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
    for op in _ops(data, offset):
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
        except _Invalid as e:
            raise DecodeError(op.start, str(e)) from None
        entries.append(TableEntry(op.start, op.end, at, op.kind, text))
        end = op.end
    return _canonical_if_same_meaning(FullTable(tuple(events))), entries, end


# --------------------------------------------------------------------------- scan


def scan(data: bytes, offset: int, hdr: InfoHdr, cur_offs: int, *, regs_offs: int | None = None,
         partial_arg_info: bool = False) -> PtrTableState:
    """What the table says is live at `cur_offs` (the VM's scanArgRegTableI).

    Keyword arguments:

    * ``regs_offs`` -- the offset used for registers (default `cur_offs`). The VM passes
      ``cur_offs - 1`` for frames that are not the active one (a caller waiting at a return
      address): registers are taken from *before* the call, because the instruction after a call
      that does not return can be a join point with other liveness. Must not exceed `cur_offs`.
    * ``partial_arg_info`` -- classic Windows x86 EBP frames recorded only pointer pushes: a pop
      then removes pointers rather than DWORDs and the pushed size is unknown (reported as 0).
      Modern CoreCLR always has full argument info (the default).

    Transitions *at* an offset are applied (entries are read while the running offset is at most
    the query). Pushed pointer arguments come back as ``PushedArg("PENDING", slot)``.

    Like the VM, a pop walks down from the slot of the last *single* push: 0xF9 (never written by
    a JIT) raises the depth without moving that marker, so a pop after it removes the slots below
    the marker, and a pop with no marker left raises `DecodeError` (the VM asserts).
    """
    regs_at = cur_offs if regs_offs is None else regs_offs
    if not 0 <= regs_at <= cur_offs:
        raise GCToyError(f"regs_offs {regs_offs} must lie in 0..cur_offs ({cur_offs})")
    ptr_regs = iptr_regs = 0
    this_reg: int | None = None
    ptr_args: dict[int, bool] = {}  # slot -> interior
    arg_cnt = 0
    arg_high = -1  # slot of the top of the stack as the VM tracks it (-1: none)
    for op in _ops(data, offset):
        if op.before > cur_offs or op.kind == "end":
            break
        if op.after > cur_offs and op.kind != "skip":
            break
        try:
            if op.kind in ("reg-live", "reg-dead"):
                if op.after > regs_at:
                    continue
                bit = 1 << op.value
                name = REG_NAMES[op.value]
                if op.kind == "reg-live":
                    if ptr_regs & bit:
                        raise _Invalid(f"register {name} becomes live but already holds a GC pointer")
                    ptr_regs |= bit
                    if op.this:
                        this_reg = op.value
                    if op.interior:
                        iptr_regs |= bit
                else:
                    if not ptr_regs & bit:
                        raise _Invalid(f"register {name} becomes dead but holds no GC pointer")
                    ptr_regs &= ~bit
                    iptr_regs &= ~bit
                    if this_reg == op.value:
                        this_reg = None
            elif op.kind == "push":
                if op.value + 1 >= MAX_PTRARG_OFS:
                    raise _Invalid(f"argument slot {op.value} is deeper than the VM's {MAX_PTRARG_OFS}-slot limit")
                if not partial_arg_info and op.value != arg_cnt:
                    raise _Invalid(f"push into slot {op.value} but {arg_cnt} DWORDs are pushed")
                if op.value in ptr_args:
                    raise _Invalid(f"argument slot {op.value} already holds a pushed pointer")
                arg_cnt = op.value + 1
                arg_high = op.value
                ptr_args[op.value] = op.interior
            elif op.kind == "push-non-ptr":
                if op.value == 1 and data[op.start] != 0xF9:
                    if partial_arg_info:
                        raise _Invalid("non-pointer push in a table with partial argument info")
                    arg_high = arg_cnt
                arg_cnt += op.value
                if arg_cnt >= MAX_PTRARG_OFS:
                    raise _Invalid(f"{arg_cnt} pushed DWORDs exceed the VM's {MAX_PTRARG_OFS}-slot limit")
            elif op.kind == "pop":
                arg_cnt, arg_high = _pop(ptr_args, arg_cnt, arg_high, op.value, partial_arg_info)
            elif op.kind == "kill":
                arg_high = _kill(ptr_args, arg_cnt, arg_high, op.value, partial_arg_info)
        except _Invalid as e:
            raise DecodeError(op.start, str(e)) from None
    return PtrTableState(
        live_regs=_names(ptr_regs),
        interior_regs=_names(iptr_regs),
        pushed_args=tuple(PushedArg("PENDING", s, i) for s, i in sorted(ptr_args.items())),
        pushed_bytes=0 if partial_arg_info else arg_cnt * 4,
        this_reg=None if this_reg is None else REG_NAMES[this_reg],
    )


def _names(mask: int) -> frozenset[str]:
    return frozenset(REG_NAMES[r] for r in range(8) if mask >> r & 1)


def _pop(ptr_args: dict[int, bool], arg_cnt: int, arg_high: int, count: int, partial: bool) -> tuple[int, int]:
    """Apply a pop of `count` the way the VM walks down from the top slot; returns (argCnt, argHigh).

    Full info: the `count` slots from the top down are removed, pointers or not. Partial info:
    slots are walked down until `count` pointers were removed, every non-pointer slot passed
    lowers the count of pushed DWORDs, and the top is left on the next lower pointer.
    """
    if count > arg_cnt:
        raise _Invalid(f"pop of {count} but only {arg_cnt} argument DWORDs are pushed")
    arg_cnt -= count
    if not partial:
        if arg_high - count + 1 < 0:
            raise _Invalid(f"pop of {count} walks below the first pushed argument")
        for slot in [s for s in ptr_args if arg_high - count < s <= arg_high]:
            del ptr_args[slot]
        return arg_cnt, arg_high - count
    below = sorted((s for s in ptr_args if s <= arg_high), reverse=True)
    if len(below) < count:
        raise _Invalid(f"pop of {count} pointers but only {len(below)} pointers are pushed")
    removed = below[:count]
    arg_cnt -= (arg_high - removed[-1] + 1) - count
    for slot in removed:
        del ptr_args[slot]
    arg_high = removed[-1] - 1
    lower = [s for s in ptr_args if s <= arg_high]
    target = max(lower) if lower else -1
    arg_cnt -= arg_high - target
    if arg_cnt < 0:
        raise _Invalid("pop leaves a negative number of pushed arguments")
    return arg_cnt, target


def _kill(ptr_args: dict[int, bool], arg_cnt: int, arg_high: int, count: int, partial: bool) -> int:
    """Kill the top `count` pointers at or below slot `arg_cnt`; returns the VM's new argHigh."""
    if count > arg_cnt:
        raise _Invalid(f"kill of {count} pointers but only {arg_cnt} argument DWORDs are pushed")
    below = sorted((s for s in ptr_args if s <= arg_cnt), reverse=True)
    if len(below) < count:
        raise _Invalid(f"kill of {count} pointers but only {len(below)} pointers are pushed")
    for slot in below[:count]:
        del ptr_args[slot]
    if not partial:
        return arg_high
    lower = [s for s in ptr_args if s < below[count - 1]]
    return max(lower) if lower else -1
