"""What RewriteStatepointsForGC does to a function before it looks for calls.

LLVM's pass (14 and 19 alike) starts with ``removeUnreachableBlocks``, which is more than
deleting blocks no path reaches: while it walks the CFG from the entry it also

* folds terminators with a known outcome (``ConstantFoldTerminator``)::

      br i1 true, label %a, label %b        ->  br label %a
      br i1 %c, label %a, label %a          ->  br label %a
      switch i32 %v, label %d [ i32 1, label %d       ; cases that go where the
                                i32 2, label %x ]     ; default goes are dropped;
                                                      ; one case left: icmp + br
      switch i32 3, label %d [ i32 3, label %x ]  ->  br label %x

* ends a block after a call that cannot return (``noreturn``) with ``unreachable``;
* turns an ``invoke`` of a callee that cannot throw (``nounwind``) into a ``call`` and a ``br``
  (the landing pad may then be unreachable);

so a call in a block only a folded branch led to is never made a statepoint.  Each edge
removed takes its entry out of the target's phis; a phi left with one value everywhere is
replaced by that value (``BasicBlock::removePredecessor``).  Then, only if the function has
calls to rewrite, single-entry phis are folded and a one-use ``icmp`` feeding a conditional
branch is moved next to it, so the comparison sees relocated pointers.
"""

from __future__ import annotations

from ..ir import instructions as I
from ..ir.analysis import predecessors
from ..ir.module import Module, resolve_attrs
from ..ir.types import VOID
from ..ir.values import BasicBlock, ConstantInt, Function, Poison, Undef, Value
from .naming import NameUniquer


def remove_unreachable_blocks(fn: Function, module: Module | None, names: NameUniquer, llvm: int = 14) -> bool:
    """LLVM's ``removeUnreachableBlocks`` (with its terminator folding); True if ``fn`` changed."""
    changed = False
    reachable = {id(fn.blocks[0])}
    work = [fn.blocks[0]]
    while work:
        block = work.pop()
        for inst in list(block.instructions):
            if isinstance(inst, I.Call) and _does_not_return(inst, module) and inst.tail != "musttail":
                nxt = block.instructions[block.instructions.index(inst) + 1]
                if not isinstance(nxt, I.Unreachable):
                    _change_to_unreachable(nxt, llvm)
                    changed = True
                break
        if isinstance(block.terminator, I.Invoke):
            changed |= _simplify_invoke(block, block.terminator, module, llvm)
        changed |= _fold_terminator(block, names, llvm)
        for succ in block.successors:
            if id(succ) not in reachable:
                reachable.add(id(succ))
                work.append(succ)
    dead = [b for b in fn.blocks if id(b) not in reachable]
    if not dead:
        return changed
    for b in dead:
        term = b.terminator
        for succ in _edges(term) if term is not None else []:
            if id(succ) in reachable:
                _remove_predecessor(succ, b, llvm)
    gone = {id(b) for b in dead}
    fn.blocks = [b for b in fn.blocks if id(b) not in gone]
    for b in dead:
        for inst in b.instructions:
            inst.parent = None
    return True


def fold_single_entry_phis(fn: Function) -> bool:
    """Replace the phis of each block with one predecessor by their value (LLVM's FoldSingleEntryPHINodes)."""
    preds = predecessors(fn)
    users: dict[int, list[I.Instruction]] | None = None
    changed = False
    for b in fn.blocks:
        if len(preds.get(b, [])) == 1:
            for phi in b.phis():
                assert isinstance(phi, I.Phi)
                if users is None:
                    users = {}
                    for inst in fn.instructions():
                        for op in inst.operands:
                            users.setdefault(id(op), []).append(inst)
                value = phi.incoming[0][0] if phi.incoming[0][0] is not phi else Undef(phi.type)
                moved = users.pop(id(phi), [])
                for u in moved:
                    if isinstance(u, I.Phi):
                        u.incoming = [(value if v is phi else v, blk) for v, blk in u.incoming]
                    else:
                        u.replace_uses_of(phi, value)
                users.setdefault(id(value), []).extend(moved)
                phi.erase()
                changed = True
    return changed


