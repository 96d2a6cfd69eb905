"""From the IR's liveness and an x86-32 lowering to CoreCLR x86 GC info: one `MethodGCInfo` per method.

The code of `gctoy.codegen.x86_32` keeps every SSA value in its own frame slot, or (with
``gc_registers``) a few GC pointers in callee-saved registers, so what the GC info must say is
simple to state: at each call site (the return address, where the VM looks up a caller's
frame), which *slots* and which *registers* hold GC pointers that the rest of the method still
needs. The method is *partially interruptible*
(``interruptible = 0``): it can only be stopped for a GC at its calls.

What the JIT does with such slots, and what we do:

* a GC local that is live only in parts of the method is *tracked*: the stack lifetime
  ("var ptr") table gives its slot and the code range ``[begin, end)`` in which it holds a
  live pointer. An *untracked* slot would be reported for the whole body, so the JIT must
  zero it in the prolog; our slots are written once (SSA) and hold garbage before that, so
  every GC value here is tracked.
* The VM looks a caller's lifetimes up at ``return offset - 1`` (inside the call). For each
  value we walk the call sites in code order and turn every maximal run of consecutive sites
  where the value is live across the call into one lifetime ``[first - 1, last)``: exactly
  the sites of the run answer "live", and no site outside it does. (The JIT's ranges are wider
  -- from the store to the last use -- but are only ever asked at call sites too.)
* A pointer derived from a GC pointer by ``getelementptr`` (or a phi/select/cast of one) is an
  *interior* pointer: CoreCLR has no base/derived pairs; it reports such a slot with the byref
  flag, and the collector finds the object the address falls in.
* A method with a loop and no call is made *fully interruptible* (the JIT's rule: such a loop
  has no safe point). It may then be stopped at any instruction that is not in its prolog,
  epilog or a no-GC region. Our code holds GC pointers in registers only *within* the code of
  one IR instruction, so the code between two IR instructions' starts is declared a no-GC
  region (the table the JIT uses for its own non-interruptible sequences), and the starts
  themselves are the safe points: the lifetimes cover them (looked up at the stop offset itself:
  the stopped method is the active frame) and the pointer table is empty.
* The GC pointer fields of allocas (stack memory) are *untracked* slots, zeroed after the prolog.
* Registers: a value with a register home (EBX, ESI or EDI) is not in the lifetime table; each
  call site across which it is live names its register in the pointer table's call entry
  (``regs``; an interior one also in ``byref_regs`` / ``interior_regs``). The EBP-frame table
  lists just the call sites with live registers; the EBP-less one records every push and every
  call's popped DWORDs anyway, because that is how the unwinder finds the initial ESP. The
  register is the callee-saved one *as the method sees it*: where its value is at a GC (in the
  register itself, or in some callee's save slot) is the stack walker's business.

The blobs go into the image section ``.gcinfo_x86`` (`gctoy.coreclr.section`), with a method
table in front.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ..coreclr.header import CURRENT_VERSION, InfoHdr
from ..coreclr.info_tables import Lifetime, NoGCRegion, UntrackedSlot
from ..coreclr.method import MethodGCInfo, encode
from ..coreclr.ptrtab_ebp import CallSite, EbpTable
from ..coreclr.ptrtab_esp import Call, EspTable, Push
from ..coreclr.ptrtab_full import FullTable, PushNonPtr, PushPtr
from ..coreclr.ptrtab_full import Pop as FullPop
from ..coreclr.section import GCINFO_SECTION, pack_gcinfo_section
from ..errors import GCToyError
from ..ir import instructions as I
from ..ir.analysis import Liveness
from ..ir.module import Module
from ..ir.types import is_gc_pointer
from ..ir.values import Function, Value
from .frame import CodegenError, located
from .x86_32 import CallSite32, CompiledFunction32, CompiledModule32, Push32


@dataclass(frozen=True)
class SiteLiveness:
    """One call site of a method: its return offset and the GC values live across it."""

    return_offset: int
    live: tuple[Value, ...]


def interior_values(module: Module) -> set[int]:
    """ids of the GC pointer values of a module that may point inside an object.

    A ``getelementptr`` result is interior, and so is a cast, phi or select of an interior value,
    and a pointer loaded from stack or global memory (heap fields hold object references).
    IR types do not tell an object reference from a managed pointer (a byref), so the module is
    analysed as a whole: a parameter is interior if some call passes an interior value for it (or
    the function's address escapes), a call's result if the callee may return an interior value.
    Reporting a pointer to an object's first field as interior is harmless; the reverse is not.
    """
    defined = {fn.name: fn for fn in module.functions if not fn.is_declaration}
    interior: set[int] = set()
    escaped = _address_taken(module)
    for fn in defined.values():
        if fn.name in escaped:
            interior.update(id(a) for a in fn.args if is_gc_pointer(a.type))
    returns: set[str] = set()
    changed = True
    while changed:
        changed = False
        for fn in defined.values():
            for inst in fn.instructions():
                if isinstance(inst, I.CallBase) and inst.callee_name in defined:
                    callee = defined[inst.callee_name]
                    for arg, param in zip(inst.args, callee.args):
                        if id(arg) in interior and id(param) not in interior:
                            interior.add(id(param))
                            changed = True
                if id(inst) in interior or not is_gc_pointer(inst.type):
                    if (
                        isinstance(inst, I.Ret)
                        and inst.value is not None
                        and id(inst.value) in interior
                        and fn.name not in returns
                    ):
                        returns.add(fn.name)
                        changed = True
                    continue
                if isinstance(inst, I.GetElementPtr):
                    hit = True
                elif isinstance(inst, I.Cast):
                    hit = id(inst.value) in interior
                elif isinstance(inst, I.Phi):
                    hit = any(id(v) in interior for v, _ in inst.incoming)
                elif isinstance(inst, I.Select):
                    hit = id(inst.true_value) in interior or id(inst.false_value) in interior
                elif isinstance(inst, I.CallBase):
                    hit = inst.callee_name in returns
                elif isinstance(inst, I.Load):
                    # heap fields hold object references (the ptrmask says so); stack memory may not
                    hit = not is_gc_pointer(inst.pointer.type)
                else:
                    hit = False
                if hit:
                    interior.add(id(inst))
                    changed = True
    return interior


def _address_taken(module: Module) -> set[str]:
    """Names of the functions used other than as the callee of a direct call."""
    out: set[str] = set()
    for fn in module.functions:
        for inst in fn.instructions() if not fn.is_declaration else ():
            operands = inst.args if isinstance(inst, I.CallBase) else inst.operands
            for v in operands:
                if isinstance(v, Function):
                    out.add(v.name)
    return out


def call_site_liveness(fn: Function, compiled: CompiledFunction32, image) -> list[SiteLiveness]:
    """Every call of the lowered function in code order, with the GC values live across it."""
    liveness = Liveness(fn, gc_only=True)
    sites = []
    for site in compiled.calls:
        if site.call is None:
            raise CodegenError(f"call site {site.label} has no IR instruction")
        live = liveness.live_across(site.call)
        sites.append(SiteLiveness(image.address_of(site.label) - compiled.address, tuple(live)))
    return sorted(sites, key=lambda s: s.return_offset)


def safe_point_liveness(fn: Function, compiled: CompiledFunction32, image) -> list[SiteLiveness]:
    """Every safe point of a fully interruptible method in code order, with the GC values live there."""
    liveness = Liveness(fn, gc_only=True)
    return sorted(
        (
            SiteLiveness(image.address_of(label) - compiled.address, tuple(liveness.live_before(inst)))
            for label, inst in compiled.safe_points
        ),
        key=lambda s: s.return_offset,
    )


def no_gc_regions(points: list[int], body_start: int, epilog: int) -> list[NoGCRegion]:
    """The body of a fully interruptible method minus its safe points: ``[body_start, epilog]`` in gaps.

    The epilog's first byte counts as body for the VM, so it is covered too (the return value is
    in EAX there, which the table does not describe).
    """
    out: list[NoGCRegion] = []
    cursor = body_start
    for p in sorted(points) + [epilog + 1]:
        if p > cursor:
            out.append(NoGCRegion(cursor, p - cursor))
        cursor = p + 1
    return out


def _slot_offset(compiled: CompiledFunction32, value: Value) -> int:
    """The lifetime table's offset of a value's slot (its low dword): EBP - off, or initial ESP + off."""
    frame = compiled.frame
    local = frame.local(value)
    return -frame.ebp_offset(local) if frame.ebp_frame else local


def lifetimes(
    compiled: CompiledFunction32, sites: list[SiteLiveness], interior: set[int], active: bool = False
) -> list[Lifetime]:
    """One lifetime per maximal run of consecutive sites at which a GC value is live.

    Call sites are looked up at ``return offset - 1`` (a caller's frame): ``[first - 1, last)``.
    Safe points of a fully interruptible method are looked up where the method stopped
    (``active``, the innermost frame): ``[first, last + 1)``.
    """
    values: list[Value] = []
    for s in sites:
        for v in s.live:
            if not any(v is w for w in values):
                values.append(v)
    out: list[Lifetime] = []
    for v in values:
        run: list[int] = []
        for site in [*sites, None]:
            if site is not None and any(v is w for w in site.live):
                run.append(site.return_offset)
                continue
            if run:
                begin, end = (run[0], run[-1] + 1) if active else (run[0] - 1, run[-1])
                out.append(Lifetime(_slot_offset(compiled, v), begin, end, id(v) in interior))
                run = []
    return sorted(out, key=lambda life: (life.begin, life.offset))


def untracked_slots(compiled: CompiledFunction32) -> list[UntrackedSlot]:
    """The GC pointer fields of the method's allocas: untracked, interior-flagged slots.

    The IR does not say whether a pointer stored in stack memory is an object reference or
    points inside one; reporting it as interior is right for both.
    """
    frame = compiled.frame
    return [
        UntrackedSlot(frame.ebp_offset(local) if frame.ebp_frame else local, interior=True)
        for local in frame.gc_alloca_fields
    ]


def _return_kind(fn: Function, interior: set[int]) -> int:
    """0 scalar, 1 object, 2 byref (an interior pointer)."""
    if not is_gc_pointer(fn.ftype.ret):
        return 0
    for block in fn.blocks:
        term = block.terminator
        if isinstance(term, I.Ret) and term.value is not None and id(term.value) in interior:
            return 2
    return 1


#: the register order of the pointer tables' masks (bit 0 first)
_MASK_ORDER = ("EDI", "ESI", "EBX")


def split_registers(
    compiled: CompiledFunction32, sites: list[SiteLiveness], interior: set[int]
) -> tuple[list[SiteLiveness], dict[int, tuple[tuple[str, ...], tuple[str, ...]]]]:
    """Split each site's live values into slot values (for the lifetimes) and register homes:
    return offset -> (registers holding GC pointers, the interior ones among them), mask order."""
    frame = compiled.frame
    slots: list[SiteLiveness] = []
    registers: dict[int, tuple[tuple[str, ...], tuple[str, ...]]] = {}
    for s in sites:
        slots.append(SiteLiveness(s.return_offset, tuple(v for v in s.live if frame.home(v) is None)))
        homes = [(home, v) for v in s.live if (home := frame.home(v)) is not None]
        homed = {home.upper(): id(v) in interior for home, v in homes}
        if homed:
            registers[s.return_offset] = (
                tuple(r for r in _MASK_ORDER if r in homed),
                tuple(r for r in _MASK_ORDER if homed.get(r)),
            )
    return slots, registers


def method_gcinfo(fn: Function, compiled: CompiledFunction32, image, interior: set[int]) -> MethodGCInfo:
    """The GC info of one lowered method: header, one epilog at the end, lifetimes, pointer table
    (``interior``: the module's interior pointer values, from `interior_values`)."""
    start = compiled.address
    size = image.address_of(compiled.end) - start
    epilog = image.address_of(compiled.epilog) - start
    frame = compiled.frame
    full = compiled.fully_interruptible
    header = InfoHdr(
        prolog_size=image.address_of(compiled.prolog_end) - start,
        epilog_size=size - epilog,
        edi_saved="edi" in frame.saved,
        esi_saved="esi" in frame.saved,
        ebx_saved="ebx" in frame.saved,
        ebp_saved=frame.ebp_frame,
        ebp_frame=frame.ebp_frame,
        interruptible=full,
        return_kind=_return_kind(fn, interior),
        arg_count=frame.arg_size // 4,
        frame_size=frame.size // 4,
    )
    untracked = untracked_slots(compiled)
    if full and frame.homes:
        raise located(CodegenError(f"@{fn.name} is fully interruptible but keeps GC pointers in registers"), fn)
    if full:
        points = safe_point_liveness(fn, compiled, image)
        regions = no_gc_regions([p.return_offset for p in points], header.prolog_size, epilog)
        # A fully interruptible method with calls is also looked up as a caller, at its return
        # addresses minus one: those query offsets join the safe points in the lifetimes.
        queries = points + [SiteLiveness(s.return_offset - 1, s.live) for s in call_site_liveness(fn, compiled, image)]
        queries.sort(key=lambda s: s.return_offset)
        return MethodGCInfo.create(
            size,
            header,
            epilogs=(epilog,),
            no_gc_regions=regions,
            untracked=untracked,
            lifetimes=lifetimes(compiled, queries, interior, active=True),
            pointer_table=_full_table(compiled, image) if not frame.ebp_frame else None,
        )
    sites, registers = split_registers(compiled, call_site_liveness(fn, compiled, image), interior)
    table: EbpTable | EspTable
    if frame.ebp_frame:
        table = EbpTable(
            calls=tuple(CallSite(offset, regs, byref) for offset, (regs, byref) in sorted(registers.items()))
        )
    else:
        events: list[tuple[int, int, Push | Call]] = [
            (image.address_of(p.label) - start, 0, Push(image.address_of(p.label) - start, p.gc_pointer))
            for p in compiled.pushes
        ]
        for c in compiled.calls:
            offset = image.address_of(c.label) - start
            regs, byref = registers.get(offset, ((), ()))
            events.append((offset, 1, Call(offset, c.popped, regs, byref)))
        table = EspTable(tuple(e for _, _, e in sorted(events, key=lambda t: (t[0], t[1]))))
    return MethodGCInfo.create(
        size,
        header,
        epilogs=(epilog,),
        untracked=untracked,
        lifetimes=lifetimes(compiled, sites, interior),
        pointer_table=table,
    )


def _full_table(compiled: CompiledFunction32, image) -> FullTable:
    """ESP tracking for a fully interruptible EBP-less method: its argument pushes and the callees' pops."""
    start = compiled.address
    events: list[tuple[int, int, Push32 | CallSite32]] = []
    for p in compiled.pushes:
        events.append((image.address_of(p.label) - start, 0, p))
    for c in compiled.calls:
        events.append((image.address_of(c.label) - start, 1, c))
    out: list[FullPop | PushPtr | PushNonPtr] = []
    depth = 0
    for offset, _, item in sorted(events, key=lambda t: (t[0], t[1])):
        if isinstance(item, CallSite32):
            if item.popped:
                out.append(FullPop(offset, item.popped))
                depth -= item.popped
        else:
            out.append(PushPtr(offset, depth) if item.gc_pointer else PushNonPtr(offset))
            depth += 1
    return FullTable(tuple(out))


def module_gcinfo(compiled: CompiledModule32) -> dict[str, MethodGCInfo]:
    """The GC info of every method of a compiled module, by name."""
    if compiled.module is None:
        raise GCToyError("the compiled module does not carry its IR module")
    fns = {fn.name: fn for fn in compiled.module.functions if not fn.is_declaration}
    interior = interior_values(compiled.module)
    return {f.name: method_gcinfo(fns[f.name], f, compiled.image, interior) for f in compiled.functions}


def gcinfo_section(compiled: CompiledModule32, infos: dict[str, MethodGCInfo], version: int = CURRENT_VERSION) -> bytes:
    """The ``.gcinfo_x86`` section: the method table, then each method's encoded blob."""
    return pack_gcinfo_section(
        [(f.address, infos[f.name].method_size, encode(infos[f.name], version)) for f in compiled.functions]
    )


def with_gcinfo(
    compiled: CompiledModule32, version: int = CURRENT_VERSION
) -> tuple[CompiledModule32, dict[str, MethodGCInfo]]:
    """The compiled module with its GC info placed in the image, and the infos."""
    infos = module_gcinfo(compiled)
    image = compiled.image.with_sections(**{GCINFO_SECTION: gcinfo_section(compiled, infos, version)})
    return dataclasses.replace(compiled, image=image), infos
