"""Def-use chains: which instructions read a value, and through which operand.

Keys are ``id(value)`` because constants compare (and hash) by content: two
``i64 1`` operands are equal yet distinct objects.  Arguments, instructions,
blocks and globals all have identity, so ``users(fn)[id(v)]`` is exact.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..instructions import Instruction, Phi
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
    """
    out: dict[int, list[Instruction]] = {}
    for block in fn.blocks:
        for inst in block.instructions:
            seen: set[int] = set()
            for v in inst.operands:
                key = id(v)
                if key in seen or not _has_identity(v):
                    continue
                seen.add(key)
                out.setdefault(key, []).append(inst)
    return out


def uses_of(fn: Function, value: Value) -> list[Use]:
    """Every operand slot in ``fn`` that reads ``value`` (by identity), in function order."""
    found: list[Use] = []
    for block in fn.blocks:
        for inst in block.instructions:
            for k, v in enumerate(inst.operands):
                if v is value:
                    found.append(Use(inst, k))
    return found


def users_of(fn: Function, value: Value) -> list[Instruction]:
    """The distinct instructions of ``fn`` that read ``value``, in function order."""
    return [inst for inst in fn.instructions() if any(v is value for v in inst.operands)]
