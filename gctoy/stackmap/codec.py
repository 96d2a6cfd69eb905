"""StackMap v3 bytes <-> `StackMap` values: `emit` writes the exact section, `parse` checks every byte.

`parse` is strict: the reserved fields and the padding must be zero, the counts must fit the
data, every ConstantIndex must name a pool entry, the functions' record counts must add up to
NumRecords and nothing may follow the last record. So for any bytes `b` that parse,
``emit(parse(b)) == b``, and for any value `x` that `emit` accepts, ``parse(emit(x)) == x``.
"""

from __future__ import annotations

import struct

from ..errors import DecodeError, GCToyError
from .format import (
    CONSTANT_SIZE,
    HEADER_SIZE,
    LIVE_OUT_SIZE,
    LOCATION_SIZE,
    RECORD_HEADER_SIZE,
    STACKMAP_VERSION,
    STK_SIZE_RECORD_SIZE,
    LiveOut,
    Location,
    LocationKind,
    StackMap,
    StackMapRecord,
    StkSizeRecord,
    record_size,
)

_HEADER = struct.Struct("<BBHIII")
_FUNCTION = struct.Struct("<QQQ")
_CONSTANT = struct.Struct("<Q")
_RECORD_HEADER = struct.Struct("<QIHH")
_LOCATION = struct.Struct("<BBHHHi")
_LIVE_OUTS_HEADER = struct.Struct("<HH")
_LIVE_OUT = struct.Struct("<HBB")
_MIN_RECORD_SIZE = record_size(0, 0)
_KINDS = {int(k): k for k in LocationKind}


class StackMapEncodeError(GCToyError):
    """A `StackMap` value that cannot be written as a v3 section (a field out of range)."""


# --------------------------------------------------------------------------- parse


def parse(data: bytes) -> StackMap:
    """Decode a whole `.llvm_stackmaps` section; any malformed byte raises `DecodeError`."""
    data = bytes(data)
    size = len(data)
    if size < HEADER_SIZE:
        raise DecodeError(size, f"truncated header: {size} bytes, a StackMap header needs {HEADER_SIZE}")
    version, reserved8, reserved16, num_functions, num_constants, num_records = _HEADER.unpack_from(data, 0)
    if version != STACKMAP_VERSION:
        raise DecodeError(0, f"unsupported StackMap version {version} (only version {STACKMAP_VERSION})")
    if reserved8:
        raise DecodeError(1, f"reserved header byte is {reserved8:#x}, expected 0")
    if reserved16:
        raise DecodeError(2, f"reserved header field is {reserved16:#x}, expected 0")

    pos = HEADER_SIZE
    _need(data, pos, num_functions * STK_SIZE_RECORD_SIZE, 4, f"NumFunctions = {num_functions}")
    functions = tuple(
        StkSizeRecord(*_FUNCTION.unpack_from(data, pos + i * STK_SIZE_RECORD_SIZE)) for i in range(num_functions)
    )
    pos += num_functions * STK_SIZE_RECORD_SIZE

    _need(data, pos, num_constants * CONSTANT_SIZE, 8, f"NumConstants = {num_constants}")
    constants = tuple(_CONSTANT.unpack_from(data, pos + i * CONSTANT_SIZE)[0] for i in range(num_constants))
    pos += num_constants * CONSTANT_SIZE

    _need(data, pos, num_records * _MIN_RECORD_SIZE, 12, f"NumRecords = {num_records}")
    counted = sum(fn.record_count for fn in functions)
    if counted != num_records:
        raise DecodeError(12, f"NumRecords is {num_records} but the functions' record counts add up to {counted}")

    records = []
    for _ in range(num_records):
        record, pos = _parse_record(data, pos, num_constants)
        records.append(record)
    if pos != size:
        raise DecodeError(pos, f"{size - pos} unexpected bytes after the last record")
    return StackMap(version, functions, constants, tuple(records))


