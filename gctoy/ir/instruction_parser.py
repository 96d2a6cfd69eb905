"""Parsing instructions: one method per opcode, mixed into the module parser.

The methods rely on the token, type, constant and value helpers of
:class:`gctoy.ir.value_parser.ValueParser` (its ``define_local`` names each result); calls and invokes come
from :class:`gctoy.ir.call_parser.CallParser`.
"""

from __future__ import annotations

from . import instructions as I
from .keywords import TAIL_KINDS, WRAP_FLAGS
from .layout import data_layout, layout_known
from .call_parser import CallParser
from .types import FloatType, VoidType, IntType, PointerType, Type, VectorType
from .values import BasicBlock, ConstantInt, Value
from .atomic_parser import atomic_store, inst_atomicrmw, inst_cmpxchg, inst_fence
from .vector_instruction_parser import gep_pointer_type, inst_extractelement, inst_insertelement, inst_shufflevector

#: the orderings an atomic load may have
LOAD_ORDERINGS = frozenset({"unordered", "monotonic", "acquire", "seq_cst"})


class InstructionParser(CallParser):
    """``%x = opcode operands...`` for every opcode of the subset."""

    def instruction(self) -> I.Instruction:
        self.split_pointer_type()
        tok = self.peek()
        name = None
        name_tok = None
        if tok[0] == "LOCAL" and self.peek(1)[1] == "=":
            name_tok = tok
            name = self.local_name(tok)
            self.skip(2)
        op_tok = self.peek()
        if op_tok[0] != "WORD":
            raise self.err("expected instruction opcode")
        op = op_tok[1]
        handler = _HANDLERS.get(op)
        if handler is None:
            if op in TAIL_KINDS:
                handler = InstructionParser.inst_call
            else:
                raise self.err(f"unsupported instruction '{op}' (not in gctoy's IR subset)")
        inst = handler(self)
        inst.loc = self.src.position(op_tok[2])
        self.instruction_metadata(inst)
        if isinstance(inst.type, VoidType):
            if name_tok is not None:  # set with the name
                raise self.err("instructions returning void cannot have a name", name_tok[2])
        else:
            self.define_local(name, inst, (name_tok or op_tok)[2])
        return inst

    def instruction_metadata(self, inst: I.Instruction) -> None:
        while self.at(",") and self.peek(1)[0] == "METAVAR":
            self.next()
            kind = self.next()[1][1:]
            start = self.peek()[2]
            end = self.skip_metadata()
            inst.metadata.append((kind, self.src.text[start:end]))

    def align_suffix(self, ty: Type) -> int | None:
        """``, align N``; without it the type's ABI alignment, as LLVM gives it when reading."""
        if self.at(",") and self.peek(1)[1] == "align":
            self.skip(2)
            return self.alignment()
        return self.default_align(ty, preferred=False)

    def default_align(self, ty: Type, preferred: bool) -> int | None:
        """The datalayout's alignment of ``ty`` (None while a named struct in it has no body yet)."""
        if not layout_known(ty):
            return None
        layout = data_layout(self.module.header.datalayout)
        return layout.pref_align(ty) if preferred else layout.abi_align(ty)

    def inst_alloca(self) -> I.Instruction:
        self.next()
        ty = self.type_()
        count = None
        align = None
        space = 0
        while self.at(",") and self.peek(1)[0] != "METAVAR":
            self.next()
            if self.accept("align"):
                align = self.alignment()
            elif self.at("addrspace"):
                space = self.addrspace()
            else:
                count = self.typed_value()
        if align is None:
            align = self.default_align(ty, preferred=True)
        inst = I.Alloca(ty, count, align, space)
        if self.opaque:
            inst.type = PointerType(None, space)
        return inst

    def pointer_operand(self) -> Value:
        tok = self.peek()
        v = self.typed_value()
        if not isinstance(v.type, PointerType):
            raise self.err("expected a pointer operand", tok[2])
        return v

    def inst_load(self) -> I.Instruction:
        self.next()
        atomic = self.accept("atomic")
        volatile = self.accept("volatile")
        ty = self.type_()
        self.expect(",")
        tok = self.peek()
        p = self.pointer_operand()
        pty = p.type
        assert isinstance(pty, PointerType)  # checked by pointer_operand
        if pty.pointee is not None and pty.pointee != ty:
            raise self.err("explicit pointee type doesn't match operand's pointee type", tok[2])
        if not atomic:
            return I.Load(ty, p, self.align_suffix(ty), volatile)
        scope = self.syncscope()
        ordering = self.peek()[1]
        if ordering in ("release", "acq_rel"):  # LLVM names both "Release" here
            raise self.err("atomic load cannot use Release ordering", tok[2])
        if ordering not in LOAD_ORDERINGS:
            raise self.err("Expected ordering on atomic instruction")
        self.next()
        if not (self.at(",") and self.peek(1)[1] == "align"):
            raise self.err("atomic load must have explicit non-zero alignment", tok[2])
        return I.Load(ty, p, self.align_suffix(ty), volatile, ordering=ordering, syncscope=scope)

    def syncscope(self) -> str | None:
        """An atomic instruction's optional ``syncscope("S")``: ``S``, or None."""
        if not self.accept("syncscope"):
            return None
        self.expect("(")
        scope = self.string()
        self.expect(")")
        return scope

    def inst_store(self) -> I.Instruction:
        self.next()
        atomic = self.accept("atomic")
        volatile = self.accept("volatile")
        val_at = self.peek()[2]
        v = self.typed_value()
        self.expect(",")
        tok = self.peek()
        p = self.pointer_operand()
        pty = p.type
        assert isinstance(pty, PointerType)  # checked by pointer_operand
        if pty.pointee is not None and pty.pointee != v.type:
            raise self.err("stored value and pointer type do not match", tok[2])
        if atomic:
            return atomic_store(self, v, p, volatile, val_at)
        return I.Store(v, p, self.align_suffix(v.type), volatile)

    def inst_gep(self) -> I.Instruction:
        self.next()
        inbounds = self.accept("inbounds")
        src = self.type_()
        self.expect(",")
        tok = self.peek()
        p = self.typed_value()
        pty = gep_pointer_type(p.type)
        if pty is None:
            raise self.err("expected a pointer or a vector of pointers", tok[2])
        if pty.pointee is not None and pty.pointee != src:
            raise self.err("explicit pointee type doesn't match operand's pointee type", tok[2])
        idx = []
        while self.at(",") and self.peek(1)[0] != "METAVAR":
            self.next()
            t = self.peek()
            v = self.typed_value()
            if not isinstance(v.type, (IntType, VectorType)):
                raise self.err("getelementptr index must be an integer", t[2])
            idx.append(v)
        lanes = {v.type.count for v in (p, *idx) if isinstance(v.type, VectorType)}
        if len(lanes) > 1:
            raise self.err("getelementptr vector operands must have the same number of elements", tok[2])
        try:
            return I.GetElementPtr(src, p, idx, inbounds)
        except ValueError as e:
            raise self.err(str(e), tok[2]) from None

    def inst_cast(self) -> I.Instruction:
        op = self.next()
        v = self.typed_value()
        self.expect("to")
        to = self.type_()
        _check_cast(self, op[1], v.type, to, op[2])
        return I.Cast(op[1], v, to)

    def inst_binary(self) -> I.Instruction:
        op = self.next()
        flags = []
        allowed = I.FAST_MATH_FLAGS if op[1] in I.FLOAT_OPS else WRAP_FLAGS
        while self.peek()[1] in allowed:
            flags.append(self.next()[1])
        ty = self.type_()
        want = FloatType if op[1] in I.FLOAT_OPS else IntType
        if not isinstance(ty, (want, VectorType)):
            kind = "floating point" if want is FloatType else "integer"
            raise self.err(f"'{op[1]}' requires {kind} operands, not '{ty}'", op[2])
        a = self.value(ty)
        self.expect(",")
        b = self.value(ty)
        return I.BinaryOp(op[1], a, b, tuple(flags))

    def inst_icmp(self) -> I.Instruction:
        self.next()
        pred_tok = self.expect_kind("WORD", "icmp predicate")
        if pred_tok[1] not in I.ICMP_PREDICATES:
            raise self.err(f"unknown icmp predicate '{pred_tok[1]}'", pred_tok[2])
        ty = self.type_()
        a = self.value(ty)
        self.expect(",")
        b = self.value(ty)
        return I.ICmp(pred_tok[1], a, b)

    def inst_fcmp(self) -> I.Instruction:
        self.next()
        flags = []
        while self.peek()[1] in I.FAST_MATH_FLAGS:
            flags.append(self.next()[1])
        pred_tok = self.expect_kind("WORD", "fcmp predicate")
        if pred_tok[1] not in I.FCMP_PREDICATES:
            raise self.err(f"unknown fcmp predicate '{pred_tok[1]}'", pred_tok[2])
        ty = self.type_()
        if not isinstance(ty, FloatType):
            raise self.err(f"fcmp requires floating point operands, not '{ty}'", pred_tok[2])
        a = self.value(ty)
        self.expect(",")
        b = self.value(ty)
        return I.FCmp(pred_tok[1], a, b, tuple(flags))

    def inst_freeze(self) -> I.Instruction:
        self.next()
        tok = self.peek()
        v = self.typed_value()
        if not v.type.is_first_class or I.is_token_type(v.type):
            raise self.err(f"invalid type for freeze: '{v.type}'", tok[2])
        return I.Freeze(v)

    def inst_fneg(self) -> I.Instruction:
        self.next()
        flags = []
        while self.peek()[1] in I.FAST_MATH_FLAGS:
            flags.append(self.next()[1])
        tok = self.peek()
        v = self.typed_value()
        if not isinstance(v.type, FloatType):
            raise self.err("fneg requires a floating point operand", tok[2])
        return I.FNeg(v, tuple(flags))

    def inst_select(self) -> I.Instruction:
        self.next()
        c = self.typed_value()
        self.expect(",")
        tok = self.peek()
        a = self.typed_value()
        self.expect(",")
        b = self.typed_value()
        if a.type != b.type:
            raise self.err("select values must have the same type", tok[2])
        return I.Select(c, a, b)

    def inst_phi(self) -> I.Instruction:
        self.next()
        ty = self.type_()
        phi = I.Phi(ty)
        while True:
            self.expect("[")
            v = self.value(ty)
            self.expect(",")
            btok = self.expect_kind("LOCAL", "basic block name")
            bname = self.local_name(btok)
            b = self.locals.get(bname)
            if b is None:
                b = self.block_ref(bname, btok[2])
            elif not isinstance(b, BasicBlock):
                raise self.err(f"'%{bname}' is not a basic block", btok[2])
            self.expect("]")
            phi.add_incoming(v, b)
            if not (self.at(",") and self.peek(1)[1] == "["):
                return phi
            self.next()

    def inst_br(self) -> I.Instruction:
        self.next()
        if self.at("label"):
            return I.Br(self.label())
        c = self.typed_value()
        self.expect(",")
        t = self.label()
        self.expect(",")
        f = self.label()
        return I.Br(t, c, f)

    def inst_switch(self) -> I.Instruction:
        self.next()
        v = self.typed_value()
        self.expect(",")
        default = self.label()
        self.expect("[")
        cases = []
        while not self.accept("]"):
            ct = self.peek()
            c = self.typed_value()
            if not isinstance(c, ConstantInt):
                raise self.err("case value must be a constant integer", ct[2])
            self.expect(",")
            cases.append((c, self.label()))
        return I.Switch(v, default, cases)

    def inst_ret(self) -> I.Instruction:
        self.next()
        if self.at("void") and self.peek(1)[1] != "(":
            self.next()
            return I.Ret()
        return I.Ret(self.typed_value())

    def inst_unreachable(self) -> I.Instruction:
        self.next()
        return I.Unreachable()

    def inst_resume(self) -> I.Instruction:
        self.next()
        return I.Resume(self.typed_value())

    def inst_landingpad(self) -> I.Instruction:
        self.next()
        ty = self.type_()
        cleanup = self.accept("cleanup")
        clauses = []
        while self.peek()[1] in ("catch", "filter"):
            k = self.next()[1]
            clauses.append((k, self.typed_value()))
        if not cleanup and not clauses:
            raise self.err("landingpad needs 'cleanup' or at least one clause")
        return I.LandingPad(ty, cleanup, clauses)

    def inst_extractvalue(self) -> I.Instruction:
        op = self.next()
        agg = self.typed_value()
        idx = self.index_list()
        try:
            ty = I.aggregate_member(agg.type, idx)
        except ValueError as e:
            raise self.err(str(e), op[2]) from None
        return I.ExtractValue(agg, idx, ty)

    def inst_insertvalue(self) -> I.Instruction:
        op = self.next()
        agg = self.typed_value()
        self.expect(",")
        v = self.typed_value()
        idx = self.index_list()
        try:
            member = I.aggregate_member(agg.type, idx)
        except ValueError as e:
            raise self.err(str(e), op[2]) from None
        if member != v.type:
            raise self.err("insertvalue operand and field disagree in type", op[2])
        return I.InsertValue(agg, v, idx)

    def index_list(self) -> tuple[int, ...]:
        out = []
        while self.at(",") and self.peek(1)[0] == "INT":
            self.next()
            out.append(self.int_literal())
        if not out:
            raise self.err("expected index")
        return tuple(out)


