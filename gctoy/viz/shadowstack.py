"""Pictures of the shadow stack during a collection: the chain of StackEntries, their FrameMaps,
the roots before and after the collector moved what they point to, and the surviving objects.

A collection is captured as a :class:`ChainSnapshot` (what the runtime's ``on_collect`` hook sees
right after the collector has run, plus the old root values from the :class:`Collection` log)::

    collection 3: @llvm_gc_root_chain (0x600008) = 0x8ffe10
          |
          v
    #0 cons: StackEntry 0x8ffe10, Map = __gc_cons {NumRoots 1, NumMeta 1}
         Roots[0] at 0x8ffe20  meta @cell_meta 0x10000030 -> 0x10100010
          | Next
          v
    #1 main: StackEntry 0x8ffec0, Map = __gc_main {NumRoots 1, NumMeta 0}
         Roots[0] at 0x8ffed0  meta null       0x10000030 -> 0x10100010
          | Next
          v
        null

The seed's C structures are also kept here as data (:data:`FRAME_MAP`, :data:`STACK_ENTRY`), with
their x86-64 offsets, so the book can draw them next to the bytes the runtime reads.

Pages for the chain walker widget (:func:`chain_pages`) are one per (collection, entry): the
walk visits the entries innermost first, as the seed's ``visitGCRoots`` does.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

from ..errors import GCToyError
from ..runtime.collector import Collection
from ..runtime.shadowstack import ShadowStackEntry
from .html import INK

#: At most this many heap objects are listed per snapshot (the rest are counted).
MAX_OBJECTS = 24


@dataclass(frozen=True)
class CField:
    """One field of one of the seed's C structures, with its x86-64 offset and size."""

    struct: str
    name: str
    ctype: str
    offset: int
    size: int | None  # None: a flexible array ``[0]`` that runs to the end
    note: str


#: ``struct FrameMap`` (constant data, one per function): the header words and the metadata array.
FRAME_MAP: tuple[CField, ...] = (
    CField("FrameMap", "NumRoots", "int32_t", 0, 4, "how many roots the StackEntry holds"),
    CField("FrameMap", "NumMeta", "int32_t", 4, 4, "how many of them have metadata (they come first)"),
    CField("FrameMap", "Meta[]", "const void *", 8, None, "NumMeta metadata pointers, 8 bytes each"),
)

#: ``struct StackEntry`` (in the function's machine frame): the link, the map, the roots in place.
STACK_ENTRY: tuple[CField, ...] = (
    CField("StackEntry", "Next", "StackEntry *", 0, 8, "the caller's entry (null at the outermost)"),
    CField("StackEntry", "Map", "const FrameMap *", 8, 8, "this function's constant FrameMap"),
    CField("StackEntry", "Roots[]", "void *", 16, None, "NumRoots root slots, 8 bytes each"),
)

#: ``StackEntry *llvm_gc_root_chain``: the one global head (this is why the design is not thread-safe).
ROOT_CHAIN_FIELD = CField("(global)", "llvm_gc_root_chain", "StackEntry *", 0, 8, "the innermost entry")


def struct_text(fields: tuple[CField, ...]) -> str:
    """A C structure as an offset table, e.g. ``+8   Map   const FrameMap *  (8 bytes)``."""
    lines = [f"struct {fields[0].struct} {{"]
    width = max(len(f.name) for f in fields)
    cwidth = max(len(f.ctype) for f in fields)
    for f in fields:
        size = f"{f.size} bytes" if f.size is not None else "to the end"
        lines.append(f"  +{f.offset:<3} {f.name:<{width}}  {f.ctype:<{cwidth}}  ({size}) {f.note}")
    return "\n".join(lines + ["};"])


@dataclass(frozen=True)
class RootView:
    """One root of one entry: its slot, its metadata and the value before and after the collection."""

    index: int
    slot: int
    meta: int
    before: int
    after: int

    @property
    def moved(self) -> bool:
        """Whether the collector rewrote the slot."""
        return self.before != self.after


@dataclass(frozen=True)
class EntryView:
    """One StackEntry of a snapshot, with its FrameMap and roots."""

    depth: int  # 0 = innermost
    function: str
    address: int
    next: int
    frame_map: int
    num_roots: int
    num_meta: int
    meta: tuple[int, ...]
    roots: tuple[RootView, ...]


@dataclass(frozen=True)
class HeapObjectView:
    """A surviving object in to-space: its pointer mask, fields, and which roots name it."""

    address: int
    ptrmask: int
    fields: tuple[int, ...]
    named_by: tuple[str, ...]  # "main.root0" for each root slot holding this address

    def is_pointer_field(self, i: int) -> bool:
        """Whether field ``i`` holds a GC pointer (its bit in the mask)."""
        return bool(self.ptrmask >> i & 1)


