"""The code generators' error, and the helpers that give it the ``file:line:col`` of what it is about."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from ..errors import GCToyError, VerifyError
from ..ir.statepoint import source_location
from ..ir.values import Argument, GlobalValue


class CodegenError(GCToyError):
    """IR that the x86-64 code generator cannot lower (an unsupported type or instruction)."""


class LocatedCodegenError(CodegenError, VerifyError):
    """A CodegenError that knows the ``file:line:col`` of the instruction it is about."""


def where(thing) -> str | None:
    """``file:line:col`` of a parsed instruction, function argument, function or global (None if unknown)."""
    if isinstance(thing, (Argument, GlobalValue)):
        loc = thing.loc
        owner = thing.parent if isinstance(thing, Argument) else thing
        module = getattr(owner, "module", None) if owner is not None else None
        if not loc:
            return None
        return f"{getattr(module, 'filename', None) or '<input>'}:{loc[0]}:{loc[1]}"
    return source_location(thing)


def located(error: CodegenError, inst) -> CodegenError:
    """``error`` with the source location of ``inst`` (an instruction, argument, function or global)
    attached; unchanged if it has one or none is known."""
    loc = where(inst) if inst is not None else None
    if isinstance(error, VerifyError) or not loc:
        return error
    return LocatedCodegenError(str(error), loc)


@contextmanager
def locating(thing) -> Iterator[None]:
    """Give a CodegenError raised inside the block the location of ``thing`` (see `located`)."""
    try:
        yield
    except CodegenError as e:
        raise located(e, thing) from None


__all__ = ["CodegenError", "LocatedCodegenError", "located", "locating", "where"]
