"""``atomicrmw`` is read and printed as LLVM reads and prints it, and refused as LLVM refuses it."""

from __future__ import annotations

import pytest

from gctoy.errors import IRParseError
from gctoy.ir import parse_module, print_module
from gctoy.llvm_tools import run_opt

INTS = """define i32 @f(i32* %c, float* %x) {
entry:
  %a = atomicrmw xchg i32* %c, i32 7 seq_cst
  %s = atomicrmw volatile add i32* %c, i32 3 syncscope("singlethread") acq_rel, align 8
  %t = atomicrmw umax i32* %c, i32 %s monotonic
  %u = atomicrmw fadd float* %x, float 1.0 release
  ret i32 %t
}
"""

POINTERS = """define ptr addrspace(1) @g(ptr %slot, ptr addrspace(1) %new) {
entry:
  %old = atomicrmw xchg ptr %slot, ptr addrspace(1) %new acquire
  ret ptr addrspace(1) %old
}
"""


def _body(text: str) -> list[str]:
    return [line for line in text.splitlines() if line and not line.startswith(("; ModuleID", "source_filename"))]


@pytest.mark.parametrize("version", [14, 19])
def test_integer_and_float_updates_print_as_llvm_prints_them(request, version):
    llvm = request.getfixturevalue(f"llvm{version}")
    text = INTS if version == 14 else print_module(parse_module(INTS, "t.ll"), opaque=True)
    r = run_opt(llvm.opt, ["-S", "-passes=verify"], text)
    assert r.returncode == 0, r.stderr
    ours = print_module(parse_module(text, "t.ll"), opaque=version >= 15)
    assert "monotonic, align 4" in ours and 'syncscope("singlethread") acq_rel, align 8' in ours
    assert _body(ours) == _body(r.stdout)


def test_a_pointer_exchange_prints_as_llvm_19_prints_it(llvm19):
    r = run_opt(llvm19.opt, ["-S", "-passes=verify"], POINTERS)
    assert r.returncode == 0, r.stderr
    ours = print_module(parse_module(POINTERS, "p.ll"), opaque=True)
    assert "acquire, align 8" in ours
    assert _body(ours) == _body(r.stdout)


@pytest.mark.parametrize(
    "line, message",
    [
        ("atomicrmw add i32* %c, i32 1 unordered", "atomicrmw cannot be unordered"),
        ("atomicrmw add float* %f, float 1.0 seq_cst", "atomicrmw add operand must be an integer"),
        ("atomicrmw fadd i32* %c, i32 1 seq_cst", "atomicrmw fadd operand must be a floating point type"),
        ("atomicrmw bogus i32* %c, i32 1 seq_cst", "expected binary operation in atomicrmw"),
    ],
)
def test_bad_updates_are_refused_with_llvms_message(llvm19, line, message):
    text = f"define void @f(i32* %c, float* %f) {{\n  %r = {line}\n  ret void\n}}\n"
    r = run_opt(llvm19.opt, ["-S"], text)
    assert r.returncode != 0 and message in r.stderr
    with pytest.raises(IRParseError) as e:
        parse_module(text, "bad.ll")
    assert "2:" in str(e.value) and message in str(e.value)
