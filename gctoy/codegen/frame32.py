"""The x86-32 stack frame of one function, in the shapes CoreCLR's JIT32 unwinder relies on.

Data layout (the same objects on both targets). A pointer is 32 bits wide in registers,
but every pointer *stored in memory* (an object field, an array element, a struct field, a
global) occupies an 8-byte field whose upper half is zero. So ``size_of`` and
``field_offset`` of frame.py describe x86-32 memory too, ``gc_alloc``'s 8-byte fields and
its ``ptrmask`` mean the same thing for both code generators, and a heap built by x86-32
code can be read by the same collector and verifier.

Values follow the same rule in the frame: every SSA value (argument or result) has an 8-byte
slot holding its bits zero-extended to 64 (a pointer: the 32-bit address, then a zero
dword; an i64: low dword, high dword). A GC pointer slot is therefore also a valid 64-bit
collector slot, and the GC info names its low dword.

The two frame kinds (facts.md §11, the current unwinder's assumptions)::

    EBP frame                                    EBP-less ("ESP") frame
    | incoming stack args | [ebp + 8] ...        | incoming stack args   | [esp0 + stackSize + 4] ...
    | return address      | [ebp + 4]            | return address        | [esp0 + stackSize]
    | saved ebp           | <- ebp               | saved edi             |  (only the registers
    | saved edi           | [ebp - 4]            | saved esi             |   the body uses, in
    | saved esi           |                      | saved ebx             |   this order)
    | saved ebx           |                      +-----------------------+
    +---------------------+                      | locals (frameSize*4)  |
    | locals (frameSize*4)|                      +-----------------------+ <- esp0 (initial ESP)
    +---------------------+ <- esp0              | pushed outgoing args  |  esp = esp0 - pushed
    | pushed outgoing args|
                                                 prolog: push edi; push esi; push ebx;
    prolog: push ebp; mov ebp, esp;                      sub esp, frameSize*4
            push edi; push esi; push ebx;        epilog: add esp, frameSize*4;
            sub esp, frameSize*4                         pop ebx; pop esi; pop edi; ret argSize
    epilog: lea esp, [ebp - 4*saved]  (mov esp, ebp when nothing is saved);
            pop ebx; pop esi; pop edi; pop ebp; ret argSize

Inside the locals every slot has a *local offset* ``o`` from the initial ESP (``esp0``). The
code addresses it as ``[ebp - (frameSize*4 + 4*saved - o)]`` in an EBP frame and as
``[esp + o + pushed]`` in an EBP-less one, where ``pushed`` is the number of outgoing argument
bytes pushed so far at that instruction (the code generator tracks it; so does the GC info).

A phi has a shadow slot as in frame.py: predecessors write it, the phi's block copies it in.

Register homes. A few GC pointer values may live in a callee-saved register (EBX, ESI, EDI)
instead of a slot: they then survive calls without a store and a reload, and the GC info
names the *register* at each call site. Such a value has no slot; its register is saved by
the prolog like any other callee-saved register the body uses, and the frame gets one
*spill dword* per home, where an instruction that needs the register as a temporary (the
i64 lowering uses EBX, ESI and EDI) parks the home's value meanwhile. A spilled copy is
never live at a call, so the GC info never mentions it::

    | saved edi/esi/ebx   |  (the caller's values: the stack walker finds them here)
    +---------------------+
    | value slots ...     |
    | spill dword of esi  |  a stale copy outside one instruction's code
    +---------------------+ <- esp0

An alloca whose type holds GC pointers is stack memory the collector must see: each of its
pointer fields is an *untracked* slot (reported for the whole body), so the code right after
the prolog zeroes those fields before anything can observe them, as the JIT zeroes its
untracked GC locals.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..ir import instructions as I
from ..ir.types import (
    ArrayType,
    NamedStructType,
    StructType,
    TokenType,
    VoidType,
    is_gc_pointer,
)
from ..ir.values import Argument, Function, Value
from .frame import (
    CodegenError,
    align_of,
    field_offset,
    locating,
    refuse_unlowered,
    size_of,
    value_width,
)
from .limits import alloca_elements, check_frame_size, check_gc_alloca_fields

SLOT_SIZE = 8
#: the callee-saved registers in prolog push order (facts.md §11)
CALLEE_SAVED = ("edi", "esi", "ebx")
#: the two register arguments of the JIT32 managed convention
ARG_REGISTERS_32 = ("ecx", "edx")
FRAME_KINDS = ("auto", "ebp", "esp")
#: functions with more IR instructions than this get an EBP frame under ``frame="auto"``
EBP_FRAME_THRESHOLD = 40


def _align_to(n: int, a: int) -> int:
    return (n + a - 1) // a * a


def value_bits(ty) -> int:
    """Bits of a register value on x86-32: integers as declared, pointers 32."""
    return value_width(ty, 32, "x86-32")


def stack_words(ty) -> int:
    """How many DWORDs an argument of this type takes when passed on the stack (i64: two)."""
    return 2 if value_bits(ty) > 32 else 1


@dataclass(frozen=True)
class ArgPlace:
    """Where one argument travels: a register name, or a DWORD position on the stack."""

    register: str | None
    #: for stack arguments: byte offset of the argument's low dword above the return address
    stack_offset: int = 0


def place_arguments(types: list) -> tuple[list[ArgPlace], int]:
    """JIT32 placement: the first two arguments of at most 32 bits in ECX, EDX; the rest (and every
    i64) pushed left to right, so the last one sits just above the return address.

    Returns the places and the bytes of stack arguments (what the callee pops with ``ret n``)::

        f(a: i32, b: i64, c: ptr, d: i32, e: i32)   a -> ecx, c -> edx
        push b.hi; push b.lo; push d; push e; call f
        | b.hi | [ret + 16]
        | b.lo | [ret + 12]   <- b's stack_offset is 12 (offsets count from the return address)
        | d    | [ret + 8]
        | e    | [ret + 4]
        | ret  | <- esp at the callee's first instruction
    """
    places: list[ArgPlace | None] = []
    regs = list(ARG_REGISTERS_32)
    on_stack: list[int] = []
    for i, ty in enumerate(types):
        if stack_words(ty) == 1 and regs:
            places.append(ArgPlace(regs.pop(0)))
        else:
            places.append(None)
            on_stack.append(i)
    total = 4 * sum(stack_words(types[i]) for i in on_stack)
    above = total
    for i in on_stack:
        above -= 4 * stack_words(types[i])
        places[i] = ArgPlace(None, above + 4)
    return [p for p in places if p is not None], total


def gc_field_offsets(ty) -> list[int]:
    """Byte offsets of the GC pointers inside a value of type ``ty`` (each in an 8-byte field)."""
    if is_gc_pointer(ty):
        return [0]
    if isinstance(ty, ArrayType):
        inner = gc_field_offsets(ty.element)
        step = size_of(ty.element)
        return [i * step + o for i in range(ty.count) for o in inner] if inner else []
    if isinstance(ty, (StructType, NamedStructType)):
        return [field_offset(ty, i) + o for i, e in enumerate(ty.elements) for o in gc_field_offsets(e)]
    return []


def has_slot(value: Value) -> bool:
    """Whether a value gets an 8-byte slot: arguments and instruction results that carry data."""
    if not isinstance(value, (Argument, I.Instruction)) or isinstance(value, I.Alloca):
        return False
    ty = value.type
    if isinstance(ty, (VoidType, TokenType)):
        return False
    value_bits(ty)
    return True


def _has_slot_at(value: Value) -> bool:
    with locating(value):
        return has_slot(value)


class Frame32:
    """The fixed layout of one function's locals and its frame kind."""

    def __init__(
        self,
        function: Function,
        ebp_frame: bool,
        saved: tuple[str, ...] = CALLEE_SAVED,
        homes: Mapping[int, str] | None = None,
    ) -> None:
        self.function = function
        self.ebp_frame = ebp_frame
        #: id(value) -> the callee-saved register that holds the value instead of a slot
        self.homes: dict[int, str] = dict(homes or {})
        for reg in self.homes.values():
            if reg not in CALLEE_SAVED:
                raise CodegenError(f"a register home must be one of {', '.join(CALLEE_SAVED)}, not {reg!r}")
        if len(set(self.homes.values())) != len(self.homes):
            raise CodegenError("two values share a register home")
        self.saved = tuple(r for r in CALLEE_SAVED if r in saved or r in self.homes.values())
        self._spills: dict[str, int] = {}
        self._slots: dict[int, int] = {}
        self._shadows: dict[int, int] = {}
        self._allocas: dict[int, int] = {}
        allocas: list[I.Alloca] = []
        values: list[Value] = [a for a in function.args if _has_slot_at(a)]
        phis: list[I.Phi] = []
        homed: list[Value] = [a for a in function.args if id(a) in self.homes]
        for inst in function.instructions():
            refuse_unlowered(inst, "x86-32")
            if isinstance(inst, I.Alloca):
                allocas.append(inst)
            elif _has_slot_at(inst):
                values.append(inst)
                if isinstance(inst, I.Phi):
                    phis.append(inst)
            if id(inst) in self.homes:
                homed.append(inst)
        for v in homed:
            if not has_slot(v) or not is_gc_pointer(v.type):
                raise CodegenError(f"only GC pointer values can have a register home, not {v!r}")
        if len(homed) != len(self.homes):
            raise CodegenError(f"a register home names a value that is not in @{function.name}")
        values = [v for v in values if id(v) not in self.homes]
        cursor = 0
        gc_fields: list[int] = []
        for a in allocas:
            with locating(a):
                n = alloca_elements(a, function.name, size_of(a.allocated_type))
                align = max(align_of(a.allocated_type), a.align or 1)
                if align > 8:
                    raise CodegenError(f"alloca %{a.name} asks for alignment {align}; at most 8 is supported on x86-32")
            cursor = _align_to(cursor, align)
            self._allocas[id(a)] = cursor
            inner = gc_field_offsets(a.allocated_type)
            step = size_of(a.allocated_type)
            if inner:
                check_gc_alloca_fields(len(gc_fields) + n * len(inner), a, function.name)
                gc_fields += [cursor + i * step + o for i in range(n) for o in inner]
            cursor += max(1, n * size_of(a.allocated_type))
        cursor = _align_to(cursor, SLOT_SIZE)
        for v in values:
            self._slots[id(v)] = cursor
            cursor += SLOT_SIZE
        for p in phis:
            self._shadows[id(p)] = cursor
            cursor += SLOT_SIZE
        for reg in CALLEE_SAVED:
            if reg in self.homes.values():
                self._spills[reg] = cursor
                cursor += 4
        #: bytes of locals the prolog allocates (``frameSize`` = this / 4)
        self.size = _align_to(cursor, 4)
        check_frame_size(self.size, function.name)
        self.values = tuple(values)
        #: the values with a register home, in definition order
        self.homed = tuple(homed)
        self.allocas = tuple(allocas)
        #: local offsets of the GC pointer fields inside allocas: untracked slots, zeroed by the prolog
        self.gc_alloca_fields = tuple(gc_fields)
        _, self.arg_size = place_arguments([a.type for a in function.args])

    @property
    def saved_size(self) -> int:
        """Bytes between the locals and the return address: saved registers (and EBP)."""
        return 4 * (len(self.saved) + (1 if self.ebp_frame else 0))

    @property
    def stack_size(self) -> int:
        """The VM's ``stackSize``: locals plus every saved register, EBP included (return address at esp0 + this)."""
        return self.size + self.saved_size

    def local(self, value: Value) -> int:
        """The local offset (from the initial ESP) of a value's 8-byte slot."""
        try:
            return self._slots[id(value)]
        except KeyError:
            where = f" (it lives in {self.homes[id(value)]})" if id(value) in self.homes else ""
            raise CodegenError(f"{value!r} has no stack slot in @{self.function.name}{where}") from None

    def home(self, value: Value) -> str | None:
        """The callee-saved register holding a value instead of a slot, or None."""
        return self.homes.get(id(value))

    def spill(self, reg: str) -> int:
        """The local offset of the dword that parks a home register while an instruction borrows it."""
        return self._spills[reg]

    def shadow(self, phi: I.Phi) -> int:
        """The local offset of the slot predecessors write a phi's incoming value to."""
        return self._shadows[id(phi)]

    def alloca(self, alloca: I.Alloca) -> int:
        """The local offset of an alloca's object."""
        return self._allocas[id(alloca)]

    def ebp_offset(self, local: int) -> int:
        """The EBP-relative offset of a local offset (negative: below the saved registers)."""
        return local - self.size - 4 * len(self.saved)

    def address(self, local: int, pushed: int) -> str:
        """The memory operand of a local offset with ``pushed`` outgoing bytes on the stack."""
        if self.ebp_frame:
            off = self.ebp_offset(local)
            return f"[ebp - {-off}]" if off < 0 else f"[ebp + {off}]"
        off = local + pushed
        return f"[esp + {off}]" if off else "[esp]"

    def incoming(self, stack_offset: int, pushed: int) -> str:
        """The memory operand of an incoming stack argument (``stack_offset`` above the return address)."""
        if self.ebp_frame:
            return f"[ebp + {4 + stack_offset}]"
        return f"[esp + {self.stack_size + stack_offset + pushed}]"

    def describe(self) -> str:
        """A text table of the frame, lowest address first."""
        kind = "EBP" if self.ebp_frame else "EBP-less"
        lines = [
            f"{kind} frame of @{self.function.name}: locals {self.size} bytes, saved "
            f"{', '.join(self.saved) or 'nothing'}, stack size {self.stack_size}, args {self.arg_size} bytes"
        ]
        for a in self.allocas:
            lines.append(f"  {self.address(self.alloca(a), 0)} alloca %{a.name}")
        for v in self.values:
            lines.append(f"  {self.address(self.local(v), 0)} %{v.name}")
        for v in self.homed:
            lines.append(
                f"  {self.homes[id(v)]} %{v.name}  (spill dword {self.address(self.spill(self.homes[id(v)]), 0)})"
            )
        for v in self.values:
            if isinstance(v, I.Phi):
                lines.append(f"  {self.address(self.shadow(v), 0)} shadow of %{v.name}")
        return "\n".join(lines)


