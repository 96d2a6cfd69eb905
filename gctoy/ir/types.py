"""LLVM types of the gctoy IR subset.

Types are immutable values: two ``IntType(64)`` compare equal and hash alike.
A pointer is *typed* when it knows its pointee (``i8 addrspace(1)*``) and
*opaque* when it does not (``ptr addrspace(1)``); the printer can write either
spelling, see :mod:`gctoy.ir.printer`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from operator import attrgetter
from typing import TypeVar

from .names import quote_name

_T = TypeVar("_T")

#: The address space that ``statepoint-example`` and ``coreclr`` use for GC pointers.
GC_ADDRSPACE = 1


def _fast_eq(cls: type[_T]) -> type[_T]:
    """Give a frozen dataclass (made with ``eq=False``) an ``==`` that first asks whether both sides
    are the same object.

    Types are shared (the parser makes each pointer and function type once), so most
    comparisons are between identical objects or between different classes; the ``__eq__``
    dataclasses write compares field tuples even then, and answers ``NotImplemented`` to another
    class, which makes Python try the reverse comparison too.  The hash is the dataclass's own:
    the hash of the tuple of compared fields.
    """
    names = tuple(f.name for f in fields(cls) if f.compare)  # type: ignore[arg-type]
    if not names:

        def __eq__(self, other):
            return self is other or other.__class__ is self.__class__

        def __hash__(self):
            return hash(())

    elif len(names) == 1:
        get = attrgetter(names[0])

        def __eq__(self, other):
            return self is other or (other.__class__ is self.__class__ and get(self) == get(other))

        def __hash__(self):
            return hash((get(self),))

    else:
        get_all = attrgetter(*names)  # a tuple of the fields

        def __eq__(self, other):
            return self is other or (other.__class__ is self.__class__ and get_all(self) == get_all(other))

        def __hash__(self):
            return hash(get_all(self))

    cls.__eq__ = __eq__  # type: ignore[method-assign]
    cls.__hash__ = __hash__  # type: ignore[method-assign]
    return cls


class Type:
    """Base class of every IR type.

    A plain class, not an ``abc.ABC``: ``isinstance`` against an ABC's subclasses goes through
    ``ABCMeta.__instancecheck__``, several times slower, and type tests are everywhere.
    """

    def render(self, opaque: bool = False) -> str:
        """The type spelled as LLVM IR (typed pointers unless ``opaque``)."""
        raise NotImplementedError(f"{type(self).__name__} does not define render()")

    def __str__(self) -> str:
        return self.render()

    def __repr__(self) -> str:
        return self.render()

    @property
    def is_first_class(self) -> bool:
        """True for types a value can have (everything but void, function and label)."""
        return not isinstance(self, (VoidType, FunctionType, LabelType))


@_fast_eq
@dataclass(frozen=True, repr=False, eq=False)
class VoidType(Type):
    """``void``."""

    def render(self, opaque: bool = False) -> str:
        return "void"


@_fast_eq
@dataclass(frozen=True, repr=False, eq=False)
class IntType(Type):
    """``iN``."""

    bits: int

    def render(self, opaque: bool = False) -> str:
        return f"i{self.bits}"


@_fast_eq
@dataclass(frozen=True, repr=False, eq=False)
class FloatType(Type):
    """``half``, ``bfloat``, ``float``, ``double``, ``x86_fp80`` or ``fp128``."""

    kind: str

    def render(self, opaque: bool = False) -> str:
        return self.kind


@_fast_eq
@dataclass(frozen=True, repr=False, eq=False)
class TokenType(Type):
    """``token``: the result of ``gc.statepoint`` (and landing pads' tokens)."""

    def render(self, opaque: bool = False) -> str:
        return "token"


@_fast_eq
@dataclass(frozen=True, repr=False, eq=False)
class LabelType(Type):
    """``label``: the type of a basic block."""

    def render(self, opaque: bool = False) -> str:
        return "label"


@_fast_eq
@dataclass(frozen=True, repr=False, eq=False)
class MetadataType(Type):
    """``metadata``: operands such as ``metadata !0`` or ``metadata i8* null``."""

    def render(self, opaque: bool = False) -> str:
        return "metadata"


@_fast_eq
@dataclass(frozen=True, repr=False, eq=False)
class PointerType(Type):
    """A pointer; ``pointee`` is ``None`` for an opaque ``ptr``."""

    pointee: Type | None = None
    addrspace: int = 0

    @property
    def is_opaque(self) -> bool:
        """True for ``ptr`` (no pointee type)."""
        return self.pointee is None

    def render(self, opaque: bool = False) -> str:
        if opaque or self.pointee is None:
            return "ptr" if self.addrspace == 0 else f"ptr addrspace({self.addrspace})"
        inner = self.pointee.render(False)
        if self.addrspace:
            return f"{inner} addrspace({self.addrspace})*"
        return f"{inner}*"


@_fast_eq
@dataclass(frozen=True, repr=False, eq=False)
class FunctionType(Type):
    """``ret (params...)`` with an optional trailing ``...``."""

    ret: Type
    params: tuple[Type, ...] = ()
    vararg: bool = False

    def render(self, opaque: bool = False) -> str:
        parts = [p.render(opaque) for p in self.params]
        if self.vararg:
            parts.append("...")
        return f"{self.ret.render(opaque)} ({', '.join(parts)})"


@_fast_eq
@dataclass(frozen=True, repr=False, eq=False)
class StructType(Type):
    """A literal struct ``{ a, b }`` (``<{ }>`` when packed)."""

    elements: tuple[Type, ...] = ()
    packed: bool = False

    def render(self, opaque: bool = False) -> str:
        if not self.elements:
            return "<{}>" if self.packed else "{}"
        body = ", ".join(e.render(opaque) for e in self.elements)
        return f"<{{ {body} }}>" if self.packed else f"{{ {body} }}"


@_fast_eq
@dataclass(frozen=True, repr=False, eq=False)
class NamedStructType(Type):
    """A reference to a module's named type ``%T``; its body lives in the module."""

    name: str
    body: "StructBody" = field(compare=False, hash=False, repr=False, default=None)  # type: ignore[assignment]

    def render(self, opaque: bool = False) -> str:
        return "%" + quote_name(self.name)

    @property
    def elements(self) -> tuple[Type, ...]:
        """The body's element types (empty for an opaque struct)."""
        if self.body is None or self.body.elements is None:
            return ()
        return self.body.elements


class StructBody:
    """The mutable body of a named struct: ``None`` elements means ``opaque``."""

    def __init__(self, elements: tuple[Type, ...] | None = None, packed: bool = False):
        self.elements = elements
        self.packed = packed

    def render(self, opaque: bool = False) -> str:
        """The right-hand side of ``%T = type ...``."""
        if self.elements is None:
            return "opaque"
        return StructType(self.elements, self.packed).render(opaque)


@_fast_eq
@dataclass(frozen=True, repr=False, eq=False)
class ArrayType(Type):
    """``[N x T]``."""

    count: int
    element: Type

    def render(self, opaque: bool = False) -> str:
        return f"[{self.count} x {self.element.render(opaque)}]"


@_fast_eq
@dataclass(frozen=True, repr=False, eq=False)
class VectorType(Type):
    """``<N x T>``."""

    count: int
    element: Type

    def render(self, opaque: bool = False) -> str:
        return f"<{self.count} x {self.element.render(opaque)}>"


VOID = VoidType()
TOKEN = TokenType()
LABEL = LabelType()
METADATA = MetadataType()
I1 = IntType(1)
I8 = IntType(8)
I32 = IntType(32)
I64 = IntType(64)


def ptr(pointee: Type | None = None, addrspace: int = 0) -> PointerType:
    """A pointer type: ``ptr(I8, 1)`` is ``i8 addrspace(1)*``."""
    return PointerType(pointee, addrspace)


def is_gc_pointer(ty: Type) -> bool:
    """True for pointers into the GC heap (address space 1), the abstract machine's references."""
    return isinstance(ty, PointerType) and ty.addrspace == GC_ADDRSPACE


def contains_gc_pointer(ty: Type) -> bool:
    """True if a value of this type holds a GC pointer somewhere (vector/struct/array)."""
    if is_gc_pointer(ty):
        return True
    if isinstance(ty, (ArrayType, VectorType)):
        return contains_gc_pointer(ty.element)
    if isinstance(ty, (StructType, NamedStructType)):
        return any(contains_gc_pointer(e) for e in ty.elements)
    return False


def erase_pointees(ty: Type) -> Type:
    """The same type with every pointer made opaque (what LLVM >= 15 sees)."""
    if isinstance(ty, PointerType):
        return PointerType(None, ty.addrspace)
    if isinstance(ty, FunctionType):
        return FunctionType(erase_pointees(ty.ret), tuple(erase_pointees(p) for p in ty.params), ty.vararg)
    if isinstance(ty, StructType):
        return StructType(tuple(erase_pointees(e) for e in ty.elements), ty.packed)
    if isinstance(ty, ArrayType):
        return ArrayType(ty.count, erase_pointees(ty.element))
    if isinstance(ty, VectorType):
        return VectorType(ty.count, erase_pointees(ty.element))
    return ty


def mangle(ty: Type) -> str:
    """The overloaded-intrinsic suffix of a type in LLVM 14's typed scheme (``p1i8``, ``p0f_isVoidf``)."""
    if isinstance(ty, PointerType):
        if ty.pointee is None:
            return f"p{ty.addrspace}"
        return f"p{ty.addrspace}{mangle(ty.pointee)}"
    if isinstance(ty, IntType):
        return f"i{ty.bits}"
    if isinstance(ty, FloatType):
        return {"half": "f16", "bfloat": "bf16", "float": "f32", "double": "f64", "x86_fp80": "f80", "fp128": "f128"}[
            ty.kind
        ]
    if isinstance(ty, VoidType):
        return "isVoid"
    if isinstance(ty, FunctionType):
        inner = mangle(ty.ret) + "".join(mangle(p) for p in ty.params)
        return f"f_{inner}{'vararg' if ty.vararg else ''}f"
    if isinstance(ty, NamedStructType):
        return f"s_{ty.name}s"
    if isinstance(ty, StructType):
        return "sl_" + "".join(mangle(e) for e in ty.elements) + "s"
    if isinstance(ty, ArrayType):
        return f"a{ty.count}{mangle(ty.element)}"
    if isinstance(ty, VectorType):
        return f"v{ty.count}{mangle(ty.element)}"
    if isinstance(ty, TokenType):
        return "token"
    if isinstance(ty, MetadataType):
        return "Metadata"
    raise ValueError(f"cannot mangle {ty}")
