"""Lab (chapter 03): base defining values and the base-pointer lattice, as RewriteStatepointsForGC finds them.

The student writes ``find_bases(fn)``: for every GC pointer of a function (its ``addrspace(1)``
arguments and instructions), the base RS4GC reports with it at a statepoint:

* an existing value: an argument, a ``load``, a call's result, an ``inttoptr``, or a phi/select
  that is its own base (all its inputs are, up to pointer casts, values that are their own base);
* a :class:`~gctoy.ir.values.Constant` (any: they all stand for ``null``) for a pointer computed
  from a constant;
* ``NewBase(node)`` when the base is a base phi/select that RS4GC must insert beside the phi or
  select ``node``, because the lattice put ``node`` in *Conflict*.

:func:`check` runs the student's function on the seeds' and the chapter's examples and on
generated functions, and compares each answer with gctoy's own :class:`BaseFinder` (the pass's
code, which prints the same IR as LLVM 14's pass). Then it plugs the student's bases into gctoy's
RewriteStatepointsForGC, compiles a program whose loop carries a phi of pointers into two
different objects, and runs it under GC stress (a collection at every statepoint) with the heap
verifier: wrong bases relocate pointers into the wrong object, and the program prints other
numbers than it does with no collector.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from ..ir import instructions as I
from ..ir import parse_module
from ..ir.analysis import LocalNames
from ..ir.types import is_gc_pointer
from ..ir.values import Constant, Function, Value
from ..llvm_results import LLVMResults, ToolRun
from ..llvm_tools import run_opt, tool_path
from ..passes import base_pointers as bp
from ..passes.naming import NameUniquer
from ..passes import rewrite_statepoints as rs
from ..passes.rs4gc_analyze import bases
from . import LabFailure, LabReport, call_student, parsed_function
from .random_functions import random_function

__all__ = ["NewBase", "check", "gctoy_bases", "llvm14_agreement", "EXAMPLES"]

P = "i8 addrspace(1)*"


@dataclass(frozen=True)
class NewBase:
    """The base phi/select RS4GC inserts beside the phi or select ``node`` (named ``<node>.base``)."""

    node: Any

    def __hash__(self) -> int:
        return id(self.node)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, NewBase) and other.node is self.node


#: the seeds' and the chapter's examples: (label, module text, function name)
EXAMPLES: list[tuple[str, str, str]] = [
    (
        "seed 000's exterior pointer (Base & Derived Pointers)",
        f"""\
declare void @foo()
define {P} @test1({P} %obj) gc "statepoint-example" {{
  %gep = getelementptr i8, {P} %obj, i64 20000
  call void @foo()
  %p = getelementptr i8, {P} %gep, i64 -20000
  ret {P} %p
}}
""",
        "test1",
    ),
    (
        "@kinds: one pointer of each kind",
        f"""\
declare {P} @make()
define void @kinds({P} %arg, {P} addrspace(1)* %slot, i64 %raw, i1 %c) gc "statepoint-example" {{
entry:
  %loaded = load {P}, {P} addrspace(1)* %slot
  %made = call {P} @make()
  %field = getelementptr i8, {P} %made, i64 24
  %cast = bitcast {P} %field to i64 addrspace(1)*
  %elem = getelementptr i64, i64 addrspace(1)* %cast, i64 %raw
  %forged = inttoptr i64 %raw to {P}
  %from_null = getelementptr i8, {P} null, i64 16
  %either = select i1 %c, {P} %field, {P} %loaded
  ret void
}}
""",
        "kinds",
    ),
    (
        "@pick: a phi of two bases",
        f"""\
define {P} @pick(i1 %c, {P} %a, {P} %b) gc "statepoint-example" {{
entry:
  br i1 %c, label %left, label %right
left:
  br label %join
right:
  br label %join
join:
  %p = phi {P} [ %a, %left ], [ %b, %right ]
  ret {P} %p
}}
""",
        "pick",
    ),
    (
        "@walk: a loop cursor into one object",
        f"""\
define {P} @walk({P} %base, i64 %n) gc "statepoint-example" {{
entry:
  %first = getelementptr i8, {P} %base, i64 16
  br label %loop
loop:
  %cur = phi {P} [ %first, %entry ], [ %next, %loop ]
  %i = phi i64 [ 0, %entry ], [ %i1, %loop ]
  %next = getelementptr i8, {P} %cur, i64 8
  %i1 = add i64 %i, 1
  %done = icmp eq i64 %i1, %n
  br i1 %done, label %exit, label %loop
exit:
  ret {P} %cur
}}
""",
        "walk",
    ),
    (
        "@scan: a loop cursor into one of two objects",
        f"""\
