"""gctoy.ir: the LLVM-IR subset — types, values, instructions, parser, printer, statepoints, analyses."""

from .module import Module
from .parser import parse_module, parse_type
from .printer import print_function, print_instruction, print_module
from .types import GC_ADDRSPACE, is_gc_pointer

__all__ = [
    "GC_ADDRSPACE",
    "Module",
    "is_gc_pointer",
    "parse_module",
    "parse_type",
    "print_function",
    "print_instruction",
    "print_module",
]
