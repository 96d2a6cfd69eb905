"""Vectors of GC pointers through rewrite-statepoints-for-gc, with LLVM 14 and LLVM 19 as oracles.

A ``<2 x i8 addrspace(1)*>`` live across a call must be in ``gc-live`` and come back from a
vector ``gc.relocate``; a vector built from derived pointers needs a *base vector* built
beside it, and a lane taken out of it a lane of that base. Each program below is run through
gctoy and through the real ``opt`` of each release (LLVM 19 reads it with opaque pointers and
gctoy follows it with ``llvm=19``): the two outputs, printed again by that ``opt``, must be the
same text, relocate the same (base, derived) pairs at each call, and pass ``verify`` and
``verify<safepoint-ir>``. The last tests need no LLVM.
"""
from __future__ import annotations

import pytest

from gctoy.ir import parse_module, print_module
from gctoy.ir import instructions as I
from gctoy.ir.intrinsics import is_relocate_name
from gctoy.ir.statepoint import statepoints
from gctoy.ir.types import VectorType
from gctoy.llvm_tools import run_opt
from gctoy.passes import run
from rs4gc_oracle import pairs_by_call


def in_style(llvm, typed_text: str) -> str:
    """``typed_text`` as ``llvm``'s opt reads it (``ptr`` from LLVM 15 on)."""
    if llvm.version < 15:
        return typed_text
    return print_module(parse_module(typed_text, "test.ll"), opaque=True)


def canonical(llvm, text: str) -> str:
    """``text`` as ``llvm``'s opt prints it, without the module header; fails if opt rejects it."""
    r = run_opt(llvm.opt, ["-S", "-passes=verify"], text)
    assert r.returncode == 0, f"LLVM {llvm.version} rejects:\n{r.stderr}\n{text}"
    return "\n".join(line for line in r.stdout.splitlines() if not line.startswith(("; ModuleID", "source_filename")))


def pass_for(llvm) -> str:
    """gctoy's RS4GC following the release (LLVM 19 builds lane bases its own way)."""
    return "rewrite-statepoints-for-gc" if llvm.version == 14 else "rewrite-statepoints-for-gc<llvm=19>"


HEADER = """
declare void @safepoint()
declare void @sink(i8 addrspace(1)*) "gc-leaf-function"
declare void @sink_vec(<2 x i8 addrspace(1)*>) "gc-leaf-function"
declare <2 x i8 addrspace(1)*> @make_vec()
declare i32 @personality()
"""

