"""A recorded machine state as HTML: disassembly, registers, the frame with its GC slots, the heap.

The page of one :class:`~gctoy.runtime.trace.MachineState` has three columns::

    +-- code ------------------+-- frame of @main ----------------+-- heap ----------------------+
    | main.sp2:                | addr  rsp+  value   slot   GC    | space 1 [0x10001000, ...)    |
    |   0x400175 call gc_coll. | ...   40    0x1001  %node  base  | A 0x10001010 [30 | ->B]      |
    | > 0x40017a mov rax, ...  | ...   112   0x1018  %link0 deriv | ...                          |
    | registers (changed bold) | return address, saved rbp        | collection: roots, forwarding|
    +--------------------------+----------------------------------+------------------------------+

Every object keeps its letter and its colour through every move, and every word that points
into the heap (a slot, a register, a field) is painted with the colour of the object it points
into, so a move shows up as the same colour at a new address. Only inline styles are used, so
a page renders the same in JupyterLab, in the static book and in a standalone HTML file; the
output depends only on the state, so it is byte-for-byte reproducible.
"""

from __future__ import annotations

import html

from ..runtime.trace import FrameView, HeapObject, HeapView, MachineState, Trace
from .html import INK

OBJECT_COLOURS = ("#cfe8ff", "#ffd9b3", "#d4f4d0", "#f3d1f4", "#fff3a8", "#d9d4ff", "#c8f0ee", "#ffd0d0")
GC_SLOT_BG = "#ffe9a8"
CHANGED_FG = "#c0392b"
STALE_BG = "#ff8a80"
KIND_COLOURS = {
    "start": "#607d8b",
    "step": "#455a64",
    "safepoint": "#b26a00",
    "collected": "#2e7d32",
    "returned": "#37474f",
}
_PRE = "white-space:pre"
_PANEL = "flex:0 0 auto;min-width:0"
_H = "font-weight:bold;margin:4px 0 2px 0"


def _e(text: object) -> str:
    return html.escape(str(text))


def _object_index(name: str) -> int:
    """A letter name's ordinal (A=0, Z=25, AA=26)."""
    n = 0
    for ch in name:
        n = n * 26 + (ord(ch) - ord("A") + 1)
    return n - 1


def object_colour(name: str) -> str:
    """The fixed colour of the object named ``name``."""
    return OBJECT_COLOURS[_object_index(name) % len(OBJECT_COLOURS)]


class _Pointees:
    """Which object (and offset) a word points into, in the current space or the idle one."""

    def __init__(self, heap: HeapView) -> None:
        self.heap = heap
        self.objects = sorted(heap.objects, key=lambda o: o.address)

    def find(self, value: int) -> tuple[HeapObject, int] | None:
        for obj in self.objects:
            if obj.address <= value < obj.address + 8 * max(obj.nfields, 1):
                return obj, value - obj.address
        return None

    def stale(self, value: int) -> bool:
        """Whether ``value`` points into the idle space."""
        base, end = self.heap.other
        return base <= value < end

    def word(self, value: int, width: int = 0, *, strict: bool = False) -> str:
        """One word as escaped text padded to ``width``, coloured by the object it points into.

        A word pointing into the idle space is marked *stale* in red when ``strict`` (a GC slot or
        a pointer field: the collector should have rewritten it) and in grey otherwise (a dead
        slot or a scratch register nobody reads again).
        """
        text = f"{value:#x}"
        found = self.find(value)
        if found:
            obj, off = found
            text += f" ->{obj.name}" + (f"+{off}" if off else "")
            return f'<span style="background:{object_colour(obj.name)};color:{INK}">{_e(text)}</span>' + " " * (
                width - len(text)
            )
        if self.stale(value):
            text += " stale!" if strict else " (idle space)"
            style = f"background:{STALE_BG};color:{INK};font-weight:bold" if strict else "color:#999"
            return f'<span style="{style}">{_e(text)}</span>' + " " * (width - len(text))
        return _e(text.ljust(width))


def _header(state: MachineState, total: int | None) -> str:
    colour = KIND_COLOURS.get(state.kind, "#455a64")
    count = f"{state.index}/{total - 1}" if total else f"{state.index}"
    printed = ", ".join(str(v) for v in state.printed) or "nothing yet"
    return (
        f'<div style="margin-bottom:6px"><span style="background:{colour};color:white;padding:1px 6px;'
        f'border-radius:3px">{_e(state.kind)}</span> <b>state {count}</b> &middot; pc {state.pc:#x} '
        f"({_e(state.where)}) &middot; {state.instructions} instructions executed &middot; printed: {_e(printed)}"
        f'<div style="margin-top:3px">{_e(state.title)}</div></div>'
    )


