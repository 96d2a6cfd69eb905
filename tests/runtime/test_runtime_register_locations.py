"""GC pointers in callee-saved registers of outer frames, found through the objects' CFI.

LLVM 14's llc keeps GC pointers in callee-saved registers across statepoints when given
``-fixup-allow-gcptr-in-csr -max-registers-for-gc-values=N``: the stack map then has
Register locations (kind 1) in every frame, not only the innermost. The walker follows each
frame's ``.eh_frame`` rules to the slot where a callee saved the register (or to the machine
register when no callee saved it) and the collector rewrites that slot.

Checked here: such objects really have Register locations in outer frames (and both kinds of
resolution occur); they run under stress collection with the heap verified and print what
``lli`` prints and what they print without a collector; the CFI the loader reads matches
``llvm-dwarfdump --eh-frame``; a walker that ignores the saved-register rules is caught; and
every way a Register location can be unresolvable is one clear StackWalkError.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent)]

from gctoy.runtime.cfi import CALLEE_SAVED, FunctionUnwind, UnwindRow, UnwindTable, format_unwind_table  # noqa: E402
from gctoy.errors import DecodeError  # noqa: E402
from gctoy.runtime.elfload import LoadedObject, ObjectLoadError, load_object  # noqa: E402
from gctoy.runtime.run import Runtime, load_compiled  # noqa: E402
from gctoy.runtime.stackwalk import StackWalkError, walk  # noqa: E402
from gctoy.stackmap import LocationKind  # noqa: E402
from gctoy.llvm_tools import find_tool  # noqa: E402
from lli_shim import run_lli_batch  # noqa: E402
from oracles import LLVM14, skip_missing  # noqa: E402
from runnable_gen import ABI_DECLS, GC, P, generate_program  # noqa: E402
from runtime_programs import TREE, compile_program  # noqa: E402

CSR_FLAGS = ("-fixup-allow-gcptr-in-csr", "-max-registers-for-gc-values=4")
CONFIGS = {
    "csr": CSR_FLAGS,
    "csr-fp": (*CSR_FLAGS, "-frame-pointer=all"),  # CFA = rbp + 16: the rbp rule is followed too
    "csr-many": ("-fixup-allow-gcptr-in-csr", "-max-registers-for-gc-values=16"),
}
SEMISPACE = 1 << 20
GENERATED = [(seed, 4 + seed % 9) for seed in range(2000, 2010)]

# A chain of frames, each keeping GC pointers across the call below it; the deepest collects.
# @h1_middle keeps no GC pointer of its own, so @h2_upper's registers pass through it.
CHAIN = ABI_DECLS + f"""
define i64 @h0_leaf({P} %p) {GC} {{
entry:
  %q = call {P} @gc_alloc(i64 2, i64 1)
  %qf0 = bitcast {P} %q to {P} addrspace(1)*
  store {P} %p, {P} addrspace(1)* %qf0
  %qf1b = getelementptr i8, {P} %q, i64 8
  %qf1 = bitcast {P} %qf1b to i64 addrspace(1)*
  store i64 5, i64 addrspace(1)* %qf1
  call void @gc_collect()
  %pf0 = bitcast {P} %p to i64 addrspace(1)*
  %pv = load i64, i64 addrspace(1)* %pf0
  %back = load {P}, {P} addrspace(1)* %qf0
  %bf0 = bitcast {P} %back to i64 addrspace(1)*
  %bv = load i64, i64 addrspace(1)* %bf0
  %qv = load i64, i64 addrspace(1)* %qf1
  %m = mul i64 %pv, 100
  %s1 = add i64 %m, %qv
  %s2 = add i64 %s1, %bv
  ret i64 %s2
}}

define i64 @h1_middle(i64 %x, {P} %p) {GC} {{
entry:
  %r = call i64 @h0_leaf({P} %p)
  %s = mul i64 %r, %x
  ret i64 %s
}}

