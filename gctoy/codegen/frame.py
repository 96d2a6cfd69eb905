"""The stack frame of one lowered function: a slot for every SSA value, allocas, outgoing arguments.

The code generator is deliberately non-optimising: no value lives in a register across
instructions. Every argument and every instruction result has its own 8-byte slot (a vector, i128 or
aggregate: its bytes in whole words, see wide.py), so at a
``gc.statepoint`` each GC pointer that is live across the call already sits in memory and
the stack map can name that memory directly (an Indirect location).

Every slot is addressed relative to ``rsp``, which does not move between the end of the
prologue and the epilogue (no pushes at call sites: stack arguments go to a reserved
outgoing area at the bottom of the frame). So the ``[rsp + off]`` the code uses is also the
``[RSP + off]`` that the stack map records at every call site. ``rbp`` is still set up as a
frame pointer so that debuggers and stack dumps see a conventional chain::

      higher addresses
      | caller's outgoing stack arguments |  [rbp + 16], [rbp + 24], ...
      | return address                    |  <- rsp at entry (16n + 8)
      | saved rbp                         |  <- rbp (16-byte aligned)
      +-----------------------------------+
      | phi shadow slots (8 bytes each)   |  (wide values: whole words)
      | value slots (8 bytes each)        |  one per argument / instruction result
      | alloca objects (own size, align)  |
      | outgoing stack arguments (7th...) |  [rsp + 0], [rsp + 8], ...
      +-----------------------------------+  <- rsp = rbp - size (16-byte aligned at calls)
      lower addresses

``size`` (what the prologue subtracts) is rounded up to 16, so ``rsp`` is 16-byte aligned at
every call as the SysV ABI requires. ``stack_size`` = ``size + 8`` (the saved rbp included)
is what the StkSizeRecord reports: at a call site the return address into the caller sits at
``[rsp + stack_size]`` and the caller's ``rsp`` is ``rsp + stack_size + 8``.

A phi has two slots: predecessors write the incoming value to its *shadow* slot before they
branch, and the phi's block copies shadow -> value slot on entry. Reading every shadow only
after all of them are written makes the copies of one edge behave as a parallel copy (the
"swap problem" of phi lowering cannot occur), and no critical edge needs splitting.
"""

from __future__ import annotations

from ..errors import GCToyError, VerifyError
from ..ir import instructions as I
from ..ir.types import (
    ArrayType,
    FloatType,
    IntType,
    NamedStructType,
    PointerType,
    StructType,
    TokenType,
    Type,
    VectorType,
    VoidType,
)
from ..ir.intrinsics import is_statepoint_name
from ..ir.statepoint import Statepoint
from ..ir.values import Argument, ConstantInt, Function, Value
from .codegen_error import CodegenError, LocatedCodegenError, located, locating
from .limits import alloca_elements, check_frame_size

SLOT_SIZE = 8
_FLOAT_SIZES = {"half": 2, "float": 4, "double": 8}
#: SysV x86-64 passes the first eight floating-point arguments in xmm0..xmm7
XMM_ARG_REGISTERS = 8
STACK_ALIGN = 16
#: the largest alloca alignment the prologue realigns the stack for (a page)
MAX_REALIGN = 4096
#: Integer arguments of the SysV x86-64 calling convention, in order.
ARG_REGISTERS = ("rdi", "rsi", "rdx", "rcx", "r8", "r9")


#: DWARF register numbers of the x86-64 general registers (the stack map's and the CFI's numbering)
DWARF = {
    "rax": 0,
    "rdx": 1,
    "rcx": 2,
    "rbx": 3,
    "rsi": 4,
    "rdi": 5,
    "rbp": 6,
    "rsp": 7,
    **{f"r{n}": n for n in range(8, 16)},
}

#: one CFI row of a prologue: (byte offset in the function, CFA = rsp + this, saved (DWARF register,
#: offset from the CFA))
UnwindRow = tuple[int, int, tuple[tuple[int, int], ...]]


