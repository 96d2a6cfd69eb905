"""The stack frame of a function whose values live in registers (``compile_module(regalloc=True)``).

Only what has no register gets memory: spilled values, the deopt spill slots of statepoints,
allocas and the outgoing stack arguments. The callee-saved registers the allocation uses are
pushed first; no frame pointer is set up (``rbp`` is never touched), as llc -O2 does::

      higher addresses
      | caller's outgoing stack arguments |  [CFA + 0], [CFA + 8], ...
      | return address                    |  [CFA - 8]            <- rsp at entry
      | saved rbx, r12, ... (if used)     |  [CFA - 16], [CFA - 24], ...
      +-----------------------------------+
      | spill slots (8 bytes each)        |
      | deopt spill slots                 |
      | alloca objects (own size, align)  |
      | outgoing stack arguments (7th...) |  [rsp + 0], [rsp + 8], ...
      +-----------------------------------+  <- rsp = CFA - stack_size - 8
      lower addresses

``size`` is what the prologue subtracts after the pushes; it is chosen so that ``rsp`` is
16-byte aligned at every call (8 for the return address + 8 per push + size is a multiple
of 16). A function that makes no call and needs no memory gets no frame at all: no push,
no ``sub``. ``stack_size`` (pushes + size) is what the StkSizeRecord reports, and the CFA
(the caller's ``rsp`` before its call) is ``rsp + stack_size + 8`` at every call site.
"""

from __future__ import annotations

from ..ir import instructions as I
from ..ir.intrinsics import is_statepoint_name
from ..ir.statepoint import Statepoint
from ..ir.values import Function, Value
from .frame import (
    DWARF,
    SLOT_SIZE,
    STACK_ALIGN,
    CodegenError,
    UnwindRow,
    align_of,
    describe_head,
    is_wide,
    located,
    locating,
    outgoing_args,
    refuse_unlowered,
    size_of,
    spilled_deopt_values,
    sub_rsp_bytes,
)
from .limits import alloca_elements, check_frame_size
from .regalloc import Allocation, is_clobbering_call


def slot_lowering_reason(function: Function) -> str | None:
    """Why ``function`` needs the slot lowering (frame.py) rather than registers, or None: a vector,
    ``i128`` or aggregate value or constant operand (the allocator gives each value one 64-bit register
    or slot), or an alloca aligned above 16 bytes (only the slot frame, with its frame pointer,
    realigns ``rsp``)."""
    for v in function.args:
        if is_wide(v.type):
            return f"argument %{v.name} of type {v.type}"
    for inst in function.instructions():
        if is_wide(inst.type):
            return f"%{inst.name} of type {inst.type}"
        if any(is_wide(op.type) for op in inst.operands):
            return f"an operand of type {next(op.type for op in inst.operands if is_wide(op.type))}"
        if isinstance(inst, I.Alloca) and _alloca_align(inst) > STACK_ALIGN:
            return f"alloca %{inst.name} aligned to more than {STACK_ALIGN} bytes"
    return None


def _alloca_align(inst: I.Alloca) -> int:
    with locating(inst):
        return max(align_of(inst.allocated_type), inst.align or 1)


def refuse_wide_values(function: Function) -> None:
    """A vector, ``i128`` or aggregate value is refused at its ``file:line:col``: the register allocator
    gives every value one 64-bit register or slot (the default lowering handles such values)."""
    for v in [*function.args, *function.instructions()]:
        if is_wide(v.type):
            error = CodegenError(
                f"a value of type {v.type} is not supported by the register allocator (compile with --no-regalloc)"
            )
            raise located(error, v)


def _align_to(n: int, a: int) -> int:
    return (n + a - 1) // a * a


