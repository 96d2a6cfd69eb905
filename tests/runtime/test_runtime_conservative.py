"""The conservative scan next to the accurate roots of a stopped program."""

from __future__ import annotations

import pytest

from gctoy.ir import parse_module
from gctoy.passes import run
from gctoy.runtime.conservative import compare_roots, heap_objects, scan_stack
from gctoy.runtime.run import Runtime, load_compiled
from gctoy.runtime.stackwalk import all_base_slots, walk

# %a stays a GC pointer across the collection; %b survives only as an integer (ptrtoint);
# %c is dead at the collection but its slot from the first call still holds it; %mid points into %d.
# Compiled with a stack slot per value (regalloc=False), as chapter 10 does: the conservative scan reads
# the stack only, and the register lowering would keep %n and %mid in registers.
PROGRAM = """
declare i8 addrspace(1)* @gc_alloc(i64, i64)
declare void @gc_collect()
declare void @print_i64(i64)
define i64 @main() gc "statepoint-example" {
entry:
  %a = call i8 addrspace(1)* @gc_alloc(i64 2, i64 0)
  %b = call i8 addrspace(1)* @gc_alloc(i64 3, i64 0)
  %c = call i8 addrspace(1)* @gc_alloc(i64 1, i64 0)
  %d = call i8 addrspace(1)* @gc_alloc(i64 4, i64 0)
  %n = ptrtoint i8 addrspace(1)* %b to i64
  %mid = getelementptr i8, i8 addrspace(1)* %d, i64 16
  call void @print_i64(i64 1)
  %cv = load i8, i8 addrspace(1)* %c
  call void @gc_collect()
  call void @print_i64(i64 %n)
  %v = load i8, i8 addrspace(1)* %a
  %w = load i8, i8 addrspace(1)* %mid
  %s0 = add i8 %v, %w
  %s = add i8 %s0, %cv
  %z = zext i8 %s to i64
  ret i64 %z
}
"""


@pytest.fixture
def stopped():
    m = parse_module(PROGRAM)
    run(m, "rewrite-statepoints-for-gc")
    rt = Runtime(load_compiled(m, regalloc=False))
    rt.machine.enter("main")
    rt.machine.run(until=rt.machine.native_address("gc_collect"))
    return rt


def _objects(rt):
    a, b, c, d = (start for start, _ in heap_objects(rt.heap))
    return a, b, c, d


def test_exact_roots_name_only_the_live_pointers(stopped):
    a, b, c, d = _objects(stopped)
    exact = all_base_slots(walk(stopped.machine, stopped.sites))
    cmp = compare_roots(stopped.machine, stopped.heap, exact)
    assert cmp.exact_objects == {a, d}
    assert set(cmp.found) == set(cmp.exact)  # every exact root also looks like a pointer


def test_the_scan_retains_integers_and_stale_slots(stopped):
    a, b, c, d = _objects(stopped)
    exact = all_base_slots(walk(stopped.machine, stopped.sites))
    cmp = compare_roots(stopped.machine, stopped.heap, exact)
    assert cmp.conservative_objects >= {a, b, c, d}
    assert cmp.falsely_retained == {b, c}
    assert cmp.pinned == cmp.conservative_objects
    assert all(x.address not in set(cmp.exact) for x in cmp.extra)


def test_interior_pointers_map_to_their_object(stopped):
    _, _, _, d = _objects(stopped)
    interior = [x for x in scan_stack(stopped.machine, stopped.heap) if x.interior]
    assert interior and {x.object for x in interior} == {d}
    assert {x.value - x.object for x in interior} == {16}


def test_nothing_below_the_stack_pointer_is_scanned(stopped):
    sp = stopped.machine.sp
    assert all(x.address >= sp for x in scan_stack(stopped.machine, stopped.heap))
    # starting the scan at the top of the stack sees nothing at all
    assert scan_stack(stopped.machine, stopped.heap, sp=0x0090_0000 - 8) == []
