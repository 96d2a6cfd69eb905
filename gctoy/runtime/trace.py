"""Record a program's run under the moving collector as a list of deterministic machine snapshots.

A :class:`MachineState` is everything a stepping view shows at one moment: the pc and the
disassembly around it, the registers, the current frame's stack words (with the slots the
stack map names as GC roots marked), the objects of the current semispace and, right after
a collection, what moved where. :func:`record_trace` runs a program and keeps a state at
each interesting point::

    start ──run──> safepoint ──int3──> collected ──run──> safepoint ──> ... ──> returned
                   (the runtime has      (slots rewritten,
                    control; before)      objects in to-space)

and, around one chosen statepoint (the *focus*), a state after every single instruction, so
the spill of the live pointers before the call and the reload of the relocated values after
it can be watched one instruction at a time. The machine runs at full speed between stops:
only the runtime's stubs and the first instruction of the focus window are breakpoints.

Every address comes from the emulator's fixed memory map, so two recordings of the same
program compare equal.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from gctoy.emu.disasm import Insn, disassemble
from gctoy.emu.image import CODE_BASE, RETURN_TRAP, STUB_BASE, STUB_PAGE_SIZE, STUB_SIZE
from gctoy.emu.budget import DEFAULT_MAX_SECONDS
from gctoy.errors import GCToyError
from gctoy.ir.instructions import Phi
from gctoy.runtime.collector import Collection, Slot, read_slot
from gctoy.runtime.heap import HEADER_SIZE, POISON_WORD
from gctoy.runtime.run import Runtime, load_compiled
from gctoy.runtime.stackwalk import Frame, SiteTable, frame_slots, walk

WORD = 8
DEFAULT_RS4GC = "rewrite-statepoints-for-gc<remat-threshold=0>"
_CALL_MNEMONICS = ("call",)

#: The chapter's example: three list nodes {value, next} built in a loop, a scratch object that
#: dies at once in every iteration, a derived pointer to the head's ``next`` field kept live
#: across a forced collection, then a walk that prints 30, 20, 10 and a return of 60 + 20.
LIST3 = """
declare i8 addrspace(1)* @gc_alloc(i64, i64)
declare void @print_i64(i64)
declare void @gc_collect()

