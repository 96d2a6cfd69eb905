"""The method header (`InfoHdr`) of CoreCLR's x86 GC info: shortcut byte, fixup codes, trailing fields.

A header is written as one byte whose low 7 bits pick a row of the 128-entry shortcut table
(`tables.INFO_HDR_SHORTCUT`) and whose bit 7 says "fixup bytes follow". Each fixup byte carries
one code in its low 7 bits (set a small value, shift in 3 or 4 more bits, flip a flag, or switch to
a placeholder meaning "the real value follows the header") and bit 7 = "more". Code 0x4F escapes to
a second code set whose meaning depends on the GC-info version. After the last header byte come
the real values of the placeholders, as Unsigneds, in a fixed order: untracked count, var-ptr
table size, GS cookie offset, sync start and end, reverse-P/Invoke frame offset, no-GC region count.

`encode_header` chooses bytes the way CoreCLR's JIT does (gcencode.cpp): an exact shortcut row if
one exists, otherwise the nearest row by the JIT's distance measure, then one fixup per step in
the JIT's priority order until the state matches. `decode_header` follows the VM's decoder and
reports malformed input as `DecodeError` with the offset of the byte at fault.

Versions (not stored in the blob): 1 has no second code set (0x4E and 0x4F unused); 2 and 3 add
the reverse-P/Invoke flip (0x4E) and the second set with `return_kind` 0..3; 4 adds no-GC region
counts (second-set 0x04..0x08, 0x09 = count follows); 5 adds `is_async` (second-set 0x00..0x07 =
return kind | is_async << 2) and moves the no-GC codes to 0x08..0x0C, 0x0D.

The header bytes here exclude what precedes and follows it in a method's GC info (the method size
Unsigned before it; the epilog table and `argTabOffset` after it).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from ..errors import DecodeError
from .codecs import U32_MAX, GCInfoEncodeError, decode_unsigned, encode_unsigned
from .tables import CONSTANTS, INFO_HDR_LOOKUP, INFO_HDR_SHORTCUT, SHORTCUT_FIELDS

VERSIONS = (1, 2, 3, 4, 5)
CURRENT_VERSION = 5

HAS_UNTRACKED = CONSTANTS["HAS_UNTRACKED"]
HAS_VARPTR = CONSTANTS["HAS_VARPTR"]
HAS_NOGCREGIONS = CONSTANTS["HAS_NOGCREGIONS"]
HAS_GS_COOKIE_OFFSET = CONSTANTS["HAS_GS_COOKIE_OFFSET"]
HAS_SYNC_OFFSET = CONSTANTS["HAS_SYNC_OFFSET"]
INVALID_REV_PINVOKE_OFFSET = CONSTANTS["INVALID_REV_PINVOKE_OFFSET"]
HAS_REV_PINVOKE_FRAME_OFFSET = CONSTANTS["HAS_REV_PINVOKE_FRAME_OFFSET"]
MORE = CONSTANTS["MORE_BYTES_TO_FOLLOW"]

SET_FRAMESIZE_MAX = CONSTANTS["SET_FRAMESIZE_MAX"]  # 7
SET_ARGCOUNT_MAX = CONSTANTS["SET_ARGCOUNT_MAX"]  # 8
SET_PROLOGSIZE_MAX = CONSTANTS["SET_PROLOGSIZE_MAX"]  # 16
SET_EPILOGSIZE_MAX = CONSTANTS["SET_EPILOGSIZE_MAX"]  # 10
SET_EPILOGCNT_MAX = CONSTANTS["SET_EPILOGCNT_MAX"]  # 4
SET_UNTRACKED_MAX = CONSTANTS["SET_UNTRACKED_MAX"]  # 3
SET_NOGCREGIONS_MAX = CONSTANTS["SET_NOGCREGIONS_MAX"]  # 4
IH_MAX_PROLOG_SIZE = CONSTANTS["IH_MAX_PROLOG_SIZE"]  # 51

# First code set (`infoHdrAdjust`), values of the low 7 bits of a fixup byte.
SET_FRAMESIZE = 0x00  # 0x00..0x07
SET_ARGCOUNT = 0x08  # 0x08..0x10
SET_PROLOGSIZE = 0x11  # 0x11..0x21
SET_EPILOGSIZE = 0x22  # 0x22..0x2C
SET_EPILOGCNT = 0x2D  # 0x2D..0x36: count * 2 + atEnd
SET_UNTRACKED = 0x37  # 0x37..0x3A
FLIP_EDI_SAVED = 0x3B
FLIP_ESI_SAVED = 0x3C
FLIP_EBX_SAVED = 0x3D
FLIP_EBP_SAVED = 0x3E
FLIP_EBP_FRAME = 0x3F
FLIP_INTERRUPTIBLE = 0x40
FLIP_DOUBLE_ALIGN = 0x41
FLIP_SECURITY = 0x42
FLIP_HANDLERS = 0x43
FLIP_LOCALLOC = 0x44
FLIP_EDITNCONTINUE = 0x45
FLIP_VAR_PTR_TABLE_SZ = 0x46
FFFF_UNTRACKED_CNT = 0x47
FLIP_VARARGS = 0x48
FLIP_PROF_CALLBACKS = 0x49
FLIP_HAS_GS_COOKIE = 0x4A
FLIP_SYNC = 0x4B
FLIP_HAS_GENERICS_CONTEXT = 0x4C
FLIP_GENERICS_CONTEXT_IS_METHODDESC = 0x4D
FLIP_REV_PINVOKE_FRAME = 0x4E  # v2+
NEXT_OPCODE = 0x4F  # v2+: the next byte is from the second code set
NEXT_FOUR_FRAMESIZE = 0x50  # 0x50..0x5F
NEXT_FOUR_ARGCOUNT = 0x60  # 0x60..0x6F
NEXT_THREE_PROLOGSIZE = 0x70  # 0x70..0x77
NEXT_THREE_EPILOGSIZE = 0x78  # 0x78..0x7F


@dataclass(frozen=True)
class InfoHdr:
    """Every field of CoreCLR's modern x86 `InfoHdr`, holding real values (never placeholders).

    Sizes are bytes for the prolog/epilog and DWORDs for `arg_count` and `frame_size`.
    `gs_cookie_offset` 0, `sync_start_offset` 0 and `rev_pinvoke_offset` 0xFFFFFFFF mean "none";
    when there is no sync region, `sync_end_offset` must be 0 too.
    """

    prolog_size: int = 0  # u8
    epilog_size: int = 0  # u8
    epilog_count: int = 0  # 0..4
    epilog_at_end: bool = False
    edi_saved: bool = False
    esi_saved: bool = False
    ebx_saved: bool = False
    ebp_saved: bool = False
    ebp_frame: bool = False
    interruptible: bool = False
    double_align: bool = False
    security: bool = False
    handlers: bool = False
    localloc: bool = False
    edit_n_continue: bool = False
    varargs: bool = False
    prof_callbacks: bool = False
    generics_context: bool = False
    generics_context_is_method_desc: bool = False
    return_kind: int = 0  # 0 scalar, 1 object, 2 byref, 3 float (v2+)
    is_async: bool = False  # v5
    arg_count: int = 0  # u16, DWORDs
    frame_size: int = 0  # u32, DWORDs
    untracked_cnt: int = 0  # u32
    var_ptr_table_size: int = 0  # u32
    gs_cookie_offset: int = 0  # u32, 0 = no GS cookie
    sync_start_offset: int = 0  # u32, 0 = not synchronized
    sync_end_offset: int = 0  # u32
    rev_pinvoke_offset: int = INVALID_REV_PINVOKE_OFFSET  # u32 (v2+)
    no_gc_region_cnt: int = 0  # u32 (v4+)


#: InfoHdr attribute for each CoreCLR column name of the shortcut table.
_ATTR = {
    "prologSize": "prolog_size",
    "epilogSize": "epilog_size",
    "epilogCount": "epilog_count",
    "epilogAtEnd": "epilog_at_end",
    "ediSaved": "edi_saved",
    "esiSaved": "esi_saved",
    "ebxSaved": "ebx_saved",
    "ebpSaved": "ebp_saved",
    "ebpFrame": "ebp_frame",
    "interruptible": "interruptible",
    "doubleAlign": "double_align",
    "security": "security",
    "handlers": "handlers",
    "localloc": "localloc",
    "editNcontinue": "edit_n_continue",
    "varargs": "varargs",
    "profCallbacks": "prof_callbacks",
    "genericsContext": "generics_context",
    "genericsContextIsMethodDesc": "generics_context_is_method_desc",
    "returnKind": "return_kind",
    "isAsync": "is_async",
    "argCount": "arg_count",
    "frameSize": "frame_size",
    "untrackedCnt": "untracked_cnt",
    "varPtrTableSize": "var_ptr_table_size",
}
_BOOL_FIELDS = frozenset(f.name for f in dataclasses.fields(InfoHdr) if f.type in ("bool", bool))
_ROW_ATTRS = tuple(_ATTR[name] for name in SHORTCUT_FIELDS)

#: Flag fields with a one-byte flip code in the first set, in the JIT's fixup priority order.
_FLAG_CODES = (
    ("edi_saved", FLIP_EDI_SAVED),
    ("esi_saved", FLIP_ESI_SAVED),
    ("ebx_saved", FLIP_EBX_SAVED),
    ("ebp_saved", FLIP_EBP_SAVED),
    ("ebp_frame", FLIP_EBP_FRAME),
    ("interruptible", FLIP_INTERRUPTIBLE),
    ("double_align", FLIP_DOUBLE_ALIGN),
    ("security", FLIP_SECURITY),
    ("handlers", FLIP_HANDLERS),
    ("localloc", FLIP_LOCALLOC),
    ("edit_n_continue", FLIP_EDITNCONTINUE),
    ("varargs", FLIP_VARARGS),
    ("prof_callbacks", FLIP_PROF_CALLBACKS),
    ("generics_context", FLIP_HAS_GENERICS_CONTEXT),
    ("generics_context_is_method_desc", FLIP_GENERICS_CONTEXT_IS_METHODDESC),
)
_FLIP_ATTR = {code: attr for attr, code in _FLAG_CODES}

#: Fields compared byte for byte by the JIT's row matchers (everything before `untrackedCnt`).
_SMALL_ATTRS = tuple(a for a in _ROW_ATTRS if a not in ("untracked_cnt", "var_ptr_table_size"))


def shortcut(index: int) -> InfoHdr:
    """Row ``index`` (0..127) of the shortcut table as an `InfoHdr` (placeholders kept as CoreCLR does)."""
    row = INFO_HDR_SHORTCUT[index]
    fields: dict[str, Any] = {a: (bool(v) if a in _BOOL_FIELDS else v) for a, v in zip(_ROW_ATTRS, row)}
    return InfoHdr(**fields)


_SHORTCUTS = tuple(shortcut(i) for i in range(128))
#: each row as the decoder's and encoder's mutable state starts from it (its fields are ints and bools,
#: so a shallow ``dict`` copy of a row is what ``dataclasses.asdict`` would give, without its deep copy)
_SHORTCUT_STATES = tuple(dataclasses.asdict(row) for row in _SHORTCUTS)


# --------------------------------------------------------------------------- second code set


def _second_set(version: int) -> tuple[int, int]:
    """(first no-GC count code, "count follows" code) of the second code set for ``version``."""
    return (8, 13) if version >= 5 else (4, 9)


def _ret_code(version: int, return_kind: int, is_async: bool) -> int:
    return return_kind | (4 if is_async and version >= 5 else 0)


# --------------------------------------------------------------------------- validation


def check_header(hdr: InfoHdr, version: int) -> None:
    """Raise `GCInfoEncodeError` unless ``hdr`` can be written as a ``version`` header."""
    if version not in VERSIONS:
        raise GCInfoEncodeError(f"GC info version must be one of 1..5, got {version!r}")
    for f in dataclasses.fields(InfoHdr):
        v = getattr(hdr, f.name)
        if f.name in _BOOL_FIELDS:
            if not isinstance(v, bool):
                raise GCInfoEncodeError(f"{f.name} must be a bool, got {v!r}")
        elif not isinstance(v, int) or isinstance(v, bool) or not 0 <= v <= U32_MAX:
            raise GCInfoEncodeError(f"{f.name} must be an integer in 0..0xFFFFFFFF, got {v!r}")
    limits = {
        "prolog_size": 0xFF,
        "epilog_size": 0xFF,
        "arg_count": 0xFFFF,
        "epilog_count": SET_EPILOGCNT_MAX,
        "return_kind": 3,
    }
    for name, top in limits.items():
        if getattr(hdr, name) > top:
            raise GCInfoEncodeError(f"{name} must be at most {top}, got {getattr(hdr, name)}")
    if hdr.sync_start_offset == 0 and hdr.sync_end_offset != 0:
        raise GCInfoEncodeError("sync_end_offset is set but sync_start_offset is 0 (no sync region)")
    if version < 2:
        if hdr.return_kind:
            raise GCInfoEncodeError("return_kind needs GC info version 2 or later")
        if hdr.rev_pinvoke_offset != INVALID_REV_PINVOKE_OFFSET:
            raise GCInfoEncodeError("a reverse-P/Invoke frame needs GC info version 2 or later")
    if version < 4 and hdr.no_gc_region_cnt:
        raise GCInfoEncodeError("no-GC regions need GC info version 4 or later")
    if version < 5 and hdr.is_async:
        raise GCInfoEncodeError("is_async needs GC info version 5 or later")


# --------------------------------------------------------------------------- encoder


def _row_matches(row: InfoHdr, target: InfoHdr) -> bool:
    """The JIT's exact match of a shortcut row (`InfoHdrSmall::isHeaderMatch`)."""
    if any(getattr(row, a) != getattr(target, a) for a in _SMALL_ATTRS):
        return False
    if row.untracked_cnt != target.untracked_cnt and not (
        target.untracked_cnt > SET_UNTRACKED_MAX and row.untracked_cnt == HAS_UNTRACKED
    ):
        return False
    if (row.var_ptr_table_size != 0) != (target.var_ptr_table_size != 0):
        return False
    return (
        target.gs_cookie_offset == 0
        and target.sync_start_offset == 0
        and target.rev_pinvoke_offset == INVALID_REV_PINVOKE_OFFSET
        and target.no_gc_region_cnt == 0
    )


