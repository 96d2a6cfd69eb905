"""Load an x86-64 ELF relocatable object (``llc -filetype=obj`` output) into an emu Image.

Placement (the emu's fixed bases):

* every allocated executable section (``.text``, ``.text.*``) back to back from CODE_BASE,
  each at its own alignment;
* every allocated writable or read-only data section (``.data*``, ``.rodata*``, ``.bss*``)
  from DATA_BASE (NOBITS sections are zero-filled);
* ``.llvm_stackmaps`` as the named image section of the same name, at SECTION_BASE.

Undefined symbols become natives (stub addresses, in first-reference order), so a
``call gc_alloc@PLT`` lands on the runtime's trap stub. Relocations applied, with
S = symbol address, A = addend, P = the patched address:

    R_X86_64_64      (1)  S + A        64-bit (the stack map's function addresses)
    R_X86_64_PC32    (2)  S + A - P    signed 32-bit
    R_X86_64_PLT32   (4)  S + A - P    signed 32-bit (no PLT: calls go straight to S)
    R_X86_64_32      (10) S + A        unsigned 32-bit
    R_X86_64_32S     (11) S + A        signed 32-bit

Relocations of sections that are not loaded (``.eh_frame``, debug info) are not applied.
``.eh_frame`` is read instead (cfi.py): its FDEs' start addresses come from their
R_X86_64_PC32 relocations (S + A is the function's placed address), so the object's
``unwind`` table says, at each code address, where each callee-saved register was saved.
"""

from __future__ import annotations

import io
import re
import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from gctoy.emu.image import CODE_BASE, DATA_BASE, Image, stub_address
from gctoy.errors import GCToyError
from gctoy.inputs import read_bytes_input
from gctoy.runtime.cfi import EH_FRAME, UnwindTable, read_unwind_table
from gctoy.stackmap import StackMap, parse

from ..errors import DecodeError

STACKMAP_SECTION = ".llvm_stackmaps"
#: the most bytes one loaded section (code, data, zero-filled .bss) may take
MAX_SECTION_SIZE = 16 << 20
R_X86_64_64, R_X86_64_PC32, R_X86_64_PLT32, R_X86_64_32, R_X86_64_32S = 1, 2, 4, 10, 11
SHF_WRITE, SHF_ALLOC, SHF_EXECINSTR = 0x1, 0x2, 0x4


class ObjectLoadError(GCToyError):
    """An object this loader cannot place or relocate."""


@dataclass(frozen=True)
class LoadedObject:
    """An object placed at the fixed bases: the image, its stack map and its symbols."""

    image: Image
    stackmap: StackMap | None
    functions: dict[str, int]  # defined function symbols -> address
    externals: tuple[str, ...]  # undefined symbols, now natives
    relocations: int = 0
    section_addresses: dict[str, int] = field(default_factory=dict)
    unwind: UnwindTable | None = None  # CFI from .eh_frame; None for images without one

    def function_names(self) -> dict[int, str]:
        """Function address -> name."""
        return {a: n for n, a in self.functions.items()}


def _align(n: int, to: int) -> int:
    to = max(to, 1)
    return (n + to - 1) // to * to


def load_object(source: str | Path | bytes) -> LoadedObject:
    """Place, relocate and read the stack map of an ELF relocatable object.

    A damaged object is an ObjectLoadError or a DecodeError, whatever part of it is damaged.
    """
    from elftools.common.exceptions import ELFError

    data = source if isinstance(source, (bytes, bytearray)) else read_bytes_input(str(source), what="an object")
    try:
        return _load_object(bytes(data))
    except GCToyError:
        raise
    except (
        ELFError,
        struct.error,
        IndexError,
        KeyError,
        ValueError,
        TypeError,
        UnicodeDecodeError,
        AttributeError,
        AssertionError,
        OverflowError,
    ) as e:
        # pyelftools reports damage in the headers, tables and sections in these forms
        raise ObjectLoadError(f"damaged ELF object ({len(data)} bytes): {e}") from None