define i64 @main() gc "statepoint-example" {
entry:
  br label %build
build:
  %i = phi i64 [1, %entry], [%i1, %build]
  %head = phi i8 addrspace(1)* [null, %entry], [%node, %build]
  %scratch = call i8 addrspace(1)* @gc_alloc(i64 1, i64 0)
  %node = call i8 addrspace(1)* @gc_alloc(i64 2, i64 2)
  %vp = bitcast i8 addrspace(1)* %node to i64 addrspace(1)*
  %v = mul i64 %i, 10
  store i64 %v, i64 addrspace(1)* %vp
  %np0 = getelementptr i8, i8 addrspace(1)* %node, i64 8
  %np = bitcast i8 addrspace(1)* %np0 to i8 addrspace(1)* addrspace(1)*
  store i8 addrspace(1)* %head, i8 addrspace(1)* addrspace(1)* %np
  %i1 = add i64 %i, 1
  %more = icmp sle i64 %i1, 3
  br i1 %more, label %build, label %collect
collect:
  %link0 = getelementptr i8, i8 addrspace(1)* %node, i64 8
  call void @gc_collect()
  br label %walk
walk:
  %p = phi i8 addrspace(1)* [%node, %collect], [%next, %walk]
  %s = phi i64 [0, %collect], [%s1, %walk]
  %pv = bitcast i8 addrspace(1)* %p to i64 addrspace(1)*
  %x = load i64, i64 addrspace(1)* %pv
  call void @print_i64(i64 %x)
  %s1 = add i64 %s, %x
  %pn0 = getelementptr i8, i8 addrspace(1)* %p, i64 8
  %pn = bitcast i8 addrspace(1)* %pn0 to i8 addrspace(1)* addrspace(1)*
  %next = load i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %pn
  %done = icmp eq i8 addrspace(1)* %next, null
  br i1 %done, label %out, label %walk
out:
  %link = bitcast i8 addrspace(1)* %link0 to i8 addrspace(1)* addrspace(1)*
  %second = load i8 addrspace(1)*, i8 addrspace(1)* addrspace(1)* %link
  %sv = bitcast i8 addrspace(1)* %second to i64 addrspace(1)*
  %y = load i64, i64 addrspace(1)* %sv
  %r = add i64 %s1, %y
  ret i64 %r
}
"""


class TraceError(GCToyError):
    """A program the recorder cannot follow (no statepoints, an unknown focus, too many states)."""


# --------------------------------------------------------------------------- snapshot parts


@dataclass(frozen=True)
class DisasmLine:
    """One instruction of the disassembly window."""

    address: int
    hex: str
    text: str
    labels: tuple[str, ...]  # code labels placed at this address
    marker: str  # "pc": executes next; "caller": the call the runtime was entered from; ""
    statepoint: str | None  # the statepoint label when this is a statepoint's call
    target: str | None  # what a direct call calls ("gc_collect", "build")


@dataclass(frozen=True)
class StackWord:
    """One 8-byte word of the current frame."""

    address: int
    offset: int  # from the frame's rsp
    value: int
    name: str  # the IR value whose slot this is, "saved rbp", "return address", or ""
    roles: tuple[str, ...]  # e.g. ("base of pair 0", "derived of pair 1")
    previous: int | None  # the value in the previous state, when it changed


@dataclass(frozen=True)
class GCPair:
    """One (base, derived) pair of a stack map record, resolved to slots of this frame."""

    index: int
    base: str  # slot description: "[rsp+40] %node3", "rax", or "constant"
    derived: str
    base_value: int | None
    derived_value: int | None


@dataclass(frozen=True)
class FrameView:
    """A compiled frame: its words, and the GC pairs of the record that describes it here."""

    function: str
    sp: int
    stack_size: int
    record: str | None  # the statepoint label whose record names the pairs (None: no record applies)
    pairs: tuple[GCPair, ...]
    words: tuple[StackWord, ...]


@dataclass(frozen=True)
class HeapObject:
    """One object of the current space."""

    name: str  # a letter that follows the object through every move: A, B, ..., Z, AA, ...
    address: int  # field 0 (what a guest pointer holds)
    nfields: int
    ptrmask: int
    fields: tuple[int, ...]
    copied_from: int | None  # set in the state right after the collection that copied it

    def is_pointer_field(self, i: int) -> bool:
        """Whether field ``i`` holds a GC pointer (bit ``i`` of the mask)."""
        return bool(self.ptrmask >> i & 1)

    @property
    def header_address(self) -> int:
        return self.address - HEADER_SIZE


@dataclass(frozen=True)
class HeapView:
    """The current semispace, its objects, and the idle (from-) space."""

    space: tuple[int, int]  # (base, allocation pointer) of the current space
    other: tuple[int, int]  # (base, end) of the idle space
    objects: tuple[HeapObject, ...]
    other_poisoned_bytes: int  # how many bytes from the idle space's base hold the poison word


@dataclass(frozen=True)
class SlotUpdate:
    """A root or derived slot before and after one collection."""

    slot: str
    old: int
    new: int


@dataclass(frozen=True)
class CollectionView:
    """What one collection did, in the words the chapter uses."""

    index: int
    roots: tuple[SlotUpdate, ...]
    derived: tuple[SlotUpdate, ...]
    forwarding: tuple[tuple[str, int, int], ...]  # (object, old address, new address) in copy order
    garbage: tuple[tuple[str, int], ...]  # (object, old address): nothing reached it, so it was not copied
    objects_copied: int
    bytes_copied: int
    from_space: tuple[int, int]
    to_space: tuple[int, int]


@dataclass(frozen=True)
class MachineState:
    """Everything the stepper shows at one moment of the run."""

    index: int
    kind: str  # "start", "step", "safepoint", "collected", "returned"
    title: str
    pc: int
    where: str  # "main+0x73" or "gc_collect (runtime)"
    runtime_call: str | None  # the native the machine is in, if any
    instructions: int
    disasm: tuple[DisasmLine, ...]
    registers: tuple[tuple[str, int], ...]
    changed_registers: tuple[str, ...]
    frame: FrameView | None
    outer_frames: tuple[FrameView, ...]
    heap: HeapView
    collection: CollectionView | None
    printed: tuple[int, ...]


@dataclass(frozen=True)
class StatepointSite:
    """A statepoint of the compiled program: label, return address, callee, its record's pairs."""

    label: str
    function: str
    return_address: int
    callee: str
    pairs: tuple[tuple[str, str], ...]  # (base, derived) slot descriptions


