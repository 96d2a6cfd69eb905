"""Checks of a module against the guest ABI before it is compiled for (or run under) gctoy's runtime.

* Every *declaration* of a runtime function (``gc_alloc``, ``do_safepoint``, ``gc_collect``,
  ``print_i64``) must have the runtime's signature (``NATIVE_SIGNATURES`` of run32.py, the
  same on both targets): a mismatched declaration would pass arguments the native does not
  read, or read a result it does not give. ``gc_alloc`` may return a pointer of any type.
  A module that *defines* one of these names calls its own function instead; nothing is checked.
* The entry function that ``gctoy run`` calls (``@main``, or ``--entry F``) must be defined
  with the type ``i64 ()``: no parameters (the runtime passes none), not varargs, an ``i64``
  result (printed as ``result: N``, a signed 64-bit number on both targets).

Errors name the declaration's line when the module's source text is given.
"""

from __future__ import annotations

import re

from ..errors import VerifyError
from ..ir.module import Module
from ..ir.names import quote_name
from ..ir.types import VOID, FunctionType, IntType, PointerType
from ..ir.values import Function
from .run import RUNTIME_ENTRIES
from .run32 import NATIVE_SIGNATURES

#: the only entry signature the runtimes call
ENTRY_TYPE = FunctionType(IntType(64), ())


class GuestABIError(VerifyError):
    """A module that does not fit the guest ABI; ``location`` is ``file:line:col`` when known."""


def function_line(text: str | None, filename: str, name: str) -> str | None:
    """``file:line:col`` of the ``define``/``declare`` of ``@name`` in the source text (None if not found)."""
    if not text:
        return None
    pattern = re.compile(r"^\s*(?:define|declare)\b[^\n]*?(@" + re.escape(quote_name(name)) + r")\s*\(", re.M)
    m = pattern.search(text)
    if m is None:
        return None
    line = text.count("\n", 0, m.start(1)) + 1
    col = m.start(1) - (text.rfind("\n", 0, m.start(1)) + 1) + 1
    return f"{filename}:{line}:{col}"


def _expected(name: str) -> FunctionType:
    params, result = NATIVE_SIGNATURES[name]
    return FunctionType(VOID if result is None else result, tuple(params))


def _fits(ft: FunctionType, want: FunctionType) -> bool:
    if ft.vararg or ft.params != want.params:
        return False
    if isinstance(want.ret, PointerType):
        return isinstance(ft.ret, PointerType)
    return ft.ret == want.ret


def check_runtime_declarations(module: Module, text: str | None = None, filename: str = "<input>") -> None:
    """Raise GuestABIError for the first declaration of a runtime function whose type is not the runtime's."""
    for fn in module.functions:
        if fn.name not in RUNTIME_ENTRIES or not fn.is_declaration:
            continue
        want = _expected(fn.name)
        if not _fits(fn.ftype, want):
            extra = " (any pointer result)" if isinstance(want.ret, PointerType) else ""
            raise GuestABIError(
                f"@{fn.name} is declared as '{fn.ftype.render()}', but the runtime's {fn.name} "
                f"has type '{want.render()}'{extra}",
                function_line(text, filename, fn.name) or filename,
            )


def check_entry(module: Module, entry: str, text: str | None = None, filename: str = "<input>") -> Function:
    """The entry function, defined with type ``i64 ()``; GuestABIError otherwise."""
    fn = next((f for f in module.functions if f.name == entry), None)
    where = function_line(text, filename, entry) or filename
    if fn is None:
        raise GuestABIError(
            f"there is no function @{quote_name(entry)} to run (the entry must be defined "
            f"as 'define i64 @{quote_name(entry)}()')",
            filename,
        )
    if fn.is_declaration:
        raise GuestABIError(f"the entry function @{quote_name(entry)} is only declared; it must be defined", where)
    if fn.ftype != ENTRY_TYPE:
        raise GuestABIError(
            f"the entry function @{quote_name(entry)} has type '{fn.ftype.render()}'; gctoy runs "
            f"an entry of type '{ENTRY_TYPE.render()}' (no parameters, an i64 result)",
            where,
        )
    return fn


__all__ = ["ENTRY_TYPE", "GuestABIError", "check_entry", "check_runtime_declarations", "function_line"]
