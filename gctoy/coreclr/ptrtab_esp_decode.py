"""Decoding an EBP-less pointer table: its entries into operations and gcdump lines, checked
against the pending depth, then the canonical description."""

from __future__ import annotations

from ..errors import DecodeError
from .codecs import U32_MAX, decode_dword, decode_unsigned
from .entries import EntryKind, TableEntry
from .header import InfoHdr
from .ptrtab_esp_encode import canonical_ops
from .ptrtab_esp_model import CALLEE_SAVED, MASK_BITS, MAX_PENDING, PATTERNS, EspTable, Op, check_header, read_byte
from .ptrtab_esp_raise import raise_ops
from .tables import CALL_COMMON_DELTA


def _call_text(cur: int, arg_cnt: int, regs: int, iregs: int) -> str:
    marks = "".join(name + ("'" if iregs >> i & 1 else " ") for i, name in enumerate(CALLEE_SAVED) if regs >> i & 1)
    return f"{cur:04X}        call {arg_cnt} [ {marks}]"


class _Parser:
    """Reads entries into ops and `TableEntry` lines, checking them against the pending depth."""

    def __init__(self, data: bytes, offset: int) -> None:
        self.data, self.pos, self.cur = data, offset, 0
        self.entries: list[TableEntry] = []
        self.ops: list[Op] = []
        self.skips: list[tuple[bool, int, int]] = []  # (small, byte start, code offset after)
        self.depth = 0

    def entry(self, start: int, kind: EntryKind, text: str | None) -> None:
        self.entries.append(TableEntry(start, self.pos, self.cur, kind, text))

    def flush(self) -> None:
        """Each run of skips ending in a small one is a call with nothing to report (a pop-0 op);
        a trailing long skip is part of the next entry's delta. `canonical_ops` later folds a
        pop-0 op into the next call where the encoder would have written it as that call's skip."""
        first = None
        for small, start, after in self.skips:
            first = start if first is None else first
            if small:
                self.ops.append(Op("pop", after, 0, at=first))
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
            self.ops.append(Op("push", self.cur, at=start))

    def run(self) -> int:
        data = self.data
        while True:
            start = self.pos
            b = read_byte(data, start)
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
                self.ops.append(Op("pop", self.cur, cc, at=start))
                self.entry(start, "pop", f"{self.cur:04X}        pop {cc}")
            elif b == 0xFF:
                self.flush()
                self.entry(start, "end", None)
                return self.pos
            elif 0xF4 <= b <= 0xF7:
                self.flush()
                self.ops.append(Op("this", self.cur, b & 3, at=start))
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
            b = read_byte(data, start)
            self.pos += 1
            if not 0x80 <= b < 0xF0:
                raise DecodeError(start, f"an interior mask (0xF0) must be followed by a call entry, not {b:#04x}")
        if b < 0xD0:
            arg_cnt, regs, arg_mask, delta = PATTERNS[b & 0x7F]
        elif b < 0xE0:
            nxt = read_byte(data, self.pos)
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
        self.finish(Op("call", self.cur, 0, arg_cnt, regs, iregs, args, at=call_start))
        text = _call_text(self.cur, arg_cnt, regs, iregs) + (f" argMask={arg_mask:02X}" if arg_mask else "")
        self.entry(start, "call", text + (f" (iargs={iarg_mask:02X})" if iarg_mask else ""))

    def fat(self, start: int) -> None:
        data = self.data
        rb = read_byte(data, self.pos)
        delta, pos = decode_dword(data, self.pos + 1)
        arg_cnt, pos = decode_dword(data, pos)
        count, pos = decode_dword(data, pos)
        size, pos = decode_dword(data, pos)
        if size > len(data) - pos or count > size:
            raise DecodeError(pos, f"fat call: {count} offsets in {size} bytes do not fit the data")
        end = pos + size
        offsets: list[int] = []
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
        self.finish(Op("call", self.cur, 0, arg_cnt, regs, iregs, args, at=start))
        self.entry(
            start,
            "call",
            _call_text(self.cur, arg_cnt, regs, iregs) + f" argOffs({count}) =" + "".join(f" {v:4X}" for v in offsets),
        )

    def finish(self, op: Op) -> None:
        """Check a call against the pending depth; mark it fat the way the encoder would."""
        if op.arg_cnt > self.depth:
            raise DecodeError(op.at, f"call pops {op.arg_cnt} DWORDs but only {self.depth} are pending")
        self.depth -= op.arg_cnt
        if op.args and op.args[-1][0] >= self.depth:
            raise DecodeError(
                op.at, f"call reports [ESP+{4 * op.args[-1][0]:#x}] but only {self.depth} DWORDs are pending"
            )
        if op.arg_cnt < 4 and not op.regs and not op.args:  # the encoder would write a pop or a skip
            self.flush()
            self.ops.append(Op("pop", op.offset, op.arg_cnt, at=op.at))
            return
        fat = self.depth > MASK_BITS and bool(op.args)
        if not fat and any(i >= 28 for i, interior in op.args if interior):
            raise DecodeError(
                op.at,
                "an interior pending pointer beyond [ESP+0x6C] with at most 32 DWORDs "
                "pending: the JIT cannot write that",
            )
        op = Op(op.kind, op.offset, 0, op.arg_cnt, op.regs, op.iregs, op.args, fat, at=op.at)
        self.flush()
        self.ops.append(op)


def decode_table(data: bytes, offset: int, hdr: InfoHdr) -> tuple[EspTable, list[TableEntry], int]:
    """Decode the table at `offset` up to its 0xFF: canonical description, entries with gcdump text, end."""
    problem = check_header(hdr, data, offset)
    if problem:
        raise DecodeError(0, problem)
    parser = _Parser(bytes(data), offset)
    end = parser.run()
    return raise_ops(canonical_ops(parser.ops)), parser.entries, end


# The VM's lookup lives in its own module; it is part of this module's API.
