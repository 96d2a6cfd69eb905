"""gctoy.viz: pictures and tables of what the core computes (CFGs with live GC pointers, statepoint layouts).

Nothing here imports Jupyter.  Building a graph needs the Python package
``graphviz`` (imported only when a graph is built, with a clear message if it is
missing); drawing it as SVG needs Graphviz's ``dot`` program, which
:func:`has_dot` checks for.  ``cfg_dot_source`` works without ``dot``.
"""

from ._graphviz import GraphvizMissing, graphviz_module, has_dot, render_svg, require_dot
from .cfg import (
    CFGPalette,
    InstructionKind,
    cfg_dot_source,
    cfg_graph,
    edge_labels,
    instruction_kind,
    may_be_safepoint,
)
from .rs4gc import PhaseLiveness, PhasePage, phase_pages, snapshot_module
from .eras import OPERAND_KINDS, EraColumn, EraTable, era_table, operand_cells
from .statepoint import OperandSlot, layout_text, statepoint_layout

__all__ = [
    "OPERAND_KINDS",
    "CFGPalette",
    "EraColumn",
    "EraTable",
    "GraphvizMissing",
    "InstructionKind",
    "OperandSlot",
    "PhaseLiveness",
    "PhasePage",
    "cfg_dot_source",
    "cfg_graph",
    "edge_labels",
    "era_table",
    "graphviz_module",
    "has_dot",
    "instruction_kind",
    "layout_text",
    "may_be_safepoint",
    "operand_cells",
    "phase_pages",
    "render_svg",
    "require_dot",
    "snapshot_module",
    "statepoint_layout",
]
