"""A whole method's x86 GC info: `MethodGCInfo` and its bytes, in CoreCLR's region order.

::

    methodSize        Unsigned
    header            shortcut byte + fixups, then the trailing Unsigneds (header.py)
    [epilog table]    UDelta starts, iff epilogCount > 1 or (== 1 and not epilogAtEnd)
    [argTabOffset]    Unsigned, iff untrackedCnt > 3 or varPtrTableSize != 0 or noGCRegionCnt != 0
    no-GC regions     (version 4+)                  \\
    untracked locals                                 > argTabOffset = their total size in bytes
    stack lifetimes                                 /
    pointer table     one of three encodings, ends with FF

``argTabOffset`` lets the runtime jump straight to the pointer table; it is present exactly when
the header had to use a placeholder for one of the three counts (or has no-GC regions). Very old
blobs (``legacy=True``) have no ``argTabOffset`` and store untracked offsets as plain values.

The pointer table is described by the dataclass of the module that owns its encoding, chosen by
the header: ``interruptible`` -> `ptrtab_full`, else ``ebp_frame`` -> `ptrtab_ebp`, else
`ptrtab_esp`. The counts in the header (epilog, untracked, lifetime and no-GC region counts) must
agree with the tuples; `MethodGCInfo.create` fills them in.

Laws: ``decode(encode(m)) == m`` for every valid ``m``, and ``encode(decode(b)) == b`` for every
blob a JIT wrote (and every blob that decodes and whose header and pointer table are in the
JIT's canonical form: other fixup sequences mean the same header but re-encode to the JIT's
choice). The decoder refuses an ``argTabOffset`` that disagrees with the tables, and bytes after
the pointer table. Like the runtime, it expects ``argTabOffset`` whenever the header used a
placeholder for the untracked, var-ptr or no-GC count, even for a small count.
"""

from __future__ import annotations

import dataclasses
import importlib
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from ..errors import DecodeError
from . import header as _hdr
from .codecs import U32_MAX, GCInfoEncodeError, decode_unsigned, encode_unsigned
from .entries import TableEntry
from .header import CURRENT_VERSION, SET_EPILOGCNT_MAX, SET_UNTRACKED_MAX, InfoHdr, encode_header
from .header_explain import walk_header
from .info_tables import (
    Lifetime,
    NoGCRegion,
    UntrackedSlot,
    decode_epilog_table,
    decode_lifetimes,
    decode_no_gc_regions,
    decode_untracked,
    encode_epilog_table,
    encode_lifetimes,
    encode_no_gc_regions,
    encode_untracked,
    epilog_table_present,
)

#: Pointer-table module name for each encoding.
ENCODINGS = ("full", "ebp", "esp")


def pointer_table_kind(hdr: InfoHdr) -> str:
    """Which pointer-table encoding ``hdr`` selects: ``"full"``, ``"ebp"`` or ``"esp"``."""
    if hdr.interruptible:
        return "full"
    return "ebp" if hdr.ebp_frame else "esp"


def pointer_table_module(hdr: InfoHdr) -> ModuleType:
    """The module (`ptrtab_full`, `ptrtab_ebp` or `ptrtab_esp`) that reads and writes ``hdr``'s pointer table."""
    return importlib.import_module(f"{__package__}.ptrtab_{pointer_table_kind(hdr)}")


def empty_pointer_table(hdr: InfoHdr) -> Any:
    """The description of a pointer table with no entries (just the FF end byte) for ``hdr``."""
    table, _, _ = pointer_table_module(hdr).decode_table(b"\xff", 0, hdr)
    return table


def arg_tab_offset_present(hdr: InfoHdr) -> bool:
    """Whether the blob stores ``argTabOffset`` after the epilog table (the JIT's rule)."""
    return hdr.var_ptr_table_size != 0 or hdr.untracked_cnt > SET_UNTRACKED_MAX or hdr.no_gc_region_cnt != 0


