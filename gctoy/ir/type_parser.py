"""Parsing types: ``i32``, ``T*`` and ``T addrspace(N)*``, ``ptr``, structs, arrays, vectors and
function types, and the state every level of the IR parser shares (the module being built, the
uniqued types and constants, the pointer style).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from .floats import FLOAT_BITS
from .lexer import Token, first_pointer_spelling, pointer_type_parts
from .limits import MAX_NESTING, LimitChecks, type_depth
from .module import Module
from .names import unescape
from .types import (
    LABEL,
    METADATA,
    TOKEN,
    VOID,
    ArrayType,
    FloatType,
    FunctionType,
    IntType,
    LabelType,
    MetadataType,
    NamedStructType,
    PointerType,
    StructType,
    TokenType,
    Type,
    VectorType,
    VoidType,
)

_FLOAT_KINDS = frozenset(FLOAT_BITS)
#: the types no pointer may point to
_NOT_POINTEES = (VoidType, LabelType, TokenType, MetadataType)
_INT_TYPES = {f"i{n}": IntType(n) for n in (1, 8, 16, 32, 64, 128)}
_QUICK_NESTED = 8
_QUICK_DEPTH_LIMIT = MAX_NESTING - _QUICK_NESTED
#: tokens that can continue a type (pointer stars, address spaces, parameter lists)
_TYPE_SUFFIXES = frozenset({"*", "addrspace", "("})


#: the item type of a parameter list
T = TypeVar("T")


class MixedPointers(Exception):
    """A typed-pointer reading met ``ptr``: the module is read again with opaque pointers."""


class TypeParser(LimitChecks):
    """Types and names, over the token cursor (the base of the IR parser's levels)."""

    def __init__(self, text: str, filename: str, opaque: bool = False) -> None:
        super().__init__(text, filename)
        self.type_offsets: dict[str, int] = {}
        # Equal constants and types are shared (as LLVM uniques them): fewer objects on big inputs.
        self.uniqued: dict = {}
        self.module = Module()
        self.module.filename = filename
        self.defined_types: set[str] = set()
        self.type_aliases: dict[str, Type] = {}
        # each PTRTYPE spelling read so far: its type, and how deep the type nests below its top
        self.pointer_types: dict[str, tuple[Type, int]] = {}
        #: the types ``type_`` returns at once, by token text: i1..i128, and the pointer types above
        #: that nest at most _QUICK_NESTED deep (taken only below _QUICK_DEPTH_LIMIT, where they fit)
        self.quick_types: dict[str, Type] = dict(_INT_TYPES)
        self.opaque = opaque or self._pointer_style()

    def _pointer_style(self) -> bool:
        """True if the text's first pointer is spelled ``ptr`` (a later ``T*`` then reads as ``ptr``)."""
        return first_pointer_spelling(self.src.text) == "ptr"

    # -- names -----------------------------------------------------------------
    def local_name(self, tok: Token) -> str:
        """The name of a ``%x``/``@x`` token, unquoted and unescaped."""
        text = tok[1]
        if text[1] == '"':
            return unescape(text[2:-1]).decode("utf-8", "surrogateescape")
        return text[1:]

    global_name = local_name

    # -- types -----------------------------------------------------------------
    def type_(self) -> Type:
        """A type, with its pointer and function-type suffixes (``i8 addrspace(1)*``, ``void (i32)*``)."""
        toks, i = self.toks, self.i
        quick = self.quick_types.get(toks[i][1])
        if quick is not None and self.depth <= _QUICK_DEPTH_LIMIT and toks[i + 1][1] not in _TYPE_SUFFIXES:
            # the usual case, a common integer type or a pointer type met before, with nothing after it
            self.i = i + 1
            if i + 9 >= len(toks):
                self.lexer.fill(toks, self.comments)
            return quick
        tok = self.next()
        kind, text = tok[0], tok[1]
        ty: Type
        if kind == "INTTYPE":
            int_ty = _INT_TYPES.get(text)
            if int_ty is None:
                bits = int(text[1:]) if len(text) < 12 else 0
                if not 1 <= bits <= (1 << 23):
                    raise self.err("bitwidth for integer type out of range", tok[2])
                int_ty = IntType(bits)
            ty = int_ty
            if self.toks[self.i][1] not in _TYPE_SUFFIXES:
                return ty
        elif kind == "PTRTYPE":
            known = self.pointer_types.get(text)
            if known is not None and self.depth + known[1] <= MAX_NESTING:
                ty = known[0]
            else:
                ty = self.spelled_pointer(tok)
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
                raise MixedPointers()
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
        # 'ptr' (or 'ptr addrspace(N)') with no suffix yet: 'ptr*' is refused
        return self.type_suffixes(ty, (kind == "WORD" and text == "ptr") or (kind == "PTRTYPE" and text[0] == "p"))

    def type_suffixes(self, ty: Type, bare_ptr: bool) -> Type:
        """The pointer stars, address spaces and parameter lists after a type."""
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

    def spelled_pointer(self, tok: Token) -> Type:
        """The type of a ``PTRTYPE`` token, read from its parts as if they were separate tokens.

        Done once per spelling (the result is kept), and again wherever the kept type would nest
        too deeply, so that every error comes from the same checks, at the same offsets.
        """
        saved = self.toks, self.i
        # the EOF padding keeps ``next`` from asking the lexer for more tokens
        self.toks = pointer_type_parts(tok) + [("EOF", "", tok[2] + len(tok[1]))] * 16
        self.i = 0
        try:
            ty = self.type_()
        finally:
            self.toks, self.i = saved
        nested = type_depth(ty) - 1 if isinstance(ty, PointerType) and ty.pointee is not None else 0
        self.pointer_types[tok[1]] = (ty, nested)
        if nested <= _QUICK_NESTED:
            self.quick_types[tok[1]] = ty
        return ty

    def pointer_to(self, ty: Type, space: int, offset: int) -> PointerType:
        """A pointer to ``ty`` in ``space`` (uniqued); ``ptr`` when reading opaque pointers."""
        if isinstance(ty, _NOT_POINTEES):
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
        """An optional ``addrspace(N)``; 0 without it."""
        if not self.accept("addrspace"):
            return 0
        self.expect("(")
        n = self.address_space()
        self.expect(")")
        return n

    def type_list(self, close: str) -> tuple[Type, ...]:
        """Types separated by commas up to ``close`` (a struct's body)."""
        out = []
        if self.accept(close):
            return ()
        while True:
            out.append(self.type_())
            if self.accept(close):
                return tuple(out)
            self.expect(",")

    def parameter_list(self, item: Callable[[], T]) -> tuple[list[T], bool]:
        """``(item, item, ...)``: the items, and whether the list ends with ``...`` (variadic)."""
        self.expect("(")
        items: list[T] = []
        if self.accept(")"):
            return items, False
        while True:
            if self.peek()[0] == "ELLIPSIS":
                self.next()
                self.expect(")")
                return items, True
            items.append(item())
            if self.accept(")"):
                return items, False
            self.expect(",")

    def function_type_params(self, ret: Type) -> FunctionType:
        """``(T, U, ...)`` after a return type: the function type (uniqued)."""
        params, vararg = self.parameter_list(self.type_)
        key = ("()", id(ret), *map(id, params), vararg)  # the cached type keeps its parts alive
        f = self.uniqued.get(key)
        if f is None:
            f = self.uniqued[key] = FunctionType(ret, tuple(params), vararg)
        return f
