"""The parts of a recorded run: machine states (pc, disassembly, registers, frames, heap, what a
collection moved), the program's statepoints, and the `Trace` that holds them.

Views and widgets read these; `gctoy.runtime.trace` records them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from gctoy.errors import GCToyError
from gctoy.runtime.heap import HEADER_SIZE

#: The guest's word size (the recorder follows x86-64 programs).
WORD = 8

#: When a state was taken: at the entry, after one instruction, at a call into the runtime, right
#: after a collection, at the return.
StateKind = Literal["start", "step", "safepoint", "collected", "returned"]
#: an instruction of the window: "pc" executes next; "caller": the call the runtime was entered from
Marker = Literal["pc", "caller", ""]


class TraceError(GCToyError):
    """A program the recorder cannot follow (no statepoints, an unknown focus, too many states)."""


@dataclass(frozen=True)
class DisasmLine:
    """One instruction of the disassembly window."""

    address: int
    hex: str
    text: str
    labels: tuple[str, ...]  # code labels placed at this address
    marker: Marker
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
    kind: StateKind
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
