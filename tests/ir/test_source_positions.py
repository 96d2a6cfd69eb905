"""Offsets become (line, column) without a table of line starts: each lookup counts newlines from the
previous one, forwards or backwards. Checked against a count from the start of the text, and the work
(characters the counts scan) checked to stay proportional to the text while a module is parsed."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from gctoy.ir import parse_module
from gctoy.ir.lexer import SourceText


def from_the_start(text: str, offset: int) -> tuple[int, int]:
    return text.count("\n", 0, offset) + 1, offset - (text.rfind("\n", 0, offset) + 1) + 1


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="ab\n", max_size=300), st.lists(st.floats(0, 1), min_size=1, max_size=40))
def test_every_lookup_equals_a_count_from_the_start(text, fractions):
    src = SourceText(text)
    for f in fractions:
        offset = round(f * len(text))
        assert src.position(offset) == from_the_start(text, offset)


class CountingText(str):
    """A text that adds up how many characters its newline counts scan."""

    scanned = 0

    def count(self, sub, start=None, end=None):  # type: ignore[override]
        CountingText.scanned += (len(self) if end is None else end) - (start or 0)
        return super().count(sub, start, end)


def test_parsing_a_module_scans_its_text_a_bounded_number_of_times():
    """Functions are located after their parameters: a lookup that went back used to count from line 1."""
    one = "define i64 @f{k}(i64 %a, i64 %b) {{\nentry:\n  %s = add i64 %a, %b\n  ret i64 %s\n}}\n\n"
    text = CountingText("".join(one.format(k=k) for k in range(400)))
    CountingText.scanned = 0
    module = parse_module(text, "many.ll")
    assert module.get_function("f399").loc == (400 * 6 - 5, 1)
    assert CountingText.scanned <= 3 * len(text), CountingText.scanned / len(text)