define i64 @h2_upper({P} %a, {P} %b) {GC} {{
entry:
  %r1 = call i64 @h1_middle(i64 3, {P} %b)
  call void @do_safepoint()
  %r2 = call i64 @h1_middle(i64 7, {P} %a)
  %af0 = bitcast {P} %a to i64 addrspace(1)*
  %av = load i64, i64 addrspace(1)* %af0
  %bf0 = bitcast {P} %b to i64 addrspace(1)*
  %bv = load i64, i64 addrspace(1)* %bf0
  call void @print_i64(i64 %r1)
  call void @print_i64(i64 %r2)
  %s1 = add i64 %r1, %r2
  %s2 = add i64 %s1, %av
  %s3 = add i64 %s2, %bv
  ret i64 %s3
}}

define i64 @main() {GC} {{
entry:
  %a = call {P} @gc_alloc(i64 1, i64 0)
  %af0 = bitcast {P} %a to i64 addrspace(1)*
  store i64 11, i64 addrspace(1)* %af0
  %junk = call {P} @gc_alloc(i64 3, i64 0)
  %b = call {P} @gc_alloc(i64 1, i64 0)
  %bf0 = bitcast {P} %b to i64 addrspace(1)*
  store i64 22, i64 addrspace(1)* %bf0
  %c = call {P} @gc_alloc(i64 1, i64 0)
  %cf0 = bitcast {P} %c to i64 addrspace(1)*
  store i64 33, i64 addrspace(1)* %cf0
  %r = call i64 @h2_upper({P} %a, {P} %b)
  %cv = load i64, i64 addrspace(1)* %cf0
  call void @print_i64(i64 %cv)
  %bv = load i64, i64 addrspace(1)* %bf0
  %s = add i64 %r, %bv
  ret i64 %s
}}
"""
# TREE from runtime_programs (recursive build and sum), with the shim's declarations.
TREE_PROGRAM = ABI_DECLS + TREE[TREE.index("define"):].replace("i8 addrspace(1)*", P).replace(
    "@build", "@h0_build").replace("@sum", "@h1_sum")
HAND = {"chain": CHAIN, "tree": TREE_PROGRAM}


def programs() -> list[tuple[str, str]]:
    """(name, IR) of every program these tests run."""
    return [*HAND.items(), *((f"gen{seed}", generate_program(seed, size)) for seed, size in GENERATED)]


@pytest.fixture(scope="module")
def oracle(llvm14, lli14) -> dict[str, tuple[list[int], int]]:
    """What lli prints and returns for each program."""
    names, texts = zip(*programs())
    return dict(zip(names, run_lli_batch(list(texts), lli14)))


@pytest.fixture(scope="module")
def objects(llvm14, tmp_path_factory) -> dict[tuple[str, str], LoadedObject]:
    """(config, program) -> the llc object, loaded."""
    workdir = tmp_path_factory.mktemp("csr")
    loaded = {}
    for config, flags in CONFIGS.items():
        for name, text in programs():
            obj = compile_program(text, workdir, llvm14, name=f"{name}-{config}", llc_flags=flags)
            loaded[config, name] = load_object(obj)
    return loaded


def register_slots(frame) -> list:
    """The slots the frame's Register locations resolved to (pairs flattened in location order)."""
    locs = frame.site.record.locations
    rest = list(locs[3 + locs[2].offset:])
    while rest and rest[-1].kind is LocationKind.DIRECT:
        rest.pop()
    slots = [slot for pair in frame.pairs for slot in pair]
    assert len(slots) == len(rest)
    return [slot for loc, slot in zip(rest, slots) if loc.kind is LocationKind.REGISTER]


def run_stressed(loaded: LoadedObject, verify: bool = True, census: Counter | None = None):
    """Run @main collecting at every statepoint; count how outer-frame Register locations resolved."""

    def look(runtime, _done) -> None:
        for depth, frame in enumerate(walk(runtime.machine, runtime.sites)):
            slots = register_slots(frame)
            if not depth or not slots:
                continue
            census["outer frames with Register locations"] += 1
            for slot in slots:
                if isinstance(slot, int):
                    # a callee's save slot: below this frame's rsp, on the guest stack
                    assert slot < frame.sp and slot % 8 == 0, (frame.site.name, hex(slot))
                    census["saved in memory"] += 1
                else:
                    assert slot in CALLEE_SAVED.values(), slot
                    census["in the machine register"] += 1

    runtime = Runtime(loaded, stress=True, verify=verify, semispace_size=SEMISPACE,
                      on_collect=look if census is not None else None)
    result = runtime.run()
    return (result.printed, result.result), runtime


