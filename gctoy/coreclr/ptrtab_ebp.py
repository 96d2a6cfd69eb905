"""The partially interruptible, EBP-frame pointer table of CoreCLR's x86 GC info.

A method that is not fully interruptible can only be stopped for a GC at a call site (its return
address is hijacked), and with EBP as frame pointer the stack depth never has to be tracked. So
the table lists just the interesting call sites: the code offset just *after* the call (the
return address), which callee-saved registers EDI/ESI/EBX hold GC pointers there (``bsd`` below:
EBX=4, ESI=2, EDI=1) and which pushed outgoing arguments ``[ESP + 4*i]`` do. A call site that is
not listed is "boring": nothing live. Offsets are deltas from the previous site; 0xFF ends it.

    0bsd0000                              `this` is kept alive in EDI/ESI/EBX (first byte only)
    0bsdDDDD                       tiny    0 < delta < 16, no pushed pointers, no byrefs
    1DDDDDDD bsdAAAAA              small   delta < 0x79, argMask < 0x20, no byrefs
    FD aaaaaaaa AAAAdddd bsdDDDDD  medium  delta < 0x200, argMask < 0x1000, no byrefs
                                           argMask = aaaaaaaa | AAAA << 8; delta = dddd | DDDDD << 4
    F9 DDDDDDDD bsdAAAAA iiiIIIII  medium with byrefs: iii/IIIII mark interior regs/args
    FE 0BSD0bsd [delta] [argMask]              large (DWORDs, little-endian)
    FA 0BSD0bsd [delta] [argMask] [byrefMask]  large with byrefs (BSD: interior regs)
    FB 0BSD0bsd [delta] [count] [size] count x Unsigned(offset | byref)
                                           huge: an explicit list of pushed pointer offsets
    FF                                     end
    FC                                     reserved (decoders would read a small entry with
                                           delta 0x7C; the encoder stops small deltas at 0x78)

`encode_table` picks the first form that fits in the JIT's order: huge (whenever the site has
an explicit argument list), tiny, small, medium, medium with byrefs, large, large with byrefs.

gcdump prints each site as ``call [ EDI ESI' ] argMask=03 (iargs=02)`` (a quote marks an
interior register) or ``call [ EBX ] ptrArgs=[8 12i]``. For the huge form CoreCLR's gcdump (and
the managed readers that copied it) *assigns* the DWORD to the running offset instead of adding
it; the JIT writes a delta and the VM adds it. Our decoder and text follow the VM.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from ..errors import DecodeError, GCToyError
from .codecs import U32_MAX, GCInfoEncodeError, decode_dword, decode_unsigned, encode_dword, encode_unsigned
from .entries import PtrTableState, PushedArg, TableEntry
from .header import InfoHdr

#: Callee-saved registers of the 3-bit mask, lowest bit first.
CALLEE_SAVED = ("EDI", "ESI", "EBX")
_BIT = {name: 1 << i for i, name in enumerate(CALLEE_SAVED)}


@dataclass(frozen=True)
class ArgOffset:
    """A pushed pointer argument at ``[ESP + offset]`` (bytes, a multiple of 4) in a huge entry."""

    offset: int
    interior: bool = False


@dataclass(frozen=True)
class CallSite:
    """One interesting call site: what is live at `offset`, the return address of the call.

    `regs` and `byref_regs` name callee-saved registers (EDI, ESI, EBX; `byref_regs` is a subset
    of `regs`); `arg_mask` bit i means ``[ESP + 4*i]`` holds a pushed pointer and
    `byref_arg_mask` (a subset) marks interior ones. `arg_offsets`, when not None, replaces both
    masks with an explicit list and selects the huge form.
    """

    offset: int
    regs: tuple[str, ...] = ()
    byref_regs: tuple[str, ...] = ()
    arg_mask: int = 0
    byref_arg_mask: int = 0
    arg_offsets: tuple[ArgOffset, ...] | None = None


@dataclass(frozen=True)
class EbpTable:
    """A partially interruptible EBP-frame pointer table: the `this` register and the call sites."""

    this_reg: str | None = None
    calls: tuple[CallSite, ...] = ()


def _mask(names: tuple[str, ...], what: str) -> int:
    mask = 0
    for name in names:
        if name not in _BIT:
            raise GCInfoEncodeError(f"{what}: {name!r} is not a callee-saved register of an EBP frame (EDI ESI EBX)")
        mask |= _BIT[name]
    return mask


def _names(mask: int) -> tuple[str, ...]:
    return tuple(name for name in CALLEE_SAVED if mask & _BIT[name])


def canonical(table: EbpTable) -> EbpTable:
    """The table with register tuples in EDI, ESI, EBX order (the form `decode_table` returns)."""
    calls = tuple(
        CallSite(
            c.offset,
            _names(_mask(c.regs, "regs")),
            _names(_mask(c.byref_regs, "byref_regs")),
            c.arg_mask,
            c.byref_arg_mask,
            c.arg_offsets,
        )
        for c in table.calls
    )
    return EbpTable(table.this_reg, calls)


# --------------------------------------------------------------------------- encode


def _u32(value: int, what: str) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= U32_MAX:
        raise GCInfoEncodeError(f"{what} must be an integer in 0..0xFFFFFFFF, got {value!r}")


def encode_table(table: EbpTable, hdr: InfoHdr) -> bytes:
    """The bytes CoreCLR's JIT writes for `table`, terminated by 0xFF."""
    if not isinstance(table, EbpTable):
        raise GCInfoEncodeError(f"expected an EbpTable, got {type(table).__name__}")
    out = bytearray()
    if table.this_reg is not None:
        if table.this_reg not in _BIT:
            raise GCInfoEncodeError(f"this_reg {table.this_reg!r} must be EDI, ESI or EBX")
        out.append(_BIT[table.this_reg] << 4)
    last = 0
    for index, call in enumerate(table.calls):
        if not isinstance(call, CallSite):
            raise GCInfoEncodeError(f"call {index}: not a CallSite: {call!r}")
        where = f"call {index} (offset {call.offset!r})"
        _u32(call.offset, f"{where}: offset")
        if call.offset <= last:
            raise GCInfoEncodeError(f"{where}: call offsets must increase and be above 0 (previous {last:#x})")
        out += _encode_call(call, call.offset - last, where)
        last = call.offset
    out.append(0xFF)
    return bytes(out)


