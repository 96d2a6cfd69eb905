"""Chapter 16's pages: a 32-bit stack walk, frame by frame, in EBP and ESP frames."""

from __future__ import annotations

import pytest

from gctoy.ir import parse_module
from gctoy.runtime.run32 import Runtime32, enter32
from gctoy.runtime.stackwalk32 import MethodTable, compile_with_gcinfo, walk32
from gctoy.viz.walk32 import walk_pages

PROGRAM = """
declare i8 addrspace(1)* @gc_alloc(i64, i64)
declare void @gc_collect()
declare void @print_i64(i64)
define i64 @inner(i8 addrspace(1)* %o) gc "coreclr" {
  call void @gc_collect()
  %v = load i8, i8 addrspace(1)* %o
  %z = zext i8 %v to i64
  ret i64 %z
}
define i64 @main() gc "coreclr" {
  %a = call i8 addrspace(1)* @gc_alloc(i64 2, i64 0)
  %r = call i64 @inner(i8 addrspace(1)* %a)
  call void @print_i64(i64 %r)
  ret i64 0
}
"""


@pytest.mark.parametrize("frame", ["ebp", "esp"])
def test_pages_follow_the_frames_and_say_how_the_caller_is_found(frame):
    compiled, roots = compile_with_gcinfo(parse_module(PROGRAM), frame=frame)
    runtime = Runtime32(compiled, gc="semispace", roots=roots)
    machine = runtime.machine
    enter32(machine, "main", [], [])
    machine.run(until=machine.native_address("gc_collect"))
    methods = MethodTable.from_machine(machine)
    frames = walk32(machine, methods)
    names = {f.address: f.name for f in compiled.functions}
    pages = walk_pages(frames, methods, names)
    assert len(pages) == len(frames) == 2
    assert "@inner" in pages[0] and "@main" in pages[1]
    assert ("EBP frame" if frame == "ebp" else "ESP frame") in pages[0]
    assert "outermost" in pages[1] and pages[1].count('<tr class="now">') == 1
    # @inner holds %o across the collection: its reference appears with the object's address
    assert any(r.value is not None for r in frames[0].refs)
    assert f"{frames[0].refs[0].value:#x}" in pages[0]
