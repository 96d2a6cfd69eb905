"""Snapshots of a Runtime's machine for the trace: frames with their GC slots, the heap's objects
named by letter, and what a collection moved (checked against a replay of Cheney's algorithm)."""

from __future__ import annotations

import struct
from collections.abc import Callable

from gctoy.emu.image import RETURN_TRAP, STUB_BASE, STUB_PAGE_SIZE, STUB_SIZE
from gctoy.runtime.collector import Collection, Slot, read_slot
from gctoy.runtime.heap import HEADER_SIZE, POISON_WORD
from gctoy.runtime.run import Runtime
from gctoy.runtime.stackwalk import frame_slots, walk
from gctoy.runtime.trace_code import TraceCode
from gctoy.runtime.trace_views import (
    WORD,
    CollectionView,
    FrameView,
    GCPair,
    HeapObject,
    HeapView,
    MachineState,
    SlotUpdate,
    StackWord,
    StateKind,
    TraceError,
)


class Recorder:
    """Drives a Runtime's machine from breakpoint to breakpoint and takes the snapshots."""

    def __init__(self, runtime: Runtime, code: TraceCode, radius: int, max_states: int) -> None:
        self.rt, self.m, self.heap = runtime, runtime.machine, runtime.heap
        self.code, self.radius, self.max_states = code, radius, max_states
        self.states: list[MachineState] = []
        self.prev_regs: dict[str, int] = {}
        self.prev_words: dict[int, int] = {}
        self.names: dict[int, str] = {}  # object address -> its letter, for the current space
        self.named = 0

    # ---- frames

    def _frame_view(self, function: str, sp: int, stack_size: int, record: str | None, pairs: tuple) -> FrameView:
        roles: dict[int, list[str]] = {}
        gc_pairs = []
        for k, (base, derived) in enumerate(pairs):
            for slot, role in ((base, "base"), (derived, "derived")):
                if isinstance(slot, int):
                    roles.setdefault(slot, []).append(f"{role} of pair {k}")
            gc_pairs.append(
                GCPair(
                    k,
                    self.code.slot_text(base, sp, function),
                    self.code.slot_text(derived, sp, function),
                    None if base is None else read_slot(self.m, base),
                    None if derived is None else read_slot(self.m, derived),
                )
            )
        names = self.code.slot_names.get(function, {})
        words = []
        for address in range(sp, sp + stack_size + WORD, WORD):
            off = address - sp
            value = self.m.read_u64(address)
            name = "return address" if off == stack_size else names.get(off, "")
            before = self.prev_words.get(address)
            words.append(
                StackWord(
                    address,
                    off,
                    value,
                    name,
                    tuple(roles.get(address, ())),
                    before if before is not None and before != value else None,
                )
            )
        return FrameView(function, sp, stack_size, record, tuple(gc_pairs), tuple(words))

    def _frames(self, focus_ra: int | None) -> tuple[FrameView | None, tuple[FrameView, ...]]:
        """The current frame (and, inside the runtime, the outer compiled frames)."""
        m, code = self.m, self.code
        pc = m.pc
        if STUB_BASE <= pc < STUB_BASE + STUB_PAGE_SIZE:
            frames = walk(m, code.table)
            views = [
                self._frame_view(
                    fr.site.name,
                    fr.sp,
                    fr.site.function.stack_size,
                    code.statepoint_label.get(fr.return_address),
                    fr.pairs,
                )
                for fr in frames
            ]
            return (views[0] if views else None), tuple(views[1:])
        fn = code.function_at(pc)
        if fn is None:
            return None, ()
        # gctoy's frames (codegen/frame.py, frame_ra.py): rsp does not move in the body (arguments are
        # stored, not pushed), so there rsp + stack size is the return address's slot. In the prologue
        # and in an epilogue it is not: there is no frame to show.
        sp, size = m.sp, fn.frame.stack_size
        if not code.in_body(pc):
            return None, ()
        record, pairs = None, ()
        if focus_ra is not None and code.function_at(focus_ra) is fn:
            site = code.table.lookup(focus_ra)
            pairs, _ = frame_slots(m, site, sp, innermost=True)
            record = code.statepoint_label.get(focus_ra)
        return self._frame_view(fn.name, sp, size, record, pairs), ()

    # ---- heap

    def _name(self) -> str:
        n, letters = self.named, ""
        self.named += 1
        while True:
            letters = chr(ord("A") + n % 26) + letters
            n = n // 26 - 1
            if n < 0:
                return letters

    def _heap_view(self, collection: CollectionView | None) -> HeapView:
        heap = self.heap
        copied_from: dict[int, int] = {}
        if collection is not None:
            copied_from = {new: old for _, old, new in collection.forwarding}
            self.names = {new: name for name, _, new in collection.forwarding}
        objects = []
        for obj in heap.objects():
            n, mask = heap.header(obj)
            fields = struct.unpack(f"<{n}Q", self.m.read(obj, WORD * n)) if n else ()
            if obj not in self.names:
                self.names[obj] = self._name()
            objects.append(HeapObject(self.names[obj], obj, n, mask, tuple(fields), copied_from.get(obj)))
        other = heap.other
        return HeapView(
            (heap.space.base, heap.top),
            (other.base, other.end),
            tuple(objects),
            self._poisoned_prefix(other.base, other.end),
        )

    def _poisoned_prefix(self, base: int, end: int, chunk: int = 0x1000) -> int:
        """How many bytes from ``base`` hold nothing but the poison word (read a page at a time)."""
        done = 0
        while base + done < end:
            data = self.m.read(base + done, min(chunk, end - base - done))
            for at in range(0, len(data), WORD):
                if struct.unpack_from("<Q", data, at)[0] != POISON_WORD:
                    return done + at
            done += len(data)
        return done

    # ---- one snapshot

    def snap(
        self, kind: StateKind, title: str, *, focus_ra: int | None = None, collection: CollectionView | None = None
    ) -> MachineState:
        """Record the machine as it is now (``focus_ra``: name the GC slots of that statepoint's record)."""
        if len(self.states) >= self.max_states:
            raise TraceError(f"more than {self.max_states} states: narrow the focus window or the program")
        m, code = self.m, self.code
        pc = m.pc
        runtime_call = None
        if STUB_BASE <= pc < STUB_BASE + STUB_PAGE_SIZE:
            runtime_call = code.stub_names.get(pc - (pc - STUB_BASE) % STUB_SIZE)
        if runtime_call is not None:
            ra = m.read_u64(m.sp)
            call = code.call_before(ra)
            disasm = code.window(call.address, "caller", self.radius) if call else ()
            where = f"{runtime_call} (runtime)"
        elif pc in code.index:
            disasm = code.window(pc, "pc", self.radius)
            fn = code.function_at(pc)
            where = f"{fn.name}+{pc - fn.address:#x}" if fn else f"{pc:#x}"
        else:
            disasm, where = (), "returned" if pc == RETURN_TRAP else f"{pc:#x}"
        regs = m.regs()
        changed = tuple(r for r, v in regs.items() if r in self.prev_regs and self.prev_regs[r] != v)
        frame, outer = self._frames(focus_ra)
        state = MachineState(
            len(self.states),
            kind,
            title,
            pc,
            where,
            runtime_call,
            m.instructions,
            disasm,
            tuple(regs.items()),
            changed,
            frame,
            outer,
            self._heap_view(collection),
            collection,
            tuple(self.rt.printed),
        )
        self.states.append(state)
        self.prev_regs = regs
        self.prev_words = {w.address: w.value for f in (frame, *outer) if f for w in f.words}
        return state


