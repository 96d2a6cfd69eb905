"""Differential check of gctoy's RewriteStatepointsForGC against LLVM's, and a test-case shrinker.

The oracle (:class:`Oracle`) is LLVM 14 with typed pointers or LLVM 19 (or any release from 15
on) with opaque pointers: the generated input (typed) is printed with ``ptr`` by gctoy's printer
for the latter, and gctoy's output is printed in the same style. From LLVM 16 on, RS4GC first
moves cheap derived pointers next to their uses (``-rs4gc-remat-derived-at-uses``, on by
default); gctoy's pass does what LLVM 14 does, so that step is turned off for those releases
and the comparison is of the statepoint placement, liveness, bases and rematerialization.

``check_batch`` runs both passes over one module of many generated functions (one ``opt``
process for all of them), and returns the functions on which they disagree. What counts as
agreeing, per function:

* gctoy's pass runs without raising, and its printed output is accepted by the oracle's
  ``opt -passes=verify`` and ``opt -passes='verify<safepoint-ir>'``;
* the same calls became statepoints, and at each of them the same ``(base, derived)``
  pairs are relocated and the same values are rematerialized, as
  :mod:`rs4gc_oracle` reads them back in terms of the input's values.

``shrink`` makes a failing function smaller while it keeps failing the same way: it turns
conditional branches into unconditional ones, invokes into calls, merges straight-line
blocks, drops ``"deopt"`` bundles and deletes instructions (their uses become ``null``/``0``/``undef``), keeping
only candidates that ``opt -passes=verify`` accepts. ``report`` prints the reduced input
and both outputs.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from gctoy.ir import parse_module, print_module
from gctoy.ir.printer import uses_opaque_pointers
from gctoy.ir import instructions as I
from gctoy.ir.types import IntType, PointerType, TokenType, VOID
from gctoy.ir.values import ConstantInt, ConstantNull, Function, Undef
from gctoy.passes import run
from rs4gc_oracle import OracleError, facts_by_call, run_rs4gc

PASS = "rewrite-statepoints-for-gc"
#: candidates the shrinker tries at most (each is one or two runs of opt)
SHRINK_TRIES = 400


def gctoy_rs4gc(text: str, options: str = "") -> str:
    """gctoy's pass (with ``options``) on ``text``, printed in the pointer style of ``text`` (typed or ``ptr``)."""
    m = parse_module(text, "<generated>")
    opaque = uses_opaque_pointers(m)
    run(m, f"{PASS}<{options}>" if options else PASS)
    return print_module(m, opaque=opaque)


@dataclass(frozen=True)
class Oracle:
    """One LLVM release used as the reference: its ``opt`` and the pointer style it reads."""

    name: str
    opt: Path
    opaque: bool
    #: flags for ``opt -passes=rewrite-statepoints-for-gc``
    rs4gc_flags: tuple[str, ...] = ()
    #: options of gctoy's pass that select this release's behaviour
    gctoy_options: str = ""

    def prepare(self, text: str) -> str:
        """The typed-pointer ``text`` as this oracle reads it (printed with ``ptr`` for LLVM 15+)."""
        return print_module(parse_module(text, "<generated>"), opaque=True) if self.opaque else text

    def print(self, m) -> str:
        """A module of gctoy's, printed in this oracle's pointer style."""
        return print_module(m, opaque=self.opaque)


def oracle_of(tools) -> Oracle:
    """The oracle for an :class:`llvm_tools.LLVMTools` (opaque pointers from LLVM 15 on)."""
    flags = ("-rs4gc-remat-derived-at-uses=false",) if tools.version >= 16 else ()
    return Oracle(f"LLVM {tools.version}", Path(tools.opt), tools.version >= 15, flags,
                  f"llvm={tools.version}" if tools.version != 14 else "")


def as_oracle(oracle: "Oracle | str | Path") -> Oracle:
    """``oracle`` itself, or a bare ``opt`` path taken as LLVM 14 (typed pointers)."""
    return oracle if isinstance(oracle, Oracle) else Oracle("LLVM 14", Path(oracle), False)


