"""gctoy prints a module as ``opt -S`` prints it, and reads what LLVM 14 and 19 read.

Compared with LLVM's own output (LLVM 14 for typed pointers, 19 for opaque ones), leaving out
only comment lines, ``source_filename`` and blank lines:

* every ``load``/``store``/``alloca`` carries ``align N``: the datalayout's ABI alignment
  (preferred alignment for allocas) when the source wrote none;
* function and call-site attributes are ``#N`` groups, numbered as LLVM numbers them,
  attributes in LLVM's order;
* named non-struct types (``%Env = type ptr``) stand for their type; modules mixing ``T*`` and
  ``ptr`` read as LLVM 19 reads them; aggregate returns, ``llvm.assume``, ``inttoptr`` callees
  and allocas aligned above 16 parse, verify and print as LLVM prints them.
"""

from __future__ import annotations

import re

import pytest

from gctoy.errors import IRParseError
from gctoy.ir import parse_module, print_module
from gctoy.ir.printer import uses_opaque_pointers
from gctoy.ir.verifier import check_module
from gctoy.llvm_tools import LLVMTools, run_opt

X86_LAYOUT = 'target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-f80:128-n8:16:32:64-S128"\n'


def _normal(text: str) -> str:
    """The text without comments, ``source_filename`` and blank lines."""
    out = []
    for line in text.splitlines():
        if line.startswith("source_filename"):
            continue
        line = re.sub(r"\s*;.*$", "", line)
        if line.strip():
            out.append(line.rstrip())
    return "\n".join(out)


def _ours(text: str) -> str:
    m = parse_module(text, "in.ll")
    check_module(m)
    return print_module(m, opaque=uses_opaque_pointers(m))


def _llvm(tools: LLVMTools, text: str) -> str:
    r = run_opt(tools.opt, ["-passes=verify", "-S"], text)
    assert r.returncode == 0, r.stderr
    return r.stdout


TYPES = ["i1", "i8", "i16", "i32", "i64", "i128", "i24", "i48", "i256", "half", "bfloat", "float", "double",
         "x86_fp80", "fp128", "{ i8, i64 }", "<{ i8, i64 }>", "[3 x i16]", "<4 x i32>", "<3 x i32>",
         "<8 x float>", "<1 x i64>", "<16 x i64>", "{}", "[0 x i64]", "%Pair", "[2 x %Pair]"]


def _memory_module(layout: str, pointer: str) -> str:
    lines = [layout + "%Pair = type { i32, double }", "define void @f() {"]
    for n, ty in enumerate(TYPES + [pointer]):
        ptr = "ptr" if pointer == "ptr" else f"{ty}*"
        lines += [f"  %a{n} = alloca {ty}", f"  %l{n} = load {ty}, {ptr} %a{n}", f"  store {ty} %l{n}, {ptr} %a{n}"]
    lines += ["  %big = alloca i8, align 64", "  ret void", "}"]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("layout", ["", X86_LAYOUT], ids=["default-layout", "x86-64-layout"])
def test_default_alignments_typed_as_llvm14(layout: str, llvm14: LLVMTools) -> None:
    text = _memory_module(layout, "i8*")
    assert _normal(_ours(text)) == _normal(_llvm(llvm14, text))


@pytest.mark.parametrize("layout", ["", X86_LAYOUT], ids=["default-layout", "x86-64-layout"])
def test_default_alignments_opaque_as_llvm19(layout: str, llvm19: LLVMTools) -> None:
    text = _memory_module(layout, "ptr")
    assert _normal(_ours(text)) == _normal(_llvm(llvm19, text))


def test_default_alignment_follows_the_datalayout() -> None:
    text = "define void @f(i64* %p) {\n  %v = load i64, i64* %p\n  %s = alloca i64\n  ret void\n}\n"
    assert "load i64, i64* %p, align 4" in print_module(parse_module(text))  # LLVM's default i64:32:64
    assert "alloca i64, align 8" in print_module(parse_module(text))
    assert "load i64, i64* %p, align 8" in print_module(parse_module(X86_LAYOUT + text))
    # written alignments are kept
    kept = text.replace("%p\n", "%p, align 1\n")
    assert "load i64, i64* %p, align 1" in print_module(parse_module(kept))


ATTRIBUTES = """declare void @g(i8* "zz" sret(i8) nonnull align 8 noalias dereferenceable(16) nocapture readonly %p, \
i32 zeroext noundef inreg %x) willreturn "b"="1" nounwind alignstack(16) "a" noinline allocsize(1) cold optsize
define void @f(i8* %p) "k"="v" noreturn nounwind {
  call void @g(i8* sret(i8) noalias nonnull %p, i32 signext 1) "q" nounwind cold
  call void @g(i8* sret(i8) noalias nonnull %p, i32 signext 1) cold nounwind "q"
  call void @g(i8* sret(i8) noalias nonnull %p, i32 signext 1) #7
  call void @g(i8* sret(i8) noalias nonnull %p, i32 signext 1) #7 "zz"
  unreachable
}
define internal void @h() #7 {
  ret void
}
attributes #7 = { nounwind cold }
attributes #9 = { noinline optnone }
"""


