"""The partially interruptible pointer table of an EBP-less frame (``interruptible = 0``, ``ebpFrame = 0``).

Without a frame pointer, locals live at offsets from the *initial* ESP, so the unwinder must know
how many bytes of outgoing arguments are pushed at any code offset. This table therefore records
every push and pop, and the *interesting* call sites (something live in a callee-saved register,
or a pending pointer argument, or a callee that pops arguments). A code offset without a call
entry is a "boring" call site: nothing live. The running code offset starts at 0; 0xFF ends it.

    byte                    meaning                                              code delta
    000DDDDD                push one DWORD                                       D
    00100000 u              push u DWORDs (read by the VM, never written)        0
    01000000 u              skip                                                 u
    0100DDDD                small skip (a call's first delta part)               D
    01CCDDDD  CC=1..3       pop CC DWORDs (also: a call popping CC, no pointers) D
    1PPPPPPP  P=0..79       call pattern P: argCnt, regMask, argMask, delta      table
    1101RRRR DDCCCMMM       call: regs RRRR, argCnt CCC, argMask MMM             {6,8,10,12}[DD]
    1110RRRR u u            call: regs RRRR, argCnt u, argMask u                 0
    11110000 u              interior mask for the next call: low 4 bits regs, the rest args
    111101RR                `this` is in EDI / ESI / EBX / EBP
    11111000 b DW DW DW DW  "fat" call: b = PBSDpbsd, delta, argCnt, count, byte size,
                            then count Unsigned ESP offsets of pending pointers (bit 0: interior)
    11111111                end
    0x21-0x3F, 0xF1-0xF3, 0xF9-0xFE: reserved

Register masks use bits EDI 1, ESI 2, EBX 4, EBP 8. ``argMask`` bit i is the pending argument at
``[ESP + 4*i]`` *after* the call returned and popped its own ``argCnt`` DWORDs -- the arguments
pushed for an outer call that is still being set up::

        push eax         ; a pointer argument for f       pending: [a]
        push 5           ; ... and an int                 pending: [a, 5]
        call g           ; g takes nothing                at g's return: [ESP+0]=5, [ESP+4]=a
                         ;                                -> argMask = 0b10
        push ebx         ; g's result, a pointer          pending: [a, 5, r]
        call f           ; f pops 3 (argCnt 3)            pending: [] -> argMask 0

The description (`EspTable`) is what the JIT knows: pushes (pointer or not), pops, *kills* (the
pointers of a caller-pop call die but stay on the stack -- no bytes), call sites with their
``argCnt`` and live callee-saved registers, and `this`. `encode_table` models the pending pushes
the way the JIT does (``PendingArgsStack``) to derive each call's masks, then picks the form in
the JIT's order: an uninteresting call (fewer than 4 args popped, nothing live) becomes a pop or
a small skip; else a call pattern (after a skip of the remainder); else the ``D0`` form; else
``E0``; more than 32 pending DWORDs with pointers among them need the fat ``F8`` form.

The bytes cannot say whether a pushed DWORD was a pointer until a call reports it, so
`decode_table` returns the canonical description (`canonical` of what was encoded): a push is a
pointer iff some call reports it; a kill sits right after the last call that still reported the
pointers it kills; a call that reports nothing and pops one DWORD is a `Pop`; a call that reports
nothing, pops nothing and has no code delta is gone, and so is one whose small skip the next
call's encoding would start with anyway. Reserved codes are a `DecodeError` there; `scan`
follows the release VM by default (0x21-0x3F read as 0x20, 0xF1-0xF3 as 0xF0, 0xF9-0xFB as 0xF8,
0xFC-0xFE end the table), or rejects them with ``strict=True``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union

from ..errors import DecodeError
from .codecs import U32_MAX, GCInfoEncodeError, decode_dword, decode_unsigned, encode_dword, encode_unsigned
from .entries import TableEntry
from .header import InfoHdr
from .tables import CALL_COMMON_DELTA, CALL_PATTERN_TABLE

#: Callee-saved registers by mask bit (bit 0 = EDI) and by the RR field of 0xF4-0xF7.
CALLEE_SAVED = ("EDI", "ESI", "EBX", "EBP")
#: Pending DWORDs this reader accepts (a bound of gctoy, not of the format: the JIT's deepest
#: outgoing-argument area is far smaller, and it keeps decoding of hostile bytes cheap).
MAX_PENDING = 4096
#: Pending DWORDs that fit the 32-bit argMask; deeper stacks with pointers use the fat form.
MASK_BITS = 32

_PATTERNS = tuple((v & 0xFF, (v >> 8) & 0xFF, (v >> 16) & 0xFF, v >> 24) for v in CALL_PATTERN_TABLE)


# --------------------------------------------------------------------------- description


@dataclass(frozen=True)
class Push:
    """At `offset`, one DWORD is pushed: a GC pointer if `gc` (an interior one if `interior`)."""

    offset: int
    gc: bool = False
    interior: bool = False


@dataclass(frozen=True)
class Pop:
    """At `offset`, `count` DWORDs are popped (``add esp, 4*count`` or ``pop reg``)."""

    offset: int
    count: int = 1


@dataclass(frozen=True)
class Kill:
    """At `offset`, the top `count` pending *pointers* die but stay on the stack (caller-pop calls)."""

    offset: int
    count: int


@dataclass(frozen=True)
class Call:
    """A call returning at `offset` that pops `arg_cnt` DWORDs; `regs` hold GC pointers across it."""

    offset: int
    arg_cnt: int = 0
    regs: tuple[str, ...] = ()
    interior_regs: tuple[str, ...] = ()


@dataclass(frozen=True)
class ThisReg:
    """From here on `this` is known to be in `reg` (EDI, ESI, EBX or EBP)."""

    offset: int
    reg: str


EspEvent = Union[Push, Pop, Kill, Call, ThisReg]
_EVENT_TYPES = (Push, Pop, Kill, Call, ThisReg)


@dataclass(frozen=True)
class EspTable:
    """An EBP-less partially interruptible pointer table: its events in code-offset order."""

    events: tuple[EspEvent, ...] = ()


# --------------------------------------------------------------------------- byte-level operations


@dataclass(frozen=True)
class _Op:
    """One thing the bytes say: a push, a pop-like entry (CC 0..3), a call or `this`."""

    kind: str  # "push" | "pop" | "call" | "this"
    offset: int  # code offset (for "this": unused)
    count: int = 0  # pop: CC; this: register index
    arg_cnt: int = 0
    regs: int = 0
    iregs: int = 0
    args: tuple[tuple[int, bool], ...] = ()  # live pending DWORDs: (index from ESP, interior)
    fat: bool = False
    at: int = field(default=0, compare=False)  # byte offset of the entry (for error messages)


class _Invalid(Exception):
    """A rule of the format is broken; callers turn it into DecodeError or GCInfoEncodeError."""


def _mask(names: tuple[str, ...], what: str) -> int:
    if not isinstance(names, tuple):
        raise _Invalid(f"{what} must be a tuple of register names, got {names!r}")
    mask = 0
    for name in names:
        if name not in CALLEE_SAVED:
            raise _Invalid(f"{what}: {name!r} is not a callee-saved register (EDI, ESI, EBX, EBP)")
        mask |= 1 << CALLEE_SAVED.index(name)
    return mask


def _names(mask: int) -> tuple[str, ...]:
    return tuple(name for i, name in enumerate(CALLEE_SAVED) if mask >> i & 1)


def _count(value: object, what: str, low: int = 0) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= U32_MAX:
        raise _Invalid(f"{what} must be an integer in {low}..0xFFFFFFFF, got {value!r}")
    return value


def _lower(table: EspTable) -> list[_Op]:
    """The JIT's walk over its records: model the pending pushes and turn each record into ops.

    The model is a list of pending DWORDs, the last one the most recently pushed (``[ESP]``),
    each 0 (not a pointer, or a killed one), 1 (pointer) or 2 (interior pointer).
    """
    if not isinstance(table, EspTable):
        raise GCInfoEncodeError(f"expected an EspTable, got {type(table).__name__}")
    pending: list[int] = []
    ops: list[_Op] = []
    last = 0
    for index, event in enumerate(table.events):
        where = f"event {index} ({type(event).__name__} at offset {getattr(event, 'offset', '?')})"
        try:
            if not isinstance(event, _EVENT_TYPES):
                raise _Invalid("not an EBP-less pointer-table event")
            off = _count(event.offset, "offset")
            if off < last:
                raise _Invalid(f"offsets must not decrease (previous {last:#x})")
            last = off
            if isinstance(event, Push):
                if event.interior and not event.gc:
                    raise _Invalid("an interior push must also be gc")
                if len(pending) >= MAX_PENDING:
                    raise _Invalid(f"more than {MAX_PENDING} pending DWORDs")
                pending.append(2 if event.interior else 1 if event.gc else 0)
                ops.append(_Op("push", off))
            elif isinstance(event, Pop):
                if _count(event.count, "count", 1) > len(pending):
                    raise _Invalid(f"pops {event.count} DWORDs but only {len(pending)} are pending")
                for _ in range(event.count):
                    pending.pop()
                    ops.append(_Op("pop", off, 1))
            elif isinstance(event, Kill):
                alive = sum(1 for kind in pending if kind)
                if _count(event.count, "count", 1) > alive:
                    raise _Invalid(f"kills {event.count} pointers but only {alive} are pending")
                _kill(pending, event.count)
            elif isinstance(event, ThisReg):
                if event.reg not in CALLEE_SAVED:
                    raise _Invalid(f"`this` can only be named in EDI, ESI, EBX or EBP, not {event.reg!r}")
                ops.append(_Op("this", off, CALLEE_SAVED.index(event.reg)))
            else:
                ops.append(_lower_call(event, off, pending))
        except _Invalid as e:
            raise GCInfoEncodeError(f"{where}: {e}") from None
    return ops


def _kill(pending: list[int], count: int) -> None:
    """The JIT's ``pasKill``: the `count` most recently pushed live pointers become non-pointers."""
    for i in range(len(pending) - 1, -1, -1):
        if count and pending[i]:
            pending[i] = 0
            count -= 1