def _load_object(data: bytes) -> LoadedObject:
    """load_object on the object's bytes (pyelftools' exceptions pass through)."""
    from elftools.elf.relocation import RelocationSection
    from elftools.elf.sections import SymbolTableSection

    elf = _open_elf(data)
    code, rw, stackmap_body, placed, names = _place_sections(elf)

    symtab = next((s for s in elf.iter_sections() if isinstance(s, SymbolTableSection)), None)
    if symtab is None:
        raise ObjectLoadError("the object has no symbol table")
    externals: list[str] = []
    symbols, functions = _read_symbols(symtab, placed)

    stackmap_address = None
    sections = {}
    if stackmap_body is not None:
        image_probe = Image(bytes(code), bytes(rw), sections={STACKMAP_SECTION: bytes(stackmap_body)})
        stackmap_address = image_probe.section_address(STACKMAP_SECTION)

    def symbol_address(index: int) -> int:
        name, kind, address = symbols[index]
        if kind == "undef":
            if name not in externals:
                externals.append(name)
            return stub_address(externals.index(name))
        if address is None:
            raise ObjectLoadError(f"relocation against {name or 'a section'} that is not loaded")
        return address

    count = 0
    for section in elf.iter_sections():
        if not isinstance(section, RelocationSection):
            continue
        target = section["sh_info"]
        if target not in placed:
            continue
        buffer, offset, address = placed[target]
        if address < 0:
            assert stackmap_address is not None  # only the stack map is placed at -1
            address = stackmap_address
        if not section.is_RELA():
            raise ObjectLoadError(f"{section.name}: REL relocations are not supported")
        count += _relocate(section, buffer, offset, address, symbol_address)

    unwind = read_unwind_table(elf, _fde_starts(elf, symbol_address))

    # Natives referenced only by symbol (never relocated) still get stubs.
    for name, kind, _ in symbols:
        if kind == "undef" and name and name not in externals:
            externals.append(name)

    stackmap = None
    if stackmap_body is not None:
        sections[STACKMAP_SECTION] = bytes(stackmap_body)
        stackmap = parse(bytes(stackmap_body))
    image = Image(
        bytes(code),
        bytes(rw),
        dict(sorted(functions.items(), key=lambda kv: kv[1])),
        sections,
        tuple(externals),
        "x86_64",
    )
    image.symbols.update({n: stub_address(i) for i, n in enumerate(externals)})
    section_addresses = {names[i]: addr for i, (_, _, addr) in placed.items() if addr >= 0}
    if stackmap_address is not None:
        section_addresses[STACKMAP_SECTION] = stackmap_address
    return LoadedObject(image, stackmap, functions, tuple(externals), count, section_addresses, unwind)


def _open_elf(data: bytes):
    """The object's ELF reader, once its header says x86-64 relocatable and every section lies inside it."""
    from elftools.common.exceptions import ELFError
    from elftools.elf.elffile import ELFFile

    try:
        elf = ELFFile(io.BytesIO(data))
        elf["e_machine"]
    except (ELFError, ValueError, KeyError) as e:
        raise DecodeError(0, f"not an ELF object: {e}") from None
    if elf["e_machine"] != "EM_X86_64" or elf["e_type"] != "ET_REL":
        raise ObjectLoadError(f"not an x86-64 relocatable object ({elf['e_machine']}, {elf['e_type']})")
    for index, section in enumerate(elf.iter_sections()):
        header = section.header
        if header["sh_type"] != "SHT_NOBITS" and header["sh_offset"] + header["sh_size"] > len(data):
            raise ObjectLoadError(
                f"section {index}: {header['sh_size']} bytes at offset {header['sh_offset']:#x} "
                f"run past the end of the object ({len(data)} bytes)"
            )
    return elf


def _place_sections(
    elf,
) -> tuple[bytearray, bytearray, bytearray | None, dict[int, tuple[bytearray, int, int]], dict[int, str]]:
    """Lay the loaded sections out: code after code, data after data, the stack map apart.

    Returns the code and data buffers, the stack map's bytes (or None), where each placed section
    went (section index -> (buffer, offset in it, address; -1 for the stack map, fixed later)) and
    every section's name by index.
    """
    code, rw = bytearray(), bytearray()
    stackmap_body: bytearray | None = None
    placed: dict[int, tuple[bytearray, int, int]] = {}  # section index -> (buffer, offset, address)
    names: dict[int, str] = {}
    for index, section in enumerate(elf.iter_sections()):
        names[index] = section.name
        flags = section["sh_flags"]
        if section.name == STACKMAP_SECTION:
            stackmap_body = bytearray(section.data())
            placed[index] = (stackmap_body, 0, -1)  # address fixed below
            continue
        if not flags & SHF_ALLOC or section["sh_type"] in ("SHT_X86_64_UNWIND",) or section.name == ".eh_frame":
            continue
        if section["sh_size"] > MAX_SECTION_SIZE:
            raise ObjectLoadError(
                f"section {section.name or index} of {section['sh_size']} bytes is larger than "
                f"the {MAX_SECTION_SIZE} bytes a loaded section may take"
            )
        body = bytes(section["sh_size"]) if section["sh_type"] == "SHT_NOBITS" else section.data()
        if flags & SHF_EXECINSTR:
            buffer, base = code, CODE_BASE
        else:
            buffer, base = rw, DATA_BASE
        offset = _align(len(buffer), section["sh_addralign"])
        buffer.extend(b"\x90" * (offset - len(buffer)) if buffer is code else bytes(offset - len(buffer)))
        buffer.extend(body)
        placed[index] = (buffer, offset, base + offset)
    return code, rw, stackmap_body, placed, names