def _state_matches(state: dict, target: InfoHdr) -> bool:
    """The JIT's `InfoHdr::isHeaderMatch`: placeholders stand for large counts and offsets."""
    if any(state[a] != getattr(target, a) for a in _SMALL_ATTRS):
        return False
    if state["untracked_cnt"] != target.untracked_cnt and not (
        target.untracked_cnt > SET_UNTRACKED_MAX and state["untracked_cnt"] == HAS_UNTRACKED
    ):
        return False
    if (state["var_ptr_table_size"] != 0) != (target.var_ptr_table_size != 0):
        return False
    if (state["gs_cookie_offset"] == 0) != (target.gs_cookie_offset == 0):
        return False
    if (state["sync_start_offset"] == 0) != (target.sync_start_offset == 0):
        return False
    if (state["rev_pinvoke_offset"] == INVALID_REV_PINVOKE_OFFSET) != (
        target.rev_pinvoke_offset == INVALID_REV_PINVOKE_OFFSET
    ):
        return False
    return state["no_gc_region_cnt"] == target.no_gc_region_cnt or (
        target.no_gc_region_cnt > SET_NOGCREGIONS_MAX and state["no_gc_region_cnt"] == HAS_NOGCREGIONS
    )


def _extra_shifts(cur: int, tgt: int, limit: int, bits: int) -> int:
    """Shift-in bytes beyond the first that turning ``cur`` into ``tgt`` costs (the JIT's bigEncodingN)."""
    count = 0
    while tgt > limit:
        tgt >>= bits
        if tgt == cur:
            break
        count += 1
    return count


