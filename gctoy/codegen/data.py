"""The data part of an image: every defined global laid out, 8-byte aligned, as assembler directives.

Thread-local globals come first, after the ``__tls_block`` label (the machine points ``%fs``
at it), then the others. The layout and its total size are computed before any byte is
written, so a module whose globals do not fit in the image's data (``MAX_DATA_BYTES``) is
refused at once; runs of zero bytes are written as ``.zero N``. An external global (no
initializer) gets no place: it is accepted as long as nothing uses it (the code generators
refuse a use with :func:`defined_global`).
"""

from __future__ import annotations

from ..emu import DATA_BASE
from ..ir.types import ArrayType, NamedStructType, PointerType, StructType, Type
from ..ir.values import (
    ConstantAggregate,
    ConstantExpr,
    ConstantInt,
    ConstantNull,
    ConstantString,
    Function,
    GlobalVariable,
    Poison,
    Undef,
    Value,
    ZeroInitializer,
)
from .frame import CodegenError, field_offset, locating, size_of
from .limits import MAX_DATA_BYTES
from .symbols import mangle

#: the label at the start of the thread-local block; the machine points %fs at it
TLS_BLOCK = "__tls_block"
#: zero runs at least this long are written as ``.zero N`` rather than as ``.byte`` lists
_ZERO_RUN = 64


def defined_global(v: GlobalVariable | Function) -> str:
    """The assembler label of a function or a defined global; a use of an external global is an error."""
    if isinstance(v, GlobalVariable) and v.is_declaration:
        raise CodegenError(
            f"external global @{v.name} is used, but it has no definition in this module (gctoy links no other modules)"
        )
    return mangle(v.name)


def _unsigned(value: int, bits: int) -> int:
    return value & ((1 << bits) - 1)


def constant_bytes(ty: Type, c: Value, addresses: dict[str, int] | None = None) -> bytes:
    """The little-endian bytes of a global's initializer (``addresses``: where each global lands,
    for pointers to globals such as a FrameMap's metadata)."""
    from .addresses import constant_address

    size = size_of(ty)
    if isinstance(c, (ZeroInitializer, ConstantNull, Undef, Poison)):
        return bytes(size)
    if isinstance(ty, PointerType) and isinstance(c, (GlobalVariable, ConstantExpr)):
        target, offset = constant_address(c)
        if isinstance(target, GlobalVariable) and target.is_declaration:
            defined_global(target)
        if not isinstance(target, GlobalVariable) or addresses is None or target.name not in addresses:
            raise CodegenError(f"a data pointer to @{target.name} is not supported (only to global variables)")
        return _unsigned(addresses[target.name] + offset, 64).to_bytes(8, "little")
    if isinstance(c, ConstantInt):
        return _unsigned(c.value, 8 * size).to_bytes(size, "little")
    if isinstance(c, ConstantString):
        return c.data[:size].ljust(size, b"\0")
    if isinstance(c, ConstantAggregate):
        out = bytearray(size)
        if isinstance(ty, ArrayType):
            step = size_of(ty.element)
            for i, e in enumerate(c.elements[: ty.count]):
                out[i * step : (i + 1) * step] = constant_bytes(ty.element, e, addresses)
        elif isinstance(ty, (StructType, NamedStructType)):
            for i, (et, e) in enumerate(zip(ty.elements, c.elements)):
                off = field_offset(ty, i)
                out[off : off + size_of(et)] = constant_bytes(et, e, addresses)
        else:
            raise CodegenError(f"cannot lay out a constant of type {ty}")
        return bytes(out)
    raise CodegenError(f"global initializer {c!r} is not supported by the x86-64 code generator")


def tls_offsets(module) -> dict[str, int]:
    """Offset of each defined thread-local global from the start of the thread-local block (``%fs:off``)."""
    out: dict[str, int] = {}
    cursor = 0
    for g in module.globals:
        if g.thread_local is None or g.is_declaration:
            continue
        cursor += -cursor % 8
        out[g.name] = cursor
        cursor += max(size_of(g.value_type), 1)
    return out


def _byte_lines(data: bytes) -> list[str]:
    """``.byte`` lines of at most 16 values, with ``.zero N`` for long runs of zeros."""
    lines: list[str] = []
    i, n = 0, len(data)
    pending = bytearray()

    def flush() -> None:
        for k in range(0, len(pending), 16):
            lines.append(".byte " + ", ".join(f"0x{b:02x}" for b in pending[k : k + 16]))
        pending.clear()

    while i < n:
        if data[i] == 0:
            j = i
            while j < n and data[j] == 0:
                j += 1
            if j - i >= _ZERO_RUN:
                flush()
                lines.append(f".zero {j - i}")
            else:
                pending += data[i:j]
            i = j
        else:
            pending.append(data[i])
            i += 1
    flush()
    return lines


def data_text(module) -> str:
    """Thread-local globals first (after the ``__tls_block`` label), then the others, 8-byte aligned."""
    defined = [g for g in module.globals if not g.is_declaration]
    ordered = [g for g in defined if g.thread_local is not None]
    lines: list[str] = [f"{TLS_BLOCK}:"] if ordered else []
    ordered += [g for g in defined if g.thread_local is None]
    addresses: dict[str, int] = {}
    cursor = 0
    for g in ordered:  # the layout, computed first: initializers may point at globals, and it must fit
        cursor += -cursor % 8
        addresses[g.name] = DATA_BASE + cursor
        with locating(g):
            cursor += max(size_of(g.value_type), 1)
            if cursor > MAX_DATA_BYTES:
                raise CodegenError(
                    f"global @{g.name} ({size_of(g.value_type)} bytes) does not fit: the globals take "
                    f"more than the image's {MAX_DATA_BYTES} bytes of data"
                )
    cursor = 0
    for g in ordered:
        pad = -cursor % 8
        if pad:
            lines.append(".byte " + ", ".join(["0"] * pad))
        lines.append(f"{mangle(g.name)}:")
        with locating(g):
            chunk = constant_bytes(g.value_type, g.initializer, addresses) or b"\0"
        lines += _byte_lines(chunk)
        cursor += pad + len(chunk)
    return "\n".join(lines) + ("\n" if lines else "")


__all__ = ["TLS_BLOCK", "constant_bytes", "data_text", "defined_global", "tls_offsets"]
