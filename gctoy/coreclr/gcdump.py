"""Print x86 GC info the way CoreCLR's gcdump does (JitDump, SOS ``!gcinfo``).

The output has two parts, under JitDump's headings::

    Method info block:
        method      size   = 0036
        ...                                    one line per header field (DumpInfoHdr)
    36 D4 8C C7 AA |                           the header bytes, 5 per line
    Pointer table:
    14             |             [EBP-14H] an untracked  local
    F1 79          | 0011        reg EDI becoming live
    ...
    FF             |

Every table line starts with a *bytes column*: the bytes read since the previous printed line,
``%02X `` each, padded to five slots with three spaces per empty slot; with more than five bytes
only four are shown, then ``...``; then ``| ``. Entries that print nothing (skips, prefixes,
non-pointer push counts) leave their bytes to the next printed line, so ``F1 79`` above is a
skip and the register change it precedes. No-GC regions are printed without their bytes (and
those bytes are never shown). The last line is the end byte ``FF`` and ``| `` alone.

`classify_offset` is gcdump's ``DumpPtrsInFrame``: the one line that says whether a code offset
is in the prolog, an epilog or the body. It uses gcdump's rules, which differ from the runtime's:
the first byte of an epilog counts as "in the epilog" (``>=``; the runtime uses ``>``), and it
does not accumulate the epilog table's deltas (every listed value is taken as an absolute start)
unless ``accumulate=True``.

``legacy=True`` reads a .NET Framework-era blob (no argTabOffset, absolute untracked offsets,
lifetime bit 1 printed as ``this``); the header lines stay in the modern gcdump's wording (the
old one printed e.g. ``saved reg.  mask`` and ``argument   count`` instead).
"""

from __future__ import annotations

from .codecs import U32_MAX, decode_unsigned
from .entries import TableEntry
from .header import CURRENT_VERSION
from .method import DecodedMethod, MethodGCInfo, decode_with_entries, encode

MAX_ENCODING_BYTES = 5


def bytes_column(chunk: bytes) -> str:
    """gcdump's ``DumpEncoding``: up to five ``%02X `` slots (``...`` when cut short), then ``| ``."""
    out = []
    for slot in range(MAX_ENCODING_BYTES):
        left = len(chunk) - slot
        if left <= 0:
            out.append("   ")
        elif left > 1 and slot == MAX_ENCODING_BYTES - 1:
            out.append("...")
        else:
            out.append(f"{chunk[slot]:02X} ")
    return "".join(out) + "| "


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def header_lines(decoded: DecodedMethod, data: bytes) -> list[str]:
    """``DumpInfoHdr``'s lines: the header fields, the epilogs, argTabOffset and the raw header bytes."""
    info = decoded.info
    h = info.header
    regs = "".join(
        name + " "
        for name, saved in (("EDI", h.edi_saved), ("ESI", h.esi_saved), ("EBX", h.ebx_saved), ("EBP", h.ebp_saved))
        if saved
    )
    lines = [
        f"    method      size   = {info.method_size:04X}",
        f"    prolog      size   = {h.prolog_size:2d} ",
        f"    epilog      size   = {h.epilog_size:2d} ",
        f"    epilog     count   = {h.epilog_count:2d} ",
        f"    epilog      end    = {_yes(h.epilog_at_end)}  ",
        f"    callee-saved regs  = {regs}",
        f"    ebp frame          = {_yes(h.ebp_frame)}  ",
        f"    fully interruptible= {_yes(h.interruptible)}  ",
        f"    double align       = {_yes(h.double_align)}  ",
        f"    arguments size     = {h.arg_count:2d} DWORDs",
        f"    stack frame size   = {h.frame_size:2d} DWORDs",
        f"    untracked count    = {h.untracked_cnt:2d} ",
        f"    var ptr tab count  = {h.var_ptr_table_size:2d} ",
    ]
    for flag, text in (
        (h.security, "security check obj"),
        (h.handlers, "exception handlers"),
        (h.localloc, "localloc          "),
        (h.edit_n_continue, "edit & continue   "),
        (h.prof_callbacks, "profiler callbacks"),
        (h.varargs, "varargs           "),
    ):
        if flag:
            lines.append(f"    {text} = yes")
    if h.gs_cookie_offset:
        lines.append(f"    GuardStack cookie  = [{'EBP-' if h.ebp_frame else 'ESP+'}{h.gs_cookie_offset}]")
    if h.sync_start_offset:
        s, e = h.sync_start_offset, h.sync_end_offset
        lines.append(f"    Sync region = [{s},{e}] ([{s:#x},{e:#x}])")
    if h.no_gc_region_cnt:
        lines.append(f"    no GC region count = {h.no_gc_region_cnt:2d} ")
    epilogs = decoded.region("epilogs")
    if epilogs is not None:
        lines += [entry.text for entry in epilogs.entries if entry.text is not None]
    elif h.epilog_count:
        lines.append(f"    epilog        at   {(info.method_size - h.epilog_size) & U32_MAX:04X}")
    if decoded.arg_tab_offset is not None:
        lines.append(f"    argTabOffset = {decoded.arg_tab_offset:x}  ")
    end = max(r.end for r in decoded.regions if r.name in ("method size", "header", "epilogs", "argTabOffset"))
    lines += [bytes_column(data[i : min(i + MAX_ENCODING_BYTES, end)]) for i in range(0, end, MAX_ENCODING_BYTES)]
    return lines