def _distance(target: InfoHdr, row: InfoHdr, version: int) -> int:
    """The JIT's estimate of the fixup bytes needed to turn ``row`` into ``target``."""
    d = 0
    if row.untracked_cnt != target.untracked_cnt and not (
        target.untracked_cnt > SET_UNTRACKED_MAX and row.untracked_cnt == HAS_UNTRACKED
    ):
        d += 1
    if (row.var_ptr_table_size != 0) != (target.var_ptr_table_size != 0):
        d += 1
    for attr, limit, bits in (
        ("frame_size", SET_FRAMESIZE_MAX, 4),
        ("arg_count", SET_ARGCOUNT_MAX, 4),
        ("prolog_size", SET_PROLOGSIZE_MAX, 3),
        ("epilog_size", SET_EPILOGSIZE_MAX, 3),
    ):
        cur, tgt = getattr(row, attr), getattr(target, attr)
        if cur != tgt:
            d += 1
            if tgt > limit:
                d += _extra_shifts(cur, tgt, 15 if attr == "prolog_size" else limit, bits)
    if row.epilog_count != target.epilog_count or row.epilog_at_end != target.epilog_at_end:
        d += 1
    d += sum(1 for attr, _ in _FLAG_CODES if getattr(row, attr) != getattr(target, attr))
    if row.return_kind != target.return_kind or (version >= 5 and row.is_async != target.is_async):
        d += 2
    d += target.gs_cookie_offset != 0
    d += target.sync_start_offset != 0
    d += target.rev_pinvoke_offset != INVALID_REV_PINVOKE_OFFSET
    d += 2 * (target.no_gc_region_cnt > 0)
    return d