def _lower_call(call: Call, off: int, pending: list[int]) -> _Op:
    arg_cnt = _count(call.arg_cnt, "arg_cnt")
    if arg_cnt > len(pending):
        raise _Invalid(f"pops {arg_cnt} argument DWORDs but only {len(pending)} are pending")
    regs = _mask(call.regs, "regs")
    iregs = _mask(call.interior_regs, "interior_regs")
    if iregs & ~regs:
        raise _Invalid("interior_regs must be a subset of regs")
    del pending[len(pending) - arg_cnt:]
    args = tuple((i, kind == 2) for i, kind in enumerate(reversed(pending)) if kind)
    if arg_cnt < 4 and not regs and not args:
        return _Op("pop", off, arg_cnt)  # nothing to report: the pop encoding (or a bare skip)
    fat = len(pending) > MASK_BITS and bool(args)  # deep, with pointers: no 32-bit mask will do
    if not fat and any(i >= 28 for i, interior in args if interior):
        raise _Invalid("an interior pending pointer beyond [ESP+0x6C] does not fit the 32-bit iptr mask")
    return _Op("call", off, 0, arg_cnt, regs, iregs, args, fat)


# --------------------------------------------------------------------------- ops -> bytes


def _skip(delta: int) -> bytes:
    """A skip the JIT writes before a call: ``0100DDDD`` below 16, else ``40`` + Unsigned."""
    return bytes([0x40 | delta]) if delta < 16 else b"\x40" + encode_unsigned(delta)


