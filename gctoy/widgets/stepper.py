"""Step through a program running under the moving collector: code, registers, frame, heap.

Every page is a state recorded ahead of time by :func:`gctoy.runtime.trace.record_trace` and
rendered by :func:`gctoy.viz.machine.state_html`, so nothing has to run when a page is shown::

    Play.value --jslink--> IntSlider.value --jslink--> Stack.selected_index
      [>]                    [----o-----]                state 0 | state 1 | ... (precomputed HTML)
    [step] [next safepoint] [collect] [back] [restart]   --(Python, needs a kernel)--> IntSlider.value

The Play button and the slider are linked in the browser (``jslink``), so they also work in
the static HTML book where no kernel runs. The buttons run Python callbacks: with a kernel
they move the slider to the next recorded state, the next arrival at a safepoint or the next
state right after a collection; in the static book they do nothing.
"""

from __future__ import annotations

import ipywidgets as widgets

from ..runtime.trace import LIST3, Trace, record_trace
from ..runtime.trace_views import StateKind
from ..viz.machine import state_html

#: Which states each navigation button looks for (``None``: just the next one).
BUTTON_KINDS: dict[str, StateKind | None] = {"step": None, "next safepoint": "safepoint", "collect": "collected"}


class SafepointStepper(widgets.VBox):
    """Play, slider and buttons over the precomputed states of one recorded run."""

    def __init__(
        self,
        trace: Trace,
        *,
        initial: int = 0,
        interval_ms: int = 900,
        python_link: bool = False,
        all_words: bool = False,
    ) -> None:
        if not trace.states:
            raise ValueError("a safepoint stepper needs at least one recorded state")
        self.trace = trace
        last = len(trace.states) - 1
        start = min(max(initial, 0), last)
        # no description: ipywidgets 8 puts a widget's tooltip in its title only when the description is
        # empty (and the Play view draws none), so a description would hide Play/Stop/Repeat's tooltip
        self.play = widgets.Play(
            value=start,
            min=0,
            max=last,
            step=1,
            interval=interval_ms,
            tooltip="play, pause, stop and repeat: walk through the recorded states",
        )
        self.slider = widgets.IntSlider(
            value=start, min=0, max=last, description="state", continuous_update=True, readout=True
        )
        self.stack = widgets.Stack(
            [widgets.HTML(state_html(s, len(trace.states), all_words=all_words)) for s in trace.states],
            selected_index=start,
        )
        #: The browser-side links (always), plus kernel-side ``link``s with ``python_link`` (for tests
        #: and live kernels, so moving ``slider.value`` in Python also turns the page in Python).
        self.links = [
            widgets.jslink((self.play, "value"), (self.slider, "value")),
            widgets.jslink((self.slider, "value"), (self.stack, "selected_index")),
        ]
        if python_link:
            self.links += [
                widgets.link((self.play, "value"), (self.slider, "value")),
                widgets.link((self.slider, "value"), (self.stack, "selected_index")),
            ]
        self.buttons = {
            "back": widgets.Button(description="back", tooltip="the previous recorded state"),
            "step": widgets.Button(description="step", tooltip="the next recorded state"),
            "next safepoint": widgets.Button(
                description="next safepoint", tooltip="the next call into the runtime (before anything moves)"
            ),
            "collect": widgets.Button(description="collect", tooltip="the state right after the next collection"),
            "restart": widgets.Button(description="restart", tooltip="the first state"),
        }
        for name, button in self.buttons.items():
            # they run Python: say so, and look different from Play and the slider, which work anywhere
            button.tooltip = f"{button.tooltip} (needs a running kernel)"
            button.layout = widgets.Layout(border="1px dashed #999", width="auto")
            button.on_click(lambda _b, name=name: self.press(name))
        note = widgets.HTML(
            '<span style="font-size:11px;color:#888">play and the slider work anywhere, even in the static '
            "book; the buttons need a running kernel</span>"
        )
        super().__init__(
            [widgets.HBox([self.play, self.slider]), widgets.HBox(list(self.buttons.values())), note, self.stack]
        )

    @property
    def index(self) -> int:
        """The state on show (the slider's value)."""
        return self.slider.value

    def target(self, name: str, index: int | None = None) -> int:
        """The index a button would move to from ``index`` (default: the current one)."""
        k = self.index if index is None else index
        last = len(self.trace.states) - 1
        if name == "back":
            return max(k - 1, 0)
        if name == "restart":
            return 0
        if name not in BUTTON_KINDS:
            raise ValueError(f"no button {name!r}; the buttons are {', '.join(self.buttons)}")
        kind = BUTTON_KINDS[name]
        for j in range(k + 1, last + 1):
            if kind is None or self.trace.states[j].kind == kind:
                return j
        return last

    def press(self, name: str) -> int:
        """Do what the button ``name`` does (the slider moves; the page follows); returns the new index."""
        self.slider.value = self.target(name)
        return self.slider.value

    def page_html(self, index: int) -> str:
        """The HTML of page ``index``."""
        return self.stack.children[index].value

    def __repr__(self) -> str:
        state = self.trace.states[self.index]
        return (
            f"SafepointStepper(states={len(self.trace.states)}, collections={self.trace.collections}, "
            f"focus={self.trace.focus!r}, selected={self.index} ({state.kind}))"
        )


def safepoint_stepper(
    program: str = LIST3,
    *,
    initial: int = 0,
    interval_ms: int = 900,
    python_link: bool = False,
    all_words: bool = False,
    **record,
) -> SafepointStepper:
    """Record ``program`` with :func:`~gctoy.runtime.trace.record_trace` (``record`` are its keywords)
    and return a stepper over the states."""
    return SafepointStepper(
        record_trace(program, **record),
        initial=initial,
        interval_ms=interval_ms,
        python_link=python_link,
        all_words=all_words,
    )
