"""GC pointers in callee-saved registers across calls on x86-32 (``gc_registers``): the code generator
gives a few values a register home, the GC info names the registers at the call sites, and the stack
walker finds each register where the innermost callee that saved it put it (a REGDISPLAY), so that
the moving collector updates the right word and the program reads the moved object afterwards."""

from __future__ import annotations

from functools import lru_cache

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gctoy.codegen.frame import CodegenError
from gctoy.codegen.frame32 import register_homes
from gctoy.codegen.x86_32 import compile_module32
from gctoy.codegen import gcinfo32
from gctoy.coreclr import gcdump
from gctoy.codegen.gcinfo32 import call_site_liveness, interior_values, with_gcinfo
from gctoy.coreclr.gcrefs import gc_refs_at
from gctoy.coreclr.header import InfoHdr
from gctoy.coreclr.method import decode, encode
from gctoy.errors import GCToyError
from gctoy.ir import parse_module
from gctoy.ir.types import IntType, PointerType
from gctoy.runtime import stackwalk32
from gctoy.runtime.collector import Word32, read_slot
from gctoy.runtime.run32 import Runtime32, call32, enter32, run_module32
from gctoy.runtime.stackwalk32 import (
    GCInfoRoots,
    MethodTable,
    compile_with_gcinfo,
    roots_of32,
    saved_register_slots,
    walk32,
)
from lli_shim import run_lli_batch
from runnable_gen import generate_program, x86_64_reference

#: the generated programs (``generate_program(seed, 8)``) these tests run
LLI_SEEDS = sorted({0, 1, 2, 3, 4, 5, 6, 7, 40, 41})


@pytest.fixture(scope="module")
def lli_results(lli14) -> dict[int, tuple[list[int], int]]:
    """What LLVM 14's lli prints and returns for each generated program: an oracle independent of
    gctoy's own x86-64 pipeline (one lli process, with the malloc shim of tests/lli_shim.py)."""
    return dict(zip(LLI_SEEDS, run_lli_batch([generate_program(s, 8) for s in LLI_SEEDS], lli14)))


P = "i8 addrspace(1)*"
Q = "i64 addrspace(1)*"
FRAMES = ("esp", "ebp")

