"""rewrite-statepoints-for-gc against LLVM 14's pass, text for text.

Each input goes through LLVM's ``opt -passes=rewrite-statepoints-for-gc`` and
through gctoy's pass; both outputs are then printed by LLVM's ``opt -S`` (so
attribute groups and spacing are LLVM's) and must be identical — names, order
of the gc-live bundle, base phis, remat copies, mem2reg phis and all.
"""
from __future__ import annotations

import pytest

from gctoy.ir import parse_module, print_module
from gctoy.ir.statepoint import statepoints
from gctoy.passes import run
from gctoy.llvm_tools import run_opt

HEAD = """
declare void @foo()
declare void @bar(i8 addrspace(1)*)
declare i8 addrspace(1)* @alloc(i64)
declare i64 @count(i8 addrspace(1)*)
declare void @leaf() "gc-leaf-function"
declare i32 @__gxx_personality_v0(...)
"""

CASES = {
    "one_pointer": """
define i8 addrspace(1)* @f(i8 addrspace(1)* %obj) gc "statepoint-example" {
entry:
  call void @foo()
  ret i8 addrspace(1)* %obj
}""",
    "result_and_argument": """
define i64 @f(i8 addrspace(1)* %obj) gc "statepoint-example" {
entry:
  %n = call i64 @count(i8 addrspace(1)* %obj)
  %m = call i64 @count(i8 addrspace(1)* %obj)
  %s = add i64 %n, %m
  ret i64 %s
}""",
    "derived_cheap_and_dear": """
define i64 addrspace(1)* @f(i64 addrspace(1)* %b, i64 %i, i64 %j, i64 %k) gc "statepoint-example" {
entry:
  %cheap = getelementptr i64, i64 addrspace(1)* %b, i64 %i
  %d1 = getelementptr i64, i64 addrspace(1)* %b, i64 %i
  %d2 = getelementptr i64, i64 addrspace(1)* %d1, i64 %j
  %dear = getelementptr i64, i64 addrspace(1)* %d2, i64 %k
  call void @foo()
  store i64 1, i64 addrspace(1)* %cheap
  ret i64 addrspace(1)* %dear
}""",
    "base_phi": """
define i8 addrspace(1)* @f(i1 %c, i8 addrspace(1)* %a, i8 addrspace(1)* %b) gc "statepoint-example" {
entry:
  %a8 = getelementptr i8, i8 addrspace(1)* %a, i64 8
  %b8 = getelementptr i8, i8 addrspace(1)* %b, i64 8
  br i1 %c, label %left, label %right
left:
  br label %join
right:
  br label %join
join:
  %p = phi i8 addrspace(1)* [ %a8, %left ], [ %b8, %right ]
  call void @foo()
  ret i8 addrspace(1)* %p
}""",
    "base_select_and_cast": """
define i64 addrspace(1)* @f(i1 %c, i8 addrspace(1)* %a, i64 addrspace(1)* %b) gc "statepoint-example" {
entry:
  %a4 = getelementptr i8, i8 addrspace(1)* %a, i64 4
  %ac = bitcast i8 addrspace(1)* %a4 to i64 addrspace(1)*
  %s = select i1 %c, i64 addrspace(1)* %ac, i64 addrspace(1)* %b
  %x = call i8 addrspace(1)* @alloc(i64 16)
  call void @bar(i8 addrspace(1)* %x)
  ret i64 addrspace(1)* %s
}""",
    "loop_walk": """
define i64 @f(i64 addrspace(1)* %base, i64 %n) gc "statepoint-example" {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %acc = phi i64 [ 0, %entry ], [ %acc1, %loop ]
  %p = getelementptr i64, i64 addrspace(1)* %base, i64 %i
  call void @foo()
  %v = load i64, i64 addrspace(1)* %p
  %acc1 = add i64 %acc, %v
  %i1 = add i64 %i, 1
  %more = icmp ult i64 %i1, %n
  br i1 %more, label %loop, label %exit
exit:
  ret i64 %acc1
}""",
    "loop_carried_derived": """
define void @f(i8 addrspace(1)* %base) gc "statepoint-example" {
entry:
  %first = getelementptr i8, i8 addrspace(1)* %base, i64 16
  br label %loop
loop:
  %cur = phi i8 addrspace(1)* [ %first, %entry ], [ %next, %loop ]
  call void @foo()
  %next = getelementptr i8, i8 addrspace(1)* %cur, i64 8
  br label %loop
}""",
    "invoke_both_edges": """
define i8 addrspace(1)* @f(i8 addrspace(1)* %obj, i64 %i) gc "statepoint-example" personality i32 (...)* @__gxx_personality_v0 {
entry:
  %d = getelementptr i8, i8 addrspace(1)* %obj, i64 %i
  %r = invoke i8 addrspace(1)* @alloc(i64 8) to label %ok unwind label %bad
ok:
  call void @bar(i8 addrspace(1)* %r)
  ret i8 addrspace(1)* %d
bad:
  %lp = landingpad token cleanup
  ret i8 addrspace(1)* %d
}""",
    "deopt_transition_and_ids": """
@flag = global i32 0
define i8 addrspace(1)* @f(i8 addrspace(1)* %obj, i32 %bci) gc "statepoint-example" {
entry:
  call void @foo() "statepoint-id"="77" "statepoint-num-patch-bytes"="8" [ "deopt"(i32 %bci, i8 addrspace(1)* %obj) ]
  call void @foo() [ "gc-transition"(i32* @flag) ]
  call void @foo() "statepoint-id"="abc"
  ret i8 addrspace(1)* %obj
}""",
    "leaf_calls_and_constants": """
define i8 addrspace(1)* @f(i8 addrspace(1)* %obj) gc "coreclr" {
entry:
  call void @leaf()
  call void @bar(i8 addrspace(1)* null)
  %g = getelementptr i8, i8 addrspace(1)* null, i64 64
  call void @foo()
  store i8 1, i8 addrspace(1)* %g
  ret i8 addrspace(1)* %obj
}""",
    "not_a_statepoint_strategy": """
define i8 addrspace(1)* @f(i8 addrspace(1)* %obj) gc "shadow-stack" {
entry:
  call void @foo()
  ret i8 addrspace(1)* %obj
}
define i8 addrspace(1)* @g(i8 addrspace(1)* %obj) {
entry:
  call void @foo()
  ret i8 addrspace(1)* %obj
}""",
    "merge_after_two_statepoints": """
define i8 addrspace(1)* @f(i1 %c, i8 addrspace(1)* %x, i8 addrspace(1)* %y) gc "statepoint-example" {
entry:
  br i1 %c, label %a, label %b
a:
  call void @foo()
  br label %j
b:
  call void @foo()
  br label %j
j:
  %g = getelementptr i8, i8 addrspace(1)* %x, i64 1
  store i8 0, i8 addrspace(1)* %y
  call void @foo()
  ret i8 addrspace(1)* %g
}""",
}


