"""The register allocator (codegen/regalloc.py) and the lowering over it (``compile_module(regalloc=True)``).

* Legality, against a brute-force liveness (every use walked back to its definition, point by
  point, independent of gctoy's dataflow liveness): no two values live at one point share a
  register, and no value live across a call sits in a caller-saved register. Checked on random
  IR (random_ir, statepoints included) and on RS4GC'd generated GC programs; a planted bad
  allocation is caught.
* The code: the non-GC test programs print the same with and without the allocator; a leaf
  gets no frame; rsp is 16-byte aligned at calls; the CFI rows match the prologue's bytes.
* Statepoints: by default every gc-live value is spilled (Indirect), as llc 14's default; with
  ``gc_registers`` (llc's ``-max-registers-for-gc-values``) GC pointers across a statepoint are
  Register locations (callee-saved) in gctoy's own records, and the moving collector rewrites
  them, in the innermost frame (the machine register) and in outer frames (the callee's save
  slot, found through the CFI rows).
* Functions the allocator cannot take (wide values, over-aligned allocas) get the slot lowering,
  with CFI rows of their own, in the same module.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent), str(HERE.parent / "runtime")]

from codegen_programs import PROGRAMS as PLAIN_PROGRAMS  # noqa: E402
from random_ir import DrawChooser, Limits, random_module  # noqa: E402
from runnable_gen import generate_program  # noqa: E402
from runtime_programs import EXPECTED, PROGRAMS  # noqa: E402
from test_codegen_llc_conformance import FLOAT_PROGRAM  # noqa: E402  (xmm and stack arguments, a float result)

from gctoy.codegen import CodegenError, compile_module  # noqa: E402
from gctoy.codegen.frame import Frame, has_slot  # noqa: E402
from gctoy.codegen.frame_ra import RegisterFrame  # noqa: E402
from gctoy.codegen.regalloc import X86_64, Allocation, allocate, is_clobbering_call  # noqa: E402
from gctoy.emu import Machine  # noqa: E402
from gctoy.emu.disasm import disassemble  # noqa: E402
from gctoy.ir import instructions as I  # noqa: E402
from gctoy.ir import parse_module  # noqa: E402
from gctoy.passes import run as run_pass  # noqa: E402
from gctoy.runtime.run import Runtime, load_compiled  # noqa: E402
from gctoy.runtime.stackwalk import StackWalkError, walk  # noqa: E402
from gctoy.stackmap import LocationKind  # noqa: E402

COMMON = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
CALLER_SAVED = set(X86_64.caller_saved)


# --------------------------------------------------------------------------- brute-force liveness


def brute_force_live(fn) -> dict[tuple[int, int], set[int]]:
    """(id(block), i) -> ids of the values live just before instruction i of the block (i = len: its end)."""
    preds: dict[int, list] = {id(b): [] for b in fn.blocks}
    for b in fn.blocks:
        for s in dict.fromkeys(b.successors):
            preds[id(s)].append(b)
    live: dict[tuple[int, int], set[int]] = {}
    values = [a for a in fn.args if has_slot(a)] + [i for i in fn.instructions() if has_slot(i)]
    for v in values:
        starts = []
        for b in fn.blocks:
            for k, inst in enumerate(b.instructions):
                if isinstance(inst, I.Phi):
                    starts += [(p, len(p.instructions)) for x, p in inst.incoming if x is v]
                elif any(op is v for op in inst.operands):
                    starts.append((b, k))
        seen: set[tuple[int, int]] = set()
        while starts:
            b, i = starts.pop()
            while (id(b), i) not in seen:
                seen.add((id(b), i))
                live.setdefault((id(b), i), set()).add(id(v))
                if i == 0 or isinstance(b.instructions[i - 1], I.Phi):  # the top of the block, after its phis
                    if not any(p is v for p in b.phis()):
                        starts += [(p, len(p.instructions)) for p in preds[id(b)]]
                    break
                if b.instructions[i - 1] is v:
                    break
                i -= 1
    return live


def problems(fn, alloc: Allocation) -> list[str]:
    """What is wrong with an allocation, by the brute-force liveness."""
    live = brute_force_live(fn)
    names = {id(v): v.name for v in alloc.values}
    out = []
    for ids in live.values():
        places: dict[str, int] = {}
        for key in ids:
            reg = alloc.registers.get(key)
            if reg is None and key not in alloc.spills:
                out.append(f"%{names.get(key, key)} is live but has no place")
                continue
            place = reg if reg is not None else f"spill slot {alloc.spills[key]}"
            if place in places:
                out.append(f"%{names[places[place]]} and %{names[key]} are both live in {place}")
            places[place] = key
    for b in fn.blocks:
        for k, inst in enumerate(b.instructions):
            if is_clobbering_call(inst):
                for key in live.get((id(b), k + 1), set()) - {id(inst)}:
                    if alloc.registers.get(key) in CALLER_SAVED:
                        out.append(f"%{names[key]} lives across a call in caller-saved {alloc.registers[key]}")
    return out


def allocations(text: str):
    module = parse_module(text)
    for fn in module.definitions():
        try:
            yield fn, allocate(fn)
        except CodegenError:
            continue  # a type the x86-64 lowering has no slot for (vectors, structs)


@st.composite
def random_modules(draw) -> str:
    return random_module(DrawChooser(draw), Limits(functions=(1, 2), blocks=(1, 6), instructions=(2, 10),
                                                   statepoint_percent=25))


@settings(max_examples=80, **COMMON)
@given(random_modules())
def test_allocation_of_random_ir_respects_liveness(text: str) -> None:
    for fn, alloc in allocations(text):
        assert problems(fn, alloc) == [], alloc.describe()


def _gc_program(seed: int, size: int):
    module = parse_module(generate_program(seed, size))
    run_pass(module, "rewrite-statepoints-for-gc")
    return module


@settings(max_examples=12, **COMMON)
@given(st.integers(0, 100_000), st.integers(1, 12))
def test_allocation_of_gc_programs_respects_liveness(seed: int, size: int) -> None:
    for fn in _gc_program(seed, size).definitions():
        alloc = allocate(fn)
        assert problems(fn, alloc) == [], alloc.describe()
        for v in alloc.values:
            if alloc.crosses_call(v) and alloc.register(v) is not None:
                assert alloc.register(v) in X86_64.callee_saved


def test_the_checker_catches_two_live_values_in_one_register_or_slot() -> None:
    fn = next(f for f in _gc_program(7, 6).definitions() if f.name == "main")
    alloc = allocate(fn)
    assert problems(fn, alloc) == []
    live = brute_force_live(fn)
    a, b = next(sorted(ids)[:2] for ids in live.values() if len(ids) >= 2)
    broken = replace(alloc, registers={**alloc.registers, a: "rbx", b: "rbx"}, spills={})
    assert any("both live in rbx" in p for p in problems(fn, broken))
    in_memory = {k: r for k, r in alloc.registers.items() if k not in (a, b)}
    broken = replace(alloc, registers=in_memory, spills={**alloc.spills, a: 0, b: 0})
    assert any("both live in spill slot 0" in p for p in problems(fn, broken))
    across = next(key for b in fn.blocks for k, inst in enumerate(b.instructions) if is_clobbering_call(inst)
                  for key in live.get((id(b), k + 1), set()) - {id(inst)} if key in alloc.registers)
    broken = replace(alloc, registers={**alloc.registers, across: "rsi"})
    assert any("across a call in caller-saved rsi" in p for p in problems(fn, broken))


# --------------------------------------------------------------------------- the code

MANY_ACROSS = "declare void @print_i64(i64)\n" + "\n".join([
    "define i64 @main() {", "entry:",
    *[f"  %v{k} = add i64 {k}, 100" for k in range(9)],
    "  call void @print_i64(i64 1)",
    *[f"  %s{k} = add i64 %{'s' if k else 'v'}{k - 1 if k else 0}, %v{k}" for k in range(1, 9)],
    "  call void @print_i64(i64 %s8)", "  ret i64 %s8", "}", ""]).replace("%s0", "%v0")


def run_machine(text: str, regalloc: bool) -> list[str]:
    machine = Machine(compile_module(parse_module(text), regalloc=regalloc).image)
    out: list[str] = []
    machine.register_native("print_i64", lambda v: out.append(str(v)))
    result = machine.signed(machine.call("main", max_instructions=5_000_000))
    return out + [f"result {result}"]


@pytest.mark.parametrize("name", [*sorted(PLAIN_PROGRAMS), "floats"])
def test_plain_programs_print_the_same_with_registers(name: str) -> None:
    text = FLOAT_PROGRAM if name == "floats" else PLAIN_PROGRAMS[name]
    assert run_machine(text, True) == run_machine(text, False)


INDIRECT = """declare void @print_i64(i64)
define i64 @twice(i64 %x) {
  %y = mul i64 %x, 2
  ret i64 %y
}
define i64 @apply(i64 (i64)* %f, i64 %x) {
  %r = call i64 %f(i64 %x)
  ret i64 %r
}
define i64 @main() {
  %r = call i64 @apply(i64 (i64)* @twice, i64 21)
  call void @print_i64(i64 %r)
  ret i64 %r
}
"""


def test_an_indirect_call_reads_its_target_before_the_argument_moves() -> None:
    """%f arrives in rdi, which the argument move then takes for %x: the target must be read first."""
    assert run_machine(INDIRECT, True) == run_machine(INDIRECT, False) == ["42", "result 42"]


def test_more_values_across_a_call_than_callee_saved_registers_spill() -> None:
    fn = parse_module(MANY_ACROSS).get_function("main")
    alloc = allocate(fn)
    across = [v for v in alloc.values if alloc.crosses_call(v)]
    assert len(across) == 10  # %v0..%v8 across the first call, %s8 across the second
    assert sorted({alloc.register(v) for v in across if alloc.register(v)}) == sorted(X86_64.callee_saved)
    assert alloc.spill_count >= 4
    assert run_machine(MANY_ACROSS, True) == run_machine(MANY_ACROSS, False) == [
        "1", str(sum(range(9)) + 900), f"result {sum(range(9)) + 900}"]


def test_a_leaf_has_no_frame_and_calls_are_aligned() -> None:
    compiled = compile_module(parse_module(PLAIN_PROGRAMS["recursion"] + """
