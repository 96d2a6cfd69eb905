"""Instructions of the IR subset, one class per LLVM instruction family.

Every instruction is a :class:`~gctoy.ir.values.Value` (its result), knows its
``parent`` block, lists its ``operands`` and can swap one operand for another
(``replace_uses_of``), which is all the passes need to rewrite uses.
"""

from __future__ import annotations


from ..errors import VerifyError

from .types import (
    I1,
    TOKEN,
    VOID,
    ArrayType,
    IntType,
    NamedStructType,
    PointerType,
    StructType,
    Type,
    VectorType,
)
from .instruction_base import Instruction, SimpleInstruction, swap_operands  # noqa: F401  (re-exported)
from .uses import operand_list, operand_slot, pair
from .values import BasicBlock, ConstantInt, Value

BINARY_OPS = ("add", "sub", "mul", "sdiv", "udiv", "srem", "urem", "shl", "lshr", "ashr", "and", "or", "xor")
FLOAT_OPS = ("fadd", "fsub", "fmul", "fdiv", "frem")
CAST_OPS = (
    "bitcast",
    "addrspacecast",
    "ptrtoint",
    "inttoptr",
    "trunc",
    "zext",
    "sext",
    "fptosi",
    "fptoui",
    "sitofp",
    "uitofp",
    "fpext",
    "fptrunc",
)
ICMP_PREDICATES = ("eq", "ne", "ugt", "uge", "ult", "ule", "sgt", "sge", "slt", "sle")
FCMP_PREDICATES = (
    "false",
    "oeq",
    "ogt",
    "oge",
    "olt",
    "ole",
    "one",
    "ord",
    "ueq",
    "ugt",
    "uge",
    "ult",
    "ule",
    "une",
    "uno",
    "true",
)
FAST_MATH_FLAGS = ("fast", "nnan", "ninf", "nsz", "arcp", "contract", "afn", "reassoc")


class Alloca(SimpleInstruction):
    """``alloca T[, iN count][, align A][, addrspace(N)]``."""

    opcode = "alloca"

    def __init__(
        self,
        allocated_type: Type,
        count: Value | None = None,
        align: int | None = None,
        addrspace: int = 0,
        name: str | None = None,
    ):
        super().__init__(PointerType(allocated_type, addrspace), name)
        self.allocated_type = allocated_type
        self.ops = [count] if count is not None else []
        self.align = align
        self.addrspace = addrspace

    @property
    def count(self) -> Value | None:
        """The element count operand, if given."""
        return self.ops[0] if self.ops else None


class Load(SimpleInstruction):
    """``load [atomic] [volatile] T, T* %p[ [syncscope("S")] ORDERING][, align A]``."""

    opcode = "load"

    def __init__(
        self,
        type: Type,
        pointer: Value,
        align: int | None = None,
        volatile: bool = False,
        name: str | None = None,
        *,
        ordering: str | None = None,
        syncscope: str | None = None,
    ):
        super().__init__(type, name)
        self.ops = [pointer]
        self.align = align
        self.volatile = volatile
        #: an atomic load's ordering (``unordered``, ``monotonic``, ``acquire``, ``seq_cst``), else None
        self.ordering = ordering
        #: an atomic load's ``syncscope("...")`` name, None for the whole system
        self.syncscope = syncscope

    @property
    def pointer(self) -> Value:
        """The address loaded from."""
        return self.ops[0]


class Store(SimpleInstruction):
    """``store [atomic] [volatile] T %v, T* %p[ [syncscope("S")] ORDERING][, align A]``."""

    opcode = "store"

    def __init__(
        self,
        value: Value,
        pointer: Value,
        align: int | None = None,
        volatile: bool = False,
        *,
        ordering: str | None = None,
        syncscope: str | None = None,
    ):
        super().__init__(VOID, None)
        self.ops = [value, pointer]
        self.align = align
        self.volatile = volatile
        #: an atomic store's ordering (``unordered``, ``monotonic``, ``release``, ``seq_cst``), else None
        self.ordering = ordering
        #: an atomic store's ``syncscope("...")`` name, None for the whole system
        self.syncscope = syncscope

    @property
    def value(self) -> Value:
        """The value stored."""
        return self.ops[0]

    @property
    def pointer(self) -> Value:
        """The address stored to."""
        return self.ops[1]


