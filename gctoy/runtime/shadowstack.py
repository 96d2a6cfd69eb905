"""Find the roots of a shadow-stack program: walk ``@llvm_gc_root_chain`` in guest memory.

``shadow-stack-gc-lowering`` gives every function with gcroot slots one StackEntry in its
own frame and a constant FrameMap in the data; the entry is pushed on the chain at the
function's entry and popped at its exits, so at any call the chain lists the live frames,
innermost first::

    @llvm_gc_root_chain            (data: one pointer, linkonce)
          |
          v
    StackEntry of the innermost F  (in F's machine frame, 8-byte fields)
    +0   Next  -----------------------> StackEntry of F's caller -> ... -> null
    +8   Map   ---> FrameMap @__gc_F   (constant data)
    +16  Roots[0]                        +0  i32 NumRoots
    +24  Roots[1]                        +4  i32 NumMeta   (<= NumRoots)
    ...                                  +8  Meta[0]       (a pointer each, NumMeta of them)
    +16+8*(NumRoots-1)  Roots[NumRoots-1]

The walk reads exactly what the seed's ``visitGCRoots`` reads: roots ``[0, NumMeta)``
come with ``Meta[i]`` (the lowering put roots with metadata first), roots
``[NumMeta, NumRoots)`` with null. Each root is a stack word, so it is a :data:`Slot` for
the copying collector, which rewrites it in place. There are no derived pointers: a
frontend for a shadow stack keeps only bases in roots and recomputes what it derived.

Unlike a stack map walk this needs no return addresses and no frame sizes: a runtime call
may collect wherever it comes from, as long as the compiled code stored its live pointers
into roots before calling.

What it offers: :func:`visit_gc_roots` (the seed's loop), :func:`shadow_stack_chain` (the
decoded entries, for widgets and the book), :class:`ShadowStackRoots` (the root finder the
runtime uses for such programs), :func:`lower_for_shadow_stack` (the passes that make a module
runnable this way) and :func:`elf_data_symbols` (the chain head and FrameMaps of an object
compiled by ``llc``).
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from gctoy.emu.image import DATA_BASE, SECTION_BASE, STACK_BASE, STACK_TOP
from gctoy.errors import EmulationFault
from gctoy.runtime.collector import Slot
from gctoy.runtime.stackwalk import StackWalkError

ROOT_CHAIN = "llvm_gc_root_chain"
FRAME_MAP_PREFIX = "__gc_"
WORD = 8
#: StackEntry: Next, Map, then the roots.
ENTRY_HEADER = 2 * WORD
#: FrameMap: i32 NumRoots, i32 NumMeta, then Meta[] (pointers, 8-byte aligned).
MAP_HEADER = 8
MAX_ENTRIES = 100_000
MAX_ROOTS = 1 << 16


@dataclass(frozen=True)
class ShadowStackEntry:
    """One StackEntry of the chain with its FrameMap and its roots as they are now."""

    function: str  # from the FrameMap's symbol ``__gc_<F>`` (or its address)
    address: int  # the StackEntry (in the function's machine frame)
    next: int  # the caller's StackEntry, 0 at the outermost
    frame_map: int
    num_roots: int
    num_meta: int
    meta: tuple[int, ...]  # NumMeta metadata pointers
    roots: tuple[int, ...]  # the address of each root slot
    values: tuple[int, ...]  # what each root holds

    def root_meta(self, i: int) -> int:
        """Root ``i``'s metadata pointer (0 for the roots after NumMeta)."""
        return self.meta[i] if i < self.num_meta else 0


def frame_map_names(symbols: dict[str, int]) -> dict[int, str]:
    """FrameMap address -> function name, from ``__gc_<F>`` symbols."""
    return {a: n[len(FRAME_MAP_PREFIX) :] for n, a in symbols.items() if n.startswith(FRAME_MAP_PREFIX)}


