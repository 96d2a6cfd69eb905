"""Precomputed pages chosen with buttons: works in the static HTML book as well as in a kernel.

    ToggleButtons.index --jslink--> Stack.selected_index
     [with the stack map] [without]    page 0 | page 1   (precomputed HTML)

Chapters use it to put two or more runs of the same thing side by side (chapter 00: a collection
with and without the stack map).
"""

from __future__ import annotations

import html

import ipywidgets as widgets

from gctoy.runtime.no_roots import Outcome

__all__ = ["ButtonPages", "outcome_html"]


class ButtonPages(widgets.VBox):
    """One button per page; the pages are HTML strings computed beforehand."""

    def __init__(
        self,
        pages: dict[str, str],
        *,
        description: str = "",
        tooltips: list[str] | None = None,
        python_link: bool = False,
    ) -> None:
        if not pages:
            raise ValueError("ButtonPages needs at least one page")
        names = list(pages)
        self.buttons = widgets.ToggleButtons(
            options=names,
            value=names[0],
            description=description,
            tooltips=tooltips or [f"show: {n}" for n in names],
            style={"description_width": "initial", "button_width": "auto"},
        )
        self.stack = widgets.Stack([widgets.HTML(pages[n]) for n in names], selected_index=0)
        self.links = [widgets.jslink((self.buttons, "index"), (self.stack, "selected_index"))]
        if python_link:
            self.links.append(widgets.link((self.buttons, "index"), (self.stack, "selected_index")))
        super().__init__([self.buttons, self.stack])


def outcome_html(outcome: Outcome, expected: list[int] | None = None) -> str:
    """One run as a page: what it printed (each value marked right or wrong against ``expected``) and why."""
    cells = []
    for i, value in enumerate(outcome.printed):
        right = expected is not None and i < len(expected) and expected[i] == value
        colour = "rgba(40,180,60,0.25)" if right else "rgba(220,50,50,0.25)"
        note = (
            ""
            if right
            else (
                f" = {value & 0xFFFFFFFFFFFFFFFF:#x}, the poison word"
                if value & 0xFFFFFFFFFFFFFFFF == 0xDEADBEEFDEADBEEF
                else ""
            )
        )
        cells.append(
            f'<span style="background:{colour}; padding:2px 6px; margin:2px; display:inline-block">'
            f"{value}{html.escape(note)}</span>"
        )
    printed = "".join(cells) or "nothing"
    error = f"<div><b>stopped:</b> {html.escape(outcome.error)}</div>" if outcome.error else ""
    return (
        f'<div style="font-family: var(--jp-code-font-family, monospace); font-size: 13px">'
        f"<div><b>{html.escape(outcome.label)}</b></div><div>printed: {printed}</div>{error}"
        f"<div>collections: {outcome.collections}; objects copied: {outcome.objects_copied}</div></div>"
    )


class SliderPages(widgets.VBox):
    """A slider (with Play) over precomputed pages, linked in the browser so the static book has them too.

    The slider counts from 1, as the pages say "word 1 of N".
    """

    def __init__(
        self,
        pages: list[str],
        *,
        description: str = "step",
        interval_ms: int = 700,
        first: int = 1,
        python_link: bool = False,
    ) -> None:
        if not pages:
            raise ValueError("SliderPages needs at least one page")
        if first not in (0, 1):
            raise ValueError("SliderPages counts from 0 or from 1")
        self.first = first
        last = len(pages) - 1 + first
        self.play = widgets.Play(
            value=first,
            min=first,
            max=last,
            interval=interval_ms,
            tooltip="play: turn the pages one by one",
        )
        self.slider = widgets.IntSlider(value=first, min=first, max=last, description=description)
        # jslink cannot add: counting from 1, the Stack gets a child 0 (a copy of page 1) that the
        # slider (min 1) never selects, so slider value k shows page k
        children = ([widgets.HTML(pages[0])] if first else []) + [widgets.HTML(p) for p in pages]
        self.stack = widgets.Stack(children, selected_index=first)
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

    def page(self, number: int) -> str:
        """The HTML of page ``number`` (as the slider shows it)."""
        return self.stack.children[number].value
