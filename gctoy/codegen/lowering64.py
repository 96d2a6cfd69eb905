"""The instruction selection of the x86-64 lowering: one function's IR to assembly lines (see x86_64.py).

Each instruction loads its operands from their stack slots into scratch registers (rax, rcx,
rdx), computes, and stores the result back into its own slot (see frame.py for the layout).
Integers narrower than 64 bits are kept *zero-extended* in their slots; an operation that needs
the signed reading (sdiv, ashr, signed compares, sext) sign-extends its operands first.

The selection both x86 targets share (operands, loads and stores, getelementptr, branches, casts,
call arguments) is `lowering_core.LoweringCore`'s, over the description `X86_64_TARGET`; this
module adds what is x86-64's own: its idioms for constants and extensions, statepoints and their
records, SysV calls with floating-point arguments, and (through the mixins) vectors and aggregates.
"""

from __future__ import annotations

from ..emu import nops
from ..ir import instructions as I
from ..ir.intrinsics import is_relocate_name, is_result_name, is_statepoint_name
from ..ir.statepoint import GCRelocate, Statepoint, source_location, token_statepoint
from ..ir.types import Type
from ..ir.values import ConstantFloat, Function, GlobalVariable, Value
from .addresses import signed, unsigned, width
from .data import defined_global
from .floats import FloatLowering, argument_registers, float_bits, is_float
from .frame import ARG_REGISTERS, CodegenError, Frame, size_of, spilled_deopt_values
from .limits import check_patch_bytes
from .lowering_core import PTR_WORD, LoweringCore, Target, fits_imm32
from .patchpoints import StackMapIntrinsics, is_stackmap_intrinsic
from .records import PendingRecord, StackMapRecords, has_value, int_constant
from .wide import WideLowering
from .symbols import mangle

#: intrinsics that make no code (hints to the optimiser)
_NO_CODE_INTRINSICS = frozenset({"llvm.assume"})
SETCC = {
    "eq": "e",
    "ne": "ne",
    "ugt": "a",
    "uge": "ae",
    "ult": "b",
    "ule": "be",
    "sgt": "g",
    "sge": "ge",
    "slt": "l",
    "sle": "le",
}
SIMPLE_OPS = {"add": "add", "sub": "sub", "and": "and", "or": "or", "xor": "xor", "mul": "imul"}
SHIFTS = {"shl": "shl", "lshr": "shr", "ashr": "sar"}
# Sub-registers of the general-purpose registers by width in bytes.
SUBREGS = {
    **{f"r{x}x": {8: f"r{x}x", 4: f"e{x}x", 2: f"{x}x", 1: f"{x}l"} for x in "abcd"},
    **{f"r{x}": {8: f"r{x}", 4: f"e{x}", 2: x, 1: f"{x}l"} for x in ("si", "di", "bp", "sp")},
    **{f"r{n}": {8: f"r{n}", 4: f"r{n}d", 2: f"r{n}w", 1: f"r{n}b"} for n in range(8, 16)},
}


#: x86-64 as the lowering core sees it: operands A = rax, B = rcx, the SysV argument registers
X86_64_TARGET = Target[str](
    name="x86-64",
    word=8,
    sub_registers=SUBREGS,
    first="rax",
    second="rcx",
    condition="rdx",
    call_register="r11",
    spare="r10",
    symbol_move="movabs",
    argument_registers=ARG_REGISTERS,
    callee_saved=("rbx", "rbp", "r12", "r13", "r14", "r15"),
    value_bits=width,
)


