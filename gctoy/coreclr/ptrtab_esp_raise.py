"""From the operations the bytes say back to the canonical description of an EBP-less pointer table."""

from __future__ import annotations

from ..errors import DecodeError
from .ptrtab_esp_encode import canonical_ops, lower
from .ptrtab_esp_model import CALLEE_SAVED, Call, EspEvent, EspTable, Kill, Op, Pop, Push, ThisReg, register_names


def raise_ops(ops: list[Op]) -> EspTable:
    """The canonical description of `ops`: infer which pushes were pointers, and the kills.

    A pushed DWORD is a pointer iff some call reports it. Once a call has seen a DWORD and not
    reported it, no later call may report it. A pointer one call reports and the next one does
    not was killed in between; kills take the most recently pushed live pointers, so a single
    `Kill` right after the earlier call explains it (it may also kill pointers that are popped
    before the later call, which changes nothing).
    """
    raiser = _Raiser()
    for op in ops:
        raiser.op(op)
    return raiser.table()


class _Raiser:
    """The state of `raise_ops`: pending DWORDs by id, what calls said about them, kills to insert."""

    def __init__(self) -> None:
        self.events: list[EspEvent] = []
        self.stack: list[int] = []  # ids of pending DWORDs, the last one at [ESP]
        self.push_index: list[int] = []  # id -> index of its Push in `events`
        self.state: list[int] = []  # id -> -1 unseen, 0 not a pointer or dead, 1 pointer, 2 interior
        self.kind: list[int] = []  # id -> what its Push becomes: 0, 1 pointer, 2 interior
        self.alive: list[int] = []  # ids the last call reported, [ESP] side first
        self.kills: dict[int, Kill] = {}  # events index -> Kill to insert before it
        self.after_call = (0, 0)  # (events index just after the last call, its code offset)
        self.last = 0  # code offset of the last op

    def op(self, op: Op) -> None:
        if op.kind == "this":
            self.events.append(ThisReg(self.last, CALLEE_SAVED[op.count]))
            return
        self.last = op.offset
        if op.kind == "push":
            self.stack.append(len(self.state))
            self.state.append(-1)
            self.kind.append(0)
            self.push_index.append(len(self.events))
            self.events.append(Push(op.offset))
        elif op.kind == "pop" and op.count == 1:
            if not self.stack:
                raise DecodeError(op.at, "pops 1 DWORDs but only 0 are pending")
            self.stack.pop()
            prev = self.events[-1] if self.events else None
            if isinstance(prev, Pop) and prev.offset == op.offset:
                self.events[-1] = Pop(op.offset, prev.count + 1)
            else:
                self.events.append(Pop(op.offset))
        else:
            self.observe(op)

    def observe(self, op: Op) -> None:
        """A call, or a pop-like entry that stands for one: what it reports fixes pending DWORDs."""
        popped = op.arg_cnt + (op.count if op.kind == "pop" else 0)
        if popped > len(self.stack):
            raise DecodeError(op.at, f"call pops {popped} DWORDs but only {len(self.stack)} are pending")
        rest = self.stack[: len(self.stack) - popped]
        if op.args and op.args[-1][0] >= len(rest):
            raise DecodeError(op.at, f"call reports a pending pointer beyond the {len(rest)} pending DWORDs")
        reported = {rest[-1 - i]: 2 if interior else 1 for i, interior in op.args}
        for sid, kind in reported.items():
            if self.state[sid] == -1:
                self.state[sid] = self.kind[sid] = kind
            elif self.state[sid] != kind:
                raise DecodeError(
                    op.at,
                    f"call reports [ESP+{4 * (len(rest) - 1 - rest.index(sid)):#x}], which "
                    "an earlier call saw as "
                    + ("not a pointer" if self.state[sid] == 0 else "a different pointer kind"),
                )
        if any(self.state[sid] > 0 and sid not in reported for sid in rest):
            gone = [sid for sid in self.alive if sid not in reported]
            if gone != self.alive[: len(gone)]:
                raise DecodeError(
                    op.at,
                    "call stops reporting a pending pointer below one it still reports; "
                    "a kill only takes the most recently pushed pointers",
                )
            index, offset = self.after_call
            self.kills[index] = Kill(offset, len(gone))
            for sid in gone:
                self.state[sid] = 0
        for sid in rest:
            self.state[sid] = max(self.state[sid], 0)
        self.stack = rest
        self.alive = [sid for sid in reversed(rest) if self.state[sid] > 0]
        if op.kind == "call":
            self.events.append(Call(op.offset, op.arg_cnt, register_names(op.regs), register_names(op.iregs)))
        else:
            self.events.append(Call(op.offset, op.count))
        self.after_call = (len(self.events), op.offset)

    def table(self) -> EspTable:
        out: list[EspEvent] = []
        for index, event in enumerate(self.events):
            if index in self.kills:
                out.append(self.kills[index])
            out.append(event)
        for sid, index in enumerate(self.push_index):
            if self.kind[sid]:
                out_index = index + sum(1 for k in self.kills if k <= index)
                out[out_index] = Push(out[out_index].offset, True, self.kind[sid] == 2)
        return EspTable(tuple(out))


def canonical(table: EspTable) -> EspTable:
    """The description `decode_table` returns for `encode_table(table)` (same bytes, same meaning)."""
    return raise_ops(canonical_ops(lower(table)))