def table_lines(decoded: DecodedMethod, data: bytes) -> list[str]:
    """``DumpGCTable``'s lines: no-GC regions, untracked slots, lifetimes, then the pointer table."""
    lines: list[str] = []
    for name in ("no-GC regions", "untracked", "lifetimes", "pointer table"):
        region = decoded.region(name)
        if region is None:
            continue
        if name == "no-GC regions":
            lines += [entry.text for entry in region.entries if entry.text is not None]
            continue
        lines += entry_lines(region.entries, data, final=name == "pointer table")
    return lines


def entry_lines(entries: tuple[TableEntry, ...] | list[TableEntry], data: bytes, *, final: bool = False) -> list[str]:
    """Bytes column + text for each printed entry; entries without text hand their bytes on.

    With ``final`` the bytes left over at the end (the pointer table's ``FF``) get a line of
    their own, as gcdump prints it.
    """
    lines: list[str] = []
    carried: int | None = None
    for entry in entries:
        first = entry.start if carried is None else carried
        if entry.text is None:
            carried = first
            continue
        lines.append(bytes_column(data[first : entry.end]) + entry.text)
        carried = None
    if final and carried is not None:
        lines.append(bytes_column(data[carried : entries[-1].end]))
    return lines


def gcdump(
    data: bytes | MethodGCInfo, version: int = CURRENT_VERSION, *, legacy: bool = False, headings: bool = True
) -> str:
    """The gcdump text of a whole blob (or of a `MethodGCInfo`, encoded first), ending with a newline."""
    if isinstance(data, MethodGCInfo):
        data = encode(data, version, legacy=legacy)
    data = bytes(data)
    decoded = decode_with_entries(data, version, legacy=legacy)
    lines = ["Method info block:"] if headings else []
    lines += header_lines(decoded, data)
    if headings:
        lines.append("No GC regions and pointer table:" if decoded.info.no_gc_regions else "Pointer table:")
    lines += table_lines(decoded, data)
    return "\n".join(lines) + "\n"


def classify_offset(
    data: bytes | MethodGCInfo,
    offset: int,
    version: int = CURRENT_VERSION,
    *,
    legacy: bool = False,
    accumulate: bool = False,
) -> str:
    """gcdump's ``DumpPtrsInFrame`` line for code ``offset``: prolog, epilog (n bytes into it) or body.

    gcdump reads the epilog table without adding the deltas up; ``accumulate=True`` uses the real
    epilog starts instead (the runtime's reading) while keeping gcdump's ``>=`` test.
    """
    if isinstance(data, MethodGCInfo):
        info = data
        stored = _stored_epilog_values(encode(info, version, legacy=legacy), version, legacy)
    else:
        decoded = decode_with_entries(bytes(data), version, legacy=legacy)
        info = decoded.info
        stored = _stored_epilog_values(bytes(data), version, legacy, decoded)
    h = info.header
    if offset < h.prolog_size:
        return f"    Offset {offset:04X} is within the method's prolog"
    starts = info.epilogs if accumulate or stored is None else stored
    for start in starts:
        if start <= offset < start + h.epilog_size:
            return f"    Offset {offset:04X} is within the method's epilog ({offset - start:02X} bytes into it)"
    return f"    Offset {offset:04X} is within the method's body"


def _stored_epilog_values(
    data: bytes, version: int, legacy: bool, decoded: DecodedMethod | None = None
) -> tuple[int, ...] | None:
    """The raw UDelta values of the epilog table (None when the blob has no table)."""
    decoded = decoded or decode_with_entries(data, version, legacy=legacy)
    region = decoded.region("epilogs")
    if region is None:
        return None
    return tuple(decode_unsigned(data, entry.start)[0] for entry in region.entries)
