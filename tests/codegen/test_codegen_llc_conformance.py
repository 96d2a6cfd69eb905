"""`gctoy llc` on statepoint inputs that llc-14 compiles: the same records, locations and GC roots as llc-14
(floating-point values, address-valued deopt operands, inttoptr callees, llvm.assume, GC-transition operands,
duplicate and constant gc.relocates; stackmap and patchpoint operands that are global or function addresses, also
against llc-19), and the programs still run right under a moving collector."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from llc_pair import gctoy_llc, llc14_stackmap  # noqa: E402

from gctoy.codegen.codegen_error import LocatedCodegenError
from gctoy.codegen.frame import DWARF
from gctoy.emu import Machine, nops
from gctoy.stackmap import LocationKind

SP = "declare token @llvm.experimental.gc.statepoint.p0f_isVoidf(i64, i32, void ()*, i32, i32, ...)\n"
RELOC = "declare i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token, i32, i32)\n"
CALL_FOO = ("call token (i64, i32, void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidf("
            "i64 0, i32 0, void ()* elementtype(void ()) @foo, i32 0, i32 0, i32 0, i32 0)")

DEOPT_ADDRESSES = SP + """
@G = external global i32
@meta.node = global i64 7
@.str = private constant [3 x i8] c"hi\\00"
declare void @foo()
define i64 @f(i8 addrspace(1)* %p) gc "statepoint-example" {
  %t = """ + CALL_FOO + """ [ "deopt"(void ()* @foo, i64* @meta.node, double 1.5, float 2.0, [3 x i8]* @.str, i32 3) ]
  %v = load i64, i64* @meta.node
  ret i64 %v
}
"""

FLOATS = SP + """
declare double @give(double, i64, float)
declare token @llvm.experimental.gc.statepoint.p0f_f64f64i64f32f(i64, i32, double (double, i64, float)*, i32, i32, ...)
declare double @llvm.experimental.gc.result.f64(token)
define double @f(i8 addrspace(1)* %p, double %x, i1 %c) gc "statepoint-example" {
entry:
  br i1 %c, label %a, label %b
a:
  br label %join
b:
  br label %join
join:
  %d = phi double [ 1.000000e+00, %a ], [ %x, %b ]
  %t = call token (i64, i32, double (double, i64, float)*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_f64f64i64f32f(i64 0, i32 0, double (double, i64, float)* elementtype(double (double, i64, float)) @give, i32 3, i32 0, double %d, i64 4, float 0x3FF8000000000000, i32 0, i32 0) [ "deopt"(double %d, double %x), "gc-live"(i8 addrspace(1)* %p) ]
  %r = call double @llvm.experimental.gc.result.f64(token %t)
  %p2 = call i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %t, i32 0, i32 0)
  ret double %r
}
""" + RELOC

# gc-live (%x, %x): the two relocates are one value; relocates of null are null after the call.
DUPLICATES = SP + """
declare void @foo()
define i1 @f(i8 addrspace(1)* %x) gc "statepoint-example" {
  %t = """ + CALL_FOO + """ [ "gc-live"(i8 addrspace(1)* %x, i8 addrspace(1)* %x, i8 addrspace(1)* null) ]
  %a = call i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %t, i32 0, i32 0)
  %b = call i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %t, i32 0, i32 1)
  %n = call i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %t, i32 2, i32 2)
  %t2 = """ + CALL_FOO + """ [ "gc-live"(i8 addrspace(1)* %a, i8 addrspace(1)* %b, i8 addrspace(1)* %n) ]
  %a2 = call i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %t2, i32 0, i32 0)
  %b2 = call i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %t2, i32 0, i32 1)
  %n2 = call i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %t2, i32 2, i32 2)
  %c = icmp eq i8 addrspace(1)* %b2, %n2
  ret i1 %c
}
""" + RELOC

# A far call through an inttoptr constant, an llvm.assume, GC-transition operands that are an alloca and an i64.
FAR_ASSUME_TRANSITION = SP + """
declare void @foo()
declare void @llvm.assume(i1)
define void @f(i8 addrspace(1)* %p, i64 %k) gc "statepoint-example" {
  %flag = alloca i32
  %c = icmp ne i64 %k, 0
  call void @llvm.assume(i1 %c)
  %t = call token (i64, i32, void ()*, i32, i32, ...) @llvm.experimental.gc.statepoint.p0f_isVoidf(i64 0, i32 0, void ()* elementtype(void ()) inttoptr (i64 140727162896504 to void ()*), i32 0, i32 1, i32 0, i32 0) [ "gc-transition"(i32* %flag, i64 42), "deopt"(i64 %k), "gc-live"(i8 addrspace(1)* %p) ]
  %p2 = call i8 addrspace(1)* @llvm.experimental.gc.relocate.p1i8(token %t, i32 0, i32 0)
  ret void
}
""" + RELOC


def _summary(stackmap) -> list[tuple[int, int, str]]:
    """Per record: number of locations, number of deopt values, and the GC roots (c constant, d direct,
    v a slot or register)."""
    out = []
    for rec in stackmap.records:
        ndeopt = rec.locations[2].offset
        roots = "".join("c" if loc.kind in (LocationKind.CONSTANT, LocationKind.CONSTANT_INDEX)
                        else "d" if loc.kind is LocationKind.DIRECT else "v" for loc in rec.locations[3 + ndeopt:])
        out.append((len(rec.locations), ndeopt, roots))
    return out




@pytest.mark.parametrize("text", [DEOPT_ADDRESSES, FLOATS, DUPLICATES, FAR_ASSUME_TRANSITION],
                         ids=["deopt-addresses", "floats", "duplicate-relocates", "far-assume-transition"])
def test_records_equal_llc14(llvm14, tmp_path, text):
    ours = gctoy_llc(text, tmp_path)
    ref = llc14_stackmap(llvm14, text, tmp_path)
    assert [f.record_count for f in ours.stackmap.functions] == [f.record_count for f in ref.functions]
    assert _summary(ours.stackmap) == _summary(ref)


def test_deopt_addresses_are_spilled_slots_holding_the_address(tmp_path):
    compiled = gctoy_llc(DEOPT_ADDRESSES, tmp_path)
    (rec,) = compiled.stackmap.records
    foo, node = rec.locations[3], rec.locations[4]
    assert foo.kind is node.kind is LocationKind.INDIRECT and foo.offset != node.offset
    frame = compiled.functions[0].frame
    assert {foo.offset, node.offset} <= set(frame.spill_slots)
    assert "__gctoy_sym_" in compiled.data_text  # @meta.node and @.str got assembler labels
    double, single = rec.locations[5], rec.locations[6]
    assert compiled.stackmap.constants[double.offset] == 0x3FF8000000000000
    assert single.kind is LocationKind.CONSTANT and single.offset == 0x40000000


@pytest.mark.parametrize("regalloc", [True, False], ids=["registers", "slots"])
def test_duplicate_relocates_read_the_recorded_slot(tmp_path, regalloc):
    """The record names one slot for %a and %b; both relocates after the second call must read it."""
    compiled = gctoy_llc(DUPLICATES, tmp_path, regalloc=regalloc)
    _, second = compiled.stackmap.records
    assert _summary(compiled.stackmap) == [(7, 0, "ccvv"), (7, 0, "ccvv")]  # null once, %a = %b once
    _, derived = [loc for loc in second.locations[3:] if loc.kind is LocationKind.INDIRECT]
    recorded = derived.offset
    frame = compiled.functions[0].frame
    fn = compiled.functions[0].frame.function
    a2, b2 = (i for i in fn.instructions() if i.name in ("a2", "b2"))
    lines = compiled.asm_text.splitlines()
    for inst in (a2, b2):
        if regalloc:  # the relocate's register is loaded from the recorded slot
            assert f"    mov {frame.allocation.register(inst)}, qword ptr [rsp + {recorded}]" in lines
        else:  # the relocate's slot is written from rax, loaded from the recorded slot
            store = lines.index(f"    mov qword ptr [rsp + {frame.slot(inst)}], rax")
            assert lines[store - 1] == f"    mov rax, qword ptr [rsp + {recorded}]"


# Floating-point values cross calls between gctoy's own functions, in xmm registers and on the stack.
FLOAT_PROGRAM = """
declare void @print_i64(i64)
define double @pick(double %a, double %b, double %c, double %d, double %e, double %f, double %g, double %h,
                    double %i, i64 %n, double %j) {
  %s = icmp eq i64 %n, 0
  %r = select i1 %s, double %i, double %j
  ret double %r
}
define i64 @main() {
  %x = call double @pick(double 0.0, double 0.0, double 0.0, double 0.0, double 0.0, double 0.0, double 0.0,
                         double 0.0, double 2.5, i64 1, double 0x400C000000000000)
  %bits = bitcast double %x to i64
  call void @print_i64(i64 %bits)
  %y = call double @pick(double 0.0, double 0.0, double 0.0, double 0.0, double 0.0, double 0.0, double 0.0,
                         double 0.0, double 2.5, i64 0, double 3.5)
  %ybits = bitcast double %y to i64
  call void @print_i64(i64 %ybits)
  ret i64 0
}
"""


def test_float_arguments_and_results_run(tmp_path):
    path = tmp_path / "floats.ll"
    path.write_text(FLOAT_PROGRAM)
    res = subprocess.run([sys.executable, "-m", "gctoy", "run", str(path)], capture_output=True, text=True,
                         timeout=120, check=False)
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines()[:2] == [str(0x400C000000000000), str(0x4004000000000000)]


def test_float_remainder_is_one_located_error(tmp_path):
    path = tmp_path / "frem.ll"
    path.write_text("define double @f(double %x) {\n  %y = frem double %x, 1.0\n  ret double %y\n}\n")
    res = subprocess.run([sys.executable, "-m", "gctoy", "llc", str(path)], capture_output=True, text=True,
                         timeout=120, check=False)
    assert res.returncode == 1 and "Traceback" not in res.stderr
    assert res.stderr.startswith(f"{path}:2:")


STACKMAPS = """
declare void @llvm.experimental.stackmap(i64, i32, ...)
declare void @llvm.experimental.patchpoint.void(i64, i32, i8*, i32, ...)
declare i64 @llvm.experimental.patchpoint.i64(i64, i32, i8*, i32, ...)
declare i64 @target(i64, i64)
define i64 @f(i64 %x, i64* %p) {
  %a = alloca i64
  call void (i64, i32, ...) @llvm.experimental.stackmap(i64 7, i32 0, i64 %x, i64 12, i64 5000000000, i64* %a, i64* %p)
  call void (i64, i32, ...) @llvm.experimental.stackmap(i64 8, i32 6)
  %r = call i64 (i64, i32, i8*, i32, ...) @llvm.experimental.patchpoint.i64(i64 9, i32 15, i8* bitcast (i64 (i64, i64)* @target to i8*), i32 2, i64 %x, i64 3, i64 %x, i64* %p)
  call void (i64, i32, i8*, i32, ...) @llvm.experimental.patchpoint.void(i64 10, i32 13, i8* null, i32 0, i64 %r)
  %q = call anyregcc i64 (i64, i32, i8*, i32, ...) @llvm.experimental.patchpoint.i64(i64 11, i32 15, i8* inttoptr (i64 -559038737 to i8*), i32 2, i64 %x, i64 %r, i64 %x)
  ret i64 %q
}
"""


def _sites(stackmap) -> list[tuple[int, str]]:
    """Per record: its ID and its locations (c constant, d direct, v a slot or register)."""
    return [(rec.id, "".join("c" if loc.kind in (LocationKind.CONSTANT, LocationKind.CONSTANT_INDEX)
                             else "d" if loc.kind is LocationKind.DIRECT else "v" for loc in rec.locations))
            for rec in stackmap.records]


def test_stackmap_and_patchpoint_records_equal_llc14(llvm14, tmp_path):
    ours = gctoy_llc(STACKMAPS, tmp_path)
    ref = llc14_stackmap(llvm14, STACKMAPS, tmp_path)
    assert _sites(ours.stackmap) == _sites(ref)
    assert ours.stackmap.constants == ref.constants


def test_stackmap_sites_are_where_the_code_stands(tmp_path):
    """A stackmap's shadow and a patchpoint's region are exactly as many bytes as asked."""
    ours = gctoy_llc(STACKMAPS, tmp_path)
    offsets = [rec.instruction_offset for rec in ours.stackmap.records]
    assert offsets[0] == offsets[1]  # the first stackmap has no shadow bytes
    assert offsets[2] - offsets[1] > 6  # six shadow NOPs, then the patchpoint's arguments
    code = ours.image.code
    base = ours.functions[0].address - ours.image.code_base
    assert code[base + offsets[1]:base + offsets[1] + 6] == nops(6)
    null_site = base + offsets[3]
    assert code[null_site:null_site + 13] == nops(13)  # patchpoint of null: all 13 bytes are NOPs


def test_patchpoint_calls_its_target_and_returns_its_result(tmp_path):
    program = """
