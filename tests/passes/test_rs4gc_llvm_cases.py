"""Constructs on which gctoy's RewriteStatepointsForGC must do what LLVM 14 and LLVM 19 do (opt as the oracle)."""

from __future__ import annotations

import re

from gctoy.ir import parse_module, print_module
from gctoy.llvm_tools import run_opt
from gctoy.passes import run


def canonical(llvm, text: str) -> str:
    """``text`` as ``llvm``'s opt prints it, without the module header; fails if opt rejects it."""
    r = run_opt(llvm.opt, ["-S", "-passes=verify"], text)
    assert r.returncode == 0, f"LLVM {llvm.version} rejects:\n{r.stderr}\n{text}"
    return "\n".join(line for line in r.stdout.splitlines() if not line.startswith(("; ModuleID", "source_filename")))


def both(llvm, typed_text: str, opt_args: list[str] | None = None) -> tuple[str, str]:
    """(LLVM's output, gctoy's output) of RS4GC on the same module (typed for 14, opaque for 19), printed by LLVM."""
    text = typed_text if llvm.version < 15 else print_module(parse_module(typed_text, "test.ll"), opaque=True)
    src = canonical(llvm, text)
    theirs = run_opt(llvm.opt, ["-S", "-passes=rewrite-statepoints-for-gc", *(opt_args or [])], src)
    assert theirs.returncode == 0, theirs.stderr
    m = parse_module(src, "test.ll")
    run(m, "rewrite-statepoints-for-gc" if llvm.version == 14 else f"rewrite-statepoints-for-gc<llvm={llvm.version}>")
    return canonical(llvm, theirs.stdout), canonical(llvm, print_module(m, opaque=llvm.version >= 15))


# ---------------------------------------------------------------------------
# TBAA: a tag that says the memory is immutable loses that flag in a rewritten function

TBAA = """
declare void @safepoint()

define i32 @old_format(i32 addrspace(1)* %p) gc "statepoint-example" {
entry:
  %v = load i32, i32 addrspace(1)* %p, !tbaa !0
  call void @safepoint() [ "deopt"() ]
  store i32 %v, i32 addrspace(1)* %p, !tbaa !10
  ret i32 %v
}

define i32 @new_format(i32 addrspace(1)* %p) gc "statepoint-example" {
entry:
  %v = load i32, i32 addrspace(1)* %p, !tbaa !4
  call void @safepoint() [ "deopt"() ]
  ret i32 %v
}

define i32 @not_rewritten(i32* %p) {
entry:
  %v = load i32, i32* %p, !tbaa !10
  ret i32 %v
}

!0 = !{!1, !2, i64 0, i64 1}
!1 = !{!"base", !2, i64 0, !2, i64 4}
!2 = !{!"int", !3}
!3 = !{!"root"}
!4 = !{!5, !6, i64 0, i64 4, i64 1}
!5 = !{!3, i64 8, !"base.new", !6, i64 0, i64 4}
!6 = !{!3, i64 4, !"int.new"}
!10 = !{!1, !2, i64 4, i64 1}
"""


def test_immutable_tbaa_tags_become_mutable(llvm):
    theirs, ours = both(llvm, TBAA)
    assert ", i64 1}" not in theirs
    assert ours == theirs


def test_an_unshared_tag_is_rewritten_in_place():
    m = parse_module(TBAA, "tbaa.ll")
    run(m, "rewrite-statepoints-for-gc")
    text = print_module(m)
    assert "!0 = !{!1, !2, i64 0}" in text and "!4 = !{!5, !6, i64 0, i64 4}" in text
    assert "!10 = !{!1, !2, i64 4}" in text


def test_a_shared_tag_gets_a_new_node():
    m = parse_module(
        TBAA.replace('!6 = !{!3, i64 4, !"int.new"}', '!6 = !{!3, i64 4, !"int.new"}\n!7 = !{!0}'), "tbaa.ll"
    )
    run(m, "rewrite-statepoints-for-gc")
    text = print_module(m)
    assert "!0 = !{!1, !2, i64 0, i64 1}" in text and "!11 = !{!1, !2, i64 0}" in text
    assert "!tbaa !11" in text and "!tbaa !0" not in text