def opt_check(opt: str | Path, text: str) -> str | None:
    """None if ``opt`` accepts ``text`` under both verifiers, else what it said."""
    for passes in ("verify", "verify<safepoint-ir>"):
        r = subprocess.run([str(opt), f"-passes={passes}", "-disable-output"], input=text,
                           capture_output=True, text=True, timeout=600)
        if r.returncode != 0:
            return f"opt -passes={passes} rejects gctoy's output:\n{r.stderr.strip()}"
    return None


def opt_valid(opt: str | Path, text: str) -> bool:
    r = subprocess.run([str(opt), "-passes=verify", "-disable-output"], input=text,
                       capture_output=True, text=True, timeout=600)
    return r.returncode == 0


# ---------------------------------------------------------------------------
# comparing


@dataclass
class Outcome:
    """How gctoy's pass did on one module: ``kind`` None means it agrees with LLVM."""

    kind: str | None
    detail: str = ""
    llvm_out: str = ""
    ours_out: str = ""


def compare_facts(theirs: dict, ours: dict, functions: set[str] | None = None) -> dict[str, str]:
    """``{function: description}`` of the functions whose per-call facts differ."""
    bad: dict[str, list[str]] = {}
    for key in sorted(set(theirs) | set(ours)):
        fn, k = key
        if functions is not None and fn not in functions:
            continue
        t, o = theirs.get(key), ours.get(key)
        if t == o:
            continue
        lines = bad.setdefault(fn, [])
        if t is None or o is None:
            lines.append(f"  call {k}: a statepoint in {'gctoy' if t is None else 'LLVM'}'s output only")
            continue
        if t.pairs != o.pairs:
            lines.append(f"  call {k}: relocated pairs differ\n"
                         f"    LLVM only:  {_pairs(t.pairs - o.pairs)}\n"
                         f"    gctoy only: {_pairs(o.pairs - t.pairs)}")
        if t.remat != o.remat:
            lines.append(f"  call {k}: rematerialized values differ: LLVM {sorted(t.remat)}, "
                         f"gctoy {sorted(o.remat)}")
    return {fn: "\n".join(lines) for fn, lines in bad.items()}


def _pairs(pairs) -> str:
    return ", ".join(f"({b}, {d})" for b, d in sorted(pairs)) or "-"


def _kind(detail: str) -> str:
    return "relocations differ" if "relocated pairs differ" in detail or "statepoint in" in detail \
        else "rematerialization differs"


def check_one(oracle: Oracle | str | Path, text: str) -> Outcome:
    """Run both passes on a module (in the oracle's pointer style) and compare them."""
    oracle = as_oracle(oracle)
    opt = oracle.opt
    llvm_out = run_rs4gc(opt, text, list(oracle.rs4gc_flags))
    try:
        ours = gctoy_rs4gc(text, oracle.gctoy_options)
    except Exception as e:  # noqa: BLE001 - any crash of the pass is a finding
        return Outcome(f"gctoy raised {type(e).__name__}", f"{type(e).__name__}: {e}", llvm_out)
    problem = opt_check(opt, ours)
    if problem is not None:
        which = "verify<safepoint-ir>" if "safepoint-ir" in problem.splitlines()[0] else "verify"
        return Outcome(f"opt {which} rejects gctoy's output", problem, llvm_out, ours)
    try:
        theirs_f = facts_by_call(llvm_out, text)
    except OracleError as e:
        return Outcome("oracle cannot read LLVM's output", str(e), llvm_out, ours)
    try:
        ours_f = facts_by_call(ours, text)
    except OracleError as e:
        return Outcome("oracle cannot read gctoy's output", str(e), llvm_out, ours)
    diff = compare_facts(theirs_f, ours_f)
    if diff:
        detail = "\n".join(f"@{fn}:\n{d}" for fn, d in diff.items())
        return Outcome(_kind(detail), detail, llvm_out, ours)
    return Outcome(None, "", llvm_out, ours)


@dataclass
class Failure:
    """One generated function on which gctoy and LLVM disagree."""

    seed: int
    size: int
    outcome: Outcome
    source: str


