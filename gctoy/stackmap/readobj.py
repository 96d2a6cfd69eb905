"""Print a `StackMap` exactly as `llvm-readobj --stackmap` (LLVM 14) prints it.

The text, for one record (small constants print as unsigned 32-bit numbers, ConstantIndex is
0-based while the constants list counts from #1, a negative offset prints as ``+ -8``)::

    LLVM StackMap Version: 3
    Num Functions: 1
      Function address: 0, stack size: 24, callsite record count: 1
    Num Constants: 1
      #1: 4294967296
    Num Records: 1
      Record ID: 11, instruction offset: 16
        3 locations:
          #1: Register R#0, size: 8
          #2: Direct R#6 + -8, size: 8
          #3: ConstantIndex #0 (4294967296), size: 8
        1 live-outs: [ R#7 (8-bytes) ]
"""

from __future__ import annotations

from .format import Location, LocationKind, StackMap


def format_location(loc: Location, constants: tuple[int, ...]) -> str:
    """The text of one location, without its ``#N:`` prefix."""
    if loc.kind == LocationKind.REGISTER:
        where = f"Register R#{loc.dwarf_reg}"
    elif loc.kind == LocationKind.DIRECT:
        where = f"Direct R#{loc.dwarf_reg} + {loc.offset}"
    elif loc.kind == LocationKind.INDIRECT:
        where = f"Indirect [R#{loc.dwarf_reg} + {loc.offset}]"
    elif loc.kind == LocationKind.CONSTANT:
        where = f"Constant {loc.small_constant}"
    else:
        index = loc.offset_or_small_constant
        where = f"ConstantIndex #{index} ({constants[index]})"
    return f"{where}, size: {loc.size}"


def format_stackmap(sm: StackMap) -> str:
    """The lines `llvm-readobj --stackmap` prints for a section, from ``LLVM StackMap Version`` on."""
    lines = [f"LLVM StackMap Version: {sm.version}", f"Num Functions: {len(sm.functions)}"]
    for fn in sm.functions:
        lines.append(
            f"  Function address: {fn.address}, stack size: {fn.stack_size}, callsite record count: {fn.record_count}"
        )
    lines.append(f"Num Constants: {len(sm.constants)}")
    lines.extend(f"  #{i}: {value}" for i, value in enumerate(sm.constants, start=1))
    lines.append(f"Num Records: {len(sm.records)}")
    for record in sm.records:
        lines.append(f"  Record ID: {record.id}, instruction offset: {record.instruction_offset}")
        lines.append(f"    {len(record.locations)} locations:")
        lines.extend(
            f"      #{i}: {format_location(loc, sm.constants)}" for i, loc in enumerate(record.locations, start=1)
        )
        live = "".join(f"R#{lo.dwarf_reg} ({lo.size}-bytes) " for lo in record.live_outs)
        lines.append(f"    {len(record.live_outs)} live-outs: [ {live}]")
    return "\n".join(lines) + "\n"


def format_file_header(filename: str, file_format: str, arch: str, address_size: int) -> str:
    """The lines `llvm-readobj` prints before a section's text (a blank line, then ``File:`` ...)."""
    return (
        f"\nFile: {filename}\nFormat: {file_format}\nArch: {arch}\n"
        f"AddressSize: {address_size}bit\nLoadName: <Not found>\n"
    )