# @main keeps three objects in registers across calls into @middle, which keeps its own three
# (one of them interior, one arriving on the stack) across calls into @inner, which keeps two
# (in the same registers its callers use) across @gc_collect and @leaf, which saves nothing.
REGS = f"""
declare {P} @gc_alloc(i64, i64)
declare void @gc_collect()
declare void @print_i64(i64)

define void @leaf() {{
entry:
  call void @gc_collect()
  ret void
}}

define i64 @inner({P} %a) {{
entry:
  %own = call {P} @gc_alloc(i64 1, i64 0)
  %ob = bitcast {P} %own to {Q}
  store i64 5, {Q} %ob
  call void @gc_collect()
  call void @leaf()
  %ab = bitcast {P} %a to {Q}
  %av = load i64, {Q} %ab
  %ov = load i64, {Q} %ob
  %s = add i64 %av, %ov
  ret i64 %s
}}

define i64 @middle({P} %x, {P} %y, {P} %z) {{
entry:
  %zf = getelementptr i8, {P} %z, i64 8
  %zfb = bitcast {P} %zf to {Q}
  %r1 = call i64 @inner({P} %x)
  call void @gc_collect()
  %r2 = call i64 @inner({P} %y)
  %zv = load i64, {Q} %zfb
  %xb = bitcast {P} %x to {Q}
  %xv = load i64, {Q} %xb
  %s1 = add i64 %r1, %r2
  %s2 = add i64 %s1, %zv
  %s3 = add i64 %s2, %xv
  ret i64 %s3
}}

define {P} @mix({P} %a, {P} %b, i64 %k) {{
entry:
  %cell = alloca {P}
  store {P} %b, {P}* %cell
  call void @gc_collect()
  %k2 = mul i64 %k, %k
  %isnull = icmp eq {P} %a, null
  %pick = select i1 %isnull, {P} %b, {P} %a
  call void @gc_collect()
  %ab = bitcast {P} %a to {Q}
  %av = load i64, {Q} %ab
  %sum = add i64 %av, %k2
  %pb = bitcast {P} %pick to {Q}
  store i64 %sum, {Q} %pb
  %c = load {P}, {P}* %cell
  call void @gc_collect()
  %cb = bitcast {P} %c to {Q}
  %cv = load i64, {Q} %cb
  call void @print_i64(i64 %cv)
  ret {P} %pick
}}

define i64 @third({P} %u, {P} %v, {P} %t) {{
entry:
  call void @gc_collect()
  %tb = bitcast {P} %t to {Q}
  %tv = load i64, {Q} %tb
  ret i64 %tv
}}

define i64 @main() {{
entry:
  %junk = call {P} @gc_alloc(i64 3, i64 0)
  %p = call {P} @gc_alloc(i64 1, i64 0)
  %pb = bitcast {P} %p to {Q}
  store i64 100, {Q} %pb
  %q = call {P} @gc_alloc(i64 1, i64 0)
  %qb = bitcast {P} %q to {Q}
  store i64 20, {Q} %qb
  %w = call {P} @gc_alloc(i64 2, i64 0)
  %wf = getelementptr i8, {P} %w, i64 8
  %wfb = bitcast {P} %wf to {Q}
  store i64 3, {Q} %wfb
  %m = call i64 @middle({P} %p, {P} %q, {P} %w)
  call void @print_i64(i64 %m)
  call void @gc_collect()
  %pv = load i64, {Q} %pb
  call void @print_i64(i64 %pv)
  %wv = load i64, {Q} %wfb
  call void @print_i64(i64 %wv)
  %r = call {P} @mix({P} %p, {P} %q, i64 6)
  %rb = bitcast {P} %r to {Q}
  %rv = load i64, {Q} %rb
  call void @print_i64(i64 %rv)
  %tv = call i64 @third({P} null, {P} null, {P} %p)
  call void @print_i64(i64 %tv)
  %qv = load i64, {Q} %qb
  ret i64 %qv
}}
"""
# middle: inner(p) = 100 + 5, inner(q) = 20 + 5, w's field 1 = 3, p's field 0 = 100
# mix(p, q, 6): prints q's field (20), stores 100 + 36 into p and returns p; third(-, -, p) reads it
REGS_EXPECTED = ([105 + 25 + 3 + 100, 100, 3, 20, 136, 136], 20)


def _homes(compiled) -> dict[str, dict[str, str]]:
    """function -> value name -> home register."""
    return {f.name: {v.name: f.frame.home(v) for v in f.frame.homed} for f in compiled.functions}


@lru_cache(maxsize=None)
def _regs_compiled(frame: str):
    return with_gcinfo(compile_module32(parse_module(REGS), frame=frame, gc_registers=True))


def test_the_values_live_across_most_calls_get_the_registers():
    compiled, _ = _regs_compiled("esp")
    assert _homes(compiled) == {
        "leaf": {},
        "inner": {"a": "esi", "ob": "edi"},
        "middle": {"x": "esi", "y": "ebx", "zfb": "edi"},
        "mix": {"pick": "esi", "a": "edi", "b": "ebx"},
        "third": {"t": "esi"},
        "main": {"p": "edi", "q": "ebx", "qb": "esi"},
    }
    middle = compiled.function("middle")
    assert middle.frame.saved == ("edi", "esi", "ebx")
    with pytest.raises(CodegenError, match="lives in esi"):
        middle.frame.local(middle.frame.homed[0])
    one = compile_module32(parse_module(REGS), frame="esp", gc_registers=1)
    assert _homes(one)["middle"] == {"x": "esi"} and _homes(one)["leaf"] == {}
    assert all(not f.frame.homed for f in compile_module32(parse_module(REGS), frame="esp", gc_registers=0).functions)
    default = compile_module32(parse_module(REGS), frame="esp")  # homes are the default, ESI and EDI
    assert _homes(default) == _homes(compile_module32(parse_module(REGS), frame="esp", gc_registers=2))
    assert {r for homes in _homes(default).values() for r in homes.values()} == {"esi", "edi"}
    fn = next(f for f in parse_module(REGS).functions if f.name == "inner")
    assert sorted(register_homes(fn).values()) == ["edi", "esi"]
    with pytest.raises(CodegenError, match="at most 3"):
        register_homes(fn, 4)
    with pytest.raises(CodegenError, match="gc_registers"):
        compile_module32(parse_module(REGS), gc_registers=5)