def _check_cast(p: InstructionParser, op: str, src: Type, dst: Type, offset: int) -> None:
    ok = True
    if op == "bitcast":
        if isinstance(src, PointerType) != isinstance(dst, PointerType):
            ok = False
        elif isinstance(src, PointerType) and isinstance(dst, PointerType) and src.addrspace != dst.addrspace:
            raise p.err(
                f"invalid cast opcode for cast from '{src}' to '{dst}' (use addrspacecast to change address space)",
                offset,
            )
    elif op == "addrspacecast":
        ok = isinstance(src, PointerType) and isinstance(dst, PointerType) and src.addrspace != dst.addrspace
    elif op == "ptrtoint":
        ok = isinstance(src, PointerType) and isinstance(dst, IntType)
    elif op == "inttoptr":
        ok = isinstance(src, IntType) and isinstance(dst, PointerType)
    elif op in ("fptosi", "fptoui"):
        ok = isinstance(src, FloatType) and isinstance(dst, IntType)
    elif op in ("sitofp", "uitofp"):
        ok = isinstance(src, IntType) and isinstance(dst, FloatType)
    elif op in ("fpext", "fptrunc"):
        ok = isinstance(src, FloatType) and isinstance(dst, FloatType) and src != dst
    elif op == "trunc":
        ok = isinstance(src, IntType) and isinstance(dst, IntType) and src.bits > dst.bits
    elif op in ("zext", "sext"):
        ok = isinstance(src, IntType) and isinstance(dst, IntType) and src.bits < dst.bits
    if not ok:
        raise p.err(f"invalid cast opcode for cast from '{src}' to '{dst}'", offset)


