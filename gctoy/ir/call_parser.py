"""Parsing calls and invokes: the callee, its calling convention and attributes, the arguments, operand
bundles, inline assembly and the typed-pointer spellings of older LLVM.

:class:`CallParser` sits between :class:`gctoy.ir.value_parser.ValueParser`, whose helpers it uses, and
:class:`gctoy.ir.instruction_parser.InstructionParser`, which adds the other opcodes.
"""

from __future__ import annotations

from . import instructions as I
from .keywords import TAIL_KINDS, is_calling_convention
from .types import FunctionType, PointerType, Type
from .value_parser import ValueParser
from .values import Attribute, InlineAsm, Value

#: the keywords LLVM allows between ``asm`` and its strings
_ASM_FLAGS = frozenset({"sideeffect", "alignstack", "inteldialect", "unwind"})


class CallParser(ValueParser):
    """``call`` and ``invoke``, and the pieces they share."""

    def call_common(self):
        """``[cc] [ret attrs] T [callee] (args) [fn attrs] [bundles]`` shared by call and invoke."""
        cc = None
        if self.peek()[0] == "WORD" and is_calling_convention(self.peek()[1]):
            cc = self.calling_convention()
        ret_attrs = self.param_attributes()
        ty_tok = self.peek()
        ty = self.type_()
        self.split_pointer_type()
        legacy = False
        if (
            isinstance(ty, PointerType)
            and isinstance(ty.pointee, FunctionType)
            and self.peek()[0] in ("GLOBAL", "LOCAL")
            and self.peek(1)[1] == "("
            and self.legacy_callee(self.peek(), ty)
        ):
            # LLVM before 3.7 spelled the callee's type as a pointer: `call void ()* @f()`.
            ty = ty.pointee
            legacy = True
        callee_tok = self.peek()
        const_callee = callee_tok[0] == "WORD" and callee_tok[1] in (
            "bitcast",
            "addrspacecast",
            "inttoptr",
            "getelementptr",
        )
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
            return self.call_tail(ty_tok, ftype, InlineAsm(callee_ptr_ty, *asm), args, arg_attrs, cc, ret_attrs, legacy)
        callee: Value
        if const_callee:
            callee = self.constant(callee_ptr_ty)
            self.i = end
            self.pins -= 1
            return self.call_tail(ty_tok, ftype, callee, args, arg_attrs, cc, ret_attrs, legacy)
        callee_ptr_ty = self.callee_pointer_type(callee_tok, ftype, callee_ptr_ty)
        self.next()
        callee = (
            self.global_ref(callee_tok, callee_ptr_ty)
            if callee_tok[0] == "GLOBAL"
            else self.local_ref(callee_tok, callee_ptr_ty)
        )
        if isinstance(callee.type, PointerType) and callee.type.pointee is not None and callee.type.pointee != ftype:
            raise self.err(f"'{callee_tok[1]}' has type '{callee.type}', not a pointer to '{ftype}'", callee_tok[2])
        self.i = end
        self.pins -= 1
        return self.call_tail(ty_tok, ftype, callee, args, arg_attrs, cc, ret_attrs, legacy)

    def callee_pointer_type(self, callee_tok, ftype: FunctionType, default: PointerType) -> PointerType:
        """The type a named callee is read with: the one it is known by, if it is known as a pointer."""
        if callee_tok[0] == "GLOBAL":
            gname = self.global_name(callee_tok)
            g = self.module.get_function(gname) or self.module.get_global(gname) or self.pending.get(gname)
            if g is not None and isinstance(g.type, PointerType) and g.type.is_opaque:
                return g.type
            if g is not None and isinstance(g.type, PointerType) and g.type.addrspace != 0:
                return PointerType(ftype, g.type.addrspace)
            if g is None and self.opaque:
                return PointerType(None, 0)
            return default
        lv = self.locals.get(self.local_name(callee_tok)) or self.forward.get(self.local_name(callee_tok))
        if lv is not None and isinstance(lv.type, PointerType):
            return lv.type
        return default

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
            raise self.err(
                f"call has {len(args)} arguments but the callee type '{ftype}' takes {n}"
                + (" or more" if ftype.vararg else ""),
                callee_tok[2],
            )
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
        return dict(
            cc=cc,
            ret_attrs=ret_attrs,
            ftype=ftype,
            callee=callee,
            args=args,
            arg_attrs=arg_attrs,
            fn_attrs=fn_attrs,
            bundles=bundles,
            legacy=legacy,
            ty_tok=ty_tok,
        )

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
        call = I.Call(
            d["ftype"],
            d["callee"],
            d["args"],
            tail=tail,
            arg_attrs=d["arg_attrs"],
            ret_attrs=d["ret_attrs"],
            fn_attrs=d["fn_attrs"],
            cc=d["cc"],
            bundles=d["bundles"],
        )
        call.legacy_pointer_syntax = d["legacy"]
        if d["legacy"]:
            self.note_legacy_call(d["ty_tok"], d["ftype"])
        return call

    def note_legacy_call(self, tok, ftype) -> None:
        """Leave a note that ``call <fnty>* @f(...)`` (before LLVM 3.7) was read as ``call <ret> @f``."""
        line, col = self.src.position(tok[2])
        self.module.notes.append(
            f"{self.src.filename}:{line}:{col}: note: read the pre-3.7 call syntax '{ftype}*' as a call of "
            f"type '{ftype}' (LLVM 3.7 and later spell the function type, not a pointer to it)"
        )

    def inst_invoke(self) -> I.Instruction:
        self.next()
        d = self.call_common()
        self.expect("to")
        normal = self.label()
        self.expect("unwind")
        unwind = self.label()
        inv = I.Invoke(
            d["ftype"],
            d["callee"],
            d["args"],
            normal,
            unwind,
            arg_attrs=d["arg_attrs"],
            ret_attrs=d["ret_attrs"],
            fn_attrs=d["fn_attrs"],
            cc=d["cc"],
            bundles=d["bundles"],
        )
        inv.legacy_pointer_syntax = d["legacy"]
        if d["legacy"]:
            self.note_legacy_call(d["ty_tok"], d["ftype"])
        return inv
