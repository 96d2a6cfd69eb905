"""Tables and listings for GC strategies, safe point kinds, ``__gcmap_`` tables and card tables.

Everything here is computed from what the core produced (a ``CompiledModule``, a ``GCMap``,
the bytes of a card table) and rendered as text (for tests and plain output) or HTML (for
the book).  Four pictures:

* the **strategy table**: each registered strategy's seven flags next to the three fields
  LLVM 14's ``GCStrategy`` still has;
* a **marked listing**: a function's disassembly with every safe point of the chosen kinds
  flagged on its line (a PostCall point is the address *after* a call, so its mark sits on
  the next line)::

      0x400041  call gc_alloc                 <- PreCall
      0x400046  mov qword ptr [rsp + 0x18], rax   <- PostCall

* a **byte dump** of one ``__gcmap_<function>`` table, field by field;
* a **card grid**: the bytes of ``@gctoy_card_table`` with dirty cards shown.

``walk_gcmap_frames`` walks a suspended stack using nothing but the ``__gcmap_`` tables.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from ..codegen.gcmap import ADDRESS_SIZE, GCMap, function_code, safe_points
from ..codegen.x86_64 import CompiledModule
from ..emu import Insn
from ..emu.image import stub_address
from ..errors import GCToyError
from ..passes.lower_barriers import CARD_COUNT, CARD_DIRTY, CARD_SHIFT, HEAP_BASE
from ..strategy import ALL_POINT_KINDS, GCStrategy, PointKind
from .html import INK, PRE_STYLE

#: Background colour of each safe point kind in the HTML listing.
KIND_COLOURS = {
    PointKind.LOOP: "#fff3e0",
    PointKind.RETURN: "#e8f5e9",
    PointKind.PRE_CALL: "#e3f2fd",
    PointKind.POST_CALL: "#f3e5f5",
}
_PRE = f'<pre style="{PRE_STYLE}">'


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


# --------------------------------------------------------------------------- strategies

#: Column heads of the strategy table: the seed's seven flags, then LLVM 14's three fields.
STRATEGY_COLUMNS = (
    "strategy",
    "UseStatepoints",
    "InitRoots",
    "CustomRoots",
    "CustomReadBarriers",
    "CustomWriteBarriers",
    "NeededSafePoints",
    "UsesMetadata",
    "LLVM 14 fields set",
)


def safe_point_kinds_text(kinds: Iterable[PointKind]) -> str:
    """Kinds in the seed's order, e.g. ``Loop|PostCall``; ``-`` for none."""
    chosen = set(kinds)
    return "|".join(k.value for k in PointKind if k in chosen) or "-"


def strategy_rows(strategies: Iterable[GCStrategy]) -> list[tuple[str, ...]]:
    """One row of ``STRATEGY_COLUMNS`` per strategy, in the given order."""
    rows: list[tuple[str, ...]] = []
    for s in strategies:
        llvm = ", ".join(name for name, on in s.llvm14_fields().items() if on) or "-"
        rows.append(
            (
                s.name,
                _yes(s.use_statepoints),
                _yes(s.init_roots),
                _yes(s.custom_roots),
                _yes(s.custom_read_barriers),
                _yes(s.custom_write_barriers),
                safe_point_kinds_text(s.needed_safe_points),
                _yes(s.uses_metadata),
                llvm,
            )
        )
    return rows


def _text_table(head: tuple[str, ...], rows: list[tuple[str, ...]]) -> str:
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in [head, *rows]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def _breakable(name: str) -> str:
    """A column name that may wrap between the words of a CamelCase name (CustomRead|Barriers)."""
    return re.sub(r"(?<=[a-z])(?=[A-Z])", "<wbr>", html.escape(name))


def _wrappable(text: str) -> str:
    """A cell that may wrap after each ``|`` of a set of kinds (Loop|Return|PreCall|PostCall)."""
    return html.escape(text).replace("|", "|<wbr>")


def _html_table(head: tuple[str, ...], rows: list[tuple[str, ...]]) -> str:
    """A compact table: headers may wrap at CamelCase humps, sets of kinds after each ``|``; yes/no
    columns are centred, the first column and the last (free text) are left-aligned; so that the table
    fits the book's column (790 px at 1440x900)."""

    def align(k: int) -> str:
        return "left" if k in (0, len(head) - 1) else "center"

    pad = "padding:2px 4px"
    th = "".join(
        f'<th style="{pad};text-align:{align(k)};vertical-align:bottom">{_breakable(h)}</th>'
        for k, h in enumerate(head)
    )
    body = "".join(
        "<tr>"
        + "".join(f'<td style="{pad};text-align:{align(k)}">{_wrappable(c)}</td>' for k, c in enumerate(r))
        + "</tr>"
        for r in rows
    )
    return f'<table style="border-collapse:collapse;font-size:12px;max-width:100%"><tr>{th}</tr>{body}</table>'


