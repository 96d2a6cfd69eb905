"""Lab (chapter 12): a card-marking write barrier, written by the student, run at every ``llvm.gcwrite``.

The student writes::

    def write_barrier(cards, obj, field, value):
        ...

gctoy lowers each ``call void @llvm.gcwrite(i8* %value, i8* %obj, i8** %field)`` of the lab's
programs to the store ``*field = value`` followed by a call of the runtime function
``@gc_write_barrier(obj, field, value)``, which runs the student's function (a native of the
guest machine). ``cards`` is the runtime's card table: ``len(cards)`` is ``CARD_COUNT + 1`` and
``cards[i] = CARD_DIRTY`` marks card ``i``.  The contract is the one of ``gctoy-cardmark`` (seed 003,
"Custom lowering of intrinsics"; chapter 12 section 4): mark, unconditionally, the card of the
*object written into*, ``(obj - HEAP_BASE) >> CARD_SHIFT``, and the spare card ``CARD_COUNT`` for
an object outside the heap (a global).

Each program allocates its *old* objects, calls ``@young_begins()`` (from there on every new
object is young, and the card table starts clean), then allocates young objects and stores
references.  :func:`check` runs every program with the student's barrier under GC stress: after
every store, and once more when ``@main`` has returned, a :class:`YoungCollection` frees the young
objects it cannot reach from the stack, the registers and the old objects on *dirty* cards (the
collector relies on the cards, as a generational one does), and the heap verifier then looks for
a live object that points at a freed one. Then it

1. scans the whole heap by brute force for references from old objects into young ones (the
   remembered set a young collection needs) and requires each such old object's card to be dirty;
2. compares the dirty cards with those of gctoy's own barrier (the same program lowered by
   ``lower-gc-barriers`` for ``gctoy-cardmark``, run on the same machine layout).
"""

from __future__ import annotations

import re

from gctoy.codegen import compile_module
from gctoy.emu import Machine
from gctoy.ir import parse_module
from gctoy.labs import LabFailure, LabReport, call_student
from gctoy.passes import run
from gctoy.passes.lower_barriers import CARD_COUNT, CARD_DIRTY, CARD_SHIFT, CARD_TABLE, DEFAULT_SEMISPACE, HEAP_BASE
from gctoy.emu.image import STACK_TOP
from gctoy.runtime.heap import HEADER_SIZE, POISON, WORD, Heap
from gctoy.runtime.verify_heap import heap_problems

__all__ = ["CardTable", "YoungCollection", "PROGRAMS", "card_of", "check", "lower_to_barrier_calls", "old_to_young"]

BARRIER = "gc_write_barrier"

_GCWRITE = re.compile(r"^(\s*)call void @llvm\.gcwrite\(i8\* (%[\w.]+), i8\* (%[\w.]+), i8\*\* (%[\w.]+)\)\s*$", re.M)


def card_of(address: int) -> int:
    """gctoy-cardmark's card for an object at ``address`` (the spare card outside the heap)."""
    index = (address - HEAP_BASE) >> CARD_SHIFT
    return index if 0 <= index < CARD_COUNT else CARD_COUNT


def lower_to_barrier_calls(text: str) -> str:
    """Each ``@llvm.gcwrite`` becomes the store and a call of ``@gc_write_barrier(obj, field, value)``."""

    def replace(match: re.Match) -> str:
        indent, value, obj, field = match.groups()
        return (
            f"{indent}store i8* {value}, i8** {field}\n"
            f"{indent}call void @{BARRIER}(i8* {obj}, i8** {field}, i8* {value})"
        )

    lowered = _GCWRITE.sub(replace, text)
    return lowered.replace("declare void @llvm.gcwrite(i8*, i8*, i8**)", f"declare void @{BARRIER}(i8*, i8**, i8*)")


HEAD = """declare i8* @gc_alloc(i64, i64)
declare void @young_begins()
declare void @llvm.gcwrite(i8*, i8*, i8**)
"""