@dataclass(frozen=True)
class Trace:
    """A recorded run: the states, what the program printed and returned, and its statepoints."""

    states: tuple[MachineState, ...]
    printed: tuple[int, ...]
    result: int
    collections: int
    stats: str
    ir_text: str
    asm_text: str
    statepoints: tuple[StatepointSite, ...]
    focus: str | None

    def __len__(self) -> int:
        return len(self.states)

    def indices(self, kind: str) -> list[int]:
        """The indices of the states of one kind."""
        return [s.index for s in self.states if s.kind == kind]


# --------------------------------------------------------------------------- the program's code


class _Code:
    """The compiled program's code: instructions, labels, frames and statepoints, by address."""

    def __init__(self, compiled, table: SiteTable, stub_names: dict[int, str]) -> None:
        image = compiled.image
        self.insns: list[Insn] = disassemble(image.code, CODE_BASE, image.arch)
        self.index = {insn.address: k for k, insn in enumerate(self.insns)}
        self.labels: dict[int, list[str]] = {}
        end = self.end = CODE_BASE + len(image.code)
        for name, address in sorted(image.symbols.items(), key=lambda kv: (kv[1], kv[0])):
            if CODE_BASE <= address < end:
                self.labels.setdefault(address, []).append(name)
        self.functions = sorted(compiled.functions, key=lambda f: f.address)
        self.stub_names = stub_names
        self.table = table
        self.statepoint_label: dict[int, str] = {}  # return address -> label
        for fn in compiled.functions:
            for label in fn.statepoint_labels:
                self.statepoint_label[image.address_of(label)] = label
        self.slot_names: dict[str, dict[int, str]] = {}
        for fn in compiled.functions:
            frame, names = fn.frame, {}
            for alloca in frame.allocas:
                names[frame.alloca(alloca)] = f"alloca %{alloca.name}"
            for value in frame.values:
                names[frame.slot(value)] = f"%{value.name}"
                if isinstance(value, Phi):
                    names[frame.shadow(value)] = f"shadow of %{value.name}"
            self.slot_names[fn.name] = names

    def slot_text(self, slot: Slot | None, frame_sp: int, function: str) -> str:
        """A slot as the views print it: ``[rsp+40] %node3``, a register name, or ``constant``."""
        if slot is None:
            return "constant"
        if isinstance(slot, str):
            return slot
        off = slot - frame_sp
        name = self.slot_names.get(function, {}).get(off, "")
        return f"[rsp+{off}] {name}".rstrip()

    def slot_in_frames(self, slot: Slot, frames: list[Frame]) -> str:
        """``slot_text`` for a slot of any of the walked frames (named after the frame's function)."""
        for fr in frames:
            if isinstance(slot, int) and fr.sp <= slot < fr.sp + fr.site.function.stack_size:
                prefix = "" if fr is frames[0] else f"{fr.site.name}: "
                return prefix + self.slot_text(slot, fr.sp, fr.site.name)
        return slot if isinstance(slot, str) else f"[{slot:#x}]"

    def function_at(self, pc: int):
        """The compiled function whose code holds ``pc`` (None outside the code)."""
        found = None
        for fn in self.functions:
            if fn.address <= pc:
                found = fn
        return found if pc < self.end else None

    def call_before(self, return_address: int) -> Insn | None:
        """The call instruction that returns to ``return_address``."""
        k = self.index.get(return_address)
        return self.insns[k - 1] if k else None

    def callee_of(self, call: Insn) -> str:
        """The native or function a direct call goes to."""
        try:
            target = int(call.op_str, 0)
        except ValueError:
            return call.op_str
        if target in self.stub_names:
            return self.stub_names[target]
        return self.labels.get(target, [f"{target:#x}"])[0]

    def window(self, center: int, marker: str, radius: int) -> tuple[DisasmLine, ...]:
        """The instructions around the one at ``center``, that one marked."""
        k = self.index[center]
        lines = []
        for insn in self.insns[max(0, k - radius) : k + radius + 1]:
            nxt = insn.address + insn.size
            is_call = insn.mnemonic in _CALL_MNEMONICS
            lines.append(DisasmLine(
                insn.address, insn.bytes.hex(" "), insn.text, tuple(self.labels.get(insn.address, ())),
                marker if insn.address == center else "", self.statepoint_label.get(nxt) if is_call else None,
                self.callee_of(insn) if is_call else None,
            ))
        return tuple(lines)


