"""The vector instructions: ``extractelement``, ``insertelement`` and ``shufflevector``.

With them a vector of GC pointers (``<2 x i8 addrspace(1)*>``) can be built
from scalars, taken apart and permuted.  The shuffle's mask is not an operand
(LLVM keeps it as a list of lane numbers since LLVM 11): it is a constant
vector of ``i32`` lanes, ``undef``/``poison`` for a lane whose value does not
matter::

    %v = insertelement <2 x i8 addrspace(1)*> undef, i8 addrspace(1)* %p, i32 0
    %s = shufflevector <2 x i8 addrspace(1)*> %v, <2 x i8 addrspace(1)*> undef, <2 x i32> zeroinitializer
    %e = extractelement <2 x i8 addrspace(1)*> %s, i64 1
"""

from __future__ import annotations

from .instruction_base import SimpleInstruction
from .types import I32, Type, VectorType
from .values import Constant, ConstantAggregate, ConstantInt, Poison, Undef, Value, ZeroInitializer


class ExtractElement(SimpleInstruction):
    """``extractelement <N x T> %v, iK %idx``: one lane of a vector."""

    opcode = "extractelement"

    def __init__(self, vector: Value, index: Value, name: str | None = None):
        assert isinstance(vector.type, VectorType), vector.type
        super().__init__(vector.type.element, name)
        self.ops = [vector, index]

    @property
    def vector(self) -> Value:
        """The vector read."""
        return self.ops[0]

    @property
    def index(self) -> Value:
        """The lane number."""
        return self.ops[1]


class InsertElement(SimpleInstruction):
    """``insertelement <N x T> %v, T %x, iK %idx``: a copy of a vector with one lane replaced."""

    opcode = "insertelement"

    def __init__(self, vector: Value, element: Value, index: Value, name: str | None = None):
        assert isinstance(vector.type, VectorType), vector.type
        super().__init__(vector.type, name)
        self.ops = [vector, element, index]

    @property
    def vector(self) -> Value:
        """The vector copied."""
        return self.ops[0]

    @property
    def element(self) -> Value:
        """The scalar written into the lane."""
        return self.ops[1]

    @property
    def index(self) -> Value:
        """The lane number."""
        return self.ops[2]


class ShuffleVector(SimpleInstruction):
    """``shufflevector <N x T> %a, <N x T> %b, <M x i32> mask``: lanes of ``a ++ b`` picked by the mask."""

    opcode = "shufflevector"

    def __init__(self, first: Value, second: Value, mask: Constant, name: str | None = None):
        assert isinstance(first.type, VectorType), first.type
        assert isinstance(mask.type, VectorType), mask.type
        super().__init__(VectorType(mask.type.count, first.type.element), name)
        self.ops = [first, second]
        self.mask_value = mask

    @property
    def mask(self) -> list[int | None]:
        """The lane picked for each result lane (``None`` for an undef/poison lane)."""
        return shuffle_lanes(self.mask_value)

    def is_zero_splat(self) -> bool:
        """LLVM's ``isZeroEltSplat``: a same-length broadcast of lane 0 of one operand (undef lanes allowed)."""
        lanes = self.mask
        n = self.ops[0].type.count
        if len(lanes) != n:
            return False
        used = {x for x in lanes if x is not None}
        return used == {0} or used == {n}


def shuffle_lanes(mask: Constant) -> list[int | None]:
    """The lane numbers of a shuffle mask constant (``None`` for undef/poison lanes)."""
    assert isinstance(mask.type, VectorType)
    n = mask.type.count
    if isinstance(mask, ZeroInitializer):
        return [0] * n
    if isinstance(mask, (Undef, Poison)):
        return [None] * n
    if isinstance(mask, ConstantAggregate):
        return [e.value if isinstance(e, ConstantInt) else None for e in mask.elements]
    raise ValueError("invalid shufflevector mask")


def is_valid_mask(mask: Value, lanes_in: int) -> bool:
    """A constant ``<M x i32>`` whose lanes are below ``2 * lanes_in`` or undef/poison."""
    if not isinstance(mask, Constant) or not isinstance(mask.type, VectorType) or mask.type.element != I32:
        return False
    if isinstance(mask, ConstantAggregate):
        return all(
            isinstance(e, (Undef, Poison)) or (isinstance(e, ConstantInt) and 0 <= e.value < 2 * lanes_in)
            for e in mask.elements
        )
    return isinstance(mask, (ZeroInitializer, Undef, Poison))


def vector_of(scalar: Type, count: int) -> VectorType:
    """``<count x scalar>``."""
    return VectorType(count, scalar)
