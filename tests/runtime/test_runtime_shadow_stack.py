"""The shadow-stack runtime on hand-written gcroot programs: the chain, stress, broken frontends."""

from __future__ import annotations

import struct
import subprocess
import sys
from pathlib import Path

import pytest

from gctoy.ir import parse_module
from gctoy.runtime.heap import POISON_WORD, HeapError
from gctoy.runtime.run import Runtime, StackMapRoots, load_compiled, run_module
from gctoy.runtime.shadowstack import (
    ShadowStackRoots,
    format_chain,
    has_gcroots,
    lower_for_shadow_stack,
    shadow_stack_chain,
    visit_gc_roots,
)
from gctoy.runtime.stackwalk import StackWalkError

sys.path.insert(0, str(Path(__file__).resolve().parent))

from shadow_stack_llvm import llvm_shadow_stack_object  # noqa: E402

P = "i8 addrspace(1)*"
PP = "i8 addrspace(1)**"

# A frontend's output for a shadow stack: every GC pointer that must survive a call is kept
# in a gcroot slot and loaded back after it. @make_pair's roots are %left (no metadata) and
# %right (metadata @pair_meta): the FrameMap lists %right first.
PAIR = f"""
declare {P} @gc_alloc(i64, i64)
declare void @gc_collect()
declare void @print_i64(i64)
declare void @llvm.gcroot(i8**, i8*)

@pair_meta = constant i64 2

define {P} @make_pair(i64 %a, i64 %b) gc "shadow-stack" {{
entry:
  %left = alloca {P}
  %right = alloca {P}
  %left.slot = bitcast {PP} %left to i8**
  call void @llvm.gcroot(i8** %left.slot, i8* null)
  %right.slot = bitcast {PP} %right to i8**
  call void @llvm.gcroot(i8** %right.slot, i8* bitcast (i64* @pair_meta to i8*))
  %l = call {P} @gc_alloc(i64 1, i64 0)
  store {P} %l, {PP} %left
  %lf = bitcast {P} %l to i64 addrspace(1)*
  store i64 %a, i64 addrspace(1)* %lf
  %r = call {P} @gc_alloc(i64 1, i64 0)
  store {P} %r, {PP} %right
  %rf = bitcast {P} %r to i64 addrspace(1)*
  store i64 %b, i64 addrspace(1)* %rf
  call void @gc_collect()
  %l1 = load {P}, {PP} %left
  %l1f = bitcast {P} %l1 to i64 addrspace(1)*
  %l1v = load i64, i64 addrspace(1)* %l1f
  call void @print_i64(i64 %l1v)
  %p = call {P} @gc_alloc(i64 2, i64 3)
  %l2 = load {P}, {PP} %left
  %r2 = load {P}, {PP} %right
  %pf = bitcast {P} %p to {P} addrspace(1)*
  store {P} %l2, {P} addrspace(1)* %pf
  %pf1 = getelementptr {P}, {P} addrspace(1)* %pf, i64 1
  store {P} %r2, {P} addrspace(1)* %pf1
  ret {P} %p
}}

define i64 @main() gc "shadow-stack" {{
entry:
  %pair = alloca {P}
  %pair.slot = bitcast {PP} %pair to i8**
  call void @llvm.gcroot(i8** %pair.slot, i8* null)
  %garbage = call {P} @gc_alloc(i64 4, i64 0)
  %p = call {P} @make_pair(i64 7, i64 35)
  store {P} %p, {PP} %pair
  %junk = call {P} @gc_alloc(i64 4, i64 0)
  call void @gc_collect()
  %p2 = load {P}, {PP} %pair
  %pf = bitcast {P} %p2 to {P} addrspace(1)*
  %l = load {P}, {P} addrspace(1)* %pf
  %pf1 = getelementptr {P}, {P} addrspace(1)* %pf, i64 1
  %r = load {P}, {P} addrspace(1)* %pf1
  %lf = bitcast {P} %l to i64 addrspace(1)*
  %lv = load i64, i64 addrspace(1)* %lf
  %rf = bitcast {P} %r to i64 addrspace(1)*
  %rv = load i64, i64 addrspace(1)* %rf
  call void @print_i64(i64 %lv)
  call void @print_i64(i64 %rv)
  %s = add i64 %lv, %rv
  ret i64 %s
}}
"""