declare void @print_i64(i64)
declare i64 @llvm.experimental.patchpoint.i64(i64, i32, i8*, i32, ...)
define i64 @add(i64 %a, i64 %b) {
  %s = add i64 %a, %b
  ret i64 %s
}
define i64 @main() {
  %r = call i64 (i64, i32, i8*, i32, ...) @llvm.experimental.patchpoint.i64(i64 1, i32 20, i8* bitcast (i64 (i64, i64)* @add to i8*), i32 2, i64 40, i64 2)
  call void @print_i64(i64 %r)
  ret i64 0
}
"""
    path = tmp_path / "pp.ll"
    path.write_text(program)
    res = subprocess.run([sys.executable, "-m", "gctoy", "run", str(path)], capture_output=True, text=True,
                         timeout=120, check=False)
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines()[0] == "42"


# Global and function addresses (plain, cast, GEP constant expressions, one more than 2 GiB past its
# symbol) as operands of stackmaps and patchpoints: llc builds each in a register before the site and
# records a Register location; a value already in a register stays there.
ADDRESS_SITES_TYPED = """
@g = global [4 x i64] zeroinitializer
@h = global i32 0
declare void @llvm.experimental.stackmap(i64, i32, ...)
declare i64 @llvm.experimental.patchpoint.i64(i64, i32, i8*, i32, ...)
declare void @llvm.experimental.patchpoint.void(i64, i32, i8*, i32, ...)
declare i64 @t(i64, i64, i64, i64, i64, i64)
declare void @ext()
define i64 @f(i64 %a, i64 %b, i8* %p) {
entry:
  %x = add i64 %a, %b
  call void (i64, i32, ...) @llvm.experimental.stackmap(i64 1, i32 4, [4 x i64]* @g, i8 addrspace(1)* addrspacecast (i8* bitcast ([4 x i64]* @g to i8*) to i8 addrspace(1)*), i64* getelementptr ([4 x i64], [4 x i64]* @g, i64 0, i64 2), i64 %x, i32* @h, void ()* @ext, i8* getelementptr (i8, i8* bitcast ([4 x i64]* @g to i8*), i64 8000000000), i8* %p)
  %r = call i64 (i64, i32, i8*, i32, ...) @llvm.experimental.patchpoint.i64(i64 2, i32 15, i8* bitcast (i64 (i64, i64, i64, i64, i64, i64)* @t to i8*), i32 6, i64 %a, i64 %b, i64 %x, i64 1, i64 2, i64 3, [4 x i64]* @g, i32* @h, i64 %x)
  %s = call anyregcc i64 (i64, i32, i8*, i32, ...) @llvm.experimental.patchpoint.i64(i64 3, i32 15, i8* bitcast (i64 (i64, i64, i64, i64, i64, i64)* @t to i8*), i32 2, [4 x i64]* @g, i64 %r, i32* @h, i64 %x)
  call void (i64, i32, i8*, i32, ...) @llvm.experimental.patchpoint.void(i64 4, i32 16, i8* null, i32 0, [4 x i64]* @g, i32* @h, void ()* @ext, i64 (i64, i64, i8*)* @f, i8* getelementptr (i8, i8* bitcast ([4 x i64]* @g to i8*), i64 16), i64 %s)
  %y = add i64 %s, %x
  %z = add i64 %y, %r
  ret i64 %z
}
"""

ADDRESS_SITES_OPAQUE = """
@g = global [4 x i64] zeroinitializer
@h = global i32 0
declare void @llvm.experimental.stackmap(i64, i32, ...)
declare i64 @llvm.experimental.patchpoint.i64(i64, i32, ptr, i32, ...)
declare void @llvm.experimental.patchpoint.void(i64, i32, ptr, i32, ...)
declare i64 @t(i64, i64, i64, i64, i64, i64)
declare void @ext()
define i64 @f(i64 %a, i64 %b, ptr %p) {
entry:
  %x = add i64 %a, %b
  call void (i64, i32, ...) @llvm.experimental.stackmap(i64 1, i32 4, ptr @g, ptr addrspace(1) addrspacecast (ptr @g to ptr addrspace(1)), ptr getelementptr ([4 x i64], ptr @g, i64 0, i64 2), i64 %x, ptr @h, ptr @ext, ptr getelementptr (i8, ptr @g, i64 8000000000), ptr %p)
  %r = call i64 (i64, i32, ptr, i32, ...) @llvm.experimental.patchpoint.i64(i64 2, i32 15, ptr @t, i32 6, i64 %a, i64 %b, i64 %x, i64 1, i64 2, i64 3, ptr @g, ptr @h, i64 %x)
  %s = call anyregcc i64 (i64, i32, ptr, i32, ...) @llvm.experimental.patchpoint.i64(i64 3, i32 15, ptr @t, i32 2, ptr @g, i64 %r, ptr @h, i64 %x)
  call void (i64, i32, ptr, i32, ...) @llvm.experimental.patchpoint.void(i64 4, i32 16, ptr null, i32 0, ptr @g, ptr @h, ptr @ext, ptr @f, ptr getelementptr (i8, ptr @g, i64 16), i64 %s)
  %y = add i64 %s, %x
  %z = add i64 %y, %r
  ret i64 %z
}
"""


def _kinds(stackmap) -> list[tuple[int, list[tuple[str, int]]]]:
    """Per record: its ID and each location's kind and size."""
    return [(rec.id, [(loc.kind.name, loc.size) for loc in rec.locations]) for rec in stackmap.records]