def choose_shortcut(hdr: InfoHdr, version: int = CURRENT_VERSION) -> tuple[int, bool]:
    """The shortcut row the JIT starts from and whether it is an exact match (`encodeHeaderFirst`)."""
    lo = hi = 0
    if hdr.prolog_size <= IH_MAX_PROLOG_SIZE:
        lo, hi = INFO_HDR_LOOKUP[hdr.prolog_size], INFO_HDR_LOOKUP[hdr.prolog_size + 1]
        for n in range(lo, hi):
            if _row_matches(_SHORTCUTS[n], hdr):
                return n, True
    acceptable = 1
    if hdr.frame_size > SET_FRAMESIZE_MAX:
        acceptable += 1 + (hdr.frame_size > 32)
    if hdr.arg_count > SET_ARGCOUNT_MAX:
        acceptable += 1 + (hdr.arg_count > 32)
    nearest, closeness = -1, 255
    order = list(range(lo, hi)) + [n for n in range(INFO_HDR_LOOKUP[IH_MAX_PROLOG_SIZE + 1]) if not lo <= n < hi]
    for n in order:
        d = _distance(hdr, _SHORTCUTS[n], version)
        if d <= acceptable:
            return n, False
        if d < closeness:
            nearest, closeness = n, d
    return nearest, False


