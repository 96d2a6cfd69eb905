"""Properties on random control-flow graphs, checked against brute-force definitions.

* ``a`` dominates ``b`` iff ``b`` cannot be reached from the entry once ``a`` is removed;
* the edge ``s -> t`` dominates ``b`` iff ``b`` cannot be reached once that one edge is removed;
* a value is live at a point iff some path from there reads it before redefining it
  (a phi reading at the end of its incoming block);
* natural loops are the header plus the blocks that reach a latch without passing the header.
"""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ir_analysis_support import parse_function
from gctoy.ir.analysis import DominatorTree, LoopInfo, Liveness, backedges, edges, unreachable_blocks
from gctoy.ir.instructions import Phi
from gctoy.ir.types import is_gc_pointer

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


GC = "i8 addrspace(1)*"


@st.composite
def random_functions(draw, max_blocks: int = 7, invokes: bool = True):
    """IR text of one function: random branches among N blocks; adds, GEPs on GC pointers, phis, invokes."""
    n = draw(st.integers(1, max_blocks))
    targets = st.integers(0, n - 1)
    kinds = ["ret", "br", "condbr", "switch"] + (["invoke"] if invokes else [])
    terms = []
    for _ in range(n):
        kind = draw(st.sampled_from(kinds))
        if kind == "ret":
            terms.append(("ret", []))
        elif kind == "br":
            terms.append(("br", [draw(targets)]))
        elif kind == "condbr":
            terms.append(("condbr", [draw(targets), draw(targets)]))
        elif kind == "switch":
            terms.append(("switch", draw(st.lists(targets, min_size=1, max_size=4))))
        else:
            terms.append(("invoke", [draw(targets), draw(targets)]))
    preds: list[list[int]] = [[] for _ in range(n)]
    for k, (_, ts) in enumerate(terms):
        for t in dict.fromkeys(ts):
            preds[t].append(k)
    # Two pools of names: i64 values and GC pointers. Any value may be read anywhere:
    # the laws hold for every graph, whether or not definitions dominate uses.
    ints, ptrs = ["%x", "%y"], ["%p"]
    plan = []
    for k in range(n):
        phis = []
        for j in range(draw(st.integers(0, 2)) if k and preds[k] else 0):
            phis.append((f"%ph{k}_{j}", draw(st.sampled_from(["i64", GC]))))
        body = []
        for j in range(draw(st.integers(0, 3))):
            body.append((f"%v{k}_{j}", draw(st.sampled_from(["add", "gep"]))))
        result = f"%r{k}" if terms[k][0] == "invoke" and draw(st.booleans()) else None
        plan.append((phis, body, result))
        for name, ty in phis:
            (ints if ty == "i64" else ptrs).append(name)
        for name, op in body:
            (ints if op == "add" else ptrs).append(name)
        if result:
            ints.append(result)
    int_operand = st.sampled_from(ints + ["7"])
    ptr_operand = st.sampled_from(ptrs + ["null"])
    lines = ["declare i64 @callee(i64)", "declare i32 @__gxx_personality_v0(...)",
             f"define i64 @f(i64 %x, i64 %y, {GC} %p, i1 %c) personality i32 (...)* @__gxx_personality_v0 {{"]
    for k in range(n):
        phis, body, result = plan[k]
        lines.append(f"b{k}:")
        for name, ty in phis:
            operand = int_operand if ty == "i64" else ptr_operand
            incoming = ", ".join(f"[ {draw(operand)}, %b{p} ]" for p in preds[k])
            lines.append(f"  {name} = phi {ty} {incoming}")
        for name, op in body:
            if op == "add":
                lines.append(f"  {name} = add i64 {draw(int_operand)}, {draw(int_operand)}")
            else:
                lines.append(f"  {name} = getelementptr i8, {GC} {draw(ptr_operand)}, i64 {draw(int_operand)}")
        kind, ts = terms[k]
        if kind == "ret":
            lines.append(f"  ret i64 {draw(int_operand)}")
        elif kind == "br":
            lines.append(f"  br label %b{ts[0]}")
        elif kind == "condbr":
            lines.append(f"  br i1 %c, label %b{ts[0]}, label %b{ts[1]}")
        elif kind == "switch":
            cases = " ".join(f"i64 {i}, label %b{t}" for i, t in enumerate(ts[1:]))
            lines.append(f"  switch i64 {draw(int_operand)}, label %b{ts[0]} [ {cases} ]")
        else:
            call = f"invoke i64 @callee(i64 {draw(int_operand)}) to label %b{ts[0]} unwind label %b{ts[1]}"
            lines.append(f"  {result} = {call}" if result else f"  {call}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def reachable(fn, removed_block=None, removed_edge=None):
    """Blocks reachable from the entry, without one block or one copy of one edge."""
    entry = fn.blocks[0]
    if entry is removed_block:
        return set()
    seen = {entry}
    work = [entry]
    while work:
        b = work.pop()
        succs = list(b.terminator.successors) if b.terminator else []
        if removed_edge is not None and removed_edge[0] is b:
            succs.pop(removed_edge[1])
        for s in succs:
            if s is not removed_block and s not in seen:
                seen.add(s)
                work.append(s)
    return seen


@given(random_functions())
@SETTINGS
def test_dominance_matches_path_definition(text):
    fn = parse_function(text, "f")
    dt = DominatorTree(fn)
    everything = reachable(fn)
    for a in fn.blocks:
        without_a = reachable(fn, removed_block=a)
        for b in fn.blocks:
            assert dt.dominates(a, b) == (b not in without_a), (a.name, b.name)
    for b in fn.blocks:
        assert dt.is_reachable(b) == (b in everything)
        strict = [a for a in fn.blocks if a is not b and dt.dominates(a, b) and b in everything]
        idom = dt.idom(b)
        if not strict:
            assert idom is None
        else:
            assert idom in strict and all(dt.dominates(a, idom) for a in strict)
    assert unreachable_blocks(fn) == [b for b in fn.blocks if b not in everything]


@given(random_functions())
@SETTINGS
def test_dominance_frontier_matches_definition(text):
    fn = parse_function(text, "f")
    dt = DominatorTree(fn)
    preds = dt.predecessors
    for a in fn.blocks:
        expected = [y for y in fn.blocks if dt.is_reachable(y)
                    and any(dt.is_reachable(p) and dt.dominates(a, p) for p in preds[y])
                    and not dt.strictly_dominates(a, y)]
        assert dt.dominance_frontier(a) == expected


@given(random_functions())
@SETTINGS
def test_edge_dominance_matches_path_definition(text):
    fn = parse_function(text, "f")
    dt = DominatorTree(fn)
    for s in fn.blocks:
        for k, t in enumerate(s.terminator.successors):
            left = reachable(fn, removed_edge=(s, k))
            for b in fn.blocks:
                assert dt.dominates_edge(s, t, b) == (b not in left), (s.name, k, t.name, b.name)


def uses_in(inst, v):
    return not isinstance(inst, Phi) and any(op is v for op in inst.operands)


def brute_live_in(fn, v, start):
    """Some path from the top of ``start`` reads ``v`` before any definition of it."""
    seen = {start}
    work = [start]
    while work:
        b = work.pop()
        defined_here = False
        for inst in b.instructions:
            if uses_in(inst, v):
                return True
            if inst is v:
                defined_here = True
                break
        if defined_here:
            continue
        for s in b.successors:
            if any(val is v and blk is b for phi in s.phis() for val, blk in phi.incoming):
                return True
            if s not in seen:
                seen.add(s)
                work.append(s)
    return False


def brute_live_out(fn, v, b):
    """``v`` is read on some edge out of ``b`` or live into a successor."""
    for s in b.successors:
        if any(val is v and blk is b for phi in s.phis() for val, blk in phi.incoming):
            return True
        if brute_live_in(fn, v, s):
            return True
    return False


def brute_live_after(fn, v, inst, live_out):
    """Read later in the block before being redefined, or live out with no later definition."""
    insts = inst.parent.instructions
    for later in insts[insts.index(inst) + 1:]:
        if uses_in(later, v):
            return True
        if later is v:
            return False
    return live_out


@given(random_functions(max_blocks=5))
@SETTINGS
def test_liveness_matches_path_definition(text):
    fn = parse_function(text, "f")
    lv = Liveness(fn)
    tracked = list(lv.numbering.values)
    for b in fn.blocks:
        out_values = [v for v in tracked if brute_live_out(fn, v, b)]
        assert list(lv.live_out[b]) == out_values, b.name
        assert list(lv.live_in[b]) == [v for v in tracked if brute_live_in(fn, v, b)], b.name
        leading = len(b.phis())
        for inst in b.instructions[leading:]:
            after = [v for v in tracked if brute_live_after(fn, v, inst, v in out_values)]
            before = [v for v in tracked if uses_in(inst, v) or (v in after and v is not inst)]
            assert list(lv.live_after(inst)) == after
            assert list(lv.live_before(inst)) == before
            assert list(lv.live_across(inst)) == [v for v in after if v is not inst]
        for phi in b.instructions[:leading]:
            assert lv.live_before(phi) == lv.live_in[b]
            first = b.instructions[leading]
            assert lv.live_after(phi) == lv.live_before(first)


@given(random_functions(max_blocks=5))
@SETTINGS
def test_gc_only_liveness_is_the_gc_part_of_full_liveness(text):
    fn = parse_function(text, "f")
    full, gc = Liveness(fn), Liveness(fn, gc_only=True)

    def gc_part(values):
        return tuple(v for v in values if is_gc_pointer(v.type))

    for b in fn.blocks:
        assert gc.live_in[b] == gc_part(full.live_in[b])
        assert gc.live_out[b] == gc_part(full.live_out[b])
        for inst in b.instructions:
            assert gc.live_before(inst) == gc_part(full.live_before(inst))
            assert gc.live_across(inst) == gc_part(full.live_across(inst))


@given(random_functions(invokes=False))
@SETTINGS
def test_natural_loops_match_definition(text):
    fn = parse_function(text, "f")
    dt = DominatorTree(fn)
    back = backedges(fn, dt)
    assert back == [e for e in edges(fn) if dt.is_reachable(e.source) and dt.dominates(e.target, e.source)]
    info = LoopInfo(fn, dt)
    assert sorted(lp.header.name for lp in info.loops) == sorted({e.target.name for e in back})
    for loop in info.loops:
        latches = [e.source for e in back if e.target is loop.header]
        body = {loop.header}
        for b in fn.blocks:
            if not dt.is_reachable(b):
                continue
            # b is in the loop if it reaches a latch without passing the header.
            seen, work = {b}, [b]
            while work:
                x = work.pop()
                if x in latches:
                    body.add(b)
                    break
                for s in x.successors:
                    if s is not loop.header and s not in seen:
                        seen.add(s)
                        work.append(s)
        assert set(loop.blocks) == body
        assert all(dt.dominates(loop.header, x) for x in loop.blocks)
        for other in info.loops:
            mine, theirs = set(loop.blocks), set(other.blocks)
            assert mine <= theirs or theirs <= mine or not (mine & theirs)
        if loop.parent is not None:
            assert set(loop.blocks) < set(loop.parent.blocks)
            assert loop.depth == loop.parent.depth + 1
