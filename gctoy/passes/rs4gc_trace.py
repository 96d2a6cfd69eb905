"""RewriteStatepointsForGC, phase by phase: snapshots for the book's stepping widget.

``trace_rs4gc(text, "f")`` runs the pass on a fresh parse of ``text`` and
records, after each phase, the function as IR text and what the pass knows
about every call: the GC pointers live across it, the base of each, which
derived pointers will be recomputed rather than relocated, and (once built)
the (base, derived) pair of every ``gc.relocate``.  Everything is plain
strings, so a snapshot can be printed, compared in a test, or shown in a
static HTML page.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..ir.analysis.numbering import LocalNames
from ..ir.parser import parse_module
from ..ir.printer import print_function
from ..ir.values import Constant, GlobalValue
from .rewrite_statepoints import RS4GCOptions, SafepointRecord, rewrite_module
from .rs4gc_state import FunctionState

#: what each phase does, in the book's words
PHASE_NOTES = {
    "tidy": "Unreachable blocks go, single-entry phis fold, a branch's single-use icmp moves next to the "
    "branch, and each invoke's destinations get the invoke as their only predecessor.",
    "liveness": "Backward dataflow over GC pointers (addrspace(1)): what is live across each call, "
    "its own GC-pointer arguments included.",
    "bases": "Each live pointer's base: walk back through GEPs and casts; phis and selects that may mix "
    "objects get a base phi/select beside them (named .base, base_phi, base_select).",
    "liveness with bases": "Liveness again, with every base kept alive just after each call, so that bases "
    "are relocated too.",
    "rematerialization": "Derived pointers that are cheap to recompute from their base (GEPs and no-op "
    "casts, cost < 6) are recomputed after the call instead of relocated.",
    "statepoints": "Each call becomes a gc.statepoint with a gc-live bundle, a gc.result for its value and "
    "one gc.relocate per live pointer; old uses still name the old values.",
    "uses rewritten": "Every use after a statepoint now reads the relocated value (through phis where paths "
    "meet): what the collector moved, the program sees moved.",
}


@dataclass(frozen=True)
class CallSnapshot:
    """What the pass knows about one call at one phase."""

    call: str
    live: tuple[str, ...]
    bases: tuple[tuple[str, str], ...]
    remat: tuple[str, ...]
    relocates: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class PhaseSnapshot:
    """The function after one phase."""

    phase: str
    note: str
    ir: str
    calls: tuple[CallSnapshot, ...] = field(default_factory=tuple)

    def summary(self) -> str:
        """A short text: each call with its live values, bases and rematerialised values."""
        lines = [f"== {self.phase}: {self.note}"]
        for c in self.calls:
            lines.append(f"  {c.call}")
            if c.live:
                lines.append(f"    live: {', '.join(c.live)}")
            for d, b in c.bases:
                if d != b:
                    lines.append(f"    base of {d}: {b}")
            if c.remat:
                lines.append(f"    recomputed after the call: {', '.join(c.remat)}")
            for b, d in c.relocates:
                lines.append(f"    relocate: ({b}, {d})")
        return "\n".join(lines)


def trace_rs4gc(text: str, function: str, options: RS4GCOptions | None = None) -> list[PhaseSnapshot]:
    """Run RS4GC on ``text`` and return the snapshots of ``function`` after each phase."""
    module = parse_module(text)
    snaps: list[PhaseSnapshot] = []

    def observe(phase: str, state: FunctionState) -> None:
        fn = state.fn
        if fn.name != function:
            return
        names = LocalNames(fn)
        ref = _namer(names)
        calls = []
        for r in state.records:
            call = r.statepoint if r.statepoint is not None and r.statepoint.parent is not None else r.call
            bases = tuple((ref(v), ref(state.base_of(v))) for v in r.live)
            relocs = _pairs(r, ref)
            calls.append(
                CallSnapshot(
                    _call_text(call, ref),
                    tuple(ref(v) for v in r.live),
                    bases,
                    tuple(ref(v) for v, _ in r.remat.values()),
                    relocs,
                )
            )
        snaps.append(PhaseSnapshot(phase, PHASE_NOTES[phase], print_function(fn), tuple(calls)))

    rewrite_module(module, options, observer=observe)
    if not snaps and module.get_function(function) is None:
        raise KeyError(f"no function @{function} in the module")
    return snaps


def _namer(names: LocalNames):
    def ref(v) -> str:
        if isinstance(v, Constant) and not isinstance(v, GlobalValue):
            return "null"
        return names(v)

    return ref


def _call_text(call, ref) -> str:
    from ..ir.statepoint import Statepoint

    if Statepoint.is_statepoint(call):
        target = Statepoint.of(call).target
        return f"{ref(call)} = statepoint of {ref(target)}"
    callee = f"@{call.callee_name}" if call.callee_name else ref(call.callee)
    head = f"{ref(call)} = " if call.type.render() != "void" else ""
    return f"{head}{call.opcode} {callee}"


def _pairs(r: SafepointRecord, ref) -> tuple[tuple[str, str], ...]:
    from ..ir.statepoint import GCRelocate, Statepoint

    if r.statepoint is None or r.statepoint.parent is None:
        return ()
    sp = Statepoint.of(r.statepoint)
    out = []
    for rel in r.relocates:
        if rel.parent is None:
            continue
        g = GCRelocate(rel, sp)
        out.append((ref(g.base), ref(g.derived)))
    return tuple(out)
