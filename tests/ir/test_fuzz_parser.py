"""Mutation fuzzing of the parser, printer, verifier and statepoint conversion.

Inputs are made deterministically (``random.Random`` with a fixed seed) from the IR corpora:
character flips, token deletions / duplications / swaps / replacements, number swaps, line
deletions / duplications / swaps, truncations, splices of two files, structured mutations that
nest a type or constant around and far past the nesting limit or put thousands of digits in a
number, stacks of several of these, and plain random garbage.

For every input the contract is:

* ``parse_module`` returns a module or raises ``IRParseError`` — nothing else;
* a module that parses prints without error (in its own pointer style), the printed text
  parses again, and the reparsed module equals the first one;
* the verifier returns or raises ``VerifyError``; a module that verifies can be converted to
  the modern statepoint form (or the conversion raises ``VerifyError``), and the converted
  module still verifies and round-trips;
* the work per character stays bounded: on every ``WORK_SAMPLE_EVERY``-th input the lines of
  gctoy run are counted (tests/op_count.py), at most ``WORK_PER_CHAR`` per character.

``GCTOY_FUZZ_COUNT`` sets the number of inputs (default 10,000, about 10 s on one core);
``GCTOY_FUZZ_SEED`` changes the seed. A failure prints each distinct problem once, with a
shrunken input that still shows it. Small inputs that once broke the contract are kept in
``FOUND_BY_FUZZING`` and checked on every run, whatever the seed.
"""

from __future__ import annotations

import os
import random
import re
import traceback
from pathlib import Path

import pytest

from gctoy.errors import IRParseError, VerifyError
from gctoy.ir import parse_module, print_module
from gctoy.ir.limits import MAX_INT_DIGITS, MAX_NESTING
from gctoy.ir.printer import uses_opaque_pointers
from gctoy.ir.statepoint import convert_statepoints
from gctoy.ir.verifier import check_module
from gctoy.llvm_tools import LLVMTools, run_opt
from op_count import WorkPerByte

HERE = Path(__file__).resolve().parent
SOURCES = sorted(
    p for d in ("corpus", "corpus_opaque", "corpus_legacy", "seed_modern") for p in (HERE / d).glob("*.ll")
)
TEXTS = [p.read_text(encoding="utf-8") for p in SOURCES]

COUNT = int(os.environ.get("GCTOY_FUZZ_COUNT", "10000"))
SEED = int(os.environ.get("GCTOY_FUZZ_SEED", "20240607"))
CHUNKS = 10
WORK_SAMPLE_EVERY = 25
WORK_PER_CHAR = 200  # measured: at most ~40

TOKEN_RE = re.compile(r'\s+|c?"[^"\n]*"|[%@!#]?[-\w.$]+|\.\.\.|.', re.S)
DICTIONARY = [
    "i1", "i8", "i32", "i64", "i128", "i0", "i9999999", "double", "float", "void", "token", "label",
    "metadata", "ptr", "*", "addrspace(1)", "addrspace(", "%0", "%1", "%x", "%entry", "@foo", "@0",
    "@llvm.experimental.gc.statepoint.p0f_isVoidf", "@llvm.experimental.gc.relocate.p1i8",
    "@llvm.experimental.gc.result.i32", "null", "undef", "poison", "none", "zeroinitializer",
    "true", "false", "{", "}", "(", ")", "[", "]", "<", ">", ",", "=", ":", "...", "x", "to",
    "call", "invoke", "phi", "br", "switch", "ret", "unreachable", "landingpad", "cleanup",
    "getelementptr", "inbounds", "load", "store", "alloca", "bitcast", "inttoptr", "icmp", "eq",
    "select", "extractvalue", "insertvalue", "define", "declare", "global", "constant", "type",
    "opaque", "attributes", "#0", "!0", "!{}", "gc", '"statepoint-example"', '"gc-live"', '"deopt"',
    "coldcc", "immarg", "align", "0", "-1", "7", "4294967296", "18446744073709551616",
    "99999999999999999999999999", "0x7FF8000000000000", "1.5e308", "c\"\\00\"", "\"\\", ";", "\n",
]
NUMBERS = ["0", "1", "-1", "2", "7", "8", "255", "2147483647", "-2147483648", "4294967295",
           "9223372036854775807", "18446744073709551616", "99999999999999999999"]


# -- mutations -----------------------------------------------------------------------------------------


