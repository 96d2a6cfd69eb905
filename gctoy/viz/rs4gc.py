"""RewriteStatepointsForGC phase by phase, as pictures: one page per snapshot of ``trace_rs4gc``.

Each page holds the phase's name and note, the CFG of the function as it was
after that phase (drawn from the snapshot's IR), and the pass's own summary of
every call (live values, bases, rematerialised values, relocate pairs)::

    trace_rs4gc(text, "f")          ->  [PhaseSnapshot, ...]          (gctoy.passes)
      snapshot.ir  +  the declarations of `text`
                    -> parse again  ->  Function  -> cfg_graph  -> SVG
      snapshot.summary()            ->  <pre> under the picture

The blue lines of a drawing come from two places:

* ``live-in`` / ``live-out`` of every block: gctoy's generic liveness of GC
  pointers (:class:`gctoy.ir.analysis.Liveness`) over the IR *on that page*;
* the ``live across`` line under a call: while the pass is still analysing
  (phases ``liveness`` to ``rematerialization``) it is the pass's own live set
  for that call, i.e. what will go into its ``"gc-live"`` bundle (the call's
  own GC-pointer arguments included, bases included once they are known);
  before and after that it is the generic liveness again, so the
  ``statepoints`` page shows the stale values still used after each
  statepoint, and the ``uses rewritten`` page shows none left.

Instructions that a phase added or changed are drawn on a red background.
Everything is computed once, in Python; nothing here imports Jupyter.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass

from ..ir import instructions as I
from ..ir.analysis import Liveness, LocalNames
from ..ir.intrinsics import base_name
from ..ir.module import Module
from ..ir.parser import parse_module
from ..ir.printer import print_instruction, print_module
from ..ir.statepoint import Statepoint
from ..ir.values import Function, Value
from ..passes.rewrite_statepoints import RS4GCOptions, is_gc_leaf_call
from ..passes.rs4gc_trace import PhaseSnapshot, trace_rs4gc
from ._graphviz import has_dot, render_svg
from .cfg import cfg_graph
from .html import PRE_STYLE

#: The phases in which the pass holds live sets of its own (drawn as the "live across" lines).
ANALYSIS_PHASES = ("liveness", "bases", "liveness with bases", "rematerialization")

#: The holder calls RS4GC puts after a call while it computes liveness (removed before it ends).
HOLDER = "__tmp_use"


@dataclass(frozen=True)
class PhasePage:
    """One phase of RS4GC, ready to show: texts, the CFG as DOT (and SVG when ``dot`` is installed)."""

    index: int
    count: int
    function: str
    phase: str
    note: str
    summary: str
    ir: str
    dot: str
    svg: str | None
    #: printed instructions (without relocate comments) that this phase added or changed (red in the drawing)
    changed: tuple[str, ...]

    def title(self) -> str:
        """``phase 3 of 7: bases``."""
        return f"phase {self.index + 1} of {self.count}: {self.phase}"

    def html(self) -> str:
        """The page as an HTML fragment: title, note, CFG (SVG, or the IR when ``dot`` is missing), summary."""
        picture = (
            f'<div style="overflow-x:auto">{self.svg}</div>'
            if self.svg is not None
            else "<div><i>(Graphviz's <code>dot</code> is not installed: the IR instead of the CFG)</i></div>"
            f'<pre style="{PRE_STYLE}">{html.escape(self.ir)}</pre>'
        )
        return (
            f"<div><b>@{html.escape(self.function)} &mdash; {html.escape(self.title())}</b></div>"
            f'<div style="max-width:60em">{html.escape(self.note)}</div>'
            + picture
            + f'<pre style="{PRE_STYLE}">{html.escape(self.summary)}</pre>'
        )


class PhaseLiveness:
    """Liveness for one page: generic block live sets, and the pass's live set under each analysed call."""

    def __init__(self, fn: Function, across: dict[int, tuple[Value, ...]] | None = None):
        self.generic = Liveness(fn, gc_only=True)
        self.live_in = self.generic.live_in
        self.live_out = self.generic.live_out
        self.across = across or {}

    def live_after(self, inst: I.Instruction) -> tuple[Value, ...]:
        """The pass's live set for an analysed call, else the generic values live after ``inst``."""
        if id(inst) in self.across:
            return self.across[id(inst)]
        return self.generic.live_after(inst)


