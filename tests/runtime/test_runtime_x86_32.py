"""The x86-32 pipeline with CoreCLR-style GC info: liveness -> MethodGCInfo -> bytes in the image ->
EnumGcRefs at each return address -> a frame walk -> the moving collector, interior pointers included.
Generated programs must print under stress collection what the x86-64 statepoint pipeline prints.

These tests compile with every GC value in a tracked stack slot (``gc_registers=0``), so that the
lifetime tables carry every live reference; test_runtime_x86_32_registers.py runs the default, GC
pointers homed in ESI, EDI and EBX across calls, on the same kinds of program."""

from __future__ import annotations

import dataclasses
import subprocess
import sys

import pytest

from gctoy.codegen.gcinfo32 import call_site_liveness, interior_values, with_gcinfo
from gctoy.codegen.x86_32 import compile_module32
from gctoy.coreclr.section import GCINFO_SECTION, read_gcinfo_section
from gctoy.coreclr.gcrefs import gc_refs_at
from gctoy.coreclr.method import decode, encode
from gctoy.emu import disassemble
from gctoy.errors import GCToyError
from gctoy.ir import parse_module
from gctoy.runtime.run32 import Runtime32, Runtime32Error, run_module32
from gctoy.runtime.stackwalk32 import GCInfoRoots, MethodTable, containing_object, walk32
from lli_shim import run_lli_batch
from runnable_gen import generate_program, x86_64_reference

#: the generated programs (``generate_program(seed, 8)``) these tests run
LLI_SEEDS = sorted({*range(10), 20, 21, 22, 23, 30, 31, 32, 33, 1, 5})


@pytest.fixture(scope="module")
def lli_results(lli14) -> dict[int, tuple[list[int], int]]:
    """What LLVM 14's lli prints and returns for each generated program: an oracle independent of
    gctoy's own x86-64 pipeline (one lli process, with the malloc shim of tests/lli_shim.py)."""
    return dict(zip(LLI_SEEDS, run_lli_batch([generate_program(s, 8) for s in LLI_SEEDS], lli14)))


P = "i8 addrspace(1)*"
PP = f"{P} addrspace(1)*"
HAND = f"""
declare {P} @gc_alloc(i64, i64)
declare void @gc_collect()
declare void @print_i64(i64)

define i64 @read(i64 addrspace(1)* %f) {{
entry:
  call void @gc_collect()
  %v = load i64, i64 addrspace(1)* %f
  ret i64 %v
}}

define i64 @interior(i64 %k) {{
entry:
  %o = call {P} @gc_alloc(i64 4, i64 0)
  %b = bitcast {P} %o to i64 addrspace(1)*
  %f = getelementptr i64, i64 addrspace(1)* %b, i64 %k
  store i64 4242, i64 addrspace(1)* %f
  %end = getelementptr i64, i64 addrspace(1)* %b, i64 4
  call void @gc_collect()
  %v = call i64 @read(i64 addrspace(1)* %f)
  %e = ptrtoint i64 addrspace(1)* %end to i64
  %s = ptrtoint i64 addrspace(1)* %f to i64
  %d = sub i64 %e, %s
  %r = add i64 %v, %d
  ret i64 %r
}}

define {P} @deep(i64 %n, {P} %keep) {{
entry:
  %z = icmp eq i64 %n, 0
  br i1 %z, label %bottom, label %down
bottom:
  call void @gc_collect()
  ret {P} %keep
down:
  %box = call {P} @gc_alloc(i64 2, i64 2)
  %slot = getelementptr i8, {P} %box, i64 8
  %pslot = bitcast {P} %slot to {PP}
  store {P} %keep, {PP} %pslot
  %n1 = sub i64 %n, 1
  %r = call {P} @deep(i64 %n1, {P} %box)
  %again = load {P}, {PP} %pslot
  %same = icmp eq {P} %again, %keep
  %t = select i1 %same, {P} %r, {P} null
  ret {P} %t
}}

define i64 @main() {{
entry:
  %a = call i64 @interior(i64 1)
  call void @print_i64(i64 %a)
  %leaf = call {P} @gc_alloc(i64 1, i64 0)
  %lb = bitcast {P} %leaf to i64 addrspace(1)*
  store i64 99, i64 addrspace(1)* %lb
  %top = call {P} @deep(i64 5, {P} %leaf)
  %isnull = icmp eq {P} %top, null
  %flag = zext i1 %isnull to i64
  call void @print_i64(i64 %flag)
  %v = load i64, i64 addrspace(1)* %lb
  call void @print_i64(i64 %v)
  ret i64 7
}}
"""
HAND_EXPECTED = ([4242 + 24, 0, 99], 7)


