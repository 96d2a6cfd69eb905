"""The x86-64 lowering with values in registers (``compile_module(regalloc=True)``): see regalloc.py.

It is FunctionLowering with a different answer to "where is this value": a register or a
spill slot from the allocation (frame_ra.py), instead of a slot per value. What changes:

* operands are used where they are: ``add rbx, rsi`` rather than a load into rax, an add and a
  store; a result is computed in its own register when it has one;
* moves that happen "at once" (a function's incoming arguments, a call's outgoing arguments,
  the phi copies of one edge) are one parallel move: a move whose destination no other move
  still reads goes first; a cycle is broken by saving one destination in r11;
* the phi copies of an edge run on that edge only: a conditional branch jumps straight to a
  successor whose edge has no copies, and an edge with copies gets a few lines of its own;
* an ``icmp`` whose only use is the conditional branch right after it becomes a ``cmp`` and a
  conditional jump;
* the prologue pushes the callee-saved registers the allocation uses and reserves the frame;
  the epilogue undoes both; no frame pointer;
* a GC pointer in a callee-saved register across a statepoint is recorded as a Register
  location (DWARF number), a spilled one as Indirect [RSP + off]; each ``gc.relocate`` reads
  the recorded place after the call (the collector may have rewritten it) into its own place.

The unwind rows (``RegisterFrame.unwind_rows``) say where the prologue saved each register, as llc's CFI
does, so the runtime's stack walk finds an outer frame's registers in its callees' save slots.
"""

from __future__ import annotations

from collections import Counter

from ..ir import instructions as I
from ..ir.intrinsics import is_relocate_name, is_statepoint_name
from ..ir.statepoint import GCRelocate, Statepoint, token_statepoint
from ..ir.values import Argument, ConstantExpr, Function, Value
from ..stackmap import Location, LocationKind
from .addresses import constant_address, signed, unsigned, width
from .floats import argument_registers, is_float
from .frame import DWARF, CodegenError, gep_terms
from .frame_ra import RegisterFrame
from .patchpoints import SITE_REGISTERS
from .lowering64 import PTR_WORD, SETCC, SHIFTS, SIMPLE_OPS, SUBREGS, FunctionLowering
from .dag_values import fold_cast
from .records import int_constant, strip_casts, value_key
from .regalloc import X86_64, allocate

_NEGATE = {"e": "ne", "ne": "e", "a": "be", "be": "a", "ae": "b", "b": "ae", "g": "le", "le": "g", "ge": "l", "l": "ge"}
_COMMUTATIVE = ("add", "and", "or", "xor", "mul")
#: a move's source: ("loc", register or memory operand), ("val", a constant Value), ("xmm", register)
Source = tuple[str, object]


def _is_memory(place: str) -> bool:
    return place.startswith("qword ptr")


def _fits_imm32(value: int) -> bool:
    return -(1 << 31) <= value < (1 << 31)