class Runaway(Exception):
    """A mutant collected far more often than the healthy program: its control flow diverged."""


def run_mutant(loaded: LoadedObject, healthy_collections: int, verify: bool = False):
    """Run a mutated object under stress; a runaway (deep recursion through corrupted data) is stopped."""

    def budget(runtime, _done) -> None:
        if len(runtime.collections) > 10 * healthy_collections:
            raise Runaway(f"{len(runtime.collections)} collections, the healthy run needs {healthy_collections}")

    runtime = Runtime(loaded, stress=True, verify=verify, semispace_size=SEMISPACE, on_collect=budget)
    result = runtime.run(max_instructions=5_000_000)
    return result.printed, result.result


def strip_saved_registers(unwind: UnwindTable) -> UnwindTable:
    """The mutation: CFI that never says a register was saved (the walker then ignores saves)."""
    return UnwindTable(tuple(
        replace(fn, rows=tuple(replace(row, saved=()) for row in fn.rows)) for fn in unwind.functions
    ))


# ---------------------------------------------------------------- the flags and the objects


def test_llc_has_the_gc_in_csr_flags(llvm14):
    r = subprocess.run([str(llvm14.llc), "--help-hidden"], capture_output=True, text=True, timeout=60)
    for flag in ("-fixup-allow-gcptr-in-csr", "-max-registers-for-gc-values"):
        assert flag in r.stdout, flag


@pytest.mark.parametrize("config", CONFIGS)
def test_objects_have_register_locations_and_cfi(objects, config):
    with_registers = 0
    for name, _ in programs():
        loaded = objects[config, name]
        assert loaded.unwind is not None and loaded.unwind.functions
        for fn in loaded.unwind.functions:  # every defined function has an FDE
            assert fn.start in loaded.function_names()
        kinds = {l.kind for r in loaded.stackmap.records for l in r.locations}
        with_registers += LocationKind.REGISTER in kinds
    assert with_registers >= len(programs()) - 2, "llc put (almost) no GC pointer in a register"


# ---------------------------------------------------------------- running them


@pytest.mark.parametrize("config", CONFIGS)
def test_stress_collection_matches_lli_and_no_gc(objects, oracle, config):
    census: Counter = Counter()
    for name, _ in programs():
        loaded = objects[config, name]
        got, runtime = run_stressed(loaded, census=census)
        assert got == oracle[name], f"{name} ({config})"
        assert runtime.stats.collections > 0 and runtime.stats.verified == runtime.stats.collections
        calm = Runtime(loaded, gc="none", semispace_size=SEMISPACE).run()
        assert (calm.printed, calm.result) == oracle[name]
    # Register locations were really resolved in outer frames, through save slots and through
    # registers no callee had touched.
    # (LLVM 14 gives about 1200 frames, 4000 save slots and 300 machine registers per config.)
    assert census["outer frames with Register locations"] > 500, census
    assert census["saved in memory"] > 500, census
    assert census["in the machine register"] > 50, census


def test_chain_resolves_registers_through_every_frame(objects):
    loaded = objects["csr", "chain"]
    seen = []

    def look(runtime, _done):
        frames = walk(runtime.machine, runtime.sites)
        names = [f.site.name for f in frames]
        if names[:1] == ["h0_leaf"]:
            seen.append([(f.site.name, [b for b, _ in f.pairs]) for f in frames])

    runtime = Runtime(loaded, stress=True, verify=True, semispace_size=SEMISPACE, on_collect=look)
    runtime.run()
    assert seen, "no collection in the innermost function"
    deepest = seen[0]
    assert [n for n, _ in deepest] == ["h0_leaf", "h1_middle", "h2_upper", "main"]
    upper = dict(deepest)["h2_upper"]
    assert len(upper) >= 1 and all(isinstance(s, int) for s in upper), upper
    main = dict(deepest)["main"]
    assert any(isinstance(s, int) for s in main), main


