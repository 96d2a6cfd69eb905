"""RewriteStatepointsForGC (and the safepoint verifier) on small programs, LLVM 14 and 19 as oracles.

``freeze``, what the pass does to a function before it rewrites (terminators with a known outcome,
unreachable blocks), LLVM's option spellings on ``gctoy opt``, and the pass's reports. Each
comparison runs the real ``opt`` of the release; gctoy's pass runs with ``llvm=19`` against LLVM 19.
Both outputs are printed again by the same LLVM, so only what the pass did counts.
"""
from __future__ import annotations

import subprocess
import sys

import pytest

from gctoy.errors import IRParseError
from gctoy.ir import parse_module, print_module
from gctoy.llvm_tools import run_opt
from gctoy.passes import run
from gctoy.passes.verify_safepoints import find_unrelocated_uses


def canonical(llvm, text: str) -> str:
    """``text`` as ``llvm``'s opt prints it, without the module header; fails if opt rejects it."""
    r = run_opt(llvm.opt, ["-S", "-passes=verify"], text)
    assert r.returncode == 0, f"LLVM {llvm.version} rejects:\n{r.stderr}\n{text}"
    return "\n".join(line for line in r.stdout.splitlines() if not line.startswith(("; ModuleID", "source_filename")))


def in_style(llvm, typed_text: str) -> str:
    """``typed_text`` as ``llvm``'s opt reads it (``ptr`` from LLVM 15 on)."""
    if llvm.version < 15:
        return typed_text
    return print_module(parse_module(typed_text, "test.ll"), opaque=True)


def rs4gc_both(llvm, typed_text: str, opt_flags: tuple[str, ...] = (), options: str = "") -> tuple[str, str]:
    """(LLVM's RS4GC output, gctoy's) for the same module, both printed by ``llvm``."""
    src = canonical(llvm, in_style(llvm, typed_text))
    theirs = run_opt(llvm.opt, ["-S", "-passes=rewrite-statepoints-for-gc", *opt_flags], src)
    assert theirs.returncode == 0, theirs.stderr
    m = parse_module(src, "test.ll")
    opts = ";".join(filter(None, [options, "llvm=19" if llvm.version >= 15 else ""]))
    run(m, f"rewrite-statepoints-for-gc<{opts}>" if opts else "rewrite-statepoints-for-gc")
    return canonical(llvm, theirs.stdout), canonical(llvm, print_module(m, opaque=llvm.version >= 15))


def _without_declarations(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if not line.startswith("declare"))


