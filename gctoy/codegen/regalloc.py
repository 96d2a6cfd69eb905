"""Linear-scan register allocation over live intervals with holes, for the x86-64 lowering.

Positions. The blocks are laid out in the function's order (the lowering's order) and every
instruction ``n`` (phis included) gets two positions: ``2n`` where it reads its operands and
``2n + 1`` where it writes its result. A value's *interval* is a sorted list of segments
``[start, end]`` (inclusive) built block by block from gctoy's liveness (ir/analysis/liveness.py),
walking each block backwards the way Wimmer and Franz's linear scan does::

    block B:   phis            all defined at B's first position
               inst n          operands read at 2n, result written at 2n + 1
               terminator t    phi copies to the successors: sources read at 2t,
                               the successors' phis written at 2t + 1

A value live into a successor is live to the end of B; a value only read by a successor's phi
ends at 2t, where the copy reads it. The copies of one edge run on that edge only, after the
branch has chosen it (the lowering gives an edge with copies its own code), as one parallel
move; so a phi's register need only be free where the phi is live (from its block's start):
whatever else is live at the end of B and holds that register is dead on the edge, or live
into the phi's block and so in conflict with the phi there. A loop's phi and the value its
latch feeds back thus need not conflict, and the hints below give them one register.

Calls. A call at ``n`` clobbers the caller-saved registers between 2n and 2n + 1: a value whose
interval holds both crosses the call and may only take a callee-saved register, or a spill
slot. The operands a statepoint records (deopt and gc-live values) are read at 2n + 1, so they
always cross it: the stack map names them where they are during the call. A ``gc.relocate``
reads the recorded location again after the call (all of its statepoint's recorded values are
kept to its position) and a ``gc.result`` is written by the call itself (its interval starts at
the statepoint). When those sit in another block than their statepoint (an invoke's normal
destination), the values are kept for the whole function: never wrong, and rare.

Values at statepoints. As llc does by default (LLVM 14: ``-max-registers-for-gc-values=0`` and
no ``-use-registers-for-deopt-values``), every GC pointer a statepoint lists in ``gc-live`` and
every deopt value lives in a spill slot, so the record names it Indirect [RSP + off]. ``gc_registers = N`` lets the first N distinct gc-live values of each
statepoint take registers (callee-saved, since they cross the call: Register locations), as
llc's flag does; a value relocated in an invoke's landing pad is always spilled, as llc
spills it without ``-use-registers-for-gc-values-in-landing-pad``. An alloca (or a no-op cast
of one) in gc-live is a Direct location, not a value with a place; constants are Constants.

Allocation. Values are taken in order of their first position; each takes the first register
free over all of its segments: a *hint* first (an argument's ABI register, a phi's incoming
value, the first operand of an instruction whose result may reuse it), then the caller-saved
registers, then the callee-saved ones (each used callee-saved register costs a push and a pop
in the prologue and epilogue). A value crossing a call tries the callee-saved registers only.
When none is free the value gets a spill slot (8 bytes), which it keeps for its whole life.
A slot is shared only along a chain of one reference: a ``gc.relocate`` takes the slot of the
value it relocates (where the collector has just written the new address, so the reload is no
move at all) and a phi its incoming values' slot, when no value that had the slot is live
where this one is. Every other spilled value gets a new slot, so a slot names one reference
and its relocated copies (LLVM reuses slots more freely). The allocator never evicts (the
intervals are short in gctoy's programs; a spill is always correct).

The x86-64 target (X86_64): allocatable rsi, rdi, r8, r9 (caller-saved) and rbx, r12-r15
(callee-saved). Kept out as scratch for the lowering: rax (results, returns, the count of
vector arguments), rcx and rdx (second operands, shifts, division, the third and fourth
argument), r10 and r11 (large constants, indirect call targets); rbp stays the caller's; rsp
is the stack pointer. A call's argument registers that are also allocatable (rdi, rsi, r8,
r9) are written by a parallel move at the call, after every value read there.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field

from ..ir import instructions as I
from ..ir.analysis.liveness import Liveness
from ..ir.intrinsics import is_relocate_name, is_result_name, is_statepoint_name
from ..ir.statepoint import GCRelocate, Statepoint, token_statepoint
from ..ir.values import Argument, Function, Value
from .dag_values import fold_cast
from .floats import argument_registers
from .frame import has_slot
from .patchpoints import is_stackmap_intrinsic
from .records import statepoint_of, value_key

Segment = tuple[int, int]


@dataclass(frozen=True)
class TargetRegisters:
    """What the allocator may use: registers in order of preference, by who saves them across a call."""

    caller_saved: tuple[str, ...]
    callee_saved: tuple[str, ...]
    #: never allocated: the lowering's own scratch registers
    scratch: tuple[str, ...] = ()

    @property
    def allocatable(self) -> tuple[str, ...]:
        """Every register a value may take."""
        return self.caller_saved + self.callee_saved


X86_64 = TargetRegisters(
    caller_saved=("rsi", "rdi", "r8", "r9"),
    callee_saved=("rbx", "r12", "r13", "r14", "r15"),
    scratch=("rax", "rcx", "rdx", "r10", "r11"),
)


@dataclass
class Allocation:
    """Where each value of one function lives: a register, or a spill slot (numbered from 0)."""

    function: Function
    target: TargetRegisters
    registers: dict[int, str] = field(default_factory=dict)
    spills: dict[int, int] = field(default_factory=dict)
    intervals: dict[int, list[Segment]] = field(default_factory=dict)
    values: list[Value] = field(default_factory=list)
    #: the read position 2n of every instruction that clobbers the caller-saved registers
    calls: list[int] = field(default_factory=list)

    def register(self, v: Value) -> str | None:
        """The register of ``v``, or None (spilled, or not a value with a place)."""
        return self.registers.get(id(v))

    def spill(self, v: Value) -> int | None:
        """The spill slot number of ``v``, or None."""
        return self.spills.get(id(v))

    def has_place(self, v: Value) -> bool:
        """Whether ``v`` was given a register or a spill slot (unused values get neither)."""
        return id(v) in self.registers or id(v) in self.spills

    @property
    def spill_count(self) -> int:
        """How many spill slots the function needs (values whose lives do not overlap may share one)."""
        return max(self.spills.values(), default=-1) + 1

    @property
    def used_callee_saved(self) -> tuple[str, ...]:
        """The callee-saved registers some value takes, in the target's order (the prologue saves them)."""
        used = set(self.registers.values())
        return tuple(r for r in self.target.callee_saved if r in used)

    def registers_held(self, start: int, end: int) -> set[str]:
        """The registers some value holds at a position from ``start`` to ``end``."""
        return {
            reg
            for key, reg in self.registers.items()
            if any(a <= end and start <= b for a, b in self.intervals.get(key, []))
        }

    def crosses_call(self, v: Value) -> bool:
        """Whether ``v`` is live across some call (its value must survive the callee)."""
        return _crosses(self.intervals.get(id(v), []), self.calls)

    def describe(self) -> str:
        """One line per value: its name, its place and its interval."""
        lines = [f"allocation of @{self.function.name}"]
        for v in self.values:
            where = self.register(v) or (f"spill {self.spill(v)}" if self.spill(v) is not None else "-")
            segs = " ".join(f"[{a},{b}]" for a, b in self.intervals.get(id(v), []))
            lines.append(f"  %{v.name}: {where}  {segs}")
        return "\n".join(lines)


