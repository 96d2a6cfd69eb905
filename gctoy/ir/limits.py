"""The limits of gctoy's IR reader, and the checks that enforce them while parsing.

Some limits are LLVM's own rules (an alignment is a power of two of at most 2**32, an
address space fits in 24 bits, an array has fewer than 2**64 elements, a vector fewer than
2**32, a metadata id fits in 32 bits); the others keep a hostile input from exhausting
Python rather than the machine:

* ``MAX_NESTING``: types and constants nest at most this deep (``[1 x [1 x ...]]``,
  ``{ { ... } }``, ``i8**...*``, constant expressions inside constant expressions), so that
  every accepted module can be printed, compared and lowered by recursive code;
* ``MAX_INT_DIGITS``: an integer literal has at most this many digits (enough for any
  ``i14000`` value);
* ``MAX_NUMBER_DIGITS``: a numbered name (``%12``, ``#3``) has at most this many digits.
"""

from __future__ import annotations

from .token_cursor import TokenCursor
from .types import ArrayType, FunctionType, PointerType, StructType, Type, VectorType

MAX_NESTING = 128
MAX_INT_DIGITS = 4300
MAX_NUMBER_DIGITS = 10
MAX_ALIGNMENT = 1 << 32
MAX_ADDRSPACE = (1 << 24) - 1
MAX_ARRAY_LENGTH = (1 << 64) - 1
MAX_VECTOR_LENGTH = (1 << 32) - 1
MAX_METADATA_ID = (1 << 32) - 1


def type_depth(ty: Type, stop: int = MAX_NESTING + 1) -> int:
    """How deeply a type nests (``i8`` is 1, ``i8*`` 2); counting stops at ``stop``."""
    depth = 0
    level = [ty]
    while level and depth < stop:
        depth += 1
        nxt: list[Type] = []
        for t in level:
            if isinstance(t, PointerType):
                if t.pointee is not None:
                    nxt.append(t.pointee)
            elif isinstance(t, (ArrayType, VectorType)):
                nxt.append(t.element)
            elif isinstance(t, StructType):
                nxt.extend(t.elements)
            elif isinstance(t, FunctionType):
                nxt.append(t.ret)
                nxt.extend(t.params)
        level = nxt
    return depth


def digits_value(text: str) -> int | None:
    """The value of a decimal literal, or None when it has more than MAX_INT_DIGITS digits."""
    if len(text.lstrip("-+")) > MAX_INT_DIGITS:
        return None
    return int(text)


class LimitChecks(TokenCursor):
    """Parser methods that read numbers and nesting under the limits above (over the token cursor)."""

    depth = 0

    def enter(self, offset: int) -> None:
        """One level deeper into a type or constant; an error past MAX_NESTING."""
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise self.err(
                f"types and constants nest more than {MAX_NESTING} levels deep (gctoy's nesting limit)", offset
            )

    def leave(self) -> None:
        """Back out of one level of nesting."""
        self.depth -= 1

    def check_pointee_depth(self, ty: Type, offset: int) -> None:
        """A pointer to ``ty`` must stay within the nesting limit."""
        if self.depth + type_depth(ty) > MAX_NESTING:
            raise self.err(
                f"types and constants nest more than {MAX_NESTING} levels deep (gctoy's nesting limit)", offset
            )

    def int_value(self, tok) -> int:
        """The value of an INT token; an error when it has too many digits."""
        value = digits_value(tok[1])
        if value is None:
            raise self.err(
                f"integer literal of {len(tok[1].lstrip('-'))} digits is too long "
                f"(gctoy reads at most {MAX_INT_DIGITS} digits)",
                tok[2],
            )
        return value

    def int_literal(self, what: str = "integer") -> int:
        """Consume an integer literal."""
        tok = self.peek()
        if tok[0] != "INT":
            raise self.err(f"expected {what}")
        value = self.int_value(tok)
        self.next()
        return value

    def bounded_int(self, what: str, low: int, high: int, message: str | None = None) -> int:
        """An integer literal in ``low..high``; outside it, ``message`` (or a range message)."""
        tok = self.peek()
        if tok[0] != "INT":
            raise self.err(f"expected {what}")
        text = tok[1]
        value = int(text) if len(text) <= 40 else None
        if value is None or not low <= value <= high:
            raise self.err(message or f"{what} must be between {low} and {high}", tok[2])
        self.next()
        return value

    def alignment(self) -> int:
        """``align N``'s number: a power of two of at most 2**32, as LLVM requires."""
        tok = self.peek()
        if tok[0] != "INT":
            raise self.err("expected alignment")
        text = tok[1]
        value = int(text) if len(text) <= 40 else 0
        if value <= 0 or value & (value - 1):
            raise self.err("alignment is not a power of two", tok[2])
        if value > MAX_ALIGNMENT:
            raise self.err(f"huge alignments are not supported (at most {MAX_ALIGNMENT})", tok[2])
        self.next()
        return value

    def address_space(self) -> int:
        """``addrspace(N)``'s number: LLVM allows 24 bits."""
        return self.bounded_int(
            "address space", 0, MAX_ADDRSPACE, f"invalid address space, must be a 24-bit integer (0 to {MAX_ADDRSPACE})"
        )

    def array_length(self) -> int:
        """``[N x T]``'s N: below 2**64."""
        return self.bounded_int(
            "array length", 0, MAX_ARRAY_LENGTH, f"array length is too large (at most {MAX_ARRAY_LENGTH})"
        )

    def vector_length(self) -> int:
        """``<N x T>``'s N: 1 to 2**32 - 1."""
        tok = self.peek()
        if tok[0] == "INT" and tok[1] == "0":
            raise self.err("zero element vector is illegal", tok[2])
        return self.bounded_int("vector length", 1, MAX_VECTOR_LENGTH, "size too large for vector")

    def check_metadata_id(self, tok) -> None:
        """``!N`` with N beyond 32 bits is an error, as in LLVM."""
        text = tok[1][1:]
        if text.isdigit() and (len(text) > 10 or int(text) > MAX_METADATA_ID):
            raise self.err(
                f"metadata id '!{text[:20]}{'...' if len(text) > 20 else ''}' is too large (expected a 32-bit integer)",
                tok[2],
            )

    def slot_number_too_long(self, name: str) -> bool:
        """True for a numbered name (``%123``) with more digits than any slot can have."""
        return len(name) > MAX_NUMBER_DIGITS