def check_batch(oracle: Oracle | str | Path, cases: list[tuple[int, int]],
                make_function: Callable[[int, int], str], make_module: Callable[[list[str]], str]) -> list[Failure]:
    """Check every ``(seed, size)`` function; all in one module first, one by one only to find culprits.

    ``make_function(seed, size)`` must name its function ``@g<seed>`` (as gcprog_gen does) and
    write typed pointers; a bare ``opt`` path stands for LLVM 14.
    """
    oracle = as_oracle(oracle)
    opt = oracle.opt
    functions = [make_function(seed, size) for seed, size in cases]
    text = oracle.prepare(make_module(functions))
    names = [f"g{seed}" for seed, _ in cases]
    suspects: list[int] = []
    llvm_out = run_rs4gc(opt, text, list(oracle.rs4gc_flags))
    try:
        ours = gctoy_rs4gc(text, oracle.gctoy_options)
        if opt_check(opt, ours) is not None:
            raise RuntimeError("rejected")
        theirs_f = facts_by_call(llvm_out, text)
        ours_f = facts_by_call(ours, text)
        diff = compare_facts(theirs_f, ours_f)
        suspects = [i for i, n in enumerate(names) if n in diff]
    except Exception:  # noqa: BLE001 - find out which function it was, one at a time
        suspects = list(range(len(cases)))
    failures = []
    for i in suspects:
        src = oracle.prepare(make_module([functions[i]]))
        outcome = check_one(oracle, src)
        if outcome.kind is not None:
            failures.append(Failure(cases[i][0], cases[i][1], outcome, src))
    return failures


# ---------------------------------------------------------------------------
# shrinking


def _null_of(ty):
    if isinstance(ty, PointerType):
        return ConstantNull(ty)
    if isinstance(ty, IntType):
        return ConstantInt(ty, 0)
    return Undef(ty)


def _cleanup(fn: Function) -> None:
    """Drop unreachable blocks and the phi entries of edges that no longer exist."""
    seen = {id(fn.entry)}
    work = [fn.entry]
    while work:
        b = work.pop()
        for s in b.successors:
            if id(s) not in seen:
                seen.add(id(s))
                work.append(s)
    fn.blocks[:] = [b for b in fn.blocks if id(b) in seen]
    preds: dict[int, set[int]] = {}
    for b in fn.blocks:
        for s in b.successors:
            preds.setdefault(id(s), set()).add(id(b))
    for b in fn.blocks:
        for phi in b.phis():
            phi.incoming = [(v, p) for v, p in phi.incoming if id(p) in preds.get(id(b), set())]


def _edits(fn: Function) -> list[tuple[str, int, int]]:
    """Possible reductions of ``fn``: (kind, block index, instruction index or successor index).

    Kinds: ``branch`` (a conditional branch goes one way), ``invoke`` (becomes a call and a
    branch), ``merge`` (a block joins its only predecessor), ``deopt`` (bundle dropped),
    ``delete`` (an instruction goes; its uses become a constant).
    """
    out: list[tuple[str, int, int]] = []
    for bi, b in enumerate(fn.blocks):
        t = b.terminator
        if isinstance(t, I.Br) and t.is_conditional:
            out += [("branch", bi, 0), ("branch", bi, 1)]
        if isinstance(t, I.Invoke):
            out.append(("invoke", bi, 0))
    preds: dict[int, list] = {}
    for b in fn.blocks:
        for s in b.successors:
            preds.setdefault(id(s), []).append(b)
    for bi, b in enumerate(fn.blocks):
        p = preds.get(id(b), [])
        if len(p) == 1 and p[0] is not b and not b.phis() and isinstance(p[0].terminator, I.Br) \
                and not p[0].terminator.is_conditional:
            out.append(("merge", bi, 0))
    for bi, b in enumerate(fn.blocks):
        for ii, inst in enumerate(b.instructions):
            if isinstance(inst, I.CallBase) and inst.bundle("deopt") is not None:
                out.append(("deopt", bi, ii))
    for bi, b in reversed(list(enumerate(fn.blocks))):
        for ii in reversed(range(len(b.instructions))):
            inst = b.instructions[ii]
            if inst.is_terminator or isinstance(inst, I.LandingPad) or isinstance(inst.type, TokenType):
                continue
            out.append(("delete", bi, ii))
    return out


