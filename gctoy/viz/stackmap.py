"""A `.llvm_stackmaps` section as an annotated hex dump, and the role of each location of a statepoint record.

`annotated_hexdump` cuts the section into its fields, in file order, so that every byte is
covered exactly once::

    offset  bytes        field                          value
    0x0000  03           Version                        3
    0x0001  00           Reserved                       0
    0x0002  00 00        Reserved                       0
    0x0004  01 00 00 00  NumFunctions                   1
    ...
    0x0038  03           rec[0].loc#4.Type              3 Indirect
    0x0039  00           rec[0].loc#4.Reserved          0
    0x003a  08 00        rec[0].loc#4.Size              8
    0x003c  07 00        rec[0].loc#4.DwarfRegNum       7 RSP
    0x003e  00 00        rec[0].loc#4.Reserved          0
    0x0040  00 00 00 00  rec[0].loc#4.Offset            +0

Locations are numbered from #1, as `llvm-readobj --stackmap` numbers them, so a row of the
dump can be matched with a line of its text. The section is decoded with
`gctoy.stackmap.parse` first, so malformed bytes raise the same `DecodeError`.
"""

from __future__ import annotations

import struct
from typing import NamedTuple

from ..stackmap import LocationKind, StackMap, StackMapRecord, parse
from ..stackmap.format import DYNAMIC_STACK_SIZE

#: x86-64 DWARF register numbers (SysV psABI) and their names.
DWARF_X86_64 = {
    0: "RAX",
    1: "RDX",
    2: "RCX",
    3: "RBX",
    4: "RSI",
    5: "RDI",
    6: "RBP",
    7: "RSP",
    **{n: f"R{n}" for n in range(8, 16)},
    16: "RIP",
    **{17 + i: f"XMM{i}" for i in range(16)},
}


class HexRow(NamedTuple):
    """One field of the section: where it starts, its bytes, its name and its decoded value."""

    offset: int
    data: bytes
    field: str
    value: str


def dwarf_register_name(number: int) -> str:
    """The x86-64 register a DWARF number stands for (``R#n`` when gctoy has no name for it)."""
    return DWARF_X86_64.get(number, f"R#{number}")


def annotated_hexdump(data: bytes) -> list[HexRow]:
    """Every field of a v3 section, in file order, with its bytes and its meaning."""
    data = bytes(data)
    sm = parse(data)
    rows: list[HexRow] = []
    pos = 0

    def take(size: int, name: str, value: str) -> None:
        nonlocal pos
        rows.append(HexRow(pos, data[pos : pos + size], name, value))
        pos += size

    def pad_to_8(name: str) -> None:
        if pos % 8:
            take(8 - pos % 8, name, "0")

    take(1, "Version", str(sm.version))
    take(1, "Reserved", "0")
    take(2, "Reserved", "0")
    take(4, "NumFunctions", str(len(sm.functions)))
    take(4, "NumConstants", str(len(sm.constants)))
    take(4, "NumRecords", str(len(sm.records)))
    for i, fn in enumerate(sm.functions):
        take(8, f"fn[{i}].FunctionAddress", f"{fn.address:#x}")
        size = "dynamic" if fn.stack_size == DYNAMIC_STACK_SIZE else str(fn.stack_size)
        take(8, f"fn[{i}].StackSize", size)
        take(8, f"fn[{i}].RecordCount", str(fn.record_count))
    for i, constant in enumerate(sm.constants):
        take(8, f"constant[{i}]", str(constant))
    for r, record in enumerate(sm.records):
        p = f"rec[{r}]"
        take(8, f"{p}.PatchPointID", f"{record.id} ({record.id:#x})")
        take(4, f"{p}.InstructionOffset", str(record.instruction_offset))
        take(2, f"{p}.Reserved", str(record.flags))
        take(2, f"{p}.NumLocations", str(len(record.locations)))
        for n, loc in enumerate(record.locations, start=1):
            q = f"{p}.loc#{n}"
            take(1, f"{q}.Type", f"{int(loc.kind)} {_KIND_NAMES[loc.kind]}")
            take(1, f"{q}.Reserved", "0")
            take(2, f"{q}.Size", str(loc.size))
            take(
                2,
                f"{q}.DwarfRegNum",
                f"{loc.dwarf_reg} {dwarf_register_name(loc.dwarf_reg)}"
                if loc.kind in _REGISTER_KINDS
                else str(loc.dwarf_reg),
            )
            take(2, f"{q}.Reserved", "0")
            take(4, f"{q}.{_VALUE_NAMES[loc.kind]}", _location_value(loc, sm))
        pad_to_8(f"{p}.Padding")
        take(2, f"{p}.Padding", "0")
        take(2, f"{p}.NumLiveOuts", str(len(record.live_outs)))
        for n, live in enumerate(record.live_outs, start=1):
            q = f"{p}.liveout#{n}"
            take(2, f"{q}.DwarfRegNum", f"{live.dwarf_reg} {dwarf_register_name(live.dwarf_reg)}")
            take(1, f"{q}.Reserved", "0")
            take(1, f"{q}.Size", str(live.size))
        pad_to_8(f"{p}.Padding")
    assert pos == len(data), "the dump must cover the section exactly"
    return rows


