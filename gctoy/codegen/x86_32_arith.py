"""The arithmetic of the x86-32 lowering: 64-bit integers in register pairs on a 32-bit machine.

Every value sits in an 8-byte slot as two dwords (low, high). The operations here load operands
into the pairs ``A`` = (EAX, EDX) and ``B`` = (ECX, EBX), compute, and store the pair::

    add/sub        add low, adc/sbb high          (the carry links the halves)
    and/or/xor     the same operation on each half
    mul            lo*lo (64-bit result) + the two cross products into the high half
    shl/lshr/ashr  shld/shrd for counts below 32, a move of one half (and a fill) from 32 up
    icmp           compare the high halves (signed or unsigned), then the low halves (unsigned);
                   the rest of icmp, select and casts is the shared lowering core's (lowering_core.py)
    sdiv/udiv/...  a call to a runtime helper (``DIV_HELPERS``), as 32-bit compilers do

`Arithmetic32` is the base of the lowering class in x86_32.py, which provides ``store``,
``normalize``, ``sign_extend``, ``push`` and the other frame helpers these methods use (``emit``,
``load`` and ``result`` are `gctoy.codegen.lowering_core.LoweringCore`'s).
"""

from __future__ import annotations

from ..ir import instructions as I
from .frame32 import HELPER_OPCODES, value_bits
from .lowering_core import LoweringCore

#: runtime helpers for the 64-bit divisions (each takes two i64 on the stack, returns i64)
DIV_HELPERS = {op: f"__gctoy_i64_{op}" for op in HELPER_OPCODES}
_UNSIGNED_CC = {
    "eq": "e",
    "ne": "ne",
    "ugt": "a",
    "uge": "ae",
    "ult": "b",
    "ule": "be",
    "sgt": "a",
    "sge": "ae",
    "slt": "b",
    "sle": "be",
}
_HIGH_CC = {"ugt": "a", "uge": "a", "ult": "b", "ule": "b", "sgt": "g", "sge": "g", "slt": "l", "sle": "l"}
_PAIRWISE = {
    "add": ("add", "adc"),
    "sub": ("sub", "sbb"),
    "and": ("and", "and"),
    "or": ("or", "or"),
    "xor": ("xor", "xor"),
}
A = ("eax", "edx")  # (lo, hi)
B = ("ecx", "ebx")


class Arithmetic32(LoweringCore[tuple[str, ...]]):
    """The lowering of integer arithmetic and comparisons on register pairs (the x86-32 lowering's base)."""

    #: bytes of outgoing arguments pushed so far
    pushed: int

    def push(self, operand: str, gc_pointer: bool) -> None:
        """``push`` one outgoing DWORD (the lowering notes where, for the GC info)."""
        raise NotImplementedError

    def after_call(self, call: I.Instruction, depth: int, popped: int, helper: str | None = None) -> None:
        """Note a call site at the return address (the stack back at ``depth`` bytes pushed)."""
        raise NotImplementedError

    def lower_BinaryOp(self, inst: I.BinaryOp) -> None:
        bits = value_bits(inst.type)
        op = inst.opcode
        if op in DIV_HELPERS:
            self.division(inst, bits)
            return
        self.load(A, inst.ops[0])
        self.load(B, inst.ops[1])
        if op in _PAIRWISE:
            lo_op, hi_op = _PAIRWISE[op]
            self.emit(f"{lo_op} eax, ecx")
            self.emit(f"{hi_op} edx, ebx")
        elif op == "mul":
            # (ah:al) * (bh:bl) mod 2^64 = al*bl + ((ah*bl + al*bh) << 32)
            self.emit("mov esi, edx")
            self.emit("imul esi, ecx")
            self.emit("mov edi, ebx")
            self.emit("imul edi, eax")
            self.emit("add esi, edi")
            self.emit("mul ecx")
            self.emit("add edx, esi")
        elif op in ("shl", "lshr", "ashr"):
            self.shift(op, bits)
        else:
            raise self.unsupported(f"'{op}'")
        self.result(inst)

    def shift(self, op: str, bits: int) -> None:
        """A 64-bit shift of edx:eax by cl: the double shift handles counts < 32, then a fix-up."""
        if op == "ashr":
            self.sign_extend(bits, A)
        done = self.fresh("shift")
        if op == "shl":
            self.emit("shld edx, eax, cl")
            self.emit("shl eax, cl")
            self.emit("test cl, 32")
            self.emit(f"je {done}")
            self.emit("mov edx, eax")
            self.emit("xor eax, eax")
        else:
            self.emit("shrd eax, edx, cl")
            self.emit(f"{'sar' if op == 'ashr' else 'shr'} edx, cl")
            self.emit("test cl, 32")
            self.emit(f"je {done}")
            self.emit("mov eax, edx")
            self.emit("sar edx, 31" if op == "ashr" else "xor edx, edx")
        self.define_label(done)

    def division(self, inst: I.BinaryOp, bits: int) -> None:
        """Both operands (sign- or zero-extended to i64) pushed, then the runtime helper."""
        signed = inst.opcode in ("sdiv", "srem")
        start = self.pushed
        for operand in inst.ops:
            self.load(A, operand)
            if signed:
                self.sign_extend(bits, A)
            self.push("edx", False)
            self.push("eax", False)
        helper = DIV_HELPERS[inst.opcode]
        self.callees.append(helper)
        self.emit(f"call {helper}")
        self.after_call(inst, start, 4, helper)
        self.result(inst)

    def set_condition(self, predicate: str) -> None:
        """AL = whether ``A predicate B``: eq/ne on both halves at once, an order on the high halves
        (signed or unsigned) and, when they are equal, on the low halves (unsigned)."""
        if predicate in ("eq", "ne"):
            self.emit("xor eax, ecx")
            self.emit("xor edx, ebx")
            self.emit("or eax, edx")
            self.emit(f"set{_UNSIGNED_CC[predicate]} al")
            return
        high, done = self.fresh("hi"), self.fresh("cmp")
        self.emit("cmp edx, ebx")
        self.emit(f"jne {high}")
        self.emit("cmp eax, ecx")
        self.emit(f"set{_UNSIGNED_CC[predicate]} al")
        self.emit(f"jmp {done}")
        self.define_label(high)
        self.emit(f"set{_HIGH_CC[predicate]} al")
        self.define_label(done)
