"""Keystone assembly, Capstone disassembly and a Unicorn machine that runs gctoy images."""

from gctoy.emu.asm import (
    CANONICAL_NOPS,
    Mismatch,
    assemble,
    assemble_untrusted,
    check_assembly,
    compare_assembly,
    find_rip_rewrites,
    nops,
)
from gctoy.emu.disasm import Insn, disassemble, format_listing
from gctoy.emu.image import (
    CODE_BASE,
    DATA_BASE,
    HEAP_BASE,
    RETURN_TRAP,
    SECTION_BASE,
    STACK_BASE,
    STACK_TOP,
    STUB_BASE,
    Image,
)
from gctoy.emu.machine import Machine, Stop, StopReason
from gctoy.emu.natives import Native

__all__ = [
    "CANONICAL_NOPS",
    "CODE_BASE",
    "DATA_BASE",
    "HEAP_BASE",
    "Image",
    "Insn",
    "Machine",
    "Mismatch",
    "Native",
    "RETURN_TRAP",
    "SECTION_BASE",
    "STACK_BASE",
    "STACK_TOP",
    "STUB_BASE",
    "Stop",
    "StopReason",
    "assemble",
    "assemble_untrusted",
    "check_assembly",
    "compare_assembly",
    "disassemble",
    "find_rip_rewrites",
    "format_listing",
    "nops",
]