@dataclass(frozen=True)
class MethodGCInfo:
    """Everything CoreCLR's x86 GC info says about one method.

    ``epilogs`` lists every epilog's start offset, including the implicit one of a method whose
    single epilog ends it (``epilog_at_end``; that one is not stored in the bytes).
    ``pointer_table`` is the description of the encoding the header selects; ``None`` stands for
    the empty table and is replaced by it.
    """

    method_size: int
    header: InfoHdr
    epilogs: tuple[int, ...] = ()
    no_gc_regions: tuple[NoGCRegion, ...] = ()
    untracked: tuple[UntrackedSlot, ...] = ()
    lifetimes: tuple[Lifetime, ...] = ()
    pointer_table: Any = None

    def __post_init__(self) -> None:
        for name in ("epilogs", "no_gc_regions", "untracked", "lifetimes"):
            value = getattr(self, name)
            if not isinstance(value, tuple):
                object.__setattr__(self, name, tuple(value))
        m, h = self.method_size, self.header
        if not isinstance(m, int) or isinstance(m, bool) or not 0 <= m <= U32_MAX:
            raise GCInfoEncodeError(f"method_size must be an integer in 0..0xFFFFFFFF, got {m!r}")
        if not isinstance(h, InfoHdr):
            raise GCInfoEncodeError(f"header must be an InfoHdr, got {type(h).__name__}")
        for count, items, what in (
            (h.epilog_count, self.epilogs, "epilog_count"),
            (h.no_gc_region_cnt, self.no_gc_regions, "no_gc_region_cnt"),
            (h.untracked_cnt, self.untracked, "untracked_cnt"),
            (h.var_ptr_table_size, self.lifetimes, "var_ptr_table_size"),
        ):
            if count != len(items):
                raise GCInfoEncodeError(
                    f"header.{what} is {count} but there are {len(items)} entries "
                    "(MethodGCInfo.create fills in the counts)"
                )
        for kind, items in (
            ("epilog", self.epilogs),
            ("no-GC region", self.no_gc_regions),
            ("untracked slot", self.untracked),
            ("lifetime", self.lifetimes),
        ):
            cls = {"epilog": int, "no-GC region": NoGCRegion, "untracked slot": UntrackedSlot, "lifetime": Lifetime}[
                kind
            ]
            for i, item in enumerate(items):
                if not isinstance(item, cls) or isinstance(item, bool):
                    raise GCInfoEncodeError(f"{kind} #{i} must be a {cls.__name__}, got {item!r}")
        for i, start in enumerate(self.epilogs):
            if start < 0 or start + h.epilog_size > m:
                raise GCInfoEncodeError(
                    f"epilog #{i} at {_signed_hex(start)} ({h.epilog_size} bytes) does not lie within the "
                    f"method ({m:#x} bytes)"
                )
        if not epilog_table_present(h) and h.epilog_count == 1:
            implicit = m - h.epilog_size
            if self.epilogs[0] != implicit:
                raise GCInfoEncodeError(
                    f"the only epilog ends the method (epilog_at_end), so it starts at method_size - "
                    f"epilog_size = {implicit:#x}, not {self.epilogs[0]:#x}"
                )
        if self.pointer_table is None:
            object.__setattr__(self, "pointer_table", empty_pointer_table(h))
        else:
            module = pointer_table_module(h)
            expected = type(empty_pointer_table(h))
            if type(self.pointer_table) is not expected:
                raise GCInfoEncodeError(
                    f"the header selects the {pointer_table_kind(h)!r} pointer-table encoding "
                    f"({module.__name__}.{expected.__name__}), got {type(self.pointer_table).__name__}"
                )

    @classmethod
    def create(
        cls,
        method_size: int,
        header: InfoHdr | None = None,
        *,
        epilogs=(),
        no_gc_regions=(),
        untracked=(),
        lifetimes=(),
        pointer_table: Any = None,
        epilog_at_end: bool | None = None,
    ) -> MethodGCInfo:
        """A `MethodGCInfo` whose header counts are derived from the tables.

        ``epilog_at_end`` defaults to the JIT's rule: exactly one epilog, and it ends the method.
        The pointer table is put in its module's canonical form (the description its bytes decode
        to), so ``decode(encode(m)) == m`` holds for whatever equivalent form was given.
        """
        header = header if header is not None else InfoHdr()
        epilogs = tuple(epilogs)
        if len(epilogs) > SET_EPILOGCNT_MAX:
            raise GCInfoEncodeError(f"at most {SET_EPILOGCNT_MAX} epilogs fit in the header, got {len(epilogs)}")
        if epilog_at_end is None:
            epilog_at_end = len(epilogs) == 1 and epilogs[0] + header.epilog_size == method_size
        header = dataclasses.replace(
            header,
            epilog_count=len(epilogs),
            epilog_at_end=epilog_at_end,
            no_gc_region_cnt=len(tuple(no_gc_regions)),
            untracked_cnt=len(tuple(untracked)),
            var_ptr_table_size=len(tuple(lifetimes)),
        )
        if pointer_table is not None:
            module = pointer_table_module(header)
            if isinstance(pointer_table, type(empty_pointer_table(header))) and hasattr(module, "canonical"):
                try:
                    pointer_table = module.canonical(pointer_table)
                except DecodeError as e:
                    raise GCInfoEncodeError(f"pointer table: {e.message}") from None
        return cls(
            method_size, header, epilogs, tuple(no_gc_regions), tuple(untracked), tuple(lifetimes), pointer_table
        )