def _lookup_pattern(arg_cnt: int, regs: int, arg_mask: int, delta: int) -> tuple[int, int] | None:
    """The JIT's ``LookupCallPattern``: (row, remaining delta) for an exact or the nearest row."""
    if arg_cnt > 2 or arg_mask != 0:
        return None
    best = None
    for row, (cnt, rmask, amask, rdelta) in enumerate(_PATTERNS):
        if (cnt, rmask, amask) != (arg_cnt, regs, arg_mask):
            continue
        if rdelta == delta:
            return row, 0
        rest = (delta - rdelta) & U32_MAX
        if rest < 0xFF and (best is None or rest < best[1]):
            best = (row, rest)
    return best


def _call_bytes(op: _Op, delta: int) -> bytes:
    """The bytes of one interesting call `delta` bytes after the previous entry."""
    if op.fat:
        offs = b"".join(encode_unsigned(4 * i | interior) for i, interior in op.args)
        return (bytes([0xF8, op.iregs << 4 | op.regs]) + encode_dword(delta) + encode_dword(op.arg_cnt)
                + encode_dword(len(op.args)) + encode_dword(len(offs)) + offs)
    arg_mask = sum(1 << i for i, _ in op.args)
    iarg_mask = sum(1 << i for i, interior in op.args if interior)
    iptr = b"\xF0" + encode_unsigned(iarg_mask << 4 | op.iregs) if op.iregs or iarg_mask else b""
    found = _lookup_pattern(op.arg_cnt, op.regs, arg_mask, delta)
    if found is not None:
        row, rest = found
        return (_skip(rest) if rest else b"") + iptr + bytes([0x80 | row])
    if op.arg_cnt <= 7 and arg_mask <= 7:
        lead, dd = b"", None
        if delta > CALL_COMMON_DELTA[3]:
            lead, dd = _skip(delta - CALL_COMMON_DELTA[3]), 3
        elif delta in CALL_COMMON_DELTA:
            dd = CALL_COMMON_DELTA.index(delta)
        elif CALL_COMMON_DELTA[0] < delta < CALL_COMMON_DELTA[3]:
            lead, dd = bytes([0x40 | delta - CALL_COMMON_DELTA[0]]), 0
        if dd is not None:
            return lead + iptr + bytes([0xD0 | op.regs, dd << 6 | op.arg_cnt << 3 | arg_mask])
    lead = b""
    if delta >= 16:
        lead, delta = b"\x40" + encode_unsigned(delta), 0
    if delta:
        lead += bytes([0x40 | delta])
    return lead + iptr + bytes([0xE0 | op.regs]) + encode_unsigned(op.arg_cnt) + encode_unsigned(arg_mask)


