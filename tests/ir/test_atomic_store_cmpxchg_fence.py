"""``store atomic``, ``cmpxchg`` and ``fence`` are read and printed as LLVM 14 and 19 print them, and
refused with LLVM's messages at gctoy's line and column."""

from __future__ import annotations

import re

import pytest

from gctoy.errors import IRParseError
from gctoy.ir import instructions as I
from gctoy.ir import parse_module, print_module
from gctoy.llvm_tools import run_opt

ATOMICS = """define void @f(i32 addrspace(1)* %p, i32 %v, i8 addrspace(1)* addrspace(1)* %slot, i8 addrspace(1)* %old, i8 addrspace(1)* %new, i64* %q, float* %fp) {
entry:
  store atomic i32 %v, i32 addrspace(1)* %p seq_cst, align 4
  store atomic volatile i32 %v, i32 addrspace(1)* %p syncscope("singlethread") unordered, align 8
  store atomic i64 1, i64* %q monotonic, align 8
  store atomic float 1.0, float* %fp release, align 4
  store atomic i8 addrspace(1)* %new, i8 addrspace(1)* addrspace(1)* %slot release, align 8
  %x = cmpxchg i8 addrspace(1)* addrspace(1)* %slot, i8 addrspace(1)* %old, i8 addrspace(1)* %new seq_cst seq_cst
  %seen = extractvalue { i8 addrspace(1)*, i1 } %x, 0
  %y = cmpxchg weak volatile i64* %q, i64 1, i64 2 syncscope("agent") acq_rel monotonic, align 16
  %z = cmpxchg i32 addrspace(1)* %p, i32 0, i32 %v monotonic seq_cst
  %w = cmpxchg volatile i32 addrspace(1)* %p, i32 0, i32 %v release acquire
  cmpxchg weak i32 addrspace(1)* %p, i32 1, i32 2 acquire monotonic, align 4
  fence seq_cst
  fence syncscope("singlethread") acquire
  fence release
  fence acq_rel
  ret void
}
"""


def _body(text: str) -> list[str]:
    return [line for line in text.splitlines() if line and not line.startswith(("; ModuleID", "source_filename"))]


@pytest.mark.parametrize("version", [14, 19])
def test_atomic_stores_exchanges_and_fences_print_as_llvm_prints_them(request, version):
    llvm = request.getfixturevalue(f"llvm{version}")
    text = ATOMICS if version == 14 else print_module(parse_module(ATOMICS, "t.ll"), opaque=True)
    r = run_opt(llvm.opt, ["-S", "-passes=verify"], text)
    assert r.returncode == 0, r.stderr
    ours = print_module(parse_module(text, "t.ll"), opaque=version >= 15)
    assert "seq_cst seq_cst, align 8" in ours and "release acquire, align 4" in ours  # align filled in
    assert 'store atomic volatile i32 %v, ' in ours and 'syncscope("singlethread") unordered, align 8' in ours
    assert _body(ours) == _body(r.stdout)


def test_a_pointer_exchange_yields_the_old_pointer_and_a_flag():
    m = parse_module(ATOMICS, "t.ll")
    insts = {i.name: i for i in m.functions[0].instructions() if i.name}
    x = insts["x"]
    assert isinstance(x, I.CmpXchg) and (x.success, x.failure, x.align) == ("seq_cst", "seq_cst", 8)
    assert str(x.type) == "{ i8 addrspace(1)*, i1 }"
    assert str(insts["seen"].type) == "i8 addrspace(1)*"
    y = insts["y"]
    assert (y.weak, y.volatile, y.syncscope) == (True, True, "agent")