def _initial_part(cur: int, tgt: int, limit: int, bits: int) -> tuple[bool, int]:
    """The JIT's initNeededN: (True, value to SET) or (False, bits to shift in after ``cur``)."""
    mask = (1 << bits) - 1
    tmp = tgt
    while tmp > limit:
        nib = tmp & mask
        tmp >>= bits
        if tmp == cur:
            return False, nib
    return True, tmp


def _next_fix(state: dict, hdr: InfoHdr, version: int) -> tuple[int, int]:
    """One fixup step (`encodeHeaderNext`): updates ``state``; returns (code set 1 or 2, code)."""
    for attr, set_code, set_max, next_code, bits, init_max in (
        ("arg_count", SET_ARGCOUNT, SET_ARGCOUNT_MAX, NEXT_FOUR_ARGCOUNT, 4, SET_ARGCOUNT_MAX),
        ("frame_size", SET_FRAMESIZE, SET_FRAMESIZE_MAX, NEXT_FOUR_FRAMESIZE, 4, SET_FRAMESIZE_MAX),
    ):
        cur, tgt = state[attr], getattr(hdr, attr)
        if cur != tgt:
            return 1, _fix_number(state, attr, cur, tgt, set_code, set_max, next_code, bits, init_max)
    if state["epilog_count"] != hdr.epilog_count or state["epilog_at_end"] != hdr.epilog_at_end:
        state["epilog_count"], state["epilog_at_end"] = hdr.epilog_count, hdr.epilog_at_end
        return 1, SET_EPILOGCNT + hdr.epilog_count * 2 + int(hdr.epilog_at_end)
    if (state["var_ptr_table_size"] != 0) != (hdr.var_ptr_table_size != 0):
        state["var_ptr_table_size"] = HAS_VARPTR if state["var_ptr_table_size"] == 0 else 0
        return 1, FLIP_VAR_PTR_TABLE_SZ
    if state["untracked_cnt"] != hdr.untracked_cnt:
        if hdr.untracked_cnt <= SET_UNTRACKED_MAX:
            state["untracked_cnt"] = hdr.untracked_cnt
            return 1, SET_UNTRACKED + hdr.untracked_cnt
        if state["untracked_cnt"] != HAS_UNTRACKED:
            state["untracked_cnt"] = HAS_UNTRACKED
            return 1, FFFF_UNTRACKED_CNT
    for attr, set_code, set_max, next_code, init_max in (
        ("epilog_size", SET_EPILOGSIZE, SET_EPILOGSIZE_MAX, NEXT_THREE_EPILOGSIZE, SET_EPILOGSIZE_MAX),
        ("prolog_size", SET_PROLOGSIZE, SET_PROLOGSIZE_MAX, NEXT_THREE_PROLOGSIZE, 15),
    ):
        cur, tgt = state[attr], getattr(hdr, attr)
        if cur != tgt:
            return 1, _fix_number(state, attr, cur, tgt, set_code, set_max, next_code, 3, init_max)
    for attr, code in _FLAG_CODES:
        if state[attr] != getattr(hdr, attr):
            state[attr] = getattr(hdr, attr)
            return 1, code
    if state["return_kind"] != hdr.return_kind or state["is_async"] != hdr.is_async:
        state["return_kind"], state["is_async"] = hdr.return_kind, hdr.is_async
        return 2, _ret_code(version, hdr.return_kind, hdr.is_async)
    for attr, none, placeholder, code in (
        ("gs_cookie_offset", 0, HAS_GS_COOKIE_OFFSET, FLIP_HAS_GS_COOKIE),
        ("sync_start_offset", 0, HAS_SYNC_OFFSET, FLIP_SYNC),
        ("rev_pinvoke_offset", INVALID_REV_PINVOKE_OFFSET, HAS_REV_PINVOKE_FRAME_OFFSET, FLIP_REV_PINVOKE_FRAME),
    ):
        if (state[attr] == none) != (getattr(hdr, attr) == none):
            state[attr] = placeholder if state[attr] == none else none
            return 1, code
    first_nogc, follows = _second_set(version)
    if state["no_gc_region_cnt"] != hdr.no_gc_region_cnt:
        if hdr.no_gc_region_cnt <= SET_NOGCREGIONS_MAX:
            state["no_gc_region_cnt"] = hdr.no_gc_region_cnt
            return 2, first_nogc + hdr.no_gc_region_cnt
        if state["no_gc_region_cnt"] != HAS_NOGCREGIONS:
            state["no_gc_region_cnt"] = HAS_NOGCREGIONS
            return 2, follows
    raise AssertionError("header encoder made no progress")  # pragma: no cover


