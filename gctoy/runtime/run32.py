"""Run x86-32 code (JIT32 conventions, gctoy.codegen.x86_32) under the guest runtime.

The guest ABI is the x86-64 one (run.py) seen through the JIT32 convention: ``gc_alloc(i64,
i64)`` gets both of its i64 arguments pushed (an i64 never travels in ECX/EDX) and pops them
itself; ``print_i64(i64)`` likewise; ``@main`` returns its i64 in EDX:EAX. The objects are
the very same (8-byte fields, a pointer in the low half of its field), so the heap, the
Cheney collector and the heap verifier are shared with the x86-64 runtime.

The code generator calls four helpers for 64-bit division, served here:
``__gctoy_i64_sdiv``, ``__gctoy_i64_udiv``, ``__gctoy_i64_srem``, ``__gctoy_i64_urem``
(truncating division, as LLVM's ``sdiv``/``srem``; a zero divisor is an error).

How a native sees its arguments. ``Machine`` serves a ``jit32`` native with ``(ecx, edx,
pushed words...)``, the pushed words first-pushed first, and pops ``4 * (nargs - 2)`` bytes
on return. ``register_jit32_native`` wraps a Python function of the IR's arguments in that
shape, rebuilding each i64 from its (hi, lo) pushes.

Collection: a ``RootFinder``-like object (``roots``) says whether the current runtime call
may collect and which slots hold pointers; stackwalk32.py provides the one that walks
CoreCLR-style GC info. Without one the runtime runs with ``gc="none"`` only. The natives never
touch EBX/ESI/EDI/EBP, so a GC pointer that the innermost managed frame keeps in one of them
is still in the machine register when the collector runs, and is updated there.

Stopping the guest anywhere (``run(interrupt_every=N)``), as a runtime suspending a thread for
a GC would. Where the guest stopped decides what happens (`Runtime32.suspend`)::

    stopped in ...                          then
    a fully interruptible method's body     collect now: it is the active frame
      (not in a no-GC region)
    a partially interruptible method's body hijack: its return address slot gets the stub
                                            __gctoy_hijack; when it returns there, its caller
                                            is at a call site: collect (EAX is a root if the
                                            header's returnKind says object/byref), then go on
                                            to the real return address
    prolog, epilog, no-GC region, natives   resume; try again at the next interruption
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from gctoy.codegen.frame32 import DEFAULT_HOMES, place_arguments, stack_words
from gctoy.codegen.x86_32 import DIV_HELPERS, CompiledModule32, compile_module32
from gctoy.emu import Machine
from gctoy.emu.budget import DEFAULT_MAX_INSTRUCTIONS, DEFAULT_MAX_SECONDS
from gctoy.errors import GCToyError
from gctoy.ir.types import IntType, PointerType, Type
from gctoy.runtime.collector import Collection, CollectionLog, Collector, Slot
from gctoy.runtime.heap import DEFAULT_SEMISPACE, Heap
from gctoy.runtime.owner import MachineOwner
from gctoy.runtime.run import GC_MODES, RUNTIME_ENTRIES, GCMode, RunResult, RunStats, allocate
from gctoy.runtime.verify_heap import verify_heap

if TYPE_CHECKING:
    from gctoy.runtime.stackwalk32 import MethodTable

I64 = IntType(64)
PTR = PointerType(IntType(8), 1)
#: the IR signature of each native the x86-32 runtime serves: (parameter types, result type or None)
NATIVE_SIGNATURES: dict[str, tuple[tuple[Type, ...], Type | None]] = {
    "gc_alloc": ((I64, I64), PTR),
    "do_safepoint": ((), None),
    "gc_collect": ((), None),
    "print_i64": ((I64,), None),
    **{name: ((I64, I64), I64) for name in DIV_HELPERS.values()},
}
MASK64 = (1 << 64) - 1
#: the stub a hijacked return address points at
HIJACK_NATIVE = "__gctoy_hijack"
#: what the GC info header's returnKind says EAX holds when a hijacked method returns
RETURN_KIND_ROOTS = {1: "object", 2: "interior"}


class Runtime32Error(GCToyError):
    """A program the x86-32 runtime cannot run (an unknown external, a bad mode, a division by zero)."""


class RootFinder32(Protocol):
    """How a collection finds its roots in x86-32 frames."""

    def may_collect(self, machine: Machine) -> bool:
        """Whether the runtime call now in progress may collect."""

    def find(self, machine: Machine) -> tuple[list[Slot], list[Slot]]:
        """Slots holding object pointers, and slots holding interior pointers."""


@runtime_checkable
class SuspendableRoots32(RootFinder32, Protocol):
    """A root finder that also walks from wherever the guest stopped (suspension, hijacked returns)."""

    #: return-address slots a suspension hijacked -> the return address they held
    hijacked: dict[int, int]

    def methods(self, machine: Machine) -> MethodTable:
        """The table of the guest's methods and their GC info."""


