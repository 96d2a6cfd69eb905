"""The runtime's lookup in a fully interruptible pointer table (the VM's ``scanArgRegTable``, interruptible
branch): which registers and pushed arguments hold GC pointers at a code offset.
"""

from __future__ import annotations

from ..errors import DecodeError, GCToyError
from .entries import REG_NAMES, PtrTableState, PushedArg
from .header import InfoHdr
from .ptrtab_full_ops import MAX_PTRARG_OFS, InvalidTable, read_ops


def scan(
    data: bytes,
    offset: int,
    hdr: InfoHdr,
    cur_offs: int,
    *,
    regs_offs: int | None = None,
    partial_arg_info: bool = False,
) -> PtrTableState:
    """What the table says is live at `cur_offs` (the VM's scanArgRegTableI).

    Long because it is the VM's loop over the entries, one case per entry kind in the VM's order,
    so the two can be read side by side.

    Keyword arguments:

    * ``regs_offs`` -- the offset used for registers (default `cur_offs`). The VM passes
      ``cur_offs - 1`` for frames that are not the active one (a caller waiting at a return
      address): registers are taken from *before* the call, because the instruction after a call
      that does not return can be a join point with other liveness. Must not exceed `cur_offs`.
    * ``partial_arg_info`` -- classic Windows x86 EBP frames recorded only pointer pushes: a pop
      then removes pointers rather than DWORDs and the pushed size is unknown (reported as 0).
      Modern CoreCLR always has full argument info (the default).

    Transitions *at* an offset are applied (entries are read while the running offset is at most
    the query). Pushed pointer arguments come back as ``PushedArg("PENDING", slot)``.

    Like the VM, a pop walks down from the slot of the last *single* push: 0xF9 (never written by
    a JIT) raises the depth without moving that marker, so a pop after it removes the slots below
    the marker, and a pop with no marker left raises `DecodeError` (the VM asserts).
    """
    regs_at = cur_offs if regs_offs is None else regs_offs
    if not 0 <= regs_at <= cur_offs:
        raise GCToyError(f"regs_offs {regs_offs} must lie in 0..cur_offs ({cur_offs})")
    ptr_regs = iptr_regs = 0
    this_reg: int | None = None
    ptr_args: dict[int, bool] = {}  # slot -> interior
    arg_cnt = 0
    arg_high = -1  # slot of the top of the stack as the VM tracks it (-1: none)
    for op in read_ops(data, offset):
        if op.before > cur_offs or op.kind == "end":
            break
        if op.after > cur_offs and op.kind != "skip":
            break
        try:
            if op.kind in ("reg-live", "reg-dead"):
                if op.after > regs_at:
                    continue
                bit = 1 << op.value
                name = REG_NAMES[op.value]
                if op.kind == "reg-live":
                    if ptr_regs & bit:
                        raise InvalidTable(f"register {name} becomes live but already holds a GC pointer")
                    ptr_regs |= bit
                    if op.this:
                        this_reg = op.value
                    if op.interior:
                        iptr_regs |= bit
                else:
                    if not ptr_regs & bit:
                        raise InvalidTable(f"register {name} becomes dead but holds no GC pointer")
                    ptr_regs &= ~bit
                    iptr_regs &= ~bit
                    if this_reg == op.value:
                        this_reg = None
            elif op.kind == "push":
                if op.value + 1 >= MAX_PTRARG_OFS:
                    raise InvalidTable(f"argument slot {op.value} is deeper than the VM's {MAX_PTRARG_OFS}-slot limit")
                if not partial_arg_info and op.value != arg_cnt:
                    raise InvalidTable(f"push into slot {op.value} but {arg_cnt} DWORDs are pushed")
                if op.value in ptr_args:
                    raise InvalidTable(f"argument slot {op.value} already holds a pushed pointer")
                arg_cnt = op.value + 1
                arg_high = op.value
                ptr_args[op.value] = op.interior
            elif op.kind == "push-non-ptr":
                if op.value == 1 and data[op.start] != 0xF9:
                    if partial_arg_info:
                        raise InvalidTable("non-pointer push in a table with partial argument info")
                    arg_high = arg_cnt
                arg_cnt += op.value
                if arg_cnt >= MAX_PTRARG_OFS:
                    raise InvalidTable(f"{arg_cnt} pushed DWORDs exceed the VM's {MAX_PTRARG_OFS}-slot limit")
            elif op.kind == "pop":
                arg_cnt, arg_high = _pop(ptr_args, arg_cnt, arg_high, op.value, partial_arg_info)
            elif op.kind == "kill":
                arg_high = _kill(ptr_args, arg_cnt, arg_high, op.value, partial_arg_info)
        except InvalidTable as e:
            raise DecodeError(op.start, str(e)) from None
    return PtrTableState(
        live_regs=_names(ptr_regs),
        interior_regs=_names(iptr_regs),
        pushed_args=tuple(PushedArg("PENDING", s, i) for s, i in sorted(ptr_args.items())),
        pushed_bytes=0 if partial_arg_info else arg_cnt * 4,
        this_reg=None if this_reg is None else REG_NAMES[this_reg],
    )


def _names(mask: int) -> frozenset[str]:
    return frozenset(REG_NAMES[r] for r in range(8) if mask >> r & 1)


def _pop(ptr_args: dict[int, bool], arg_cnt: int, arg_high: int, count: int, partial: bool) -> tuple[int, int]:
    """Apply a pop of `count` the way the VM walks down from the top slot; returns (argCnt, argHigh).

    Full info: the `count` slots from the top down are removed, pointers or not. Partial info:
    slots are walked down until `count` pointers were removed, every non-pointer slot passed
    lowers the count of pushed DWORDs, and the top is left on the next lower pointer.
    """
    if count > arg_cnt:
        raise InvalidTable(f"pop of {count} but only {arg_cnt} argument DWORDs are pushed")
    arg_cnt -= count
    if not partial:
        if arg_high - count + 1 < 0:
            raise InvalidTable(f"pop of {count} walks below the first pushed argument")
        for slot in [s for s in ptr_args if arg_high - count < s <= arg_high]:
            del ptr_args[slot]
        return arg_cnt, arg_high - count
    below = sorted((s for s in ptr_args if s <= arg_high), reverse=True)
    if len(below) < count:
        raise InvalidTable(f"pop of {count} pointers but only {len(below)} pointers are pushed")
    removed = below[:count]
    arg_cnt -= (arg_high - removed[-1] + 1) - count
    for slot in removed:
        del ptr_args[slot]
    arg_high = removed[-1] - 1
    lower = [s for s in ptr_args if s <= arg_high]
    target = max(lower) if lower else -1
    arg_cnt -= arg_high - target
    if arg_cnt < 0:
        raise InvalidTable("pop leaves a negative number of pushed arguments")
    return arg_cnt, target


def _kill(ptr_args: dict[int, bool], arg_cnt: int, arg_high: int, count: int, partial: bool) -> int:
    """Kill the top `count` pointers at or below slot `arg_cnt`; returns the VM's new argHigh."""
    if count > arg_cnt:
        raise InvalidTable(f"kill of {count} pointers but only {arg_cnt} argument DWORDs are pushed")
    below = sorted((s for s in ptr_args if s <= arg_cnt), reverse=True)
    if len(below) < count:
        raise InvalidTable(f"kill of {count} pointers but only {len(below)} pointers are pushed")
    for slot in below[:count]:
        del ptr_args[slot]
    if not partial:
        return arg_high
    lower = [s for s in ptr_args if s < below[count - 1]]
    return max(lower) if lower else -1
