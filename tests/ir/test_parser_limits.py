"""The IR reader's rules on numbers, nesting and recursive types, with LLVM's ``opt`` as the judge.

Where LLVM decides the rule (alignments, address spaces, array and vector lengths, metadata
ids), each case runs through LLVM 14's and LLVM 19's ``opt`` too and both must agree with
gctoy.  The nesting limit and the literal-length limit are gctoy's own (see
``gctoy.ir.limits``); they are checked at the limit and one step past it, and everything
accepted at the limit must print, reparse to an equal module, and compare.
"""
from __future__ import annotations

import pytest

from gctoy.errors import IRParseError
from gctoy.ir import parse_module, print_module
from gctoy.ir.compare import module_key
from gctoy.ir.limits import MAX_INT_DIGITS, MAX_NESTING, type_depth
from gctoy.ir.types import ArrayType, IntType, NamedStructType, PointerType, StructType
from gctoy.ir.type_rules import recursive_type
from gctoy.ir.types import StructBody
from gctoy.llvm_tools import LLVMTools, run_opt

MAIN = "define i64 @main() {\n  ret i64 0\n}\n"


def _alloca(align: str) -> str:
    return f"define void @f() {{\n  %a = alloca i64, align {align}\n  ret void\n}}\n"


#: (name, IR, does LLVM accept it (14 and 19 agree), a word of gctoy's message when rejected)
LLVM_RULES = [
    ("align 1", _alloca("1"), True, ""),
    ("align 2**32", _alloca(str(1 << 32)), True, ""),
    ("align 3", _alloca("3"), False, "power of two"),
    ("align 0", _alloca("0"), False, "power of two"),
    ("align 2**33", _alloca(str(1 << 33)), False, "huge alignment"),
    ("align 1e20", _alloca("100000000000000000000"), False, "power of two"),
    ("global align 3", "@g = global i8 0, align 3\n", False, "power of two"),
    ("parameter align 3", "define void @f(i8* align 3 %p) {\n  ret void\n}\n", False, "power of two"),
    ("function align 3", "define void @f() align 3 {\n  ret void\n}\n", False, "power of two"),
    ("load align 6", "define i8 @f(i8* %p) {\n  %v = load i8, i8* %p, align 6\n  ret i8 %v\n}\n", False,
     "power of two"),
    ("addrspace 2**24-1", "@g = external global i8 addrspace(16777215)*\n", True, ""),
    ("addrspace 1e20", "@g = external global i8 addrspace(100000000000000000000)*\n", False, "address space"),
    ("array of 2**64-1", "@g = external global [18446744073709551615 x i8]\n", True, ""),
    ("array of 2**64", "@g = external global [18446744073709551616 x i8]\n", False, "array length"),
    ("array of 1e20", "@g = global [99999999999999999999 x i64] zeroinitializer\n", False, "array length"),
    ("vector of 2**32", "@g = external global <4294967296 x i8>\n", False, "vector"),
    ("vector of 0", "@g = external global <0 x i8>\n", False, "zero element vector"),
    ("metadata id 2**32-1", "!4294967295 = !{}\n", True, ""),
    ("metadata id 2**32", "!4294967296 = !{}\n", False, "metadata id"),
    ("metadata id of 50 digits", "define i64 @main() {\n  ret i64 0, !foo !" + "1" * 50 + "\n}\n", False,
     "metadata id"),
    ("metadata id inside a node", "@g = external global i8, !dbg !{!4294967296}\n", False, "metadata id"),
]


def _gctoy_accepts(text: str) -> tuple[bool, str]:
    try:
        parse_module(text, "t.ll")
    except IRParseError as e:
        return False, str(e)
    return True, ""


@pytest.mark.parametrize("name", [c[0] for c in LLVM_RULES])
def test_rule_as_gctoy_reads_it(name: str) -> None:
    _, text, valid, needle = next(c for c in LLVM_RULES if c[0] == name)
    ok, message = _gctoy_accepts(text)
    assert ok == valid, message
    if not valid:
        assert needle in message and message.startswith("t.ll:"), message


