"""Snapshots and pictures of the shadow stack during collections (gctoy.viz.shadowstack)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gctoy.errors import GCToyError
from gctoy.ir import parse_module
from gctoy.runtime.collector import Collection
from gctoy.runtime.run import Runtime, load_compiled
from gctoy.runtime.shadowstack import (
    ENTRY_HEADER,
    MAP_HEADER,
    ShadowStackEntry,
    lower_for_shadow_stack,
    visit_gc_roots,
)
from gctoy.viz.shadowstack import (
    FRAME_MAP,
    MAX_OBJECTS,
    STACK_ENTRY,
    ChainPage,
    chain_page_html,
    chain_pages,
    chain_text,
    objects_text,
    record_snapshots,
    snapshot,
    struct_text,
)

P = "i8 addrspace(1)*"
PP = "i8 addrspace(1)**"

# @cons(v, tail) keeps %tail in a root (with metadata) across a collection, then allocates the
# cell {value, next}; @main roots the list it builds and sums it: 3 + 2 + 1.
LIST = f"""
declare {P} @gc_alloc(i64, i64)
declare void @gc_collect()
declare void @print_i64(i64)
declare void @llvm.gcroot(i8**, i8*)

@cell_meta = constant i64 2

define {P} @cons(i64 %v, {P} %tail) gc "shadow-stack" {{
entry:
  %t = alloca {P}
  %t.slot = bitcast {PP} %t to i8**
  call void @llvm.gcroot(i8** %t.slot, i8* bitcast (i64* @cell_meta to i8*))
  store {P} %tail, {PP} %t
  call void @gc_collect()
  %c = call {P} @gc_alloc(i64 2, i64 2)
  %cv = bitcast {P} %c to i64 addrspace(1)*
  store i64 %v, i64 addrspace(1)* %cv
  %t1 = load {P}, {PP} %t
  %cn = getelementptr i8, {P} %c, i64 8
  %cnp = bitcast {P} %cn to {P} addrspace(1)*
  store {P} %t1, {P} addrspace(1)* %cnp
  ret {P} %c
}}