def _signed_hex(n: int) -> str:
    """``0x14`` or ``-0x14``."""
    return f"-{-n:#x}" if n < 0 else f"{n:#x}"


def check_code_offsets(entries, method_size: int) -> None:
    """Refuse a pointer-table entry whose code offset lies past the method's end, as the VM asserts
    (``scanOffs <= methodSize``); the error names the entry's byte offset."""
    for entry in entries:
        if entry.code_offset is not None and entry.code_offset > method_size:
            raise DecodeError(
                entry.start,
                f"pointer-table entry at code offset {entry.code_offset:#x} lies "
                f"past the method's end ({method_size:#x} bytes)",
            )


# --------------------------------------------------------------------------- encoder


def encode(info: MethodGCInfo, version: int = CURRENT_VERSION, *, legacy: bool = False) -> bytes:
    """The bytes of ``info`` as CoreCLR's JIT writes them for GC-info ``version``."""
    hdr = info.header
    out = bytearray(encode_unsigned(info.method_size))
    out += encode_header(hdr, version)
    if epilog_table_present(hdr):
        out += encode_epilog_table(info.epilogs)
    tables = (
        encode_no_gc_regions(info.no_gc_regions)
        + encode_untracked(info.untracked, legacy=legacy)
        + encode_lifetimes(info.lifetimes)
    )
    if arg_tab_offset_present(hdr) and not legacy:
        out += encode_unsigned(len(tables))
    out += tables
    module = pointer_table_module(hdr)
    table = module.encode_table(info.pointer_table, hdr)
    _, entries, _ = module.decode_table(table, 0, hdr)
    try:
        check_code_offsets(entries, info.method_size)
    except DecodeError as e:
        raise GCInfoEncodeError(f"pointer table (byte offset {len(out) + e.offset:#x}): {e.message}") from None
    return bytes(out + table)


# --------------------------------------------------------------------------- decoder


@dataclass(frozen=True)
class Region:
    """One region of a decoded blob: its name, byte span ``[start, end)`` and entries."""

    name: str  # "method size", "header", "epilogs", "argTabOffset", "no-GC regions", "untracked",
    #            "lifetimes", "pointer table"
    start: int
    end: int
    entries: tuple[TableEntry, ...] = ()


@dataclass(frozen=True)
class DecodedMethod:
    """A decoded blob: the description and every region's entries, in byte order (for explorers)."""

    info: MethodGCInfo
    regions: tuple[Region, ...]
    arg_tab_offset: int | None  # the stored value, None when absent

    def region(self, name: str) -> Region | None:
        """The region called ``name``, if the blob has it."""
        return next((r for r in self.regions if r.name == name), None)

    @property
    def pointer_table(self) -> Region:
        """The pointer table's region (every decoded blob ends with one, empty or not)."""
        region = self.region("pointer table")
        if region is None:
            raise ValueError("a DecodedMethod without a pointer table")  # decode_with_entries always adds it
        return region


