"""The checks behind the book's exercises: each says *why* an answer is wrong, not only that it is.

An exercise in a chapter is three cells (see ``gctoy.course`` for how they are marked for
nbgrader): the question, an answer cell the student fills (``answer_1 = None`` and, in the
instructor's notebook, the solution between nbgrader's markers), and a check cell that calls one
of these functions.  A check raises :class:`WrongAnswer` (an ``AssertionError``, so nbgrader's
autograder counts it as a failed test) with a message that teaches; it returns quietly when the
answer is right.

Two ways to know the right answer without printing it in the student's notebook:

* compute it with gctoy in the check cell (``check_equal(..., expected=live_set(...))``): the
  student who reads the check learns where the answer comes from, which is the point;
* compare a digest (``check_digest``), for answers that are facts rather than computations.
  ``python -m gctoy.exercises digest VALUE`` prints the digest of a Python literal.

``hints`` maps plausible wrong answers to the misunderstanding each one shows.  Values are
compared after :func:`normalize`: a list and a tuple of the same items are the same answer, a
set is compared as a set, strings ignore surrounding blanks and case of hex digits is kept.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = [
    "WrongAnswer",
    "normalize",
    "digest",
    "check_answered",
    "check_equal",
    "check_digest",
    "check_that",
]


class WrongAnswer(AssertionError):
    """An exercise answer is missing or wrong; the message says why."""


def normalize(value: Any) -> Any:
    """A canonical form of an answer: sequences become tuples, sets frozensets, strings stripped."""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (set, frozenset)):
        return frozenset(normalize(v) for v in value)
    if isinstance(value, Mapping):
        return tuple(sorted((normalize(k), normalize(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(normalize(v) for v in value)
    return value


def _canonical_text(value: Any) -> str:
    value = normalize(value)
    if isinstance(value, frozenset):
        return "{" + ", ".join(sorted(_canonical_text(v) for v in value)) + "}"
    if isinstance(value, tuple):
        return "(" + ", ".join(_canonical_text(v) for v in value) + ")"
    return f"{type(value).__name__}:{value!r}"


def digest(value: Any) -> str:
    """The digest that :func:`check_digest` compares: sha256 of the normalized answer, 16 hex digits."""
    return hashlib.sha256(_canonical_text(value).encode()).hexdigest()[:16]


def _describe(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."


def check_answered(name: str, given: Any, kind: type | tuple[type, ...] | None = None) -> None:
    """Fail when the student has not answered yet (``None`` or ``...``) or gave the wrong kind of value."""
    if given is None or given is Ellipsis:
        raise WrongAnswer(f"{name} is still {given!r}: replace it with your answer in the cell above, then run it.")
    if kind is not None and not isinstance(given, kind):
        kinds = kind if isinstance(kind, tuple) else (kind,)
        wanted = " or ".join(k.__name__ for k in kinds)
        raise WrongAnswer(f"{name} should be a {wanted}, not a {type(given).__name__} ({_describe(given)}).")


def _hint_for(given: Any, hints: Mapping[Any, str] | None) -> str | None:
    if not hints:
        return None
    key = normalize(given)
    for wrong, why in hints.items():
        if normalize(wrong) == key:
            return why
    return None


def check_equal(
    name: str,
    given: Any,
    expected: Any,
    *,
    why: str,
    hints: Mapping[Any, str] | None = None,
    kind: type | tuple[type, ...] | None = None,
) -> None:
    """Pass when ``given`` equals ``expected`` (after :func:`normalize`).

    ``why`` is the reasoning that leads to the right answer, shown with any wrong answer that has
    no hint of its own; the message also shows what is missing or extra when both are sets.
    """
    check_answered(name, given, kind)
    if normalize(given) == normalize(expected):
        return
    lines = [f"{name} = {_describe(given)} is not right."]
    hint = _hint_for(given, hints)
    if hint:
        lines.append(hint)
    if isinstance(normalize(given), frozenset) and isinstance(normalize(expected), frozenset):
        missing = normalize(expected) - normalize(given)
        extra = normalize(given) - normalize(expected)
        if missing:
            lines.append(f"It leaves out {len(missing)} item(s) that belong in it.")
        if extra:
            lines.append(f"It has {len(extra)} item(s) that do not belong: {_describe(sorted(map(str, extra)))}.")
    lines.append(why)
    raise WrongAnswer("\n".join(lines))


def check_digest(
    name: str,
    given: Any,
    expected_digest: str,
    *,
    why: str,
    hints: Mapping[Any, str] | None = None,
    kind: type | tuple[type, ...] | None = None,
) -> None:
    """Pass when the digest of ``given`` is ``expected_digest`` (so the check does not print the answer)."""
    check_answered(name, given, kind)
    if digest(given) == expected_digest:
        return
    lines = [f"{name} = {_describe(given)} is not right."]
    hint = _hint_for(given, hints)
    if hint:
        lines.append(hint)
    lines.append(why)
    raise WrongAnswer("\n".join(lines))


def check_that(name: str, given: Any, tests: Iterable[tuple[Callable[[Any], bool], str]]) -> None:
    """Pass when every predicate holds of ``given``; the first that fails gives its message."""
    check_answered(name, given)
    for predicate, message in tests:
        try:
            ok = predicate(given)
        except Exception as error:  # a malformed answer: say what went wrong, as a wrong answer
            raise WrongAnswer(f"{name} = {_describe(given)}: {message} ({type(error).__name__}: {error})") from None
        if not ok:
            raise WrongAnswer(f"{name} = {_describe(given)}: {message}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m gctoy.exercises", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    dig = sub.add_parser("digest", help="print the digest of a Python literal (for check_digest)")
    dig.add_argument("literal")
    args = parser.parse_args(argv)
    print(digest(ast.literal_eval(args.literal)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
