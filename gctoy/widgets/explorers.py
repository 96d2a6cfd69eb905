"""Two explorers: a stack-map section field by field (works in the static book), and a CoreCLR method
header builder (needs a running kernel: each change re-encodes the header).

    StackMapExplorer:  IntSlider "field" --jslink--> Stack of precomputed pages (every byte, one field marked)
    HeaderBuilder:     fields (sliders, checkboxes) --Python--> the encoded bytes and what each one says
"""

from __future__ import annotations

import dataclasses

import ipywidgets as widgets

from gctoy.coreclr.header import CURRENT_VERSION, InfoHdr
from gctoy.viz.explorers import header_html, stackmap_pages

__all__ = ["StackMapExplorer", "HeaderBuilder"]


class StackMapExplorer(widgets.VBox):
    """A slider over the fields of a stack-map section; each page marks the field's bytes."""

    def __init__(self, data: bytes, *, initial: int = 0, python_link: bool = False) -> None:
        self.data = bytes(data)
        self.rows, pages = stackmap_pages(self.data)
        last = len(pages) - 1
        start = min(max(initial, 0), last)
        self.slider = widgets.IntSlider(
            value=start,
            min=0,
            max=last,
            description="field",
            continuous_update=True,
            style={"description_width": "initial"},
        )
        self.stack = widgets.Stack([widgets.HTML(p) for p in pages], selected_index=start)
        self.links = [widgets.jslink((self.slider, "value"), (self.stack, "selected_index"))]
        if python_link:
            self.links.append(widgets.link((self.slider, "value"), (self.stack, "selected_index")))
        super().__init__([self.slider, self.stack])

    def find(self, field: str) -> int:
        """The slider position of the first field whose name contains ``field``."""
        return next(i for i, r in enumerate(self.rows) if field in r.field)


#: the fields a reader may change, with their ranges (the rest keep the starting header's values)
NUMBERS = {
    "prolog_size": 255,
    "epilog_size": 255,
    "epilog_count": 4,
    "arg_count": 64,
    "frame_size": 64,
    "untracked_cnt": 64,
    "var_ptr_table_size": 64,
}
FLAGS = (
    "epilog_at_end",
    "ebp_frame",
    "ebp_saved",
    "ebx_saved",
    "esi_saved",
    "edi_saved",
    "interruptible",
    "double_align",
    "security",
    "handlers",
    "localloc",
    "varargs",
)


class HeaderBuilder(widgets.VBox):
    """Change a field of an InfoHdr and see the shortcut row and fixup bytes CoreCLR writes for it."""

    def __init__(self, header: InfoHdr | None = None, *, version: int = CURRENT_VERSION) -> None:
        self.version = version
        self.header = header or InfoHdr()
        self.numbers = {
            name: widgets.IntSlider(
                value=getattr(self.header, name),
                min=0,
                max=top,
                description=name,
                style={"description_width": "140px"},
                layout=widgets.Layout(width="360px"),
            )
            for name, top in NUMBERS.items()
        }
        self.flags = {
            name: widgets.Checkbox(
                value=getattr(self.header, name), description=name, indent=False, layout=widgets.Layout(width="150px")
            )
            for name in FLAGS
        }
        self.out = widgets.HTML(header_html(self.header, version))
        note = widgets.HTML(
            "<i>Changing a field needs a running kernel; the static book shows the starting header.</i>"
        )
        for w in [*self.numbers.values(), *self.flags.values()]:
            w.observe(self._changed, names="value")
        super().__init__(
            [
                note,
                widgets.HBox(
                    [
                        widgets.VBox(list(self.numbers.values())),
                        widgets.HBox(
                            list(self.flags.values()), layout=widgets.Layout(flex_flow="row wrap", width="480px")
                        ),
                    ]
                ),
                self.out,
            ]
        )

    def _changed(self, _change=None) -> None:
        values = {name: w.value for name, w in self.numbers.items()}
        values.update({name: w.value for name, w in self.flags.items()})
        self.header = dataclasses.replace(self.header, **values)
        self.out.value = header_html(self.header, self.version)
