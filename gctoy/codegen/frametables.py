"""LLVM's two built-in GC metadata printers, for ``gc "ocaml"`` and ``gc "erlang"`` functions.

Both describe the frames of functions whose roots are ``llvm.gcroot`` allocas. A safe point is
the return address of a call (both strategies need PostCall points only), and every root of the
function is live at every safe point (no liveness is computed for gcroot).

OCaml's frametable
------------------
Four labels bracket the module's code and data, named from the module identifier (the file
name as given, ``<stdin>`` for standard input): ``caml`` + the name up to its first ``.``, first
letter upper-cased (ASCII only), + ``__code_begin`` / ``__code_end`` (start and end of the code)
and ``__data_begin`` / ``__data_end`` (start and end of the data). ``a.ll`` gives ``camlA__``,
``./a.ll`` gives ``caml__``. After ``__data_end`` come one zero word and the table, 16-bit
fields, little-endian::

    caml<Module>__frametable:
        u16   NumDescriptors            (safe points of all ocaml functions, in module order)
        pad   to 8
        per safe point:
            u64   ReturnAddress
            u16   FrameSize             (bytes: rsp at the safe point -> the return address)
            u16   NumLiveOffsets
            u16   LiveOffsets[...]      (bytes from rsp)
            pad   to 8

Erlang's ``.note.gc``
---------------------
A section of its own, one table per erlang function, each 8-byte aligned::

    u16   PointCount
    u32   SafePointAddress[PointCount]  (4 bytes each, even on x86-64)
    u16   StackFrameSize                (in words)
    u16   StackArity                    (arguments beyond the six passed in registers)
    u16   LiveCount
    u16   LiveOffsets[LiveCount]        (words from rsp: offset / 8)

The values are gctoy's own (its frames differ from llc's). So are the safe points: llc turns a
``tail call`` in tail position into a jump, which leaves no return address and is no safe point;
gctoy lowers every call as a ``call``, whose return address is one. llc stops at fields that do not fit
16 bits (OCaml) or truncates them (Erlang), gctoy refuses both with a :class:`GCMapError`.

In gctoy's image the ``caml`` labels are symbols, the frametable follows the data (``__data_begin``
is the start of the data, ``__data_end`` its end), and ``.note.gc`` is a named section. The
assembly text writes each safe point as its address in that image, where llc writes a ``.Ltmp``
label placed after the call.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

from ..emu import DATA_BASE, Image
from ..strategy import strategy_of
from .frame import ARG_REGISTERS, SLOT_SIZE
from .gcmap import GCMapError, function_error, safe_points
from .x86_64 import CompiledFunction, CompiledModule

#: The section Erlang's tables go to.
ERLANG_SECTION = ".note.gc"
_U16 = 1 << 16


@dataclass(frozen=True)
class FrameDescriptor:
    """One safe point of an ocaml function: its return address, frame size and live root offsets."""

    function: str
    return_address: int
    frame_size: int
    live_offsets: tuple[int, ...]

    def to_bytes(self) -> bytes:
        """The descriptor's bytes, padded to 8."""
        raw = struct.pack("<QHH", self.return_address, self.frame_size, len(self.live_offsets))
        raw += b"".join(struct.pack("<H", off) for off in self.live_offsets)
        return raw + bytes(-len(raw) % 8)


@dataclass(frozen=True)
class ErlangTable:
    """One erlang function's entry in ``.note.gc``."""

    function: str
    safe_points: tuple[int, ...]
    frame_size_words: int
    stack_arity: int
    live_indexes: tuple[int, ...]

    def to_bytes(self) -> bytes:
        """The table's bytes (no leading alignment)."""
        raw = struct.pack("<H", len(self.safe_points))
        raw += b"".join(struct.pack("<I", a) for a in self.safe_points)
        raw += struct.pack("<HHH", self.frame_size_words, self.stack_arity, len(self.live_indexes))
        return raw + b"".join(struct.pack("<H", i) for i in self.live_indexes)


def caml_symbol(module_id: str, what: str) -> str:
    """``caml<Module>__<what>``: the module identifier up to its first ``.``, first letter upper-cased."""
    stem = module_id.split(".", 1)[0]
    if stem and stem[0].isascii():
        stem = stem[0].upper() + stem[1:]
    return f"caml{stem}__{what}"