def test_homed_values_are_read_and_written_through_their_registers():
    compiled, _ = _regs_compiled("ebp")
    text = compiled.asm_text
    body = text[text.index("\nmain:"):text.index("main.end:")]
    assert "mov edi, eax" in body and "mov esi, eax" in body  # %p's and %qb's definitions write their homes
    assert "mov eax, dword ptr [esi]" in body  # %qv reads q's field through the register
    assert "mov ecx, edi" in body and "mov edx, ebx" in body  # p and q go to @middle in ECX and EDX
    inner = text[text.index("\ninner:"):text.index("inner.end:")]
    assert "mov esi, ecx" in inner  # the argument arriving in ECX is copied into its home
    middle = text[text.index("\nmiddle:"):text.index("middle.end:")]
    assert "mov ebx, edx" in middle and "mov edi, eax" in middle
    # @third's %t arrives on the stack and goes straight from the incoming area into its home
    third = text[text.index("\nthird:"):text.index("third.end:")]
    assert "mov esi, dword ptr [ebp + 8]" in third
    mix = text[text.index("\nmix:"):text.index("mix.end:")]
    spill = [line.strip() for line in mix.splitlines() if "mov dword ptr" in line and line.strip().endswith(("ebx", "esi", "edi"))]
    assert spill  # the multiply borrowed home registers and parked them first


@pytest.mark.parametrize("frame", FRAMES)
def test_gc_refs_at_each_call_site_name_the_registers(frame):
    compiled, infos = _regs_compiled(frame)
    fns = {f.name: f for f in compiled.module.functions if not f.is_declaration}
    interior = interior_values(compiled.module)
    registers = slots = 0
    for cf in compiled.functions:
        info = infos[cf.name]
        blob = encode(info)
        assert decode(blob) == info
        for site in call_site_liveness(fns[cf.name], cf, compiled.image):
            refs = gc_refs_at(blob, site.return_offset, active_frame=False, esp=0x10000, ebp=0x20000)
            got_regs = sorted((r.location, r.interior) for r in refs if r.kind == "register")
            want_regs = sorted((cf.frame.home(v).upper(), id(v) in interior) for v in site.live
                               if cf.frame.home(v) is not None)
            assert got_regs == want_regs, (cf.name, site.return_offset)
            f = cf.frame
            got_slots = sorted((r.address, r.interior) for r in refs if r.kind == "lifetime")
            want_slots = sorted(
                ((0x20000 + f.ebp_offset(f.local(v))) if f.ebp_frame else 0x10000 + f.local(v), id(v) in interior)
                for v in site.live if f.home(v) is None)
            assert got_slots == want_slots, (cf.name, site.return_offset)
            registers += len(got_regs)
            slots += len(got_slots)
    assert registers >= 15 and slots >= 1
    # gcdump shows them in the call entries, the interior one with a quote
    assert "[ EDI'ESI EBX ]" in gcdump(encode(infos["middle"]))
    # the interior pointer @middle keeps in EDI is reported as one
    assert any(r.kind == "register" and r.location == "EDI" and r.interior
               for s in call_site_liveness(fns["middle"], compiled.function("middle"), compiled.image)
               for r in gc_refs_at(encode(infos["middle"]), s.return_offset, active_frame=False, esp=0, ebp=0))


