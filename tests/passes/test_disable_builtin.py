"""``-disable-builtin=NAME``: a C library function taken off LLVM's list (TargetLibraryInfo) is no GC
leaf any more. RewriteStatepointsForGC of LLVM 14 and 19 then wraps its calls; PlaceSafepoints of
LLVM 19 counts them as safepoints, while LLVM 14's legacy pass ignores the option (opt as the oracle)."""

from __future__ import annotations

import pytest

from gctoy.cli import main
from gctoy.llvm_flags import CommandLineError, split_llvm_flags
from gctoy.llvm_tools import run_opt

LIBCALL = """declare double @ldexp(double, i32)

define double @f(double %x, i8 addrspace(1)* %p) gc "statepoint-example" {
entry:
  %y = call double @ldexp(double %x, i32 5)
  store i8 0, i8 addrspace(1)* %p
  ret double %y
}
"""

LOOP = """declare double @ldexp(double, i32)
declare void @do_safepoint()

define void @gc.safepoint_poll() {
entry:
  call void @do_safepoint()
  ret void
}

define double @loop(double %x) gc "statepoint-example" {
entry:
  br label %loop

loop:
  %v = phi double [ %x, %entry ], [ %w, %loop ]
  %w = call double @ldexp(double %v, i32 5)
  %done = fcmp ogt double %w, 1.5
  br i1 %done, label %end, label %loop

end:
  ret double %w
}
"""

#: how each release's opt runs PlaceSafepoints (LLVM 14 has it in the legacy pass manager only)
PLACE = {14: ["-enable-new-pm=0", "-place-safepoints"], 19: ["-passes=place-safepoints"]}


def gctoy_opt(capsys, tmp_path, text: str, *args: str) -> str:
    src = tmp_path / "in.ll"
    src.write_text(text)
    assert main(["opt", "-S", *args, str(src)]) == 0
    out, err = capsys.readouterr()
    return out


def statepoints(text: str) -> int:
    return sum("@llvm.experimental.gc.statepoint" in line and "call token" in line for line in text.splitlines())


def loop_polls(text: str) -> int:
    """The polls in @loop's body (its entry poll and, if any, its backedge poll)."""
    body = text[text.index("@loop(") :]
    return body[: body.index("\n}")].count("call void @do_safepoint()")


@pytest.mark.parametrize("disabled", [False, True], ids=["builtin", "disabled"])
def test_rs4gc_wraps_a_disabled_library_call_as_llvm_does(llvm, capsys, tmp_path, disabled):
    flag = ["-disable-builtin=ldexp"] if disabled else []
    theirs = run_opt(llvm.opt, ["-S", "-passes=rewrite-statepoints-for-gc", *flag], LIBCALL)
    assert theirs.returncode == 0, theirs.stderr
    pipeline = "rewrite-statepoints-for-gc" + ("<llvm=19>" if llvm.version >= 15 else "")
    ours = gctoy_opt(capsys, tmp_path, LIBCALL, f"-passes={pipeline}", *flag)
    assert statepoints(ours) == statepoints(theirs.stdout) == (1 if disabled else 0)


@pytest.mark.parametrize("disabled", [False, True], ids=["builtin", "disabled"])
def test_place_safepoints_follows_each_release_on_a_disabled_library_call(llvm, capsys, tmp_path, disabled):
    flag = ["-disable-builtin=ldexp"] if disabled else []
    theirs = run_opt(llvm.opt, ["-S", *PLACE[llvm.version], *flag], LOOP)
    assert theirs.returncode == 0, theirs.stderr
    pipeline = "place-safepoints" + ("<llvm=19>" if llvm.version >= 15 else "")
    ours = gctoy_opt(capsys, tmp_path, LOOP, f"-passes={pipeline}", *flag)
    # entry poll always; the backedge poll goes only where a disabled ldexp counts as a safepoint (LLVM 19)
    expected = 1 if disabled and llvm.version >= 15 else 2
    assert loop_polls(ours) == loop_polls(theirs.stdout) == expected


def test_the_option_repeats_and_reaches_both_passes():
    rest, flags = split_llvm_flags(["-disable-builtin=ldexp", "-disable-builtin", "sqrt", "-S"], set())
    assert rest == ["-S"] and flags.values["disable-builtin"] == ("ldexp", "sqrt")
    for name in ("rewrite-statepoints-for-gc", "place-safepoints"):
        assert flags.pass_options(name) == ["disable-builtin=ldexp", "disable-builtin=sqrt"]


@pytest.mark.parametrize("argv", [["-disable-builtin"], ["-disable-builtin="], ["-disable-builtin=a b"]])
def test_the_option_needs_a_function_name(argv):
    with pytest.raises(CommandLineError, match="disable-builtin"):
        split_llvm_flags(argv, set())
