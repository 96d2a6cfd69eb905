"""Where an instruction stands in its function, without a walk over the function per question.

Each block (and each function, for its blocks) caches ``{id(item): position}``; a position is
trusted only after ``items[position] is item``, and the cache is rebuilt when that fails, so an
edited block costs one rebuild and an unchanged one costs nothing::

    block.instructions   [%a, %t, %r1, %r2]      _positions = {id(%a): 0, id(%t): 1, ...}
"""

from __future__ import annotations

from typing import Any, Iterable


def _position(owner: Any, items: list, item: Any) -> int | None:
    cache = owner.__dict__.get("_positions")
    if cache is not None:
        k = cache.get(id(item))
        if k is not None and k < len(items) and items[k] is item:
            return k
    cache = {id(x): k for k, x in enumerate(items)}
    owner.__dict__["_positions"] = cache
    return cache.get(id(item))


def instruction_position(inst: Any) -> tuple[int, int] | None:
    """``(block number, index in the block)`` of an instruction, None when a walk over its function
    would not meet it (not in a block, or in a block taken out of the function)."""
    block = inst.parent
    fn = block.parent if block is not None else None
    if fn is None:
        return None
    b = _position(fn, fn.blocks, block)
    k = _position(block, block.instructions, inst) if b is not None else None
    return None if b is None or k is None else (b, k)


def in_function_order(insts: Iterable[Any]) -> list:
    """The instructions a walk over their function meets, in the order it meets them."""
    keyed = [(pos, inst) for inst in insts if (pos := instruction_position(inst)) is not None]
    keyed.sort(key=lambda pk: pk[0])
    return [inst for _, inst in keyed]
