"""Parsing attributes (``nonnull``, ``align 8``, ``"gc-leaf-function"``, ``#0``), calling conventions
and the metadata the IR subset carries through as text (``!0``, ``!{...}``, ``!DILocation(...)``).
"""

from __future__ import annotations

from .keywords import CC_NAMES, PAREN_ATTRIBUTES, PLAIN_ATTRIBUTES, TYPE_ATTRIBUTES, VALUE_WORDS
from .names import unescape
from .type_parser import TypeParser
from .values import Attribute


class AttributeParser(TypeParser):
    """Attributes, calling conventions and metadata references (over the type parser)."""

    # -- attributes ------------------------------------------------------------------
    def attribute(self, allow_group: bool = True) -> Attribute | None:
        """One attribute, or None when the next token starts none (a group ``#N`` only if ``allow_group``)."""
        tok = self.peek()
        kind, text = tok[0], tok[1]
        if kind == "ATTRGRP" and allow_group:
            self.next()
            return Attribute(text[1:], style="group")
        if kind == "STRING":
            self.next()
            key = unescape(text[1:-1]).decode("utf-8", "surrogateescape")
            if self.at("=") and self.peek(1)[0] == "STRING":
                self.next()
                return Attribute(key, self.string(), style="string")
            return Attribute(key, style="string")
        if kind != "WORD":
            return None
        if text == "align" and self.peek(1)[0] == "INT":
            self.next()
            return Attribute("align", self.alignment(), style="space")
        if text == "alignstack" and self.peek(1)[1] == "=" and not allow_group:  # inside a group
            self.skip(2)
            return Attribute("alignstack", self.alignment(), style="paren")
        if text in PAREN_ATTRIBUTES and self.peek(1)[1] == "(":
            self.next()
            self.expect("(")
            if text in TYPE_ATTRIBUTES:
                a = Attribute(text, type=self.type_(), style="paren")
            else:
                start = self.peek()[2]
                end = start
                depth = 0
                while depth or not self.at(")"):
                    t = self.next()
                    if t[0] == "EOF":
                        raise self.err("expected ')'")
                    if t[0] == "PUNCT" and t[1] in "()":
                        depth += 1 if t[1] == "(" else -1
                    end = t[2] + len(t[1])
                raw = self.src.text[start:end]
                a = Attribute(text, int(raw) if raw.lstrip("-").isdigit() else raw, style="paren")
            self.expect(")")
            return a
        if text in PLAIN_ATTRIBUTES:
            self.next()
            return Attribute(text)
        return None

    def attributes(self) -> tuple[Attribute, ...]:
        """Function attributes (attribute groups ``#N`` included), as many as follow."""
        out: list[Attribute] = []
        while True:
            a = self.attribute()
            if a is None:
                return tuple(out)
            out.append(a)

    def param_attributes(self) -> tuple[Attribute, ...]:
        """A parameter's or return value's attributes, up to its value or name."""
        kind = self.toks[self.i][0]
        if kind != "WORD" and kind != "STRING":  # the common case: a value or a name, no attribute
            return ()
        out: list[Attribute] = []
        while True:
            tok = self.peek()
            if tok[0] == "WORD" and tok[1] in VALUE_WORDS:
                return tuple(out)
            if tok[0] == "ATTRGRP":
                return tuple(out)
            a = self.attribute(allow_group=False)
            if a is None:
                return tuple(out)
            out.append(a)

    def metadata_attachment(self) -> tuple[str, str]:
        """``!kind !N`` -> (kind, reference text)."""
        k = self.next()[1]
        start = self.peek()[2]
        end = self.skip_metadata()
        return k[1:], self.src.text[start:end]

    def skip_metadata(self) -> int:
        """Skip one metadata value (``!{...}``, ``!0``, ``!"s"``, ``!DIx(...)``); return its end offset."""
        tok = self.next()
        if tok[1] == "!" and self.at("{"):
            return self.skip_balanced("{", "}")
        if tok[0] == "METAVAR" and self.at("("):
            return self.skip_balanced("(", ")")
        if tok[0] == "METAVAR":
            self.check_metadata_id(tok)
        if tok[0] in ("METAVAR", "MDSTRING"):
            return tok[2] + len(tok[1])
        raise self.err("expected metadata", tok[2])

    def skip_balanced(self, open_: str, close: str) -> int:
        """Skip to the ``close`` that balances the current ``open_``; return the offset after it."""
        depth = 0
        while True:
            tok = self.next()
            if tok[0] == "EOF":
                raise self.err(f"expected '{close}'", tok[2])
            if tok[0] == "METAVAR":
                self.check_metadata_id(tok)
            if tok[1] == open_ and tok[0] == "PUNCT":
                depth += 1
            elif tok[1] == close and tok[0] == "PUNCT":
                depth -= 1
                if depth == 0:
                    return tok[2] + 1

    def calling_convention(self) -> str | None:
        """The convention as LLVM prints it: its name where it has one, ``ccN`` otherwise, None for C."""
        t = self.next()[1]
        if t == "cc" or (t.startswith("cc") and t[2:].isdigit()):
            number = self.int_literal("calling convention number") if t == "cc" else int(t[2:])
            t = CC_NAMES.get(str(number), f"cc{number}")
        return None if t == "ccc" else t
