"""A walker over the shadow stack during a run's collections: one page per (collection, StackEntry).

The pages are rendered beforehand by :func:`gctoy.viz.shadowstack.chain_page_html` and linked in
the browser, so the widget also works in the static HTML book::

    IntSlider.value --jslink--> Stack.selected_index
     walk step                   coll 1 #0 | coll 1 #1 | coll 2 #0 | ... (precomputed HTML)
"""

from __future__ import annotations

import ipywidgets as widgets

from ..errors import GCToyError
from ..viz.shadowstack import ChainPage, ChainSnapshot, chain_page_html, chain_pages


class ShadowStackWalker(widgets.VBox):
    """A slider over every StackEntry of every collection, showing the chain, roots and surviving objects."""

    def __init__(
        self,
        shots: list[ChainSnapshot],
        *,
        symbols: dict[int, str] | None = None,
        initial: int = 0,
        python_link: bool = False,
    ) -> None:
        if not shots:
            raise GCToyError("no collections to show: run the program with a collector that collects")
        self.shots = list(shots)
        self.pages: list[ChainPage] = chain_pages(self.shots)
        last = len(self.pages) - 1
        start = min(max(initial, 0), last)
        self.slider = widgets.IntSlider(
            value=start,
            min=0,
            max=last,
            description="walk step",
            continuous_update=True,
            readout_format="d",
            style={"description_width": "initial"},
        )
        self.play = widgets.Play(
            value=start,
            min=0,
            max=last,
            interval=900,
            tooltip="play, pause, stop and repeat: walk the chain one entry at a time",
        )
        self.stack = widgets.Stack(
            [widgets.HTML(chain_page_html(self.shots, p, symbols)) for p in self.pages], selected_index=start
        )
        self.links = [
            widgets.jslink((self.play, "value"), (self.slider, "value")),
            widgets.jslink((self.slider, "value"), (self.stack, "selected_index")),
        ]
        if python_link:
            self.links += [
                widgets.link((self.play, "value"), (self.slider, "value")),
                widgets.link((self.slider, "value"), (self.stack, "selected_index")),
            ]
        super().__init__([widgets.HBox([self.play, self.slider]), self.stack])

    def page_html(self, step: int) -> str:
        """The HTML of walk step ``step``."""
        return self.stack.children[step].value

    def __repr__(self) -> str:
        return f"ShadowStackWalker({len(self.shots)} collections, {len(self.pages)} pages)"


def shadow_stack_walker(shots: list[ChainSnapshot], symbols: dict[int, str] | None = None, **kw) -> ShadowStackWalker:
    """The walker for the snapshots that :func:`gctoy.viz.shadowstack.record_snapshots` collected."""
    return ShadowStackWalker(shots, symbols=symbols, **kw)