def sub_rsp_bytes(size: int) -> int:
    """The length of ``sub rsp, size``: 4 bytes with an 8-bit immediate, 7 with a 32-bit one."""
    return 4 if size < 128 else 7


def _align_to(n: int, a: int) -> int:
    return (n + a - 1) // a * a


def _elements(ty: StructType | NamedStructType) -> tuple[Type, ...]:
    if isinstance(ty, NamedStructType):
        if ty.body is None or ty.body.elements is None:
            raise CodegenError(f"opaque struct type {ty} has no layout")
        return ty.elements
    return ty.elements


def _is_packed(ty: StructType | NamedStructType) -> bool:
    if isinstance(ty, NamedStructType):
        return bool(ty.body.packed)
    return bool(getattr(ty, "packed", False))


def is_wide(ty: Type) -> bool:
    """Whether a value of ``ty`` takes more than one 8-byte word (vectors, i128, aggregates: wide.py)."""
    return isinstance(ty, (VectorType, StructType, NamedStructType, ArrayType)) or (
        isinstance(ty, IntType) and ty.bits > 64
    )


def align_of(ty: Type) -> int:
    """ABI alignment of a type on x86-64 (natural alignment; packed structs 1; vectors their size, at most 16)."""
    if isinstance(ty, VectorType):
        return min(16, 1 << (size_of(ty) - 1).bit_length())
    if isinstance(ty, (IntType, FloatType)):
        return size_of(ty)
    if isinstance(ty, PointerType):
        return 8
    if isinstance(ty, ArrayType):
        return align_of(ty.element)
    if isinstance(ty, (StructType, NamedStructType)):
        if _is_packed(ty):
            return 1
        return max((align_of(e) for e in _elements(ty)), default=1)
    raise CodegenError(f"type {ty} has no x86-64 layout in gctoy")


def size_of(ty: Type) -> int:
    """Allocation size of a type in bytes (store size rounded up to its alignment)."""
    if isinstance(ty, IntType):
        if ty.bits > 128:
            raise CodegenError(f"integers wider than 128 bits ({ty}) are not supported")
        return 1 << max(0, (ty.bits - 1).bit_length() - 3) if ty.bits > 8 else 1
    if isinstance(ty, VectorType):
        if isinstance(ty.element, IntType) and ty.element.bits == 1:
            raise CodegenError(f"vectors of i1 ({ty}) are not supported by the x86-64 code generator")
        return ty.count * size_of(ty.element)
    if isinstance(ty, PointerType):
        return 8
    if isinstance(ty, FloatType):
        if ty.kind not in _FLOAT_SIZES:
            raise CodegenError(f"values of type {ty} are not supported by the x86-64 code generator")
        return _FLOAT_SIZES[ty.kind]
    if isinstance(ty, ArrayType):
        return ty.count * size_of(ty.element)
    if isinstance(ty, (StructType, NamedStructType)):
        offsets, end = _struct_layout(ty)
        return _align_to(end, align_of(ty))
    raise CodegenError(f"type {ty} has no x86-64 layout in gctoy")


def _struct_layout(ty: StructType | NamedStructType) -> tuple[list[int], int]:
    offsets, cursor = [], 0
    packed = _is_packed(ty)
    for e in _elements(ty):
        if not packed:
            cursor = _align_to(cursor, align_of(e))
        offsets.append(cursor)
        cursor += size_of(e)
    return offsets, cursor


def field_offset(ty: StructType | NamedStructType, index: int) -> int:
    """Byte offset of field ``index`` of a struct type."""
    offsets, _ = _struct_layout(ty)
    return offsets[index]


def constant_width(c: ConstantInt) -> int:
    """Bits of an integer constant's type."""
    assert isinstance(c.type, IntType), c.type  # the parser and the passes build integer constants of an iN type
    return c.type.bits