_KIND_NAMES = {
    LocationKind.REGISTER: "Register",
    LocationKind.DIRECT: "Direct",
    LocationKind.INDIRECT: "Indirect",
    LocationKind.CONSTANT: "Constant",
    LocationKind.CONSTANT_INDEX: "ConstantIndex",
}
_REGISTER_KINDS = (LocationKind.REGISTER, LocationKind.DIRECT, LocationKind.INDIRECT)
_VALUE_NAMES = {
    LocationKind.REGISTER: "Offset",
    LocationKind.DIRECT: "Offset",
    LocationKind.INDIRECT: "Offset",
    LocationKind.CONSTANT: "SmallConstant",
    LocationKind.CONSTANT_INDEX: "ConstantIndex",
}


def _location_value(loc, sm: StackMap) -> str:
    """The 32-bit value field in words: a signed offset, a constant, or a pool index and its entry."""
    if loc.kind is LocationKind.CONSTANT:
        return str(loc.offset_or_small_constant)
    if loc.kind is LocationKind.CONSTANT_INDEX:
        return f"#{loc.offset_or_small_constant} -> {sm.constants[loc.offset_or_small_constant]}"
    return f"{loc.offset:+d}"


def format_hexdump(rows: list[HexRow], group: bool = False, bytes_per_line: int = 12) -> str:
    """The rows as a text table; ``group=True`` puts each function, location or live-out on one line.

    A field longer than ``bytes_per_line`` bytes continues on the next lines, with an empty name.
    """
    if group:
        rows = _grouped(rows)
    longest = max((len(r.data) for r in rows), default=1)
    width = 3 * min(longest, bytes_per_line) + 1
    name_width = max((len(r.field) for r in rows), default=5) + 2
    lines = [f"{'offset':<8}{'bytes':<{width}}{'field':<{name_width}}value"]
    for r in rows:
        chunks = [r.data[i : i + bytes_per_line] for i in range(0, len(r.data), bytes_per_line)] or [b""]
        lines.append(f"{r.offset:#06x}  {chunks[0].hex(' '):<{width}}{r.field:<{name_width}}{r.value}".rstrip())
        for k, chunk in enumerate(chunks[1:], start=1):
            lines.append(f"{r.offset + k * bytes_per_line:#06x}  {chunk.hex(' ')}")
    return "\n".join(lines)


def _grouped(rows: list[HexRow]) -> list[HexRow]:
    """Merge the fields of one function, location or live-out into one row (reserved fields left out)."""
    out: list[HexRow] = []
    for row in rows:
        head, _, tail = row.field.rpartition(".")
        groupable = head.startswith("fn[") or ".loc#" in head or ".liveout#" in head
        part = "" if tail == "Reserved" else f"{tail}={row.value}"
        if groupable and out and out[-1].field == head:
            last = out[-1]
            value = ", ".join(v for v in (last.value, part) if v)
            out[-1] = HexRow(last.offset, last.data + row.data, head, value)
        elif groupable:
            out.append(HexRow(row.offset, row.data, head, part))
        else:
            out.append(row)
    return out


def statepoint_roles(record: StackMapRecord) -> list[str]:
    """What each location of a statepoint record stands for, in record order.

    The layout (seed 000, "Stack Map Format")::

        #1 calling convention   #2 flags   #3 number of deopt locations = n
        #4 .. #3+n              deopt values
        then pairs              (base, derived), one pair per relocated pointer
        then Direct locations   allocas listed in "gc-live"
    """
    locs = record.locations
    if len(locs) < 3 or any(loc.kind is not LocationKind.CONSTANT for loc in locs[:3]):
        raise ValueError("not a statepoint record: it does not start with three Constant locations")
    n_deopt = locs[2].offset_or_small_constant
    roles = ["calling convention", "flags", "deopt count"]
    roles += [f"deopt value {i}" for i in range(n_deopt)]
    rest = list(locs[3 + n_deopt :])
    allocas = 0
    while rest and rest[-1].kind is LocationKind.DIRECT:
        rest.pop()
        allocas += 1
    if len(rest) % 2:
        raise ValueError("odd number of locations for (base, derived) pairs")
    for i in range(len(rest) // 2):
        roles += [f"pair {i} base", f"pair {i} derived"]
    roles += [f"gc-live alloca {i}" for i in range(allocas)]
    return roles


def v1_location_bytes(kind: int, size: int, dwarf_reg: int, offset: int) -> bytes:
    """A location in the 8-byte layout of stack map version 1 (u8 type, u8 size, u16 reg, i32 offset)."""
    return struct.pack("<BBHi", kind, size, dwarf_reg, offset)
