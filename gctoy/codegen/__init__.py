"""IR -> x86-64 assembly (a fixed frame per function, statepoints with StackMap v3 records) and x86-32 (JIT32)."""

from .frame import ARG_REGISTERS, CodegenError, Frame, align_of, field_offset, size_of
from .x86_64 import STACKMAP_SECTION, CompiledFunction, CompiledModule, compile, compile_module
from .x86_32 import CompiledFunction32, CompiledModule32, compile_module32

__all__ = [
    "ARG_REGISTERS",
    "CodegenError",
    "CompiledFunction",
    "CompiledModule",
    "Frame",
    "STACKMAP_SECTION",
    "align_of",
    "compile",
    "compile_module",
    "field_offset",
    "size_of",
    "CompiledFunction32",
    "CompiledModule32",
    "compile_module32",
]