def _read_symbols(
    symtab, placed: dict[int, tuple[bytearray, int, int]]
) -> tuple[list[tuple[str, str, int | None]], dict[str, int]]:
    """Every symbol as (name, kind, address or None), and the defined functions' addresses."""
    symbols: list[tuple[str, str, int | None]] = []  # (name, kind, address or None)
    functions: dict[str, int] = {}
    for sym in symtab.iter_symbols():
        shndx, kind = sym["st_shndx"], sym["st_info"]["type"]
        if shndx == "SHN_UNDEF":
            symbols.append((sym.name, "undef", None))
            if sym.name:
                if not re.match(r"^[A-Za-z_][\w.$]*$", sym.name):
                    raise ObjectLoadError(f"undefined symbol {sym.name!r} cannot be a runtime native")
            continue
        if shndx == "SHN_ABS":
            symbols.append((sym.name, "abs", sym["st_value"]))
            continue
        if not isinstance(shndx, int) or shndx not in placed or placed[shndx][2] < 0:
            symbols.append((sym.name, "unplaced", None))
            continue
        address = placed[shndx][2] + sym["st_value"]
        symbols.append((sym.name, kind, address))
        if kind == "STT_FUNC":
            functions[sym.name] = address
    return symbols, functions


def _relocate(section, buffer: bytearray, offset: int, address: int, symbol_address: Callable[[int], int]) -> int:
    """Apply one RELA section's relocations to the section placed at ``buffer[offset:]`` (``address``).

    Returns how many were applied.
    """
    count = 0
    for rel in section.iter_relocations():
        kind, at = rel["r_info_type"], rel["r_offset"]
        width = 8 if kind == R_X86_64_64 else 4
        if not 0 <= offset + at <= len(buffer) - width:
            raise ObjectLoadError(f"{section.name}: relocation at offset {at:#x} is outside the section it patches")
        s, a, p = symbol_address(rel["r_info_sym"]), rel["r_addend"], address + at
        if kind == R_X86_64_64:
            struct.pack_into("<Q", buffer, offset + at, (s + a) & (2**64 - 1))
        elif kind in (R_X86_64_PC32, R_X86_64_PLT32):
            value = s + a - p
            if not -(2**31) <= value < 2**31:
                raise ObjectLoadError(f"PC-relative relocation at {p:#x} out of range")
            struct.pack_into("<i", buffer, offset + at, value)
        elif kind == R_X86_64_32:
            struct.pack_into("<I", buffer, offset + at, s + a)
        elif kind == R_X86_64_32S:
            struct.pack_into("<i", buffer, offset + at, s + a)
        else:
            raise ObjectLoadError(f"{section.name}: relocation type {kind} is not supported")
        count += 1
    return count


def _fde_starts(elf, symbol_address: Callable[[int], int]) -> Callable[[int], int | None]:
    """``.eh_frame`` offset of a PC-begin field -> the address it resolves to (S + A), or None.

    Resolved on demand, so relocations the walker never needs (a CIE's personality pointer)
    do not have to name a loaded symbol.
    """
    from elftools.elf.relocation import RelocationSection

    fields: dict[int, tuple[int, int]] = {}  # offset -> (symbol index, addend)
    eh_index = next((i for i, sec in enumerate(elf.iter_sections()) if sec.name == EH_FRAME), None)
    for section in elf.iter_sections():
        if not isinstance(section, RelocationSection) or section["sh_info"] != eh_index:
            continue
        for rel in section.iter_relocations():
            if rel["r_info_type"] in (R_X86_64_PC32, R_X86_64_64):
                fields[rel["r_offset"]] = (rel["r_info_sym"], rel["r_addend"] if section.is_RELA() else 0)

    def start(offset: int) -> int | None:
        if offset not in fields:
            return None
        symbol, addend = fields[offset]
        return symbol_address(symbol) + addend

    return start
