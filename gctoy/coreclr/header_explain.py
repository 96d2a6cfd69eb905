"""Every byte of an x86 GC-info method header, explained: the shortcut row, each fixup, each trailing field.

`explain_header(data, version)` decodes a header the way `decode_header` does, but also returns one
`TableEntry` per byte (or per trailing Unsigned) saying what it did::

    D4   shortcut row 0x54 (prolog 9, epilog 2, 1 epilog at the end, ...); fixups follow
    8C   argCount = 4 (SET_ARGCOUNT+4); more follows
    ...

The texts are built from the same code tables the decoder uses (header.py), so the explanation
cannot drift from the decoder: a test decodes every explained header and compares.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from . import header as H
from .codecs import decode_unsigned
from .entries import TableEntry

_FLAG_NAMES = {code: attr for attr, code in H._FLAG_CODES}
_CAMEL = {v: k for k, v in H._ATTR.items()} | {
    "gs_cookie_offset": "gsCookieOffset",
    "sync_start_offset": "syncStartOffset",
    "sync_end_offset": "syncEndOffset",
    "rev_pinvoke_offset": "revPInvokeOffset",
    "no_gc_region_cnt": "noGCRegionCnt",
}


def describe_row(hdr: H.InfoHdr) -> str:
    """A one-line summary of a shortcut row (placeholders shown as such)."""
    parts = [
        f"prolog {hdr.prolog_size}",
        f"epilog {hdr.epilog_size}",
        f"{hdr.epilog_count} epilog{'s' if hdr.epilog_count != 1 else ''}"
        + (" at the end" if hdr.epilog_at_end else ""),
    ]
    saved = [
        r
        for r, on in (("EDI", hdr.edi_saved), ("ESI", hdr.esi_saved), ("EBX", hdr.ebx_saved), ("EBP", hdr.ebp_saved))
        if on
    ]
    parts.append("saves " + " ".join(saved) if saved else "saves nothing")
    parts.append("EBP frame" if hdr.ebp_frame else "EBP-less")
    if hdr.interruptible:
        parts.append("fully interruptible")
    parts.append(f"argCount {hdr.arg_count}")
    parts.append(f"frameSize {hdr.frame_size}")
    untracked = "placeholder" if hdr.untracked_cnt == H.HAS_UNTRACKED else str(hdr.untracked_cnt)
    parts.append(f"untracked {untracked}")
    parts.append("var-ptr table" if hdr.var_ptr_table_size else "no var-ptr table")
    return ", ".join(parts)


def code_meaning(code: int, version: int) -> str:
    """What a first-set fixup code (0x00..0x7F, not 0x4F) does."""
    if code <= 0x07:
        return f"frameSize = {code} (SET_FRAMESIZE+{code})"
    if code <= 0x10:
        return f"argCount = {code - H.SET_ARGCOUNT} (SET_ARGCOUNT+{code - H.SET_ARGCOUNT})"
    if code <= 0x21:
        return f"prologSize = {code - H.SET_PROLOGSIZE} (SET_PROLOGSIZE+{code - H.SET_PROLOGSIZE})"
    if code <= 0x2C:
        return f"epilogSize = {code - H.SET_EPILOGSIZE} (SET_EPILOGSIZE+{code - H.SET_EPILOGSIZE})"
    if code <= 0x36:
        count, at_end = divmod(code - H.SET_EPILOGCNT, 2)
        flag = "yes" if at_end else "no"
        return f"epilogCount = {count}, epilogAtEnd = {flag} (SET_EPILOGCNT+{code - H.SET_EPILOGCNT})"
    if code <= 0x3A:
        return f"untrackedCnt = {code - H.SET_UNTRACKED} (SET_UNTRACKED+{code - H.SET_UNTRACKED})"
    if code in _FLAG_NAMES:
        return f"flip {_CAMEL[_FLAG_NAMES[code]]}"
    named = {
        H.FLIP_VAR_PTR_TABLE_SZ: "flip var-ptr table presence (when present, its size follows the header)",
        H.FFFF_UNTRACKED_CNT: "untrackedCnt is large: its value follows the header",
        H.FLIP_HAS_GS_COOKIE: "flip GS cookie presence (when present, its offset follows the header)",
        H.FLIP_SYNC: "flip synchronized (when set, the sync region follows the header)",
        H.FLIP_REV_PINVOKE_FRAME: "flip reverse-P/Invoke frame (when present, its offset follows the header)",
    }
    if code in named:
        return named[code]
    if code < H.NEXT_FOUR_ARGCOUNT:
        return f"frameSize = frameSize << 4 | {code & 0xF} (NEXT_FOUR_FRAMESIZE)"
    if code < H.NEXT_THREE_PROLOGSIZE:
        return f"argCount = argCount << 4 | {code & 0xF} (NEXT_FOUR_ARGCOUNT)"
    if code < H.NEXT_THREE_EPILOGSIZE:
        return f"prologSize = prologSize << 3 | {code & 0x7} (NEXT_THREE_PROLOGSIZE)"
    return f"epilogSize = epilogSize << 3 | {code & 0x7} (NEXT_THREE_EPILOGSIZE)"


def second_code_meaning(code: int, version: int) -> str:
    """What a second-set code (the byte after 0x4F) does in ``version``."""
    first_nogc, follows = H._second_set(version)
    kinds = ("scalar", "object", "byref", "float")
    if version >= 5 and code < first_nogc:
        return f"returnKind = {kinds[code & 3]}, isAsync = {'yes' if code & 4 else 'no'}"
    if code <= 3:
        return f"returnKind = {kinds[code]}"
    if first_nogc <= code < follows:
        return f"noGCRegionCnt = {code - first_nogc}"
    return "noGCRegionCnt is large: its value follows the header"


#: Each shortcut row as the header decoder's mutable state (a plain field -> value dict).
_ROW_STATES = tuple(
    {f.name: getattr(row, f.name) for f in dataclasses.fields(H.InfoHdr)} for row in map(H.shortcut, range(128))
)

#: Placeholder fields in the order their values follow the header, with the names of those values.
_TRAILING = (
    ("untracked_cnt", H.HAS_UNTRACKED, ("untrackedCnt",)),
    ("var_ptr_table_size", H.HAS_VARPTR, ("varPtrTableSize",)),
    ("gs_cookie_offset", H.HAS_GS_COOKIE_OFFSET, ("gsCookieOffset",)),
    ("sync_start_offset", H.HAS_SYNC_OFFSET, ("syncStartOffset", "syncEndOffset")),
    ("rev_pinvoke_offset", H.HAS_REV_PINVOKE_FRAME_OFFSET, ("revPInvokeOffset",)),
    ("no_gc_region_cnt", H.HAS_NOGCREGIONS, ("noGCRegionCnt",)),
)


@dataclass(frozen=True)
class HeaderWalk:
    """A decoded header, an entry per byte (or trailing Unsigned), and the placeholders it used."""

    header: H.InfoHdr
    entries: tuple[TableEntry, ...]
    end: int
    #: InfoHdr fields whose value followed the header because a placeholder code said so; the
    #: runtime reads ``argTabOffset`` when the untracked, var-ptr or no-GC count came that way,
    #: whatever the count turned out to be.
    placeholders: frozenset[str]


def walk_header(data: bytes, version: int = H.CURRENT_VERSION, offset: int = 0) -> HeaderWalk:
    """Decode a header at ``offset`` and explain every byte, replaying the decoder's state machine."""
    hdr, end = H.decode_header(data, version, offset)  # raises DecodeError on bad input
    first = data[offset]
    more = "; fixups follow" if first & H.MORE else ""
    entries = [
        TableEntry(
            offset,
            offset + 1,
            None,
            "shortcut",
            f"shortcut row {first & 0x7F:#04x} ({describe_row(H.shortcut(first & 0x7F))}){more}",
        )
    ]
    state = dict(_ROW_STATES[first & 0x7F])
    pos, byte = offset + 1, first
    while byte & H.MORE:
        byte = data[pos]
        code = byte & 0x7F
        if code == H.NEXT_OPCODE:
            byte = data[pos + 1]
            H._apply_second(state, byte & 0x7F, version, pos + 1)
            more = "; more follows" if byte & H.MORE else ""
            text = second_code_meaning(byte & 0x7F, version) + " (second code set)" + more
            entries.append(TableEntry(pos, pos + 2, None, "fixup2", text))
            pos += 2
            continue
        H._apply_first(state, code, version, pos)
        more = "; more follows" if byte & H.MORE else ""
        entries.append(TableEntry(pos, pos + 1, None, "fixup", code_meaning(code, version) + more))
        pos += 1
    used = set()
    for attr, placeholder, names in _TRAILING:
        if state[attr] != placeholder:
            continue
        used.add(attr)
        for name in names:
            value, nxt = decode_unsigned(data, pos)
            entries.append(TableEntry(pos, nxt, None, "trailing", f"{name} = {value} (Unsigned)"))
            pos = nxt
    if pos != end:
        raise AssertionError("header walk disagrees with decode_header")  # pragma: no cover
    return HeaderWalk(hdr, tuple(entries), end, frozenset(used))


def explain_header(
    data: bytes, version: int = H.CURRENT_VERSION, offset: int = 0
) -> tuple[H.InfoHdr, list[TableEntry], int]:
    """Decode a header at ``offset`` and explain every byte; returns (header, entries, next offset)."""
    walk = walk_header(data, version, offset)
    return walk.header, list(walk.entries), walk.end


def header_fields(hdr: H.InfoHdr) -> list[tuple[str, object]]:
    """(CoreCLR field name, value) for every field of ``hdr``, in the struct's order."""
    return [(_CAMEL[f.name], getattr(hdr, f.name)) for f in dataclasses.fields(hdr)]