def test_saved_register_slots_follow_the_prolog_layouts():
    ebp = InfoHdr(edi_saved=True, ebx_saved=True, ebp_saved=True, ebp_frame=True)
    assert saved_register_slots(ebp, 0x1000) == {"ebp": 0xFFC, "edi": 0xFF8, "ebx": 0xFF4}
    esp = InfoHdr(esi_saved=True, ebx_saved=True)
    assert saved_register_slots(esp, 0x1000) == {"esi": 0xFFC, "ebx": 0xFF8}
    everything = InfoHdr(edi_saved=True, esi_saved=True, ebx_saved=True, ebp_saved=True)
    assert saved_register_slots(everything, 0x1000) == {"edi": 0xFFC, "esi": 0xFF8, "ebx": 0xFF4, "ebp": 0xFF0}
    assert saved_register_slots(InfoHdr(), 0x1000) == {}


def _names(compiled) -> dict[int, str]:
    return {f.address: f.name for f in compiled.functions}


def _stop_at_gc_collect(frame: str, depth: int):
    """A machine stopped on its way into @gc_collect with ``depth`` managed frames on the stack."""
    compiled, _ = _regs_compiled(frame)
    runtime = Runtime32(compiled, gc="semispace", roots=GCInfoRoots(), semispace_size=4096)
    machine = runtime.machine
    methods = MethodTable.from_machine(machine)
    enter32(machine, "main", [], [])
    for _ in range(20):
        machine.run(until=machine.native_address("gc_collect"))
        frames = walk32(machine, methods)
        if len(frames) == depth:
            return runtime, compiled, frames
    raise AssertionError(f"never {depth} frames deep at @gc_collect")


@pytest.mark.parametrize("frame", FRAMES)
def test_the_walk_follows_each_register_into_the_callees_save_slots(frame):
    runtime, compiled, frames = _stop_at_gc_collect(frame, 4)  # leaf <- inner <- middle <- main
    machine = runtime.machine
    names = _names(compiled)
    assert [names[f.method] for f in frames] == ["leaf", "inner", "middle", "main"]
    leaf, inner, middle, main = frames
    assert compiled.function("leaf").frame.saved == ()
    # @leaf saved nothing: @inner's registers are still the machine registers
    assert leaf.refs == () and [inner.register_slot(r) for r in ("esi", "edi", "ebx")] == ["esi", "edi", "ebx"]
    # @inner saved all three (two homes and its i64 temporary EBX): @middle's live in its save slots,
    # and @middle saved all three too: @main's live in @middle's save slots
    assert compiled.function("inner").frame.saved == compiled.function("middle").frame.saved == ("edi", "esi", "ebx")
    for reg in ("esi", "edi", "ebx"):
        assert isinstance(middle.register_slot(reg), Word32) and isinstance(main.register_slot(reg), Word32)
        assert middle.register_slot(reg) > inner.esp and main.register_slot(reg) > middle.esp
        assert middle.register_slot(reg) < middle.esp and main.register_slot(reg) < main.esp
    for f in frames:
        for ref in f.refs:
            if ref.kind == "register":
                assert ref.value == read_slot(machine, f.register_slot(ref.location))
    # what each frame's registers hold: @main's p (field 100, in EDI) is @middle's x and @inner's a (ESI)
    field0 = lambda slot: machine.read_u64(read_slot(machine, slot))  # noqa: E731
    assert field0(main.register_slot("esi")) == 20 and field0(middle.register_slot("esi")) == 100
    assert field0(inner.register_slot("esi")) == 100 and field0(inner.register_slot("edi")) == 5
    assert field0(middle.register_slot("ebx")) == 20  # @middle's y is @main's q
    assert field0(middle.register_slot("edi")) == 3  # interior: w's field 1
    assert field0(main.register_slot("edi")) == 100 and field0(main.register_slot("ebx")) == 20
    objects, interior = roots_of32(frames)
    assert main.register_slot("esi") in objects and middle.register_slot("edi") in interior
    assert "esi" in objects and "edi" in objects  # @inner's own values, still in the machine registers


