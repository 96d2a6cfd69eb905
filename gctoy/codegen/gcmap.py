"""Safe points found in lowered machine code, and the seed's ``GCMetadataPrinter``: ``__gcmap_<function>``.

Safe points (seed 003, "Generating safe points") are read off the *assembled* code of each
function, by disassembling it with Capstone:

=========  ==================================================================
kind       address recorded
=========  ==================================================================
Loop       a ``jmp``/``jcc`` whose target lies at or before the jump itself
Return     the ``ret`` instruction (after ``leave`` has dropped the frame)
PreCall    the ``call`` instruction
PostCall   the instruction after the call: the return address on the stack
=========  ==================================================================

A function's strategy picks the kinds it needs (``GCStrategy.needed_safe_points``).

The compact table of the seed's example printer, one per function, little-endian::

    offset  size        field
    0       4           PointCount
    4       4 * Points  SafePointAddress[PointCount]   (4 bytes each, see below)
    ...     4           StackFrameSize                 (in 8-byte words)
    ...     4           StackArity                     (arguments passed on the stack)
    ...     4           LiveCount
    ...     4 * Live    LiveOffsets[LiveCount]         (bytes from rsp at the safe point)

Each table starts 8-byte aligned (the seed's ``EmitAlignment(3)`` on a 64-bit target) and is
labelled ``__gcmap_<function>`` in the image's data. The seed's example has quirks; gctoy
decides each one and the tests pin them:

* **4-byte addresses on a 64-bit target.** The example emits each label with size 4 even
  when pointers are 8 bytes. gctoy keeps 4 (``ADDRESS_SIZE``): its code lives at
  0x400000, far below 4 GiB, so the absolute address fits; an address that would not fit is
  an error rather than a silent truncation. ``address_size=8`` gives the wide form.
* **"stack index (offset / wordsize)".** The comment promises an index, the code emits
  ``StackOffset``, a byte offset. gctoy emits the byte offset and says so in its comment.
* **Offsets from what?** The seed's stack map speaks of offsets "relative to the frame
  pointer"; gctoy's frame (frame.py) addresses every slot from ``rsp``, which does not move
  in the body, so the offsets are ``rsp``-relative, like the ``[RSP + off]`` of gctoy's stack
  maps (and like LLVM 14's OCaml frametable). The caller's return address sits at
  ``rsp + 8 * StackFrameSize``.
* **Stack arity.** ``max(0, args - 6)`` on x86-64 (the SysV ABI passes six integer or
  pointer arguments in registers; gctoy lowers only those); the example's ``5`` is for
  32-bit targets and is not used.
* **Live roots.** No liveness is computed for gcroot (the seed: "Stack information never
  change in safe points"): every root of the function is listed, also when it has no safe
  point at all.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from dataclasses import dataclass, field

from ..emu import DATA_BASE, Image, Insn, disassemble
from ..errors import DecodeError, GCToyError, VerifyError
from ..ir.module import Module
from ..strategy import ALL_POINT_KINDS, PointKind, strategy_of
from .codegen_error import where
from .frame import ARG_REGISTERS, SLOT_SIZE
from .symbols import mangle
from .x86_64 import CompiledFunction, CompiledModule

#: Size of each safe point address in the table (the seed's example: 4 bytes).
ADDRESS_SIZE = 4
#: Alignment of each table (the seed: 8 on a 64-bit target).
TABLE_ALIGN = 8
#: Strategies whose ``UsesMetadata`` tables gctoy knows how to print: the seed's ``__gcmap_`` tables
#: here, OCaml's frametable and Erlang's ``.note.gc`` in frametables.py.
PRINTERS = frozenset({"gctoy-gcmap", "ocaml", "erlang"})
_JUMPS = frozenset(
    {
        "jmp",
        "je",
        "jne",
        "jz",
        "jnz",
        "ja",
        "jae",
        "jb",
        "jbe",
        "jg",
        "jge",
        "jl",
        "jle",
        "js",
        "jns",
        "jo",
        "jno",
        "jp",
        "jnp",
        "jc",
        "jnc",
        "jrcxz",
        "jecxz",
        "loop",
    }
)


class GCMapError(GCToyError):
    """A function the metadata printer cannot describe."""


class LocatedGCMapError(GCMapError, VerifyError):
    """A GCMapError at the ``file:line:col`` of the function's ``define``."""


