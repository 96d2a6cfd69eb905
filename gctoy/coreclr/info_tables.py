"""The small tables of a method's x86 GC info: epilogs, no-GC regions, untracked locals, lifetimes.

They sit between the header and the pointer table (facts: region order)::

    methodSize  header  [trailing fields]  [epilog table]  [argTabOffset]
    | no-GC region table | untracked locals table | stack lifetime table |  pointer table ... FF
    \\_________________ argTabOffset bytes ______________________________/

* **Epilog table** -- present iff ``epilogCount > 1`` or (``epilogCount == 1`` and not
  ``epilogAtEnd``): one UDelta per epilog, the code offset where it *starts*, each relative to the
  previous start (the first to 0). Without the table a single epilog starts at
  ``methodSize - epilogSize``.
* **No-GC region table** (version 4+) -- ``(Unsigned offset, Unsigned size)`` per region, absolute
  offsets in increasing order.
* **Untracked locals table** -- one Signed per slot, delta-encoded: the bytes hold
  ``previous - current`` (previous starts at 0), so the first entry is the negated offset. The low
  two bits of each offset are flags (bit 0 interior, bit 1 pinned)::

        offset  -8 interior  ->  value -8|1 = -7  ->  Signed(0 - (-7)) = Signed(7) = 07
        offset +12 plain     ->  value 12         ->  Signed(-7 - 12)  = Signed(-19) = 53

* **Stack lifetime ("var ptr") table** -- per slot ``Unsigned(offset | flags)``, ``UDelta(begin)``
  from the previous entry's begin, ``UDelta(end)`` from this entry's begin; live in
  ``[begin, end)``. Bit 0 = interior; bit 1 = pinned in the funclet-era runtime, the ``this``
  marker in the classic (non-funclet) one.

Very old blobs (the .NET Framework era) wrote untracked offsets as plain values instead of deltas;
``legacy=True`` reads and writes that form.

Each decoder returns its description, the `TableEntry` list a gcdump printer or a byte explorer
needs (with gcdump's text for the entry), and the offset after the table. Malformed bytes raise
`DecodeError` with the offset of the byte at fault; descriptions that cannot be written raise
`GCInfoEncodeError`.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import DecodeError
from .codecs import (
    I32_MAX,
    I32_MIN,
    U32_MAX,
    GCInfoEncodeError,
    decode_signed,
    decode_udelta,
    decode_unsigned,
    encode_signed,
    encode_udelta,
    encode_unsigned,
)
from .entries import TableEntry
from .header import InfoHdr

BYREF_OFFSET_FLAG = 0x1  # interior pointer
PINNED_OFFSET_FLAG = 0x2  # pinned (funclet era); `this` in classic lifetime entries
OFFSET_MASK = 0x3


@dataclass(frozen=True)
class NoGCRegion:
    """A code range ``[offset, offset + size)`` where the runtime must not start a GC (version 4+)."""

    offset: int
    size: int

    @property
    def end(self) -> int:
        """The first code offset after the region."""
        return self.offset + self.size


@dataclass(frozen=True)
class UntrackedSlot:
    """A frame slot that holds a GC pointer for the whole method body.

    ``offset`` is signed and a multiple of 4: relative to EBP in EBP frames (negative = a local,
    positive = an incoming stack argument), relative to the initial ESP otherwise.
    """

    offset: int
    interior: bool = False
    pinned: bool = False


@dataclass(frozen=True)
class Lifetime:
    """A tracked frame slot live in ``[begin, end)``.

    ``offset`` is the stored magnitude (a multiple of 4): the slot is ``[EBP - offset]`` in EBP
    frames and ``[initial ESP + offset]`` otherwise. ``pinned`` is bit 1 of the entry, which the
    classic non-funclet runtime read as "this is the `this` pointer".
    """

    offset: int
    begin: int
    end: int
    interior: bool = False
    pinned: bool = False


def _flags(interior: bool, pinned: bool) -> int:
    return (BYREF_OFFSET_FLAG if interior else 0) | (PINNED_OFFSET_FLAG if pinned else 0)


def _check_int(value: object, what: str, low: int, high: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise GCInfoEncodeError(f"{what} must be an integer in {low}..{high:#x}, got {value!r}")
    return value


def _check_flags(item: object, what: str) -> None:
    for name in ("interior", "pinned"):
        if not isinstance(getattr(item, name), bool):
            raise GCInfoEncodeError(f"{what}: {name} must be a bool, got {getattr(item, name)!r}")


# --------------------------------------------------------------------------- epilog table


def epilog_table_present(hdr: InfoHdr) -> bool:
    """Whether the blob lists epilog starts (else there are none, or one that ends the method)."""
    return hdr.epilog_count > 1 or (hdr.epilog_count == 1 and not hdr.epilog_at_end)


def encode_epilog_table(starts: tuple[int, ...]) -> bytes:
    """The UDelta list of epilog start offsets (non-decreasing)."""
    out = bytearray()
    previous = 0
    for i, start in enumerate(starts):
        _check_int(start, f"epilog #{i} start", 0, U32_MAX)
        if start < previous:
            raise GCInfoEncodeError(f"epilog #{i} starts at {start:#x}, before epilog #{i - 1} ({previous:#x})")
        out += encode_udelta(start, previous)
        previous = start
    return bytes(out)


def decode_epilog_table(data: bytes, offset: int, count: int) -> tuple[tuple[int, ...], list[TableEntry], int]:
    """Read ``count`` epilog starts at ``offset``; returns ``(starts, entries, next_offset)``."""
    starts: list[int] = []
    entries: list[TableEntry] = []
    previous = 0
    for i in range(count):
        start_byte = offset
        previous, offset = decode_udelta(data, offset, previous)
        starts.append(previous)
        entries.append(TableEntry(start_byte, offset, previous, "epilog", f"    epilog #{i:2d}    at   {previous:04X}"))
    return tuple(starts), entries, offset


# --------------------------------------------------------------------------- no-GC regions


def encode_no_gc_regions(regions: tuple[NoGCRegion, ...]) -> bytes:
    """The no-GC region table: ``(Unsigned offset, Unsigned size)`` per region, sorted by offset."""
    out = bytearray()
    previous = 0
    for i, region in enumerate(regions):
        _check_int(region.offset, f"no-GC region #{i} offset", 0, U32_MAX)
        _check_int(region.size, f"no-GC region #{i} size", 0, U32_MAX)
        if region.offset < previous:
            raise GCInfoEncodeError(
                f"no-GC region #{i} at {region.offset:#x} is out of order (the previous one starts at {previous:#x})"
            )
        previous = region.offset
        out += encode_unsigned(region.offset) + encode_unsigned(region.size)
    return bytes(out)


def decode_no_gc_regions(data: bytes, offset: int, count: int) -> tuple[tuple[NoGCRegion, ...], list[TableEntry], int]:
    """Read ``count`` no-GC regions at ``offset``; returns ``(regions, entries, next_offset)``.

    gcdump prints each region without its bytes; the entries carry the gcdump text anyway.
    """
    regions: list[NoGCRegion] = []
    entries: list[TableEntry] = []
    previous = 0
    for _ in range(count):
        start = offset
        where, offset = decode_unsigned(data, offset)
        size, offset = decode_unsigned(data, offset)
        if where < previous:
            raise DecodeError(
                start, f"no-GC region at {where:#x} is out of order (the previous one starts at {previous:#x})"
            )
        previous = where
        region = NoGCRegion(where, size)
        regions.append(region)
        entries.append(
            TableEntry(
                start, offset, where, "no-gc-region", f"[{where:04X}-{(where + size) & U32_MAX:04X}) no GC region"
            )
        )
    return tuple(regions), entries, offset


# --------------------------------------------------------------------------- untracked locals


def encode_untracked(slots: tuple[UntrackedSlot, ...], *, legacy: bool = False) -> bytes:
    """The untracked locals table: delta-encoded Signeds (plain Signeds when ``legacy``)."""
    out = bytearray()
    last = 0
    for i, slot in enumerate(slots):
        what = f"untracked slot #{i}"
        _check_int(slot.offset, f"{what} offset", I32_MIN, I32_MAX)
        _check_flags(slot, what)
        if slot.offset % 4:
            raise GCInfoEncodeError(f"{what} offset {slot.offset} is not a multiple of 4")
        value = slot.offset | _flags(slot.interior, slot.pinned)
        stored = value if legacy else last - value
        if not I32_MIN <= stored <= I32_MAX:
            raise GCInfoEncodeError(f"{what}: the delta {stored} from the previous slot does not fit in 32 bits")
        out += encode_signed(stored)
        last = value
    return bytes(out)


def _double_align_base(hdr: InfoHdr) -> int:
    """gcdump's boundary above which a double-aligned frame's untracked offsets are EBP-based args."""
    saved = int(hdr.edi_saved) + int(hdr.esi_saved) + int(hdr.ebx_saved)
    return 4 * (hdr.frame_size + saved)


def untracked_text(slot: UntrackedSlot, hdr: InfoHdr) -> str:
    """gcdump's line for an untracked slot (after the bytes column)."""
    reg, offs = ("B" if hdr.ebp_frame else "S"), slot.offset
    base = _double_align_base(hdr)
    if hdr.double_align and offs >= base:
        reg, offs = "B", offs - base
    sign = "-" if offs < 0 else "+"
    return (
        f"            [E{reg}P{sign}{abs(offs):02X}H] an untracked "
        f"{'pinned ' if slot.pinned else ''}{'byref' if slot.interior else ''} local"
    )


