"""Counting the work gctoy does, in place of timing it: Python line events in gctoy's own files.

The count is deterministic (the same code on the same input gives the same number on any
machine, however busy), so tests can assert how work grows with the input, e.g. that each
doubling of a function at most doubles-and-a-bit the lines executed (quadratic work shows ~4x).
Speed itself is measured by the scripts in bench/.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import gctoy

T = TypeVar("T")
GCTOY_DIR = str(Path(gctoy.__file__).resolve().parent)


def count_lines(fn: Callable[[], T], under: str = GCTOY_DIR) -> tuple[T, int]:
    """``fn()``'s result and how many lines of Python in files under ``under`` it executed."""
    count = 0

    def local(frame: Any, event: str, arg: Any) -> Any:
        nonlocal count
        if event == "line":
            count += 1
        return local

    def calls(frame: Any, event: str, arg: Any) -> Any:
        return local if frame.f_code.co_filename.startswith(under) else None

    previous = sys.gettrace()
    sys.settrace(calls)
    try:
        result = fn()
    finally:
        sys.settrace(previous)
    return result, count


def growth(counts: list[int]) -> list[float]:
    """The factor from each count to the next (for inputs that double in size: ~2 is linear)."""
    return [b / a for a, b in zip(counts, counts[1:])]


#: units added to an input's size when dividing work by it (a few lines run for any input)
SLACK_BYTES = 16


@dataclass
class WorkPerByte:
    """Work per input byte over a sample of a fuzzer's inputs (every ``every``-th one is counted).

    Where the answer can be bigger than the input (a two-byte entry may stand for 64 pushes), the
    caller passes ``output_size``: the work is then divided by input bytes plus output items.
    """

    every: int
    worst: float = 0.0
    worst_input: bytes = b""
    samples: int = 0

    def run(self, index: int, data: bytes, fn: Callable[[], T],
            output_size: Callable[[T], int] = lambda result: 0) -> T:
        """``fn()``, counting its work when ``index`` is a multiple of ``every``."""
        if index % self.every:
            return fn()
        result, lines = count_lines(fn)
        self.samples += 1
        per_byte = lines / (len(data) + output_size(result) + SLACK_BYTES)
        if per_byte > self.worst:
            self.worst, self.worst_input = per_byte, data
        return result

    def describe(self) -> str:
        """The worst sample, for a failure message."""
        return (f"{self.worst:.1f} lines of gctoy per unit of size (of {self.samples} counted inputs) "
                f"on {self.worst_input.hex() or 'the empty input'}")
