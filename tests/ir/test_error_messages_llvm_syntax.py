"""Messages name IR constructs in LLVM syntax, never as Python objects.

Bad inputs, hand-made and made by replacing tokens of the corpora with constant expressions,
functions, globals, float constants and types, go through the parser, the verifier, the passes
and code generation.  No message may show a Python repr (``ConstantExpr(type=PointerType(...``,
``<Function ...>``, ``... object at 0x...``); parse errors point at ``file:line:col``.
"""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from gctoy import codegen, passes
from gctoy.errors import GCToyError, IRParseError
from gctoy.ir import parse_module
from gctoy.ir.values import ConstantExpr, ConstantFloat, Function
from gctoy.ir.verifier import check_module

HERE = Path(__file__).resolve().parent
SOURCES = sorted(p for d in ("corpus", "corpus_opaque", "seed_modern") for p in (HERE / d).glob("*.ll"))

PYTHON_REPR = re.compile(
    r"\(type=|<Function|<GlobalVariable|<Argument|<BasicBlock|<Instruction|Constant[A-Za-z]*\(|object at 0x"
    r"|(?:Pointer|Int|Float|Function|Struct|Array|Vector)Type\(|(?:Undef|Poison|ZeroInitializer|TokenNone)\("
    r"|_Forward|_Pending|Attribute\(kind=")
LOCATED = re.compile(r"^[^:\n]+:\d+:\d+: error: ")

REPLACEMENTS = [
    "@bar", "bitcast (void ()* @bar to i8*)", "ptr @bar", "double 1.5", "float 0.5", "0.5", "0x3FB99999A0000000",
    "0xH3C00", "null", "undef", "poison", "i8* null", "getelementptr (i8, i8* null, i64 1)",
    "inttoptr (i64 8 to i8 addrspace(1)*)", "ptrtoint (i8* null to i64)", "%x", "%0", "i64", "double",
    "i8 addrspace(1)*", "label %entry", "zeroinitializer", "<2 x i64>", "{ i64, i8* }", "%T", "token none",
    "metadata !0", "#0", "@llvm.experimental.gc.statepoint.p0f_isVoidf", "ptr addrspace(1)",
]
TOKEN = re.compile(r'\s+|c?"[^"\n]*"|[%@!#]?[-\w.$]+|\.\.\.|.', re.S)

HAND_MADE = {
    "constexpr and float in gc-live": """declare token @llvm.experimental.gc.statepoint.p0f_isVoidf(i64, i32, void ()*, i32, i32, ...)
declare i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token, i32, i32)
declare void @bar()
define void @f() gc "statepoint-example" {
  %t = call token (i64, i32, void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 0, i32 0, void ()* @bar, i32 0, i32 0, i32 0, i32 0) [ "gc-live"(i8 addrspace(1)* bitcast (void ()* @bar to i8 addrspace(1)*), double 1.5) ]
  %r = call i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %t, i32 0, i32 1)
  ret void
}
""",
    "float, function and constexpr deopt values": """declare void @bar()
define void @f(i8 addrspace(1)* %o) gc "statepoint-example" {
  call void @bar() [ "deopt"(double 1.5, void ()* @bar, i8 addrspace(1)* bitcast (void ()* @bar to i8 addrspace(1)*)) ]
  ret void
}
""",
    "function passed where none is expected": """declare void @bar()
define void @f() {
  call void @bar(void ()* @bar)
  ret void
}
""",
    "constant expression of the wrong type": """@g = global i32 0
define i64 @f() {
  ret i64 ptrtoint (i32* @g to i32)
}
""",
    "float constant for an integer": """define i32 @f() {
  ret i32 1.5
}
""",
    "float constant a float cannot hold": """define float @f(float %y) {
  %a = fadd float %y, 0.1
  ret float %a
}
""",
}


def _messages(text: str, name: str) -> list[tuple[str, str]]:
    """(stage, message) of every error gctoy reports for the text."""
    out = []
    try:
        check_module(parse_module(text, name))
    except IRParseError as e:
        return [("parse", str(e))]
    except GCToyError as e:
        out.append(("verify", str(e)))
    for pipeline in ("verify-safepoints", "rewrite-statepoints-for-gc", "place-safepoints",
                     "shadow-stack-gc-lowering"):
        try:
            result = passes.run(parse_module(text, name), pipeline)
            if pipeline == "rewrite-statepoints-for-gc":
                codegen.compile(result)
        except GCToyError as e:
            out.append((pipeline, str(e)))
    return out


def _check(messages: list[tuple[str, str]], text: str) -> None:
    for stage, msg in messages:
        assert not PYTHON_REPR.search(msg), f"{stage} message shows a Python object: {msg}\n--- input ---\n{text}"
        if stage == "parse":
            assert LOCATED.match(msg), f"parse error without line:col: {msg}"


@pytest.mark.parametrize("name", sorted(HAND_MADE))
def test_hand_made_bad_inputs(name: str) -> None:
    text = HAND_MADE[name]
    messages = _messages(text, "bad.ll")
    assert messages, "each of these inputs is wrong somewhere"
    _check(messages, text)


def test_mutated_corpus_messages_are_llvm_syntax() -> None:
    rng = random.Random(20261127)
    texts = [p.read_text(encoding="utf-8") for p in SOURCES]
    seen = 0
    for _ in range(400):
        tokens = TOKEN.findall(rng.choice(texts))
        for _ in range(rng.randint(1, 2)):
            k = rng.randrange(len(tokens))
            if tokens[k].strip():
                tokens[k] = rng.choice(REPLACEMENTS)
        text = "".join(tokens)
        messages = _messages(text, "mutant.ll")
        seen += len(messages)
        _check(messages, text)
    assert seen > 300  # the mutants do reach the error paths


@pytest.mark.parametrize("value", [
    ConstantExpr(None, "bitcast", ()),  # type: ignore[arg-type]
    ConstantFloat(None, 0),  # type: ignore[arg-type]
    Function.__new__(Function),
])
def test_half_built_values_still_name_themselves_without_python_reprs(value) -> None:
    if isinstance(value, Function):
        value.name = "bar"
    assert not PYTHON_REPR.search(repr(value))
    assert not PYTHON_REPR.search(f"operand {value}")
