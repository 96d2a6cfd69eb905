"""Values of the IR: constants, arguments, globals, functions, basic blocks, the module.

Every value has a ``type`` and an optional ``name`` (``None`` means the value is
unnamed and gets a slot number ``%N`` when printed).  Instructions live in
:mod:`gctoy.ir.instructions`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Callable, Iterator

from .types import (
    LABEL,
    FunctionType,
    NamedStructType,
    PointerType,
    StructBody,
    Type,
)

from .floats import float_text
from .names import escape_string, quote_name
from .uses import InstructionList, tracks_uses, users_map

if TYPE_CHECKING:  # annotations only: instruction_base and module_base import this module
    from .instruction_base import Instruction
    from .module_base import ModuleBase

#: How a value is shown in messages: set by :mod:`gctoy.ir.printer` (which sits above this module)
#: to print it as LLVM text; until then a value shows its name.
_describe: list[Callable[["Value"], str]] = []


def set_value_describer(describe: Callable[["Value"], str]) -> None:
    """Make ``repr``/``str`` of every value use ``describe`` (the printer installs itself here)."""
    _describe[:] = [describe]


class Value:
    """Anything an instruction can use as an operand.

    A value keeps a use list (see :mod:`gctoy.ir.uses`): the instructions in blocks that read it."""

    type: Type
    name: str | None = None
    _tracks_uses = True

    @property
    def users(self) -> list[Instruction]:
        """The distinct instructions (in blocks) that read this value, in the order they began to."""
        return list(users_map(self))

    @property
    def num_uses(self) -> int:
        """How many operand slots of instructions in blocks read this value."""
        return sum(users_map(self).values())

    def has_users(self) -> bool:
        """True if some instruction in a block reads this value."""
        return bool(users_map(self))

    def replace_all_uses_with(self, new: "Value") -> int:
        """Make every instruction that reads this value read ``new``; returns the slots changed."""
        if new is self:
            return 0
        return sum(user.replace_uses_of(self, new) for user in list(users_map(self)))

    def __repr__(self) -> str:
        """The value as messages name it: a typed operand in LLVM syntax (``i8* null``, ``i64 %x``)."""
        ty = getattr(self, "type", None)
        try:
            if _describe:
                return _describe[0](self)
        except Exception:  # a half-built value: its name (or its type) is all there is to show
            pass
        if self.name is not None:
            sigil = "@" if isinstance(self, GlobalValue) else "%"
            return f"{sigil}{quote_name(self.name)}"
        return f"an unnamed value of type '{ty}'" if ty is not None else "an unnamed value"

    __str__ = __repr__


# ---------------------------------------------------------------------------
# Constants (compared by value)


class Constant(Value):
    """A compile-time constant (compared by content, so without a use list; globals have one)."""

    _tracks_uses = False


@dataclass(frozen=True, eq=True, repr=False)
class ConstantInt(Constant):
    """An integer constant ``i64 42`` (``true``/``false`` for ``i1``)."""

    type: Type
    value: int


@dataclass(frozen=True, eq=True, repr=False)
class ConstantFloat(Constant):
    """A floating-point constant, kept as the bit pattern of its type (``bits``)."""

    type: Type
    bits: int

    @property
    def text(self) -> str:
        """The constant as LLVM prints it (``1.500000e+00``, ``0x3FB99999A0000000``, ``0xH3C00``)."""
        return float_text(self.type.kind, self.bits)  # type: ignore[attr-defined]


@dataclass(frozen=True, eq=True, repr=False)
class InlineAsm(Constant):
    """``asm [sideeffect] [alignstack] [inteldialect] [unwind] "code", "constraints"``: a call's callee.

    The two strings are kept as written between their quotes (escapes included)."""

    type: Type
    asm: str
    constraints: str
    flags: tuple[str, ...] = ()


@dataclass(frozen=True, eq=True, repr=False)
class ConstantNull(Constant):
    """``null`` of a pointer type."""

    type: Type


@dataclass(frozen=True, eq=True, repr=False)
class Undef(Constant):
    """``undef``."""

    type: Type


@dataclass(frozen=True, eq=True, repr=False)
class Poison(Constant):
    """``poison``."""

    type: Type


@dataclass(frozen=True, eq=True, repr=False)
class ZeroInitializer(Constant):
    """``zeroinitializer``."""

    type: Type


@dataclass(frozen=True, eq=True, repr=False)
class TokenNone(Constant):
    """``none``, the empty token."""

    type: Type


@dataclass(frozen=True, eq=True, repr=False)
class ConstantAggregate(Constant):
    """``[ ... ]``, ``{ ... }``, ``<{ ... }>`` or ``< ... >`` of constants."""

    type: Type
    elements: tuple[Constant, ...]


@dataclass(frozen=True, eq=True, repr=False)
class ConstantString(Constant):
    """``c"..."``: an ``[N x i8]`` constant."""

    type: Type
    data: bytes


@dataclass(frozen=True, eq=True, repr=False)
class ConstantExpr(Constant):
    """A constant expression: a cast or ``getelementptr`` over constants.

    ``opcode`` is ``bitcast``, ``addrspacecast``, ``ptrtoint``, ``inttoptr`` or
    ``getelementptr``; for a GEP ``source_type`` is the indexed type.
    """

    type: Type
    opcode: str
    operands: tuple[Constant, ...]
    source_type: Type | None = None
    inbounds: bool = False


@dataclass(frozen=True, eq=True, repr=False)
class MetadataOperand(Constant):
    """A ``metadata ...`` call operand, kept as its source text (``!0``, ``!"name"``)."""

    type: Type
    text: str


# ---------------------------------------------------------------------------
# Attributes


@dataclass(frozen=True)
class Attribute:
    """One attribute: ``nounwind``, ``align 8``, ``dereferenceable(16)``,
    ``"statepoint-id"="7"``, ``elementtype(i32)`` or a group reference ``#0``."""

    kind: str
    value: str | int | None = None
    type: Type | None = None
    style: str = "plain"  # plain | space (align 8) | paren (deref(16)) | string | group

    def render(self, opaque: bool = False) -> str:
        """The attribute as IR text."""
        if self.style == "group":
            return f"#{self.kind}"
        if self.style == "string":
            key = f'"{escape_string(self.kind)}"'
            return key if self.value is None else f'{key}="{escape_string(str(self.value))}"'
        if self.type is not None:
            return f"{self.kind}({self.type.render(opaque)})"
        if self.value is None:
            return self.kind
        if self.style == "space":
            return f"{self.kind} {self.value}"
        return f"{self.kind}({self.value})"

    @property
    def is_string(self) -> bool:
        """True for ``"key"="value"`` attributes."""
        return self.style == "string"


