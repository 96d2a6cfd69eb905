"""Invoke edges for RewriteStatepointsForGC: each destination of an invoke gets it as its only predecessor.

Relocates go at the top of an invoke's normal and unwind destinations, so neither may be shared
with another edge (LLVM's SplitBlockPredecessors; a shared landing pad is split in two).
"""

from __future__ import annotations

from ..errors import GCToyError
from ..ir import instructions as I
from ..ir.analysis import predecessors
from ..ir.values import BasicBlock, Function
from .naming import NameUniquer


def normalize_invokes(fn: Function, names: NameUniquer, calls: list[I.CallBase]) -> None:
    """Give each invoke among ``calls`` destinations of its own (new blocks where they are shared)."""
    preds = predecessors(fn)
    splitter = _Splitter(fn, names)
    for call in calls:
        if not isinstance(call, I.Invoke):
            continue
        here = call.parent
        for attr in ("normal", "unwind"):
            dest = getattr(call, attr)
            if len(preds.get(dest, [])) > 1:
                if attr == "unwind":
                    splitter.split_landing_pad(dest, here, preds)
                else:
                    new = splitter.split_predecessors(dest, [here], "")
                    preds[new] = [here]
                    preds[dest] = [new if p is here else p for p in preds[dest]]


class _Splitter:
    """New blocks in front of a shared destination."""

    def __init__(self, fn: Function, names: NameUniquer):
        self.fn = fn
        self.names = names
        self.lp_used: set[int] | None = None

    def new_block_before(self, name: str, before: BasicBlock) -> BasicBlock:
        new = BasicBlock(self.names.unique(name))
        new.parent = self.fn
        self.fn.blocks.insert(self.fn.blocks.index(before), new)
        return new

    def redirect(self, preds: list[BasicBlock], old: BasicBlock, new: BasicBlock) -> None:
        for p in preds:
            term = p.terminator
            assert term is not None
            term.replace_uses_of(old, new)
        for phi in old.phis():
            assert isinstance(phi, I.Phi)
            moved = [(v, b) for v, b in phi.incoming if any(b is p for p in preds)]
            if moved:
                phi.incoming = [(v, b) for v, b in phi.incoming if all(b is not p for p in preds)]
                phi.incoming.append((moved[0][0], new))

    def split_predecessors(self, dest: BasicBlock, preds: list[BasicBlock], suffix: str) -> BasicBlock:
        new = self.new_block_before(f"{dest.name or ''}{suffix}" or "split", dest)
        new.append(I.Br(dest))
        self.redirect(preds, dest, new)
        return new

    def split_landing_pad(self, dest: BasicBlock, pred: BasicBlock, preds) -> None:
        lp = dest.instructions[len(dest.phis())]
        if self.lp_used is None:
            self.lp_used = {
                id(op) for inst in self.fn.instructions() for op in inst.operands if isinstance(op, I.LandingPad)
            }
        if dest.phis() or id(lp) in self.lp_used:
            raise GCToyError(
                f"@{self.fn.name}: gctoy's rewrite-statepoints-for-gc cannot split the landing pad "
                f"'%{dest.name}' (it has phis or its token is used)"
            )
        others = [p for p in preds[dest] if p is not pred]
        made = []
        for suffix, group in (("", [pred]), (".split-lp", others)):
            new = self.new_block_before(f"{dest.name or ''}{suffix}", dest)
            clone = I.LandingPad(lp.type, lp.cleanup, lp.clauses, name=self.names.unique(f"lpad{suffix}"))
            new.append(clone)
            new.append(I.Br(dest))
            for p in group:
                term = p.terminator
                assert term is not None
                term.replace_uses_of(dest, new)
            preds[new] = list(group)
            made.append(new)
        preds[dest] = made
        lp.erase()
