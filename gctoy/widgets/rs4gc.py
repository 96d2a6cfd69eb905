"""Step through RewriteStatepointsForGC one phase at a time, with no kernel needed.

The pages (one per phase: its note, the CFG redrawn from that phase's IR, the
pass's summary) are computed in Python when the widget is made, by
:func:`gctoy.viz.rs4gc.phase_pages`.  A ``Play`` button and a slider choose the
page; both links are ``jslink``s, which run in the browser, so the stepper also
works in the static HTML book::

    Play.value --jslink--> IntSlider.value --jslink--> Stack.selected_index
      [>]  1 ... n            [----o-----]              (copy of 1) | phase 1 | ... | phase n

The slider counts phases from 1, as the pages say ("phase 3 of 7"); since a ``jslink`` cannot
subtract, the Stack's child 0 is a copy of phase 1 that the slider never selects.
"""

from __future__ import annotations

import ipywidgets as widgets

from ..passes.rewrite_statepoints import RS4GCOptions
from ..viz.rs4gc import PhasePage, phase_pages


class RS4GCStepper(widgets.VBox):
    """Play button and slider over a stack of precomputed RS4GC phase pages."""

    def __init__(self, pages: list[PhasePage], *, initial: int = 0, interval_ms: int = 1500, python_link: bool = False):
        if not pages:
            raise ValueError("an RS4GC stepper needs at least one phase page")
        self.pages = list(pages)
        count = len(self.pages)
        start = min(max(initial, 0), count - 1) + 1  # ``initial`` is a page index, the slider counts from 1
        self.play = widgets.Play(
            value=start,
            min=1,
            max=count,
            step=1,
            interval=interval_ms,
            tooltip="play: show the phases one after another",
        )
        self.slider = widgets.IntSlider(
            value=start, min=1, max=count, description="phase", readout=True, continuous_update=True
        )
        pages = [widgets.HTML(p.html()) for p in self.pages]
        self.stack = widgets.Stack([widgets.HTML(self.pages[0].html())] + pages, selected_index=start)
        #: The browser-side links (always), plus kernel-side ``link``s when ``python_link`` is set
        #: (for tests and live kernels: then moving ``slider.value`` in Python also turns the page).
        self.links = [
            widgets.jslink((self.play, "value"), (self.slider, "value")),
            widgets.jslink((self.slider, "value"), (self.stack, "selected_index")),
        ]
        if python_link:
            self.links += [
                widgets.link((self.play, "value"), (self.slider, "value")),
                widgets.link((self.slider, "value"), (self.stack, "selected_index")),
            ]
        names = widgets.HTML(" &rarr; ".join(f"{k}:&nbsp;{p.phase}" for k, p in enumerate(self.pages, start=1)))
        super().__init__([widgets.HBox([self.play, self.slider]), names, self.stack])

    @property
    def phases(self) -> list[str]:
        """The phase names, in page order."""
        return [p.phase for p in self.pages]

    def page_html(self, index: int) -> str:
        """The HTML of the page of index ``index`` (0 for the first phase; the slider shows ``index + 1``)."""
        return self.stack.children[index + 1].value

    def __repr__(self) -> str:
        k = self.slider.value - 1
        return (
            f"RS4GCStepper(function='@{self.pages[0].function}', phases={len(self.pages)}, "
            f"selected={k} ({self.pages[k].phase}))"
        )


def rs4gc_stepper(
    source: str,
    function: str,
    options: RS4GCOptions | None = None,
    *,
    initial: int = 0,
    interval_ms: int = 1500,
    python_link: bool = False,
    render: bool | None = None,
) -> RS4GCStepper:
    """An :class:`RS4GCStepper` over RS4GC run on ``function`` of the module text ``source``."""
    return RS4GCStepper(
        phase_pages(source, function, options, render=render),
        initial=initial,
        interval_ms=interval_ms,
        python_link=python_link,
    )
