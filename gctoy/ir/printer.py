"""Printing a module as LLVM IR text, with typed pointers (LLVM <= 14) or opaque ``ptr`` (LLVM >= 15).

Unnamed values get slot numbers in order (arguments, then each block and each
unnamed result), exactly the numbering the parser expects back.
"""

from __future__ import annotations

from ..errors import GCToyError, VerifyError
from . import instructions as I
from .intrinsics import RELOCATE, STATEPOINT, base_name, intrinsic_name
from .attr_order import AttributeSlots, render_in_group, sort_attrs
from .layout import data_layout
from .module_base import ModuleBase
from .names import escape_bytes, escape_string, quote_name
from .statepoint import GCRelocate, Statepoint, statepoint_unwind_map, token_statepoint
from .types import ArrayType, FunctionType, IntType, NamedStructType, PointerType, StructType, Type, VectorType, VOID
from .values import (
    Argument,
    Attribute,
    BasicBlock,
    ConstantAggregate,
    ConstantExpr,
    ConstantFloat,
    ConstantInt,
    ConstantNull,
    ConstantString,
    Function,
    GlobalValue,
    GlobalVariable,
    InlineAsm,
    MetadataOperand,
    Poison,
    TokenNone,
    Undef,
    Value,
    ZeroInitializer,
    render_attrs,
    resolve_attrs,
    set_value_describer,
)


def print_module(module: ModuleBase, *, opaque: bool = False, comments: bool = False) -> str:
    """The module as IR text (``opaque`` selects ``ptr`` spelling, ``comments`` keeps source comments).

    Typed printing of a module written with opaque pointers is refused: the
    pointee types it would need are not in the module.
    """
    if not opaque and uses_opaque_pointers(module):
        raise GCToyError(
            "this module uses opaque pointers ('ptr'); it has no pointee types to print it "
            "with typed pointers (print it with opaque pointers instead)"
        )
    return _Printer(module, opaque, comments).module()


def uses_opaque_pointers(module: ModuleBase) -> bool:
    """True if the module was written with ``ptr`` (its globals' and functions' types are opaque)."""
    for g in [*module.globals, *module.functions]:
        if isinstance(g.type, PointerType) and g.type.is_opaque:
            return True
    for nt in module.types.values():
        for e in nt.body.elements or ():
            if isinstance(e, PointerType) and e.is_opaque:
                return True
    return False


def print_function(fn: Function, *, opaque: bool = False) -> str:
    """One function as IR text."""
    mod = getattr(fn, "module", None) or ModuleBase()
    return _Printer(mod, opaque, False).function(fn)


def print_instruction(inst: I.Instruction, *, opaque: bool = False) -> str:
    """One instruction as IR text (numbered names relative to its function)."""
    fn = inst.function
    mod = getattr(fn, "module", None) or ModuleBase()
    p = _Printer(mod, opaque, False)
    if fn is not None:
        p.number(fn)
    return p.inst(inst).strip()


def print_operand(value: Value, *, opaque: bool = False, typed: bool = True) -> str:
    """A value as it appears as a typed operand (``i8 addrspace(1)* %obj``; ``%obj`` if not ``typed``)."""
    inst = value if isinstance(value, I.Instruction) else getattr(value, "parent", None)
    fn = (
        inst.function
        if isinstance(inst, I.Instruction)
        else (value.parent if isinstance(value, (Argument, BasicBlock)) else None)
    )
    mod = getattr(fn, "module", None) or ModuleBase()
    p = _Printer(mod, opaque, False)
    if fn is not None:
        p.number(fn)
    return p.typed(value) if typed else p.ref(value)