def _signed64(value: int) -> int:
    value &= MASK64
    return value - (1 << 64) if value >> 63 else value


def register_jit32_native(
    machine: Machine, name: str, params: tuple[Type, ...], result: Type | None, fn: Callable[..., int | None]
) -> int:
    """Serve ``name`` with ``fn(*values)`` under the JIT32 convention of gctoy's x86-32 code generator."""
    places, size = place_arguments(list(params))
    words = size // 4

    def wrapper(ecx: int, edx: int, *pushed: int) -> int:
        values: list[int] = []
        cursor = 0
        for ty, place in zip(params, places):
            if place.register is not None:
                values.append({"ecx": ecx, "edx": edx}[place.register] & 0xFFFFFFFF)
            elif stack_words(ty) == 2:
                values.append((pushed[cursor] << 32) | pushed[cursor + 1])
                cursor += 2
            else:
                values.append(pushed[cursor])
                cursor += 1
        value = fn(*values)
        value = 0 if value is None else value & MASK64
        if result is not None and stack_words(result) == 2:
            machine.set_reg("edx", value >> 32)
        return value & 0xFFFFFFFF

    return machine.register_native(name, wrapper, nargs=2 + words, convention="jit32", signed_args=False)


def enter32(machine: Machine, function: str | int, params: list[Type], values: list[int]) -> None:
    """Set up a call of ``function(*values)`` with the JIT32 placement (i64 arguments pushed hi, lo)."""
    places, size = place_arguments(params)
    machine.enter(function)
    ret = machine.read_word(machine.sp)
    sp = machine.sp - size
    machine.write_word(sp, ret)
    for ty, place, value in zip(params, places, values):
        if place.register is not None:
            machine.set_reg(place.register, value & 0xFFFFFFFF)
        else:
            machine.write_word(sp + place.stack_offset, value & 0xFFFFFFFF)
            if stack_words(ty) == 2:
                machine.write_word(sp + place.stack_offset + 4, (value & MASK64) >> 32)
    machine.sp = sp


def call32(
    machine: Machine,
    function: str,
    params: list[Type],
    values: list[int],
    result: Type | None = I64,
    max_instructions: int | None = 50_000_000,
) -> int:
    """Run ``function(*values)`` to its return; the unsigned result (EDX:EAX for an i64)."""
    from gctoy.emu import StopReason
    from gctoy.errors import EmulationFault

    enter32(machine, function, params, values)
    stop = machine.run(max_instructions=max_instructions)
    if stop.reason is not StopReason.RETURNED:
        raise EmulationFault(f"{function} did not return within {max_instructions} instructions", stop.pc)
    lo = machine.reg("eax")
    if result is not None and stack_words(result) == 2:
        return (machine.reg("edx") << 32) | lo
    return lo


