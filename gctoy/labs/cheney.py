"""Lab (chapter 09): Cheney's ``forward`` and ``scan``, plugged into gctoy's runtime.

The student writes the two halves of Cheney's algorithm against :class:`Spaces`, a view of one
collection's from-space and to-space::

    forward(spaces, ptr) -> int   copy the object ``ptr`` points at (field 0) to the free end of
                                  to-space unless it was copied already; leave the new address in
                                  its from-space header word (a forwarding pointer, tag bit 0);
                                  return the new address. Values outside from-space (null) are
                                  returned unchanged.
    scan(spaces, forward)         walk to-space from its base with a scan pointer, forwarding
                                  every pointer field (the mask word says which), until the scan
                                  pointer meets ``spaces.free``.

:func:`check` compiles a few programs with gctoy, runs each on Unicorn under GC stress (a
collection at every call into the runtime from a statepoint) with the heap verifier after every
collection and from-space poisoned, once with gctoy's own collector and once with the student's
``forward``/``scan`` (through :attr:`gctoy.runtime.collector.Collector.evacuate`), and compares
what the programs print and how many objects each collection copies. The runtime still reads the
roots and writes the forwarded values back (step 4 of ``gctoy/runtime/collector.py``). The student
may also write the rule for a derived slot (through :attr:`gctoy.runtime.collector.Collector.rebase`)::

    rebase_derived(old_base, new_base, old_derived) -> int
                                  the derived pointer's new value once its base has moved from
                                  ``old_base`` to ``new_base``

without which the runtime's own rule runs. A collector that forgets derived pointers (leaves them
pointing into from-space) fails in the list program: it goes on reading through the derived
pointer after the collection, and from-space is poisoned.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass

from gctoy.errors import GCToyError
from gctoy.labs import LabFailure, LabReport, call_student
from gctoy.runtime.heap import HEADER_SIZE, OBJECT_TAG, WORD, Space

__all__ = ["Spaces", "PROGRAMS", "check", "WORD", "HEADER_SIZE", "OBJECT_TAG"]

#: reads of guest words one collection may make before the lab calls the scan endless
READ_LIMIT = 200_000

_ABI = """
declare i8 addrspace(1)* @gc_alloc(i64, i64)
declare void @print_i64(i64)
declare void @gc_collect()
declare void @do_safepoint()
"""

#: One object shared by two others (a DAG), and a self-cycle: a copy made twice breaks sharing.
SHARED = (
    _ABI
    + """
define i64 @main() gc "statepoint-example" {
entry:
  %s = call i8 addrspace(1)* @gc_alloc(i64 1, i64 0)
  %sv = bitcast i8 addrspace(1)* %s to i64 addrspace(1)*
  store i64 5, i64 addrspace(1)* %sv
  %x = call i8 addrspace(1)* @gc_alloc(i64 2, i64 1)
  %xf = bitcast i8 addrspace(1)* %x to i8 addrspace(1)* addrspace(1)*
  store i8 addrspace(1)* %s, i8 addrspace(1)* addrspace(1)* %xf
  %y = call i8 addrspace(1)* @gc_alloc(i64 2, i64 3)
  %yf = bitcast i8 addrspace(1)* %y to i8 addrspace(1)* addrspace(1)*
  store i8 addrspace(1)* %s, i8 addrspace(1)* addrspace(1)* %yf
  %yc0 = getelementptr i8, i8 addrspace(1)* %y, i64 8
  %yc = bitcast i8 addrspace(1)* %yc0 to i8 addrspace(1)* addrspace(1)*
  store i8 addrspace(1)* %y, i8 addrspace(1)* addrspace(1)* %yc
  call void @gc_collect()
  %s1 = load i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %xf
  %s1v = bitcast i8 addrspace(1)* %s1 to i64 addrspace(1)*
  store i64 7, i64 addrspace(1)* %s1v
  call void @do_safepoint()
  %yf2 = bitcast i8 addrspace(1)* %y to i8 addrspace(1)* addrspace(1)*
  %s2 = load i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %yf2
  %s2v = bitcast i8 addrspace(1)* %s2 to i64 addrspace(1)*
  %v = load i64, i64 addrspace(1)* %s2v
  call void @print_i64(i64 %v)
  %yc2a = getelementptr i8, i8 addrspace(1)* %y, i64 8
  %yc2 = bitcast i8 addrspace(1)* %yc2a to i8 addrspace(1)* addrspace(1)*
  %self = load i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %yc2
  %same = icmp eq i8 addrspace(1)* %self, %y
  %one = zext i1 %same to i64
  call void @print_i64(i64 %one)
  ret i64 %v
}
"""
)

#: A binary tree of depth 3 built recursively (nodes {left, right, value}): roots in many frames.
TREE = (
    _ABI
    + """
