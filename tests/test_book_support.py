"""gctoy.book_support: the chapters' comparisons with LLVM 14, against the real opt, and without it."""

from __future__ import annotations

import pytest

from gctoy.book_support import NO_LLVM, compare_with_opt14, llvm14_verdict, reprinted, safepoint_verifier_report

GOOD = "define i32 @f(i32 %x) {\n  %y = add i32 %x, 1\n  ret i32 %y\n}\n"
BAD = "define i32 @f(i32 %x) {\n  ret i64 0\n}\n"
UNRELOCATED = """\
declare void @foo()
declare token @llvm.experimental.gc.statepoint.p0f_isVoidf(i64, i32, void ()*, i32, i32, ...)
define i8 addrspace(1)* @g(i8 addrspace(1)* %obj) gc "statepoint-example" {
  %t = call token (i64, i32, void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 0, i32 0, void ()* @foo, i32 0, i32 0, i32 0, i32 0) [ "gc-live"(i8 addrspace(1)* %obj) ]
  ret i8 addrspace(1)* %obj
}
"""


def test_verdicts_of_llvm14(llvm14):
    assert llvm14_verdict(GOOD) == "accepted"
    assert "error" in llvm14_verdict(BAD)


def test_comparison_says_same_text_or_shows_a_diff(llvm14):
    assert compare_with_opt14(GOOD, GOOD) == "same text"
    other = GOOD.replace("add i32 %x, 1", "add i32 %x, 2")
    diff = compare_with_opt14(GOOD, other)
    assert diff.startswith("--- LLVM 14") and "+  %y = add i32 %x, 2" in diff
    assert "ModuleID" not in reprinted(GOOD)


def test_safepoint_verifier_report_names_the_unrelocated_use(llvm14):
    verdict, report = safepoint_verifier_report(UNRELOCATED)
    assert verdict == {"g": [("%obj", "ret")]}, report


def test_without_llvm_every_function_says_so(monkeypatch):
    monkeypatch.setenv("GCTOY_LLVM_PATH", "")   # how gctoy.llvm_tools hides LLVM
    assert llvm14_verdict(GOOD) == "(LLVM 14's opt is not installed)"
    assert compare_with_opt14(GOOD, GOOD) == NO_LLVM
    with pytest.raises(RuntimeError, match="not installed"):
        safepoint_verifier_report(GOOD)