PROGRAMS = {
    # a vector argument live across the call: relocated whole, its own base
    "argument": """
define <2 x i8 addrspace(1)*> @f(<2 x i8 addrspace(1)*> %pair) gc "statepoint-example" {
entry:
  call void @safepoint()
  ret <2 x i8 addrspace(1)*> %pair
}""",
    # vectors from loads and calls, merged by a phi of two known bases
    "phi_of_loads": """
define <2 x i8 addrspace(1)*> @f(<2 x i8 addrspace(1)*>* %slot, i1 %c) gc "statepoint-example" {
entry:
  br i1 %c, label %left, label %right
left:
  %a = load <2 x i8 addrspace(1)*>, <2 x i8 addrspace(1)*>* %slot, align 16
  br label %join
right:
  %b = call <2 x i8 addrspace(1)*> @make_vec()
  br label %join
join:
  %v = phi <2 x i8 addrspace(1)*> [ %a, %left ], [ %b, %right ]
  call void @safepoint()
  call void @sink_vec(<2 x i8 addrspace(1)*> %v)
  ret <2 x i8 addrspace(1)*> %v
}""",
    # a vector built from interior pointers needs a base vector built the same way
    "insert_derived": """
define <2 x i8 addrspace(1)*> @f(i8 addrspace(1)* %obj, i8 addrspace(1)* %other) gc "statepoint-example" {
entry:
  %field = getelementptr i8, i8 addrspace(1)* %obj, i64 24
  %v0 = insertelement <2 x i8 addrspace(1)*> undef, i8 addrspace(1)* %field, i32 0
  %v1 = insertelement <2 x i8 addrspace(1)*> %v0, i8 addrspace(1)* %other, i32 1
  call void @safepoint()
  ret <2 x i8 addrspace(1)*> %v1
}""",
    # one lane of a vector GEP: the same lane of the base vector is its base
    "extract_lane": """
define i8 addrspace(1)* @f(<2 x i8 addrspace(1)*> %pair, i64 %lane) gc "statepoint-example" {
entry:
  %moved = getelementptr i8, <2 x i8 addrspace(1)*> %pair, i64 16
  %one = extractelement <2 x i8 addrspace(1)*> %moved, i64 %lane
  call void @safepoint()
  ret i8 addrspace(1)* %one
}""",
    # a lane of a base vector is a base itself: no new instruction
    "extract_base_lane": """
define i8 addrspace(1)* @f(<2 x i8 addrspace(1)*> %pair, i8 addrspace(1)* %p, i1 %c) gc "statepoint-example" {
entry:
  br i1 %c, label %a, label %b
a:
  %first = extractelement <2 x i8 addrspace(1)*> %pair, i32 0
  br label %m
b:
  br label %m
m:
  %x = phi i8 addrspace(1)* [ %first, %a ], [ %p, %b ]
  call void @safepoint()
  ret i8 addrspace(1)* %x
}""",
    # a shuffle of two built vectors, then a lane picked at run time
    "shuffle_two": """
define void @f(i8 addrspace(1)* %obj, i64 %lane) gc "statepoint-example" {
entry:
  %p1 = getelementptr i8, i8 addrspace(1)* %obj, i64 8
  %p2 = getelementptr i8, i8 addrspace(1)* %obj, i64 16
  %lo = insertelement <4 x i8 addrspace(1)*> undef, i8 addrspace(1)* %p1, i32 0
  %hi = insertelement <4 x i8 addrspace(1)*> undef, i8 addrspace(1)* %p2, i32 1
  %mix = shufflevector <4 x i8 addrspace(1)*> %lo, <4 x i8 addrspace(1)*> %hi, <2 x i32> <i32 0, i32 5>
  %pick = extractelement <2 x i8 addrspace(1)*> %mix, i64 %lane
  call void @safepoint()
  call void @sink(i8 addrspace(1)* %pick)
  ret void
}""",
    # a broadcast of a derived pointer: the base broadcast ignores the second operand
    "broadcast": """
define <2 x i8 addrspace(1)*> @f(i8 addrspace(1)* %obj) gc "statepoint-example" {
entry:
  %field = getelementptr i8, i8 addrspace(1)* %obj, i64 8
  %one = insertelement <2 x i8 addrspace(1)*> poison, i8 addrspace(1)* %field, i32 0
  %all = shufflevector <2 x i8 addrspace(1)*> %one, <2 x i8 addrspace(1)*> undef, <2 x i32> zeroinitializer
  call void @safepoint()
  ret <2 x i8 addrspace(1)*> %all
}""",
    # a scalar base with vector indices: the base is splatted before the pass starts
    "scalar_base_vector_index": """
define <2 x i32 addrspace(1)*> @f(i8 addrspace(1)* %obj, <2 x i64> %idx) gc "statepoint-example" {
entry:
  %words = bitcast i8 addrspace(1)* %obj to i32 addrspace(1)*
  %each = getelementptr i32, i32 addrspace(1)* %words, <2 x i64> %idx
  call void @safepoint()
  ret <2 x i32 addrspace(1)*> %each
}""",
    # a cheap chain from a vector base is recomputed after the call, not relocated
    "remat_chain": """
define i32 addrspace(1)* @f(<2 x i8 addrspace(1)*> %pair, <2 x i64> %idx) gc "statepoint-example" {
entry:
  %words = bitcast <2 x i8 addrspace(1)*> %pair to <2 x i32 addrspace(1)*>
  %each = getelementptr i32, <2 x i32 addrspace(1)*> %words, <2 x i64> %idx
  call void @safepoint()
  %one = extractelement <2 x i32 addrspace(1)*> %each, i32 1
  ret i32 addrspace(1)* %one
}""",
    # a vector phi around a loop whose body shuffles it
    "loop_shuffle": """
define i8 addrspace(1)* @f(i8 addrspace(1)* %a, i8 addrspace(1)* %b, i1 %c) gc "statepoint-example" {
entry:
  %va = insertelement <2 x i8 addrspace(1)*> undef, i8 addrspace(1)* %a, i32 0
  %vb = insertelement <2 x i8 addrspace(1)*> %va, i8 addrspace(1)* %b, i32 1
  br label %loop
loop:
  %v = phi <2 x i8 addrspace(1)*> [ %vb, %entry ], [ %swapped, %loop ]
  %swapped = shufflevector <2 x i8 addrspace(1)*> %v, <2 x i8 addrspace(1)*> %v, <2 x i32> <i32 1, i32 0>
  %head = extractelement <2 x i8 addrspace(1)*> %swapped, i32 0
  br i1 %c, label %loop, label %out
out:
  call void @safepoint()
  ret i8 addrspace(1)* %head
}""",
    # a select of vectors seen through a bitcast: relocated as i8 vectors and cast back
    "select_cast": """
define <2 x i64 addrspace(1)*> @f(<2 x i8 addrspace(1)*> %x, <2 x i8 addrspace(1)*> %y, i1 %c) gc "statepoint-example" {
entry:
  %xs = getelementptr i8, <2 x i8 addrspace(1)*> %x, i64 8
  %s = select i1 %c, <2 x i8 addrspace(1)*> %xs, <2 x i8 addrspace(1)*> %y
  %w = bitcast <2 x i8 addrspace(1)*> %s to <2 x i64 addrspace(1)*>
  call void @safepoint()
  ret <2 x i64 addrspace(1)*> %w
}""",
    # a scalar phi of a lane and an argument: its base phi takes the lane of the base vector
    "phi_of_lane": """
define i8 addrspace(1)* @f(i8 addrspace(1)* %obj, i8 addrspace(1)* %p, i1 %c) gc "statepoint-example" {
entry:
  %field = getelementptr i8, i8 addrspace(1)* %obj, i64 8
  %v = insertelement <2 x i8 addrspace(1)*> undef, i8 addrspace(1)* %field, i32 1
  br i1 %c, label %a, label %m
a:
  %lane = extractelement <2 x i8 addrspace(1)*> %v, i32 1
  br label %m
m:
  %x = phi i8 addrspace(1)* [ %lane, %a ], [ %p, %entry ]
  call void @safepoint()
  ret i8 addrspace(1)* %x
}""",
    # a base put into an all-null vector: every lane is a base, the vector is its own base
    "insert_into_zero": """
define <2 x i8 addrspace(1)*> @f(i8 addrspace(1)* %obj) gc "statepoint-example" {
entry:
  %v = insertelement <2 x i8 addrspace(1)*> zeroinitializer, i8 addrspace(1)* %obj, i32 1
  call void @safepoint()
  ret <2 x i8 addrspace(1)*> %v
}""",
    # the same rule for a scalar: a phi of null and a base is its own base
    "phi_of_null": """
define i8 addrspace(1)* @f(i8 addrspace(1)* %obj, i1 %c) gc "statepoint-example" {
entry:
  br i1 %c, label %a, label %m
a:
  br label %m
m:
  %p = phi i8 addrspace(1)* [ null, %entry ], [ %obj, %a ]
  call void @safepoint()
  ret i8 addrspace(1)* %p
}""",
    # an invoke: the vector is relocated on both edges
    "invoke": """
define <2 x i8 addrspace(1)*> @f(<2 x i8 addrspace(1)*> %pair) gc "statepoint-example" personality i32 ()* @personality {
entry:
  %moved = getelementptr i8, <2 x i8 addrspace(1)*> %pair, <2 x i64> <i64 8, i64 16>
  invoke void @safepoint() to label %ok unwind label %bad
ok:
  ret <2 x i8 addrspace(1)*> %moved
bad:
  %lp = landingpad token cleanup
  ret <2 x i8 addrspace(1)*> %pair
}""",
}


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_vectors_as_llvm_relocates_them(llvm, name):
    src = canonical(llvm, in_style(llvm, HEADER + PROGRAMS[name]))
    theirs = run_opt(llvm.opt, ["-S", "-passes=rewrite-statepoints-for-gc"], src)
    assert theirs.returncode == 0, theirs.stderr
    m = parse_module(src, "test.ll")
    run(m, pass_for(llvm))
    ours = print_module(m, opaque=llvm.version >= 15)
    assert pairs_by_call(ours, src) == pairs_by_call(theirs.stdout, src)
    checked = run_opt(llvm.opt, ["-disable-output", "-passes=verify,verify<safepoint-ir>"], ours)
    assert checked.returncode == 0, checked.stderr
    assert canonical(llvm, ours) == canonical(llvm, theirs.stdout)