define i8 addrspace(1)* @build(i64 %d) gc "statepoint-example" {
entry:
  %leaf = icmp eq i64 %d, 0
  br i1 %leaf, label %mk, label %inner
inner:
  %d1 = sub i64 %d, 1
  %l = call i8 addrspace(1)* @build(i64 %d1)
  %r = call i8 addrspace(1)* @build(i64 %d1)
  %n = call i8 addrspace(1)* @gc_alloc(i64 3, i64 3)
  %lp = bitcast i8 addrspace(1)* %n to i8 addrspace(1)* addrspace(1)*
  store i8 addrspace(1)* %l, i8 addrspace(1)* addrspace(1)* %lp
  %rp0 = getelementptr i8, i8 addrspace(1)* %n, i64 8
  %rp = bitcast i8 addrspace(1)* %rp0 to i8 addrspace(1)* addrspace(1)*
  store i8 addrspace(1)* %r, i8 addrspace(1)* addrspace(1)* %rp
  %vp0 = getelementptr i8, i8 addrspace(1)* %n, i64 16
  %vp = bitcast i8 addrspace(1)* %vp0 to i64 addrspace(1)*
  store i64 %d, i64 addrspace(1)* %vp
  ret i8 addrspace(1)* %n
mk:
  %m = call i8 addrspace(1)* @gc_alloc(i64 3, i64 3)
  %mvp0 = getelementptr i8, i8 addrspace(1)* %m, i64 16
  %mvp = bitcast i8 addrspace(1)* %mvp0 to i64 addrspace(1)*
  store i64 100, i64 addrspace(1)* %mvp
  ret i8 addrspace(1)* %m
}

define i64 @sum(i8 addrspace(1)* %t) gc "statepoint-example" {
entry:
  %isnull = icmp eq i8 addrspace(1)* %t, null
  br i1 %isnull, label %zero, label %node
zero:
  ret i64 0
node:
  %lp = bitcast i8 addrspace(1)* %t to i8 addrspace(1)* addrspace(1)*
  %l = load i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %lp
  %sl = call i64 @sum(i8 addrspace(1)* %l)
  %rp0 = getelementptr i8, i8 addrspace(1)* %t, i64 8
  %rp = bitcast i8 addrspace(1)* %rp0 to i8 addrspace(1)* addrspace(1)*
  %r = load i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %rp
  %sr = call i64 @sum(i8 addrspace(1)* %r)
  %vp0 = getelementptr i8, i8 addrspace(1)* %t, i64 16
  %vp = bitcast i8 addrspace(1)* %vp0 to i64 addrspace(1)*
  %v = load i64, i64 addrspace(1)* %vp
  %a = add i64 %sl, %sr
  %b = add i64 %a, %v
  ret i64 %b
}