define i64 @leafy(i64 %x) {
entry:
  %y = add i64 %x, 1
  ret i64 %y
}
"""), regalloc=True)
    text = compiled.asm_text.split("leafy:")[1]
    assert text.split() == ["leafy.bb0:", "add", "rdi,", "1", "mov", "rax,", "rdi", "ret"]
    for name in ("many_args", "recursion"):
        assert _alignments_at_calls(PLAIN_PROGRAMS[name]) == {0}


def _alignments_at_calls(text: str) -> set[int]:
    """rsp modulo 16 in the caller at each call of @print_i64 (the stub sees the return address pushed)."""
    machine = Machine(compile_module(parse_module(text), regalloc=True).image)
    seen: set[int] = set()
    machine.register_native("print_i64", lambda v: seen.add((machine.sp + 8) % 16))
    machine.call("main")
    return seen


def test_unwind_rows_follow_the_prologue_bytes() -> None:
    compiled = compile_module(_gc_program(11, 8), regalloc=True)
    checked = 0
    for fn in compiled.functions:
        code = compiled.image.code[fn.address - compiled.image.code_base:][:64]
        insns = disassemble(code, fn.address, "x86_64")
        offset = 0
        expected = [(0, 8)]
        for insn in insns[:fn.prologue_instructions]:
            offset += insn.size
            assert insn.mnemonic in ("push", "sub")
            grown = 8 if insn.mnemonic == "push" else int(insn.op_str.split(", ")[1], 0)
            expected.append((offset, expected[-1][1] + grown))
        assert [(o, c) for o, c, _ in fn.unwind_rows] == expected
        assert fn.unwind_rows[-1][1] == fn.frame.stack_size + 8
        checked += bool(fn.frame.saved)
    assert checked


def test_unwind_rows_of_the_slot_frame_follow_its_prologue_bytes() -> None:
    """push rbp saves the caller's rbp at CFA-16; mov rbp, rsp changes nothing; sub rsp grows the CFA."""
    compiled = compile_module(_gc_program(11, 8), regalloc=False)
    for fn in compiled.functions:
        code = compiled.image.code[fn.address - compiled.image.code_base:][:64]
        push, mov, *rest = disassemble(code, fn.address, "x86_64")
        assert (push.mnemonic, push.op_str, mov.mnemonic, mov.op_str) == ("push", "rbp", "mov", "rbp, rsp")
        expected = [(0, 8, ()), (1, 16, ((6, -16),))]
        if rest[0].mnemonic == "sub":
            size = int(rest[0].op_str.split(", ")[1], 0)
            expected.append((push.size + mov.size + rest[0].size, 16 + size, ((6, -16),)))
        assert list(fn.unwind_rows) == expected
        assert fn.unwind_rows[-1][1] == fn.frame.stack_size + 8


