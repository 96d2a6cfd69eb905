"""The lexer reads a one-line pointer type (``i8 addrspace(1)*``, ``%T**``, ``ptr addrspace(1)``) as
one ``PTRTYPE`` token, and the type parser keeps the type of each spelling.  That is a shortcut
only: every input must read exactly as it does when the same pointer is a run of separate tokens
(same module, or the same error at the same line and column).

The reference reading is the parser with the lexer's pattern swapped for the one without
``PTRTYPE`` (``lexer._PARTS``).  The inputs are the IR corpora, seeded mutations of them around
pointer types, and hand-written cases for every error a pointer type can raise.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from random_ir import module_of_lines

from gctoy.errors import IRParseError
from gctoy.ir import lexer, parse_module, print_module
from gctoy.ir.limits import MAX_NESTING
from gctoy.ir.printer import uses_opaque_pointers

HERE = Path(__file__).resolve().parent
CORPUS = sorted(p for d in ("corpus", "corpus_opaque", "corpus_legacy", "seed_modern") for p in (HERE / d).glob("*.ll"))


def reading(text: str) -> str:
    """What parsing ``text`` gives: the printed module, or the error with its position."""
    try:
        module = parse_module(text, "t.ll")
    except IRParseError as e:
        return f"error: {e}"
    return print_module(module, opaque=uses_opaque_pointers(module))


def reading_without_fused_pointers(text: str, monkeypatch: pytest.MonkeyPatch) -> str:
    with monkeypatch.context() as m:
        m.setattr(lexer, "_MASTER", lexer._PARTS)
        m.setattr(lexer, "_KINDS", lexer._PART_KINDS)
        return reading(text)


def tokens(text: str) -> list[tuple[str, str, int]]:
    src = lexer.SourceText(text)
    lx = lexer.Lexer(src)
    out: list = []
    while not lx.done:
        lx.fill(out, lexer.CommentQueue(text))
    return [t for t in out if t[0] != "EOF"]


def test_the_reference_reading_really_splits_pointer_types(monkeypatch):
    text = "@g = global i8 addrspace(1)* null\n"
    assert [t[0] for t in tokens(text)][:4] == ["GLOBAL", "PUNCT", "WORD", "PTRTYPE"]
    with monkeypatch.context() as m:
        m.setattr(lexer, "_MASTER", lexer._PARTS)
        m.setattr(lexer, "_KINDS", lexer._PART_KINDS)
        split = [t[1] for t in tokens(text)]
    assert split == ["@g", "=", "global", "i8", "addrspace", "(", "1", ")", "*", "null"]


@pytest.mark.parametrize(
    "text, kinds",
    [
        ("i8 addrspace(1)*", ["PTRTYPE"]),
        ("%struct.S0**", ["PTRTYPE"]),
        ('%"a b"*', ["PTRTYPE"]),
        ("double *", ["PTRTYPE"]),
        ("ptr addrspace(1)", ["PTRTYPE"]),
        # not fused: these keep their own tokens, and their own error positions
        ("ptr addrspace(1)*", ["WORD", "WORD", "PUNCT", "INT", "PUNCT", "PUNCT"]),
        ("ptr addrspace(1)\n  *", ["WORD", "WORD", "PUNCT", "INT", "PUNCT", "PUNCT"]),
        ("void*", ["WORD", "PUNCT"]),
        ("i8addrspace(1)*", ["WORD", "PUNCT", "INT", "PUNCT", "PUNCT"]),
        ("i8\n*", ["INTTYPE", "PUNCT"]),
        ("ptr", ["WORD"]),
        ("%x", ["LOCAL"]),
    ],
)
def test_which_spellings_are_one_token(text, kinds):
    assert [t[0] for t in tokens(text)] == kinds


ERROR_CASES = [
    "@g = global ptr* null\n",
    "@g = global ptr addrspace(1)* null\n",
    "@g = global ptr addrspace(1)\n * null\n",
    "@g = global ptr addrspace(1) ; c\n * null\n",
    "@g = global void* null\n",
    "@g = global label* null\n",
    "@g = global i0* null\n",
    "@g = global i99999999* null\n",
    "@g = global i8 addrspace(16777216)* null\n",
    "@g = global i8 addrspace(99999999999999999999)* null\n",
    "@g = global i8* null\n@h = global ptr addrspace(1) null\n",
    "%T = type i32\n@g = global %T* null\n",
    "@g = global %T* null\n%T = type i32\n",
    "@g = global %U* null\n",
    "%T* = type i32\n",
    "define void @f(i8* %p) {\n  %q* = getelementptr i8, i8* %p, i64 1\n  ret void\n}\n",
    "define void @f(i8* %p) {\n  %q = getelementptr i8, i8* %p*, i64 1\n  ret void\n}\n",
    "define void @f(i8* %p) {\n  call void %p*()\n  ret void\n}\n",
    "define void @f(i8* %p) {\n  br label %bb*\nbb:\n  ret void\n}\n",
    "@g = global i8* %x*\n",
    "define void @f(i8 addrspace(1)* %p) {\n  %q = load i32, i8 addrspace(1)* %p\n  ret void\n}\n",
    "define void @f(i8 addrspace(1)* %p) {\n  store i8 addrspace(1)* %p, i8 addrspace(2)* null\n  ret void\n}\n",
    "define void @f() {\n  %a = alloca i8*\n  %b = load i8**, i8** %a\n  ret void\n}\n",
    # the nesting limit, reached by stars inside nested structs: the cached type must not skip it
    "@g = global " + "{" * (MAX_NESTING - 3) + " i8" + "*" * 8 + " " + "}" * (MAX_NESTING - 3) + " zeroinitializer\n",
    "@a = global i8"
    + "*" * 6
    + " null\n@g = global "
    + "{" * (MAX_NESTING - 3)
    + " i8"
    + "*" * 6
    + " "
    + "}" * (MAX_NESTING - 3)
    + " zeroinitializer\n",
]


@pytest.mark.parametrize("text", ERROR_CASES)
def test_pointer_type_errors_are_the_same_with_and_without_fusion(text, monkeypatch):
    fused = reading(text)
    assert fused == reading_without_fused_pointers(text, monkeypatch)


def test_the_error_cases_are_errors_where_llvm_refuses_them(monkeypatch):
    outcomes = [reading(t) for t in ERROR_CASES]
    # every case above but the nesting one that stays under the limit, and the typed-to-opaque
    # switch (re-read with opaque pointers), is refused
    assert sum(o.startswith("error:") for o in outcomes) >= len(ERROR_CASES) - 3
    assert "ptr* is invalid" in outcomes[1] and ":1:29:" in outcomes[1]
    assert "pointer to this type ('void') is invalid" in outcomes[4]


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_corpus_reads_the_same(path, monkeypatch):
    text = path.read_text(encoding="utf-8")
    assert reading(text) == reading_without_fused_pointers(text, monkeypatch)


POINTERISH = re.compile(r"\*|addrspace\(\d+\)|\bptr\b|%[-\w.]+\*")
REPLACEMENTS = ["*", "**", " *", "\n*", " addrspace(1)*", " addrspace(2)", "ptr", "ptr addrspace(1)", "void*", ""]
# a value, a label, an instruction's name or a named type's definition followed by a star: valid
# nowhere, and read as one token where the star is on the same line
NAMES = re.compile(r"%[-\w.]+")
STARS = ["*", " **", " addrspace(1)*"]


def mutants(rng: random.Random, text: str, n: int):
    spots = [m.span() for m in POINTERISH.finditer(text)]
    names = [m.end() for m in NAMES.finditer(text)]
    for k in range(n if spots else 0):
        if k % 3 == 2 and names:
            at = rng.choice(names)
            yield text[:at] + rng.choice(STARS) + text[at:]
        else:
            a, b = rng.choice(spots)
            yield text[:a] + rng.choice(REPLACEMENTS) + text[b:]


def test_mutations_around_pointer_types_read_the_same(monkeypatch):
    rng = random.Random(20261128)
    texts = [p.read_text(encoding="utf-8") for p in CORPUS] + [module_of_lines(400, seed=s) for s in (1, 2)]
    checked = errors = 0
    for text in texts:
        for mutant in mutants(rng, text, 18):
            fused = reading(mutant)
            assert fused == reading_without_fused_pointers(mutant, monkeypatch), mutant
            checked += 1
            errors += fused.startswith("error:")
    # the mutations reach both outcomes
    assert checked > 500 and 0 < errors < checked
