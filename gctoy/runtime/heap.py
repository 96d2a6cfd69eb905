"""The guest heap: two semispaces in Machine memory, bump allocation, the object layout.

Object layout (every word 8 bytes, little-endian). A guest pointer points at field 0;
the two header words sit just before it::

              +----------------------------+
    p - 16    | ptrmask                    |  bit i set iff field i holds a GC pointer
              +----------------------------+
    p - 8     | nfields << 1 | 1           |  tag bit 1: a live object header
              |   -- or, after copying --  |
              | forwarding address         |  tag bit 0: field 0 of the copy in to-space
              +----------------------------+
    p + 0     | field 0                    |  <- the pointer gc_alloc returns
    p + 8     | field 1                    |
              | ...                        |
    p + 8n-8  | field n-1                  |
              +----------------------------+

Fields start zero-filled. Objects are packed back to back, so an object's size is
``16 + 8 * nfields`` and a space is walked from its base by reading headers.

The heap region starts at ``HEAP_BASE`` (0x10000000) and holds two semispaces of
``semispace_size`` bytes each, one after the other::

    HEAP_BASE                      HEAP_BASE + semispace_size            + 2 * semispace_size
    | space 0                      | space 1                             |
    ^ from/to swap at every collection; allocation bumps ``top`` in the current space
"""

from __future__ import annotations

import bisect
import struct
from dataclasses import dataclass

from gctoy.emu.image import HEAP_BASE
from gctoy.errors import GCToyError

WORD = 8
HEADER_WORDS = 2
HEADER_SIZE = HEADER_WORDS * WORD
OBJECT_TAG = 1
MAX_FIELDS = 1 << 24
DEFAULT_SEMISPACE = 1 << 20
POISON_WORD = 0xDEADBEEF_DEADBEEF
POISON = struct.pack("<Q", POISON_WORD)


class HeapError(GCToyError):
    """A bad allocation request, an exhausted heap or a corrupt heap."""


class OutOfMemory(HeapError):
    """No room left in the current space, even after collecting."""


def header_word(nfields: int) -> int:
    """The tagged count word of a live object with ``nfields`` fields."""
    return (nfields << 1) | OBJECT_TAG


def object_size(nfields: int) -> int:
    """Bytes one object takes, headers included."""
    return HEADER_SIZE + WORD * nfields


def check_shape(nfields: int, ptrmask: int) -> None:
    """Reject field counts and pointer masks that do not describe an object."""
    if not 0 <= nfields <= MAX_FIELDS:
        raise HeapError(f"gc_alloc: field count {nfields} out of range 0..{MAX_FIELDS}")
    if ptrmask < 0 or ptrmask >> 64:
        raise HeapError(f"gc_alloc: pointer mask {ptrmask:#x} is not a 64-bit value")
    if ptrmask >> min(nfields, 64):
        raise HeapError(f"gc_alloc: pointer mask {ptrmask:#x} names fields beyond the {nfields} it has")


@dataclass(frozen=True)
class Space:
    """One semispace: [base, base + size)."""

    base: int
    size: int

    @property
    def end(self) -> int:
        return self.base + self.size

    def __contains__(self, address: int) -> bool:
        return self.base <= address < self.end