def _tokens(text: str) -> list[str]:
    return TOKEN_RE.findall(text)


def _solid(tokens: list[str]) -> list[int]:
    return [i for i, t in enumerate(tokens) if not t.isspace()] or [0]


def flip_chars(rng: random.Random, text: str) -> str:
    chars = list(text) or [" "]
    for _ in range(rng.randint(1, 4)):
        i = rng.randrange(len(chars))
        pick = rng.randrange(4)
        if pick == 0:
            chars[i] = chr(rng.randrange(0, 128))
        elif pick == 1:
            chars[i] = rng.choice('%@!#*(){}[]<>,="\\;:.-0123456789x \n')
        elif pick == 2:
            chars[i] = chr(rng.choice((0x80, 0xE9, 0x2028, 0xFEFF, 0x1F600, 0xFFFD)))
        else:
            chars[i] = ""
    return "".join(chars)


def delete_token(rng: random.Random, text: str) -> str:
    toks = _tokens(text)
    for _ in range(rng.randint(1, 3)):
        if toks:
            del toks[rng.choice(_solid(toks))]
    return "".join(toks)


def duplicate_token(rng: random.Random, text: str) -> str:
    toks = _tokens(text)
    if toks:
        i = rng.choice(_solid(toks))
        toks.insert(i, toks[i] + rng.choice(("", " ", ", ")))
    return "".join(toks)


def swap_tokens(rng: random.Random, text: str) -> str:
    toks = _tokens(text)
    solid = _solid(toks)
    if len(toks) > 1:
        i, j = rng.choice(solid), rng.choice(solid)
        toks[i], toks[j] = toks[j], toks[i]
    return "".join(toks)


def replace_token(rng: random.Random, text: str) -> str:
    toks = _tokens(text)
    if toks:
        toks[rng.choice(_solid(toks))] = rng.choice(DICTIONARY)
    return "".join(toks)


def replace_number(rng: random.Random, text: str) -> str:
    spots = [m.span() for m in re.finditer(r"-?\b\d+\b", text)]
    if not spots:
        return replace_token(rng, text)
    a, b = rng.choice(spots)
    return text[:a] + rng.choice(NUMBERS) + text[b:]


def line_edit(rng: random.Random, text: str) -> str:
    lines = text.splitlines(keepends=True) or [""]
    i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
    op = rng.randrange(4)
    if op == 0:
        del lines[i]
    elif op == 1:
        lines.insert(j, lines[i])
    elif op == 2:
        lines[i], lines[j] = lines[j], lines[i]
    else:
        lines.insert(j, lines.pop(i))
    return "".join(lines)


def truncate(rng: random.Random, text: str) -> str:
    return text[: rng.randrange(len(text) + 1)]


def splice(rng: random.Random, text: str) -> str:
    other = rng.choice(TEXTS)
    if rng.randrange(2):
        return text[: rng.randrange(len(text) + 1)] + other[rng.randrange(len(other) + 1):]
    lines = text.splitlines(keepends=True)
    donor = other.splitlines(keepends=True) or [""]
    at = rng.randrange(len(lines) + 1)
    start = rng.randrange(len(donor))
    return "".join(lines[:at] + donor[start:start + rng.randint(1, 6)] + lines[at:])


def garbage(rng: random.Random, _text: str) -> str:
    parts = []
    for _ in range(rng.randint(0, 80)):
        if rng.randrange(3):
            parts.append(rng.choice(DICTIONARY))
        else:
            parts.append(chr(rng.randrange(1, 0x250)))
        parts.append(rng.choice((" ", "", "\n", ", ")))
    return "".join(parts)


#: depths around gctoy's nesting limit and far past it (where recursion would once have failed)
DEPTHS = [MAX_NESTING - 1, MAX_NESTING, MAX_NESTING + 1, 330, 1000]
#: digit counts around Python's int-conversion limit and the IR reader's literal limit
DIGITS = [20, 50, MAX_INT_DIGITS, MAX_INT_DIGITS + 1, 5000]
_TYPE_RE = re.compile(r"\b(?:i1|i8|i32|i64|double)\b(?! addrspace)|(?<![\w%])%[A-Za-z_][\w.]*(?=\*| )")


