"""Lab (chapter 04): the GC pointers live across each call, as RewriteStatepointsForGC computes them.

The student writes ``live_across(fn)``: for every ``call`` and ``invoke`` of the function, the set
of GC pointers (``addrspace(1)`` values that are not constants) live across it. The rule is
RS4GC's (``gctoy.passes.rs4gc_liveness``, after LLVM 14's ``computeLiveInValues``):

* backward liveness over the CFG, iterated until nothing changes (loops!);
* a phi's incoming value is used *on the edge* from its predecessor: it is live out of that
  predecessor only, not live into the phi's block;
* the live set at a call is what is live just after the call, plus the call's own GC-pointer
  operands, minus the call's own result.

:func:`check` compares the student's sets with gctoy's own analysis on the seed's and the
chapter's examples and on generated functions (diamonds, loops, phis, a value live on one path
only), and names the call and the missing or extra value when they differ.
"""

from __future__ import annotations

from collections.abc import Callable

from ..ir import instructions as I
from ..ir.analysis import LocalNames
from ..ir.values import Function
from ..passes.rs4gc_liveness import OrderedLiveness
from . import LabFailure, LabReport, call_student, parsed_function
from .random_functions import random_function

__all__ = ["check", "gctoy_live_sets", "EXAMPLES"]

P = "i8 addrspace(1)*"

#: the seed's and the chapter's examples, and small CFGs that catch the usual mistakes
EXAMPLES: list[tuple[str, str, str]] = [
    (
        "seed 000's @test1 (RewriteStatepointsForGC)",
        f"""\
declare void @foo()
define {P} @test1({P} %obj) gc "statepoint-example" {{
  call void @foo()
  ret {P} %obj
}}
""",
        "test1",
    ),
    (
        "the chapter's @last_use (an argument is live across its own call)",
        f"""\
declare void @consume({P})
define void @last_use({P} %obj) gc "statepoint-example" {{
entry:
  call void @consume({P} %obj)
  ret void
}}
""",
        "last_use",
    ),
    (
        "@one_path: a value flows into a phi from one predecessor only",
        f"""\
declare void @foo()
define {P} @one_path(i1 %c, {P} %x, {P} %y) gc "statepoint-example" {{
entry:
  br i1 %c, label %left, label %right
left:
  br label %join
right:
  call void @foo()
  br label %join
join:
  %p = phi {P} [ %x, %left ], [ %y, %right ]
  ret {P} %p
}}
""",
        "one_path",
    ),
    (
        "@around: a value used again after the loop's back edge",
        f"""\
declare void @foo()
declare void @use({P})
define void @around({P} %a, {P} %b, i64 %n) gc "statepoint-example" {{
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %latch ]
  call void @use({P} %b)
  call void @foo()
  br label %latch
latch:
  %i1 = add i64 %i, 1
  %done = icmp eq i64 %i1, %n
  br i1 %done, label %exit, label %loop
exit:
  call void @use({P} %a)
  ret void
}}
""",
        "around",
    ),
    (
        "the chapter's @walk (a loop, a phi of derived pointers, an invoke)",
        f"""\
declare {P} @visit({P})
declare i32 @__gxx_personality_v0(...)
define {P} @walk({P} %a, {P} %b, i1 %c, i64 %k, i64 %n) gc "statepoint-example"
        personality i32 (...)* @__gxx_personality_v0 {{
entry:
  %a.hdr = getelementptr i8, {P} %a, i64 8
  %b.hdr = getelementptr i8, {P} %b, i64 16
  br i1 %c, label %loop, label %other
other:
  br label %loop
loop:
  %p = phi {P} [ %a.hdr, %entry ], [ %b.hdr, %other ], [ %p.next, %cont ]
  %i = phi i64 [ 0, %entry ], [ 0, %other ], [ %i.next, %cont ]
  %slot = getelementptr i8, {P} %a, i64 %k
  %q = invoke {P} @visit({P} %p)
          to label %cont unwind label %lpad
cont:
  store i8 1, {P} %slot
  %p.next = getelementptr i8, {P} %p, i64 1
  %i.next = add i64 %i, 1
  %done = icmp eq i64 %i.next, %n
  br i1 %done, label %exit, label %loop
exit:
  ret {P} %q
lpad:
  %lp = landingpad token
          cleanup
  ret {P} null
}}
""",
        "walk",
    ),
]


def _calls(fn: Function) -> list[I.CallBase]:
    return [i for i in fn.instructions() if isinstance(i, I.CallBase)]


