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
is found by its return address (function address + instruction offset). A frame's ``rbp``
(the base of Indirect [rbp + off] locations) is read through the register context below; when
that is lost (no CFI), a frame with a frame pointer pushed ``rbp`` first, so its
``rbp = sp + StackSize - 8``. The walk stops when the return address is the machine's
RETURN_TRAP (the entry function returns to it). With CFI, each frame's CFA must equal
``sp + StackSize + 8``: the stack map and the unwind info agree on the frame's size.

Locations: Indirect [reg + off] is a spill slot (the slot's address), Register is a
register at the call (resolved through the register context below), Direct is a stack
object's address (an ``alloca`` in gc-live; reported, not a root), Constant /
ConstantIndex are values that never move.

The register context (CoreCLR's REGDISPLAY, libunwind's cursor). A GC pointer that a frame
keeps in a callee-saved register (rbx, rbp, r12-r15) across a call is, while the callees
run, either still in that machine register or saved by some callee in its own frame. The walk
keeps, for each callee-saved register, the slot holding the *current* frame's value:

    innermost frame        every register is the machine's (the runtime's natives preserve them)
    unwinding frame F      F's CFI at its call says "rbx saved at CFA-32": the caller's rbx
                           is the memory word at CFA-32; registers F did not save keep the
                           slot they had (F never changed them)
    F without CFI          where F saved anything is unknown: each register is "lost", and a
                           Register location needing it is a StackWalkError