def function_error(function, message: str) -> GCMapError:
    """The error about ``function``, at its ``define`` when the source is known."""
    loc = where(function)
    return LocatedGCMapError(message, loc) if loc else GCMapError(message)


@dataclass(frozen=True)
class SafePoint:
    """One place a collector may stop a function: its kind, address and the instruction there."""

    kind: PointKind
    address: int
    instruction: str

    def __str__(self) -> str:
        return f"{self.address:#x} {self.kind.value:<8} {self.instruction}"


def function_bounds(compiled: CompiledModule) -> dict[str, tuple[int, int]]:
    """[start, end) of each compiled function's code: up to the next function or the end of the code."""
    image = compiled.image
    ordered = sorted(compiled.functions, key=lambda f: f.address)
    out: dict[str, tuple[int, int]] = {}
    code_end = image.code_base + len(image.code)
    for i, fn in enumerate(ordered):
        end = ordered[i + 1].address if i + 1 < len(ordered) else code_end
        out[fn.name] = (fn.address, end)
    return out


def function_code(compiled: CompiledModule, name: str) -> list[Insn]:
    """The disassembled instructions of one compiled function."""
    bounds = function_bounds(compiled)
    if name not in bounds:
        raise GCMapError(f"@{name} is not a compiled function")
    start, end = bounds[name]
    image = compiled.image
    return disassemble(image.code[start - image.code_base : end - image.code_base], start, image.arch)


def classify(insns: list[Insn], kinds: Iterable[PointKind] = ALL_POINT_KINDS) -> list[SafePoint]:
    """The safe points of the wanted kinds among a function's instructions, by address then kind order."""
    kinds = frozenset(kinds)
    out: list[SafePoint] = []
    for insn in insns:
        text = insn.text
        if insn.mnemonic == "call":
            if PointKind.PRE_CALL in kinds:
                out.append(SafePoint(PointKind.PRE_CALL, insn.address, text))
            if PointKind.POST_CALL in kinds:
                out.append(SafePoint(PointKind.POST_CALL, insn.address + insn.size, f"after {text}"))
        elif insn.mnemonic == "ret" and PointKind.RETURN in kinds:
            out.append(SafePoint(PointKind.RETURN, insn.address, text))
        elif insn.mnemonic in _JUMPS and PointKind.LOOP in kinds:
            target = _branch_target(insn)
            if target is not None and target <= insn.address:
                out.append(SafePoint(PointKind.LOOP, insn.address, text))
    order = list(PointKind)
    return sorted(out, key=lambda p: (p.address, order.index(p.kind)))


def _branch_target(insn: Insn) -> int | None:
    try:
        return int(insn.op_str, 0)
    except ValueError:
        return None  # an indirect jump: not a loop edge gctoy can see


def safe_points(compiled: CompiledModule, name: str, kinds: Iterable[PointKind] | None = None) -> list[SafePoint]:
    """Safe points of one function: the given kinds, else those its strategy needs."""
    if kinds is None:
        fn = _compiled(compiled, name)
        kinds = _needed(compiled, fn)
    return classify(function_code(compiled, name), kinds)


def _compiled(compiled: CompiledModule, name: str) -> CompiledFunction:
    for f in compiled.functions:
        if f.name == name:
            return f
    raise GCMapError(f"@{name} is not a compiled function")


def _needed(compiled: CompiledModule, fn: CompiledFunction) -> frozenset[PointKind]:
    strategy = strategy_of(fn.frame.function)
    return strategy.needed_safe_points if strategy is not None else frozenset()


# --------------------------------------------------------------------------- the table