def is_clobbering_call(inst: I.Instruction) -> bool:
    """Whether the lowering makes a call (or leaves patchable bytes) at ``inst``."""
    if not isinstance(inst, I.CallBase):
        return False
    name = inst.callee_name or ""
    if is_statepoint_name(name) or name.startswith("llvm.experimental.patchpoint"):
        return True
    return not name.startswith("llvm.")


def _crosses(segments: list[Segment], calls: list[int]) -> bool:
    for start, end in segments:
        k = bisect.bisect_left(calls, start)
        if k < len(calls) and calls[k] + 1 <= end:
            return True
    return False


class _Intervals:
    """Builds the segments of every value of one function (see the module docstring)."""

    def __init__(self, fn: Function) -> None:
        self.fn = fn
        self.liveness = Liveness(fn)
        self.index: dict[int, int] = {}
        self.segments: dict[int, list[Segment]] = {}
        self.values: dict[int, Value] = {}
        self.calls: list[int] = []
        self.pinned: list[Value] = []
        n = 0
        for block in fn.blocks:
            for inst in block.instructions:
                self.index[id(inst)] = n
                n += 1
        self.end = 2 * n + 1
        self.late_reads: dict[int, list[tuple[int, list[Value]]]] = {}  # id(block) -> (position, values)
        self.result_of: dict[int, I.Instruction] = {}  # id(statepoint) -> its gc.result (same block)
        self.keys: dict = {}
        self._statepoint_links()
        self.results = {id(r) for r in self.result_of.values()}

    def tracked(self, v: Value) -> bool:
        return isinstance(v, (Argument, I.Instruction)) and has_slot(v)

    def _statepoint_links(self) -> None:
        """Relocates read their statepoint's recorded values; a gc.result is written by its statepoint.

        Each statepoint is decoded once and its recorded values grouped by key once: a statepoint
        with n relocates of n values costs n, not n * n."""
        recorded_by_key: dict[int, dict[tuple, list[Value]]] = {}
        for block in self.fn.blocks:
            for inst in block.instructions:
                if not (
                    isinstance(inst, I.Call)
                    and (is_relocate_name(inst.callee_name) or is_result_name(inst.callee_name))
                ):
                    continue
                call = token_statepoint(inst.args[0]) if inst.args else None
                if call is None:
                    continue
                sp = statepoint_of(call, self.keys)
                if is_result_name(inst.callee_name):
                    if call.parent is block and isinstance(call, I.Call):
                        self.result_of[id(call)] = inst
                    elif self.tracked(inst):
                        self.pinned.append(inst)
                    continue
                # the record names one of the values with the derived pointer's key (records.py)
                key = value_key(GCRelocate(inst, sp).derived, self.keys)
                by_key = recorded_by_key.get(id(call))
                if by_key is None:
                    by_key = recorded_by_key[id(call)] = {}
                    for v in sp.gc_args + sp.deopt_args:
                        if self.tracked(v):
                            by_key.setdefault(value_key(v, self.keys), []).append(v)
                recorded = list(by_key.get(key, ()))
                if call.parent is block:
                    self.late_reads.setdefault(id(block), []).append((2 * self.index[id(inst)], recorded))
                else:
                    self.pinned += recorded

    def add(self, v: Value, start: int, end: int) -> None:
        self.values[id(v)] = v
        self.segments.setdefault(id(v), []).append((start, end))

    def build(self) -> None:
        fn, live = self.fn, self.liveness
        for arg in fn.args:
            if self.tracked(arg):
                self.values[id(arg)] = arg
        for block in reversed(fn.blocks):
            self._block(block, live)
        for v in self.pinned:
            self.segments[id(v)] = [(0, self.end)]
            self.values[id(v)] = v
        for key, segs in self.segments.items():
            self.segments[key] = _merge(segs)
        self.calls.sort()

    def _block(self, block, live: Liveness) -> None:
        insts = block.instructions
        first, last = self.index[id(insts[0])], self.index[id(insts[-1])]
        bstart, bend = 2 * first, 2 * last + 1
        open_: dict[int, int] = {}  # id(value) -> end of its segment that starts somewhere above
        values: dict[int, Value] = {}

        def use(v: Value, pos: int) -> None:
            if self.tracked(v):
                values[id(v)] = v
                open_[id(v)] = max(open_.get(id(v), pos), pos)

        # an invoke's phi copies come after its call: their sources must survive it
        copy_read = bend if is_clobbering_call(insts[-1]) else 2 * last
        for succ in dict.fromkeys(block.successors):
            for v in live.live_in[succ]:
                use(v, bend)
            for phi in succ.phis():
                use(phi.value_for(block), copy_read)
        for pos, recorded in self.late_reads.get(id(block), []):
            for v in recorded:
                use(v, pos)
        for inst in reversed(insts):
            n = self.index[id(inst)]
            if isinstance(inst, I.Phi):
                continue
            if is_clobbering_call(inst):
                self.calls.append(2 * n)
            if id(inst) not in self.results:  # a gc.result is written at its statepoint
                self._define(inst, 2 * n + 1, open_)
            result = self.result_of.get(id(inst))
            if result is not None:
                self._define(result, 2 * n + 1, open_)
            self._uses(inst, n, use)
        for phi in block.phis():
            self._define(phi, bstart, open_)
        for key, end in open_.items():
            self.add(values[key], bstart, end)

    def _define(self, v: Value, pos: int, open_: dict[int, int]) -> None:
        if not self.tracked(v):
            return
        end = open_.pop(id(v), None)
        self.add(v, pos, pos if end is None else max(end, pos))

    def _uses(self, inst: I.Instruction, n: int, use) -> None:
        if isinstance(inst, I.CallBase) and Statepoint.is_statepoint(inst):
            sp = Statepoint.of(inst)
            for v in [sp.target, *sp.call_args]:
                use(v, 2 * n)
            for v in sp.deopt_args + sp.gc_args + sp.transition_args:
                use(v, 2 * n + 1)
            return
        if isinstance(inst, I.CallBase) and is_stackmap_intrinsic(inst.callee_name):
            for v in inst.operands:
                use(v, 2 * n + 1)  # recorded: kept where the record says during the call
            return
        for v in inst.operands:
            use(v, 2 * n)