@pytest.mark.parametrize("frame", FRAMES)
def test_collections_move_objects_held_in_registers(frame):
    compiled, _ = _regs_compiled(frame)
    runtime = Runtime32(compiled, gc="semispace", stress=True, verify=True, roots=GCInfoRoots(), semispace_size=4096)
    result = runtime.run()
    assert (result.printed, result.result) == REGS_EXPECTED
    moved = [(slot, old, new) for c in runtime.collections for slot, old, new in c.roots if old != new]
    assert any(isinstance(slot, Word32) for slot, _, _ in moved)  # updated in a callee's save slot
    assert any(isinstance(slot, str) for slot, _, _ in moved)  # updated in the machine register
    assert result.stats.gc.derived_seen > 0


@pytest.mark.parametrize("frame", FRAMES)
def test_registers_off_and_on_agree(frame):
    plain = run_module32(parse_module(REGS), frame=frame)
    homed = run_module32(parse_module(REGS), frame=frame, gc_registers=3)
    assert (plain.printed, plain.result) == (homed.printed, homed.result) == REGS_EXPECTED


def _stressed_runs(frame: str) -> tuple[list[int], int] | None:
    """REGS with its pointers in registers under stress: what it prints and returns, or None when the
    run fails with an error of gctoy's."""
    compiled, roots = compile_with_gcinfo(parse_module(REGS), frame=frame, gc_registers=True)
    runtime = Runtime32(compiled, gc="semispace", stress=True, roots=roots, semispace_size=4096)
    try:
        result = runtime.run()
    except GCToyError:
        return None
    return result.printed, result.result


@pytest.mark.parametrize("frame", FRAMES)
def test_gc_info_without_the_register_masks_is_caught(frame, monkeypatch):
    """Drop the registers from the call sites: the collector misses the objects they hold."""
    real = gcinfo32.split_registers

    def no_registers(compiled, sites, interior):
        return real(compiled, sites, interior)[0], {}

    assert _stressed_runs(frame) == REGS_EXPECTED  # unmutated, the same run is right
    monkeypatch.setattr(gcinfo32, "split_registers", no_registers)
    assert _stressed_runs(frame) != REGS_EXPECTED


@pytest.mark.parametrize("frame", FRAMES)
def test_a_walk_that_ignores_the_save_slots_is_caught(frame, monkeypatch):
    """Take every register ref as the machine register: callers' values in save slots go stale."""
    assert _stressed_runs(frame) == REGS_EXPECTED  # unmutated, the same run is right
    monkeypatch.setattr(stackwalk32, "saved_register_slots", lambda hdr, slot: {})
    assert _stressed_runs(frame) != REGS_EXPECTED


LOOPS = f"""
declare {P} @gc_alloc(i64, i64)
declare void @print_i64(i64)

define i64 @sum({P} %l) {{
entry:
  br label %loop
loop:
  %p = phi {P} [ %l, %entry ], [ %nx, %loop ]
  %h = phi i64 [ 0, %entry ], [ %h2, %loop ]
  %vp = bitcast {P} %p to {Q}
  %v = load i64, {Q} %vp
  %h1 = mul i64 %h, 31
  %h2 = add i64 %h1, %v
  %np = getelementptr i8, {P} %p, i64 8
  %npp = bitcast {P} %np to {P} addrspace(1)*
  %nx = load {P}, {P} addrspace(1)* %npp
  %end = icmp eq {P} %nx, null
  br i1 %end, label %done, label %loop
done:
  ret i64 %h2
}}

define i64 @main() {{
entry:
  br label %build
build:
  %k = phi i64 [ 0, %entry ], [ %k1, %build ]
  %head = phi {P} [ null, %entry ], [ %node, %build ]
  %node = call {P} @gc_alloc(i64 2, i64 2)
  %vp = bitcast {P} %node to {Q}
  store i64 %k, {Q} %vp
  %np = getelementptr i8, {P} %node, i64 8
  %npp = bitcast {P} %np to {P} addrspace(1)*
  store {P} %head, {P} addrspace(1)* %npp
  %k1 = add i64 %k, 1
  %more = icmp slt i64 %k1, 30
  br i1 %more, label %build, label %use
use:
  %s1 = call i64 @sum({P} %node)
  call void @print_i64(i64 %s1)
  %junk = call {P} @gc_alloc(i64 4, i64 0)
  %s2 = call i64 @sum({P} %node)
  call void @print_i64(i64 %s2)
  %vb = load i64, {Q} %vp
  ret i64 %vb
}}
"""