@settings(max_examples=6)
@given(seed=st.integers(0, 10**6), size=st.integers(1, 12))
def test_law_stress_collection_changes_nothing(llvm14, lli14, seed, size):
    """Any generated program, GC pointers in registers: stressed and verified == lli == no collector."""
    lli = lli14
    text = generate_program(seed, size)
    with tempfile.TemporaryDirectory() as tmp:
        loaded = load_object(compile_program(text, Path(tmp), llvm14, llc_flags=CSR_FLAGS))
    got, runtime = run_stressed(loaded)
    calm = Runtime(loaded, gc="none", semispace_size=SEMISPACE).run()
    assert got == (calm.printed, calm.result) == run_lli_batch([text], lli)[0]
    assert runtime.stats.verified == runtime.stats.collections


# ---------------------------------------------------------------- the mutation is caught


@pytest.mark.parametrize("config", ["csr", "csr-fp"])
def test_ignoring_saved_registers_is_caught(objects, oracle, config):
    caught = []
    for name in ("chain", "tree", *(f"gen{s}" for s, _ in GENERATED)):
        loaded = objects[config, name]
        output, healthy = run_stressed(loaded, verify=False)
        assert output == oracle[name], name  # unmutated, the same run prints what lli prints
        broken = replace(loaded, unwind=strip_saved_registers(loaded.unwind))
        try:
            got = run_mutant(broken, healthy.stats.collections)
        except Exception as e:  # noqa: BLE001 - a crash counts as caught
            caught.append((name, type(e).__name__))
            continue
        if got != oracle[name]:
            caught.append((name, "wrong output"))
    names = {n for n, _ in caught}
    assert {"chain", "tree"} <= names, caught
    assert len(caught) >= 4, caught


def test_ignoring_saved_registers_is_caught_by_the_verifier(objects, oracle):
    loaded = objects["csr", "tree"]
    assert run_mutant(loaded, 1000, verify=True) == oracle["tree"]  # unmutated, the verifier is content
    broken = replace(loaded, unwind=strip_saved_registers(loaded.unwind))
    with pytest.raises(Exception) as info:
        run_mutant(broken, 1000, verify=True)
    assert info.type is not Runaway


# ---------------------------------------------------------------- the CFI itself, against LLVM


def dwarfdump_rows(llvm14, obj: Path) -> set[tuple[int, str, int, tuple[tuple[str, int], ...]]]:
    """(text offset, CFA register, CFA offset, callee-saved saves) of every row llvm-dwarfdump prints."""
    tool = find_tool("llvm-dwarfdump", 14)
    if tool is None:
        skip_missing(LLVM14, "llvm-dwarfdump of LLVM 14 not found (apt-get install llvm-14)")
    out = subprocess.run([str(tool), "--eh-frame", str(obj)], capture_output=True, text=True, timeout=60).stdout
    rows = set()
    for m in re.finditer(r"^\s+0x([0-9a-f]+): CFA=(\w+)\+(\d+):?(.*)$", out, re.M):
        saves = tuple(sorted((r.lower(), int(o)) for r, o in re.findall(r"(\w+)=\[CFA([+-]\d+)\]", m.group(4))
                             if r.lower() in CALLEE_SAVED.values()))
        rows.add((int(m.group(1), 16), m.group(2).lower(), int(m.group(3)), saves))
    return rows


