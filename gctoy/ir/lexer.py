"""Tokens of LLVM's textual IR.

One compiled regular expression splits the whole text; a token is a tuple
``(kind, text, offset)`` and line/column are computed from the offset only
when an error needs them.
"""
from __future__ import annotations

import bisect
import re

from ..errors import IRParseError

# Order matters: the first alternative that matches wins.  Each token swallows the blanks before
# it, so one regex match is one token.
_SPEC = [
    ("COMMENT", r";[^\n]*"),
    ("LABELSTR", r'"[^"\n]*"(?=:)'),
    ("LOCAL", r'%(?:[-a-zA-Z$._][-a-zA-Z$._0-9]*|[0-9]+|"[^"\n]*")'),
    ("GLOBAL", r'@(?:[-a-zA-Z$._][-a-zA-Z$._0-9]*|[0-9]+|"[^"\n]*")'),
    ("MDSTRING", r'!"[^"\n]*"'),
    ("METAVAR", r"![-a-zA-Z$._0-9]+"),
    ("ATTRGRP", r"#[0-9]+"),
    ("CSTRING", r'c"[^"\n]*"'),
    ("STRING", r'"[^"\n]*"'),
    ("HEXFLOAT", r"0x[KLMHR]?[0-9A-Fa-f]+"),
    ("FLOAT", r"[-+]?[0-9]+\.[0-9]*(?:[eE][-+]?[0-9]+)?"),
    ("LABEL", r"[-a-zA-Z$._0-9]+:"),
    ("INT", r"-?[0-9]+"),
    ("INTTYPE", r"i[0-9]+\b"),
    ("WORD", r"[a-zA-Z_][a-zA-Z_0-9.]*"),
    ("ELLIPSIS", r"\.\.\."),
    ("PUNCT", r"[()\[\]{}<>,=*!:|]"),
    ("BAD", r"\S"),
]
_MASTER = re.compile(r"(\s*)(?:" + "|".join(f"({pat})" for _, pat in _SPEC) + ")")
_KINDS = [None, None] + [name for name, _ in _SPEC]


class Token(tuple):
    """``(kind, text, offset)``."""

    __slots__ = ()

    @property
    def kind(self) -> str:
        return self[0]

    @property
    def text(self) -> str:
        return self[1]

    @property
    def offset(self) -> int:
        return self[2]


class SourceText:
    """The text being parsed, with offset -> (line, column) lookups."""

    def __init__(self, text: str, filename: str = "<input>"):
        self.text = text
        self.filename = filename
        self._line_starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def position(self, offset: int) -> tuple[int, int]:
        """1-based (line, column) of an offset."""
        line = bisect.bisect_right(self._line_starts, offset) - 1
        return line + 1, offset - self._line_starts[line] + 1

    def error(self, offset: int, message: str) -> IRParseError:
        """An :class:`IRParseError` pointing at ``offset``."""
        line, col = self.position(offset)
        return IRParseError(message, self.filename, line, col)


def tokenize(src: SourceText) -> tuple[list[tuple[str, str, int]], list[tuple[str, int, bool]]]:
    """Split the text into tokens and comments.

    Returns ``(tokens, comments)``; each comment is ``(text, offset, own_line)``
    where ``own_line`` says whether it stood alone on its line.  The token
    list ends with an ``EOF`` token.
    """
    tokens: list[tuple[str, str, int]] = []
    comments: list[tuple[str, int, bool]] = []
    text = src.text
    append = tokens.append
    kinds = _KINDS
    for m in _MASTER.finditer(text):
        k = m.lastindex
        kind = kinds[k]
        start, end = m.span(k)
        value = text[start:end]
        if kind == "COMMENT":
            own_line = not tokens or "\n" in m.group(1) or "\n" in text[tokens[-1][2]:start]
            comments.append((value, start, own_line))
            continue
        if kind == "BAD":
            if value == '"':
                raise src.error(start, "unterminated string constant")
            raise src.error(start, f"unexpected character {value!r}")
        append((kind, value, start))
    append(("EOF", "", len(text)))
    return tokens, comments