@dataclass(frozen=True)
class ChainSnapshot:
    """The chain as a collection saw it: entries innermost first, and the heap it left behind."""

    collection: int  # 1-based number of the collection in the run
    head: int  # address of @llvm_gc_root_chain
    entries: tuple[EntryView, ...]
    objects: tuple[HeapObjectView, ...]
    more_objects: int  # objects beyond MAX_OBJECTS, not listed
    from_space: tuple[int, int]
    to_space: tuple[int, int]
    objects_copied: int

    @property
    def roots(self) -> tuple[RootView, ...]:
        """Every root in the seed's visiting order: entry by entry, root 0 first."""
        return tuple(r for e in self.entries for r in e.roots)


def root_name(entry: EntryView, root: RootView) -> str:
    """How pictures name a root: ``function.rootN``."""
    return f"{entry.function}.root{root.index}"


def snapshot(chain: list[ShadowStackEntry], done: Collection, heap, head: int, number: int) -> ChainSnapshot:
    """A :class:`ChainSnapshot` from the decoded chain (read after the collection), the collector's
    log of (slot, old, new) and the heap; ``number`` is the collection's 1-based index."""
    old = {slot: before for slot, before, _ in done.roots}
    entries = []
    for depth, e in enumerate(chain):
        roots = tuple(
            RootView(i, slot, e.root_meta(i), old.get(slot, value), value)
            for i, (slot, value) in enumerate(zip(e.roots, e.values))
        )
        entries.append(
            EntryView(depth, e.function, e.address, e.next, e.frame_map, e.num_roots, e.num_meta, e.meta, roots)
        )
    names: dict[int, list[str]] = {}
    for view in entries:
        for r in view.roots:
            if r.after:
                names.setdefault(r.after, []).append(root_name(view, r))
    addresses = heap.objects()
    objects = []
    for obj in addresses[:MAX_OBJECTS]:
        _, mask = heap.header(obj)
        objects.append(HeapObjectView(obj, mask, tuple(heap.fields(obj)), tuple(names.get(obj, ()))))
    return ChainSnapshot(
        number,
        head,
        tuple(entries),
        tuple(objects),
        max(0, len(addresses) - MAX_OBJECTS),
        done.from_space,
        done.to_space,
        done.objects_copied,
    )


def record_snapshots(runtime) -> list[ChainSnapshot]:
    """Make ``runtime`` (a shadow-stack :class:`~gctoy.runtime.run.Runtime`) record a snapshot at every
    collection; returns the list it fills. An ``on_collect`` already set still runs afterwards."""
    if getattr(runtime.roots, "design", None) != "shadow-stack":
        raise GCToyError("the runtime does not find its roots on a shadow stack (no @llvm_gc_root_chain)")
    shots: list[ChainSnapshot] = []
    earlier = runtime.on_collect

    def hook(rt, done: Collection) -> None:
        shots.append(snapshot(rt.roots.chain(rt.machine), done, rt.heap, rt.roots.head, len(rt.collections)))
        if earlier is not None:
            earlier(rt, done)

    runtime.on_collect = hook
    return shots


def _meta(meta: int, symbols: dict[int, str]) -> str:
    return "null" if not meta else f"@{symbols[meta]}" if meta in symbols else f"{meta:#x}"


def chain_text(shot: ChainSnapshot, symbols: dict[int, str] | None = None) -> str:
    """The chain as an ASCII picture: head, entries with their FrameMaps and roots (old -> new), null."""
    symbols = symbols or {}
    first = shot.entries[0].address if shot.entries else 0
    lines = [f"collection {shot.collection}: @llvm_gc_root_chain ({shot.head:#x}) = {first:#x}", "      |", "      v"]
    for e in shot.entries:
        lines.append(
            f"#{e.depth} {e.function}: StackEntry {e.address:#x}, "
            f"Map = __gc_{e.function} {{NumRoots {e.num_roots}, NumMeta {e.num_meta}}}"
        )
        for r in e.roots:
            change = f"{r.before:#x} -> {r.after:#x}" if r.moved else f"{r.after:#x} (unchanged)"
            lines.append(f"     Roots[{r.index}] at {r.slot:#x}  meta {_meta(r.meta, symbols):<10} {change}")
        lines += ["      | Next", "      v"]
    lines.append("    null")
    return "\n".join(lines)


def objects_text(shot: ChainSnapshot) -> str:
    """The surviving objects, one line each: address, fields (pointers marked ``*``), and the roots naming it."""
    lines = []
    for o in shot.objects:
        fields = ", ".join(f"*{v:#x}" if o.is_pointer_field(i) else str(v) for i, v in enumerate(o.fields))
        named = f"  <- {', '.join(o.named_by)}" if o.named_by else ""
        lines.append(f"{o.address:#x}: [{fields}]{named}")
    if shot.more_objects:
        lines.append(f"... and {shot.more_objects} more")
    return "\n".join(lines)


