"""Read the `.llvm_stackmaps` section out of an ELF object (for example `llc -filetype=obj` output).

In a relocatable `.o` the function addresses are relocations against the function symbols; they
are not applied here, so every address reads as 0 — exactly what `llvm-readobj` prints.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path

from ..errors import DecodeError, GCToyError
from .codec import parse
from .format import StackMap

SECTION_NAME = ".llvm_stackmaps"

# (ELF class, e_machine) -> (LLVM's file format name, its arch name)
_FORMATS = {
    (64, "EM_X86_64"): ("elf64-x86-64", "x86_64"),
    (32, "EM_386"): ("elf32-i386", "i386"),
    (64, "EM_AARCH64"): ("elf64-littleaarch64", "aarch64"),
}


class MissingStackMapError(GCToyError):
    """An object file that has no `.llvm_stackmaps` section (nothing in it made a record)."""


@dataclass(frozen=True)
class ObjectStackMap:
    """A stack map section with what `llvm-readobj` says about the file that holds it."""

    file_format: str
    arch: str
    address_size: int
    section: bytes | None

    def section_bytes(self) -> bytes:
        """The raw section; `MissingStackMapError` if the object has none."""
        if self.section is None:
            raise MissingStackMapError(f"no {SECTION_NAME} section in this object")
        return self.section

    def stackmap(self) -> StackMap:
        """The section decoded (`DecodeError` if it is malformed, `MissingStackMapError` if absent)."""
        return parse(self.section_bytes())


def read_object(data: bytes) -> ObjectStackMap:
    """Find `.llvm_stackmaps` in the bytes of an ELF file (`DecodeError` if they are not ELF)."""
    from elftools.common.exceptions import ELFError
    from elftools.elf.elffile import ELFFile

    if data[:4] != b"\x7fELF":
        raise DecodeError(0, "not an ELF file (no \\x7fELF magic)")
    try:
        elf = ELFFile(io.BytesIO(data))
        little_endian = elf.little_endian
        section = elf.get_section_by_name(SECTION_NAME)
        body = section.data() if section is not None else None
        elf_class = elf.elfclass
        machine = elf["e_machine"]
    except ELFError as e:
        raise DecodeError(0, f"malformed ELF file: {e}") from None
    except Exception as e:  # pyelftools reports a corrupt header or section table in assorted ways
        raise DecodeError(0, f"malformed ELF file: {type(e).__name__}: {e}") from None
    if not little_endian:
        raise DecodeError(5, "big-endian ELF objects are not supported")
    file_format, arch = _FORMATS.get((elf_class, machine), (f"elf{elf_class}-unknown", "unknown"))
    return ObjectStackMap(file_format, arch, elf_class, None if body is None else bytes(body))


def read_stackmap_section(path: str | Path) -> bytes:
    """The raw bytes of the `.llvm_stackmaps` section of the ELF file at `path`."""
    return read_object(Path(path).read_bytes()).section_bytes()


def read_stackmap(path: str | Path) -> StackMap:
    """The decoded stack map of the ELF file at `path`."""
    return read_object(Path(path).read_bytes()).stackmap()
