"""Use lists, checked against a brute-force scan of the module.

* every operand slot of every instruction in a block is counted exactly once in its value's use
  list, and a use list names nothing else (no instruction outside a block, no stale count);
* ``users``, ``replace_all_uses`` and the statepoint view's ``relocates()``/``result()`` agree with
  a walk over the function;
* the invariants survive rewriting: replace_all_uses, erase, operand stores, moving instructions
  between blocks, cutting a block's tail, copying an instruction.
"""
from __future__ import annotations

import copy
from collections import Counter
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from random_ir import DrawChooser, Limits, random_module

from gctoy.ir import instructions as I
from gctoy.ir import parse_module
from gctoy.ir.analysis import users, users_of, uses_of
from gctoy.ir.intrinsics import is_relocate_name, is_result_name
from gctoy.ir.statepoint import Statepoint, token_statepoint
from gctoy.ir.uses import tracks_uses, users_map
from gctoy.ir.values import BasicBlock, Function

SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
CORPUS = sorted((Path(__file__).parent / "corpus").glob("*.ll"))


def every_value(module):
    """Arguments, blocks, instructions and globals of the module."""
    for fn in module.functions:
        yield fn
        yield from fn.args
        for b in fn.blocks:
            yield b
            yield from b.instructions
    yield from module.globals


def check_invariants(module) -> None:
    """Each use list equals the brute-force count of operand slots over the instructions in blocks."""
    expected: dict[int, Counter] = {}
    owners: dict[int, object] = {}
    for fn in module.functions:
        for b in fn.blocks:
            for inst in b.instructions:
                assert inst.parent is b
                for v in inst.operands:
                    if tracks_uses(v):
                        expected.setdefault(id(v), Counter())[id(inst)] += 1
                        owners[id(v)] = v
    for v in [*every_value(module), *owners.values()]:
        got = Counter({id(u): n for u, n in users_map(v).items()})
        assert got == expected.get(id(v), Counter()), v
        for u in users_map(v):
            assert u.parent is not None and u in u.parent.instructions


def brute_users(fn: Function, value) -> list:
    return [inst for inst in fn.instructions() if any(v is value for v in inst.operands)]


def check_against_scan(module) -> None:
    """users/users_of/uses_of and the statepoint view agree with walks over the function."""
    for fn in module.functions:
        index = users(fn)
        for v in [*fn.args, *fn.blocks, *fn.instructions(), *module.functions, *module.globals]:
            scan = brute_users(fn, v)
            assert users_of(fn, v) == scan
            assert index.get(id(v), []) == scan
            assert [(u.user, u.index) for u in uses_of(fn, v)] == [
                (i, k) for i in scan for k, o in enumerate(i.operands) if o is v]
        for inst in fn.instructions():
            if Statepoint.is_statepoint(inst):
                sp = Statepoint.of(inst)
                relocs = [i for i in fn.instructions() if isinstance(i, I.Call) and is_relocate_name(i.callee_name)
                          and i.args and token_statepoint(i.args[0]) is inst]
                assert [r.call for r in sp.relocates()] == relocs
                results = [i for i in fn.instructions() if isinstance(i, I.Call) and is_result_name(i.callee_name)
                           and i.args and i.args[0] is inst]
                assert sp.result() is (results[0] if results else None)


@st.composite
def modules(draw):
    return random_module(DrawChooser(draw), Limits(functions=(1, 2), blocks=(1, 4), instructions=(1, 8),
                                                   statepoint_percent=30))


@SETTINGS
@given(modules())
def test_parsed_modules_keep_exact_use_lists(text):
    module = parse_module(text)
    check_invariants(module)
    check_against_scan(module)


def test_corpus_modules_keep_exact_use_lists():
    assert CORPUS
    for path in CORPUS:
        module = parse_module(path.read_text(), str(path))
        check_invariants(module)
        check_against_scan(module)