class Heap:
    """Two semispaces over a Machine's heap mapping; bump allocation in the current one."""

    def __init__(self, machine, semispace_size: int = DEFAULT_SEMISPACE) -> None:
        if semispace_size % 0x1000:
            raise HeapError("the semispace size must be a multiple of 4096")
        if machine.heap_base != HEAP_BASE or machine.heap_size < 2 * semispace_size:
            raise HeapError(
                f"the machine maps {machine.heap_size:#x} heap bytes; two semispaces need {2 * semispace_size:#x}"
            )
        self.machine = machine
        self.spaces = (Space(HEAP_BASE, semispace_size), Space(HEAP_BASE + semispace_size, semispace_size))
        self.current = 0
        self.top = self.spaces[0].base
        self.objects_allocated = 0
        self.bytes_allocated = 0

    @property
    def space(self) -> Space:
        """The space that allocation bumps in (to-space after a collection)."""
        return self.spaces[self.current]

    @property
    def other(self) -> Space:
        """The idle space (from-space after a collection; poisoned)."""
        return self.spaces[1 - self.current]

    @property
    def used(self) -> int:
        return self.top - self.space.base

    def fits(self, nfields: int) -> bool:
        """Whether an object of ``nfields`` fields fits without collecting."""
        return self.top + object_size(nfields) <= self.space.end

    def alloc(self, nfields: int, ptrmask: int) -> int:
        """A zero-filled object; returns the address of field 0 (OutOfMemory if it does not fit)."""
        check_shape(nfields, ptrmask)
        size = object_size(nfields)
        if self.top + size > self.space.end:
            raise OutOfMemory(f"gc_alloc({nfields}): {size} bytes do not fit ({self.used} of {self.space.size} used)")
        start = self.top
        self.machine.write(start, struct.pack("<QQ", ptrmask, header_word(nfields)) + bytes(WORD * nfields))
        self.top += size
        self.objects_allocated += 1
        self.bytes_allocated += size
        return start + HEADER_SIZE

    def header(self, obj: int) -> tuple[int, int]:
        """(nfields, ptrmask) of the live object whose field 0 is at ``obj``."""
        mask, word = struct.unpack("<QQ", self.machine.read(obj - HEADER_SIZE, HEADER_SIZE))
        if not word & OBJECT_TAG:
            raise HeapError(f"object {obj:#x} has a forwarding pointer {word:#x}, not a header")
        return word >> 1, mask

    def fields(self, obj: int) -> list[int]:
        """The field words of one object."""
        n, _ = self.header(obj)
        return list(struct.unpack(f"<{n}Q", self.machine.read(obj, WORD * n)))

    def objects(self) -> list[int]:
        """Field-0 addresses of the objects in the current space, in address order."""
        out, cursor = [], self.space.base
        while cursor < self.top:
            obj = cursor + HEADER_SIZE
            n, _ = self.header(obj)
            out.append(obj)
            cursor += object_size(n)
        return out

    def index(self) -> ObjectIndex:
        """The objects of the current space by address (one read of the space), for interior pointers."""
        base = self.space.base
        data = self.machine.read(base, self.top - base)
        starts, counts, cursor = [], [], 0
        while cursor + HEADER_SIZE <= len(data):
            (word,) = struct.unpack_from("<Q", data, cursor + WORD)
            if not word & OBJECT_TAG:
                raise HeapError(f"no object header at {base + cursor:#x} while indexing the heap")
            starts.append(base + cursor + HEADER_SIZE)
            counts.append(word >> 1)
            cursor += object_size(word >> 1)
        return ObjectIndex(tuple(starts), tuple(counts))

    def poison(self, space: Space, end: int | None = None) -> None:
        """Fill ``space`` (up to ``end``) with the poison word."""
        stop = space.end if end is None else end
        if stop > space.base:
            self.machine.write(space.base, POISON * ((stop - space.base) // WORD))

    def is_poisoned(self, space: Space, end: int | None = None) -> bool:
        """Whether ``space`` (up to ``end``) holds nothing but the poison word."""
        stop = space.end if end is None else end
        return self.machine.read(space.base, stop - space.base) == POISON * ((stop - space.base) // WORD)


def containing_object(starts, counts, address: int) -> int | None:
    """Field 0 of the object ``address`` points into, given the objects' field-0 addresses (sorted)
    and field counts, or None. A pointer one past the last field still names the object, as an
    interior pointer may point just past the end of an array."""
    i = bisect.bisect_right(starts, address) - 1
    if i < 0 or address > starts[i] + WORD * counts[i]:
        return None
    return starts[i]


@dataclass(frozen=True)
class ObjectIndex:
    """The objects of one space in address order: field-0 addresses and field counts."""

    starts: tuple[int, ...]
    counts: tuple[int, ...]

    def containing(self, address: int) -> int | None:
        """Field 0 of the object ``address`` points into (one past its last field included), or None."""
        return containing_object(self.starts, self.counts, address)

    def extents(self) -> list[tuple[int, int]]:
        """``(field 0, end of the last field)`` of every object."""
        return [(s, s + WORD * n) for s, n in zip(self.starts, self.counts)]