def _loops_expected() -> tuple[list[int], int]:
    h = 0
    for v in range(29, -1, -1):
        h = (h * 31 + v) & ((1 << 64) - 1)
    h = h - (1 << 64) if h >> 63 else h
    return [h, h], 29


@pytest.mark.parametrize("frame,every", [("esp", 5), ("ebp", 9)])
def test_stopping_anywhere_with_registers_in_fully_interruptible_callees(frame, every):
    """@sum (a call-free loop) is fully interruptible, keeps no homes, and saves the ESI/EDI/EBX that
    @main's homes live in: a collection with @sum as the active frame must update its save slots."""
    compiled, roots = compile_with_gcinfo(parse_module(LOOPS), frame=frame, gc_registers=True)
    homes = _homes(compiled)
    assert homes["sum"] == {} and compiled.function("sum").fully_interruptible
    assert set(homes["main"].values()) >= {"esi"} and "head" in homes["main"]  # a phi has a home too
    assert set(homes["main"].values()) & set(compiled.function("sum").frame.saved)
    runtime = Runtime32(compiled, gc="semispace", verify=True, roots=roots, semispace_size=4096)
    result = runtime.run(interrupt_every=every)
    assert (result.printed, result.result) == _loops_expected()
    assert runtime.suspensions.get("collected", 0) > 0 and not roots.hijacked


def test_fully_interruptible_methods_never_get_homes():
    compiled = compile_module32(parse_module(LOOPS), gc_registers=True, interruptible="always")
    assert all(not f.frame.homed for f in compiled.functions)
    compiled = compile_module32(parse_module(LOOPS), gc_registers=True, interruptible="never")
    assert _homes(compiled)["main"] and not _homes(compiled)["sum"]  # @sum has no call: nothing to keep


@pytest.mark.parametrize("seed,frame", [(0, "esp"), (1, "ebp"), (2, "auto"), (3, "esp"), (4, "ebp"), (5, "auto"),
                                        (40, "esp"), (41, "ebp")])
def test_generated_programs_with_registers_print_what_x86_64_prints(seed, frame, lli_results):
    text = generate_program(seed, 8)
    compiled, roots = compile_with_gcinfo(parse_module(text), frame=frame, gc_registers=True)
    assert sum(len(f.frame.homed) for f in compiled.functions) >= 8
    runtime = Runtime32(compiled, gc="semispace", stress=True, verify=True, roots=roots, semispace_size=1 << 16)
    result = runtime.run()
    assert (result.printed, result.result) == x86_64_reference(text) == lli_results[seed]
    assert result.stats.gc.collections > 0
    assert any(isinstance(slot, (Word32, str)) and old != new
               for c in runtime.collections for slot, old, new in c.roots)


@pytest.mark.parametrize("seed,frame,every", [(1, "esp", 29), (6, "ebp", 31), (7, "auto", 17)])
def test_generated_programs_with_registers_stopped_anywhere(seed, frame, every, lli_results):
    text = generate_program(seed, 8)
    compiled, roots = compile_with_gcinfo(parse_module(text), frame=frame, gc_registers=True)
    runtime = Runtime32(compiled, gc="semispace", verify=True, roots=roots, semispace_size=1 << 16)
    result = runtime.run(interrupt_every=every)
    assert (result.printed, result.result) == x86_64_reference(text) == lli_results[seed]
    assert runtime.suspensions.get("returned to the hijack stub", 0) > 0