So a Register location becomes a Slot the collector can rewrite: the register's name while it
is live in the machine, else the address of the save slot. gctoy's own images come with the
CFI rows of their prologues (codegen's ``unwind_rows``), so they walk the same way.

    example: main keeps %t in rbx and calls sum; sum pushes rbx (saving main's %t) and
    keeps its own %t in rbx; sum calls do_safepoint.
      frame 0 (sum):  Register rbx -> "rbx"           the machine register
      frame 1 (main): Register rbx -> sum's CFA - 32  the word sum's prologue pushed
"""

from __future__ import annotations

from dataclasses import dataclass

from gctoy.emu.image import RETURN_TRAP, STACK_TOP
from gctoy.errors import GCToyError
from gctoy.runtime.cfi import CALLEE_SAVED, UnwindTable
from gctoy.runtime.collector import Slot, read_slot
from gctoy.stackmap import LocationKind, StackMap, StackMapRecord, StkSizeRecord
from gctoy.stackmap.format import DYNAMIC_STACK_SIZE

DWARF_RSP = 7
DWARF_RBP = 6
DWARF_NAMES = {
    0: "rax",
    1: "rdx",
    2: "rcx",
    3: "rbx",
    4: "rsi",
    5: "rdi",
    6: "rbp",
    7: "rsp",
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
    """Return address -> statepoint record (and CFI row), for one stack map with applied addresses."""

    def __init__(
        self, stackmap: StackMap, names: dict[int, str] | None = None, unwind: UnwindTable | None = None
    ) -> None:
        names = names or {}
        self.stackmap = stackmap
        self.unwind = unwind
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


@dataclass
class RegisterContext:
    """For each callee-saved register: the slot holding the current frame's value, or why it is lost."""

    slots: dict[str, Slot]
    lost: dict[str, str]

    @classmethod
    def at_stub(cls) -> RegisterContext:
        """The innermost frame's context: every callee-saved register is the machine's."""
        return cls({name: name for name in CALLEE_SAVED.values()}, {})

    def resolve(self, name: str, where: str) -> Slot:
        """The slot of register ``name`` in the current frame."""
        if name in self.lost:
            raise StackWalkError(f"{where}: GC pointer in {name}, but {self.lost[name]}")
        return self.slots[name]

    def unwind(self, machine, site: Site, sp: int, unwind: UnwindTable | None, return_address: int) -> None:
        """Step from the frame at ``sp`` to its caller: follow the frame's CFI at its call site."""
        where = f"{site.name}+{site.record.instruction_offset:#x}"
        # The call instruction ends at the return address; its last byte is inside the call.
        row = None if unwind is None else unwind.lookup(return_address - 1)
        if row is None:
            reason = f"{site.name} has no CFI, so where it saved its caller's {{}} is unknown"
            for name in CALLEE_SAVED.values():
                self.lost.setdefault(name, reason.format(name))
            return
        if row.cfa_register == DWARF_RSP:
            cfa = sp + row.cfa_offset
        elif row.cfa_register == DWARF_RBP:
            cfa = read_slot(machine, self.resolve("rbp", f"{where} (CFA = rbp + {row.cfa_offset})")) + row.cfa_offset
        else:
            raise StackWalkError(f"{where}: CFA rule the walker cannot follow (register {row.cfa_register})")
        expected = sp + site.function.stack_size + 8
        if cfa != expected:
            raise StackWalkError(f"{where}: CFI gives CFA {cfa:#x}, the stack map's stack size gives {expected:#x}")
        for reg, offset in row.saved:
            name = CALLEE_SAVED[reg]
            self.slots[name] = cfa + offset
            self.lost.pop(name, None)
        for reg in row.unfollowable:
            self.lost[CALLEE_SAVED[reg]] = f"{site.name}'s CFI keeps it by a rule the walker cannot follow"


def _slot(
    machine, loc, sp: int, rbp: int, innermost: bool, where: str, context: RegisterContext | None = None
) -> Slot | None:
    """The slot a location names, or None for a constant or the address of a stack object (a Direct
    location: llc's record of an alloca cast to a GC pointer), which no collection moves."""
    if loc.kind in (LocationKind.CONSTANT, LocationKind.CONSTANT_INDEX, LocationKind.DIRECT):
        return None
    if loc.kind is LocationKind.INDIRECT:
        if loc.dwarf_reg == DWARF_RSP:
            return sp + loc.offset
        if loc.dwarf_reg == DWARF_RBP:
            return rbp + loc.offset
        raise StackWalkError(f"{where}: Indirect location based on DWARF register {loc.dwarf_reg}")
    if loc.kind is LocationKind.REGISTER:
        name = DWARF_NAMES.get(loc.dwarf_reg)
        if name is None or name == "rsp":
            raise StackWalkError(f"{where}: GC pointer in DWARF register {loc.dwarf_reg}")
        if loc.dwarf_reg not in CALLEE_SAVED:
            if innermost:
                return name  # the machine's register at the stub
            raise StackWalkError(f"{where}: GC pointer in caller-saved {name} across a call in an outer frame")
        if context is None:
            if not innermost:
                raise StackWalkError(f"{where}: a Register location in an outer frame needs CFI unwinding")
            return name
        return context.resolve(name, where)
    raise StackWalkError(f"{where}: a {loc.kind.name} location cannot hold a relocated pointer")


def frame_slots(
    machine, site: Site, sp: int, innermost: bool, context: RegisterContext | None = None
) -> tuple[tuple, tuple[int, ...]]:
    """The (base, derived) slot pairs and stack objects of one frame (Register locations via ``context``)."""
    locs = site.record.locations
    where = f"{site.name}+{site.record.instruction_offset:#x}"
    if len(locs) < 3 or any(loc.kind is not LocationKind.CONSTANT for loc in locs[:3]):
        raise StackWalkError(f"{where}: not a statepoint record (no cc, flags, deopt count)")
    rest = list(locs[3 + locs[2].offset :])
    size = site.function.stack_size
    if context is not None and "rbp" not in context.lost:
        rbp = read_slot(machine, context.slots["rbp"])
    else:
        rbp = machine.reg("rbp") if innermost else sp + size - 8
    objects = []
    while rest and rest[-1].kind is LocationKind.DIRECT:
        loc = rest.pop()
        base = sp if loc.dwarf_reg == DWARF_RSP else rbp
        objects.append(base + loc.offset)
    if len(rest) % 2:
        raise StackWalkError(f"{where}: odd number of base/derived locations")
    pairs = []
    for i in range(0, len(rest), 2):
        base_slot = _slot(machine, rest[i], sp, rbp, innermost, where, context)
        derived_slot = _slot(machine, rest[i + 1], sp, rbp, innermost, where, context)
        lanes = _lanes(rest[i], rest[i + 1])
        pairs += [(_lane(base_slot, k), _lane(derived_slot, k)) for k in range(lanes)]
    return tuple(pairs), tuple(reversed(objects))


def _lanes(base, derived) -> int:
    """A vector of GC pointers spilled whole is one Indirect location of 8 bytes per lane: a pair per lane."""
    if base.kind is derived.kind is LocationKind.INDIRECT and base.size == derived.size and base.size > 8:
        return base.size // 8
    return 1


def _lane(slot: Slot | None, k: int) -> Slot | None:
    return slot + 8 * k if isinstance(slot, int) else slot


def walk(machine, table: SiteTable) -> list[Frame]:
    """The compiled frames from the innermost (the stub's caller) outwards."""
    frames: list[Frame] = []
    context = RegisterContext.at_stub()
    ra_slot = machine.sp
    while True:
        ra = machine.read_u64(ra_slot)
        if ra == RETURN_TRAP:
            return frames
        site = table.lookup(ra)
        if site.function.stack_size == DYNAMIC_STACK_SIZE:
            raise StackWalkError(f"{site.name}: dynamic stack size (variable-sized objects or realignment)")
        sp = ra_slot + 8
        pairs, objects = frame_slots(machine, site, sp, innermost=not frames, context=context)
        _check_slots(machine, site, pairs)
        frames.append(Frame(site, ra, sp, pairs, objects))
        context.unwind(machine, site, sp, table.unwind, ra)
        ra_slot = sp + site.function.stack_size
        if not sp <= ra_slot <= STACK_TOP - 8:
            raise StackWalkError(
                f"{site.name}: stack size {site.function.stack_size} takes the walk to {ra_slot:#x}, "
                f"past the top of the stack ({STACK_TOP:#x})"
            )
        if len(frames) > MAX_FRAMES:
            raise StackWalkError(f"more than {MAX_FRAMES} frames: the chain of return addresses loops")


def _check_slots(machine, site: Site, pairs) -> None:
    """Every stack slot a frame names must be a word of the stack in use (a damaged record names others)."""
    low = machine.sp
    for pair in pairs:
        for slot in pair:
            if isinstance(slot, int) and not low <= slot <= STACK_TOP - 8:
                raise StackWalkError(
                    f"{site.name}+{site.record.instruction_offset:#x}: a location of the stack map names {slot:#x}, "
                    f"not a slot of the stack in use ({low:#x}..{STACK_TOP:#x})"
                )


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
