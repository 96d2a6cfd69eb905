"""The StackMap v3 record of one x86-64 statepoint: its locations, in the order and number llc writes them.

A record lists, after the three header constants (calling convention, flags, number of deopt
values): every deopt value, then one (base, derived) pair per distinct GC pointer the
statepoint relocates, then the gc-live allocas. Two values that llc's selection DAG sees as
one are recorded once, as llc does:

* constants of the same type and value;
* two ``gc.relocate`` of the same statepoint with the same (base, derived) pair;
* a ``gc.relocate`` of a constant (``null``) *is* that constant after the call.

The code generator makes every ``gc.relocate`` read the slot that the record names
(:meth:`StackMapRecords.recorded_slot_value`), so the collector's update reaches all of them.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..ir import instructions as I
from ..ir.intrinsics import is_relocate_name
from ..ir.statepoint import GCRelocate, Statepoint, token_statepoint
from ..ir.types import IntType, PointerType, Type, is_gc_pointer
from ..ir.values import (
    Argument,
    ConstantExpr,
    ConstantFloat,
    ConstantInt,
    ConstantNull,
    GlobalVariable,
    Poison,
    Undef,
    Value,
    ZeroInitializer,
)
from ..stackmap import Location, LocationKind
from .floats import FLOAT_BITS, float_bits, is_float
from .dag_values import dag_key, fold_cast
from .frame import CodegenError, Frame, constant_width, is_spilled_deopt, is_wide, size_of

DWARF_RSP = 7
#: what llc records for an ``undef`` or ``poison`` operand of a statepoint
UNDEF_PATTERN = 0xFEFEFEFE
_CC_NUMBERS = {
    None: 0,
    "ccc": 0,
    "fastcc": 8,
    "coldcc": 9,
    "webkit_jscc": 12,
    "anyregcc": 13,
    "preserve_mostcc": 14,
    "preserve_allcc": 15,
    "swiftcc": 16,
    "tailcc": 18,
    "x86_64_sysvcc": 78,
    "win64cc": 79,
}


def strip_casts(v: Value) -> Value:
    """The value under constant ``bitcast``/``addrspacecast`` expressions."""
    while isinstance(v, ConstantExpr) and v.opcode in ("bitcast", "addrspacecast") and v.operands:
        v = v.operands[0]
    return v


def _unsigned(value: int, bits: int) -> int:
    return value & ((1 << bits) - 1)


def _signed(value: int, bits: int) -> int:
    value = _unsigned(value, bits)
    return value - (1 << bits) if value >> (bits - 1) else value


def int_constant(v: Value) -> int | None:
    """The value of an integer constant, or of ``inttoptr`` of one (None for anything else)."""
    v = strip_casts(v)
    if isinstance(v, ConstantExpr) and v.opcode == "inttoptr" and v.operands:
        v = v.operands[0]
    if isinstance(v, ConstantInt) and isinstance(v.type, IntType):
        return _signed(v.value, v.type.bits)
    return None


def value_key(v: Value, memo: dict | None = None) -> tuple:
    """What identifies a value for llc's stack map: equal keys are recorded once (``memo``: keys known).

    A relocate's key names its statepoint and the keys of its base and derived pointer; those are
    interned (replaced by a small number standing for them), so a value relocated at many statepoints
    in a row still has a key of four items, not one nested as deep as the chain (hashing such keys
    grew exponentially with the chain's length)."""
    if memo is None:
        memo = {}
    v = fold_cast(strip_casts(v))
    if id(v) in memo:
        return memo[id(v)]
    key: tuple = dag_key(v, lambda p: _interned(value_key(p, memo), memo)) or ("value", id(v))
    if isinstance(v, I.Call) and is_relocate_name(v.callee_name):
        call = token_statepoint(v.args[0]) if v.args else None
        if call is not None:
            reloc = GCRelocate(v, statepoint_of(call, memo))
            derived = value_key(reloc.derived, memo)
            if derived[0] == "const":
                key = derived
            else:
                key = ("relocate", id(call), _interned(value_key(reloc.base, memo), memo), _interned(derived, memo))
    elif isinstance(v, ConstantInt):
        key = ("const", str(v.type), _unsigned(v.value, constant_width(v)))
    elif isinstance(v, ConstantNull):
        key = ("const", str(v.type), 0)
    memo[id(v)] = key
    return key


def statepoint_of(call: I.CallBase, memo: dict) -> Statepoint:
    """``Statepoint.of(call)``, decoded once per ``memo`` (a statepoint's n relocates would otherwise
    decode its n values n times each)."""
    sp = memo.get(f"statepoint {id(call)}")
    if sp is None:
        sp = memo[f"statepoint {id(call)}"] = Statepoint.of(call)
    return sp


def _interned(key: tuple, memo: dict) -> tuple:
    """A flat stand-in for ``key``: equal keys get the same one (``memo`` holds them beside the values' ids)."""
    return memo.setdefault(key, ("key", len(memo)))


class StackMapRecords:
    """The record-building half of the x86-64 function lowering (mixed into it)."""

    tls: dict[str, int]
    frame: Frame
    #: the module's constant pool (shared by its functions' records)
    constants: list[int]
    _keys: dict
    _pairs: dict[int, dict[tuple, tuple[Value, Value]]]

    def _pair_map(self, sp: Statepoint) -> dict[tuple, tuple[Value, Value]]:
        if not hasattr(self, "_pairs"):
            self._keys, self._pairs = {}, {}
        pairs = self._pairs.get(id(sp.call))
        if pairs is None:
            pairs = {}
            relocates = sp.relocates()  # llc: the token's users, then the landing pad's, most recent first
            normal = [r for r in relocates if r.call.args[0] is sp.call]
            for reloc in [*reversed(normal), *reversed([r for r in relocates if r.call.args[0] is not sp.call])]:
                pairs.setdefault(value_key(reloc.derived, self._keys), (reloc.base, reloc.derived))
            for v in sp.deopt_args:
                if is_gc_pointer(v.type):
                    pairs.setdefault(value_key(v, self._keys), (v, v))
            self._pairs[id(sp.call)] = pairs
        return pairs

    def decoded(self, call: I.CallBase) -> Statepoint:
        """The statepoint ``call`` makes, decoded once for the function (see `statepoint_of`)."""
        if not hasattr(self, "_pairs"):
            self._keys, self._pairs = {}, {}
        return statepoint_of(call, self._keys)

    def gc_pairs(self, sp: Statepoint) -> list[tuple[Value, Value]]:
        """The (base, derived) pairs the record lists: one per distinct relocated value, then the GC
        pointers among the deopt values (llc walks the token's uses most recent first)."""
        return list(self._pair_map(sp).values())

    def recorded_slot_value(self, sp: Statepoint, derived: Value) -> Value:
        """The value whose slot the record names for ``derived`` (the first with the same key)."""
        pair = self._pair_map(sp).get(value_key(derived, self._keys))
        return derived if pair is None else pair[1]

    def transition_flags(self, sp: Statepoint) -> list[tuple[int, Type]]:
        """GC transition (seed 000's "hypothetical-gc"): each thread-local global among the transition
        arguments is a flag set to 1 before the call into unmanaged code and to 0 after it. Other
        transition arguments mean nothing to gctoy's runtime, as to LLVM's x86 backend: ignored."""
        out = []
        for v in sp.transition_args:
            g = strip_casts(v)
            if isinstance(g, GlobalVariable) and g.thread_local is not None and g.name in self.tls:
                out.append((self.tls[g.name], g.value_type))
        return out

    def record_locations(self, sp: Statepoint) -> tuple[Location, ...]:
        """CC, flags, #deopt, the deopt values, (base, derived) per relocated value, then gc-live allocas."""
        cc = sp.call.cc
        if cc is not None and cc.startswith("cc") and cc[2:].isdigit():
            cc_number = int(cc[2:])
        elif cc in _CC_NUMBERS:
            cc_number = _CC_NUMBERS[cc]
        else:
            raise CodegenError(f"calling convention {cc} has no number known to gctoy")
        locs = [
            self.constant_location(cc_number),
            self.constant_location(sp.flags),
            self.constant_location(len(sp.deopt_args)),
        ]
        spills = iter(self.frame.spill_slots)
        for v in sp.deopt_args:
            if is_spilled_deopt(v):
                locs.append(Location(LocationKind.INDIRECT, 8, DWARF_RSP, next(spills)))
            else:
                locs.append(self.location(v))
        for base, derived in self.gc_pairs(sp):
            locs += [self.location(base), self.location(derived)]
        for v in sp.gc_args:
            if isinstance(fold_cast(strip_casts(v)), I.Alloca):
                locs.append(self.location(v))
        return tuple(locs)

    def constant_location(self, value: int) -> Location:
        """A small constant inline, a large one through the module's constant pool."""
        if -(1 << 31) <= value < (1 << 31):
            return Location(LocationKind.CONSTANT, 8, 0, value)
        value = _unsigned(value, 64)
        if value not in self.constants:
            self.constants.append(value)
        return Location(LocationKind.CONSTANT_INDEX, 8, 0, self.constants.index(value))

    def location(self, v: Value) -> Location:
        """Where a deopt or GC value is at the call: a constant, an alloca (Direct) or a slot (Indirect)."""
        if is_wide(v.type):  # spilled, constants too, as llc does (wide.py)
            return Location(LocationKind.INDIRECT, size_of(v.type), DWARF_RSP, self.frame.slot(v))
        v = fold_cast(strip_casts(v))
        key = value_key(v, getattr(self, "_keys", None))
        if key[0] == "const":
            v = strip_casts(v)
            if isinstance(v, ConstantInt):
                return self.constant_location(_signed(v.value, constant_width(v)))
            return Location(LocationKind.CONSTANT, 8, 0, 0)
        v = strip_casts(v)
        number = int_constant(v)
        if number is not None:
            return self.constant_location(number)
        if isinstance(v, ConstantFloat):
            return self.constant_location(float_bits(v))
        if isinstance(v, (Undef, Poison)):
            return self.constant_location(UNDEF_PATTERN)
        if isinstance(v, (ConstantNull, ZeroInitializer)):
            return Location(LocationKind.CONSTANT, 8, 0, 0)
        if isinstance(v, I.Alloca):
            return Location(LocationKind.DIRECT, 8, DWARF_RSP, self.frame.alloca(v))
        if isinstance(v, (Argument, I.Instruction)):
            return Location(LocationKind.INDIRECT, size_of(v.type), DWARF_RSP, self.frame.slot(v))
        raise CodegenError(f"cannot record {v!r} in a stack map")


__all__ = ["DWARF_RSP", "StackMapRecords", "int_constant", "statepoint_of", "strip_casts", "value_key"]


@dataclass
class PendingRecord:
    """A stack map record before assembly: the return-address label is not yet an offset."""

    id: int
    label: str
    locations: tuple[Location, ...]


def has_value(inst: I.Instruction) -> bool:
    """True when ``inst`` gives a value gctoy keeps in a slot (an integer, a pointer or a float)."""
    return isinstance(inst.type, (IntType, PointerType)) or (is_float(inst.type) and inst.type.kind in FLOAT_BITS)