def _fix_number(
    state: dict, attr: str, cur: int, tgt: int, set_code: int, set_max: int, next_code: int, bits: int, init_max: int
) -> int:
    """SET a small value, or start / continue shifting in a large one."""
    if tgt <= set_max:
        state[attr] = tgt
        return set_code + tgt
    need_set, part = _initial_part(cur, tgt, init_max, bits)
    if need_set:
        state[attr] = part
        return set_code + part
    state[attr] = (cur << bits) + part
    return next_code + part


def header_codes(hdr: InfoHdr, version: int = CURRENT_VERSION) -> bytes:
    """The shortcut byte and fixup bytes for ``hdr`` (without the trailing fields)."""
    check_header(hdr, version)
    index, exact = choose_shortcut(hdr, version)
    if exact:
        return bytes([index])
    out = bytearray([MORE | index])
    state = dict(_SHORTCUT_STATES[index])
    more = True
    while more:
        code_set, code = _next_fix(state, hdr, version)
        more = not _state_matches(state, hdr)
        if code_set == 2:
            out.append(MORE | NEXT_OPCODE)
        out.append(code | (MORE if more else 0))
    return bytes(out)


def trailing_fields(hdr: InfoHdr) -> bytes:
    """The Unsigneds that follow the header bytes for the placeholders ``hdr`` needs."""
    out = bytearray()
    if hdr.untracked_cnt > SET_UNTRACKED_MAX:
        out += encode_unsigned(hdr.untracked_cnt)
    if hdr.var_ptr_table_size:
        out += encode_unsigned(hdr.var_ptr_table_size)
    if hdr.gs_cookie_offset:
        out += encode_unsigned(hdr.gs_cookie_offset)
    if hdr.sync_start_offset:
        out += encode_unsigned(hdr.sync_start_offset) + encode_unsigned(hdr.sync_end_offset)
    if hdr.rev_pinvoke_offset != INVALID_REV_PINVOKE_OFFSET:
        out += encode_unsigned(hdr.rev_pinvoke_offset)
    if hdr.no_gc_region_cnt > SET_NOGCREGIONS_MAX:
        out += encode_unsigned(hdr.no_gc_region_cnt)
    return bytes(out)