# --------------------------------------------------------------------------- statepoints


def _regalloc_loaded(name: str, gc_registers: int = len(X86_64.callee_saved)):
    module = parse_module(PROGRAMS[name])
    run_pass(module, "rewrite-statepoints-for-gc")
    return load_compiled(module, regalloc=True, gc_registers=gc_registers)


def test_by_default_every_gc_live_value_is_spilled_as_llc_does() -> None:
    loaded = _regalloc_loaded("tree", gc_registers=0)
    kinds = {loc.kind for r in loaded.stackmap.records for loc in r.locations[3:]}
    assert LocationKind.INDIRECT in kinds and LocationKind.REGISTER not in kinds
    runtime = Runtime(loaded, stress=True, verify=True, semispace_size=4096)
    result = runtime.run()
    assert (runtime.printed, result.result) == EXPECTED["tree"]
    assert runtime.stats.gc.collections > 0


def test_gc_registers_caps_the_register_locations_of_each_statepoint() -> None:
    for n in (1, 2):
        loaded = _regalloc_loaded("tree", gc_registers=n)
        counts = {sum(loc.kind is LocationKind.REGISTER for loc in r.locations[3 + r.locations[2].offset:][0::2])
                  for r in loaded.stackmap.records}
        assert max(counts) == n, (n, counts)