def canonical(opt: str, text: str) -> str:
    r = run_opt(opt, ["-S", "-passes=verify"], text)
    assert r.returncode == 0, r.stderr
    return "\n".join(line for line in r.stdout.splitlines()
                     if not line.startswith(("; ModuleID", "source_filename")))


@pytest.mark.parametrize("name", sorted(CASES))
def test_same_text_as_llvm(llvm14, name):
    src = HEAD + CASES[name]
    theirs = run_opt(llvm14.opt, ["-S", "-passes=rewrite-statepoints-for-gc"], src)
    assert theirs.returncode == 0, theirs.stderr
    m = parse_module(src, f"{name}.ll")
    run(m, "rewrite-statepoints-for-gc")
    ours = print_module(m)
    assert canonical(llvm14.opt, ours) == canonical(llvm14.opt, theirs.stdout)


def test_output_passes_llvm_safepoint_verifier(llvm14):
    for name, body in CASES.items():
        m = parse_module(HEAD + body, f"{name}.ll")
        run(m, "rewrite-statepoints-for-gc")
        r = run_opt(llvm14.opt, ["-passes=verify<safepoint-ir>", "-disable-output"], print_module(m))
        assert r.returncode == 0, (name, r.stderr)


def test_pairs_name_source_values():
    m = parse_module(HEAD + CASES["base_phi"])
    run(m, "rewrite-statepoints-for-gc")
    (sp,) = statepoints(m.get_function("f"))
    pairs = {(r.base.name, r.derived.name) for r in sp.relocates()}
    assert pairs == {("p.base", "p"), ("p.base", "p.base")}


def test_non_relocating_keeps_uses():
    m = parse_module(HEAD + CASES["one_pointer"])
    run(m, "rewrite-statepoints-for-gc<non-relocating>")
    fn = m.get_function("f")
    (sp,) = statepoints(fn)
    assert [v.name for v in sp.gc_args] == ["obj"]
    assert sp.relocates() == []
    assert fn.blocks[0].terminator.value is fn.args[0]


def test_alloca_roots_are_listed_without_relocates(llvm14):
    src = HEAD + """
define void @f(i8 addrspace(1)* %obj) gc "statepoint-example" {
entry:
  %slot = alloca i8 addrspace(1)*
  %n = alloca i64
  store i8 addrspace(1)* %obj, i8 addrspace(1)** %slot
  call void @foo()
  ret void
}"""
    m = parse_module(src)
    run(m, "rewrite-statepoints-for-gc<alloca-roots>")
    (sp,) = statepoints(m.get_function("f"))
    assert [v.name for v in sp.gc_args] == ["slot"]
    assert sp.relocates() == []
    assert run_opt(llvm14.opt, ["-passes=verify", "-disable-output"], print_module(m)).returncode == 0


def test_unknown_option_is_an_error():
    from gctoy.errors import GCToyError

    m = parse_module(HEAD + CASES["one_pointer"])
    with pytest.raises(GCToyError, match="unknown rewrite-statepoints-for-gc option"):
        run(m, "rewrite-statepoints-for-gc<fast>")
