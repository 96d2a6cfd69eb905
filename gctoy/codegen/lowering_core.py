"""The instruction selection both x86 lowerings share, over a small description of the target.

Both code generators keep every value in memory between instructions and compute in a few
fixed registers, so most of their selection is the same walk with other register names:

* an operand is a constant, a null/undef, a global's address (plus an offset), an alloca's frame
  address, or an argument or instruction result (in its slot, or in a register home);
* loads and stores move one, two or a partial word between memory and the first operand;
* ``getelementptr`` adds scaled indices and a constant to a base; ``br``, ``switch``, ``select``,
  casts and the ``icmp`` skeleton are the same on both targets;
* a call passes its stack arguments first, then loads its register arguments, then calls a
  symbol or a register.

What differs is data (`Target`: register names, word size, calling convention, callee-saved
set) and a few hooks the lowering class provides: where a frame offset is
(``frame_address``), how a value is read from its slot (``load_value``), how a value is
normalised or sign-extended, how a ``switch`` case or an ``icmp`` predicate is tested. A
register operand is one register name on x86-64 (``"rax"``) and a tuple of word registers on
x86-32 (``("eax", "edx")``, low word first); `words` reads both.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from ..ir import instructions as I
from ..ir.types import PointerType, Type
from ..ir.values import Argument, ConstantExpr, ConstantNull, Function, GlobalVariable, Poison, Undef, Value
from ..ir.values import ZeroInitializer
from .addresses import constant_address, signed, unsigned
from .data import defined_global
from .frame import CodegenError, gep_terms, located, locating, size_of
from .records import strip_casts

#: a register operand: one register, or the word registers of a value (low word first)
Registers = str | tuple[str, ...]
#: a target's register operand: ``str`` on x86-64, ``tuple[str, ...]`` on x86-32
R = TypeVar("R", str, tuple[str, ...])
#: memory operand size keywords by bytes
PTR_WORD = {8: "qword", 4: "dword", 2: "word", 1: "byte"}
#: operands that read as zero
ZERO_VALUES = (ConstantNull, Undef, Poison, ZeroInitializer)
CASTS = ("bitcast", "addrspacecast", "ptrtoint", "inttoptr", "trunc", "zext", "sext")


@dataclass(frozen=True)
class Target(Generic[R]):
    """A machine as the lowering core sees it: register names, word size, calling convention."""

    #: the name in messages ("x86-64")
    name: str
    #: bytes of a general-purpose register (and of a pointer held in one)
    word: int
    #: a register's names by width in bytes (``sub_registers["rax"][4] == "eax"``)
    sub_registers: Mapping[str, Mapping[int, str]]
    #: operand A: results, returns, the first operand of an instruction
    first: R
    #: operand B: the second operand, a switch case, an index
    second: R
    #: the register that holds a ``select``'s condition
    condition: str
    #: the register an indirect call goes through
    call_register: str
    #: the register that takes a constant too large for an instruction's immediate
    spare: str
    #: the instruction that loads a symbol's address
    symbol_move: str
    #: the calling convention's integer argument registers, in order
    argument_registers: tuple[str, ...]
    #: the registers a callee preserves
    callee_saved: tuple[str, ...]
    #: the bits of a value of a type in a register (an error for types the target cannot hold)
    value_bits: Callable[[Type], int]
    #: said after "is not supported" for an intrinsic call
    intrinsic_hint: str = ""


def words(registers: Registers) -> tuple[str, ...]:
    """The word registers of a register operand, low word first."""
    return (registers,) if isinstance(registers, str) else tuple(registers)


def fits_imm32(value: int) -> bool:
    """Whether a signed value fits an instruction's 32-bit immediate."""
    return -(1 << 31) <= value < (1 << 31)