# --------------------------------------------------------------------------- the recorder


class _Recorder:
    """Drives a Runtime's machine from breakpoint to breakpoint and takes the snapshots."""

    def __init__(self, runtime: Runtime, code: _Code, radius: int, max_states: int) -> None:
        self.rt, self.m, self.heap = runtime, runtime.machine, runtime.heap
        self.code, self.radius, self.max_states = code, radius, max_states
        self.states: list[MachineState] = []
        self.prev_regs: dict[str, int] = {}
        self.prev_words: dict[int, int] = {}
        self.names: dict[int, str] = {}  # object address -> its letter, for the current space
        self.named = 0

    # ---- frames

    def _frame_view(self, function: str, sp: int, stack_size: int, record: str | None,
                    pairs: tuple) -> FrameView:
        roles: dict[int, list[str]] = {}
        gc_pairs = []
        for k, (base, derived) in enumerate(pairs):
            for slot, role in ((base, "base"), (derived, "derived")):
                if isinstance(slot, int):
                    roles.setdefault(slot, []).append(f"{role} of pair {k}")
            gc_pairs.append(GCPair(
                k, self.code.slot_text(base, sp, function), self.code.slot_text(derived, sp, function),
                None if base is None else read_slot(self.m, base),
                None if derived is None else read_slot(self.m, derived),
            ))
        names = self.code.slot_names.get(function, {})
        words = []
        for address in range(sp, sp + stack_size + WORD, WORD):
            off = address - sp
            value = self.m.read_u64(address)
            if off == stack_size:
                name = "return address"
            elif off == stack_size - WORD:
                name = "saved rbp"
            else:
                name = names.get(off, "")
            before = self.prev_words.get(address)
            words.append(StackWord(address, off, value, name, tuple(roles.get(address, ())),
                                   before if before is not None and before != value else None))
        return FrameView(function, sp, stack_size, record, tuple(gc_pairs), tuple(words))

    def _frames(self, focus_ra: int | None) -> tuple[FrameView | None, tuple[FrameView, ...]]:
        """The current frame (and, inside the runtime, the outer compiled frames)."""
        m, code = self.m, self.code
        pc = m.pc
        if STUB_BASE <= pc < STUB_BASE + STUB_PAGE_SIZE:
            frames = walk(m, code.table)
            views = [
                self._frame_view(fr.site.name, fr.sp, fr.site.function.stack_size,
                                 code.statepoint_label.get(fr.return_address), fr.pairs)
                for fr in frames
            ]
            return (views[0] if views else None), tuple(views[1:])
        fn = code.function_at(pc)
        if fn is None:
            return None, ()
        # gctoy's frames (codegen/frame.py): push rbp; mov rbp, rsp; sub rsp, N, so in the body
        #     rbp = rsp + stack size - 8
        # and rsp does not move (arguments are stored, not pushed). In the prologue and after the
        # epilogue's ``leave`` the equation fails: there is no frame to show.
        sp, size = m.sp, fn.frame.stack_size
        if m.reg("rbp") != sp + size - WORD:
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
        return HeapView((heap.space.base, heap.top), (other.base, other.end), tuple(objects),
                        self._poisoned_prefix(other.base, other.end))

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

    def snap(self, kind: str, title: str, *, focus_ra: int | None = None,
             collection: CollectionView | None = None) -> MachineState:
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
            len(self.states), kind, title, pc, where, runtime_call, m.instructions, disasm,
            tuple(regs.items()), changed, frame, outer, self._heap_view(collection), collection,
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