def indexed_type(source: Type, indices: list[Value]) -> Type:
    """The type a GEP with these indices (after the first) points at."""
    ty = source
    for idx in indices[1:]:
        if isinstance(ty, NamedStructType):
            ty = StructType(ty.elements)
        if isinstance(ty, StructType):
            if not isinstance(idx, ConstantInt) or not 0 <= idx.value < len(ty.elements):
                raise ValueError("invalid struct index in getelementptr")
            ty = ty.elements[idx.value]
        elif isinstance(ty, (ArrayType, VectorType)):
            ty = ty.element
        else:
            raise ValueError(f"getelementptr cannot index into {ty}")
    return ty


class GetElementPtr(SimpleInstruction):
    """``getelementptr [inbounds] T, T* %p, idx...``: address arithmetic, no memory access."""

    opcode = "getelementptr"

    def __init__(
        self,
        source_type: Type,
        pointer: Value,
        indices: list[Value],
        inbounds: bool = False,
        name: str | None = None,
        opaque: bool = False,
    ):
        lanes = next((v.type.count for v in (pointer, *indices) if isinstance(v.type, VectorType)), 0)
        ptr_ty = pointer.type.element if isinstance(pointer.type, VectorType) else pointer.type
        assert isinstance(ptr_ty, PointerType), ptr_ty
        rtype: Type = PointerType(
            None if opaque or ptr_ty.is_opaque else indexed_type(source_type, indices), ptr_ty.addrspace
        )
        super().__init__(VectorType(lanes, rtype) if lanes else rtype, name)  # vector GEP: an address per lane
        self.source_type = source_type
        self.ops = [pointer, *indices]
        self.inbounds = inbounds

    @property
    def pointer(self) -> Value:
        """The base address."""
        return self.ops[0]

    @property
    def indices(self) -> list[Value]:
        """The index operands."""
        return self.ops[1:]


class Cast(SimpleInstruction):
    """``bitcast``/``addrspacecast``/``ptrtoint``/``inttoptr``/``trunc``/``zext``/``sext``."""

    def __init__(self, opcode: str, value: Value, to_type: Type, name: str | None = None):
        assert opcode in CAST_OPS, opcode
        super().__init__(to_type, name)
        self.opcode = opcode
        self.ops = [value]

    @property
    def value(self) -> Value:
        """The value converted."""
        return self.ops[0]


class BinaryOp(SimpleInstruction):
    """Integer arithmetic: ``add nsw i64 %a, %b`` and friends."""

    def __init__(self, opcode: str, lhs: Value, rhs: Value, flags: tuple[str, ...] = (), name: str | None = None):
        assert opcode in BINARY_OPS or opcode in FLOAT_OPS, opcode
        super().__init__(lhs.type, name)
        self.opcode = opcode
        self.ops = [lhs, rhs]
        self.flags = tuple(flags)


class ICmp(SimpleInstruction):
    """``icmp <pred> T %a, %b``."""

    opcode = "icmp"

    def __init__(self, predicate: str, lhs: Value, rhs: Value, name: str | None = None):
        assert predicate in ICMP_PREDICATES, predicate
        rtype = VectorType(lhs.type.count, I1) if isinstance(lhs.type, VectorType) else I1
        super().__init__(rtype, name)
        self.predicate = predicate
        self.ops = [lhs, rhs]


class FCmp(SimpleInstruction):
    """``fcmp [fast-math flags] <pred> T %a, %b``."""

    opcode = "fcmp"

    def __init__(self, predicate: str, lhs: Value, rhs: Value, flags: tuple[str, ...] = (), name: str | None = None):
        assert predicate in FCMP_PREDICATES, predicate
        super().__init__(I1, name)
        self.predicate = predicate
        self.flags = tuple(flags)
        self.ops = [lhs, rhs]


class FNeg(SimpleInstruction):
    """``fneg T %a``."""

    opcode = "fneg"

    def __init__(self, value: Value, flags: tuple[str, ...] = (), name: str | None = None):
        super().__init__(value.type, name)
        self.flags = tuple(flags)
        self.ops = [value]