@pytest.mark.parametrize(("llvm", "text"), [("llvm14", ADDRESS_SITES_TYPED), ("llvm19", ADDRESS_SITES_OPAQUE)],
                         ids=["llc14-typed", "llc19-opaque"])
def test_address_operands_of_sites_are_registers_like_llc(request, tmp_path, llvm, text):
    ours = gctoy_llc(text, tmp_path)
    ref = llc14_stackmap(request.getfixturevalue(llvm), text, tmp_path)
    assert _kinds(ours.stackmap) == _kinds(ref)
    assert {kind for _, locs in _kinds(ref) for kind, _ in locs} == {"REGISTER"}


ADDRESS_PROGRAM = """
@g = global [2 x i64] [i64 40, i64 2]
declare void @llvm.experimental.stackmap(i64, i32, ...)
declare i64 @llvm.experimental.patchpoint.i64(i64, i32, i8*, i32, ...)
declare void @llvm.experimental.patchpoint.void(i64, i32, i8*, i32, ...)
define i64 @sum(i64* %p, i64* %q) {
  %a = load i64, i64* %p
  %b = load i64, i64* %q
  %s = add i64 %a, %b
  ret i64 %s
}
define i64 @main() {
  call void (i64, i32, ...) @llvm.experimental.stackmap(i64 1, i32 0, [2 x i64]* @g, i64 (i64*, i64*)* @sum, i64* getelementptr ([2 x i64], [2 x i64]* @g, i64 0, i64 1), i8* getelementptr (i8, i8* bitcast ([2 x i64]* @g to i8*), i64 -8), [2 x i64]* @g)
  %r = call i64 (i64, i32, i8*, i32, ...) @llvm.experimental.patchpoint.i64(i64 2, i32 15, i8* bitcast (i64 (i64*, i64*)* @sum to i8*), i32 2, i64* getelementptr ([2 x i64], [2 x i64]* @g, i64 0, i64 0), i64* getelementptr ([2 x i64], [2 x i64]* @g, i64 0, i64 1), i64 (i64*, i64*)* @sum, [2 x i64]* @g)
  call anyregcc void (i64, i32, i8*, i32, ...) @llvm.experimental.patchpoint.void(i64 3, i32 13, i8* null, i32 1, i64* getelementptr ([2 x i64], [2 x i64]* @g, i64 0, i64 1), i64 %r)
  ret i64 %r
}
"""


