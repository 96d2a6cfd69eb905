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

from dataclasses import dataclass

from gctoy.emu.budget import DEFAULT_MAX_SECONDS
from gctoy.emu.image import RETURN_TRAP
from gctoy.runtime.run import GCMode, Runtime, loaded_object
from gctoy.runtime.stackwalk import frame_slots, walk
from gctoy.runtime.trace_code import CALL_MNEMONICS, TraceCode
from gctoy.runtime.trace_recorder import Recorder, cheney_forwarding, collection_view
from gctoy.runtime.trace_views import (
    WORD,
    CollectionView,
    DisasmLine,
    FrameView,
    GCPair,
    HeapObject,
    HeapView,
    MachineState,
    SlotUpdate,
    StackWord,
    StatepointSite,
    Trace,
    TraceError,
)

__all__ = [
    "DEFAULT_RS4GC",
    "LIST3",
    "WORD",
    "CollectionView",
    "DisasmLine",
    "FocusWindow",
    "FrameView",
    "GCPair",
    "HeapObject",
    "HeapView",
    "MachineState",
    "SlotUpdate",
    "StackWord",
    "StatepointSite",
    "Trace",
    "TraceError",
    "TraceStepper",
    "cheney_forwarding",
    "collection_view",
    "focus_window",
    "prepare_module",
    "record_trace",
    "statepoint_sites",
]

DEFAULT_RS4GC = "rewrite-statepoints-for-gc<remat-threshold=0>"

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


def statepoint_sites(runtime: Runtime, code: TraceCode) -> list[StatepointSite]:
    """Every statepoint of the program, in address order, with its record's (base, derived) slots."""
    sites = []
    for ra, label in sorted(code.statepoint_label.items()):
        site = code.table.lookup(ra)
        call = code.call_before(ra)
        fn = code.function_at(ra)
        pairs = frame_slots(runtime.machine, site, 0, innermost=True)[0]
        sites.append(
            StatepointSite(
                label,
                fn.name,
                ra,
                code.callee_of(call) if call else "?",
                tuple((code.slot_text(b, 0, fn.name), code.slot_text(d, 0, fn.name)) for b, d in pairs),
            )
        )
    return sites


@dataclass(frozen=True)
class FocusWindow:
    """The instructions single-stepped around one statepoint: from `start` to `steps_after` past its return."""

    label: str
    return_address: int
    start: int  # address of the first stepped instruction
    steps_before: int  # instructions from `start` to the statepoint's call
    steps_after: int  # instructions stepped after the return address


def focus_window(
    code: TraceCode, sites: list[StatepointSite], focus: str | None, steps_before: int, steps_after: int
) -> FocusWindow:
    """The window around statepoint ``focus`` (default: the first that calls gc_collect, else the first).

    It never starts inside the function's prologue, whose length the code generator reports
    (`CompiledFunction.prologue_instructions`), nor before the label of the call's block: from
    there to the call the code runs straight, whatever the block layout (a loop's latch laid out
    just before the block would otherwise start the window inside the loop).
    """
    if focus is None:
        collecting = [s for s in sites if s.callee == "gc_collect"]
        focus = (collecting or sites)[0].label
    by_label = {s.label: s for s in sites}
    if focus not in by_label:
        raise TraceError(f"no statepoint {focus!r}; the program has {', '.join(by_label)}")
    focus_ra = by_label[focus].return_address
    call = code.call_before(focus_ra)
    assert call is not None  # a statepoint's return address follows its call
    k = code.index[call.address]
    fn = code.function_at(focus_ra)
    first = code.index[fn.address] + fn.prologue_instructions
    labelled = [j for j in range(first, k + 1) if code.insns[j].address in code.labels]
    first = max([first, *labelled])
    start = code.insns[max(first, k - steps_before)].address
    return FocusWindow(focus, focus_ra, start, k - code.index[start], steps_after)


