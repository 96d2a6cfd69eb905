"""The GC-info explorer widget: one precomputed page per code offset, linked to the slider."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "viz"))

from test_viz_gcinfo import _method_blob  # noqa: E402


def test_explorer_widget_pages_and_links():
    from gctoy.widgets.gcinfo import GCInfoExplorer

    explorer = GCInfoExplorer(_method_blob(), initial=0x14, python_link=True)
    assert explorer.stack.selected_index == 0x14 and len(explorer.stack.children) == 0x31
    explorer.slider.value = 0x10
    assert explorer.stack.selected_index == 0x10
    assert "code offset 0010" in explorer.page_html(0x10)
    assert "0x" not in repr(explorer) and "49 code offsets" in repr(explorer)