def _emit(ops: list[_Op]) -> bytes:
    out = bytearray()
    last = 0
    for op in ops:
        delta = op.offset - last
        if op.kind == "this":
            out.append(0xF4 | op.count)
            continue
        last = op.offset
        if op.kind == "push":
            if delta >= 32:
                out += b"\x40" + encode_unsigned(delta - 31)
                delta = 31
            out.append(delta)
        elif op.kind == "pop":
            if delta >= 16:
                out += b"\x40" + encode_unsigned(delta - 15)
                delta = 15
            if op.count or delta:
                out.append(0x40 | op.count << 4 | delta)
        else:
            out += _call_bytes(op, delta)
    out.append(0xFF)
    return bytes(out)


def _canonical_ops(ops: list[_Op]) -> list[_Op]:
    """Drop the no-op "calls" the bytes cannot show: pop-0 entries without a delta, and a small
    skip that the next call's own encoding would start with anyway (the decoder merges them)."""
    out: list[_Op] = []
    last = 0
    for i, op in enumerate(ops):
        if op.kind == "pop" and op.count == 0:
            delta = op.offset - last
            nxt = ops[i + 1] if i + 1 < len(ops) else None
            if delta == 0:
                continue
            if (delta < 16 and nxt is not None and nxt.kind == "call" and not nxt.fat
                    and _call_bytes(nxt, nxt.offset - last)
                    == bytes([0x40 | delta]) + _call_bytes(nxt, nxt.offset - op.offset)):
                continue
        if op.kind != "this":
            last = op.offset
        out.append(op)
    return out


