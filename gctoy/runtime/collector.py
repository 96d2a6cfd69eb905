"""A Cheney semispace copying collector over the guest heap.

Roots are *slots*: an int is the address of a stack word, a str names a register of the
machine (for values the stack map records as Register in the innermost frame). A derived
slot is paired with the slot of its base; after the bases move it becomes
``new base + (old derived - old base)``.

One collection:

1. read every root and derived slot (old values, before anything moves);
2. forward each distinct base: copy the object to the end of to-space, leave a forwarding
   address in its from-space header word;
3. Cheney scan: walk to-space from its base, forwarding every field the pointer mask marks,
   until the scan pointer meets the allocation pointer;
4. write the new bases back to their slots and rebase each derived slot;
5. poison the used part of from-space, swap the spaces.

From-space is read into one host buffer and to-space built in another, so a collection
costs two guest memory reads/writes however many objects it copies.

Steps 2 and 3 can be replaced: a :class:`Collector` given an ``evacuate`` function calls it
with the two buffers instead of running its own forward and scan (``gctoy.labs.cheney`` plugs a
student's ``forward`` and ``scan`` in this way); everything else, from reading the roots to
poisoning from-space, stays the collector's.
"""

from __future__ import annotations

import struct
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from gctoy.runtime.heap import HEADER_SIZE, OBJECT_TAG, WORD, Heap, HeapError, Space, object_size

Slot = int | str
MASK64 = (1 << 64) - 1
#: how many collection records a run keeps (the most recent ones; GCStats counts them all)
KEEP_COLLECTIONS = 256
#: steps 2-3 of a collection done elsewhere: (old, new, from-space (base, end), to-space, root values)
#: -> (forwarded root values, objects copied)
Evacuate = Callable[[bytearray, bytearray, "tuple[int, int]", Space, "list[int]"], "tuple[list[int], int]"]
#: objects copied between two looks at the wall-clock budget
BUDGET_CHECK_EVERY = 4096


class Word32(int):
    """A slot that is a 4-byte stack word, not an 8-byte one: where an x86-32 prolog saved a register."""


def read_slot(machine, slot: Slot) -> int:
    """The 64-bit value a slot holds."""
    if isinstance(slot, Word32):
        return machine.read_u32(slot)
    return machine.reg(slot) if isinstance(slot, str) else machine.read_u64(slot)


def write_slot(machine, slot: Slot, value: int) -> None:
    """Store a 64-bit value into a slot."""
    if isinstance(slot, str):
        machine.set_reg(slot, value)
    elif isinstance(slot, Word32):
        machine.write(slot, (value & 0xFFFF_FFFF).to_bytes(4, "little"))
    else:
        machine.write_u64(slot, value)


@dataclass
class GCStats:
    """Counters over the whole run."""

    collections: int = 0
    objects_copied: int = 0
    bytes_copied: int = 0
    roots_seen: int = 0
    derived_seen: int = 0
    slots_moved: int = 0


@dataclass(frozen=True)
class Collection:
    """What one collection did: slot values before and after, copies, spaces."""

    index: int
    roots: tuple[tuple[Slot, int, int], ...]  # (slot, old, new)
    derived: tuple[tuple[Slot, int, int], ...]
    objects_copied: int
    bytes_copied: int
    from_space: tuple[int, int]  # (base, used end) of the space that was evacuated
    to_space: tuple[int, int]


class CollectionLog:
    """The records of a run's collections, bounded: the last ``keep`` are kept.

    ``len()`` counts every collection recorded (so "was there a new one" is a length check);
    iteration and indexing see only the kept, most recent records; ``dropped`` says how many
    older ones were let go.
    """

    def __init__(self, keep: int = KEEP_COLLECTIONS) -> None:
        self.kept: deque[Collection] = deque(maxlen=keep)
        self.total = 0

    @property
    def dropped(self) -> int:
        """Records no longer kept."""
        return self.total - len(self.kept)

    def append(self, done: Collection) -> None:
        """Record one collection (the oldest kept record goes when the log is full)."""
        self.kept.append(done)
        self.total += 1

    def __len__(self) -> int:
        return self.total

    def __iter__(self) -> Iterator[Collection]:
        return iter(self.kept)

    def __getitem__(self, i: int) -> Collection:
        return list(self.kept)[i] if isinstance(i, slice) else self.kept[i]

    def __bool__(self) -> bool:
        return self.total > 0