def disasm_html(state: MachineState) -> str:
    """The disassembly window, the next instruction (or the call the runtime came from) marked."""
    rows = []
    for line in state.disasm:
        for label in line.labels:
            rows.append(f'<span style="color:#6a1b9a">{_e(label)}:</span>')
        arrow, style = "  ", ""
        if line.marker == "pc":
            arrow, style = "&#9654; ", f"background:#bbdefb;color:{INK};font-weight:bold"
        elif line.marker == "caller":
            arrow, style = "&#8627; ", f"background:#ffe0b2;color:{INK};font-weight:bold"
        note = ""
        if line.target:
            note = f' <span style="color:#6a1b9a">; {_e(line.target)}'
            note += f" &middot; statepoint {_e(line.statepoint)}" if line.statepoint else ""
            note += "</span>"
        text = f"{arrow}{line.address:08x}  {_e(line.text)}{note}"
        rows.append(f'<span style="{style}">{text}</span>' if style else text)
    tail = ""
    if state.runtime_call:
        tail = (
            f'<div style="margin-top:3px;color:#b26a00">&#8627; now inside the runtime: '
            f"{_e(state.runtime_call)} (pc {state.pc:#x}, a trap stub)</div>"
        )
    if not rows:
        return f'<div style="{_H}">code</div><div>(no code: the call has returned)</div>'
    return f'<div style="{_H}">code</div><div style="{_PRE}">' + "\n".join(rows) + "</div>" + tail


def registers_html(state: MachineState, pointees: _Pointees) -> str:
    """The general registers, changed ones in bold red, heap pointers in their object's colour."""
    changed = set(state.changed_registers)
    lines = []
    for name, value in state.registers:
        if name == "rflags":
            continue
        label = f"{name:>4}"
        if name in changed:
            label = f'<span style="color:{CHANGED_FG};font-weight:bold">{label}</span>'
        lines.append(f"{label} {pointees.word(value)}")
    return (
        f'<div style="{_H}">registers <span style="font-weight:normal;color:#888">(changed in red)</span></div>'
        f'<div style="{_PRE}">' + "\n".join(lines) + "</div>"
    )


def frame_html(frame: FrameView | None, pointees: _Pointees, *, title: str = "frame", all_words: bool = False) -> str:
    """The frame's words from the return address down to rsp; the record's GC slots highlighted.

    Words that hold zero, are no GC slot and did not just change are folded into one line
    unless ``all_words``.
    """
    if frame is None:
        return f'<div style="{_H}">{_e(title)}</div><div>(the frame is not set up yet)</div>'
    head = (
        f'<div style="{_H}">{_e(title)} of @{_e(frame.function)}: rsp = {frame.sp:#x}, stack size '
        f"{frame.stack_size}</div>"
    )
    if frame.record:
        head += (
            f'<div style="color:#b26a00">highlighted: the slots the stack map record of {_e(frame.record)} names</div>'
        )
    lines = [f'<span style="color:#888">{"address":<10} {"rsp+":>4}  {"value":<26} {"holds":<24} in the record</span>']
    hidden = 0
    for w in reversed(frame.words):
        if not all_words and w.value == 0 and not w.roles and w.previous is None:
            hidden += 1
            continue
        value = pointees.word(w.value, 26, strict=bool(w.roles))
        line = f"{w.address:#010x} {w.offset:>4}  {value} {_e(w.name):<24} {_e(', '.join(w.roles))}"
        if w.roles:
            line = f'<span style="background:{GC_SLOT_BG};color:{INK};font-weight:bold">{line}</span>'
        if w.previous is not None:
            line += f'<span style="color:{CHANGED_FG}"> (was {w.previous:#x})</span>'
        lines.append(line)
    if hidden:
        lines.append(f'<span style="color:#888">({hidden} words holding 0 not shown)</span>')
    pairs = ""
    if frame.pairs:
        items = "".join(f"<li>pair {p.index}: base {_e(p.base)}, derived {_e(p.derived)}</li>" for p in frame.pairs)
        pairs = f'<ul style="margin:2px 0 2px 0;padding-left:18px">{items}</ul>'
    return head + pairs + f'<div style="{_PRE}">' + "\n".join(lines) + "</div>"


def outer_frames_html(frames: tuple[FrameView, ...], pointees: _Pointees) -> str:
    """The callers' frames, only their GC slots (one line per pair)."""
    if not frames:
        return ""
    parts = [f'<div style="{_H}">outer frames (callers), their GC slots</div>']
    for fr in frames:
        items = (
            "".join(
                f"<li>pair {p.index}: base {_e(p.base)} = "
                f"{'constant' if p.base_value is None else pointees.word(p.base_value, strict=True)}, "
                f"derived {_e(p.derived)}</li>"
                for p in fr.pairs
            )
            or "<li>no GC pointers live</li>"
        )
        parts.append(
            f"<div>@{_e(fr.function)} at {_e(fr.record)} (rsp = {fr.sp:#x})</div>"
            f'<ul style="margin:0;padding-left:18px">{items}</ul>'
        )
    return "".join(parts)


