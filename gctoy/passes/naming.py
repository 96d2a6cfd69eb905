"""LLVM's way of keeping local names unique inside a function.

When a wanted name is taken, LLVM appends a number from one counter shared by
the whole function (``%x.relocated``, then ``%y.relocated3`` after two other
clashes) — no dot, and the counter never goes back.  Passes that should print
the names LLVM prints use the same rule.
"""

from __future__ import annotations

from ..ir.names import is_numbered
from ..ir.values import Function


class NameUniquer:
    """Hands out unique local names for one function, LLVM style (its ``LastUnique`` counter)."""

    def __init__(self, fn: Function):
        self.function = fn
        self.counter = 0
        self.taken: set[str] = set()
        self.refresh()

    def refresh(self) -> None:
        """Re-read the names that exist in the function now (erased values free theirs)."""
        fn = self.function
        names = {a.name for a in fn.args}
        for b in fn.blocks:
            names.add(b.name)
            names.update(i.name for i in b.instructions)
        self.taken = {n for n in names if n is not None and not is_numbered(n)}

    def unique(self, name: str | None) -> str | None:
        """``name`` if free, else ``name`` + the next counter value; None (or a number) stays unnamed."""
        if not name or is_numbered(name):
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

    claim = unique

    def release(self, name: str | None) -> None:
        """Forget a name (its value was erased)."""
        if name:
            self.taken.discard(name)