def snapshot_module(source: str, snapshot: PhaseSnapshot, function: str) -> Module:
    """The module of ``source`` with ``function`` replaced by the snapshot's text (intrinsics declared)."""
    rest = parse_module(source)
    old = rest.get_function(function)
    if old is not None:
        rest.remove_function(old)
    return parse_module(snapshot.ir + "\n" + print_module(rest), f"<{snapshot.phase}>", implicit_declarations=True)


def safepoint_calls(fn: Function, module: Module) -> list[I.CallBase]:
    """The calls RS4GC rewrites (or has rewritten: statepoints), in program order, as its records are."""
    out = []
    for inst in fn.instructions():
        if not isinstance(inst, I.CallBase):
            continue
        if Statepoint.is_statepoint(inst):
            out.append(inst)
        elif inst.callee_name != HOLDER and base_name(inst.callee_name) is None and not is_gc_leaf_call(inst, module):
            out.append(inst)
    return out


def _pass_live_sets(fn: Function, module: Module, snapshot: PhaseSnapshot) -> dict[int, tuple[Value, ...]]:
    calls = safepoint_calls(fn, module)
    if len(calls) != len(snapshot.calls):
        return {}
    names = LocalNames(fn)
    by_name: dict[str, Value] = {names(a): a for a in fn.args}
    for inst in fn.instructions():
        by_name[names(inst)] = inst
    out = {}
    for call, record in zip(calls, snapshot.calls):
        out[id(call)] = tuple(by_name[n] for n in record.live if n in by_name)
    return out


#: the printer's ``; (%base, %derived)`` comment after a relocate (it names values, which a phase may rename)
_RELOCATE_COMMENT = re.compile(r"\s*; \(.*\)$")


def _instruction_texts(fn: Function) -> dict[int, str]:
    return {
        id(inst): _RELOCATE_COMMENT.sub("", " ".join(print_instruction(inst).split())) for inst in fn.instructions()
    }


def _svg_body(svg: str) -> str:
    """Graphviz's SVG without the XML prolog, doctype and comments (so it can sit inside HTML), scaled
    down to the width of the page where it is wider (its viewBox keeps the proportions)."""
    start = svg.find("<svg")
    body = re.sub(r"<!--.*?-->\n?", "", svg[start:] if start >= 0 else svg, flags=re.S)
    return body.replace("<svg", '<svg style="max-width:100%;height:auto"', 1)


def phase_pages(
    source: str, function: str, options: RS4GCOptions | None = None, *, render: bool | None = None, wrap: int = 88
) -> list[PhasePage]:
    """One :class:`PhasePage` per phase of RS4GC on ``function`` of the module ``source``.

    ``render`` draws SVG with ``dot`` (default: when ``dot`` is installed); the DOT text is always there.
    """
    if render is None:
        render = has_dot()
    snaps = trace_rs4gc(source, function, options)
    pages = []
    before: set[str] = set()
    for k, snap in enumerate(snaps):
        module = snapshot_module(source, snap, function)
        fn = module.get_function(function)
        assert fn is not None, "the snapshot's text defines the function"
        texts = _instruction_texts(fn)
        changed = [inst for inst in fn.instructions() if k > 0 and texts[id(inst)] not in before]
        across = _pass_live_sets(fn, module, snap) if snap.phase in ANALYSIS_PHASES else None
        graph = cfg_graph(
            fn,
            PhaseLiveness(fn, across),
            highlight=changed,
            wrap=wrap,
            title=f"@{function} after phase {k + 1}: {snap.phase}",
        )
        svg = _svg_body(render_svg(graph)) if render else None
        pages.append(
            PhasePage(
                k,
                len(snaps),
                function,
                snap.phase,
                snap.note,
                snap.summary(),
                snap.ir,
                graph.source,
                svg,
                tuple(texts[id(i)] for i in changed),
            )
        )
        before = set(texts.values())
    return pages