def decode_untracked(
    data: bytes, offset: int, count: int, hdr: InfoHdr, *, legacy: bool = False
) -> tuple[tuple[UntrackedSlot, ...], list[TableEntry], int]:
    """Read ``count`` untracked slots at ``offset``; returns ``(slots, entries, next_offset)``."""
    slots: list[UntrackedSlot] = []
    entries: list[TableEntry] = []
    last = 0
    for _ in range(count):
        start = offset
        stored, offset = decode_signed(data, offset)
        value = stored if legacy else last - stored
        if not I32_MIN <= value <= I32_MAX:
            raise DecodeError(start, f"untracked offset {last} - {stored} does not fit in 32 bits")
        last = value
        slot = UntrackedSlot(value & ~OFFSET_MASK, bool(value & BYREF_OFFSET_FLAG), bool(value & PINNED_OFFSET_FLAG))
        slots.append(slot)
        entries.append(TableEntry(start, offset, None, "untracked", untracked_text(slot, hdr)))
    return tuple(slots), entries, offset


# --------------------------------------------------------------------------- lifetimes


def encode_lifetimes(lifetimes: tuple[Lifetime, ...]) -> bytes:
    """The stack lifetime table (entries sorted by begin offset)."""
    out = bytearray()
    previous = 0
    for i, life in enumerate(lifetimes):
        what = f"lifetime #{i}"
        _check_int(life.offset, f"{what} offset", 0, U32_MAX & ~OFFSET_MASK)
        _check_int(life.begin, f"{what} begin", 0, U32_MAX)
        _check_int(life.end, f"{what} end", 0, U32_MAX)
        _check_flags(life, what)
        if life.offset % 4:
            raise GCInfoEncodeError(f"{what} offset {life.offset} is not a multiple of 4")
        if life.begin < previous:
            raise GCInfoEncodeError(
                f"{what} begins at {life.begin:#x}, before the previous entry "
                f"({previous:#x}): the table is sorted by begin offset"
            )
        if life.end < life.begin:
            raise GCInfoEncodeError(f"{what} ends at {life.end:#x}, before it begins ({life.begin:#x})")
        out += encode_unsigned(life.offset | _flags(life.interior, life.pinned))
        out += encode_udelta(life.begin, previous) + encode_udelta(life.end, life.begin)
        previous = life.begin
    return bytes(out)


