"""place-safepoints against LLVM 14's ``opt -enable-new-pm=0 -place-safepoints`` on generated programs.

Functions from tests/gcprog_gen.py (loops with i64 counters, loops with calls, nested regions)
get a ``@gc.safepoint_poll`` with a branch in it, 50 functions to a module; both passes run on
the module as LLVM itself prints it, and the two results, printed again by LLVM, must be the
same text: the same polls in the same places with the same names.
"""
from __future__ import annotations

import random

import pytest

from gcprog_gen import generate_function, module_of
from gctoy.ir import parse_module, print_module
from gctoy.passes import run
from gctoy.llvm_tools import run_opt

POLL = """
@poll_flag = global i1 false
declare void @do_safepoint()
define void @gc.safepoint_poll() {
entry:
  %c = load volatile i1, i1* @poll_flag
  br i1 %c, label %slow, label %done
slow:
  call void @do_safepoint()
  br label %done
done:
  ret void
}
"""
COUNT, BATCH = 300, 50
SIZES = (10, 20, 40, 80, 120)


def _canonical(opt, text: str) -> str:
    r = run_opt(opt, ["-S", "-passes=verify"], text)
    assert r.returncode == 0, r.stderr
    return "\n".join(line for line in r.stdout.splitlines() if not line.startswith(("; ModuleID", "source_filename")))


@pytest.mark.parametrize("first", range(0, COUNT, BATCH), ids=lambda f: f"seeds{f}-{f + BATCH - 1}")
def test_same_polls_as_llvm14(llvm14, first):
    fns = [generate_function(s, random.Random(s).choice(SIZES)) for s in range(first, first + BATCH)]
    src = _canonical(llvm14.opt, module_of(fns) + POLL)
    theirs = run_opt(llvm14.opt, ["-S", "-enable-new-pm=0", "-place-safepoints"], src)
    assert theirs.returncode == 0, theirs.stderr
    m = parse_module(src, "generated.ll")
    run(m, "place-safepoints")
    ours, want = _canonical(llvm14.opt, print_module(m)), _canonical(llvm14.opt, theirs.stdout)
    if ours != want:
        import difflib

        diff = "\n".join(list(difflib.unified_diff(want.splitlines(), ours.splitlines(), "llvm14", "gctoy",
                                                   lineterm="", n=2))[:60])
        pytest.fail(f"place-safepoints differs from LLVM 14 on seeds {first}..{first + BATCH - 1}:\n{diff}")
    assert ours.count("gc.safepoint_poll.exit") > 0
