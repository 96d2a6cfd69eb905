"""Inlining the body of ``@gc.safepoint_poll`` at a poll location, named the way LLVM's inliner names it.

LLVM's PlaceSafepoints does not write the poll code itself: it creates a call to
``void @gc.safepoint_poll()`` before the location and runs the general inliner on
it.  The shape that results, for a multi-block poll body::

    orig:                      orig:
      ...A...                    ...A...
      <location>       ==>       <entry of the poll body, suffix .i>
      ...B...                    br ...              ; the body's first branch
                               slow.i:               ; the other poll blocks
                                 ...
                               gc.safepoint_poll.exit:
                                 <return block's code, without ret>
                                 <location>
                                 ...B...

A single-block body (ending in ``ret``) is spliced in place without a split.

Names: every cloned value and block keeps its name plus ``.i``; a name already
taken in the function gets the function-wide counter appended (``c.i1``,
``slow.i2``), exactly as LLVM's symbol table does, and that counter survives
from one poll to the next.  The order names are claimed in matters and follows
LLVM: per poll-body block (function order), its instructions then the block
itself, then the continuation block ``gc.safepoint_poll.exit``.  Names of the
entry and return blocks are claimed and then vanish when those blocks merge.

Not modelled (the inliner does these; ordinary poll bodies never need them):
constant folding while cloning, ``nounwind`` propagation from a ``nounwind``
poll function, debug locations and metadata remapping.
"""

from __future__ import annotations

import copy

from ..errors import GCToyError
from ..ir import instructions as I
from ..ir.names import is_numbered
from .naming import NameUniquer
from ..ir.analysis.cfg import reachable_set
from ..ir.types import VOID
from ..ir.values import BasicBlock, Function, Value

POLL_NAME = "gc.safepoint_poll"
SUFFIX = ".i"


class PollFunctionError(GCToyError):
    """``@gc.safepoint_poll`` is missing or unusable as a poll body."""


#: the function's local names with LLVM's uniquing counter
SymbolTable = NameUniquer


def check_poll_function(module) -> Function:
    """The module's ``@gc.safepoint_poll``, checked the way LLVM asserts it."""
    fn = module.get_function(POLL_NAME)
    if fn is None:
        raise PollFunctionError(f"'@{POLL_NAME}' is not defined: place-safepoints needs its body to inline")
    if fn.ftype.ret != VOID or fn.ftype.params or getattr(fn.ftype, "vararg", False):
        raise PollFunctionError(f"'@{POLL_NAME}' must have type void ()")
    if fn.is_declaration:
        raise PollFunctionError(f"'@{POLL_NAME}' is only declared: it needs a body to inline")
    for inst in fn.instructions():
        if isinstance(inst, I.Invoke):
            raise PollFunctionError(f"'@{POLL_NAME}' may not contain invokes")
        if isinstance(inst, I.Alloca):
            raise PollFunctionError(f"'@{POLL_NAME}' may not contain allocas")
    return fn


def _suffixed(name: str | None) -> str | None:
    """``c`` -> ``c.i``; unnamed (and numbered) values stay unnamed."""
    if name is None or is_numbered(name):
        return None
    return name + SUFFIX


def _clone_instruction(inst: I.Instruction) -> I.Instruction:
    """A shallow copy with its own operand lists (operands still point at the originals)."""
    new = copy.copy(inst)
    for key, val in list(vars(new).items()):
        if isinstance(val, list):
            setattr(
                new, key, [I.OperandBundle(v.tag, list(v.inputs)) if isinstance(v, I.OperandBundle) else v for v in val]
            )
    new.parent = None
    new.loc = None
    return new


def inline_poll(location: I.Instruction, poll: Function, symbols: SymbolTable) -> list[I.Call]:
    """Inline ``poll``'s body just before ``location``; returns the cloned calls (the runtime calls)."""
    orig = location.parent
    assert orig is not None
    fn = orig.parent
    assert fn is not None
    symbols.refresh()
    live = reachable_set(poll)
    clones = _clone_body([b for b in poll.blocks if b in live], fn, symbols)
    calls = _runtime_calls(clones)
    returns = [nb for nb in clones if isinstance(nb.terminator, I.Ret)]
    if len(clones) == 1 and len(returns) == 1:
        index = orig.instructions.index(location)
        for k, ni in enumerate(clones[0].instructions[:-1]):
            orig.insert(index + k, ni)
        return calls
    exit_block = _split_before(location, symbols)
    others = _join_returns(clones, returns, exit_block)
    _merge_entry(orig, clones[0], others, exit_block)
    return calls


