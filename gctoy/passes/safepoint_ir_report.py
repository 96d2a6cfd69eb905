"""LLVM's own report of the safepoint verifier, for ``-safepoint-ir-verifier-print-only``.

LLVM's ``verify<safepoint-ir>`` with that flag prints, for every function with a body::

    Verifying gc pointers in function: f
    Illegal use of unrelocated value found!        (once per illegal use, in LLVM's order)
    Def:   %p = getelementptr i8, ptr addrspace(1) %base, i64 4
    Use:   %v = load i8, ptr addrspace(1) %p
    No illegal uses found by SafepointIRVerifier in: f      (only when there was none)

and goes on; without the flag the first illegal use stops ``opt``.  An instruction is
printed as LLVM prints a value, with its two-space indent (so ``Def:`` is followed by three
spaces); an argument as its type and name.  gctoy writes the same text, so that a test
written against LLVM's report reads gctoy's.

The ``verify-safepoints`` pass (LLVM's ``verify<safepoint-ir>``) lives here too: it raises on the
uses :func:`gctoy.passes.verify_safepoints.find_unrelocated_uses` finds, or prints this report.
"""

from __future__ import annotations

import sys

from ..errors import VerifyError
from ..ir import instructions as I
from ..ir.module import Module
from ..ir.printer import print_instruction, print_operand, uses_opaque_pointers
from ..ir.values import Function, Value
from .registry import register
from .verify_safepoints import find_unrelocated_uses


def _value_text(v: Value, opaque: bool) -> str:
    if isinstance(v, I.Instruction):
        return "  " + print_instruction(v, opaque=opaque)
    return print_operand(v, opaque=opaque)


def function_report(fn: Function, opaque: bool = False) -> str:
    """LLVM's print-only report for one function with a body (lines end with a newline)."""
    lines = [f"Verifying gc pointers in function: {fn.name}"]
    uses = find_unrelocated_uses(fn)
    for u in uses:
        lines += [
            "Illegal use of unrelocated value found!",
            f"Def: {_value_text(u.value, opaque)}",
            f"Use: {_value_text(u.instruction, opaque)}",
        ]
    if not uses:
        lines.append(f"No illegal uses found by SafepointIRVerifier in: {fn.name}")
    return "\n".join(lines) + "\n"


def module_report(module: Module, opaque: bool | None = None) -> str:
    """The report for every function with a body, in module order (pointers printed as the module writes them)."""
    if opaque is None:
        opaque = uses_opaque_pointers(module)
    return "".join(function_report(fn, opaque) for fn in module.definitions())


__all__ = ["function_report", "module_report"]


@register("verify-safepoints", options=True)
def verify_safepoints(module: Module, options: str | None = None) -> None:
    """Raise VerifyError listing every unrelocated use in the module, one line per use.

    The error's location is the first use; its message holds that use's text and
    then one full ``file:line:col: error: ...`` line for each further use.
    ``verify-safepoints<print-only>`` (LLVM's ``-safepoint-ir-verifier-print-only``)
    writes LLVM's report of every function to standard error instead and never fails.
    """
    if options is not None:
        if options != "print-only":
            raise VerifyError(f"verify-safepoints takes one option, 'print-only' (got '<{options}>')")
        sys.stderr.write(module_report(module))
        return
    found = [u for fn in module.definitions() for u in find_unrelocated_uses(fn)]
    if not found:
        return
    filename = getattr(module, "filename", None) or "<input>"
    lines = []
    for k, u in enumerate(found):
        loc = u.location or f"{filename}: @{u.instruction.function.name}"
        lines.append(u.message if k == 0 else f"{loc}: error: {u.message}")
    first = found[0]
    raise VerifyError("\n".join(lines), first.location or f"{filename}: @{first.instruction.function.name}")


register("verify-safepoint-ir", options=True)(verify_safepoints)  # LLVM's legacy pass name
