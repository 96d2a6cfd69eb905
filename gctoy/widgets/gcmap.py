"""A safe point chooser: pick a kind (Loop, Return, PreCall, PostCall or all four) and see the
function's disassembly with those safe points marked.

Every page is precomputed by :func:`gctoy.viz.gcmap.kind_pages` and linked in the browser::

    ToggleButtons.index --jslink--> Stack.selected_index
     Loop | Return | ...             page 0 | page 1 | ... (precomputed HTML)

so the chooser also works in the static HTML book.
"""

from __future__ import annotations

import ipywidgets as widgets

from ..codegen.x86_64 import CompiledModule
from ..errors import GCToyError
from ..viz.gcmap import KindPage, kind_pages


class SafePointChooser(widgets.VBox):
    """Buttons for the safe point kinds over one function's marked listings."""

    def __init__(
        self, compiled: CompiledModule, name: str, *, initial: str = "all four", python_link: bool = False
    ) -> None:
        self.function = name
        self.pages: list[KindPage] = kind_pages(compiled, name)
        labels = [p.label for p in self.pages]
        if initial not in labels:
            raise GCToyError(f"no page {initial!r}; the pages are {', '.join(labels)}")
        start = labels.index(initial)
        self.buttons = widgets.ToggleButtons(
            options=labels, index=start, description="safe points", style={"description_width": "initial"}
        )
        self.stack = widgets.Stack([widgets.HTML(p.html()) for p in self.pages], selected_index=start)
        self.links = [widgets.jslink((self.buttons, "index"), (self.stack, "selected_index"))]
        if python_link:
            self.links.append(widgets.link((self.buttons, "index"), (self.stack, "selected_index")))
        super().__init__([self.buttons, self.stack])

    def page_html(self, label: str) -> str:
        """The HTML of the page called ``label``."""
        for page, child in zip(self.pages, self.stack.children):
            if page.label == label:
                return child.value
        raise GCToyError(f"no page {label!r}")

    def __repr__(self) -> str:
        return f"SafePointChooser(@{self.function}, {len(self.pages)} pages)"


__all__ = ["SafePointChooser"]
