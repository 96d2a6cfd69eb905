"""Is a loop certainly finite and short?  A small stand-in for the part of SCEV that PlaceSafepoints asks.

LLVM skips a backedge poll when ScalarEvolution proves that the loop's maximum
backedge-taken count (or the latch's exit count) fits in ``trip_width`` bits
(default 32).  gctoy has no SCEV; it recognises one common shape and treats
every other loop as possibly unbounded, which only ever *adds* a poll
(conservative: a poll too many costs time, a poll too few can hang a GC).

What is recognised, exactly:

* the loop has a single latch block (SCEV computes nothing for several latches);
* an *exiting* block ``E`` of the loop that dominates the latch ends in
  ``br i1 %c, ...`` with one target inside the loop and one outside;
* ``%c`` is ``icmp pred A, B`` on integers of width N, one side an induction
  variable, the other loop-invariant (a constant, an argument, or a value
  defined outside the loop);
* the induction variable is a phi in the header whose incoming values are one
  *start* value from outside the loop and ``%iv.next`` from the latch, with
  ``%iv.next = add %iv, C`` or ``sub %iv, C`` and a step of +1 or -1; the icmp
  may use ``%iv`` or ``%iv.next``;
* the exit condition, read as "keep looping while ...", is ``iv != bound``
  (either step), ``iv < bound`` (step +1) or ``iv > bound`` (step -1), signed
  or unsigned; ``<=``/``>=`` only against a constant that is not the extreme
  value of the type (so the loop cannot run forever).

Such a loop exits after at most 2^N iterations.  It counts as finite when
N <= trip_width, or, for wider N, when start and bound are both constants and
the number of iterations they imply fits in trip_width bits.

Not recognised (a poll is placed; LLVM may prove more): other steps, IVs
reached through casts, bounds known only by value-range reasoning
(``zext i32 %n to i64``), ``and``/``or``-combined exit conditions, switches,
brute-force evaluation of small constant loops, ``mustprogress`` reasoning.
"""

from __future__ import annotations

from ..ir import instructions as I
from ..ir.analysis.dominators import DominatorTree
from ..ir.analysis.loops import Loop
from ..ir.types import IntType
from ..ir.values import Argument, Constant, ConstantInt, Value

_INVERSE = {
    "eq": "ne",
    "ne": "eq",
    "slt": "sge",
    "sge": "slt",
    "sgt": "sle",
    "sle": "sgt",
    "ult": "uge",
    "uge": "ult",
    "ugt": "ule",
    "ule": "ugt",
}
_SWAPPED = {
    "eq": "eq",
    "ne": "ne",
    "slt": "sgt",
    "sgt": "slt",
    "sle": "sge",
    "sge": "sle",
    "ult": "ugt",
    "ugt": "ult",
    "ule": "uge",
    "uge": "ule",
}


def _is_invariant(value: Value, loop: Loop) -> bool:
    if isinstance(value, (Constant, Argument)):
        return True
    return isinstance(value, I.Instruction) and value.parent is not None and value.parent not in loop


def _induction(value: Value, loop: Loop, latch) -> tuple[Value, int, bool] | None:
    """(start, step, post_increment) if ``value`` is the IV phi or its increment."""
    for candidate, post in ((value, False), (_increment_base(value), True)):
        if not isinstance(candidate, I.Phi) or candidate.parent is not loop.header:
            continue
        outside = {id(v): v for v, b in candidate.incoming if b not in loop}
        inside = {id(v): v for v, b in candidate.incoming if b in loop}
        if len(outside) != 1 or len(inside) != 1:
            continue
        nxt = next(iter(inside.values()))
        if post and nxt is not value:
            continue
        step = _step_of(nxt, candidate)
        if step is None:
            continue
        return next(iter(outside.values())), step, post
    return None


def _increment_base(value: Value) -> Value | None:
    if isinstance(value, I.BinaryOp) and value.opcode in ("add", "sub"):
        return (
            value.ops[0]
            if isinstance(value.ops[0], I.Phi)
            else (value.ops[1] if value.opcode == "add" and isinstance(value.ops[1], I.Phi) else None)
        )
    return None


def _step_of(nxt: Value, phi: I.Phi) -> int | None:
    if not isinstance(nxt, I.BinaryOp) or nxt.opcode not in ("add", "sub"):
        return None
    a, b = nxt.ops
    if nxt.opcode == "add" and b is phi and isinstance(a, ConstantInt):
        a, b = b, a
    if a is not phi or not isinstance(b, ConstantInt):
        return None
    bits = phi.type.bits
    c = b.value % (1 << bits)
    c = c - (1 << bits) if c >= 1 << (bits - 1) else c
    if nxt.opcode == "sub":
        c = -c
    return c if c in (1, -1) else None


def _as(value: int, bits: int, signed: bool) -> int:
    v = value % (1 << bits)
    return v - (1 << bits) if signed and v >= 1 << (bits - 1) else v