def _where(names: LocalNames, call: I.CallBase, index: int) -> str:
    what = f"{names(call)} = " if call.name is not None or str(call.type) != "void" else ""
    kind = "invoke" if isinstance(call, I.Invoke) else "call"
    block = call.parent
    assert block is not None, "a call of a parsed function is in a block"
    return f"statepoint {index} ({what}{kind} @{call.callee_name} in block {names(block)})"


def gctoy_live_sets(text: str, function: str) -> list[set[str]]:
    """gctoy's own answer (RS4GC's liveness): for each call in order, the names live across it."""
    fn = parsed_function(text, function)
    names = LocalNames(fn)
    live = OrderedLiveness(fn)
    return [{names(v) for v in live.live_at(call)} for call in _calls(fn)]


def _phi_elsewhere(fn: Function, names: LocalNames, value: str, call: I.CallBase) -> str | None:
    """A phi that takes ``value`` from a predecessor other than the call's block, if any."""
    for block in fn.blocks:
        for phi in block.phis():
            assert isinstance(phi, I.Phi)
            for v, pred in phi.incoming:
                if names(v) == value and pred is not call.parent:
                    return f"{names(phi)} in block {names(block)} takes {value} only on the edge from {names(pred)}"
    return None


def _has_back_edge(fn: Function) -> bool:
    order = {id(b): i for i, b in enumerate(fn.blocks)}
    return any(order[id(s)] <= order[id(b)] for b in fn.blocks if b.terminator for s in b.terminator.successors)


def _explain(fn: Function, names: LocalNames, call: I.CallBase, missing: set[str], extra: set[str]) -> str:
    lines = []
    own_operands = {names(v) for v in call.operands}
    for value in sorted(extra):
        if call.name is not None and value == names(call):
            lines.append(
                f"{value} is the call's own result: it does not exist before the call, so it is not live across it."
            )
            continue
        phi = _phi_elsewhere(fn, names, value, call)
        if phi:
            lines.append(
                f"{value} is extra. {phi}: a phi's input is used on its edge (live out of that predecessor),"
                " not at the top of the phi's block, so it is not live on the other paths."
            )
        else:
            lines.append(f"{value} is extra: no path from this call reaches a use of it (before a redefinition).")
    for value in sorted(missing):
        if value in own_operands:
            lines.append(
                f"{value} is missing. It is an operand of the call itself: RS4GC walks the block backwards "
                "down to and including the call, so the call's own GC-pointer arguments are live across it."
            )
        elif _has_back_edge(fn):
            lines.append(
                f"{value} is missing. It is used again on some path after the call; in a loop that path "
                "may go round the back edge, so repeat the backward dataflow until no live-in set changes "
                "(one pass over the blocks is not enough)."
            )
        else:
            lines.append(f"{value} is missing: some path from the call reaches a use of it.")
    return "\n  ".join(lines)


def _compare(label: str, text: str, function: str, student: Callable, expected: list[set[str]]) -> int:
    fn = parsed_function(text, function)
    names = LocalNames(fn)
    given = call_student(student, f"computing the live sets of {label}", fn)
    if not isinstance(given, dict):
        raise LabFailure(f"live_across should return a dict {{call: set of values}}, not a {type(given).__name__}.")
    for index, (call, wanted) in enumerate(zip(_calls(fn), expected)):
        where = _where(names, call, index)
        if call not in given:
            raise LabFailure(f"In {label}: your dict has no entry for {where}; every call and invoke needs one.")
        mine = {names(v) for v in given[call]}
        if mine != wanted:
            missing, extra = wanted - mine, mine - wanted
            raise LabFailure(
                f"In {label}, at {where}:\n  you found {sorted(mine)}, gctoy's RS4GC finds {sorted(wanted)}.\n  "
                + _explain(fn, names, call, missing, extra)
                + f"\n  The function:\n{text}"
            )
    return len(expected)


def check(live_across: Callable[[Function], dict], generated: int = 12) -> LabReport:
    """Run ``live_across`` on the examples and ``generated`` random functions; compare with gctoy's analysis."""
    cases = EXAMPLES + [
        (f"generated function (seed {seed})", random_function(seed, regions=3), "g")
        for seed in range(100, 100 + generated)
    ]
    calls = values = 0
    for label, text, function in cases:
        expected = gctoy_live_sets(text, function)
        calls += _compare(label, text, function, live_across, expected)
        values += sum(len(s) for s in expected)
    loops = sum(1 for _, text, function in cases if _has_back_edge(parsed_function(text, function)))
    return LabReport(
        "gctoy.labs.liveness",
        [
            f"{len(cases)} functions ({len(EXAMPLES)} from the seed and the chapter, {generated} generated; {loops} with "
            f"loops): {calls} calls, {values} live GC pointers in all, the same sets as gctoy's RS4GC liveness",
        ],
    )