def encode_header(hdr: InfoHdr, version: int = CURRENT_VERSION) -> bytes:
    """``hdr`` as CoreCLR's JIT writes it: header bytes, then the trailing optional fields."""
    return header_codes(hdr, version) + trailing_fields(hdr)


# --------------------------------------------------------------------------- decoder


def _shift_in(state: dict, attr: str, bits: int, value: int, top: int, offset: int) -> None:
    new = (state[attr] << bits) + value
    if new > top:
        raise DecodeError(offset, f"{attr} overflows its {top.bit_length()}-bit field")
    state[attr] = new


def _apply_first(state: dict, code: int, version: int, offset: int) -> None:
    """Apply one first-set code (not 0x4F) to ``state``."""
    if code <= 0x07:
        state["frame_size"] = code
    elif code <= 0x10:
        state["arg_count"] = code - SET_ARGCOUNT
    elif code <= 0x21:
        state["prolog_size"] = code - SET_PROLOGSIZE
    elif code <= 0x2C:
        state["epilog_size"] = code - SET_EPILOGSIZE
    elif code <= 0x36:
        state["epilog_count"], at_end = divmod(code - SET_EPILOGCNT, 2)
        state["epilog_at_end"] = bool(at_end)
    elif code <= 0x3A:
        state["untracked_cnt"] = code - SET_UNTRACKED
    elif code in _FLIP_ATTR:
        attr = _FLIP_ATTR[code]
        state[attr] = not state[attr]
    elif code == FLIP_VAR_PTR_TABLE_SZ:
        state["var_ptr_table_size"] ^= HAS_VARPTR
    elif code == FFFF_UNTRACKED_CNT:
        state["untracked_cnt"] = HAS_UNTRACKED
    elif code == FLIP_HAS_GS_COOKIE:
        state["gs_cookie_offset"] ^= HAS_GS_COOKIE_OFFSET
    elif code == FLIP_SYNC:
        state["sync_start_offset"] ^= HAS_SYNC_OFFSET
    elif code == FLIP_REV_PINVOKE_FRAME:
        if version < 2:
            raise DecodeError(offset, "header code 0x4E is unused in GC info version 1")
        state["rev_pinvoke_offset"] ^= INVALID_REV_PINVOKE_OFFSET ^ HAS_REV_PINVOKE_FRAME_OFFSET
    elif code < NEXT_FOUR_ARGCOUNT:
        _shift_in(state, "frame_size", 4, code & 0xF, U32_MAX, offset)
    elif code < NEXT_THREE_PROLOGSIZE:
        _shift_in(state, "arg_count", 4, code & 0xF, 0xFFFF, offset)
    elif code < NEXT_THREE_EPILOGSIZE:
        _shift_in(state, "prolog_size", 3, code & 0x7, 0xFF, offset)
    else:
        _shift_in(state, "epilog_size", 3, code & 0x7, 0xFF, offset)


