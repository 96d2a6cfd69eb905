"""Small random functions with GC pointers for the labs: diamonds, loops, phis, selects and calls.

Each function is built from a chain of regions after its entry block: a *diamond* (two arms that
may each derive a pointer, joined by a phi), a *loop* (a cursor phi stepped by a GEP around the
back edge) or a *straight* block (a select of two pointers). Calls of ``@f`` (no arguments) and
``@use`` (one GC pointer) are sprinkled in, so that values are live across calls on some paths and
not on others. Every value has a name; the text parses with :func:`gctoy.ir.parse_module`.
"""

from __future__ import annotations

import random

__all__ = ["random_function"]

P = "i8 addrspace(1)*"


class _Builder:
    def __init__(self, rng: random.Random, nargs: int):
        self.rng = rng
        self.lines: list[str] = []
        self.count = 0
        #: pointers usable in the current block (defined in blocks that dominate it)
        self.available = [f"%a{i}" for i in range(nargs)]

    def fresh(self, stem: str) -> str:
        self.count += 1
        return f"%{stem}{self.count}"

    def emit(self, text: str) -> None:
        self.lines.append("  " + text)

    def label(self, name: str) -> None:
        self.lines.append(f"{name}:")

    def pick(self, pool: list[str] | None = None) -> str:
        return self.rng.choice(pool or self.available)

    def derive(self, pool: list[str] | None = None) -> str:
        """A GEP (sometimes through a bitcast) of an available pointer."""
        name = self.fresh("d")
        self.emit(f"{name} = getelementptr i8, {P} {self.pick(pool)}, i64 {self.rng.choice([8, 16, 24, 1])}")
        if self.rng.random() < 0.3:
            cast = self.fresh("c")
            self.emit(f"{cast} = bitcast {P} {name} to i64 addrspace(1)*")
            back = self.fresh("b")
            self.emit(f"{back} = bitcast i64 addrspace(1)* {cast} to {P}")
            return back
        return name

    def calls(self, pool: list[str]) -> None:
        """Zero to two calls; a use of some pointer sometimes follows."""
        for _ in range(self.rng.randint(0, 2)):
            if self.rng.random() < 0.5:
                self.emit("call void @f()")
            else:
                self.emit(f"call void @use({P} {self.pick(pool)})")


def random_function(seed: int, regions: int = 3, name: str = "g") -> str:
    """A module text with one function ``@<name>`` built from ``regions`` random regions."""
    rng = random.Random(seed)
    nargs = rng.randint(2, 3)
    b = _Builder(rng, nargs)
    params = ", ".join([f"{P} %a{i}" for i in range(nargs)] + ["i1 %c", "i64 %n"])
    b.label("entry")
    if rng.random() < 0.5:
        b.available.append(b.derive())
    b.calls(b.available)
    current = "entry"
    for r in range(regions):
        kind = rng.choice(["diamond", "loop", "straight"])
        if kind == "diamond":
            left, right, join = f"l{r}", f"r{r}", f"j{r}"
            b.emit(f"br i1 %c, label %{left}, label %{right}")
            arms = []
            for arm in (left, right):
                b.label(arm)
                pool = list(b.available)
                value = b.derive(pool) if rng.random() < 0.7 else b.pick(pool)
                b.calls(pool + [value])
                b.emit(f"br label %{join}")
                arms.append((value, arm))
            b.label(join)
            phi = b.fresh("p")
            b.emit(f"{phi} = phi {P} [ {arms[0][0]}, %{arms[0][1]} ], [ {arms[1][0]}, %{arms[1][1]} ]")
            b.available.append(phi)
            b.calls(b.available)
            current = join
        elif kind == "loop":
            head, latch, out = f"h{r}", f"t{r}", f"x{r}"
            start = b.pick()
            b.emit(f"br label %{head}")
            b.label(head)
            cur, nxt, i, i1, done = b.fresh("cur"), b.fresh("next"), b.fresh("i"), b.fresh("i"), b.fresh("k")
            b.emit(f"{cur} = phi {P} [ {start}, %{current} ], [ {nxt}, %{latch} ]")
            b.emit(f"{i} = phi i64 [ 0, %{current} ], [ {i1}, %{latch} ]")
            pool = b.available + [cur]
            b.calls(pool)
            b.emit(f"br label %{latch}")
            b.label(latch)
            b.emit(f"{nxt} = getelementptr i8, {P} {cur}, i64 1")
            b.calls(pool + [nxt])
            b.emit(f"{i1} = add i64 {i}, 1")
            b.emit(f"{done} = icmp eq i64 {i1}, %n")
            b.emit(f"br i1 {done}, label %{out}, label %{head}")
            b.label(out)
            b.available.append(cur)
            b.calls(b.available)
            current = out
        else:
            x, y = b.derive(), b.pick()
            sel = b.fresh("s")
            b.emit(f"{sel} = select i1 %c, {P} {x}, {P} {y}")
            b.available.append(sel)
            b.calls(b.available)
    b.emit(f"call void @use({P} {b.pick()})")
    b.emit(f"ret {P} {b.pick()}")
    head = f"declare void @f()\ndeclare void @use({P})\n\n"
    return head + f'define {P} @{name}({params}) gc "statepoint-example" {{\n' + "\n".join(b.lines) + "\n}\n"