# --------------------------------------------------------------------------- ops -> description


def _raise(ops: list[_Op]) -> EspTable:
    """The canonical description of `ops`: infer which pushes were pointers, and the kills.

    A pushed DWORD is a pointer iff some call reports it. Once a call has seen a DWORD and not
    reported it, no later call may report it. A pointer one call reports and the next one does
    not was killed in between; kills take the most recently pushed live pointers, so a single
    `Kill` right after the earlier call explains it (it may also kill pointers that are popped
    before the later call, which changes nothing).
    """
    raiser = _Raiser()
    for op in ops:
        raiser.op(op)
    return raiser.table()


class _Raiser:
    """The state of `_raise`: pending DWORDs by id, what calls said about them, kills to insert."""

    def __init__(self) -> None:
        self.events: list[EspEvent] = []
        self.stack: list[int] = []  # ids of pending DWORDs, the last one at [ESP]
        self.push_index: list[int] = []  # id -> index of its Push in `events`
        self.state: list[int] = []  # id -> -1 unseen, 0 not a pointer or dead, 1 pointer, 2 interior
        self.kind: list[int] = []  # id -> what its Push becomes: 0, 1 pointer, 2 interior
        self.alive: list[int] = []  # ids the last call reported, [ESP] side first
        self.kills: dict[int, Kill] = {}  # events index -> Kill to insert before it
        self.after_call = (0, 0)  # (events index just after the last call, its code offset)
        self.last = 0  # code offset of the last op

    def op(self, op: _Op) -> None:
        if op.kind == "this":
            self.events.append(ThisReg(self.last, CALLEE_SAVED[op.count]))
            return
        self.last = op.offset
        if op.kind == "push":
            self.stack.append(len(self.state))
            self.state.append(-1)
            self.kind.append(0)
            self.push_index.append(len(self.events))
            self.events.append(Push(op.offset))
        elif op.kind == "pop" and op.count == 1:
            if not self.stack:
                raise DecodeError(op.at, "pops 1 DWORDs but only 0 are pending")
            self.stack.pop()
            prev = self.events[-1] if self.events else None
            if isinstance(prev, Pop) and prev.offset == op.offset:
                self.events[-1] = Pop(op.offset, prev.count + 1)
            else:
                self.events.append(Pop(op.offset))
        else:
            self.observe(op)

    def observe(self, op: _Op) -> None:
        """A call, or a pop-like entry that stands for one: what it reports fixes pending DWORDs."""
        popped = op.arg_cnt + (op.count if op.kind == "pop" else 0)
        if popped > len(self.stack):
            raise DecodeError(op.at, f"call pops {popped} DWORDs but only {len(self.stack)} are pending")
        rest = self.stack[:len(self.stack) - popped]
        if op.args and op.args[-1][0] >= len(rest):
            raise DecodeError(op.at, f"call reports a pending pointer beyond the {len(rest)} pending DWORDs")
        reported = {rest[-1 - i]: 2 if interior else 1 for i, interior in op.args}
        for sid, kind in reported.items():
            if self.state[sid] == -1:
                self.state[sid] = self.kind[sid] = kind
            elif self.state[sid] != kind:
                raise DecodeError(op.at, f"call reports [ESP+{4 * (len(rest) - 1 - rest.index(sid)):#x}], which "
                                  "an earlier call saw as " + ("not a pointer" if self.state[sid] == 0
                                                               else "a different pointer kind"))
        if any(self.state[sid] > 0 and sid not in reported for sid in rest):
            gone = [sid for sid in self.alive if sid not in reported]
            if gone != self.alive[:len(gone)]:
                raise DecodeError(op.at, "call stops reporting a pending pointer below one it still reports; "
                                  "a kill only takes the most recently pushed pointers")
            index, offset = self.after_call
            self.kills[index] = Kill(offset, len(gone))
            for sid in gone:
                self.state[sid] = 0
        for sid in rest:
            self.state[sid] = max(self.state[sid], 0)
        self.stack = rest
        self.alive = [sid for sid in reversed(rest) if self.state[sid] > 0]
        if op.kind == "call":
            self.events.append(Call(op.offset, op.arg_cnt, _names(op.regs), _names(op.iregs)))
        else:
            self.events.append(Call(op.offset, op.count))
        self.after_call = (len(self.events), op.offset)

    def table(self) -> EspTable:
        out: list[EspEvent] = []
        for index, event in enumerate(self.events):
            if index in self.kills:
                out.append(self.kills[index])
            out.append(event)
        for sid, index in enumerate(self.push_index):
            if self.kind[sid]:
                out_index = index + sum(1 for k in self.kills if k <= index)
                out[out_index] = Push(out[out_index].offset, True, self.kind[sid] == 2)
        return EspTable(tuple(out))


