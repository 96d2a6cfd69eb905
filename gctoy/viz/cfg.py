"""Control-flow graphs drawn with Graphviz: a box per block listing its instructions, GC pointers marked.

Each block becomes one node whose label is an HTML table::

    +--------------------------------------------+
    | loop:                      (block header)  |
    | live-in: %h, %cur          (blue, optional) |
    | %i = phi i32 ...                            |
    | %tok = call token ... gc.statepoint ...     |  <- amber background: a statepoint
    |   live across: (none)      (blue, optional) |
    | %h.rel = call ... gc.relocate ...           |  <- green text: a relocation
    | br i1 %done, label %exit, label %loop       |
    | live-out: %h.rel, %next    (blue, optional) |
    +--------------------------------------------+

Edges leave a conditional branch labelled ``T`` and ``F``, a switch labelled with
its case values, an invoke labelled ``normal`` and ``unwind``.  With a liveness
analysis, every call that may be a safepoint gets a "live across" line: the GC
pointers that are still needed after the call, i.e. exactly the values a
collector running during that call must find and may move.

Node ids (``b0``, ``b1``...) follow block order and every list is in definition
order, so the same function always gives the same DOT text.
"""

from __future__ import annotations

import enum
import html
from dataclasses import dataclass
from typing import Iterable, Mapping, Protocol

from ..ir import instructions as I
from ..ir.analysis.numbering import LocalNames, ValueNumbering
from ..ir.intrinsics import is_relocate_name, is_result_name, is_statepoint_name
from ..ir.printer import print_instruction
from ..ir.values import BasicBlock, Function, Value
from ._graphviz import graphviz_module


class LivenessLike(Protocol):
    """What the drawing needs from a liveness analysis (``gctoy.ir.analysis.Liveness`` fits)."""

    @property
    def live_in(self) -> Mapping[BasicBlock, Iterable[Value]]:
        """Values live on entry to each block."""

    @property
    def live_out(self) -> Mapping[BasicBlock, Iterable[Value]]:
        """Values live on exit from each block."""

    def live_after(self, inst: I.Instruction) -> Iterable[Value]:
        """Values live just after ``inst``."""


@dataclass(frozen=True)
class CFGPalette:
    """The colours of a CFG drawing."""

    header_bg: str = "#e6e6e6"
    statepoint_bg: str = "#fde4a6"
    relocate_fg: str = "#1b7a3a"
    result_fg: str = "#6a3d9a"
    live_fg: str = "#1f5fbf"
    highlight_bg: str = "#ffc9c9"
    highlight_border: str = "#c62828"
    border: str = "#555555"


DEFAULT_PALETTE = CFGPalette()


class InstructionKind(enum.Enum):
    """How a line of a block is classified for colouring."""

    PLAIN = "plain"
    STATEPOINT = "statepoint"
    RELOCATE = "relocate"
    RESULT = "result"


def instruction_kind(inst: I.Instruction) -> InstructionKind:
    """``statepoint``, ``relocate``, ``result`` for the GC intrinsics, else ``plain``."""
    name = inst.callee_name if isinstance(inst, I.CallBase) else None
    if is_statepoint_name(name):
        return InstructionKind.STATEPOINT
    if is_relocate_name(name):
        return InstructionKind.RELOCATE
    if is_result_name(name):
        return InstructionKind.RESULT
    return InstructionKind.PLAIN


def may_be_safepoint(inst: I.Instruction) -> bool:
    """True for a statepoint and for any call or invoke of a function that is not an ``llvm.*`` intrinsic."""
    if not isinstance(inst, I.CallBase):
        return False
    name = inst.callee_name
    if is_statepoint_name(name):
        return True
    return name is None or not name.startswith("llvm.")


def block_label(block: BasicBlock, names: LocalNames | None = None) -> str:
    """``name:`` for a named block, ``N:`` for an unnamed one (numbered as the printer numbers it)."""
    if names is None and block.parent is not None:
        names = LocalNames(block.parent)
    text = names(block) if names is not None else "%?"
    return text[1:] + ":" if text.startswith("%") else text + ":"


def wrap_ir(text: str, width: int) -> list[str]:
    """Break one printed instruction into lines of about ``width`` characters, at ``", "`` boundaries."""
    out: list[str] = []
    for line in text.split("\n"):
        line = line.strip()
        if width <= 0 or len(line) <= width:
            out.append(line)
            continue
        pieces = line.split(", ")
        current = pieces[0]
        for piece in pieces[1:]:
            if len(current) + 2 + len(piece) > width:
                out.append(current + ",")
                current = "    " + piece
            else:
                current += ", " + piece
        out.append(current)
    return out


def edge_labels(block: BasicBlock) -> list[tuple[BasicBlock, str]]:
    """The block's out-edges in terminator order, each with its label (duplicates merged)."""
    term = block.terminator
    pairs: list[tuple[BasicBlock, str]] = []
    if isinstance(term, I.Br) and term.is_conditional:
        pairs = [(term.successors[0], "T"), (term.successors[1], "F")]
    elif isinstance(term, I.Switch):
        pairs = [(term.default, "default")]
        for value, target in term.cases:
            pairs.append((target, str(value.value)))
    elif isinstance(term, I.Invoke):
        pairs = [(term.normal, "normal"), (term.unwind, "unwind")]
    elif isinstance(term, I.Instruction):
        pairs = [(b, "") for b in term.successors]
    merged: dict[int, tuple[BasicBlock, list[str]]] = {}
    order: list[int] = []
    for target, label in pairs:
        key = id(target)
        if key not in merged:
            merged[key] = (target, [])
            order.append(key)
        if label:
            merged[key][1].append(label)
    return [(merged[k][0], ",".join(merged[k][1])) for k in order]