class RegisterFrame:
    """The stack layout of one register-allocated function: offsets from ``rsp`` after the prologue."""

    def __init__(self, function: Function, allocation: Allocation) -> None:
        self.function = function
        self.allocation = allocation
        self._allocas: dict[int, int] = {}
        max_args = max_spills = 0
        calls = False
        allocas: list[I.Alloca] = []
        for inst in function.instructions():
            refuse_unlowered(inst, "x86-64")  # before the wide values: a cmpxchg's {T, i1} is one
        refuse_wide_values(function)
        for inst in function.instructions():
            calls = calls or is_clobbering_call(inst)
            if isinstance(inst, I.CallBase):
                max_args = max(max_args, outgoing_args(inst))
                if is_statepoint_name(inst.callee_name or ""):
                    max_spills = max(max_spills, len(spilled_deopt_values(Statepoint.of(inst))))
            if isinstance(inst, I.Alloca):
                allocas.append(inst)
        #: the callee-saved registers the prologue pushes, in push order
        self.saved = allocation.used_callee_saved
        self.outgoing_size = SLOT_SIZE * max_args
        cursor = self.outgoing_size
        for a in allocas:
            with locating(a):
                n = alloca_elements(a, function.name, size_of(a.allocated_type))
                align = max(align_of(a.allocated_type), a.align or 1)
                if align > STACK_ALIGN:
                    raise CodegenError(
                        f"alloca %{a.name} asks for alignment {align}; at most {STACK_ALIGN} is supported"
                    )
            cursor = _align_to(cursor, align)
            self._allocas[id(a)] = cursor
            cursor += max(1, n * size_of(a.allocated_type))
        cursor = _align_to(cursor, SLOT_SIZE)
        #: slots the statepoints spill address-valued deopt operands to (shared by all statepoints)
        self.spill_slots = tuple(cursor + SLOT_SIZE * k for k in range(max_spills))
        cursor += SLOT_SIZE * max_spills
        self._spill_base = cursor
        cursor += SLOT_SIZE * allocation.spill_count
        pushed = SLOT_SIZE * (1 + len(self.saved))
        if cursor or calls:
            cursor = _align_to(cursor + pushed, STACK_ALIGN) - pushed
        #: what the prologue subtracts from rsp (after the pushes)
        self.size = cursor
        check_frame_size(self.size, function.name)
        self.values = tuple(v for v in allocation.values if allocation.spill(v) is not None)
        self.allocas = tuple(allocas)

    @property
    def stack_size(self) -> int:
        """The StkSizeRecord stack size: the pushes and the locals (return address at [rsp + this])."""
        return self.size + SLOT_SIZE * len(self.saved)

    @property
    def recorded_stack_size(self) -> int:
        """The StkSizeRecord stack size (this frame never realigns ``rsp``, so always known)."""
        return self.stack_size

    def save_offset(self, register: str) -> int:
        """Where the prologue saved ``register``, as an offset from the CFA (negative)."""
        return -SLOT_SIZE * (2 + self.saved.index(register))

    def unwind_rows(self) -> list[UnwindRow]:
        """The prologue's CFI: a row after each push (the register saved at its CFA offset) and after
        ``sub rsp``."""
        rows: list[UnwindRow] = [(0, 8, ())]
        offset, saved = 0, []
        for k, reg in enumerate(self.saved, start=1):
            offset += 1 if reg in ("rbx", "rbp") else 2  # push r12..r15 needs a REX prefix
            saved.append((DWARF[reg], self.save_offset(reg)))
            rows.append((offset, 8 + 8 * k, tuple(sorted(saved))))
        if self.size:
            offset += sub_rsp_bytes(self.size)
            rows.append((offset, self.stack_size + 8, tuple(sorted(saved))))
        return rows

    def slot(self, value: Value) -> int:
        """The ``rsp`` offset of a spilled value's slot."""
        k = self.allocation.spill(value)
        if k is None:
            raise CodegenError(f"{value!r} has no stack slot in @{self.function.name}")
        return self._spill_base + SLOT_SIZE * k

    def alloca(self, alloca: I.Alloca) -> int:
        """The ``rsp`` offset of an alloca's object (the alloca's value is rsp + this)."""
        return self._allocas[id(alloca)]

    def describe(self) -> str:
        """A text table of the frame, lowest address first, then the registers."""
        lines = describe_head(self)
        for off in self.spill_slots:
            lines.append(f"  [rsp + {off}] deopt spill slot")
        for v in self.values:
            lines.append(f"  [rsp + {self.slot(v)}] %{v.name} (spilled)")
        for r in self.saved:
            lines.append(f"  [CFA {self.save_offset(r)}] saved {r}")
        for v in self.allocation.values:
            reg = self.allocation.register(v)
            if reg is not None:
                lines.append(f"  {reg}: %{v.name}")
        return "\n".join(lines)


__all__ = ["RegisterFrame", "refuse_wide_values", "slot_lowering_reason"]