class Freeze(SimpleInstruction):
    """``freeze T %a``: ``%a`` itself, or an arbitrary fixed value of ``T`` where ``%a`` is undef or poison."""

    opcode = "freeze"

    def __init__(self, value: Value, name: str | None = None):
        super().__init__(value.type, name)
        self.ops = [value]

    @property
    def value(self) -> Value:
        """The value frozen."""
        return self.ops[0]


class AtomicRMW(SimpleInstruction):
    """``atomicrmw [volatile] OP ptr %p, T %v [syncscope("S")] ORDERING, align A``: the old value."""

    opcode = "atomicrmw"

    def __init__(
        self,
        operation: str,
        pointer: Value,
        value: Value,
        ordering: str,
        align: int,
        *,
        volatile: bool = False,
        syncscope: str | None = None,
        name: str | None = None,
    ):
        super().__init__(value.type, name)
        self.ops = [pointer, value]
        self.operation = operation
        self.ordering = ordering
        self.align = align
        self.volatile = volatile
        self.syncscope = syncscope

    @property
    def pointer(self) -> Value:
        """The address updated."""
        return self.ops[0]

    @property
    def value(self) -> Value:
        """The operand combined with (for ``xchg``: stored over) the old value."""
        return self.ops[1]


class Select(SimpleInstruction):
    """``select i1 %c, T %a, T %b``."""

    opcode = "select"

    def __init__(self, cond: Value, true_value: Value, false_value: Value, name: str | None = None):
        super().__init__(true_value.type, name)
        self.ops = [cond, true_value, false_value]

    @property
    def condition(self) -> Value:
        """The i1 selector."""
        return self.ops[0]

    @property
    def true_value(self) -> Value:
        """Chosen when the condition is true."""
        return self.ops[1]

    @property
    def false_value(self) -> Value:
        """Chosen when the condition is false."""
        return self.ops[2]


class Phi(Instruction):
    """``phi T [ %v, %pred ], ...``."""

    opcode = "phi"
    incoming = operand_list("incoming", pair, doc="The ``(value, block)`` pairs.")

    def __init__(self, type: Type, incoming: list[tuple[Value, BasicBlock]] | None = None, name: str | None = None):
        super().__init__(type, name)
        self.incoming = list(incoming or [])

    @property
    def operands(self) -> list[Value]:
        out: list[Value] = []
        for v, b in self.incoming:
            out += [v, b]
        return out

    def replace_uses_of(self, old: Value, new: Value) -> int:
        n = 0
        for i, (v, b) in enumerate(self.incoming):
            if v is old or b is old:
                self.incoming[i] = (new if v is old else v, new if b is old else b)
                n += (v is old) + (b is old)
        return n

    def add_incoming(self, value: Value, block: BasicBlock) -> None:
        """Add a ``[value, block]`` pair."""
        self.incoming.append((value, block))

    def value_for(self, block: BasicBlock) -> Value:
        """The incoming value from ``block``; a :class:`VerifyError` when the phi has none."""
        for v, b in self.incoming:
            if b is block:
                return v
        where = None
        fn = self.function
        if self.loc and fn is not None:
            where = f"{getattr(getattr(fn, 'module', None), 'filename', None) or '<input>'}:{self.loc[0]}:{self.loc[1]}"
        label = f"%{block.name}" if block.name is not None else "an unnamed block"
        raise VerifyError(f"phi has no incoming value for its predecessor {label}", where)


class Br(SimpleInstruction):
    """``br label %d`` or ``br i1 %c, label %t, label %f``."""

    opcode = "br"
    is_terminator = True

    def __init__(self, target: BasicBlock, cond: Value | None = None, false_target: BasicBlock | None = None):
        super().__init__(VOID, None)
        self.ops = [target] if cond is None else [cond, target, false_target]

    @property
    def is_conditional(self) -> bool:
        """True for the two-way form."""
        return len(self.ops) == 3

    @property
    def condition(self) -> Value | None:
        """The i1 condition of a conditional branch."""
        return self.ops[0] if self.is_conditional else None

    @property
    def successors(self) -> list[BasicBlock]:
        return [b for b in self.ops if isinstance(b, BasicBlock)]