EXPECTED = ([7, 7, 35], 42)


def lowered(text: str = PAIR, nounwind: bool = False):
    if nounwind:
        text = text.replace('gc "shadow-stack" {', 'nounwind gc "shadow-stack" {')
    module = parse_module(text)
    assert has_gcroots(module)
    lower_for_shadow_stack(module, convert_statepoints=False)
    assert not has_gcroots(module)
    return module


def runtime(text: str = PAIR, **kw) -> Runtime:
    return Runtime(load_compiled(lowered(text)), **kw)


@pytest.mark.parametrize("nounwind", [False, True], ids=["may-throw", "nounwind"])
def test_runs_the_same_with_and_without_collecting(nounwind):
    module_text = PAIR.replace('gc "shadow-stack" {', 'nounwind gc "shadow-stack" {') if nounwind else PAIR
    calm = run_module(lowered(module_text), gc="none")
    moving = run_module(lowered(module_text), verify=True)
    assert (calm.printed, calm.result) == EXPECTED
    assert (moving.printed, moving.result) == EXPECTED
    assert calm.stats.collections == 0
    assert moving.stats.collections == 2 and moving.stats.verified == 2
    assert moving.stats.gc.objects_copied > 0 and moving.stats.gc.slots_moved > 0


def test_the_runtime_picks_the_shadow_stack_design():
    rt = runtime()
    assert isinstance(rt.roots, ShadowStackRoots) and rt.roots.design == "shadow-stack"
    assert rt.sites is None
    assert rt.roots.head == rt.loaded.image.address_of("llvm_gc_root_chain")


def test_stress_collects_at_every_runtime_call():
    rt = runtime(stress=True, verify=True, semispace_size=4096)
    result = rt.run()
    assert (result.printed, result.result) == EXPECTED
    # 5 allocations, 2 gc_collect, 3 print_i64: each one collects once
    assert result.stats.runtime_calls == 10
    assert result.stats.collections == 10 == result.stats.verified
    assert rt.machine.read_u64(rt.roots.head) == 0  # every frame popped its entry


def test_chain_contents_at_the_first_collection():
    seen = []

    def grab(rt, done):
        if not seen:
            chain = rt.roots.chain(rt.machine)
            fields = {v: rt.machine.read_u64(v) for e in chain for v in e.values if v}
            seen.append((chain, done, set(rt.heap.objects()), fields))

    rt = runtime(on_collect=grab)
    rt.run()
    chain, done, objects, fields = seen[0]
    inner, outer = chain
    image = rt.loaded.image
    assert [e.function for e in chain] == ["make_pair", "main"]
    assert rt.machine.read_u64(rt.roots.head) == 0
    # the inner entry links to the outer one, which ends the chain; the stack grows down
    assert inner.next == outer.address and outer.next == 0 and inner.address < outer.address
    assert inner.frame_map == image.address_of("__gc_make_pair")
    assert (inner.num_roots, inner.num_meta) == (2, 1)
    assert inner.meta == (image.address_of("pair_meta"),)
    assert (outer.num_roots, outer.num_meta, outer.meta) == (1, 0, ())
    # roots follow the two header words
    assert inner.roots == (inner.address + 16, inner.address + 24)
    # root 0 is %right (metadata first) holding 35, root 1 is %left holding 7; main's not stored yet
    right, left = inner.values
    assert right in objects and left in objects
    assert fields[right] == 35 and fields[left] == 7
    assert outer.values == (0,)
    # the collector was handed exactly these slots, old and new values logged
    assert [slot for slot, _, _ in done.roots] == [*inner.roots, *outer.roots]
    assert [new for _, _, new in done.roots] == [right, left, 0]


def test_visit_gc_roots_passes_meta_first_then_null():
    visits = []

    def grab(rt, done):
        if not visits:
            visit_gc_roots(rt.machine, rt.roots.head, lambda root, meta: visits.append((root, meta)))

    rt = runtime(on_collect=grab)
    rt.run()
    chain_meta = rt.loaded.image.address_of("pair_meta")
    assert [meta for _, meta in visits] == [chain_meta, 0, 0]
    assert len({root for root, _ in visits}) == 3


