"""place-safepoints against LLVM 14's and LLVM 19's on generated programs.

Functions from tests/gcprog_gen.py (loops with i64 counters, loops with calls, nested regions)
get a ``@gc.safepoint_poll`` with a branch in it, 50 functions to a module; both passes run on
the module as LLVM itself prints it, and the two results, printed again by LLVM, must be the
same text: the same polls in the same places with the same names.

LLVM 14 has the pass only in the legacy pass manager (``opt -enable-new-pm=0
-place-safepoints``) and reads typed pointers; LLVM 19 has it only in the new one
(``opt -passes=place-safepoints``) and reads ``ptr``, so for it the module is printed with
opaque pointers (by gctoy's printer) first. The LLVM 19 runs are skipped where it is not
installed.
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


#: how each release's opt runs the pass
PASS_ARGS = {14: ["-enable-new-pm=0", "-place-safepoints"], 19: ["-passes=place-safepoints"]}


@pytest.fixture(scope="module", params=sorted(PASS_ARGS), ids=lambda v: f"llvm{v}")
def llvm(request):
    """LLVM 14, then LLVM 19 (each skipped where it is not installed)."""
    return request.getfixturevalue(f"llvm{request.param}")


def _canonical(opt, text: str) -> str:
    r = run_opt(opt, ["-S", "-passes=verify"], text)
    assert r.returncode == 0, r.stderr
    return "\n".join(line for line in r.stdout.splitlines() if not line.startswith(("; ModuleID", "source_filename")))


@pytest.mark.parametrize("first", range(0, COUNT, BATCH), ids=lambda f: f"seeds{f}-{f + BATCH - 1}")
def test_same_polls_as_llvm(llvm, first):
    opaque = llvm.version >= 15
    fns = [generate_function(s, random.Random(s).choice(SIZES)) for s in range(first, first + BATCH)]
    src = module_of(fns) + POLL
    if opaque:
        src = print_module(parse_module(src, "generated.ll"), opaque=True)
    src = _canonical(llvm.opt, src)
    theirs = run_opt(llvm.opt, ["-S", *PASS_ARGS[llvm.version]], src)
    assert theirs.returncode == 0, theirs.stderr
    m = parse_module(src, "generated.ll")
    run(m, "place-safepoints" if llvm.version == 14 else f"place-safepoints<llvm={llvm.version}>")
    ours, want = _canonical(llvm.opt, print_module(m, opaque=opaque)), _canonical(llvm.opt, theirs.stdout)
    if ours != want:
        import difflib

        diff = "\n".join(list(difflib.unified_diff(want.splitlines(), ours.splitlines(), f"llvm{llvm.version}",
                                                   "gctoy", lineterm="", n=2))[:60])
        pytest.fail(f"place-safepoints differs from LLVM {llvm.version} on seeds {first}..{first + BATCH - 1}:\n{diff}")
    assert ours.count("gc.safepoint_poll.exit") > 0