NOT_REWRITTEN = """
declare void @safepoint()
declare {}* @llvm.invariant.start.p0i8(i64, i8* nocapture)
declare i32 @h(i32*)

define void @g(i32 addrspace(1)* %p) gc "statepoint-example" {
entry:
  call void @safepoint() [ "deopt"() ]
  ret void
}

define i32 @no_gc(i32* dereferenceable(4) %p, i8* %q) {
entry:
  %v = load i32, i32* %p, !invariant.load !0
  %t = call {}* @llvm.invariant.start.p0i8(i64 1, i8* %q)
  %w = call i32 @h(i32* dereferenceable(4) %p) readonly
  ret i32 %v
}

!0 = !{}
"""


def test_functions_without_a_gc_strategy_are_stripped_too(llvm):
    theirs, ours = both(llvm, NOT_REWRITTEN)
    assert "invariant.load" not in theirs and "invariant.start.p0" not in theirs.split("@no_gc")[1].split("}")[0]
    assert ours == theirs


# ---------------------------------------------------------------------------
# gc.get.pointer.base / gc.get.pointer.offset are answered in place, before any statepoint

POINTER_INTRINSICS = """
declare i8 addrspace(1)* @llvm.experimental.gc.get.pointer.base.p1i8.p1i8(i8 addrspace(1)* readnone nocapture) nounwind readnone willreturn
declare i64 @llvm.experimental.gc.get.pointer.offset.p1i8(i8 addrspace(1)* readnone nocapture) nounwind readnone willreturn
declare void @foo()
declare void @use(...) "gc-leaf-function"

define i8 addrspace(1)* @loop(i8 addrspace(1)* %a, i64 %n) gc "statepoint-example" {
entry:
  br label %loop
loop:
  %p = phi i8 addrspace(1)* [ %a, %entry ], [ %q, %loop ]
  %q = getelementptr i8, i8 addrspace(1)* %p, i64 8
  %0 = call i64 @llvm.experimental.gc.get.pointer.offset.p1i8(i8 addrspace(1)* %q)
  %b = call i8 addrspace(1)* @llvm.experimental.gc.get.pointer.base.p1i8.p1i8(i8 addrspace(1)* %q)
  call void @foo() [ "deopt"(i64 %0) ]
  call void (...) @use(i8 addrspace(1)* %b)
  %c = icmp ult i64 %0, %n
  br i1 %c, label %loop, label %exit
exit:
  ret i8 addrspace(1)* %q
}

define i64 @no_call(i8 addrspace(1)* %a, i8 addrspace(1)* %b, i1 %c) gc "statepoint-example" {
entry:
  %x = select i1 %c, i8 addrspace(1)* %a, i8 addrspace(1)* %b
  %y = getelementptr i8, i8 addrspace(1)* %x, i64 4
  %o = call i64 @llvm.experimental.gc.get.pointer.offset.p1i8(i8 addrspace(1)* %y)
  %0 = call i8 addrspace(1)* @llvm.experimental.gc.get.pointer.base.p1i8.p1i8(i8 addrspace(1)* %y)
  call void (...) @use(i8 addrspace(1)* %0)
  ret i64 %o
}
"""


def test_pointer_base_and_offset_intrinsics_are_answered(llvm):
    theirs, ours = both(llvm, POINTER_INTRINSICS)
    assert "get.pointer" not in theirs.split("define")[1] and "sub i64" in theirs
    assert ours == theirs


# ---------------------------------------------------------------------------
# element-wise atomic copies are safepoints: they become statepoints of a runtime function that takes
# each pointer as (base, offset)