#: chapter 12's four stores, with the generations made explicit (old1, old2 old; young, young2 young)
CARDS = (
    HEAD
    + """@globals = global [1 x i8*] zeroinitializer

define i64 @main() gc "gctoy-cardmark" {
entry:
  %old1 = call i8* @gc_alloc(i64 2, i64 3)
  %pad1 = call i8* @gc_alloc(i64 100, i64 0)
  %old2 = call i8* @gc_alloc(i64 2, i64 3)
  %o2.f0 = bitcast i8* %old2 to i8**
  call void @llvm.gcwrite(i8* %old1, i8* %old2, i8** %o2.f0)
  call void @young_begins()
  %pad2 = call i8* @gc_alloc(i64 200, i64 0)
  %young = call i8* @gc_alloc(i64 2, i64 3)
  %pad3 = call i8* @gc_alloc(i64 60, i64 0)
  %young2 = call i8* @gc_alloc(i64 1, i64 1)
  %o1.f0 = bitcast i8* %old1 to i8**
  call void @llvm.gcwrite(i8* %young, i8* %old1, i8** %o1.f0)
  %o2.f1.b = getelementptr i8, i8* %old2, i64 8
  %o2.f1 = bitcast i8* %o2.f1.b to i8**
  call void @llvm.gcwrite(i8* %young2, i8* %old2, i8** %o2.f1)
  %y.f0 = bitcast i8* %young to i8**
  call void @llvm.gcwrite(i8* %old1, i8* %young, i8** %y.f0)
  %g = bitcast [1 x i8*]* @globals to i8*
  %g.f0 = bitcast [1 x i8*]* @globals to i8**
  call void @llvm.gcwrite(i8* %young2, i8* %g, i8** %g.f0)
  ret i64 0
}
"""
)


def _list_program(old: int, young: int) -> str:
    """``old`` old cells far apart; a loop makes ``young`` young cells and links each into an old
    cell's ``next`` (old -> young) and the previous young cell (young -> young)."""
    lines = [HEAD, 'define i64 @main() gc "gctoy-cardmark" {', "entry:"]
    for i in range(old):
        lines += [f"  %c{i} = call i8* @gc_alloc(i64 2, i64 2)", f"  %gap{i} = call i8* @gc_alloc(i64 70, i64 0)"]
    for i in range(1, old):  # old -> old links made before the young generation starts
        lines += [
            f"  %n{i} = getelementptr i8, i8* %c{i}, i64 8",
            f"  %n{i}.p = bitcast i8* %n{i} to i8**",
            f"  call void @llvm.gcwrite(i8* %c{i - 1}, i8* %c{i}, i8** %n{i}.p)",
        ]
    lines += [
        "  call void @young_begins()",
        "  br label %loop",
        "loop:",
        "  %i = phi i64 [ 0, %entry ], [ %i1, %next ]",
        "  %prev = phi i8* [ null, %entry ], [ %y, %next ]",
        "  %y = call i8* @gc_alloc(i64 2, i64 2)",
        "  %yn = getelementptr i8, i8* %y, i64 8",
        "  %yn.p = bitcast i8* %yn to i8**",
        "  call void @llvm.gcwrite(i8* %prev, i8* %y, i8** %yn.p)",
        f"  %which = urem i64 %i, {old}",
        "  br label %pick0",
    ]
    for i in range(old):
        nxt = f"%pick{i + 1}" if i + 1 < old else "%next"
        lines += [
            f"pick{i}:",
            f"  %is{i} = icmp eq i64 %which, {i}",
            f"  br i1 %is{i}, label %store{i}, label {nxt}",
            f"store{i}:",
            f"  %s{i} = getelementptr i8, i8* %c{i}, i64 8",
            f"  %s{i}.p = bitcast i8* %s{i} to i8**",
            f"  call void @llvm.gcwrite(i8* %y, i8* %c{i}, i8** %s{i}.p)",
            "  br label %next",
        ]
    lines += [
        "next:",
        "  %i1 = add i64 %i, 1",
        f"  %more = icmp ult i64 %i1, {young}",
        "  br i1 %more, label %loop, label %done",
        "done:",
        "  ret i64 0",
        "}",
        "",
    ]
    return "\n".join(lines)


#: an old array of 64 pointer fields (and 56 more words) spans two cards; young objects are stored
#: into fields 62 and 63, which lie in its second card
BIG = (
    HEAD
    + """define i64 @main() gc "gctoy-cardmark" {
entry:
  %arr = call i8* @gc_alloc(i64 120, i64 -1)
  %small = call i8* @gc_alloc(i64 1, i64 1)
  call void @young_begins()
  %pad = call i8* @gc_alloc(i64 100, i64 0)
  %y1 = call i8* @gc_alloc(i64 1, i64 0)
  %y2 = call i8* @gc_alloc(i64 1, i64 0)
  %f62.b = getelementptr i8, i8* %arr, i64 496
  %f62 = bitcast i8* %f62.b to i8**
  call void @llvm.gcwrite(i8* %y2, i8* %arr, i8** %f62)
  %f63.b = getelementptr i8, i8* %arr, i64 504
  %f63 = bitcast i8* %f63.b to i8**
  call void @llvm.gcwrite(i8* %y1, i8* %arr, i8** %f63)
  %s0 = bitcast i8* %small to i8**
  call void @llvm.gcwrite(i8* %arr, i8* %small, i8** %s0)
  ret i64 0
}
"""
)