# ---------------------------------------------------------------------------
# without LLVM


def _rewritten(text: str, passes: str = "rewrite-statepoints-for-gc"):
    m = parse_module(HEADER + text, "test.ll")
    run(m, passes)
    return m


def test_a_live_vector_is_relocated_by_a_vector_relocate():
    m = _rewritten(PROGRAMS["argument"])
    fn = m.get_function("f")
    (sp,) = statepoints(fn)
    assert [str(v.type) for v in sp.gc_args] == ["<2 x i8 addrspace(1)*>"]
    (rel,) = sp.relocates()
    assert rel.call.callee_name == "llvm.experimental.gc.relocate.v2p1i8"
    ret = fn.blocks[-1].terminator
    assert ret.value is rel.call  # the stale vector is not used after the call


def test_opaque_vector_relocate_is_named_v2p1():
    m = parse_module(print_module(parse_module(HEADER + PROGRAMS["argument"]), opaque=True), "test.ll")
    run(m, "rewrite-statepoints-for-gc<llvm=19>")
    names = {f.name for f in m.functions}
    assert "llvm.experimental.gc.relocate.v2p1" in names


def test_a_built_vector_gets_a_base_vector_and_lane_bases():
    m = _rewritten(PROGRAMS["extract_lane"])
    fn = m.get_function("f")
    base = next(i for i in fn.instructions() if isinstance(i, I.ExtractElement) and i.name == "base_ee")
    assert base.vector.name == "pair" and ("is_base_value", base.metadata[0][1]) in base.metadata
    (sp,) = statepoints(fn)
    assert [v.name for v in sp.gc_args] == ["one", "base_ee"]