def _read(machine, address: int, size: int, what: str) -> bytes:
    try:
        return machine.read(address, size)
    except EmulationFault:
        raise StackWalkError(f"{what} at {address:#x} is not in guest memory: the shadow stack is broken") from None


def read_entry(machine, address: int, names: dict[int, str] | None = None) -> ShadowStackEntry:
    """Decode the StackEntry at ``address`` and the FrameMap it points to."""
    if not STACK_BASE <= address < STACK_TOP or address % WORD:
        raise StackWalkError(f"stack entry {address:#x} is not an aligned address on the guest stack")
    nxt, fmap = struct.unpack("<QQ", _read(machine, address, ENTRY_HEADER, "stack entry"))
    if not DATA_BASE <= fmap < SECTION_BASE or fmap % 4:
        raise StackWalkError(f"stack entry {address:#x}: frame map pointer {fmap:#x} is not into the data")
    num_roots, num_meta = struct.unpack("<ii", _read(machine, fmap, MAP_HEADER, "frame map"))
    if not 0 <= num_meta <= num_roots <= MAX_ROOTS:
        raise StackWalkError(f"frame map {fmap:#x}: NumRoots {num_roots}, NumMeta {num_meta} do not describe a frame")
    meta = struct.unpack(f"<{num_meta}Q", _read(machine, fmap + MAP_HEADER, WORD * num_meta, "frame map"))
    roots = tuple(address + ENTRY_HEADER + WORD * i for i in range(num_roots))
    values = struct.unpack(f"<{num_roots}Q", _read(machine, address + ENTRY_HEADER, WORD * num_roots, "roots"))
    name = (names or {}).get(fmap, f"{fmap:#x}")
    return ShadowStackEntry(name, address, nxt, fmap, num_roots, num_meta, tuple(meta), roots, tuple(values))


def entries(machine, head: int) -> Iterator[int]:
    """The StackEntry addresses of the chain whose head pointer is stored at ``head``."""
    entry = machine.read_u64(head)
    seen: set[int] = set()
    while entry:
        if entry in seen or len(seen) >= MAX_ENTRIES:
            raise StackWalkError(f"the shadow stack loops at entry {entry:#x}")
        seen.add(entry)
        yield entry
        entry = struct.unpack("<Q", _read(machine, entry, WORD, "stack entry"))[0]


def shadow_stack_chain(machine, head: int, names: dict[int, str] | None = None) -> list[ShadowStackEntry]:
    """Every entry of the chain, innermost first, decoded (for widgets, the book and tests)."""
    return [read_entry(machine, e, names) for e in entries(machine, head)]


def visit_gc_roots(machine, head: int, visitor: Callable[[int, int], None] | None = None) -> list[int]:
    """The seed's visitGCRoots: ``visitor(root, meta)`` for every root, metadata roots first per entry.

    Returns the root slots (their addresses) in visiting order.
    """
    out: list[int] = []
    for address in entries(machine, head):
        entry = read_entry(machine, address)
        for i, slot in enumerate(entry.roots):  # [0, NumMeta) with Meta[i], then with null
            if visitor is not None:
                visitor(slot, entry.root_meta(i))
            out.append(slot)
    return out


class ShadowStackRoots:
    """The root finder of the shadow-stack design: the chain, not the machine stack."""

    design = "shadow-stack"

    def __init__(self, head: int | None, names: dict[int, str] | None = None) -> None:
        self.head = head  # None: no function has a root, so there is no chain and nothing to find
        self.names = names or {}

    @classmethod
    def for_symbols(cls, symbols: dict[str, int]) -> ShadowStackRoots:
        """The finder for an image whose symbols include ``llvm_gc_root_chain`` (and ``__gc_<F>``)."""
        if ROOT_CHAIN not in symbols:
            raise StackWalkError(f"the program has no @{ROOT_CHAIN}: it was not lowered for a shadow stack")
        return cls(symbols[ROOT_CHAIN], frame_map_names(symbols))

    def may_collect(self, machine) -> bool:
        """Always: every live pointer of every frame is in a root whenever compiled code calls out."""
        return True

    def find(self, machine) -> tuple[list[Slot], list[tuple[Slot, Slot]]]:
        """Root slots (each once) and no derived slots."""
        if self.head is None:
            return [], []
        return list(dict.fromkeys(visit_gc_roots(machine, self.head))), []

    def all_slots(self, machine) -> Sequence[Slot]:
        """Every root slot, walked afresh (for the heap verifier)."""
        return [] if self.head is None else visit_gc_roots(machine, self.head)

    def chain(self, machine) -> list[ShadowStackEntry]:
        """The decoded chain, innermost first."""
        return [] if self.head is None else shadow_stack_chain(machine, self.head, self.names)


