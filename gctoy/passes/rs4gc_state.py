"""What RewriteStatepointsForGC knows about one function, handed from phase to phase.

Each phase of the pass (see :mod:`gctoy.passes.rewrite_statepoints`) is a function that takes a
:class:`FunctionState` and returns it with its own fields filled in, so a chapter or a lab can run
the phases one at a time and look at the state between them::

    state = FunctionState.start(module, fn)
    for name, phase in PHASES:
        state = phase(state)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from ..ir import instructions as I
from ..ir.module import Module
from ..ir.values import BasicBlock, Function, Value
from .base_pointers import BaseFinder
from .naming import NameUniquer
from .rs4gc_options import RS4GCOptions


@dataclass
class SafepointRecord:
    """What the pass decided for one call: live values, rematerialised values, what it built."""

    call: I.CallBase
    #: the GC pointers live across the call (filled by the liveness phases)
    live: list[Value] = field(default_factory=list)
    #: id of a derived pointer -> (the pointer, its chain of GEPs and casts, base last), recomputed
    #: after the call instead of relocated
    remat: dict[int, tuple[Value, list[I.Instruction]]] = field(default_factory=dict)
    #: what the call became, and its relocates (filled by the statepoint phase)
    statepoint: I.CallBase | None = None
    relocates: list[I.Call] = field(default_factory=list)
    #: (edge, id of a rematerialised value) -> the names of its chain's clones, reserved up front
    remat_names: dict[tuple[str, int], list[str | None]] = field(default_factory=dict)
    #: ids of ``live``, kept while values are replaced
    live_ids: set[int] = field(default_factory=set)


#: (block, [(original value, its relocated or rematerialised copy)]) per statepoint edge
Copies = list[tuple[BasicBlock, list[tuple[Value, Value]]]]


@dataclass
class FunctionState:
    """The function being rewritten and everything the phases have found about it so far."""

    module: Module
    fn: Function
    options: RS4GCOptions
    names: NameUniquer
    #: the tidy phase changed the function (even when it has no call to rewrite)
    changed: bool = False
    #: one record per call to rewrite, in program order (tidy)
    records: list[SafepointRecord] = field(default_factory=list)
    #: id of a live value -> its base.  One map for the whole function, as in LLVM 14: the last call
    #: to see a value decides its base (bases; liveness with bases; statepoints keep it current)
    bases: dict[int, Value] = field(default_factory=dict)
    #: the base finder of the function (tidy makes it for ``gc.get.pointer.base``; bases goes on with it)
    finder: BaseFinder | None = None
    #: the ``@__tmp_use`` calls that keep deopt operands and bases live until liveness is redone
    holders: list[I.Call] = field(default_factory=list)
    #: the relocated and rematerialised copies each statepoint made (statepoints; read by uses)
    copies: Copies = field(default_factory=list)
    #: no later phase has work to do (no call to rewrite, or a non-relocating collector)
    done: bool = False

    @classmethod
    def start(cls, module: Module, fn: Function, options: RS4GCOptions | None = None) -> FunctionState:
        """The state before the first phase."""
        return cls(module, fn, options or RS4GCOptions(), NameUniquer(fn))

    def base_of(self, v: Value) -> Value:
        """The base the pass chose for ``v`` (``v`` itself when it has none)."""
        return self.bases.get(id(v), v)


#: one phase of the pass
Phase = Callable[[FunctionState], FunctionState]
#: called after each phase with (phase name, the state)
PhaseObserver = Callable[[str, FunctionState], None]


class AfterCall:
    """An insertion point just after a call, shaped like a block for :func:`first_insertion_index`."""

    def __init__(self, call: I.CallBase):
        self.block = call.parent
        self.index = call.parent.instructions.index(call) + 1

    def insert(self, index: int, inst: I.Instruction) -> None:
        """Insert ``inst`` into the call's block at ``index``."""
        self.block.insert(index, inst)


def first_insertion_index(block: BasicBlock | AfterCall) -> int:
    """Where new code goes at the top of ``block``: after its phis and its landing pad."""
    if isinstance(block, AfterCall):
        return block.index
    n = len(block.phis())
    if n < len(block.instructions) and isinstance(block.instructions[n], I.LandingPad):
        n += 1
    return n
