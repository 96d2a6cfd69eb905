"""The instruction selection of the x86-64 lowering: one function's IR to assembly lines (see x86_64.py).

Each instruction loads its operands from their stack slots into scratch registers (rax, rcx,
rdx), computes, and stores the result back into its own slot (see frame.py for the layout).
Integers narrower than 64 bits are kept *zero-extended* in their slots; an operation that needs
the signed reading (sdiv, ashr, signed compares, sext) sign-extends its operands first.
"""

from __future__ import annotations

from ..emu import nops
from ..ir import instructions as I
from ..ir.intrinsics import is_relocate_name, is_result_name, is_statepoint_name
from ..ir.statepoint import GCRelocate, Statepoint, source_location, token_statepoint
from ..ir.types import Type
from ..ir.values import (
    Argument,
    ConstantExpr,
    ConstantFloat,
    ConstantNull,
    Function,
    GlobalVariable,
    Poison,
    Undef,
    Value,
    ZeroInitializer,
)
from .addresses import constant_address, signed, unsigned, width
from .data import defined_global
from .floats import FloatLowering, argument_registers, float_bits, is_float
from .frame import ARG_REGISTERS, CodegenError, Frame, gep_terms, located, size_of, spilled_deopt_values
from .limits import check_patch_bytes
from .patchpoints import StackMapIntrinsics, is_stackmap_intrinsic
from .records import PendingRecord, StackMapRecords, has_value, int_constant, strip_casts
from .wide import WideLowering
from .symbols import mangle

#: intrinsics that make no code (hints to the optimiser)
_NO_CODE_INTRINSICS = frozenset({"llvm.assume"})
SETCC = {"eq": "e", "ne": "ne", "ugt": "a", "uge": "ae", "ult": "b", "ule": "be",
         "sgt": "g", "sge": "ge", "slt": "l", "sle": "le"}
SIMPLE_OPS = {"add": "add", "sub": "sub", "and": "and", "or": "or", "xor": "xor", "mul": "imul"}
SHIFTS = {"shl": "shl", "lshr": "shr", "ashr": "sar"}
# Sub-registers of the general-purpose registers by width in bytes.
SUBREGS = {
    **{f"r{x}x": {8: f"r{x}x", 4: f"e{x}x", 2: f"{x}x", 1: f"{x}l"} for x in "abcd"},
    **{f"r{x}": {8: f"r{x}", 4: f"e{x}", 2: x, 1: f"{x}l"} for x in ("si", "di", "bp", "sp")},
    **{f"r{n}": {8: f"r{n}", 4: f"r{n}d", 2: f"r{n}w", 1: f"r{n}b"} for n in range(8, 16)},
}
PTR_WORD = {8: "qword", 4: "dword", 2: "word", 1: "byte"}


def check_symbol(v: GlobalVariable | Function) -> str:
    """The assembler label of a function or global the code refers to (see symbols.py)."""
    return defined_global(v)