def asm_symbol(name: str) -> str:
    """A symbol as the assembler text spells it: quoted when it has characters beyond ``[A-Za-z0-9_.$@]``."""
    if all(c.isascii() and (c.isalnum() or c in "_.$@") for c in name):
        return name
    escaped = name.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


def _functions(compiled: CompiledModule, gc: str) -> list[CompiledFunction]:
    out = []
    for fn in compiled.functions:
        strategy = strategy_of(fn.frame.function)
        if strategy is not None and strategy.name == gc:
            out.append(fn)
    return out


def _u16(value: int, what: str, fn: CompiledFunction) -> int:
    if not 0 <= value < _U16:
        raise function_error(fn.frame.function, f"@{fn.name}: {what} {value} does not fit the 16 bits of the table")
    return value


def ocaml_descriptors(compiled: CompiledModule) -> list[FrameDescriptor]:
    """The frametable's descriptors: one per safe point of every ocaml function, in module order."""
    out = []
    for fn in _functions(compiled, "ocaml"):
        size = _u16(fn.frame.stack_size, "frame size", fn)
        _u16(len(fn.gc_roots), "live root count", fn)
        offsets = tuple(_u16(off, "root stack offset", fn) for off, _ in fn.gc_roots)
        for point in safe_points(compiled, fn.name):
            out.append(FrameDescriptor(fn.name, point.address, size, offsets))
    if len(out) >= _U16:
        raise GCMapError(f"{len(out)} safe points do not fit the frametable's 16-bit descriptor count")
    return out


