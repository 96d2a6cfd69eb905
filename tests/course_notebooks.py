"""Helpers for the book's course tests: the instructor chapters, and cells built like the book's."""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

from gctoy.course import Chapter, chapters

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"

#: the chapters with a lab, and the gctoy.labs module each one grades with
LAB_CHAPTERS = {
    "03": "gctoy.labs.base_pointers",
    "04": "gctoy.labs.liveness",
    "07": "gctoy.labs.stackmap_parser",
    "09": "gctoy.labs.cheney",
    "11": "gctoy.labs.visit_gc_roots",
    "12": "gctoy.labs.write_barrier",
    "13": "gctoy.labs.codecs",
    "15": "gctoy.labs.ebp_ptrtab",
}


def book() -> list[Chapter]:
    return chapters(NOTEBOOKS)


def _cell_id() -> str:
    return secrets.token_hex(4)


def code_cell(source: str, **metadata: Any) -> dict[str, Any]:
    return {"cell_type": "code", "id": _cell_id(), "execution_count": None, "metadata": metadata, "outputs": [],
            "source": source}


def markdown_cell(source: str) -> dict[str, Any]:
    return {"cell_type": "markdown", "id": _cell_id(), "metadata": {}, "source": source}


def notebook(cells: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "cells": cells,
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
                     "language_info": {"name": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
