"""gctoy.book_support: the chapters' comparisons with LLVM 14, against the real opt, and without it."""

from __future__ import annotations

import pytest

from gctoy.book_support import NO_LLVM, compare_with_opt14, llvm14_verdict, reprinted, safepoint_verifier_report
from gctoy.book_support import (compare_place_safepoints_with_opt14, compare_safepoint_verifiers,
                                gctoy_safepoint_verdict, place_safepoints, spp_flags)
from gctoy.ir import parse_module

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


# --- PlaceSafepoints (chapter 05) ---------------------------------------------------------------------

POLLED = """\
declare void @foo()
declare void @do_safepoint()
define void @gc.safepoint_poll() {
  call void @do_safepoint()
  ret void
}
define void @f(i64 %n) gc "statepoint-example" {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %next, %loop ]
  %next = add i64 %i, 1
  %done = icmp uge i64 %next, %n
  br i1 %done, label %exit, label %loop
exit:
  ret void
}
"""


def _polls(module, name="f"):
    return sum(1 for i in module.get_function(name).instructions() if getattr(i, "callee_name", None) == "do_safepoint")


def test_gctoy_option_names_become_llvm_flags():
    assert spp_flags("") == []
    assert spp_flags("no-entry;trip-width=8") == ["-spp-no-entry", "-spp-counted-loop-trip-width=8"]
    with pytest.raises(KeyError):
        spp_flags("wrap-calls")          # gctoy's seed-004 era has no LLVM 14 flag


def test_place_safepoints_takes_the_options():
    assert _polls(place_safepoints(POLLED)) == 2                 # entry and back edge (i64 to %n: not counted)
    assert _polls(place_safepoints(POLLED, "no-entry")) == 1
    assert _polls(place_safepoints(POLLED, "no-entry;no-backedge")) == 0


def test_place_safepoints_agrees_with_llvm14_under_each_option(llvm14):
    for options in ("", "no-entry", "no-backedge", "split-backedge", "trip-width=64"):
        assert compare_place_safepoints_with_opt14(POLLED, options) == "same text", options


def test_place_safepoints_comparison_shows_a_diff(llvm14):
    # LLVM 14 places its entry poll; gctoy told not to: the comparison is the diff, not 'same text'
    from gctoy.ir import print_module

    diff = compare_with_opt14(POLLED, print_module(place_safepoints(POLLED, "no-entry")),
                              "-enable-new-pm=0", "-place-safepoints")
    assert diff.startswith("--- LLVM 14") and "-  call void @do_safepoint()" in diff


# --- the safepoint verifier (chapter 06) --------------------------------------------------------------

def test_gctoy_verdict_names_the_unrelocated_use():
    assert gctoy_safepoint_verdict(parse_module(UNRELOCATED)) == {"g": [("%obj", "ret")]}


def test_safepoint_verdicts_agree_with_llvm14(llvm14):
    said = compare_safepoint_verifiers(parse_module(UNRELOCATED))
    assert said.endswith("-> gctoy and LLVM 14 agree: {'g': [('%obj', 'ret')]}")
    assert "Verifying gc pointers in function: g" in said
    assert compare_safepoint_verifiers(parse_module(UNRELOCATED), show=False).startswith("-> gctoy")


def test_chapter_05_and_06_comparisons_without_llvm(monkeypatch):
    monkeypatch.setenv("GCTOY_LLVM_PATH", "")
    assert compare_place_safepoints_with_opt14(POLLED, "no-entry") == NO_LLVM
    assert compare_safepoint_verifiers(parse_module(UNRELOCATED)) == NO_LLVM


# --- llc 14: assembly, stack map, disassembly ----------------------------------------------------

from gctoy.book_support import (  # noqa: E402
    NO_LLC, llc14_asm, llc14_disassembly, llc14_stackmap, not_installed)

PATCHED = """\
declare void @foo()
declare token @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 immarg, i32 immarg, void ()*, i32 immarg, i32 immarg, ...)
define void @patched() gc "statepoint-example" {
  %tok = call token (i64, i32, void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 42, i32 8, void ()* @foo, i32 0, i32 0, i32 0, i32 0)
  ret void
}
"""


def test_llc14_assembly_of_a_statepoint(llvm14):
    asm = llc14_asm(PATCHED)
    assert "patched:" in asm and ".llvm_stackmaps" in asm
    assert "callq" not in asm.split("patched:")[1].split(".Lfunc_end0")[0]   # 8 patch bytes: nops, no call
    with pytest.raises(RuntimeError, match="error"):
        llc14_asm(BAD)


def test_llc14_stack_map_names_the_statepoint_id(llvm14):
    assert "Record ID: 42" in llc14_stackmap(PATCHED)


def test_llc14_disassembly_shows_the_patch_bytes(llvm14):
    import shutil
    if shutil.which("objdump") is None:
        pytest.skip("objdump (GNU binutils) is not installed")
    listing = llc14_disassembly(PATCHED)
    assert "<patched>:" in listing and "nop" in listing


def test_without_llvm_the_llc_helpers_say_so(monkeypatch):
    monkeypatch.setenv("GCTOY_LLVM_PATH", "")
    assert llc14_asm(PATCHED) == NO_LLC
    assert llc14_stackmap(PATCHED) == NO_LLC
    assert llc14_disassembly(PATCHED) == NO_LLC
    assert all(not_installed(said) for said in (NO_LLC, NO_LLVM, llvm14_verdict(GOOD), llc14_stackmap(PATCHED)))


def test_tool_output_is_not_a_not_installed_sentence(llvm14):
    assert not not_installed(llc14_stackmap(PATCHED)) and not not_installed(llc14_asm(PATCHED))
    assert not not_installed("(a comment that does not say so) ... not installed")


def test_with_llc_but_without_readobj_or_objdump_they_name_the_missing_tool(llvm14, tmp_path, monkeypatch):
    (tmp_path / "llc-14").symlink_to(llvm14.llc)          # only llc where gctoy looks for LLVM
    monkeypatch.setenv("GCTOY_LLVM_PATH", str(tmp_path))
    monkeypatch.setenv("PATH", str(tmp_path))             # and no objdump on PATH
    assert "patched:" in llc14_asm(PATCHED)
    assert llc14_stackmap(PATCHED) == "(LLVM 14's llvm-readobj is not installed)"
    assert llc14_disassembly(PATCHED) == "(objdump is not installed)"
