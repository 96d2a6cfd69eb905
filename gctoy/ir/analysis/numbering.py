"""Numbering of a function's local values: definition order, bit positions and printable labels.

Analyses keep sets of values as Python ints used as bitsets: value number ``k``
is bit ``1 << k``.  Numbers follow definition order -- arguments first, then
instructions block by block -- so decoding a bitset gives a deterministic,
source-ordered tuple.
"""

from __future__ import annotations

from itertools import compress
from typing import Callable, Iterable

from ..instructions import Instruction
from ..names import quote_name
from ..types import VOID
from ..values import Argument, BasicBlock, Function, GlobalValue, Value


def defines_value(v: Value) -> bool:
    """True for the values an analysis tracks: arguments and instructions with a result."""
    if isinstance(v, Argument):
        return True
    return isinstance(v, Instruction) and v.type != VOID


class ValueNumbering:
    """Arguments, then result-producing instructions in block order, each with a bit number."""

    def __init__(self, fn: Function, keep: Callable[[Value], bool] | None = None) -> None:
        self.function = fn
        self.values: list[Value] = []
        self._index: dict[int, int] = {}
        candidates: list[Value] = list(fn.args)
        for block in fn.blocks:
            candidates.extend(block.instructions)
        for v in candidates:
            if defines_value(v) and (keep is None or keep(v)):
                self._index[id(v)] = len(self.values)
                self.values.append(v)

    def __len__(self) -> int:
        return len(self.values)

    def __contains__(self, v: object) -> bool:
        return id(v) in self._index and self.values[self._index[id(v)]] is v

    def number(self, v: Value) -> int | None:
        """The value's number, or None if it is not tracked (constants, globals, blocks, void)."""
        k = self._index.get(id(v))
        if k is None or self.values[k] is not v:
            return None
        return k

    def bit(self, v: Value) -> int:
        """The value's bit (0 when the value is not tracked)."""
        k = self.number(v)
        return 0 if k is None else 1 << k

    def bits(self, values: Iterable[Value]) -> int:
        """The bitset holding every tracked value among ``values``."""
        out = 0
        index = self._index
        tracked = self.values
        for v in values:
            k = index.get(id(v))
            if k is not None and tracked[k] is v:
                out |= 1 << k
        return out

    def decode(self, bits: int) -> tuple[Value, ...]:
        """The values of a bitset, in definition order."""
        if not bits:
            return ()
        digits = bin(bits)[:1:-1]  # least significant bit first
        if bits.bit_count() * 32 > len(digits):
            # Dense set: let C code pick the values whose digit is 1.
            return tuple(compress(self.values, digits.encode().translate(_DIGIT_TO_BYTE)))
        values = self.values
        out = []
        k = digits.find("1")
        while k != -1:
            out.append(values[k])
            k = digits.find("1", k + 1)
        return tuple(out)


_DIGIT_TO_BYTE = bytes.maketrans(b"01", b"\x00\x01")


class LocalNames:
    """Printable labels of a function's values, numbered the way the printer numbers them."""

    def __init__(self, fn: Function) -> None:
        self._labels: dict[int, str] = {}
        slot = 0

        def assign(v: Value) -> None:
            nonlocal slot
            if v.name is not None:
                self._labels[id(v)] = "%" + quote_name(v.name)
            else:
                self._labels[id(v)] = f"%{slot}"
                slot += 1

        for a in fn.args:
            assign(a)
        for b in fn.blocks:
            assign(b)
            for inst in b.instructions:
                if inst.type != VOID:
                    assign(inst)

    def __call__(self, v: Value) -> str:
        """``%name`` or ``%N`` for locals, ``@name`` for globals, the type name otherwise."""
        label = self._labels.get(id(v))
        if label is not None:
            return label
        if isinstance(v, GlobalValue) and v.name is not None:
            return "@" + quote_name(v.name)
        if isinstance(v, BasicBlock) and v.name is not None:
            return "%" + quote_name(v.name)
        return f"<{type(v).__name__}>"

    def join(self, values: Iterable[Value]) -> str:
        """Labels separated by commas."""
        return ", ".join(self(v) for v in values)
