"""Rules on a module's named types that can only be checked once every body is known."""

from __future__ import annotations

from typing import Iterator

from .types import ArrayType, NamedStructType, StructType, Type, VectorType


def _contained(ty: Type) -> Iterator[Type]:
    """The types a value of ``ty`` holds by value (not through a pointer)."""
    if isinstance(ty, (StructType, NamedStructType)):
        yield from ty.elements
    elif isinstance(ty, (ArrayType, VectorType)):
        yield ty.element


def _named_parts(ty: Type) -> Iterator[str]:
    """The named structs a value of ``ty`` contains by value, looking through literal aggregates."""
    stack = list(_contained(ty))
    while stack:
        t = stack.pop()
        if isinstance(t, NamedStructType):
            yield t.name
        else:
            stack.extend(_contained(t))


def recursive_type(types: dict[str, NamedStructType]) -> str | None:
    """The first named struct (in ``types``' order) that contains itself by value, or None.

    ``%T = type { %T }`` would be infinitely large, as would ``%A = type { [2 x %B] }`` with
    ``%B = type { %A }``; ``%T = type { %T* }`` is fine: it holds only a pointer.
    """
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    for root in types:
        if state.get(root):
            continue
        state[root] = 1
        stack = [(root, iter(list(_named_parts(types[root]))))]
        while stack:
            name, parts = stack[-1]
            nxt = next(parts, None)
            if nxt is None:
                state[name] = 2
                stack.pop()
                continue
            if nxt not in types:
                continue
            seen = state.get(nxt)
            if seen == 1:
                return nxt
            if seen is None:
                state[nxt] = 1
                stack.append((nxt, iter(list(_named_parts(types[nxt])))))
    return None


def wrap_int(value: int, bits: int) -> int:
    """Integer constants are stored as signed values of their width (as LLVM prints them)."""
    if bits == 1:
        return value & 1
    mask = (1 << bits) - 1
    v = value & mask
    return v - (1 << bits) if v >> (bits - 1) else v