PROGRAMS: dict[str, str] = {
    "chapter 12's four stores": CARDS,
    "old list, young cells linked in a loop": _list_program(5, 12),
    "an old array spanning two cards": BIG,
}


class CardTable:
    """The runtime's card table as the student's barrier sees it: ``cards[i] = CARD_DIRTY``."""

    def __init__(self) -> None:
        self.bytes = bytearray(CARD_COUNT + 1)

    def __len__(self) -> int:
        return len(self.bytes)

    def __getitem__(self, index: int) -> int:
        return self.bytes[self._index(index)]

    def __setitem__(self, index: int, value: int) -> None:
        self.bytes[self._index(index)] = value

    def _index(self, index) -> int:
        if not isinstance(index, int):
            raise LabFailure(
                f"card index {index!r} is a {type(index).__name__}; card indexes are integers "
                "(use >> CARD_SHIFT, not / 512)"
            )
        if not 0 <= index <= CARD_COUNT:
            raise LabFailure(
                f"card index {index} is outside the table (0 .. {CARD_COUNT}): an object outside "
                f"the heap, such as a global, marks the spare card CARD_COUNT = {CARD_COUNT}"
            )
        return index

    def dirty(self) -> set[int]:
        return {i for i, b in enumerate(self.bytes) if b}


class _Run:
    """One program on a fresh machine: the heap, the young boundary, and the natives."""

    def __init__(self, text: str) -> None:
        module = parse_module(text, "lab.ll")
        run(module, "verify,lower-gc-barriers,verify")
        self.compiled = compile_module(module)
        self.machine = Machine(self.compiled.image, heap_size=2 * DEFAULT_SEMISPACE)
        self.heap = Heap(self.machine, DEFAULT_SEMISPACE)
        self.boundary: int | None = None
        self.machine.register_native("gc_alloc", lambda n, mask: self.heap.alloc(n, mask & (1 << 64) - 1))
        self.machine.register_native("young_begins", self.young_begins)

    def young_begins(self) -> None:
        self.boundary = self.heap.top
        self.clear_cards()

    def clear_cards(self) -> None:
        pass

    def go(self) -> int:
        """Run ``@main``; the young boundary it set."""
        self.machine.call("main")
        if self.boundary is None:
            raise AssertionError("the lab program never called @young_begins")
        return self.boundary