def sink_branch_conditions(fn: Function) -> bool:
    """Move each one-use ``icmp`` that feeds a conditional branch to just before the branch."""
    changed = False
    for b in fn.blocks:
        t = b.terminator
        if isinstance(t, I.Br) and t.is_conditional and isinstance(t.condition, I.ICmp):
            cmp = t.condition
            if cmp.num_uses == 1:
                changed = True
                if len(b.instructions) < 2 or b.instructions[-2] is not cmp:
                    # even from another block: its operands dominate the branch, as it did
                    cmp.parent.instructions.remove(cmp)
                    b.insert_before(t, cmp)
    return changed


# -- pieces of LLVM's Local.cpp -------------------------------------------------------------


def _does_not_return(call: I.Call, module: Module | None) -> bool:
    attrs = list(resolve_attrs(call.fn_attrs, module))
    fn = call.called_function
    if fn is not None:
        attrs += resolve_attrs(fn.fn_attrs, module)
    return any(a.kind == "noreturn" and a.style != "string" for a in attrs)


def _has_fn_attr(call: I.CallBase, module: Module | None, kinds: tuple[str, ...]) -> bool:
    attrs = list(resolve_attrs(call.fn_attrs, module))
    fn = call.called_function
    if fn is not None:
        attrs += resolve_attrs(fn.fn_attrs, module)
    return any(
        not a.is_string
        and (a.kind in kinds or (a.kind == "memory" and str(a.value) in ("read", "none") and "readonly" in kinds))
        for a in attrs
    )


#: personalities of asynchronous (SEH) exception handling, where an invoke must stay
_ASYNC_PERSONALITIES = ("_except_handler3", "_except_handler4", "__C_specific_handler")


def _simplify_invoke(block: BasicBlock, inv: I.Invoke, module: Module | None, llvm: int) -> bool:
    """An invoke of a callee that cannot throw: a call and a branch (just the branch if it is unused, only
    reads memory and returns: no side effects); the landing pad loses this predecessor."""
    personality = getattr(block.parent, "personality", None)
    if getattr(personality, "name", None) in _ASYNC_PERSONALITIES:
        return False
    if not _has_fn_attr(inv, module, ("nounwind",)):
        return False
    fn = block.parent
    assert fn is not None
    used = any(inv in inst.operands for b in fn.blocks for inst in b.instructions if inst is not inv)
    normal, unwind = inv.normal, inv.unwind
    if not used and _has_fn_attr(inv, module, ("readnone", "readonly")) and _has_fn_attr(inv, module, ("willreturn",)):
        _replace_terminator(block, inv, I.Br(normal), keep=())
    else:
        call = I.Call(
            inv.ftype,
            inv.callee,
            inv.args,
            arg_attrs=inv.arg_attrs,
            ret_attrs=inv.ret_attrs,
            fn_attrs=inv.fn_attrs,
            cc=inv.cc,
            bundles=inv.bundles,
            name=inv.name,
        )
        call.metadata, call.loc, call.legacy_pointer_syntax = list(inv.metadata), inv.loc, inv.legacy_pointer_syntax
        br = I.Br(normal)
        _replace_terminator(block, inv, br, keep=())
        block.insert_before(br, call)
        _replace_all_uses(fn, inv, call)
    _remove_predecessor(unwind, block, llvm)
    return True


def _edges(term: I.Instruction) -> list[BasicBlock]:
    """The terminator's successor edges, one per edge (a block twice if two edges go there)."""
    if isinstance(term, I.Switch):
        return [term.default] + [b for _, b in term.cases]
    return [op for op in term.operands if isinstance(op, BasicBlock)]


def _dead_value(ty, llvm: int) -> Value:
    return Poison(ty) if llvm >= 15 else Undef(ty)


def _replace_all_uses(fn: Function, old: Value, new: Value) -> None:
    """Every use of ``old`` in ``fn`` reads ``new`` (a phi's incoming blocks stay): ``old``'s use list."""
    for inst in [u for u in old.users if u.function is fn]:
        if isinstance(inst, I.Phi):
            inst.incoming = [(new if v is old else v, b) for v, b in inst.incoming]
        else:
            inst.replace_uses_of(old, new)


