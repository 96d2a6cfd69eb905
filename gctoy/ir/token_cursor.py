"""The parser's view of the tokens: a window over the lexer's output, and the comments between them.

The token list is a window: the lexer appends batches as the parser nears its end (at least
8 tokens stay ahead of ``i``), and ``release`` drops what was consumed between instructions
and top-level entities, unless a parse is pinned (``pins``) for backtracking.  Memory thus
holds the text and the module being built, not a token object per word of the input.
"""

from __future__ import annotations

from ..errors import IRParseError
from .lexer import CommentQueue, Lexer, SourceText, pointer_type_parts
from .names import unescape

_NO_COMMENTS: list[str] = []  # shared, never modified: most entities have no comments


class TokenCursor:
    """Token and comment access for the parser (mixed into it)."""

    def __init__(self, text: str, filename: str) -> None:
        self.src = SourceText(text, filename)
        self.lexer = Lexer(self.src)
        self.toks: list = []
        self.comments = CommentQueue(text)
        self.lexer.fill(self.toks, self.comments)
        self.i = 0
        self.ci = 0
        self.pins = 0

    def peek(self, k: int = 0):
        """The token ``k`` places ahead."""
        return self.toks[self.i + k]

    def next(self):
        """Consume and return the current token (EOF stays put)."""
        i = self.i
        tok = self.toks[i]
        if tok[0] != "EOF":
            self.i = i + 1
            if i + 9 >= len(self.toks):
                self.lexer.fill(self.toks, self.comments)
        return tok

    def skip(self, n: int) -> None:
        """Step over ``n`` tokens already looked at."""
        self.i += n
        if self.i + 8 >= len(self.toks):
            self.lexer.fill(self.toks, self.comments)

    def release(self) -> None:
        """Forget the tokens and comments already consumed (bounded memory on long inputs)."""
        if self.i > 4096 and not self.pins:
            del self.toks[: self.i]
            self.i = 0
            del self.comments[: self.ci]
            self.ci = 0

    def at(self, text: str) -> bool:
        """True if the current token is ``text``."""
        # keywords and punctuation only: no other token's text can equal them (strings keep
        # their quotes, names their sigils, labels their colon)
        return self.toks[self.i][1] == text

    def accept(self, text: str) -> bool:
        """Consume the current token if it is ``text``."""
        i = self.i
        if self.toks[i][1] == text:
            self.i = i + 1
            if i + 9 >= len(self.toks):
                self.lexer.fill(self.toks, self.comments)
            return True
        return False

    def expect(self, text: str, what: str | None = None):
        """Consume ``text`` or raise an error."""
        if not self.at(text):
            raise self.err(f"expected '{text}'" + (f" {what}" if what else ""))
        return self.next()

    def expect_kind(self, kind: str, what: str | None = None):
        """Consume a token of ``kind`` or raise an error."""
        tok = self.peek()
        if tok[0] != kind:
            if tok[0] == "PTRTYPE":
                self.split_pointer_type()
                return self.expect_kind(kind, what)
            raise self.err(f"expected {what or kind.lower()}")
        return self.next()

    def split_pointer_type(self) -> None:
        """If the current token is a pointer type read as one token (``PTRTYPE``), put its parts in its place.

        Called where something other than a type may stand: a malformed input (``%x*`` as a value)
        then reads token by token as it always did, with the same errors at the same places.
        """
        i = self.i
        if self.toks[i][0] == "PTRTYPE":
            self.toks[i : i + 1] = pointer_type_parts(self.toks[i])

    def err(self, message: str, offset: int | None = None) -> IRParseError:
        """An error at ``offset`` (default: the current token)."""
        if offset is None:
            offset = self.peek()[2]
        return self.src.error(offset, message)

    def string(self) -> str:
        """Consume a string constant and return its unescaped text."""
        tok = self.expect_kind("STRING", "string constant")
        return unescape(tok[1][1:-1]).decode("utf-8", "surrogateescape")

    def leading_comments(self, offset: int) -> list[str]:
        """The comments before ``offset`` not yet attached to anything."""
        if self.ci >= len(self.comments) or self.comments[self.ci][1] >= offset:
            return _NO_COMMENTS
        out = []
        while self.ci < len(self.comments) and self.comments[self.ci][1] < offset:
            out.append(self.comments[self.ci][0])
            self.ci += 1
        return out

    def trailing_comment(self) -> str | None:
        """The comment at the end of the line just parsed, if any."""
        if self.ci < len(self.comments):
            text, off, own_line = self.comments[self.ci]
            if not own_line and off < self.peek()[2]:
                self.ci += 1
                return text
        return None