def render_attrs(attrs: tuple[Attribute, ...] | list[Attribute], opaque: bool = False) -> str:
    """Attributes joined by spaces."""
    return " ".join(a.render(opaque) for a in attrs)


def resolve_attrs(attrs: tuple[Attribute, ...], module) -> tuple[Attribute, ...]:
    """Expand ``#N`` group references into the group's attributes (``module`` may be None)."""
    out: list[Attribute] = []
    for a in attrs:
        if a.style == "group" and module is not None and a.kind in module.attribute_groups:
            out.extend(module.attribute_groups[a.kind].attrs)
        else:
            out.append(a)
    return tuple(out)


def find_string_attr(attrs, key: str) -> str | None:
    """The value of ``"key"="value"`` among ``attrs`` (``""`` for a bare ``"key"``), else None."""
    for a in attrs:
        if a.style == "string" and a.kind == key:
            return "" if a.value is None else str(a.value)
    return None


# ---------------------------------------------------------------------------
# Arguments, globals, functions, blocks


class Argument(Value):
    """A formal parameter of a function."""

    #: (line, column) of its type in the source, when parsed
    loc: tuple[int, int] | None = None

    def __init__(self, type: Type, name: str | None = None, attrs: tuple[Attribute, ...] = ()):
        self.type = type
        self.name = name
        self.attrs = tuple(attrs)
        self.parent: Function | None = None


