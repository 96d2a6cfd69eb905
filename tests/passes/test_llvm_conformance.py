"""Small programs on which gctoy's passes must do exactly what LLVM 14 and LLVM 19 do.

Each test runs the real ``opt`` (or ``llc``) of the release as the oracle; the LLVM 19 runs
read the same programs printed with opaque pointers. Both outputs are printed again by LLVM
before they are compared, so only what the pass did counts, not how gctoy spaces its text.
"""
from __future__ import annotations

import pytest

from gctoy.ir import parse_module, print_module
from gctoy.passes import run
from llvm_tools import run_opt


@pytest.fixture(params=[14, 19], ids=lambda v: f"llvm{v}")
def llvm(request):
    """LLVM 14, then LLVM 19 (each skipped where it is not installed)."""
    return request.getfixturevalue(f"llvm{request.param}")


def in_style(llvm, typed_text: str) -> str:
    """``typed_text`` as ``llvm``'s opt reads it (``ptr`` from LLVM 15 on)."""
    if llvm.version < 15:
        return typed_text
    return print_module(parse_module(typed_text, "test.ll"), opaque=True)


def canonical(llvm, text: str) -> str:
    """``text`` as ``llvm``'s opt prints it, without the module header; fails if opt rejects it."""
    r = run_opt(llvm.opt, ["-S", "-passes=verify"], text)
    assert r.returncode == 0, f"LLVM {llvm.version} rejects:\n{r.stderr}\n{text}"
    return "\n".join(line for line in r.stdout.splitlines() if not line.startswith(("; ModuleID", "source_filename")))


def both(llvm, typed_text: str, passes: str, opt_args: list[str]) -> tuple[str, str]:
    """(LLVM's output, gctoy's output) of the same passes on the same module, printed by LLVM."""
    src = canonical(llvm, in_style(llvm, typed_text))
    theirs = run_opt(llvm.opt, ["-S", *opt_args], src)
    assert theirs.returncode == 0, theirs.stderr
    m = parse_module(src, "test.ll")
    run(m, passes)
    return canonical(llvm, theirs.stdout), canonical(llvm, print_module(m, opaque=llvm.version >= 15))


# ---------------------------------------------------------------------------
# llvm.experimental.deoptimize

DEOPTIMIZE = """
declare i32 @llvm.experimental.deoptimize.i32(...)
declare void @llvm.experimental.deoptimize.isVoid(...)
declare void @foo()

define i32 @f(i8 addrspace(1)* %p, i32 %x) gc "statepoint-example" {
entry:
  call void @foo()
  %c = icmp eq i32 %x, 0
  br i1 %c, label %deopt, label %done
deopt:
  %r = call i32 (...) @llvm.experimental.deoptimize.i32(i32 %x, i8 addrspace(1)* %p) [ "deopt"(i32 %x, i8 addrspace(1)* %p) ]
  ret i32 %r
done:
  ret i32 1
}

define void @g(i8 addrspace(1)* %p) gc "statepoint-example" {
entry:
  call void (...) @llvm.experimental.deoptimize.isVoid(i8 addrspace(1)* %p) [ "deopt"(i8 addrspace(1)* %p) ]
  ret void
}
"""


def test_deoptimize_becomes_a_statepoint_of_llvm_deoptimize(llvm):
    theirs, ours = both(llvm, DEOPTIMIZE, "rewrite-statepoints-for-gc", ["-passes=rewrite-statepoints-for-gc"])
    assert "@__llvm_deoptimize" in theirs and "unreachable" in theirs
    assert ours == theirs
