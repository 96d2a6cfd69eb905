"""PlaceSafepoints: hand-written functions, pass options, and a differential test against LLVM 14's opt."""
from __future__ import annotations

import pytest

from gctoy.errors import GCToyError
from gctoy.ir import parse_module, print_module
from gctoy.ir.instructions import Call
from gctoy.passes import UnknownPassError, run
from gctoy.passes.counted_loops import must_be_finite_counted_loop
from gctoy.passes.place_safepoints import SafepointOptions, remove_unreachable_blocks
from gctoy.ir.analysis import DominatorTree, LoopInfo
from gctoy.llvm_tools import run_opt

POLL = """
@flag = global i1 false
declare void @do_safepoint()
declare void @foo()
declare void @leaf() "gc-leaf-function"
declare void @llvm.memset.p0i8.i64(i8*, i8, i64, i1)

define void @gc.safepoint_poll() {
entry:
  %c = load volatile i1, i1* @flag, align 1
  br i1 %c, label %slow, label %done
slow:
  call void @do_safepoint()
  br label %done
done:
  ret void
}
"""

FUNCS = {
    "entry_only": """
define void @entry_only(i8* %p) gc "statepoint-example" {
entry:
  call void @llvm.memset.p0i8.i64(i8* %p, i8 0, i64 8, i1 false)
  br label %next
next:
  call void @foo()
  ret void
}""",
    "unbounded": """
define void @unbounded() gc "statepoint-example" {
entry:
  br label %loop
loop:
  %c = load volatile i1, i1* @flag, align 1
  br i1 %c, label %loop, label %exit
exit:
  ret void
}""",
    "counted_i32": """
define void @counted_i32(i32 %n) gc "coreclr" {
entry:
  br label %loop
loop:
  %i = phi i32 [ 0, %entry ], [ %i.next, %loop ]
  %i.next = add i32 %i, 1
  %c = icmp slt i32 %i.next, %n
  br i1 %c, label %loop, label %exit
exit:
  ret void
}""",
    "counted_i64_small": """
define void @counted_i64_small() gc "statepoint-example" {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
  %i.next = add i64 %i, 1
  %c = icmp ne i64 %i.next, 1000
  br i1 %c, label %loop, label %exit
exit:
  ret void
}""",
    "counted_i64_large": """
define void @counted_i64_large() gc "statepoint-example" {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]
  %i.next = add i64 %i, 1
  %c = icmp ult i64 %i.next, 1099511627776
  br i1 %c, label %loop, label %exit
exit:
  ret void
}""",
    "down_i64_var": """
define void @down_i64_var(i64 %n) gc "statepoint-example" {
entry:
  br label %head
head:
  %i = phi i64 [ %n, %entry ], [ %i.next, %body ]
  %c = icmp sgt i64 %i, 0
  br i1 %c, label %body, label %exit
body:
  %i.next = add i64 %i, -1
  br label %head
exit:
  ret void
}""",
    "while_i32": """
define void @while_i32(i32 %n) gc "statepoint-example" {
entry:
  br label %head
head:
  %i = phi i32 [ 0, %entry ], [ %i.next, %body ]
  %c = icmp ult i32 %i, %n
  br i1 %c, label %body, label %exit
body:
  %i.next = add i32 %i, 1
  br label %head
exit:
  ret void
}""",
    "with_call": """
define void @with_call() gc "statepoint-example" {
entry:
  br label %loop
loop:
  call void @foo()
  %c = load volatile i1, i1* @flag, align 1
  br i1 %c, label %loop, label %exit
exit:
  ret void
}""",
    "with_leaf_call": """
define void @with_leaf_call() gc "statepoint-example" {
entry:
  br label %loop
loop:
  call void @leaf()
  %c = load volatile i1, i1* @flag, align 1
  br i1 %c, label %loop, label %exit
exit:
  ret void
}""",
    "conditional_call": """
define void @conditional_call(i1 %b) gc "statepoint-example" {
entry:
  br label %loop
loop:
  br i1 %b, label %then, label %latch
then:
  call void @foo()
  br label %latch
latch:
  %c = load volatile i1, i1* @flag, align 1
  br i1 %c, label %loop, label %exit
exit:
  ret void
}""",
    "nested": """
define void @nested(i64 %n) gc "statepoint-example" {
entry:
  br label %outer
outer:
  %j = phi i64 [ 0, %entry ], [ %j.next, %outer.latch ]
  br label %inner
inner:
  %c = load volatile i1, i1* @flag, align 1
  br i1 %c, label %inner, label %outer.latch
outer.latch:
  %j.next = add i64 %j, 1
  %d = icmp slt i64 %j.next, %n
  br i1 %d, label %outer, label %exit
exit:
  ret void
}""",
    "two_latches": """
define void @two_latches() gc "statepoint-example" {
entry:
  br label %loop
loop:
  %c = load volatile i1, i1* @flag, align 1
  br i1 %c, label %a, label %b
a:
  %d = load volatile i1, i1* @flag, align 1
  br i1 %d, label %loop, label %exit
b:
  br label %loop
exit:
  ret void
}""",
    "unreachable": """
define i32 @unreachable(i1 %b) gc "statepoint-example" {
entry:
  br label %join
dead:
  br label %join
join:
  %v = phi i32 [ 1, %entry ], [ 2, %dead ]
  ret i32 %v
}""",
    "clash": """
define void @clash() gc "statepoint-example" {
entry:
  %c.i = load volatile i1, i1* @flag, align 1
  br label %slow.i
slow.i:
  br i1 %c.i, label %slow.i, label %gc.safepoint_poll.exit
gc.safepoint_poll.exit:
  ret void
}""",
    "nogc": """
define void @nogc() {
entry:
  br label %loop
loop:
  br label %loop
}""",
}


