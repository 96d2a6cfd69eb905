"""Lower abstract-machine IR (before RS4GC) to x86-32 with CoreCLR's JIT32 conventions.

CoreCLR's x86 JIT has no statepoints: GC pointers stay ordinary values, and the GC info
says, for each call site, which frame slots (and registers) hold live GC pointers there. So
this generator takes the IR *as the front end wrote it* (plain calls, GC pointers in
addrspace(1)) and records, for every call, the label of its return address and the stack
depth; gctoy.coreclr.emit_gcinfo turns that plus the IR's liveness into a ``MethodGCInfo``.

Like x86_64.py it does not optimise: every SSA value has its own 8-byte slot (frame32.py),
and each instruction loads its operands into scratch registers, computes, and stores back.
A value is held as a register *pair* ``hi:lo`` zero-extended to 64 bits: operand A in
``edx:eax``, operand B in ``ebx:ecx``, ``esi``/``edi`` as temporaries. i64 arithmetic is done on
the pairs (add/adc, sub/sbb, a 64-bit multiply from three 32-bit ones, double shifts with
the count >= 32 fixed up, compares on the high then the low words); narrower values are
computed the same way and re-normalised to their width; sdiv/udiv/srem/urem call the
runtime helpers ``__gctoy_i64_sdiv`` and friends (the JIT calls CORINFO_HELP_LDIV & co. too).

The convention (JIT32, "managed" x86): the first two arguments of at most 32 bits go in
ECX and EDX, the others (every i64 among them) are pushed left to right, and the callee
pops them (``ret n``). Results come back in EAX, i64 in EDX:EAX. EBX, ESI, EDI, EBP are
callee-saved. (CoreCLR's managed convention pushes left to right, the reverse of cdecl; so
does ``Machine``'s ``jit32`` convention.)

Register homes (``gc_registers``): the GC pointer values live across the most calls may be kept
in ESI, EDI and EBX instead of slots (`register_homes`). Every read and write of such a value
uses its register; an instruction whose code needs that register as a temporary parks it in
the frame's spill dword meanwhile (`_Lowering32.borrow`). A home survives calls because the
callee saves what it uses, so at a call site the GC info names the register, and the stack
walker finds it where the callees' prologs saved it.

The instruction selection shared with x86-64 (operands, loads and stores, getelementptr, branches,
casts, call arguments) is `lowering_core.LoweringCore`'s, over the description `X86_32_TARGET`;
x86_32_arith.py has the register-pair arithmetic.

Every method has one epilog, at its end: a ``ret`` jumps there. That is the shape the GC
info header describes with ``epilogCount = 1, epilogAtEnd = 1``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..emu import Image
from ..ir import instructions as I
from ..ir.module import Module
from ..ir.types import IntType, PointerType, Type, is_gc_pointer
from ..ir.values import Argument, ConstantInt, Function, Value
from .addresses import signed, unsigned
from .data import data_text
from .codegen_error import located, locating
from .frame import CodegenError
from .frame32 import (
    ARG_REGISTERS_32,
    CALLEE_SAVED,
    DEFAULT_HOMES,
    EBP_FRAME_THRESHOLD,
    FRAME_KINDS,
    Frame32,
    home_count,
    place_arguments,
    register_homes,
    stack_words,
    value_bits,
)
from .lowering_core import Target, words
from .records import strip_casts
from .symbols import mangle, with_ir_names
from .x86_32_arith import A, B, DIV_HELPERS, Arithmetic32

_LOW = {
    "eax": {4: "eax", 2: "ax", 1: "al"},
    "ecx": {4: "ecx", 2: "cx", 1: "cl"},
    "edx": {4: "edx", 2: "dx", 1: "dl"},
    "ebx": {4: "ebx", 2: "bx", 1: "bl"},
}


@dataclass(frozen=True)
class CallSite32:
    """One call in the code: the label of its return address, the IR call, the stack depth there."""

    label: str
    #: the IR call, or the division instruction a runtime helper computes
    call: I.Instruction
    #: bytes of outgoing arguments still pushed at the return address (after the callee popped its own)
    pushed: int
    #: DWORDs the callee popped
    popped: int
    #: the runtime helper called for a division (``call`` is the division instruction then)
    helper: str | None = None


@dataclass(frozen=True)
class Push32:
    """One ``push`` of an outgoing argument DWORD: the label just after it."""

    label: str
    #: whether the DWORD pushed is a GC pointer (the low dword of one)
    gc_pointer: bool


@dataclass(frozen=True)
class CompiledFunction32:
    """One lowered function: address, frame, and the labels the GC info needs."""

    name: str
    address: int
    frame: Frame32
    calls: tuple[CallSite32, ...]
    pushes: tuple[Push32, ...]
    #: labels in the text: the end of the prolog, the start of the epilog, the end of the method
    prolog_end: str
    epilog: str
    end: str
    #: fully interruptible methods: (label, IR instruction) at the start of each instruction's code,
    #: the points where every value sits in its slot and no register holds a GC pointer
    safe_points: tuple[tuple[str, I.Instruction], ...] = ()

    @property
    def fully_interruptible(self) -> bool:
        """Whether the method may be stopped between any two of its IR instructions."""
        return bool(self.safe_points)


@dataclass(frozen=True)
class CompiledModule32:
    """Assembly text, data text, the lowered functions and the assembled x86-32 image."""

    asm_text: str
    data_text: str
    functions: tuple[CompiledFunction32, ...]
    natives: tuple[str, ...]
    image: Image
    module: Module | None = field(default=None, compare=False)
    #: for each line of ``asm_text``, the (line, column) in the IR text of the instruction it was
    #: lowered from; None for labels, prologs, epilogs and code of instructions with no known place
    line_sources: tuple[tuple[int, int] | None, ...] = field(default=(), compare=False)

    def function(self, name: str) -> CompiledFunction32:
        """The lowered function of that name."""
        for f in self.functions:
            if f.name == name:
                return f
        raise CodegenError(f"no compiled function @{name}")


def _call_types(call: I.CallBase) -> list[Type]:
    return [a.type for a in call.args]


#: x86-32 as the lowering core sees it: operand A = EDX:EAX, B = EBX:ECX, JIT32's managed convention
X86_32_TARGET = Target[tuple[str, ...]](
    name="x86-32",
    word=4,
    sub_registers=_LOW,
    first=A,
    second=B,
    condition="esi",
    call_register="eax",
    spare="ecx",
    symbol_move="mov",
    argument_registers=ARG_REGISTERS_32,
    callee_saved=CALLEE_SAVED,
    value_bits=value_bits,
    intrinsic_hint=" (it takes abstract-machine IR: plain calls, no statepoints)",
)


class _Lowering32(Arithmetic32):
    """Emits the assembly of one function (one frame kind, one set of saved registers)."""

    target = X86_32_TARGET

    def __init__(
        self,
        fn: Function,
        ebp_frame: bool,
        saved: tuple[str, ...],
        interruptible: bool = False,
        homes: dict[int, str] | None = None,
    ) -> None:
        self.fn = fn
        self.interruptible = interruptible
        self.safe_points: list[tuple[str, I.Instruction]] = []
        self.name = fn.name
        #: the function's assembler label; its internal labels are ``<label>.bb0``, ``<label>.epilog`` ...
        self.label = mangle(fn.name)
        self.frame = Frame32(fn, ebp_frame, saved, homes)
        #: home registers an instruction's code is using as temporaries (parked in their spill dwords)
        self.borrowed: list[str] = []
        self.lines: list[str] = []
        self.spans: list[tuple[int, int, I.Instruction]] = []
        #: the body's lines (between the prolog and the epilog), once lowered
        self.body: list[str] = []
        self.pushed = 0
        self.calls: list[CallSite32] = []
        self.pushes: list[Push32] = []
        self.callees: list[str] = []
        self.block_labels = {id(b): f"{self.label}.bb{i}" for i, b in enumerate(fn.blocks)}
        self._n = 0

    # ----------------------------------------------------------------- operands

    def frame_address(self, offset: int) -> str:
        """EBP-relative, or ESP-relative past the outgoing arguments pushed so far (frame32.py)."""
        return self.frame.address(offset, self.pushed)

    def constant_bits(self, v: Value) -> int | None:
        """The bits of an integer constant."""
        return unsigned(v.value, value_bits(v.type)) if isinstance(v, ConstantInt) else None

    def add_offset(self, reg: str, offset: int) -> None:
        """``add reg, offset`` wrapped to 32 bits, for every offset but 0 (one that wraps to 0 gives ``add reg, 0``)."""
        if offset:
            self.emit(f"add {reg}, {signed(offset, 32)}")

    def load_value(self, dest: tuple[str, ...], v: Value) -> None:
        """From the value's register home (a pointer: no high dword), or its slot's dwords."""
        regs = words(dest)
        home = self.frame.home(v)
        if home is None:
            for half, reg in enumerate(regs):
                self.emit(f"mov {reg}, {self.slot(self.frame.local(v), half)}")
            return
        if home != regs[0]:
            self.emit(f"mov {regs[0]}, {home}")
        self.zero_upper(dest)

    def load_word(self, reg: str, v: Value) -> None:
        """Only the low dword of a value (addresses, conditions, shift counts)."""
        v = strip_casts(v)
        one_word = isinstance(v, (Argument, I.Instruction, ConstantInt)) and not isinstance(v, I.Alloca)
        if one_word or "edi" in self.frame.homes.values():
            self.load((reg,), v)
        else:
            self.load((reg, "edi"), v)  # EDI, a temporary then, takes the (zero) high dword

    def store(self, v: Value, pair: tuple[str, ...] = A, local: int | None = None) -> None:
        """A pair into the value's register home or slot (``local``: into that slot instead)."""
        self.give_back()
        home = self.frame.home(v) if local is None else None
        if home is not None:
            self.emit(f"mov {home}, {pair[0]}")  # a pointer: the high dword is zero
            return
        local = self.frame.local(v) if local is None else local
        self.emit(f"mov {self.slot(local)}, {pair[0]}")
        self.emit(f"mov {self.slot(local, 1)}, {pair[1]}")

    def normalize(self, bits: int, pair: tuple[str, ...] = A) -> None:
        """Zero-extend the low ``bits`` of a pair to 64 (the slot invariant)."""
        lo, hi = pair
        if bits >= 64:
            return
        if bits > 32:
            self.emit(f"and {hi}, {(1 << (bits - 32)) - 1}")
            return
        if bits < 32:
            self.emit(f"and {lo}, {(1 << bits) - 1}")
        self.emit(f"xor {hi}, {hi}")

    def sign_extend(self, bits: int, pair: tuple[str, ...] = A) -> None:
        """Sign-extend the low ``bits`` of a pair to 64."""
        lo, hi = pair
        if bits >= 64:
            return
        if bits > 32:
            self.emit(f"shl {hi}, {64 - bits}")
            self.emit(f"sar {hi}, {64 - bits}")
            return
        if bits < 32:
            self.emit(f"shl {lo}, {32 - bits}")
            self.emit(f"sar {lo}, {32 - bits}")
        self.emit(f"mov {hi}, {lo}")
        self.emit(f"sar {hi}, 31")

    def extend_index(self, bits: int, reg: str) -> None:
        """Addresses are 32 bits: an index narrower than that is sign-extended to it, a wider one cut."""
        if bits < 32:
            self.emit(f"shl {reg}, {32 - bits}")
            self.emit(f"sar {reg}, {32 - bits}")

    # ----------------------------------------------------------------- function

    def lower(self) -> list[str]:
        """Arguments to their slots or homes, every block, then the prolog and epilog around them."""
        fn, frame = self.fn, self.frame
        self.define_label(f"{self.label}.prolog_end")
        for local in frame.gc_alloca_fields:
            self.emit(f"mov {self.slot(local)}, 0")
            self.emit(f"mov {self.slot(local, 1)}, 0")
        places, _ = place_arguments([a.type for a in fn.args])
        for arg, place in zip(fn.args, places):
            home = frame.home(arg)
            if home is not None:
                source = place.register or f"dword ptr {frame.incoming(place.stack_offset, self.pushed)}"
                self.emit(f"mov {home}, {source}")
                continue
            local = frame.local(arg)
            if place.register is not None:
                self.emit(f"mov {self.slot(local)}, {place.register}")
                self.emit(f"mov {self.slot(local, 1)}, 0")
            else:
                for half in range(stack_words(arg.type)):
                    self.emit(f"mov eax, dword ptr {frame.incoming(place.stack_offset + 4 * half, self.pushed)}")
                    self.emit(f"mov {self.slot(local, half)}, eax")
                if stack_words(arg.type) == 1:
                    self.emit(f"mov {self.slot(local, 1)}, 0")
        self.lower_blocks()
        self.define_label(f"{self.label}.epilog")
        self.body = self.lines
        prolog = self.prolog()
        self.spans = [(start + len(prolog), end + len(prolog), inst) for start, end, inst in self.spans]
        self.lines = prolog + self.body + self.epilog() + [f"{self.label}.end:"]
        return self.lines

    def prolog(self) -> list[str]:
        frame = self.frame
        out = [f"{self.label}:"]
        if frame.ebp_frame:
            out += ["    push ebp", "    mov ebp, esp"]
        out += [f"    push {r}" for r in frame.saved]
        if frame.size:
            out.append(f"    sub esp, {frame.size}")
        return out

    def epilog(self) -> list[str]:
        frame = self.frame
        out = []
        if frame.ebp_frame:
            if frame.saved:
                out.append(f"    lea esp, [ebp - {4 * len(frame.saved)}]")
            else:
                out.append("    mov esp, ebp")
        elif frame.size:
            out.append(f"    add esp, {frame.size}")
        out += [f"    pop {r}" for r in reversed(frame.saved)]
        if frame.ebp_frame:
            out.append("    pop ebp")
        out.append(f"    ret {frame.arg_size}" if frame.arg_size else "    ret")
        return out

    def phi_entry(self, block) -> None:
        """Copy each phi's shadow slot into the phi's slot or home."""
        for phi in block.phis():
            self.emit(f"mov eax, {self.slot(self.frame.shadow(phi))}")
            self.emit(f"mov edx, {self.slot(self.frame.shadow(phi), 1)}")
            self.store(phi)

    def copy_phi(self, phi: I.Phi, value: Value) -> None:
        """The incoming value into the phi's shadow slot."""
        self.load(A, value)
        self.store(phi, A, self.frame.shadow(phi))

    # ----------------------------------------------------------------- instructions

    def before_instruction(self, inst: I.Instruction) -> None:
        """A safe point label (fully interruptible code), then the home registers the code borrows parked."""
        if self.interruptible and not inst.is_terminator:
            label = self.fresh("gc")
            self.define_label(label)
            self.safe_points.append((label, inst))
        self.borrow(self.temporaries(inst))

    def after_instruction(self, inst: I.Instruction) -> None:
        """The borrowed home registers back."""
        self.give_back()

    def temporaries(self, inst: I.Instruction) -> set[str]:
        """The callee-saved registers the code of ``inst`` uses as temporaries (EBX: operand B's high
        dword; ESI: an address or a condition; ESI and EDI: the partial products of a multiply)."""
        if isinstance(inst, I.BinaryOp) and inst.opcode not in DIV_HELPERS:
            return {"ebx", "esi", "edi"} if inst.opcode == "mul" else {"ebx"}
        if isinstance(inst, I.ICmp):
            return {"ebx"}
        if isinstance(inst, I.Select):
            return {"ebx", "esi"}
        if isinstance(inst, (I.Load, I.Store)) and self.frame.home(strip_casts(inst.pointer)) is None:
            return {"esi"}
        return set()

    def borrow(self, registers: set[str]) -> None:
        """Park the home registers among ``registers`` in their spill dwords while an instruction uses them.

        Operands are read before the code writes a temporary, so a home may also be an operand;
        `store` gives the registers back before it writes the result (which may go to a home).
        """
        for reg in self.target.callee_saved:
            if reg in registers and reg in self.frame.homes.values():
                self.emit(f"mov {self.slot(self.frame.spill(reg))}, {reg}")
                self.borrowed.append(reg)

    def give_back(self) -> None:
        """Reload the borrowed home registers from their spill dwords."""
        for reg in self.borrowed:
            self.emit(f"mov {reg}, {self.slot(self.frame.spill(reg))}")
        self.borrowed = []

    def address_register(self, pointer: Value) -> str:
        """The register an access goes through: the pointer's home, or ESI loaded with it."""
        home = self.frame.home(strip_casts(pointer))
        if home is not None:
            return home
        self.load_word("esi", pointer)
        return "esi"

    def push(self, operand: str, gc_pointer: bool) -> None:
        self.emit(f"push {operand}")
        self.pushed += 4
        label = self.fresh("push")
        self.define_label(label)
        self.pushes.append(Push32(label, gc_pointer))

    def after_call(self, call: I.Instruction, depth: int, popped: int, helper: str | None = None) -> None:
        label = self.fresh("ret")
        self.define_label(label)
        self.pushed = depth
        self.calls.append(CallSite32(label, call, depth, popped, helper))

    def jump_if_equal(self, value: int, target: str) -> None:
        """Both dwords compared: the low one, then the high one."""
        skip = self.fresh("case")
        self.emit(f"cmp eax, {value & 0xFFFFFFFF}")
        self.emit(f"jne {skip}")
        self.emit(f"cmp edx, {value >> 32}")
        self.emit(f"je {target}")
        self.define_label(skip)

    def lower_Ret(self, inst: I.Ret) -> None:
        if inst.value is not None:
            self.load(A, inst.value)
        self.emit(f"jmp {self.label}.epilog")

    # ----------------------------------------------------------------- calls

    def pass_on_stack(self, arg: Value, where: int) -> None:
        """Pushed: an i64 as two dwords (high first), anything else as one."""
        if stack_words(arg.type) == 2:
            self.load(A, arg)
            self.push("edx", False)
            self.push("eax", False)
        else:
            self.load_word("eax", arg)
            self.push("eax", is_gc_pointer(arg.type))

    def lower_Call(self, inst: I.Call) -> None:
        name = inst.callee_name
        if name is not None and name.startswith("llvm."):
            raise self.refuse_intrinsic(name)
        places, size = place_arguments(_call_types(inst))
        start = self.pushed
        self.pass_arguments(
            [(p.register if p.register is not None else p.stack_offset, arg) for p, arg in zip(places, inst.args)]
        )
        self.emit(self.call_instruction(inst.callee))
        self.after_call(inst, start, size // 4)
        if isinstance(inst.type, (IntType, PointerType)):
            self.result(inst)  # EAX, or EDX:EAX for an i64; normalising clears EDX otherwise


def _saved_registers_used(lines: list[str]) -> tuple[str, ...]:
    """The callee-saved registers a body names (it only ever uses their full 32-bit names)."""
    text = "\n".join(lines)
    return tuple(r for r in CALLEE_SAVED if re.search(rf"\b{r}\b", text))


def _ebp_frame(fn: Function, frame: str) -> bool:
    if frame not in FRAME_KINDS:
        raise CodegenError(f"unknown frame kind {frame!r}; use one of {', '.join(FRAME_KINDS)}")
    if frame != "auto":
        return frame == "ebp"
    return sum(1 for _ in fn.instructions()) > EBP_FRAME_THRESHOLD


INTERRUPTIBLE_MODES = ("auto", "never", "always")


def wants_full_interruptibility(fn: Function) -> bool:
    """The JIT's rule: a method with a loop and no call in it (no GC safe point on the loop) is made
    fully interruptible. Divisions count as calls here (they call a runtime helper)."""
    from ..ir.analysis import backedges

    for inst in fn.instructions():
        if isinstance(inst, I.CallBase) or (isinstance(inst, I.BinaryOp) and inst.opcode in DIV_HELPERS):
            return False
    return bool(backedges(fn))


def lower_function(
    fn: Function, frame: str = "auto", interruptible: str = "auto", gc_registers: int = 0
) -> _Lowering32:
    """Lower one function: a first pass finds the callee-saved registers it uses, the second is final.

    ``gc_registers``: how many GC pointer values (0 to 3) may live in a callee-saved register across
    calls (`register_homes`); fully interruptible methods keep every value in its slot.
    """
    if interruptible not in INTERRUPTIBLE_MODES:
        raise CodegenError(f"unknown interruptibility {interruptible!r}; use one of {', '.join(INTERRUPTIBLE_MODES)}")
    ebp = _ebp_frame(fn, frame)
    full = interruptible == "always" or (interruptible == "auto" and wants_full_interruptibility(fn))
    homes = register_homes(fn, home_count(gc_registers)) if not full else {}
    first = _Lowering32(fn, ebp, CALLEE_SAVED, full, homes)
    first.lower()
    saved = _saved_registers_used(first.body)
    if saved == CALLEE_SAVED:
        return first
    final = _Lowering32(fn, ebp, saved, full, homes)
    final.lower()
    return final


def compile_module32(
    module: Module, frame: str = "auto", interruptible: str = "auto", gc_registers: int | bool = DEFAULT_HOMES
) -> CompiledModule32:
    """Lower every defined function to x86-32 (JIT32 conventions) and assemble the image.

    ``frame``: ``auto`` (EBP frames for large methods), ``ebp`` or ``esp``. ``interruptible``:
    ``auto`` makes methods with a call-free loop fully interruptible (as the JIT does), ``never``
    keeps every method partially interruptible, ``always`` makes every method fully interruptible
    (to compare the encodings on the same code). ``gc_registers``: up to that many GC pointer values
    per partially interruptible method live in ESI/EDI/EBX across calls (True: three; the default,
    ``DEFAULT_HOMES``, is two), see `register_homes`; the GC info then names those registers at the call sites.
    """
    for g in module.globals:
        if g.thread_local is not None:
            raise located(
                CodegenError(f"thread-local global @{g.name} is not supported by the x86-32 code generator"), g
            )
    helpers = set(DIV_HELPERS.values())
    for fn in module.functions:
        if fn.name in helpers:
            raise located(CodegenError(f"@{fn.name} is the name of a runtime helper of the x86-32 code generator"), fn)
    lowered: list[_Lowering32] = []
    text: list[str] = []
    sources: list[tuple[int, int] | None] = []
    for fn in module.functions:
        if fn.is_declaration:
            continue
        with locating(fn):  # what names no instruction, argument or global is about the function
            lowering = lower_function(fn, frame, interruptible, gc_registers)
        text += lowering.lines
        sources += lowering.line_sources()
        lowered.append(lowering)
    defined = {lowering.name for lowering in lowered}
    natives: list[str] = []
    for lowering in lowered:
        for name in lowering.callees:
            if name not in defined and name not in natives:
                natives.append(name)
    asm_text = "\n".join(text) + "\n"
    text_of_data = data_text(module)
    labels = tuple(n if n in helpers else mangle(n) for n in natives)
    image = Image.from_assembly(asm_text, text_of_data, arch="x86_32", natives=labels)
    image = with_ir_names(image, tuple(natives), module)
    functions = tuple(
        CompiledFunction32(
            lw.name,
            image.address_of(lw.name),
            lw.frame,
            tuple(lw.calls),
            tuple(lw.pushes),
            f"{lw.label}.prolog_end",
            f"{lw.label}.epilog",
            f"{lw.label}.end",
            tuple(lw.safe_points),
        )
        for lw in lowered
    )
    return CompiledModule32(asm_text, text_of_data, functions, tuple(natives), image, module, tuple(sources))
