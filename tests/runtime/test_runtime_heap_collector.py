"""The heap, the Cheney collector and the verifier on a bare machine (no compiled code)."""

from __future__ import annotations

import pytest

from gctoy.emu import HEAP_BASE, STACK_BASE, Image, Machine
from gctoy.runtime import POISON_WORD, Collector, Heap, HeapCorruption, HeapError, OutOfMemory, heap_problems, verify_heap

SEMI = 0x1000


def make_heap():
    machine = Machine(Image(b"\xc3"), heap_size=2 * SEMI)
    return machine, Heap(machine, SEMI)


def test_runtime_heap_layout_and_alloc():
    machine, heap = make_heap()
    a = heap.alloc(3, 0b101)
    assert a == HEAP_BASE + 16
    assert heap.header(a) == (3, 0b101)
    assert machine.read_u64(a - 8) == (3 << 1) | 1
    assert heap.fields(a) == [0, 0, 0]
    b = heap.alloc(0, 0)
    assert b == a + 24 + 16
    assert heap.objects() == [a, b]
    with pytest.raises(HeapError):
        heap.alloc(2, 0b100)
    with pytest.raises(OutOfMemory):
        heap.alloc(SEMI // 8, 0)


def test_runtime_collector_copies_reachable_graph():
    machine, heap = make_heap()
    root, dead, leaf = STACK_BASE + 0x100, STACK_BASE + 0x108, STACK_BASE + 0x110
    a = heap.alloc(2, 0b11)
    heap.alloc(4, 0)  # garbage
    b = heap.alloc(1, 0)
    machine.write_u64(b, 1234)
    machine.write_u64(a, b)
    machine.write_u64(a + 8, a)  # a cycle
    machine.write_u64(root, a)
    machine.write_u64(leaf, b + 8)  # derived: one past b's only field
    machine.write_u64(dead, 77)  # not a root: left alone
    collector = Collector(heap)
    done = collector.collect([root], [(leaf, root)])
    assert done.objects_copied == 2
    new_a = machine.read_u64(root)
    assert new_a != a and new_a in [o for o in heap.objects()]
    new_b = machine.read_u64(new_a)
    assert machine.read_u64(new_a + 8) == new_a
    assert machine.read_u64(new_b) == 1234
    # the derived slot's base is a, so it keeps its offset from a
    assert machine.read_u64(leaf) == new_a + (b + 8 - a)
    assert machine.read_u64(dead) == 77
    assert heap.is_poisoned(heap.other, done.from_space[1])
    assert machine.read_u64(a) == POISON_WORD
    assert verify_heap(heap, [root]) == 2
    # a second collection flips back and moves everything again
    collector.collect([root])
    assert machine.read_u64(root) == a  # space 0 again, same order
    assert collector.stats.collections == 2 and collector.stats.objects_copied == 4


def test_runtime_collector_shared_object_copied_once():
    machine, heap = make_heap()
    s1, s2 = STACK_BASE + 0x200, STACK_BASE + 0x208
    shared = heap.alloc(1, 0)
    p = heap.alloc(2, 0b11)
    machine.write_u64(p, shared)
    machine.write_u64(p + 8, shared)
    machine.write_u64(s1, p)
    machine.write_u64(s2, shared)
    done = Collector(heap).collect([s1, s2])
    assert done.objects_copied == 2
    new_shared = machine.read_u64(s2)
    assert machine.read_u64(machine.read_u64(s1)) == new_shared == machine.read_u64(machine.read_u64(s1) + 8)


def test_runtime_verifier_reports_bad_pointers():
    machine, heap = make_heap()
    slot = STACK_BASE + 0x300
    a = heap.alloc(2, 0b01)
    machine.write_u64(a, a + 8)  # an interior pointer in a pointer field
    machine.write_u64(slot, HEAP_BASE + SEMI + 16)  # a pointer into the other space
    problems = heap_problems(heap, [slot])
    assert len(problems) == 2
    with pytest.raises(HeapCorruption):
        verify_heap(heap, [slot])
    machine.write_u64(a, 0)
    machine.write_u64(slot, a)
    assert heap_problems(heap, [slot]) == []
    machine.write_u64(a - 8, 999 << 1 | 1)  # a header that runs past the allocation pointer
    assert any("runs past" in p for p in heap_problems(heap))


def test_runtime_collector_evacuate_hook_replaces_forward_and_scan():
    """Collector.evacuate does steps 2-3; the collector still rewrites the roots, rebases the
    derived slots, poisons from-space and swaps the spaces."""
    machine, heap = make_heap()
    root, derived = STACK_BASE + 0x100, STACK_BASE + 0x108
    a = heap.alloc(2, 0)
    machine.write_u64(a + 8, 99)
    machine.write_u64(root, a)
    machine.write_u64(derived, a + 8)
    calls = []

    def evacuate(old, new, from_space, to_space, values):
        calls.append((from_space, to_space.base, list(values)))
        start = values[0] - 16 - from_space[0]
        new.extend(old[start:start + 32])  # the one object: two header words, two fields
        return [to_space.base + 16], 1

    collector = Collector(heap, evacuate=evacuate)
    done = collector.collect([root], [(derived, root)])
    assert calls == [((HEAP_BASE, HEAP_BASE + 32), HEAP_BASE + SEMI, [a])]
    assert done.objects_copied == 1 and collector.stats.objects_copied == 1
    assert machine.read_u64(root) == HEAP_BASE + SEMI + 16
    assert machine.read_u64(derived) == HEAP_BASE + SEMI + 24
    assert machine.read_u64(HEAP_BASE + SEMI + 24) == 99
    assert heap.is_poisoned(heap.other, done.from_space[1])
    assert verify_heap(heap, [root]) == 1