def nest_deep(rng: random.Random, text: str) -> str:
    """Wrap one type in many arrays, structs or pointer stars, or a ``null`` in nested GEPs."""
    depth = rng.choice(DEPTHS)
    kind = rng.randrange(4)
    if kind == 3:
        spots = [m.span() for m in re.finditer(r"\bnull\b", text)]
        if spots:
            a, b = rng.choice(spots)
            inner = "null"
            for _ in range(depth):
                inner = f"getelementptr (i8, i8* {inner}, i64 1)"
            return text[:a] + inner + text[b:]
        kind = rng.randrange(3)
    spots = [m.span() for m in _TYPE_RE.finditer(text)]
    if not spots:
        return replace_token(rng, text)
    a, b = rng.choice(spots)
    ty = text[a:b]
    if kind == 0:
        ty = "[1 x " * depth + ty + "]" * depth
    elif kind == 1:
        ty = "{ " * depth + ty + " }" * depth
    else:
        ty = ty + "*" * depth
    return text[:a] + ty + text[b:]


def huge_number(rng: random.Random, text: str) -> str:
    """Replace a number, a numbered name, an alignment or a metadata id by a very long digit string."""
    spots = [m.span(1) for m in re.finditer(r"(?:[%!#]|align |addrspace\(|\[|<)?(\d+)\b", text)]
    if not spots:
        return replace_token(rng, text)
    a, b = rng.choice(spots)
    digits = "".join(rng.choice("0123456789") for _ in range(rng.choice(DIGITS)))
    return text[:a] + "9" + digits[1:] + text[b:]


MUTATORS = [flip_chars, delete_token, duplicate_token, swap_tokens, replace_token, replace_number,
            line_edit, truncate, splice, nest_deep, huge_number]


def make_input(rng: random.Random) -> tuple[str, str]:
    """One fuzz input and the name of how it was made."""
    roll = rng.randrange(100)
    if roll < 4:
        return "garbage", garbage(rng, "")
    text = rng.choice(TEXTS)
    if roll < 24:
        names = []
        for _ in range(rng.randint(2, 4)):
            m = rng.choice(MUTATORS)
            names.append(m.__name__)
            text = m(rng, text)
        return "+".join(names), text
    m = rng.choice(MUTATORS)
    return m.__name__, m(rng, text)


# -- the contract ----------------------------------------------------------------------------------------


def exercise(text: str) -> None:
    """Run one input through everything; raise on any breach of the contract."""
    try:
        m = parse_module(text, "fuzz.ll")
    except IRParseError:
        return
    opaque = uses_opaque_pointers(m)
    printed = print_module(m, opaque=opaque)
    again = parse_module(printed, "printed.ll")
    assert again == m, "the printed module parses to a different module"
    try:
        check_module(m)
    except VerifyError:
        return
    try:
        convert_statepoints(m, "modern")
    except VerifyError:
        return
    check_module(m)
    converted = print_module(m, opaque=opaque)
    assert parse_module(converted, "converted.ll") == m


def problem_of(text: str) -> str | None:
    """None if ``text`` keeps the contract, else a one-line signature of the breach."""
    try:
        exercise(text)
    except Exception as e:  # noqa: BLE001 - every other exception is the finding
        frame = traceback.extract_tb(e.__traceback__)[-1]
        where = f"{Path(frame.filename).name}:{frame.lineno}"
        first = str(e).splitlines()[0] if str(e) else ""
        first = re.sub(r"fuzz\.ll:\d+:\d+", "fuzz.ll", first)
        return f"{type(e).__name__} at {where}: {first[:160]}"
    return None


def shrink(text: str, signature: str, budget: int = 1500) -> str:
    """A shorter input with the same problem signature (greedy line, then token, removal)."""
    tries = 0

    def same(candidate: str) -> bool:
        return problem_of(candidate) == signature

    for unit in ("line", "token"):
        parts = text.splitlines(keepends=True) if unit == "line" else _tokens(text)
        i = 0
        while i < len(parts) and tries < budget:
            tries += 1
            candidate = "".join(parts[:i] + parts[i + 1:])
            if same(candidate):
                parts = parts[:i] + parts[i + 1:]
            else:
                i += 1
        text = "".join(parts)
    return text