class Switch(Instruction):
    """``switch T %v, label %default [ T c, label %b ... ]``."""

    opcode = "switch"
    is_terminator = True
    value = operand_slot("value", doc="The value switched on.")
    default = operand_slot("default", doc="The block taken when no case matches.")
    cases = operand_list("cases", pair, doc="The ``(constant, block)`` cases.")

    def __init__(self, value: Value, default: BasicBlock, cases: list[tuple[ConstantInt, BasicBlock]] | None = None):
        super().__init__(VOID, None)
        self.value = value
        self.default = default
        self.cases = list(cases or [])

    @property
    def operands(self) -> list[Value]:
        out: list[Value] = [self.value, self.default]
        for c, b in self.cases:
            out += [c, b]
        return out

    def replace_uses_of(self, old: Value, new: Value) -> int:
        n = 0
        if self.value is old:
            self.value, n = new, n + 1
        if self.default is old:
            self.default, n = new, n + 1
        for i, (c, b) in enumerate(self.cases):
            if b is old:
                self.cases[i] = (c, new)
                n += 1
        return n

    @property
    def successors(self) -> list[BasicBlock]:
        return [self.default] + [b for _, b in self.cases]


class Ret(SimpleInstruction):
    """``ret void`` or ``ret T %v``."""

    opcode = "ret"
    is_terminator = True

    def __init__(self, value: Value | None = None):
        super().__init__(VOID, None)
        self.ops = [value] if value is not None else []

    @property
    def value(self) -> Value | None:
        """The returned value."""
        return self.ops[0] if self.ops else None


class Unreachable(SimpleInstruction):
    """``unreachable``."""

    opcode = "unreachable"
    is_terminator = True

    def __init__(self) -> None:
        super().__init__(VOID, None)
        self.ops = []


class Resume(SimpleInstruction):
    """``resume T %v``."""

    opcode = "resume"
    is_terminator = True

    def __init__(self, value: Value):
        super().__init__(VOID, None)
        self.ops = [value]


class LandingPad(SimpleInstruction):
    """``landingpad T cleanup | catch T c | filter T c``."""

    opcode = "landingpad"

    def __init__(
        self, type: Type, cleanup: bool = False, clauses: list[tuple[str, Value]] | None = None, name: str | None = None
    ):
        super().__init__(type, name)
        self.cleanup = cleanup
        self.clause_kinds = [k for k, _ in clauses or []]
        self.ops = [v for _, v in clauses or []]

    @property
    def clauses(self) -> list[tuple[str, Value]]:
        """``("catch"|"filter", value)`` pairs."""
        return list(zip(self.clause_kinds, self.ops))


class ExtractValue(SimpleInstruction):
    """``extractvalue T %agg, i, j...``."""

    opcode = "extractvalue"

    def __init__(self, aggregate: Value, indices: tuple[int, ...], type: Type, name: str | None = None):
        super().__init__(type, name)
        self.ops = [aggregate]
        self.indices = tuple(indices)


class InsertValue(SimpleInstruction):
    """``insertvalue T %agg, U %v, i, j...``."""

    opcode = "insertvalue"

    def __init__(self, aggregate: Value, value: Value, indices: tuple[int, ...], name: str | None = None):
        super().__init__(aggregate.type, name)
        self.ops = [aggregate, value]
        self.indices = tuple(indices)


def aggregate_member(ty: Type, indices: tuple[int, ...]) -> Type:
    """The member type reached by ``extractvalue`` indices."""
    for i in indices:
        if isinstance(ty, NamedStructType):
            ty = StructType(ty.elements)
        if isinstance(ty, StructType):
            if not 0 <= i < len(ty.elements):
                raise ValueError(f"extractvalue index {i} out of range")
            ty = ty.elements[i]
        elif isinstance(ty, ArrayType):
            if not 0 <= i < ty.count:
                raise ValueError(f"extractvalue index {i} out of range")
            ty = ty.element
        else:
            raise ValueError(f"extractvalue cannot index into {ty}")
    return ty


def is_token_type(ty: Type) -> bool:
    """True for ``token``."""
    return ty == TOKEN


def int_width(ty: Type) -> int | None:
    """Bit width of an integer type, else None."""
    return ty.bits if isinstance(ty, IntType) else None


from .vector_instructions import ExtractElement, InsertElement, ShuffleVector  # noqa: E402,F401  (re-exported)
from .call_instructions import Call, CallBase, Invoke, OperandBundle  # noqa: E402,F401  (re-exported)
from .atomic_instructions import CmpXchg, Fence  # noqa: E402,F401  (re-exported)
