"""One statepoint example shown in its three historical forms, switched with toggle buttons.

The three pages are computed once, in Python, when the widget is made; the
buttons select a page through a ``jslink`` between the buttons' ``index`` and a
``widgets.Stack``'s ``selected_index``.  The link lives in the browser, so the
widget keeps working in the static HTML book where no kernel runs::

    ToggleButtons.index  --jslink-->  Stack.selected_index
      [oldest|middle|modern]            page 0 | page 1 | page 2   (precomputed HTML)
"""

from __future__ import annotations

import html
from dataclasses import dataclass

import ipywidgets as widgets

from ..ir import Module, parse_module, print_module
from ..ir.analysis.numbering import LocalNames
from ..ir.statepoint import StatepointForm, convert_statepoints, statepoints
from ..viz.html import ir_html

#: The forms in historical order, as the buttons show them.
FORM_ORDER: tuple[StatepointForm, ...] = (StatepointForm.OLDEST, StatepointForm.MIDDLE, StatepointForm.MODERN)

#: Where each form comes from: the LLVM releases that used it and the seed document that describes it.
FORM_ORIGIN: dict[StatepointForm, str] = {
    StatepointForm.OLDEST: "LLVM 3.6; seed 001-Statepoints-oldest.rst",
    StatepointForm.MIDDLE: "LLVM 3.7 to 11; seed 004-Statepoints-middle.rst",
    StatepointForm.MODERN: "LLVM 12 and later; seed 000-Statepoints-modern.rst (Intrinsics)",
}


@dataclass(frozen=True)
class Relocation:
    """One ``gc.relocate`` of a converted module: its name and the two indices it uses."""

    function: str
    name: str
    base_index: int
    derived_index: int


@dataclass(frozen=True)
class FormPage:
    """A module printed in one statepoint form, with the relocate indices found in it."""

    form: StatepointForm
    text: str
    relocations: tuple[Relocation, ...]

    def caption(self) -> str:
        """A one-line HTML caption: the form, where it comes from, the relocate indices."""
        idx = ", ".join(
            f"{html.escape(r.name)} = relocate({r.base_index}, {r.derived_index})" for r in self.relocations
        )
        tail = f" &mdash; {idx}" if idx else ""
        return f"<b>{self.form.value}</b> form ({FORM_ORIGIN[self.form]}){tail}"


def form_pages(source: str | Module, *, filename: str = "<example>", opaque: bool = False) -> list[FormPage]:
    """The module converted to each form in :data:`FORM_ORDER` (parsed afresh each time; ``source`` is untouched)."""
    text = source if isinstance(source, str) else print_module(source)
    pages = []
    for form in FORM_ORDER:
        module = parse_module(text, filename, implicit_declarations=True, fix_numbering=True)
        convert_statepoints(module, form)
        relocations = []
        for fn in module.definitions():
            names = LocalNames(fn)
            for sp in statepoints(fn):
                for r in sp.relocates():
                    relocations.append(Relocation(fn.name, names(r.call), r.base_index, r.derived_index))
        pages.append(FormPage(form, print_module(module, opaque=opaque), tuple(relocations)))
    return pages


class StatepointFormsView(widgets.VBox):
    """Toggle buttons over a stack of precomputed pages, one per statepoint form."""

    def __init__(
        self, pages: list[FormPage], *, initial: StatepointForm | str = StatepointForm.MODERN, python_link: bool = False
    ):
        initial = StatepointForm(initial)
        self.pages = list(pages)
        forms = [p.form for p in self.pages]
        start = forms.index(initial) if initial in forms else 0
        self.selector = widgets.ToggleButtons(options=[f.value for f in forms], index=start, description="form:")
        self.stack = widgets.Stack(
            [widgets.HTML(ir_html(p.text, caption=p.caption())) for p in self.pages], selected_index=start
        )
        #: The links between selector and stack: the browser-side ``jslink`` always, plus a
        #: kernel-side ``link`` when ``python_link`` is set (useful in tests and live kernels).
        self.links = [widgets.jslink((self.selector, "index"), (self.stack, "selected_index"))]
        if python_link:
            self.links.append(widgets.link((self.selector, "index"), (self.stack, "selected_index")))
        super().__init__([self.selector, self.stack])

    def __repr__(self) -> str:
        forms = ", ".join(p.form.value for p in self.pages)
        return f"StatepointFormsView(forms=[{forms}], selected={self.selector.value!r})"


def statepoint_forms(
    source: str | Module,
    *,
    filename: str = "<example>",
    opaque: bool = False,
    initial: StatepointForm | str = StatepointForm.MODERN,
    python_link: bool = False,
) -> StatepointFormsView:
    """A :class:`StatepointFormsView` of ``source`` (IR text or a module) in the three forms."""
    return StatepointFormsView(
        form_pages(source, filename=filename, opaque=opaque), initial=initial, python_link=python_link
    )
