"""The keys that decide which relocated values a stack map record lists once stay flat along long chains."""
from __future__ import annotations

from gctoy.codegen.records import value_key
from gctoy.ir import instructions as I
from gctoy.ir import parse_module
from gctoy.ir.intrinsics import is_relocate_name
from gctoy.passes import run

CALLS = 40


def _chain_program() -> str:
    body = "\n".join("  call void @f()" for _ in range(CALLS))
    return (f'declare void @f()\n\ndefine i8 addrspace(1)* @g(i8 addrspace(1)* %p) gc "statepoint-example" {{\n'
            f"{body}\n  ret i8 addrspace(1)* %p\n}}\n")


def _depth(key) -> int:
    return 1 + max((_depth(k) for k in key if isinstance(k, tuple)), default=0)


def test_a_value_relocated_at_forty_calls_in_a_row_has_a_flat_key():
    m = parse_module(_chain_program(), "chain.ll")
    run(m, "rewrite-statepoints-for-gc")
    relocates = [i for i in m.get_function("g").instructions() if isinstance(i, I.Call) and is_relocate_name(i.callee_name)]
    assert len(relocates) == CALLS
    memo: dict = {}
    keys = [value_key(r, memo) for r in relocates]
    assert len(set(keys)) == CALLS                       # each relocate is a value of its own
    assert max(_depth(k) for k in keys) <= 2             # a relocate's key holds stand-ins, not its chain
    assert value_key(relocates[-1], memo) is keys[-1]    # and is looked up, not rebuilt
