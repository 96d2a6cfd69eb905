"""Recursive-descent parser for the LLVM IR subset (typed and opaque pointers).

``parse_module(text)`` returns a :class:`~gctoy.ir.module.Module` or raises
:class:`~gctoy.errors.IRParseError` with file, line and column.  Values may be
used before they are defined (phis, block order); such uses are resolved when
the function ends, and a name that never gets defined is reported at its
first use, as LLVM does.
"""

from __future__ import annotations

import gc
from dataclasses import dataclass

from .constant_parser import PendingGlobal, become
from .instruction_parser import InstructionParser
from .intrinsics import remangle_for_opaque_pointers
from .keywords import GLOBAL_QUALIFIERS, LINKAGES, is_calling_convention
from .module import Module
from .named_types import NamedTypeDefinitions
from .names import unescape
from .type_parser import MixedPointers
from .type_rules import recursive_type
from .types import LABEL, METADATA, FunctionType, PointerType, Type
from .values import Argument, AttributeGroup, BasicBlock, Constant, Function, GlobalVariable, MetadataDef


@dataclass
class _FunctionSuffix:
    """What may follow a function's attributes."""

    section: str | None = None
    align: int | None = None
    gc: str | None = None
    personality: Constant | None = None


def parse_module(
    text: str, filename: str = "<input>", *, implicit_declarations: bool = False, fix_numbering: bool = False
) -> Module:
    """Parse LLVM IR text into a Module.

    ``implicit_declarations`` declares functions and globals that are used but
    never defined (the seeds' fragments call ``@foo`` without declaring it);
    ``fix_numbering`` accepts ``%N`` names out of sequence and renumbers them.
    Both leave a note in ``module.notes`` for each thing they did.
    """
    # Parsing makes many small objects that point at each other and none is garbage yet: Python's
    # cycle collector would scan them over and over for nothing, so it waits until the end.
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        try:
            return _Parser(text, filename, implicit_declarations, fix_numbering).parse()
        except MixedPointers:
            # 'T*' first and 'ptr' later: read it all with opaque pointers, as LLVM >= 15 does
            return _Parser(text, filename, implicit_declarations, fix_numbering, opaque=True).parse()
    finally:
        if was_enabled:
            gc.enable()


def parse_type(text: str) -> Type:
    """Parse a type on its own (``"i8 addrspace(1)*"``)."""
    p = _Parser(text, "<type>", False, False)
    ty = p.type_()
    p.expect_kind("EOF")
    return ty


