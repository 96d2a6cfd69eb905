"""A call of inline asm is no safepoint. PlaceSafepoints of LLVM 14 and 19 does not count it (a loop whose
only call is inline asm still gets its backedge poll); their RewriteStatepointsForGC wraps it in a
statepoint all the same, which their own verifier then rejects. gctoy's RS4GC leaves it a plain call, and
`gctoy llc` refuses it with one located message (opt and llc as the oracles)."""

from __future__ import annotations

import pytest

from gctoy.cli import main
from gctoy.llvm_tools import run_opt

ASM_CALLS = """define i32 @f(i8 addrspace(1)* %p) gc "statepoint-example" {
entry:
  call void asm sideeffect "nop", ""()
  %x = call i32 asm "mov $1, $0", "=r,r"(i32 7)
  store i8 0, i8 addrspace(1)* %p
  ret i32 %x
}
"""

LOOP = """declare void @do_safepoint()

define void @gc.safepoint_poll() {
entry:
  call void @do_safepoint()
  ret void
}

define void @loop(i8 addrspace(1)* %p) gc "statepoint-example" {
entry:
  br label %loop

loop:
  call void asm sideeffect "nop", ""()
  br label %loop
}
"""

#: how each release's opt runs PlaceSafepoints (LLVM 14 has it in the legacy pass manager only)
PLACE = {14: ["-enable-new-pm=0", "-place-safepoints"], 19: ["-passes=place-safepoints"]}


def gctoy(capsys, tmp_path, text: str, *args: str) -> tuple[int, str, str]:
    src = tmp_path / "in.ll"
    src.write_text(text)
    status = main([*args, str(src)])
    out, err = capsys.readouterr()
    return status, out, err


def loop_polls(text: str) -> int:
    body = text[text.index("@loop(") :]
    return body[: body.index("\n}")].count("call void @do_safepoint()")


def test_place_safepoints_keeps_the_backedge_poll_of_an_inline_asm_loop(llvm, capsys, tmp_path):
    theirs = run_opt(llvm.opt, ["-S", *PLACE[llvm.version]], LOOP)
    assert theirs.returncode == 0, theirs.stderr
    pipeline = "place-safepoints" + ("<llvm=19>" if llvm.version >= 15 else "")
    status, ours, err = gctoy(capsys, tmp_path, LOOP, "opt", "-S", f"-passes={pipeline}")
    assert status == 0, err
    assert loop_polls(ours) == loop_polls(theirs.stdout) == 2  # the entry poll and the backedge poll


def test_llvm_rs4gc_wraps_inline_asm_and_its_verifier_rejects_the_result(llvm):
    """The reason gctoy departs from LLVM here: LLVM's own output is not a valid module."""
    text = ASM_CALLS if llvm.version == 14 else ASM_CALLS.replace("i8 addrspace(1)*", "ptr addrspace(1)")
    theirs = run_opt(llvm.opt, ["-S", "-passes=rewrite-statepoints-for-gc"], text)
    assert theirs.returncode != 0
    assert "Cannot take the address of an inline asm!" in theirs.stderr


def test_gctoy_rs4gc_leaves_inline_asm_calls_alone(capsys, tmp_path):
    status, ours, err = gctoy(capsys, tmp_path, ASM_CALLS, "opt", "-S", "-passes=rewrite-statepoints-for-gc")
    assert status == 0, err
    assert "gc.statepoint" not in ours
    assert 'call void asm sideeffect "nop", ""()' in ours
    assert '%x = call i32 asm "mov $1, $0", "=r,r"(i32 7)' in ours


def test_gctoy_rs4gc_output_passes_llvm_verifier(llvm14, capsys, tmp_path):
    status, ours, err = gctoy(capsys, tmp_path, ASM_CALLS, "opt", "-S", "-passes=rewrite-statepoints-for-gc")
    assert status == 0, err
    checked = run_opt(llvm14.opt, ["-S", "-passes=verify"], ours)
    assert checked.returncode == 0, checked.stderr


@pytest.mark.parametrize("target", ["x86-64", "x86-32"])
def test_llc_refuses_inline_asm_in_a_gc_function_at_its_line(capsys, tmp_path, target):
    status, out, err = gctoy(capsys, tmp_path, ASM_CALLS, "llc", f"--target={target}")
    assert status == 1
    assert err.strip().endswith("in.ll:3:3: error: inline asm is not supported by gctoy llc")