def value_width(ty: Type, pointer_bits: int, target: str) -> int:
    """Bits of an integer or pointer value in a register of ``target`` (pointers: ``pointer_bits``)."""
    if isinstance(ty, IntType):
        if ty.bits > 64:
            raise CodegenError(f"integers wider than 64 bits ({ty}) are not supported")
        return ty.bits
    if isinstance(ty, PointerType):
        return pointer_bits
    raise CodegenError(f"values of type {ty} are not supported by the {target} code generator")


def gep_terms(inst: I.GetElementPtr) -> tuple[int, list[tuple[Value, int]]]:
    """A GEP's address as ``pointer + constant + sum(index * scale)``: the constant (bytes, not yet
    wrapped to the pointer width) and the variable indices with their scales. Struct fields must
    be constant; variable indices are signed."""
    constant = 0
    terms: list[tuple[Value, int]] = []
    ty: Type = inst.source_type
    for n, idx in enumerate(inst.indices):
        if n == 0:
            scale = size_of(ty)
        elif isinstance(ty, (StructType, NamedStructType)):
            if not isinstance(idx, ConstantInt):
                raise CodegenError("a struct field index must be a constant")
            constant += field_offset(ty, idx.value)
            ty = ty.elements[idx.value]
            continue
        elif isinstance(ty, ArrayType):
            ty = ty.element
            scale = size_of(ty)
        else:
            raise CodegenError(f"getelementptr cannot index into {ty}")
        if isinstance(idx, ConstantInt):
            bits = constant_width(idx)
            value = idx.value & ((1 << bits) - 1)
            constant += (value - (1 << bits) if value >> (bits - 1) else value) * scale
        else:
            terms.append((idx, scale))
    return constant, terms


def has_slot(value: Value) -> bool:
    """Whether a value gets a slot (one word, or a wide value's words): arguments and instruction results
    that carry data."""
    if not isinstance(value, (Argument, I.Instruction)) or isinstance(value, (I.Alloca, I.LandingPad)):
        return False  # a landing pad is never entered: gctoy's runtime does not unwind
    ty = value.type
    if isinstance(ty, (VoidType, TokenType)):
        return False
    if isinstance(ty, (IntType, PointerType)):
        if isinstance(ty, IntType) and ty.bits > 128:
            raise CodegenError(f"integers wider than 128 bits ({ty}) are not supported")
        return True
    if isinstance(ty, FloatType) and ty.kind in _FLOAT_SIZES:
        return True  # its bit pattern, zero-extended, like an integer of its width
    if is_wide(ty):
        size_of(ty)  # refuses what has no layout
        return True  # its bytes, in a slot of whole words (wide.py)
    raise CodegenError(f"values of type {ty} are not supported by the x86-64 code generator")


