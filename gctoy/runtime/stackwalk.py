"""Walk the frames of LLVM-compiled x86-64 code stopped at a call into the runtime.

At a native stub's ``int3`` nothing has been pushed since the ``call``, so ``rsp`` points at
the return address into the innermost compiled frame. For each frame::

    higher addresses
    | caller's frame ...      |
    | return address          |  <- sp + StackSize   (read: the caller's return address)
    | callee-saved pushes,    |
    | saved rbp (if any),     |     StackSize bytes (LLVM's MFI stack size: pushes and locals,
    | locals, spill slots     |     not the return address)
    | outgoing stack args     |
    +-------------------------+  <- sp: rsp at the call, after the call returns
    | return address          |  <- what the callee (stub or compiled function) sees at rsp

so ``sp = ra_slot + 8`` and the caller's ``ra_slot = sp + StackSize``. The record of a frame
is found by its return address (function address + instruction offset). A frame with a frame
pointer pushed ``rbp`` first, so its ``rbp = sp + StackSize - 8``. The walk stops when the
return address is the machine's RETURN_TRAP (the entry function returns to it).

Locations: Indirect [reg + off] is a spill slot (the slot's address), Register is a live
register (only for the innermost frame, whose registers are the machine's at the stub),
Direct is a stack object's address (an ``alloca`` in gc-live; reported, not a root),
Constant / ConstantIndex are values that never move.
"""

from __future__ import annotations

from dataclasses import dataclass

from gctoy.emu.image import RETURN_TRAP
from gctoy.errors import GCToyError
from gctoy.runtime.collector import Slot
from gctoy.stackmap import LocationKind, StackMap, StackMapRecord, StkSizeRecord
from gctoy.stackmap.format import DYNAMIC_STACK_SIZE

DWARF_RSP = 7
DWARF_RBP = 6
DWARF_NAMES = {
    0: "rax", 1: "rdx", 2: "rcx", 3: "rbx", 4: "rsi", 5: "rdi", 6: "rbp", 7: "rsp",
    **{n: f"r{n}" for n in range(8, 16)},
}
MAX_FRAMES = 100_000


class StackWalkError(GCToyError):
    """A return address without a record, a location the walker cannot follow, a broken chain."""


@dataclass(frozen=True)
class Site:
    """One statepoint's record with the function it belongs to."""

    function: StkSizeRecord
    record: StackMapRecord
    name: str


@dataclass(frozen=True)
class Frame:
    """One compiled frame at a statepoint: where it is and which slots hold GC pointers."""

    site: Site
    return_address: int
    sp: int  # rsp at the call (the address just above the pushed return address)
    pairs: tuple[tuple[Slot | None, Slot | None], ...]  # (base, derived); None = a constant
    stack_objects: tuple[int, ...]  # Direct locations: addresses of allocas in gc-live


class SiteTable:
    """Return address -> statepoint record, for one stack map with applied function addresses."""

    def __init__(self, stackmap: StackMap, names: dict[int, str] | None = None) -> None:
        names = names or {}
        self.stackmap = stackmap
        self.sites: dict[int, Site] = {}
        for fn, records in stackmap.records_by_function():
            for record in records:
                ra = fn.address + record.instruction_offset
                self.sites[ra] = Site(fn, record, names.get(fn.address, f"{fn.address:#x}"))

    def __contains__(self, return_address: int) -> bool:
        return return_address in self.sites

    def lookup(self, return_address: int) -> Site:
        try:
            return self.sites[return_address]
        except KeyError:
            raise StackWalkError(f"no stack map record for return address {return_address:#x}") from None


def _slot(machine, loc, sp: int, rbp: int, innermost: bool, where: str) -> Slot | None:
    """The slot a location names, or None for a constant."""
    if loc.kind in (LocationKind.CONSTANT, LocationKind.CONSTANT_INDEX):
        return None
    if loc.kind is LocationKind.INDIRECT:
        if loc.dwarf_reg == DWARF_RSP:
            return sp + loc.offset
        if loc.dwarf_reg == DWARF_RBP:
            return rbp + loc.offset
        raise StackWalkError(f"{where}: Indirect location based on DWARF register {loc.dwarf_reg}")
    if loc.kind is LocationKind.REGISTER:
        if not innermost:
            raise StackWalkError(f"{where}: a Register location in an outer frame needs CFI unwinding")
        name = DWARF_NAMES.get(loc.dwarf_reg)
        if name is None or name in ("rsp", "rbp"):
            raise StackWalkError(f"{where}: GC pointer in DWARF register {loc.dwarf_reg}")
        return name
    raise StackWalkError(f"{where}: a {loc.kind.name} location cannot hold a relocated pointer")


def frame_slots(machine, site: Site, sp: int, innermost: bool) -> tuple[tuple, tuple[int, ...]]:
    """The (base, derived) slot pairs and stack objects of one frame."""
    locs = site.record.locations
    where = f"{site.name}+{site.record.instruction_offset:#x}"
    if len(locs) < 3 or any(l.kind is not LocationKind.CONSTANT for l in locs[:3]):
        raise StackWalkError(f"{where}: not a statepoint record (no cc, flags, deopt count)")
    rest = list(locs[3 + locs[2].offset :])
    size = site.function.stack_size
    rbp = machine.reg("rbp") if innermost else sp + size - 8
    objects = []
    while rest and rest[-1].kind is LocationKind.DIRECT:
        loc = rest.pop()
        base = sp if loc.dwarf_reg == DWARF_RSP else rbp
        objects.append(base + loc.offset)
    if len(rest) % 2:
        raise StackWalkError(f"{where}: odd number of base/derived locations")
    pairs = tuple(
        (_slot(machine, rest[i], sp, rbp, innermost, where), _slot(machine, rest[i + 1], sp, rbp, innermost, where))
        for i in range(0, len(rest), 2)
    )
    return pairs, tuple(reversed(objects))


def walk(machine, table: SiteTable) -> list[Frame]:
    """The compiled frames from the innermost (the stub's caller) outwards."""
    frames: list[Frame] = []
    ra_slot = machine.sp
    while True:
        ra = machine.read_u64(ra_slot)
        if ra == RETURN_TRAP:
            return frames
        site = table.lookup(ra)
        if site.function.stack_size == DYNAMIC_STACK_SIZE:
            raise StackWalkError(f"{site.name}: dynamic stack size (variable-sized objects or realignment)")
        sp = ra_slot + 8
        pairs, objects = frame_slots(machine, site, sp, innermost=not frames)
        frames.append(Frame(site, ra, sp, pairs, objects))
        ra_slot = sp + site.function.stack_size
        if len(frames) > MAX_FRAMES:
            raise StackWalkError(f"more than {MAX_FRAMES} frames: the chain of return addresses loops")


def roots_of(frames: list[Frame]) -> tuple[list[Slot], list[tuple[Slot, Slot]]]:
    """Base slots (deduplicated, in walk order) and (derived slot, base slot) pairs."""
    bases: dict[Slot, None] = {}
    derived: dict[Slot, Slot] = {}
    for frame in frames:
        for base, der in frame.pairs:
            if base is None:
                continue
            bases.setdefault(base)
            if der is not None and der != base:
                derived.setdefault(der, base)
    return list(bases), [(d, b) for d, b in derived.items() if d not in bases]


def all_base_slots(frames: list[Frame]) -> list[Slot]:
    """Every slot any frame records as a base (for the verifier)."""
    return list(dict.fromkeys(base for frame in frames for base, _ in frame.pairs if base is not None))
