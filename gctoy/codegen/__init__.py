"""IR -> x86-64 assembly: a fixed stack frame per function and statepoints with StackMap v3 records."""

from .frame import ARG_REGISTERS, CodegenError, Frame, align_of, field_offset, size_of
from .x86_64 import STACKMAP_SECTION, CompiledFunction, CompiledModule, compile, compile_module

__all__ = [
    "ARG_REGISTERS", "CodegenError", "CompiledFunction", "CompiledModule", "Frame", "STACKMAP_SECTION",
    "align_of", "compile", "compile_module", "field_offset", "size_of",
]