def test_attribute_groups_as_llvm14(llvm14: LLVMTools) -> None:
    assert _normal(_ours(ATTRIBUTES)) == _normal(_llvm(llvm14, ATTRIBUTES))


def test_attribute_groups_as_llvm19(llvm19: LLVMTools) -> None:
    text = ATTRIBUTES.replace("i8*", "ptr")
    assert _normal(_ours(text)) == _normal(_llvm(llvm19, text))


def test_attribute_groups_numbered_functions_first_then_calls() -> None:
    out = print_module(parse_module(ATTRIBUTES))
    assert re.search(r"^define void @f\(i8\* %p\) #1 \{$", out, re.M)
    assert out.count("call void @g(i8* noalias nonnull sret(i8) %p, i32 signext 1) #3") == 2
    assert "attributes #2 = { cold nounwind }" in out  # @h's group, then reused by a call
    assert "optnone" not in out  # an unused group is not printed
    assert "alignstack=16" in out
    assert print_module(parse_module(out)) == out
    assert parse_module(out) == parse_module(ATTRIBUTES)


NAMED = """%Env = type ptr
%Obj = type { %Env, i64 }
%Slots = type [2 x %Env]
define %Env @f(%Env %e, %Slots %s) {
  %p = getelementptr %Obj, ptr %e, i64 0, i32 1
  %q = extractvalue %Slots %s, 1
  ret %Env %q
}
"""

NAMED_TYPED = """%T = type i8 addrspace(1)*
%S = type { %T }
declare %T @g(%T)
define %T @f(%S* %s) {
  %p = getelementptr %S, %S* %s, i64 0, i32 0
  %v = load %T, %T* %p
  ret %T %v
}
"""


def test_named_non_struct_types_as_llvm19(llvm19: LLVMTools) -> None:
    assert _normal(_ours(NAMED)) == _normal(_llvm(llvm19, NAMED))


def test_named_non_struct_types_typed_as_llvm14(llvm14: LLVMTools) -> None:
    assert _normal(_ours(NAMED_TYPED)) == _normal(_llvm(llvm14, NAMED_TYPED))


def test_named_non_struct_type_stands_for_its_type() -> None:
    m = parse_module(NAMED_TYPED)
    assert list(m.types) == ["S"]
    assert "define i8 addrspace(1)* @f(%S* %s)" in print_module(m)


def test_named_non_struct_type_used_before_its_definition_is_a_clear_error() -> None:
    with pytest.raises(IRParseError) as e:
        parse_module("%S = type { %T }\n%T = type i64\n", "t.ll")
    assert "t.ll:2:1:" in str(e.value) and "'%T'" in str(e.value)


MIXED = """declare void @use(ptr addrspace(1))
define i8 addrspace(1)* @f(i8 addrspace(1)* %x, ptr %y, i8** %z) {
  %a = load i8 addrspace(1)*, i8 addrspace(1)** %z
  call void @use(i8 addrspace(1)* %a)
  ret i8 addrspace(1)* %x
}
"""


@pytest.mark.parametrize("text", [MIXED, MIXED.replace("declare void @use(ptr addrspace(1))",
                                                        "declare void @use(i8 addrspace(1)*)")],
                         ids=["ptr-first", "typed-first"])
def test_mixed_pointer_spellings_read_as_llvm19(text: str, llvm19: LLVMTools) -> None:
    assert _normal(_ours(text)) == _normal(_llvm(llvm19, text))


def test_ptr_star_is_refused_as_llvm19_refuses_it() -> None:
    with pytest.raises(IRParseError) as e:
        parse_module("define void @f(ptr* %x) {\n  ret void\n}\n", "p.ll")
    assert str(e.value).startswith("p.ll:1:19:") and "ptr* is invalid" in str(e.value)


CONSTRUCTS = """declare void @llvm.assume(i1)
declare void @sink(ptr addrspace(1))
define { i64, ptr } @agg(i64 %x, ptr %p) gc "statepoint-example" {
entry:
  %a = alloca i64, align 64
  %b = alloca [4 x i64], align 32
  %c = icmp ne ptr %p, null
  call void @llvm.assume(i1 %c)
  %f = inttoptr i64 %x to ptr
  call void %f()
  call void inttoptr (i64 1234 to ptr)()
  %r0 = insertvalue { i64, ptr } undef, i64 %x, 0
  %r1 = insertvalue { i64, ptr } %r0, ptr %p, 1
  ret { i64, ptr } %r1
}
"""


def _body(text: str) -> str:
    return _normal(text[text.index("define"):text.index("\n}\n") + 2])


def test_aggregate_return_assume_inttoptr_callee_big_alloca_as_llvm19(llvm19: LLVMTools) -> None:
    assert _body(_ours(CONSTRUCTS)) == _body(_llvm(llvm19, CONSTRUCTS))


def test_aggregate_return_assume_inttoptr_callee_big_alloca_typed_as_llvm14(llvm14: LLVMTools) -> None:
    typed = (CONSTRUCTS.replace("ptr addrspace(1)", "i8 addrspace(1)*").replace("{ i64, ptr }", "{ i64, i8* }")
             .replace("ptr %p", "i8* %p").replace("to ptr)()", "to void ()*)()").replace("to ptr\n", "to void ()*\n"))
    assert _body(_ours(typed)) == _body(_llvm(llvm14, typed))
