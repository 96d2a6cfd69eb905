"""Encoding an EBP-less pointer table: the JIT's walk over its records into operations, then bytes.

`lower` models the pending pushes as the JIT does (``PendingArgsStack``) to derive each call's
masks; the emitter picks each call's form in the JIT's order (pattern, ``D0``, ``E0``, fat ``F8``).
"""

from __future__ import annotations

from .codecs import U32_MAX, GCInfoEncodeError, encode_dword, encode_unsigned
from .header import InfoHdr
from .ptrtab_esp_model import (
    CALLEE_SAVED,
    EVENT_TYPES,
    MASK_BITS,
    MAX_PENDING,
    PATTERNS,
    Call,
    EspTable,
    InvalidTable,
    Kill,
    Op,
    Pop,
    Push,
    ThisReg,
    check_header,
    checked_count,
    register_mask,
)
from .tables import CALL_COMMON_DELTA


def lower(table: EspTable) -> list[Op]:
    """The JIT's walk over its records: model the pending pushes and turn each record into ops.

    The model is a list of pending DWORDs, the last one the most recently pushed (``[ESP]``),
    each 0 (not a pointer, or a killed one), 1 (pointer) or 2 (interior pointer).
    """
    if not isinstance(table, EspTable):
        raise GCInfoEncodeError(f"expected an EspTable, got {type(table).__name__}")
    pending: list[int] = []
    ops: list[Op] = []
    last = 0
    for index, event in enumerate(table.events):
        where = f"event {index} ({type(event).__name__} at offset {getattr(event, 'offset', '?')})"
        try:
            if not isinstance(event, EVENT_TYPES):
                raise InvalidTable("not an EBP-less pointer-table event")
            off = checked_count(event.offset, "offset")
            if off < last:
                raise InvalidTable(f"offsets must not decrease (previous {last:#x})")
            last = off
            if isinstance(event, Push):
                if event.interior and not event.gc:
                    raise InvalidTable("an interior push must also be gc")
                if len(pending) >= MAX_PENDING:
                    raise InvalidTable(f"more than {MAX_PENDING} pending DWORDs")
                pending.append(2 if event.interior else 1 if event.gc else 0)
                ops.append(Op("push", off))
            elif isinstance(event, Pop):
                if checked_count(event.count, "count", 1) > len(pending):
                    raise InvalidTable(f"pops {event.count} DWORDs but only {len(pending)} are pending")
                for _ in range(event.count):
                    pending.pop()
                    ops.append(Op("pop", off, 1))
            elif isinstance(event, Kill):
                alive = sum(1 for kind in pending if kind)
                if checked_count(event.count, "count", 1) > alive:
                    raise InvalidTable(f"kills {event.count} pointers but only {alive} are pending")
                _kill(pending, event.count)
            elif isinstance(event, ThisReg):
                if event.reg not in CALLEE_SAVED:
                    raise InvalidTable(f"`this` can only be named in EDI, ESI, EBX or EBP, not {event.reg!r}")
                ops.append(Op("this", off, CALLEE_SAVED.index(event.reg)))
            else:
                ops.append(_lower_call(event, off, pending))
        except InvalidTable as e:
            raise GCInfoEncodeError(f"{where}: {e}") from None
    return ops


def _kill(pending: list[int], count: int) -> None:
    """The JIT's ``pasKill``: the `count` most recently pushed live pointers become non-pointers."""
    for i in range(len(pending) - 1, -1, -1):
        if count and pending[i]:
            pending[i] = 0
            count -= 1


def _lower_call(call: Call, off: int, pending: list[int]) -> Op:
    arg_cnt = checked_count(call.arg_cnt, "arg_cnt")
    if arg_cnt > len(pending):
        raise InvalidTable(f"pops {arg_cnt} argument DWORDs but only {len(pending)} are pending")
    regs = register_mask(call.regs, "regs")
    iregs = register_mask(call.interior_regs, "interior_regs")
    if iregs & ~regs:
        raise InvalidTable("interior_regs must be a subset of regs")
    del pending[len(pending) - arg_cnt :]
    args = tuple((i, kind == 2) for i, kind in enumerate(reversed(pending)) if kind)
    if arg_cnt < 4 and not regs and not args:
        return Op("pop", off, arg_cnt)  # nothing to report: the pop encoding (or a bare skip)
    fat = len(pending) > MASK_BITS and bool(args)  # deep, with pointers: no 32-bit mask will do
    if not fat and any(i >= 28 for i, interior in args if interior):
        raise InvalidTable("an interior pending pointer beyond [ESP+0x6C] does not fit the 32-bit iptr mask")
    return Op("call", off, 0, arg_cnt, regs, iregs, args, fat)


# --------------------------------------------------------------------------- ops -> bytes


def _skip(delta: int) -> bytes:
    """A skip the JIT writes before a call: ``0100DDDD`` below 16, else ``40`` + Unsigned."""
    return bytes([0x40 | delta]) if delta < 16 else b"\x40" + encode_unsigned(delta)


def _lookup_pattern(arg_cnt: int, regs: int, arg_mask: int, delta: int) -> tuple[int, int] | None:
    """The JIT's ``LookupCallPattern``: (row, remaining delta) for an exact or the nearest row."""
    if arg_cnt > 2 or arg_mask != 0:
        return None
    best = None
    for row, (cnt, rmask, amask, rdelta) in enumerate(PATTERNS):
        if (cnt, rmask, amask) != (arg_cnt, regs, arg_mask):
            continue
        if rdelta == delta:
            return row, 0
        rest = (delta - rdelta) & U32_MAX
        if rest < 0xFF and (best is None or rest < best[1]):
            best = (row, rest)
    return best


def _call_bytes(op: Op, delta: int) -> bytes:
    """The bytes of one interesting call `delta` bytes after the previous entry."""
    if op.fat:
        offs = b"".join(encode_unsigned(4 * i | interior) for i, interior in op.args)
        return (
            bytes([0xF8, op.iregs << 4 | op.regs])
            + encode_dword(delta)
            + encode_dword(op.arg_cnt)
            + encode_dword(len(op.args))
            + encode_dword(len(offs))
            + offs
        )
    arg_mask = sum(1 << i for i, _ in op.args)
    iarg_mask = sum(1 << i for i, interior in op.args if interior)
    iptr = b"\xf0" + encode_unsigned(iarg_mask << 4 | op.iregs) if op.iregs or iarg_mask else b""
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


def _emit(ops: list[Op]) -> bytes:
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


def canonical_ops(ops: list[Op]) -> list[Op]:
    """Drop the no-op "calls" the bytes cannot show: pop-0 entries without a delta, and a small
    skip that the next call's own encoding would start with anyway (the decoder merges them)."""
    out: list[Op] = []
    last = 0
    for i, op in enumerate(ops):
        if op.kind == "pop" and op.count == 0:
            delta = op.offset - last
            nxt = ops[i + 1] if i + 1 < len(ops) else None
            if delta == 0:
                continue
            if (
                delta < 16
                and nxt is not None
                and nxt.kind == "call"
                and not nxt.fat
                and _call_bytes(nxt, nxt.offset - last)
                == bytes([0x40 | delta]) + _call_bytes(nxt, nxt.offset - op.offset)
            ):
                continue
        if op.kind != "this":
            last = op.offset
        out.append(op)
    return out


def encode_table(table: EspTable, hdr: InfoHdr) -> bytes:
    """The bytes CoreCLR's JIT writes for `table`, terminated by 0xFF."""
    problem = check_header(hdr)
    if problem:
        raise GCInfoEncodeError(problem)
    return _emit(canonical_ops(lower(table)))