def _collection_view(done: Collection, before: HeapView, describe) -> CollectionView:
    forwarding = cheney_forwarding(before.objects, [old for _, old, _ in done.roots], done.to_space[0])
    moved = dict(forwarding)
    names = {o.address: o.name for o in before.objects}
    for slot, old, new in done.roots:
        if moved.get(old, old) != new:
            raise TraceError(f"the collector moved root {describe(slot)} to {new:#x}; Cheney's order gives "
                             f"{moved.get(old, old):#x}")
    garbage = tuple((o.name, o.address) for o in before.objects if o.address not in moved)
    return CollectionView(
        done.index,
        tuple(SlotUpdate(describe(s), old, new) for s, old, new in done.roots),
        tuple(SlotUpdate(describe(s), old, new) for s, old, new in done.derived),
        tuple((names[old], old, new) for old, new in forwarding), garbage, done.objects_copied, done.bytes_copied, done.from_space, done.to_space,
    )


def prepare_module(program, rs4gc: str = DEFAULT_RS4GC):
    """Parse IR text (a Module passes through) and run RS4GC when no GC function has statepoints yet."""
    from gctoy.ir import parse_module
    from gctoy.ir.statepoint import statepoints
    from gctoy.passes import run
    from gctoy.passes.rewrite_statepoints import STATEPOINT_STRATEGIES

    module = parse_module(program) if isinstance(program, str) else program
    gc_functions = [f for f in module.definitions() if f.gc in STATEPOINT_STRATEGIES]
    if gc_functions and not any(statepoints(f) for f in gc_functions):
        run(module, rs4gc)
    return module