class LoweringCore(Generic[R]):
    """The shared instruction selection; a lowering class sets ``target`` and provides the hooks."""

    target: Target[R]
    fn: Function
    frame: Any
    #: the function's assembler label; internal labels are ``<label>.bb0`` ...
    label: str
    lines: list[str]
    #: (first line, end line, IR instruction): the lines of ``lines`` each IR instruction's code fills
    spans: list[tuple[int, int, I.Instruction]]
    callees: list[str]
    block_labels: dict[int, str]
    _n: int = 0

    # ----------------------------------------------------------------- text

    def emit(self, line: str) -> None:
        """One instruction line."""
        self.lines.append("    " + line)

    def define_label(self, name: str) -> None:
        """A label at this point of the text."""
        self.lines.append(f"{name}:")

    def line_sources(self) -> list[tuple[int, int] | None]:
        """For each line of ``lines``, the (line, column) in the IR text of the instruction whose code it
        is (the innermost, if one instruction's code lowers another); None where none is known."""
        out: list[tuple[int, int] | None] = [None] * len(self.lines)
        for start, end, inst in sorted(self.spans, key=lambda span: span[0] - span[1]):
            if inst.loc is not None:
                out[start:end] = [inst.loc] * (end - start)
        return out

    def fresh(self, hint: str) -> str:
        """A new internal label ``<label>.<hint><n>``."""
        self._n += 1
        return f"{self.label}.{hint}{self._n}"

    def unsupported(self, what: str) -> CodegenError:
        """The error for something this target's code generator does not lower."""
        return CodegenError(f"{what} is not supported by the {self.target.name} code generator")

    def refuse_intrinsic(self, name: str) -> CodegenError:
        """The error for a call of an intrinsic this target does not lower."""
        return CodegenError(
            f"intrinsic @{name} is not supported by the {self.target.name} code generator{self.target.intrinsic_hint}"
        )

    def sub(self, reg: str, size: int) -> str:
        """The name of the low ``size`` bytes of a register."""
        return self.target.sub_registers[reg][size]

    def bits(self, ty: Type) -> int:
        """Bits of a value of this type in a register."""
        return self.target.value_bits(ty)

    def access_size(self, ty: Type) -> int:
        """Bytes a load or store of this type moves (checking the type is one the target holds)."""
        self.bits(ty)
        return size_of(ty)

    # ----------------------------------------------------------------- operands

    def frame_address(self, offset: int) -> str:
        """The memory operand (``[...]``) of a frame offset here."""
        raise NotImplementedError

    def slot(self, offset: int, word: int = 0) -> str:
        """Word ``word`` of the frame slot at ``offset``, as a sized memory operand."""
        size = self.target.word
        return f"{PTR_WORD[size]} ptr {self.frame_address(offset + size * word)}"

    def constant_bits(self, v: Value) -> int | None:
        """The bits of a constant operand the target loads as an immediate (None: not such a constant)."""
        raise NotImplementedError

    def load_imm(self, reg: str, value: int) -> None:
        """A constant into one register."""
        self.emit(f"mov {reg}, {value}")

    def load_value(self, dest: R, v: Value) -> None:
        """An argument or instruction result into registers."""
        raise NotImplementedError

    def load_zero(self, dest: R) -> None:
        """Zero into every word register."""
        for reg in words(dest):
            self.emit(f"xor {reg}, {reg}")

    def zero_upper(self, dest: R, filled: int = 1) -> None:
        """Clear the word registers above the first ``filled`` (a value narrower than the operand)."""
        for reg in words(dest)[filled:]:
            self.emit(f"xor {reg}, {reg}")

    def add_immediate(self, reg: str, value: int, spare: str) -> None:
        """``reg += value`` (nothing for 0); a value no immediate holds goes through ``spare``."""
        if not value:
            return
        if fits_imm32(value):
            self.emit(f"add {reg}, {value}")
        else:
            self.load_imm(spare, unsigned(value, 64))
            self.emit(f"add {reg}, {spare}")

    def add_offset(self, reg: str, offset: int) -> None:
        """Add a global's byte offset (wrapped to the word) to its address in ``reg``."""
        self.add_immediate(reg, signed(offset, 8 * self.target.word), self.target.spare)

    def load(self, dest: R, v: Value) -> None:
        """A value, zero-extended to the operand's width, into registers."""
        v = strip_casts(v)
        number = self.constant_bits(v)
        if number is not None:
            word_bits = 8 * self.target.word
            for k, reg in enumerate(words(dest)):
                self.load_imm(reg, (number >> (word_bits * k)) & ((1 << word_bits) - 1))
        elif isinstance(v, ZERO_VALUES):
            self.load_zero(dest)
        elif isinstance(v, I.Alloca):
            self.emit(f"lea {words(dest)[0]}, {self.frame_address(self.frame.alloca(v))}")
            self.zero_upper(dest)
        elif isinstance(v, (Argument, I.Instruction)):
            self.load_value(dest, v)
        elif isinstance(v, (Function, GlobalVariable)) or (isinstance(v, ConstantExpr) and v.opcode == "getelementptr"):
            base, offset = constant_address(v)
            if isinstance(base, Function) and base.is_declaration:
                self.callees.append(base.name)  # its address is its native stub's, as for a call
            reg = words(dest)[0]
            self.emit(f"{self.target.symbol_move} {reg}, {defined_global(base)}")
            self.add_offset(reg, offset)
            self.zero_upper(dest)
        else:
            raise self.unsupported(f"operand {v!r}")

    def load_word(self, reg: str, v: Value) -> None:
        """The low word of a value into one register (an address, a condition, an index)."""
        raise NotImplementedError

    def address_register(self, pointer: Value) -> str:
        """The register a memory access goes through, holding ``pointer``."""
        raise NotImplementedError

    # ----------------------------------------------------------------- results

    def normalize(self, bits: int, dest: R) -> None:
        """Zero-extend the low ``bits`` of a register operand to its full width."""
        raise NotImplementedError

    def sign_extend(self, bits: int, dest: R) -> None:
        """Sign-extend the low ``bits`` of a register operand to its full width."""
        raise NotImplementedError

    def extend_index(self, bits: int, reg: str) -> None:
        """Sign-extend a ``bits``-wide index in one register to the word."""
        raise NotImplementedError

    def store(self, v: Value, dest: R) -> None:
        """A register operand into a value's place."""
        raise NotImplementedError

    def result(self, inst: I.Instruction, dest: R | None = None) -> None:
        """Normalise a register operand to the instruction's width and store it in the instruction's place."""
        dest = self.target.first if dest is None else dest
        self.normalize(self.bits(inst.type), dest)
        self.store(inst, dest)

    # ----------------------------------------------------------------- blocks

    def method_for(self, inst: I.Instruction) -> Callable[[Any], None] | None:
        """The method that lowers an instruction (None: not supported)."""
        return getattr(self, f"lower_{type(inst).__name__}", None)

    def before_instruction(self, inst: I.Instruction) -> None:
        """Code before an instruction's own (a target's safe point label, parked registers)."""

    def after_instruction(self, inst: I.Instruction) -> None:
        """Code after an instruction's own."""

    def instruction(self, inst: I.Instruction) -> None:
        """Lower one instruction; its errors name it and its source line."""
        method = self.method_for(inst)
        if method is None:
            raise located(self.unsupported(f"instruction '{inst.opcode}'"), inst)
        start = len(self.lines)
        self.before_instruction(inst)
        with locating(inst):
            method(inst)
        self.after_instruction(inst)
        self.spans.append((start, len(self.lines), inst))

    def lower_blocks(self) -> None:
        """Every block: its label, its phis' values, its instructions (the phi copies before the terminator)."""
        for block in self.fn.blocks:
            self.define_label(self.block_labels[id(block)])
            self.phi_entry(block)
            for inst in block.instructions:
                if isinstance(inst, I.Phi):
                    continue
                if inst.is_terminator:
                    self.phi_copies(block)
                self.instruction(inst)

    def phi_entry(self, block: Any) -> None:
        """Copy each phi's shadow slot (written by the predecessors) into the phi's place."""
        raise NotImplementedError

    def copy_phi(self, phi: I.Phi, value: Value) -> None:
        """Write a phi's incoming value to the phi's shadow slot."""
        raise NotImplementedError

    def phi_copies(self, block: Any) -> None:
        """Write the incoming values of every successor phi to the phis' shadow slots."""
        seen: set[int] = set()
        for succ in block.successors:
            if id(succ) in seen:
                continue
            seen.add(id(succ))
            for phi in succ.phis():
                self.copy_phi(phi, phi.value_for(block))

    # ----------------------------------------------------------------- instructions

    def lower_Alloca(self, inst: I.Alloca) -> None:
        """Allocas are fixed frame objects; their value is recomputed (lea) at each use."""

    def lower_Unreachable(self, inst: I.Unreachable) -> None:
        """A trap: control never gets here."""
        self.emit("ud2")

    def lower_Cast(self, inst: I.Cast) -> None:
        """An integer or pointer cast: the slots hold zero-extended bits, so only ``sext`` computes."""
        if inst.opcode not in CASTS:
            raise self.unsupported(f"cast '{inst.opcode}'")
        self.load(self.target.first, inst.value)
        if inst.opcode == "sext":
            self.sign_extend(self.bits(inst.value.type), self.target.first)
        self.result(inst)

    def lower_Select(self, inst: I.Select) -> None:
        """Both values loaded, then a conditional move of each word."""
        t = self.target
        self.load(t.first, inst.true_value)
        self.load(t.second, inst.false_value)
        self.load_word(t.condition, inst.condition)
        self.emit(f"test {t.condition}, {t.condition}")
        for a, b in zip(words(t.first), words(t.second)):
            self.emit(f"cmove {a}, {b}")
        self.result(inst)

    def set_condition(self, predicate: str) -> None:
        """Set the low byte of operand A to 1 when ``A predicate B`` holds (both sign-extended for signed ones)."""
        raise NotImplementedError

    def lower_ICmp(self, inst: I.ICmp) -> None:
        """Both operands loaded (sign-extended for a signed predicate), the condition set, stored as i1."""
        t = self.target
        bits = self.bits(inst.ops[0].type)
        self.load(t.first, inst.ops[0])
        self.load(t.second, inst.ops[1])
        if inst.predicate.startswith("s"):
            self.sign_extend(bits, t.first)
            self.sign_extend(bits, t.second)
        self.set_condition(inst.predicate)
        acc = words(t.first)[0]
        self.emit(f"movzx {self.sub(acc, 4)}, {self.sub(acc, 1)}")
        self.zero_upper(t.first)
        self.store(inst, t.first)

    def lower_Load(self, inst: I.Load) -> None:
        """Operand A from memory: whole words, or a zero-extended part of one."""
        size = self.access_size(inst.type)
        if inst.ordering is not None and size > self.target.word:  # several moves would tear it
            raise self.unsupported(f"an atomic load of {inst.type}")
        base = self.address_register(inst.pointer)
        regs = words(self.target.first)
        if isinstance(inst.type, PointerType):
            size = min(size, self.target.word)  # a pointer fills one register (x86-32: the low half of its field)
        if size < 4:
            self.emit(f"movzx {self.sub(regs[0], 4)}, {PTR_WORD[size]} ptr [{base}]")
            filled = 1
        else:
            chunk = min(size, self.target.word)
            filled = size // chunk
            for k in range(filled):
                at = f"{base} + {k * chunk}" if k else base
                self.emit(f"mov {self.sub(regs[k], chunk)}, {PTR_WORD[chunk]} ptr [{at}]")
        self.zero_upper(self.target.first, filled)
        self.result(inst)

    def lower_Store(self, inst: I.Store) -> None:
        """Operand A to memory, a word (or the part the type has) at a time.

        An atomic store is one ``mov`` (x86 keeps stores in order); a ``seq_cst`` one is an ``xchg``,
        whose implied lock also orders it before later loads."""
        size = self.access_size(inst.value.type)
        if inst.ordering is not None and size > self.target.word:  # several moves would tear it
            raise self.unsupported(f"an atomic store of {inst.value.type}")
        self.load(self.target.first, inst.value)
        base = self.address_register(inst.pointer)
        regs = words(self.target.first)
        chunk = min(size, self.target.word)
        op = "xchg" if inst.ordering == "seq_cst" else "mov"
        for k in range(size // chunk):
            at = f"{base} + {k * chunk}" if k else base
            self.emit(f"{op} {PTR_WORD[chunk]} ptr [{at}], {self.sub(regs[k], chunk)}")

    def lower_Fence(self, inst: I.Fence) -> None:
        """A system-wide ``seq_cst`` fence is an ``mfence``; x86 already keeps every weaker order."""
        if inst.ordering == "seq_cst" and inst.syncscope is None:
            self.emit("mfence")

    def lower_GetElementPtr(self, inst: I.GetElementPtr) -> None:
        """The base, plus each index sign-extended and scaled, plus the constant offset."""
        t = self.target
        acc, index = words(t.first)[0], words(t.second)[0]
        self.load_word(acc, inst.pointer)
        constant, terms = gep_terms(inst)
        for idx, scale in terms:
            self.load_word(index, idx)
            self.extend_index(self.bits(idx.type), index)
            if scale != 1:
                self.emit(f"imul {index}, {index}, {scale}")
            self.emit(f"add {acc}, {index}")
        self.add_immediate(acc, signed(constant, 8 * t.word), index)
        self.zero_upper(t.first)
        self.store(inst, t.first)

    def lower_Br(self, inst: I.Br) -> None:
        """A conditional branch tests the condition's low word; both edges jump."""
        if inst.is_conditional:
            true_bb, false_bb = inst.successors
            reg = words(self.target.first)[0]
            assert inst.condition is not None
            self.load_word(reg, inst.condition)
            self.emit(f"test {reg}, {reg}")
            self.emit(f"jne {self.block_labels[id(true_bb)]}")
            self.emit(f"jmp {self.block_labels[id(false_bb)]}")
        else:
            self.emit(f"jmp {self.block_labels[id(inst.successors[0])]}")

    def jump_if_equal(self, value: int, target: str) -> None:
        """Jump to ``target`` when operand A holds ``value`` (unsigned bits)."""
        raise NotImplementedError

    def lower_Switch(self, inst: I.Switch) -> None:
        """A compare and a jump per case, then the default."""
        bits = self.bits(inst.value.type)
        self.load(self.target.first, inst.value)
        for const, target in inst.cases:
            self.jump_if_equal(unsigned(const.value, bits), self.block_labels[id(target)])
        self.emit(f"jmp {self.block_labels[id(inst.default)]}")

    # ----------------------------------------------------------------- calls

    def pass_on_stack(self, arg: Value, where: int) -> None:
        """One stack argument (``where``: its place, as the calling convention numbers it)."""
        raise NotImplementedError

    def pass_arguments(self, places: list[tuple[str | int, Value]]) -> None:
        """The stack arguments first (their code may use any scratch register), then each register
        argument straight into its register (``places``: a register name or a stack place per argument)."""
        for where, arg in places:
            if isinstance(where, int):
                self.pass_on_stack(arg, where)
        for where, arg in places:
            if isinstance(where, str):
                self.load_word(where, arg)

    def call_instruction(self, callee: Value) -> str:
        """The call of a function symbol (noted as a callee), or through the call register."""
        target = strip_casts(callee)
        if isinstance(target, Function):
            self.callees.append(target.name)
            return f"call {defined_global(target)}"
        self.load_word(self.target.call_register, target)
        return f"call {self.target.call_register}"


__all__ = ["CASTS", "PTR_WORD", "ZERO_VALUES", "LoweringCore", "Registers", "Target", "fits_imm32", "words"]