def _compiled(text: str, frame: str):
    return with_gcinfo(compile_module32(parse_module(text), frame=frame, gc_registers=0))


@pytest.mark.parametrize("frame", ["esp", "ebp"])
def test_gc_refs_at_every_call_site_are_the_live_gc_values(frame):
    compiled, infos = _compiled(HAND, frame)
    fns = {f.name: f for f in compiled.module.functions if not f.is_declaration}
    checked = 0
    interior = interior_values(compiled.module)
    for cf in compiled.functions:
        fn, info = fns[cf.name], infos[cf.name]
        blob = encode(info)
        assert decode(blob) == info
        for site in call_site_liveness(fn, cf, compiled.image):
            refs = gc_refs_at(blob, site.return_offset, active_frame=False, esp=0x10000, ebp=0x20000)
            frame_ = cf.frame
            want = sorted(
                ((0x20000 + frame_.ebp_offset(frame_.local(v))) if frame_.ebp_frame else 0x10000 + frame_.local(v),
                 id(v) in interior)
                for v in site.live)
            assert sorted((r.address, r.interior) for r in refs) == want, (cf.name, site.return_offset)
            checked += 1
    assert checked >= 10


def test_interior_pointers_are_recognised():
    compiled, infos = _compiled(HAND, "ebp")
    interior = interior_values(compiled.module)
    names = {(f.name, v.name) for f in compiled.module.functions for v in [*f.args, *f.instructions()]
             if id(v) in interior}
    # read's %f is a byref parameter: @interior passes it an interior pointer
    assert names == {("interior", "f"), ("interior", "end"), ("read", "f"), ("deep", "slot"), ("deep", "pslot")}
    assert any(life.interior for life in infos["interior"].lifetimes)
    assert any(not life.interior for life in infos["deep"].lifetimes)
    assert infos["deep"].header.return_kind == 1 and infos["main"].header.return_kind == 0


@pytest.mark.parametrize("frame", ["esp", "ebp"])
def test_header_describes_the_frame(frame):
    compiled, infos = _compiled(HAND, frame)
    for cf in compiled.functions:
        h = infos[cf.name].header
        assert h.ebp_frame == (frame == "ebp") and not h.interruptible
        assert h.frame_size * 4 == cf.frame.size and h.arg_count * 4 == cf.frame.arg_size
        assert (h.edi_saved, h.esi_saved, h.ebx_saved) == tuple(r in cf.frame.saved for r in ("edi", "esi", "ebx"))
        assert h.epilog_count == 1 and h.epilog_at_end
        code = compiled.image.code[cf.address - compiled.image.code_base:]
        prolog = [i.text for i in disassemble(code[:h.prolog_size], cf.address, "x86_32")]
        assert prolog[-1] == f"sub esp, {hex(cf.frame.size)}"
        epilog_at = infos[cf.name].epilogs[0]
        epilog = [i.text for i in disassemble(code[epilog_at:epilog_at + h.epilog_size], 0, "x86_32")]
        assert epilog[-1].split()[0] == "ret"
        assert int((epilog[-1].split() + ["0"])[1], 0) == cf.frame.arg_size
        assert sum(t.startswith("pop") for t in epilog) == len(cf.frame.saved) + (frame == "ebp")