def _encode_call(call: CallSite, delta: int, where: str) -> bytes:
    """One call site in the first form that fits, in the JIT's order."""
    regs = _mask(call.regs, f"{where}: regs")
    byref_regs = _mask(call.byref_regs, f"{where}: byref_regs")
    if byref_regs & ~regs:
        raise GCInfoEncodeError(f"{where}: byref_regs must be a subset of regs")
    _u32(call.arg_mask, f"{where}: arg_mask")
    _u32(call.byref_arg_mask, f"{where}: byref_arg_mask")
    if call.byref_arg_mask & ~call.arg_mask:
        raise GCInfoEncodeError(f"{where}: byref_arg_mask must be a subset of arg_mask")
    args, byref_args = call.arg_mask, call.byref_arg_mask
    regs_byte = byref_regs << 4 | regs
    if call.arg_offsets is not None:
        if args or byref_args:
            raise GCInfoEncodeError(f"{where}: give either arg_offsets or argument masks, not both")
        if not call.arg_offsets:
            raise GCInfoEncodeError(f"{where}: arg_offsets must list at least one argument (or be None)")
        listed = bytearray()
        for arg in call.arg_offsets:
            if not isinstance(arg, ArgOffset):
                raise GCInfoEncodeError(f"{where}: arg_offsets holds {arg!r}, not an ArgOffset")
            _u32(arg.offset, f"{where}: argument offset")
            if arg.offset % 4:
                raise GCInfoEncodeError(f"{where}: argument offset {arg.offset} is not a multiple of 4")
            listed += encode_unsigned(arg.offset | int(arg.interior))
        return (
            bytes([0xFB, regs_byte])
            + encode_dword(delta)
            + encode_dword(len(call.arg_offsets))
            + encode_dword(len(listed))
            + bytes(listed)
        )
    byref = bool(byref_regs or byref_args)
    if 0 < delta < 16 and args == 0 and not byref:
        return bytes([regs << 4 | delta])
    if delta < 0x79 and args <= 0x1F and not byref:
        return bytes([0x80 | delta, regs << 5 | args])
    if delta <= 0x1FF and args <= 0xFFF and not byref:
        return bytes([0xFD, args & 0xFF, (args >> 4) & 0xF0 | delta & 0x0F, regs << 5 | delta >> 4])
    if delta <= 0xFF and args <= 0x1F:
        return bytes([0xF9, delta, regs << 5 | args, byref_regs << 5 | byref_args])
    if not byref:
        return bytes([0xFE, regs_byte]) + encode_dword(delta) + encode_dword(args)
    return bytes([0xFA, regs_byte]) + encode_dword(delta) + encode_dword(args) + encode_dword(byref_args)