def _merge(segments: list[Segment]) -> list[Segment]:
    out: list[Segment] = []
    for start, end in sorted(segments):
        if out and start <= out[-1][1] + 1:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


class _Occupancy:
    """The segments already given to one register, sorted, for overlap tests."""

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.ends: list[int] = []

    def free_for(self, segments: list[Segment]) -> bool:
        for start, end in segments:
            k = bisect.bisect_right(self.starts, end)
            if k and self.ends[k - 1] >= start:
                return False
        return True

    def take(self, segments: list[Segment]) -> None:
        for start, end in segments:
            k = bisect.bisect_left(self.starts, start)
            self.starts.insert(k, start)
            self.ends.insert(k, end)


def _hints(v: Value, alloc: Allocation, fn: Function, keys: dict) -> list[str]:
    """Registers that would save a move: see the module docstring (``keys``: the value_key memo)."""
    out: list[str] = []
    if isinstance(v, Argument):
        where = argument_registers(list(fn.args))[fn.args.index(v)]
        if isinstance(where, str):
            out.append(where)
    elif isinstance(v, I.Phi):
        out += [r for r in (alloc.register(x) for x, _ in v.incoming) if r]
    elif isinstance(v, (I.BinaryOp, I.Cast, I.GetElementPtr, I.Select)) and v.operands:
        first = v.operands[1] if isinstance(v, I.Select) else v.operands[0]
        r = alloc.register(first)
        if r:
            out.append(r)
    elif isinstance(v, I.Call) and is_relocate_name(v.callee_name):
        call = token_statepoint(v.args[0])
        if call is not None:
            r = alloc.register(GCRelocate(v, statepoint_of(call, keys)).derived)
            if r:
                out.append(r)
    return out