@pytest.mark.parametrize("regalloc", [True, False], ids=["registers", "slots"])
def test_address_operands_hold_their_addresses_at_the_site(tmp_path, regalloc):
    """Stopped at each site, the register a Register location names holds the address (and the program's
    patchpoint still calls its target with the addresses as arguments)."""
    compiled = gctoy_llc(ADDRESS_PROGRAM, tmp_path, regalloc=regalloc)
    image = compiled.image
    g, total = image.address_of("g"), image.address_of("sum")
    expected = {1: [g, total, g + 8, g - 8, g], 2: [total, g], 3: [g + 8, None]}
    names = {number: name for name, number in DWARF.items()}
    machine = Machine(image)
    ((fn, records),) = [(fn, recs) for fn, recs in compiled.stackmap.records_by_function()
                        if fn.address == image.address_of("main")]
    for rec in records:
        machine.add_breakpoint(fn.address + rec.instruction_offset)
    machine.enter("main")
    for rec in records:
        stop = machine.run()
        assert stop.pc == fn.address + rec.instruction_offset
        for loc, want in zip(rec.locations, expected[rec.id], strict=True):
            if want is not None:
                assert (loc.kind, loc.size) == (LocationKind.REGISTER, 8)
                assert machine.reg(names[loc.dwarf_reg]) == want
    machine.run()
    assert machine.returned() and machine.return_value() == 42