define {P} @scan(i1 %c, {P} %a, {P} %b, i64 %n) gc "statepoint-example" {{
entry:
  br i1 %c, label %left, label %right
left:
  %pa = getelementptr i8, {P} %a, i64 8
  br label %loop
right:
  %pb = getelementptr i8, {P} %b, i64 16
  br label %loop
loop:
  %cur = phi {P} [ %pa, %left ], [ %pb, %right ], [ %next, %loop ]
  %i = phi i64 [ 0, %left ], [ 0, %right ], [ %i1, %loop ]
  %next = getelementptr i8, {P} %cur, i64 1
  %i1 = add i64 %i, 1
  %done = icmp eq i64 %i1, %n
  br i1 %done, label %exit, label %loop
exit:
  ret {P} %next
}}
""",
        "scan",
    ),
    (
        "@anon: a select of pointers into two objects",
        f"""\
define {P} @anon(i1 %c, {P} %a, {P} %b) gc "statepoint-example" {{
entry:
  %pa = getelementptr i8, {P} %a, i64 8
  %0 = select i1 %c, {P} %pa, {P} %b
  ret {P} %0
}}
""",
        "anon",
    ),
    (
        "@e2b: a zero GEP is a cast",
        f"""\
define {P} @e2b(i1 %c, {P} %a, {P} %b) gc "statepoint-example" {{
entry:
  br i1 %c, label %l, label %r
l:
  br label %join
r:
  %b0 = getelementptr i8, {P} %b, i64 0
  br label %join
join:
  %p = phi {P} [ %a, %l ], [ %b0, %r ]
  %q = select i1 %c, {P} %p, {P} %a
  ret {P} %q
}}
""",
        "e2b",
    ),
]


def _gc_values(fn: Function) -> list[Value]:
    return [v for v in [*fn.args, *fn.instructions()] if is_gc_pointer(v.type)]


def _label(names: LocalNames, base: Any) -> str:
    if isinstance(base, NewBase):
        return f"a new base phi/select beside {names(base.node)}"
    if isinstance(base, Constant):
        return "null (a constant)"
    if isinstance(base, Value):
        return names(base)
    return repr(base)


def gctoy_bases(text: str, function: str) -> dict[str, str]:
    """gctoy's own answer (RS4GC's BaseFinder, LLVM 14's rules): value name -> label of its base.

    Each value is asked of a fresh BaseFinder, as the first question: the pass itself asks value
    after value with one cache, and a later value may then reuse a base phi made for an earlier
    one (the lab leaves that cache out; the lattice's answer is the same otherwise).
    """
    count = len(_gc_values(parsed_function(text, function)))
    out = {}
    for index in range(count):
        fn = parsed_function(text, function)
        names = LocalNames(fn)
        v = _gc_values(fn)[index]
        beside: dict[int, Value] = {}  # id(inserted base phi/select) -> the phi/select it was made for

        class Recording(bp.BaseFinder):
            def _insert_base(self, node: Value) -> I.Instruction:
                base = super()._insert_base(node)
                beside[id(base)] = node
                return base

        base = Recording(NameUniquer(fn), lambda: "!0").find_base(v)
        out[names(v)] = _label(names, NewBase(beside[id(base)]) if id(base) in beside else base)
    return out


def _generated(count: int, start: int = 0) -> list[tuple[str, str, str]]:
    return [
        (f"generated function (seed {seed})", random_function(seed, regions=3), "g")
        for seed in range(start, start + count)
    ]


def _why(names: LocalNames, v: Value, given: str, expected: str) -> str:
    """A sentence on the rule the student's answer broke."""
    if expected.startswith("a new base phi") and not given.startswith("a new base"):
        return (
            "Its inputs lead to different objects: the meet of Base(x) and Base(y) with x != y is Conflict, "
            "so no existing value is its base on every path and RS4GC inserts a base phi/select beside it "
            "(taking one input's base is only right on that input's path)."
        )
    if given.startswith("a new base phi") and not expected.startswith("a new base"):
        return (
            "Every input leads to the same base (or each input is itself a base, so the phi/select is its own "
            "base and is pruned before the lattice runs): no new base phi/select is needed."
        )
    if isinstance(v, (I.GetElementPtr, I.Cast)):
        return (
            "A GEP or a bitcast/addrspacecast only does address arithmetic: its base is the base of the pointer "
            "it starts from (walk back until a value that is not a GEP or cast)."
        )
    if isinstance(v, (I.Phi, I.Select)):
        return "Meet the states of all its inputs (Unknown, Base(v), Conflict) and iterate until nothing changes."
    return (
        "An argument, a load, a call's result or an inttoptr is a base in its own right; a pointer computed "
        "from a constant has base null."
    )


def _compare(label: str, text: str, function: str, student: Callable, expected: dict[str, str]) -> int:
    fn = parsed_function(text, function)
    names = LocalNames(fn)
    given = call_student(student, f"finding the bases in {label}", fn)
    if not isinstance(given, dict):
        raise LabFailure(f"find_bases should return a dict {{value: base}}, not a {type(given).__name__}.")
    for v in _gc_values(fn):
        if v not in given:
            raise LabFailure(
                f"In {label}: your dict has no entry for {names(v)}; every GC pointer "
                "(addrspace(1) argument or instruction) needs its base."
            )
        mine, theirs = _label(names, given[v]), expected[names(v)]
        if mine != theirs:
            raise LabFailure(
                f"In {label}: you give {names(v)} the base {mine}; gctoy's RS4GC finds {theirs}.\n"
                f"  {_why(names, v, mine, theirs)}\n  The function:\n{text}"
            )
    return len(_gc_values(fn))


_STRESS = f"""\
declare {P} @gc_alloc(i64, i64)
declare void @gc_collect()
declare void @print_i64(i64)

define i64 @main() gc "statepoint-example" {{
entry:
  %a = call {P} @gc_alloc(i64 4, i64 0)
  %b = call {P} @gc_alloc(i64 4, i64 0)
  %a8 = getelementptr i8, {P} %a, i64 8
  %b16 = getelementptr i8, {P} %b, i64 16
  %a8i = bitcast {P} %a8 to i64 addrspace(1)*
  %b16i = bitcast {P} %b16 to i64 addrspace(1)*
  store i64 11, i64 addrspace(1)* %a8i
  store i64 22, i64 addrspace(1)* %b16i
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %i1, %join ]
  %acc = phi i64 [ 0, %entry ], [ %acc1, %join ]
  %odd = and i64 %i, 1
  %even = icmp eq i64 %odd, 0
  br i1 %even, label %left, label %right
left:
  br label %join
right:
  br label %join
join:
  %p = phi {P} [ %a8, %left ], [ %b16, %right ]
  call void @gc_collect()
  %pi = bitcast {P} %p to i64 addrspace(1)*
  %v = load i64, i64 addrspace(1)* %pi
  call void @print_i64(i64 %v)
  %acc1 = add i64 %acc, %v
  %i1 = add i64 %i, 1
  %more = icmp slt i64 %i1, 4
  br i1 %more, label %loop, label %out
out:
  ret i64 %acc1
}}
"""


def _stress_run(student: Callable) -> tuple[int, int]:
    """RS4GC with the student's bases, compiled and run under GC stress; (collections, objects copied)."""
    from ..passes import run as run_pass
    from ..runtime.run import run_module

    answers_fn = parsed_function(_STRESS, "main")
    answer_names = LocalNames(answers_fn)
    answers = call_student(student, "finding the bases of the GC-stress program", answers_fn)
    by_name = {answer_names(v): b for v, b in answers.items()}

    class StudentBases(bp.BaseFinder):
        def find_base(self, v: Value) -> Value:
            fn = self.names.function
            here = LocalNames(fn)
            base = by_name.get(here(v))
            if base is None or isinstance(base, NewBase):
                return super().find_base(v)  # the pass inserts the base phi/select itself
            if isinstance(base, Constant):
                return bp.ConstantNull(v.type)
            wanted = answer_names(base)
            return next(x for x in _gc_values(fn) if here(x) == wanted)

    reference_module = parse_module(_STRESS)
    run_pass(reference_module, "rewrite-statepoints-for-gc")
    reference = run_module(reference_module, gc="none")
    # the pass's phases, with the student's bases in place of its own
    phases = tuple(
        (name, partial(bases, finder_class=StudentBases) if name == "bases" else phase) for name, phase in rs.PHASES
    )
    module = parse_module(_STRESS)
    rs.rewrite_module(module, phases=phases)
    try:
        result = run_module(module, stress=True, verify=True)
    except Exception as error:  # a heap the verifier rejects, a wild pointer
        raise LabFailure(
            "With your bases plugged into RewriteStatepointsForGC, the program of the lab (a loop "
            "whose phi %p points into object %a on even iterations and %b on odd ones) failed under "
            f"GC stress: {type(error).__name__}: {error}"
        ) from None
    if result.printed != reference.printed:
        raise LabFailure(
            "With your bases plugged into RewriteStatepointsForGC, the program of the lab printed "
            f"{result.printed} under GC stress, but {reference.printed} without a collector: a derived pointer "
            "was relocated with the base of another object (new base + (derived - old base) of the wrong object)."
        )
    return result.stats.gc.collections, result.stats.gc.objects_copied


def _base_lines(text: str) -> list[str]:
    """The base phis/selects an RS4GC output inserted (lines with !is_base_value), metadata number dropped."""
    return sorted(
        re.sub(r"!is_base_value !\d+", "!is_base_value", line.split(";")[0].strip())
        for line in text.splitlines()
        if "!is_base_value" in line and "=" in line
    )


def _opt_run(opt: str | None, args: list[str], text: str) -> ToolRun:
    """LLVM 14's opt (installed: ``opt`` is its path) on some IR text."""
    assert opt is not None
    done = run_opt(opt, args, text)
    return ToolRun(done.returncode, done.stdout, done.stderr)


def llvm14_agreement(texts: list[str] | None = None, results: LLVMResults | None = None) -> str:
    """Whether LLVM 14's RS4GC inserts the same base phis/selects as gctoy's on these modules (one line).

    By default: the lab's GC-stress program and the first three generated functions of :func:`check`.
    Given a chapter's ``results``, LLVM's answers come from LLVM 14's opt where it is installed and from
    the answers stored with gctoy where it is not. Without them, where LLVM 14 is not installed, the line
    says so (gctoy's own BaseFinder is then the only oracle).
    """
    if texts is None:
        texts = [_STRESS] + [text for _, text, _ in _generated(3)]
    from ..passes import run as run_pass

    opt = tool_path("opt", 14)
    if opt is None and results is None:
        return (
            "LLVM 14 not installed: gctoy's BaseFinder is the oracle (it inserts the same base phis as LLVM 14's "
            "pass, chapter 03 section 4)"
        )
    same = count = 0
    args = ["-passes=rewrite-statepoints-for-gc", "-S", "-o", "-", "-"]
    for text in texts:
        done = results.run("opt", args, text, "rs4gc") if results is not None else _opt_run(opt, args, text)
        module = parse_module(text)
        run_pass(module, "rewrite-statepoints-for-gc")
        theirs = _base_lines(done.stdout)
        same += done.returncode == 0 and theirs == _base_lines(str(module))
        count += len(theirs)
    if same == len(texts):
        return f"LLVM 14's RS4GC inserts the same {count} base phis/selects as gctoy's, on {len(texts)} programs"
    return (
        f"LLVM 14's RS4GC and gctoy's differ on {len(texts) - same} of {len(texts)} programs "
        "(a gctoy bug: please report it)"
    )


def check(find_bases: Callable[[Function], dict], generated: int = 12) -> LabReport:
    """Run ``find_bases`` on the examples and ``generated`` random functions; compare with gctoy; run under stress."""
    values = 0
    conflicts = 0
    cases = EXAMPLES + _generated(generated)
    for label, text, function in cases:
        expected = gctoy_bases(text, function)
        values += _compare(label, text, function, find_bases, expected)
        conflicts += sum(1 for b in expected.values() if b.startswith("a new base"))
    collections, copied = _stress_run(find_bases)
    return LabReport(
        "gctoy.labs.base_pointers",
        [
            f"{len(cases)} functions ({len(EXAMPLES)} from the seeds and the chapter, {generated} generated): "
            f"{values} GC pointers, {conflicts} of them based on a new base phi/select, all as gctoy's RS4GC finds them",
            f"RS4GC with your bases under GC stress: {collections} collections, {copied} objects copied, "
            "heap verified after each, same output as without a collector",
        ],
    )