def _need(data: bytes, pos: int, length: int, where: int, what: str) -> None:
    """Raise at offset `where` unless `length` bytes are left from `pos`."""
    left = len(data) - pos
    if length > left:
        raise DecodeError(where, f"{what} overruns the section: needs {length} bytes at {pos:#x}, {left} left")


def _truncated(data: bytes, pos: int, length: int, what: str) -> None:
    """Raise at `pos` unless `length` bytes of `what` are there."""
    if pos + length > len(data):
        raise DecodeError(pos, f"truncated {what}: needs {length} bytes, {max(len(data) - pos, 0)} left")


def _zero_padding(data: bytes, pos: int, length: int, what: str) -> None:
    """Raise unless the `length` bytes at `pos` exist and are all zero."""
    _truncated(data, pos, length, what)
    for i in range(length):
        if data[pos + i]:
            raise DecodeError(pos + i, f"{what} byte is {data[pos + i]:#x}, expected 0")


def _parse_record(data: bytes, pos: int, num_constants: int) -> tuple[StackMapRecord, int]:
    """One StkMapRecord starting at `pos` (8-aligned); returns it and the offset after it."""
    start = pos
    if pos % 8:
        raise DecodeError(pos, "record does not start on an 8-byte boundary")
    _truncated(data, pos, RECORD_HEADER_SIZE, "record header")
    record_id, instruction_offset, flags, num_locations = _RECORD_HEADER.unpack_from(data, pos)
    pos += RECORD_HEADER_SIZE
    if pos + num_locations * LOCATION_SIZE > len(data):
        raise DecodeError(start + 14, f"NumLocations = {num_locations} overruns the section")

    locations = []
    for _ in range(num_locations):
        kind, reserved8, loc_size, dwarf_reg, reserved16, value = _LOCATION.unpack_from(data, pos)
        location_kind = _KINDS.get(kind)
        if location_kind is None:
            raise DecodeError(pos, f"bad location kind {kind} (expected 1-5)")
        if reserved8:
            raise DecodeError(pos + 1, f"reserved location byte is {reserved8:#x}, expected 0")
        if reserved16:
            raise DecodeError(pos + 6, f"reserved location field is {reserved16:#x}, expected 0")
        if location_kind is LocationKind.CONSTANT_INDEX and not 0 <= value < num_constants:
            raise DecodeError(pos + 8, f"ConstantIndex #{value} is outside the pool of {num_constants} constants")
        locations.append(Location(location_kind, loc_size, dwarf_reg, value))
        pos += LOCATION_SIZE

    if pos % 8:
        _zero_padding(data, pos, 8 - pos % 8, "location padding")
        pos += 8 - pos % 8

    _truncated(data, pos, _LIVE_OUTS_HEADER.size, "live-out header")
    padding, num_live_outs = _LIVE_OUTS_HEADER.unpack_from(data, pos)
    if padding:
        raise DecodeError(pos, f"padding before NumLiveOuts is {padding:#x}, expected 0")
    pos += _LIVE_OUTS_HEADER.size
    if pos + num_live_outs * LIVE_OUT_SIZE > len(data):
        raise DecodeError(pos - 2, f"NumLiveOuts = {num_live_outs} overruns the section")
    live_outs = []
    for _ in range(num_live_outs):
        dwarf_reg, reserved8, live_size = _LIVE_OUT.unpack_from(data, pos)
        if reserved8:
            raise DecodeError(pos + 2, f"reserved live-out byte is {reserved8:#x}, expected 0")
        live_outs.append(LiveOut(dwarf_reg, live_size))
        pos += LIVE_OUT_SIZE

    if pos % 8:
        _zero_padding(data, pos, 8 - pos % 8, "record padding")
        pos += 8 - pos % 8
    record = StackMapRecord(record_id, instruction_offset, flags, tuple(locations), tuple(live_outs))
    return record, pos


# --------------------------------------------------------------------------- emit