class RegisterLowering(FunctionLowering):
    """FunctionLowering over a register allocation (see the module docstring)."""

    frame: RegisterFrame  # type: ignore[assignment]

    def __init__(
        self, fn: Function, constants: list[int], tls: dict[str, int] | None = None, gc_registers: int = 0
    ) -> None:
        self.gc_registers = gc_registers  # read by make_frame, which the base class's __init__ calls
        super().__init__(fn, constants, tls)

    def make_frame(self) -> RegisterFrame:  # type: ignore[override]
        """The allocation, then the frame of what did not get a register."""
        self.allocation = allocate(self.fn, X86_64, self.gc_registers)
        uses = Counter(id(op) for inst in self.fn.instructions() for op in inst.operands)
        self.fused: set[int] = set()
        for block in self.fn.blocks:
            insts = block.instructions
            last = insts[-1]
            if (
                isinstance(last, I.Br)
                and last.is_conditional
                and len(insts) > 1
                and insts[-2] is last.condition
                and isinstance(last.condition, I.ICmp)
                and uses[id(last.condition)] == 1
            ):
                self.fused.add(id(last.condition))
        self._stubs: list[tuple[str, object, list]] = []
        return RegisterFrame(self.fn, self.allocation)

    # ----------------------------------------------------------------- places

    def place(self, v: Value) -> str | None:
        """The register or memory operand holding an argument or instruction result (None: no place)."""
        v = strip_casts(v)
        if not isinstance(v, (Argument, I.Instruction)) or isinstance(v, I.Alloca):
            return None
        reg = self.allocation.register(v)
        if reg is not None:
            return reg
        if self.allocation.spill(v) is not None:
            return self.mem(self.frame.slot(v))
        return None

    def register_of(self, v: Value) -> str | None:
        """The register of a value, or None when it is elsewhere."""
        p = self.place(v)
        return p if p is not None and not _is_memory(p) else None

    def source(self, v: Value) -> Source:
        """A move's source for a value."""
        p = self.place(v)
        if p is not None:
            return ("loc", p)
        if isinstance(strip_casts(v), (Argument, I.Instruction)) and not isinstance(strip_casts(v), I.Alloca):
            raise CodegenError(f"{v!r} has no register or slot in @{self.fn.name}")
        return ("val", v)

    def load(self, reg: str, v: Value) -> None:
        """Put a value, zero-extended to 64 bits, into a 64-bit register."""
        kind, what = self.source(v)
        if kind == "val":
            super().load(reg, v)
        elif what != reg:
            self.emit(f"mov {reg}, {what}")

    def store(self, v: Value, reg: str = "rax") -> None:
        """Move ``reg`` to the value's place (nothing when the value has none)."""
        p = self.place(v)
        if p is not None and p != reg:
            self.emit(f"mov {p}, {reg}")

    def operand(self, v: Value, bits: int, scratch: str = "rcx") -> str:
        """A second operand: the value's place, an immediate, or the value loaded into ``scratch``."""
        p = self.place(v)
        if p is not None:
            return p
        n = int_constant(v)
        if n is not None and _fits_imm32(signed(unsigned(n, bits), 64)):
            return str(signed(unsigned(n, bits), 64))
        self.load(scratch, v)
        return scratch

    def address(self, pointer: Value) -> str:
        """The memory operand's inside for a pointer: a register, ``rsp + off`` or rcx loaded."""
        p = strip_casts(pointer)
        if isinstance(p, I.Alloca):
            return f"rsp + {self.frame.alloca(p)}"
        reg = self.register_of(p)
        if reg is not None:
            return reg
        self.load("rcx", pointer)
        return "rcx"

    # ----------------------------------------------------------------- moves

    def move(self, dst: str, src: Source) -> None:
        """One move of a parallel move (rax carries memory-to-memory moves)."""
        kind, what = src
        if src == ("loc", dst):
            return
        if kind == "val":
            if _is_memory(dst):
                super().load("rax", what)  # type: ignore[arg-type]
                self.emit(f"mov {dst}, rax")
            else:
                super().load(dst, what)  # type: ignore[arg-type]
        elif kind == "xmm":
            if _is_memory(dst):
                self.emit(f"movq rax, {what}")
                self.emit(f"mov {dst}, rax")
            else:
                self.emit(f"movq {dst}, {what}")
        elif _is_memory(dst) and _is_memory(str(what)):
            self.emit(f"mov rax, {what}")
            self.emit(f"mov {dst}, rax")
        else:
            self.emit(f"mov {dst}, {what}")

    def parallel_move(self, moves: list[tuple[str, Source]]) -> None:
        """Do all moves as if at once: each destination gets its source's value from before any move."""
        pending = [(d, s) for d, s in moves if s != ("loc", d)]
        while pending:
            read = Counter(s[1] for _, s in pending if s[0] == "loc")
            for k, (d, s) in enumerate(pending):
                if not read[d]:
                    self.move(d, s)
                    del pending[k]
                    break
            else:  # every destination is still read: a cycle; r11 keeps one destination's value
                d = pending[0][0]
                self.emit(f"mov r11, {d}")
                pending = [(dd, ("loc", "r11") if s == ("loc", d) else s) for dd, s in pending]

    def edge_moves(self, block, succ) -> list[tuple[str, Source]]:
        """The phi copies of the edge ``block -> succ``."""
        out = []
        for phi in succ.phis():
            p = self.place(phi)
            if p is not None:
                out.append((p, self.source(phi.value_for(block))))
        return [(d, s) for d, s in out if s != ("loc", d)]

    def go(self, succ, moves, fall_through: bool = True) -> None:
        """The copies of an edge, then a jump (none when ``succ`` comes next and falling through is allowed)."""
        self.parallel_move(moves)
        target = self.block_labels[id(succ)]
        if not (fall_through and self.next_label.get(id(self.block)) == target):
            self.emit(f"jmp {target}")

    def edge_label(self, succ) -> str:
        """Where a jump to ``succ`` goes: its block, or a stub that makes the edge's copies first."""
        moves = self.edge_moves(self.block, succ)
        if not moves:
            return self.block_labels[id(succ)]
        for label, s, _ in self._stubs:
            if s is succ:
                return label
        label = f"{self.label}.e{self._edge_count}"
        self._edge_count += 1
        self._stubs.append((label, succ, moves))
        return label

    def flush_stubs(self) -> None:
        """The edge stubs the terminator just jumped to."""
        for label, succ, moves in self._stubs:
            self.lines.append(f"{label}:")
            self.go(succ, moves, fall_through=False)
        self._stubs = []

    # ----------------------------------------------------------------- function

    def lower(self) -> list[str]:
        """Prologue, the incoming arguments to their places, then every block."""
        fn, frame = self.fn, self.frame
        self._edge_count = 0
        blocks = list(fn.blocks)
        self.next_label = {
            id(b): self.block_labels[id(blocks[k + 1])] if k + 1 < len(blocks) else None for k, b in enumerate(blocks)
        }
        self.lines.append(f"{self.label}:")
        for reg in frame.saved:
            self.emit(f"push {reg}")
        if frame.size:
            self.emit(f"sub rsp, {frame.size}")
        moves: list[tuple[str, Source]] = []
        for arg, where in zip(fn.args, argument_registers(list[Value](fn.args))):
            p = self.place(arg)
            if p is None:
                continue
            if isinstance(where, int):
                moves.append((p, ("loc", self.mem(frame.stack_size + 8 + 8 * where))))
            elif where.startswith("xmm"):
                moves.append((p, ("xmm", where)))
            else:
                moves.append((p, ("loc", where)))
        self.parallel_move(moves)
        for block in fn.blocks:
            self.block = block
            self.lines.append(f"{self.block_labels[id(block)]}:")
            for inst in block.instructions:
                if not isinstance(inst, I.Phi):
                    self.instruction(inst)
        return self.lines

    def epilogue(self) -> None:
        """Free the frame, restore the saved registers, return."""
        if self.frame.size:
            self.emit(f"add rsp, {self.frame.size}")
        for reg in reversed(self.frame.saved):
            self.emit(f"pop {reg}")
        self.emit("ret")

    # ----------------------------------------------------------------- instructions

    def lower_BinaryOp(self, inst: I.BinaryOp) -> None:
        op, dst = inst.opcode, self.register_of(inst)
        a, b = inst.ops
        bits = width(inst.type)
        shift = int_constant(b) if op in SHIFTS else None
        if dst is None or (op not in SIMPLE_OPS and shift is None) or (op == "ashr" and bits < 64):
            return super().lower_BinaryOp(inst)
        if self.register_of(b) == dst and self.register_of(a) != dst:
            if op not in _COMMUTATIVE:
                return super().lower_BinaryOp(inst)
            a, b = b, a
        self.load(dst, a)
        if shift is not None:
            self.emit(f"{SHIFTS[op]} {dst}, {shift & 63}")
        else:
            src = self.operand(b, bits)
            if op == "mul" and not src[0].isalpha():
                self.emit(f"imul {dst}, {dst}, {src}")
            else:
                self.emit(f"{SIMPLE_OPS[op]} {dst}, {src}")
        self.normalize(bits, dst)

    def compare(self, inst: I.ICmp) -> str:
        """``cmp`` of an icmp's operands; the condition code that is true when the icmp is."""
        a, b = inst.ops
        bits = width(a.type)
        if inst.predicate.startswith("s") and bits < 64:
            self.load("rax", a)
            self.load("rcx", b)
            self.sign_extend(bits, "rax")
            self.sign_extend(bits, "rcx")
            self.emit("cmp rax, rcx")
        else:
            left = self.register_of(a)
            if left is None:
                self.load("rax", a)
                left = "rax"
            self.emit(f"cmp {left}, {self.operand(b, bits)}")
        return SETCC[inst.predicate]

    def lower_ICmp(self, inst: I.ICmp) -> None:
        if id(inst) in self.fused:
            return  # the branch after it compares
        cc = self.compare(inst)
        dst = self.register_of(inst) or "rax"
        self.emit(f"set{cc} {SUBREGS[dst][1]}")
        self.emit(f"movzx {SUBREGS[dst][4]}, {SUBREGS[dst][1]}")
        self.store(inst, dst)

    def lower_Cast(self, inst: I.Cast) -> None:
        if inst.opcode not in ("bitcast", "addrspacecast", "ptrtoint", "inttoptr", "trunc", "zext", "sext"):
            return super().lower_Cast(inst)
        dst = self.register_of(inst) or "rax"
        self.load(dst, inst.value)
        if inst.opcode == "sext":
            self.sign_extend(width(inst.value.type), dst)
        self.normalize(width(inst.type), dst)
        self.store(inst, dst)

    def lower_Load(self, inst: I.Load) -> None:
        size = self._access_size(inst.type)
        at = self.address(inst.pointer)
        dst = self.register_of(inst) or "rax"
        if size == 8:
            self.emit(f"mov {dst}, qword ptr [{at}]")
        elif size == 4:
            self.emit(f"mov {SUBREGS[dst][4]}, dword ptr [{at}]")
        else:
            self.emit(f"movzx {SUBREGS[dst][4]}, {PTR_WORD[size]} ptr [{at}]")
        self.normalize(width(inst.type), dst)
        self.store(inst, dst)

    def lower_Store(self, inst: I.Store) -> None:
        size = self._access_size(inst.value.type)
        value = self.register_of(inst.value)
        n = int_constant(inst.value) if value is None else None
        imm = None if n is None else signed(unsigned(n, width(inst.value.type)), 64)
        seq_cst = inst.ordering == "seq_cst"  # an xchg, which also overwrites its register
        if seq_cst or (value is None and (imm is None or not _fits_imm32(imm))):
            self.load("rax", inst.value)
            value = "rax"
        at = self.address(inst.pointer)
        op = "xchg" if seq_cst else "mov"
        self.emit(f"{op} {PTR_WORD[size]} ptr [{at}], {imm if value is None else SUBREGS[value][size]}")

    def lower_GetElementPtr(self, inst: I.GetElementPtr) -> None:
        constant, terms = gep_terms(inst)
        dst = self.register_of(inst)
        constant = signed(constant, 64)
        if terms or dst is None or not _fits_imm32(constant):
            return super().lower_GetElementPtr(inst)
        base = strip_casts(inst.pointer)
        at = f"rsp + {self.frame.alloca(base)}" if isinstance(base, I.Alloca) else self.register_of(base)
        if at is None:
            self.load(dst, inst.pointer)
            if constant:
                self.emit(f"add {dst}, {constant}")
        elif constant or at != dst:
            sign = "-" if constant < 0 else "+"
            self.emit(f"lea {dst}, [{at} {sign} {abs(constant)}]")

    def lower_Br(self, inst: I.Br) -> None:
        if not inst.is_conditional:
            succ = inst.successors[0]
            return self.go(succ, self.edge_moves(self.block, succ))
        true_bb, false_bb = inst.successors
        cond = inst.condition
        assert cond is not None
        if id(cond) in self.fused:
            cc = self.compare(cond)  # type: ignore[arg-type]
        else:
            reg = self.register_of(cond)
            if reg is None:
                self.load("rax", cond)
                reg = "rax"
            self.emit(f"test {reg}, {reg}")
            cc = "ne"
        moves_t, moves_f = self.edge_moves(self.block, true_bb), self.edge_moves(self.block, false_bb)
        if not moves_t:
            self.emit(f"j{cc} {self.block_labels[id(true_bb)]}")
            self.go(false_bb, moves_f)
        elif not moves_f:
            self.emit(f"j{_NEGATE[cc]} {self.block_labels[id(false_bb)]}")
            self.go(true_bb, moves_t)
        else:
            self.emit(f"j{cc} {self.edge_label(true_bb)}")
            self.go(false_bb, moves_f, fall_through=False)
            self.flush_stubs()

    def lower_Switch(self, inst: I.Switch) -> None:
        bits = width(inst.value.type)
        value = self.register_of(inst.value)
        if value is None:
            self.load("rax", inst.value)
            value = "rax"
        for const, target in inst.cases:
            case = signed(unsigned(const.value, bits), 64)
            if not _fits_imm32(case):
                self.load_imm("rcx", case)
            self.emit(f"cmp {value}, {case if _fits_imm32(case) else 'rcx'}")
            self.emit(f"je {self.edge_label(target)}")
        self.emit(f"jmp {self.edge_label(inst.default)}")
        self.flush_stubs()

    def lower_Ret(self, inst: I.Ret) -> None:
        if inst.value is not None:
            self.load("rax", inst.value)
            if is_float(inst.value.type):
                self.emit("movq xmm0, rax")
        self.epilogue()

    def lower_Invoke(self, inst: I.Invoke) -> None:
        """Like a call, then the normal destination's phi copies (after the call) and a jump."""
        self.invoke_call(inst)
        self.go(inst.normal, self.edge_moves(self.block, inst.normal))

    def lower_Call(self, inst: I.Call) -> None:
        if not is_relocate_name(inst.callee_name):
            return super().lower_Call(inst)
        call = token_statepoint(inst.args[0])
        if call is None:
            raise CodegenError("gc.relocate whose token is not a statepoint call")
        sp = self.decoded(call)
        dst = self.place(inst)
        if dst is not None:
            self.move(dst, self.source(self.recorded_slot_value(sp, GCRelocate(inst, sp).derived)))

    # ----------------------------------------------------------------- calls and records

    def call_sequence(self, callee: Value, args: list[Value]) -> None:
        """The target of an indirect call goes to r10 first: the argument moves may overwrite its register."""
        self.preload_target(callee, args)
        super().call_sequence(callee, args)

    def lower_statepoint(self, sp: Statepoint) -> None:
        self.preload_target(sp.target, sp.call_args)
        super().lower_statepoint(sp)

    def preload_target(self, callee: Value, args: list[Value]) -> None:
        """``mov r10, <target>`` for an indirect call (r10 is no argument register, and no move uses it;
        only a constant address more than 2 GiB past its symbol is built in r10, refused as an argument)."""
        if isinstance(strip_casts(callee), Function):
            return
        for arg in args:
            if (
                isinstance(arg, ConstantExpr)
                and arg.opcode == "getelementptr"
                and not -(1 << 31) <= signed(constant_address(arg)[1], 64) < (1 << 31)
            ):
                raise CodegenError(
                    f"an indirect call in @{self.fn.name} passes an address 2 GiB or more past "
                    "its symbol; compile with --no-regalloc"
                )
        self.load("r10", callee)

    def call_instruction(self, callee: Value) -> str:
        if isinstance(strip_casts(callee), Function):
            return super().call_instruction(callee)
        return "call r10"  # loaded by preload_target, before the arguments

    def prepare_args(self, args: list[Value]) -> None:
        """Floating-point arguments to xmm registers, then one parallel move for the rest."""
        places = argument_registers(args)
        moves: list[tuple[str, Source]] = []
        xmm = 0
        for where, arg in zip(places, args):
            if isinstance(where, int):
                moves.append((self.mem(8 * where), self.source(arg)))
            elif where.startswith("xmm"):
                xmm += 1
                kind, what = self.source(arg)
                if kind == "val":
                    super().load("rax", arg)
                    what = "rax"
                self.emit(f"movq {where}, {what}")
            else:
                moves.append((where, self.source(arg)))
        self.parallel_move(moves)
        if any(is_float(a.type) for a in args):
            self.emit(f"mov eax, {xmm}")  # al: vector registers used, for a variadic callee

    def site_registers(self, inst: I.Instruction, needed: int) -> tuple[str, ...]:
        """The scratch registers, and when ``needed`` asks for more, the caller-saved ones no value holds at
        the site."""
        scratch = tuple(r for r in SITE_REGISTERS if r in X86_64.scratch)
        if needed <= len(scratch):
            return scratch
        if not hasattr(self, "_positions"):
            self._positions = {id(i): k for k, i in enumerate(self.fn.instructions())}
        n = self._positions[id(inst)]
        held = self.allocation.registers_held(2 * n, 2 * n + 1)
        return tuple(r for r in SITE_REGISTERS if r in scratch or r in X86_64.caller_saved and r not in held)

    def location(self, v: Value) -> Location:
        """A value in a register is a Register location; a spilled one Indirect [RSP + off]; an alloca
        (under no-op casts) Direct."""
        if value_key(v, getattr(self, "_keys", None))[0] != "const" and not isinstance(fold_cast(v), I.Alloca):
            reg = self.register_of(v)
            if reg is not None:
                return Location(LocationKind.REGISTER, 8, DWARF[reg], 0)
        return super().location(v)


__all__ = ["RegisterLowering"]
