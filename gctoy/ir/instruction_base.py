"""What every instruction is: a value in a block with operands (:class:`Instruction`), and the
common case whose operands sit in one list (:class:`SimpleInstruction`).

The instruction families are in :mod:`gctoy.ir.instructions` (which re-exports these), the calls
in :mod:`gctoy.ir.call_instructions`, the vector ones in :mod:`gctoy.ir.vector_instructions`.
"""

from __future__ import annotations

from typing import Any

from .types import Type
from .uses import OperandList, WriteHook, add_use, drop_use, operand_list
from .values import BasicBlock, Value


def swap_operands(items: list, old, new) -> int:
    """Replace every ``old`` in ``items`` by ``new``; returns how many were replaced."""
    n = 0
    for i, v in enumerate(items):
        if v is old:
            items[i] = new
            n += 1
    return n


def _parent_attribute(name: str, doc: str) -> Any:
    """The ``parent`` attribute (typed ``Any``, as a property's value is to the type checker)."""
    return _ParentAttribute(name, doc)


class _ParentAttribute(WriteHook):
    def __set__(self, obj, block: BasicBlock | None) -> None:
        d = obj.__dict__
        was = d.get("parent")
        d["parent"] = block
        if (was is None) != (block is None):
            step = add_use if block is not None else drop_use
            for v in obj.operands:
                step(v, obj)


class Instruction(Value):
    """Base class: a value computed by one instruction in a block."""

    opcode: str = "?"
    is_terminator = False
    # the source's comments, set by the parser (the printer reads them with getattr)
    comments_before: list[str]
    comment_after: str | None

    parent = _parent_attribute(
        "parent",
        "The block holding the instruction.  Setting it (to a block, or back to None) counts the "
        "instruction's operands in their use lists (or drops them): only instructions in blocks use.",
    )

    def __init__(self, type: Type, name: str | None = None):
        self.type = type
        self.name = name
        self.__dict__["parent"] = None
        #: ``!kind !N`` attachments as (kind, reference text) pairs.
        self.metadata: list[tuple[str, str]] = []
        #: (line, column) in the source file, when parsed.
        self.loc: tuple[int, int] | None = None

    @property
    def operands(self) -> list[Value]:
        """Every value this instruction uses, blocks included."""
        return []

    def replace_uses_of(self, old: Value, new: Value) -> int:
        """Replace operand ``old`` by ``new``; returns how many uses changed."""
        return 0

    def replace_operands(self, mapping: dict[int, tuple[Value, Value]]) -> None:
        """Replace several operands at once: ``{id(old): (old, new)}`` (one replace_uses_of per pair;
        instructions with long operand lists do it in one pass)."""
        for old, new in mapping.values():
            self.replace_uses_of(old, new)

    @property
    def successors(self) -> list[BasicBlock]:
        """Successor blocks (terminators only)."""
        return []

    @property
    def function(self):
        """The function this instruction belongs to."""
        return self.parent.parent if self.parent is not None else None

    def erase(self) -> None:
        """Remove this instruction from its block (its operands lose this use)."""
        block = self.parent
        if block is not None:
            block.instructions.remove(self)
            self.parent = None

    def __copy__(self) -> "Instruction":
        """A copy outside any block, with its own operand lists and no users."""
        new = object.__new__(type(self))
        d = {k: v for k, v in self.__dict__.items() if k != "_users"}
        d["parent"] = None
        new.__dict__.update(d)
        for k, v in d.items():
            if isinstance(v, OperandList):
                setattr(new, k, list(v))
        return new


class SimpleInstruction(Instruction):
    """An instruction whose operands sit in ``self.ops``."""

    ops = operand_list("ops", doc="The operands, in order.")

    @property
    def operands(self) -> list[Value]:
        return list(self.ops)

    def replace_uses_of(self, old: Value, new: Value) -> int:
        return swap_operands(self.ops, old, new)
