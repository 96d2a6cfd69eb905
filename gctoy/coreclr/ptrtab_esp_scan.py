"""The runtime's lookup in an EBP-less partially interruptible pointer table (the VM's
``scanArgRegTable``, ESP branch): what is live at a return address, and how many bytes are pushed.

Kept apart from the encoder and decoder of `ptrtab_esp` (which re-exports `scan`): the VM reads the
bytes directly, more leniently than gctoy's decoder, so this is an independent reading of the
same format, and the tests compare the two.
"""

from __future__ import annotations

from ..errors import DecodeError
from .codecs import decode_dword, decode_unsigned
from .entries import PtrTableState, PushedArg
from .header import InfoHdr
from .ptrtab_esp_model import CALLEE_SAVED, PATTERNS, check_header, read_byte, register_names
from .tables import CALL_COMMON_DELTA


def scan(
    data: bytes, offset: int, hdr: InfoHdr, cur_offs: int, *, strict: bool = False, regs_offs: int | None = None
) -> PtrTableState:
    """What the table says at return address `cur_offs` (the VM's ``scanArgRegTable``, ESP branch).

    Long because it is the VM's loop over the byte codes, one case per code in the VM's order, so
    the two can be read side by side.

    Keyword arguments:

    * ``strict`` -- reject reserved codes with `DecodeError`. By default they are read the way the
      release VM reads them: 0x21-0x3F like 0x20, 0xF1-0xF3 like 0xF0, 0xF9-0xFB like 0xF8,
      0xFC-0xFE as the end of the table (its debug build asserts on all but 0xF1-0xF3/0xF9-0xFB).
    * ``regs_offs`` -- accepted for a uniform call with the fully interruptible table and ignored:
      a partially interruptible table describes registers at the return address only.

    Entries are read while the running offset is at most `cur_offs`; a push or pop that would pass
    it is undone, a long skip is taken only while below it, and a call with a code delta ends the
    scan once `cur_offs` is reached. If the scan does not end exactly on `cur_offs`, or entries
    after the last call moved past it, the site is a boring call: nothing live. `pushed_bytes` is
    4 * the pending DWORDs, which the unwinder adds to ESP to find the initial ESP.
    """
    problem = check_header(hdr, data, offset)
    if problem:
        raise DecodeError(0, problem)
    pos, scan_offs, depth = offset, 0, 0
    regs = iregs = arg_mask = iarg_mask = 0
    arg_tab: tuple[int, int, int] | None = None  # (start, count, size) of a fat call's offsets
    this_reg: int | None = None
    iptr = 0

    def reserved(b: int, at: int) -> None:
        if strict:
            raise DecodeError(at, f"reserved code {b:#04x}")

    def pop(count: int, at: int) -> int:
        if count > depth:
            raise DecodeError(at, f"pops {count} DWORDs but only {depth} are pending")
        return depth - count

    while scan_offs <= cur_offs:
        inew_regs, inew_args = iptr & 0x0F, iptr >> 4
        iptr = 0
        start = pos
        b = read_byte(data, pos)
        pos += 1
        if b < 0x80:
            if b < 0x40:
                if b < 0x20:
                    count, new_offs = 1, scan_offs + b
                else:
                    if b != 0x20:
                        reserved(b, start)
                    count, pos = decode_unsigned(data, pos)
                    new_offs = scan_offs
                if new_offs > cur_offs:
                    break
                scan_offs, depth = new_offs, depth + count
            elif b & 0x3F:
                if scan_offs + (b & 0x0F) > cur_offs:
                    break
                scan_offs += b & 0x0F
                depth = pop(b >> 4 & 3, start)
            elif scan_offs < cur_offs:
                skip, pos = decode_unsigned(data, pos)
                scan_offs += skip
            else:
                break
            regs = iregs = arg_mask = iarg_mask = 0
            arg_tab = None
            continue
        group = b >> 4 & 7
        if group <= 6:
            if group <= 4:
                arg_cnt, new_regs, new_args, skip = PATTERNS[b & 0x7F]
            elif group == 5:
                nxt = read_byte(data, pos)
                pos += 1
                new_regs, arg_cnt, new_args, skip = b & 0x0F, nxt >> 3 & 7, nxt & 7, CALL_COMMON_DELTA[nxt >> 6]
            else:
                new_regs, skip = b & 0x0F, 0
                arg_cnt, pos = decode_unsigned(data, pos)
                new_args, pos = decode_unsigned(data, pos)
            if skip and scan_offs == cur_offs:
                break
            scan_offs += skip
            if scan_offs > cur_offs:
                break
            regs, arg_mask, iregs, iarg_mask, arg_tab = new_regs, new_args, inew_regs, inew_args, None
            depth = pop(arg_cnt, start)
        elif b & 0x0C == 0x00:
            if b != 0xF0:
                reserved(b, start)
            iptr, pos = decode_unsigned(data, pos)
        elif b & 0x0C == 0x04:
            this_reg = b & 3
        elif b & 0x0C == 0x08:
            if b != 0xF8:
                reserved(b, start)
            rb = read_byte(data, pos)
            skip, pos = decode_dword(data, pos + 1)
            if skip and scan_offs == cur_offs:
                break
            scan_offs += skip
            if scan_offs > cur_offs:
                break
            regs, iregs = rb & 0x0F, rb >> 4
            arg_cnt, pos = decode_dword(data, pos)
            count, pos = decode_dword(data, pos)
            size, pos = decode_dword(data, pos)
            if size > len(data) - pos:
                raise DecodeError(pos, f"fat call: {size} bytes of offsets run past the end of the data")
            depth = pop(arg_cnt, start)
            arg_tab, arg_mask, iarg_mask = (pos, count, size), 0, 0
            pos += size
        else:
            if b != 0xFF:
                reserved(b, start)
            break
    this = CALLEE_SAVED[this_reg] if this_reg is not None else None
    if scan_offs != cur_offs:
        return PtrTableState(pushed_bytes=4 * depth, this_reg=this)
    args: list[PushedArg] = []
    if arg_tab is not None:
        tab, count, size = arg_tab
        if count > size:
            raise DecodeError(tab, f"fat call: {count} offsets cannot fit in {size} bytes")
        for _ in range(count):
            value, tab = decode_unsigned(data, tab)
            if tab > arg_tab[0] + size:
                raise DecodeError(tab - 1, "fat call: an offset runs past the table's byte size")
            args.append(PushedArg("ESP", value & ~3, bool(value & 1)))
    else:
        args = [
            PushedArg("ESP", 4 * i, bool(iarg_mask >> i & 1)) for i in range(arg_mask.bit_length()) if arg_mask >> i & 1
        ]
    live = frozenset(register_names(regs))
    return PtrTableState(live, live & frozenset(register_names(iregs)), tuple(args), 4 * depth, this)
