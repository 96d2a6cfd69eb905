"""Parsing constants: integers, floats, ``null``/``undef``/``poison``/``zeroinitializer``/``none``,
constant expressions (casts, ``getelementptr``), strings, arrays, structs, vectors, metadata operands
and references to globals (which may come before their definition).
"""

from __future__ import annotations

from typing import TypeVar

from .attribute_parser import AttributeParser
from .floats import FloatLiteralError, parse_float_literal
from .lexer import Token
from .names import unescape
from .type_parser import Type
from .type_rules import wrap_int
from .types import METADATA, TOKEN, ArrayType, FloatType, IntType, NamedStructType, PointerType, StructType, VectorType
from .values import (
    Constant,
    ConstantAggregate,
    ConstantExpr,
    ConstantFloat,
    ConstantInt,
    ConstantNull,
    ConstantString,
    GlobalValue,
    MetadataOperand,
    Poison,
    TokenNone,
    Undef,
    ZeroInitializer,
)

#: the casts a constant expression may be
_CONSTANT_CASTS = ("bitcast", "addrspacecast", "ptrtoint", "inttoptr")


class PendingGlobal(GlobalValue):
    """A global used before its definition; becomes the real object in place."""

    def __init__(self, name: str, type: PointerType, offset: int):
        self.name = name
        self.type = type
        self.offset = offset


G = TypeVar("G", bound=GlobalValue)


def become(obj: PendingGlobal, cls: type[G]) -> G:
    """Turn a pending global into ``cls`` in place, so its uses see the definition (``cls.__init__``
    comes next)."""
    obj.__class__ = cls  # type: ignore[assignment]  # the object changes class in place, on purpose
    assert isinstance(obj, cls)
    return obj


class ConstantParser(AttributeParser):
    """Constants and global references (over the attribute parser)."""

    def __init__(self, text: str, filename: str, implicit_declarations: bool, opaque: bool = False) -> None:
        super().__init__(text, filename, opaque)
        self.implicit = implicit_declarations
        self.pending: dict[str, PendingGlobal] = {}
        self.first_use: dict[str, int] = {}

    def global_ref(self, tok: Token, ty: Type) -> GlobalValue:
        """``@g`` used as a value of type ``ty``: the global, or a placeholder until it is defined."""
        name = self.global_name(tok)
        g = self.module.get_function(name) or self.module.get_global(name)
        if g is not None:
            if g.type != ty and not (isinstance(ty, PointerType) and ty.is_opaque and ty.addrspace == g.type.addrspace):
                raise self.err(f"'@{name}' defined with type '{g.type}' but expected '{ty}'", tok[2])
            return g
        if not isinstance(ty, PointerType):
            raise self.err(f"global variable reference must have pointer type, found '{ty}'", tok[2])
        p = self.pending.get(name)
        if p is None:
            p = PendingGlobal(name, ty, tok[2])
            self.pending[name] = p
            self.first_use[name] = tok[2]
        elif p.type != ty:
            if p.type.is_opaque and not ty.is_opaque:
                p.type = ty
            elif not (ty.is_opaque and ty.addrspace == p.type.addrspace):
                raise self.err(f"'@{name}' defined with type '{p.type}' but expected '{ty}'", tok[2])
        return p

    def constant(self, ty: Type) -> Constant:
        """A constant of type ``ty`` (the type already read)."""
        self.split_pointer_type()
        tok = self.next()
        kind, text = tok[0], tok[1]
        if kind == "GLOBAL":
            return self.global_ref(tok, ty)
        if kind == "INT":
            return self.int_constant(tok, ty)
        if kind in ("FLOAT", "HEXFLOAT"):
            return self.float_constant(tok, ty)
        if kind == "WORD":
            c = self.keyword_constant(tok, ty)
            if c is not None:
                return c
        if kind == "CSTRING":
            return self.string_constant(tok, ty)
        if text in ("[", "{", "<"):
            return self.aggregate_constant(tok, ty)
        if ty == METADATA and (kind in ("METAVAR", "MDSTRING") or text == "!"):
            self.i -= 1
            start = tok[2]
            end = self.skip_metadata()
            return MetadataOperand(ty, self.src.text[start:end])
        raise self.err(f"expected value, found '{text}'" if text else "expected value", tok[2])

    def int_constant(self, tok: Token, ty: Type) -> ConstantInt:
        """An integer literal of type ``ty``, wrapped to its width."""
        if not isinstance(ty, IntType):
            raise self.err(f"integer constant must have integer type, not '{ty}'", tok[2])
        value = wrap_int(self.int_value(tok), ty.bits)
        key = (ty.bits, value)
        c = self.uniqued.get(key)
        if c is None:
            c = self.uniqued[key] = ConstantInt(ty, value)
        return c

    def float_constant(self, tok: Token, ty: Type) -> ConstantFloat:
        """A decimal or hexadecimal floating-point literal of type ``ty``."""
        if not isinstance(ty, FloatType):
            raise self.err(f"floating point constant invalid for type '{ty}'", tok[2])
        try:
            return ConstantFloat(ty, parse_float_literal(tok[1], ty.kind))
        except FloatLiteralError as e:
            raise self.err(str(e), tok[2]) from None

    def keyword_constant(self, tok: Token, ty: Type) -> Constant | None:
        """``true``, ``null``, ``undef``, ... or a constant expression; None for another word."""
        text = tok[1]
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
        if text in _CONSTANT_CASTS:
            return self.cast_expression(tok, ty)
        if text == "getelementptr":
            return self.gep_expression(tok, ty)
        return None

    def cast_expression(self, tok: Token, ty: Type) -> ConstantExpr:
        """``bitcast (T c to U)`` and the other casts, after the opcode."""
        self.expect("(")
        self.enter(tok[2])
        inner = self.typed_constant()
        self.leave()
        self.expect("to")
        to = self.type_()
        self.expect(")")
        if to != ty:
            raise self.err(f"constant expression type '{to}' does not match '{ty}'", tok[2])
        return ConstantExpr(ty, tok[1], (inner,))

    def gep_expression(self, tok: Token, ty: Type) -> ConstantExpr:
        """``getelementptr [inbounds] (T, ptr c, idx...)``, after the opcode."""
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

    def string_constant(self, tok: Token, ty: Type) -> ConstantString:
        """``c"..."``: its bytes must fill ``[N x i8]``."""
        data = unescape(tok[1][2:-1])
        if not (isinstance(ty, ArrayType) and ty.element == IntType(8) and ty.count == len(data)):
            raise self.err(f"constant string of {len(data)} bytes does not match type '{ty}'", tok[2])
        return ConstantString(ty, data)

    def aggregate_constant(self, tok: Token, ty: Type) -> ConstantAggregate:
        """An array ``[...]``, a struct ``{...}`` or ``<{...}>``, or a vector ``<...>``, after its opening token."""
        text = tok[1]
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
        elems = self.constant_list(">")
        if not isinstance(ty, VectorType) or len(elems) != ty.count:
            raise self.err(f"vector constant does not match type '{ty}'", tok[2])
        return ConstantAggregate(ty, elems)

    def typed_constant(self) -> Constant:
        """``T c`` where ``c`` must be a constant (constant expressions take no local values)."""
        ty = self.type_()
        self.split_pointer_type()
        tok = self.peek()
        if tok[0] == "LOCAL":
            raise self.err(f"a constant expression cannot use the local value '{tok[1]}'")
        return self.constant(ty)

    def constant_list(self, close: str) -> tuple[Constant, ...]:
        """Typed constants separated by commas up to ``close``."""
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