def spilled_statepoint_values(fn: Function, gc_registers: int, keys: dict | None = None) -> dict[int, Value]:
    """The values that must live in spill slots: at each statepoint, its deopt values, the gc-live values
    after the first ``gc_registers`` distinct ones, and every value its invoke's landing pad relocates."""
    keys = {} if keys is None else keys
    spilled: dict[int, Value] = {}
    for inst in fn.instructions():
        if not (isinstance(inst, I.CallBase) and Statepoint.is_statepoint(inst)):
            continue
        sp = Statepoint.of(inst)
        in_landing_pad = set()
        if isinstance(inst, I.Invoke):
            for relocate in sp.relocates():
                if relocate.call.args[0] is not inst:  # the landing pad's token
                    in_landing_pad |= {id(relocate.base), id(relocate.derived)}
        kept = 0
        for v in {id(v): v for v in sp.gc_args}.values():
            if _has_place(v, keys):
                if kept < gc_registers and id(v) not in in_landing_pad:
                    kept += 1
                else:
                    spilled[id(v)] = v
        spilled.update((id(v), v) for v in sp.deopt_args if _has_place(v, keys))
    return spilled


def _has_place(v: Value, keys: dict) -> bool:
    """Whether a recorded value is a value with a place (not a constant, not an alloca: a Direct location)."""
    return (
        isinstance(v, (Argument, I.Instruction))
        and has_slot(v)
        and not isinstance(fold_cast(v), I.Alloca)
        and value_key(v, keys)[0] != "const"
    )