@dataclass(frozen=True)
class GCMap:
    """One ``__gcmap_<function>`` table."""

    function: str
    safe_points: tuple[int, ...]
    frame_size_words: int
    stack_arity: int
    live_offsets: tuple[int, ...]
    kinds: tuple[PointKind, ...] = field(default=(), compare=False)

    @property
    def symbol(self) -> str:
        """The data label of the table."""
        return f"__gcmap_{mangle(self.function)}"

    def to_bytes(self, address_size: int = ADDRESS_SIZE) -> bytes:
        """The table's bytes (no leading alignment)."""
        fmt = _address_format(address_size)
        out = [struct.pack("<i", len(self.safe_points))]
        for a in self.safe_points:
            if not 0 <= a < 1 << (8 * address_size):
                raise GCMapError(f"{self.symbol}: safe point address {a:#x} does not fit in {address_size} bytes")
            out.append(struct.pack(fmt, a))
        out.append(struct.pack("<iii", self.frame_size_words, self.stack_arity, len(self.live_offsets)))
        out += [struct.pack("<i", off) for off in self.live_offsets]
        return b"".join(out)

    def assembly(self, address_size: int = ADDRESS_SIZE) -> str:
        """The table as data directives with the printer's comments."""
        word = ".long" if address_size == 4 else ".quad"
        lines = [f"{self.symbol}:", f"    .long {len(self.safe_points)}  # safe point count"]
        for i, a in enumerate(self.safe_points):
            kind = f" ({self.kinds[i].value})" if i < len(self.kinds) else ""
            lines.append(f"    {word} {a:#x}  # safe point address{kind}")
        lines.append(f"    .long {self.frame_size_words}  # stack frame size (in words)")
        lines.append(f"    .long {self.stack_arity}  # stack arity")
        lines.append(f"    .long {len(self.live_offsets)}  # live root count")
        lines += [f"    .long {off}  # stack offset (bytes from rsp)" for off in self.live_offsets]
        return "\n".join(lines)


def _address_format(address_size: int) -> str:
    if address_size == 4:
        return "<I"
    if address_size == 8:
        return "<Q"
    raise GCMapError(f"safe point addresses are 4 or 8 bytes, not {address_size}")


def decode_gcmap(
    data: bytes, offset: int = 0, address_size: int = ADDRESS_SIZE, function: str = ""
) -> tuple[GCMap, int]:
    """Decode one table starting at ``offset``; returns it and the offset just past it."""
    fmt = _address_format(address_size)

    def take(fmt_: str, what: str) -> int:
        nonlocal offset
        size = struct.calcsize(fmt_)
        if offset + size > len(data):
            raise DecodeError(
                offset, f"__gcmap table ends inside the {what} ({len(data) - offset} of {size} bytes left)"
            )
        (value,) = struct.unpack_from(fmt_, data, offset)
        offset += size
        return value

    start = offset
    count = take("<i", "safe point count")
    if count < 0:
        raise DecodeError(start, f"negative safe point count {count}")
    if offset + count * address_size > len(data):
        raise DecodeError(
            offset, f"{count} safe point addresses need {count * address_size} bytes, {len(data) - offset} are left"
        )
    points = tuple(take(fmt, f"safe point address #{i}") for i in range(count))
    frame_words = take("<i", "stack frame size")
    if frame_words < 0:
        raise DecodeError(offset - 4, f"negative stack frame size {frame_words}")
    arity_at = offset
    arity = take("<i", "stack arity")
    if arity < 0:
        raise DecodeError(arity_at, f"negative stack arity {arity}")
    live_at = offset
    live = take("<i", "live root count")
    if live < 0:
        raise DecodeError(live_at, f"negative live root count {live}")
    if offset + 4 * live > len(data):
        raise DecodeError(offset, f"{live} live offsets need {4 * live} bytes, {len(data) - offset} are left")
    offsets = tuple(take("<i", f"live offset #{i}") for i in range(live))
    return GCMap(function, points, frame_words, arity, offsets), offset


def parse_gcmap(data: bytes, address_size: int = ADDRESS_SIZE, function: str = "") -> GCMap:
    """Decode exactly one table (DecodeError with the byte offset if it is short or has bytes left)."""
    table, end = decode_gcmap(bytes(data), 0, address_size, function)
    if end != len(data):
        raise DecodeError(end, f"{len(data) - end} bytes after the end of the __gcmap table")
    return table