class _GctoyRun(_Run):
    """gctoy's own barrier: the program lowered for gctoy-cardmark, the table in guest memory."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.table_at = self.compiled.image.address_of(CARD_TABLE)

    def clear_cards(self) -> None:
        self.machine.write(self.table_at, bytes(CARD_COUNT + 1))

    def dirty(self) -> set[int]:
        return {i for i, b in enumerate(self.machine.read(self.table_at, CARD_COUNT + 1)) if b == CARD_DIRTY}


class _StudentRun(_Run):
    def __init__(self, text: str, barrier) -> None:
        lowered = lower_to_barrier_calls(text)
        super().__init__(lowered)
        self.globals_at = _globals(lowered, self.compiled)
        self.cards = CardTable()
        self.barrier = barrier
        self.calls = 0
        self.machine.register_native(BARRIER, self.on_store, signed_args=False)

    def on_store(self, obj: int, field: int, value: int) -> None:
        self.calls += 1
        call_student(
            self.barrier,
            f"running the barrier for the store *{field:#x} = {value:#x} into object {obj:#x}",
            self.cards,
            obj,
            field,
            value,
        )
        if self.boundary is not None:  # GC stress: a young collection after every barrier
            self.young.collect(self.cards.dirty(), stack=True)

    def young_begins(self) -> None:
        super().young_begins()
        assert self.boundary is not None
        self.young = YoungCollection(self.heap, self.boundary, self.globals_at)

    def clear_cards(self) -> None:
        self.cards = CardTable()

    def go(self) -> int:
        """Run ``@main`` with a young collection after every store, and one more once it has returned."""
        boundary = super().go()
        self.young.collect(self.cards.dirty(), stack=False)
        return boundary


class YoungCollection:
    """A young collection that trusts the card table, as a generational collector does.

    It marks the young objects (those allocated after ``@young_begins``) reachable from its roots,
    then frees the others (their fields poisoned, the object kept as a tombstone without pointer
    fields), and runs gctoy's heap verifier. The roots are
    what a generational collector has: the stack and the registers (scanned conservatively while
    the program runs; none once ``@main`` has returned), the pointer fields of the old objects whose
    card is dirty, and the module's globals when the spare card is dirty. An old object on a clean
    card is never looked at: a reference it holds to a young object keeps nothing alive.
    """

    def __init__(self, heap: Heap, boundary: int, globals_at: list[tuple[int, int]]) -> None:
        self.heap, self.boundary, self.globals_at = heap, boundary, globals_at
        self.freed: set[int] = set()
        self.collections = 0

    def _young(self, index, value: int) -> int | None:
        if not self.boundary <= value < self.heap.top:
            return None
        obj = index.containing(value)
        return obj if obj is not None and obj not in self.freed else None

    def _pointer_fields(self, obj: int) -> list[int]:
        _, mask = self.heap.header(obj)
        return [v for i, v in enumerate(self.heap.fields(obj)) if mask >> i & 1]

    def collect(self, dirty: set[int], stack: bool) -> None:
        """Mark from the roots, free every young object not reached."""
        machine, heap = self.heap.machine, self.heap
        index = heap.index()
        words: list[int] = []
        if stack:
            words += machine.regs().values()
            low = machine.sp & ~(WORD - 1)
            data = machine.read(low, STACK_TOP - low)
            words += [int.from_bytes(data[k : k + WORD], "little") for k in range(0, len(data) - WORD + 1, WORD)]
        for obj in heap.objects():
            if obj < self.boundary and card_of(obj) in dirty:
                words += self._pointer_fields(obj)
        if CARD_COUNT in dirty:
            for at, count in self.globals_at:
                words += [machine.read_u64(at + WORD * k) for k in range(count)]
        marked: set[int] = set()
        work = [o for o in (self._young(index, w) for w in words) if o is not None]
        while work:
            obj = work.pop()
            if obj in marked:
                continue
            marked.add(obj)
            work += [o for o in (self._young(index, w) for w in self._pointer_fields(obj)) if o is not None]
        for obj in heap.objects():
            if obj >= self.boundary and obj not in marked and obj not in self.freed:
                n, _ = heap.header(obj)
                machine.write(obj - HEADER_SIZE, bytes(WORD))  # a tombstone: no pointer fields
                machine.write(obj, POISON * n)
                self.freed.add(obj)
        self.collections += 1
        problems = heap_problems(heap)  # gctoy's heap verifier: headers, masks, pointers to objects
        if problems:
            raise LabFailure(f"after young collection #{self.collections} the heap verifier finds: {problems[0]}")

    def dangling(self) -> list[tuple[int, int, int]]:
        """The heap verifier's finding: (object, field address, freed object) for every live object's
        pointer field that names a freed young object."""
        found = []
        for obj in self.heap.objects():
            if obj in self.freed:
                continue
            _, mask = self.heap.header(obj)
            for i, value in enumerate(self.heap.fields(obj)):
                if mask >> i & 1 and value in self.freed:
                    found.append((obj, obj + WORD * i, value))
        return found


def _globals(module_text: str, compiled) -> list[tuple[int, int]]:
    """(address, pointer-sized words) of each global of the module (the roots behind the spare card)."""
    module = parse_module(module_text, "lab.ll")
    out = []
    for gv in module.globals:
        ty = gv.value_type
        count = getattr(ty, "count", 1)
        out.append((compiled.image.address_of(gv.name), count))
    return out


def old_to_young(heap: Heap, boundary: int) -> list[tuple[int, int, int]]:
    """Brute force: every (old object, field address, young object) reference in the heap now."""
    found = []
    for obj in heap.objects():
        if obj >= boundary:
            continue
        _, mask = heap.header(obj)
        for i, value in enumerate(heap.fields(obj)):
            if mask >> i & 1 and boundary <= value < heap.top:
                found.append((obj, obj + 8 * i, value))
    return found


def _hint(dirty: set[int], obj: int, field: int, value: int) -> str:
    """What the barrier probably marked instead of the card of ``obj``."""
    if card_of(value) in dirty:
        return (
            f"Card {card_of(value)}, the card of the stored value, is dirty: the barrier must "
            "record where the new reference now lives (the object written into), not what it "
            "points to."
        )
    if card_of(field) in dirty and card_of(field) != card_of(obj):
        return (
            f"Card {card_of(field)}, the card of the field, is dirty: gctoy's scan of a dirty card "
            "starts at the objects that begin in it, so the barrier marks the card of the object "
            "(its first field, `obj`), however far into it the field lies."
        )
    return "Mark cards[(obj - HEAP_BASE) >> CARD_SHIFT] at every store."


def _dangling_message(name: str, student: _StudentRun, dangling: list[tuple[int, int, int]], needed: int) -> str:
    """The GC-stress failure: an old object on a clean card points at a young object the collection freed."""
    obj, field, value = dangling[0]
    dirty = student.cards.dirty()
    return "\n".join(
        [
            f"program {name}, under GC stress (a young collection after every store and one more when @main "
            f"has returned, {student.young.collections} in all, each scanning the stack and the dirty cards, "
            "then the heap verifier):",
            f"the old object at {obj:#x} holds, in its field at {field:#x}, the young object {value:#x}, which a "
            f"young collection freed (its fields are poison now): card {card_of(obj)} of the old object is clean, "
            "so the collection never looked at it, and nothing else kept the young object alive.",
            f"Dangling references: {len(dangling)}, of {needed} old -> young references in the heap. "
            "With a real generational collector the program would later read freed (or reused) memory.",
            _hint(dirty, obj, field, value),
        ]
    )


def check(write_barrier) -> LabReport:
    """Run every program of :data:`PROGRAMS` with ``write_barrier`` at each ``gcwrite``."""
    stores = references = cards = collections = freed = 0
    for name, text in PROGRAMS.items():
        student = _StudentRun(text, write_barrier)
        boundary = student.go()
        dirty = student.cards.dirty()
        bad = {b for b in student.cards.bytes if b not in (0, CARD_DIRTY)}
        if bad:
            raise LabFailure(
                f"program {name}: the card table holds {sorted(bad)}; mark a card with CARD_DIRTY ({CARD_DIRTY})."
            )
        needed = old_to_young(student.heap, boundary)
        dangling = student.young.dangling()
        if dangling:
            raise LabFailure(_dangling_message(name, student, dangling, len(needed)))
        missed = [(o, f, v) for o, f, v in needed if card_of(o) not in dirty]
        if missed:
            obj, field, value = missed[0]
            lines = [
                f"program {name}: the old object at {obj:#x} (card {card_of(obj)}) holds a reference to the "
                f"young object {value:#x} in its field at {field:#x}, but card {card_of(obj)} is clean.",
                f"{len(missed)} of the {len(needed)} old -> young references in the heap are on clean cards: "
                "a young collection scans only dirty cards, so it would not see them, would not update "
                "them when it moves the young objects, and the old objects would point at garbage.",
                _hint(dirty, obj, field, value),
            ]
            raise LabFailure("\n".join(lines))
        reference = _GctoyRun(text)
        reference.go()
        want = reference.dirty()
        if dirty != want:
            extra, lacking = sorted(dirty - want), sorted(want - dirty)
            lines = [
                f"program {name}: every old -> young reference is on a dirty card, but the table is not "
                "the one gctoy-cardmark's barrier leaves."
            ]
            if extra:
                lines.append(
                    f"Dirty cards no store wrote an object in: {extra[:8]}. Each costs a young collection "
                    "a scan for nothing; mark only the card of the object written into."
                )
            if lacking:
                lines.append(
                    f"Cards of objects written into that you left clean: {lacking[:8]}. The contract is "
                    "unconditional: every gcwrite marks its object's card (a store into a global marks "
                    f"the spare card {CARD_COUNT}), whatever generation the value is in; the collector, "
                    "not the barrier, decides what a dirty card means."
                )
            raise LabFailure("\n".join(lines))
        stores += student.calls
        collections += student.young.collections
        freed += len(student.young.freed)
        references += len(needed)
        cards += len(dirty)
    return LabReport(
        "write_barrier",
        [
            f"{len(PROGRAMS)} programs, {stores} reference stores through your barrier",
            f"GC stress: {collections} young collections (after every store, and once more after each program), "
            f"each trusting your cards; {freed} unreachable young objects freed, heap verified: no dangling reference",
            f"{references} old -> young references found by scanning the whole heap, each on a dirty card",
            f"{cards} dirty cards in all, the same cards as gctoy-cardmark's own barrier",
        ],
    )