define i64 @main() gc "statepoint-example" {
entry:
  %t = call i8 addrspace(1)* @build(i64 3)
  %junk = call i8 addrspace(1)* @gc_alloc(i64 4, i64 0)
  call void @gc_collect()
  %s = call i64 @sum(i8 addrspace(1)* %t)
  call void @print_i64(i64 %s)
  ret i64 %s
}
"""
)


def _programs() -> dict[str, str]:
    from gctoy.runtime.trace import LIST3

    return {
        "list3 (a derived pointer)": LIST3,
        "shared (a DAG and a cycle)": SHARED,
        "tree (roots in many frames)": TREE,
    }


#: the programs the check runs, by name (LIST3 is the chapter's example)
PROGRAMS = _programs()


class Spaces:
    """One collection's two semispaces, as ``forward`` and ``scan`` see them.

    Addresses are guest addresses. From-space is ``[from_base, from_end)`` (``from_end`` is where
    allocation stopped); to-space starts at ``to_base`` and is filled up to ``free``.
    """

    def __init__(self, old: bytearray, new: bytearray, from_space: tuple[int, int], to_space: Space) -> None:
        self._old, self._new = old, new
        self.from_base, self.from_end = from_space
        self.to_base = to_space.base
        self.to_size = to_space.size
        self.reads = 0
        self.copied: dict[int, int] = {}  # from-space header address -> to-space header address

    @property
    def free(self) -> int:
        """The allocation pointer of to-space: where the next copy goes."""
        return self.to_base + len(self._new)

    def in_from_space(self, address: int) -> bool:
        """Whether ``address`` can be the field-0 address of a from-space object (null cannot)."""
        return self.from_base + HEADER_SIZE <= address <= self.from_end

    def _where(self, address: int) -> tuple[bytearray, int]:
        if address % WORD:
            raise LabFailure(f"the address {address:#x} is not word-aligned: objects and their fields are 8-byte words")
        if self.from_base <= address and address + WORD <= self.from_end:
            return self._old, address - self.from_base
        if self.to_base <= address and address + WORD <= self.free:
            return self._new, address - self.to_base
        raise LabFailure(
            f"the address {address:#x} is in neither from-space [{self.from_base:#x}, {self.from_end:#x}) nor the "
            f"used part of to-space [{self.to_base:#x}, {self.free:#x}). Null (0) and other non-heap values must be "
            f"returned by forward unchanged (spaces.in_from_space tells them apart); the header words of the object "
            f"whose field 0 is at p are at p - 16 (mask) and p - 8 (count or forwarding pointer)."
        )

    def read(self, address: int) -> int:
        """The word at ``address`` (in from-space or in the used part of to-space)."""
        self.reads += 1
        if self.reads > READ_LIMIT:
            raise LabFailure(
                f"one collection read more than {READ_LIMIT} words: the scan does not end. The scan "
                f"pointer must move past each object (16 header bytes + 8 per field) and the loop stop "
                f"when it reaches spaces.free."
            )
        buffer, offset = self._where(address)
        return struct.unpack_from("<Q", buffer, offset)[0]

    def write(self, address: int, value: int) -> None:
        """Store a word at ``address`` (in from-space or in the used part of to-space)."""
        buffer, offset = self._where(address)
        struct.pack_into("<Q", buffer, offset, value & ((1 << 64) - 1))

    def copy(self, start: int, nbytes: int) -> int:
        """Copy ``nbytes`` of from-space from ``start`` (an object's first header word) to ``free``;
        return the to-space address the bytes went to (the copy's first header word)."""
        if start % WORD or not self.from_base <= start < self.from_end - WORD:
            raise LabFailure(
                f"copy({start:#x}, {nbytes}): {start:#x} is not the start of a from-space object. An object starts "
                f"with its two header words at p - 16, p being the field-0 address forward is given."
            )
        (count_word,) = struct.unpack_from("<Q", self._old, start + WORD - self.from_base)
        if not count_word & OBJECT_TAG:
            raise LabFailure(
                f"copy({start:#x}, ...): the object's count word is {count_word:#x}, whose tag bit 0 is clear: it is a "
                f"forwarding pointer, so this object was copied already. forward must look at the word at p - 8 first "
                f"and, when its tag bit is 0, return it (the address of the copy) instead of copying again."
            )
        size = HEADER_SIZE + WORD * (count_word >> 1)
        if nbytes != size:
            raise LabFailure(
                f"copy({start:#x}, {nbytes}): this object takes {size} bytes, not {nbytes}: 16 header bytes and 8 per "
                f"field, nfields being the count word (at p - 8) shifted right by one (its bit 0 is the tag)."
            )
        if start in self.copied:
            raise LabFailure(
                f"the object at {start + HEADER_SIZE:#x} was copied twice in one collection (again after it went to "
                f"{self.copied[start] + HEADER_SIZE:#x}). A second reference to an object must find the copy, not make "
                f"another one, or two fields that shared the object no longer do: after copying, forward must "
                f"overwrite the word at p - 8 in from-space with the copy's address (a forwarding pointer, tag bit 0) "
                f"and, when it finds such a word, return it."
            )
        if len(self._new) + nbytes > self.to_size:
            raise LabFailure(f"to-space ({self.to_size} bytes) is full: more is being copied than was allocated.")
        at = self.free
        self._new.extend(self._old[start - self.from_base : start - self.from_base + nbytes])
        self.copied[start] = at
        return at


@dataclass
class _Plug:
    """The ``evacuate`` hook that runs the student's forward and scan for the runtime's collector."""

    forward: Callable[[Spaces, int], int]
    scan: Callable[[Spaces, Callable[[Spaces, int], int]], None]
    program: str
    collections: int = 0
    moved: int = 0

    def __call__(self, old, new, from_space, to_space, values):
        self.collections += 1
        spaces = Spaces(old, new, from_space, to_space)
        where = f"collection #{self.collections} of the program {self.program}"

        def forward(spaces_: Spaces, ptr: int) -> int:
            result = call_student(self.forward, f"forwarding {ptr:#x} in {where}", spaces_, ptr)
            if not isinstance(result, int):
                raise LabFailure(f"forward({ptr:#x}) returned {result!r}, not an address (an int) — in {where}.")
            if not spaces.in_from_space(ptr):
                if result != ptr:
                    raise LabFailure(
                        f"forward({ptr:#x}) returned {result:#x}: {ptr:#x} is not a from-space object "
                        f"(null or a value outside the heap) and must come back unchanged — in {where}."
                    )
                return result
            if result in spaces.copied.values():
                raise LabFailure(
                    f"forward({ptr:#x}) returned {result:#x}, the address of the copy's first header word. Pointers "
                    f"point at field 0, 16 bytes after the header (as gc_alloc's result does): return the copy's "
                    f"address + HEADER_SIZE — in {where}."
                )
            return result

        moved = [forward(spaces, value) for value in values]
        call_student(self.scan, f"scanning to-space in {where}", spaces, forward)
        self.moved += len(spaces.copied)
        return moved, len(spaces.copied)


@dataclass
class _Rebase:
    """The ``rebase`` hook: the student's rule for a derived slot, its first wrong answer kept."""

    rebase_derived: Callable[[int, int, int], int]
    program: str
    calls: int = 0
    wrong: tuple[int, int, int, int] | None = None  # old base, new base, old derived, the answer

    def __call__(self, old_base: int, new_base: int, old_derived: int) -> int:
        self.calls += 1
        what = f"rebasing the derived slot {old_derived:#x} (base {old_base:#x} -> {new_base:#x}) in {self.program}"
        result = call_student(self.rebase_derived, what, old_base, new_base, old_derived)
        if not isinstance(result, int):
            raise LabFailure(f"rebase_derived returned {result!r}, not an address (an int), while {what}.")
        if result != new_base + (old_derived - old_base) and self.wrong is None:
            self.wrong = (old_base, new_base, old_derived, result)
        return result

    def explain(self) -> str:
        """Why the program failed, when a derived slot was given a wrong value ('' when none was)."""
        if self.wrong is None:
            return ""
        old_base, new_base, old_derived, result = self.wrong
        offset = old_derived - old_base
        forgot = result == old_derived
        return (
            f"\nThe cause: a derived slot held {old_derived:#x}, {offset} bytes into the object at {old_base:#x}, "
            f"which the collection moved to {new_base:#x}. rebase_derived gave {result:#x}"
            + (", the old value, which still points into from-space" if forgot else "")
            + f"; the slot must get {new_base + offset:#x}. A derived pointer is not an object's address, so "
            "forward cannot move it; it moves with its base, by the same distance: new base + (old derived - "
            "old base)."
            + (
                " A collector that forgets derived pointers leaves the compiled code reading through them "
                "into the poisoned from-space after the call."
                if forgot
                else ""
            )
        )


def _run(program: str, plug: _Plug | None, rebase: _Rebase | None = None):
    from gctoy.runtime.run import Runtime, load_compiled
    from gctoy.runtime.trace import prepare_module

    runtime = Runtime(load_compiled(prepare_module(program)), stress=True, verify=True, semispace_size=0x4000)
    copies: list[int] = []
    runtime.on_collect = lambda _runtime, done: copies.append(done.objects_copied)
    if plug is not None:
        runtime.collector.evacuate = plug
    runtime.collector.rebase = rebase
    result = runtime.run()
    return result, copies


def _teach_heap_problem(error: GCToyError, name: str) -> str:
    text = str(error)
    if "field at" in text:
        why = (
            "A pointer field of an object in to-space still holds a from-space address: scan must forward every "
            "field the mask word marks, in every object of to-space, including the objects copied while scanning "
            "(loop while the scan pointer is below spaces.free, reading spaces.free afresh each time)."
        )
    elif "root slot" in text:
        why = (
            "A root slot was given a value that is not the field-0 address of an object in to-space: forward must "
            "return the copy's field-0 address (or the forwarding pointer it finds)."
        )
    elif "deadbeef" in text.lower():
        why = "The program read the poison word left in from-space: some pointer it used was not forwarded to to-space."
    else:
        why = "The heap after your collection is not what the program and the verifier expect."
    return f"With your forward and scan, the program {name} failed under GC stress:\n  {text}\n{why}"


def check(
    forward: Callable[[Spaces, int], int],
    scan: Callable[[Spaces, Callable], None],
    rebase_derived: Callable[[int, int, int], int] | None = None,
) -> LabReport:
    """Run every program of :data:`PROGRAMS` under stress with gctoy's collector and with the student's
    (``rebase_derived``, when given, rebases the derived slots in place of the runtime's rule)."""
    lines, total_collections, total_moved = [], 0, 0
    for name, program in PROGRAMS.items():
        expected, expected_copies = _run(program, None)
        plug = _Plug(forward, scan, name)
        rebase = _Rebase(rebase_derived, name) if rebase_derived is not None else None
        why: Callable[[], str] = rebase.explain if rebase is not None else str
        try:
            got, copies = _run(program, plug, rebase)
        except LabFailure:
            raise
        except GCToyError as error:
            raise LabFailure(_teach_heap_problem(error, name) + why()) from None
        for index, (want, have) in enumerate(zip(expected_copies, copies), 1):
            if want != have:
                more = "more" if have > want else "fewer"
                raise LabFailure(
                    f"In the program {name}, collection #{index} copied {have} objects, {more} than gctoy's collector "
                    f"({want}). A copying collector copies exactly the objects reachable from the roots, each once: "
                    + (
                        "every reachable object must be forwarded once, and each later reference must find its "
                        "forwarding pointer."
                        if have > want
                        else "scan must reach every object the copies point to, not only the roots' objects."
                    )
                )
        if (got.printed, got.result) != (expected.printed, expected.result):
            raise LabFailure(
                f"The program {name} printed {got.printed} and returned {got.result} with your collector, "
                f"but {expected.printed} and {expected.result} with gctoy's: the heap after a collection "
                f"must hold the same object graph, with every pointer rewritten to the copies." + why()
            )
        if rebase is not None and rebase.wrong is not None:
            raise LabFailure(f"The program {name} ran, but not because your collector is right:" + rebase.explain())
        total_collections += plug.collections
        total_moved += plug.moved
        rebased = f", {rebase.calls} derived slots rebased by your rebase_derived" if rebase is not None else ""
        lines.append(
            f"{name}: {plug.collections} collections, {plug.moved} objects copied{rebased}, output {got.printed} "
            f"as with gctoy's collector"
        )
    lines.append(
        f"{len(PROGRAMS)} programs, {total_collections} collections under stress, {total_moved} objects "
        f"moved, the heap verified after each collection, from-space poisoned"
    )
    return LabReport("gctoy.labs.cheney", lines)