def _clone_body(body: list[BasicBlock], fn: Function, symbols: SymbolTable) -> list[BasicBlock]:
    """Copies of ``body``'s blocks for ``fn``, named in LLVM's order, their operands mapped to the copies."""
    pairs: list[tuple[Value, Value]] = []
    clones: list[BasicBlock] = []
    for block in body:
        nb = BasicBlock(None)
        nb.parent = fn
        pairs.append((block, nb))
        for inst in block.instructions:
            ni = _clone_instruction(inst)
            nb.append(ni)
            pairs.append((inst, ni))
        clones.append(nb)
    # Claim names in LLVM's order: per block, its instructions, then the block.
    for block, nb in zip(body, clones):
        for src, ni in zip(block.instructions, nb.instructions):
            ni.name = symbols.claim(_suffixed(src.name))
        nb.name = symbols.claim(_suffixed(block.name))
    vmap: dict[int, Value] = {}
    for old, new in pairs:
        vmap[id(old)] = new
    for nb in clones:
        for ni in nb.instructions:
            for op in ni.operands:
                if id(op) in vmap:
                    ni.replace_uses_of(op, vmap[id(op)])
    return clones


def _runtime_calls(clones: list[BasicBlock]) -> list[I.Call]:
    """The calls among the cloned instructions, no longer tail calls (they are the runtime calls)."""
    calls: list[I.Call] = []
    for nb in clones:
        for ni in nb.instructions:
            if isinstance(ni, I.Call):
                if ni.tail in ("tail", "musttail"):
                    ni.tail = None
                calls.append(ni)
    return calls


def _split_before(location: I.Instruction, symbols: SymbolTable) -> BasicBlock:
    """Split ``location``'s block before it: the tail moves to a new ``gc.safepoint_poll.exit`` block."""
    orig = location.parent
    assert orig is not None
    index = orig.instructions.index(location)
    exit_block = BasicBlock(symbols.claim(POLL_NAME + ".exit"))
    exit_block.parent = orig.parent
    tail = orig.instructions[index:]
    del orig.instructions[index:]
    for inst in tail:
        exit_block.append(inst)
    for succ in exit_block.successors:
        for phi in succ.phis():
            phi.replace_uses_of(orig, exit_block)
    return exit_block


def _join_returns(clones: list[BasicBlock], returns: list[BasicBlock], exit_block: BasicBlock) -> list[BasicBlock]:
    """Make the body's returns continue in ``exit_block``; returns the cloned blocks after the entry that stay.

    A single return block merges into the front of ``exit_block``; several each branch to it."""
    others = clones[1:]
    if len(returns) == 1:
        ret_block = returns[0]
        for k, inst in enumerate(ret_block.instructions[:-1]):
            exit_block.insert(k, inst)
        for nb in clones:
            for inst in nb.instructions:
                inst.replace_uses_of(ret_block, exit_block)
        others.remove(ret_block)
    else:
        for nb in returns:
            br = I.Br(exit_block)
            br.parent = nb
            nb.instructions[-1] = br
    return others


def _merge_entry(orig: BasicBlock, entry_clone: BasicBlock, others: list[BasicBlock], exit_block: BasicBlock) -> None:
    """Append the cloned entry to ``orig`` (it has no predecessors in the body) and lay out the rest after it."""
    for inst in entry_clone.instructions:
        orig.append(inst)
    for nb in [*others, exit_block]:
        for inst in nb.instructions:
            if isinstance(inst, I.Phi):
                inst.replace_uses_of(entry_clone, orig)
    fn = orig.parent
    assert fn is not None
    pos = fn.blocks.index(orig) + 1
    fn.blocks[pos:pos] = [*others, exit_block]
