"""Values as llc's selection DAG sees them when it builds a statepoint's record.

llc records a value once per DAG node, and the DAG is not the IR: some distinct IR values are
one node there. gctoy's records follow it for three cases:

* a ``bitcast``/``addrspacecast`` *instruction* of an alloca is the alloca's frame index (a
  Direct location, and a gc-live alloca), and ``inttoptr`` of an integer constant is that
  constant;
* two loads in one block from the same address, of the same type, with nothing between them
  that may write memory (a store or a call), are one node: the DAG chains both on the same
  memory state and folds them;
* ``undef`` and ``poison`` of one type are one node each.
"""

from __future__ import annotations

from ..ir import instructions as I
from ..ir.intrinsics import is_relocate_name, is_result_name
from ..ir.values import ConstantInt, Poison, Undef, Value

_NO_OP_CASTS = ("bitcast", "addrspacecast")


def fold_cast(v: Value) -> Value:
    """The alloca or integer constant under no-op cast instructions (``v`` itself otherwise)."""
    seen = v
    while isinstance(seen, I.Cast) and seen.opcode in _NO_OP_CASTS:
        seen = seen.value
    if isinstance(seen, I.Alloca):
        return seen
    if isinstance(v, I.Cast) and v.opcode == "inttoptr" and isinstance(v.value, ConstantInt):
        return v.value
    return v


def _writes_memory(inst: I.Instruction) -> bool:
    if isinstance(inst, I.Store):
        return True
    if isinstance(inst, I.CallBase):
        name = inst.callee_name or ""
        return not (is_relocate_name(name) or is_result_name(name) or name == "llvm.assume")
    return inst.opcode in ("fence", "atomicrmw", "cmpxchg")


def dag_key(v: Value, pointer_key) -> tuple | None:
    """A key shared by IR values that are one DAG node (None: the value is its own node).

    ``pointer_key`` gives the key of a load's address."""
    if isinstance(v, (Undef, Poison)):
        return (type(v).__name__, str(v.type))
    if not isinstance(v, I.Load) or v.volatile or v.ordering is not None or v.parent is None:
        return None
    epoch = 0
    for inst in v.parent.instructions:
        if inst is v:
            return ("load", id(v.parent), epoch, str(v.type), pointer_key(v.pointer))
        if _writes_memory(inst):
            epoch += 1
    return None


__all__ = ["dag_key", "fold_cast"]
