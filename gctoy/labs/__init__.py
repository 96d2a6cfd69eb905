"""Labs: the student writes a piece of the pipeline, gctoy plugs it in and runs it.

Each lab is a module here with a ``check(...)`` function that takes the student's function(s),
runs them inside gctoy's real pipeline (under GC stress with the heap verifier where the lab is
about the collector, against LLVM's answers where LLVM is installed and gctoy's own
implementation otherwise) and raises :class:`LabFailure` with a message that teaches when the
student's code is wrong.  The chapter's notebook holds the skeleton (the student's version) and
the reference solution between nbgrader's markers (the instructor's version); ``tests/labs``
proves for each lab that its check fails on the skeleton, passes on the solution and fails with
a useful message on a plausible wrong solution.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from ..ir.values import Function

__all__ = ["LabFailure", "call_student", "LabReport", "parsed_function"]

T = TypeVar("T")


class LabFailure(AssertionError):
    """The student's code does not do what the lab asks; the message says what went wrong and why."""


class LabReport:
    """What a passing lab check did, for the notebook to print (counts, not a bare 'ok')."""

    def __init__(self, lab: str, lines: list[str]):
        self.lab = lab
        self.lines = list(lines)

    def __str__(self) -> str:
        return "\n".join([f"{self.lab}: all checks passed"] + [f"  {line}" for line in self.lines])

    def __repr__(self) -> str:
        return str(self)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(str(self))


def call_student(function: Callable[..., T], what: str, *args: Any, **kwargs: Any) -> T:
    """Call the student's ``function``; a skeleton (NotImplementedError) or a crash becomes a LabFailure."""
    name = getattr(function, "__name__", "your function")
    try:
        return function(*args, **kwargs)
    except NotImplementedError:
        raise LabFailure(
            f"{name} is still the skeleton: replace `raise NotImplementedError()` with your code."
        ) from None
    except LabFailure:
        raise
    except Exception as error:
        raise LabFailure(f"{name} raised {type(error).__name__}: {error}\n  while {what}.") from error


def parsed_function(text: str, name: str) -> Function:
    """The function ``@name`` of a fresh parse of the IR ``text`` (KeyError when the module has none)."""
    from ..ir import parse_module

    fn = parse_module(text).get_function(name)
    if fn is None:
        raise KeyError(f"no function @{name} in the module")
    return fn