ATOMIC_COPIES = """
declare void @llvm.memcpy.element.unordered.atomic.p1i8.p1i8.i64(i8 addrspace(1)* nocapture writeonly, i8 addrspace(1)* nocapture readonly, i64, i32 immarg)
declare void @llvm.memmove.element.unordered.atomic.p1i8.p1i8.i64(i8 addrspace(1)* nocapture writeonly, i8 addrspace(1)* nocapture readonly, i64, i32 immarg)

define void @copies(i8 addrspace(1)* %from, i64 %i, i8 addrspace(1)* %to, i64 %j, i64 %n) gc "statepoint-example" {
entry:
  %s = getelementptr inbounds i8, i8 addrspace(1)* %from, i64 %i
  %d = getelementptr inbounds i8, i8 addrspace(1)* %to, i64 %j
  call void @llvm.memcpy.element.unordered.atomic.p1i8.p1i8.i64(i8 addrspace(1)* align 8 %d, i8 addrspace(1)* align 8 %s, i64 %n, i32 1) [ "deopt"() ]
  call void @llvm.memmove.element.unordered.atomic.p1i8.p1i8.i64(i8 addrspace(1)* align 8 %d, i8 addrspace(1)* align 8 %s, i64 %n, i32 8)
  call void @llvm.memcpy.element.unordered.atomic.p1i8.p1i8.i64(i8 addrspace(1)* align 8 %d, i8 addrspace(1)* align 8 %from, i64 %n, i32 4) "gc-leaf-function"
  ret void
}
"""


def test_element_atomic_copies_become_statepoints_of_the_runtime_copy(llvm):
    theirs, ours = both(llvm, ATOMIC_COPIES)
    assert "@__llvm_memcpy_element_unordered_atomic_safepoint_1" in theirs
    assert "@__llvm_memmove_element_unordered_atomic_safepoint_8" in theirs
    assert ours == theirs


# ---------------------------------------------------------------------------
# values held live for a moment are held even when they are constants: LLVM then declares @__tmp_use

CONSTANT_BASES = """
@global = external addrspace(1) global i8
declare void @f()

define i8 @constant_base(i64 %i) gc "statepoint-example" {
entry:
  %p = getelementptr i8, i8 addrspace(1)* @global, i64 %i
  call void @f() [ "deopt"() ]
  %v = load i8, i8 addrspace(1)* %p
  ret i8 %v
}

define void @constant_deopt() gc "statepoint-example" {
entry:
  call void @f() [ "deopt"(i8 addrspace(1)* null) ]
  ret void
}
"""


def test_tmp_use_is_declared_for_constant_bases_and_deopt_values(llvm):
    theirs, ours = both(llvm, CONSTANT_BASES)
    assert "declare void @__tmp_use(...)" in theirs
    assert ours == theirs


# ---------------------------------------------------------------------------
# mem2reg names the phis of RS4GC's slots in LLVM's order: an alloca that needs no phi is taken off the
# list by moving the last one into its place, so the slots left are visited in that order

SLOT_ORDER = """
declare i1 @cond() "gc-leaf-function"
declare void @sp()

define void @order(i64 addrspace(1)* %a, i64 addrspace(1)* %b) gc "statepoint-example" {
entry:
  br label %loop
loop:
  %pa = phi i64 addrspace(1)* [ %a, %entry ], [ %na, %join ]
  %pb = phi i64 addrspace(1)* [ %b, %entry ], [ %nb, %join ]
  %cur = phi i64 addrspace(1)* [ null, %entry ], [ %m, %join ]
  %c = call i1 @cond()
  %na = getelementptr i64, i64 addrspace(1)* %pa, i32 2
  %nb = getelementptr i64, i64 addrspace(1)* %pb, i32 3
  br i1 %c, label %left, label %right
left:
  br label %join
right:
  br label %join
join:
  %m = phi i64 addrspace(1)* [ %na, %left ], [ %nb, %right ]
  call void @sp() [ "deopt"() ]
  br label %loop
}
"""


def test_slot_phis_are_named_in_llvms_order(llvm):
    theirs, ours = both(llvm, SLOT_ORDER)
    assert "%.01 = phi" in theirs
    assert ours == theirs


# ---------------------------------------------------------------------------
# A call that returns its ``returned`` argument is looked through when LLVM decides whether a phi
# is its own base (stripPointerCasts): the loop phi fed by such a call is not pruned

