"""A byte explorer for x86 GC info: every byte of a blob, and a code-offset slider that shows what
the tables say at each offset.

Every page is precomputed by :func:`gctoy.viz.gcinfo.offset_pages` and linked in the browser::

    IntSlider.value --jslink--> Stack.selected_index
     code offset                  offset 0 | offset 1 | ... (precomputed HTML)

so the slider also works in the static HTML book.
"""

from __future__ import annotations

import ipywidgets as widgets

from ..coreclr.method import decode_with_entries
from ..viz.gcinfo import offset_page_html, offset_pages


class GCInfoExplorer(widgets.VBox):
    """A slider over a method's code offsets and the byte explorer page of each."""

    def __init__(self, blob: bytes, *, version: int = 5, initial: int = 0, python_link: bool = False) -> None:
        self.blob = bytes(blob)
        self.regions = decode_with_entries(self.blob, version).regions
        self.pages = offset_pages(self.blob, version)
        last = len(self.pages) - 1
        start = min(max(initial, 0), last)
        self.slider = widgets.IntSlider(
            value=start,
            min=0,
            max=last,
            description="code offset",
            continuous_update=True,
            readout_format="04X",
            style={"description_width": "initial"},
        )
        self.stack = widgets.Stack(
            [widgets.HTML(offset_page_html(self.blob, p, self.regions)) for p in self.pages], selected_index=start
        )
        self.links = [widgets.jslink((self.slider, "value"), (self.stack, "selected_index"))]
        if python_link:
            self.links.append(widgets.link((self.slider, "value"), (self.stack, "selected_index")))
        super().__init__([self.slider, self.stack])

    def page_html(self, offset: int) -> str:
        """The HTML of the page for ``offset``."""
        return self.stack.children[offset].value

    def __repr__(self) -> str:
        return f"GCInfoExplorer({len(self.blob)} bytes, {len(self.pages)} code offsets)"
