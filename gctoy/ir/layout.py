"""Alignments from a module's ``target datalayout``, as LLVM computes them.

A ``load``, ``store`` or ``alloca`` written without ``align`` gets one when LLVM reads it: the
type's ABI alignment for loads and stores, its preferred alignment for allocas.  LLVM prints
that alignment, so gctoy's printer does too.  The defaults without a datalayout string are
LLVM's (note ``i64:32:64``: a plain ``load i64`` is ``align 4`` until a datalayout says
``i64:64``).
"""

from __future__ import annotations

from functools import lru_cache

from .types import (
    ArrayType,
    FloatType,
    FunctionType,
    IntType,
    NamedStructType,
    PointerType,
    StructType,
    Type,
    VectorType,
)

#: (ABI, preferred) alignment in bits of LLVM's default layout
_DEFAULT_INTS = {1: (8, 8), 8: (8, 8), 16: (16, 16), 32: (32, 32), 64: (32, 64)}
_DEFAULT_FLOATS = {16: (16, 16), 32: (32, 32), 64: (64, 64), 128: (128, 128)}
_FLOAT_BITS = {"half": 16, "bfloat": 16, "float": 32, "double": 64, "fp128": 128, "x86_fp80": 80}


class DataLayout:
    """The alignment rules of one ``target datalayout`` string (LLVM's defaults where it is silent)."""

    def __init__(self, text: str | None = None):
        self.ints = dict(_DEFAULT_INTS)
        self.floats = dict(_DEFAULT_FLOATS)
        self.vectors = {64: (64, 64), 128: (128, 128)}
        self.pointers = {0: (64, 64, 64)}  # addrspace -> (size, abi, pref) in bits
        self.aggregate = (0, 64)
        for spec in (text or "").split("-"):
            self._read(spec)

    def _read(self, spec: str) -> None:
        parts = spec.split(":")
        head = parts[0]
        if any(len(p) > 9 for p in parts):  # not a layout LLVM would accept; keep the defaults
            return
        try:
            nums = [int(p) for p in parts[1:]]
        except ValueError:
            return
        if head[:1] == "p" and (head[1:].isdigit() or head == "p") and len(nums) >= 2:
            abi = nums[1]
            self.pointers[int(head[1:] or 0)] = (nums[0], abi, nums[2] if len(nums) > 2 else abi)
        elif head[:1] in ("i", "f", "v") and head[1:].isdigit() and nums:
            table = {"i": self.ints, "f": self.floats, "v": self.vectors}[head[0]]
            table[int(head[1:])] = (nums[0], nums[1] if len(nums) > 1 else nums[0])
        elif head == "a" and nums:
            self.aggregate = (nums[0], nums[1] if len(nums) > 1 else nums[0])

    def abi_align(self, ty: Type) -> int:
        """The ABI alignment in bytes (what a ``load``/``store`` without ``align`` gets)."""
        return max(1, self._align(ty, 0))

    def pref_align(self, ty: Type) -> int:
        """The preferred alignment in bytes (what an ``alloca`` without ``align`` gets)."""
        return max(1, self._align(ty, 1))

    def _align(self, ty: Type, which: int) -> int:
        if isinstance(ty, IntType):
            return self._int_align(ty.bits, which)
        if isinstance(ty, FloatType):
            bits = _FLOAT_BITS.get(ty.kind, 64)
            if ty.kind == "x86_fp80" and 80 not in self.floats:
                return 16
            return self.floats.get(bits, (bits, bits))[which] // 8
        if isinstance(ty, PointerType):
            return self._pointer(ty.addrspace)[1 + which] // 8
        if isinstance(ty, FunctionType):
            return self._pointer(0)[1 + which] // 8
        if isinstance(ty, ArrayType):
            return self._align(ty.element, which)
        if isinstance(ty, VectorType):
            bits = self.size_bits(ty)
            if bits in self.vectors:
                return self.vectors[bits][which] // 8
            return max(1, _power_of_two_at_least((bits + 7) // 8))
        if isinstance(ty, (StructType, NamedStructType)):
            packed = ty.packed if isinstance(ty, StructType) else bool(ty.body and ty.body.packed)
            align = 1 if packed else max((self._align(e, 0) for e in ty.elements), default=1)
            if which:
                align = max(align, self.aggregate[1] // 8)
            return align
        return 1

    def _int_align(self, bits: int, which: int) -> int:
        if bits in self.ints:
            return self.ints[bits][which] // 8
        larger = [w for w in self.ints if w > bits]
        width = min(larger) if larger else max(self.ints)
        return self.ints[width][which] // 8

    def _pointer(self, space: int) -> tuple[int, int, int]:
        return self.pointers.get(space, self.pointers.get(0, (64, 64, 64)))

    def size_bits(self, ty: Type) -> int:
        """The type's size in bits (vectors: element size times count)."""
        if isinstance(ty, IntType):
            return ty.bits
        if isinstance(ty, FloatType):
            return _FLOAT_BITS.get(ty.kind, 64)
        if isinstance(ty, PointerType):
            return self._pointer(ty.addrspace)[0]
        if isinstance(ty, VectorType):
            return self.size_bits(ty.element) * ty.count
        return 64


def _power_of_two_at_least(n: int) -> int:
    p = 1
    while p < n:
        p *= 2
    return p


@lru_cache(maxsize=32)
def data_layout(text: str | None) -> DataLayout:
    """The (cached) layout of a datalayout string; None gives LLVM's defaults."""
    return DataLayout(text)


def layout_known(ty: Type, seen: frozenset = frozenset()) -> bool:
    """False while ``ty`` holds a named struct whose body is not known yet (or that holds itself)."""
    if isinstance(ty, NamedStructType):
        if ty.name in seen or ty.body is None or ty.body.elements is None:
            return False
        inner = seen | {ty.name}
        return all(layout_known(e, inner) for e in ty.elements)
    if isinstance(ty, StructType):
        return all(layout_known(e, seen) for e in ty.elements)
    if isinstance(ty, (ArrayType, VectorType)):
        return layout_known(ty.element, seen)
    return True