def allocate(fn: Function, target: TargetRegisters = X86_64, gc_registers: int = 0) -> Allocation:
    """Give every value of ``fn`` that the lowering keeps a register or a spill slot (``gc_registers``:
    how many gc-live values per statepoint may stay in registers, see the module docstring)."""
    if gc_registers < 0:
        raise ValueError(f"gc_registers must be at least 0, not {gc_registers}")
    intervals = _Intervals(fn)
    intervals.build()
    forced = spilled_statepoint_values(fn, gc_registers, intervals.keys)
    alloc = Allocation(fn, target, intervals=intervals.segments, calls=intervals.calls)
    order = sorted(
        intervals.values.values(),
        key=lambda v: (intervals.segments.get(id(v), [(0, 0)])[0][0], _definition_order(v, intervals)),
    )
    busy = {r: _Occupancy() for r in target.allocatable}
    slots: list[_Occupancy] = []

    def spill(v: Value, segs: list[Segment]) -> None:
        hints = [k for k in _slot_hints(v, alloc, intervals.keys) if k is not None]
        for k in hints:
            if slots[k].free_for(segs):
                break
        else:
            k = len(slots)
            slots.append(_Occupancy())
        slots[k].take(segs)
        alloc.spills[id(v)] = k

    for v in order:
        segs = intervals.segments.get(id(v))
        if not segs:
            continue
        alloc.values.append(v)
        if id(v) in forced:
            spill(v, segs)
            continue
        crossing = _crosses(segs, intervals.calls)
        allowed = target.callee_saved if crossing else target.allocatable
        used = set(alloc.registers.values())
        later = [r for r in target.callee_saved if r not in used]
        candidates = _hints(v, alloc, fn, intervals.keys) + [r for r in allowed if r not in later] + later
        for r in dict.fromkeys(candidates):
            if r in allowed and busy[r].free_for(segs):
                busy[r].take(segs)
                alloc.registers[id(v)] = r
                break
        else:
            spill(v, segs)
    return alloc


def _slot_hints(v: Value, alloc: Allocation, keys: dict) -> list[int | None]:
    """Spill slots that would save a move: a relocate's recorded value's, a phi's incoming values'."""
    if isinstance(v, I.Phi):
        return [alloc.spill(x) for x, _ in v.incoming]
    if isinstance(v, I.Call) and is_relocate_name(v.callee_name):
        call = token_statepoint(v.args[0])
        if call is not None:
            return [alloc.spill(GCRelocate(v, statepoint_of(call, keys)).derived)]
    return []


def _definition_order(v: Value, intervals: _Intervals) -> int:
    return -1 if isinstance(v, Argument) else intervals.index.get(id(v), 0)


__all__ = ["Allocation", "TargetRegisters", "X86_64", "allocate", "is_clobbering_call", "spilled_statepoint_values"]