def test_the_section_in_the_image_holds_every_method():
    compiled, infos = _compiled(HAND, "esp")
    entries = read_gcinfo_section(compiled.image.sections[GCINFO_SECTION])
    assert [(s, decode(b)) for s, _, b in entries] == [(f.address, infos[f.name]) for f in compiled.functions]
    table = MethodTable(entries)
    first = compiled.functions[0]
    assert table.lookup(first.address) is None  # a return address is never a method's first byte
    assert table.lookup(first.address + 1)[0] == first.address
    assert table.lookup(0x0DEAD000) is None


@pytest.mark.parametrize("frame", ["esp", "ebp"])
def test_hand_program_moves_objects_through_interior_pointers(frame):
    got = run_module32(parse_module(HAND), gc="semispace", stress=True, verify=True, frame=frame, gc_registers=0,
                       semispace_size=4096)
    assert (got.printed, got.result) == HAND_EXPECTED
    assert got.stats.gc.collections >= 8 and got.stats.gc.objects_copied > 0
    assert got.stats.gc.derived_seen > 0  # the interior slots were rebased


def test_walk_sees_every_recursive_frame():
    compiled, _ = _compiled(HAND, "ebp")
    runtime = Runtime32(compiled, gc="semispace", roots=GCInfoRoots(), semispace_size=4096)
    depths: list[tuple[int, int]] = []

    def spy(rt, _done):
        frames = walk32(rt.machine, rt.roots.methods(rt.machine))
        names = [next(f.name for f in compiled.functions if f.address == fr.method) for fr in frames]
        depths.append((names.count("deep"), len(frames)))

    runtime.on_collect = spy
    result = runtime.run()
    assert (result.printed, result.result) == HAND_EXPECTED
    assert (6, 7) in depths  # gc_collect at the bottom: six @deep frames and @main


def test_missing_lifetimes_are_caught():
    """GC info that forgets the tracked slots lets the collector free live objects: the run fails."""
    compiled, infos = _compiled(HAND, "esp")
    from gctoy.codegen.gcinfo32 import gcinfo_section
    from gctoy.coreclr.method import MethodGCInfo

    healthy = Runtime32(compiled, gc="semispace", stress=True, roots=GCInfoRoots(), semispace_size=4096).run()
    assert (healthy.printed, healthy.result) == HAND_EXPECTED  # unmutated, the same run is right
    broken = {n: MethodGCInfo.create(i.method_size, i.header, epilogs=i.epilogs, pointer_table=i.pointer_table)
              for n, i in infos.items()}
    image = compiled.image.with_sections(**{GCINFO_SECTION: gcinfo_section(compiled, broken)})
    runtime = Runtime32(dataclasses.replace(compiled, image=image), gc="semispace", stress=True,
                        roots=GCInfoRoots(), semispace_size=4096)
    try:
        result = runtime.run()
    except GCToyError:
        return
    assert (result.printed, result.result) != HAND_EXPECTED


def test_collecting_needs_a_root_finder_and_containing_objects_are_exact():
    compiled, _ = _compiled(HAND, "esp")
    with pytest.raises(Runtime32Error, match="root finder"):
        Runtime32(compiled, gc="semispace")
    starts, counts = [0x100, 0x130, 0x150], [2, 0, 1]
    assert containing_object(starts, counts, 0x100) == 0x100
    assert containing_object(starts, counts, 0x110) == 0x100  # one past the last field
    assert containing_object(starts, counts, 0x118) is None  # the next object's header
    assert containing_object(starts, counts, 0x130) == 0x130
    assert containing_object(starts, counts, 0xF0) is None


@pytest.mark.parametrize("seed,frame", [(s, "auto") for s in range(10)] + [(20, "esp"), (21, "ebp"), (22, "esp"),
                                                                             (23, "ebp")])
def test_generated_programs_under_stress_print_what_x86_64_prints(seed, frame, lli_results):
    text = generate_program(seed, 8)
    got = run_module32(parse_module(text), gc="semispace", stress=True, verify=True, frame=frame, gc_registers=0,
                       semispace_size=1 << 16)
    assert (got.printed, got.result) == x86_64_reference(text) == lli_results[seed]
    assert got.stats.gc.collections > 0 and got.stats.gc.objects_copied > 0