def gctoy_opt(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    """``gctoy opt ARGS`` in a subprocess."""
    return subprocess.run([sys.executable, "-m", "gctoy", "opt", *args], input=stdin, capture_output=True,
                          text=True, timeout=120)


# ---------------------------------------------------------------------------
# freeze

FREEZE = """
declare void @f()

define i8 addrspace(1)* @frozen_arg(i8 addrspace(1)* %p) gc "statepoint-example" {
  %a = freeze i8 addrspace(1)* %p
  call void @f()
  ret i8 addrspace(1)* %a
}

define i64 addrspace(1)* @frozen_derived(i8 addrspace(1)* %p, i64 %k) gc "statepoint-example" {
  %a = freeze i8 addrspace(1)* %p
  %g = getelementptr i8, i8 addrspace(1)* %a, i64 %k
  %c = bitcast i8 addrspace(1)* %g to i64 addrspace(1)*
  %z = freeze i64 addrspace(1)* %c
  call void @f()
  ret i64 addrspace(1)* %z
}

define i8 addrspace(1)* @frozen_phi(i1 %c, i8 addrspace(1)* %p, i8 addrspace(1)* %q) gc "statepoint-example" {
entry:
  br i1 %c, label %l, label %r
l:
  %pl = getelementptr i8, i8 addrspace(1)* %p, i64 8
  %fl = freeze i8 addrspace(1)* %pl
  br label %m
r:
  %fr = freeze i8 addrspace(1)* %q
  br label %m
m:
  %v = phi i8 addrspace(1)* [ %fl, %l ], [ %fr, %r ]
  %i = freeze i64 7
  call void @f()
  ret i8 addrspace(1)* %v
}

define <2 x i8 addrspace(1)*> @frozen_vector(<2 x i8 addrspace(1)*> %v) gc "statepoint-example" {
  %g = getelementptr i8, <2 x i8 addrspace(1)*> %v, <2 x i64> <i64 1, i64 2>
  %f = freeze <2 x i8 addrspace(1)*> %g
  call void @f()
  ret <2 x i8 addrspace(1)*> %f
}
"""


def test_freeze_is_parsed_and_printed_as_llvm_prints_it(llvm):
    src = in_style(llvm, FREEZE)
    assert canonical(llvm, print_module(parse_module(src, "t.ll"), opaque=llvm.version >= 15)) == canonical(llvm, src)


def test_freeze_of_a_label_is_refused_with_its_place():
    with pytest.raises(IRParseError) as e:
        parse_module("define void @f() {\nentry:\n  %a = freeze label %entry\n  ret void\n}\n", "t.ll")
    assert "freeze" in str(e.value) and "label" in str(e.value) and "t.ll:3:" in str(e.value)


def test_freeze_bases_as_each_release_finds_them(llvm):
    # LLVM 14: a freeze is a base of its own; LLVM 19: its base is its operand's
    theirs, ours = rs4gc_both(llvm, FREEZE)
    assert ours == theirs


# ---------------------------------------------------------------------------
# the safepoint verifier and freeze (LLVM 19's answers)

VERIFY_FREEZE = """
declare void @f()
declare token @llvm.experimental.gc.statepoint.p0(i64 immarg, i32 immarg, ptr, i32 immarg, i32 immarg, ...)
@G = addrspace(1) global i8 1

define ptr addrspace(1) @frozen_null() gc "statepoint-example" {
  %c = freeze ptr addrspace(1) null
  %t = call token (i64, i32, ptr, i32, i32, ...) @llvm.experimental.gc.statepoint.p0(i64 0, i32 0, ptr elementtype(void ()) @f, i32 0, i32 0, i32 0, i32 0)
  ret ptr addrspace(1) %c
}

define ptr addrspace(1) @frozen_constant_derived(i64 %x) gc "statepoint-example" {
  %i = inttoptr i64 15 to ptr addrspace(1)
  %c = freeze ptr addrspace(1) %i
  %g = getelementptr i8, ptr addrspace(1) %c, i64 %x
  %t = call token (i64, i32, ptr, i32, i32, ...) @llvm.experimental.gc.statepoint.p0(i64 0, i32 0, ptr elementtype(void ()) @f, i32 0, i32 0, i32 0, i32 0)
  ret ptr addrspace(1) %g
}

define ptr addrspace(1) @frozen_object(ptr addrspace(1) %p) gc "statepoint-example" {
  %c = freeze ptr addrspace(1) %p
  %t = call token (i64, i32, ptr, i32, i32, ...) @llvm.experimental.gc.statepoint.p0(i64 0, i32 0, ptr elementtype(void ()) @f, i32 0, i32 0, i32 0, i32 0)
  ret ptr addrspace(1) %c
}

define i1 @frozen_global_against_object(ptr addrspace(1) %p) gc "statepoint-example" {
  %c = freeze ptr addrspace(1) @G
  %t = call token (i64, i32, ptr, i32, i32, ...) @llvm.experimental.gc.statepoint.p0(i64 0, i32 0, ptr elementtype(void ()) @f, i32 0, i32 0, i32 0, i32 0)
  %e = icmp eq ptr addrspace(1) %c, %p
  ret i1 %e
}
"""


def _llvm_verdicts(llvm19) -> dict[str, bool]:
    r = run_opt(llvm19.opt, ["-passes=verify<safepoint-ir>", "-safepoint-ir-verifier-print-only",
                             "-disable-output"], VERIFY_FREEZE)
    verdicts, current = {}, None
    for line in r.stderr.splitlines():
        if line.startswith("Verifying gc pointers in function: "):
            current = line.split(": ", 1)[1]
            verdicts[current] = True
        elif line.startswith("Illegal use") and current is not None:
            verdicts[current] = False
    return verdicts


def test_verifier_looks_through_freeze_as_llvm19_does(llvm19):
    m = parse_module(VERIFY_FREEZE, "t.ll")
    ours = {fn.name: not find_unrelocated_uses(fn) for fn in m.definitions()}
    assert ours == {"frozen_null": True, "frozen_constant_derived": True, "frozen_object": False,
                    "frozen_global_against_object": False}
    assert ours == _llvm_verdicts(llvm19)


def test_verifier_reports_the_object_compared_with_a_frozen_global():
    fn = parse_module(VERIFY_FREEZE, "t.ll").get_function("frozen_global_against_object")
    assert [u.value.name for u in find_unrelocated_uses(fn)] == ["p"]


# ---------------------------------------------------------------------------
# what LLVM's pass does before rewriting (removeUnreachableBlocks and its terminator folding)

FOLDING = """
declare void @f()
declare void @stop() noreturn

define i8 addrspace(1)* @constant_branch(i8 addrspace(1)* %p, i8 addrspace(1)* %q) gc "statepoint-example" {
entry:
  br i1 true, label %live, label %dead
live:
  br i1 false, label %dead, label %join
dead:
  call void @f()
  br label %join
join:
  %v = phi i8 addrspace(1)* [ %p, %live ], [ %q, %dead ]
  call void @f()
  ret i8 addrspace(1)* %v
}

define i8 addrspace(1)* @same_target(i1 %c, i8 addrspace(1)* %p) gc "statepoint-example" {
entry:
  br i1 %c, label %next, label %next
next:
  %v = phi i8 addrspace(1)* [ %p, %entry ], [ %p, %entry ]
  call void @f()
  ret i8 addrspace(1)* %v
}

define i8 addrspace(1)* @switches(i32 %k, i8 addrspace(1)* %p, i8 addrspace(1)* %q) gc "statepoint-example" {
entry:
  switch i32 %k, label %a [ i32 1, label %a
                            i32 2, label %b ]
a:
  switch i32 %k, label %c [ i32 4, label %c ]
b:
  switch i32 3, label %c [ i32 3, label %d
                           i32 5, label %e ]
c:
  %vc = phi i8 addrspace(1)* [ %p, %a ], [ %p, %a ], [ %q, %b ]
  call void @f()
  ret i8 addrspace(1)* %vc
d:
  call void @f()
  ret i8 addrspace(1)* %p
e:
  call void @f()
  ret i8 addrspace(1)* %q
}

define i8 addrspace(1)* @after_noreturn(i1 %c, i8 addrspace(1)* %p) gc "statepoint-example" {
entry:
  br i1 %c, label %stops, label %join
stops:
  call void @stop()
  call void @f()
  br label %join
join:
  %v = phi i8 addrspace(1)* [ %p, %stops ], [ null, %entry ]
  call void @f()
  ret i8 addrspace(1)* %v
}
"""


def test_terminators_with_a_known_outcome_are_folded_before_rewriting(llvm):
    theirs, ours = rs4gc_both(llvm, FOLDING)
    assert "@f, " in ours and ours.count("@stop") >= 1
    assert ours == theirs


NO_CALLS = """
define i8 addrspace(1)* @no_calls(i1 %c, i8 addrspace(1)* %p) gc "statepoint-example" {
entry:
  br label %next
next:
  %single = phi i8 addrspace(1)* [ %p, %entry ]
  %cmp = icmp eq i8 addrspace(1)* %single, null
  br i1 true, label %out, label %never
never:
  br label %out
out:
  %v = phi i8 addrspace(1)* [ %single, %next ], [ null, %never ]
  br i1 %cmp, label %x, label %y
x:
  ret i8 addrspace(1)* %v
y:
  ret i8 addrspace(1)* null
}

define i8 addrspace(1)* @dereferenceable_result(i8 addrspace(1)* dereferenceable(8) %p) gc "statepoint-example" {
entry:
  br i1 false, label %never, label %done
never:
  br label %done
done:
  ret i8 addrspace(1)* %p
}
"""


def test_a_function_without_calls_only_loses_its_dead_code(llvm):
    # LLVM keeps the single-entry phi and the icmp where they are when there is nothing to
    # rewrite, but deleting blocks is a change: the module's attributes are stripped
    theirs, ours = rs4gc_both(llvm, NO_CALLS)
    assert "%single = phi" in ours and "dereferenceable(8)" not in ours
    assert ours == theirs


# ---------------------------------------------------------------------------
# llvm.invariant.start

INVARIANT_START = """
declare void @f()
declare {}* @llvm.invariant.start.p1i8(i64, i8 addrspace(1)* nocapture)
declare void @llvm.invariant.end.p1i8({}*, i64, i8 addrspace(1)* nocapture)
declare void @keep({}*)

define i8 @g(i8 addrspace(1)* %p) gc "statepoint-example" {
  %s = call {}* @llvm.invariant.start.p1i8(i64 1, i8 addrspace(1)* %p)
  %v = load i8, i8 addrspace(1)* %p
  call void @f()
  call void @keep({}* %s)
  call void @llvm.invariant.end.p1i8({}* %s, i64 1, i8 addrspace(1)* %p)
  ret i8 %v
}
"""


def test_invariant_start_is_deleted_and_its_uses_are_undef(llvm):
    theirs, ours = rs4gc_both(llvm, INVARIANT_START)
    assert "invariant.start.p" not in _without_declarations(ours) and "invariant.end" in ours
    assert ours == theirs


# ---------------------------------------------------------------------------
# LLVM's option spellings on the command line

DERIVED = """
declare void @f()

define i8 addrspace(1)* @d(i8 addrspace(1)* %p) gc "statepoint-example" {
  %g = getelementptr i8, i8 addrspace(1)* %p, i64 16
  call void @f()
  ret i8 addrspace(1)* %g
}
"""


@pytest.mark.parametrize("flags", [
    ("-spp-rematerialization-threshold=0",),
    ("--spp-rematerialization-threshold=0",),
    ("-spp-rematerialization-threshold", "0"),
    (),
])
def test_remat_threshold_as_llvm_spells_it_from_standard_input(llvm14, flags):
    theirs = run_opt(llvm14.opt, ["-S", "-passes=rewrite-statepoints-for-gc", *flags], DERIVED)
    ours = gctoy_opt("-S", "-passes=rewrite-statepoints-for-gc", *flags, stdin=DERIVED)
    assert ours.returncode == 0, ours.stderr
    assert canonical(llvm14, ours.stdout) == canonical(llvm14, theirs.stdout)
    assert ("%g.remat" in ours.stdout) == (not flags)


def test_legacy_pass_flag_runs_the_pass(llvm14):
    theirs = run_opt(llvm14.opt, ["-S", "-rewrite-statepoints-for-gc", "-spp-rematerialization-threshold=0"], DERIVED)
    ours = gctoy_opt("-S", "-rewrite-statepoints-for-gc", "-spp-rematerialization-threshold=0", stdin=DERIVED)
    assert ours.returncode == 0, ours.stderr
    assert canonical(llvm14, ours.stdout) == canonical(llvm14, theirs.stdout)


LOOP = """
declare void @f()

define void @gc.safepoint_poll() {
entry:
  call void @f()
  ret void
}

define void @loop(i64 %n) gc "statepoint-example" {
entry:
  br label %head
head:
  %i = phi i64 [ 0, %entry ], [ %i1, %head ]
  %i1 = add i64 %i, 1
  %c = icmp ult i64 %i1, %n
  br i1 %c, label %head, label %exit
exit:
  ret void
}
"""


@pytest.mark.parametrize("flags", [("-spp-no-entry",), ("-spp-no-backedge",), ("-spp-no-entry=true",),
                                   ("-spp-no-entry=false", "-spp-all-backedges"),
                                   ("-spp-counted-loop-trip-width=8",)])
def test_place_safepoints_flags_as_llvm_spells_them(llvm14, flags):
    theirs = run_opt(llvm14.opt, ["-S", "-enable-new-pm=0", "-place-safepoints", *flags], LOOP)
    assert theirs.returncode == 0, theirs.stderr
    ours = gctoy_opt("-S", "-passes=place-safepoints", *flags, stdin=LOOP)
    assert ours.returncode == 0, ours.stderr
    assert canonical(llvm14, ours.stdout) == canonical(llvm14, theirs.stdout)


NO_DEOPT = """
declare void @f()

define i8 addrspace(1)* @a(i8 addrspace(1)* %p) gc "statepoint-example" {
  call void @f()
  call void @f() [ "deopt"(i32 1) ]
  ret i8 addrspace(1)* %p
}
"""


@pytest.mark.parametrize("flag", ["-rs4gc-allow-statepoint-with-no-deopt-info=false", "-rs4gc-clobber-non-live"])
def test_rs4gc_flags_as_llvm_spells_them(llvm14, flag):
    theirs = run_opt(llvm14.opt, ["-S", "-passes=rewrite-statepoints-for-gc", flag], NO_DEOPT)
    ours = gctoy_opt("-S", "-passes=rewrite-statepoints-for-gc", flag, stdin=NO_DEOPT)
    assert ours.returncode == 0, ours.stderr
    assert canonical(llvm14, ours.stdout) == canonical(llvm14, theirs.stdout)


def test_clobber_non_live_matches_llvm_on_branches(llvm14):
    src = """
declare void @f()
define i8 addrspace(1)* @a(i8 addrspace(1)* %p, i8 addrspace(1)* %q, i1 %c) gc "statepoint-example" {
entry:
  call void @f()
  br i1 %c, label %l, label %r
l:
  call void @f()
  ret i8 addrspace(1)* %p
r:
  call void @f()
  ret i8 addrspace(1)* %q
}
"""
    theirs = run_opt(llvm14.opt, ["-S", "-passes=rewrite-statepoints-for-gc", "-rs4gc-clobber-non-live"], src)
    ours = gctoy_opt("-S", "-passes=rewrite-statepoints-for-gc", "-rs4gc-clobber-non-live", stdin=src)
    assert canonical(llvm14, ours.stdout) == canonical(llvm14, theirs.stdout)


REPORTED = """
declare void @f()

define i8 addrspace(1)* @merge(i1 %c, i8 addrspace(1)* %a, i8 addrspace(1)* %b, i64 %k) gc "statepoint-example" {
entry:
  br i1 %c, label %l, label %r
l:
  %x = getelementptr i8, i8 addrspace(1)* %a, i64 8
  br label %m
r:
  %y = getelementptr i8, i8 addrspace(1)* %b, i64 %k
  br label %m
m:
  %v = phi i8 addrspace(1)* [ %x, %l ], [ %y, %r ]
  %n = getelementptr i8, i8 addrspace(1)* null, i64 %k
  call void @f()
  call void @f()
  %w = getelementptr i8, i8 addrspace(1)* %n, i64 1
  ret i8 addrspace(1)* %v
}

define void @none() gc "statepoint-example" {
  call void @f()
  ret void
}
"""


def test_reports_on_standard_error_are_llvms(llvm14):
    flags = ["-spp-print-liveset", "-spp-print-liveset-size", "-spp-print-base-pointers"]
    theirs = run_opt(llvm14.opt, ["-S", "-passes=rewrite-statepoints-for-gc", *flags], REPORTED)
    ours = gctoy_opt("-S", "-passes=rewrite-statepoints-for-gc", *flags, stdin=REPORTED)
    assert ours.returncode == 0, ours.stderr
    assert "derived %v base %v.base" in ours.stderr
    assert ours.stderr == theirs.stderr


@pytest.mark.parametrize("args, words", [
    (("-spp-no-such-flag",), ["unknown option", "-spp-no-such-flag"]),
    (("-spp-no-entry=maybe",), ["-spp-no-entry", "maybe"]),
    (("-spp-rematerialization-threshold=x",), ["-spp-rematerialization-threshold", "'x'"]),
    (("-passes=verify", "-rewrite-statepoints-for-gc"), ["-passes", "-rewrite-statepoints-for-gc"]),
    (("-rs4gc-remat-derived-at-uses=true",), ["-rs4gc-remat-derived-at-uses"]),
])
def test_bad_options_are_one_clear_error(args, words):
    r = gctoy_opt(*args, "-S", stdin=DERIVED)
    assert r.returncode == 2
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 2 and lines[0].startswith("gctoy opt: error: ") and lines[1].startswith("usage: "), r.stderr
    assert all(w in lines[0] for w in words), lines[0]


def test_disable_output_prints_nothing():
    r = gctoy_opt("-S", "-passes=rewrite-statepoints-for-gc", "-disable-output", stdin=DERIVED)
    assert r.returncode == 0 and r.stdout == ""


def test_opaque_pointers_flag_chooses_the_printed_style():
    r = gctoy_opt("-S", "-opaque-pointers=1", stdin=DERIVED)
    assert r.returncode == 0 and "ptr addrspace(1) %p" in r.stdout
    r = gctoy_opt("-S", "-opaque-pointers=0", stdin=DERIVED)
    assert r.returncode == 0 and "i8 addrspace(1)* %p" in r.stdout


NOUNWIND_INVOKES = """
declare void @quiet() nounwind
declare i8 addrspace(1)* @make() nounwind
declare i32 @peek() nounwind readonly
declare i32 @look() nounwind readonly willreturn
declare void @loud()
declare i32 @pers(...)

define i8 addrspace(1)* @invokes(i8 addrspace(1)* %p) gc "statepoint-example" personality i32 (...)* @pers {
entry:
  invoke void @quiet() to label %one unwind label %pad
one:
  %m = invoke i8 addrspace(1)* @make() to label %two unwind label %pad
two:
  %unused = invoke i32 @peek() to label %look unwind label %pad
look:
  %unused2 = invoke i32 @look() to label %three unwind label %pad
three:
  invoke void @loud() to label %done unwind label %pad
done:
  ret i8 addrspace(1)* %m
pad:
  %l = landingpad token cleanup
  %v = phi i8 addrspace(1)* [ %p, %entry ], [ %p, %one ], [ %m, %two ], [ %m, %look ], [ %m, %three ]
  ret i8 addrspace(1)* %v
}
"""


def test_invokes_that_cannot_throw_become_calls_first(llvm):
    theirs, ours = rs4gc_both(llvm, NOUNWIND_INVOKES.replace("%l = landingpad token cleanup\n  %v = phi",
                                                             "%v = phi").replace(
        "[ %m, %three ]\n", "[ %m, %three ]\n  %l = landingpad token cleanup\n"))
    assert ours.count("invoke token") == 1 and "@look" not in _without_declarations(ours)
    assert ours == theirs


INVOKE_AFTER_CALL = """
declare void @f()
declare i8 addrspace(1)* @g()
declare i32 @pers(...)

define i8 addrspace(1)* @a(i8 addrspace(1)* %p) gc "statepoint-example" personality i32 (...)* @pers {
entry:
  call void @f()
  %r = invoke i8 addrspace(1)* @g() to label %ok unwind label %bad
ok:
  call void @f()
  ret i8 addrspace(1)* %r
bad:
  %l = landingpad token cleanup
  ret i8 addrspace(1)* %p
}
"""


def test_an_invoke_token_whose_name_clashes_is_numbered_twice(llvm):
    # the invoke's token is named when it is made and again after the unwind relocates
    theirs, ours = rs4gc_both(llvm, INVOKE_AFTER_CALL)
    assert "%statepoint_token3 = invoke" in ours and "%r4 = call" in ours
    assert ours == theirs


CALL_ATTRIBUTES = """
declare void @bar(i8 addrspace(1)*, i32)
declare noalias nonnull i8 addrspace(1)* @foo()
declare void @llvm.memcpy.p1i8.p1i8.i64(i8 addrspace(1)*, i8 addrspace(1)*, i64, i1)

define i8 addrspace(1)* @a(i8 addrspace(1)* %p, i8 addrspace(1)* %d) gc "statepoint-example" {
  call void @bar(i8 addrspace(1)* align 8 nonnull %p, i32 signext 3) [ "deopt"() ]
  %q = call noalias nonnull dereferenceable(8) i8 addrspace(1)* @foo()
  call void @llvm.memcpy.p1i8.p1i8.i64(i8 addrspace(1)* noalias dereferenceable(4) %d, i8 addrspace(1)* noalias nonnull %q, i64 4, i1 false)
  ret i8 addrspace(1)* %q
}
"""


def test_call_attributes_on_statepoints_and_results(llvm):
    # parameter attributes stay behind in LLVM 14 and move to the statepoint from 15 on; the
    # gc.result keeps the call's return attributes but, like every call, loses noalias and
    # dereferenceable
    theirs, ours = rs4gc_both(llvm, CALL_ATTRIBUTES)
    body = ours[ours.index("define"):]
    body = body[:body.index("\n}")]
    assert "noalias" not in body and "nonnull" in body
    assert ours == theirs