@pytest.mark.parametrize("chunk", range(CHUNKS))
def test_fuzz_chunk(chunk: int) -> None:
    rng = random.Random(SEED * 1000 + chunk)
    n = COUNT // CHUNKS + (1 if chunk < COUNT % CHUNKS else 0)
    found: dict[str, tuple[str, str]] = {}
    kinds: dict[str, int] = {}
    work = WorkPerByte(every=WORK_SAMPLE_EVERY)
    for i in range(n):
        how, text = make_input(rng)
        kinds[how.split("+")[0]] = kinds.get(how.split("+")[0], 0) + 1
        sig = work.run(i, text.encode(), lambda: problem_of(text))
        if sig is not None and sig not in found:
            found[sig] = (how, text)
    if work.worst > WORK_PER_CHAR:
        found[f"work: {work.describe()}"] = ("the work count", work.worst_input.decode())
    if found:
        report = []
        for sig, (how, text) in list(found.items())[:6]:
            small = text if sig.startswith("work: ") else shrink(text, sig)
            report.append(f"--- {sig}\n    made by {how}; shrunk input ({len(small)} chars):\n{small}")
        pytest.fail(f"{len(found)} distinct problem(s) in chunk {chunk} (seed {SEED}):\n" + "\n".join(report))


def test_structured_mutations_reach_the_limits() -> None:
    """Some inputs nest past the limit or carry over-long numbers, and are rejected for exactly that."""
    rng = random.Random(SEED)
    messages = []
    for _ in range(300):
        text = rng.choice(TEXTS)
        text = (nest_deep if rng.randrange(2) else huge_number)(rng, text)
        try:
            parse_module(text, "fuzz.ll")
        except IRParseError as e:
            messages.append(e.message)
    assert any("levels deep" in m for m in messages)
    assert any("digits is too long" in m for m in messages)
    assert all(problem_of(rng.choice(TEXTS)) is None for _ in range(3))


def test_mutators_make_varied_inputs() -> None:
    """The generator is deterministic and exercises both outcomes: many inputs parse, many do not."""
    rng = random.Random(SEED)
    first = [make_input(rng) for _ in range(400)]
    rng = random.Random(SEED)
    assert [make_input(rng) for _ in range(400)] == first
    parsed = 0
    for _, text in first:
        try:
            parse_module(text, "fuzz.ll")
            parsed += 1
        except Exception:  # noqa: BLE001 - the contract is checked by the chunks; here only variety counts
            pass
    assert 40 <= parsed <= 360, parsed
    assert len({how.split("+")[0] for how, _ in first}) >= len(MUTATORS)


#: small inputs, found by this fuzzer, that once broke the contract (LLVM 14 accepts the valid ones)
FOUND_BY_FUZZING = {
    "type cut off after 'addrspace'": ("declare i8 addrspace", False),
    "type cut off after 'addrspace('": ("@g = external global i8 addrspace(", False),
    "metadata definition right after a declaration": ("declare void @f()\n!0 = !{}\n", True),
    "named metadata right after a declaration": ("declare void @f()\n!llvm.ident = !{}\n", True),
    "parameter names on a declaration": ("declare void @g(i32 %x, i8* %entry)\n", True),
    "local value in a global's constant expression": (
        "@b = global [8 x i32] zeroinitializer\n"
        "@p = global i32* getelementptr ([8 x i32], [8 x i32]* @b, i64 %r, i64 2)\n", False),
    "local value in a constant expression in a body": (
        "@b = global [8 x i32] zeroinitializer\n"
        "define i32* @f(i64 %r) {\nentry:\n  ret i32* getelementptr ([8 x i32], [8 x i32]* @b, i64 %r, i64 2)\n}\n",
        False),
}


@pytest.mark.parametrize("case", sorted(FOUND_BY_FUZZING))
def test_found_by_fuzzing(case: str) -> None:
    text, _valid = FOUND_BY_FUZZING[case]
    assert problem_of(text) is None


@pytest.mark.parametrize("case", sorted(FOUND_BY_FUZZING))
def test_found_by_fuzzing_agrees_with_llvm(case: str, llvm14: LLVMTools) -> None:
    """LLVM 14 is the judge: valid IR gctoy must read and verify, invalid IR it must reject cleanly."""
    text, valid = FOUND_BY_FUZZING[case]
    r = run_opt(llvm14.opt, ["-passes=verify", "-S", "-o", "/dev/null"], text)
    assert (r.returncode == 0) == valid, r.stderr
    if valid:
        check_module(parse_module(text, "fuzz.ll"))
    else:
        with pytest.raises((IRParseError, VerifyError)):
            check_module(parse_module(text, "fuzz.ll"))