@pytest.mark.parametrize("version", [14, 19])
@pytest.mark.parametrize("name", [c[0] for c in LLVM_RULES])
def test_rule_agrees_with_llvm(name: str, version: int, llvm14: LLVMTools, llvm19: LLVMTools) -> None:
    """LLVM decides: its ``opt`` accepts exactly the cases marked valid."""
    _, text, valid, _ = next(c for c in LLVM_RULES if c[0] == name)
    tools = llvm14 if version == 14 else llvm19
    if version == 19:
        text = text.replace("i8* ", "ptr ").replace("i8 addrspace(16777215)*", "ptr addrspace(16777215)") \
            .replace("i8 addrspace(100000000000000000000)*", "ptr addrspace(100000000000000000000)")
    r = run_opt(tools.opt, ["-passes=verify", "-S", "-o", "/dev/null"], text)
    assert (r.returncode == 0) == valid, r.stderr


def _nested(kind: str, depth: int) -> str:
    if kind == "array":
        return "@g = global " + "[1 x " * depth + "i8" + "]" * depth + " zeroinitializer\n"
    if kind == "struct":
        return "@g = global " + "{ " * depth + "i8" + " }" * depth + " zeroinitializer\n"
    if kind == "pointer":
        return "@g = global i8" + "*" * depth + " null\n"
    if kind == "gep":
        g = "i8* null"
        for _ in range(depth):
            g = f"i8* getelementptr (i8, {g}, i64 1)"
        return "@g = global " + g + "\n"
    raise AssertionError(kind)


@pytest.mark.parametrize("kind", ["array", "struct", "pointer", "gep"])
def test_nesting_at_the_limit_prints_reparses_and_compares(kind: str) -> None:
    text = _nested(kind, MAX_NESTING) + MAIN
    module = parse_module(text, "deep.ll")
    printed = print_module(module)
    again = parse_module(printed, "deep.ll")
    assert module_key(module) == module_key(again)
    assert print_module(again) == printed


@pytest.mark.parametrize("kind", ["array", "struct", "pointer", "gep"])
def test_nesting_past_the_limit_is_one_clear_error(kind: str) -> None:
    with pytest.raises(IRParseError, match=f"more than {MAX_NESTING} levels deep") as info:
        parse_module(_nested(kind, MAX_NESTING + 1) + MAIN, "deep.ll")
    assert info.value.line == 1 and info.value.column > 1


def test_llvm_reads_what_the_limit_rejects(llvm14: LLVMTools) -> None:
    """The nesting limit is gctoy's, not LLVM's: LLVM 14 reads the deeper input."""
    r = run_opt(llvm14.opt, ["-passes=verify", "-S", "-o", "/dev/null"], _nested("array", MAX_NESTING + 1))
    assert r.returncode == 0, r.stderr


def test_type_depth_counts_levels() -> None:
    assert type_depth(IntType(8)) == 1
    assert type_depth(PointerType(PointerType(IntType(8)))) == 3
    assert type_depth(StructType((IntType(8), ArrayType(2, PointerType(IntType(8)))))) == 4


def test_integer_literal_digits() -> None:
    ok = "define i64 @main() {\n  ret i64 " + "9" * MAX_INT_DIGITS + "\n}\n"
    parse_module(ok)
    with pytest.raises(IRParseError, match=f"{MAX_INT_DIGITS + 1} digits is too long"):
        parse_module("define i64 @main() {\n  ret i64 " + "9" * (MAX_INT_DIGITS + 1) + "\n}\n")


def test_long_numbered_name_is_a_numbering_error() -> None:
    text = "define i64 @main() {\n  %" + "1" * 5000 + " = add i64 1, 2\n  ret i64 0\n}\n"
    with pytest.raises(IRParseError, match="expected to be numbered '%1'") as info:
        parse_module(text, "n.ll")
    assert (info.value.line, info.value.column) == (2, 3)