def elf_data_symbols(source, loaded) -> dict[str, int]:
    """Where the loader placed an ELF object's data symbols (``llvm_gc_root_chain``, ``__gc_<F>``).

    ``source`` is the object (path or bytes) that ``loaded`` was loaded from; a symbol's
    address is its section's placed address plus its value.
    """
    import io
    from pathlib import Path

    from elftools.elf.elffile import ELFFile
    from elftools.elf.sections import SymbolTableSection

    data = source if isinstance(source, (bytes, bytearray)) else Path(source).read_bytes()
    elf = ELFFile(io.BytesIO(bytes(data)))
    sections = [s.name for s in elf.iter_sections()]
    out: dict[str, int] = {}
    for table in elf.iter_sections():
        if not isinstance(table, SymbolTableSection):
            continue
        for sym in table.iter_symbols():
            index = sym["st_shndx"]
            if sym["st_info"]["type"] != "STT_OBJECT" or not isinstance(index, int):
                continue
            name = sections[index]
            if sections.count(name) != 1 or name not in loaded.section_addresses:
                continue  # not loaded, or a section name the loader's table cannot tell apart
            out[sym.name] = loaded.section_addresses[name] + sym["st_value"]
    return out


def has_gcroots(module) -> bool:
    """Whether some ``gc "shadow-stack"`` function still calls ``@llvm.gcroot`` (is not lowered yet)."""
    from gctoy.ir.instructions import Call

    return any(
        f.gc == "shadow-stack" and any(isinstance(i, Call) and i.callee_name == "llvm.gcroot" for i in f.instructions())
        for f in module.definitions()
    )


def lower_for_shadow_stack(module, convert_statepoints: bool = True):
    """Make a module runnable under the shadow-stack runtime; returns it.

    With ``convert_statepoints``, statepoints (RS4GC's output; an abstract-machine program
    gets ``rewrite-statepoints-for-gc`` first) become gcroot slots (``statepoints-to-gcroots``).
    Then ``shadow-stack-gc-lowering`` builds the StackEntry frames, if any gcroot is left to lower.
    """
    from gctoy.ir.statepoint import statepoints
    from gctoy.passes import run
    from gctoy.passes.rewrite_statepoints import STATEPOINT_STRATEGIES

    if convert_statepoints:
        gc_functions = [f for f in module.definitions() if f.gc in STATEPOINT_STRATEGIES]
        if gc_functions and not any(statepoints(f) for f in gc_functions):
            run(module, "rewrite-statepoints-for-gc")
        run(module, "statepoints-to-gcroots")
    if has_gcroots(module):
        run(module, "shadow-stack-gc-lowering")
    return module


def format_chain(chain: list[ShadowStackEntry]) -> str:
    """The chain as text, one entry per paragraph (innermost first)."""
    lines = []
    for depth, e in enumerate(chain):
        lines.append(
            f"#{depth} {e.function}: StackEntry {e.address:#x} -> next {e.next:#x}, "
            f"FrameMap {e.frame_map:#x} {{NumRoots {e.num_roots}, NumMeta {e.num_meta}}}"
        )
        for i, (slot, value) in enumerate(zip(e.roots, e.values)):
            lines.append(f"    root {i} at {slot:#x} = {value:#x} (meta {e.root_meta(i):#x})")
    return "\n".join(lines)
