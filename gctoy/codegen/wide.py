"""Wide values in the x86-64 lowering: vectors, ``i128`` and first-class aggregates.

A wide value has a slot of whole words (its bytes rounded up to 8, see ``frame.slot_bytes``)
instead of one word, and every operation on it is word or lane moves through rax/rdx between
slots and memory. A wide *constant* used by an instruction gets a slot too, and its bytes are
written there just before the instruction, so every reader finds a wide value in memory. That
is also what llc does at a statepoint: a vector or an ``i128`` in ``gc-live`` or ``deopt``
is spilled to a stack slot and recorded as an Indirect location of the value's size (16 bytes
for ``<2 x ptr addrspace(1)>``), constants included::

      [rsp + s]      lane 0 (8 bytes)        one Indirect location [RSP + s], size 16,
      [rsp + s + 8]  lane 1 (8 bytes)        for the whole vector

The collector updates every lane of a relocated vector in place; the ``gc.relocate`` copies
the slot. Calls pass and return wide values in registers and stack words as abi.py says.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..ir import instructions as I
from ..ir.intrinsics import is_relocate_name, is_result_name, is_statepoint_name
from ..ir.printer import print_operand
from ..ir.statepoint import GCRelocate, Statepoint, token_statepoint
from ..ir.types import ArrayType, IntType, NamedStructType, StructType, Type, VectorType
from ..ir.values import (
    Argument,
    Constant,
    ConstantAggregate,
    ConstantFloat,
    ConstantInt,
    ConstantNull,
    Function,
    Poison,
    Undef,
    Value,
    ZeroInitializer,
)
from ..ir.vector_instructions import ExtractElement, InsertElement, ShuffleVector
from .abi import Part, assign_arguments, assign_result
from .floats import argument_registers
from .frame import CodegenError, Frame, field_offset, gep_terms, is_wide, size_of, slot_bytes, wide_constants

_SUB = {
    "rax": {8: "rax", 4: "eax", 2: "ax", 1: "al"},
    "rdx": {8: "rdx", 4: "edx", 2: "dx", 1: "dl"},
    "rcx": {8: "rcx", 4: "ecx", 2: "cx", 1: "cl"},
    "rdi": {8: "rdi", 4: "edi", 2: "di", 1: "dil"},
    "rsi": {8: "rsi", 4: "esi", 2: "si", 1: "sil"},
    "r8": {8: "r8", 4: "r8d", 2: "r8w", 1: "r8b"},
    "r9": {8: "r9", 4: "r9d", 2: "r9w", 1: "r9b"},
}
_WORD = {8: "qword", 4: "dword", 2: "word", 1: "byte"}
_LANE_OPS = {
    "add": "add",
    "sub": "sub",
    "mul": "imul",
    "and": "and",
    "or": "or",
    "xor": "xor",
    "shl": "shl",
    "lshr": "shr",
    "ashr": "sar",
}


def _chunks(n: int) -> list[tuple[int, int]]:
    """(offset, size) pieces of 8, 4, 2 and 1 bytes covering ``n`` bytes."""
    out, off = [], 0
    for size in (8, 4, 2, 1):
        while n - off >= size:
            out.append((off, size))
            off += size
    return out


def constant_bytes(c: Value, ty: Type) -> bytes:
    """The little-endian bytes of a constant of ``ty`` as memory holds it."""
    size = size_of(ty)
    if isinstance(c, (ZeroInitializer, ConstantNull, Undef, Poison)):
        return bytes(size)
    if isinstance(c, ConstantInt):
        return (c.value & ((1 << (8 * size)) - 1)).to_bytes(size, "little")
    if isinstance(c, ConstantFloat):
        return c.bits.to_bytes(size, "little")
    if isinstance(c, ConstantAggregate):
        out = bytearray(size)
        for i, e in enumerate(c.elements):
            if isinstance(ty, (StructType, NamedStructType)):
                at, ety = field_offset(ty, i), ty.elements[i]
            else:
                assert isinstance(ty, (VectorType, ArrayType)), (
                    ty
                )  # a constant aggregate of any other type does not parse
                ety = ty.element
                at = i * size_of(ety)
            out[at : at + size_of(ety)] = constant_bytes(e, ety)
        return bytes(out)
    raise CodegenError(f"constant {print_operand(c)} is not supported in a wide value by the x86-64 code generator")


def _lane(ty: Type, index: int) -> tuple[int, Type]:
    """Byte offset and type of element ``index`` of a vector, array or struct type."""
    if isinstance(ty, (StructType, NamedStructType)):
        return field_offset(ty, index), ty.elements[index]
    if isinstance(ty, (VectorType, ArrayType)):
        return index * size_of(ty.element), ty.element
    raise CodegenError(f"type {ty} has no elements")


class WideLowering:
    """The wide-value half of the x86-64 function lowering (mixed into it)."""

    frame: Frame
    fn: Function
    label: str
    lines: list[str]

    if TYPE_CHECKING:  # provided by the lowering class (lowering64.py, lowering_core.py, records.py)

        def emit(self, line: str) -> None: ...
        def load(self, dest: str, v: Value) -> None: ...
        def load_imm(self, reg: str, value: int) -> None: ...
        def mem(self, offset: int) -> str: ...
        def store(self, v: Value, reg: str = "rax") -> None: ...
        def result(self, inst: I.Instruction, dest: str | None = None) -> None: ...
        def sign_extend(self, bits: int, reg: str = "rax") -> None: ...
        def recorded_slot_value(self, sp: Statepoint, derived: Value) -> Value: ...

    # ------------------------------------------------------------------ moves

    def _wide_label(self) -> str:
        self._wide_labels = getattr(self, "_wide_labels", 0) + 1
        return f"{self.label}.w{self._wide_labels}"

    def copy_bytes(self, dst: str, src: str, n: int, tmp: str = "rax") -> None:
        """Copy ``n`` bytes from address ``src`` to ``dst`` (``"rsp + 16"``, ``"rcx"``) through ``tmp``."""
        for off, size in _chunks(n):
            self.emit(f"mov {_SUB[tmp][size]}, {_WORD[size]} ptr [{src} + {off}]")
            self.emit(f"mov {_WORD[size]} ptr [{dst} + {off}], {_SUB[tmp][size]}")

    def store_bytes(self, dst: str, data: bytes) -> None:
        """Write constant bytes to address ``dst``."""
        for off, size in _chunks(len(data)):
            value = int.from_bytes(data[off : off + size], "little")
            if size == 8:
                value = value - (1 << 64) if value >> 63 else value
                if not -(1 << 31) <= value < (1 << 31):  # no 32-bit immediate holds it
                    self.emit(f"movabs rax, {value & ((1 << 64) - 1)}")
                    self.emit(f"mov qword ptr [{dst} + {off}], rax")
                    continue
            elif size == 4 and value >= 1 << 31:
                value -= 1 << 32
            self.emit(f"mov {_WORD[size]} ptr [{dst} + {off}], {value}")

    def move_value(self, dst_offset: int, v: Value) -> None:
        """Put any value (scalar or wide, constant or not) in the slot at ``[rsp + dst_offset]``."""
        if not is_wide(v.type):
            self.load("rax", v)
            self.emit(f"mov {self.mem(dst_offset)}, rax")
        elif isinstance(v, Constant) and id(v) not in self.frame._slots:
            self.store_bytes(f"rsp + {dst_offset}", constant_bytes(v, v.type))
        else:
            self.copy_bytes(f"rsp + {dst_offset}", self.wide_address(v), slot_bytes(v.type))

    def phi_entry(self, block) -> None:
        """Copy each phi's shadow slot (written by the predecessor) to its value slot."""
        for phi in block.phis():
            self.copy_bytes(f"rsp + {self.frame.slot(phi)}", f"rsp + {self.frame.shadow(phi)}", slot_bytes(phi.type))

    def wide_address(self, v: Value) -> str:
        """The address of a wide value's slot (``rsp + off``)."""
        return f"rsp + {self.frame.slot(v)}"

    def materialize(self, inst: I.Instruction) -> None:
        """Write the bytes of the instruction's wide constant operands into their slots."""
        for c in wide_constants(inst):
            self.store_bytes(self.wide_address(c), constant_bytes(c, c.type))

    def load_lane(self, reg: str, v: Value, index: int) -> None:
        """Lane ``index`` of a vector (any lane of a scalar: a splat), zero-extended into ``reg``."""
        if not isinstance(v.type, VectorType):
            self.load(reg, v)
            return
        if isinstance(v, ConstantAggregate):
            self.load(reg, v.elements[index])
            return
        if isinstance(v, (ZeroInitializer, Undef, Poison)):
            self.emit(f"mov {reg}, 0")
            return
        at, ety = _lane(v.type, index)
        self._read(reg, f"{self.wide_address(v)} + {at}", size_of(ety))

    def _read(self, reg: str, addr: str, size: int) -> None:
        if size == 8:
            self.emit(f"mov {reg}, qword ptr [{addr}]")
        elif size == 4:
            self.emit(f"mov {_SUB[reg][4]}, dword ptr [{addr}]")
        else:
            self.emit(f"movzx {_SUB[reg][4]}, {_WORD[size]} ptr [{addr}]")

    def _write(self, addr: str, reg: str, size: int) -> None:
        self.emit(f"mov {_WORD[size]} ptr [{addr}], {_SUB[reg][size]}")

    # ------------------------------------------------------------------ dispatch

    def wide_method(self, inst: I.Instruction):
        """The lowering of an instruction that makes or reads a wide value (None: not one)."""
        method = self._wide_dispatch(inst)
        if method is None and not wide_constants(inst):
            return None
        inner = method or getattr(self, f"lower_{type(inst).__name__}", None)
        if inner is None:
            return None

        def run(i: I.Instruction) -> None:
            self.materialize(i)
            inner(i)

        return run

    def _wide_dispatch(self, inst: I.Instruction):
        if isinstance(inst, I.Ret) and inst.value is not None and is_wide(inst.value.type):
            return self.wide_ret
        if isinstance(inst, (ExtractElement, InsertElement, ShuffleVector, I.ExtractValue, I.InsertValue)):
            return getattr(self, f"_wide_{type(inst).__name__}")
        if isinstance(inst, I.Call) and is_relocate_name(inst.callee_name) and is_wide(inst.type):
            return self._wide_relocate
        if isinstance(inst, I.Call) and is_result_name(inst.callee_name):
            return None
        wide_result = has_wide_slot(inst)
        if isinstance(inst, I.Load) and wide_result:
            return self._wide_load
        if isinstance(inst, I.Store) and is_wide(inst.value.type):
            return self._wide_store
        if isinstance(inst, (I.Cast, I.Freeze)) and (wide_result or is_wide(inst.ops[0].type)):
            return self._wide_cast
        if isinstance(inst, I.Select) and wide_result:
            return self._wide_select
        if isinstance(inst, I.GetElementPtr) and isinstance(inst.type, VectorType):
            return self._wide_gep
        if isinstance(inst, (I.BinaryOp, I.ICmp)) and wide_result:
            return self._wide_binary
        if isinstance(inst, I.CallBase) and is_wide(inst.type) and not is_statepoint_name(inst.callee_name):
            self.sret_slot = self.frame.slot(inst) if assign_result(inst.type) is None else None
        elif isinstance(inst, I.CallBase) and is_statepoint_name(inst.callee_name):
            result = Statepoint.of(inst).result()
            self.sret_slot = None
            if result is not None and is_wide(result.type) and assign_result(result.type) is None:
                self.sret_slot = self.frame.slot(result)
        return None

    # ------------------------------------------------------------------ instructions

    def _wide_load(self, inst: I.Load) -> None:
        if inst.ordering is not None:  # a byte copy would tear it
            raise CodegenError(f"an atomic load of {inst.type} is not supported by the x86-64 code generator")
        self.load("rcx", inst.pointer)
        self.copy_bytes(self.wide_address(inst), "rcx", size_of(inst.type))

    def _wide_store(self, inst: I.Store) -> None:
        if inst.ordering is not None:  # a byte copy would tear it
            raise CodegenError(f"an atomic store of {inst.value.type} is not supported by the x86-64 code generator")
        self.load("rcx", inst.pointer)
        self.copy_bytes("rcx", self.wide_address(inst.value), size_of(inst.value.type), "rdx")

    def _wide_cast(self, inst: I.Cast | I.Freeze) -> None:
        src = inst.ops[0]
        if inst.opcode not in ("bitcast", "addrspacecast", "freeze"):
            raise CodegenError(f"'{inst.opcode}' on {src.type} is not supported by the x86-64 code generator")
        if not is_wide(inst.type):  # to a scalar of the same size
            self._read("rax", self.wide_address(src), size_of(inst.type))
            self.result(inst)
        elif not is_wide(src.type):
            self.load("rax", src)
            self.emit(f"mov {self.mem(self.frame.slot(inst))}, rax")
        else:
            self.copy_bytes(self.wide_address(inst), self.wide_address(src), slot_bytes(inst.type))

    def _wide_select(self, inst: I.Select) -> None:
        done = self._wide_label()
        self.move_value(self.frame.slot(inst), inst.true_value)
        self.load("rax", inst.condition)
        self.emit("test rax, rax")
        self.emit(f"jne {done}")
        self.move_value(self.frame.slot(inst), inst.false_value)
        self.lines.append(f"{done}:")

    def _wide_binary(self, inst: I.BinaryOp | I.ICmp) -> None:
        """Integer arithmetic on a vector, lane by lane (each lane like the scalar instruction)."""
        op = inst.opcode
        vty = inst.type
        ety = vty.element if isinstance(vty, VectorType) else None
        if not isinstance(vty, VectorType) or not isinstance(ety, IntType) or ety.bits > 64 or op not in _LANE_OPS:
            raise CodegenError(f"'{op}' on {inst.type} is not supported by the x86-64 code generator")
        esize = size_of(ety)
        for k in range(vty.count):
            self.load_lane("rax", inst.ops[0], k)
            self.load_lane("rcx", inst.ops[1], k)
            if op == "ashr":
                self.sign_extend(ety.bits, "rax")
            self.emit(f"{_LANE_OPS[op]} rax, {'cl' if op in ('shl', 'lshr', 'ashr') else 'rcx'}")
            self._write(f"{self.wide_address(inst)} + {k * esize}", "rax", esize)

    def _wide_ExtractElement(self, inst: ExtractElement) -> None:
        vec, idx = inst.vector, inst.index
        vty = vec.type
        assert isinstance(vty, VectorType), vty  # ExtractElement's constructor checks it
        esize = size_of(vty.element)
        if isinstance(idx, ConstantInt):
            self.load_lane("rax", vec, idx.value % vty.count)
        else:
            self._lane_index(idx, vty.count)
            self.emit(f"lea rdx, [{self.wide_address(vec)}]")
            self.emit(f"imul rcx, rcx, {esize}")
            self.emit("add rdx, rcx")
            self._read("rax", "rdx", esize)
        self.result(inst)

    def _lane_index(self, idx: Value, count: int) -> None:
        """A variable lane index into rcx, kept inside the vector (a lane past the end gives poison in IR)."""
        self.load("rcx", idx)
        self.emit("xor edx, edx")
        self.emit(f"cmp rcx, {count}")
        self.emit("cmovae rcx, rdx")

    def _wide_InsertElement(self, inst: InsertElement) -> None:
        vec, idx = inst.vector, inst.index
        vty = vec.type
        assert isinstance(vty, VectorType), vty  # InsertElement's constructor checks it
        esize = size_of(vty.element)
        self.move_value(self.frame.slot(inst), vec)
        self.load("rax", inst.element)
        if isinstance(idx, ConstantInt):
            self._write(f"{self.wide_address(inst)} + {(idx.value % vty.count) * esize}", "rax", esize)
            return
        self._lane_index(idx, vty.count)
        self.emit(f"lea rdx, [{self.wide_address(inst)}]")
        self.emit(f"imul rcx, rcx, {esize}")
        self.emit("add rdx, rcx")
        self._write("rdx", "rax", esize)

    def _wide_ShuffleVector(self, inst: ShuffleVector) -> None:
        first, second = inst.ops
        vty = first.type
        assert isinstance(vty, VectorType), vty  # ShuffleVector's constructor checks it
        n = vty.count
        esize = size_of(vty.element)
        for k, m in enumerate(inst.mask):
            if m is None:
                self.emit("mov rax, 0")
            else:
                self.load_lane("rax", first if m < n else second, m % n)
            self._write(f"{self.wide_address(inst)} + {k * esize}", "rax", esize)

    def _wide_ExtractValue(self, inst: I.ExtractValue) -> None:
        ty, at = inst.ops[0].type, 0
        for index in inst.indices:
            off, ty = _lane(ty, index)
            at += off
        if is_wide(inst.type):
            self.copy_bytes(self.wide_address(inst), f"{self.wide_address(inst.ops[0])} + {at}", size_of(ty))
        else:
            self._read("rax", f"{self.wide_address(inst.ops[0])} + {at}", size_of(ty))
            self.result(inst)

    def _wide_InsertValue(self, inst: I.InsertValue) -> None:
        agg, elt = inst.ops[0], inst.ops[1]
        self.move_value(self.frame.slot(inst), agg)
        ty, at = agg.type, 0
        for index in inst.indices:
            off, ty = _lane(ty, index)
            at += off
        if is_wide(ty):
            self.copy_bytes(f"{self.wide_address(inst)} + {at}", self.wide_address(elt), size_of(ty))
        else:
            self.load("rax", elt)
            self._write(f"{self.wide_address(inst)} + {at}", "rax", size_of(ty))

    def _wide_gep(self, inst: I.GetElementPtr) -> None:
        vty = inst.type
        assert isinstance(vty, VectorType), vty  # dispatched only for a vector of addresses
        constant, terms = gep_terms(inst)
        for k in range(vty.count):
            self.load_lane("rax", inst.pointer, k)
            for idx, scale in terms:
                self.load_lane("rcx", idx, k)
                ety = idx.type.element if isinstance(idx.type, VectorType) else idx.type
                if not isinstance(ety, IntType):
                    raise CodegenError(f"getelementptr index of type {idx.type} is not an integer")
                self.sign_extend(ety.bits, "rcx")
                if scale != 1:
                    self.emit(f"imul rcx, rcx, {scale}")
                self.emit("add rax, rcx")
            if constant:
                self.load_imm("rcx", constant & ((1 << 64) - 1))
                self.emit("add rax, rcx")
            self._write(f"{self.wide_address(inst)} + {8 * k}", "rax", 8)

    def _wide_relocate(self, inst: I.Call) -> None:
        call = token_statepoint(inst.args[0])
        if call is None:
            raise CodegenError("gc.relocate whose token is not a statepoint call")
        sp = Statepoint.of(call)
        self.move_value(self.frame.slot(inst), self.recorded_slot_value(sp, GCRelocate(inst, sp).derived))

    # ------------------------------------------------------------------ calls

    def prepare_wide_args(self, args: list[Value]) -> bool:
        """Place arguments when one of them is wide, or the result goes to memory (False: neither)."""
        sret = getattr(self, "sret_slot", None)
        self.sret_slot = None
        if sret is None and not any(is_wide(a.type) for a in args):
            return False
        placed = assign_arguments([a.type for a in args], hidden=sret is not None)
        xmm_used = 0
        for arg, places in zip(args, placed):  # stack parts first: rax is free
            for part, where in places:
                if isinstance(where, int):
                    self._part_to_stack(arg, part, where)
        for arg, places in zip(args, placed):
            for part, where in places:
                if isinstance(where, str) and where.startswith("xmm"):
                    self._part_to_xmm(arg, part, where)
                    xmm_used += 1
        for arg, places in zip(args, placed):
            for part, where in places:
                if isinstance(where, str) and not where.startswith("xmm"):
                    if is_wide(arg.type):
                        self._read(where, f"{self.wide_address(arg)} + {part.offset}", part.size)
                    else:
                        self.load(where, arg)
        if sret is not None:
            self.emit(f"lea rdi, [rsp + {sret}]")
        self.emit(f"mov eax, {xmm_used}")
        return True

    def _part_to_stack(self, arg: Value, part: Part, offset: int) -> None:
        if not is_wide(arg.type):
            self.load("rax", arg)
            self.emit(f"mov {self.mem(offset)}, rax")
        else:
            n = 16 if part.kind == "vector" else 8
            self.copy_bytes(
                f"rsp + {offset}",
                f"{self.wide_address(arg)} + {part.offset}",
                min(n, slot_bytes(arg.type) - part.offset),
            )

    def _part_to_xmm(self, arg: Value, part: Part, xmm: str) -> None:
        if not is_wide(arg.type):
            self.load("rax", arg)
            self.emit(f"movq {xmm}, rax")
        elif part.size > 8:
            self.emit(f"movups {xmm}, xmmword ptr [{self.wide_address(arg)} + {part.offset}]")
        else:
            self.emit(f"movq {xmm}, qword ptr [{self.wide_address(arg)} + {part.offset}]")

    def wide_call_result(self, inst: I.Instruction) -> bool:
        """Store a wide call result from its registers (or nothing: it is already in memory)."""
        if not is_wide(inst.type):
            return False
        placed = assign_result(inst.type)
        if placed is None:
            return True  # the callee wrote it to the slot whose address went in rdi
        self.emit_parts_to_slot(self.frame.slot(inst), placed)
        return True

    def emit_parts_to_slot(self, slot: int, placed) -> None:
        """Store registers holding parts of a value into its slot at ``[rsp + slot]``."""
        for part, reg in placed:
            addr = f"rsp + {slot + part.offset}"
            if reg.startswith("xmm"):
                self.emit(f"movups xmmword ptr [{addr}], {reg}" if part.size > 8 else f"movq qword ptr [{addr}], {reg}")
            else:
                self._write(addr, reg, part.size)

    def wide_ret(self, inst: I.Ret) -> None:
        """Return a wide value in its registers, or through the hidden result pointer."""
        v = inst.value
        assert v is not None  # dispatched only for a returned wide value
        placed = assign_result(v.type)
        if placed is None:
            self.emit(f"mov rcx, {self.mem(self.frame.slot(self.fn))}")
            self.copy_bytes("rcx", self.wide_address(v), size_of(v.type))
            self.emit("mov rax, rcx")
        else:
            for part, reg in placed:
                addr = f"{self.wide_address(v)} + {part.offset}"
                if reg.startswith("xmm"):
                    self.emit(
                        f"movups {reg}, xmmword ptr [{addr}]" if part.size > 8 else f"movq {reg}, qword ptr [{addr}]"
                    )
                else:
                    self._read(reg, addr, part.size)
        self.emit("leave")
        self.emit("ret")

    def store_arguments(self) -> None:
        """The prologue's stores of the incoming arguments (and of a hidden result pointer) to their slots."""
        fn = self.fn
        hidden = is_wide(fn.ftype.ret) and assign_result(fn.ftype.ret) is None
        if hidden:
            self.emit(f"mov {self.mem(self.frame.slot(fn))}, rdi")
        if not hidden and not any(is_wide(a.type) for a in fn.args):
            for arg, where in zip(fn.args, argument_registers(fn.args)):
                self._store_scalar_argument(arg, where if isinstance(where, str) else 8 * where)
            return
        for arg, places in zip(fn.args, assign_arguments([a.type for a in fn.args], hidden)):
            if id(arg) not in self.frame._slots:
                continue
            for part, where in places:
                if not is_wide(arg.type):
                    self._store_scalar_argument(arg, where)
                elif isinstance(where, int):
                    n = min(16 if part.kind == "vector" else 8, slot_bytes(arg.type) - part.offset)
                    self.copy_bytes(f"rsp + {self.frame.slot(arg) + part.offset}", f"rbp + {16 + where}", n)
                else:
                    self.emit_parts_to_slot(self.frame.slot(arg), [(part, where)])

    def _store_scalar_argument(self, arg: Value, where: str | int) -> None:
        if isinstance(where, int):  # a byte offset in the caller's outgoing area
            self.emit(f"mov rax, qword ptr [rbp + {16 + where}]")
            self.store(arg)
        elif where.startswith("xmm"):
            self.emit(f"movq rax, {where}")
            self.store(arg)
        else:
            self.emit(f"mov {self.mem(self.frame.slot(arg))}, {where}")


def has_wide_slot(v: Value) -> bool:
    """Whether a value is an argument or instruction result with a wide slot."""
    return isinstance(v, (Argument, I.Instruction)) and is_wide(v.type)


__all__ = ["WideLowering", "constant_bytes", "has_wide_slot"]