def test_llvm19_names_a_lane_base_after_its_lane():
    text = print_module(parse_module(HEADER + PROGRAMS["extract_lane"]), opaque=True)
    m = parse_module(text, "test.ll")
    run(m, "rewrite-statepoints-for-gc<llvm=19>")
    names = [i.name for i in m.get_function("f").instructions()]
    assert "one.base" in names and "base_ee" not in names


def test_scalar_base_with_vector_indices_is_splatted_first():
    m = _rewritten(PROGRAMS["scalar_base_vector_index"])
    fn = m.get_function("f")
    names = [i.name for i in fn.instructions()]
    assert names.index(".splatinsert") < names.index(".splat") < names.index("each")
    gep = next(i for i in fn.instructions() if i.name == "each")
    assert isinstance(gep.pointer.type, VectorType)


def test_rewritten_vectors_pass_gctoys_own_verifiers():
    for name in PROGRAMS:
        m = _rewritten(PROGRAMS[name])
        run(m, "verify,verify-safepoints")


def test_vector_relocates_keep_the_derived_base_pairing():
    m = _rewritten(PROGRAMS["insert_derived"])
    fn = m.get_function("f")
    rels = [i for i in fn.instructions() if isinstance(i, I.Call) and is_relocate_name(i.callee_name)]
    assert [(str(r.type), r.name) for r in rels] == [("<2 x i8 addrspace(1)*>", "v1.relocated"),
                                                     ("<2 x i8 addrspace(1)*>", "v1.base.relocated")]