@pytest.mark.parametrize("frame", FRAMES)
def test_generated_program_without_register_masks_is_caught(frame, monkeypatch, lli_results):
    text = generate_program(1, 8)

    def run() -> tuple[list[int], int] | None:
        compiled, roots = compile_with_gcinfo(parse_module(text), frame=frame, gc_registers=True)
        runtime = Runtime32(compiled, gc="semispace", stress=True, roots=roots, semispace_size=1 << 16)
        try:
            result = runtime.run()
        except GCToyError:
            return None
        return result.printed, result.result

    # Unmutated, the same run prints what lli prints; only the mutation makes it fail or differ.
    assert run() == x86_64_reference(text) == lli_results[1]
    real = gcinfo32.split_registers
    monkeypatch.setattr(gcinfo32, "split_registers", lambda c, s, i: (real(c, s, i)[0], {}))
    assert run() != lli_results[1]


ARITH = f"""
declare void @gc_collect()

define i64 @arith(i64 %x, i64 %y, {P} %a, {P} %b) {{
entry:
  call void @gc_collect()
  %m = mul i64 %x, %y
  %c = and i64 %y, 63
  %sh = ashr i64 %x, %c
  %lt = icmp slt i64 %x, %y
  %eq = icmp eq {P} %a, %b
  %pick = select i1 %lt, {P} %a, {P} %b
  call void @gc_collect()
  %pa = ptrtoint {P} %pick to i64
  %s1 = add i64 %m, %sh
  %s2 = xor i64 %s1, %pa
  %e = zext i1 %eq to i64
  %s3 = sub i64 %s2, %e
  %pb = ptrtoint {P} %b to i64
  %s4 = add i64 %s3, %pb
  ret i64 %s4
}}
"""
U64 = (1 << 64) - 1


def _arith_reference(x: int, y: int, a: int, b: int) -> int:
    sx = x - (1 << 64) if x >> 63 else x
    sy = y - (1 << 64) if y >> 63 else y
    pick = a if sx < sy else b
    s = ((x * y) + ((sx >> (y & 63)) & U64)) & U64
    return ((s ^ pick) - (a == b) + b) & U64


@lru_cache(maxsize=None)
def _arith_runtime(gc_registers: int, frame: str) -> Runtime32:
    return Runtime32(compile_module32(parse_module(ARITH), frame=frame, gc_registers=gc_registers))


@settings(max_examples=40, deadline=None)
@given(st.integers(0, U64), st.integers(0, U64), st.integers(0, 0xFFFF_FFFF), st.integers(0, 0xFFFF_FFFF),
       st.sampled_from(FRAMES))
def test_register_homes_do_not_change_what_code_computes(x, y, a, b, frame):
    """The law: with its pointers in EBX/ESI/EDI (borrowed and parked around the i64 code), a function
    computes what it computes with every value in a slot, and what LLVM's semantics say."""
    types = [IntType(64), IntType(64), PointerType(IntType(8), 1), PointerType(IntType(8), 1)]
    got = {n: call32(_arith_runtime(n, frame).machine, "arith", types, [x, y, a, b]) for n in (0, 3)}
    homed = _arith_runtime(3, frame).compiled.function("arith").frame.homed
    assert sorted(v.name for v in homed) == ["a", "b", "pick"]
    assert got[0] == got[3] == _arith_reference(x, y, a, b)


def test_the_hand_programs_expected_results_are_what_lli_prints(lli14):
    """REGS_EXPECTED and _loops_expected(), worked out by hand, are what LLVM 14's lli prints and
    returns for the same IR."""
    assert run_lli_batch([REGS, LOOPS], lli14) == [REGS_EXPECTED, _loops_expected()]