@pytest.mark.parametrize("seed,frame", [(30, "ebp"), (31, "esp"), (32, "ebp"), (33, "esp")])
def test_every_method_fully_interruptible_prints_the_same(seed, frame, lli_results):
    """interruptible="always": every method fully interruptible, calls included (EBP-less methods
    track ESP through the full table's pushes and pops)."""
    from gctoy.coreclr.method import decode
    from gctoy.runtime.stackwalk32 import MethodTable

    text = generate_program(seed, 8)
    got = run_module32(parse_module(text), gc="semispace", stress=True, verify=True, frame=frame, gc_registers=0,
                       interruptible="always", semispace_size=1 << 16)
    assert (got.printed, got.result) == x86_64_reference(text) == lli_results[seed]
    assert got.stats.gc.collections > 0
    compiled, roots = compile_with_gcinfo_always(text, frame)
    blobs = MethodTable.from_machine(Runtime32(compiled, gc="semispace", roots=roots).machine).entries
    assert blobs and all(decode(blob).header.interruptible for _, _, blob in blobs)


def compile_with_gcinfo_always(text: str, frame: str):
    from gctoy.runtime.stackwalk32 import compile_with_gcinfo

    return compile_with_gcinfo(parse_module(text), frame=frame, interruptible="always")


def test_cli_runs_ir_on_x86_32(tmp_path):
    src = tmp_path / "hand.ll"
    src.write_text(HAND, encoding="utf-8")
    r = subprocess.run([sys.executable, "-m", "gctoy.cli", "run", str(src), "--target", "x86-32", "--stress",
                        "--verify-heap", "--trace"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    printed, result = HAND_EXPECTED
    assert r.stdout.splitlines() == [str(v) for v in printed] + [f"result: {result}"]
    assert "interior" in r.stderr and "collection 1 at return address" in r.stderr
    bad = tmp_path / "div.ll"
    bad.write_text("define i64 @main() {\nentry:\n  %x = sdiv i64 5, 0\n  ret i64 %x\n}\n", encoding="utf-8")
    r = subprocess.run([sys.executable, "-m", "gctoy.cli", "run", str(bad), "--target", "x86-32"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and "division by zero" in r.stderr and "Traceback" not in r.stderr


LOOPS = f"""
declare {P} @gc_alloc(i64, i64)
declare void @do_safepoint()
declare void @print_i64(i64)

define i64 @sum(i8 addrspace(1)* %l) {{
entry:
  br label %loop
loop:
  %p = phi {P} [ %l, %entry ], [ %nx, %loop ]
  %h = phi i64 [ 0, %entry ], [ %h2, %loop ]
  %vp = bitcast {P} %p to i64 addrspace(1)*
  %v = load i64, i64 addrspace(1)* %vp
  %h1 = mul i64 %h, 31
  %h2 = add i64 %h1, %v
  %np = getelementptr i8, {P} %p, i64 8
  %npp = bitcast {P} %np to {PP}
  %nx = load {P}, {PP} %npp
  %end = icmp eq {P} %nx, null
  br i1 %end, label %done, label %loop
done:
  ret i64 %h2
}}

define {P} @pick({P} %a, i64 %n) {{
entry:
  call void @do_safepoint()
  br label %spin
spin:
  %i = phi i64 [ 0, %entry ], [ %i1, %spin ]
  %i1 = add i64 %i, 1
  %more = icmp slt i64 %i1, %n
  br i1 %more, label %spin, label %out
out:
  %junk = call {P} @gc_alloc(i64 3, i64 0)
  ret {P} %a
}}

define i64 @main() {{
entry:
  br label %build
build:
  %k = phi i64 [ 0, %entry ], [ %k1, %build ]
  %head = phi {P} [ null, %entry ], [ %node, %build ]
  %node = call {P} @gc_alloc(i64 2, i64 2)
  %vp = bitcast {P} %node to i64 addrspace(1)*
  store i64 %k, i64 addrspace(1)* %vp
  %np = getelementptr i8, {P} %node, i64 8
  %npp = bitcast {P} %np to {PP}
  store {P} %head, {PP} %npp
  %k1 = add i64 %k, 1
  %more = icmp slt i64 %k1, 20
  br i1 %more, label %build, label %use
use:
  %s1 = call i64 @sum({P} %node)
  call void @print_i64(i64 %s1)
  %same = call {P} @pick({P} %node, i64 40)
  %s2 = call i64 @sum({P} %same)
  call void @print_i64(i64 %s2)
  %again = call {P} @pick({P} %same, i64 7)
  %s3 = call i64 @sum({P} %again)
  ret i64 %s3
}}
"""


def _loops_expected() -> tuple[list[int], int]:
    h = 0
    for v in range(19, -1, -1):
        h = (h * 31 + v) & ((1 << 64) - 1)
    h = h - (1 << 64) if h >> 63 else h
    return [h, h], h


def test_fully_interruptible_info_for_a_call_free_loop():
    compiled, infos = _compiled(LOOPS, "esp")
    fns = {f.name: f for f in compiled.module.functions if not f.is_declaration}
    full = {f.name for f in compiled.functions if f.fully_interruptible}
    assert full == {"sum"}  # @pick's loop has a call before it: partially interruptible
    info, cf = infos["sum"], compiled.function("sum")
    assert info.header.interruptible and info.no_gc_regions and decode(encode(info)) == info
    from gctoy.codegen.gcinfo32 import safe_point_liveness

    interior = interior_values(compiled.module)
    points = safe_point_liveness(fns["sum"], cf, compiled.image)
    offsets = {p.return_offset for p in points}
    body = range(info.header.prolog_size, info.epilogs[0] + 1)
    covered = {o for r in info.no_gc_regions for o in range(r.offset, r.end)}
    assert covered == set(body) - offsets  # every body offset but the safe points is no-GC
    for p in points:  # the stopped method is the active frame: refs at the offset itself
        refs = gc_refs_at(encode(info), p.return_offset, active_frame=True, esp=0x10000)
        assert sorted((r.address, r.interior) for r in refs) == sorted(
            (0x10000 + cf.frame.local(v), id(v) in interior) for v in p.live)
    assert any(p.live for p in points)


@pytest.mark.parametrize("frame,every", [("esp", 7), ("ebp", 11), ("auto", 23)])
def test_stopping_anywhere_collects_or_hijacks(frame, every):
    compiled, roots = _compiled_with_roots(LOOPS, frame)
    runtime = Runtime32(compiled, gc="semispace", verify=True, roots=roots, semispace_size=4096)
    result = runtime.run(interrupt_every=every)
    assert (result.printed, result.result) == _loops_expected()
    assert runtime.suspensions.get("collected", 0) > 0  # stopped inside @sum, collected right there
    assert runtime.suspensions.get("returned to the hijack stub", 0) > 0  # @pick came back through the stub
    assert not roots.hijacked


def test_a_hijacked_return_without_the_returned_pointer_is_caught(monkeypatch):
    """If the collection at the hijack stub forgot EAX (the returned object), @main would read a stale pointer."""
    compiled, roots = _compiled_with_roots(LOOPS, "esp")
    healthy = Runtime32(compiled, gc="semispace", roots=roots, semispace_size=4096)
    right = healthy.run(interrupt_every=7)
    assert (right.printed, right.result) == _loops_expected()  # unmutated, the same run is right
    assert healthy.suspensions.get("returned to the hijack stub", 0) > 0
    compiled, roots = _compiled_with_roots(LOOPS, "esp")
    runtime = Runtime32(compiled, gc="semispace", roots=roots, semispace_size=4096)
    from gctoy.runtime import run32

    monkeypatch.setattr(run32, "RETURN_KIND_ROOTS", {})
    try:
        result = runtime.run(interrupt_every=7)
    except GCToyError:
        return
    assert (result.printed, result.result) != _loops_expected()


@pytest.mark.parametrize("seed", [1, 5])
def test_generated_programs_stopped_anywhere(seed, lli_results):
    text = generate_program(seed, 8)
    compiled, roots = _compiled_with_roots(text, "auto")
    runtime = Runtime32(compiled, gc="semispace", verify=True, roots=roots, semispace_size=1 << 16)
    result = runtime.run(interrupt_every=29)
    assert (result.printed, result.result) == x86_64_reference(text) == lli_results[seed]
    assert runtime.suspensions.get("returned to the hijack stub", 0) > 0


def _compiled_with_roots(text: str, frame: str):
    from gctoy.runtime.stackwalk32 import compile_with_gcinfo

    return compile_with_gcinfo(parse_module(text), frame=frame, gc_registers=0)


CELLS = f"""
declare {P} @gc_alloc(i64, i64)
declare void @gc_collect()
declare void @print_i64(i64)

define i64 @main() {{
entry:
  %cell = alloca [2 x {P}]
  %c0 = getelementptr [2 x {P}], [2 x {P}]* %cell, i32 0, i32 0
  %c1 = getelementptr [2 x {P}], [2 x {P}]* %cell, i32 0, i32 1
  %junk = call {P} @gc_alloc(i64 5, i64 0)
  %o = call {P} @gc_alloc(i64 2, i64 0)
  %ob = bitcast {P} %o to i64 addrspace(1)*
  store i64 55, i64 addrspace(1)* %ob
  %f = getelementptr i8, {P} %o, i64 8
  %fb = bitcast {P} %f to i64 addrspace(1)*
  store i64 66, i64 addrspace(1)* %fb
  store {P} %o, {P}* %c0
  store {P} %f, {P}* %c1
  call void @gc_collect()
  %o2 = load {P}, {P}* %c0
  %ob2 = bitcast {P} %o2 to i64 addrspace(1)*
  %v0 = load i64, i64 addrspace(1)* %ob2
  call void @print_i64(i64 %v0)
  call void @gc_collect()
  %f2 = load {P}, {P}* %c1
  %fb2 = bitcast {P} %f2 to i64 addrspace(1)*
  %v1 = load i64, i64 addrspace(1)* %fb2
  call void @print_i64(i64 %v1)
  %a = ptrtoint {P} %f2 to i64
  %o3 = load {P}, {P}* %c0
  %b = ptrtoint {P} %o3 to i64
  %d = sub i64 %a, %b
  ret i64 %d
}}
"""


@pytest.mark.parametrize("frame", ["esp", "ebp"])
def test_gc_pointers_in_stack_memory_are_untracked_slots(frame):
    compiled, infos = _compiled(CELLS, frame)
    cf, info = compiled.function("main"), infos["main"]
    assert len(info.untracked) == 2 and all(u.interior for u in info.untracked)
    assert len(cf.frame.gc_alloca_fields) == 2
    got = run_module32(parse_module(CELLS), gc="semispace", stress=True, verify=True, frame=frame, gc_registers=0,
                       semispace_size=4096)
    assert (got.printed, got.result) == ([55, 66], 8)
    assert got.stats.gc.collections >= 2 and got.stats.gc.objects_copied >= 2


def test_untracked_slots_are_zeroed_before_anything_can_see_them():
    """Fill the stack with words that look like heap addresses: an untracked slot the prolog left
    unzeroed would be read as a pointer into no object at the first collection."""
    import struct

    from gctoy.emu import HEAP_BASE, STACK_TOP

    compiled, roots = _compiled_with_roots(CELLS, "esp")
    runtime = Runtime32(compiled, gc="semispace", stress=True, verify=True, roots=roots, semispace_size=4096)
    runtime.machine.write(STACK_TOP - 0x4000, struct.pack("<Q", HEAP_BASE + 7) * (0x4000 // 8))
    result = runtime.run()
    assert (result.printed, result.result) == ([55, 66], 8)


def test_the_hand_programs_expected_results_are_what_lli_prints(lli14):
    """The results these tests expect of the hand-written programs (HAND_EXPECTED, _loops_expected(),
    CELLS' ([55, 66], 8)) are what LLVM 14's lli prints and returns for the same IR."""
    assert run_lli_batch([HAND, LOOPS, CELLS], lli14) == [HAND_EXPECTED, _loops_expected(), ([55, 66], 8)]
