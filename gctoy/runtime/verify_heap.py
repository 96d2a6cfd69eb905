"""The heap verifier: every header sane, every pointer field and root at an object in the current space."""

from __future__ import annotations

import struct
from collections.abc import Sequence

from gctoy.runtime.collector import Slot, read_slot
from gctoy.runtime.heap import HEADER_SIZE, MAX_FIELDS, OBJECT_TAG, WORD, Heap, HeapError, object_size


class HeapCorruption(HeapError):
    """The verifier found problems; ``problems`` lists them all."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        super().__init__(problems[0] + more)


def heap_problems(heap: Heap, roots: Sequence[Slot] = ()) -> list[str]:
    """Everything wrong with the current space and the given root slots (empty if clean)."""
    machine, space = heap.machine, heap.space
    problems: list[str] = []
    data = machine.read(space.base, heap.top - space.base)
    starts: set[int] = set()
    pointer_fields: list[tuple[int, int]] = []  # (field address, value)
    cursor = 0
    while cursor < len(data):
        if cursor + HEADER_SIZE > len(data):
            problems.append(f"truncated header at {space.base + cursor:#x}")
            break
        mask, word = struct.unpack_from("<QQ", data, cursor)
        obj = space.base + cursor + HEADER_SIZE
        if not word & OBJECT_TAG:
            problems.append(f"object {obj:#x}: forwarding word {word:#x} in the current space")
            break
        n = word >> 1
        if n > MAX_FIELDS or cursor + object_size(n) > len(data):
            problems.append(f"object {obj:#x}: field count {n} runs past the allocation pointer")
            break
        if mask >> min(n, 64):
            problems.append(f"object {obj:#x}: pointer mask {mask:#x} names fields beyond {n}")
        starts.add(obj)
        for i in range(min(n, 64)):
            if mask >> i & 1:
                (value,) = struct.unpack_from("<Q", data, cursor + HEADER_SIZE + WORD * i)
                pointer_fields.append((obj + WORD * i, value))
        cursor += object_size(n)
    for at, value in pointer_fields:
        if value and value not in starts:
            problems.append(f"field at {at:#x} holds {value:#x}, not an object in the current space")
    for slot in roots:
        value = read_slot(machine, slot)
        if value and value not in starts:
            where = slot if isinstance(slot, str) else f"{slot:#x}"
            problems.append(f"root slot {where} holds {value:#x}, not an object in the current space")
    return problems


def verify_heap(heap: Heap, roots: Sequence[Slot] = ()) -> int:
    """Raise HeapCorruption unless the heap is clean; returns the number of objects."""
    problems = heap_problems(heap, roots)
    if problems:
        raise HeapCorruption(problems)
    return len(heap.objects())