@dataclass(frozen=True)
class ChainPage:
    """One page of the chain walker: a collection and the entry the walk has reached."""

    snapshot: int  # index into the list of snapshots
    depth: int  # entry index, 0 = innermost

    def title(self, shots: list[ChainSnapshot]) -> str:
        """``collection 2, entry #1 (main)``."""
        shot = shots[self.snapshot]
        name = shot.entries[self.depth].function if shot.entries else "(empty chain)"
        return f"collection {shot.collection}, entry #{self.depth} ({name})"


def chain_pages(shots: list[ChainSnapshot]) -> list[ChainPage]:
    """Every (collection, entry) in walking order; a collection with an empty chain gets one page."""
    return [ChainPage(s, d) for s, shot in enumerate(shots) for d in range(max(1, len(shot.entries)))]


_CELL = "border:1px solid #bbb;padding:2px 6px;font-family:monospace;font-size:12px"
_FOCUS_BG = "#fff3cd"
_MOVED_FG = "#2e7d32"


def _td(text: str, style: str = "") -> str:
    return f'<td style="{_CELL};{style}">{html.escape(text)}</td>'


def _entry_html(e: EntryView, focus: bool, symbols: dict[int, str]) -> str:
    bg = f"background:{_FOCUS_BG};color:{INK}" if focus else ""
    head = (
        f"<b>#{e.depth} {html.escape(e.function)}</b> &nbsp; StackEntry {e.address:#x} &nbsp; "
        f"Next {e.next:#x} &nbsp; Map {e.frame_map:#x} = __gc_{html.escape(e.function)} "
        f"{{NumRoots {e.num_roots}, NumMeta {e.num_meta}}}"
    )
    rows = [
        "<tr>" + "".join(f'<th style="{_CELL}">{h}</th>' for h in ("root", "slot", "meta", "before", "after")) + "</tr>"
    ]
    for r in e.roots:
        after_style = f"color:{_MOVED_FG};font-weight:bold" if r.moved else ""
        rows.append(
            "<tr>"
            + _td(f"Roots[{r.index}]")
            + _td(f"{r.slot:#x}")
            + _td(_meta(r.meta, symbols))
            + _td(f"{r.before:#x}")
            + _td(f"{r.after:#x}", after_style)
            + "</tr>"
        )
    table = f'<table style="border-collapse:collapse;margin:2px 0 2px 16px">{"".join(rows)}</table>'
    marker = " &larr; the walk is here" if focus else ""
    return f'<div style="{bg};padding:4px;margin:2px 0;border-left:3px solid #888">{head}{marker}{table}</div>'


def chain_page_html(shots: list[ChainSnapshot], page: ChainPage, symbols: dict[int, str] | None = None) -> str:
    """One page: the whole chain of the page's collection, the focused entry highlighted, and the
    surviving objects (those named by the focused entry's roots highlighted)."""
    symbols = symbols or {}
    shot = shots[page.snapshot]
    parts = [
        f"<div><b>{html.escape(page.title(shots))}</b> &nbsp; {shot.objects_copied} objects copied "
        f"from {shot.from_space[0]:#x} to {shot.to_space[0]:#x}</div>",
        f'<div style="font-family:monospace;font-size:12px">@llvm_gc_root_chain ({shot.head:#x}) '
        f"&rarr; {shot.entries[0].address if shot.entries else 0:#x}</div>",
    ]
    for e in shot.entries:
        parts.append(_entry_html(e, e.depth == page.depth, symbols))
        parts.append('<div style="font-family:monospace;margin-left:24px">&darr; Next</div>')
    parts.append('<div style="font-family:monospace;margin-left:24px">null</div>')
    focus = shot.entries[page.depth] if shot.entries else None
    mine = {r.after for r in focus.roots if r.after} if focus else set()
    rows = ["<tr>" + "".join(f'<th style="{_CELL}">{h}</th>' for h in ("object", "fields", "named by")) + "</tr>"]
    for o in shot.objects:
        fields = ", ".join(f"*{v:#x}" if o.is_pointer_field(i) else str(v) for i, v in enumerate(o.fields))
        style = f"background:{_FOCUS_BG};color:{INK}" if o.address in mine else ""
        rows.append(
            f'<tr style="{style}">' + _td(f"{o.address:#x}") + _td(f"[{fields}]") + _td(", ".join(o.named_by)) + "</tr>"
        )
    more = f"<div>... and {shot.more_objects} more objects</div>" if shot.more_objects else ""
    parts.append(
        f'<div style="margin-top:6px"><b>to-space after the collection</b></div>'
        f'<table style="border-collapse:collapse">{"".join(rows)}</table>{more}'
    )
    return "".join(parts)