def test_program_with_address_operands_runs(tmp_path):
    path = tmp_path / "sites.ll"
    path.write_text(ADDRESS_PROGRAM)
    res = subprocess.run([sys.executable, "-m", "gctoy", "run", str(path)], capture_output=True, text=True,
                         timeout=120, check=False)
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines()[0] == "result: 42"


@pytest.mark.parametrize("regalloc", [True, False], ids=["registers", "slots"])
def test_too_many_address_operands_is_one_located_error(tmp_path, regalloc):
    """llc builds every address of a site in a register and runs out of them past 13; gctoy at 10."""
    globals_ = "".join(f"@g{k} = global i64 {k}\n" for k in range(10))
    ops = ", ".join(f"i64* @g{k}" for k in range(10))
    text = (f"{globals_}declare void @llvm.experimental.stackmap(i64, i32, ...)\n"
            f"define void @f() {{\n  call void (i64, i32, ...) @llvm.experimental.stackmap(i64 1, i32 0, {ops})\n"
            "  ret void\n}\n")
    with pytest.raises(LocatedCodegenError, match=r"in\.ll:13:3: .*10 global or function addresses"):
        gctoy_llc(text, tmp_path, regalloc=regalloc)
    assert _kinds(gctoy_llc(text.replace(", i64* @g9", ""), tmp_path, regalloc=regalloc).stackmap) == [
        (1, [("REGISTER", 8)] * 9)
    ]
