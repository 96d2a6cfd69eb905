"""LLVM's way of keeping local names unique inside a function.

When a wanted name is taken, LLVM appends a number from one counter shared by
the whole function (``%x.relocated``, then ``%y.relocated3`` after two other
clashes) — no dot, and the counter never goes back.  Passes that should print
the names LLVM prints use the same rule.
"""
from __future__ import annotations

from ..ir.values import Function


class NameUniquer:
    """Hands out unique local names for one function, LLVM style."""

    def __init__(self, fn: Function):
        self.taken: set[str] = set()
        for a in fn.args:
            if a.name is not None:
                self.taken.add(a.name)
        for b in fn.blocks:
            if b.name is not None:
                self.taken.add(b.name)
            for inst in b.instructions:
                if inst.name is not None:
                    self.taken.add(inst.name)
        self.counter = 0

    def unique(self, name: str | None) -> str | None:
        """``name`` if free, else ``name`` + the next counter value; None stays unnamed."""
        if not name:
            return None
        if name not in self.taken:
            self.taken.add(name)
            return name
        while True:
            self.counter += 1
            candidate = f"{name}{self.counter}"
            if candidate not in self.taken:
                self.taken.add(candidate)
                return candidate

    def release(self, name: str | None) -> None:
        """Forget a name (its value was erased)."""
        if name:
            self.taken.discard(name)
