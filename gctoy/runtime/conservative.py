"""What a *conservative* collector would see: every stack word that looks like a heap pointer.

An accurate collector is told by the compiler which slots hold GC pointers (a stack map, a
shadow stack, a GC-info table). A conservative one is told nothing: it scans the whole stack
and treats every word whose value falls inside an allocated object as a possible pointer (an
*ambiguous root*). This module does that scan over a stopped Unicorn machine and compares it
with an accurate root set, so the book can show the three consequences side by side:

* **false retention**: an integer, a dead spill or a stale copy that happens to hold an object's
  address keeps that object alive;
* **pinning**: an object named by an ambiguous root cannot move (the word might be an integer;
  rewriting it would change the program), so a conservative collector cannot be a pure copying
  collector — the objects it finds this way stay where they are;
* **interior pointers**: a word pointing into the middle of an object must keep the object alive,
  so the scan maps each candidate to the object that contains it.

The stack is scanned from the current stack pointer up to the top of the stack (8-byte words,
aligned), which covers every frame, spill slot and saved register of the guest::

    STACK_TOP  +---------------------+
               | @main's frame       |   every aligned word here is
               | ...                 |   looked at; words whose value
               | innermost frame     |   lies in [space base, top) are
    sp ------> +---------------------+   ambiguous roots
"""

from __future__ import annotations

from dataclasses import dataclass

from gctoy.emu.image import STACK_TOP
from gctoy.runtime.heap import WORD, Heap

from .collector import Slot


@dataclass(frozen=True)
class AmbiguousRoot:
    """A stack word whose value points into an allocated object."""

    address: int  # where the word is on the stack
    value: int  # the word
    object: int  # field-0 address of the object the value points into
    interior: bool  # the value is not the object's field-0 address


@dataclass(frozen=True)
class RootComparison:
    """An accurate root set next to the conservative scan of the same stack."""

    exact: tuple[int, ...]  # stack addresses the compiler said hold GC pointers
    ambiguous: tuple[AmbiguousRoot, ...]
    found: tuple[int, ...]  # exact slots the scan also found
    extra: tuple[AmbiguousRoot, ...]  # ambiguous roots the compiler did not name (false retention risk)
    exact_objects: frozenset[int]  # objects reachable directly from the exact roots
    conservative_objects: frozenset[int]  # objects named by any ambiguous root
    pinned: frozenset[int]  # objects a conservative collector must not move

    @property
    def falsely_retained(self) -> frozenset[int]:
        """Objects only the conservative scan keeps as roots."""
        return self.conservative_objects - self.exact_objects


def heap_objects(heap: Heap) -> list[tuple[int, int]]:
    """``(start, end)`` of every object in the current space, start = field-0 address."""
    return heap.index().extents()


def scan_stack(machine, heap: Heap, sp: int | None = None) -> list[AmbiguousRoot]:
    """Every aligned stack word between ``sp`` (default: the current one) and the stack top
    whose value points into an allocated object of the current space."""
    index = heap.index()
    low = (machine.sp if sp is None else sp) & ~(WORD - 1)
    data = machine.read(low, STACK_TOP - low)
    out = []
    for off in range(0, len(data) - WORD + 1, WORD):
        value = int.from_bytes(data[off : off + WORD], "little")
        if not heap.space.base <= value < heap.top:
            continue
        obj = index.containing(value)
        if obj is not None:
            out.append(AmbiguousRoot(low + off, value, obj, value != obj))
    return out


def compare_roots(machine, heap: Heap, exact_slots: list[Slot], sp: int | None = None) -> RootComparison:
    """The conservative scan next to ``exact_slots`` (stack addresses; register slots are skipped,
    because a conservative scan of registers is a separate step the guest does not need here)."""
    ambiguous = tuple(scan_stack(machine, heap, sp))
    exact = tuple(sorted(s for s in exact_slots if isinstance(s, int)))
    by_address = {a.address: a for a in ambiguous}
    index = heap.index()
    exact_objects = set()
    for slot in exact:
        obj = index.containing(machine.read_u64(slot))
        if obj is not None:
            exact_objects.add(obj)
    exact_set = set(exact)
    return RootComparison(
        exact=exact,
        ambiguous=ambiguous,
        found=tuple(s for s in exact if s in by_address),
        extra=tuple(a for a in ambiguous if a.address not in exact_set),
        exact_objects=frozenset(exact_objects),
        conservative_objects=frozenset(a.object for a in ambiguous),
        pinned=frozenset(a.object for a in ambiguous),
    )