class GlobalValue(Constant):
    """A global variable or function: its value is its address (a pointer)."""

    name: str
    type: PointerType  # a global's value is its address
    linkage: str | None = None
    # tokens such as dso_local, hidden, unnamed_addr, local_unnamed_addr
    qualifiers: tuple[str, ...] = ()
    # set when added to a module (``module`` stays after removal; ``_in_module`` says if it is there)
    module: ModuleBase | None
    _in_module: ModuleBase | None
    # the source's comments, set by the parser (the printer reads them with getattr)
    comments_before: list[str]
    comment_after: str | None
    #: (line, column) of its definition (``@g`` or ``define``/``declare``) in the source, when parsed
    loc: tuple[int, int] | None = None

    _tracks_uses = True
    __hash__ = object.__hash__

    def __eq__(self, other):
        return self is other


class GlobalVariable(GlobalValue):
    """``@g = [linkage] [thread_local] global|constant T [init], align N``."""

    def __init__(
        self,
        name: str,
        value_type: Type,
        initializer: Constant | None = None,
        *,
        constant: bool = False,
        linkage: str | None = None,
        thread_local: str | None = None,
        addrspace: int = 0,
        align: int | None = None,
        qualifiers: tuple[str, ...] = (),
        section: str | None = None,
    ):
        self.name = name
        self.value_type = value_type
        self.initializer = initializer
        self.constant = constant
        self.linkage = linkage
        self.thread_local = thread_local
        self.addrspace = addrspace
        self.align = align
        self.qualifiers = tuple(qualifiers)
        self.section = section
        self.type = PointerType(value_type, addrspace)

    @property
    def is_declaration(self) -> bool:
        """True for ``external global`` (no initializer)."""
        return self.initializer is None


class Function(GlobalValue):
    """A function definition (with blocks) or declaration (without)."""

    # the source's comments after ``{`` and before ``}``, set by the parser
    header_comment: str | None
    trailing_comments: list[str]

    def __init__(
        self,
        name: str,
        ftype: FunctionType,
        args: list[Argument] | None = None,
        *,
        linkage: str | None = None,
        cc: str | None = None,
        gc: str | None = None,
        ret_attrs: tuple[Attribute, ...] = (),
        fn_attrs: tuple[Attribute, ...] = (),
        qualifiers: tuple[str, ...] = (),
        personality: Constant | None = None,
        addrspace: int = 0,
        section: str | None = None,
        align: int | None = None,
    ):
        self.name = name
        self.ftype = ftype
        if args is None:
            args = [Argument(t) for t in ftype.params]
        self.args = list(args)
        for a in self.args:
            a.parent = self
        self.linkage = linkage
        self.cc = cc
        self.gc = gc
        self.ret_attrs = tuple(ret_attrs)
        self.fn_attrs = tuple(fn_attrs)
        self.qualifiers = tuple(qualifiers)
        self.personality = personality
        self.addrspace = addrspace
        self.section = section
        self.align = align
        self.blocks: list[BasicBlock] = []
        self.type = PointerType(ftype, addrspace)
        self.metadata: list[tuple[str, str]] = []

    @property
    def is_declaration(self) -> bool:
        """True if the function has no body."""
        return not self.blocks

    @property
    def entry(self) -> "BasicBlock":
        """The entry block."""
        return self.blocks[0]

    def instructions(self) -> Iterator[Instruction]:
        """Every instruction, block by block."""
        for b in self.blocks:
            yield from b.instructions

    def add_block(self, name: str | None = None, before: "BasicBlock | None" = None) -> "BasicBlock":
        """Append (or insert before ``before``) a new empty block."""
        block = BasicBlock(name)
        block.parent = self
        if before is None:
            self.blocks.append(block)
        else:
            self.blocks.insert(self.blocks.index(before), block)
        return block

    def replace_all_uses(self, old: Value, new: Value) -> int:
        """Replace every use of ``old`` in this function by ``new``; returns the count.

        Follows ``old``'s use list, so the cost is the number of its users, not the function's size."""
        if new is old:
            return sum(n for u, n in users_map(old).items() if u.function is self)
        if not tracks_uses(old):  # a constant: no use list, so look at every instruction
            return sum(inst.replace_uses_of(old, new) for inst in self.instructions())
        return sum(u.replace_uses_of(old, new) for u in list(users_map(old)) if u.function is self)

    def string_attr(self, key: str) -> str | None:
        """A string function attribute, looking through attribute groups."""
        mod = getattr(self, "module", None)
        return find_string_attr(resolve_attrs(self.fn_attrs, mod), key)