def strategy_table_text(strategies: Iterable[GCStrategy]) -> str:
    """The strategy table as aligned text."""
    return _text_table(STRATEGY_COLUMNS, strategy_rows(strategies))


def strategy_table_html(strategies: Iterable[GCStrategy]) -> str:
    """The strategy table as an HTML table."""
    return _html_table(STRATEGY_COLUMNS, strategy_rows(strategies))


# --------------------------------------------------------------------------- marked listings


@dataclass(frozen=True)
class ListingLine:
    """One instruction of a listing and the safe point kinds that sit at its address."""

    address: int
    text: str
    marks: tuple[PointKind, ...]


def address_names(compiled: CompiledModule) -> dict[int, str]:
    """Names for the addresses a call can reach: compiled functions and native stubs."""
    names = {stub_address(i): n for i, n in enumerate(compiled.image.natives)}
    names.update({f.address: f.name for f in compiled.functions})
    return names


def _named(insn: Insn, names: Mapping[int, str]) -> str:
    if insn.mnemonic == "call":
        try:
            target = int(insn.op_str, 0)
        except ValueError:
            return insn.text
        if target in names:
            return f"call {names[target]}"
    return insn.text


def marked_listing(
    compiled: CompiledModule, name: str, kinds: Iterable[PointKind] = ALL_POINT_KINDS
) -> list[ListingLine]:
    """The disassembly of ``@name`` with each safe point of ``kinds`` marked on its line.

    A PostCall point after a call that ends the function has no instruction of its own; it
    gets a last line ``(end of function)``.
    """
    insns = function_code(compiled, name)
    names = address_names(compiled)
    marks: dict[int, list[PointKind]] = {}
    for p in safe_points(compiled, name, kinds):
        marks.setdefault(p.address, []).append(p.kind)
    lines = [ListingLine(i.address, _named(i, names), tuple(marks.pop(i.address, ()))) for i in insns]
    for address in sorted(marks):
        lines.append(ListingLine(address, "(end of function)", tuple(marks[address])))
    return lines


def listing_text(lines: Iterable[ListingLine]) -> str:
    """A listing as text, ``<- Kind`` after each marked line."""
    lines = list(lines)
    width = max((len(line.text) for line in lines), default=0)
    out = []
    for line in lines:
        mark = f"   <- {', '.join(k.value for k in line.marks)}" if line.marks else ""
        out.append(f"{line.address:#x}  {line.text.ljust(width)}{mark}".rstrip())
    return "\n".join(out)


def listing_html(lines: Iterable[ListingLine], caption: str | None = None) -> str:
    """A listing as an HTML ``<pre>``: marked lines coloured by their (first) kind and labelled."""
    rows = []
    for line in lines:
        text = html.escape(f"{line.address:#x}  {line.text}")
        if line.marks:
            colour = KIND_COLOURS[line.marks[0]]
            label = html.escape(", ".join(k.value for k in line.marks))
            rows.append(f'<span style="background:{colour};color:{INK}">{text}   &lt;- <b>{label}</b></span>')
        else:
            rows.append(text)
    head = f"<div>{caption}</div>" if caption else ""
    return head + _PRE + "\n".join(rows) + "</pre>"


@dataclass(frozen=True)
class KindPage:
    """One precomputed page of the safe point chooser: a label, the kinds it marks and the listing."""

    label: str
    kinds: frozenset[PointKind]
    lines: tuple[ListingLine, ...]

    @property
    def count(self) -> int:
        """How many safe points the page marks."""
        return sum(len(line.marks) for line in self.lines)

    def html(self) -> str:
        """The page as HTML, captioned with its kinds and count."""
        return listing_html(self.lines, f"<b>{html.escape(self.label)}</b>: {self.count} safe point(s)")


def kind_pages(compiled: CompiledModule, name: str) -> list[KindPage]:
    """A page per safe point kind, in the seed's order, then one with all four."""
    choices = [(k.value, frozenset({k})) for k in PointKind] + [("all four", ALL_POINT_KINDS)]
    return [KindPage(label, kinds, tuple(marked_listing(compiled, name, kinds))) for label, kinds in choices]


