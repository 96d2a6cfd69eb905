"""Tokens of LLVM's textual IR.

One compiled regular expression splits the text, a batch of tokens at a time (the
parser asks for more as it goes); a token is a tuple ``(kind, text, offset)`` and
line/column are computed from the offset when needed.
"""

from __future__ import annotations

import re
from array import array

from ..errors import IRParseError

# Possessive repeats (``*+``, ``++``) where giving characters back could never lead to a match:
# they spare the matcher retrying every shorter name before it tries the next alternative.
_NAME = r'(?:[-a-zA-Z$._][-a-zA-Z$._0-9]*+|[0-9]++|"[^"\n]*+")'
_ADDRSPACE = r"addrspace[ \t]*\([ \t]*[0-9]+[ \t]*\)"
_POINTER_SUFFIX = r"(?:[ \t]+" + _ADDRSPACE + r")?[ \t]*\*+"
#: A pointer type written on one line, read as one token (``i8 addrspace(1)*``, ``%T**``,
#: ``ptr addrspace(1)``): most types of a typed-pointer module are such pointers, and the
#: type parser reads each spelling once (see ``TypeParser.spelled_pointer``).  ``ptr`` followed
#: by ``*`` and pointers to ``void``/``label``/``token``/``metadata`` stay separate tokens, so
#: their errors point where they always did.
POINTER_TYPES = [
    r"i[0-9]++" + _POINTER_SUFFIX,
    "%" + _NAME + _POINTER_SUFFIX,
    *(word + _POINTER_SUFFIX for word in ("half", "bfloat", "float", "double", "x86_fp80", "fp128")),
    r"ptr[ \t]+" + _ADDRSPACE + r"(?!\s*\*)",
]
# Order matters: the first alternative that matches wins.  No token holds a newline.  Punctuation,
# a third of all tokens, comes first: no other kind begins with these characters ('!' does, so it
# stays with the rest of the punctuation at the end).  Every alternative begins with a character
# or a set of characters (a kind that may begin in several ways has one alternative per way), so
# the matcher rejects it at the first character instead of entering it.
_SPEC = [
    ("PUNCT", r"[()\[\]{}<>,=*:|]"),
    ("COMMENT", r";[^\n]*"),
    *(("PTRTYPE", pat) for pat in POINTER_TYPES),
    ("LABELSTR", r'"[^"\n]*"(?=:)'),
    ("LOCAL", "%" + _NAME),
    ("GLOBAL", "@" + _NAME),
    ("MDSTRING", r'!"[^"\n]*"'),
    ("METAVAR", r"![-a-zA-Z$._0-9]+"),
    ("ATTRGRP", r"#[0-9]+"),
    ("CSTRING", r'c"[^"\n]*"'),
    ("STRING", r'"[^"\n]*"'),
    ("HEXFLOAT", r"0x[KLMHR]?[0-9A-Fa-f]+"),
    ("FLOAT", r"[0-9]++\.[0-9]*(?:[eE][-+]?[0-9]+)?"),
    ("FLOAT", r"[-+][0-9]++\.[0-9]*(?:[eE][-+]?[0-9]+)?"),
    ("LABEL", r"[-a-zA-Z$._0-9]++:"),
    ("INT", r"[0-9]+"),
    ("INT", r"-[0-9]+"),
    ("INTTYPE", r"i[0-9]+\b"),
    ("WORD", r"[a-zA-Z_][a-zA-Z_0-9.]*"),
    ("ELLIPSIS", r"\.\.\."),
    ("PUNCT", r"!"),
    ("BAD", r"\S"),
]
# Each alternative is followed by an empty group: ``lastindex`` names the kind, while every
# alternative still begins with its own characters, which lets the matcher reject it at the
# first character.  The blanks between tokens match nothing and are skipped by the search.
_MASTER = re.compile("|".join(f"(?:{pat})()" for _, pat in _SPEC))
#: ``lastindex`` -> kind (every match closes one of the empty groups, so lastindex is never None)
_KINDS: dict[int | None, str] = {k: name for k, (name, _) in enumerate(_SPEC, 1)}
#: the same tokens with pointer types split into their parts
_PARTS = re.compile("|".join(f"(?:{pat})()" for name, pat in _SPEC if name != "PTRTYPE"))
_PART_KINDS: dict[int | None, str] = {
    k: name for k, name in enumerate((name for name, _ in _SPEC if name != "PTRTYPE"), 1)
}


