"""Def-use chains: which instructions read a value, and through which operand.

Keys are ``id(value)`` because constants compare (and hash) by content: two
``i64 1`` operands are equal yet distinct objects.  Arguments, instructions,
blocks and globals all have identity, so ``users(fn)[id(v)]`` is exact.
Every answer is read from the values' use lists (:mod:`gctoy.ir.uses`), not from a scan.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..instructions import Instruction, Phi
from ..order import in_function_order
from ..uses import users_map
from ..values import BasicBlock, Constant, Function, GlobalValue, Value


@dataclass(frozen=True)
class Use:
    """One operand slot of ``user`` that reads a value (``index`` into ``user.operands``)."""

    user: Instruction
    index: int

    @property
    def value(self) -> Value:
        """The value read."""
        return self.user.operands[self.index]

    @property
    def block(self) -> BasicBlock | None:
        """Where the read happens: the incoming block for a phi value, else the user's block."""
        if isinstance(self.user, Phi) and self.index % 2 == 0:
            return self.user.incoming[self.index // 2][1]
        return self.user.parent


def _has_identity(v: Value) -> bool:
    return isinstance(v, GlobalValue) or not isinstance(v, Constant)


def users(fn: Function) -> dict[int, list[Instruction]]:
    """``id(value) -> instructions that use it`` (each user once, in function order).

    Covers every operand with an identity: arguments, instructions, blocks
    (branch targets, phi incoming blocks) and globals such as called functions.
    Built from the values' use lists: the function's own values, and the globals of its module
    (or, for a function outside a module, the globals its instructions name).
    """
    values: list[Value] = [*fn.args, *fn.blocks, *fn.instructions()]
    module = getattr(fn, "module", None)
    if module is not None:
        values += [*module.functions, *module.globals]
    else:
        values += list({id(v): v for i in fn.instructions() for v in i.operands if isinstance(v, GlobalValue)}.values())
    out: dict[int, list[Instruction]] = {}
    for v in values:
        found = [u for u in users_map(v) if u.function is fn]
        if found:
            out[id(v)] = in_function_order(found)
    return out


def users_of(fn: Function, value: Value) -> list[Instruction]:
    """The distinct instructions of ``fn`` that read ``value``, in function order (from its use list)."""
    if not _has_identity(value):
        return [inst for inst in fn.instructions() if any(v is value for v in inst.operands)]
    return in_function_order(u for u in users_map(value) if u.function is fn)


def uses_of(fn: Function, value: Value) -> list[Use]:
    """Every operand slot in ``fn`` that reads ``value`` (by identity), in function order."""
    return [Use(inst, k) for inst in users_of(fn, value) for k, v in enumerate(inst.operands) if v is value]
