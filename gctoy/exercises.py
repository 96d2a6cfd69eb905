"""The checks behind the book's exercises: each says *why* an answer is wrong, not only that it is.

An exercise in a chapter is three cells (see ``gctoy.course`` for how they are marked for
nbgrader): the question, an answer cell the student fills (``answer_1 = None`` and, in the
instructor's notebook, the solution between nbgrader's markers), and a check cell that calls one
of these functions.  A check raises :class:`WrongAnswer` (an ``AssertionError``, so nbgrader's
autograder counts it as a failed test) with a message that teaches; it returns quietly when the
answer is right.

The student's notebook (the release, see ``gctoy.course``) must show neither the right answer
nor a computation that yields it; the check cell still says why a wrong answer is wrong:

* a fact the student works out is compared by digest (``check_digest``): the digest is computed
  once from the instructor's answer (``python -m gctoy.exercises digest VALUE`` prints it) and
  written into the cell as a literal, with the ``hints`` that explain each plausible wrong
  answer.  Answers with parts (a dict, a tuple) can be checked part by part with
  ``check_that`` and predicates such as ``lambda a: digest(("%x", a["%x"])) == "..."``, so each
  wrong part gets its own explanation;
* an answer that is code the student writes is checked by its properties (``check_that`` with
  predicates that compare with literals only, the lab checks of ``gctoy.labs``);
* an answer that cannot be written down once (a measurement that depends on the build) keeps a
  visible check that does not reveal it (``check_answered``), and the exact comparison
  (``check_equal``) goes between nbgrader's ``### BEGIN HIDDEN TESTS`` and ``### END HIDDEN
  TESTS``: ``nbgrader generate_assignment`` leaves it out of the release and ``nbgrader
  autograde`` puts it back.

The gctoy computation that gives each digested answer stays in the instructor's notebook as a
hidden test too (``assert digest(...) == "..."``), so nbval notices when gctoy and the digest
disagree.  :func:`answers_in_sight` is the rule as code; ``tests/book`` applies it to every check
cell of the release.

``hints`` maps plausible wrong answers to the misunderstanding each one shows.  Values are
compared after :func:`normalize`: a list and a tuple of the same items are the same answer, a
set is compared as a set, strings ignore surrounding blanks and case of hex digits is kept.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import re
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
    "answers_in_sight",
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


_CONSTANT_NAME = re.compile(r"^[A-Z][A-Z0-9_]*$")
_LITERAL_MAKERS = ("frozenset", "set", "tuple", "bytes")


def _literal(node: ast.expr) -> bool:
    """A literal, a named constant (``StatepointForm.MIDDLE``), a builtin made of literals (``bytes([0x9C])``)
    or arithmetic on literals (``0x1234 >> 8``): nothing computed from the program's state."""
    if isinstance(node, ast.Attribute) and _CONSTANT_NAME.match(node.attr):
        return True
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _LITERAL_MAKERS:
        return not node.keywords and all(_literal(a) for a in node.args)
    if isinstance(node, ast.BinOp):
        return _literal(node.left) and _literal(node.right)
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, RecursionError):
        return False
    return True


def _call_name(node: ast.Call) -> str:
    func = node.func
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def _argument(node: ast.Call, position: int, keyword: str) -> ast.expr | None:
    if len(node.args) > position:
        return node.args[position]
    return next((k.value for k in node.keywords if k.arg == keyword), None)


def _predicate_problems(predicate: ast.expr) -> list[str]:
    if not isinstance(predicate, ast.Lambda):
        return [f"line {predicate.lineno}: a check_that predicate that is not a lambda may hide a computed answer"]
    problems = []
    for compare in (n for n in ast.walk(predicate.body) if isinstance(n, ast.Compare)):
        if not any(_literal(operand) for operand in [compare.left, *compare.comparators]):
            problems.append(f"line {compare.lineno}: {ast.unparse(compare)} compares with a computed value")
    return problems


def answers_in_sight(source: str) -> list[str]:
    """What in a check cell's visible source shows the expected answer or computes it ([] when nothing does).

    The rule the book's check cells follow, as the student release shows them (hidden tests removed):
    no ``check_equal`` (its ``expected`` is in the cell); ``check_digest`` with a literal digest and
    literal hint keys; ``check_that`` predicates that are lambdas comparing only with literals (or
    digests); no name ``expected...`` assigned.
    """
    problems = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store) and node.id.startswith("expected"):
            problems.append(f"line {node.lineno}: {node.id} holds the expected answer")
        if not isinstance(node, ast.Call):
            continue
        name = _call_name(node)
        if name == "check_equal":
            problems.append(f"line {node.lineno}: check_equal shows its expected value")
        elif name == "check_digest":
            expected = _argument(node, 2, "expected_digest")
            if not (isinstance(expected, ast.Constant) and isinstance(expected.value, str)):
                problems.append(f"line {node.lineno}: the digest is computed in the cell, not written as a literal")
        elif name == "check_that":
            tests = _argument(node, 2, "tests")
            if not isinstance(tests, (ast.List, ast.Tuple)):
                problems.append(f"line {node.lineno}: check_that's predicates are not written in the call")
                continue
            for test in tests.elts:
                predicate = test.elts[0] if isinstance(test, ast.Tuple) and test.elts else test
                problems.extend(_predicate_problems(predicate))
        hints = _argument(node, 99, "hints") if name in ("check_digest", "check_equal") else None
        if isinstance(hints, ast.Dict):
            problems.extend(
                f"line {key.lineno}: the hint key {ast.unparse(key)} is computed, not a literal wrong answer"
                for key in hints.keys
                if key is not None and not _literal(key)
            )
        elif hints is not None:
            problems.append(f"line {node.lineno}: the hints are not written in the call")
    return problems


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