def erlang_tables(compiled: CompiledModule) -> list[ErlangTable]:
    """The ``.note.gc`` tables of every erlang function, in module order."""
    out = []
    for fn in _functions(compiled, "erlang"):
        points = tuple(p.address for p in safe_points(compiled, fn.name))
        for a in points:
            if not 0 <= a < 1 << 32:
                raise function_error(
                    fn.frame.function, f"@{fn.name}: safe point address {a:#x} does not fit in 4 bytes"
                )
        indexes = []
        for off, _ in fn.gc_roots:
            if off % SLOT_SIZE:
                raise function_error(
                    fn.frame.function, f"@{fn.name}: root stack offset {off} is not a whole number of words"
                )
            indexes.append(_u16(off // SLOT_SIZE, "root stack index", fn))
        out.append(
            ErlangTable(
                fn.name,
                points,
                _u16(fn.frame.stack_size // SLOT_SIZE, "frame size (words)", fn),
                max(0, len(fn.frame.function.args) - len(ARG_REGISTERS)),
                tuple(indexes),
            )
        )
        _u16(len(points), "safe point count", fn)
        _u16(len(indexes), "live root count", fn)
    return out


@dataclass(frozen=True)
class FrametableOutput:
    """What the two printers add: the image with their data, and assembly text around the code."""

    image: Image
    text_before: str
    text_after: str
    descriptors: tuple[FrameDescriptor, ...] = ()
    erlang: tuple[ErlangTable, ...] = ()


def _where(compiled: CompiledModule, address: int) -> str:
    owner = max((f for f in compiled.functions if f.address <= address), key=lambda f: f.address, default=None)
    return f"{owner.name}+{address - owner.address:#x}" if owner else f"{address:#x}"


def emit_frametables(compiled: CompiledModule, module_id: str, image: Image | None = None) -> FrametableOutput:
    """OCaml's labels and frametable in the data, Erlang's ``.note.gc`` section, and their assembly text.

    ``image``: the image to extend (default the compiled one, e.g. one that already carries
    ``__gcmap_`` tables); ``module_id``: what llc calls the module identifier (the input's path)."""
    image = image if image is not None else compiled.image
    has_ocaml = bool(_functions(compiled, "ocaml"))
    before: list[str] = []
    after: list[str] = []
    descriptors: tuple[FrameDescriptor, ...] = ()
    if has_ocaml:
        image, descriptors = _ocaml_image(compiled, image, module_id)
        before, after = _ocaml_text(compiled, module_id, descriptors)
    tables = tuple(erlang_tables(compiled))
    if tables:
        image = image.with_sections(**{ERLANG_SECTION: erlang_section_bytes(tables)})
        after += _erlang_text(compiled, tables)
    return FrametableOutput(image, _joined(before), _joined(after), descriptors, tables)


def _joined(lines: list[str]) -> str:
    return "\n".join(lines) + "\n" if lines else ""


def erlang_section_bytes(tables: tuple[ErlangTable, ...] | list[ErlangTable]) -> bytes:
    """``.note.gc``'s bytes: each table 8-byte aligned."""
    out = bytearray()
    for t in tables:
        out += bytes(-len(out) % 8)
        out += t.to_bytes()
    return bytes(out)


def frametable_bytes(descriptors: tuple[FrameDescriptor, ...] | list[FrameDescriptor], start: int = 0) -> bytes:
    """``caml<Module>__frametable``'s bytes when it starts at ``start`` (the padding is absolute)."""
    out = bytearray(struct.pack("<H", len(descriptors)))
    out += bytes(-(start + len(out)) % 8)
    for d in descriptors:
        out += d.to_bytes()
    return bytes(out)


def _ocaml_image(compiled: CompiledModule, image: Image, module_id: str) -> tuple[Image, tuple[FrameDescriptor, ...]]:
    descriptors = tuple(ocaml_descriptors(compiled))
    data = bytearray(image.data) + bytes(image.data_extent - len(image.data))
    symbols = dict(image.symbols)
    labels = {
        "code_begin": image.code_base,
        "code_end": image.code_base + len(image.code),
        "data_begin": DATA_BASE,
        "data_end": DATA_BASE + len(data),
        "frametable": DATA_BASE + len(data) + 8,
    }
    for what, address in labels.items():
        name = caml_symbol(module_id, what)
        if name in symbols:
            raise GCMapError(f"the image already has a symbol {name}")
        symbols[name] = address
    data += bytes(8)  # the zero word llc writes after __data_end
    data += frametable_bytes(descriptors, len(data))
    new = Image(
        image.code,
        bytes(data),
        symbols,
        dict(image.sections),
        image.natives,
        image.arch,
        max(image.data_size, len(data)),
    )
    return new, descriptors


def _label(module_id: str, what: str, section: str) -> list[str]:
    sym = asm_symbol(caml_symbol(module_id, what))
    return [f"\t{section}", f"\t.globl\t{sym}", f"{sym}:"]


def _ocaml_text(compiled: CompiledModule, module_id: str, descriptors: tuple[FrameDescriptor, ...]):
    before = _label(module_id, "code_begin", ".text") + _label(module_id, "data_begin", ".data")
    after = _label(module_id, "code_end", ".text") + _label(module_id, "data_end", ".data")
    after.append("\t.quad\t0")
    after += _label(module_id, "frametable", ".data")[1:]
    after += [f"\t.short\t{len(descriptors)}  # descriptor count", "\t.p2align\t3"]
    for fn in _functions(compiled, "ocaml"):
        after.append(f"# live roots for {fn.name}")
        for d in (d for d in descriptors if d.function == fn.name):
            after.append(f"\t.quad\t{d.return_address:#x}  # return address ({_where(compiled, d.return_address)})")
            after.append(f"\t.short\t{d.frame_size}  # frame size (bytes)")
            after.append(f"\t.short\t{len(d.live_offsets)}  # live root count")
            after += [f"\t.short\t{off}  # stack offset (bytes from rsp)" for off in d.live_offsets]
            after.append("\t.p2align\t3")
    return before, after


def _erlang_text(compiled: CompiledModule, tables: tuple[ErlangTable, ...]) -> list[str]:
    lines = [f'\t.section\t{ERLANG_SECTION},"",@progbits']
    for t in tables:
        lines += ["\t.p2align\t3", f"\t.short\t{len(t.safe_points)}  # safe point count ({t.function})"]
        lines += [f"\t.long\t{a:#x}  # safe point address ({_where(compiled, a)})" for a in t.safe_points]
        lines.append(f"\t.short\t{t.frame_size_words}  # stack frame size (in words)")
        lines.append(f"\t.short\t{t.stack_arity}  # stack arity")
        lines.append(f"\t.short\t{len(t.live_indexes)}  # live root count")
        lines += [f"\t.short\t{i}  # stack index (offset / wordsize)" for i in t.live_indexes]
    return lines


__all__ = [
    "ERLANG_SECTION",
    "ErlangTable",
    "FrameDescriptor",
    "FrametableOutput",
    "asm_symbol",
    "caml_symbol",
    "emit_frametables",
    "erlang_section_bytes",
    "erlang_tables",
    "frametable_bytes",
    "ocaml_descriptors",
]
