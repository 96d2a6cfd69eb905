"""The book's browser tests share one Chromium: Playwright's sync API runs one event loop per process,
so a second `sync_playwright()` beside a running one fails ("using Playwright Sync API inside the
asyncio loop")."""

from __future__ import annotations

import os

import pytest

from browser_support import CHROMIUM_ARGS, chromium_path
from oracles import CHROMIUM, skip_missing


@pytest.fixture(scope="session")
def browser():
    """Debian's Chromium under Playwright (no `playwright install`), one per test process."""
    from playwright import sync_api  # part of the [test] extra

    executable = chromium_path()
    if executable is None:
        configured = os.environ.get("GCTOY_CHROMIUM")
        if configured:
            skip_missing(CHROMIUM, f"GCTOY_CHROMIUM={configured} is not a file")
        skip_missing(CHROMIUM, "no Chromium found (Debian: apt-get install chromium; or set GCTOY_CHROMIUM)")
    with sync_api.sync_playwright() as playwright:
        instance = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        yield instance
        instance.close()
