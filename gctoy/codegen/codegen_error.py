"""The code generators' error, and the helper that gives it the ``file:line:col`` of an instruction."""

from __future__ import annotations

from ..errors import GCToyError, VerifyError
from ..ir.statepoint import source_location


class CodegenError(GCToyError):
    """IR that the x86-64 code generator cannot lower (an unsupported type or instruction)."""


class LocatedCodegenError(CodegenError, VerifyError):
    """A CodegenError that knows the ``file:line:col`` of the instruction it is about."""


def located(error: CodegenError, inst) -> CodegenError:
    """``error`` with the instruction's source location attached (unchanged if it has one or none is known)."""
    loc = source_location(inst) if inst is not None else None
    if isinstance(error, VerifyError) or not loc:
        return error
    return LocatedCodegenError(str(error), loc)


__all__ = ["CodegenError", "LocatedCodegenError", "located"]