@pytest.mark.parametrize("config", ["csr", "csr-fp"])
def test_unwind_table_matches_llvm_dwarfdump(objects, llvm14, tmp_path, config):
    for name in ("chain", "tree", "gen2000"):
        text = dict(programs())[name]
        obj = compile_program(text, tmp_path, llvm14, name=f"{name}-{config}", llc_flags=CONFIGS[config])
        loaded = load_object(obj)
        text_base = loaded.section_addresses[".text"]
        ours = {
            (row.start - text_base, "rsp" if row.cfa_register == 7 else CALLEE_SAVED[row.cfa_register],
             row.cfa_offset, tuple(sorted((CALLEE_SAVED[r], o) for r, o in row.saved)))
            for fn in loaded.unwind.functions for row in fn.rows
        }
        theirs = dwarfdump_rows(llvm14, obj)
        assert theirs and ours == theirs, f"{name}: only ours {ours - theirs}, only LLVM's {theirs - ours}"


rows_strategy = st.lists(st.integers(0, 200), min_size=1, max_size=12, unique=True).map(sorted)


@settings(max_examples=200)
@given(functions=st.lists(st.tuples(st.integers(1, 64), rows_strategy), min_size=1, max_size=6),
       probe=st.integers(0, 3000))
def test_lookup_is_the_last_row_starting_at_or_below_pc(functions, probe):
    """Law: lookup(pc) is the row of the FDE covering pc that starts last at or below pc."""
    fns, base = [], 0x1000
    for gap, starts in functions:
        start = base + gap
        end = start + starts[-1] + 1
        rows = tuple(UnwindRow(start + s, 7, 8 + s, ()) for s in [0, *starts[1:]])
        fns.append(FunctionUnwind(start, end, rows))
        base = end
    table = UnwindTable(tuple(fns))
    pc = 0x1000 + probe
    covering = [f for f in fns if f.start <= pc < f.end]
    want = max((r for r in covering[0].rows if r.start <= pc), key=lambda r: r.start) if covering else None
    assert table.lookup(pc) == want


def test_format_unwind_table(objects):
    loaded = objects["csr", "tree"]
    text = format_unwind_table(loaded.unwind, loaded.function_names())
    assert re.search(r"^0x[0-9a-f]+ h0_build\+0x[0-9a-f]+: CFA=rsp\+32 rbx=\[CFA-32\]", text, re.M), text
    assert text.count("\n") + 1 == sum(len(f.rows) for f in loaded.unwind.functions)


# ---------------------------------------------------------------- unresolvable Register locations


def test_object_without_cfi_is_a_clear_error(llvm14, tmp_path):
    nounwind = re.sub(r"^(define .*) gc \"statepoint-example\" \{", r'\1 nounwind gc "statepoint-example" {',
                      TREE_PROGRAM, flags=re.M)
    assert nounwind.count("nounwind") == 3
    loaded = load_object(compile_program(nounwind, tmp_path, llvm14, name="nounwind", llc_flags=CSR_FLAGS))
    assert loaded.unwind is None  # llc emits no .eh_frame for nounwind functions
    with pytest.raises(StackWalkError, match=r"h0_build\+0x[0-9a-f]+: GC pointer in \w+, but h0_build has no CFI"):
        Runtime(loaded, stress=True, semispace_size=SEMISPACE).run()


@pytest.fixture(scope="module")
def tree_object_bytes(llvm14, tmp_path_factory) -> tuple[bytes, int, int]:
    """The tree object's bytes with the file offset and size of its .eh_frame."""
    from elftools.elf.elffile import ELFFile

    obj = compile_program(TREE_PROGRAM, tmp_path_factory.mktemp("eh"), llvm14, name="tree", llc_flags=CSR_FLAGS)
    data = obj.read_bytes()
    with open(obj, "rb") as f:
        section = ELFFile(f).get_section_by_name(".eh_frame")
        return data, section["sh_offset"], section["sh_size"]


@settings(max_examples=150)
@given(patch=st.lists(st.tuples(st.integers(0, 4096), st.integers(0, 255)), min_size=1, max_size=6))
def test_corrupt_eh_frame_is_one_clear_error(tree_object_bytes, patch):
    """Law: a damaged .eh_frame either still loads or gives a DecodeError/ObjectLoadError, nothing else."""
    data, offset, size = tree_object_bytes
    damaged = bytearray(data)
    for at, value in patch:
        damaged[offset + at % size] = value
    try:
        loaded = load_object(bytes(damaged))
    except (DecodeError, ObjectLoadError) as e:
        assert ".eh_frame" in str(e) or "relocation" in str(e), e
    else:
        for fn in loaded.unwind.functions if loaded.unwind else ():
            starts = [row.start for row in fn.rows]
            assert starts == sorted(starts) and starts[0] == fn.start