# --------------------------------------------------------------------------- decode


@dataclass(frozen=True)
class _Entry:
    """One entry read from the bytes: a `this` byte, a call site or the end."""

    start: int
    end: int
    kind: Literal["this", "call", "end"]
    offset: int  # running code offset after the entry (VM semantics)
    this_reg: str | None = None
    call: CallSite | None = None


def _byte(data: bytes, pos: int) -> int:
    if pos >= len(data):
        raise DecodeError(pos, "pointer table runs past the end of the data (no 0xFF terminator)")
    return data[pos]


def _entries(data: bytes, offset: int):
    """Read entries lazily from `offset`, validating each; stops after the 0xFF."""
    if offset < 0:
        raise DecodeError(0, f"pointer table offset {offset} is negative")
    pos = offset
    code = 0
    first = True
    while True:
        start = pos
        b = _byte(data, pos)
        pos += 1
        byref_regs = byref_args = 0
        arg_offsets = None
        if b == 0xFF:
            yield _Entry(start, pos, "end", code)
            return
        if b == 0x00:
            raise DecodeError(start, "a zero byte is not a valid EBP-frame table entry")
        if b < 0x80 and not b & 0x0F:
            regs = b >> 4
            if regs not in (1, 2, 4):
                raise DecodeError(start, f"`this` byte {b:#04x} must name exactly one of EDI, ESI, EBX")
            if not first:
                raise DecodeError(start, "the `this` byte may only be the first entry of the table")
            first = False
            yield _Entry(start, pos, "this", code, this_reg=_names(regs)[0])
            continue
        first = False
        if b < 0x80:
            delta, regs, args = b & 0x0F, b >> 4, 0
        elif b == 0xFC:
            raise DecodeError(start, "opcode 0xfc is reserved (small entries stop at delta 0x78)")
        elif b <= 0xF8:
            nxt = _byte(data, pos)
            pos += 1
            delta, regs, args = b & 0x7F, nxt >> 5, nxt & 0x1F
        elif b == 0xFD:
            b1, b2, b3 = _byte(data, pos), _byte(data, pos + 1), _byte(data, pos + 2)
            pos += 3
            args = b1 | (b2 & 0xF0) << 4
            delta = (b2 & 0x0F) | (b3 & 0x1F) << 4
            regs = b3 >> 5
        elif b == 0xF9:
            delta, b2, b3 = _byte(data, pos), _byte(data, pos + 1), _byte(data, pos + 2)
            pos += 3
            regs, args = b2 >> 5, b2 & 0x1F
            byref_regs, byref_args = b3 >> 5, b3 & 0x1F
        elif b in (0xFA, 0xFB, 0xFE):
            rb = _byte(data, pos)
            if rb & 0x88:
                raise DecodeError(pos, f"register byte {rb:#04x} must have the form 0BSD0bsd")
            regs, byref_regs = rb & 7, rb >> 4
            delta, pos = decode_dword(data, pos + 1)
            if b == 0xFB:
                count, pos = decode_dword(data, pos)
                size, pos = decode_dword(data, pos)
                arg_offsets, pos = _arg_table(data, pos, count, size, start)
                args = 0
            else:
                args, pos = decode_dword(data, pos)
                if b == 0xFA:
                    byref_args, pos = decode_dword(data, pos)
        else:
            raise DecodeError(start, f"invalid EBP-frame table opcode {b:#04x}")
        if byref_regs & ~regs or byref_args & ~args:
            raise DecodeError(start, "interior-pointer masks must be subsets of the live masks")
        if delta == 0:
            raise DecodeError(start, "call site at the same code offset as the previous one (delta 0)")
        code += delta
        if code > U32_MAX:
            raise DecodeError(start, "running code offset does not fit in 32 bits")
        call = CallSite(code, _names(regs), _names(byref_regs), args, byref_args, arg_offsets)
        yield _Entry(start, pos, "call", code, call=call)