@dataclass
class Runtime32(MachineOwner):
    """The guest runtime bound to one x86-32 machine."""

    compiled: CompiledModule32
    gc: GCMode = "none"
    stress: bool = False
    verify: bool = False
    semispace_size: int = DEFAULT_SEMISPACE
    roots: RootFinder32 | None = None
    on_collect: Callable[[Runtime32, Collection], None] | None = None
    printed: list[int] = field(default_factory=list)
    collections: CollectionLog = field(default_factory=CollectionLog)
    #: outcomes of `suspend` (and hijacked returns) by name, when run with ``interrupt_every``
    suspensions: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.gc not in GC_MODES:
            raise Runtime32Error(f"unknown gc {self.gc!r}; use one of {', '.join(GC_MODES)}")
        if self.gc != "none" and self.roots is None:
            raise Runtime32Error("a collecting x86-32 runtime needs a root finder (stackwalk32.GCInfoRoots)")
        unknown = [n for n in self.compiled.natives if n not in NATIVE_SIGNATURES]
        if unknown:
            raise Runtime32Error(
                f"the program calls {', '.join(unknown)}, which the runtime does not provide "
                f"(it provides {', '.join(RUNTIME_ENTRIES)})"
            )
        self.machine = Machine(self.compiled.image, convention="jit32", heap_size=2 * self.semispace_size)
        self.heap = Heap(self.machine, self.semispace_size)
        self.collector = Collector(self.heap)
        self.stats = RunStats(gc=self.collector.stats)
        serve: dict[str, Callable[..., int | None]] = {
            "gc_alloc": self._gc_alloc,
            "do_safepoint": self._do_safepoint,
            "gc_collect": self._gc_collect,
            "print_i64": self._print_i64,
            **{name: self._divider(op) for op, name in DIV_HELPERS.items()},
        }
        for name in self.compiled.natives:
            params, result = NATIVE_SIGNATURES[name]
            register_jit32_native(self.machine, name, params, result, serve[name])

    # ------------------------------------------------------------ collecting

    def collect(self) -> Collection | None:
        """Walk the frames, collect, verify (if asked). None under gc="none"."""
        if self.gc == "none":
            return None
        assert self.roots is not None
        self.machine.check_budget("before a collection")
        slots, interior = self.roots.find(self.machine)
        roots = self.roots
        return self._collect_found(slots, interior, lambda: roots.find(self.machine)[0])

    def _collect_found(self, slots: list[Slot], interior: list[Slot], again: Callable[[], list[Slot]]) -> Collection:
        """Collect from found roots; the verifier checks the object slots ``again()`` finds afresh."""
        done = self.collect_slots(slots, interior)
        if self.verify:
            verify_heap(self.heap, again())
            self.stats.verified += 1
        if self.on_collect is not None:
            self.on_collect(self, done)
        return done

    def collect_slots(self, slots: list[Slot], interior: list[Slot]) -> Collection:
        """Collect with object slots and interior slots (see stackwalk32.collect_with_interior)."""
        from gctoy.runtime.stackwalk32 import collect_with_interior

        done = collect_with_interior(self.collector, slots, interior)
        self.collections.append(done)
        return done

    def _may_collect(self) -> bool:
        return self.gc != "none" and self.roots is not None and self.roots.may_collect(self.machine)

    def _entry(self) -> None:
        self.stats.runtime_calls += 1
        if self.stress and self._may_collect():
            self.collect()

    # ------------------------------------------------------------ natives

    def _gc_alloc(self, nfields: int, ptrmask: int) -> int:
        self._entry()
        nfields = _signed64(nfields)
        collected = False
        if not self.heap.fits(max(nfields, 0)) and self._may_collect():
            self.collect()
            collected = True
        obj = allocate(self.heap, nfields, ptrmask, collected, self.gc)
        self.stats.objects_allocated = self.heap.objects_allocated
        self.stats.bytes_allocated = self.heap.bytes_allocated
        if obj >> 32:
            raise Runtime32Error(f"object at {obj:#x} is not addressable from 32-bit code")
        return obj

    def _do_safepoint(self) -> None:
        self._entry()

    def _gc_collect(self) -> None:
        self.stats.runtime_calls += 1
        if self.gc != "none":
            self.collect()

    def _print_i64(self, value: int) -> None:
        self._entry()
        self.printed.append(_signed64(value))

    def _divider(self, op: str) -> Callable[[int, int], int]:
        def divide(a: int, b: int) -> int:
            self.stats.runtime_calls += 1
            signed = op in ("sdiv", "srem")
            x, y = (_signed64(a), _signed64(b)) if signed else (a & MASK64, b & MASK64)
            if y == 0:
                raise Runtime32Error(f"divide error: division by zero ({op} i64) {self.machine.where(self.machine.pc)}")
            q = abs(x) // abs(y) * (1 if (x < 0) == (y < 0) else -1)
            return (q if op.endswith("div") else x - q * y) & MASK64

        return divide

    # ------------------------------------------------------------ running

    def run(
        self,
        entry: str = "main",
        max_instructions: int | None = DEFAULT_MAX_INSTRUCTIONS,
        interrupt_every: int | None = None,
        max_seconds: float | None = DEFAULT_MAX_SECONDS,
    ) -> RunResult:
        """Call ``entry`` (no arguments, i64 result) and give what it printed and returned.

        ``interrupt_every``: stop the guest after every that many instructions, wherever it is,
        and suspend it for a collection (see `suspend`), as a runtime stopping threads would.
        ``max_instructions`` and ``max_seconds`` bound the run (None: unbounded).
        """
        self.machine.start_budget(max_instructions, max_seconds)
        try:
            if interrupt_every is None:
                value = call32(self.machine, entry, [], [], I64, None)
            else:
                value = self._run_interrupted(entry, None, interrupt_every)
        finally:
            self.machine.stop_budget()
            self.stats.instructions = self.machine.instructions
            self.stats.records_dropped = self.collections.dropped
        return RunResult(list(self.printed), _signed64(value), self.stats)

    # ------------------------------------------------------------ suspension

    def _run_interrupted(self, entry: str, max_instructions: int | None, every: int) -> int:
        from gctoy.emu import StopReason
        from gctoy.errors import EmulationFault

        if every <= 0:
            raise Runtime32Error("interrupt_every must be positive")
        self.hijack_stub: int | None = None
        if self.gc != "none":
            self._suspendable_roots()
            self.hijack_stub = self.machine.register_native(
                HIJACK_NATIVE, self._on_hijack, nargs=2, convention="jit32", signed_args=False
            )
        enter32(self.machine, entry, [], [])
        start = self.machine.instructions
        while True:
            step = every
            if max_instructions is not None:
                step = min(every, max_instructions - (self.machine.instructions - start))
                if step <= 0:
                    raise EmulationFault(
                        f"{entry} did not return within {max_instructions} instructions", self.machine.pc
                    )
            stop = self.machine.run(max_instructions=step)
            if stop.reason is StopReason.RETURNED:
                return (self.machine.reg("edx") << 32) | self.machine.reg("eax")
            self.suspend()

    def suspend(self) -> str:
        """The guest is stopped at an arbitrary instruction: collect now if it can, else arrange to.

        * In the body of a fully interruptible method, outside its no-GC regions: collect, with
          this method as the active frame (its lifetimes are read at the stop offset itself).
        * In the body of a partially interruptible method: hijack its return address. The slot
          gets the address of a runtime stub; when the method returns into it, its caller is at a
          call site (a safe point) and the collection runs there (`_on_hijack`).
        * Anywhere else (prolog, epilog, no-GC region, native code, a hijack already pending):
          let it run on; the next interruption tries again.

        A hijack still pending from an earlier suspension is taken back first (its method has not
        returned yet), as the VM does before it tries again. Returns what it did, ``"collected"``,
        ``"hijacked"`` or ``"resumed"``, and counts it in ``suspensions``.
        """
        outcome = self._suspend()
        self.suspensions[outcome] = self.suspensions.get(outcome, 0) + 1
        return outcome

    def _suspend(self) -> str:
        from gctoy.coreclr.gcrefs import code_region, decoded_method
        from gctoy.runtime.stackwalk32 import return_address_slot, roots_of32, walk_from

        machine = self.machine
        stub = self.hijack_stub
        if self.gc == "none" or stub is None or machine.pc == stub:
            return "resumed"  # (a hijacked method that just returned into the stub is collected there)
        roots = self._suspendable_roots()
        for slot, original in list(roots.hijacked.items()):
            machine.write_word(slot, original)
            del roots.hijacked[slot]
        methods = roots.methods(machine)
        pc = machine.pc
        found = methods.lookup(pc)
        if found is None:
            return "resumed"
        start, blob = found
        offset = pc - start
        info = decoded_method(blob).info
        if code_region(info, offset)[0] != "body":
            return "resumed"
        if info.header.interruptible:
            if any(r.offset <= offset < r.end for r in info.no_gc_regions):
                return "resumed"

            def walk() -> tuple[list[Slot], list[Slot]]:
                frames = walk_from(
                    machine, methods, pc, machine.sp, machine.reg("ebp"), active=True, hijacked=roots.hijacked
                )
                return roots_of32(frames)

            slots, interior = walk()
            self._collect_found(slots, interior, lambda: walk()[0])
            return "collected"
        slot = return_address_slot(machine, blob, offset)
        roots.hijacked[slot] = machine.read_u32(slot)
        self._hijack = (slot, info.header.return_kind)
        machine.write_word(slot, stub)
        return "hijacked"

    def _suspendable_roots(self) -> SuspendableRoots32:
        """The root finder, which must walk from wherever the guest stopped."""
        if not isinstance(self.roots, SuspendableRoots32):
            raise Runtime32Error(
                "stopping the guest anywhere needs a root finder that walks from any pc (stackwalk32.GCInfoRoots)"
            )
        return self.roots

    def _on_hijack(self, _ecx: int, _edx: int) -> int:
        """The hijacked method returned into the stub: its caller is at a call site. Collect (the
        returned value in EAX is a root if the method returns an object or a byref), then go on to
        the real return address, EAX (maybe moved) and EDX as the method left them."""
        from gctoy.runtime.stackwalk32 import roots_of32, walk_from

        machine = self.machine
        slot, kind = self._hijack
        roots = self._suspendable_roots()
        original = roots.hijacked.pop(slot)
        sp = machine.sp

        def walk() -> tuple[list[Slot], list[Slot]]:
            slots, interior = roots_of32(
                walk_from(
                    machine,
                    roots.methods(machine),
                    original,
                    sp,
                    machine.reg("ebp"),
                    active=False,
                    hijacked=roots.hijacked,
                )
            )
            role = RETURN_KIND_ROOTS.get(kind)
            if role == "object":
                slots.append("eax")
            elif role == "interior":
                interior.append("eax")
            return slots, interior

        slots, interior = walk()
        self._collect_found(slots, interior, lambda: walk()[0])
        self.suspensions["returned to the hijack stub"] = self.suspensions.get("returned to the hijack stub", 0) + 1
        machine.sp = sp - 4
        machine.write_word(sp - 4, original)  # the stub's ret goes there
        return machine.reg("eax")


