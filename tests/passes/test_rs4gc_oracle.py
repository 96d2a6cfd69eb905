"""The RS4GC oracle (tests/rs4gc_oracle.py): hand-written inputs whose relocations are worked out by hand.

The first group reads a fixed RS4GC output (LLVM 14's, for the input beside it) and needs no
LLVM; the second runs LLVM 14 on inputs that each show one RS4GC behaviour and checks the
oracle's reading against the answer derived from the rules (liveness, base pointers,
rematerialization cost) by hand.
"""
from __future__ import annotations

import pytest

from rs4gc_oracle import CallFacts, OracleError, describe, facts_by_call, pairs_by_call, remat_by_call, run_rs4gc

# -- a fixed output -------------------------------------------------------------------------------

UNIT_SRC = """\
declare void @foo()
declare void @bar(i8 addrspace(1)*)

define i8 addrspace(1)* @f(i1 %c, i8 addrspace(1)* %a, i8 addrspace(1)* %b, i64 %i) gc "statepoint-example" {
entry:
  %d = getelementptr i8, i8 addrspace(1)* %a, i64 %i
  %0 = select i1 %c, i8 addrspace(1)* %d, i8 addrspace(1)* %b
  br i1 %c, label %x, label %y
x:
  call void @foo()
  br label %z
y:
  call void @foo()
  br label %z
z:
  %ac = bitcast i8 addrspace(1)* %a to i64 addrspace(1)*
  %e = getelementptr i64, i64 addrspace(1)* %ac, i64 1
  %g = getelementptr i64, i64 addrspace(1)* %e, i64 %i
  call void @bar(i8 addrspace(1)* %d)
  store i64 0, i64 addrspace(1)* %g
  ret i8 addrspace(1)* %0
}
"""

# LLVM 14's output for UNIT_SRC (its body), with the declarations it needs
UNIT_OUT = """\
declare void @foo()
declare void @bar(i8 addrspace(1)*)
declare token @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 immarg, i32 immarg, void ()*, i32 immarg, i32 immarg, ...)
declare token @llvm.experimental.gc.statepoint.p0f_isVoidp1i8f(i64 immarg, i32 immarg, void (i8 addrspace(1)*)*, i32 immarg, i32 immarg, ...)
declare i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token, i32 immarg, i32 immarg)

define i8 addrspace(1)* @f(i1 %c, i8 addrspace(1)* %a, i8 addrspace(1)* %b, i64 %i) gc "statepoint-example" {
entry:
  %d = getelementptr i8, i8 addrspace(1)* %a, i64 %i
  %base_select = select i1 %c, i8 addrspace(1)* %a, i8 addrspace(1)* %b, !is_base_value !0
  %0 = select i1 %c, i8 addrspace(1)* %d, i8 addrspace(1)* %b
  br i1 %c, label %x, label %y

x:                                                ; preds = %entry
  %statepoint_token = call token (i64, i32, void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 2882400000, i32 0, void ()* @foo, i32 0, i32 0, i32 0, i32 0) [ "gc-live"(i8 addrspace(1)* %0, i8 addrspace(1)* %base_select, i8 addrspace(1)* %a) ]
  %1 = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %statepoint_token, i32 1, i32 0) ; (%base_select, %0)
  %base_select.relocated = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %statepoint_token, i32 1, i32 1) ; (%base_select, %base_select)
  %a.relocated = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %statepoint_token, i32 2, i32 2) ; (%a, %a)
  %d.remat = getelementptr i8, i8 addrspace(1)* %a.relocated, i64 %i
  br label %z

y:                                                ; preds = %entry
  %statepoint_token3 = call token (i64, i32, void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 2882400000, i32 0, void ()* @foo, i32 0, i32 0, i32 0, i32 0) [ "gc-live"(i8 addrspace(1)* %0, i8 addrspace(1)* %base_select, i8 addrspace(1)* %a) ]
  %2 = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %statepoint_token3, i32 1, i32 0) ; (%base_select, %0)
  %base_select.relocated4 = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %statepoint_token3, i32 1, i32 1) ; (%base_select, %base_select)
  %a.relocated5 = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %statepoint_token3, i32 2, i32 2) ; (%a, %a)
  %d.remat1 = getelementptr i8, i8 addrspace(1)* %a.relocated5, i64 %i
  br label %z

z:                                                ; preds = %y, %x
  %.011 = phi i8 addrspace(1)* [ %d.remat, %x ], [ %d.remat1, %y ]
  %.010 = phi i8 addrspace(1)* [ %a.relocated, %x ], [ %a.relocated5, %y ]
  %.09 = phi i8 addrspace(1)* [ %base_select.relocated, %x ], [ %base_select.relocated4, %y ]
  %.0 = phi i8 addrspace(1)* [ %1, %x ], [ %2, %y ]
  %ac = bitcast i8 addrspace(1)* %.010 to i64 addrspace(1)*
  %e = getelementptr i64, i64 addrspace(1)* %ac, i64 1
  %g = getelementptr i64, i64 addrspace(1)* %e, i64 %i
  %statepoint_token6 = call token (i64, i32, void (i8 addrspace(1)*)*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidp1i8f(i64 2882400000, i32 0, void (i8 addrspace(1)*)* @bar, i32 1, i32 0, i8 addrspace(1)* %.011, i32 0, i32 0) [ "gc-live"(i8 addrspace(1)* %.0, i8 addrspace(1)* %.09, i8 addrspace(1)* %.010) ]
  %3 = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %statepoint_token6, i32 1, i32 0) ; (%.09, %.0)
  %base_select.relocated7 = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %statepoint_token6, i32 1, i32 1) ; (%.09, %.09)
  %a.relocated8 = call coldcc i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %statepoint_token6, i32 2, i32 2) ; (%.010, %.010)
  %d.remat2 = getelementptr i8, i8 addrspace(1)* %a.relocated8, i64 %i
  %ac.remat = bitcast i8 addrspace(1)* %a.relocated8 to i64 addrspace(1)*
  %e.remat = getelementptr i64, i64 addrspace(1)* %ac.remat, i64 1
  %g.remat = getelementptr i64, i64 addrspace(1)* %e.remat, i64 %i
  store i64 0, i64 addrspace(1)* %g.remat, align 4
  ret i8 addrspace(1)* %3
}

!0 = !{}
"""


