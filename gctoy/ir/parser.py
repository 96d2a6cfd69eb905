"""Recursive-descent parser for the LLVM IR subset (typed and opaque pointers).

``parse_module(text)`` returns a :class:`~gctoy.ir.module.Module` or raises
:class:`~gctoy.errors.IRParseError` with file, line and column.  Values may be
used before they are defined (phis, block order); such uses are resolved when
the function ends, and a name that never gets defined is reported at its
first use, as LLVM does.
"""
from __future__ import annotations

import gc

from .keywords import (
    CALLING_CONVENTIONS,
    CC_NAMES,
    GLOBAL_QUALIFIERS,
    LINKAGES,
    PAREN_ATTRIBUTES,
    PLAIN_ATTRIBUTES,
    TYPE_ATTRIBUTES,
    VALUE_WORDS,
)
from .instruction_parser import InstructionParser
from .intrinsics import remangle_for_opaque_pointers
from .floats import FLOAT_BITS, FloatLiteralError, parse_float_literal
from .lexer import first_pointer_spelling
from .limits import LimitChecks
from .module import Module
from .named_types import NamedTypeDefinitions
from .type_rules import recursive_type, wrap_int
from .names import unescape
from .token_cursor import TokenCursor
from .types import (
    LABEL,
    METADATA,
    TOKEN,
    VOID,
    ArrayType,
    FloatType,
    FunctionType,
    IntType,
    NamedStructType,
    PointerType,
    StructType,
    Type,
    VectorType,
)
from .values import (
    Argument,
    Attribute,
    AttributeGroup,
    BasicBlock,
    Constant,
    ConstantAggregate,
    ConstantExpr,
    ConstantFloat,
    ConstantInt,
    ConstantNull,
    ConstantString,
    Function,
    GlobalValue,
    GlobalVariable,
    MetadataDef,
    MetadataOperand,
    Poison,
    TokenNone,
    Undef,
    Value,
    ZeroInitializer,
)

_FLOAT_KINDS = frozenset(FLOAT_BITS)
_INT_TYPES = {f"i{n}": IntType(n) for n in (1, 8, 16, 32, 64, 128)}
#: tokens that can continue a type (pointer stars, address spaces, parameter lists)
_TYPE_SUFFIXES = frozenset({"*", "addrspace", "("})


class _MixedPointers(Exception):
    """A typed-pointer reading met ``ptr``: the module is read again with opaque pointers."""


class _ForwardLocal(Value):
    """A local used before its definition; replaced when the function ends."""

    def __init__(self, name: str, type: Type, offset: int):
        self.name = name
        self.type = type
        self.offset = offset


class _PendingGlobal(GlobalValue):
    """A global used before its definition; becomes the real object in place."""

    def __init__(self, name: str, type: Type, offset: int):
        self.name = name
        self.type = type
        self.offset = offset


def parse_module(text: str, filename: str = "<input>", *, implicit_declarations: bool = False,
                 fix_numbering: bool = False) -> Module:
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
        except _MixedPointers:
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