class TraceStepper:
    """Drives a runtime's machine through one recording.

    It runs at full speed from stop to stop (the runtime's stubs and the window's first
    instruction are breakpoints), single-steps through the focus window, and runs a call of
    compiled code inside the window at full speed, resuming the steps when it returns.
    """

    def __init__(self, runtime: Runtime, code: TraceCode, recorder: Recorder, window: FocusWindow) -> None:
        self.runtime, self.m, self.code, self.rec, self.window = runtime, runtime.machine, code, recorder, window
        self.stub_names = code.stub_names
        self.stepping = False
        self.window_done = False
        self.after_left: int | None = None  # steps still to take after the return address (None: not back yet)
        self.step_over: tuple[int, int] | None = None  # (return address, rsp after the return) of a stepped-over call

    def run(self, entry: str, max_instructions: int, max_seconds: float | None) -> int:
        """Record the run of ``entry`` from its first instruction to its return; the signed result."""
        m = self.m
        m.enter(entry)
        m.start_budget(max_instructions, max_seconds)  # spent: BudgetExceeded names the place
        for address in self.stub_names:
            m.add_breakpoint(address)
        m.add_breakpoint(self.window.start)
        self.rec.snap("start", f"@{entry} is entered: nothing allocated yet")
        while True:
            if self.stepping:
                m.step()
            else:
                m.run()
            pc = m.pc
            if pc == RETURN_TRAP:
                break
            if pc in self.stub_names:
                self.runtime_call(self.stub_names[pc])
            elif self.resume_after_call(pc) and self.stepping:
                self.stepped(pc)
        self.runtime.stats.instructions = m.instructions
        result = m.signed(m.return_value())
        self.rec.snap("returned", f"@{entry} returned {result}")
        return result

    def runtime_call(self, name: str) -> None:
        """At a stub: snapshot the safepoint, let the native run, and snapshot the collection if one ran."""
        m, code, rec, runtime = self.m, self.code, self.rec, self.runtime
        label = code.statepoint_label.get(m.read_u64(m.sp), "?")
        nfr = len(walk(m, code.table))
        rec.snap(
            "safepoint",
            f"{label}: call {name}; the runtime has control, {nfr} compiled "
            f"frame{'s' if nfr != 1 else ''} on the stack, nothing has moved yet",
        )
        before = rec.states[-1].heap
        count = len(runtime.collections)
        m.step()  # the stub's int3: the native runs here (and may collect)
        if len(runtime.collections) > count:
            done = runtime.collections[-1]
            frames = walk(m, code.table)
            view = collection_view(done, before, lambda s: code.slot_in_frames(s, frames))
            moved = sum(u.old != u.new for u in view.roots + view.derived)
            copies = done.objects_copied
            rec.snap(
                "collected",
                f"collection #{done.index} inside {name}: {copies} "
                f"object{'s' if copies != 1 else ''} copied ({done.bytes_copied} bytes), "
                f"{moved} slot{'s' if moved != 1 else ''} rewritten",
                collection=view,
            )
        elif self.stepping:
            rec.snap("step", f"{name} is done (no collection); the stub's ret is next")

    def resume_after_call(self, pc: int) -> bool:
        """Handle the breakpoints at a stepped-over call's return and at the window's start.

        False when the stop needs no snapshot of its own (a deeper activation returned to the
        same place, or the window's first state was just taken).
        """
        m, window = self.m, self.window
        if self.step_over is not None and pc == self.step_over[0]:
            if m.sp != self.step_over[1]:
                return False  # a deeper activation returned to the same place: keep running
            m.remove_breakpoint(pc)
            self.step_over, self.stepping = None, True
        if pc == window.start and not self.window_done:
            m.remove_breakpoint(window.start)
            self.stepping = self.window_done = True
            n = window.steps_before
            self.rec.snap(
                "step",
                f"{n} instruction{'s' if n != 1 else ''} before the call of {window.label}: single-stepping from here",
                focus_ra=window.return_address,
            )
            return False
        return True

    def stepped(self, pc: int) -> None:
        """One instruction of the window ran: snapshot it, and stop stepping or step over a call."""
        code, window = self.code, self.window
        insn = code.insns[code.index[pc]] if pc in code.index else None
        if pc == window.return_address:
            self.after_left = window.steps_after
            title = f"back at {window.label}, the return address: relocated values are reloaded from their slots"
        else:
            title = f"executed one instruction; next: {insn.text}" if insn else f"stepped to {pc:#x}"
            if self.after_left is not None:
                self.after_left -= 1
        self.rec.snap("step", title, focus_ra=window.return_address)
        if self.after_left == 0:
            self.stepping = False
        elif (
            insn is not None
            and insn.mnemonic in CALL_MNEMONICS
            and code.callee_of(insn) not in self.stub_names.values()
        ):
            # a call of compiled code inside the window: run it at full speed, resume stepping on return
            self.step_over = (insn.address + insn.size, self.m.sp)
            self.m.add_breakpoint(self.step_over[0])
            self.stepping = False


def record_trace(
    program,
    *,
    entry: str = "main",
    gc: GCMode = "semispace",
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
    loaded = loaded_object(compiled)
    if loaded.stackmap is None:
        raise TraceError("the program has no statepoints, so there is nothing for the collector to see")
    with Runtime(loaded, gc=gc, stress=stress, verify=verify, semispace_size=semispace_size) as runtime:
        assert runtime.sites is not None  # the object has a stack map
        stub_names = runtime.machine.stub_names()
        code = TraceCode(compiled, runtime.sites, stub_names)
        sites = statepoint_sites(runtime, code)
        window = focus_window(code, sites, focus, steps_before, steps_after)
        recorder = Recorder(runtime, code, radius, max_states)
        result = TraceStepper(runtime, code, recorder, window).run(entry, max_instructions, max_seconds)
        return Trace(
            tuple(recorder.states),
            tuple(runtime.printed),
            result,
            runtime.stats.collections,
            runtime.stats.summary(),
            print_module(module),
            compiled.asm_text,
            tuple(sites),
            window.label,
        )
