"""Spelling of LLVM identifiers: when a name needs quotes and how strings are escaped."""

from __future__ import annotations

import re

_BARE = re.compile(r"^[-a-zA-Z$._][-a-zA-Z$._0-9]*$")


def quote_name(name: str) -> str:
    """``foo`` stays ``foo``; ``a b`` becomes ``"a b"`` (the sigil is added by the caller)."""
    if _BARE.match(name):
        return name
    return '"' + escape_string(name) + '"'


def escape_string(text: str) -> str:
    """Escape a string the way LLVM prints ``c"..."`` and quoted names (``\\22``, ``\\0A``...)."""
    return escape_bytes(text.encode("utf-8", "surrogateescape"))


def escape_bytes(data: bytes) -> str:
    """Escape raw bytes for a ``c"..."`` constant."""
    out = []
    for byte in data:
        ch = chr(byte)
        if 0x20 <= byte < 0x7F and ch not in '"\\':
            out.append(ch)
        else:
            out.append(f"\\{byte:02X}")
    return "".join(out)


def unescape(text: str) -> bytes:
    """Undo LLVM string escapes (``\\HH`` and ``\\\\``) into bytes."""
    out = bytearray()
    i = 0
    raw = text.encode("utf-8", "surrogateescape")
    while i < len(raw):
        b = raw[i]
        if b == 0x5C and i + 1 < len(raw):
            if raw[i + 1] == 0x5C:
                out.append(0x5C)
                i += 2
                continue
            hexpart = raw[i + 1 : i + 3]
            if len(hexpart) == 2 and all(chr(c) in "0123456789abcdefABCDEF" for c in hexpart):
                out.append(int(hexpart, 16))
                i += 3
                continue
        out.append(b)
        i += 1
    return bytes(out)


def is_numbered(name: str | None) -> bool:
    """True for slot names such as ``0`` or ``12`` (which are assigned by position)."""
    return name is not None and name.isdigit()