#: the registers that may home GC pointer values, in the order they are handed out
GC_HOME_REGISTERS = ("esi", "edi", "ebx")
#: homes by default: ESI and EDI. EBX is also the lowering's fourth scratch register (the high half of
#: 64-bit arithmetic), so a value homed there is parked in the frame and reloaded around each such
#: instruction: a third home costs instructions instead of saving them.
DEFAULT_HOMES = 2
#: the divisions lowered to calls of runtime helpers (call sites like any other call)
HELPER_OPCODES = ("sdiv", "udiv", "srem", "urem")


def is_call_site(inst: I.Instruction) -> bool:
    """Whether the code of an instruction calls something: a call, or a division's runtime helper."""
    return isinstance(inst, I.CallBase) or (isinstance(inst, I.BinaryOp) and inst.opcode in HELPER_OPCODES)


def register_homes(fn: Function, limit: int = len(GC_HOME_REGISTERS)) -> dict[int, str]:
    """id(value) -> home register for the (at most ``limit``) GC pointer values live across the most
    call sites of ``fn``; ties go to the value defined first. Values live across no call stay in slots."""
    from ..ir.analysis import Liveness

    if not 0 <= limit <= len(GC_HOME_REGISTERS):
        raise CodegenError(f"at most {len(GC_HOME_REGISTERS)} GC pointer values can have a register home, not {limit}")
    if limit == 0:
        return {}
    order = {id(v): i for i, v in enumerate([*fn.args, *fn.instructions()])}
    liveness = Liveness(fn, gc_only=True)
    counts: dict[int, int] = {}
    for inst in fn.instructions():
        if is_call_site(inst):
            for v in liveness.live_across(inst):
                if id(v) in order and has_slot(v) and is_gc_pointer(v.type):
                    counts[id(v)] = counts.get(id(v), 0) + 1
    ranked = sorted(counts, key=lambda key: (-counts[key], order[key]))[:limit]
    return {key: reg for key, reg in zip(ranked, GC_HOME_REGISTERS)}


def home_count(gc_registers: int | bool) -> int:
    """How many register homes a ``gc_registers`` option asks for (True: all three)."""
    if isinstance(gc_registers, bool):
        return len(GC_HOME_REGISTERS) if gc_registers else 0
    if not isinstance(gc_registers, int) or not 0 <= gc_registers <= len(GC_HOME_REGISTERS):
        raise CodegenError(f"gc_registers must be 0 to {len(GC_HOME_REGISTERS)} (or a bool), not {gc_registers!r}")
    return gc_registers