def _register_pairs(frame) -> list[tuple[object, str]]:
    """The (base slot, register) of the frame's pairs whose base is a Register location."""
    locs = frame.site.record.locations
    rest = locs[3 + locs[2].offset:]
    out = []
    for k, (base, _) in enumerate(frame.pairs):
        if rest[2 * k].kind is LocationKind.REGISTER:
            out.append((base, rest[2 * k].dwarf_reg))
    return out


def test_register_locations_in_gctoy_objects_are_relocated_by_the_moving_collector() -> None:
    loaded = _regalloc_loaded("tree")
    kinds = {loc.kind for r in loaded.stackmap.records for loc in r.locations[3:]}
    assert LocationKind.REGISTER in kinds and LocationKind.INDIRECT not in kinds
    moved = {"machine register": 0, "save slot": 0}

    def hook(runtime, done):
        after = {slot: new for slot, _, new in done.roots}
        for depth, frame in enumerate(walk(runtime.machine, runtime.sites)):
            for slot, _ in _register_pairs(frame):
                old = next((o for s, o, _ in done.roots if s == slot), None)
                if old is None or old == after[slot] or not old:
                    continue
                assert runtime.heap.space.base <= after[slot] < runtime.heap.space.end
                if depth == 0:
                    assert isinstance(slot, str) and runtime.machine.reg(slot) == after[slot]
                    moved["machine register"] += 1
                else:  # an outer frame's register, saved by a callee's prologue: found through the CFI
                    assert isinstance(slot, int) and runtime.machine.read_u64(slot) == after[slot]
                    moved["save slot"] += 1

    runtime = Runtime(loaded, stress=True, verify=True, semispace_size=4096, on_collect=hook)
    result = runtime.run()
    assert (runtime.printed, result.result) == EXPECTED["tree"]
    assert moved["machine register"] > 0 and moved["save slot"] > 0, moved


def test_without_the_cfi_rows_an_outer_register_is_lost() -> None:
    loaded = _regalloc_loaded("tree")
    with pytest.raises(StackWalkError, match="no CFI"):
        Runtime(replace(loaded, unwind=None), stress=True, verify=True, semispace_size=4096).run()


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_runtime_programs_under_stress_with_registers(name: str) -> None:
    runtime = Runtime(_regalloc_loaded(name), stress=True, verify=True, semispace_size=4096)
    result = runtime.run()
    assert (runtime.printed, result.result) == EXPECTED[name]
    assert runtime.stats.gc.collections > 0 and runtime.stats.verified == runtime.stats.gc.collections


