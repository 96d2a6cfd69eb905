"""What the browser tests share: Debian's Chromium under Playwright, the text a widget shows, a slider drag."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

CHROMIUM_ARGS = ["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


def chromium_path() -> str | None:
    """$GCTOY_CHROMIUM, else chromium or chromium-browser on the PATH, else None."""
    configured = os.environ.get("GCTOY_CHROMIUM")
    if configured:
        return configured if Path(configured).is_file() else None
    return shutil.which("chromium") or shutil.which("chromium-browser")


# The text a widget shows, without its controls: a slider's readout changes when the slider
# moves even if the link to the pages is broken, so it must not count as a change.
SHOWN_TEXT = """(el) => {
    const copy = el.cloneNode(true);
    copy.querySelectorAll('.widget-slider, .widget-play, .widget-toggle-buttons, .widget-readout')
        .forEach(c => c.remove());
    return copy.textContent;
}"""


def drag_slider(page, output, fraction: float) -> None:
    """Drag the first slider handle of `output` to `fraction` of its track (beyond 1 = the end)."""
    handle = output.locator(".noUi-handle").first
    track = output.locator(".noUi-target").first
    # mid-screen, clear of sticky headers (the mouse only reaches what is visible)
    handle.evaluate("el => el.scrollIntoView({block: 'center'})")
    hbox, tbox = handle.bounding_box(), track.bounding_box()
    y = hbox["y"] + hbox["height"] / 2
    page.mouse.move(hbox["x"] + hbox["width"] / 2, y)
    page.mouse.down()
    page.mouse.move(tbox["x"] + tbox["width"] * fraction, y, steps=8)
    page.mouse.up()


def interact(page, output) -> str:
    """Move the widget in ``output`` (its slider to the end, or its last inactive toggle button); what it
    showed before. The caller waits for the shown text to change."""
    before = output.evaluate(SHOWN_TEXT)
    if output.locator(".noUi-handle").count():
        drag_slider(page, output, 1.5)
    else:
        buttons = output.locator(".widget-toggle-button:not(.mod-active)")
        assert buttons.count() > 0, "the widget has neither a slider nor toggle buttons"
        buttons.last.scroll_into_view_if_needed()
        buttons.last.click()
    return before
