"""gctoy's default lowering records every statepoint value where llc -O2 (LLVM 14) does: GC pointers and
deopt values in spill slots (Indirect), constants as Constants, allocas as Direct. The kinds of every
record's locations, record by record, equal llc's on the runtime's test programs, on generated GC
programs and on a statepoint with deopt values; a lowering that kept a GC pointer in a register would
differ (the last test shows the comparison notices)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent), str(HERE.parent / "runtime")]

from llc_pair import llc14_stackmap  # noqa: E402
from runnable_gen import generate_program  # noqa: E402
from runtime_programs import PROGRAMS  # noqa: E402

from gctoy.codegen import compile_module  # noqa: E402
from gctoy.ir import parse_module, print_module  # noqa: E402
from gctoy.passes import run  # noqa: E402

DEOPT = """declare void @foo()
define i8 addrspace(1)* @deopt(i8 addrspace(1)* %obj, i64 %pc) gc "statepoint-example" {
  call void @foo() [ "deopt"(i32 3, i64 %pc) ]
  ret i8 addrspace(1)* %obj
}
"""

CASES = {**{name: PROGRAMS[name] for name in sorted(PROGRAMS)},
         **{f"generated-{seed}": generate_program(seed, 8) for seed in range(4)}, "deopt": DEOPT}


def _kinds(stackmap) -> list[tuple]:
    return sorted((r.id, tuple(loc.kind.name for loc in r.locations)) for r in stackmap.records)


def _rs4gc(text: str) -> str:
    module = parse_module(text)
    run(module, "rewrite-statepoints-for-gc")
    return print_module(module)


@pytest.mark.parametrize("name", sorted(CASES))
def test_location_kinds_equal_llc14(llvm14, tmp_path, name):
    text = _rs4gc(CASES[name])
    ours = compile_module(parse_module(text)).stackmap
    assert ours.records
    assert _kinds(ours) == _kinds(llc14_stackmap(llvm14, text, tmp_path))


def test_the_comparison_notices_registers(llvm14, tmp_path):
    text = _rs4gc(DEOPT)
    in_registers = compile_module(parse_module(text), gc_registers=1).stackmap
    assert _kinds(in_registers) != _kinds(llc14_stackmap(llvm14, text, tmp_path))