#: (instruction, LLVM's message, gctoy's line:column; the function's arguments are those of _function)
BAD = [
    ("store atomic i32 1, i32* %p acquire, align 4", "atomic store cannot use Acquire ordering", "3:16"),
    ("store atomic i32 1, i32* %p acq_rel, align 4", "atomic store cannot use Acquire ordering", "3:16"),
    ("store atomic i32 1, i32* %p seq_cst", "atomic store must have explicit non-zero alignment", "3:16"),
    ("store atomic i32 1, i32* %p, align 4", "Expected ordering on atomic instruction", "3:30"),
    ("store atomic i32 1, i32* %p bogus, align 4", "Expected ordering on atomic instruction", "3:31"),
    ("store atomic i32 1, i32* %p release, align 3", "alignment is not a power of two", "3:46"),
    (
        "store atomic {i32} zeroinitializer, {i32}* %sp release, align 4",
        "atomic store operand must have integer, pointer, or floating point type",
        "3:16",
    ),
    ("store atomic i24 1, i24* %p24 release, align 4", "atomic memory access' operand must have a power-of-two size",
     "3:16"),
    ("store atomic i1 1, i1* %p1 release, align 1", "atomic memory access' size must be byte-sized", "3:16"),
    ("%r = cmpxchg i32* %p, i32 0, i32 1 seq_cst release", "invalid cmpxchg failure ordering", "3:46"),
    ("%r = cmpxchg i32* %p, i32 0, i32 1 seq_cst acq_rel", "invalid cmpxchg failure ordering", "3:46"),
    ("%r = cmpxchg i32* %p, i32 0, i32 1 seq_cst unordered", "invalid cmpxchg failure ordering", "3:46"),
    ("%r = cmpxchg i32* %p, i32 0, i32 1 unordered monotonic", "invalid cmpxchg success ordering", "3:38"),
    ("%r = cmpxchg i32* %p, i32 0, i32 1 seq_cst", "Expected ordering on atomic instruction", "4:3"),
    ("%r = cmpxchg float* %fp, float 0.0, float 1.0 seq_cst seq_cst", "cmpxchg operand must have integer or pointer type",
     "3:28"),
    ("%r = cmpxchg i24* %p24, i24 0, i24 1 seq_cst seq_cst", "atomic memory access' operand must have a power-of-two size",
     "3:27"),
    ("%r = cmpxchg i32 0, i32 0, i32 1 seq_cst seq_cst", "cmpxchg operand must be a pointer", "3:16"),
    ("fence unordered", "fence cannot be unordered", "3:9"),
    ('fence syncscope("x") monotonic', "fence cannot be monotonic", "3:24"),
    ("fence", "Expected ordering on atomic instruction", "4:3"),
    ("fence volatile seq_cst", "Expected ordering on atomic instruction", "3:9"),
    ("%x = fence seq_cst", "instructions returning void cannot have a name", "3:3"),
]


def _function(line: str) -> str:
    params = "i32* %p, float* %fp, {i32}* %sp, i24* %p24, i1* %p1"
    return f"define void @f({params}) {{\nentry:\n  {line}\n  ret void\n}}\n"


@pytest.mark.parametrize("line, message, where", BAD)
def test_bad_atomics_are_refused_with_llvms_message(llvm14, llvm19, line, message, where):
    text = _function(line)
    for llvm in (llvm14, llvm19):
        r = run_opt(llvm.opt, ["-S", "-passes=verify"], text)
        assert r.returncode != 0 and message in r.stderr, (llvm.version, r.stderr)
    with pytest.raises(IRParseError) as e:
        parse_module(text, "bad.ll")
    assert str(e.value).startswith(f"bad.ll:{where}: error: {message}")


def test_a_mismatched_compare_value_is_named_as_each_llvm_names_it(llvm14, llvm19):
    typed = _function("%r = cmpxchg i32* %p, i64 0, i32 1 seq_cst seq_cst")
    assert "compare value and pointer type do not match" in run_opt(llvm14.opt, ["-S"], typed).stderr
    with pytest.raises(IRParseError, match=r"^bad\.ll:3:25: error: compare value and pointer type do not match"):
        parse_module(typed, "bad.ll")
    opaque = re.sub(r"i32\* %p", "ptr %p", typed)
    assert "compare value and new value type do not match" in run_opt(llvm19.opt, ["-S"], opaque).stderr
    with pytest.raises(IRParseError, match=r"^bad\.ll:3:31: error: compare value and new value type do not match"):
        parse_module(opaque, "bad.ll")


def test_a_failure_ordering_stronger_than_the_success_one_is_accepted(llvm14, llvm19):
    text = _function("%r = cmpxchg i32* %p, i32 0, i32 1 monotonic seq_cst")
    for llvm in (llvm14, llvm19):
        assert run_opt(llvm.opt, ["-S", "-passes=verify"], text).returncode == 0
    assert "monotonic seq_cst, align 4" in print_module(parse_module(text, "ok.ll"))
