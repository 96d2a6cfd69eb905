"""The LLVM StackMap v3 format as Python values: one frozen dataclass per part of the section.

The section ``.llvm_stackmaps`` (all integers little-endian on x86-64)::

    offset  size
    +0      u8   version = 3
    +1      u8   reserved = 0
    +2      u16  reserved = 0
    +4      u32  NumFunctions
    +8      u32  NumConstants
    +12     u32  NumRecords
    +16     StkSizeRecord[NumFunctions]      24 bytes each
              +0  u64 FunctionAddress        (0 in a .o: the relocation is not applied)
              +8  u64 StackSize              (2**64-1 when the frame size is dynamic)
              +16 u64 RecordCount
    ...     u64 Constants[NumConstants]      the large-constant pool
    ...     StkMapRecord[NumRecords]         each starts on an 8-byte boundary
              +0  u64 PatchPoint ID
              +8  u32 InstructionOffset      (return address - function start)
              +12 u16 Reserved (flags)
              +14 u16 NumLocations
              +16 Location[NumLocations]     12 bytes each
                    +0 u8  Kind   +1 u8 reserved   +2 u16 Size
                    +4 u16 DwarfRegNum           +6 u16 reserved
                    +8 i32 Offset or SmallConstant
                  zero padding to 8           (4 bytes iff NumLocations is odd)
              u16 Padding
              u16 NumLiveOuts
              LiveOut[NumLiveOuts]           4 bytes each
                    +0 u16 DwarfRegNum  +2 u8 reserved  +3 u8 SizeInBytes
              zero padding to 8               (4 bytes iff NumLiveOuts is even)
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

STACKMAP_VERSION = 3
HEADER_SIZE = 16
STK_SIZE_RECORD_SIZE = 24
CONSTANT_SIZE = 8
RECORD_HEADER_SIZE = 16
LOCATION_SIZE = 12
LIVE_OUT_SIZE = 4
DYNAMIC_STACK_SIZE = 2**64 - 1


class LocationKind(enum.IntEnum):
    """Where a location's value lives (the Kind byte of a Location)."""

    REGISTER = 1
    DIRECT = 2
    INDIRECT = 3
    CONSTANT = 4
    CONSTANT_INDEX = 5


@dataclass(frozen=True)
class Location:
    """One recorded value: a register, a frame address, a spill slot or a constant."""

    kind: LocationKind
    size: int
    dwarf_reg: int
    offset_or_small_constant: int

    @property
    def offset(self) -> int:
        """The signed offset of a Direct or Indirect location (also the raw field of the others)."""
        return self.offset_or_small_constant

    @property
    def small_constant(self) -> int:
        """A Constant's value as the unsigned 32-bit number `llvm-readobj` prints."""
        return self.offset_or_small_constant & 0xFFFFFFFF


@dataclass(frozen=True)
class LiveOut:
    """A register live across a patchpoint: its DWARF number and how many bytes of it are live."""

    dwarf_reg: int
    size: int


@dataclass(frozen=True)
class StkSizeRecord:
    """One function that has records: its address, frame size and number of records."""

    address: int
    stack_size: int
    record_count: int


@dataclass(frozen=True)
class StackMapRecord:
    """One call site: its ID, return-address offset in the function, locations and live-outs."""

    id: int
    instruction_offset: int
    flags: int
    locations: tuple[Location, ...]
    live_outs: tuple[LiveOut, ...] = ()


@dataclass(frozen=True)
class StackMap:
    """A whole `.llvm_stackmaps` section: functions, the large-constant pool and the records."""

    version: int
    functions: tuple[StkSizeRecord, ...]
    constants: tuple[int, ...]
    records: tuple[StackMapRecord, ...]

    def records_by_function(self) -> list[tuple[StkSizeRecord, tuple[StackMapRecord, ...]]]:
        """Each function with its own records (records are grouped by function, in order)."""
        out = []
        start = 0
        for fn in self.functions:
            out.append((fn, self.records[start : start + fn.record_count]))
            start += fn.record_count
        return out


def record_size(num_locations: int, num_live_outs: int) -> int:
    """Bytes one record takes, padding included."""
    head = _align8(RECORD_HEADER_SIZE + LOCATION_SIZE * num_locations)
    return _align8(head + 4 + LIVE_OUT_SIZE * num_live_outs)


def _align8(n: int) -> int:
    """`n` rounded up to a multiple of 8."""
    return (n + 7) & ~7