def value_range(v: Value) -> tuple[int, int] | None:
    """A (low, high) range ``v`` surely lies in, for the few shapes recognised, else None.

    Constants; ``zext`` from N bits; the counter of a simple counted loop (its phi too),
    ``%n = add %i, 1`` with ``%i = phi [S, %pre], [%n, %loop]`` and the loop left when
    ``%n < K`` (signed or unsigned) fails: ``%n`` then stays within [S+1, max(S+1, K)], also
    after the loop (what LLVM's scalar evolution knows of such an exit value).
    """
    if isinstance(v, ConstantInt):
        return v.value, v.value
    if isinstance(v, I.Cast) and v.opcode == "zext" and isinstance(v.value.type, IntType):
        return 0, (1 << v.value.type.bits) - 1
    if isinstance(v, I.Phi) and len(v.incoming) == 2:
        # the counter itself: its start, or a value of its increment
        consts = [x for x, _ in v.incoming if isinstance(x, ConstantInt)]
        steps = [x for x, _ in v.incoming if isinstance(x, I.BinaryOp) and x.ops[0] is v]
        if len(consts) == 1 and len(steps) == 1:
            rng = value_range(steps[0])
            if rng is not None:
                return min(consts[0].value, rng[0]), max(consts[0].value, rng[1])
        return None
    if not (
        isinstance(v, I.BinaryOp)
        and v.opcode == "add"
        and isinstance(v.ops[1], ConstantInt)
        and v.ops[1].value == 1
        and isinstance(v.ops[0], I.Phi)
    ):
        return None
    phi = v.ops[0]
    header = phi.parent
    starts = [x for x, b in phi.incoming if x is not v]
    if len(starts) != 1 or not isinstance(starts[0], ConstantInt) or len(phi.incoming) != 2:
        return None
    fn = header.parent
    for blk in fn.blocks:
        t = blk.terminator
        if not (isinstance(t, I.Br) and t.is_conditional and isinstance(t.condition, I.ICmp)):
            continue
        cmp = t.condition
        if (
            cmp.ops[0] is v
            and isinstance(cmp.ops[1], ConstantInt)
            and cmp.predicate in ("slt", "ult")
            and t.ops[1] is header
            and t.ops[2] is not header
            and blk is v.parent
        ):
            s0 = starts[0].value + 1
            return s0, max(s0, cmp.ops[1].value)
    return None


def exit_is_counted(loop: Loop, exiting, trip_width: int) -> bool:
    """True if ``exiting``'s branch is a recognised counted exit whose count fits in ``trip_width`` bits."""
    term = exiting.terminator
    if not isinstance(term, I.Br) or not term.is_conditional:
        return False
    true_bb, false_bb = term.ops[1], term.ops[2]
    if (true_bb in loop) == (false_bb in loop):
        return False
    cond = term.condition
    if not isinstance(cond, I.ICmp) or not isinstance(cond.ops[0].type, IntType):
        return False
    pred = cond.predicate if true_bb in loop else _INVERSE[cond.predicate]
    lhs, rhs = cond.ops
    latch = loop.latches[0]
    iv = _induction(lhs, loop, latch)
    if iv is None or not _is_invariant(rhs, loop):
        iv = _induction(rhs, loop, latch)
        if iv is None or not _is_invariant(lhs, loop):
            return False
        lhs, rhs, pred = rhs, lhs, _SWAPPED[pred]
    start, step, post = iv
    bits = lhs.type.bits
    signed = pred.startswith("s")
    if pred in ("sle", "ule", "sge", "uge"):
        if not isinstance(rhs, ConstantInt):
            return False
        b = _as(rhs.value, bits, signed)
        lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
        if pred.endswith("le"):
            if b == hi:
                return False
            pred, rhs = pred[0] + "lt", ConstantInt(rhs.type, b + 1)
        else:
            if b == lo:
                return False
            pred, rhs = pred[0] + "gt", ConstantInt(rhs.type, b - 1)
    if pred == "eq":
        return False
    if pred != "ne" and (pred.endswith("lt") and step != 1 or pred.endswith("gt") and step != -1):
        return False
    if bits <= trip_width:
        return True
    if isinstance(start, ConstantInt) and not isinstance(rhs, ConstantInt) and pred.endswith("lt"):
        rng = value_range(rhs)
        if rng is not None:
            first = _as(start.value + (step if post else 0), bits, signed)
            return max(0, rng[1] - first) < (1 << trip_width)
    if not isinstance(start, ConstantInt) or not isinstance(rhs, ConstantInt):
        return False
    first = start.value + (step if post else 0)
    if pred == "ne":
        count = ((rhs.value - first) * step) % (1 << bits)
    else:
        f, b = _as(first, bits, signed), _as(rhs.value, bits, signed)
        count = max(0, (b - f) * step)
    return count < (1 << trip_width)


def must_be_finite_counted_loop(loop: Loop, dt: DominatorTree, trip_width: int) -> bool:
    """True if some exit of ``loop`` bounds its trip count to ``trip_width`` bits (see module doc)."""
    if len(loop.latches) != 1:
        return False
    latch = loop.latches[0]
    return any(dt.dominates(e, latch) and exit_is_counted(loop, e, trip_width) for e in loop.exiting)