def record_trace(
    program,
    *,
    entry: str = "main",
    gc: str = "semispace",
    stress: bool = False,
    verify: bool = True,
    semispace_size: int = 0x1000,
    focus: str | None = None,
    steps_before: int = 4,
    steps_after: int = 5,
    radius: int = 6,
    rs4gc: str = DEFAULT_RS4GC,
    max_states: int = 400,
    max_instructions: int = 1_000_000,
    max_seconds: float | None = DEFAULT_MAX_SECONDS,
) -> Trace:
    """Run ``program`` (IR text or a Module) under the collector and record its states.

    States are taken at the entry, at every call into the runtime (``safepoint``: the runtime
    has control, nothing has moved yet), right after every collection (``collected``), at the
    return, and after each single instruction from ``steps_before`` instructions before the
    ``focus`` statepoint's call to ``steps_after`` instructions after its return address.
    ``focus`` is a statepoint label such as ``"main.sp3"``; by default the first statepoint that
    calls ``gc_collect`` (or else the first statepoint). A module in the abstract machine model is
    rewritten with ``rs4gc`` first (by default with rematerialisation off, so derived pointers
    are relocated rather than recomputed). ``max_instructions`` and ``max_seconds`` bound the whole recording.
    """
    from gctoy.codegen import compile_module
    from gctoy.ir import print_module

    module = prepare_module(program, rs4gc)
    compiled = compile_module(module)
    loaded = load_compiled(module)
    if loaded.stackmap is None:
        raise TraceError("the program has no statepoints, so there is nothing for the collector to see")
    runtime = Runtime(loaded, gc=gc, stress=stress, verify=verify, semispace_size=semispace_size)
    m = runtime.machine
    stub_names = {n.address: n.name for n in m.natives.values()}
    code = _Code(compiled, runtime.sites, stub_names)

    sites = []
    for ra, label in sorted(code.statepoint_label.items()):
        site = runtime.sites.lookup(ra)
        call = code.call_before(ra)
        fn = code.function_at(ra)
        pairs = frame_slots(m, site, 0, innermost=True)[0]
        sites.append(StatepointSite(label, fn.name, ra, code.callee_of(call) if call else "?", tuple(
            (code.slot_text(b, 0, fn.name), code.slot_text(d, 0, fn.name)) for b, d in pairs)))
    if focus is None:
        collecting = [s for s in sites if s.callee == "gc_collect"]
        focus = (collecting or sites)[0].label
    by_label = {s.label: s for s in sites}
    if focus not in by_label:
        raise TraceError(f"no statepoint {focus!r}; the program has {', '.join(by_label)}")
    focus_ra = by_label[focus].return_address
    call = code.call_before(focus_ra)
    k = code.index[call.address]
    first = code.index[code.function_at(focus_ra).address] + 3  # after the prologue
    window_start = code.insns[max(first, k - steps_before)].address
    steps_before = k - code.index[window_start]

    rec = _Recorder(runtime, code, radius, max_states)
    m.enter(entry)
    m.start_budget(max_instructions, max_seconds)  # spent: BudgetExceeded names the place
    for address in stub_names:
        m.add_breakpoint(address)
    m.add_breakpoint(window_start)
    rec.snap("start", f"@{entry} is entered: nothing allocated yet")

    stepping = window_done = False
    after_left: int | None = None  # steps still to take after the return address (None: not back yet)
    step_over: tuple[int, int] | None = None  # (return address, rsp after the return) of a stepped-over call
    while True:
        if stepping:
            m.step()
        else:
            m.run()
        pc = m.pc
        if pc == RETURN_TRAP:
            break
        if pc in stub_names:
            name = stub_names[pc]
            label = code.statepoint_label.get(m.read_u64(m.sp), "?")
            nfr = len(walk(m, code.table))
            rec.snap("safepoint", f"{label}: call {name}; the runtime has control, {nfr} compiled "
                                  f"frame{'s' if nfr != 1 else ''} on the stack, nothing has moved yet")
            before = rec.states[-1].heap
            count = len(runtime.collections)
            m.step()  # the stub's int3: the native runs here (and may collect)
            if len(runtime.collections) > count:
                done = runtime.collections[-1]
                frames = walk(m, code.table)
                view = _collection_view(done, before, lambda s: code.slot_in_frames(s, frames))
                moved = sum(u.old != u.new for u in view.roots + view.derived)
                copies = done.objects_copied
                rec.snap("collected", f"collection #{done.index} inside {name}: {copies} "
                                      f"object{'s' if copies != 1 else ''} copied ({done.bytes_copied} bytes), "
                                      f"{moved} slot{'s' if moved != 1 else ''} rewritten",
                         collection=view)
            elif stepping:
                rec.snap("step", f"{name} is done (no collection); the stub's ret is next")
            continue
        if step_over is not None and pc == step_over[0]:
            if m.sp != step_over[1]:
                continue  # a deeper activation returned to the same place: keep running
            m.remove_breakpoint(pc)
            step_over, stepping = None, True
        if pc == window_start and not window_done:
            m.remove_breakpoint(window_start)
            stepping = window_done = True
            rec.snap("step", f"{steps_before} instruction{'s' if steps_before != 1 else ''} before the call of "
                             f"{focus}: single-stepping from here",
                     focus_ra=focus_ra)
            continue
        if not stepping:
            continue
        insn = code.insns[code.index[pc]] if pc in code.index else None
        if pc == focus_ra:
            after_left = steps_after
            title = f"back at {focus}, the return address: relocated values are reloaded from their slots"
        else:
            title = f"executed one instruction; next: {insn.text}" if insn else f"stepped to {pc:#x}"
            if after_left is not None:
                after_left -= 1
        rec.snap("step", title, focus_ra=focus_ra)
        if after_left == 0:
            stepping = False
        elif insn is not None and insn.mnemonic in _CALL_MNEMONICS and code.callee_of(insn) not in stub_names.values():
            # a call of compiled code inside the window: run it at full speed, resume stepping on return
            step_over = (insn.address + insn.size, m.sp)
            m.add_breakpoint(step_over[0])
            stepping = False
    runtime.stats.instructions = m.instructions
    result = m.signed(m.return_value())
    rec.snap("returned", f"@{entry} returned {result}")
    return Trace(
        tuple(rec.states), tuple(runtime.printed), result, runtime.stats.collections,
        runtime.stats.summary(), print_module(module), compiled.asm_text, tuple(sites), focus,
    )

