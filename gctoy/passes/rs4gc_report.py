"""RewriteStatepointsForGC's reports on standard error, as LLVM prints them.

``-spp-print-liveset`` lists the GC pointers live across each call, ``-spp-print-liveset-size``
counts them, ``-spp-print-base-pointers`` lists each function's (derived, base) pairs, first
as found and then with the bases that liveness kept alive::

    Live Variables:
     obj i8 addrspace(1)* %obj
    Safepoint For: foo
    Number live values: 1
    Base Pairs (w/o Relocation):
     derived %obj base %obj
    Base Pairs: (w/Relocation)
     derived %obj base %obj
"""

from __future__ import annotations

import sys
from typing import TextIO

from ..ir import instructions as I
from ..ir.printer import print_instruction, print_operand, uses_opaque_pointers
from ..ir.values import Value


def _opaque(call: I.CallBase) -> bool:
    fn = call.function
    module = getattr(fn, "module", None)
    return module is not None and uses_opaque_pointers(module)


def print_live_set(call: I.CallBase, live: list[Value], names: bool, size: bool, out: TextIO = sys.stderr) -> None:
    """The live values at ``call`` (``names``) and their number (``size``)."""
    opaque = _opaque(call)
    if names:
        print("Live Variables:", file=out)
        for v in live:
            text = (
                ("  " + print_instruction(v, opaque=opaque))
                if isinstance(v, I.Instruction)
                else print_operand(v, opaque=opaque)
            )
            print(f" {v.name or ''} {text}", file=out)
    if size:
        callee = call.called_function
        name = callee.name if callee is not None else (getattr(call.callee, "name", None) or "")
        print(f"Safepoint For: {name}", file=out)
        print(f"Number live values: {len(live)}", file=out)


def print_base_pairs(title: str, pairs: list[tuple[Value, Value]], opaque: bool, out: TextIO = sys.stderr) -> None:
    """``title`` and one `` derived %d base %b`` line per pair."""
    print(title, file=out)
    for derived, base in pairs:
        print(
            f" derived {print_operand(derived, opaque=opaque, typed=False)} "
            f"base {print_operand(base, opaque=opaque, typed=False)}",
            file=out,
        )