_HANDLERS = {
    "alloca": InstructionParser.inst_alloca,
    "load": InstructionParser.inst_load,
    "atomicrmw": inst_atomicrmw,
    "cmpxchg": inst_cmpxchg,
    "fence": inst_fence,
    "store": InstructionParser.inst_store,
    "getelementptr": InstructionParser.inst_gep,
    "icmp": InstructionParser.inst_icmp,
    "select": InstructionParser.inst_select,
    "fcmp": InstructionParser.inst_fcmp,
    "fneg": InstructionParser.inst_fneg,
    "freeze": InstructionParser.inst_freeze,
    "phi": InstructionParser.inst_phi,
    "br": InstructionParser.inst_br,
    "switch": InstructionParser.inst_switch,
    "ret": InstructionParser.inst_ret,
    "unreachable": InstructionParser.inst_unreachable,
    "resume": InstructionParser.inst_resume,
    "landingpad": InstructionParser.inst_landingpad,
    "extractvalue": InstructionParser.inst_extractvalue,
    "insertvalue": InstructionParser.inst_insertvalue,
    "call": InstructionParser.inst_call,
    "invoke": InstructionParser.inst_invoke,
    "extractelement": inst_extractelement,
    "insertelement": inst_insertelement,
    "shufflevector": inst_shufflevector,
}
_HANDLERS.update({op: InstructionParser.inst_cast for op in I.CAST_OPS})
_HANDLERS.update({op: InstructionParser.inst_binary for op in (*I.BINARY_OPS, *I.FLOAT_OPS)})