def _arg_table(data: bytes, pos: int, count: int, size: int, start: int) -> tuple[tuple[ArgOffset, ...], int]:
    """The huge form's `count` Unsigned offsets, which must fill exactly `size` bytes."""
    end = pos + size
    if end > len(data):
        raise DecodeError(pos, f"huge entry's argument table of {size} bytes runs past the end of the data")
    if count == 0:
        raise DecodeError(start, "huge entry with an empty argument table (the JIT writes a mask form instead)")
    if count > size:
        raise DecodeError(pos, f"{count} argument offsets cannot fit in {size} bytes")
    out = []
    bounded = data[:end]
    for _ in range(count):
        item = pos
        value, pos = decode_unsigned(bounded, pos)
        if value & 2:
            raise DecodeError(item, f"argument offset {value:#x} has the reserved bit 1 set")
        out.append(ArgOffset(value & ~3, bool(value & 1)))
    if pos != end:
        raise DecodeError(pos, f"huge entry's argument table is {pos - end + size} bytes, not {size}")
    return tuple(out), pos


def call_text(call: CallSite) -> str:
    """What gcdump prints for a call site of an EBP frame (after the offset column)."""
    regs = "".join(f"{r}{chr(39) if r in call.byref_regs else ' '}" for r in call.regs)
    if call.arg_offsets is not None:
        listed = " ".join(f"{a.offset}{'i' if a.interior else ''}" for a in call.arg_offsets)
        return f"call [ {regs}] ptrArgs=[{listed}]"
    text = f"call [ {regs}] argMask={call.arg_mask:02X}"
    if call.byref_arg_mask:
        text += f" (iargs={call.byref_arg_mask:02X})"
    return text


def decode_table(data: bytes, offset: int, hdr: InfoHdr) -> tuple[EbpTable, list[TableEntry], int]:
    """Decode the table at `offset` up to its 0xFF: description, entries with gcdump text, end."""
    this_reg = None
    calls: list[CallSite] = []
    entries: list[TableEntry] = []
    end = offset
    for entry in _entries(data, offset):
        if entry.kind == "this":
            this_reg = entry.this_reg
            text = f"            thisptr in {entry.this_reg}"
            entries.append(TableEntry(entry.start, entry.end, None, "this", text))
        elif entry.kind == "call":
            calls.append(entry.call)
            text = f"{entry.offset:04X}        {call_text(entry.call)}"
            entries.append(TableEntry(entry.start, entry.end, entry.offset, "call", text))
        else:
            entries.append(TableEntry(entry.start, entry.end, entry.offset, "end", None))
        end = entry.end
    return EbpTable(this_reg, tuple(calls)), entries, end


# --------------------------------------------------------------------------- scan


def scan(data: bytes, offset: int, hdr: InfoHdr, cur_offs: int, *, regs_offs: int | None = None) -> PtrTableState:
    """What the table says at `cur_offs` (the VM's scanArgRegTable, EBP-frame branch).

    ``regs_offs`` is accepted for symmetry with the fully interruptible table and ignored: the VM
    queries a partially interruptible frame at its return address (`cur_offs`) whether or not it
    is the active frame, registers included. Entries are read while the running offset is below
    `cur_offs`; if one lands exactly on it, its registers and pushed arguments are live,
    otherwise the offset is a boring call site and nothing is. Pushed arguments come back as
    ``PushedArg("ESP", byte_offset)``; the pushed size is always 0 (EBP frames need no ESP
    tracking). `this_reg` is reported once the `this` byte has been read (any offset above 0).
    """
    if not isinstance(cur_offs, int) or cur_offs < 0:
        raise GCToyError(f"cur_offs must be a non-negative code offset, got {cur_offs!r}")
    this_reg = None
    hit: CallSite | None = None
    code = 0
    entries = _entries(data, offset)
    while code < cur_offs:
        entry = next(entries)
        if entry.kind == "end":
            break
        if entry.kind == "this":
            this_reg = entry.this_reg
            continue
        code = entry.offset
        hit = entry.call if code == cur_offs else None
    if hit is None:
        return PtrTableState(this_reg=this_reg)
    if hit.arg_offsets is not None:
        args = tuple(PushedArg("ESP", a.offset, a.interior) for a in hit.arg_offsets)
    else:
        args = tuple(
            PushedArg("ESP", 4 * i, bool(hit.byref_arg_mask >> i & 1)) for i in range(32) if hit.arg_mask >> i & 1
        )
    return PtrTableState(
        live_regs=frozenset(hit.regs),
        interior_regs=frozenset(hit.byref_regs),
        pushed_args=args,
        this_reg=this_reg,
    )