def canonical(table: EspTable) -> EspTable:
    """The description `decode_table` returns for `encode_table(table)` (same bytes, same meaning)."""
    return _raise(_canonical_ops(_lower(table)))


# --------------------------------------------------------------------------- encode


def _check_header(hdr: InfoHdr, data: bytes | None = None, offset: int = 0) -> str | None:
    if data is not None and not (isinstance(offset, int) and 0 <= offset <= len(data)):
        return f"table offset {offset!r} is outside the {len(data)} bytes of data"
    if not isinstance(hdr, InfoHdr):
        return f"expected an InfoHdr, got {type(hdr).__name__}"
    if hdr.interruptible or hdr.ebp_frame:
        return "the header selects another pointer table (EBP-less tables need interruptible = ebp_frame = 0)"
    return None


def encode_table(table: EspTable, hdr: InfoHdr) -> bytes:
    """The bytes CoreCLR's JIT writes for `table`, terminated by 0xFF."""
    problem = _check_header(hdr)
    if problem:
        raise GCInfoEncodeError(problem)
    return _emit(_canonical_ops(_lower(table)))


# --------------------------------------------------------------------------- decode


def _byte(data: bytes, pos: int) -> int:
    if pos >= len(data):
        raise DecodeError(pos, "the EBP-less pointer table runs past the end of the data (no 0xFF)")
    return data[pos]


def _call_text(cur: int, arg_cnt: int, regs: int, iregs: int) -> str:
    marks = "".join(name + ("'" if iregs >> i & 1 else " ") for i, name in enumerate(CALLEE_SAVED) if regs >> i & 1)
    return f"{cur:04X}        call {arg_cnt} [ {marks}]"


