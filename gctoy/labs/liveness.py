"""Lab (chapter 04): the GC pointers live across each call, as RewriteStatepointsForGC computes them.

The student writes ``live_across(fn)``: for every ``call`` and ``invoke`` of the function, the set
of GC pointers (``addrspace(1)`` values that are not constants) live across it. The rule is
RS4GC's (``gctoy.passes.rs4gc_liveness``, after LLVM 14's ``computeLiveInValues``):

* backward liveness over the CFG, iterated until nothing changes (loops!);
* a phi's incoming value is used *on the edge* from its predecessor: it is live out of that
  predecessor only, not live into the phi's block;
* the live set at a call is what is live just after the call, plus the call's own GC-pointer
  operands, minus the call's own result.

:func:`check` compares the student's sets with LLVM 14's (``opt -passes=rewrite-statepoints-for-gc
-spp-print-liveset``) where LLVM 14 is installed and gctoy's own analysis otherwise, on the seed's
and the chapter's examples and on generated functions (diamonds, loops, phis, a value live on one
path only), and names the call and the missing or extra value when they differ. Then
:func:`stress_run` plugs the student's function into gctoy's RewriteStatepointsForGC in place of
both liveness phases, compiles a program and runs it under GC stress (a collection at every
statepoint) with the heap verifier: a pointer missing from a live set is not relocated, and the
program reads an object where it no longer is.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import cache

from ..ir import instructions as I
from ..ir.analysis import LocalNames
from ..ir import parse_module
from ..ir.verifier import verify_module
from ..ir.values import Function, Undef, Value
from ..passes import rewrite_statepoints as rs
from ..passes.base_vectors import is_handled_gc_type
from ..passes.rs4gc_analyze import hold
from ..passes.rs4gc_liveness import OrderedLiveness
from ..passes.rs4gc_state import FunctionState
from . import LabFailure, LabReport, call_student, parsed_function
from .random_functions import random_function

__all__ = ["check", "gctoy_live_sets", "llvm14_agreement", "llvm14_live_sets", "stress_run", "EXAMPLES"]

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


def _compare(
    label: str, text: str, function: str, student: Callable, expected: list[set[str]], oracle: str = "gctoy's RS4GC"
) -> int:
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
                f"In {label}, at {where}:\n  you found {sorted(mine)}, {oracle} finds {sorted(wanted)}.\n  "
                + _explain(fn, names, call, missing, extra)
                + f"\n  The function:\n{text}"
            )
    return len(expected)


_STRESS = f"""\
declare {P} @gc_alloc(i64, i64)
declare void @gc_collect()
declare void @print_i64(i64)

