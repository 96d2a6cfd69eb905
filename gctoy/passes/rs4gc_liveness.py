"""RS4GC's own liveness of GC pointers, with LLVM's *ordered* sets.

The result is the same set of values as :class:`gctoy.ir.analysis.Liveness`
computes; what this module adds is the *order* LLVM discovers them in, because
that order becomes the order of the ``"gc-live"`` bundle and of the relocates.
Every set is insertion ordered (LLVM's SetVector):

* per block, Kill = GC-pointer values defined in it; LiveSet = walking the
  block backwards, remove each definition, add each GC-pointer operand (phis
  excepted, in LLVM's operand order: a call's arguments, then its bundle
  operands, then the callee);
* LiveOut starts with the incoming values the successors' phis take from
  this block; LiveIn = LiveSet + LiveOut - Kill;
* a worklist (popped from the back, seeded with the predecessors of blocks
  whose LiveIn is not empty) grows LiveOut by the successors' LiveIn until
  nothing changes;
* the live set at a call is the block's LiveOut walked backwards down to and
  including the call, minus the call's own result.
"""

from __future__ import annotations

from ..ir import instructions as I
from ..ir.analysis import predecessors
from .base_vectors import is_handled_gc_type
from ..ir.values import BasicBlock, Constant, Function, Value


class OrderedSet:
    """Insertion-ordered set of values keyed by identity (LLVM's SetVector)."""

    __slots__ = ("_d",)

    def __init__(self, items=()):
        self._d: dict[int, Value] = {}
        for v in items:
            self.add(v)

    def add(self, v: Value) -> None:
        if id(v) not in self._d:
            self._d[id(v)] = v

    def discard(self, v: Value) -> None:
        self._d.pop(id(v), None)

    def union(self, other: "OrderedSet") -> None:
        for k, v in other._d.items():
            if k not in self._d:
                self._d[k] = v

    def subtract_ids(self, ids: set[int]) -> None:
        for k in ids:
            self._d.pop(k, None)

    def copy(self) -> "OrderedSet":
        c = OrderedSet()
        c._d = dict(self._d)
        return c

    def __len__(self) -> int:
        return len(self._d)

    def __iter__(self):
        return iter(self._d.values())

    def __contains__(self, v) -> bool:
        return id(v) in self._d


def llvm_operands(inst: I.Instruction) -> list[Value]:
    """Operands in LLVM's order (calls: arguments, bundle operands, [invoke targets], callee)."""
    if isinstance(inst, I.CallBase):
        ops: list[Value] = list(inst.args)
        for b in inst.bundles:
            ops += b.inputs
        if isinstance(inst, I.Invoke):
            ops += [inst.normal, inst.unwind]
        ops.append(inst.callee)
        return ops
    return inst.operands


def _tracked(v: Value) -> bool:
    return is_handled_gc_type(v.type) and not isinstance(v, Constant)


def _walk_back(insts, live: OrderedSet) -> None:
    for inst in insts:
        live.discard(inst)
        if isinstance(inst, I.Phi):
            continue
        for v in llvm_operands(inst):
            if _tracked(v):
                live.add(v)


class OrderedLiveness:
    """Per-block LiveIn/LiveOut of GC pointers in LLVM's order."""

    def __init__(self, fn: Function):
        self.fn = fn
        preds_in_block_order = predecessors(fn)
        # LLVM walks predecessors in use-list order: the latest reference first
        self.preds = {b: list(reversed(ps)) for b, ps in preds_in_block_order.items()}
        self.kill: dict[int, set[int]] = {}
        self.live_set: dict[int, OrderedSet] = {}
        self.live_out: dict[int, OrderedSet] = {}
        self.live_in: dict[int, OrderedSet] = {}
        work: list[BasicBlock] = []
        queued: set[int] = set()

        def push(blocks) -> None:
            for p in blocks:
                if id(p) not in queued:
                    queued.add(id(p))
                    work.append(p)

        for b in fn.blocks:
            self.kill[id(b)] = {id(i) for i in b.instructions if is_handled_gc_type(i.type)}
            ls = OrderedSet()
            _walk_back(reversed(b.instructions), ls)
            self.live_set[id(b)] = ls
            out = OrderedSet()
            for s in _successors(b):
                for phi in s.phis():
                    assert isinstance(phi, I.Phi)
                    for v, p in phi.incoming:
                        if p is b:
                            if _tracked(v):
                                out.add(v)
                            break
            self.live_out[id(b)] = out
            li = ls.copy()
            li.union(out)
            li.subtract_ids(self.kill[id(b)])
            self.live_in[id(b)] = li
            if len(li):
                push(self.preds.get(b, []))
        while work:
            b = work.pop()
            queued.discard(id(b))
            out = self.live_out[id(b)].copy()
            before = len(out)
            for s in _successors(b):
                out.union(self.live_in[id(s)])
            if len(out) == before:
                continue
            self.live_out[id(b)] = out
            tmp = out.copy()
            tmp.union(self.live_set[id(b)])
            tmp.subtract_ids(self.kill[id(b)])
            if len(tmp) != len(self.live_in[id(b)]):
                self.live_in[id(b)] = tmp
                push(self.preds.get(b, []))

    def live_at(self, call: I.Instruction) -> list[Value]:
        """The GC pointers live across ``call`` (its GC-pointer arguments included), in LLVM's order."""
        b = call.parent
        live = self.live_out[id(b)].copy()
        insts = b.instructions
        k = insts.index(call)
        _walk_back(reversed(insts[k:]), live)
        live.discard(call)
        return list(live)


def _successors(b: BasicBlock) -> list[BasicBlock]:
    t = b.terminator
    return list(t.successors) if t is not None else []