def lifetime_text(life: Lifetime, hdr: InfoHdr, *, legacy: bool = False) -> str:
    """gcdump's line for a lifetime entry (after the bytes column)."""
    frame = "BP-" if hdr.ebp_frame else "SP+"
    bit1 = ("this" if legacy else "pinned") if life.pinned else ""
    return (
        f"{life.begin:04X}..{life.end:04X}  [E{frame}{life.offset:02X}H] a "
        f"{'byref ' if life.interior else ''}{bit1} pointer"
    )


def decode_lifetimes(
    data: bytes, offset: int, count: int, hdr: InfoHdr, *, legacy: bool = False
) -> tuple[tuple[Lifetime, ...], list[TableEntry], int]:
    """Read ``count`` lifetime entries at ``offset``; returns ``(lifetimes, entries, next_offset)``."""
    lifetimes: list[Lifetime] = []
    entries: list[TableEntry] = []
    previous = 0
    for _ in range(count):
        start = offset
        value, offset = decode_unsigned(data, offset)
        begin, offset = decode_udelta(data, offset, previous)
        end, offset = decode_udelta(data, offset, begin)
        previous = begin
        life = Lifetime(
            value & ~OFFSET_MASK, begin, end, bool(value & BYREF_OFFSET_FLAG), bool(value & PINNED_OFFSET_FLAG)
        )
        lifetimes.append(life)
        entries.append(TableEntry(start, offset, begin, "lifetime", lifetime_text(life, hdr, legacy=legacy)))
    return tuple(lifetimes), entries, offset