def heap_html(heap: HeapView, pointees: _Pointees) -> str:
    """The objects of the current space (header, fields, pointer fields coloured), the idle space."""
    base, top = heap.space
    other_base, other_end = heap.other
    parts = [f'<div style="{_H}">heap: current space [{base:#x}, {top:#x}), {top - base} bytes used</div>']
    if not heap.objects:
        parts.append("<div>(empty)</div>")
    lines = []
    for obj in heap.objects:
        name = (
            f'<span style="background:{object_colour(obj.name)};color:{INK};font-weight:bold">{_e(obj.name):>2}</span>'
        )
        moved = f' <span style="color:#2e7d32">copied from {obj.copied_from:#x}</span>' if obj.copied_from else ""
        lines.append(f"{name} {obj.address:#x}  {obj.nfields} fields, mask {obj.ptrmask:#b}{moved}")
        for i, v in enumerate(obj.fields):
            shown = pointees.word(v, strict=True) if obj.is_pointer_field(i) else str(v)
            lines.append(f"     [{i}] {shown}")
    if lines:
        parts.append(f'<div style="{_PRE}">' + "\n".join(lines) + "</div>")
    poisoned = heap.other_poisoned_bytes
    idle = f"idle space [{other_base:#x}, {other_end:#x})"
    if poisoned:
        idle += f": the first {poisoned} bytes poisoned with 0xdeadbeefdeadbeef"
    parts.append(f'<div style="color:#888;margin-top:4px">{idle}</div>')
    return "".join(parts)


def collection_html(state: MachineState) -> str:
    """What the collection that just ran did: slots rewritten, objects forwarded, garbage left."""
    c = state.collection
    if c is None:
        return ""
    lines = [
        f"from-space [{c.from_space[0]:#x}, {c.from_space[1]:#x}) -&gt; to-space "
        f"[{c.to_space[0]:#x}, {c.to_space[1]:#x})",
        f"{c.objects_copied} objects copied, {c.bytes_copied} bytes",
    ]
    if c.roots:
        lines.append("root (base) slots: new value = the old object's forwarding address")
        lines += [f"  {_e(u.slot):<28} {u.old:#x} -&gt; {u.new:#x}" for u in c.roots]
    if c.derived:
        lines.append("derived slots: new value = new base + (old derived - old base)")
        lines += [f"  {_e(u.slot):<28} {u.old:#x} -&gt; {u.new:#x}" for u in c.derived]
    lines.append("forwarding addresses, in Cheney's copy order")
    lines += [
        f'  <span style="background:{object_colour(n)};color:{INK};font-weight:bold">{_e(n):>2}</span> {old:#x} -&gt; {new:#x}'
        for n, old, new in c.forwarding
    ]
    garbage = ", ".join(f"{_e(n)} ({a:#x})" for n, a in c.garbage) or "none"
    lines.append(f"not reached, so not copied: {garbage}")
    return (
        f'<div style="{_H};color:#2e7d32">collection #{c.index}</div><div style="{_PRE}">' + "\n".join(lines) + "</div>"
    )


def state_html(state: MachineState, total: int | None = None, *, all_words: bool = False) -> str:
    """One state as a self-contained HTML fragment (inline styles only); ``total`` = number of states."""
    pointees = _Pointees(state.heap)
    left = disasm_html(state) + registers_html(state, pointees)
    middle = frame_html(state.frame, pointees, title="current frame", all_words=all_words) + outer_frames_html(
        state.outer_frames, pointees
    )
    right = heap_html(state.heap, pointees) + collection_html(state)
    return (
        '<div style="font-family:monospace;font-size:12px;line-height:1.35">'
        + _header(state, total)
        + '<div style="display:flex;flex-wrap:wrap;gap:14px;align-items:flex-start">'
        + f'<div style="{_PANEL}">{left}</div><div style="{_PANEL}">{middle}</div>'
        + f'<div style="{_PANEL}">{right}</div></div></div>'
    )


def trace_pages(trace: Trace, *, all_words: bool = False) -> list[str]:
    """Every state of a trace as HTML, in order."""
    return [state_html(s, len(trace.states), all_words=all_words) for s in trace.states]


def trace_text(trace: Trace) -> str:
    """A one-line-per-state summary of a trace (index, kind, where, title)."""
    return "\n".join(f"{s.index:3} {s.kind:<9} {s.where:<24} {s.title}" for s in trace.states)