def run_module32(
    module,
    gc: GCMode = "none",
    stress: bool = False,
    verify: bool = False,
    entry: str = "main",
    frame: str = "auto",
    interruptible: str = "auto",
    semispace_size: int = DEFAULT_SEMISPACE,
    max_instructions: int | None = DEFAULT_MAX_INSTRUCTIONS,
    on_collect: Callable[[Runtime32, Collection], None] | None = None,
    gc_registers: int | bool = DEFAULT_HOMES,
    max_seconds: float | None = DEFAULT_MAX_SECONDS,
) -> RunResult:
    """Compile an abstract-machine IR module to x86-32 and run it (``gc="semispace"`` walks GC info;
    ``gc_registers``: GC pointers in callee-saved registers across calls, see compile_module32)."""
    if gc == "none":
        compiled = compile_module32(module, frame=frame, interruptible=interruptible, gc_registers=gc_registers)
        roots = None
    else:
        from gctoy.runtime.stackwalk32 import compile_with_gcinfo

        compiled, roots = compile_with_gcinfo(
            module, frame=frame, interruptible=interruptible, gc_registers=gc_registers
        )
    with Runtime32(
        compiled, gc=gc, stress=stress, verify=verify, semispace_size=semispace_size, roots=roots, on_collect=on_collect
    ) as runtime:
        return runtime.run(entry, max_instructions, max_seconds=max_seconds)


def trace_collection32(runtime: Runtime32, done: Collection) -> str:
    """One line about a collection of the x86-32 runtime, for ``gctoy run --target x86-32 --trace``."""
    pc = runtime.machine.read_u32(runtime.machine.sp)
    moved = sum(1 for _, old, new in done.roots if old != new)
    slots = len(done.roots) - len(done.derived)  # each interior slot brought one scratch base word
    return (
        f"collection {done.index} at return address {pc:#x}: {slots} object slots "
        f"({moved} moved), {len(done.derived)} interior, {done.objects_copied} objects / "
        f"{done.bytes_copied} bytes copied to {done.to_space[0]:#x}"
    )