def emit(stackmap: StackMap) -> bytes:
    """Encode `stackmap` as the exact bytes of a v3 section (zero reserved fields and padding)."""
    check(stackmap)
    out = bytearray(
        _HEADER.pack(stackmap.version, 0, 0, len(stackmap.functions), len(stackmap.constants), len(stackmap.records))
    )
    for fn in stackmap.functions:
        out += _FUNCTION.pack(fn.address, fn.stack_size, fn.record_count)
    for constant in stackmap.constants:
        out += _CONSTANT.pack(constant)
    for record in stackmap.records:
        out += _RECORD_HEADER.pack(record.id, record.instruction_offset, record.flags, len(record.locations))
        for loc in record.locations:
            out += _LOCATION.pack(int(loc.kind), 0, loc.size, loc.dwarf_reg, 0, loc.offset_or_small_constant)
        _pad8(out)
        out += _LIVE_OUTS_HEADER.pack(0, len(record.live_outs))
        for live in record.live_outs:
            out += _LIVE_OUT.pack(live.dwarf_reg, 0, live.size)
        _pad8(out)
    return bytes(out)


def _pad8(out: bytearray) -> None:
    """Append zeros up to the next 8-byte boundary."""
    out += bytes(-len(out) % 8)


def check(stackmap: StackMap) -> None:
    """Raise `StackMapEncodeError` unless every field of `stackmap` fits the v3 encoding."""
    if stackmap.version != STACKMAP_VERSION:
        raise StackMapEncodeError(f"version {stackmap.version}: only version {STACKMAP_VERSION} can be written")
    _fits("NumFunctions", len(stackmap.functions), 32)
    _fits("NumConstants", len(stackmap.constants), 32)
    _fits("NumRecords", len(stackmap.records), 32)
    for fn in stackmap.functions:
        _fits("function address", fn.address, 64)
        _fits("stack size", fn.stack_size, 64)
        _fits("record count", fn.record_count, 64)
    counted = sum(fn.record_count for fn in stackmap.functions)
    if counted != len(stackmap.records):
        raise StackMapEncodeError(
            f"{len(stackmap.records)} records but the functions' record counts add up to {counted}"
        )
    for constant in stackmap.constants:
        _fits("constant", constant, 64)
    for record in stackmap.records:
        _fits("record ID", record.id, 64)
        _fits("instruction offset", record.instruction_offset, 32)
        _fits("record flags", record.flags, 16)
        _fits("NumLocations", len(record.locations), 16)
        _fits("NumLiveOuts", len(record.live_outs), 16)
        for loc in record.locations:
            if loc.kind not in _KINDS:
                raise StackMapEncodeError(f"bad location kind {loc.kind!r}")
            _fits("location size", loc.size, 16)
            _fits("location DWARF register", loc.dwarf_reg, 16)
            value = loc.offset_or_small_constant
            if not isinstance(value, int) or not -(2**31) <= value < 2**31:
                raise StackMapEncodeError(f"location offset/constant {value!r} is not a signed 32-bit number")
            if loc.kind == LocationKind.CONSTANT_INDEX and not value < len(stackmap.constants):
                raise StackMapEncodeError(
                    f"ConstantIndex #{value} is outside the pool of {len(stackmap.constants)} constants"
                )
            if loc.kind == LocationKind.CONSTANT_INDEX and value < 0:
                raise StackMapEncodeError(f"ConstantIndex #{value} is negative")
        for live in record.live_outs:
            _fits("live-out DWARF register", live.dwarf_reg, 16)
            _fits("live-out size", live.size, 8)


def _fits(what: str, value: int, bits: int) -> None:
    """Raise unless `value` is an unsigned `bits`-bit integer."""
    if not isinstance(value, int) or not 0 <= value < 2**bits:
        raise StackMapEncodeError(f"{what} {value!r} does not fit in an unsigned {bits}-bit field")