class FunctionLowering(StackMapRecords, StackMapIntrinsics, WideLowering, FloatLowering, LoweringCore[str]):
    """Emits the assembly of one function and collects its pending stack map records."""

    target = X86_64_TARGET
    frame: Frame

    def __init__(self, fn: Function, constants: list[int], tls: dict[str, int] | None = None) -> None:
        self.fn = fn
        self.tls = tls or {}
        self.name = fn.name
        #: the function's assembler label; its internal labels are ``<label>.bb0``, ``<label>.sp0`` ...
        self.label = mangle(fn.name)
        self.frame = self.make_frame()
        self.constants = constants
        self.lines: list[str] = []
        self.spans: list[tuple[int, int, I.Instruction]] = []
        self.records: list[PendingRecord] = []
        self.callees: list[str] = []
        self.block_labels = {id(b): f"{self.label}.bb{i}" for i, b in enumerate(fn.blocks)}
        self._statepoint_results: dict[int, I.Call] = {}
        self.gc_roots: list[tuple[int, Value]] = []
        self.patch_bytes = 0

    # ----------------------------------------------------------------- helpers

    def make_frame(self) -> Frame:
        """The function's frame: a slot for every value."""
        return Frame(self.fn)

    def frame_address(self, offset: int) -> str:
        """``[rsp + offset]``: the frame is addressed from the stack pointer."""
        return f"[rsp + {offset}]"

    def mem(self, offset: int) -> str:
        """The 8-byte slot at a frame offset."""
        return self.slot(offset)

    def constant_bits(self, v: Value) -> int | None:
        """The bits of an integer (or ``inttoptr`` of one) or floating-point constant."""
        number = int_constant(v)
        if number is not None:
            return unsigned(number, width(v.type))
        if isinstance(v, ConstantFloat):
            return float_bits(v)
        return None

    def load_zero(self, dest: str) -> None:
        """``mov reg, 0``."""
        self.emit(f"mov {dest}, 0")

    def load_value(self, dest: str, v: Value) -> None:
        """A value from its slot."""
        self.emit(f"mov {dest}, {self.mem(self.frame.slot(v))}")

    def load_word(self, reg: str, v: Value) -> None:
        """A value into a 64-bit register (the word is the whole value)."""
        self.load(reg, v)

    def load_imm(self, reg: str, value: int) -> None:
        """A constant: ``mov`` when a sign-extended 32-bit immediate holds it, else ``movabs``."""
        s = signed(value, 64)
        if fits_imm32(s):
            self.emit(f"mov {reg}, {s}")
        else:
            self.emit(f"movabs {reg}, {unsigned(value, 64)}")

    def store(self, v: Value, reg: str = "rax") -> None:
        """A register into the value's slot."""
        self.emit(f"mov {self.mem(self.frame.slot(v))}, {reg}")

    def normalize(self, bits: int, reg: str = "rax") -> None:
        """Zero-extend the low ``bits`` of a register to 64 bits (the slot invariant)."""
        sub = SUBREGS[reg]
        if bits >= 64:
            return
        if bits == 32:
            self.emit(f"mov {sub[4]}, {sub[4]}")
        elif bits == 16:
            self.emit(f"movzx {sub[4]}, {sub[2]}")
        elif bits == 8:
            self.emit(f"movzx {sub[4]}, {sub[1]}")
        else:
            self.emit(f"and {reg}, {(1 << bits) - 1}")

    def sign_extend(self, bits: int, reg: str = "rax") -> None:
        """Sign-extend the low ``bits`` of a register to 64 bits."""
        sub = SUBREGS[reg]
        if bits >= 64:
            return
        if bits == 32:
            self.emit(f"movsxd {reg}, {sub[4]}")
        elif bits == 16:
            self.emit(f"movsx {reg}, {sub[2]}")
        elif bits == 8:
            self.emit(f"movsx {reg}, {sub[1]}")
        else:
            self.emit(f"shl {reg}, {64 - bits}")
            self.emit(f"sar {reg}, {64 - bits}")

    def extend_index(self, bits: int, reg: str) -> None:
        """An index is sign-extended to 64 bits."""
        self.sign_extend(bits, reg)

    def address_register(self, pointer: Value) -> str:
        """rcx, loaded with the pointer."""
        self.load("rcx", pointer)
        return "rcx"

    #: the name the register lowering reads
    _access_size = LoweringCore.access_size

    # ----------------------------------------------------------------- function

    def lower(self) -> list[str]:
        """The prologue, the incoming arguments to their slots, then every block."""
        frame = self.frame
        self.define_label(self.label)
        self.emit("push rbp")
        self.emit("mov rbp, rsp")
        if frame.realign:
            self.emit(f"and rsp, {-frame.realign}")
        if frame.size:
            self.emit(f"sub rsp, {frame.size}")
        self.store_arguments()
        self.lower_blocks()
        return self.lines

    def copy_phi(self, phi: I.Phi, value: Value) -> None:
        """The incoming value into the phi's shadow slot."""
        self.move_value(self.frame.shadow(phi), value)

    # ----------------------------------------------------------------- instructions

    def method_for(self, inst: I.Instruction):
        """Vectors and aggregates, floating point and stack map intrinsics first, then the scalar lowering."""
        return (
            self.wide_method(inst) or self.float_method(inst) or self.call_site_method(inst) or super().method_for(inst)
        )

    def lower_BinaryOp(self, inst: I.BinaryOp) -> None:
        bits = width(inst.type)
        op = inst.opcode
        self.load("rax", inst.ops[0])
        self.load("rcx", inst.ops[1])
        if op in SIMPLE_OPS:
            self.emit(f"{SIMPLE_OPS[op]} rax, rcx")
        elif op in SHIFTS:
            if op == "ashr":
                self.sign_extend(bits, "rax")
            self.emit(f"{SHIFTS[op]} rax, cl")
        elif op in ("sdiv", "srem"):
            self.sign_extend(bits, "rax")
            self.sign_extend(bits, "rcx")
            self.emit("cqo")
            self.emit("idiv rcx")
        elif op in ("udiv", "urem"):
            self.emit("xor edx, edx")
            self.emit("div rcx")
        else:
            raise self.unsupported(f"'{op}'")
        self.result(inst, "rdx" if op in ("srem", "urem") else "rax")

    def set_condition(self, predicate: str) -> None:
        """``cmp rax, rcx`` and the ``setcc`` of the predicate."""
        self.emit("cmp rax, rcx")
        self.emit(f"set{SETCC[predicate]} al")

    def jump_if_equal(self, value: int, target: str) -> None:
        """``cmp rax, imm32`` (a larger case through rcx), ``je``."""
        value = signed(value, 64)
        if fits_imm32(value):
            self.emit(f"cmp rax, {value}")
        else:
            self.load_imm("rcx", value)
            self.emit("cmp rax, rcx")
        self.emit(f"je {target}")

    def lower_Ret(self, inst: I.Ret) -> None:
        if inst.value is not None:
            self.load("rax", inst.value)
        if inst.value is not None and is_float(inst.value.type):
            self.emit("movq xmm0, rax")
        self.emit("leave")
        self.emit("ret")

    def lower_Invoke(self, inst: I.Invoke) -> None:
        """Like a call, then on to the normal destination: gctoy's runtime never unwinds, so the
        landing pad is laid out but not entered (its gc.relocates would read the same slots)."""
        self.invoke_call(inst)
        self.emit(f"jmp {self.block_labels[id(inst.normal)]}")

    def invoke_call(self, inst: I.Invoke) -> None:
        """An invoke's call: a statepoint, or a call sequence and its result."""
        if is_statepoint_name(inst.callee_name):
            self.lower_statepoint(Statepoint.of(inst))
        elif inst.callee_name is not None and inst.callee_name.startswith("llvm."):
            raise self.refuse_intrinsic(inst.callee_name)
        else:
            self.call_sequence(inst.callee, inst.args)
            self.call_result(inst)

    def lower_LandingPad(self, inst: I.LandingPad) -> None:
        """Nothing to do: the token only ties relocates to their statepoint."""

    def lower_Resume(self, inst: I.Resume) -> None:
        """Unreachable in gctoy's runtime, which never unwinds (a landing pad is never entered)."""
        self.emit("ud2")

    # ----------------------------------------------------------------- calls

    def lower_Call(self, inst: I.Call) -> None:
        name = inst.callee_name
        if is_statepoint_name(name):
            self.lower_statepoint(Statepoint.of(inst))
        elif is_relocate_name(name):
            call = token_statepoint(inst.args[0])
            if call is None:
                raise CodegenError("gc.relocate whose token is not a statepoint call")
            sp = self.decoded(call)
            self.load("rax", self.recorded_slot_value(sp, GCRelocate(inst, sp).derived))
            self.store(inst)
        elif is_result_name(name):
            if inst.args[0] is not token_statepoint(inst.args[0]):
                raise CodegenError("gc.result whose token is not a statepoint call")
            # The value was stored right after the statepoint's call, before rax could change.
        elif name == "llvm.gcroot":
            self.lower_gcroot(inst)
        elif name in _NO_CODE_INTRINSICS:
            return
        elif is_stackmap_intrinsic(name):
            self.lower_stackmap_intrinsic(inst)
        elif name is not None and name.startswith("llvm."):
            raise self.refuse_intrinsic(name)
        else:
            self.call_sequence(inst.callee, inst.args)
            self.call_result(inst)

    def call_result(self, inst: I.Instruction) -> None:
        """Store a call's result (a floating-point one comes back in xmm0)."""
        if self.wide_call_result(inst) or not has_value(inst):
            return
        if is_float(inst.type):
            self.emit("movq rax, xmm0")
        self.result(inst)

    def lower_gcroot(self, inst: I.Call) -> None:
        """No code: the root stays in its alloca's frame slot, which is recorded for the frame map."""
        from ..ir.gcroot_rules import strip_pointer_casts
        from ..strategy import strategy_of

        strategy = strategy_of(self.fn)
        if strategy is None or not strategy.roots_in_frame:
            gc = f'gc "{self.fn.gc}"' if self.fn.gc else "no gc strategy"
            raise CodegenError(
                f"@llvm.gcroot in @{self.fn.name}: its function has {gc}, which keeps no roots in the frame"
            )
        slot = strip_pointer_casts(inst.args[0])
        if not isinstance(slot, I.Alloca):
            raise CodegenError(f"@llvm.gcroot in @{self.fn.name}: the root is not an alloca")
        self.gc_roots.append((self.frame.alloca(slot), inst.args[1]))

    def call_sequence(self, callee: Value, args: list[Value]) -> None:
        """Arguments into rdi..r9 and the outgoing area, then the call (no label)."""
        self.prepare_args(args)
        self.emit(self.call_instruction(callee))

    def prepare_args(self, args: list[Value]) -> None:
        """SysV: the stack arguments, the floating-point ones into xmm registers, the rest into rdi..r9."""
        if self.prepare_wide_args(args):
            return
        places = list(zip(argument_registers(args), args))
        xmm = [(where, arg) for where, arg in places if isinstance(where, str) and where.startswith("xmm")]
        self.pass_arguments([p for p in places if isinstance(p[0], int)])
        for where, arg in xmm:
            self.load("rax", arg)
            self.emit(f"movq {where}, rax")
        self.pass_arguments([p for p in places if isinstance(p[0], str) and not p[0].startswith("xmm")])
        if xmm:
            self.emit(f"mov eax, {len(xmm)}")  # al: vector registers used, for a variadic callee

    def pass_on_stack(self, arg: Value, where: int) -> None:
        """Into the outgoing area's 8-byte slot ``where``."""
        self.load("rax", arg)
        self.emit(f"mov {self.mem(8 * where)}, rax")

    def lower_statepoint(self, sp: Statepoint) -> None:
        label = f"{self.label}.sp{len(self.records)}"
        flags = self.transition_flags(sp) if sp.is_gc_transition else []
        for v, offset in zip(spilled_deopt_values(sp), self.frame.spill_slots):
            self.load("rax", v)
            self.emit(f"mov {self.mem(offset)}, rax")
        self.prepare_args(sp.call_args)
        for flag, ty in flags:
            self.emit(tls_store(flag, ty, 1))
        if sp.num_patch_bytes:
            check_patch_bytes(sp.num_patch_bytes, source_location(sp.call) or f"@{self.fn.name}")
            self.patch_bytes += sp.num_patch_bytes
            self.emit(".byte " + ", ".join(f"0x{b:02x}" for b in nops(sp.num_patch_bytes)))
        else:
            self.emit(self.call_instruction(sp.target))
        self.define_label(label)
        for flag, ty in flags:
            self.emit(tls_store(flag, ty, 0))
        result = sp.result()
        if result is not None:
            self.call_result(result)
        self.records.append(PendingRecord(sp.id if sp.id is not None else 0, label, self.record_locations(sp)))


def tls_store(offset: int, ty: Type, value: int) -> str:
    """``mov <size> ptr fs:[offset], value`` spelled as bytes: Keystone turns an absolute fs:
    operand into a RIP-relative one in 64-bit mode (GUIDE §3), so the encoding is written out."""
    disp = list(offset.to_bytes(4, "little", signed=True))
    size = size_of(ty)
    if size == 1:
        code = [0x64, 0xC6, 0x04, 0x25, *disp, value & 0xFF]
    elif size == 4:
        code = [0x64, 0xC7, 0x04, 0x25, *disp, *value.to_bytes(4, "little")]
    elif size == 8:
        code = [0x64, 0x48, 0xC7, 0x04, 0x25, *disp, *value.to_bytes(4, "little")]
    else:
        raise CodegenError(f"a GC-transition flag of type {ty} is not supported (use i8, i32 or i64)")
    return ".byte " + ", ".join(f"0x{b:02x}" for b in code)