def _remove_predecessor(block: BasicBlock, pred: BasicBlock, llvm: int) -> None:
    """``BasicBlock::removePredecessor``: drop one phi entry for ``pred``; fold phis left with one value."""
    phis = block.phis()
    if not phis:
        return
    first = phis[0]
    assert isinstance(first, I.Phi)
    single = len(first.incoming) == 1
    fn = block.parent
    assert fn is not None
    for phi in phis:
        assert isinstance(phi, I.Phi)
        idx = next((i for i, (_, b) in enumerate(phi.incoming) if b is pred), None)
        if idx is not None:
            del phi.incoming[idx]
        if not phi.incoming:
            _replace_all_uses(fn, phi, _dead_value(phi.type, llvm))
            phi.erase()
            continue
        if single:
            continue
        value = _constant_value(phi)
        if value is not None:
            _replace_all_uses(fn, phi, value)
            phi.erase()


def _constant_value(phi: I.Phi) -> Value | None:
    """``PHINode::hasConstantValue``: the one value every entry has (the phi itself aside)."""
    value: Value = phi.incoming[0][0]
    for v, _ in phi.incoming[1:]:
        if v is not value and v is not phi:
            if value is not phi:
                return None
            value = v
    return Undef(phi.type) if value is phi else value


def _change_to_unreachable(inst: I.Instruction, llvm: int) -> None:
    """Put ``unreachable`` before ``inst`` and delete it and the rest of its block."""
    block = inst.parent
    term = block.terminator
    for succ in _edges(term) if term is not None else []:
        _remove_predecessor(succ, block, llvm)
    at = block.instructions.index(inst)
    fn = block.parent
    for dead in block.instructions[at:]:
        if dead.type != VOID:
            _replace_all_uses(fn, dead, _dead_value(dead.type, llvm))
        dead.parent = None
    del block.instructions[at:]
    block.append(I.Unreachable())


def _fold_terminator(block: BasicBlock, names: NameUniquer, llvm: int) -> bool:
    """LLVM's ``ConstantFoldTerminator`` for ``br`` and ``switch``."""
    t = block.terminator
    if isinstance(t, I.Br) and t.is_conditional:
        cond, on_true, on_false = t.ops
        if on_true is on_false:
            _remove_predecessor(on_true, block, llvm)
            _replace_terminator(block, t, I.Br(on_true), keep=("loop", "dbg", "annotation"))
            return True
        if isinstance(cond, ConstantInt):
            keep, drop = (on_true, on_false) if cond.value else (on_false, on_true)
            _remove_predecessor(drop, block, llvm)
            _replace_terminator(block, t, I.Br(keep), keep=("loop", "dbg", "annotation"))
            return True
        return False
    if isinstance(t, I.Switch):
        return _fold_switch(block, t, names, llvm)
    return False


def _fold_switch(block: BasicBlock, sw: I.Switch, names: NameUniquer, llvm: int) -> bool:
    const = sw.value if isinstance(sw.value, ConstantInt) else None
    default = sw.default
    only = default
    if default.instructions and isinstance(_first_non_phi(default), I.Unreachable) and sw.cases:
        only = sw.cases[0][1]
    changed = False
    i = 0
    while i < len(sw.cases):
        value, dest = sw.cases[i]
        if const is not None and value.value == const.value:
            only = dest
            break
        if dest is default:
            _remove_predecessor(default, block, llvm)
            del sw.cases[i]
            sw.metadata = [(k, v) for k, v in sw.metadata if k != "prof"]
            changed = True
            continue
        if dest is not only:
            only = None
        i += 1
    if const is not None and only is None:
        only = default
    if only is not None:
        keep = only
        for succ in _edges(sw):
            if succ is keep:
                keep = None
            else:
                _remove_predecessor(succ, block, llvm)
        _replace_terminator(block, sw, I.Br(only), keep=())
        return True
    if len(sw.cases) == 1:
        value, dest = sw.cases[0]
        cmp = I.ICmp("eq", sw.value, value, name=names.unique("cond"))
        block.insert_before(sw, cmp)
        _replace_terminator(block, sw, I.Br(dest, cmp, default), keep=("prof", "make.implicit"))
        return True
    return changed


def _first_non_phi(block: BasicBlock) -> I.Instruction:
    return block.instructions[len(block.phis())]


def _replace_terminator(block: BasicBlock, old: I.Instruction, new: I.Instruction, keep: tuple[str, ...]) -> None:
    new.metadata = [(k, v) for k, v in old.metadata if k in keep]
    new.loc = old.loc
    block.instructions[-1] = new
    new.parent = block
    old.parent = None