def stack_argument_count(args: list[Value]) -> int:
    """How many of a call's arguments go on the stack (SysV: integers past the sixth, floats past the eighth)."""
    wide = [a for a in args if is_wide(a.type)]
    if wide:  # at most every word of every argument, plus 16-byte alignment (abi.py places them)
        return sum(slot_bytes(a.type) // SLOT_SIZE + 1 for a in args)
    floats = sum(1 for a in args if isinstance(a.type, FloatType))
    return max(0, len(args) - floats - len(ARG_REGISTERS)) + max(0, floats - XMM_ARG_REGISTERS)


def slot_bytes(ty: Type) -> int:
    """The bytes of a value's slot: one word, or a wide value's bytes rounded up to whole words."""
    return _align_to(size_of(ty), SLOT_SIZE) if is_wide(ty) else SLOT_SIZE


def wide_constants(inst: I.Instruction) -> list[Value]:
    """The wide constant operands of an instruction: each gets a slot its bytes are written to before use."""
    from ..ir.values import Constant

    return [v for v in inst.operands if isinstance(v, Constant) and is_wide(v.type)]


def outgoing_args(call: I.CallBase) -> int:
    """How many stack arguments a call passes to its real target (none for gc.relocate and friends)."""
    name = call.callee_name or ""
    if is_statepoint_name(name):
        return stack_argument_count(Statepoint.of(call).call_args)
    if name.startswith("llvm.experimental.patchpoint."):
        return len(call.args)  # at most a word for each argument (patchpoints.py places them)
    if name.startswith("llvm."):
        return 0
    return stack_argument_count(call.args)


def refuse_unlowered(inst: I.Instruction, target: str) -> None:
    """Refuse, at its line, what gctoy parses and prints but its code generators do not lower: inline asm
    calls, ``cmpxchg`` and ``atomicrmw``."""
    from ..ir.values import InlineAsm

    if isinstance(inst, I.CallBase) and isinstance(inst.callee, InlineAsm):
        raise located(CodegenError("inline asm is not supported by gctoy llc"), inst)
    if isinstance(inst, (I.CmpXchg, I.AtomicRMW)):
        raise located(CodegenError(f"'{inst.opcode}' is not supported by the {target} code generator"), inst)


def is_spilled_deopt(v: Value) -> bool:
    """Whether a statepoint spills a deopt value to a frame slot: the address of a function or a global
    (llc-14 records such values as Indirect spill slots, since they are not immediate constants)."""
    from ..ir.values import ConstantExpr, GlobalVariable

    while isinstance(v, ConstantExpr) and v.opcode in ("bitcast", "addrspacecast") and v.operands:
        v = v.operands[0]
    return isinstance(v, (Function, GlobalVariable)) or (isinstance(v, ConstantExpr) and v.opcode == "getelementptr")


def spilled_deopt_values(sp: Statepoint) -> list[Value]:
    """The deopt values a statepoint spills to the frame (see is_spilled_deopt), in order."""
    return [v for v in sp.deopt_args if is_spilled_deopt(v)]


def _has_slot_at(value: Value) -> bool:
    with locating(value):
        return has_slot(value)


def check_values(function: Function) -> None:
    """Refuse an argument or instruction result of a type the x86-64 code generator has no place for,
    at that argument or instruction."""
    for v in [*function.args, *function.instructions()]:
        _has_slot_at(v)


def describe_head(frame) -> list[str]:
    """The first lines of an x86-64 frame's table: its sizes, outgoing arguments and allocas."""
    lines = [f"frame of @{frame.function.name}: size {frame.size}, stack size {frame.stack_size}"]
    if frame.outgoing_size:
        lines.append(f"  [rsp + 0 .. {frame.outgoing_size}) outgoing stack arguments")
    for a in frame.allocas:
        lines.append(f"  [rsp + {frame.alloca(a)}] alloca %{a.name}")
    return lines


class Frame:
    """The fixed stack layout of one function: offsets from ``rsp`` after the prologue."""

    def __init__(self, function: Function) -> None:
        self.function = function
        self._slots: dict[int, int] = {}
        self._shadows: dict[int, int] = {}
        self._allocas: dict[int, int] = {}
        max_args = max_spills = 0
        #: an alignment above 16 the prologue gives rsp (``and rsp, -realign``) for an alloca asking for it
        self.realign = 0
        allocas: list[I.Alloca] = []
        values: list[Value] = [a for a in function.args if _has_slot_at(a)]
        phis: list[I.Phi] = []
        constants: list[Value] = []
        for inst in function.instructions():
            refuse_unlowered(inst, "x86-64")
            if isinstance(inst, I.CallBase):
                max_args = max(max_args, outgoing_args(inst))
                if is_statepoint_name(inst.callee_name or ""):
                    max_spills = max(max_spills, len(spilled_deopt_values(Statepoint.of(inst))))
            constants += wide_constants(inst)
            if isinstance(inst, I.Alloca):
                allocas.append(inst)
            elif _has_slot_at(inst):
                values.append(inst)
                if isinstance(inst, I.Phi):
                    phis.append(inst)
        #: bytes reserved at [rsp + 0] for stack arguments of calls made by this function
        self.outgoing_size = SLOT_SIZE * max_args
        cursor = self.outgoing_size
        for a in allocas:
            with locating(a):
                n = alloca_elements(a, function.name, size_of(a.allocated_type))
                align = max(align_of(a.allocated_type), a.align or 1)
                if align > MAX_REALIGN or align & (align - 1):
                    raise CodegenError(
                        f"alloca %{a.name} asks for alignment {align}; at most {MAX_REALIGN} is supported"
                    )
            self.realign = max(self.realign, align if align > STACK_ALIGN else 0)
            cursor = _align_to(cursor, align)
            self._allocas[id(a)] = cursor
            cursor += max(1, n * size_of(a.allocated_type))
        cursor = _align_to(cursor, SLOT_SIZE)
        if is_wide(function.ftype.ret):
            constants.append(function)  # the slot of the hidden result pointer, if the result goes in memory
        for v in values + constants:
            self._slots.setdefault(id(v), cursor)
            cursor += slot_bytes(v.type) if v is not function else SLOT_SIZE
        for p in phis:
            self._shadows[id(p)] = cursor
            cursor += slot_bytes(p.type)
        #: slots the statepoints spill address-valued deopt operands to (shared by all statepoints)
        self.spill_slots = tuple(cursor + SLOT_SIZE * k for k in range(max_spills))
        cursor += SLOT_SIZE * max_spills
        #: what the prologue subtracts from rsp (after pushing rbp)
        self.size = _align_to(cursor, max(STACK_ALIGN, self.realign))
        check_frame_size(self.size, function.name)
        self.values = tuple(values)
        self.allocas = tuple(allocas)

    @property
    def stack_size(self) -> int:
        """Locals plus the saved rbp: the return address is at [rsp + this] (unless the prologue realigned rsp)."""
        return self.size + SLOT_SIZE

    @property
    def recorded_stack_size(self) -> int:
        """The StkSizeRecord stack size: ``stack_size``, or unknown (2^64 - 1, as llc writes) when the
        prologue realigns rsp, since the padding then depends on the caller's rsp."""
        return (1 << 64) - 1 if self.realign else self.stack_size

    def slot(self, value: Value) -> int:
        """The ``rsp`` offset of a value's slot."""
        try:
            return self._slots[id(value)]
        except KeyError:
            raise CodegenError(f"{value!r} has no stack slot in @{self.function.name}") from None

    def shadow(self, phi: I.Phi) -> int:
        """The ``rsp`` offset of the slot predecessors write a phi's incoming value to."""
        try:
            return self._shadows[id(phi)]
        except KeyError:
            raise CodegenError(
                f"phi %{phi.name} of type {phi.type} has no stack slot in @{self.function.name}"
            ) from None

    def alloca(self, alloca: I.Alloca) -> int:
        """The ``rsp`` offset of an alloca's object (the alloca's value is rsp + this)."""
        return self._allocas[id(alloca)]

    def unwind_rows(self) -> list[UnwindRow]:
        """The prologue's CFI, as llc writes it for a frame with a frame pointer: ``push rbp`` (1 byte) saves
        the caller's rbp at CFA-16, ``mov rbp, rsp`` (3) moves nothing, ``sub rsp, size`` grows the frame.
        A realigned frame stops at the push: after ``and rsp`` the CFA is rbp + 16, and the stack walk
        refuses its dynamic stack size before it would unwind it."""
        saved = ((DWARF["rbp"], -16),)
        rows: list[UnwindRow] = [(0, 8, ()), (1, 16, saved)]
        if self.size and not self.realign:
            rows.append((1 + 3 + sub_rsp_bytes(self.size), 16 + self.size, saved))
        return rows

    def describe(self) -> str:
        """A text table of the frame, lowest address first."""
        lines = describe_head(self)
        for v in self.values:
            lines.append(f"  [rsp + {self.slot(v)}] %{v.name}")
        for v in self.values:
            if isinstance(v, I.Phi):
                lines.append(f"  [rsp + {self.shadow(v)}] shadow of %{v.name}")
        for off in self.spill_slots:
            lines.append(f"  [rsp + {off}] deopt spill slot")
        return "\n".join(lines)