def test_fixed_output_select_base_mem2reg_phis_casts_and_remat_chains():
    # %0 = select %c, %d, %b with %d = gep %a: a base select is inserted ("base-of(%0)");
    # %d has one variable index (cost 2 < 6): rematerialized at each call, never relocated;
    # at the third call the gc-live entries are mem2reg phis (.0, .09, .010) of the copies;
    # %g = gep (gep (bitcast %a), 1), %i is rematerialized there, %ac and %e are only links
    # of its chain; %d is live there too, as an argument of @bar.
    facts = facts_by_call(UNIT_OUT, UNIT_SRC)
    pairs = frozenset({("%a", "%a"), ("base-of(%0)", "%0"), ("base-of(%0)", "base-of(%0)")})
    assert facts == {
        ("f", 0): CallFacts(pairs, frozenset({"%d"})),
        ("f", 1): CallFacts(pairs, frozenset({"%d"})),
        ("f", 2): CallFacts(pairs, frozenset({"%d", "%g"})),
    }
    assert pairs_by_call(UNIT_OUT, UNIT_SRC)[("f", 2)] == pairs
    assert remat_by_call(UNIT_OUT, UNIT_SRC)[("f", 2)] == {"%d", "%g"}
    assert describe(facts).splitlines()[2] == (
        "@f call 2: (%a, %a), (base-of(%0), %0), (base-of(%0), base-of(%0))  remat: %d, %g")


def test_unknown_shapes_are_errors_not_guesses():
    renamed = UNIT_OUT.replace("%.0 ", "%mystery ").replace("%.0)", "%mystery)").replace("%.0,", "%mystery,")
    assert "%mystery = phi" in renamed
    with pytest.raises(OracleError, match="mystery"):
        facts_by_call(renamed, UNIT_SRC)
    extra_call = UNIT_SRC.replace("  ret i8 addrspace(1)* %0", "  call void @foo()\n  ret i8 addrspace(1)* %0")
    with pytest.raises(OracleError, match="4 reachable calls in the input, 3 call sites"):
        facts_by_call(UNIT_OUT, extra_call)


