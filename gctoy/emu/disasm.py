"""Capstone disassembly into plain, comparable records and a stable listing format."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import capstone

from gctoy.errors import AssemblerError


@dataclass(frozen=True)
class Insn:
    """One decoded instruction."""

    address: int
    size: int
    bytes: bytes
    mnemonic: str
    op_str: str

    @property
    def text(self) -> str:
        """``mnemonic op_str`` without trailing blanks."""
        return f"{self.mnemonic} {self.op_str}".strip()


@cache
def _capstone(arch: str, syntax: str) -> capstone.Cs:
    """A shared Capstone instance per architecture and syntax (details off: fast)."""
    if arch == "x86_64":
        mode = capstone.CS_MODE_64
    elif arch == "x86_32":
        mode = capstone.CS_MODE_32
    else:
        raise AssemblerError(f"unknown architecture {arch!r} (expected 'x86_64' or 'x86_32')")
    md = capstone.Cs(capstone.CS_ARCH_X86, mode)
    if syntax == "att":
        md.syntax = capstone.CS_OPT_SYNTAX_ATT
    elif syntax != "intel":
        raise AssemblerError(f"unknown syntax {syntax!r} (expected 'intel' or 'att')")
    return md


def disassemble(code: bytes, base: int, arch: str = "x86_64", syntax: str = "intel", count: int = 0) -> list[Insn]:
    """Decode ``code`` placed at ``base``; stops at the first undecodable byte (or after ``count``)."""
    md = _capstone(arch, syntax)
    return [Insn(i.address, i.size, bytes(i.bytes), i.mnemonic, i.op_str) for i in md.disasm(bytes(code), base, count)]


def disassemble_one(code: bytes, address: int, arch: str = "x86_64") -> Insn | None:
    """The single instruction at the start of ``code``, or None if none decodes."""
    found = disassemble(code[:15], address, arch, count=1)
    return found[0] if found else None


def format_listing(
    code: bytes,
    base: int,
    arch: str = "x86_64",
    syntax: str = "intel",
    symbols: dict[str, int] | None = None,
    byte_columns: int = 10,
) -> str:
    """An objdump-like listing: ``address: hex bytes  mnemonic operands``, labels on their own lines.

    Bytes that do not decode are shown as ``.byte`` lines so the listing covers all of ``code``.
    """
    labels: dict[int, list[str]] = {}
    for name, addr in sorted((symbols or {}).items(), key=lambda kv: (kv[1], kv[0])):
        labels.setdefault(addr, []).append(name)
    width = 3 * byte_columns
    lines: list[str] = []
    offset = 0
    while offset < len(code):
        insns = disassemble(code[offset:], base + offset, arch, syntax)
        for insn in insns:
            for name in labels.get(insn.address, []):
                lines.append(f"{name}:")
            lines.append(f"  {insn.address:08x}: {insn.bytes.hex(' '):<{width}} {insn.text}")
        offset += sum(i.size for i in insns)
        if offset < len(code):
            for name in labels.get(base + offset, []):
                lines.append(f"{name}:")
            raw = code[offset : offset + 1]
            lines.append(f"  {base + offset:08x}: {raw.hex(' '):<{width}} .byte {raw[0]:#04x}")
            offset += 1
    return "\n".join(lines)
