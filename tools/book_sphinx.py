"""A Sphinx extension for the HTML book: each script goes into a page once.

sphinx-thebe adds its inline configuration script (``const THEBE_JS_URL = ...``) every time Sphinx
reads the sources, and Jupyter Book's build reads them more than once; a page then declares the same
``const`` twice and the browser reports "Identifier 'THEBE_JS_URL' has already been declared". Sphinx
removes repeated script *files* but not repeated inline scripts. ``book/_config.yml`` loads this
module (``sphinx: local_extensions``); it drops every script that repeats an earlier one on the page.
"""

from __future__ import annotations

from typing import Any

__all__ = ["unique_scripts", "setup"]


def _key(script: Any) -> tuple:
    """What makes two scripts the same: the file (an inline script has None or "") and the attributes."""
    attributes = getattr(script, "attributes", {}) or {}
    return (getattr(script, "filename", str(script)) or "", tuple(sorted(attributes.items())))


def unique_scripts(scripts: list[Any]) -> list[Any]:
    """``scripts`` without the ones equal (same file or body, same attributes) to an earlier one."""
    seen: set[tuple] = set()
    kept = []
    for script in scripts:
        key = _key(script)
        if key not in seen:
            seen.add(key)
            kept.append(script)
    return kept


def _on_page(app, pagename, templatename, context, doctree) -> None:
    if "script_files" in context:
        context["script_files"][:] = unique_scripts(list(context["script_files"]))


def setup(app) -> dict[str, Any]:
    app.connect("html-page-context", _on_page, priority=900)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