class BasicBlock(Value):
    """A labelled list of instructions ending in one terminator."""

    comments_before: list[str]  # the source's comments before the label, set by the parser

    def __init__(self, name: str | None = None):
        self.name = name
        self.type = LABEL
        self.instructions = []
        self.parent: Function | None = None

    @property
    def instructions(self) -> "InstructionList":
        """The instructions, in order; adding one sets its ``parent``, removing one clears it."""
        return self.__dict__["instructions"]

    @instructions.setter
    def instructions(self, items) -> None:
        items = list(items)
        old = self.__dict__.get("instructions")
        if old:
            keep = {id(i) for i in items}
            for inst in old:
                if id(inst) not in keep and inst.parent is self:
                    inst.parent = None
        self.__dict__["instructions"] = InstructionList(self, items)
        for inst in items:
            inst.parent = self

    @property
    def terminator(self) -> Instruction | None:
        """The last instruction if it is a terminator."""
        if self.instructions and self.instructions[-1].is_terminator:
            return self.instructions[-1]
        return None

    @property
    def successors(self) -> list["BasicBlock"]:
        """Successor blocks in terminator order (duplicates removed)."""
        term = self.terminator
        if term is None:
            return []
        seen: list[BasicBlock] = []
        for b in term.successors:
            if b not in seen:
                seen.append(b)
        return seen

    def append(self, inst: Instruction) -> Instruction:
        """Add an instruction at the end."""
        inst.parent = self
        self.instructions.append(inst)
        return inst

    def insert(self, index: int, inst: Instruction) -> Instruction:
        """Insert an instruction at ``index``."""
        inst.parent = self
        self.instructions.insert(index, inst)
        return inst

    def insert_before(self, anchor: Instruction, inst: Instruction) -> Instruction:
        """Insert ``inst`` just before ``anchor``."""
        return self.insert(self.instructions.index(anchor), inst)

    def insert_after(self, anchor: Instruction, inst: Instruction) -> Instruction:
        """Insert ``inst`` just after ``anchor``."""
        return self.insert(self.instructions.index(anchor) + 1, inst)

    def phis(self) -> list[Instruction]:
        """The leading phi instructions."""
        out = []
        for inst in self.instructions:
            if getattr(inst, "opcode", None) != "phi":
                break
            out.append(inst)
        return out


@dataclass
class NamedType:
    """``%T = type ...`` in a module."""

    name: str
    body: StructBody

    @property
    def ref(self) -> NamedStructType:
        """The type used to refer to it."""
        return NamedStructType(self.name, self.body)


@dataclass
class AttributeGroup:
    """``attributes #N = { ... }``."""

    id: str
    attrs: tuple[Attribute, ...]


@dataclass
class MetadataDef:
    """``!name = ...`` (numbered or named), kept as source text."""

    name: str
    text: str
    distinct: bool = False


@dataclass
class ModuleHeader:
    """``source_filename``, ``target datalayout``, ``target triple``."""

    source_filename: str | None = None
    datalayout: str | None = None
    triple: str | None = None
    comments: list[str] = field(default_factory=list)