def read_gcmap(image: Image, function: str, address_size: int = ADDRESS_SIZE) -> GCMap:
    """Decode the ``__gcmap_<function>`` table placed in an image's data."""
    address = image.address_of(f"__gcmap_{mangle(function)}")
    table, _ = decode_gcmap(image.data, address - DATA_BASE, address_size, function)
    return table


# --------------------------------------------------------------------------- the printer


def build_gcmap(compiled: CompiledModule, fn: CompiledFunction) -> GCMap:
    """The table of one compiled function, safe points of the kinds its strategy needs."""
    points = safe_points(compiled, fn.name)
    nargs = len(fn.frame.function.args)
    if fn.frame.stack_size % SLOT_SIZE:
        raise GCMapError(f"@{fn.name}: frame size {fn.frame.stack_size} is not a whole number of words")
    return GCMap(
        fn.name,
        tuple(p.address for p in points),
        fn.frame.stack_size // SLOT_SIZE,
        max(0, nargs - len(ARG_REGISTERS)),
        tuple(off for off, _ in fn.gc_roots),
        tuple(p.kind for p in points),
    )


def module_gcmaps(compiled: CompiledModule) -> list[GCMap]:
    """A ``__gcmap_`` table for every ``gctoy-gcmap`` function (an error for a metadata strategy without a printer)."""
    out = []
    for fn in compiled.functions:
        strategy = strategy_of(fn.frame.function)
        if strategy is None or not strategy.uses_metadata:
            continue
        if strategy.name not in PRINTERS:
            raise function_error(
                fn.frame.function,
                f'@{fn.name}: no GC metadata printer for gc "{strategy.name}" '
                f"(gctoy prints: {', '.join(sorted(PRINTERS))})",
            )
        if strategy.name == "gctoy-gcmap":
            out.append(build_gcmap(compiled, fn))
    return out


@dataclass(frozen=True)
class GCMapOutput:
    """The tables, the image with them appended to its data, and their assembly text."""

    maps: tuple[GCMap, ...]
    image: Image
    text: str


def emit_gcmaps(compiled: CompiledModule, address_size: int = ADDRESS_SIZE) -> GCMapOutput:
    """Append each table, 8-byte aligned, after the image's data and label it ``__gcmap_<function>``."""
    maps = tuple(module_gcmaps(compiled))
    image = compiled.image
    data = bytearray(image.data) + bytes(image.data_extent - len(image.data))
    symbols = dict(image.symbols)
    text = []
    for m in maps:
        data += bytes(-len(data) % TABLE_ALIGN)
        if m.symbol in symbols:
            function = next(f.frame.function for f in compiled.functions if f.name == m.function)
            raise function_error(function, f"the image already has a symbol {m.symbol}")
        symbols[m.symbol] = DATA_BASE + len(data)
        data += m.to_bytes(address_size)
        text.append("    .p2align 3\n" + m.assembly(address_size))
    if not maps:
        return GCMapOutput((), image, "")
    new = Image(
        image.code,
        bytes(data),
        symbols,
        dict(image.sections),
        image.natives,
        image.arch,
        max(image.data_size, len(data)),
    )
    return GCMapOutput(maps, new, "\n".join(text) + "\n")


def compile_with_gcmaps(module: Module, address_size: int = ADDRESS_SIZE) -> tuple[CompiledModule, GCMapOutput]:
    """Compile a module and emit its ``__gcmap_`` tables (the image in the output carries them)."""
    from .x86_64 import compile_module

    compiled = compile_module(module)
    return compiled, emit_gcmaps(compiled, address_size)


__all__ = [
    "ADDRESS_SIZE",
    "GCMap",
    "GCMapError",
    "GCMapOutput",
    "PRINTERS",
    "SafePoint",
    "build_gcmap",
    "classify",
    "compile_with_gcmaps",
    "decode_gcmap",
    "emit_gcmaps",
    "function_bounds",
    "function_code",
    "module_gcmaps",
    "parse_gcmap",
    "read_gcmap",
    "safe_points",
]