def module_of(*names: str) -> str:
    return POLL + "\n".join(FUNCS[n] for n in names) + "\n"


def placed(text: str, options: str = "") -> "Module":
    m = parse_module(text)
    run(m, f"place-safepoints<{options}>" if options else "place-safepoints")
    return m


def polls(fn) -> int:
    return sum(1 for i in fn.instructions() if isinstance(i, Call) and i.callee_name == "do_safepoint")


def function_text(m, name: str) -> str:
    text = print_module(m)
    start = text.index(f"@{name}(")
    start = text.rindex("\ndefine", 0, start) + 1
    return text[start:text.index("\n}\n", start) + 3]


# -- hand-written expectations -------------------------------------------------------


def test_entry_poll_goes_after_intrinsics_and_into_the_straight_line_successor():
    m = placed(module_of("entry_only"))
    text = function_text(m, "entry_only")
    assert polls(m.get_function("entry_only")) == 1
    assert [b.name for b in m.get_function("entry_only").blocks] == ["entry", "next", "slow.i",
                                                                      "gc.safepoint_poll.exit"]
    assert "gc.safepoint_poll.exit:\n  call void @foo()" in text
    assert "next:\n  %c.i = load volatile i1, i1* @flag" in text


def test_unbounded_loop_gets_a_backedge_poll_before_the_latch_branch_named_first():
    m = placed(module_of("unbounded"))
    fn = m.get_function("unbounded")
    assert polls(fn) == 2
    names = [b.name for b in fn.blocks]
    assert names == ["entry", "slow.i2", "gc.safepoint_poll.exit3", "loop", "slow.i",
                     "gc.safepoint_poll.exit", "exit"]
    assert "gc.safepoint_poll.exit:\n  br i1 %c, label %loop, label %exit" in function_text(m, "unbounded")


@pytest.mark.parametrize("name", ["counted_i32", "counted_i64_small", "while_i32", "with_call"])
def test_loops_that_need_no_backedge_poll(name):
    m = placed(module_of(name))
    assert polls(m.get_function(name)) == 1  # the entry poll only


@pytest.mark.parametrize("name", ["counted_i64_large", "down_i64_var", "with_leaf_call", "conditional_call",
                                  "two_latches"])
def test_loops_that_need_a_backedge_poll(name):
    m = placed(module_of(name))
    expected = 3 if name == "two_latches" else 2
    assert polls(m.get_function(name)) == expected


def test_nested_loops_poll_the_inner_latch_and_the_uncounted_outer_latch():
    m = placed(module_of("nested"))
    fn = m.get_function("nested")
    assert polls(fn) == 3
    text = function_text(m, "nested")
    # sorted by latch name: "inner" < "outer.latch", so inner gets the plain names
    assert "inner:\n  %c = load volatile i1, i1* @flag, align 1\n  %c.i = load" in text


def test_functions_without_a_statepoint_gc_and_the_poll_itself_are_left_alone():
    text = module_of("nogc")
    assert print_module(placed(text)) == print_module(parse_module(text))


def test_name_clashes_use_the_function_wide_counter():
    m = placed(module_of("clash"))
    fn = m.get_function("clash")
    # backedge poll first: c.i -> c.i1, slow.i -> slow.i2, exit -> exit3; then the entry
    # poll continues the same counter: c.i4, slow.i5, exit6 (confirmed against opt 14 below)
    assert [b.name for b in fn.blocks] == ["entry", "slow.i5", "gc.safepoint_poll.exit6", "slow.i", "slow.i2",
                                           "gc.safepoint_poll.exit3", "gc.safepoint_poll.exit"]
    assert [i.name for i in fn.instructions() if i.name and i.name.startswith("c.")] == ["c.i", "c.i4", "c.i1"]


