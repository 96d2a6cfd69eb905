"""The atomic instructions that are not loads or stores: ``cmpxchg`` and ``fence``."""

from __future__ import annotations

from .instruction_base import SimpleInstruction
from .types import I1, VOID, StructType
from .values import Value


class CmpXchg(SimpleInstruction):
    """``cmpxchg [weak] [volatile] ptr %p, T %cmp, T %new [syncscope("S")] SUCCESS FAILURE, align A``.

    Its result is ``{ T, i1 }``: the value found at ``%p`` and whether it equalled ``%cmp`` (and
    ``%new`` was stored)."""

    opcode = "cmpxchg"

    def __init__(
        self,
        pointer: Value,
        compare: Value,
        new: Value,
        success: str,
        failure: str,
        align: int,
        *,
        weak: bool = False,
        volatile: bool = False,
        syncscope: str | None = None,
        name: str | None = None,
    ):
        super().__init__(StructType((compare.type, I1)), name)
        self.ops = [pointer, compare, new]
        self.success = success
        self.failure = failure
        self.align = align
        self.weak = weak
        self.volatile = volatile
        self.syncscope = syncscope

    @property
    def pointer(self) -> Value:
        """The address compared and exchanged."""
        return self.ops[0]

    @property
    def compare(self) -> Value:
        """The value expected at the address."""
        return self.ops[1]

    @property
    def new(self) -> Value:
        """The value stored when the expected one is found."""
        return self.ops[2]


class Fence(SimpleInstruction):
    """``fence [syncscope("S")] ORDERING``: orders memory accesses, touches none."""

    opcode = "fence"

    def __init__(self, ordering: str, *, syncscope: str | None = None):
        super().__init__(VOID, None)
        self.ops = []
        self.ordering = ordering
        self.syncscope = syncscope