class _Drawing:
    """Builds the HTML labels of one function's blocks."""

    def __init__(
        self, fn: Function, liveness: LivenessLike | None, highlight, opaque: bool, wrap: int, palette: CFGPalette
    ):
        self.fn = fn
        self.liveness = liveness
        self.opaque = opaque
        self.wrap = wrap
        self.palette = palette
        self.names = LocalNames(fn)
        self.order = ValueNumbering(fn)
        self.highlight = {id(x) for x in highlight}

    def live_text(self, values: Iterable[Value]) -> str:
        def key(v: Value) -> tuple[int, str]:
            k = self.order.number(v)
            return (k if k is not None else len(self.order), self.names(v))

        vals = sorted({id(v): v for v in values}.values(), key=key)
        return ", ".join(self.names(v) for v in vals) if vals else "(none)"

    def row(self, lines: list[str], *, fg: str | None = None, bg: str | None = None, bold: bool = False) -> str:
        body = '<BR ALIGN="LEFT"/>'.join(html.escape(line).replace("  ", "&#160;&#160;") for line in lines)
        if bold:
            body = f"<B>{body}</B>"
        if fg:
            body = f'<FONT COLOR="{fg}">{body}</FONT>'
        bgattr = f' BGCOLOR="{bg}"' if bg else ""
        return f'<TR><TD ALIGN="LEFT" BALIGN="LEFT"{bgattr}>{body}<BR ALIGN="LEFT"/></TD></TR>'

    def label(self, block: BasicBlock) -> str:
        p = self.palette
        rows = [self.row([block_label(block, self.names)], bg=p.header_bg, bold=True)]
        lv = self.liveness
        if lv is not None:
            rows.append(self.row([f"live-in: {self.live_text(lv.live_in[block])}"], fg=p.live_fg))
        for inst in block.instructions:
            kind = instruction_kind(inst)
            text = wrap_ir(print_instruction(inst, opaque=self.opaque), self.wrap)
            fg = {InstructionKind.RELOCATE: p.relocate_fg, InstructionKind.RESULT: p.result_fg}.get(kind)
            bg = p.statepoint_bg if kind is InstructionKind.STATEPOINT else None
            marked = id(inst) in self.highlight
            if marked:
                bg = p.highlight_bg
            rows.append(self.row(text, fg=fg, bg=bg, bold=marked))
            if lv is not None and may_be_safepoint(inst):
                across = [v for v in lv.live_after(inst) if v is not inst]
                rows.append(self.row([f"  live across: {self.live_text(across)}"], fg=p.live_fg))
        if lv is not None:
            rows.append(self.row([f"live-out: {self.live_text(lv.live_out[block])}"], fg=p.live_fg))
        border = p.highlight_border if id(block) in self.highlight else p.border
        width = "3" if id(block) in self.highlight else "1"
        return (
            f'<<TABLE BORDER="{width}" CELLBORDER="0" CELLSPACING="0" CELLPADDING="2" COLOR="{border}">'
            + "".join(rows)
            + "</TABLE>>"
        )


def cfg_graph(
    fn: Function,
    liveness: LivenessLike | None = None,
    *,
    highlight: Iterable[I.Instruction | BasicBlock] = (),
    opaque: bool = False,
    wrap: int = 96,
    title: str | None = None,
    palette: CFGPalette = DEFAULT_PALETTE,
):
    """The function's control-flow graph as a ``graphviz.Digraph``.

    ``liveness`` (e.g. ``Liveness(fn, gc_only=True)``) adds live-in / live-out
    lines to each block and a "live across" line under each possible safepoint;
    ``highlight`` marks instructions (red background) and blocks (red border);
    ``opaque`` prints pointers as ``ptr``; ``wrap`` is the line width (0: never wrap).
    """
    graphviz = graphviz_module()
    if fn.is_declaration:
        raise ValueError(f"'@{fn.name}' is a declaration: it has no control-flow graph")
    drawing = _Drawing(fn, liveness, highlight, opaque, wrap, palette)
    g = graphviz.Digraph(name=f"cfg_{fn.name}")
    g.attr(label=title if title is not None else f"@{fn.name}", labelloc="t", fontname="Courier")
    g.attr("node", shape="plain", fontname="Courier", fontsize="10")
    g.attr("edge", fontname="Courier", fontsize="10")
    ids = {id(b): f"b{k}" for k, b in enumerate(fn.blocks)}
    for block in fn.blocks:
        g.node(ids[id(block)], label=drawing.label(block))
    for block in fn.blocks:
        for target, text in edge_labels(block):
            attrs = {"label": text} if text else {}
            if text == "unwind":
                attrs["style"] = "dashed"
            g.edge(ids[id(block)], ids[id(target)], **attrs)
    return g


def cfg_dot_source(fn: Function, liveness: LivenessLike | None = None, **options) -> str:
    """The DOT text of :func:`cfg_graph` (same options); deterministic, and needs no ``dot`` program."""
    return cfg_graph(fn, liveness, **options).source