class _Parser:
    """Reads entries into ops and `TableEntry` lines, checking them against the pending depth."""

    def __init__(self, data: bytes, offset: int) -> None:
        self.data, self.pos, self.cur = data, offset, 0
        self.entries: list[TableEntry] = []
        self.ops: list[_Op] = []
        self.skips: list[tuple[bool, int, int]] = []  # (small, byte start, code offset after)
        self.depth = 0

    def entry(self, start: int, kind: str, text: str | None) -> None:
        self.entries.append(TableEntry(start, self.pos, self.cur, kind, text))

    def flush(self) -> None:
        """Each run of skips ending in a small one is a call with nothing to report (a pop-0 op);
        a trailing long skip is part of the next entry's delta. `_canonical_ops` later folds a
        pop-0 op into the next call where the encoder would have written it as that call's skip."""
        first = None
        for small, start, after in self.skips:
            first = start if first is None else first
            if small:
                self.ops.append(_Op("pop", after, 0, at=first))
                first = None
        self.skips.clear()

    def advance(self, delta: int, start: int) -> None:
        self.cur += delta
        if self.cur > U32_MAX:
            raise DecodeError(start, "the code offset passes 0xFFFFFFFF")

    def pushes(self, count: int, start: int) -> None:
        if self.depth + count > MAX_PENDING:
            raise DecodeError(start, f"more than {MAX_PENDING} pending DWORDs")
        self.flush()
        self.depth += count
        for _ in range(count):
            self.ops.append(_Op("push", self.cur, at=start))

    def run(self) -> int:
        data = self.data
        while True:
            start = self.pos
            b = _byte(data, start)
            self.pos += 1
            if b < 0x20:
                self.advance(b, start)
                self.pushes(1, start)
                self.entry(start, "push", f"{self.cur:04X}        push")
            elif b == 0x20:
                n, self.pos = decode_unsigned(data, self.pos)
                self.pushes(n, start)
                self.entry(start, "push", f"{self.cur:04X}       push {n}")
            elif b < 0x40:
                raise DecodeError(start, f"reserved code {b:#04x} (only 0x20 pushes several DWORDs)")
            elif b == 0x40:
                d, self.pos = decode_unsigned(data, self.pos)
                self.advance(d, start)
                self.skips.append((False, start, self.cur))
                self.entry(start, "skip", None)
            elif b < 0x50:
                self.advance(b & 0x0F, start)
                self.skips.append((True, start, self.cur))
                self.entry(start, "skip", None)
            elif b < 0x80:
                cc = b >> 4 & 3
                self.advance(b & 0x0F, start)
                self.flush()
                if cc > self.depth:
                    raise DecodeError(start, f"pops {cc} DWORDs but only {self.depth} are pending")
                self.depth -= cc
                self.ops.append(_Op("pop", self.cur, cc, at=start))
                self.entry(start, "pop", f"{self.cur:04X}        pop {cc}")
            elif b == 0xFF:
                self.flush()
                self.entry(start, "end", None)
                return self.pos
            elif 0xF4 <= b <= 0xF7:
                self.flush()
                self.ops.append(_Op("this", self.cur, b & 3, at=start))
                self.entry(start, "this", f"            thisptr in {CALLEE_SAVED[b & 3]}")
            elif b == 0xF8:
                self.fat(start)
            elif b < 0xF0 or b == 0xF0:
                self.call(start, b)
            else:
                raise DecodeError(start, f"reserved code {b:#04x}")

    def call(self, start: int, b: int) -> None:
        data = self.data
        imask = 0
        call_start = start
        if b == 0xF0:
            imask, self.pos = decode_unsigned(data, self.pos)
            self.entry(start, "iptr", f"            iptrMask = {imask:02X}")
            start = self.pos
            b = _byte(data, start)
            self.pos += 1
            if not 0x80 <= b < 0xF0:
                raise DecodeError(start, f"an interior mask (0xF0) must be followed by a call entry, not {b:#04x}")
        if b < 0xD0:
            arg_cnt, regs, arg_mask, delta = _PATTERNS[b & 0x7F]
        elif b < 0xE0:
            nxt = _byte(data, self.pos)
            self.pos += 1
            regs, arg_cnt, arg_mask, delta = b & 0x0F, nxt >> 3 & 7, nxt & 7, CALL_COMMON_DELTA[nxt >> 6]
        else:
            regs, delta = b & 0x0F, 0
            arg_cnt, self.pos = decode_unsigned(data, self.pos)
            arg_mask, self.pos = decode_unsigned(data, self.pos)
        iregs, iarg_mask = imask & 0x0F, imask >> 4
        if iregs & ~regs or iarg_mask & ~arg_mask:
            raise DecodeError(call_start, "the interior mask names a register or argument the call does not report")
        self.advance(delta, start)
        args = tuple((i, bool(iarg_mask >> i & 1)) for i in range(arg_mask.bit_length()) if arg_mask >> i & 1)
        self.finish(_Op("call", self.cur, 0, arg_cnt, regs, iregs, args, at=call_start))
        text = _call_text(self.cur, arg_cnt, regs, iregs) + (f" argMask={arg_mask:02X}" if arg_mask else "")
        self.entry(start, "call", text + (f" (iargs={iarg_mask:02X})" if iarg_mask else ""))

    def fat(self, start: int) -> None:
        data = self.data
        rb = _byte(data, self.pos)
        delta, pos = decode_dword(data, self.pos + 1)
        arg_cnt, pos = decode_dword(data, pos)
        count, pos = decode_dword(data, pos)
        size, pos = decode_dword(data, pos)
        if size > len(data) - pos or count > size:
            raise DecodeError(pos, f"fat call: {count} offsets in {size} bytes do not fit the data")
        end, offsets = pos + size, []
        while pos < end and len(offsets) < count:
            value, pos = decode_unsigned(data, pos)
            offsets.append(value)
        if pos != end or len(offsets) != count:
            raise DecodeError(pos, f"fat call: {count} offsets do not take exactly {size} bytes")
        self.pos = end
        regs, iregs = rb & 0x0F, rb >> 4
        if iregs & ~regs:
            raise DecodeError(start, "fat call: an interior register is not reported as live")
        if any(v & 2 for v in offsets) or len({v >> 2 for v in offsets}) != len(offsets):
            raise DecodeError(start, "fat call: pending offsets must be distinct DWORD offsets (bit 1 clear)")
        self.advance(delta, start)
        args = tuple(sorted((v >> 2, bool(v & 1)) for v in offsets))
        self.finish(_Op("call", self.cur, 0, arg_cnt, regs, iregs, args, at=start))
        self.entry(start, "call", _call_text(self.cur, arg_cnt, regs, iregs)
                   + f" argOffs({count}) =" + "".join(f" {v:4X}" for v in offsets))

    def finish(self, op: _Op) -> None:
        """Check a call against the pending depth; mark it fat the way the encoder would."""
        if op.arg_cnt > self.depth:
            raise DecodeError(op.at, f"call pops {op.arg_cnt} DWORDs but only {self.depth} are pending")
        self.depth -= op.arg_cnt
        if op.args and op.args[-1][0] >= self.depth:
            raise DecodeError(op.at, f"call reports [ESP+{4 * op.args[-1][0]:#x}] but only "
                              f"{self.depth} DWORDs are pending")
        if op.arg_cnt < 4 and not op.regs and not op.args:  # the encoder would write a pop or a skip
            self.flush()
            self.ops.append(_Op("pop", op.offset, op.arg_cnt, at=op.at))
            return
        fat = self.depth > MASK_BITS and bool(op.args)
        if not fat and any(i >= 28 for i, interior in op.args if interior):
            raise DecodeError(op.at, "an interior pending pointer beyond [ESP+0x6C] with at most 32 DWORDs "
                              "pending: the JIT cannot write that")
        op = _Op(op.kind, op.offset, 0, op.arg_cnt, op.regs, op.iregs, op.args, fat, at=op.at)
        self.flush()
        self.ops.append(op)


def decode_table(data: bytes, offset: int, hdr: InfoHdr) -> tuple[EspTable, list[TableEntry], int]:
    """Decode the table at `offset` up to its 0xFF: canonical description, entries with gcdump text, end."""
    problem = _check_header(hdr, data, offset)
    if problem:
        raise DecodeError(0, problem)
    parser = _Parser(bytes(data), offset)
    end = parser.run()
    return _raise(_canonical_ops(parser.ops)), parser.entries, end


# The VM's lookup lives in its own module; it is part of this module's API.
from .ptrtab_esp_scan import scan  # noqa: E402,F401  (it imports the helpers above)