class FunctionLowering(StackMapRecords, StackMapIntrinsics, WideLowering, FloatLowering):
    """Emits the assembly of one function and collects its pending stack map records."""

    def __init__(self, fn: Function, constants: list[int], tls: dict[str, int] | None = None) -> None:
        self.fn = fn
        self.tls = tls or {}
        self.name = fn.name
        #: the function's assembler label; its internal labels are ``<label>.bb0``, ``<label>.sp0`` ...
        self.label = mangle(fn.name)
        self.frame = self.make_frame()
        self.constants = constants
        self.lines: list[str] = []
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

    def emit(self, line: str) -> None:
        self.lines.append("    " + line)

    def mem(self, offset: int) -> str:
        return f"qword ptr [rsp + {offset}]"

    def load(self, reg: str, v: Value) -> None:
        """Put a value, zero-extended to 64 bits, into a 64-bit register."""
        v = strip_casts(v)
        number = int_constant(v)
        if number is not None:
            self.load_imm(reg, unsigned(number, width(v.type)))
        elif isinstance(v, ConstantFloat):
            self.load_imm(reg, float_bits(v))
        elif isinstance(v, (ConstantNull, Undef, Poison, ZeroInitializer)):
            self.emit(f"mov {reg}, 0")
        elif isinstance(v, (Function, GlobalVariable)):
            self.emit(f"movabs {reg}, {check_symbol(v)}")
        elif isinstance(v, I.Alloca):
            self.emit(f"lea {reg}, [rsp + {self.frame.alloca(v)}]")
        elif isinstance(v, (Argument, I.Instruction)):
            self.emit(f"mov {reg}, {self.mem(self.frame.slot(v))}")
        elif isinstance(v, ConstantExpr) and v.opcode == "getelementptr":
            base, offset = constant_address(v)
            self.emit(f"movabs {reg}, {check_symbol(base)}")
            offset = signed(offset, 64)
            if -(1 << 31) <= offset < (1 << 31):
                if offset:
                    self.emit(f"add {reg}, {offset}")
            else:  # no 32-bit immediate holds it: r10 is never used otherwise
                self.emit(f"movabs r10, {unsigned(offset, 64)}")
                self.emit(f"add {reg}, r10")
        else:
            raise CodegenError(f"operand {v!r} is not supported by the x86-64 code generator")

    def load_imm(self, reg: str, value: int) -> None:
        s = signed(value, 64)
        if -(1 << 31) <= s < (1 << 31):
            self.emit(f"mov {reg}, {s}")
        else:
            self.emit(f"movabs {reg}, {unsigned(value, 64)}")

    def store(self, v: Value, reg: str = "rax") -> None:
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

    def result(self, inst: I.Instruction, reg: str = "rax") -> None:
        """Normalise the result register to the instruction's width and store it in its slot."""
        self.normalize(width(inst.type), reg)
        self.store(inst, reg)

    # ----------------------------------------------------------------- function

    def lower(self) -> list[str]:
        fn, frame = self.fn, self.frame
        self.lines.append(f"{self.label}:")
        self.emit("push rbp")
        self.emit("mov rbp, rsp")
        if frame.realign:
            self.emit(f"and rsp, {-frame.realign}")
        if frame.size:
            self.emit(f"sub rsp, {frame.size}")
        self.store_arguments()
        for block in fn.blocks:
            self.lines.append(f"{self.block_labels[id(block)]}:")
            self.phi_entry(block)
            for inst in block.instructions:
                if isinstance(inst, I.Phi):
                    continue
                if inst.is_terminator:
                    self.phi_copies(block)
                self.instruction(inst)
        return self.lines

    def phi_copies(self, block) -> None:
        """Write the incoming values of every successor phi to the phis' shadow slots."""
        seen: set[int] = set()
        for succ in block.successors:
            if id(succ) in seen:
                continue
            seen.add(id(succ))
            for phi in succ.phis():
                self.move_value(self.frame.shadow(phi), phi.value_for(block))

    # ----------------------------------------------------------------- instructions

    def instruction(self, inst: I.Instruction) -> None:
        method = (self.wide_method(inst) or self.float_method(inst) or self.call_site_method(inst)
                  or getattr(self, f"lower_{type(inst).__name__}", None))
        if method is None:
            raise CodegenError(f"instruction '{inst.opcode}' is not supported by the x86-64 code generator")
        try:
            method(inst)
        except CodegenError as e:
            raise located(e, inst) from None

    def lower_Alloca(self, inst: I.Alloca) -> None:
        """Allocas are fixed frame objects; their value is recomputed (lea) at each use."""

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
            raise CodegenError(f"'{op}' is not supported by the x86-64 code generator")
        self.result(inst, "rdx" if op in ("srem", "urem") else "rax")

    def lower_ICmp(self, inst: I.ICmp) -> None:
        bits = width(inst.ops[0].type)
        self.load("rax", inst.ops[0])
        self.load("rcx", inst.ops[1])
        if inst.predicate.startswith("s"):
            self.sign_extend(bits, "rax")
            self.sign_extend(bits, "rcx")
        self.emit("cmp rax, rcx")
        self.emit(f"set{SETCC[inst.predicate]} al")
        self.emit("movzx eax, al")
        self.store(inst)

    def lower_Select(self, inst: I.Select) -> None:
        self.load("rax", inst.true_value)
        self.load("rcx", inst.false_value)
        self.load("rdx", inst.condition)
        self.emit("test rdx, rdx")
        self.emit("cmove rax, rcx")
        self.result(inst)

    def lower_Cast(self, inst: I.Cast) -> None:
        if inst.opcode not in ("bitcast", "addrspacecast", "ptrtoint", "inttoptr", "trunc", "zext", "sext"):
            raise CodegenError(f"cast '{inst.opcode}' is not supported by the x86-64 code generator")
        self.load("rax", inst.value)
        if inst.opcode == "sext":
            self.sign_extend(width(inst.value.type), "rax")
        self.result(inst)

    def lower_Load(self, inst: I.Load) -> None:
        size = self._access_size(inst.type)
        self.load("rcx", inst.pointer)
        if size == 8:
            self.emit("mov rax, qword ptr [rcx]")
        elif size == 4:
            self.emit("mov eax, dword ptr [rcx]")
        else:
            self.emit(f"movzx eax, {PTR_WORD[size]} ptr [rcx]")
        self.result(inst)

    def lower_Store(self, inst: I.Store) -> None:
        size = self._access_size(inst.value.type)
        self.load("rax", inst.value)
        self.load("rcx", inst.pointer)
        self.emit(f"mov {PTR_WORD[size]} ptr [rcx], {SUBREGS['rax'][size]}")

    def _access_size(self, ty: Type) -> int:
        width(ty)
        return size_of(ty)

    def lower_GetElementPtr(self, inst: I.GetElementPtr) -> None:
        self.load("rax", inst.pointer)
        constant, terms = gep_terms(inst)
        for idx, scale in terms:
            self.load("rcx", idx)
            self.sign_extend(width(idx.type), "rcx")
            if scale != 1:
                self.emit(f"imul rcx, rcx, {scale}")
            self.emit("add rax, rcx")
        constant = signed(constant, 64)
        if constant:
            if -(1 << 31) <= constant < (1 << 31):
                self.emit(f"add rax, {constant}")
            else:
                self.load_imm("rcx", unsigned(constant, 64))
                self.emit("add rax, rcx")
        self.store(inst)

    def lower_Br(self, inst: I.Br) -> None:
        if inst.is_conditional:
            true_bb, false_bb = inst.successors
            self.load("rax", inst.condition)
            self.emit("test rax, rax")
            self.emit(f"jne {self.block_labels[id(true_bb)]}")
            self.emit(f"jmp {self.block_labels[id(false_bb)]}")
        else:
            self.emit(f"jmp {self.block_labels[id(inst.successors[0])]}")

    def lower_Switch(self, inst: I.Switch) -> None:
        bits = width(inst.value.type)
        self.load("rax", inst.value)
        for const, target in inst.cases:
            value = signed(unsigned(const.value, bits), 64)
            if -(1 << 31) <= value < (1 << 31):
                self.emit(f"cmp rax, {value}")
            else:
                self.load_imm("rcx", value)
                self.emit("cmp rax, rcx")
            self.emit(f"je {self.block_labels[id(target)]}")
        self.emit(f"jmp {self.block_labels[id(inst.default)]}")

    def lower_Ret(self, inst: I.Ret) -> None:
        if inst.value is not None:
            self.load("rax", inst.value)
        if inst.value is not None and is_float(inst.value.type):
            self.emit("movq xmm0, rax")
        self.emit("leave")
        self.emit("ret")

    def lower_Unreachable(self, inst: I.Unreachable) -> None:
        self.emit("ud2")

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
            raise CodegenError(f"intrinsic @{inst.callee_name} is not supported by the x86-64 code generator")
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
            sp = Statepoint.of(call)
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
            raise CodegenError(f"intrinsic @{name} is not supported by the x86-64 code generator")
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
            raise CodegenError(f"@llvm.gcroot in @{self.fn.name}: its gc strategy does not keep roots in the "
                               "frame (shadow-stack: run shadow-stack-gc-lowering first)")
        slot = strip_pointer_casts(inst.args[0])
        if not isinstance(slot, I.Alloca):
            raise CodegenError(f"@llvm.gcroot in @{self.fn.name}: the root is not an alloca")
        self.gc_roots.append((self.frame.alloca(slot), inst.args[1]))

    def call_sequence(self, callee: Value, args: list[Value]) -> None:
        """Arguments into rdi..r9 and the outgoing area, then the call (no label)."""
        self.prepare_args(args)
        self.emit(self.call_instruction(callee))

    def prepare_args(self, args: list[Value]) -> None:
        if self.prepare_wide_args(args):
            return
        if not any(is_float(a.type) for a in args):
            for i, arg in enumerate(args[len(ARG_REGISTERS):]):
                self.load("rax", arg)
                self.emit(f"mov {self.mem(8 * i)}, rax")
            for reg, arg in zip(ARG_REGISTERS, args):
                self.load(reg, arg)
            return
        places = list(zip(argument_registers(args), args))
        for where, arg in places:
            if isinstance(where, int):
                self.load("rax", arg)
                self.emit(f"mov {self.mem(8 * where)}, rax")
        xmm = [(where, arg) for where, arg in places if isinstance(where, str) and where.startswith("xmm")]
        for where, arg in xmm:
            self.load("rax", arg)
            self.emit(f"movq {where}, rax")
        for where, arg in places:
            if isinstance(where, str) and not where.startswith("xmm"):
                self.load(where, arg)
        self.emit(f"mov eax, {len(xmm)}")  # al: vector registers used, for a variadic callee

    def call_instruction(self, callee: Value) -> str:
        target = strip_casts(callee)
        if isinstance(target, Function):
            self.callees.append(target.name)
            return f"call {check_symbol(target)}"
        self.load("r11", target)
        return "call r11"

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
        self.lines.append(f"{label}:")
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


