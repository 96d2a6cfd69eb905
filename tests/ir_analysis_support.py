"""Helpers for the analysis tests: parse a function and look its values up by name."""
from __future__ import annotations

from gctoy.ir import parse_module
from gctoy.ir.instructions import Instruction
from gctoy.ir.values import BasicBlock, Function, Value

PERSONALITY = "declare i32 @__gxx_personality_v0(...)\n"


def parse_function(text: str, name: str | None = None) -> Function:
    """The function ``name`` (default: the last definition) of the module ``text``."""
    module = parse_module(text, implicit_declarations=True)
    if name is not None:
        fn = module.get_function(name)
        assert fn is not None, name
        return fn
    return list(module.definitions())[-1]


class Names:
    """``names["x"]`` is the argument, instruction or block called ``%x`` in ``fn``."""

    def __init__(self, fn: Function) -> None:
        self.fn = fn
        self.table: dict[str, Value] = {}
        for a in fn.args:
            if a.name is not None:
                self.table[a.name] = a
        for b in fn.blocks:
            if b.name is not None:
                self.table[b.name] = b
            for inst in b.instructions:
                if inst.name is not None:
                    self.table[inst.name] = inst

    def __getitem__(self, name: str) -> Value:
        return self.table[name]

    def block(self, name: str) -> BasicBlock:
        """The block ``%name``."""
        b = self.table[name]
        assert isinstance(b, BasicBlock), name
        return b

    def inst(self, name: str) -> Instruction:
        """The instruction ``%name``."""
        i = self.table[name]
        assert isinstance(i, Instruction), name
        return i


def labels(values) -> list[str]:
    """The names of values or blocks, keeping order (``None`` stays ``None``)."""
    return [None if v is None else v.name for v in values]


#: two blocks that reach each other, each entered from outside: a cycle no block dominates
IRREDUCIBLE = """
define void @irr(i1 %c) {
entry:
  br i1 %c, label %a, label %b
a:
  br i1 %c, label %b, label %exit
b:
  br label %a
exit:
  ret void
}
"""


def edge_names(es) -> list[tuple[str, str]]:
    """(source, target) block names of CFG edges."""
    return [(e.source.name, e.target.name) for e in es]
