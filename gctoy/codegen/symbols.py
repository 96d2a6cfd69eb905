"""Assembler spellings of IR names: every ``@name`` LLVM accepts becomes a label Keystone cannot misread.

An IR name is written as it is when it is *plain*: letters, digits and ``_``, not starting
with a digit, not a register or operand keyword of Intel syntax (``rax``, ``esp``, ``xmm3``,
``byte``, ``dword``, ``ptr``, ``offset`` ... in any case) and not starting with a prefix
gctoy keeps for its own labels (``__gctoy``, ``__tls``, ``__gcmap``, ``__gcinfo``,
``__LLVM``). Every other name (``@rax``, ``@.str``, ``@meta.node``, ``@"a b"``) is
*mangled*: ``__gctoy_sym_`` followed by the name's UTF-8 bytes with letters and digits kept,
``_`` doubled and every other byte written ``_XX`` (two lower-case hex digits). The mapping
is one-to-one, a mangled name holds no ``.`` (so ``label.bb0``-style internal labels never
collide with it), and :func:`demangle` reverses it.

The image's symbol table names functions and globals by their IR names again
(:func:`ir_symbols`), so the runtime, the stack walkers and the tests look them up as written
in the IR.
"""

from __future__ import annotations

import re

MANGLE_PREFIX = "__gctoy_sym_"
_PLAIN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_RESERVED_PREFIXES = ("__gctoy", "__tls", "__gcmap", "__gcinfo", "__LLVM")
# Registers of every width and class, then the words of Intel operand syntax.
_REGISTER = re.compile(
    r"^(?:[re]?(?:ax|bx|cx|dx|si|di|sp|bp|ip|iz)|[abcd][lh]|(?:si|di|sp|bp)l|r\d+[bwdl]?"
    r"|[cdefgs]s|[xyz]?mm\d+|k\d+|cr\d+|dr\d+|tr\d+|db\d+|st\d*|fp\d+|fpsw|fpcw|bnd\d+|bndcfgu|bndstatus"
    r"|mxcsr|[re]?flags|gdtr|ldtr|idtr|msw|ssp)$",
    re.IGNORECASE,
)
_KEYWORDS = frozenset(
    "byte word dword qword tbyte oword xword fword xmmword ymmword zmmword ptr offset flat short near far "
    "and or xor not shl shr mod eq ne lt le gt ge type length lengthof size sizeof rel dup".split()
)


def is_plain(name: str) -> bool:
    """Whether the IR name can be written as an assembler label unchanged."""
    return (
        bool(_PLAIN.match(name))
        and not _REGISTER.match(name)
        and name.lower() not in _KEYWORDS
        and not name.startswith(_RESERVED_PREFIXES)
    )


def mangle(name: str) -> str:
    """The assembler label of an IR global name (the name itself when it is plain)."""
    if is_plain(name):
        return name
    out = [MANGLE_PREFIX]
    for byte in name.encode("utf-8", "surrogateescape"):
        ch = chr(byte)
        if ch.isascii() and ch.isalnum():
            out.append(ch)
        elif ch == "_":
            out.append("__")
        else:
            out.append(f"_{byte:02x}")
    return "".join(out)


def demangle(label: str) -> str | None:
    """The IR name a mangled label spells (None when ``label`` is not a mangled name)."""
    if not label.startswith(MANGLE_PREFIX):
        return None
    body = label[len(MANGLE_PREFIX) :]
    raw = bytearray()
    i = 0
    while i < len(body):
        ch = body[i]
        if ch != "_":
            if not (ch.isascii() and ch.isalnum()):
                return None
            raw.append(ord(ch))
            i += 1
        elif body[i + 1 : i + 2] == "_":
            raw.append(ord("_"))
            i += 2
        else:
            digits = body[i + 1 : i + 3]
            if len(digits) != 2 or any(c not in "0123456789abcdef" for c in digits):
                return None
            raw.append(int(digits, 16))
            i += 3
    return raw.decode("utf-8", "surrogateescape")


def ir_symbols(symbols: dict[str, int], module=None) -> dict[str, int]:
    """An image's symbol table with each mangled function or global label renamed to its IR name.

    A CodegenError when an IR name spells one of gctoy's own labels (``@"main.bb0"`` next
    to a ``@main``): the table could not tell the two apart (at that global's or function's
    definition when ``module`` is given).
    """
    from .codegen_error import CodegenError, located

    out = {label: address for label, address in symbols.items() if demangle(label) is None}
    for label, address in symbols.items():
        name = demangle(label)
        if name is None:
            continue
        if name in out:
            error = CodegenError(f"@{_quoted(name)} has the name of a label gctoy makes for the code; rename it")
            raise located(error, module and (module.get_global(name) or module.get_function(name)))
        out[name] = address
    return dict(sorted(out.items(), key=lambda kv: (kv[1], kv[0])))


def with_ir_names(image, natives: tuple[str, ...], module=None):
    """The image with IR names in its symbol table and its natives (assembled under their labels);
    ``module``: the IR it was compiled from, for the location of a name clash."""
    from dataclasses import replace

    return replace(image, symbols=ir_symbols(image.symbols, module), natives=tuple(natives))


def _quoted(name: str) -> str:
    from ..ir.names import quote_name

    return quote_name(name)


__all__ = ["MANGLE_PREFIX", "demangle", "ir_symbols", "is_plain", "mangle", "with_ir_names"]
