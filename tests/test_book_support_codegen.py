"""gctoy.book_support's llc helpers: LLVM 14's code generator, against the real llc, and without it."""

from __future__ import annotations

import pytest

from gctoy.book_support import (NO_LLC, compare_shadow_stack_lowering, compare_with_llc14, llc14, llc14_ir_after,
                                llc14_path)
from gctoy.ir import parse_module, print_module
from gctoy.passes import run

ONE_ROOT = """\
declare void @llvm.gcroot(i8**, i8*)
declare void @g()

define void @f() gc "shadow-stack" {
entry:
  %r = alloca i8*
  call void @llvm.gcroot(i8** %r, i8* null)
  call void @g()
  ret void
}
"""


def shadow_stack_lowered(text: str) -> str:
    module = parse_module(text)
    run(module, "shadow-stack-gc-lowering")
    return print_module(module)


def test_llc_compiles_and_reports_its_failures(llvm14):
    status, asm, err = llc14(ONE_ROOT.replace("shadow-stack", "ocaml"), "-O0")
    assert status == 0, err
    assert "__frametable" in asm                      # the OCaml printer's table
    status, _, err = llc14(ONE_ROOT.replace("shadow-stack", "no-such-gc"))
    assert status != 0 and "unsupported GC: no-such-gc" in err


def test_ir_after_a_pass_is_the_unindented_ir_part_of_the_mir_file(llvm14):
    after = llc14_ir_after(ONE_ROOT, "shadow-stack-gc-lowering")
    assert after.startswith("; ModuleID") and "@llvm_gc_root_chain" in after
    assert "define void @f()" in after and "\n  %gc_frame = alloca" in after   # one level of indentation, not two
    assert "---" not in after and "\n..." not in after
    with pytest.raises(RuntimeError, match="error"):
        llc14_ir_after("define i32 @f() {\n  ret i64 0\n}\n", "shadow-stack-gc-lowering")


def test_shadow_stack_lowering_agrees_and_a_change_shows_as_a_diff(llvm14):
    ours = shadow_stack_lowered(ONE_ROOT)
    assert compare_shadow_stack_lowering(ONE_ROOT, ours) == "same text"
    changed = ours.replace("%gc_map { i32 1, i32 0 }", "%gc_map { i32 2, i32 0 }")   # NumRoots 2 instead of 1
    diff = compare_shadow_stack_lowering(ONE_ROOT, changed)
    assert diff.startswith("--- LLVM 14\n+++ gctoy"), diff
    assert "\n-@__gc_f" in diff and "\n+@__gc_f = internal constant %gc_map.0 { %gc_map { i32 2" in diff
    assert compare_with_llc14("not IR", ours, "shadow-stack-gc-lowering").startswith("(LLVM 14's llc failed:")


def test_without_llvm_every_function_says_so(monkeypatch):
    monkeypatch.setenv("GCTOY_LLVM_PATH", "")   # how gctoy.llvm_tools hides LLVM
    assert llc14_path() is None
    assert compare_shadow_stack_lowering(ONE_ROOT, ONE_ROOT) == NO_LLC
    assert compare_with_llc14(ONE_ROOT, ONE_ROOT, "gc-lowering") == NO_LLC
    with pytest.raises(RuntimeError, match="not installed"):
        llc14(ONE_ROOT)
    with pytest.raises(RuntimeError, match="not installed"):
        llc14_ir_after(ONE_ROOT, "gc-lowering")


def test_with_a_chapters_results_llvm_answers_from_its_store_where_it_is_hidden(tmp_path, monkeypatch, llvm14):
    import gctoy.llvm_results as lr
    from gctoy.book_support import llvm14_verdict, llvm_error

    monkeypatch.setattr(lr, "STORE", tmp_path)
    monkeypatch.setenv(lr.REFRESH_ENV, "1")   # store LLVM 14's answers
    ours = shadow_stack_lowered(ONE_ROOT)
    unknown = ONE_ROOT.replace("shadow-stack", "no-such-gc")
    live = lr.LLVMResults("t")
    assert compare_shadow_stack_lowering(ONE_ROOT, ours, live) == "same text"
    assert llvm14_verdict("define i32 @f() {\n  ret i64 0\n}\n", live).startswith("<stdin>:2:")
    status, _, err = llc14(unknown, results=live)
    assert status != 0 and llvm_error(err) == "LLVM ERROR: unsupported GC: no-such-gc"
    monkeypatch.delenv(lr.REFRESH_ENV)
    monkeypatch.setenv("GCTOY_LLVM_PATH", "")   # no LLVM: the stored answers
    hidden = lr.LLVMResults("t")
    assert compare_shadow_stack_lowering(ONE_ROOT, ours, hidden) == "same text"
    assert llvm14_verdict("define i32 @f() {\n  ret i64 0\n}\n", hidden).startswith("<stdin>:2:")
    assert llc14(unknown, results=hidden) == (status, "", err)
    assert compare_shadow_stack_lowering(ONE_ROOT, ours) == NO_LLC   # without the chapter's results
    with pytest.raises(lr.StoredResultError):   # gctoy's text changed: LLVM's reprint of it was never stored
        compare_shadow_stack_lowering(ONE_ROOT, ours.replace("i32 1, i32 0", "i32 2, i32 0"), hidden)
