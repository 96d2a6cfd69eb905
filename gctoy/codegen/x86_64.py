"""Lower the IR subset (after RS4GC) to x86-64 assembly (SysV), with a StackMap v3 record per statepoint.

Two lowerings, chosen per function:

* **Registers** (the default; regalloc.py, a linear scan, lowering64_ra.py, frame_ra.py): values
  live in registers, as llc -O2 keeps them. A GC pointer live across a statepoint sits in a
  callee-saved register (a Register location in the record) or a spill slot (Indirect
  ``[RSP + off]``); no frame pointer is set up.
* **Slots** (``regalloc=False``, ``gctoy llc --no-regalloc``; lowering64.py, frame.py): each
  instruction loads its operands from their stack slots into scratch registers (rax, rcx, rdx),
  computes, and stores the result back into its own slot. Every GC pointer live across a call is
  already in its slot, so the record names those slots as Indirect locations, the collector may
  rewrite them during the call, and each ``gc.relocate`` reloads its derived pointer from the
  (possibly updated) slot. The allocator gives each value one 64-bit register or slot, so a
  function with a vector, ``i128`` or aggregate value gets this lowering even by default.

Either way integers narrower than 64 bits are kept *zero-extended*; an operation that needs the
signed reading (sdiv, ashr, signed compares, sext) sign-extends its operands first. The return
address label after each call gives the record's instruction offset once the text is assembled,
and each function comes with the CFI rows of its prologue (``unwind_rows``), so the stack walk
finds an outer frame's registers in its callees' save slots, as it does with llc's ``.eh_frame``.
This module assembles the text and builds the stack map.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..emu import Image
from ..ir.module import Module
from ..ir.values import Value
from ..stackmap import StackMap, StackMapRecord, StkSizeRecord, emit
from .data import data_text, tls_offsets
from .codegen_error import located, locating
from .frame import CodegenError, Frame, UnwindRow, check_values
from .limits import MAX_CODE_BYTES
from .frame_ra import RegisterFrame, slot_lowering_reason
from .lowering64 import FunctionLowering
from .lowering64_ra import RegisterLowering
from .symbols import mangle, with_ir_names

STACKMAP_SECTION = ".llvm_stackmaps"

__all__ = ["STACKMAP_SECTION", "CompiledFunction", "CompiledModule", "compile", "compile_module"]


@dataclass(frozen=True)
class CompiledFunction:
    """One lowered function: where it landed, its frame and the labels after its statepoints."""

    name: str
    address: int
    frame: Frame | RegisterFrame
    statepoint_labels: tuple[str, ...]
    #: (rsp offset of the slot, metadata constant) per ``llvm.gcroot``, for frame-root strategies
    gc_roots: tuple[tuple[int, Value], ...] = ()
    #: the prologue's CFI rows
    unwind_rows: tuple[UnwindRow, ...] = ()

    @property
    def prologue_instructions(self) -> int:
        """How many instructions the prologue has: ``push rbp``, ``mov rbp, rsp``, ``sub rsp, N`` if N
        (with registers: a push per saved register, ``sub rsp, N`` if N)."""
        if isinstance(self.frame, RegisterFrame):
            return len(self.frame.saved) + (1 if self.frame.size else 0)
        return 3 if self.frame.size else 2


@dataclass(frozen=True)
class CompiledModule:
    """Assembly text, data text, the stack map and the assembled image (with the stack map section)."""

    asm_text: str
    data_text: str
    stackmap: StackMap
    functions: tuple[CompiledFunction, ...]
    natives: tuple[str, ...]
    image: Image
    #: for each line of ``asm_text``, the (line, column) in the IR text of the instruction it was
    #: lowered from; None for labels, prologues and code of instructions with no known place
    line_sources: tuple[tuple[int, int] | None, ...] = field(default=(), compare=False)


# --------------------------------------------------------------------------- module


def compile_module(module: Module, regalloc: bool = True, gc_registers: int = 0) -> CompiledModule:
    """Lower every defined function, assemble, and build the stack map from the assembled labels.

    ``regalloc``: keep values in registers (regalloc.py, lowering64_ra.py) where the function allows
    it (``slot_lowering_reason``); False gives every value a stack slot (lowering64.py). ``gc_registers``: with
    registers, how many gc-live values per statepoint may stay in (callee-saved) registers instead
    of spill slots, as llc's ``-max-registers-for-gc-values``."""
    constants: list[int] = []
    lowered: list[FunctionLowering] = []
    text: list[str] = []
    sources: list[tuple[int, int] | None] = []
    tls = tls_offsets(module)
    patch_bytes = 0
    for fn in module.functions:
        if fn.is_declaration:
            continue
        with locating(fn):  # what names no instruction, argument or global is about the function
            check_values(fn)
            if regalloc and slot_lowering_reason(fn) is None:
                lowering: FunctionLowering = RegisterLowering(fn, constants, tls, gc_registers)
            else:
                lowering = FunctionLowering(fn, constants, tls)
            text += lowering.lower()
        sources += lowering.line_sources()
        lowered.append(lowering)
        patch_bytes += lowering.patch_bytes
        if patch_bytes > MAX_CODE_BYTES:
            error = CodegenError(
                f"the statepoints' patch bytes add up to more than the image's {MAX_CODE_BYTES} bytes of code"
            )
            raise located(error, fn)
    defined = {lowering.name for lowering in lowered}
    natives: list[str] = []
    for lowering in lowered:
        for name in lowering.callees:
            if name not in defined and name not in natives:
                natives.append(name)
    asm_text = "\n".join(text) + "\n"
    text_of_data = data_text(module)
    image = Image.from_assembly(asm_text, text_of_data, natives=tuple(mangle(n) for n in natives))
    image = with_ir_names(image, tuple(natives), module)
    functions, records, compiled = [], [], []
    for lowering in lowered:
        address = image.address_of(lowering.name)
        compiled.append(
            CompiledFunction(
                lowering.name,
                address,
                lowering.frame,
                tuple(r.label for r in lowering.records),
                tuple(lowering.gc_roots),
                tuple(lowering.frame.unwind_rows()),
            )
        )
        if not lowering.records:
            continue
        functions.append(StkSizeRecord(address, lowering.frame.recorded_stack_size, len(lowering.records)))
        for r in lowering.records:
            records.append(StackMapRecord(r.id, image.address_of(r.label) - address, 0, r.locations))
    stackmap = StackMap(3, tuple(functions), tuple(constants), tuple(records))
    if records:
        image = image.with_sections(**{STACKMAP_SECTION: emit(stackmap)})
    return CompiledModule(asm_text, text_of_data, stackmap, tuple(compiled), tuple(natives), image, tuple(sources))


def compile(module: Module, regalloc: bool = True, gc_registers: int = 0) -> Image:  # noqa: A001 - public name
    """Lower and assemble a module into an Image (code, data, natives, ``.llvm_stackmaps``)."""
    return compile_module(module, regalloc, gc_registers).image