# --------------------------------------------------------------------------- __gcmap_ bytes


@dataclass(frozen=True)
class GCMapField:
    """Bytes ``[start, end)`` of a ``__gcmap_`` table, the field they hold and its value."""

    start: int
    end: int
    name: str
    value: int


def gcmap_fields(table: GCMap, address_size: int = ADDRESS_SIZE) -> list[GCMapField]:
    """Every field of ``table`` as laid out by ``GCMap.to_bytes``, covering its bytes exactly."""
    fields: list[GCMapField] = []
    pos = 0

    def add(size: int, name: str, value: int) -> None:
        nonlocal pos
        fields.append(GCMapField(pos, pos + size, name, value))
        pos += size

    add(4, "PointCount", len(table.safe_points))
    for i, a in enumerate(table.safe_points):
        kind = f" ({table.kinds[i].value})" if i < len(table.kinds) else ""
        add(address_size, f"SafePointAddress[{i}]{kind}", a)
    add(4, "StackFrameSize (words)", table.frame_size_words)
    add(4, "StackArity", table.stack_arity)
    add(4, "LiveCount", len(table.live_offsets))
    for i, off in enumerate(table.live_offsets):
        add(4, f"LiveOffsets[{i}] (bytes from rsp)", off)
    return fields


def gcmap_dump_text(table: GCMap, address_size: int = ADDRESS_SIZE, base: int = 0) -> str:
    """The table's bytes, one field a line: address (``base`` + offset), hex bytes, field, value."""
    raw = table.to_bytes(address_size)
    width = 3 * address_size
    out = [f"{table.symbol}:"]
    for f in gcmap_fields(table, address_size):
        hexbytes = " ".join(f"{b:02x}" for b in raw[f.start : f.end])
        value = f"{f.value:#x}" if f.name.startswith("SafePointAddress") else str(f.value)
        out.append(f"  {base + f.start:#010x}  {hexbytes.ljust(width)} {f.name:<34} {value}")
    return "\n".join(out)


# --------------------------------------------------------------------------- walking frames with the tables


@dataclass(frozen=True)
class GCMapFrame:
    """One frame found by a ``__gcmap_`` walk: whose it is, where it stopped, and its roots.

    ``kind`` is PostCall when the table carries kinds (as built by the printer) and None when it
    was decoded from bytes, which hold addresses only.
    """

    function: str
    return_address: int
    kind: PointKind | None
    rsp: int
    roots: tuple[tuple[int, int], ...]  # (slot address, value held)


class GCMapWalkError(GCToyError):
    """A return address that no ``__gcmap_`` table lists as a PostCall safe point."""


def walk_gcmap_frames(read_u64: Callable[[int], int], sp: int, maps: Iterable[GCMap], stop: int) -> list[GCMapFrame]:
    """Walk a stack suspended inside a call, innermost frame first, using only the tables.

    ``sp`` points at the return address the innermost call pushed; the walk ends at the
    return address ``stop``.  For each return address it finds the table that lists it, reads
    the roots at ``rsp + offset`` (``rsp`` is the caller's, one word above the return
    address) and steps over the frame to its caller's return address::

        sp ->  | return address |        the safe point (a PostCall address)
               | frame, StackFrameSize words, roots at rsp + LiveOffsets[i]
               |   ... (its own saved rbp is the last word) ...
               | caller's return address |  at rsp + 8 * StackFrameSize

    Tables decoded from bytes have no kinds; any address they list is accepted, since a
    word the walk finds in a return address position can only be a PostCall point.  Tables
    with kinds must list the address as PostCall.
    """
    owners: dict[int, tuple[GCMap, set[PointKind]]] = {}
    for table in maps:
        for i, a in enumerate(table.safe_points):
            kinds = owners.setdefault(a, (table, set()))[1]
            if i < len(table.kinds):
                kinds.add(table.kinds[i])
    frames = []
    ret = read_u64(sp)
    while ret != stop:
        if ret not in owners:
            raise GCMapWalkError(f"return address {ret:#x} at {sp:#x} is no safe point of any __gcmap_ table")
        table, kinds = owners[ret]
        if table.kinds and PointKind.POST_CALL not in kinds:
            listed = "|".join(k.value for k in PointKind if k in kinds)
            raise GCMapWalkError(
                f"return address {ret:#x} is a {listed} safe point of @{table.function}, not a PostCall one"
            )
        rsp = sp + 8
        roots = tuple((rsp + off, read_u64(rsp + off)) for off in table.live_offsets)
        frames.append(GCMapFrame(table.function, ret, PointKind.POST_CALL if table.kinds else None, rsp, roots))
        sp = rsp + 8 * table.frame_size_words
        ret = read_u64(sp)
    return frames