def test_unreachable_blocks_are_removed_and_phis_collapse():
    m = parse_module(module_of("unreachable"))
    fn = m.get_function("unreachable")
    dead = remove_unreachable_blocks(fn)
    assert [b.name for b in dead] == ["dead"]
    assert "ret i32 1" in function_text(m, "unreachable")


# -- options ---------------------------------------------------------------------------


def test_no_entry_and_no_backedge():
    m = placed(module_of("unbounded", "entry_only"), "no-entry")
    assert polls(m.get_function("unbounded")) == 1 and polls(m.get_function("entry_only")) == 0
    m = placed(module_of("unbounded"), "no-backedge")
    assert polls(m.get_function("unbounded")) == 1
    m = placed(module_of("unbounded"), "no-entry;no-backedge")
    assert polls(m.get_function("unbounded")) == 0


def test_all_backedges_and_no_call():
    m = placed(module_of("counted_i32", "with_call"), "all-backedges")
    assert polls(m.get_function("counted_i32")) == 2 and polls(m.get_function("with_call")) == 2
    m = placed(module_of("counted_i32", "with_call"), "no-call")
    assert polls(m.get_function("counted_i32")) == 1 and polls(m.get_function("with_call")) == 2


def test_trip_width():
    m = placed(module_of("counted_i32", "counted_i64_small"), "trip-width=16")
    assert polls(m.get_function("counted_i32")) == 2       # i32 with unknown bound
    assert polls(m.get_function("counted_i64_small")) == 1  # 999 backedges fit in 16 bits
    m = placed(module_of("counted_i64_large"), "trip-width=41")
    assert polls(m.get_function("counted_i64_large")) == 1


def test_split_backedge_puts_the_poll_on_a_new_edge_block():
    m = placed(module_of("unbounded"), "split-backedge;no-entry")
    names = [b.name for b in m.get_function("unbounded").blocks]
    assert names == ["entry", "loop", "loop.loop_crit_edge", "slow.i", "gc.safepoint_poll.exit", "exit"]


def test_option_errors():
    with pytest.raises(GCToyError):
        SafepointOptions.parse("bogus")
    with pytest.raises(GCToyError):
        SafepointOptions.parse("trip-width=x")
    with pytest.raises(UnknownPassError):
        run(parse_module(module_of("unbounded")), "verify<x>")
    assert SafepointOptions.parse("spp-no-entry;trip-width=8") == SafepointOptions(no_entry=True, trip_width=8)


def test_missing_poll_function_is_an_error():
    with pytest.raises(GCToyError, match="gc.safepoint_poll"):
        placed("declare void @foo()\n" + FUNCS["entry_only"].replace("@llvm.memset.p0i8.i64(i8* %p, i8 0, i64 8, i1 false)", "@foo()"))


def test_counted_loop_recogniser_directly():
    m = parse_module(module_of("counted_i32", "counted_i64_large"))
    for name, width, expected in [("counted_i32", 32, True), ("counted_i32", 31, False),
                                  ("counted_i64_large", 32, False), ("counted_i64_large", 41, True)]:
        fn = m.get_function(name)
        dt = DominatorTree(fn)
        (loop,) = LoopInfo(fn, dt).loops
        assert must_be_finite_counted_loop(loop, dt, width) is expected, (name, width)


# -- differential against LLVM 14 ---------------------------------------------------------

DIFF_CASES = [(name, "") for name in FUNCS if name != "nogc"] + [
    ("nested", "spp-no-entry"),
    ("counted_i32", "spp-all-backedges"),
    ("with_call", "spp-no-call"),
    ("counted_i64_small", "spp-counted-loop-trip-width=8"),
    ("counted_i64_large", "spp-counted-loop-trip-width=41"),
    ("unbounded", "spp-split-backedge"),
    ("nested", "spp-split-backedge"),
    ("unbounded", "spp-no-backedge"),
]


@pytest.mark.parametrize("name,flag", DIFF_CASES)
def test_same_output_as_llvm14(llvm14, name, flag):
    source = module_of(name, "nogc")
    flags = [f"-{flag}"] if flag else []
    canon = run_opt(llvm14.opt, ["-S"], source)
    assert canon.returncode == 0, canon.stderr
    theirs = run_opt(llvm14.opt, ["-enable-new-pm=0", "-place-safepoints", *flags, "-S"], source)
    assert theirs.returncode == 0, theirs.stderr
    options = flag.removeprefix("spp-").replace("counted-loop-trip-width", "trip-width")
    ours = placed(canon.stdout, options)
    ours_text = print_module(ours)
    assert run_opt(llvm14.opt, ["-passes=verify", "-disable-output"], ours_text).returncode == 0
    theirs_text = print_module(parse_module(theirs.stdout))
    assert ours_text == theirs_text
