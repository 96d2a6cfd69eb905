"""The arithmetic of the x86-32 lowering: 64-bit integers in register pairs on a 32-bit machine.

Every value sits in an 8-byte slot as two dwords (low, high). The operations here load operands
into the pairs ``A`` = (EAX, EDX) and ``B`` = (ECX, EBX), compute, and store the pair::

    add/sub        add low, adc/sbb high          (the carry links the halves)
    and/or/xor     the same operation on each half
    mul            lo*lo (64-bit result) + the two cross products into the high half
    shl/lshr/ashr  shld/shrd for counts below 32, a move of one half (and a fill) from 32 up
    icmp           compare the high halves (signed or unsigned), then the low halves (unsigned)
    sdiv/udiv/...  a call to a runtime helper (``DIV_HELPERS``), as 32-bit compilers do

`Arithmetic32` is a mixin of the lowering class in x86_32.py, which provides ``emit``, ``load``,
``store``, ``normalize``, ``sign_extend`` and the other frame helpers these methods use.
"""

from __future__ import annotations

from ..ir import instructions as I
from .frame import CodegenError
from .frame32 import HELPER_OPCODES, value_bits

#: runtime helpers for the 64-bit divisions (each takes two i64 on the stack, returns i64)
DIV_HELPERS = {op: f"__gctoy_i64_{op}" for op in HELPER_OPCODES}
_UNSIGNED_CC = {"eq": "e", "ne": "ne", "ugt": "a", "uge": "ae", "ult": "b", "ule": "be",
                "sgt": "a", "sge": "ae", "slt": "b", "sle": "be"}
_HIGH_CC = {"ugt": "a", "uge": "a", "ult": "b", "ule": "b", "sgt": "g", "sge": "g", "slt": "l", "sle": "l"}
_PAIRWISE = {"add": ("add", "adc"), "sub": ("sub", "sbb"), "and": ("and", "and"),
             "or": ("or", "or"), "xor": ("xor", "xor")}
A = ("eax", "edx")  # (lo, hi)
B = ("ecx", "ebx")


class Arithmetic32:
    """The lowering of integer arithmetic, comparisons, selects and casts (a mixin of the x86-32 lowering)."""

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
            raise CodegenError(f"'{op}' is not supported by the x86-32 code generator")
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
        self.label(done)

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

    def lower_ICmp(self, inst: I.ICmp) -> None:
        bits = value_bits(inst.ops[0].type)
        pred = inst.predicate
        self.load(A, inst.ops[0])
        self.load(B, inst.ops[1])
        if pred in ("eq", "ne"):
            self.emit("xor eax, ecx")
            self.emit("xor edx, ebx")
            self.emit("or eax, edx")
            self.emit(f"set{_UNSIGNED_CC[pred]} al")
        else:
            if pred.startswith("s"):
                self.sign_extend(bits, A)
                self.sign_extend(bits, B)
            high, done = self.fresh("hi"), self.fresh("cmp")
            self.emit("cmp edx, ebx")
            self.emit(f"jne {high}")
            self.emit("cmp eax, ecx")
            self.emit(f"set{_UNSIGNED_CC[pred]} al")
            self.emit(f"jmp {done}")
            self.label(high)
            self.emit(f"set{_HIGH_CC[pred]} al")
            self.label(done)
        self.emit("movzx eax, al")
        self.emit("xor edx, edx")
        self.store(inst)

    def lower_Select(self, inst: I.Select) -> None:
        self.load(A, inst.true_value)
        self.load(B, inst.false_value)
        self.load_lo("esi", inst.condition)
        self.emit("test esi, esi")
        self.emit("cmove eax, ecx")
        self.emit("cmove edx, ebx")
        self.result(inst)

    def lower_Cast(self, inst: I.Cast) -> None:
        if inst.opcode not in ("bitcast", "addrspacecast", "ptrtoint", "inttoptr", "trunc", "zext", "sext"):
            raise CodegenError(f"cast '{inst.opcode}' is not supported by the x86-32 code generator")
        self.load(A, inst.value)
        if inst.opcode == "sext":
            self.sign_extend(value_bits(inst.value.type), A)
        self.result(inst)