RETURNED_ARG = """
declare void @poll()
declare i8 addrspace(1)* @identity(i8 addrspace(1)* returned)

define i8 addrspace(1)* @walk(i1 %a, i1 %d, i8 addrspace(1)* %s, i8 addrspace(1)* %o) gc "statepoint-example" {
entry:
  br i1 %a, label %head, label %join
head:
  %cur = phi i8 addrspace(1)* [ %o, %entry ], [ %next, %body ]
  br i1 %a, label %body, label %join
body:
  %next = call i8 addrspace(1)* @identity(i8 addrspace(1)* %cur)
  br i1 %d, label %head, label %join
join:
  %p = phi i8 addrspace(1)* [ %s, %entry ], [ %cur, %head ], [ %next, %body ]
  call void @poll()
  ret i8 addrspace(1)* %p
}
"""


def test_a_returned_argument_call_keeps_its_phis_in_the_lattice(llvm):
    theirs, ours = both(llvm, RETURNED_ARG)
    assert "%p.base = phi" in theirs
    assert ours == theirs


def test_the_returned_attribute_at_the_call_site_counts_too(llvm14):
    # (LLVM 19's pass copies a call-site ``returned`` onto the statepoint, which its verifier rejects)
    at_call = RETURNED_ARG.replace("(i8 addrspace(1)* returned)", "(i8 addrspace(1)*)").replace(
        "@identity(i8 addrspace(1)* %cur)", "@identity(i8 addrspace(1)* returned %cur)"
    )
    theirs, ours = both(llvm14, at_call)
    assert "%p.base = phi" in theirs
    assert ours == theirs


# ---------------------------------------------------------------------------
# A numbered calling convention (``cc42``) is read, and carried onto the statepoint that replaces
# the call (``llvm.experimental.deoptimize`` included)

NUMBERED_CC = """
declare cc42 double @llvm.experimental.deoptimize.f64(...)
declare cc11 i8 addrspace(1)* @callee(i8 addrspace(1)*)

define double @leave(i32 %n) gc "statepoint-example" {
entry:
  %v = call cc42 double (...) @llvm.experimental.deoptimize.f64(i32 %n) [ "deopt"(i32 %n) ]
  ret double %v
}

define i8 addrspace(1)* @hop(i8 addrspace(1)* %p) gc "statepoint-example" {
entry:
  %q = call cc11 i8 addrspace(1)* @callee(i8 addrspace(1)* %p) [ "deopt"() ]
  ret i8 addrspace(1)* %q
}
"""


def test_a_numbered_calling_convention_stays_on_the_statepoint(llvm):
    theirs, ours = both(llvm, NUMBERED_CC)
    assert "call cc42 token" in theirs and "call cc11 token" in theirs
    assert ours == theirs


# ---------------------------------------------------------------------------
# An atomic load through a derived pointer after a statepoint reads the relocated (or
# rematerialized) pointer and stays atomic

ATOMIC_LOAD = """
declare void @poll()

define i8 @peek(i8 addrspace(1)* %obj, i64 %k) gc "statepoint-example" {
entry:
  %field = getelementptr i8, i8 addrspace(1)* %obj, i64 %k
  call void @poll() [ "deopt"() ]
  %v = load atomic i8, i8 addrspace(1)* %field unordered, align 1
  ret i8 %v
}
"""


def test_an_atomic_load_after_a_statepoint_stays_atomic(llvm):
    theirs, ours = both(llvm, ATOMIC_LOAD)
    assert "load atomic i8" in theirs and "unordered, align 1" in theirs
    assert ours == theirs


# ---------------------------------------------------------------------------
# The old value an ``atomicrmw xchg`` returns is a base of its own (LLVM 15 and later read a
# pointer exchange; LLVM 14 refuses it)

POINTER_EXCHANGE = """
declare void @poll()

define i8 addrspace(1)* @swap(i8 addrspace(1)** %slot, i8 addrspace(1)* %new) gc "statepoint-example" {
entry:
  %old = atomicrmw xchg i8 addrspace(1)** %slot, i8 addrspace(1)* %new seq_cst
  %in = getelementptr i8, i8 addrspace(1)* %old, i64 8
  call void @poll() [ "deopt"() ]
  ret i8 addrspace(1)* %in
}
"""


def test_the_old_value_of_a_pointer_exchange_is_a_base(llvm19):
    theirs, ours = both(llvm19, POINTER_EXCHANGE)
    assert '"gc-live"(ptr addrspace(1) %old)' in theirs
    assert ours == theirs