@SETTINGS
@given(modules(), st.randoms(use_true_random=False))
def test_use_lists_survive_rewrites(text, rnd):
    module = parse_module(text)
    fns = [f for f in module.functions if f.blocks]
    for _ in range(8):
        fn = rnd.choice(fns)
        insts = list(fn.instructions())
        action = rnd.randrange(6)
        if action == 0:  # replace_all_uses between two values of one type
            pool = [v for v in [*fn.args, *insts] if v.type == rnd.choice(insts).type]
            if len(pool) >= 2:
                old, new = rnd.sample(pool, 2)
                slots = sum(1 for i in brute_users(fn, old) for o in i.operands if o is old)
                assert fn.replace_all_uses(old, new) == slots
                assert not brute_users(fn, old) and not [u for u in old.users if u.function is fn]
        elif action == 1:  # erase an instruction nobody reads
            dead = [i for i in insts if not i.users and not i.is_terminator]
            if dead:
                victim = rnd.choice(dead)
                ops = [o for o in victim.operands if tracks_uses(o)]
                victim.erase()
                assert victim.parent is None
                assert all(victim not in users_map(o) for o in ops)
        elif action == 2:  # store an operand in place
            simple = [i for i in insts if isinstance(i, I.SimpleInstruction) and i.ops]
            if simple:
                inst = rnd.choice(simple)
                k = rnd.randrange(len(inst.ops))
                same = [v for v in [*fn.args, *insts] if v.type == inst.ops[k].type]
                inst.ops[k] = rnd.choice(same) if same else inst.ops[k]
        elif action == 3:  # cut a block's tail and move it into a new block
            block = rnd.choice(fn.blocks)
            at = rnd.randrange(len(block.instructions))
            tail = block.instructions[at:]
            del block.instructions[at:]
            assert all(i.parent is None and not any(i in users_map(o) for o in i.operands) for i in tail)
            new = fn.add_block(None)
            new.instructions.extend(tail)
            block.append(I.Br(new))
        elif action == 4:  # a copy of an instruction, put into a block, then removed again
            inst = rnd.choice([i for i in insts if not i.is_terminator] or insts)
            twin = copy.copy(inst)
            assert twin.parent is None and not twin.users
            block = rnd.choice(fn.blocks)
            block.insert(0, twin)
            check_invariants(module)
            block.instructions.remove(twin)
        else:  # rebuild a block's list in another order
            block = rnd.choice(fn.blocks)
            block.instructions = list(reversed(block.instructions))
        check_invariants(module)
        check_against_scan(module)


def test_operand_containers_count_every_write():
    text = """
declare void @g(i64, i64)

define i64 @f(i64 %a, i64 %b, i1 %c) {
entry:
  %x = add i64 %a, %a
  call void @g(i64 %a, i64 %x) [ "deopt"(i64 %b) ]
  switch i64 %b, label %one [ i64 0, label %two ]
one:
  br label %two
two:
  %p = phi i64 [ %a, %entry ], [ %b, %one ]
  ret i64 %p
}
"""
    module = parse_module(text)
    fn = module.get_function("f")
    a, b, _ = fn.args
    x, call, sw = fn.entry.instructions
    assert users_map(a) == {x: 2, call: 1, fn.blocks[2].instructions[0]: 1}
    x.ops[1] = b
    call.args.append(b)
    call.bundles[0] = I.OperandBundle("deopt", [a, a])
    sw.value = a
    phi = fn.blocks[2].instructions[0]
    phi.incoming[1] = (a, fn.blocks[1])
    check_invariants(module)
    assert users_map(a) == {x: 1, call: 3, sw: 1, phi: 2}
    assert users_map(b) == {x: 1, call: 1}
    assert a.num_uses == 7 and b.has_users()
    assert a.replace_all_uses_with(b) == 7 and not a.has_users()
    check_invariants(module)


def test_a_shared_bundle_is_not_rewritten_behind_another_call():
    module = parse_module("""
declare void @g()

define void @f(i64 %a, i64 %b) {
entry:
  call void @g() [ "deopt"(i64 %a) ]
  ret void
}
""")
    fn = module.get_function("f")
    a, b = fn.args
    first = fn.entry.instructions[0]
    second = I.Call(first.ftype, first.callee, [], bundles=list(first.bundles))
    fn.entry.insert(1, second)
    first.replace_uses_of(a, b)
    assert first.bundles[0].inputs == [b] and second.bundles[0].inputs == [a]
    check_invariants(module)


def test_a_block_taken_out_of_its_function_leaves_the_walk():
    module = parse_module("""
define i64 @f(i64 %a) {
entry:
  br label %next
next:
  %x = add i64 %a, 1
  ret i64 %x
}
""")
    fn = module.get_function("f")
    gone: BasicBlock = fn.blocks.pop()
    assert users_of(fn, fn.args[0]) == [] and uses_of(fn, fn.args[0]) == []
    assert gone.instructions[0].parent is gone


@SETTINGS
@given(modules(), st.randoms(use_true_random=False))
def test_replace_operands_equals_one_replace_uses_of_per_pair(text, rnd):
    """The batch replacement (RS4GC's use rewriting) leaves the module a replace_uses_of per pair leaves."""
    from gctoy.ir import print_module

    batch, single = parse_module(text), parse_module(text)
    for fa, fb in zip(batch.functions, single.functions):
        pool_a = [*fa.args, *fa.instructions()]
        pool_b = [*fb.args, *fb.instructions()]
        for ia, ib in zip(list(fa.instructions()), list(fb.instructions())):
            mapping, pairs = {}, []
            for k, op in enumerate(ia.operands):
                if op in pool_a and id(op) not in mapping and rnd.random() < 0.6:
                    same = [j for j, v in enumerate(pool_a) if v.type == op.type and v is not op]
                    if same:
                        j = rnd.choice(same)
                        mapping[id(op)] = (op, pool_a[j])
                        pairs.append((pool_b[pool_a.index(op)], pool_b[j]))
            ia.replace_operands(mapping)
            for old, new in pairs:
                ib.replace_uses_of(old, new)
    assert print_module(batch) == print_module(single)
    check_invariants(batch)