@pytest.mark.parametrize("at, patch", [
    (8, b"\x63"),  # CIE version 99
    (9, b"Q"),  # an augmentation string nobody knows
    (0x18, b"\xf0\xff\xff\x0f"),  # an FDE longer than the section
    (0x18 + 17, b"\x3f\x3f\x3f"),  # opcodes that are not DW_CFA instructions
    (0, b"\xff" * 160),  # all ones: a 64-bit length of 2**64-1
], ids=["version", "augmentation", "length", "opcode", "ones"])
def test_malformed_eh_frame_cases(tree_object_bytes, at, patch):
    data, offset, size = tree_object_bytes
    damaged = bytearray(data)
    damaged[offset + at: offset + at + len(patch)] = patch[: size - at]
    with pytest.raises(DecodeError, match=r"offset 0x[0-9a-f]+: \.eh_frame: "):
        load_object(bytes(damaged))


def test_cfa_disagreeing_with_the_stack_map_is_a_clear_error(objects):
    loaded = objects["csr", "chain"]
    bad = UnwindTable(tuple(
        replace(fn, rows=tuple(replace(r, cfa_offset=r.cfa_offset + 8) for r in fn.rows)) for fn in loaded.unwind.functions
    ))
    with pytest.raises(StackWalkError, match="CFI gives CFA 0x[0-9a-f]+, the stack map's stack size gives"):
        Runtime(replace(loaded, unwind=bad), stress=True, semispace_size=SEMISPACE).run()


def test_unfollowable_register_rule_is_a_clear_error(objects):
    loaded = objects["csr", "chain"]
    bad = UnwindTable(tuple(
        replace(fn, rows=tuple(replace(r, saved=(), unfollowable=tuple(CALLEE_SAVED)) for r in fn.rows))
        for fn in loaded.unwind.functions
    ))
    with pytest.raises(StackWalkError, match="by a rule the walker cannot follow"):
        Runtime(replace(loaded, unwind=bad), stress=True, semispace_size=SEMISPACE).run()


def test_caller_saved_register_in_an_outer_frame_is_a_clear_error(objects):
    loaded = objects["csr", "chain"]
    sm = loaded.stackmap

    def to_rax(loc):
        return replace(loc, dwarf_reg=0) if loc.kind is LocationKind.REGISTER else loc

    records = tuple(replace(r, locations=tuple(to_rax(l) for l in r.locations)) for r in sm.records)
    assert records != sm.records
    with pytest.raises(StackWalkError, match="GC pointer in caller-saved rax across a call in an outer frame"):
        Runtime(replace(loaded, stackmap=replace(sm, records=records)), stress=True, semispace_size=SEMISPACE).run()


# ---------------------------------------------------------------- gctoy's own images are unchanged


def test_gctoy_images_carry_cfi_for_both_lowerings_and_run():
    from gctoy.ir import parse_module
    from gctoy.passes import run as run_pass

    module = parse_module(CHAIN)
    run_pass(module, "rewrite-statepoints-for-gc")
    for regalloc in (True, False):  # registers (GC pointers spilled, as llc's default) and a slot per value
        loaded = load_compiled(module, regalloc=regalloc)
        assert loaded.unwind is not None
        assert {f.start for f in loaded.unwind.functions} == set(loaded.functions.values())
        kinds = {l.kind for r in loaded.stackmap.records for l in r.locations}
        assert LocationKind.REGISTER not in kinds
        result = Runtime(loaded, stress=True, verify=True, semispace_size=SEMISPACE).run()
        calm = Runtime(loaded, gc="none", semispace_size=SEMISPACE).run()
        assert (result.printed, result.result) == (calm.printed, calm.result)
        assert result.stats.collections > 0