class _Parser(NamedTypeDefinitions, InstructionParser):
    """The whole module: top-level entities, globals, functions and their bodies (the top level)."""

    # -- module ---------------------------------------------------------------
    def parse(self) -> Module:
        """Read every top-level entity of the text into the module."""
        m = self.module
        while self.peek()[0] != "EOF":
            self.release()
            self.split_pointer_type()
            tok = self.peek()
            comments = self.leading_comments(tok[2])
            kind, text = tok[0], tok[1]
            entity: GlobalVariable | Function | None = None
            if kind == "WORD" and text == "source_filename":
                self.next()
                self.expect("=")
                m.header.source_filename = self.string()
            elif kind == "WORD" and text == "target":
                self.next()
                which = self.expect_kind("WORD", "'datalayout' or 'triple'")[1]
                self.expect("=")
                if which == "datalayout":
                    m.header.datalayout = self.string()
                elif which == "triple":
                    m.header.triple = self.string()
                else:
                    raise self.err("expected 'datalayout' or 'triple'", tok[2])
            elif kind == "LOCAL":
                self.named_type_def()
            elif kind == "GLOBAL":
                entity = self.global_var()
            elif kind == "WORD" and text in ("define", "declare"):
                entity = self.function()
            elif kind == "WORD" and text == "attributes":
                self.attribute_group()
            elif kind == "METAVAR":
                self.metadata_def()
            else:
                raise self.err(f"expected top-level entity, found '{text}'")
            if entity is not None:
                entity.comments_before = comments
                entity.comment_after = self.trailing_comment()
            elif comments:
                m.header.comments.extend(comments)
        self.ci = len(self.comments)  # comments after the last entity are not kept
        self.finish_globals()
        if self.opaque:
            remangle_for_opaque_pointers(m)
        bad = recursive_type({name: m.named_type(name) for name in self.type_offsets})
        if bad is not None:
            raise self.err(
                f"invalid recursive type '%{bad}' (it contains itself, not only a pointer to itself)",
                self.type_offsets[bad],
            )
        return m

    def attribute_group(self) -> None:
        """``attributes #N = { ... }``."""
        self.next()
        tok = self.expect_kind("ATTRGRP", "attribute group id '#N'")
        self.expect("=")
        self.expect("{")
        attrs = []
        while not self.at("}"):
            a = self.attribute(allow_group=False)
            if a is None:
                raise self.err(f"unknown attribute '{self.peek()[1]}'")
            attrs.append(a)
        self.expect("}")
        gid = tok[1][1:]
        if gid in self.module.attribute_groups:
            raise self.err(f"redefinition of attribute group #{gid}", tok[2])
        self.module.attribute_groups[gid] = AttributeGroup(gid, tuple(attrs))

    def metadata_def(self) -> None:
        """``!N = [distinct] !{...}``, kept as text."""
        tok = self.next()
        self.check_metadata_id(tok)
        self.expect("=")
        distinct = self.accept("distinct")
        start = self.peek()[2]
        end = self.skip_metadata()
        self.module.metadata.append(MetadataDef(tok[1][1:], self.src.text[start:end], distinct))

    # -- globals -------------------------------------------------------------------
    def take_pending(self, name: str, offset: int) -> PendingGlobal | None:
        """The placeholder of a global used before this definition, if any; an error on redefinition."""
        if self.module.get_function(name) is not None or self.module.get_global(name) is not None:
            raise self.err(f"redefinition of global '@{name}'", offset)
        return self.pending.pop(name, None)

    def global_var(self) -> GlobalVariable:
        """``@g = [linkage] ... global|constant T [init][, section ...][, align N]``."""
        tok = self.next()
        name = self.global_name(tok)
        self.expect("=")
        linkage = None
        quals: list[str] = []
        thread_local = None
        while True:
            t = self.peek()[1]
            if t in LINKAGES and self.peek()[0] == "WORD":
                linkage = self.next()[1]
            elif t in GLOBAL_QUALIFIERS:
                quals.append(self.next()[1])
            elif t == "thread_local":
                self.next()
                thread_local = ""
                if self.accept("("):
                    thread_local = self.expect_kind("WORD", "TLS model")[1]
                    self.expect(")")
            else:
                break
        space = self.addrspace()
        while self.peek()[1] in GLOBAL_QUALIFIERS:
            quals.append(self.next()[1])
        if self.accept("global"):
            constant = False
        elif self.accept("constant"):
            constant = True
        elif self.peek()[1] == "alias":
            raise self.err("global aliases are not part of gctoy's IR subset")
        else:
            raise self.err("expected 'global' or 'constant'")
        vtype = self.type_()
        init = None
        if linkage not in ("external", "extern_weak"):
            init = self.constant(vtype)
        section = align = None
        while self.accept(","):
            if self.accept("section"):
                section = self.string()
            elif self.accept("align"):
                align = self.alignment()
            elif self.peek()[0] == "METAVAR":
                self.next()
                self.skip_metadata()
            else:
                raise self.err("expected 'section', 'align' or metadata after ','")
        obj = self.take_pending(name, tok[2])
        if obj is not None:
            self.check_forward_type(obj, PointerType(vtype, space), tok[2])
            gv = become(obj, GlobalVariable)
        else:
            gv = GlobalVariable.__new__(GlobalVariable)
        GlobalVariable.__init__(
            gv,
            name,
            vtype,
            init,
            constant=constant,
            linkage=linkage,
            thread_local=thread_local,
            addrspace=space,
            align=align,
            qualifiers=tuple(quals),
            section=section,
        )
        gv.loc = self.src.position(tok[2])
        if self.opaque:
            gv.type = PointerType(None, space)
        self.module.add_global(gv)
        return gv

    def check_forward_type(self, obj: PendingGlobal, actual: Type, offset: int) -> None:
        """A definition must have the type its earlier uses gave it."""
        want = obj.type
        if want == actual:
            return
        if isinstance(want, PointerType) and isinstance(actual, PointerType) and want.is_opaque:
            if want.addrspace == actual.addrspace:
                return
        raise self.err(f"'@{obj.name}' defined with type '{actual}' but expected '{want}'", offset)

    def function(self) -> Function:
        """``define`` or ``declare``: the header, and a definition's body."""
        start = self.next()
        is_define = start[1] == "define"
        md: list[tuple[str, str]] = []
        while not is_define and self.peek()[0] == "METAVAR" and self.peek(1)[0] in ("METAVAR", "PUNCT"):
            # a declaration's attachments come right after 'declare'
            md.append(self.metadata_attachment())
        linkage, quals, cc = self.function_prefix()
        ret_attrs = self.param_attributes()
        ret = self.type_()
        name_tok = self.expect_kind("GLOBAL", "function name")
        name = self.global_name(name_tok)
        args, vararg, arg_names = self.parameters(is_define)
        ftype = FunctionType(ret, tuple(a.type for a in args), vararg)
        if ret == LABEL or ret == METADATA:
            raise self.err("invalid function return type", name_tok[2])
        while self.peek()[1] in ("unnamed_addr", "local_unnamed_addr"):
            quals.append(self.next()[1])
        space = self.addrspace()
        fn_attrs = self.attributes()
        suffix = self.function_suffix(is_define, md)
        obj = self.take_pending(name, name_tok[2])
        if obj is not None:
            self.check_forward_type(obj, PointerType(ftype, space), name_tok[2])
            fn = become(obj, Function)
        else:
            fn = Function.__new__(Function)
        Function.__init__(
            fn,
            name,
            ftype,
            args,
            linkage=linkage,
            cc=cc,
            gc=suffix.gc,
            ret_attrs=ret_attrs,
            fn_attrs=fn_attrs,
            qualifiers=tuple(quals),
            personality=suffix.personality,
            addrspace=space,
            section=suffix.section,
            align=suffix.align,
        )
        fn.metadata = md
        fn.loc = self.src.position(start[2])
        if self.opaque:
            fn.type = PointerType(None, space)
        self.module.add_function(fn)
        if is_define:
            if not self.at("{"):
                raise self.err("expected '{' in function body")
            fn.header_comment = None
            self.function_body(fn, arg_names, start[2])
        elif self.at("{"):
            raise self.err("a declaration cannot have a body; use 'define'")
        return fn

    def function_prefix(self) -> tuple[str | None, list[str], str | None]:
        """The linkage, qualifiers and calling convention before a function's return type."""
        linkage = None
        quals: list[str] = []
        cc = None
        while True:
            t = self.peek()
            if t[0] == "WORD" and t[1] in LINKAGES:
                linkage = self.next()[1]
            elif t[0] == "WORD" and t[1] in GLOBAL_QUALIFIERS:
                quals.append(self.next()[1])
            elif t[0] == "WORD" and is_calling_convention(t[1]):
                cc = self.calling_convention()
            else:
                break
        if linkage == "external":
            linkage = None  # a function's default linkage, never printed
        return linkage, quals, cc

    def parameters(self, is_define: bool) -> tuple[list[Argument], bool, list[tuple[str | None, int]]]:
        """``(T %a, U %b, ...)``: the arguments, whether it is variadic, and each name as written with
        its offset (a declaration's arguments keep no names)."""
        arg_names: list[tuple[str | None, int]] = []

        def parameter() -> Argument:
            where = self.peek()[2]
            ty = self.type_()
            attrs = self.param_attributes()
            aname = None
            self.split_pointer_type()
            off = self.peek()[2]
            if self.peek()[0] == "LOCAL":
                t = self.next()
                aname, off = self.local_name(t), t[2]
            arg_names.append((aname, off))
            if not is_define:
                aname = None  # LLVM keeps no parameter names on declarations
            arg = Argument(ty, None if aname is not None and aname.isdigit() else aname, attrs)
            arg.loc = self.src.position(where)
            return arg

        args, vararg = self.parameter_list(parameter)
        return args, vararg, arg_names

    def function_suffix(self, is_define: bool, md: list[tuple[str, str]]) -> _FunctionSuffix:
        """``section``, ``align``, ``gc``, ``personality`` and (on a definition) metadata attachments,
        which are added to ``md``."""
        suffix = _FunctionSuffix()
        while True:
            if self.accept("section"):
                suffix.section = self.string()
            elif self.accept("align"):
                suffix.align = self.alignment()
            elif self.accept("gc"):
                suffix.gc = self.string()
            elif self.accept("personality"):
                pty = self.type_()
                personality = self.value(pty)
                if not isinstance(personality, Constant):
                    raise self.err("personality must be a constant")
                suffix.personality = personality
            elif is_define and self.peek()[0] == "METAVAR":
                md.append(self.metadata_attachment())
            else:
                return suffix

    # -- function bodies ----------------------------------------------------------
    def function_body(self, fn: Function, arg_names, start_offset: int) -> None:
        """``{ blocks }`` of a definition; forward references are resolved at its end."""
        self.expect("{")
        fn.header_comment = self.trailing_comment()
        self.locals, self.forward, self.blocks, self.block_first_ref = {}, {}, {}, {}
        self.slot = 0
        for arg, (aname, off) in zip(fn.args, arg_names):
            self.define_local(aname, arg, off)
        if self.at("}"):
            raise self.err("function body requires at least one basic block")
        while not self.at("}"):
            if self.peek()[0] == "EOF":
                raise self.err("expected '}' at end of function body")
            self.basic_block(fn)
        end = self.next()
        fn.trailing_comments = self.leading_comments(end[2])
        self.resolve_function(fn)

    def basic_block(self, fn: Function) -> None:
        """One block: its label (or number) and instructions up to a terminator."""
        tok = self.peek()
        comments = self.leading_comments(tok[2])
        label = None
        if tok[0] == "LABEL":
            self.next()
            label = tok[1][:-1]
        elif tok[0] == "LABELSTR":
            self.next()
            self.expect(":")
            label = unescape(tok[1][1:-1]).decode("utf-8", "surrogateescape")
        if label is not None and not label.isdigit():
            block = self.blocks.get(label) or BasicBlock(label)
            self.blocks[label] = block
            self.define_local(label, block, tok[2])
        else:
            key = label if label is not None else str(self.slot)
            block = self.blocks.get(key) or BasicBlock(None)
            self.blocks[key] = block
            self.define_local(label, block, tok[2])
        block.comments_before = comments
        block.parent = fn
        fn.blocks.append(block)
        while True:
            t = self.peek()
            if t[0] in ("LABEL", "LABELSTR", "EOF") or (t[0] == "PUNCT" and t[1] == "}"):
                raise self.err(
                    "expected instruction opcode"
                    if t[1] != "}"
                    else f"block '{block.name or '%' + str(self.slot - 1)}' has no terminator: "
                    "expected instruction opcode"
                )
            self.release()
            comments = self.leading_comments(t[2])
            inst = self.instruction()
            inst.comments_before = comments
            inst.parent = block
            block.instructions.append(inst)
            inst.comment_after = self.trailing_comment()
            if inst.is_terminator:
                return

    def finish_globals(self) -> None:
        """Globals used but never defined: an error, or (``implicit_declarations``) declared."""
        if not self.pending:
            return
        for name, p in sorted(self.pending.items(), key=lambda kv: kv[1].offset):
            if not self.implicit:
                raise self.err(f"use of undefined value '@{name}'", p.offset)
            line, col = self.src.position(p.offset)
            ty = p.type
            pointee = ty.pointee
            if isinstance(pointee, FunctionType):
                fn = become(p, Function)
                Function.__init__(fn, name, pointee, addrspace=ty.addrspace)
                self.module.add_function(fn)
                params = [str(t) for t in pointee.params] + (["..."] if pointee.vararg else [])
                decl = f"declare {pointee.ret} @{name}({', '.join(params)})"
            elif pointee is None:
                raise self.err(
                    f"use of undefined value '@{name}' (its type cannot be inferred from an opaque "
                    "pointer; declare it)",
                    p.offset,
                )
            else:
                gv = become(p, GlobalVariable)
                GlobalVariable.__init__(gv, name, pointee, None, linkage="external", addrspace=ty.addrspace)
                self.module.add_global(gv)
                decl = f"@{name} = external global {pointee}"
            self.module.notes.append(
                f"{self.src.filename}:{line}:{col}: note: '@{name}' was never declared; declared it as '{decl}'"
            )
        self.pending.clear()
