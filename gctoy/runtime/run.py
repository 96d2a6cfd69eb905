"""Run a compiled object under the guest runtime: natives, heap, collector, stack walker.

The guest ABI (every program is written against it):

    ptr addrspace(1) @gc_alloc(i64 %nfields, i64 %ptrmask)  a zero-filled object of nfields
                                     8-byte fields; bit i of ptrmask set iff field i holds a
                                     GC pointer; returns the address of field 0
    void @do_safepoint()             the poll's slow path; collects under --stress
    void @gc_collect()               always collects
    void @print_i64(i64)             appends a line to the output
    i64 @main()                      the entry point

Each is a Python function behind a trap stub. With ``gc="semispace"`` a collection walks
the compiled frames (stackwalk.py) using the object's own stack map, copies the live
objects (collector.py) and rewrites every base and derived slot. A program lowered for a
shadow stack (no stack map, a ``@llvm_gc_root_chain``) has its roots found by walking that
chain instead (shadowstack.py); the root finder is the only part that differs (RootFinder).
``stress`` collects on every call into the runtime that may collect (for stack maps: one
that comes from a statepoint); ``verify`` runs the heap verifier
after each collection. ``gc="none"`` never collects (the heap must hold everything).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

from gctoy.emu import Machine
from gctoy.emu.budget import DEFAULT_MAX_INSTRUCTIONS, DEFAULT_MAX_SECONDS
from gctoy.errors import GCToyError
from gctoy.runtime.cfi import DWARF_RSP, FunctionUnwind, UnwindRow, UnwindTable
from gctoy.runtime.collector import Collection, CollectionLog, Collector, GCStats, Slot
from gctoy.runtime.elfload import LoadedObject, load_object
from gctoy.runtime.heap import DEFAULT_SEMISPACE, Heap, OutOfMemory, object_size
from gctoy.runtime.owner import MachineOwner
from gctoy.runtime.shadowstack import ROOT_CHAIN, ShadowStackRoots, elf_data_symbols
from gctoy.runtime.stackwalk import SiteTable, StackWalkError, all_base_slots, roots_of, walk
from gctoy.runtime.verify_heap import verify_heap

RUNTIME_ENTRIES = ("gc_alloc", "do_safepoint", "gc_collect", "print_i64")
#: what a runtime does when the heap is full: copy the live objects (walking the roots), or give up
GCMode = Literal["semispace", "none"]
GC_MODES: tuple[GCMode, ...] = ("semispace", "none")


class UnsupportedProgram(GCToyError):
    """A program the runtime cannot run (an unknown external, a bad mode)."""


class RootFinder(Protocol):
    """How a collection finds its roots: the one part in which the GC designs differ."""

    design: str

    def may_collect(self, machine) -> bool:
        """Whether the runtime call now in progress may collect (its caller's pointers are findable)."""

    def find(self, machine) -> tuple[list[Slot], list[tuple[Slot, Slot]]]:
        """Base slots and (derived slot, base slot) pairs for the collector."""

    def all_slots(self, machine) -> Sequence[Slot]:
        """Every slot the design names as a base, found afresh (for the heap verifier)."""


class StackMapRoots:
    """Roots from a stack map: frames walked by return address, slots from each statepoint's record."""

    design = "statepoint"

    def __init__(self, sites: SiteTable | None) -> None:
        self.sites = sites

    def may_collect(self, machine) -> bool:
        """Only when the runtime call returns to a statepoint (a recorded call site)."""
        return self.sites is not None and machine.read_u64(machine.sp) in self.sites

    def find(self, machine) -> tuple[list[Slot], list[tuple[Slot, Slot]]]:
        """Walk the frames; their base and derived slots."""
        return roots_of(walk(machine, self._sites()))

    def all_slots(self, machine) -> list[Slot]:
        """Every slot the stack map records as a base."""
        return all_base_slots(walk(machine, self._sites()))

    def _sites(self) -> SiteTable:
        if self.sites is None:
            raise StackWalkError(
                'the program has no stack map (no function with gc "statepoint-example" has a '
                "statepoint), so the collector cannot find its roots"
            )
        return self.sites


def roots_for(loaded: LoadedObject, symbols: dict[str, int] | None = None) -> RootFinder:
    """The stack map when the object has one, else the shadow stack when it has a root chain."""
    symbols = loaded.image.symbols if symbols is None else symbols
    if loaded.stackmap is None and ROOT_CHAIN in symbols:
        return ShadowStackRoots.for_symbols(symbols)
    sites = SiteTable(loaded.stackmap, loaded.function_names(), loaded.unwind) if loaded.stackmap else None
    return StackMapRoots(sites)


@dataclass
class RunStats:
    """Counters of one run."""

    instructions: int = 0
    runtime_calls: int = 0
    objects_allocated: int = 0
    bytes_allocated: int = 0
    gc: GCStats = field(default_factory=GCStats)
    verified: int = 0
    records_dropped: int = 0  # collection records let go (CollectionLog keeps the last few)

    @property
    def collections(self) -> int:
        return self.gc.collections

    def summary(self) -> str:
        g = self.gc
        return (
            f"instructions: {self.instructions}, runtime calls: {self.runtime_calls}, "
            f"allocated: {self.objects_allocated} objects / {self.bytes_allocated} bytes, "
            f"collections: {g.collections}, copied: {g.objects_copied} objects / {g.bytes_copied} bytes, "
            f"slots rewritten: {g.slots_moved}"
            + (
                f", collection records dropped: {self.records_dropped} (the last {g.collections - self.records_dropped}"
                f" kept)"
                if self.records_dropped
                else ""
            )
        )


@dataclass(frozen=True)
class RunResult:
    """What the program printed, what @main returned (signed) and the statistics."""

    printed: list[int]
    result: int
    stats: RunStats


class Runtime(MachineOwner):
    """The guest runtime bound to one machine."""

    def __init__(
        self,
        loaded: LoadedObject,
        gc: GCMode = "semispace",
        stress: bool = False,
        verify: bool = False,
        semispace_size: int = DEFAULT_SEMISPACE,
        on_collect: Callable[[Runtime, Collection], None] | None = None,
        roots: RootFinder | None = None,
    ) -> None:
        if gc not in GC_MODES:
            raise UnsupportedProgram(f"unknown gc {gc!r}; use one of {', '.join(GC_MODES)}")
        unknown = [n for n in loaded.externals if n not in RUNTIME_ENTRIES]
        if unknown:
            raise UnsupportedProgram(f"the object calls {', '.join(unknown)}, which the runtime does not provide")
        self.loaded = loaded
        self.gc, self.stress, self.verify = gc, stress, verify
        self.machine = Machine(loaded.image, heap_size=2 * semispace_size)
        self.heap = Heap(self.machine, semispace_size)
        self.collector = Collector(self.heap)
        self.roots = roots if roots is not None else roots_for(loaded)
        self.sites = self.roots.sites if isinstance(self.roots, StackMapRoots) else None
        self.on_collect = on_collect
        self.printed: list[int] = []
        self.collections = CollectionLog()
        self.stats = RunStats(gc=self.collector.stats)
        for name, fn in (
            ("gc_alloc", self._gc_alloc),
            ("do_safepoint", self._do_safepoint),
            ("gc_collect", self._gc_collect),
            ("print_i64", self._print_i64),
        ):
            self.machine.register_native(name, fn)

    # ------------------------------------------------------------ collecting

    def collect(self) -> Collection | None:
        """Walk the frames, collect, verify (if asked). None under gc="none"."""
        if self.gc == "none":
            return None
        self.machine.check_budget("before a collection")
        roots, derived = self.roots.find(self.machine)
        done = self.collector.collect(roots, derived)
        self.collections.append(done)
        if self.verify:
            # Check every base slot the design names, walked afresh (not the root list the
            # collector was given), so a root the collector missed shows up here.
            verify_heap(self.heap, self.roots.all_slots(self.machine))
            if not self.heap.is_poisoned(self.heap.other, done.from_space[1]):
                raise GCToyError("from-space is not poisoned after the collection")
            self.stats.verified += 1
        if self.on_collect is not None:
            self.on_collect(self, done)
        return done

    def _at_statepoint(self) -> bool:
        """Whether the current runtime call may collect (stack maps: it returns to a statepoint)."""
        return self.roots.may_collect(self.machine)

    def _entry(self) -> None:
        self.stats.runtime_calls += 1
        if self.stress and self.gc != "none" and self._at_statepoint():
            self.collect()

    # ------------------------------------------------------------ natives

    def _gc_alloc(self, nfields: int, ptrmask: int) -> int:
        self._entry()
        ptrmask &= (1 << 64) - 1
        collected = False
        if not self.heap.fits(max(nfields, 0)) and self.gc != "none" and self._at_statepoint():
            self.collect()
            collected = True
        obj = allocate(self.heap, nfields, ptrmask, collected, self.gc)
        self.stats.objects_allocated = self.heap.objects_allocated
        self.stats.bytes_allocated = self.heap.bytes_allocated
        return obj

    def _do_safepoint(self) -> None:
        self._entry()

    def _gc_collect(self) -> None:
        self.stats.runtime_calls += 1
        self.collect()

    def _print_i64(self, value: int) -> None:
        self._entry()
        self.printed.append(value)

    # ------------------------------------------------------------ running

    def run(
        self,
        entry: str = "main",
        max_instructions: int | None = DEFAULT_MAX_INSTRUCTIONS,
        max_seconds: float | None = DEFAULT_MAX_SECONDS,
    ) -> RunResult:
        """Call ``entry`` within the budget (instructions and wall-clock seconds, None: unbounded)."""
        self.machine.start_budget(max_instructions, max_seconds)
        try:
            value = self.machine.call(entry)
        finally:
            self.machine.stop_budget()
            self.stats.instructions = self.machine.instructions
            self.stats.records_dropped = self.collections.dropped
        return RunResult(list(self.printed), self.machine.signed(value), self.stats)


def allocate(heap: Heap, nfields: int, ptrmask: int, collected: bool, gc: GCMode) -> int:
    """``heap.alloc``, with an exhausted heap told as such: what is live and what could not run."""
    try:
        return heap.alloc(nfields, ptrmask)
    except OutOfMemory:
        size, space = object_size(nfields), heap.space.size
        if collected:
            raise OutOfMemory(
                f"heap exhausted: {heap.used} live bytes and a new object of {size} bytes "
                f"(gc_alloc({nfields})) do not fit in a semispace of {space} bytes"
            ) from None
        why = (
            "--gc none never collects"
            if gc == "none"
            else "no collection could run here: the call of @gc_alloc is not a statepoint"
        )
        raise OutOfMemory(
            f"heap exhausted: {heap.used} allocated bytes and a new object of {size} bytes "
            f"(gc_alloc({nfields})) do not fit in a semispace of {space} bytes ({why})"
        ) from None


def run_object(
    path: str | Path | bytes,
    gc: GCMode = "semispace",
    stress: bool = False,
    verify: bool = False,
    entry: str = "main",
    semispace_size: int = DEFAULT_SEMISPACE,
    max_instructions: int | None = DEFAULT_MAX_INSTRUCTIONS,
    on_collect: Callable[[Runtime, Collection], None] | None = None,
    max_seconds: float | None = DEFAULT_MAX_SECONDS,
) -> RunResult:
    """Load an ``llc -filetype=obj`` object and run ``entry`` under the runtime (stack map or shadow stack)."""
    loaded = load_object(path)
    roots = None
    if loaded.stackmap is None:  # the shadow stack's head and FrameMaps are data symbols
        roots = roots_for(loaded, {**loaded.image.symbols, **elf_data_symbols(path, loaded)})
    with Runtime(loaded, gc, stress, verify, semispace_size, on_collect, roots=roots) as runtime:
        return runtime.run(entry, max_instructions, max_seconds)


def load_compiled(module, regalloc: bool = True, gc_registers: int = 0) -> LoadedObject:
    """Lower a statepoint-IR module with gctoy's own x86-64 code generator, ready for the runtime, with
    the prologues' CFI for the stack walk (``regalloc``: values in registers, False: a slot each;
    ``gc_registers``: gc-live values per statepoint kept in registers, see compile_module)."""
    from ..codegen import compile_module

    return loaded_object(compile_module(module, regalloc=regalloc, gc_registers=gc_registers))


def loaded_object(compiled) -> LoadedObject:
    """A module compiled by gctoy's x86-64 code generator (``compile_module``), ready for the runtime."""
    return LoadedObject(
        image=compiled.image,
        stackmap=compiled.stackmap if compiled.stackmap.records else None,
        functions={f.name: f.address for f in compiled.functions},
        externals=tuple(compiled.natives),
        unwind=compiled_unwind_table(compiled),
    )


def compiled_unwind_table(compiled) -> UnwindTable:
    """The CFI of gctoy's functions, as the loader reads it from llc's ``.eh_frame``."""
    starts = sorted(f.address for f in compiled.functions)
    end_of_code = compiled.image.code_base + len(compiled.image.code)
    functions = []
    for f in sorted(compiled.functions, key=lambda f: f.address):
        later = [a for a in starts if a > f.address]
        rows = tuple(UnwindRow(f.address + offset, DWARF_RSP, cfa, saved) for offset, cfa, saved in f.unwind_rows)
        functions.append(FunctionUnwind(f.address, later[0] if later else end_of_code, rows))
    return UnwindTable(tuple(functions))


def run_module(
    module,
    gc: GCMode = "semispace",
    stress: bool = False,
    verify: bool = False,
    entry: str = "main",
    semispace_size: int = DEFAULT_SEMISPACE,
    max_instructions: int | None = DEFAULT_MAX_INSTRUCTIONS,
    on_collect: Callable[[Runtime, Collection], None] | None = None,
    max_seconds: float | None = DEFAULT_MAX_SECONDS,
    regalloc: bool = True,
    gc_registers: int = 0,
) -> RunResult:
    """Compile a statepoint-IR module with gctoy's lowering and run it under the collector."""
    loaded = load_compiled(module, regalloc, gc_registers)
    roots = None
    if (
        loaded.stackmap is None
        and ROOT_CHAIN not in loaded.image.symbols
        and any(f.gc == "shadow-stack" for f in module.definitions())
    ):
        roots = ShadowStackRoots(None)  # lowered for a shadow stack, but no function has a root: no chain
    with Runtime(
        loaded, gc=gc, stress=stress, verify=verify, semispace_size=semispace_size, on_collect=on_collect, roots=roots
    ) as runtime:
        return runtime.run(entry, max_instructions=max_instructions, max_seconds=max_seconds)


def trace_collection(runtime: Runtime, done: Collection) -> str:
    """One line about a collection, for ``gctoy run --trace``."""
    pc = runtime.machine.read_u64(runtime.machine.sp)
    moved = sum(1 for _, old, new in done.roots if old != new)
    return (
        f"collection {done.index} at return address {pc:#x}: {len(done.roots)} root slots "
        f"({moved} moved), {len(done.derived)} derived, {done.objects_copied} objects / "
        f"{done.bytes_copied} bytes copied to {done.to_space[0]:#x}"
    )


#: gc strategies under which gctoy's x86-64 lowering gives the collector a way to find roots
COLLECTING_STRATEGIES = ("statepoint-example", "coreclr", "shadow-stack")


def gc_strategy_warning(module) -> str | None:
    """A warning naming the defined functions that call out but have no collecting gc strategy, or None.

    Their calls are not statepoints: the runtime cannot collect while they are on the stack, so
    a program made only of them runs without a single collection (``--target x86-32`` does not
    need the attribute: it reports every method's GC pointers in its GC info).
    """
    from gctoy.ir.instructions import CallBase

    def calls_out(fn) -> bool:
        return any(
            isinstance(i, CallBase) and not getattr(i.callee, "name", "").startswith("llvm.") for i in fn.instructions()
        )

    plain = [f"@{f.name}" for f in module.definitions() if f.gc not in COLLECTING_STRATEGIES and calls_out(f)]
    if not plain:
        return None
    has, its, it_is = ("has", "its", "it is") if len(plain) == 1 else ("have", "their", "they are")
    return (
        f'{", ".join(plain)} {has} no gc "statepoint-example" attribute: {its} calls are not statepoints, '
        f'so the collector cannot run while {it_is} on the stack (add gc "statepoint-example" to the definition)'
    )