def decode_with_entries(data: bytes, version: int = CURRENT_VERSION, *, legacy: bool = False) -> DecodedMethod:
    """Decode a whole blob and keep every region's byte span and entries."""
    data = bytes(data)
    regions: list[Region] = []
    method_size, pos = decode_unsigned(data, 0)
    regions.append(
        Region("method size", 0, pos, (TableEntry(0, pos, None, "method-size", f"method size = {method_size:#x}"),))
    )
    hdr_start = pos
    walk = walk_header(data, version, pos)
    hdr, pos, hdr_entries, placeholders = walk.header, walk.end, walk.entries, walk.placeholders
    try:
        _hdr.check_header(hdr, version)  # e.g. a sync region "starting" at 0 (no region) with an end
    except GCInfoEncodeError as e:
        raise DecodeError(hdr_start, f"inconsistent header: {e}") from None
    regions.append(Region("header", hdr_start, pos, hdr_entries))
    if epilog_table_present(hdr):
        start = pos
        epilogs, entries, pos = decode_epilog_table(data, pos, hdr.epilog_count)
        regions.append(Region("epilogs", start, pos, tuple(entries)))
    elif hdr.epilog_count == 1:
        if hdr.epilog_size > method_size:
            raise DecodeError(
                hdr_start, f"the epilog ({hdr.epilog_size} bytes) is larger than the method ({method_size} bytes)"
            )
        epilogs = (method_size - hdr.epilog_size,)
    else:
        epilogs = ()
    arg_tab_offset = None
    arg_tab_at = pos
    has_arg_tab = (
        bool(placeholders & {"untracked_cnt", "var_ptr_table_size", "no_gc_region_cnt"}) or hdr.no_gc_region_cnt > 0
    )
    if has_arg_tab and not legacy:
        arg_tab_offset, pos = decode_unsigned(data, pos)
        regions.append(
            Region(
                "argTabOffset",
                arg_tab_at,
                pos,
                (TableEntry(arg_tab_at, pos, None, "arg-tab-offset", f"argTabOffset = {arg_tab_offset:#x}"),),
            )
        )
    tables_start = pos
    start = pos
    no_gc, entries, pos = decode_no_gc_regions(data, pos, hdr.no_gc_region_cnt)
    if hdr.no_gc_region_cnt:
        regions.append(Region("no-GC regions", start, pos, tuple(entries)))
    start = pos
    untracked, entries, pos = decode_untracked(data, pos, hdr.untracked_cnt, hdr, legacy=legacy)
    if hdr.untracked_cnt:
        regions.append(Region("untracked", start, pos, tuple(entries)))
    start = pos
    lifetimes, entries, pos = decode_lifetimes(data, pos, hdr.var_ptr_table_size, hdr, legacy=legacy)
    if hdr.var_ptr_table_size:
        regions.append(Region("lifetimes", start, pos, tuple(entries)))
    if arg_tab_offset is not None and arg_tab_offset != pos - tables_start:
        raise DecodeError(
            arg_tab_at,
            f"argTabOffset is {arg_tab_offset} but the no-GC, untracked and lifetime "
            f"tables take {pos - tables_start} bytes",
        )
    start = pos
    if pos >= len(data):
        raise DecodeError(pos, "the pointer table is missing (no bytes left)")
    table, entries, pos = pointer_table_module(hdr).decode_table(data, pos, hdr)
    check_code_offsets(entries, method_size)
    regions.append(Region("pointer table", start, pos, tuple(entries)))
    if pos != len(data):
        raise DecodeError(pos, f"{len(data) - pos} byte(s) after the pointer table's end byte")
    try:
        info = MethodGCInfo(method_size, hdr, epilogs, no_gc, untracked, lifetimes, table)
    except GCInfoEncodeError as e:
        raise DecodeError(hdr_start, str(e)) from None
    return DecodedMethod(info, tuple(regions), arg_tab_offset)


def decode(data: bytes, version: int = CURRENT_VERSION, *, legacy: bool = False) -> MethodGCInfo:
    """Decode a whole blob (every byte must belong to it) into a `MethodGCInfo`."""
    return decode_with_entries(data, version, legacy=legacy).info