def test_format_chain_describes_each_entry():
    text = []

    def grab(rt, done):
        if not text:
            text.append(format_chain(rt.roots.chain(rt.machine)))

    runtime(on_collect=grab).run()
    lines = text[0].splitlines()
    assert lines[0].startswith("#0 make_pair: StackEntry 0x") and "{NumRoots 2, NumMeta 1}" in lines[0]
    assert lines[3].startswith("#1 main:") and "{NumRoots 1, NumMeta 0}" in lines[3]
    assert len(lines) == 5 and lines[2].strip().startswith("root 1 at ")


# ---------------------------------------------------------------- broken frontends


def test_a_pointer_kept_only_in_a_register_reads_the_poison():
    """@make_pair forgets a reload: it reads through %l after the collection, not through %left."""
    broken = PAIR.replace(f"%l1 = load {P}, {PP} %left", f"%l1 = bitcast {P} %l to {P}")
    calm = run_module(lowered(broken), gc="none")
    assert (calm.printed, calm.result) == EXPECTED  # without a collector nobody notices
    moving = run_module(lowered(broken))  # %l's object was evacuated; its old copy is poison
    assert moving.printed == [POISON_WORD - (1 << 64), 7, 35]


def test_a_pointer_kept_only_in_a_register_is_caught_by_the_heap_verifier():
    """The stale %l is stored into the pair; the next collection's verifier finds it."""
    broken = PAIR.replace(f"%l2 = load {P}, {PP} %left", f"%l2 = bitcast {P} %l to {P}")
    assert run_module(lowered(broken), gc="none").printed == EXPECTED[0]
    with pytest.raises(HeapError, match="not an object in the current space"):
        run_module(lowered(broken), verify=True)


def test_a_root_stored_only_after_the_call_is_caught():
    """@make_pair stores %r into %right after @gc_collect instead of before: the collection
    sees a null root, %r's object is left behind in the poisoned from-space."""
    store = f"  store {P} %r, {PP} %right\n"
    broken = PAIR.replace(store, "").replace("  call void @gc_collect()\n", "  call void @gc_collect()\n" + store, 1)
    assert broken.count(store) == 1 and broken != PAIR
    assert run_module(lowered(broken), gc="none").printed == EXPECTED[0]
    with pytest.raises(HeapError, match="not an object in the current space"):
        run_module(lowered(broken), verify=True)
    assert run_module(lowered(broken)).printed == [7, 7, POISON_WORD - (1 << 64)]


def test_a_corrupt_chain_is_reported():
    stops = []

    def corrupt(rt, done):
        if not stops:  # the innermost entry's Next: its pop puts it into the head
            stops.append(1)
            rt.machine.write_u64(rt.machine.read_u64(rt.roots.head), 0x1234)

    with pytest.raises(StackWalkError, match="not an aligned address on the guest stack"):
        runtime(on_collect=corrupt).run()


def test_a_looping_chain_is_reported():
    rt = runtime()
    rt.machine.enter("main")
    rt.machine.run(until=rt.machine.native_address("gc_collect"))
    entry = rt.machine.read_u64(rt.roots.head)
    rt.machine.write_u64(entry, entry)  # Next points back at itself
    with pytest.raises(StackWalkError, match="loops"):
        shadow_stack_chain(rt.machine, rt.roots.head)
    with pytest.raises(StackWalkError, match="loops"):
        rt.collect()


def test_a_frame_map_with_more_meta_than_roots_is_reported():
    rt = runtime()
    rt.machine.enter("main")
    rt.machine.run(until=rt.machine.native_address("gc_collect"))
    fmap = rt.loaded.image.address_of("__gc_make_pair")
    rt.machine.write(fmap, struct.pack("<ii", 1, 2))
    with pytest.raises(StackWalkError, match="NumRoots 1, NumMeta 2"):
        rt.roots.find(rt.machine)


def test_statepoint_objects_still_use_the_stack_map():
    from gctoy.passes import run

    from gctoy.ir.instructions import Alloca
    from gctoy.passes.mem2reg import promote

    # the same program for the abstract machine: no gcroot, the slots promoted to SSA values
    text = PAIR.replace('gc "shadow-stack"', 'gc "statepoint-example"')
    m = parse_module("\n".join(line for line in text.splitlines() if "gcroot" not in line and ".slot" not in line))
    for fn in m.definitions():
        promote(fn, [i for i in fn.instructions() if isinstance(i, Alloca)])
    run(m, "rewrite-statepoints-for-gc")
    rt = Runtime(load_compiled(m), verify=True)
    assert isinstance(rt.roots, StackMapRoots) and rt.roots.design == "statepoint"
    result = rt.run()
    assert (result.printed, result.result) == EXPECTED


