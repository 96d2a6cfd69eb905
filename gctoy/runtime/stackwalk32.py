"""Walk x86-32 frames with CoreCLR-style GC info and collect through interior pointers.

At a call into the runtime (the guest is stopped at a native stub's ``int3``), the walk goes
from the innermost managed frame outwards, as the VM's x86 stack walker does:

1. the return address at ``[ESP]`` names a method (the ``.gcinfo_x86`` section's method table)
   and a code offset in it; the stub's own arguments are callee-popped, so the caller's ESP at
   its return address is ``ESP + 4 + argument bytes``;
2. the method's GC info is decoded and asked, at that offset, for its live references
   (gctoy.coreclr.gcrefs.gc_refs_at, the VM's ``EnumGcRefs``; a caller's frame is never the
   active frame, so lifetimes are looked up at ``offset - 1``);
3. unwind: in an EBP frame the return address is at ``EBP + 4`` and the caller's EBP at
   ``[EBP]``; in an EBP-less frame the pointer table gives the bytes pushed at the offset, so
   the initial ESP is ``ESP + pushed`` and the return address is at ``initial ESP + stackSize``
   (EBP is untouched by such a method). Either way the caller's ESP is the return address
   slot + 4 + the method's own argument bytes (``argCount * 4``, popped by its ``ret n``);
4. repeat until the return address is not in managed code (``RETURN_TRAP``).

Registers (CoreCLR's REGDISPLAY). The GC info of a caller may say "ESI holds a GC pointer at
this call site": ESI *as that method sees it*. Its callees may have saved ESI in their prologs
and used it for something else, so the value the caller will see again when the callees return
is wherever the innermost of them saved it. The walk keeps, for each callee-saved register, the
location of the current frame's value: at first the machine register itself (the runtime's
natives leave EBX/ESI/EDI/EBP alone), and each time a frame is unwound, the save slots its
prolog pushed (the header's saved-register flags and facts §11's layout)::

    caller  (ESI = object X across the call)        location of the caller's ESI
      | return address        |
      | saved EDI             |
      | saved ESI  = X        |  <- callee's save slot: the caller's ESI lives here
      | ...callee's locals... |
    callee  (saved ESI, uses ESI for its own pointer Y)
      machine ESI = Y            <- the callee's ESI: the machine register

A register reference then resolves to a slot the collector can update: a register name (str)
or the 4-byte save slot (`Word32`). When the callees return, their epilogs pop the updated value
back into the register.

A walk may also start at a method stopped at an arbitrary instruction (`walk_from` with
``active=True``: a fully interruptible method, whose lifetimes are read at the stop offset
itself). A return-address slot that a suspension hijacked holds the hijack stub's address;
the walk reads the real return address from the ``hijacked`` map instead.

Interior pointers (CoreCLR's byrefs) have no base slot. Before collecting, each one is
resolved to the object it points into (``field 0 <= p <= field 0 + 8 * nfields``), whose
address is put in a scratch word below ESP; the pair (interior slot, scratch word) is then
exactly a derived/base pair for the Cheney collector, which moves the object and rebases the
interior pointer by the same delta. The scratch words are dead once the collection returns.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from gctoy.codegen.frame32 import DEFAULT_HOMES
from gctoy.emu import Machine
from gctoy.errors import GCToyError
from gctoy.runtime.collector import Collection, Collector, Slot, Word32, read_slot, write_slot
from gctoy.runtime.heap import WORD, HeapError, containing_object  # noqa: F401  (containing_object: part of this API)

#: how far below ESP the scratch words for interior pointers start (clear of any red zone)
SCRATCH_GAP = 0x1000
#: the registers a method must preserve for its caller (the ones a REGDISPLAY follows)
PRESERVED = ("ebx", "esi", "edi", "ebp")


class StackWalk32Error(GCToyError):
    """The x86-32 frames cannot be walked (an unknown return address, a missing GC info section)."""


@dataclass(frozen=True)
class WalkedFrame:
    """One managed frame: the method, the code offset of its return address, ESP/EBP there, its references."""

    method: int
    code_offset: int
    esp: int
    ebp: int
    refs: tuple  # of gctoy.coreclr.gcrefs.GCRef
    #: (register, slot): where this frame's value of each preserved register is during the walk
    registers: tuple[tuple[str, Slot], ...] = ()

    def register_slot(self, name: str) -> Slot:
        """Where this frame's value of a register is: a save slot of a callee, or the machine register."""
        name = name.lower()
        return dict(self.registers).get(name, name)