def pointer_type_parts(tok: tuple) -> list[tuple]:
    """The tokens a ``PTRTYPE`` token is made of (``i8``, ``addrspace``, ``(``, ``1``, ``)``, ``*``)."""
    text, base = tok[1], tok[2]
    parts = []
    for m in _PARTS.finditer(text):
        parts.append((_PART_KINDS[m.lastindex], m.group(), base + m.start()))
    return parts


# Comments, strings and names are skipped whole, so only a type's own ``ptr`` or ``*`` matches.
_POINTER_SPELLING = re.compile(r';[^\n]*|c?"[^"\n]*"|[%@!#]?[-a-zA-Z$._0-9]+:?|\*')


def first_pointer_spelling(text: str) -> str | None:
    """``"ptr"`` or ``"*"``: how the text spells its first pointer type (None: it has none)."""
    for m in _POINTER_SPELLING.finditer(text):
        word = m.group()
        if word == "ptr" or word == "*":
            return word
    return None


def describe_char(ch: str) -> str:
    """A character as an error message shows it: ``'$'`` when printable, else ``U+0000``."""
    return f"'{ch}'" if ch.isprintable() else f"U+{ord(ch):04X}"


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
    """The text being parsed, with offset -> (line, column) lookups.

    Lookups count newlines from the previous lookup, forwards or backwards (the parser asks in
    nearly increasing order), so no table of line starts is kept: memory stays proportional to the
    text alone, and time to the distance between lookups.
    """

    def __init__(self, text: str, filename: str = "<input>"):
        self.text = text
        self.filename = filename
        self._last = (0, 1, 0)  # (offset, line, offset of that line's start)

    def position(self, offset: int) -> tuple[int, int]:
        """1-based (line, column) of an offset."""
        text = self.text
        last, line, start = self._last
        if offset < last:  # back a little (a function's own position, after its parameters'): count back
            line -= text.count("\n", offset, last)
            start = text.rfind("\n", 0, offset) + 1
        else:
            newlines = text.count("\n", last, offset)
            if newlines:
                line += newlines
                start = text.rfind("\n", last, offset) + 1
        self._last = (offset, line, start)
        return line, offset - start + 1

    def error(self, offset: int, message: str) -> IRParseError:
        """An :class:`IRParseError` pointing at ``offset``."""
        line, col = self.position(offset)
        return IRParseError(message, self.filename, line, col)


class CommentQueue:
    """Comments waiting to be attached, as ``(text, offset, own_line)`` items.

    They are kept as offsets in arrays (17 bytes each) and sliced from the text when read,
    so that a file of many short comment lines does not cost a Python object per line.
    """

    def __init__(self, text: str):
        self._text = text
        self._starts = array("q")
        self._ends = array("q")
        self._own = bytearray()

    def add(self, start: int, end: int, own_line: bool) -> None:
        """Queue the comment ``text[start:end]``."""
        self._starts.append(start)
        self._ends.append(end)
        self._own.append(own_line)

    def __len__(self) -> int:
        return len(self._starts)

    def __getitem__(self, k: int) -> tuple[str, int, bool]:
        start = self._starts[k]
        return self._text[start : self._ends[k]], start, bool(self._own[k])

    def __delitem__(self, k: slice) -> None:
        del self._starts[k]
        del self._ends[k]
        del self._own[k]


class Lexer:
    """Splits the text into tokens on demand, a batch at a time, so that only a window of
    tokens is held in memory; comments are collected beside the tokens.

    Each comment is ``(text, offset, own_line)`` where ``own_line`` says whether it stood
    alone on its line.  After the last token come several ``EOF`` tokens.
    """

    def __init__(self, src: SourceText):
        self.src = src
        self._matches = _MASTER.finditer(src.text)
        self._last_offset: int | None = None
        self.done = False

    def fill(self, tokens: list, comments: CommentQueue, count: int = 4096) -> None:
        """Append up to ``count`` more tokens (and the comments among them) to the lists."""
        if self.done:
            return
        text = self.src.text
        append = tokens.append
        kinds = _KINDS
        last = self._last_offset
        for m in self._matches:
            kind = kinds[m.lastindex]
            start = m.start()
            if kind == "COMMENT":
                # tokens hold no newline, so a comment is alone on its line when a newline
                # follows the start of the last token
                comments.add(start, m.end(), last is None or text.find("\n", last, start) >= 0)
                continue
            if kind == "BAD":
                value = m.group()
                if value == '"':
                    raise self.src.error(start, "unterminated string constant")
                raise self.src.error(start, f"unexpected character {describe_char(value)}")
            append((kind, m.group(), start))
            last = start
            count -= 1
            if count <= 0:
                self._last_offset = last
                return
        self._last_offset = last
        self.done = True
        eof = ("EOF", "", len(text))
        tokens.extend([eof] * 16)