define i64 @main() gc "statepoint-example" {{
entry:
  %a = call {P} @gc_alloc(i64 2, i64 0)
  %ai = bitcast {P} %a to i64 addrspace(1)*
  store i64 7, i64 addrspace(1)* %ai
  %b = call {P} @gc_alloc(i64 2, i64 0)
  %bi = bitcast {P} %b to i64 addrspace(1)*
  store i64 5, i64 addrspace(1)* %bi
  %seven = load i64, i64 addrspace(1)* %ai
  %even = icmp eq i64 %seven, 0
  br i1 %even, label %left, label %right
left:
  %x = call {P} @gc_alloc(i64 2, i64 0)
  br label %join
right:
  %y = call {P} @gc_alloc(i64 2, i64 0)
  call void @gc_collect()
  br label %join
join:
  %p = phi {P} [ %x, %left ], [ %y, %right ]
  br label %loop
loop:
  %i = phi i64 [ 0, %join ], [ %i1, %latch ]
  %bv = load i64, i64 addrspace(1)* %bi
  call void @print_i64(i64 %bv)
  call void @gc_collect()
  br label %latch
latch:
  %i1 = add i64 %i, 1
  %done = icmp eq i64 %i1, 3
  br i1 %done, label %exit, label %loop
exit:
  %av = load i64, i64 addrspace(1)* %ai
  call void @print_i64(i64 %av)
  %pi = bitcast {P} %p to i64 addrspace(1)*
  store i64 %av, i64 addrspace(1)* %pi
  ret i64 %av
}}
"""


def _in_order(fn: Function, values) -> list[Value]:
    """The student's values in the function's order (arguments, then instructions): a stable statepoint."""
    wanted = {id(v) for v in values}
    return [v for v in [*fn.args, *fn.instructions()] if id(v) in wanted]


def _student_sets(state: FunctionState, student: Callable, what: str) -> dict:
    given = call_student(student, what, state.fn)
    if not isinstance(given, dict):
        raise LabFailure(f"live_across should return a dict {{call: set of values}}, not a {type(given).__name__}.")
    return given


def _student_liveness(student: Callable, seen: list) -> Callable[[FunctionState], FunctionState]:
    """RS4GC's phase 3 with the student's live sets in place of OrderedLiveness."""

    def phase(state: FunctionState) -> FunctionState:
        for r in state.records:
            deopt = r.call.bundle("deopt")
            state.holders += hold(
                state.module, r.call, [v for v in (deopt.inputs if deopt else []) if is_handled_gc_type(v.type)]
            )
        given = _student_sets(state, student, "computing the live sets inside RewriteStatepointsForGC")
        expected = OrderedLiveness(state.fn)
        names = LocalNames(state.fn)
        for r in state.records:
            r.live = _in_order(state.fn, given.get(r.call, ()))
            mine = {names(v) for v in r.live}
            wanted = {names(v) for v in expected.live_at(r.call)}
            if mine != wanted:
                seen.append((names(r.call.parent), r.call.callee_name, wanted - mine, mine - wanted))
        return state

    return phase


def _student_liveness_with_bases(student: Callable) -> Callable[[FunctionState], FunctionState]:
    """RS4GC's phase 5 with the student's live sets: each base held just after its call, liveness again."""

    def phase(state: FunctionState) -> FunctionState:
        for r in state.records:
            state.holders += hold(state.module, r.call, [state.bases[id(v)] for v in r.live])
        given = _student_sets(state, student, "computing the live sets again, with each base held after its call")
        for r in state.records:
            r.live = _in_order(state.fn, given.get(r.call, ()))
            for v in r.live:
                state.bases.setdefault(id(v), v)
        for h in state.holders:
            h.erase()
        state.holders = []
        return state

    return phase


def _differences(seen: list) -> str:
    lines = []
    for block, callee, missing, extra in seen:
        if missing:
            lines.append(
                f"at the call of @{callee} in block {block} your set lacks {', '.join(sorted(missing))}: the "
                "statepoint does not relocate it, the collector moves its object and the program goes on "
                "using the old address, where the object no longer is"
            )
        if extra:
            lines.append(
                f"at the call of @{callee} in block {block} your set also holds {', '.join(sorted(extra))}, not "
                "live there: the statepoint names a value that no path from the entry has defined (a phi's "
                "input is used on its own edge, not at the top of the phi's block)"
            )
    return "".join(f"\n  - {line}" for line in lines)


def _no_undef_roots(module, intro: str, seen: list) -> None:
    """Fail when a statepoint relocates ``undef``: a value held live on a path where it has no definition yet."""
    for fn in module.definitions():
        for inst in fn.instructions():
            live = inst.bundle("gc-live") if isinstance(inst, I.CallBase) else None
            if live is not None and any(isinstance(v, Undef) for v in live.inputs):
                raise LabFailure(
                    f"{intro} runs, but a statepoint relocates undef: your live sets hold a pointer across "
                    f"a call that no path from the entry has defined yet, and mem2reg filled the hole with "
                    f"undef. The collector is handed a root that is no pointer at all.{_differences(seen)}"
                )


@cache
def _reference_output() -> list[int]:
    """What the lab's program prints through gctoy's own RS4GC, with no collector."""
    from ..passes import run as run_pass
    from ..runtime.run import run_module

    module = parse_module(_STRESS)
    run_pass(module, "rewrite-statepoints-for-gc")
    return list(run_module(module, gc="none").printed)


def stress_run(live_across: Callable[[Function], dict]) -> tuple[int, int]:
    """RS4GC with the student's live sets, compiled and run under GC stress with the heap verifier.

    Returns (collections, objects copied); raises LabFailure when the program fails or prints other
    numbers than it does with gctoy's own RS4GC and no collector.
    """
    from ..runtime.run import run_module

    seen: list = []
    phases = tuple(
        (
            name,
            _student_liveness(live_across, seen)
            if name == "liveness"
            else _student_liveness_with_bases(live_across)
            if name == "liveness with bases"
            else phase,
        )
        for name, phase in rs.PHASES
    )
    module = parse_module(_STRESS)
    intro = (
        "With your live sets plugged into RewriteStatepointsForGC, the lab's program (a phi of two "
        "allocations, a loop that reads %b at its top and calls @gc_collect, %a read after the loop)"
    )
    try:
        rs.rewrite_module(module, phases=phases)
        problems = verify_module(module)
        if problems:
            raise LabFailure(
                f"{intro} is not valid IR after RewriteStatepointsForGC (LLVM's verifier would reject it too): "
                f"{problems[0].message}{_differences(seen)}"
            )
        _no_undef_roots(module, intro, seen)
        result = run_module(module, stress=True, verify=True)
    except LabFailure:
        raise
    except Exception as error:  # invalid IR, a heap the verifier rejects, a wild pointer
        raise LabFailure(
            f"{intro} failed under GC stress: {type(error).__name__}: {error}{_differences(seen)}"
        ) from None
    reference = _reference_output()
    if result.printed != reference:
        raise LabFailure(
            f"{intro} printed {result.printed} under GC stress (a collection at every statepoint), but "
            f"{reference} without a collector.{_differences(seen)}"
        )
    return result.stats.gc.collections, result.stats.gc.objects_copied


#: how many of check's functions (the examples first) go through LLVM 14's opt as well
LLVM_CASES = len(EXAMPLES) + 3


def llvm14_live_sets(text: str) -> list[set[str]] | None:
    """LLVM 14's answer (``opt -passes=rewrite-statepoints-for-gc -spp-print-liveset``): for each
    statepoint of the module in order, the names live across it; None when LLVM 14 is not installed
    (or a live value has no name, which LLVM prints blank)."""
    from ..llvm_tools import run_opt, tool_path

    opt = tool_path("opt", 14)
    if opt is None:
        return None
    flags = ["-passes=rewrite-statepoints-for-gc", "-spp-print-liveset", "-spp-print-liveset-size"]
    done = run_opt(opt, [*flags, "-disable-output", "-"], text)
    if done.returncode != 0:
        return None
    sets: list[set[str]] = []
    current: set[str] | None = None
    for line in done.stderr.splitlines():
        if line == "Live Variables:":
            current = set()
        elif line.startswith("Safepoint For:") and current is not None:
            sets.append(current)
            current = None
        elif current is not None:
            name = line[1:].split(" ", 1)[0]
            if not name:
                return None
            current.add(f"%{name}")
    return sets


def _cases(generated: int) -> list[tuple[str, str, str]]:
    """The examples, then ``generated`` random functions: (label, module text, function name)."""
    return EXAMPLES + [
        (f"generated function (seed {seed})", random_function(seed, regions=3), "g")
        for seed in range(100, 100 + generated)
    ]


def check(live_across: Callable[[Function], dict], generated: int = 12) -> LabReport:
    """Run ``live_across`` on the examples and ``generated`` random functions; compare with LLVM 14's
    live sets where it is installed (gctoy's RS4GC otherwise); then run RS4GC with the student's
    liveness on a program under GC stress with the heap verifier."""
    cases = _cases(generated)
    calls = values = 0
    pool = ThreadPoolExecutor(max_workers=2)  # opt starts in ~0.2 s: two at a time
    llvm = [pool.submit(llvm14_live_sets, text) for _, text, _ in cases[:LLVM_CASES]]
    try:
        for k, (label, text, function) in enumerate(cases):
            expected = gctoy_live_sets(text, function)
            theirs = llvm[k].result() if k < len(llvm) else None
            oracle = "gctoy's RS4GC"
            if theirs is not None and len(theirs) == len(expected):
                expected, oracle = theirs, "LLVM 14's RS4GC (opt -spp-print-liveset)"
            calls += _compare(label, text, function, live_across, expected, oracle)
            values += sum(len(s) for s in expected)
    finally:
        pool.shutdown(cancel_futures=True)
    loops = sum(1 for _, text, function in cases if _has_back_edge(parsed_function(text, function)))
    collections, copied = stress_run(live_across)
    return LabReport(
        "gctoy.labs.liveness",
        [
            f"{len(cases)} functions ({len(EXAMPLES)} from the seed and the chapter, {generated} generated; {loops} with "
            f"loops): {calls} calls, {values} live GC pointers in all, each set as RewriteStatepointsForGC computes it",
            f"RS4GC with your live sets under GC stress: {collections} collections, {copied} objects copied, "
            "heap verified after each, same output as without a collector",
        ],
    )


def llvm14_agreement(live_across: Callable[[Function], dict], count: int = LLVM_CASES) -> str:
    """Which oracle :func:`check` held the student's sets to, in one line: LLVM 14's ``-spp-print-liveset``
    on the examples and the first generated functions where LLVM 14 is installed; where it is not, a
    line that says so (gctoy's RS4GC liveness is then the oracle)."""
    cases = _cases(count)[:count]
    with ThreadPoolExecutor(max_workers=2) as pool:
        answers = list(pool.map(llvm14_live_sets, [text for _, text, _ in cases]))
    if all(a is None for a in answers):
        return (
            "LLVM 14 not installed: your live sets were compared with gctoy's RS4GC liveness (the same "
            '"gc-live" bundles as LLVM 14\'s pass, section 5)'
        )
    same = 0
    for (label, text, function), theirs in zip(cases, answers):
        if theirs is not None:
            _compare(label, text, function, live_across, theirs, "LLVM 14's RS4GC (opt -spp-print-liveset)")
            same += 1
    return f"your live sets are the ones LLVM 14's opt -spp-print-liveset prints, on {same} functions"