def saved_register_slots(hdr, return_slot: int) -> dict[str, int]:
    """Addresses of the registers a frame's prolog saved (its caller's values), from its header flags.

    EBP frames push EBP first (it sits right below the return address), then EDI, ESI, EBX;
    EBP-less frames push EDI, ESI, EBX, EBP; only the saved ones, each 4 bytes lower::

        EBP frame                          EBP-less frame
        | return address | return_slot     | return address | return_slot
        | saved EBP      | <- EBP          | saved EDI      | return_slot - 4
        | saved EDI      | EBP - 4         | saved ESI      |
        | saved ESI      |                 | saved EBX      |
        | saved EBX      |                 | (saved EBP)    |
    """
    flags = {"edi": hdr.edi_saved, "esi": hdr.esi_saved, "ebx": hdr.ebx_saved, "ebp": hdr.ebp_saved}
    order = ("ebp", "edi", "esi", "ebx") if hdr.ebp_frame or hdr.double_align else ("edi", "esi", "ebx", "ebp")
    out: dict[str, int] = {}
    at = return_slot
    for reg in order:
        if flags[reg]:
            at -= 4
            out[reg] = at
    return out


class MethodTable:
    """The methods of an image and their GC info blobs, read from the ``.gcinfo_x86`` section."""

    def __init__(self, entries: list[tuple[int, int, bytes]]) -> None:
        self.entries = sorted(entries)
        self._starts = [s for s, _, _ in self.entries]

    @classmethod
    def from_machine(cls, machine: Machine) -> MethodTable:
        """Read the section as the guest memory holds it."""
        from gctoy.coreclr.section import GCINFO_SECTION, read_gcinfo_section

        image = machine.image
        if GCINFO_SECTION not in image.sections:
            raise StackWalk32Error(f"the image has no {GCINFO_SECTION} section: compile it with GC info")
        address = image.section_address(GCINFO_SECTION)
        return cls(read_gcinfo_section(machine.read(address, len(image.sections[GCINFO_SECTION]))))

    def lookup(self, pc: int) -> tuple[int, bytes] | None:
        """(method start, blob) of the method containing ``pc``, or None."""
        i = bisect.bisect_right(self._starts, pc) - 1
        if i < 0:
            return None
        start, size, blob = self.entries[i]
        return (start, blob) if start < pc <= start + size else None


def _stub_arg_bytes(machine: Machine) -> int:
    """Bytes of stack arguments the native being served pops (jit32: all but two argument words)."""
    # pc is the stub itself (stopped on the way in) or one past its trap byte (serving the call)
    for native in machine.natives.values():
        if native.address in (machine.pc, machine.pc - 1):
            return 4 * max(0, native.nargs - 2) if native.convention == "jit32" else 0
    raise StackWalk32Error(f"the machine is not stopped in a native stub (pc {machine.pc:#x})")


def walk32(machine: Machine, methods: MethodTable, hijacked: dict[int, int] | None = None) -> list[WalkedFrame]:
    """The managed frames from the innermost outwards, each with its live GC references, when the
    guest is stopped in a native stub (``hijacked``: return-address slot -> the address it had)."""
    esp = machine.sp
    ret = machine.read_u32(esp)
    return walk_from(
        machine, methods, ret, esp + 4 + _stub_arg_bytes(machine), machine.reg("ebp"), active=False, hijacked=hijacked
    )


def walk_from(
    machine: Machine,
    methods: MethodTable,
    pc: int,
    esp: int,
    ebp: int,
    *,
    active: bool,
    hijacked: dict[int, int] | None = None,
    registers: dict[str, Slot] | None = None,
) -> list[WalkedFrame]:
    """Walk from a frame at ``pc`` with ESP/EBP as given there: the innermost frame is the active one
    (stopped at ``pc`` itself) if ``active``, else a caller stopped at the return address ``pc``.

    ``registers`` says where the innermost frame's preserved registers are (default: in the
    machine registers); unwinding a frame moves each register it saved to its save slot.
    """
    from gctoy.coreclr.gcrefs import decoded_method, gc_refs_at, pushed_arg_size, stack_size

    hijacked = hijacked or {}
    display: dict[str, Slot] = {reg: reg for reg in PRESERVED}
    display.update(registers or {})
    frames: list[WalkedFrame] = []
    while True:
        found = methods.lookup(pc)
        if found is None:
            break
        start, blob = found
        offset = pc - start
        values = {reg.upper(): read_slot(machine, at) for reg, at in display.items()}
        if active:
            values.update({reg.upper(): machine.reg(reg) for reg in ("eax", "ecx", "edx")})
        refs = gc_refs_at(blob, offset, active_frame=active, regs=values, esp=esp, ebp=ebp, read_dword=machine.read_u32)
        frames.append(WalkedFrame(start, offset, esp, ebp, tuple(refs), tuple(display.items())))
        hdr = decoded_method(blob).info.header
        if hdr.ebp_frame:
            slot = ebp + 4
            ebp = machine.read_u32(ebp)
        else:
            slot = esp + pushed_arg_size(blob, offset) + stack_size(hdr)
        display.update({reg: Word32(at) for reg, at in saved_register_slots(hdr, slot).items()})
        esp = slot + 4 + 4 * hdr.arg_count
        pc = hijacked.get(slot, machine.read_u32(slot))
        active = False
        if len(frames) > 100_000:
            raise StackWalk32Error("the frame chain does not end")
    return frames