@dataclass
class Collector:
    """Cheney copying between the heap's two semispaces.

    ``evacuate``, when set, replaces steps 2-3: ``evacuate(old, new, from_space, to_space, values)``
    gets from-space's bytes (``old``, a bytearray starting at ``from_space[0]``, ending at the
    allocation pointer ``from_space[1]``), an empty bytearray ``new`` to fill with to-space
    (``to_space`` is its :class:`Space`) and the distinct root values; it returns the forwarded
    value of each root, in order, and the number of objects it copied. ``rebase``, when set,
    replaces the rule of step 4 for a derived slot: ``rebase(old base, new base, old derived)``.
    """

    heap: Heap
    poison: bool = True
    stats: GCStats = field(default_factory=GCStats)
    evacuate: Evacuate | None = None
    rebase: Callable[[int, int, int], int] | None = None

    def collect(self, roots: Sequence[Slot], derived: Sequence[tuple[Slot, Slot]] = ()) -> Collection:
        """Evacuate everything reachable from ``roots``; rewrite roots and derived slots.

        Long because Cheney's algorithm reads best in one piece: `forward`, the scan loop and the
        rewrites of root and derived slots share the from-space copy and the to-space buffer.
        """
        heap, machine = self.heap, self.heap.machine
        check = getattr(machine, "check_budget", None)
        from_space, to_space = heap.space, heap.other
        from_end = heap.top
        old = bytearray(machine.read(from_space.base, from_end - from_space.base))
        new = bytearray()
        copied = 0

        def forward(ptr: int) -> int:
            nonlocal copied
            if not from_space.base + HEADER_SIZE <= ptr <= from_end:
                return ptr  # null, an integer, or not a heap address
            off = ptr - from_space.base
            mask, word = struct.unpack_from("<QQ", old, off - HEADER_SIZE)
            if not word & OBJECT_TAG:
                return word  # already copied: the forwarding address
            n = word >> 1
            size = object_size(n)
            if off - HEADER_SIZE + size > len(old) or mask >> min(n, 64):
                raise HeapError(f"pointer {ptr:#x} does not point at an object (header {word:#x}, mask {mask:#x})")
            start = len(new)
            new.extend(old[off - HEADER_SIZE : off - HEADER_SIZE + size])
            target = to_space.base + start + HEADER_SIZE
            struct.pack_into("<Q", old, off - WORD, target)
            copied += 1
            return target

        root_values = {}
        for slot in roots:
            if slot not in root_values:
                root_values[slot] = read_slot(machine, slot)
        derived_values = []
        for slot, base in derived:
            if base not in root_values:
                root_values[base] = read_slot(machine, base)
            derived_values.append((slot, base, read_slot(machine, slot)))

        if self.evacuate is not None:
            moved_roots, copied = self.evacuate(
                old, new, (from_space.base, from_end), to_space, list(root_values.values())
            )
            forwarded = dict(zip(root_values, moved_roots))
        else:
            forwarded = {slot: forward(value) for slot, value in root_values.items()}

            scan = scanned = 0
            while scan < len(new):
                mask, word = struct.unpack_from("<QQ", new, scan)
                n = word >> 1
                body = scan + HEADER_SIZE
                bits, i = mask, 0
                while bits:
                    if bits & 1:
                        at = body + WORD * i
                        (value,) = struct.unpack_from("<Q", new, at)
                        struct.pack_into("<Q", new, at, forward(value))
                    bits >>= 1
                    i += 1
                scan = body + WORD * n
                scanned += 1
                if check is not None and scanned % BUDGET_CHECK_EVERY == 0:
                    check("during a collection")
                if len(new) > to_space.size:
                    raise HeapError(
                        f"the collection copied {len(new)} bytes, more than a semispace of "
                        f"{to_space.size} bytes holds: a root or a pointer field points into the "
                        f"middle of an object"
                    )

        if len(new) > to_space.size:
            raise HeapError(
                f"the collection copied {len(new)} bytes, more than a semispace of {to_space.size} bytes "
                f"holds: a root or a pointer field points into the middle of an object"
            )
        machine.write(to_space.base, bytes(new))

        root_log = []
        for slot, value in root_values.items():
            moved = forwarded[slot]
            if moved != value:
                write_slot(machine, slot, moved)
                self.stats.slots_moved += 1
            root_log.append((slot, value, moved))
        derived_log = []
        for slot, base, value in derived_values:
            if slot in root_values:
                continue  # a slot that is itself a base was rewritten above
            old_base, new_base = root_values[base], forwarded[base]
            rebased = new_base + (value - old_base) if self.rebase is None else self.rebase(old_base, new_base, value)
            moved = rebased & MASK64
            if moved != value:
                write_slot(machine, slot, moved)
                self.stats.slots_moved += 1
            derived_log.append((slot, value, moved))

        heap.current = 1 - heap.current
        heap.top = to_space.base + len(new)
        if self.poison:
            heap.poison(from_space, from_end)
        stats = self.stats
        stats.collections += 1
        stats.objects_copied += copied
        stats.bytes_copied += len(new)
        stats.roots_seen += len(roots)
        stats.derived_seen += len(derived)
        return Collection(
            stats.collections,
            tuple(root_log),
            tuple(derived_log),
            copied,
            len(new),
            (from_space.base, from_end),
            (to_space.base, heap.top),
        )