def test_the_command_line_takes_regalloc(tmp_path) -> None:
    src = tmp_path / "tree.ll"
    src.write_text(PROGRAMS["tree"], encoding="utf-8")
    def gctoy(*args: str) -> str:
        done = subprocess.run([sys.executable, "-m", "gctoy", *args, str(src)], capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 0, done.stderr
        return done.stdout

    asm = gctoy("llc", "--gc-registers", "5")
    assert "Register R#3" in asm and "push rbx" in asm and "Indirect" not in asm
    assert gctoy("llc", "-max-registers-for-gc-values=5") == asm  # llc's own spelling
    spilled = gctoy("llc")
    assert "Register R#" not in spilled and "Indirect [R#7 + " in spilled and "push rbp" not in spilled
    slots = gctoy("llc", "--no-regalloc")
    assert "Register R#" not in slots and "push rbp" in slots and slots != spilled
    printed, result = EXPECTED["tree"]
    for flags in (("--gc-registers", "5"), (), ("--no-regalloc",)):
        out = gctoy("run", *flags, "--stress", "--verify-heap")
        assert out.splitlines() == [str(v) for v in printed] + [f"result: {result}"], flags
    bad = subprocess.run([sys.executable, "-m", "gctoy", "llc", "--gc-registers", "-1", str(src)],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "--gc-registers takes a number that is not negative" in bad.stderr


def _many_pointers(n: int) -> str:
    """@main keeps ``n`` objects live across a collection, then sums their fields."""
    p = "i8 addrspace(1)*"
    lines = [f"declare {p} @gc_alloc(i64, i64)", "declare void @gc_collect()", "declare void @print_i64(i64)",
             'define i64 @main() gc "statepoint-example" {', "entry:"]
    for k in range(n):
        lines += [f"  %o{k} = call {p} @gc_alloc(i64 1, i64 0)", f"  %f{k} = bitcast {p} %o{k} to i64 addrspace(1)*",
                  f"  store i64 {k + 1}, i64 addrspace(1)* %f{k}"]
    lines.append("  call void @gc_collect()")
    acc = "0"
    for k in range(n):
        lines += [f"  %v{k} = load i64, i64 addrspace(1)* %f{k}", f"  %s{k} = add i64 {acc}, %v{k}"]
        acc = f"%s{k}"
    lines += [f"  call void @print_i64(i64 {acc})", f"  ret i64 {acc}", "}", ""]
    return "\n".join(lines)


def test_pointers_beyond_the_callee_saved_registers_are_spilled_and_relocated() -> None:
    module = parse_module(_many_pointers(8))
    run_pass(module, "rewrite-statepoints-for-gc")
    loaded = load_compiled(module, regalloc=True, gc_registers=8)
    collect = max(loaded.stackmap.records, key=lambda r: len(r.locations))
    kinds = [loc.kind for loc in collect.locations[3:]]
    assert kinds.count(LocationKind.REGISTER) == 2 * len(X86_64.callee_saved)
    assert kinds.count(LocationKind.INDIRECT) == 2 * (8 - len(X86_64.callee_saved))
    moved = []
    runtime = Runtime(loaded, stress=True, verify=True, on_collect=lambda rt, done: moved.extend(
        slot for slot, old, new in done.roots if old and old != new))
    result = runtime.run()
    assert (runtime.printed, result.result) == ([36], 36)
    assert {type(slot) for slot in moved} == {str, int}  # registers and spill slots both rewritten


MAIN_CALLS_F = """
define i64 @main() {
  %r = call i64 @g(i64 5)
  ret i64 %r
}
define i64 @g(i64 %x) {
  %y = add i64 %x, 1
  ret i64 %y
}
"""


@pytest.mark.parametrize("ty, text", [
    ("<2 x i64>", "define i64 @f(i64 %x) {\n  %v = insertelement <2 x i64> zeroinitializer, i64 %x, i32 0\n"
                  "  %r = extractelement <2 x i64> %v, i32 1\n  ret i64 %r\n}\n"),
    ("i128", "define i128 @f(i128 %x) {\n  ret i128 %x\n}\n"),
])
def test_functions_with_wide_values_get_the_slot_lowering(ty: str, text: str) -> None:
    compiled = compile_module(parse_module(text + MAIN_CALLS_F))
    frames = {f.name: type(f.frame) for f in compiled.functions}
    assert frames == {"f": Frame, "main": RegisterFrame, "g": RegisterFrame}
    fn = parse_module(text).get_function("f")
    with pytest.raises(CodegenError, match=rf"{ty}.*register allocator.*--no-regalloc") as info:
        RegisterFrame(fn, allocate(fn))
    assert ":2:" in str(info.value) or ty == "i128"