# ---------------------------------------------------------------- the command line


def test_cli_runs_a_shadow_stack_module(tmp_path):
    src = tmp_path / "pair.ll"
    src.write_text(PAIR, encoding="utf-8")
    r = subprocess.run([sys.executable, "-m", "gctoy.cli", "run", str(src), "--stress", "--verify-heap"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["7", "7", "35", "result: 42"]
    assert "collections: 10" in r.stderr


def test_cli_design_option_runs_an_abstract_machine_program_on_the_shadow_stack(tmp_path):
    src = tmp_path / "am.ll"
    src.write_text(f"""
declare {P} @gc_alloc(i64, i64)
declare void @gc_collect()
declare void @print_i64(i64)
define i64 @main() gc "statepoint-example" {{
entry:
  %a = call {P} @gc_alloc(i64 2, i64 0)
  %f = getelementptr i8, {P} %a, i64 8
  %fi = bitcast {P} %f to i64 addrspace(1)*
  store i64 5, i64 addrspace(1)* %fi
  call void @gc_collect()
  %v = load i64, i64 addrspace(1)* %fi
  call void @print_i64(i64 %v)
  ret i64 %v
}}
""", encoding="utf-8")
    outs = {}
    for design in ("statepoint", "shadow-stack"):
        r = subprocess.run([sys.executable, "-m", "gctoy.cli", "run", str(src), "--stress", "--verify-heap",
                            "--trace", "--design", design], capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        outs[design] = r
    assert outs["statepoint"].stdout == outs["shadow-stack"].stdout == "5\nresult: 5\n"
    # the shadow stack: main's one root, rewritten at each collection after the allocation
    assert "collection 3 at return address" in outs["shadow-stack"].stderr
    assert "1 root slots (1 moved), 0 derived" in outs["shadow-stack"].stderr


# ---------------------------------------------------------------- LLVM's own lowering and code


def test_llvm_lowered_and_compiled_shadow_stack_runs_under_the_runtime(llvm14, tmp_path):
    from gctoy.runtime.elfload import load_object
    from gctoy.runtime.shadowstack import elf_data_symbols

    obj = llvm_shadow_stack_object(PAIR.replace('gc "shadow-stack" {', 'nounwind gc "shadow-stack" {'),
                                   llvm14, tmp_path)
    loaded = load_object(obj)
    symbols = elf_data_symbols(obj, loaded)
    assert {"llvm_gc_root_chain", "__gc_make_pair", "__gc_main", "pair_meta"} <= set(symbols)
    chains = []
    rt = Runtime(loaded, stress=True, verify=True, semispace_size=4096,
                 roots=ShadowStackRoots.for_symbols(symbols),
                 on_collect=lambda rt, done: chains.append(rt.roots.chain(rt.machine)))
    result = rt.run()
    assert (result.printed, result.result) == EXPECTED
    assert result.stats.collections == 10 == result.stats.verified
    # at @make_pair's gc_collect (3rd runtime call): LLVM's frame map and entry, read by gctoy
    inner, outer = chains[3]
    assert [inner.function, outer.function] == ["make_pair", "main"]
    assert (inner.num_roots, inner.num_meta, inner.meta) == (2, 1, (symbols["pair_meta"],))
    assert inner.next == outer.address and outer.next == 0
    assert inner.roots == (inner.address + 16, inner.address + 24)


def test_cli_runs_an_llvm_compiled_shadow_stack_object(llvm14, tmp_path):
    obj = llvm_shadow_stack_object(PAIR.replace('gc "shadow-stack" {', 'nounwind gc "shadow-stack" {'),
                                   llvm14, tmp_path)
    r = subprocess.run([sys.executable, "-m", "gctoy.cli", "run", str(obj), "--stress", "--verify-heap"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == ["7", "7", "35", "result: 42"]
    assert "collections: 10" in r.stderr