# ---------------------------------------------------------------------------
# The pointer a ``cmpxchg`` found (field 0 of its ``{ ptr, i1 }`` result) is a base of its own; an
# atomic store after the statepoint writes the rematerialized derived pointer to the relocated slot.
# The pair itself is an aggregate, which RS4GC (14 and 19 alike) never relocates.

COMPARE_EXCHANGE = """
declare void @poll()

define i8 addrspace(1)* @publish(i8 addrspace(1)* addrspace(1)* %slot, i8 addrspace(1)* %old, i8 addrspace(1)* %new) gc "statepoint-example" {
entry:
  %pair = cmpxchg i8 addrspace(1)* addrspace(1)* %slot, i8 addrspace(1)* %old, i8 addrspace(1)* %new seq_cst monotonic
  %seen = extractvalue { i8 addrspace(1)*, i1 } %pair, 0
  %ok = extractvalue { i8 addrspace(1)*, i1 } %pair, 1
  %in = getelementptr i8, i8 addrspace(1)* %seen, i64 16
  call void @poll() [ "deopt"() ]
  store atomic i8 addrspace(1)* %in, i8 addrspace(1)* addrspace(1)* %slot release, align 8
  fence seq_cst
  %r = select i1 %ok, i8 addrspace(1)* %new, i8 addrspace(1)* %in
  ret i8 addrspace(1)* %r
}

define i8 addrspace(1)* @late(i8 addrspace(1)* addrspace(1)* %slot, i8 addrspace(1)* %old, i8 addrspace(1)* %new) gc "statepoint-example" {
entry:
  %pair = cmpxchg weak i8 addrspace(1)* addrspace(1)* %slot, i8 addrspace(1)* %old, i8 addrspace(1)* %new acq_rel acquire
  call void @poll() [ "deopt"() ]
  %seen = extractvalue { i8 addrspace(1)*, i1 } %pair, 0
  ret i8 addrspace(1)* %seen
}
"""


def test_the_pointer_a_compare_exchange_found_is_a_base(llvm):
    theirs, ours = both(llvm, COMPARE_EXCHANGE)
    assert "%seen.relocated, i64 16" in theirs and "store atomic " in theirs
    assert ours == theirs


# ---------------------------------------------------------------------------
# The declarations RS4GC adds for gc.result and gc.relocate carry each release's attributes
# (compared as printed, before any opt re-reads them and fills in its intrinsic table)

PROJECTIONS = """
declare i8 addrspace(1)* @make(i8 addrspace(1)*)

define i8 addrspace(1)* @pair(i8 addrspace(1)* %obj) gc "statepoint-example" {
entry:
  %new = call i8 addrspace(1)* @make(i8 addrspace(1)* %obj)
  store i8 1, i8 addrspace(1)* %obj
  ret i8 addrspace(1)* %new
}
"""


def projection_attributes(text: str) -> dict[str, str]:
    """gc.relocate/gc.result declaration -> the attribute group it names, as printed."""
    groups = dict(re.findall(r"^attributes (#\d+) = \{ (.*) \}$", text, re.M))
    found = re.findall(r"^declare .*@llvm\.experimental\.gc\.(relocate|result)\.\w+\(.*\) (#\d+)$", text, re.M)
    return {kind: groups[group] for kind, group in found}


def test_projection_declarations_carry_each_releases_attributes(llvm):
    text = PROJECTIONS if llvm.version < 15 else print_module(parse_module(PROJECTIONS, "test.ll"), opaque=True)
    theirs = run_opt(llvm.opt, ["-S", "-passes=rewrite-statepoints-for-gc"], text)
    assert theirs.returncode == 0, theirs.stderr
    m = parse_module(text, "test.ll")
    run(m, "rewrite-statepoints-for-gc" if llvm.version == 14 else f"rewrite-statepoints-for-gc<llvm={llvm.version}>")
    ours = projection_attributes(print_module(m, opaque=llvm.version >= 15))
    assert set(ours) == {"relocate", "result"}
    assert ours == projection_attributes(theirs.stdout)