def test_long_integer_type_width_is_out_of_range() -> None:
    with pytest.raises(IRParseError, match="bitwidth for integer type out of range"):
        parse_module("@g = external global i" + "9" * 5000 + "\n")


RECURSIVE = [
    ("self", "%T = type { %T }\n", True),
    ("through an array", "%T = type { [2 x %T] }\n", True),
    ("mutual", "%A = type { i64, %B }\n%B = type { %A }\n", True),
    ("through a pointer", "%T = type { %T*, i64 }\n", False),
    ("mutual through a pointer", "%A = type { %B* }\n%B = type { %A, i32 }\n", False),
]


@pytest.mark.parametrize("name", [c[0] for c in RECURSIVE])
def test_recursive_types(name: str) -> None:
    _, types, invalid = next(c for c in RECURSIVE if c[0] == name)
    text = types + MAIN
    if invalid:
        with pytest.raises(IRParseError, match="invalid recursive type") as info:
            parse_module(text, "r.ll")
        assert info.value.column == 1
    else:
        module = parse_module(text, "r.ll")
        assert module_key(module) == module_key(parse_module(print_module(module), "r.ll"))


def test_recursive_type_cannot_be_allocated_in_llvm(llvm14: LLVMTools, llvm19: LLVMTools) -> None:
    """LLVM has no finite layout for ``%T = type { %T }``: 14 crashes on a global of it and both
    refuse to allocate one, where ``%T = type { %T* }`` is an ordinary sized type."""
    alloca = "define void @f() {\n  %a = alloca %T\n  ret void\n}\n"
    for tools in (llvm14, llvm19):
        r = run_opt(tools.opt, ["-passes=verify", "-S", "-o", "/dev/null"], "%T = type { %T }\n" + alloca)
        assert r.returncode != 0 and "unsized" in r.stderr
    r = run_opt(llvm14.opt, ["-passes=verify", "-S", "-o", "/dev/null"], "%T = type { %T*, i64 }\n" + alloca)
    assert r.returncode == 0, r.stderr


def test_recursive_type_finder_on_bodies() -> None:
    t = NamedStructType("T", StructBody())
    t.body.elements = (IntType(8), PointerType(t))
    assert recursive_type({"T": t}) is None
    t.body.elements = (IntType(8), ArrayType(3, t))
    assert recursive_type({"T": t}) == "T"


def test_messages_name_values_in_llvm_syntax() -> None:
    module = parse_module("@g = global i8* getelementptr (i8, i8* null, i64 1)\n"
                          "declare void @bar(double)\n" + MAIN)
    assert repr(module.globals[0].initializer) == "i8* getelementptr (i8, i8* null, i64 1)"
    assert repr(module.get_function("bar")) == "void (double)* @bar"
    assert repr(module.globals[0].value_type) == "i8*"
    assert str(module.get_function("main").blocks[0]) == "label %0"


def test_long_constants_and_calls_survive_the_token_window() -> None:
    """The parser keeps only a window of tokens: a constant or a call longer than the window
    (the callee is read after the arguments) still parses and round-trips."""
    n = 6000
    elems = ", ".join(f"i64 {k}" for k in range(n))
    text = (f"@big = global [{n} x i64] [{elems}]\n"
            f"declare void @take([{n} x i64])\n"
            "define void @f() {\n"
            + "".join(f"  %v{k} = add i64 {k}, 1\n" for k in range(3000))
            + f"  call void bitcast (void ([{n} x i64])* @take to void ([{n} x i64])*)([{n} x i64] [{elems}])\n"
            f"  call void @take([{n} x i64] [{elems}])\n"
            "  ret void\n}\n")
    module = parse_module(text, "long.ll")
    printed = print_module(module)
    assert module_key(parse_module(printed, "long.ll")) == module_key(module)
    assert printed.count(f"i64 {n - 1}]") == 3