# -- LLVM 14 on hand-written inputs ----------------------------------------------------------------

CASES = """\
%obj = type { i64, i8 addrspace(1)* }
declare void @foo()
declare void @bar(i8 addrspace(1)*)
declare void @leaf() "gc-leaf-function"
declare i8 addrspace(1)* @alloc()
declare i32 @pers(...)

define i8 addrspace(1)* @live_across(i8 addrspace(1)* %o, i8 addrspace(1)* %dead) gc "statepoint-example" {
entry:
  call void @foo()
  ret i8 addrspace(1)* %o
}

define void @argument_only(i8 addrspace(1)* %o) gc "statepoint-example" {
entry:
  call void @bar(i8 addrspace(1)* %o)
  ret void
}

define i64 addrspace(1)* @deopt_base(i64 addrspace(1)* %arr, i64 %n) gc "statepoint-example" {
entry:
  %elt = getelementptr i64, i64 addrspace(1)* %arr, i64 %n
  %x = call i8 addrspace(1)* @alloc() [ "deopt"(i32 3, i64 addrspace(1)* %arr) ]
  store i64 1, i64 addrspace(1)* %elt
  ret i64 addrspace(1)* %elt
}

define i8 addrspace(1)* @phi_conflict(i1 %c, i8 addrspace(1)* %a, i8 addrspace(1)* %b) gc "statepoint-example" {
entry:
  %pa = getelementptr i8, i8 addrspace(1)* %a, i64 4
  br i1 %c, label %left, label %right
left:
  br label %join
right:
  %pb = getelementptr i8, i8 addrspace(1)* %b, i64 12
  br label %join
join:
  %m = phi i8 addrspace(1)* [ %pa, %left ], [ %pb, %right ]
  call void @foo()
  ret i8 addrspace(1)* %m
}

define i8 addrspace(1)* @unnamed_select(i1 %c, i8 addrspace(1)* %a, i8 addrspace(1)* %b) gc "statepoint-example" {
entry:
  %0 = getelementptr i8, i8 addrspace(1)* %b, i64 2
  %1 = select i1 %c, i8 addrspace(1)* %a, i8 addrspace(1)* %0
  call void @foo()
  ret i8 addrspace(1)* %1
}

define i8 addrspace(1)* @unnamed_phi(i1 %c, i8 addrspace(1)* %a, i8 addrspace(1)* %b) gc "statepoint-example" {
entry:
  br i1 %c, label %l, label %r
l:
  %0 = getelementptr i8, i8 addrspace(1)* %a, i64 1
  br label %j
r:
  br label %j
j:
  %1 = phi i8 addrspace(1)* [ %0, %l ], [ %b, %r ]
  call void @foo()
  ret i8 addrspace(1)* %1
}

define i8 addrspace(1)* @chains(i8 addrspace(1)* %p, i8 addrspace(1)* %q, i64 %i, i64 %j, i64 %k) gc "statepoint-example" {
entry:
  %two1 = getelementptr i8, i8 addrspace(1)* %p, i64 %i
  %two2 = getelementptr i8, i8 addrspace(1)* %two1, i64 %j
  %three1 = getelementptr i8, i8 addrspace(1)* %q, i64 %i
  %three2 = getelementptr i8, i8 addrspace(1)* %three1, i64 %j
  %three3 = getelementptr i8, i8 addrspace(1)* %three2, i64 %k
  call void @foo()
  store i8 0, i8 addrspace(1)* %two1
  store i8 0, i8 addrspace(1)* %two2
  store i8 0, i8 addrspace(1)* %three3
  ret i8 addrspace(1)* null
}

define i8 addrspace(1)* @long_and_cast(i8 addrspace(1)* %p, %obj addrspace(1)* %s) gc "statepoint-example" {
entry:
  %c1 = getelementptr i8, i8 addrspace(1)* %p, i64 1
  %c2 = getelementptr i8, i8 addrspace(1)* %c1, i64 1
  %c3 = getelementptr i8, i8 addrspace(1)* %c2, i64 1
  %c4 = getelementptr i8, i8 addrspace(1)* %c3, i64 1
  %c5 = getelementptr i8, i8 addrspace(1)* %c4, i64 1
  %c6 = getelementptr i8, i8 addrspace(1)* %c5, i64 1
  %c7 = getelementptr i8, i8 addrspace(1)* %c6, i64 1
  %c8 = getelementptr i8, i8 addrspace(1)* %c7, i64 1
  %c9 = getelementptr i8, i8 addrspace(1)* %c8, i64 1
  %c10 = getelementptr i8, i8 addrspace(1)* %c9, i64 1
  %c11 = getelementptr i8, i8 addrspace(1)* %c10, i64 1
  %f = getelementptr %obj, %obj addrspace(1)* %s, i64 0, i32 1
  %fc = bitcast i8 addrspace(1)* addrspace(1)* %f to i64 addrspace(1)*
  call void @foo()
  store i64 0, i64 addrspace(1)* %fc
  ret i8 addrspace(1)* %c11
}

define i8 addrspace(1)* @invokes(i8 addrspace(1)* %p, i64 %i, i64 %j) gc "statepoint-example" personality i32 (...)* @pers {
entry:
  %one = getelementptr i8, i8 addrspace(1)* %p, i64 %i
  %two = getelementptr i8, i8 addrspace(1)* %one, i64 %j
  invoke void @foo() to label %ok unwind label %bad
ok:
  store i8 1, i8 addrspace(1)* %one
  ret i8 addrspace(1)* %two
bad:
  %lp = landingpad token cleanup
  ret i8 addrspace(1)* %one
}

define i8 addrspace(1)* @merge_then_call(i1 %c, i8 addrspace(1)* %o) gc "statepoint-example" {
entry:
  br i1 %c, label %a, label %b
a:
  call void @foo()
  br label %join
b:
  call void @leaf()
  call void @foo()
  br label %join
join:
  call void @foo()
  ret i8 addrspace(1)* %o
}

define void @loop(i8 addrspace(1)* %base, i64 %n) gc "statepoint-example" {
entry:
  %start = getelementptr i8, i8 addrspace(1)* %base, i64 8
  br label %head
head:
  %i = phi i64 [ 0, %entry ], [ %i1, %head ]
  %cur = phi i8 addrspace(1)* [ %start, %entry ], [ %next, %head ]
  call void @foo()
  %next = getelementptr i8, i8 addrspace(1)* %cur, i64 1
  %i1 = add i64 %i, 1
  %done = icmp eq i64 %i1, %n
  br i1 %done, label %exit, label %head
exit:
  ret void
}

define i8 addrspace(1)* @shared_pads(i1 %c, i8 addrspace(1)* %a, i8 addrspace(1)* %b) gc "statepoint-example" personality i32 (...)* @pers {
entry:
  br i1 %c, label %l, label %r
l:
  %x = invoke i8 addrspace(1)* @alloc() to label %j unwind label %lp
r:
  invoke void @foo() to label %j unwind label %lp
j:
  %p = phi i8 addrspace(1)* [ %x, %l ], [ %a, %r ]
  call void @foo()
  ret i8 addrspace(1)* %p
lp:
  %t = landingpad token cleanup
  ret i8 addrspace(1)* %b
}

define i8 addrspace(1)* @result_live(i8 addrspace(1)* %o) gc "statepoint-example" {
entry:
  %fresh = call i8 addrspace(1)* @alloc()
  %0 = call i8 addrspace(1)* @alloc()
  call void @foo()
  store i8 0, i8 addrspace(1)* %0
  ret i8 addrspace(1)* %fresh
}

define i8 addrspace(1)* @unnamed_remat(i8 addrspace(1)* %0, i64 %i) gc "statepoint-example" {
entry:
  %1 = getelementptr i8, i8 addrspace(1)* %0, i64 %i
  %2 = getelementptr i8, i8 addrspace(1)* %0, i64 5
  call void @foo()
  store i8 0, i8 addrspace(1)* %2
  ret i8 addrspace(1)* %1
}
"""