def cheney_forwarding(objects: tuple[HeapObject, ...], roots: list[int], to_base: int) -> list[tuple[int, int]]:
    """Replay Cheney's algorithm on a heap snapshot: (old, new) for every object copied, in copy order.

    Roots are forwarded in the order given; then the scan pointer walks the copies, forwarding
    every pointer field. The collector does exactly this on guest memory; the replay lets a
    view say which object went where after from-space has been poisoned.
    """
    by_address = {o.address: o for o in objects}
    forwarded: dict[int, int] = {}
    order: list[HeapObject] = []
    top = to_base

    def forward(ptr: int) -> None:
        nonlocal top
        obj = by_address.get(ptr)
        if obj is None or ptr in forwarded:
            return
        forwarded[ptr] = top + HEADER_SIZE
        top += HEADER_SIZE + WORD * obj.nfields
        order.append(obj)

    for root in roots:
        forward(root)
    scan = 0
    while scan < len(order):
        obj = order[scan]
        for i, value in enumerate(obj.fields):
            if obj.is_pointer_field(i):
                forward(value)
        scan += 1
    return [(o.address, forwarded[o.address]) for o in order]


def collection_view(done: Collection, before: HeapView, describe: Callable[[Slot], str]) -> CollectionView:
    """What one collection did, checked against a replay of Cheney's algorithm on the heap before it."""
    forwarding = cheney_forwarding(before.objects, [old for _, old, _ in done.roots], done.to_space[0])
    moved = dict(forwarding)
    names = {o.address: o.name for o in before.objects}
    for slot, old, new in done.roots:
        if moved.get(old, old) != new:
            raise TraceError(
                f"the collector moved root {describe(slot)} to {new:#x}; Cheney's order gives {moved.get(old, old):#x}"
            )
    garbage = tuple((o.name, o.address) for o in before.objects if o.address not in moved)
    return CollectionView(
        done.index,
        tuple(SlotUpdate(describe(s), old, new) for s, old, new in done.roots),
        tuple(SlotUpdate(describe(s), old, new) for s, old, new in done.derived),
        tuple((names[old], old, new) for old, new in forwarding),
        garbage,
        done.objects_copied,
        done.bytes_copied,
        done.from_space,
        done.to_space,
    )
