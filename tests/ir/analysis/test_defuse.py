"""Def-use chains."""
from __future__ import annotations

from ir_analysis_support import Names, parse_function
from gctoy.ir.analysis import users, users_of, uses_of

FN = """
declare void @sink(i64, i64)

define i64 @f(i64 %a, i1 %c) {
entry:
  %x = add i64 %a, %a
  br i1 %c, label %then, label %join
then:
  call void @sink(i64 %x, i64 1)
  br label %join
join:
  %p = phi i64 [ %x, %then ], [ 1, %entry ]
  ret i64 %p
}
"""


def names_of(insts):
    return [i.opcode if i.name is None else i.name for i in insts]


def test_users_map():
    fn = parse_function(FN, "f")
    n = Names(fn)
    u = users(fn)
    assert names_of(u[id(n["a"])]) == ["x"]                        # once, although used twice
    assert names_of(u[id(n["x"])]) == ["call", "p"]
    assert names_of(u[id(n["c"])]) == ["br"]
    assert names_of(u[id(n["then"])]) == ["br", "p"]              # blocks are used by branches and phis
    assert names_of(u[id(fn.module.get_function("sink"))]) == ["call"]
    assert names_of(u[id(n["entry"])]) == ["p"]
    assert names_of(u[id(n["p"])]) == ["ret"]
    assert id(n["join"]) in u and all(id(i) not in u for i in fn.instructions() if i.opcode in ("call", "ret"))


def test_constants_are_not_keys():
    fn = parse_function(FN, "f")
    keyed = set(users(fn))
    for inst in fn.instructions():
        for v in inst.operands:
            if type(v).__name__ == "ConstantInt":
                assert id(v) not in keyed


def test_uses_of_gives_operand_slots_and_use_blocks():
    fn = parse_function(FN, "f")
    n = Names(fn)
    uses = uses_of(fn, n["a"])
    assert [(u.user.name, u.index) for u in uses] == [("x", 0), ("x", 1)]
    assert all(u.value is n["a"] and u.block is n.block("entry") for u in uses)
    (call_use, phi_use) = uses_of(fn, n["x"])
    assert call_use.user.opcode == "call" and call_use.block is n.block("then")
    assert phi_use.user is n["p"] and phi_use.index == 0
    assert phi_use.block is n.block("then")                       # a phi reads at the incoming block's end
    (block_use,) = [u for u in uses_of(fn, n["then"]) if u.user is n["p"]]
    assert block_use.block is n.block("join")


def test_users_of():
    fn = parse_function(FN, "f")
    n = Names(fn)
    assert names_of(users_of(fn, n["a"])) == ["x"]
    assert users_of(fn, n["p"])[0].opcode == "ret"