def _apply(fn: Function, edit: tuple[str, int, int]) -> None:
    kind, bi, x = edit
    b = fn.blocks[bi]
    if kind == "branch":
        t = b.terminator
        target = t.successors[x]
        t.erase()
        b.append(I.Br(target))
    elif kind == "invoke":
        inv = b.terminator
        call = I.Call(inv.ftype, inv.callee, list(inv.args), arg_attrs=list(inv.arg_attrs), ret_attrs=inv.ret_attrs,
                      fn_attrs=inv.fn_attrs, cc=inv.cc, bundles=list(inv.bundles), name=inv.name)
        normal = inv.normal
        inv.erase()
        b.append(call)
        fn.replace_all_uses(inv, call)
        b.append(I.Br(normal))
    elif kind == "merge":  # b's only predecessor ends in 'br label %b': append b to it
        (pred,) = [p for p in fn.blocks if b in p.successors]
        pred.terminator.erase()
        for inst in list(b.instructions):
            pred.append(inst)
        b.instructions = []
        fn.blocks.remove(b)
        for other in fn.blocks:
            for phi in other.phis():
                phi.incoming = [(v, pred if blk is b else blk) for v, blk in phi.incoming]
    elif kind == "deopt":
        call = b.instructions[x]
        call.bundles = [bb for bb in call.bundles if bb.tag != "deopt"]
    elif kind == "delete":
        inst = b.instructions[x]
        if inst.type != VOID:
            fn.replace_all_uses(inst, _null_of(inst.type))
        inst.erase()
    _cleanup(fn)


def _only_function(m) -> Function:
    (fn,) = list(m.definitions())
    return fn


def shrink(oracle: Oracle | str | Path, text: str, kind: str, tries: int = SHRINK_TRIES) -> str:
    """A smaller module on which ``check_one`` still reports ``kind`` (greedy, at most ``tries`` candidates;
    a budget of attempts rather than of seconds, so that the same failure always shrinks the same way)."""
    oracle = as_oracle(oracle)
    opt = oracle.opt
    cur = text
    i = 0
    while tries > 0:
        edits = _edits(_only_function(parse_module(cur)))
        if i >= len(edits):
            break
        m = parse_module(cur)
        try:
            _apply(_only_function(m), edits[i])
            cand = oracle.print(m)
        except Exception:  # noqa: BLE001 - an edit that does not apply is skipped
            i += 1
            continue
        tries -= 1
        if opt_valid(opt, cand):
            try:
                same = check_one(oracle, cand).kind == kind
            except Exception:  # noqa: BLE001 - e.g. LLVM itself refusing the candidate
                same = False
            if same:
                cur = cand
                continue  # the edit list changed; the same index now names the next edit
        i += 1
    return cur


def _function_text(module_text: str) -> str:
    """Only the ``define ... }`` parts of a module's text."""
    out, inside = [], False
    for line in module_text.splitlines():
        if line.startswith("define "):
            inside = True
        if inside:
            out.append(line)
        if inside and line == "}":
            inside = False
            out.append("")
    return "\n".join(out).rstrip() + "\n"


def report(oracle: Oracle | str | Path, failure: Failure, tries: int = SHRINK_TRIES) -> str:
    """The reduced reproducer of a failure, with both outputs and what differs."""
    oracle = as_oracle(oracle)
    small = shrink(oracle, failure.source, failure.outcome.kind, tries)
    outcome = check_one(oracle, small)
    parts = [
        f"generated function seed={failure.seed} size={failure.size}: {failure.outcome.kind}",
        f"(the whole module: python tests/gcprog_gen.py {failure.seed} {failure.size})",
        "", "--- reduced input (tests/gcprog_gen.py preamble + this function) ---", _function_text(small),
        "--- what differs on the reduced input ---", outcome.detail or failure.outcome.detail,
        "", f"--- {oracle.name} output ---", _function_text(outcome.llvm_out) if outcome.llvm_out else "(none)",
        "--- gctoy output ---", _function_text(outcome.ours_out) if outcome.ours_out else "(none)",
    ]
    return "\n".join(parts)