def return_address_slot(machine: Machine, blob: bytes, offset: int) -> int:
    """Where the return address of the frame stopped at ``offset`` (in its body) is stored."""
    from gctoy.coreclr.gcrefs import decoded_method, pushed_arg_size, stack_size

    hdr = decoded_method(blob).info.header
    if hdr.ebp_frame:
        return machine.reg("ebp") + 4
    return machine.sp + pushed_arg_size(blob, offset) + stack_size(hdr)


def roots_of32(frames: list[WalkedFrame]) -> tuple[list[Slot], list[Slot]]:
    """Object slots and interior slots of walked frames; a register reference becomes the slot where
    the walk found that frame's value of the register (a callee's save slot, or the register)."""
    objects: list[Slot] = []
    interior: list[Slot] = []
    for frame in frames:
        for ref in frame.refs:
            if ref.kind == "register":
                slot: Slot = frame.register_slot(ref.location)
            elif ref.address is None:
                raise StackWalk32Error(f"a live reference in {ref.location} has no stack address")
            else:
                slot = ref.address
            (interior if ref.interior else objects).append(slot)
    return objects, interior


class GCInfoRoots:
    """The root finder of the x86-32 runtime: GC info in the image, frames walked by return address."""

    design = "coreclr-x86"

    def __init__(self) -> None:
        self._methods: MethodTable | None = None
        #: return-address slots a suspension hijacked -> the return address they held
        self.hijacked: dict[int, int] = {}

    def methods(self, machine: Machine) -> MethodTable:
        """The method table, read from guest memory once."""
        if self._methods is None:
            self._methods = MethodTable.from_machine(machine)
        return self._methods

    def may_collect(self, machine: Machine) -> bool:
        """Whether the runtime was called from a managed call site (every call is one: partially interruptible)."""
        return self.methods(machine).lookup(machine.read_u32(machine.sp)) is not None

    def find(self, machine: Machine) -> tuple[list[Slot], list[Slot]]:
        """Object slots and interior slots of every managed frame."""
        return roots_of32(walk32(machine, self.methods(machine), self.hijacked))


def collect_with_interior(collector: Collector, slots: list[Slot], interior: list[Slot]) -> Collection:
    """Collect with object slots and interior slots: each interior slot becomes a derived slot of a
    scratch word (below ESP) holding the address of the object it points into."""
    heap = collector.heap
    machine = heap.machine
    space = heap.space
    index = heap.index()
    derived: list[tuple[Slot, Slot]] = []
    scratch = (machine.sp - SCRATCH_GAP) & ~7
    for slot in interior:
        value = read_slot(machine, slot)
        if value not in space:
            continue  # null, or not a heap address: nothing to move
        obj = index.containing(value)
        if obj is None:
            raise HeapError(f"interior pointer {value:#x} in slot {slot!r} points into no object")
        scratch -= WORD
        write_slot(machine, scratch, obj)
        derived.append((slot, scratch))
    return collector.collect(slots, derived)


def compile_with_gcinfo(
    module, frame: str = "auto", interruptible: str = "auto", gc_registers: int | bool = DEFAULT_HOMES
):
    """Lower an abstract-machine IR module to x86-32 with its GC info in the image; and its root finder
    (``gc_registers``: GC pointers in callee-saved registers across calls, see compile_module32)."""
    from gctoy.codegen.gcinfo32 import with_gcinfo
    from gctoy.codegen.x86_32 import compile_module32

    compiled, _ = with_gcinfo(
        compile_module32(module, frame=frame, interruptible=interruptible, gc_registers=gc_registers)
    )
    return compiled, GCInfoRoots()