define i64 @main() gc "shadow-stack" {{
entry:
  %list = alloca {P}
  %list.slot = bitcast {PP} %list to i8**
  call void @llvm.gcroot(i8** %list.slot, i8* null)
  %junk = call {P} @gc_alloc(i64 3, i64 0)
  %a = call {P} @cons(i64 1, {P} null)
  store {P} %a, {PP} %list
  %l1 = load {P}, {PP} %list
  %b = call {P} @cons(i64 2, {P} %l1)
  store {P} %b, {PP} %list
  %l2 = load {P}, {PP} %list
  %c = call {P} @cons(i64 3, {P} %l2)
  store {P} %c, {PP} %list
  br label %loop
loop:
  %p = phi {P} [ %c, %entry ], [ %nx, %body ]
  %s = phi i64 [ 0, %entry ], [ %s1, %body ]
  %z = icmp eq {P} %p, null
  br i1 %z, label %done, label %body
body:
  %pv = bitcast {P} %p to i64 addrspace(1)*
  %v = load i64, i64 addrspace(1)* %pv
  %s1 = add i64 %s, %v
  %pn = getelementptr i8, {P} %p, i64 8
  %pnp = bitcast {P} %pn to {P} addrspace(1)*
  %nx = load {P}, {P} addrspace(1)* %pnp
  br label %loop
done:
  call void @print_i64(i64 %s)
  ret i64 %s
}}
"""


def list_runtime(**kw) -> Runtime:
    """The LIST program lowered for the shadow stack, ready to run under the moving collector."""
    return Runtime(load_compiled(lower_for_shadow_stack(parse_module(LIST), convert_statepoints=False)), **kw)


def recorded_run():
    """(runtime, snapshots, roots visited at each collection) of one verified run of LIST."""
    rt = list_runtime(verify=True)
    visits: list[list[tuple[int, int]]] = []
    rt.on_collect = lambda r, done: visits.append([])
    shots = record_snapshots(rt)
    result = rt.run()
    assert (result.printed, result.result) == ([6], 6)
    return rt, shots, visits


@pytest.fixture(scope="module")
def run():
    return recorded_run()


def symbols(rt) -> dict[int, str]:
    return {a: n for n, a in rt.loaded.image.symbols.items()}


def test_the_seed_structures_match_the_runtime_reader():
    assert [f.name for f in FRAME_MAP] == ["NumRoots", "NumMeta", "Meta[]"]
    assert [f.name for f in STACK_ENTRY] == ["Next", "Map", "Roots[]"]
    assert FRAME_MAP[-1].offset == MAP_HEADER and STACK_ENTRY[-1].offset == ENTRY_HEADER
    for fields in (FRAME_MAP, STACK_ENTRY):  # contiguous: each field starts where the last ended
        for a, b in zip(fields, fields[1:]):
            assert a.offset + a.size == b.offset
        assert fields[-1].size is None
    text = struct_text(STACK_ENTRY)
    assert text.splitlines()[0] == "struct StackEntry {" and text.endswith("};")
    assert "+16  Roots[]" in text and "(to the end)" in text


def test_one_snapshot_per_collection_and_the_earlier_hook_still_runs(run):
    rt, shots, visits = run
    assert len(shots) == len(rt.collections) == 3 == len(visits)
    assert [s.collection for s in shots] == [1, 2, 3]
    for shot in shots:
        assert [e.function for e in shot.entries] == ["cons", "main"]
        inner, outer = shot.entries
        assert inner.next == outer.address and outer.next == 0
        assert (inner.num_roots, inner.num_meta, outer.num_roots, outer.num_meta) == (1, 1, 1, 0)
        assert inner.meta == (rt.loaded.image.address_of("cell_meta"),)
        assert shot.head == rt.roots.head


def test_roots_before_and_after(run):
    rt, shots, _ = run
    first, second, third = shots
    # the first @cons call: no list yet, nothing to move
    assert [(r.before, r.after, r.moved) for r in first.roots] == [(0, 0, False), (0, 0, False)]
    assert first.objects == () and first.objects_copied == 0
    # later: both roots held the same cell in from-space and now hold its copy in to-space
    for shot in (second, third):
        old_space, new_space = shot.from_space, shot.to_space
        for r in shot.roots:
            assert r.moved and old_space[0] <= r.before < old_space[1]
            assert new_space[0] <= r.after < new_space[1]
        assert len({r.after for r in shot.roots}) == 1
    assert third.objects_copied == 2 and [o.fields[0] for o in third.objects] == [2, 1]
    head = third.objects[0]
    assert head.named_by == ("cons.root0", "main.root0") and third.objects[1].named_by == ()
    assert head.is_pointer_field(1) and not head.is_pointer_field(0)
    assert head.fields[1] == third.objects[1].address  # the cell's next field was forwarded too


def test_snapshot_roots_are_in_visit_gc_roots_order():
    rt = list_runtime()
    orders = []
    rt.on_collect = lambda r, done: orders.append(visit_gc_roots(r.machine, r.roots.head))
    shots = record_snapshots(rt)
    rt.run()
    assert [[r.slot for r in s.roots] for s in shots] == orders


def test_chain_text_draws_the_chain(run):
    rt, shots, _ = run
    text = chain_text(shots[1], symbols(rt))
    lines = text.splitlines()
    assert lines[0] == f"collection 2: @llvm_gc_root_chain ({rt.roots.head:#x}) = {shots[1].entries[0].address:#x}"
    assert lines[3].startswith("#0 cons: StackEntry ") and "{NumRoots 1, NumMeta 1}" in lines[3]
    assert "meta @cell_meta" in lines[4] and " -> " in lines[4]
    assert "meta null" in lines[8]
    assert lines[-1] == "    null" and text.count("| Next") == 2
    assert "(unchanged)" in chain_text(shots[0])


def test_objects_text_marks_pointer_fields(run):
    _, shots, _ = run
    lines = objects_text(shots[2]).splitlines()
    assert len(lines) == 2
    assert lines[0].endswith("<- cons.root0, main.root0") and ", *0x" in lines[0] and lines[0].split("[")[1][0] == "2"
    assert lines[1].endswith("[1, *0x0]")


def test_pages_walk_every_entry_of_every_collection(run):
    rt, shots, _ = run
    pages = chain_pages(shots)
    assert pages == [ChainPage(s, d) for s in range(3) for d in range(2)]
    assert pages[3].title(shots) == "collection 2, entry #1 (main)"
    html = chain_page_html(shots, pages[4], symbols(rt))
    assert "collection 3, entry #0 (cons)" in html and "the walk is here" in html
    assert html.index("the walk is here") < html.index("#1 main")  # the focus is on the inner entry
    assert "@cell_meta" in html and html.count("<table") == 3  # two entries and the objects
    focus_on_main = chain_page_html(shots, pages[5])
    assert focus_on_main.index("the walk is here") > focus_on_main.index("#1 main")


def test_a_runtime_without_a_shadow_stack_is_refused():
    from gctoy.passes import run as run_pass

    module = parse_module(f"""