class _Parser(NamedTypeDefinitions, InstructionParser, LimitChecks, TokenCursor):
    def __init__(self, text: str, filename: str, implicit_declarations: bool, fix_numbering: bool,
                 opaque: bool = False):
        TokenCursor.__init__(self, text, filename)
        self.type_offsets: dict[str, int] = {}
        # Equal constants and types are shared (as LLVM uniques them): fewer objects on big inputs.
        self.uniqued: dict = {}
        self.module = Module()
        self.module.filename = filename
        self.implicit = implicit_declarations
        self.fix_numbering = fix_numbering
        self.pending: dict[str, _PendingGlobal] = {}
        self.first_use: dict[str, int] = {}
        self.defined_types: set[str] = set()
        self.type_aliases: dict[str, Type] = {}
        # per-function state
        self.locals: dict[str, Value] = {}
        self.forward: dict[str, _ForwardLocal] = {}
        self.blocks: dict[str, BasicBlock] = {}
        self.block_first_ref: dict[str, int] = {}
        self.slot = 0
        self._fixups: list[tuple[_ForwardLocal, Value]] = []
        self.opaque = opaque or self._pointer_style()

    def _pointer_style(self) -> bool:
        """True if the text's first pointer is spelled ``ptr`` (a later ``T*`` then reads as ``ptr``)."""
        return first_pointer_spelling(self.src.text) == "ptr"

    # -- module ---------------------------------------------------------------
    def parse(self) -> Module:
        m = self.module
        while self.peek()[0] != "EOF":
            self.release()
            tok = self.peek()
            comments = self.leading_comments(tok[2])
            kind, text = tok[0], tok[1]
            entity = None
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
            raise self.err(f"invalid recursive type '%{bad}' (it contains itself, not only a pointer to "
                           "itself)", self.type_offsets[bad])
        return m

    def attribute_group(self) -> None:
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
        tok = self.next()
        self.check_metadata_id(tok)
        self.expect("=")
        distinct = self.accept("distinct")
        start = self.peek()[2]
        end = self.skip_metadata()
        self.module.metadata.append(MetadataDef(tok[1][1:], self.src.text[start:end], distinct))

    def metadata_attachment(self) -> tuple[str, str]:
        """``!kind !N`` -> (kind, reference text)."""
        k = self.next()[1]
        start = self.peek()[2]
        end = self.skip_metadata()
        return k[1:], self.src.text[start:end]

    def skip_metadata(self) -> int:
        """Skip one metadata value (``!{...}``, ``!0``, ``!"s"``, ``!DIx(...)``); return its end offset."""
        tok = self.next()
        if tok[1] == "!" and self.at("{"):
            return self.skip_balanced("{", "}")
        if tok[0] == "METAVAR" and self.at("("):
            return self.skip_balanced("(", ")")
        if tok[0] == "METAVAR":
            self.check_metadata_id(tok)
        if tok[0] in ("METAVAR", "MDSTRING"):
            return tok[2] + len(tok[1])
        raise self.err("expected metadata", tok[2])

    def skip_balanced(self, open_: str, close: str) -> int:
        depth = 0
        while True:
            tok = self.next()
            if tok[0] == "EOF":
                raise self.err(f"expected '{close}'", tok[2])
            if tok[0] == "METAVAR":
                self.check_metadata_id(tok)
            if tok[1] == open_ and tok[0] == "PUNCT":
                depth += 1
            elif tok[1] == close and tok[0] == "PUNCT":
                depth -= 1
                if depth == 0:
                    return tok[2] + 1

    # -- names -----------------------------------------------------------------
    def local_name(self, tok) -> str:
        body = tok[1][1:]
        if body.startswith('"'):
            return unescape(body[1:-1]).decode("utf-8", "surrogateescape")
        return body

    global_name = local_name

    # -- types -----------------------------------------------------------------
    def type_(self) -> Type:
        tok = self.next()
        kind, text = tok[0], tok[1]
        ty: Type
        if kind == "INTTYPE":
            ty = _INT_TYPES.get(text)
            if ty is None:
                bits = int(text[1:]) if len(text) < 12 else 0
                if not 1 <= bits <= (1 << 23):
                    raise self.err("bitwidth for integer type out of range", tok[2])
                ty = IntType(bits)
            if self.toks[self.i][1] not in _TYPE_SUFFIXES:
                return ty
        elif kind == "WORD" and text == "void":
            ty = VOID
        elif kind == "WORD" and text in _FLOAT_KINDS:
            ty = FloatType(text)
        elif kind == "WORD" and text == "token":
            ty = TOKEN
        elif kind == "WORD" and text == "label":
            ty = LABEL
        elif kind == "WORD" and text == "metadata":
            ty = METADATA
        elif kind == "WORD" and text == "ptr":
            if not self.opaque:
                raise _MixedPointers()
            ty = PointerType(None, self.addrspace())
        elif kind == "LOCAL":
            name = self.local_name(tok)
            ty = self.type_aliases.get(name) or self.module.named_type(name)
        elif text == "{":
            self.enter(tok[2])
            ty = StructType(self.type_list("}"), False)
            self.leave()
        elif text == "<" and self.at("{"):
            self.next()
            self.enter(tok[2])
            ty = StructType(self.type_list("}"), True)
            self.leave()
            self.expect(">")
        elif text == "<":
            n = self.vector_length()
            self.expect("x")
            self.enter(tok[2])
            ty = VectorType(n, self.type_())
            self.leave()
            self.expect(">")
        elif text == "[":
            n = self.array_length()
            self.expect("x")
            self.enter(tok[2])
            ty = ArrayType(n, self.type_())
            self.leave()
            self.expect("]")
        else:
            raise self.err(f"expected type, found '{text}'" if text else "expected type", tok[2])
        # suffixes: pointers and function types
        bare_ptr = kind == "WORD" and text == "ptr"  # 'ptr' with no suffix yet: 'ptr*' is refused
        while True:
            if self.at("*"):
                if bare_ptr:
                    raise self.err("ptr* is invalid - use ptr instead", self.peek()[2])
                ty = self.pointer_to(ty, 0, self.next()[2])
            elif self.at("addrspace") and self.peek(4)[1] == "*":
                space = self.addrspace()
                ty = self.pointer_to(ty, space, self.expect("*")[2])
            elif self.at("("):
                self.enter(self.peek()[2])
                ty = self.function_type_params(ty)
                self.leave()
                bare_ptr = False
            else:
                return ty

    def pointer_to(self, ty: Type, space: int, offset: int) -> PointerType:
        if ty == VOID or ty == LABEL or ty == TOKEN or ty == METADATA:
            raise self.err(f"pointer to this type ('{ty}') is invalid")
        if self.opaque:
            return PointerType(None, space)
        if not isinstance(ty, (IntType, NamedStructType)):
            self.check_pointee_depth(ty, offset)
        key = ("*", id(ty), space)  # the cached pointer keeps ``ty`` alive, so its id stays unique
        p = self.uniqued.get(key)
        if p is None:
            p = self.uniqued[key] = PointerType(ty, space)
        return p

    def addrspace(self) -> int:
        if not self.accept("addrspace"):
            return 0
        self.expect("(")
        n = self.address_space()
        self.expect(")")
        return n

    def type_list(self, close: str) -> tuple[Type, ...]:
        out = []
        if self.accept(close):
            return ()
        while True:
            out.append(self.type_())
            if self.accept(close):
                return tuple(out)
            self.expect(",")

    def function_type_params(self, ret: Type) -> FunctionType:
        self.expect("(")
        params: list[Type] = []
        vararg = False
        if not self.accept(")"):
            while True:
                if self.peek()[0] == "ELLIPSIS":
                    self.next()
                    vararg = True
                    self.expect(")")
                    break
                params.append(self.type_())
                if self.accept(")"):
                    break
                self.expect(",")
        key = ("()", id(ret), *map(id, params), vararg)  # the cached type keeps its parts alive
        f = self.uniqued.get(key)
        if f is None:
            f = self.uniqued[key] = FunctionType(ret, tuple(params), vararg)
        return f

    # -- attributes ------------------------------------------------------------------
    def attribute(self, allow_group: bool = True) -> Attribute | None:
        tok = self.peek()
        kind, text = tok[0], tok[1]
        if kind == "ATTRGRP" and allow_group:
            self.next()
            return Attribute(text[1:], style="group")
        if kind == "STRING":
            self.next()
            key = unescape(text[1:-1]).decode("utf-8", "surrogateescape")
            if self.at("=") and self.peek(1)[0] == "STRING":
                self.next()
                return Attribute(key, self.string(), style="string")
            return Attribute(key, style="string")
        if kind != "WORD":
            return None
        if text == "align" and self.peek(1)[0] == "INT":
            self.next()
            return Attribute("align", self.alignment(), style="space")
        if text == "alignstack" and self.peek(1)[1] == "=" and not allow_group:  # inside a group
            self.skip(2)
            return Attribute("alignstack", self.alignment(), style="paren")
        if text in PAREN_ATTRIBUTES and self.peek(1)[1] == "(":
            self.next()
            self.expect("(")
            if text in TYPE_ATTRIBUTES:
                a = Attribute(text, type=self.type_(), style="paren")
            else:
                start = self.peek()[2]
                end = start
                depth = 0
                while depth or not self.at(")"):
                    t = self.next()
                    if t[0] == "EOF":
                        raise self.err("expected ')'")
                    if t[0] == "PUNCT" and t[1] in "()":
                        depth += 1 if t[1] == "(" else -1
                    end = t[2] + len(t[1])
                raw = self.src.text[start:end]
                a = Attribute(text, int(raw) if raw.lstrip("-").isdigit() else raw, style="paren")
            self.expect(")")
            return a
        if text in PLAIN_ATTRIBUTES:
            self.next()
            return Attribute(text)
        return None

    def attributes(self) -> tuple[Attribute, ...]:
        out = []
        while True:
            a = self.attribute()
            if a is None:
                return tuple(out)
            out.append(a)

    def param_attributes(self) -> tuple[Attribute, ...]:
        out = []
        while True:
            tok = self.peek()
            if tok[0] == "WORD" and tok[1] in VALUE_WORDS:
                return tuple(out)
            if tok[0] == "ATTRGRP":
                return tuple(out)
            a = self.attribute(allow_group=False)
            if a is None:
                return tuple(out)
            out.append(a)

    # -- globals -------------------------------------------------------------------
    def take_pending(self, name: str, offset: int) -> _PendingGlobal | None:
        if self.module.get_function(name) is not None or self.module.get_global(name) is not None:
            raise self.err(f"redefinition of global '@{name}'", offset)
        return self.pending.pop(name, None)

    def global_var(self) -> GlobalVariable:
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
        gv = obj if obj is not None else GlobalVariable.__new__(GlobalVariable)
        if obj is not None:
            self.check_forward_type(obj, PointerType(vtype, space), tok[2])
            gv.__class__ = GlobalVariable
        GlobalVariable.__init__(gv, name, vtype, init, constant=constant, linkage=linkage,
                                thread_local=thread_local, addrspace=space, align=align,
                                qualifiers=tuple(quals), section=section)
        if self.opaque:
            gv.type = PointerType(None, space)
        self.module.add_global(gv)
        return gv

    def check_forward_type(self, obj: _PendingGlobal, actual: Type, offset: int) -> None:
        want = obj.type
        if want == actual:
            return
        if isinstance(want, PointerType) and isinstance(actual, PointerType) and want.is_opaque:
            if want.addrspace == actual.addrspace:
                return
        raise self.err(f"'@{obj.name}' defined with type '{actual}' but expected '{want}'", offset)

    def function(self) -> Function:
        start = self.next()
        is_define = start[1] == "define"
        linkage = None
        quals: list[str] = []
        cc = None
        md: list[tuple[str, str]] = []
        while not is_define and self.peek()[0] == "METAVAR" and self.peek(1)[0] in ("METAVAR", "PUNCT"):
            # a declaration's attachments come right after 'declare'
            md.append(self.metadata_attachment())
        while True:
            t = self.peek()
            if t[0] == "WORD" and t[1] in LINKAGES:
                linkage = self.next()[1]
            elif t[0] == "WORD" and t[1] in GLOBAL_QUALIFIERS:
                quals.append(self.next()[1])
            elif t[0] == "WORD" and (t[1] in CALLING_CONVENTIONS or t[1] == "cc"):
                cc = self.calling_convention()
            else:
                break
        if linkage == "external":
            linkage = None  # a function's default linkage, never printed
        ret_attrs = self.param_attributes()
        ret = self.type_()
        name_tok = self.expect_kind("GLOBAL", "function name")
        name = self.global_name(name_tok)
        self.expect("(")
        args: list[Argument] = []
        vararg = False
        arg_names: list[tuple[str | None, int]] = []
        if not self.accept(")"):
            while True:
                if self.peek()[0] == "ELLIPSIS":
                    self.next()
                    vararg = True
                    self.expect(")")
                    break
                ty = self.type_()
                attrs = self.param_attributes()
                aname = None
                off = self.peek()[2]
                if self.peek()[0] == "LOCAL":
                    t = self.next()
                    aname, off = self.local_name(t), t[2]
                arg_names.append((aname, off))
                if not is_define:
                    aname = None  # LLVM keeps no parameter names on declarations
                args.append(Argument(ty, None if aname is not None and aname.isdigit() else aname, attrs))
                if self.accept(")"):
                    break
                self.expect(",")
        ftype = FunctionType(ret, tuple(a.type for a in args), vararg)
        if ret == LABEL or ret == METADATA:
            raise self.err("invalid function return type", name_tok[2])
        while self.peek()[1] in ("unnamed_addr", "local_unnamed_addr"):
            quals.append(self.next()[1])
        space = self.addrspace()
        fn_attrs = self.attributes()
        section = align = gc = None
        personality = None
        while True:
            if self.accept("section"):
                section = self.string()
            elif self.accept("align"):
                align = self.alignment()
            elif self.accept("gc"):
                gc = self.string()
            elif self.accept("personality"):
                pty = self.type_()
                personality = self.value(pty)
                if not isinstance(personality, Constant):
                    raise self.err("personality must be a constant")
            elif is_define and self.peek()[0] == "METAVAR":
                md.append(self.metadata_attachment())
            else:
                break
        obj = self.take_pending(name, name_tok[2])
        fn = obj if obj is not None else Function.__new__(Function)
        if obj is not None:
            self.check_forward_type(obj, PointerType(ftype, space), name_tok[2])
            fn.__class__ = Function
        Function.__init__(fn, name, ftype, args, linkage=linkage, cc=cc, gc=gc, ret_attrs=ret_attrs,
                          fn_attrs=fn_attrs, qualifiers=tuple(quals), personality=personality,
                          addrspace=space, section=section, align=align)
        fn.metadata = md
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

    def calling_convention(self) -> str | None:
        """The convention as LLVM prints it: its name where it has one, ``cc N`` otherwise, None for C."""
        t = self.next()[1]
        if t == "cc":
            number = self.int_literal('calling convention number')
            t = CC_NAMES.get(str(number), f"cc {number}")
        return None if t == "ccc" else t

    # -- function bodies ----------------------------------------------------------
    def function_body(self, fn: Function, arg_names, start_offset: int) -> None:
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

    def define_local(self, name: str | None, value: Value, offset: int) -> None:
        if name is None or name.isdigit():
            expected = self.slot
            if name is not None and (self.slot_number_too_long(name) or int(name) != expected):
                kind = "argument" if isinstance(value, Argument) else (
                    "label" if isinstance(value, BasicBlock) else "instruction")
                if not self.fix_numbering:
                    raise self.err(f"{kind} expected to be numbered '%{expected}'", offset)
                line, col = self.src.position(offset)
                self.module.notes.append(
                    f"{self.src.filename}:{line}:{col}: note: renumbered '%{name}' to '%{expected}' "
                    f"(unnamed values are numbered in order, and an unnamed entry block takes a number too)")
            self.slot += 1
            value.name = None
            if name is None:
                # With fix_numbering the source's own numbers name values; implicit slots stay private.
                name = f"<slot {expected}>" if self.fix_numbering else str(expected)
        else:
            value.name = name
        if name in self.locals:
            raise self.err(f"multiple definition of local value named '%{name}'", offset)
        self.locals[name] = value
        fwd = self.forward.pop(name, None)
        if fwd is not None:
            if fwd.type != value.type:
                raise self.err(f"'%{name}' defined with type '{value.type}' but expected '{fwd.type}'", offset)
            self._fixups.append((fwd, value))

    def basic_block(self, fn: Function) -> None:
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
                raise self.err("expected instruction opcode" if t[1] != "}" else
                               f"block '{block.name or '%' + str(self.slot - 1)}' has no terminator: "
                               "expected instruction opcode")
            self.release()
            comments = self.leading_comments(t[2])
            inst = self.instruction()
            inst.comments_before = comments
            inst.parent = block
            block.instructions.append(inst)
            inst.comment_after = self.trailing_comment()
            if inst.is_terminator:
                return

    def resolve_function(self, fn: Function) -> None:
        if self.forward:
            name, fwd = min(self.forward.items(), key=lambda kv: kv[1].offset)
            raise self.err(f"use of undefined value '%{name}'", fwd.offset)
        fixups = self._fixups
        self._fixups = []
        if fixups:
            mapping = {id(f): v for f, v in fixups}
            for inst in fn.instructions():
                for op in inst.operands:
                    if isinstance(op, _ForwardLocal):
                        inst.replace_uses_of(op, mapping[id(op)])

    def local_ref(self, tok, ty: Type) -> Value:
        name = self.local_name(tok)
        v = self.locals.get(name)
        if v is not None:
            if v.type != ty:
                raise self.err(f"'%{name}' defined with type '{v.type}' but expected '{ty}'", tok[2])
            return v
        if ty == LABEL:
            return self.block_ref(name, tok[2])
        fwd = self.forward.get(name)
        if fwd is None:
            fwd = _ForwardLocal(name, ty, tok[2])
            self.forward[name] = fwd
        elif fwd.type != ty:
            raise self.err(f"'%{name}' defined with type '{ty}' but expected '{fwd.type}'", tok[2])
        return fwd

    def block_ref(self, name: str, offset: int) -> BasicBlock:
        b = self.blocks.get(name)
        if b is None:
            if name in self.locals:
                raise self.err(f"'%{name}' is not a basic block", offset)
            b = BasicBlock(None if name.isdigit() else name)
            self.blocks[name] = b
            self.forward[name] = _ForwardLocal(name, LABEL, offset)
        return b

    def label(self) -> BasicBlock:
        self.expect("label")
        tok = self.expect_kind("LOCAL", "basic block name")
        name = self.local_name(tok)
        v = self.locals.get(name)
        if v is not None:
            if not isinstance(v, BasicBlock):
                raise self.err(f"'%{name}' is not a basic block", tok[2])
            return v
        return self.block_ref(name, tok[2])

    # -- values ------------------------------------------------------------------------
    def typed_value(self) -> Value:
        ty = self.type_()
        return self.value(ty)

    def value(self, ty: Type) -> Value:
        tok = self.peek()
        if tok[0] == "LOCAL":
            self.next()
            if ty == METADATA:
                raise self.err("metadata operands of gctoy's subset must be constants or '!' references")
            return self.local_ref(tok, ty)
        return self.constant(ty)

    def global_ref(self, tok, ty: Type) -> GlobalValue:
        name = self.global_name(tok)
        g = self.module.get_function(name) or self.module.get_global(name)
        if g is not None:
            if g.type != ty and not (isinstance(ty, PointerType) and ty.is_opaque
                                     and ty.addrspace == g.type.addrspace):
                raise self.err(f"'@{name}' defined with type '{g.type}' but expected '{ty}'", tok[2])
            return g
        if not isinstance(ty, PointerType):
            raise self.err(f"global variable reference must have pointer type, found '{ty}'", tok[2])
        p = self.pending.get(name)
        if p is None:
            p = _PendingGlobal(name, ty, tok[2])
            self.pending[name] = p
            self.first_use[name] = tok[2]
        elif p.type != ty:
            if p.type.is_opaque and not ty.is_opaque:
                p.type = ty
            elif not (ty.is_opaque and ty.addrspace == p.type.addrspace):
                raise self.err(f"'@{name}' defined with type '{p.type}' but expected '{ty}'", tok[2])
        return p

    def constant(self, ty: Type) -> Constant:
        tok = self.next()
        kind, text = tok[0], tok[1]
        if kind == "GLOBAL":
            return self.global_ref(tok, ty)
        if kind == "INT":
            if not isinstance(ty, IntType):
                raise self.err(f"integer constant must have integer type, not '{ty}'", tok[2])
            value = wrap_int(self.int_value(tok), ty.bits)
            key = (ty.bits, value)
            c = self.uniqued.get(key)
            if c is None:
                c = self.uniqued[key] = ConstantInt(ty, value)
            return c
        if kind in ("FLOAT", "HEXFLOAT"):
            if not isinstance(ty, FloatType):
                raise self.err(f"floating point constant invalid for type '{ty}'", tok[2])
            try:
                return ConstantFloat(ty, parse_float_literal(text, ty.kind))
            except FloatLiteralError as e:
                raise self.err(str(e), tok[2]) from None
        if kind == "WORD":
            if text in ("true", "false"):
                if ty != IntType(1):
                    raise self.err(f"'{text}' requires type i1, not '{ty}'", tok[2])
                return ConstantInt(ty, 1 if text == "true" else 0)
            if text == "null":
                if not isinstance(ty, PointerType):
                    raise self.err(f"null must be a pointer type, not '{ty}'", tok[2])
                return ConstantNull(ty)
            if text == "undef":
                return Undef(ty)
            if text == "poison":
                return Poison(ty)
            if text == "zeroinitializer":
                return ZeroInitializer(ty)
            if text == "none":
                if ty != TOKEN:
                    raise self.err("'none' requires type token", tok[2])
                return TokenNone(ty)
            if text in ("bitcast", "addrspacecast", "ptrtoint", "inttoptr"):
                self.expect("(")
                self.enter(tok[2])
                inner = self.typed_constant()
                self.leave()
                self.expect("to")
                to = self.type_()
                self.expect(")")
                if to != ty:
                    raise self.err(f"constant expression type '{to}' does not match '{ty}'", tok[2])
                return ConstantExpr(ty, text, (inner,))
            if text == "getelementptr":
                inbounds = self.accept("inbounds")
                self.expect("(")
                self.enter(tok[2])
                src = self.type_()
                self.expect(",")
                ops = [self.typed_constant()]
                while self.accept(","):
                    ops.append(self.typed_constant())
                self.leave()
                self.expect(")")
                return ConstantExpr(ty, "getelementptr", tuple(ops), src, inbounds)
        if kind == "CSTRING":
            data = unescape(text[2:-1])
            if not (isinstance(ty, ArrayType) and ty.element == IntType(8) and ty.count == len(data)):
                raise self.err(f"constant string of {len(data)} bytes does not match type '{ty}'", tok[2])
            return ConstantString(ty, data)
        if text == "[":
            if not isinstance(ty, ArrayType):
                raise self.err(f"array constant for non-array type '{ty}'", tok[2])
            elems = self.constant_list("]")
            if len(elems) != ty.count or any(e.type != ty.element for e in elems):
                raise self.err(f"array constant does not match type '{ty}'", tok[2])
            return ConstantAggregate(ty, elems)
        if text == "{" or (text == "<" and self.at("{")):
            packed = text == "<"
            if packed:
                self.next()
            elems = self.constant_list("}")
            if packed:
                self.expect(">")
            body = ty.elements if isinstance(ty, (StructType, NamedStructType)) else None
            if body is None or tuple(e.type for e in elems) != tuple(body):
                raise self.err(f"struct constant does not match type '{ty}'", tok[2])
            return ConstantAggregate(ty, elems)
        if text == "<":
            elems = self.constant_list(">")
            if not isinstance(ty, VectorType) or len(elems) != ty.count:
                raise self.err(f"vector constant does not match type '{ty}'", tok[2])
            return ConstantAggregate(ty, elems)
        if ty == METADATA and (kind in ("METAVAR", "MDSTRING") or text == "!"):
            self.i -= 1
            start = tok[2]
            end = self.skip_metadata()
            return MetadataOperand(ty, self.src.text[start:end])
        raise self.err(f"expected value, found '{text}'" if text else "expected value", tok[2])

    def typed_constant(self) -> Constant:
        """``T c`` where ``c`` must be a constant (constant expressions take no local values)."""
        ty = self.type_()
        tok = self.peek()
        if tok[0] == "LOCAL":
            raise self.err(f"a constant expression cannot use the local value '{tok[1]}'")
        return self.constant(ty)

    def constant_list(self, close: str) -> tuple[Constant, ...]:
        out = []
        if self.accept(close):
            return ()
        self.enter(self.peek()[2])
        while True:
            self.release()  # one constant can be most of the file
            ty = self.type_()
            out.append(self.constant(ty))
            if self.accept(close):
                self.leave()
                return tuple(out)
            self.expect(",")

    # -- instructions -------------------------------------------------------------------
    def finish_globals(self) -> None:
        if not self.pending:
            return
        for name, p in sorted(self.pending.items(), key=lambda kv: kv[1].offset):
            if not self.implicit:
                raise self.err(f"use of undefined value '@{name}'", p.offset)
            line, col = self.src.position(p.offset)
            ty = p.type
            if isinstance(ty, PointerType) and isinstance(ty.pointee, FunctionType):
                p.__class__ = Function
                Function.__init__(p, name, ty.pointee, addrspace=ty.addrspace)
                self.module.add_function(p)
                params = [str(t) for t in ty.pointee.params] + (["..."] if ty.pointee.vararg else [])
                decl = f"declare {ty.pointee.ret} @{name}({', '.join(params)})"
            elif isinstance(ty, PointerType) and ty.pointee is None:
                raise self.err(f"use of undefined value '@{name}' (its type cannot be inferred from an opaque "
                               "pointer; declare it)", p.offset)
            else:
                p.__class__ = GlobalVariable
                GlobalVariable.__init__(p, name, ty.pointee, None, linkage="external", addrspace=ty.addrspace)
                self.module.add_global(p)
                decl = f"@{name} = external global {ty.pointee}"
            self.module.notes.append(f"{self.src.filename}:{line}:{col}: note: '@{name}' was never declared; "
                                     f"declared it as '{decl}'")
        self.pending.clear()

