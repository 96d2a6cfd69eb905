"""Access to the optional pieces of Graphviz: the Python package (to build graphs) and ``dot`` (to draw them).

Building a graph's DOT source needs only the Python package ``graphviz``;
turning it into SVG or PNG needs the ``dot`` program as well.  Neither is
imported or looked up until a renderer asks for it, so ``import gctoy.viz``
always works.
"""

from __future__ import annotations

import shutil
from types import ModuleType

from ..errors import GCToyError


class GraphvizMissing(GCToyError, ImportError):
    """The Python package ``graphviz`` or the ``dot`` program is not installed."""


def graphviz_module() -> ModuleType:
    """The ``graphviz`` Python package, or GraphvizMissing saying how to install it."""
    try:
        import graphviz
    except ImportError as exc:
        raise GraphvizMissing(
            "gctoy.viz builds its pictures with the Python package 'graphviz', which is not installed. "
            "Install it with `pip install graphviz` (or `pip install -e .` in the gctoy checkout); "
            "drawing the pictures also needs Graphviz's `dot` program (Debian: `apt-get install graphviz`, "
            "conda: `conda install -c conda-forge graphviz`)."
        ) from exc
    return graphviz


def has_dot() -> bool:
    """True when Graphviz's ``dot`` program is on the PATH (needed to render, not to build DOT text)."""
    return shutil.which("dot") is not None


def require_dot() -> None:
    """Raise GraphvizMissing with install hints when ``dot`` is not on the PATH."""
    if not has_dot():
        raise GraphvizMissing(
            "rendering a graph needs Graphviz's `dot` program, which is not on the PATH "
            "(Debian: `apt-get install graphviz`, conda: `conda install -c conda-forge graphviz`). "
            "The DOT text is still available without it: use the graph's `.source`."
        )


def render_svg(graph) -> str:
    """The graph drawn as SVG text (needs ``dot``)."""
    require_dot()
    return graph.pipe(format="svg", encoding="utf-8")