def _apply_second(state: dict, code: int, version: int, offset: int) -> None:
    """Apply one second-set code (the byte after 0x4F) to ``state``."""
    first_nogc, follows = _second_set(version)
    if version >= 5 and code < first_nogc:
        state["return_kind"], state["is_async"] = code & 3, bool(code & 4)
    elif code <= 3:
        state["return_kind"] = code
    elif version >= 4 and first_nogc <= code < follows:
        state["no_gc_region_cnt"] = code - first_nogc
    elif version >= 4 and code == follows:
        state["no_gc_region_cnt"] = HAS_NOGCREGIONS
    else:
        raise DecodeError(offset, f"second-set header code {code:#04x} is invalid in GC info version {version}")


def decode_header(data: bytes, version: int = CURRENT_VERSION, offset: int = 0) -> tuple[InfoHdr, int]:
    """Read a header and its trailing fields at ``offset``; returns ``(InfoHdr, next_offset)``."""
    if version not in VERSIONS:
        raise GCInfoEncodeError(f"GC info version must be one of 1..5, got {version!r}")
    if offset >= len(data):
        raise DecodeError(offset, "header runs past the end of the data")
    byte = data[offset]
    state = dict(_SHORTCUT_STATES[byte & 0x7F])
    offset += 1
    while byte & MORE:
        if offset >= len(data):
            raise DecodeError(offset, "header fixup codes run past the end of the data")
        byte = data[offset]
        code = byte & 0x7F
        if code == NEXT_OPCODE:
            if version < 2:
                raise DecodeError(offset, "header code 0x4F is unused in GC info version 1")
            if not byte & MORE:
                raise DecodeError(offset, "header code 0x4F must be followed by a second-set code")
            offset += 1
            if offset >= len(data):
                raise DecodeError(offset, "second-set header code runs past the end of the data")
            byte = data[offset]
            _apply_second(state, byte & 0x7F, version, offset)
        else:
            _apply_first(state, code, version, offset)
        offset += 1
    for attr, placeholder in (
        ("untracked_cnt", HAS_UNTRACKED),
        ("var_ptr_table_size", HAS_VARPTR),
        ("gs_cookie_offset", HAS_GS_COOKIE_OFFSET),
        ("sync_start_offset", HAS_SYNC_OFFSET),
    ):
        if state[attr] == placeholder:
            state[attr], offset = decode_unsigned(data, offset)
            if attr == "sync_start_offset":
                state["sync_end_offset"], offset = decode_unsigned(data, offset)
    if state["rev_pinvoke_offset"] == HAS_REV_PINVOKE_FRAME_OFFSET:
        state["rev_pinvoke_offset"], offset = decode_unsigned(data, offset)
    if state["no_gc_region_cnt"] == HAS_NOGCREGIONS:
        state["no_gc_region_cnt"], offset = decode_unsigned(data, offset)
    return InfoHdr(**state), offset