class _Printer:
    def __init__(self, module: ModuleBase, opaque: bool, comments: bool):
        self.m = module
        self.opaque = opaque
        self.comments = comments
        self.slots: dict[int, int] = {}
        self.global_slots: dict[int, int] = {}
        self._unwinds: dict = {}
        self._unwinds_for = None
        self._statepoints: dict[int, Statepoint] = {}
        self.layout = data_layout(module.header.datalayout)
        #: the module's function-attribute groups while a whole module is printed (else None)
        self.groups: AttributeSlots | None = None
        n = 0
        for g in [*module.globals, *module.functions]:
            if g.name is None:
                self.global_slots[id(g)] = n
                n += 1

    def t(self, ty: Type) -> str:
        return ty.render(self.opaque)

    # -- names ------------------------------------------------------------------
    def number(self, fn: Function) -> None:
        self.slots = {}
        n = 0
        for a in fn.args:
            if a.name is None:
                self.slots[id(a)] = n
                n += 1
        for b in fn.blocks:
            if b.name is None:
                self.slots[id(b)] = n
                n += 1
            for inst in b.instructions:
                if inst.name is None and inst.type != VOID:
                    self.slots[id(inst)] = n
                    n += 1

    def local(self, v: Value) -> str:
        if v.name is not None:
            return "%" + quote_name(v.name)
        slot = self.slots.get(id(v))
        if slot is None:
            return "%<unnumbered>"
        return f"%{slot}"

    def gname(self, g: GlobalValue) -> str:
        if g.name is None:
            return f"@{self.global_slots.get(id(g), 0)}"
        name = g.name
        if self.opaque and isinstance(g, Function) and base_name(name):
            name = intrinsic_name(name, g.ftype, True)
        return "@" + quote_name(name)

    def ref(self, v: Value) -> str:
        """A value as an operand (without its type)."""
        if isinstance(v, GlobalValue):
            return self.gname(v)
        if isinstance(v, (Argument, I.Instruction, BasicBlock)):
            return self.local(v)
        if isinstance(v, ConstantInt):
            if isinstance(v.type, IntType) and v.type.bits == 1:
                return "true" if v.value else "false"
            return str(v.value)
        if isinstance(v, ConstantFloat):
            return v.text
        if isinstance(v, InlineAsm):
            return " ".join(("asm", *v.flags, f'"{v.asm}", "{v.constraints}"'))
        if isinstance(v, ConstantNull):
            return "null"
        if isinstance(v, Undef):
            return "undef"
        if isinstance(v, Poison):
            return "poison"
        if isinstance(v, ZeroInitializer):
            return "zeroinitializer"
        if isinstance(v, TokenNone):
            return "none"
        if isinstance(v, ConstantString):
            return f'c"{escape_bytes(v.data)}"'
        if isinstance(v, ConstantAggregate):
            inner = ", ".join(self.typed(e) for e in v.elements)
            ty = v.type
            if isinstance(ty, ArrayType):
                return f"[{inner}]"
            if isinstance(ty, VectorType):
                return f"<{inner}>"
            assert isinstance(ty, (StructType, NamedStructType))  # the last kind of aggregate: a struct
            packed = ty.packed if isinstance(ty, StructType) else bool(ty.body and ty.body.packed)
            if not v.elements:
                return "<{}>" if packed else "{}"
            return f"<{{ {inner} }}>" if packed else f"{{ {inner} }}"
        if isinstance(v, ConstantExpr):
            if v.opcode == "getelementptr":
                ib = " inbounds" if v.inbounds else ""
                ops = ", ".join(self.typed(o) for o in v.operands)
                assert v.source_type is not None  # set on every getelementptr expression
                return f"getelementptr{ib} ({self.t(v.source_type)}, {ops})"
            return f"{v.opcode} ({self.typed(v.operands[0])} to {self.t(v.type)})"
        if isinstance(v, MetadataOperand):
            return v.text
        return "%" + quote_name(v.name) if v.name is not None else "%<unnamed>"

    def typed(self, v: Value) -> str:
        return f"{self.t(v.type)} {self.ref(v)}"

    def attrs(self, attrs) -> str:
        """Parameter or return attributes, in LLVM's order."""
        return render_attrs(sort_attrs(attrs, self.opaque), self.opaque)

    def fn_attrs(self, attrs) -> str:
        """Function attributes: ``#N`` when a module is printed, else the attributes themselves."""
        if self.groups is None:
            return render_attrs(attrs, self.opaque)
        n = self.groups.slot(resolve_attrs(attrs, self.m))
        return "" if n is None else f"#{n}"

    # -- module ---------------------------------------------------------------------
    def module(self) -> str:
        m = self.m
        out: list[str] = []
        h = m.header
        if self.comments:
            out += h.comments
        if h.source_filename is not None:
            out.append(f'source_filename = "{escape_string(h.source_filename)}"')
        if h.datalayout is not None:
            out.append(f'target datalayout = "{escape_string(h.datalayout)}"')
        if h.triple is not None:
            out.append(f'target triple = "{escape_string(h.triple)}"')
        if m.types:
            out.append("")
            for nt in m.types.values():
                out.append(f"%{quote_name(nt.name)} = type {nt.body.render(self.opaque)}")
        if m.globals:
            out.append("")
            for g in m.globals:
                out += self.leading(g)
                out.append(self.global_var(g) + self.trailing(g))
        printed: set[str] = set()
        shown = []
        for f in m.functions:
            key = self.gname(f)
            if f.is_declaration:
                if key in printed:
                    continue
            printed.add(key)
            shown.append(f)
        self.groups = AttributeSlots(self.opaque)
        for f in shown:
            self.groups.slot(resolve_attrs(f.fn_attrs, m))
        for f in shown:
            out.append("")
            out += self.leading(f)
            out.append(self.function(f))
        if self.groups.sets:
            out.append("")
            for n, attrs in enumerate(self.groups.sets):
                body = " ".join(render_in_group(a, self.opaque) for a in attrs)
                out.append(f"attributes #{n} = {{ {body} }}")
        self.groups = None
        if m.metadata:
            out.append("")
            for md in m.metadata:
                name = md.name if not md.name[0].isdigit() else md.name
                out.append(f"!{name} = {'distinct ' if md.distinct else ''}{md.text}")
        return "\n".join(out).lstrip("\n") + "\n"

    def leading(self, obj) -> list[str]:
        return list(getattr(obj, "comments_before", None) or []) if self.comments else []

    def trailing(self, obj) -> str:
        c = getattr(obj, "comment_after", None) if self.comments else None
        return f" {c}" if c else ""

    def global_var(self, g: GlobalVariable) -> str:
        parts = [f"{self.gname(g)} ="]
        if g.linkage:
            parts.append(g.linkage)
        pre = [q for q in g.qualifiers if q not in ("unnamed_addr", "local_unnamed_addr", "externally_initialized")]
        parts += pre
        if g.thread_local is not None:
            parts.append("thread_local" + (f"({g.thread_local})" if g.thread_local else ""))
        parts += [q for q in g.qualifiers if q in ("unnamed_addr", "local_unnamed_addr")]
        if g.addrspace:
            parts.append(f"addrspace({g.addrspace})")
        if "externally_initialized" in g.qualifiers:
            parts.append("externally_initialized")
        parts.append("constant" if g.constant else "global")
        parts.append(self.t(g.value_type))
        if g.initializer is not None:
            parts.append(self.ref(g.initializer))
        text = " ".join(parts)
        if g.section is not None:
            text += f', section "{escape_string(g.section)}"'
        if g.align is not None:
            text += f", align {g.align}"
        return text

    def function(self, f: Function) -> str:
        self.number(f)
        head = ["define" if not f.is_declaration else "declare"]
        if f.is_declaration:
            head += [f"!{k} {v}" for k, v in f.metadata]
        if f.linkage:
            head.append(f.linkage)
        head += [q for q in f.qualifiers if q not in ("unnamed_addr", "local_unnamed_addr")]
        if f.cc:
            head.append(f.cc)
        if f.ret_attrs:
            head.append(self.attrs(f.ret_attrs))
        head.append(self.t(f.ftype.ret))
        args = []
        for a in f.args:
            s = self.t(a.type)
            if a.attrs:
                s += " " + self.attrs(a.attrs)
            if not f.is_declaration:
                s += " " + self.local(a)
            args.append(s)
        if f.ftype.vararg:
            args.append("...")
        text = " ".join(head) + f" {self.gname(f)}({', '.join(args)})"
        for q in f.qualifiers:
            if q in ("unnamed_addr", "local_unnamed_addr"):
                text += " " + q
        if f.addrspace:
            text += f" addrspace({f.addrspace})"
        if f.fn_attrs and (fa := self.fn_attrs(f.fn_attrs)):
            text += " " + fa
        if f.section is not None:
            text += f' section "{escape_string(f.section)}"'
        if f.align is not None:
            text += f" align {f.align}"
        if f.gc is not None:
            text += f' gc "{escape_string(f.gc)}"'
        if f.personality is not None:
            text += f" personality {self.typed(f.personality)}"
        if not f.is_declaration:
            for k, v in f.metadata:
                text += f" !{k} {v}"
        if f.is_declaration:
            return text + self.trailing(f)
        lines = [text + " {" + (f" {f.header_comment}" if self.comments and getattr(f, "header_comment", None) else "")]
        for i, b in enumerate(f.blocks):
            if i > 0:
                lines.append("")
            lines += self.leading(b)
            if b.name is not None:
                lines.append(
                    f"{quote_name(b.name)}:" if quote_name(b.name) == b.name else f'"{escape_string(b.name)}":'
                )
            elif i > 0:
                lines.append(f"{self.slots[id(b)]}:")
            for inst in b.instructions:
                lines += ["  " + c for c in self.leading(inst)]
                lines.append(self.inst(inst) + self.trailing(inst))
        if self.comments:
            lines += ["  " + c for c in getattr(f, "trailing_comments", None) or []]
        lines.append("}" + self.trailing(f))
        return "\n".join(lines)

    # -- instructions ---------------------------------------------------------------------
    def inst(self, inst: I.Instruction) -> str:
        body = self.inst_body(inst)
        if inst.type != VOID:
            body = f"{self.local(inst)} = {body}"
        for kind, ref in inst.metadata:
            body += f", !{kind} {ref}"
        if isinstance(inst, I.Call) and base_name(inst.callee_name) == RELOCATE:
            body += self.relocate_comment(inst)
        return "  " + body

    def relocate_comment(self, call: I.Call) -> str:
        """LLVM prints ``; (%base, %derived)`` after each gc.relocate; so do we."""
        fn = call.function
        if self._unwinds_for is not fn:
            self._unwinds = statepoint_unwind_map(fn) if fn is not None else {}
            self._unwinds_for = fn
        try:
            sp_call = token_statepoint(call.args[0], self._unwinds) if call.args else None
            if sp_call is None:
                return ""
            sp = self._statepoints.get(id(sp_call))
            if sp is None:
                sp = self._statepoints[id(sp_call)] = Statepoint.of(sp_call)
            rel = GCRelocate(call, sp)
            return f" ; ({self.ref(rel.base)}, {self.ref(rel.derived)})"
        except (VerifyError, IndexError, AttributeError):
            return ""

    def inst_body(self, x: I.Instruction) -> str:
        if isinstance(x, I.Alloca):
            s = f"alloca {self.t(x.allocated_type)}"
            if x.count is not None:
                s += f", {self.typed(x.count)}"
            s += f", align {x.align if x.align is not None else self.layout.pref_align(x.allocated_type)}"
            if x.addrspace:
                s += f", addrspace({x.addrspace})"
            return s
        if isinstance(x, (I.Load, I.AtomicRMW)):
            return self.load(x) if isinstance(x, I.Load) else self.atomicrmw(x)
        if isinstance(x, I.Store):
            return self.store(x)
        if isinstance(x, (I.CmpXchg, I.Fence)):
            return self.cmpxchg(x) if isinstance(x, I.CmpXchg) else f"fence{_scope(x.syncscope)} {x.ordering}"
        if isinstance(x, I.GetElementPtr):
            ib = "inbounds " if x.inbounds else ""
            ops = ", ".join(self.typed(o) for o in x.ops)
            return f"getelementptr {ib}{self.t(x.source_type)}, {ops}"
        if isinstance(x, I.Cast):
            return f"{x.opcode} {self.typed(x.value)} to {self.t(x.type)}"
        if isinstance(x, I.BinaryOp):
            flags = "".join(f + " " for f in x.flags)
            return f"{x.opcode} {flags}{self.typed(x.ops[0])}, {self.ref(x.ops[1])}"
        if isinstance(x, I.FCmp):
            flags = "".join(f + " " for f in x.flags)
            return f"fcmp {flags}{x.predicate} {self.typed(x.ops[0])}, {self.ref(x.ops[1])}"
        if isinstance(x, I.FNeg):
            flags = "".join(f + " " for f in x.flags)
            return f"fneg {flags}{self.typed(x.ops[0])}"
        if isinstance(x, I.Freeze):
            return f"freeze {self.typed(x.value)}"
        if isinstance(x, I.ICmp):
            return f"icmp {x.predicate} {self.typed(x.ops[0])}, {self.ref(x.ops[1])}"
        if isinstance(x, I.Select):
            return "select " + ", ".join(self.typed(o) for o in x.ops)
        if isinstance(x, I.Phi):
            inc = ", ".join(f"[ {self.ref(v)}, {self.local(b)} ]" for v, b in x.incoming)
            return f"phi {self.t(x.type)} {inc}"
        if isinstance(x, I.Br):
            if x.is_conditional:
                c, t, f = x.ops
                return f"br {self.typed(c)}, label {self.local(t)}, label {self.local(f)}"
            return f"br label {self.local(x.ops[0])}"
        if isinstance(x, I.Switch):
            cases = "".join(f"\n    {self.typed(c)}, label {self.local(b)}" for c, b in x.cases)
            return f"switch {self.typed(x.value)}, label {self.local(x.default)} [{cases}\n  ]"
        if isinstance(x, I.Ret):
            return "ret void" if x.value is None else f"ret {self.typed(x.value)}"
        if isinstance(x, I.Unreachable):
            return "unreachable"
        if isinstance(x, I.Resume):
            return f"resume {self.typed(x.ops[0])}"
        if isinstance(x, I.LandingPad):
            s = f"landingpad {self.t(x.type)}"
            if x.cleanup:
                s += "\n          cleanup"
            for k, clause in x.clauses:
                s += f"\n          {k} {self.typed(clause)}"
            return s
        if isinstance(x, I.ExtractValue):
            return f"extractvalue {self.typed(x.ops[0])}, " + ", ".join(map(str, x.indices))
        if isinstance(x, I.InsertValue):
            return f"insertvalue {self.typed(x.ops[0])}, {self.typed(x.ops[1])}, " + ", ".join(map(str, x.indices))
        if isinstance(x, I.ExtractElement):
            return f"extractelement {self.typed(x.vector)}, {self.typed(x.index)}"
        if isinstance(x, I.InsertElement):
            return f"insertelement {self.typed(x.vector)}, {self.typed(x.element)}, {self.typed(x.index)}"
        if isinstance(x, I.ShuffleVector):
            mask = x.mask_value
            if self.opaque and isinstance(mask, ConstantAggregate):  # LLVM >= 15 spells a free lane poison
                mask = ConstantAggregate(
                    mask.type, tuple(Poison(e.type) if isinstance(e, Undef) else e for e in mask.elements)
                )
            elif self.opaque and isinstance(mask, Undef):
                mask = Poison(mask.type)
            return f"shufflevector {self.typed(x.ops[0])}, {self.typed(x.ops[1])}, {self.typed(mask)}"
        if isinstance(x, I.CallBase):
            return self.call(x)
        raise TypeError(f"cannot print {type(x).__name__}")

    def load(self, x: I.Load) -> str:
        """``load [atomic] [volatile] T, ptr P[ [syncscope("S")] ORDERING], align A``."""
        v = "volatile " if x.volatile else ""
        if x.ordering is None:
            return f"load {v}{self.t(x.type)}, {self.typed(x.pointer)}" + self.align(x.align, x.type)
        scope = f' syncscope("{x.syncscope}")' if x.syncscope is not None else ""
        head = f"load atomic {v}{self.t(x.type)}, {self.typed(x.pointer)}{scope} {x.ordering}"
        return head + self.align(x.align, x.type)

    def store(self, x: I.Store) -> str:
        """``store [atomic] [volatile] T V, ptr P[ [syncscope("S")] ORDERING], align A``."""
        v = "volatile " if x.volatile else ""
        a = "atomic " if x.ordering is not None else ""
        order = f"{_scope(x.syncscope)} {x.ordering}" if x.ordering is not None else ""
        head = f"store {a}{v}{self.typed(x.value)}, {self.typed(x.pointer)}{order}"
        return head + self.align(x.align, x.value.type)

    def cmpxchg(self, x: I.CmpXchg) -> str:
        """``cmpxchg [weak] [volatile] ptr P, T C, T N[ syncscope("S")] SUCCESS FAILURE, align A``."""
        flags = ("weak " if x.weak else "") + ("volatile " if x.volatile else "")
        ops = ", ".join(self.typed(o) for o in x.ops)
        return f"cmpxchg {flags}{ops}{_scope(x.syncscope)} {x.success} {x.failure}, align {x.align}"

    def atomicrmw(self, x: I.AtomicRMW) -> str:
        """``atomicrmw [volatile] OP ptr P, T V[ syncscope("S")] ORDERING, align A``."""
        v = "volatile " if x.volatile else ""
        scope = f' syncscope("{x.syncscope}")' if x.syncscope is not None else ""
        head = f"atomicrmw {v}{x.operation} {self.typed(x.pointer)}, {self.typed(x.value)}{scope} {x.ordering}"
        return f"{head}, align {x.align}"

    def align(self, a: int | None, ty: Type) -> str:
        """LLVM gives a load or store without ``align`` its type's ABI alignment, and prints it."""
        return f", align {a if a is not None else self.layout.abi_align(ty)}"

    def call(self, x: I.CallBase) -> str:
        parts = []
        if isinstance(x, I.Call):
            if x.tail:
                parts.append(x.tail)
            parts.append("call")
        else:
            parts.append("invoke")
        if x.cc:
            parts.append(x.cc)
        if x.ret_attrs:
            parts.append(self.attrs(x.ret_attrs))
        ft = x.ftype
        ret = ft.ret
        fn_ptr_ret = isinstance(ret, PointerType) and isinstance(ret.pointee, FunctionType) and not self.opaque
        parts.append(self.t(ft) if ft.vararg or fn_ptr_ret else self.t(ret))
        is_sp = isinstance(x.callee, Function) and base_name(x.callee.name) == STATEPOINT
        args = []
        for k, (a, at) in enumerate(zip(x.args, x.arg_attrs)):
            attrs = at
            if (
                self.opaque
                and is_sp
                and isinstance(a.type, PointerType)
                and _is_callee_slot(x, k)
                and not any(t.kind == "elementtype" for t in at)
            ):
                pointee = getattr(a.type, "pointee", None)
                if isinstance(pointee, FunctionType):
                    attrs = (*at, Attribute("elementtype", type=pointee, style="paren"))
            s = self.t(a.type)
            if attrs:
                s += " " + self.attrs(attrs)
            args.append(f"{s} {self.ref(a)}")
        text = " ".join(parts) + f" {self.ref(x.callee)}({', '.join(args)})"
        if x.fn_attrs and (fa := self.fn_attrs(x.fn_attrs)):
            text += " " + fa
        if x.bundles:
            bs = []
            for b in x.bundles:
                bs.append(f'"{escape_string(b.tag)}"(' + ", ".join(self.typed(v) for v in b.inputs) + ")")
            text += " [ " + ", ".join(bs) + " ]"
        if isinstance(x, I.Invoke):
            text += f"\n          to label {self.local(x.normal)} unwind label {self.local(x.unwind)}"
        return text


def _scope(name: str | None) -> str:
    """An atomic instruction's `` syncscope("S")`` clause, empty for the whole system."""
    return f' syncscope("{name}")' if name is not None else ""


def _is_callee_slot(call: I.CallBase, k: int) -> bool:
    """Is argument ``k`` of a statepoint call its target (index 2, or 0 in the oldest form)?"""
    first = call.args[0].type if call.args else None
    return k == (0 if isinstance(first, PointerType) else 2)


def describe_value(value: Value) -> str:
    """A value as messages show it: a typed operand (an instruction of a non-first-class type whole)."""
    ty = getattr(value, "type", None)
    opaque = isinstance(ty, PointerType) and ty.pointee is None
    if hasattr(value, "opcode") and not getattr(ty, "is_first_class", True):
        return print_instruction(value, opaque=opaque)  # type: ignore[arg-type]
    return print_operand(value, opaque=opaque)


set_value_describer(describe_value)