P, R = frozenset, frozenset()

EXPECTED = {
    # only %o is used after the call; %dead is not live
    ("live_across", 0): (P({("%o", "%o")}), R),
    # an argument of the call is live at it even if never used again
    ("argument_only", 0): (P({("%o", "%o")}), R),
    # %elt = gep %arr, %n (one variable index): rematerialized from the relocated %arr,
    # which the deopt bundle names as a base
    ("deopt_base", 0): (P({("%arr", "%arr")}), P({"%elt"})),
    # phi of two derived pointers of different objects: a base phi %m.base
    ("phi_conflict", 0): (P({("base-of(%m)", "%m"), ("base-of(%m)", "base-of(%m)")}), R),
    # the same with unnamed values: %base_select / %base_phi stand for base-of(%1)
    ("unnamed_select", 0): (P({("base-of(%1)", "%1"), ("base-of(%1)", "base-of(%1)")}), R),
    ("unnamed_phi", 0): (P({("base-of(%1)", "%1"), ("base-of(%1)", "base-of(%1)")}), R),
    # cost 2 per variable GEP, limit 6: one or two variable GEPs are rematerialized, three relocated
    ("chains", 0): (P({("%p", "%p"), ("%q", "%q"), ("%q", "%three3")}), P({"%two1", "%two2"})),
    # eleven GEPs are too long a chain; a field address behind a bitcast (cost 0) is rematerialized
    ("long_and_cast", 0): (P({("%p", "%p"), ("%p", "%c11"), ("%s", "%s")}), P({"%fc"})),
    # at an invoke the cost doubles: one variable GEP (4) is rematerialized, two (8) are not
    ("invokes", 0): (P({("%p", "%p"), ("%p", "%two")}), P({"%one"})),
    # call 1 is a gc-leaf call (no statepoint, no key); at call 3 %o is mem2reg's phi of two relocations
    ("merge_then_call", 0): (P({("%o", "%o")}), R),
    ("merge_then_call", 2): (P({("%o", "%o")}), R),
    ("merge_then_call", 3): (P({("%o", "%o")}), R),
    # a loop phi stepping a derived pointer keeps the base of its start
    ("loop", 0): (P({("%base", "%base"), ("%base", "%cur")}), R),
    # two invokes sharing their normal destination and their landing pad (both get split);
    # %p = phi of an invoke result and an argument is its own base
    ("shared_pads", 0): (P({("%b", "%b")}), R),
    ("shared_pads", 1): (P({("%a", "%a"), ("%b", "%b")}), R),
    ("shared_pads", 2): (P({("%p", "%p")}), R),
    # call results are live across the later calls (gc.result, then relocations of it)
    ("result_live", 0): (R, R),
    ("result_live", 1): (P({("%fresh", "%fresh")}), R),
    ("result_live", 2): (P({("%0", "%0"), ("%fresh", "%fresh")}), R),
    # unnamed derived pointers rematerialized: found by opcode and operands (.remat, .remat1)
    ("unnamed_remat", 0): (P({("%0", "%0")}), P({"%1", "%2"})),
}


def test_oracle_reads_llvm14_as_worked_out_by_hand(llvm14):
    out = run_rs4gc(llvm14.opt, CASES)
    facts = facts_by_call(out, CASES)
    got = {k: (f.pairs, f.remat) for k, f in facts.items()}
    assert got == EXPECTED, describe(facts)


def test_the_cases_use_the_output_shapes_the_oracle_has_to_undo(llvm14):
    out = run_rs4gc(llvm14.opt, CASES)
    for shape in ("%base_phi = phi", "%base_select = select", "%m.base = phi", ".relocated.casted = bitcast",
                  "%.0 = phi", "%.remat = getelementptr", "%.remat1 = getelementptr", "%one.remat1 =",
                  "split-lp", "%fresh1 = call"):
        assert shape in out, shape