declare {P} @gc_alloc(i64, i64)
define i64 @main() gc "statepoint-example" {{
entry:
  %a = call {P} @gc_alloc(i64 1, i64 0)
  ret i64 0
}}
""")
    run_pass(module, "rewrite-statepoints-for-gc")
    with pytest.raises(GCToyError, match="shadow stack"):
        record_snapshots(Runtime(load_compiled(module)))


# ---------------------------------------------------------------- synthetic chains (no emulator)


@dataclass
class FakeHeap:
    """Just what snapshot() asks of a heap: object addresses, headers and fields."""

    cells: dict[int, tuple[int, tuple[int, ...]]]  # address -> (ptrmask, fields)

    def objects(self) -> list[int]:
        return sorted(self.cells)

    def header(self, obj: int) -> tuple[int, int]:
        return len(self.cells[obj][1]), self.cells[obj][0]

    def fields(self, obj: int) -> list[int]:
        return list(self.cells[obj][1])


chains = st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4)), max_size=5)


def synthetic(shape: list[tuple[int, int]], moved: set[int]):
    """A chain with entries of (NumRoots, NumMeta <= NumRoots) and root values; roots in ``moved`` change."""
    entries, log, base, value = [], [], 0x8FF000, 0x1000
    for depth, (n, m) in enumerate(shape):
        m = min(m, n)
        address = base - 0x100 * depth
        roots = tuple(address + 16 + 8 * i for i in range(n))
        values = []
        for slot in roots:
            value += 0x20
            new = value + 0x100000 if slot in moved or len(log) in moved else value
            values.append(new)
            log.append((slot, value, new))
        nxt = base - 0x100 * (depth + 1) if depth + 1 < len(shape) else 0
        entries.append(ShadowStackEntry(f"f{depth}", address, nxt, 0x600100 + 0x40 * depth, n, m,
                                        tuple(0x600800 + i for i in range(m)), roots, tuple(values)))
    done = Collection(1, tuple(log), (), 0, 0, (0x10000000, 0x10000100), (0x10100000, 0x10100100))
    return entries, done


@settings(max_examples=60, deadline=None)
@given(chains, st.sets(st.integers(0, 20)))
def test_snapshot_laws_on_synthetic_chains(shape, moved):
    entries, done = synthetic(shape, moved)
    shot = snapshot(entries, done, FakeHeap({}), 0x600008, 1)
    # one view per root, in chain order, with the collector's old and the slot's new value
    assert [(r.slot, r.before, r.after) for r in shot.roots] == [t for t in done.roots]
    assert all(r.moved == (r.before != r.after) for r in shot.roots)
    for e, view in zip(entries, shot.entries):
        assert [r.meta for r in view.roots] == [e.root_meta(i) for i in range(e.num_roots)]
        assert all(r.meta for r in view.roots[:e.num_meta]) and not any(r.meta for r in view.roots[e.num_meta:])
    pages = chain_pages([shot])
    assert len(pages) == max(1, len(entries))
    for page in pages:  # every page renders, and says where the walk is when there is an entry
        html = chain_page_html([shot], page)
        assert ("the walk is here" in html) == bool(entries)
    assert chain_text(shot).count("| Next") == len(entries)


def test_long_heaps_are_cut_and_counted():
    heap = FakeHeap({0x10000010 + 0x20 * i: (0, (i,)) for i in range(MAX_OBJECTS + 5)})
    entries, done = synthetic([(1, 0)], set())
    shot = snapshot(entries, done, heap, 0x600008, 1)
    assert len(shot.objects) == MAX_OBJECTS and shot.more_objects == 5
    assert objects_text(shot).endswith("... and 5 more")
    assert "... and 5 more objects" in chain_page_html([shot], chain_pages([shot])[0])


def test_names_are_escaped_in_html():
    entries, done = synthetic([(1, 1)], set())
    evil = [ShadowStackEntry("<b>x</b>", *[getattr(entries[0], f) for f in
                                           ("address", "next", "frame_map", "num_roots", "num_meta", "meta",
                                            "roots", "values")])]
    html = chain_page_html([snapshot(evil, done, FakeHeap({}), 0x600008, 1)], ChainPage(0, 0))
    assert "<b>x</b>" not in html and "&lt;b&gt;x&lt;/b&gt;" in html