def frames_text(frames: Iterable[GCMapFrame]) -> str:
    """A walk as text: one line per frame, its roots as ``[slot] = value``."""
    out = []
    for f in frames:
        roots = ", ".join(f"[{a:#x}] = {v:#x}" for a, v in f.roots) or "no roots"
        kind = f" ({f.kind.value})" if f.kind else ""
        out.append(f"@{f.function:<10} stopped at {f.return_address:#x}{kind}, rsp {f.rsp:#x}: {roots}")
    return "\n".join(out)


# --------------------------------------------------------------------------- card tables


def card_of(address: int) -> int:
    """The card the ``gctoy-cardmark`` barrier marks for an object at ``address`` (the spare last card
    for an object outside the heap)."""
    index = (address - HEAP_BASE) >> CARD_SHIFT
    return index if 0 <= index < CARD_COUNT else CARD_COUNT


def card_range(index: int) -> tuple[int, int]:
    """The heap addresses ``[start, end)`` a card covers (the spare card covers none)."""
    if not 0 <= index < CARD_COUNT:
        raise GCToyError(f"card {index} is not a heap card (0..{CARD_COUNT - 1})")
    start = HEAP_BASE + (index << CARD_SHIFT)
    return start, start + (1 << CARD_SHIFT)


def dirty_cards(table: bytes) -> list[int]:
    """Indexes of the cards a barrier has marked, ascending."""
    return [i for i, b in enumerate(table) if b == CARD_DIRTY]


def card_grid_text(table: bytes, first: int, count: int, per_row: int = 16) -> str:
    """Cards ``first .. first+count-1`` as rows of ``.`` (clean) and ``#`` (dirty), each row labelled
    with its first card and heap address."""
    if first < 0 or count < 0 or first + count > len(table):
        raise GCToyError(f"cards {first}..{first + count - 1} are outside a table of {len(table)}")
    out = []
    for row in range(first, first + count, per_row):
        cells = "".join("#" if table[i] == CARD_DIRTY else "." for i in range(row, min(row + per_row, first + count)))
        where = f"{HEAP_BASE + (row << CARD_SHIFT):#x}" if row < CARD_COUNT else "(outside the heap)"
        out.append(f"card {row:>4} {where:>18}  {cells}")
    return "\n".join(out)


def card_grid_html(
    table: bytes, first: int, count: int, labels: Mapping[int, str] | None = None, per_row: int = 16
) -> str:
    """The same cards as an HTML grid: dirty cards dark, each cell titled with its index; ``labels``
    put a short text (e.g. the objects that live there) under chosen cards."""
    if first < 0 or count < 0 or first + count > len(table):
        raise GCToyError(f"cards {first}..{first + count - 1} are outside a table of {len(table)}")
    labels = labels or {}
    rows = []
    for row in range(first, first + count, per_row):
        cells = []
        for i in range(row, min(row + per_row, first + count)):
            dirty = table[i] == CARD_DIRTY
            colour = "#37474f;color:#fff" if dirty else f"#eceff1;color:{INK}"
            label = html.escape(labels.get(i, ""))
            cells.append(
                f'<td title="card {i}" style="background:{colour};width:34px;height:28px;'
                f'text-align:center;font-size:10px;border:1px solid #fff">{i}<br>{label}</td>'
            )
        rows.append("<tr>" + "".join(cells) + "</tr>")
    return '<table style="border-collapse:collapse">' + "".join(rows) + "</table>"


__all__ = [
    "KIND_COLOURS",
    "STRATEGY_COLUMNS",
    "GCMapField",
    "GCMapFrame",
    "GCMapWalkError",
    "KindPage",
    "ListingLine",
    "address_names",
    "card_grid_html",
    "card_grid_text",
    "card_of",
    "card_range",
    "dirty_cards",
    "frames_text",
    "gcmap_dump_text",
    "gcmap_fields",
    "kind_pages",
    "listing_html",
    "listing_text",
    "marked_listing",
    "safe_point_kinds_text",
    "strategy_rows",
    "strategy_table_html",
    "strategy_table_text",
    "walk_gcmap_frames",
]
