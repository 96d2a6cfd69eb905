"""Chapter 10's pages: a conservative scan and the stack map over the same stopped stack, word by word."""

from __future__ import annotations

from gctoy.ir import parse_module
from gctoy.passes import run
from gctoy.runtime.conservative import compare_roots
from gctoy.runtime.run import Runtime, load_compiled
from gctoy.runtime.stackwalk import all_base_slots, walk
from gctoy.viz.scan import scan_pages, scan_rows

PROGRAM = """
declare i8 addrspace(1)* @gc_alloc(i64, i64)
declare void @gc_collect()
declare void @print_i64(i64)
define i64 @main() gc "statepoint-example" {
entry:
  %a = call i8 addrspace(1)* @gc_alloc(i64 2, i64 0)
  %b = call i8 addrspace(1)* @gc_alloc(i64 3, i64 0)
  %n = ptrtoint i8 addrspace(1)* %b to i64
  call void @gc_collect()
  call void @print_i64(i64 %n)
  %v = load i8, i8 addrspace(1)* %a
  %z = zext i8 %v to i64
  ret i64 %z
}
"""


def _stopped():
    module = parse_module(PROGRAM)
    run(module, "rewrite-statepoints-for-gc")
    runtime = Runtime(load_compiled(module, regalloc=False))  # every value in a stack slot, as chapter 10 has it
    machine = runtime.machine
    machine.enter("main")
    machine.run(until=machine.native_address("gc_collect"))
    return machine, runtime


def test_rows_agree_with_compare_roots_and_mark_the_false_root():
    machine, runtime = _stopped()
    exact = all_base_slots(walk(machine, runtime.sites))
    rows = scan_rows(machine, runtime.heap, exact)
    cmp = compare_roots(machine, runtime.heap, exact)
    kept = {r.address for r in rows if r.conservative != "not a heap address"}
    assert kept == {a.address for a in cmp.ambiguous if a.address < rows[-1].address + 8}
    named = {r.address for r in rows if r.accurate}
    assert named == set(cmp.exact)
    # %n (the integer copy of %b) is the word only the conservative scan keeps
    assert [r for r in rows if r.disagree], "the integer copy of %b must look like a root to the conservative scan"
    pages = scan_pages(rows)
    assert len(pages) == len(rows) and pages[-1].count('<tr class="now">') == 1
    assert pages[0].count("<tr class") == 1 and pages[-1].count("<tr class") == len(rows)
