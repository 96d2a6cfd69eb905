"""Parsing instructions: one method per opcode, mixed into the module parser.

The methods rely on the token, type, constant and value helpers of
:class:`gctoy.ir.value_parser.ValueParser` (its ``define_local`` names each result).
"""
from __future__ import annotations

from . import instructions as I
from .keywords import CALLING_CONVENTIONS, TAIL_KINDS, WRAP_FLAGS
from .layout import data_layout, layout_known
from .value_parser import ValueParser
from .types import VOID, FloatType, FunctionType, IntType, PointerType, Type, VectorType
from .values import Attribute, BasicBlock, ConstantInt, InlineAsm, Value
from .vector_instruction_parser import (gep_pointer_type, inst_extractelement, inst_insertelement,
                                        inst_shufflevector)

#: the keywords LLVM allows between ``asm`` and its strings
_ASM_FLAGS = frozenset({"sideeffect", "alignstack", "inteldialect", "unwind"})


class InstructionParser(ValueParser):
    """``%x = opcode operands...`` for every opcode of the subset."""
    def instruction(self) -> I.Instruction:
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
        if inst.type == VOID:
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
        volatile = self.accept("volatile")
        ty = self.type_()
        self.expect(",")
        tok = self.peek()
        p = self.pointer_operand()
        pty = p.type
        assert isinstance(pty, PointerType)  # checked by pointer_operand
        if pty.pointee is not None and pty.pointee != ty:
            raise self.err("explicit pointee type doesn't match operand's pointee type", tok[2])
        return I.Load(ty, p, self.align_suffix(ty), volatile)

    def inst_store(self) -> I.Instruction:
        self.next()
        volatile = self.accept("volatile")
        v = self.typed_value()
        self.expect(",")
        tok = self.peek()
        p = self.pointer_operand()
        pty = p.type
        assert isinstance(pty, PointerType)  # checked by pointer_operand
        if pty.pointee is not None and pty.pointee != v.type:
            raise self.err("stored value and pointer type do not match", tok[2])
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

    def call_common(self):
        """``[cc] [ret attrs] T [callee] (args) [fn attrs] [bundles]`` shared by call and invoke."""
        cc = None
        if self.peek()[0] == "WORD" and (self.peek()[1] in CALLING_CONVENTIONS or self.peek()[1] == "cc"):
            cc = self.calling_convention()
        ret_attrs = self.param_attributes()
        ty_tok = self.peek()
        ty = self.type_()
        legacy = False
        if isinstance(ty, PointerType) and isinstance(ty.pointee, FunctionType) and self.peek()[0] in (
                "GLOBAL", "LOCAL") and self.peek(1)[1] == "(" and self.legacy_callee(self.peek(), ty):
            # LLVM before 3.7 spelled the callee's type as a pointer: `call void ()* @f()`.
            ty = ty.pointee
            legacy = True
        callee_tok = self.peek()
        const_callee = callee_tok[0] == "WORD" and callee_tok[1] in ("bitcast", "addrspacecast", "inttoptr",
                                                                      "getelementptr")
        is_asm = callee_tok[0] == "WORD" and callee_tok[1] == "asm"
        if callee_tok[0] not in ("GLOBAL", "LOCAL") and not const_callee and not is_asm:
            raise self.err("expected a callee (a function name or a pointer value)")
        # Parse the arguments first so the short form's function type can be built.
        save = self.i
        self.pins += 1  # the callee is parsed after the arguments: keep their tokens
        self.next()
        asm = self.inline_asm_parts() if is_asm else None
        if const_callee:
            self.accept("inbounds")
            self.skip_balanced("(", ")")
        ftype, args, arg_attrs = self.call_arguments(ty, callee_tok)
        # the callee, typed as a pointer to the function type
        end = self.i
        self.i = save
        callee_ptr_ty = PointerType(None if self.opaque else ftype, 0)
        if asm is not None:
            self.i = end
            self.pins -= 1
            return self.call_tail(ty_tok, ftype, InlineAsm(callee_ptr_ty, *asm), args, arg_attrs, cc, ret_attrs,
                                  legacy)
        callee: Value
        if const_callee:
            callee = self.constant(callee_ptr_ty)
            self.i = end
            self.pins -= 1
            return self.call_tail(ty_tok, ftype, callee, args, arg_attrs, cc, ret_attrs, legacy)
        if callee_tok[0] == "GLOBAL":
            gname = self.global_name(callee_tok)
            g = self.module.get_function(gname) or self.module.get_global(gname) or self.pending.get(gname)
            if g is not None and isinstance(g.type, PointerType) and g.type.is_opaque:
                callee_ptr_ty = g.type
            elif g is not None and isinstance(g.type, PointerType) and g.type.addrspace != 0:
                callee_ptr_ty = PointerType(ftype, g.type.addrspace)
            elif g is None and self.opaque:
                callee_ptr_ty = PointerType(None, 0)
        else:
            lv = self.locals.get(self.local_name(callee_tok)) or self.forward.get(self.local_name(callee_tok))
            if lv is not None and isinstance(lv.type, PointerType):
                callee_ptr_ty = lv.type
        self.next()
        callee = (self.global_ref(callee_tok, callee_ptr_ty) if callee_tok[0] == "GLOBAL"
                  else self.local_ref(callee_tok, callee_ptr_ty))
        if isinstance(callee.type, PointerType) and callee.type.pointee is not None \
                and callee.type.pointee != ftype:
            raise self.err(f"'{callee_tok[1]}' has type '{callee.type}', not a pointer to '{ftype}'", callee_tok[2])
        self.i = end
        self.pins -= 1
        return self.call_tail(ty_tok, ftype, callee, args, arg_attrs, cc, ret_attrs, legacy)

    def call_arguments(self, ty: Type, callee_tok) -> tuple[FunctionType, list[Value], list[tuple[Attribute, ...]]]:
        """``(args)`` of a call: the function type (``ty`` itself, or built from the return type and the
        arguments in the short form), the arguments and their attributes, checked against the type."""
        self.expect("(")
        args: list[Value] = []
        arg_attrs: list[tuple[Attribute, ...]] = []
        if not self.accept(")"):
            while True:
                aty = self.type_()
                attrs = self.param_attributes()
                args.append(self.value(aty))
                arg_attrs.append(attrs)
                if self.accept(")"):
                    break
                self.expect(",")
        ftype = ty if isinstance(ty, FunctionType) else FunctionType(ty, tuple(a.type for a in args), False)
        n = len(ftype.params)
        if len(args) < n or (len(args) > n and not ftype.vararg):
            raise self.err(f"call has {len(args)} arguments but the callee type '{ftype}' takes {n}"
                           + (" or more" if ftype.vararg else ""), callee_tok[2])
        for k, (a, p) in enumerate(zip(args, ftype.params)):
            if a.type != p:
                raise self.err(f"argument {k} has type '{a.type}' but the callee expects '{p}'", callee_tok[2])
        return ftype, args, arg_attrs

    def inline_asm_parts(self) -> tuple[str, str, tuple[str, ...]]:
        """After ``asm``: its keywords, then the code and constraint strings (kept as written)."""
        flags = []
        while self.peek()[0] == "WORD" and self.peek()[1] in _ASM_FLAGS:
            flags.append(self.next()[1])
        code = self.expect_kind("STRING", "inline asm string")[1][1:-1]
        self.expect(",")
        constraints = self.expect_kind("STRING", "inline asm constraint string")[1][1:-1]
        return code, constraints, tuple(flags)

    def call_tail(self, ty_tok, ftype, callee, args, arg_attrs, cc, ret_attrs, legacy) -> dict:
        """Function attributes and operand bundles after a call's argument list."""
        fn_attrs = self.attributes()
        bundles = []
        if self.accept("["):
            while True:
                tag = self.string()
                self.expect("(")
                inputs: list[Value] = []
                if not self.accept(")"):
                    while True:
                        inputs.append(self.typed_value())
                        if self.accept(")"):
                            break
                        self.expect(",")
                bundles.append(I.OperandBundle(tag, inputs))
                if self.accept("]"):
                    break
                self.expect(",")
        return dict(cc=cc, ret_attrs=ret_attrs, ftype=ftype, callee=callee, args=args, arg_attrs=arg_attrs,
                    fn_attrs=fn_attrs, bundles=bundles, legacy=legacy, ty_tok=ty_tok)

    def legacy_callee(self, tok, ty: PointerType) -> bool:
        """Does ``call <fnty>* @f(...)`` mean the pre-3.7 syntax (callee type) rather than a return type?"""
        if tok[0] == "GLOBAL":
            g = self.module.get_function(self.global_name(tok))
            if g is not None:
                return g.ftype == ty.pointee
            pending = self.pending.get(self.global_name(tok))
            if pending is not None and isinstance(pending.type, PointerType):
                return pending.type == ty
            # not declared yet: an intrinsic never returns a function pointer, so this is the old syntax
            return self.implicit or self.global_name(tok).startswith("llvm.")
        v = self.locals.get(self.local_name(tok))
        return v is not None and v.type == ty

    def inst_call(self) -> I.Instruction:
        tail = None
        if self.peek()[1] in TAIL_KINDS:
            tail = self.next()[1]
        self.expect("call")
        while self.peek()[1] in I.FAST_MATH_FLAGS:
            self.next()
        d = self.call_common()
        call = I.Call(d["ftype"], d["callee"], d["args"], tail=tail, arg_attrs=d["arg_attrs"],
                      ret_attrs=d["ret_attrs"], fn_attrs=d["fn_attrs"], cc=d["cc"], bundles=d["bundles"])
        call.legacy_pointer_syntax = d["legacy"]
        if d["legacy"]:
            self.note_legacy_call(d["ty_tok"], d["ftype"])
        return call

    def note_legacy_call(self, tok, ftype) -> None:
        """Leave a note that ``call <fnty>* @f(...)`` (before LLVM 3.7) was read as ``call <ret> @f``."""
        line, col = self.src.position(tok[2])
        self.module.notes.append(
            f"{self.src.filename}:{line}:{col}: note: read the pre-3.7 call syntax '{ftype}*' as a call of "
            f"type '{ftype}' (LLVM 3.7 and later spell the function type, not a pointer to it)")

    def inst_invoke(self) -> I.Instruction:
        self.next()
        d = self.call_common()
        self.expect("to")
        normal = self.label()
        self.expect("unwind")
        unwind = self.label()
        inv = I.Invoke(d["ftype"], d["callee"], d["args"], normal, unwind, arg_attrs=d["arg_attrs"],
                       ret_attrs=d["ret_attrs"], fn_attrs=d["fn_attrs"], cc=d["cc"], bundles=d["bundles"])
        inv.legacy_pointer_syntax = d["legacy"]
        if d["legacy"]:
            self.note_legacy_call(d["ty_tok"], d["ftype"])
        return inv


def _check_cast(p: InstructionParser, op: str, src: Type, dst: Type, offset: int) -> None:
    ok = True
    if op == "bitcast":
        if isinstance(src, PointerType) != isinstance(dst, PointerType):
            ok = False
        elif isinstance(src, PointerType) and isinstance(dst, PointerType) and src.addrspace != dst.addrspace:
            raise p.err("invalid cast opcode for cast from "
                        f"'{src}' to '{dst}' (use addrspacecast to change address space)", offset)
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
